//! The objects of a scene: cloths built from a grid description or from an OBJ mesh, joined
//! into the one particle model the engine simulates.
//!
//! All objects share the scene's solver settings; each takes the scene's material unless it
//! has its own (`material` on the object). Object k's particles are given material slot k
//! ([`Model::material`]), so its masses, compliances, friction, tearing and tethers come from
//! its material. They are simulated together, so with self-collision on they collide with
//! each other as well as with themselves, and picking, grabbing and cutting work on any of
//! them. A single grid builds exactly the model a version-1 preset built (same numbering,
//! same physics).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use glam::Vec3;
use serde::{Deserialize, Serialize};

use crate::mesh_file::{load_obj_checked, parse_obj_checked, MeshCheck, MeshFileError};
use crate::sim::appearance::Appearance;
use crate::sim::collision::MeshShape;
use crate::sim::error::{check_components, check_range};
use crate::sim::pressure::{MAX_PRESSURE_FACTOR, MAX_VOLUME_COMPLIANCE};
use crate::sim::{Collider, GridSpec, Material, MeshPins, Model, SimError, TriangleMesh};

mod seams;
pub use seams::{ObjectNumbering, SeamSide, SeamSpec, VertexRun};

/// One cloth of a scene.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SceneObject {
    /// A rectangular grid, as in a version-1 preset's `cloth`.
    Grid(GridSpec),
    /// A triangle mesh read from an OBJ file.
    Mesh(MeshSpec),
}

/// A cloth made from an OBJ file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MeshSpec {
    /// The OBJ file, e.g. `"assets/tablecloth.obj"`; a relative path is looked up next to
    /// the preset first ([`resolve_path`]). Default empty (an error: a mesh needs a file).
    pub file: PathBuf,
    /// Uniform scale applied to the file's coordinates. Default 1; range [0.001, 1000].
    pub scale: f32,
    /// Offset in m added after scaling. Default (0, 0, 0); components in [−1000, 1000].
    pub position: Vec3,
    /// Pinned vertices. Default none.
    pub pins: MeshPins,
    /// Add dihedral bending hinges on interior edges. Default true.
    pub bending: bool,
    /// Pressure factor k: a closed mesh is held at k times its volume as built (a balloon,
    /// a pillow); a tear or cut that opens it lets the air out. Default none (no pressure);
    /// range [0, 10]; only for closed meshes.
    pub pressure: Option<f32>,
    /// Volume compliance α of the pressure in m³/Pa: 0 (default) is an incompressible gas,
    /// larger values a softer balloon; range [0, 1].
    pub pressure_compliance: f32,
    /// The mesh's own material; default none: the scene's `material`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub material: Option<Material>,
    /// The mesh's own look; default none: the scene's `appearance`. Only the app reads it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub appearance: Option<Appearance>,
}

impl Default for MeshSpec {
    fn default() -> Self {
        Self {
            file: PathBuf::new(),
            scale: 1.0,
            position: Vec3::ZERO,
            pins: MeshPins::None,
            bending: true,
            pressure: None,
            pressure_compliance: 0.0,
            material: None,
            appearance: None,
        }
    }
}

/// Why a scene could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The engine refused a value or the geometry.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A mesh file is missing or broken (the message names the file and line).
    #[error(transparent)]
    MeshFile(#[from] MeshFileError),
}

impl MeshSpec {
    /// Checks the values (the file itself is checked when it is read).
    pub fn validate(&self) -> Result<(), SimError> {
        if self.file.as_os_str().is_empty() {
            return Err(SimError::InvalidGeometry("a mesh object needs a `file`".into()));
        }
        check_range("scale", self.scale, 1e-3, 1e3, "a factor in [0.001, 1000]")?;
        check_components("position", self.position, -1000.0, 1000.0, "components in [-1000, 1000] m")?;
        if let Some(k) = self.pressure {
            check_range("pressure", k, 0.0, MAX_PRESSURE_FACTOR, "a factor in [0, 10]")?;
        }
        check_range(
            "pressure_compliance",
            self.pressure_compliance,
            0.0,
            MAX_VOLUME_COMPLIANCE,
            "a compliance in [0, 1] m³/Pa",
        )?;
        self.pins.validate()
    }

    /// Reads the file (see [`MeshFiles::load`]), places the mesh and builds its model.
    pub fn build(&self, files: MeshFiles) -> Result<Model, BuildError> {
        self.build_numbered(files).map(|(model, _)| model)
    }

    /// [`Self::build`], and each file vertex's particle in the model.
    pub fn build_numbered(&self, files: MeshFiles) -> Result<(Model, Vec<u32>), BuildError> {
        self.validate()?;
        let mut mesh = files.load(&self.file)?;
        mesh.positions.iter_mut().for_each(|p| *p = *p * self.scale + self.position);
        let pressure = self.pressure.map(|k| (k, self.pressure_compliance));
        let built = mesh
            .build_model(&self.pins, self.bending, pressure)
            .map_err(|defect| SimError::InvalidGeometry(format!("{}: {defect}", self.file.display())))?;
        Ok(built)
    }
}

impl SceneObject {
    /// Checks the object's values.
    pub fn validate(&self) -> Result<(), SimError> {
        match self {
            SceneObject::Grid(grid) => grid.validate(),
            SceneObject::Mesh(mesh) => mesh.validate(),
        }
    }

    /// The object's own material, if it has one (else the scene's applies).
    pub fn material(&self) -> Option<&Material> {
        match self {
            SceneObject::Grid(grid) => grid.material.as_ref(),
            SceneObject::Mesh(mesh) => mesh.material.as_ref(),
        }
    }

    /// The object's own material, to edit or to set (`None`: the scene's).
    pub fn material_mut(&mut self) -> &mut Option<Material> {
        match self {
            SceneObject::Grid(grid) => &mut grid.material,
            SceneObject::Mesh(mesh) => &mut mesh.material,
        }
    }

    /// The object's own look, if it has one (else the scene's `appearance` applies).
    pub fn appearance(&self) -> Option<&Appearance> {
        match self {
            SceneObject::Grid(grid) => grid.appearance.as_ref(),
            SceneObject::Mesh(mesh) => mesh.appearance.as_ref(),
        }
    }

    /// A short name for messages and lists: `Grid 40×40` or `Mesh assets/sphere.obj`.
    pub fn label(&self) -> String {
        match self {
            SceneObject::Grid(grid) => format!("Grid {}×{}", grid.columns, grid.rows),
            SceneObject::Mesh(mesh) => format!("Mesh {}", mesh.file.display()),
        }
    }

    /// The object's model (a mesh read through `files`).
    pub fn build(&self, files: MeshFiles) -> Result<Model, BuildError> {
        self.build_numbered(files).map(|(model, _)| model)
    }

    /// [`Self::build`], and each mesh vertex's particle (`None` for a grid, whose particles
    /// are numbered as its vertices).
    fn build_numbered(&self, files: MeshFiles) -> Result<(Model, Option<Vec<u32>>), BuildError> {
        match self {
            SceneObject::Grid(grid) => Ok((grid.build()?, None)),
            SceneObject::Mesh(mesh) => mesh.build_numbered(files).map(|(model, order)| (model, Some(order))),
        }
    }
}

/// The models of `objects` joined into one, in order: object k's particles, triangles and
/// constraints follow those of the objects before it, in material slot k; then the `seams`
/// sewing them. Mesh files are read through `files`. Every particle is at its rest position;
/// [`build_scene`] also says which start elsewhere.
pub fn build_scene_model(objects: &[SceneObject], seams: &[SeamSpec], files: MeshFiles) -> Result<Model, BuildError> {
    build_scene(objects, seams, files).map(|(model, _)| model)
}

/// [`build_scene_model`], and the particles that start away from their rest position (the
/// grids' `pinned_at`) as (index into the joined model, position in m).
pub fn build_scene(objects: &[SceneObject], seams: &[SeamSpec], files: MeshFiles) -> Result<(Model, Vec<(u32, Vec3)>), BuildError> {
    let mut scene = Model::default();
    let mut starts = Vec::new();
    let mut numbering = Vec::with_capacity(objects.len());
    for (slot, object) in objects.iter().enumerate() {
        let (mut model, particle_of) = object.build_numbered(files)?;
        let slot = u16::try_from(slot).map_err(|_| SimError::InvalidGeometry("more than 65 536 objects".into()))?;
        model.set_material_slot(slot);
        let first = scene.particle_count() as u32;
        if let SceneObject::Grid(grid) = object {
            starts.extend(grid.start_positions().map(|(i, position)| (first + i, position)));
        }
        let count = model.particle_count() as u32;
        numbering.push(ObjectNumbering { first, count, particle_of });
        scene.append(model);
    }
    sew(&mut scene, seams, objects.len(), &numbering)?;
    Ok((scene, starts))
}

/// Adds `seams` to the joined model of `objects` objects numbered as `numbering` says.
fn sew(scene: &mut Model, seams: &[SeamSpec], objects: usize, numbering: &[ObjectNumbering]) -> Result<(), SimError> {
    for (k, seam) in seams.iter().enumerate() {
        let refuse = |why: String| SimError::InvalidGeometry(format!("seams[{k}]: {why}"));
        seam.validate(objects).map_err(|e| refuse(e.to_string()))?;
        let pairs = seam
            .pairs(numbering)
            .map_err(|(side, why)| SimError::InvalidGeometry(format!("seams[{k}].{side}: {why}")))?;
        scene
            .add_seam(&pairs, seam.close_time, seam.strength)
            .map_err(|e| refuse(e.to_string()))?;
    }
    Ok(())
}

/// `colliders` with every mesh collider's file read (through `files`, as for cloth meshes),
/// scaled and built into its shape ([`Collider::Mesh::shape`]).
pub fn load_colliders(colliders: &[Collider], files: MeshFiles) -> Result<Vec<Collider>, BuildError> {
    colliders
        .iter()
        .map(|collider| {
            let mut loaded = collider.clone();
            if let Collider::Mesh { file, scale, shape, .. } = &mut loaded {
                collider.validate()?;
                let mesh = files.load_checked(file, TriangleMesh::check_as_collider)?;
                let positions: Vec<Vec3> = mesh.positions.iter().map(|&p| p * *scale).collect();
                let built = MeshShape::new(&positions, &mesh.triangles)
                    .map_err(|why| SimError::InvalidGeometry(format!("{}: {why}", file.display())))?;
                shape.0 = Some(std::sync::Arc::new(built));
            }
            Ok(loaded)
        })
        .collect()
}

/// Mesh texts carried with a scene instead of read from disk (a recording embeds the files
/// its presets name, so it replays without them), by the path as the preset writes it.
pub type EmbeddedMeshes = BTreeMap<PathBuf, String>;

/// Where a scene's mesh files are read from.
#[derive(Debug, Clone, Copy, Default)]
pub struct MeshFiles<'a> {
    /// The directory of the preset that names them: relative paths are looked up there
    /// first ([`resolve_path`]); `None` for text not read from a file.
    pub preset_dir: Option<&'a Path>,
    /// Texts that stand in for the files (see [`EmbeddedMeshes`]); looked up before the disk.
    pub embedded: Option<&'a EmbeddedMeshes>,
}

impl MeshFiles<'_> {
    /// The mesh `file` (as the preset writes it), checked as a cloth: its embedded text, else
    /// the file on disk.
    pub fn load(&self, file: &Path) -> Result<TriangleMesh, MeshFileError> {
        self.load_checked(file, TriangleMesh::check)
    }

    /// [`Self::load`] with the checks `check`.
    pub fn load_checked(&self, file: &Path, check: MeshCheck) -> Result<TriangleMesh, MeshFileError> {
        match self.embedded.and_then(|texts| texts.get(file)) {
            Some(text) => parse_obj_checked(text, file, check),
            None => load_obj_checked(&resolve_path(file, self.preset_dir), check),
        }
    }
}

/// Where a file a preset names (a mesh, a texture) is read from. An absolute `path`, or any
/// path when the preset's directory is unknown (`preset_dir` `None`: text not read from a
/// file), is taken as written. A relative one is the first that exists of: `preset_dir/path`
/// (a file next to the preset), `preset_dir/../path` (the project root of a preset in
/// `presets/` naming `assets/…`), and `path` relative to the working directory; when none
/// exists, the last (so the error names the path as written).
pub fn resolve_path(path: &Path, preset_dir: Option<&Path>) -> PathBuf {
    let Some(dir) = preset_dir.filter(|_| path.is_relative()) else {
        return path.to_path_buf();
    };
    let beside = dir.join(path);
    let above = dir.parent().map(|parent| parent.join(path));
    [Some(beside), above]
        .into_iter()
        .flatten()
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| path.to_path_buf())
}
