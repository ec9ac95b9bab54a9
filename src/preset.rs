//! Scene presets: one RON file per scene (cloth, material, solver, colliders).
//!
//! Every field is optional and falls back to the documented default of its struct
//! ([`GridSpec`], [`Material`], [`SolverParams`]); unknown fields are rejected. A broken file is
//! reported as `file:line:col: what was expected`, and nothing is built from it. Saving goes
//! through [`crate::safe_write`] (a synced temporary file renamed over the target), so an
//! existing preset is never left half-written; save → load → save gives identical bytes.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

use glam::Vec3;
use serde::{Deserialize, Serialize};

use crate::input_file::{decode_text, excerpt, read_limited, EXCERPT_CHARS, MESSAGE_CHARS, PRESET_LIMIT};
use crate::scene::{
    build_scene, load_colliders, resolve_path, BuildError, EmbeddedMeshes, MeshFiles, ObjectNumbering, SceneObject, SeamSpec,
};
pub use crate::sim::appearance::Appearance;
use crate::sim::error::check_len;
use crate::sim::{Cloth, Collider, GridSpec, Material, SimError, SolverParams, MAX_COLLIDERS, MAX_PARTICLES};

/// Newest preset format version this build reads and writes. Version 2 added `objects`;
/// version-1 files (one grid in `cloth`) still load and run exactly as before.
pub const PRESET_VERSION: u32 = 2;

/// Most objects a scene may have.
pub const MAX_OBJECTS: usize = 256;

/// One scene.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Preset {
    /// Format version; files newer than [`PRESET_VERSION`] are refused. Default 2.
    pub version: u32,
    /// Display name. Default "Untitled".
    pub name: String,
    /// One line for the preset picker's tooltip. Default empty.
    pub description: String,
    /// The one cloth of a version-1 scene: a rectangular grid. When neither `cloth` nor
    /// `objects` is given, a 1 m × 1 m, 40 × 40 curtain. Not together with `objects`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cloth: Option<GridSpec>,
    /// The cloths of the scene (version 2): grids and OBJ meshes, simulated together with
    /// the solver below, each with its own `material` or the scene's. Default none (then
    /// `cloth` is the scene).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<SceneObject>,
    /// Material in SI units: the scene's, used by every object without its own.
    pub material: Material,
    /// Time stepping and forces.
    pub solver: SolverParams,
    /// Static colliders. Default none.
    pub colliders: Vec<Collider>,
    /// Seams sewing runs of the objects' vertices together ([`SeamSpec`]). Default none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seams: Vec<SeamSpec>,
    /// How the cloth looks (colours, fabric pattern). Default the terracotta front and blue
    /// back, no pattern; left out of saved files while it is the default.
    #[serde(skip_serializing_if = "Appearance::is_default")]
    pub appearance: Appearance,
    /// The directory of the file the preset was loaded from (none for text parsed from
    /// memory or built in code): relative mesh and texture paths are looked up there first
    /// ([`Preset::resolve`]). Not part of the file.
    #[serde(skip)]
    pub source_dir: SourceDir,
    /// Mesh files carried with the preset (a recording's, see [`EmbeddedMeshes`]): they are
    /// read from here before the disk. Not part of the file.
    #[serde(skip)]
    pub embedded_meshes: Embedded,
}

/// The mesh texts a preset carries ([`Preset::embedded_meshes`]); shared, since every reset
/// of a replayed scene clones the preset. Not part of the scene: presets compare equal
/// whatever they carry.
#[derive(Debug, Clone, Default)]
pub struct Embedded(pub Option<std::sync::Arc<EmbeddedMeshes>>);

impl PartialEq for Embedded {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Where a preset was read from ([`Preset::source_dir`]). Not part of the scene: two presets
/// compare equal wherever they were read from, so a loaded preset equals its saved text
/// parsed back.
#[derive(Debug, Clone, Default)]
pub struct SourceDir(pub Option<PathBuf>);

impl PartialEq for SourceDir {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Default for Preset {
    fn default() -> Self {
        Self {
            version: PRESET_VERSION,
            name: "Untitled".into(),
            description: String::new(),
            cloth: None,
            objects: Vec::new(),
            material: Material::default(),
            solver: SolverParams::default(),
            colliders: Vec::new(),
            seams: Vec::new(),
            appearance: Appearance::default(),
            source_dir: SourceDir::default(),
            embedded_meshes: Embedded::default(),
        }
    }
}

/// Why a preset could not be loaded or saved.
#[derive(Debug)]
pub enum PresetError {
    /// The file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The text is not a valid preset (syntax, unknown field, wrong type) or holds a value the
    /// engine refuses; `line` and `col` are 1-based.
    Invalid {
        /// The file (or `<text>` for in-memory input).
        path: PathBuf,
        /// Line of the problem.
        line: usize,
        /// Column of the problem.
        col: usize,
        /// What was expected.
        message: String,
    },
}

impl fmt::Display for PresetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PresetError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            PresetError::Invalid { path, line, col, message } => write!(f, "{}:{line}:{col}: {message}", path.display()),
        }
    }
}

/// A value [`Preset::validate`] refused.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidField {
    /// The key as spelled in the file (`thickness`, `radius`, ...).
    pub field: &'static str,
    /// Which part of the file the key is in.
    pub place: FieldPlace,
    /// Field, value and accepted range.
    pub message: String,
}

/// Where an [`InvalidField`]'s key is: what tells it from keys of the same name elsewhere.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FieldPlace {
    /// The first place the key is spelled out (the scene's sections).
    Scene,
    /// Collider `k` of `colliders`.
    Collider(usize),
    /// The own `material` of object `k` of `objects`.
    ObjectMaterial(usize),
    /// The own `appearance` of object `k` of `objects`.
    ObjectAppearance(usize),
    /// Seam `k` of `seams`.
    Seam(usize),
}

// The I/O cause is already part of the message, so `source()` stays empty: error chains
// (`{:#}`) would otherwise print it twice.
impl std::error::Error for PresetError {}

impl Preset {
    /// Reads and validates a preset file; its directory becomes the preset's
    /// [`Preset::source_dir`].
    pub fn load(path: &Path) -> Result<Self, PresetError> {
        let bytes = read_limited(path, PRESET_LIMIT).map_err(|source| PresetError::Io { path: path.into(), source })?;
        let text = decode_text(bytes).map_err(|(line, col)| PresetError::Invalid {
            path: path.into(),
            line,
            col,
            message: "not UTF-8 text (a preset is RON text in UTF-8)".into(),
        })?;
        let mut preset = Self::parse(&text, path)?;
        preset.source_dir = SourceDir(path.parent().map(Path::to_path_buf));
        preset.check_named_files(&text, path)?;
        Ok(preset)
    }

    /// What [`Self::load`] checks beyond the text itself, placed in `text` (read from
    /// `path`): the mesh files named exist and are regular files, and seams name vertices
    /// their objects have.
    pub fn check_named_files(&self, text: &str, path: &Path) -> Result<(), PresetError> {
        self.check_mesh_files(text, path)?;
        self.check_seam_vertices(text, path)
    }

    /// Refuses a preset whose mesh objects or mesh colliders name a file that is missing or
    /// not a regular file, at the `file:` key in `text` (read from `path`), so the message
    /// points into the preset rather than only at the mesh's path when the scene is built.
    fn check_mesh_files(&self, text: &str, path: &Path) -> Result<(), PresetError> {
        let refused = |name: &Path| {
            let file = self.resolve(name);
            match std::fs::metadata(&file) {
                Ok(meta) if meta.is_file() => None,
                Ok(_) => Some(format!("{}: not a regular file", file.display())),
                Err(error) => Some(format!("{}: {error}", file.display())),
            }
        };
        let invalid = |(line, col), message| PresetError::Invalid {
            path: path.into(),
            line,
            col,
            message,
        };
        for (k, object) in self.objects.iter().enumerate() {
            let SceneObject::Mesh(mesh) = object else { continue };
            if let Some(why) = refused(&mesh.file) {
                let at = locate_object_field(text, &self.objects, k, ("file", is_mesh), "file");
                return Err(invalid(at, format!("objects[{k}]: mesh file {why}")));
            }
        }
        for (k, collider) in self.colliders.iter().enumerate() {
            let Collider::Mesh { file, .. } = collider else { continue };
            if let Some(why) = refused(file) {
                let at = locate_collider_field(text, &self.colliders, k, "file");
                return Err(invalid(at, format!("colliders[{k}]: mesh file {why}")));
            }
        }
        Ok(())
    }

    /// Refuses a preset whose seams name a vertex their object does not have, at the seam's
    /// `a:` or `b:` key in `text` (read from `path`). Meshes that cannot be read are left to
    /// the build, which reports them.
    fn check_seam_vertices(&self, text: &str, path: &Path) -> Result<(), PresetError> {
        if self.seams.is_empty() {
            return Ok(());
        }
        let count = |object: &SceneObject| match object {
            SceneObject::Grid(grid) => Some(grid.columns * grid.rows),
            SceneObject::Mesh(mesh) => self.mesh_files().load(&mesh.file).ok().map(|m| m.positions.len() as u32),
        };
        let Some(numbering) = self
            .objects()
            .iter()
            .map(|object| {
                count(object).map(|count| ObjectNumbering {
                    first: 0,
                    count,
                    particle_of: None,
                })
            })
            .collect::<Option<Vec<_>>>()
        else {
            return Ok(());
        };
        for (k, seam) in self.seams.iter().enumerate() {
            if let Err((side, why)) = seam.pairs(&numbering) {
                let (line, col) = locate_seam_field(text, k, side);
                return Err(PresetError::Invalid {
                    path: path.into(),
                    line,
                    col,
                    message: excerpt(&format!("seams[{k}].{side}: {why}"), MESSAGE_CHARS),
                });
            }
        }
        Ok(())
    }

    /// Where a file the preset names (a mesh, a texture) is read from: see
    /// [`crate::scene::resolve_path`]; the preset itself keeps the path as written.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        resolve_path(path, self.source_dir.0.as_deref())
    }

    /// Parses and validates preset text; `path` is only used in error messages.
    pub fn parse(text: &str, path: &Path) -> Result<Self, PresetError> {
        let preset: Preset = ron_options().from_str(text).map_err(|e| PresetError::Invalid {
            path: path.into(),
            line: e.position.line,
            col: e.position.col,
            message: excerpt(&describe_syntax_error(&e.code), MESSAGE_CHARS),
        })?;
        preset.validate().map_err(|invalid| {
            let (line, col) = match invalid.place {
                FieldPlace::Collider(index) => locate_collider_field(text, &preset.colliders, index, invalid.field),
                FieldPlace::ObjectMaterial(index) => {
                    locate_object_field(text, &preset.objects, index, ("material", has_material), invalid.field)
                }
                FieldPlace::ObjectAppearance(index) => {
                    locate_object_field(text, &preset.objects, index, ("appearance", has_appearance), invalid.field)
                }
                FieldPlace::Seam(index) => locate_seam_field(text, index, invalid.field),
                FieldPlace::Scene => locate_field(text, invalid.field),
            };
            PresetError::Invalid {
                path: path.into(),
                line,
                col,
                message: excerpt(&invalid.message, MESSAGE_CHARS),
            }
        })?;
        Ok(preset)
    }

    /// Checks every value the engine would check (ranges included), naming the offending
    /// field.
    pub fn validate(&self) -> Result<(), InvalidField> {
        if self.version == 0 || self.version > PRESET_VERSION {
            return Err(InvalidField {
                field: "version",
                place: FieldPlace::Scene,
                message: format!("unsupported preset version {}, expected 1..={PRESET_VERSION}", self.version),
            });
        }
        let field_of = |place: FieldPlace| {
            let objects = &self.objects;
            move |e: SimError| InvalidField {
                field: match &e {
                    SimError::InvalidParameter { name, .. } => name,
                    _ => "cloth",
                },
                place,
                message: match place {
                    FieldPlace::Collider(i) => format!("colliders[{i}]: {e}"),
                    FieldPlace::ObjectMaterial(k) => format!("objects[{k}] ({}), its material: {e}", objects[k].label()),
                    FieldPlace::ObjectAppearance(k) => format!("objects[{k}] ({}), its appearance: {e}", objects[k].label()),
                    FieldPlace::Seam(k) => format!("seams[{k}]: {e}"),
                    FieldPlace::Scene => e.to_string(),
                },
            }
        };
        self.check_version_fields()?;
        self.check_counts().map_err(field_of(FieldPlace::Scene))?;
        for object in self.objects().iter() {
            object.validate().map_err(field_of(FieldPlace::Scene))?;
        }
        self.material.validate().map_err(field_of(FieldPlace::Scene))?;
        self.solver.validate().map_err(field_of(FieldPlace::Scene))?;
        self.solver.validate_with(&self.material).map_err(field_of(FieldPlace::Scene))?;
        for (k, object) in self.objects.iter().enumerate() {
            if let Some(material) = object.material() {
                let place = field_of(FieldPlace::ObjectMaterial(k));
                material
                    .validate()
                    .and_then(|()| self.solver.validate_with(material))
                    .map_err(place)?;
            }
        }
        for (k, object) in self.objects.iter().enumerate() {
            if let Some(appearance) = object.appearance() {
                appearance.validate().map_err(field_of(FieldPlace::ObjectAppearance(k)))?;
            }
        }
        for (i, collider) in self.colliders.iter().enumerate() {
            collider.validate().map_err(field_of(FieldPlace::Collider(i)))?;
        }
        let objects = self.objects().len();
        for (k, seam) in self.seams.iter().enumerate() {
            seam.check(objects).map_err(|(key, e)| InvalidField {
                field: key,
                ..field_of(FieldPlace::Seam(k))(e)
            })?;
        }
        self.appearance.validate().map_err(field_of(FieldPlace::Scene))?;
        Ok(())
    }

    /// Serialises to the canonical pretty RON text.
    pub fn to_ron(&self) -> String {
        let config = ron::ser::PrettyConfig::new().struct_names(false).indentor("    ".into());
        let mut text = ron_options()
            .to_string_pretty(self, config)
            .expect("presets contain only serialisable data");
        text.push('\n');
        text
    }

    /// Writes the preset crash-safely ([`crate::safe_write`]): the target is always the old
    /// or the new complete file; any I/O error (full disk, missing or read-only directory, a
    /// target that is not a regular file) is returned with the path.
    pub fn save(&self, path: &Path) -> Result<(), PresetError> {
        let text = self.to_ron();
        crate::safe_write::write_atomically(path, |out| out.write_all(text.as_bytes()))
            .map_err(|source| PresetError::Io { path: path.into(), source })
    }

    /// Builds the simulation described by the preset: every object joined into one cloth
    /// model (see [`crate::scene`]), object k in material slot k with its own material or
    /// the scene's; a grid's `pinned_at` particles start where they are pinned, at rest.
    pub fn build(&self) -> Result<Cloth, BuildError> {
        let objects = self.objects();
        let (model, starts) = build_scene(&objects, &self.seams, self.mesh_files())?;
        let colliders = load_colliders(&self.colliders, self.mesh_files())?;
        let mut cloth = Cloth::new(model, &self.material, colliders)?;
        for (i, position) in starts {
            cloth.set_state(i, position, Vec3::ZERO)?;
        }
        if self.sync_object_materials(&mut cloth)? {
            cloth.set_material_now(&self.material)?;
        }
        Ok(cloth)
    }

    /// The mesh files the preset names, as written: its mesh objects' and then its mesh
    /// colliders'.
    pub fn named_mesh_files(&self) -> impl Iterator<Item = &PathBuf> {
        let objects = self.objects.iter().filter_map(|object| match object {
            SceneObject::Mesh(mesh) => Some(&mesh.file),
            SceneObject::Grid(_) => None,
        });
        let colliders = self.colliders.iter().filter_map(|collider| match collider {
            Collider::Mesh { file, .. } => Some(file),
            _ => None,
        });
        objects.chain(colliders)
    }

    /// Reads the mesh files the preset names into [`Self::embedded_meshes`] (those not
    /// carried yet), so the scene builds from, and a recording keeps, the same texts. Fails
    /// with the file and why when one cannot be read.
    pub fn embed_meshes(&mut self) -> Result<(), PresetError> {
        let mut texts = self.embedded_meshes.0.as_deref().cloned().unwrap_or_default();
        let before = texts.len();
        for file in self.named_mesh_files() {
            if texts.contains_key(file) {
                continue;
            }
            let path = self.resolve(file);
            let io = |source| PresetError::Io {
                path: path.clone(),
                source,
            };
            let bytes = read_limited(&path, crate::input_file::MESH_LIMIT).map_err(io)?;
            let text = decode_text(bytes).map_err(|(line, col)| PresetError::Invalid {
                path: path.clone(),
                line,
                col,
                message: "not UTF-8 text (an OBJ file is text)".into(),
            })?;
            texts.insert(file.clone(), text);
        }
        if texts.len() > before {
            self.embedded_meshes = Embedded(Some(std::sync::Arc::new(texts)));
        }
        Ok(())
    }

    /// Where the preset's mesh files are read from: its embedded texts, else next to it.
    pub fn mesh_files(&self) -> MeshFiles<'_> {
        MeshFiles {
            preset_dir: self.source_dir.0.as_deref(),
            embedded: self.embedded_meshes.0.as_deref(),
        }
    }

    /// Hands every object's own material (or none, to follow the scene's) to `cloth`, built
    /// from this preset; they take effect at its next step. Returns whether any object has
    /// its own.
    pub fn sync_object_materials(&self, cloth: &mut Cloth) -> Result<bool, SimError> {
        let mut any = false;
        for (slot, object) in self.objects.iter().enumerate() {
            any |= object.material().is_some();
            cloth.set_material(slot, object.material().cloned())?;
        }
        Ok(any)
    }

    /// The material object `k` simulates with: its own, else the scene's.
    pub fn object_material(&self, k: usize) -> &Material {
        self.objects.get(k).and_then(SceneObject::material).unwrap_or(&self.material)
    }

    /// The scene's cloths: `objects`, or the one grid of `cloth` (the default curtain when
    /// neither is given). Borrowed unless made from `cloth`, since the app asks every frame.
    pub fn objects(&self) -> Cow<'_, [SceneObject]> {
        if self.objects.is_empty() {
            Cow::Owned(vec![SceneObject::Grid(self.cloth.clone().unwrap_or_default())])
        } else {
            Cow::Borrowed(&self.objects)
        }
    }

    /// The grid when the scene is exactly one grid (what the app's grid controls edit).
    pub fn single_grid(&self) -> Option<GridSpec> {
        match self.objects.as_slice() {
            [] => Some(self.cloth.clone().unwrap_or_default()),
            [SceneObject::Grid(grid)] => Some(grid.clone()),
            _ => None,
        }
    }

    /// The grid to edit when the scene is exactly one grid; a scene that named none gets
    /// the default curtain written out in `cloth`.
    pub fn single_grid_mut(&mut self) -> Option<&mut GridSpec> {
        match self.objects.as_mut_slice() {
            [] => Some(self.cloth.get_or_insert_with(GridSpec::default)),
            [SceneObject::Grid(grid)] => Some(grid),
            _ => None,
        }
    }

    /// `cloth` and `objects` exclude each other, `objects` needs version 2, and the one grid
    /// of `cloth` uses the scene's `material` (an own material is for `objects`).
    /// Refuses more objects, colliders or grid particles than a scene may have, before
    /// anything is built or allocated for them (meshes are counted when built, by the engine).
    fn check_counts(&self) -> Result<(), SimError> {
        check_len("objects", self.objects.len(), MAX_OBJECTS, "at most 256 objects")?;
        check_len("colliders", self.colliders.len(), MAX_COLLIDERS, "at most 256 colliders")?;
        let objects = self.objects();
        let grids = objects.iter().filter_map(|o| match o {
            SceneObject::Grid(grid) => Some((grid.columns as usize).saturating_mul(grid.rows as usize)),
            SceneObject::Mesh(_) => None,
        });
        let particles = grids.fold(0, usize::saturating_add);
        check_len(
            "particles",
            particles,
            MAX_PARTICLES,
            "at most 4194304 particles in the scene's grids",
        )
    }

    fn check_version_fields(&self) -> Result<(), InvalidField> {
        let refuse = |field: &'static str, message: &str| {
            Err(InvalidField {
                field,
                place: FieldPlace::Scene,
                message: message.into(),
            })
        };
        match (&self.cloth, self.objects.is_empty()) {
            (Some(_), false) => refuse("objects", "a scene has either `cloth` (one grid) or `objects`, not both"),
            (_, false) if self.version < 2 => refuse("objects", "`objects` needs `version: 2`"),
            (Some(GridSpec { material: Some(_), .. }), _) => refuse(
                "cloth",
                "`cloth` takes the scene's `material`; an object's own material needs `version: 2` and `objects`",
            ),
            (Some(GridSpec { appearance: Some(_), .. }), _) => refuse(
                "cloth",
                "`cloth` takes the scene's `appearance`; an object's own appearance needs `version: 2` and `objects`",
            ),
            _ => Ok(()),
        }
    }
}

/// RON as presets use it: `Some` may be left out (`cloth: (...)` rather than
/// `cloth: Some((...))`, as version-1 files were written), and a variant holding a struct may
/// list its fields directly (`Grid(columns: 40)` rather than `Grid((columns: 40))`).
fn ron_options() -> ron::Options {
    ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .with_default_extension(ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES)
}

/// 1-based line and column of the first `field:` in `text`, or (1, 1) if it is not spelled out (then the default was invalid, which tests prevent). Only
/// whole identifiers outside `//` comments count, so `thickness` is not found inside
/// `collision_thickness` or in a comment that mentions it.
fn locate_field(text: &str, field: &str) -> (usize, usize) {
    field_offsets(text, field).next().map_or((1, 1), |offset| line_col(text, offset))
}

/// Line and column of `field` in collider `index`: its occurrence after `colliders:` that
/// comes after the ones of the colliders before it with the same key.
fn locate_collider_field(text: &str, colliders: &[Collider], index: usize, field: &str) -> (usize, usize) {
    let Some(start) = field_offsets(text, "colliders").next() else {
        return (1, 1);
    };
    let earlier = colliders[..index].iter().filter(|c| c.keys().contains(&field)).count();
    field_offsets(text, field)
        .filter(|&offset| offset > start)
        .nth(earlier)
        .map_or_else(|| line_col(text, start), |offset| line_col(text, offset))
}

/// Line and column of `field` in seam `index`: its first occurrence within that seam's
/// parentheses (the `index`-th element of the list after `seams:`, its keys in any order), or
/// the seam's opening parenthesis.
fn locate_seam_field(text: &str, index: usize, field: &str) -> (usize, usize) {
    let Some(start) = field_offsets(text, "seams").next() else {
        return (1, 1);
    };
    let Some((open, close)) = list_element(text, start, index) else {
        return line_col(text, start);
    };
    let offset = field_offsets(text, field).find(|&offset| open < offset && offset < close);
    line_col(text, offset.unwrap_or(open))
}

/// Byte offsets of the opening and closing parenthesis of the `index`-th parenthesised element
/// of the first list (`[…]`) in `text` after `start`, skipping comments (a seam holds no
/// strings); `None` when the list has fewer elements.
fn list_element(text: &str, start: usize, index: usize) -> Option<(usize, usize)> {
    let mut chars = text[start..].char_indices().map(|(i, c)| (start + i, c)).peekable();
    let (mut depth, mut element, mut open) = (0usize, 0usize, 0usize);
    while let Some((i, c)) = chars.next() {
        match c {
            '/' if chars.next_if(|&(_, next)| next == '/').is_some() => while chars.next_if(|&(_, next)| next != '\n').is_some() {},
            '/' if chars.next_if(|&(_, next)| next == '*').is_some() => {
                let mut last = ' ';
                for (_, next) in chars.by_ref() {
                    if last == '*' && next == '/' {
                        break;
                    }
                    last = next;
                }
            }
            '[' if depth == 0 => depth = 1,
            '(' | '[' | '{' if depth > 0 => {
                depth += 1;
                if depth == 2 {
                    open = i;
                }
            }
            ')' | ']' | '}' if depth > 0 => {
                depth -= 1;
                if depth == 1 && c == ')' {
                    if element == index {
                        return Some((open, i));
                    }
                    element += 1;
                }
                if depth == 0 {
                    return None;
                }
            }
            _ => {}
        }
    }
    None
}

/// An object section's key and whether an object spells it out.
type ObjectSection<'a> = (&'a str, fn(&SceneObject) -> bool);

fn has_material(object: &SceneObject) -> bool {
    object.material().is_some()
}

fn is_mesh(object: &SceneObject) -> bool {
    matches!(object, SceneObject::Mesh(_))
}

fn has_appearance(object: &SceneObject) -> bool {
    object.appearance().is_some()
}

/// Line and column of `field` in the own section (`material` or `appearance`) of object
/// `index`: the object's `section:` key is found as the one after `objects:` that comes after
/// those of the objects before it that have one, and `field` as its first occurrence after
/// that key (or the key itself).
fn locate_object_field(text: &str, objects: &[SceneObject], index: usize, (section, has): ObjectSection, field: &str) -> (usize, usize) {
    let Some(start) = field_offsets(text, "objects").next() else {
        return (1, 1);
    };
    let earlier = objects[..index].iter().filter(|o| has(o)).count();
    let Some(key) = field_offsets(text, section).filter(|&offset| offset > start).nth(earlier) else {
        return line_col(text, start);
    };
    let offset = field_offsets(text, field).find(|&offset| offset > key).unwrap_or(key);
    line_col(text, offset)
}

/// Byte offsets of every `field:` key (a whole identifier outside `//` comments).
fn field_offsets<'a>(text: &'a str, field: &'a str) -> impl Iterator<Item = usize> + 'a {
    let mut line_start = 0;
    text.split_inclusive('\n').flat_map(move |line| {
        let offset = line_start;
        line_start += line.len();
        let code = line.split("//").next().unwrap_or_default();
        code.match_indices(field)
            .filter(move |&(col, _)| {
                let joined_to_identifier = code[..col].chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_');
                let rest = code[col + field.len()..].trim_start();
                !joined_to_identifier && rest.starts_with(':')
            })
            .map(move |(col, _)| offset + col)
            .collect::<Vec<_>>()
    })
}

/// 1-based line and column (in characters) of byte `offset`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// The section of a preset file a serde type name stands for, as the user writes it.
fn section_of(type_name: Option<&str>) -> String {
    match type_name {
        Some("GridSpec") => "`cloth` (or a `Grid` object)".into(),
        Some("Material") => "`material`".into(),
        Some("SolverParams") => "`solver`".into(),
        Some("Appearance") => "`appearance`".into(),
        Some("MeshSpec") => "a `Mesh` object".into(),
        Some("SceneObject") => "`objects`".into(),
        Some("Preset") | None => "the preset".into(),
        Some(other) => format!("`{other}`"),
    }
}

/// Edit distance between two short identifiers (insertions, deletions, substitutions).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb)).min(row[j] + 1).min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// " (did you mean `columns`?)" when one known name is within two edits of `found`.
fn suggestion(found: &str, known: &[&str]) -> String {
    known
        .iter()
        .map(|k| (edit_distance(found, k), k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map_or_else(String::new, |(_, k)| format!(" (did you mean `{k}`?)"))
}

/// ron's message in the words of the file: unknown fields and variants name the section
/// (`cloth`, not the Rust type `GridSpec`) and suggest the nearest spelling.
fn describe_syntax_error(code: &ron::error::Error) -> String {
    match code {
        ron::error::Error::NoSuchStructField { expected, found, outer } => {
            describe_unknown(("field", "known fields"), found, outer.as_deref(), expected)
        }
        ron::error::Error::NoSuchEnumVariant { expected, found, outer } => {
            describe_unknown(("value", "expected one of"), found, outer.as_deref(), expected)
        }
        other => other.to_string(),
    }
}

/// "unknown field `found` in section (did you mean …?); known fields: …" for an unknown
/// name, `found` quoted as an excerpt (it is input of any length).
fn describe_unknown((what, listed): (&str, &str), found: &str, outer: Option<&str>, expected: &[&str]) -> String {
    let found = excerpt(found, EXCERPT_CHARS);
    format!(
        "unknown {what} `{found}` in {}{}; {listed}: {}",
        section_of(outer),
        suggestion(&found, expected),
        expected.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19: the message read "Unexpected field named `colums`in `GridSpec`, …".
    #[test]
    fn an_unknown_field_names_the_section_and_the_likely_spelling() {
        let text = "(\n    cloth: (colums: 30),\n)\n";
        let error = Preset::parse(text, Path::new("bad.ron")).unwrap_err().to_string();
        assert!(
            error.starts_with(
                "bad.ron:2:19: unknown field `colums` in `cloth` (or a `Grid` object) (did you mean `columns`?); known fields: width,"
            ),
            "{error}"
        );
        assert!(!error.contains("GridSpec"), "{error}");
        let error = Preset::parse("(nme: \"x\")", Path::new("bad.ron")).unwrap_err().to_string();
        assert!(
            error.contains("unknown field `nme` in the preset (did you mean `name`?)"),
            "{error}"
        );
        let error = Preset::parse("(solver: (zzzzzz: 1))", Path::new("bad.ron"))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("unknown field `zzzzzz` in `solver`; known"),
            "no far-fetched guess: {error}"
        );
    }

    /// A seam's key is found inside its own parentheses whatever the order of its keys, past
    /// brackets in comments.
    #[test]
    fn a_seam_field_is_found_in_its_own_seam() {
        let text = "(\n  name: \"[(\",\n  seams: [ // (a: …\n    (b: (vertices: List([1])), /* ) */ a: (vertices: List([2]))),\n    (a: (vertices: Run(first: 0, step: 1, count: 2)), b: (vertices: List([3, 4])), strength: 0.0),\n  ],\n)\n";
        assert_eq!(locate_seam_field(text, 0, "b"), (4, 6));
        assert_eq!(locate_seam_field(text, 0, "a"), (4, 40));
        assert_eq!(locate_seam_field(text, 1, "b"), (5, 55));
        assert_eq!(locate_seam_field(text, 1, "strength"), (5, 84));
        // A key the seam does not spell out: its opening parenthesis; a seam past the list:
        // the `seams` key.
        assert_eq!(locate_seam_field(text, 0, "strength"), (4, 5));
        assert_eq!(locate_seam_field(text, 2, "a"), (3, 3));
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("colums", "columns"), 1);
        assert_eq!(edit_distance("wind", "wind"), 0);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
