//! A Drape session as one animated USD text file (`.usda`), written without a USD library:
//! the cloth objects as `UsdGeom.Mesh` prims whose points and normals are sampled once per
//! solver frame, and the colliders as USD shapes (docs/usd-export.md).
//!
//! # Layout
//! ```text
//! /Drape                      Xform, the stage's default prim
//!     Cloth_<slot>            Xform: the cloth object in material slot <slot>
//!         Topology_<k>        Mesh: the object's k-th topology (0, 1, … in time order)
//!     Collider_<i>            Xform: the cloth's collider <i>
//!         <Shape>_<k>         its k-th shape: Ground (a square Mesh), Sphere, Capsule, Box (a Cube)
//! ```
//! Time code t is the t-th frame added ([`UsdAnimation::add_frame`]); the stage plays them at
//! the scene's frame rate (`timeCodesPerSecond` = `framesPerSecond`), in metres
//! (`metersPerUnit = 1`), y up.
//!
//! # Objects
//! A scene's objects are the model's material slots ([`Model::material`]): object s is the
//! particles of slot s and the triangles whose first corner is one of them (a scene's objects
//! are not joined, so their other corners are too; any that were not would be written with
//! the object). Its mesh holds only those particles, numbered in the cloth's order.
//!
//! # Topology spans
//! USD cannot change a mesh's face list over time, and tearing does: it adds particles and
//! re-indexes triangles. So a mesh prim holds one constant topology over a span of frames,
//! with points, normals and extent sampled on each frame of its span, and
//! `visibility` switched `"inherited"` at the span's first frame and `"invisible"` before it
//! and from the frame after its last. When an object's topology changes at frame f, its span
//! ends at f − 1 and the object's next prim, `Topology_<k+1>`, starts at f; an object a change
//! leaves as it was keeps its prim. A change is found by comparing the cloth's triangles,
//! particle slots and texture coordinates with the last frame's rather than by
//! [`Cloth::topology_version`], which a reset or a new scene starts again at 0.
//! Colliders are spanned the same way by shape kind (a sphere replaced by a box starts a
//! `Box_<k+1>` prim after `Sphere_<k>`); within a span each attribute is written once when it holds one value and
//! sampled per frame otherwise (a dragged sphere's `xformOp:translate`).
//!
//! # Faces, normals, texture coordinates
//! Drape's triangles run counter-clockwise seen from the front, and its smooth normals
//! ([`Cloth::vertex_normals`], interpolation `"vertex"`) point out of the front: USD's
//! `orientation = "rightHanded"`. The cloth is `doubleSided` with `subdivisionScheme =
//! "none"` (the triangles are the surface). A model with texture coordinates gets them as
//! `primvars:st`, one per triangle corner (`"faceVarying"`).
//!
//! # Numbers and memory
//! Every f32 is written with Rust's shortest round-trip text, so it reads back as the same
//! f32. A frame stores each object's points and normals (24 bytes a particle) and each
//! collider as it is (one [`Collider`] value, 60 bytes); a topology (indices and texture
//! coordinates) is stored once per span, and the last frame's whole topology once, to find
//! changes (a comparison of the triangles per frame). Nothing is written before
//! [`UsdAnimation::write`]; the text takes 40 to 80 bytes per particle and frame.

use std::io::{self, Write};
use std::mem::Discriminant;
use std::path::Path;

use glam::{Quat, Vec2, Vec3};

use crate::sim::collision::MeshShape;
use crate::sim::{Cloth, Collider, Model, Particles};

/// Half the side of the square the ground plane is written as, in m: wider than any shipped
/// scene, small enough that a viewer framing the whole stage still shows the cloth.
const GROUND_HALF_SIZE: f32 = 10.0;

/// Indentation of a leaf prim (a mesh or a shape) inside its object's Xform.
const PRIM: &str = "        ";
/// Indentation of a leaf prim's attributes.
const ATTRIBUTE: &str = "            ";
/// Indentation of one time sample.
const SAMPLE: &str = "                ";

/// Collects one snapshot per solver frame, then writes them as one .usda file (see the
/// module docs for the layout).
#[derive(Debug, Clone)]
pub struct UsdAnimation {
    /// Frames (and time codes) per second.
    frames_per_second: f64,
    /// Frames added so far.
    frames: usize,
    /// The cloth's topology at the last frame added.
    topology: Topology,
    /// One track per material slot seen so far.
    cloths: Vec<Track<ObjectMesh, MeshSample>>,
    /// One track per collider index seen so far.
    colliders: Vec<Track<Discriminant<Collider>, Collider>>,
    /// Scratch for the normals of the frame being added.
    normals: Vec<Vec3>,
}

impl UsdAnimation {
    /// `frames_per_second`: the scene's frame rate (1 / SolverParams::dt), written as
    /// timeCodesPerSecond and framesPerSecond.
    pub fn new(frames_per_second: f64) -> Self {
        Self {
            frames_per_second,
            frames: 0,
            topology: Topology::default(),
            cloths: Vec::new(),
            colliders: Vec::new(),
            normals: Vec::new(),
        }
    }

    /// Adds the cloth as it is now as the next time code (0, 1, 2, …).
    pub fn add_frame(&mut self, cloth: &Cloth) {
        self.add_cloth(cloth);
        self.add_colliders(cloth.colliders());
        self.frames += 1;
    }

    /// Adds every object's points and normals to its open span, after starting new spans for
    /// the objects whose topology changed.
    fn add_cloth(&mut self, cloth: &Cloth) {
        let model = cloth.model();
        if !self.topology.matches(model) {
            self.topology = Topology::of(model);
            let slots = if model.particle_count() == 0 { 0 } else { model.material_slots() };
            grow(&mut self.cloths, slots);
            for (slot, track) in self.cloths.iter_mut().enumerate() {
                let mesh = (slot < slots).then(|| ObjectMesh::of(model, slot as u16));
                track.continue_with(self.frames, mesh.filter(|m| !m.particles.is_empty()));
            }
        }
        cloth.vertex_normals(&mut self.normals);
        for span in self.cloths.iter_mut().filter_map(Track::open_span) {
            let sample = MeshSample::of(&span.shape, cloth.particles(), &self.normals);
            span.samples.push(sample);
        }
    }

    /// Adds every collider to its open span, a new one for a collider whose kind changed.
    fn add_colliders(&mut self, colliders: &[Collider]) {
        grow(&mut self.colliders, colliders.len());
        for (i, track) in self.colliders.iter_mut().enumerate() {
            let collider = colliders.get(i);
            track.continue_with(self.frames, collider.map(std::mem::discriminant));
            if let (Some(span), Some(collider)) = (track.open_span(), collider) {
                span.samples.push(collider.clone());
            }
        }
    }

    /// Number of frames added.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Writes the file crash-safely (crate::safe_write::write_atomically).
    pub fn write(&self, path: &Path) -> io::Result<()> {
        crate::safe_write::write_atomically(path, |out| self.write_to(out))
    }

    /// Writes the `.usda` text to `out`.
    pub fn write_to(&self, out: &mut dyn Write) -> io::Result<()> {
        let fps = self.frames_per_second;
        writeln!(out, "#usda 1.0\n(")?;
        writeln!(out, "    defaultPrim = \"Drape\"")?;
        writeln!(out, "    endTimeCode = {}", self.frames.max(1) - 1)?;
        writeln!(out, "    framesPerSecond = {fps}")?;
        writeln!(out, "    metersPerUnit = 1")?;
        writeln!(out, "    startTimeCode = 0")?;
        writeln!(out, "    timeCodesPerSecond = {fps}")?;
        writeln!(out, "    upAxis = \"Y\"\n)\n\ndef Xform \"Drape\"\n{{")?;
        for (slot, track) in self.cloths.iter().enumerate() {
            self.write_track(out, &format!("Cloth_{slot}"), track, |out, k, span| self.write_mesh(out, k, span))?;
        }
        for (i, track) in self.colliders.iter().enumerate() {
            self.write_track(out, &format!("Collider_{i}"), track, |out, k, span| {
                self.write_collider(out, k, span)
            })?;
        }
        writeln!(out, "}}")
    }

    /// Writes a track as an Xform named `name` holding its spans' prims (nothing for a track
    /// without spans).
    fn write_track<Shape, Sample>(
        &self,
        out: &mut dyn Write,
        name: &str,
        track: &Track<Shape, Sample>,
        write_span: impl Fn(&mut dyn Write, usize, &Span<Shape, Sample>) -> io::Result<()>,
    ) -> io::Result<()> {
        if track.spans.is_empty() {
            return Ok(());
        }
        writeln!(out, "    def Xform \"{name}\"\n    {{")?;
        for (k, span) in track.spans.iter().enumerate() {
            write_span(out, k, span)?;
        }
        writeln!(out, "    }}")
    }

    /// Writes the mesh prim `Topology_<k>` of a cloth object's span.
    fn write_mesh(&self, out: &mut dyn Write, k: usize, span: &Span<ObjectMesh, MeshSample>) -> io::Result<()> {
        let mesh = &span.shape;
        writeln!(out, "{PRIM}def Mesh \"Topology_{k}\"\n{PRIM}{{")?;
        writeln!(out, "{ATTRIBUTE}uniform bool doubleSided = 1")?;
        write_samples(out, "float3[] extent", span.first_frame, &span.samples, |out, s| {
            write_list(out, extent(&s.points).map(Tuple3))
        })?;
        write!(out, "{ATTRIBUTE}int[] faceVertexCounts = ")?;
        write_list(out, mesh.triangles.iter().map(|_| 3))?;
        write!(out, "\n{ATTRIBUTE}int[] faceVertexIndices = ")?;
        write_list(out, mesh.triangles.iter().flatten())?;
        writeln!(out)?;
        writeln!(
            out,
            "{ATTRIBUTE}normal3f[] normals (\n{SAMPLE}interpolation = \"vertex\"\n{ATTRIBUTE})"
        )?;
        write_samples(out, "normal3f[] normals", span.first_frame, &span.samples, |out, s| {
            write_list(out, s.normals.iter().copied().map(Tuple3))
        })?;
        writeln!(out, "{ATTRIBUTE}uniform token orientation = \"rightHanded\"")?;
        write_samples(out, "point3f[] points", span.first_frame, &span.samples, |out, s| {
            write_list(out, s.points.iter().copied().map(Tuple3))
        })?;
        if !mesh.corner_uvs.is_empty() {
            write!(out, "{ATTRIBUTE}texCoord2f[] primvars:st = ")?;
            write_list(out, mesh.corner_uvs.iter().flatten().map(|&uv| Tuple2(uv)))?;
            writeln!(out, " (\n{SAMPLE}interpolation = \"faceVarying\"\n{ATTRIBUTE})")?;
        }
        writeln!(out, "{ATTRIBUTE}uniform token subdivisionScheme = \"none\"")?;
        self.write_visibility(out, span.first_frame, span.end())?;
        writeln!(out, "{PRIM}}}")
    }

    /// Writes the shape prim `<Shape>_<k>` of a collider's span.
    fn write_collider(&self, out: &mut dyn Write, k: usize, span: &Span<Discriminant<Collider>, Collider>) -> io::Result<()> {
        let poses: Vec<ShapeText> = span.samples.iter().map(ShapeText::of).collect();
        let first = &poses[0];
        writeln!(out, "{PRIM}def {} \"{}_{k}\"\n{PRIM}{{", first.prim_type, first.name)?;
        for line in &first.constants {
            writeln!(out, "{ATTRIBUTE}{line}")?;
        }
        for (a, &(declaration, _)) in first.animated.iter().enumerate() {
            let values: Vec<&str> = poses.iter().map(|p| p.animated[a].1.as_str()).collect();
            if values.iter().all(|v| *v == values[0]) {
                writeln!(out, "{ATTRIBUTE}{declaration} = {}", values[0])?;
            } else {
                write_samples(out, declaration, span.first_frame, &values, |out, v| write!(out, "{v}"))?;
            }
        }
        // The transform operations apply in the order they are listed, outermost first.
        let ops = first.animated.iter().filter_map(|(d, _)| d.split_once(' ').map(|(_, name)| name));
        let order: Vec<String> = ops
            .filter(|name| name.starts_with("xformOp:"))
            .map(|name| format!("\"{name}\""))
            .collect();
        writeln!(out, "{ATTRIBUTE}uniform token[] xformOpOrder = [{}]", order.join(", "))?;
        self.write_visibility(out, span.first_frame, span.end())?;
        writeln!(out, "{PRIM}}}")
    }

    /// Writes `visibility`: shown from `first` up to `end` (exclusive), hidden before and after.
    fn write_visibility(&self, out: &mut dyn Write, first: usize, end: usize) -> io::Result<()> {
        writeln!(out, "{ATTRIBUTE}token visibility.timeSamples = {{")?;
        if first > 0 {
            writeln!(out, "{SAMPLE}0: \"invisible\",")?;
        }
        writeln!(out, "{SAMPLE}{first}: \"inherited\",")?;
        if end < self.frames {
            writeln!(out, "{SAMPLE}{end}: \"invisible\",")?;
        }
        writeln!(out, "{ATTRIBUTE}}}")
    }
}

/// Makes `tracks` at least `len` long.
fn grow<Shape, Sample>(tracks: &mut Vec<Track<Shape, Sample>>, len: usize) {
    if tracks.len() < len {
        tracks.resize_with(len, Track::default);
    }
}

/// What an object's meshes are made from: the model's triangles, particle slots and texture
/// coordinates at the last frame added.
#[derive(Debug, Clone, Default)]
struct Topology {
    triangles: Vec<[u32; 3]>,
    material: Vec<u16>,
    corner_uvs: Vec<[Vec2; 3]>,
}

impl Topology {
    fn of(model: &Model) -> Self {
        Self {
            triangles: model.triangles.clone(),
            material: model.material.clone(),
            corner_uvs: model.corner_uvs.clone(),
        }
    }

    fn matches(&self, model: &Model) -> bool {
        self.triangles == model.triangles && self.material == model.material && self.corner_uvs == model.corner_uvs
    }
}

/// The spans of one cloth object or collider, in time order.
#[derive(Debug, Clone)]
struct Track<Shape, Sample> {
    spans: Vec<Span<Shape, Sample>>,
    /// Whether the last span takes the frame being added.
    open: bool,
}

impl<Shape, Sample> Default for Track<Shape, Sample> {
    fn default() -> Self {
        Self {
            spans: Vec::new(),
            open: false,
        }
    }
}

impl<Shape: PartialEq, Sample> Track<Shape, Sample> {
    /// At frame `frame`: keeps the open span when its shape is `shape`, starts a new span
    /// when the shape differs, closes the open span when there is none.
    fn continue_with(&mut self, frame: usize, shape: Option<Shape>) {
        let Some(shape) = shape else {
            self.open = false;
            return;
        };
        let same = self.open && self.spans.last().is_some_and(|span| span.shape == shape);
        if !same {
            self.spans.push(Span {
                first_frame: frame,
                shape,
                samples: Vec::new(),
            });
        }
        self.open = true;
    }

    /// The span taking the frame being added, if any.
    fn open_span(&mut self) -> Option<&mut Span<Shape, Sample>> {
        self.spans.last_mut().filter(|_| self.open)
    }
}

/// One constant shape over consecutive frames, with one sample per frame.
#[derive(Debug, Clone)]
struct Span<Shape, Sample> {
    first_frame: usize,
    shape: Shape,
    samples: Vec<Sample>,
}

impl<Shape, Sample> Span<Shape, Sample> {
    /// The frame after the span's last.
    fn end(&self) -> usize {
        self.first_frame + self.samples.len()
    }
}

/// One cloth object's topology.
#[derive(Debug, Clone, PartialEq)]
struct ObjectMesh {
    /// The cloth's particle index of each point, ascending.
    particles: Vec<u32>,
    /// The object's triangles, as indices into `particles`.
    triangles: Vec<[u32; 3]>,
    /// The triangles' corners' texture coordinates; empty when the model has none.
    corner_uvs: Vec<[Vec2; 3]>,
}

impl ObjectMesh {
    /// Object `slot` of `model` (see the module docs).
    fn of(model: &Model, slot: u16) -> Self {
        let faces: Vec<usize> = (0..model.triangles.len())
            .filter(|&t| model.material[model.triangles[t][0] as usize] == slot)
            .collect();
        let mut local: Vec<Option<u32>> = model.material.iter().map(|&m| (m == slot).then_some(0)).collect();
        for &t in &faces {
            for corner in model.triangles[t] {
                local[corner as usize] = Some(0);
            }
        }
        let mut particles = Vec::new();
        for (i, index) in local.iter_mut().enumerate() {
            if let Some(index) = index {
                *index = particles.len() as u32;
                particles.push(i as u32);
            }
        }
        let renumber = |corner: u32| local[corner as usize].expect("a corner is one of the object's particles");
        Self {
            particles,
            triangles: faces.iter().map(|&t| model.triangles[t].map(renumber)).collect(),
            corner_uvs: if model.corner_uvs.is_empty() {
                Vec::new()
            } else {
                faces.iter().map(|&t| model.corner_uvs[t]).collect()
            },
        }
    }
}

/// A cloth object's points and smooth normals on one frame.
#[derive(Debug, Clone)]
struct MeshSample {
    points: Vec<Vec3>,
    normals: Vec<Vec3>,
}

impl MeshSample {
    /// `mesh`'s particles from the cloth's `particles` and `normals` (one per particle).
    fn of(mesh: &ObjectMesh, particles: &Particles, normals: &[Vec3]) -> Self {
        Self {
            points: mesh.particles.iter().map(|&i| particles.position(i as usize)).collect(),
            normals: mesh.particles.iter().map(|&i| normals[i as usize]).collect(),
        }
    }
}

/// A collider as USD text: its prim type and name, the attributes that depend on its kind
/// only, and those that may change while it keeps its kind (`(declaration, value)`; the
/// transform operations among them in the order they apply, outermost first).
struct ShapeText {
    prim_type: &'static str,
    name: &'static str,
    constants: Vec<String>,
    animated: Vec<(&'static str, String)>,
}

impl ShapeText {
    /// `collider` where it is now.
    fn of(collider: &Collider) -> Self {
        let translate = ("float3 xformOp:translate", Tuple3(collider.position()).to_string());
        let orient = |q: Quat| ("quatf xformOp:orient", format!("({}, {}, {}, {})", q.w, q.x, q.y, q.z));
        let extent = |half: Vec3| ("float3[] extent", format!("[{}, {}]", Tuple3(-half), Tuple3(half)));
        let radius = |r: f32| ("double radius", r.to_string());
        match *collider {
            Collider::Ground { .. } => Self::ground(translate),
            Collider::Sphere { radius: r, .. } => Self {
                prim_type: "Sphere",
                name: "Sphere",
                constants: Vec::new(),
                animated: vec![extent(Vec3::splat(r)), radius(r), translate],
            },
            Collider::Capsule { a, b, radius: r, .. } => {
                // USD's capsule lies along its `axis` (y here); the orientation turns y onto a→b.
                let height = a.distance(b);
                let turn = if height > 0.0 {
                    Quat::from_rotation_arc(Vec3::Y, (b - a) / height)
                } else {
                    Quat::IDENTITY
                };
                Self {
                    prim_type: "Capsule",
                    name: "Capsule",
                    constants: vec!["uniform token axis = \"Y\"".into()],
                    animated: vec![
                        extent(Vec3::new(r, height / 2.0 + r, r)),
                        ("double height", height.to_string()),
                        radius(r),
                        translate,
                        orient(turn),
                    ],
                }
            }
            Collider::Box { half_extents, .. } => Self {
                // A cube of side 2 (from −1 to 1) scaled by the half extents.
                prim_type: "Cube",
                name: "Box",
                constants: vec!["float3[] extent = [(-1, -1, -1), (1, 1, 1)]".into(), "double size = 2".into()],
                animated: vec![
                    translate,
                    orient(collider.rotation()),
                    ("float3 xformOp:scale", Tuple3(half_extents).to_string()),
                ],
            },
            Collider::Mesh { ref shape, .. } => Self::mesh(shape.0.as_deref(), translate, orient(collider.rotation())),
        }
    }

    /// A mesh collider's triangles (each with its own three points, as the shape stores
    /// them; none when its file was not read), placed by `translate` and `orient`.
    fn mesh(shape: Option<&MeshShape>, translate: (&'static str, String), orient: (&'static str, String)) -> Self {
        let corners: Vec<Vec3> = shape.map_or(&[][..], MeshShape::triangles).iter().flatten().copied().collect();
        let [low, high] = extent(&corners);
        let points: Vec<String> = corners.iter().map(|&p| Tuple3(p).to_string()).collect();
        let indices: Vec<String> = (0..corners.len()).map(|i| i.to_string()).collect();
        Self {
            prim_type: "Mesh",
            name: "MeshCollider",
            constants: vec![
                format!("float3[] extent = [{}, {}]", Tuple3(low), Tuple3(high)),
                format!("int[] faceVertexCounts = [{}]", vec!["3"; corners.len() / 3].join(", ")),
                format!("int[] faceVertexIndices = [{}]", indices.join(", ")),
                "uniform token orientation = \"rightHanded\"".into(),
                format!("point3f[] points = [{}]", points.join(", ")),
                "uniform token subdivisionScheme = \"none\"".into(),
            ],
            animated: vec![translate, orient],
        }
    }

    /// The ground: a square Mesh in the plane y = 0 facing +y, moved to its height by
    /// `translate`.
    fn ground(translate: (&'static str, String)) -> Self {
        let s = GROUND_HALF_SIZE;
        let corners = [(-s, -s), (-s, s), (s, s), (s, -s)].map(|(x, z)| Tuple3(Vec3::new(x, 0.0, z)).to_string());
        Self {
            prim_type: "Mesh",
            name: "Ground",
            constants: vec![
                format!("float3[] extent = [{}, {}]", corners[0], corners[2]),
                "int[] faceVertexCounts = [4]".into(),
                "int[] faceVertexIndices = [0, 1, 2, 3]".into(),
                "uniform token orientation = \"rightHanded\"".into(),
                format!("point3f[] points = [{}]", corners.join(", ")),
                "uniform token subdivisionScheme = \"none\"".into(),
            ],
            animated: vec![translate],
        }
    }
}

/// The smallest and largest coordinates of `points` (zeros for none).
fn extent(points: &[Vec3]) -> [Vec3; 2] {
    let low = points.iter().copied().reduce(Vec3::min).unwrap_or(Vec3::ZERO);
    let high = points.iter().copied().reduce(Vec3::max).unwrap_or(Vec3::ZERO);
    [low, high]
}

/// `(x, y, z)`, each the shortest text that reads back as the same f32.
struct Tuple3(Vec3);

impl std::fmt::Display for Tuple3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {}, {})", self.0.x, self.0.y, self.0.z)
    }
}

/// `(u, v)`, each the shortest text that reads back as the same f32.
struct Tuple2(Vec2);

impl std::fmt::Display for Tuple2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {})", self.0.x, self.0.y)
    }
}

/// Writes `[a, b, …]`.
fn write_list<T: std::fmt::Display>(out: &mut dyn Write, items: impl IntoIterator<Item = T>) -> io::Result<()> {
    write!(out, "[")?;
    for (n, item) in items.into_iter().enumerate() {
        let separator = if n == 0 { "" } else { ", " };
        write!(out, "{separator}{item}")?;
    }
    write!(out, "]")
}

/// Writes `declaration.timeSamples`, one sample per frame from `first_frame`, each value
/// written by `value`.
fn write_samples<T>(
    out: &mut dyn Write,
    declaration: &str,
    first_frame: usize,
    samples: &[T],
    value: impl Fn(&mut dyn Write, &T) -> io::Result<()>,
) -> io::Result<()> {
    writeln!(out, "{ATTRIBUTE}{declaration}.timeSamples = {{")?;
    for (n, sample) in samples.iter().enumerate() {
        write!(out, "{SAMPLE}{}: ", first_frame + n)?;
        value(out, sample)?;
        writeln!(out, ",")?;
    }
    writeln!(out, "{ATTRIBUTE}}}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset::Preset;
    use crate::scene::SceneObject;
    use crate::sim::{icosphere, GridSpec, Material, Motion, Ray};

    /// A `columns` × `rows` vertical sheet, 1 m square, its top edge's centre at
    /// (`x`, 2, 0), hanging from its top corners.
    fn sheet(x: f32, columns: u32, rows: u32) -> SceneObject {
        SceneObject::Grid(GridSpec {
            columns,
            rows,
            origin: Vec3::new(x, 2.0, 0.0),
            ..GridSpec::default()
        })
    }

    fn scene(objects: Vec<SceneObject>, colliders: Vec<Collider>) -> Preset {
        Preset {
            objects,
            colliders,
            ..Preset::default()
        }
    }

    /// Adds the cloth as it is, then steps and adds it again, `frames` frames in all.
    fn record(animation: &mut UsdAnimation, cloth: &mut Cloth, preset: &Preset, frames: usize) {
        for _ in 0..frames {
            animation.add_frame(cloth);
            cloth.step(&preset.solver, &preset.material).unwrap();
        }
    }

    fn written(animation: &UsdAnimation) -> String {
        let mut bytes = Vec::new();
        animation.write_to(&mut bytes).unwrap();
        String::from_utf8(bytes).unwrap()
    }

    /// The text of prim `/Drape/<parent>/<name>`, from its name to before its closing brace.
    fn prim<'a>(text: &'a str, parent: &str, name: &str) -> &'a str {
        let parent_at = text
            .find(&format!("def Xform \"{parent}\""))
            .unwrap_or_else(|| panic!("no {parent}"));
        let rest = &text[parent_at..];
        let end = rest.find("\n    }").unwrap();
        let rest = &rest[..end];
        let start = rest.find(&format!(" \"{name}\"\n")).unwrap_or_else(|| panic!("no {parent}/{name}"));
        let body = &rest[start..];
        &body[..body.find(&format!("\n{PRIM}}}")).unwrap()]
    }

    /// The (time code, value) samples of `attribute` (declared with its type) in `prim`.
    fn samples<'a>(prim: &'a str, attribute: &str) -> Vec<(usize, &'a str)> {
        let header = format!("{ATTRIBUTE}{attribute}.timeSamples = {{\n");
        let start = prim.find(&header).unwrap_or_else(|| panic!("no {attribute} samples")) + header.len();
        let body = &prim[start..start + prim[start..].find(&format!("\n{ATTRIBUTE}}}")).unwrap()];
        body.lines()
            .map(|line| {
                let (time, value) = line.trim().split_once(": ").unwrap();
                (time.parse().unwrap(), value.trim_end_matches(','))
            })
            .collect()
    }

    /// The value written once for `attribute` (declared with its type) in `prim`, if any.
    fn constant<'a>(prim: &'a str, attribute: &str) -> Option<&'a str> {
        let header = format!("{ATTRIBUTE}{attribute} = ");
        let start = prim.find(&header)? + header.len();
        Some(prim[start..].lines().next().unwrap())
    }

    /// The numbers of a `[(x, y, z), …]` or `(x, y, z)` value, tuple by tuple.
    fn tuples(value: &str) -> Vec<Vec<f32>> {
        let inner = value.trim_start_matches('[').trim_end_matches(']');
        let tuples = inner.split("), ").map(|t| t.trim_start_matches('(').trim_end_matches(')'));
        tuples.map(|t| t.split(", ").map(|x| x.parse().unwrap()).collect()).collect()
    }

    /// The numbers of an `[a, b, …]` integer list.
    fn ints(value: &str) -> Vec<u32> {
        let inner = value.trim_start_matches('[').trim_end_matches(']');
        inner.split(", ").map(|x| x.parse().unwrap()).collect()
    }

    fn vec3s(value: &str) -> Vec<Vec3> {
        tuples(value).iter().map(|t| Vec3::from_slice(t)).collect()
    }

    #[test]
    fn every_frame_is_one_points_and_normals_sample_at_the_scenes_frame_rate() {
        let preset = scene(vec![sheet(0.0, 4, 5)], Vec::new());
        let mut cloth = preset.build().unwrap();
        let mut animation = UsdAnimation::new(60.0);
        record(&mut animation, &mut cloth, &preset, 3);
        animation.add_frame(&cloth);
        assert_eq!(animation.frames(), 4);
        let text = written(&animation);
        for line in [
            "defaultPrim = \"Drape\"",
            "endTimeCode = 3",
            "framesPerSecond = 60",
            "timeCodesPerSecond = 60",
            "upAxis = \"Y\"",
        ] {
            assert!(text.contains(&format!("\n    {line}\n")), "{line}");
        }
        let mesh = prim(&text, "Cloth_0", "Topology_0");
        let points = samples(mesh, "point3f[] points");
        let normals = samples(mesh, "normal3f[] normals");
        assert_eq!(points.iter().map(|s| s.0).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(normals.iter().map(|s| s.0).collect::<Vec<_>>(), [0, 1, 2, 3]);
        let mut expected_normals = Vec::new();
        cloth.vertex_normals(&mut expected_normals);
        assert_eq!(vec3s(points[3].1), cloth.particles().positions().collect::<Vec<_>>());
        assert_eq!(vec3s(normals[3].1), expected_normals);
        assert_ne!(vec3s(points[3].1), vec3s(points[0].1), "the sheet moved");
        let [low, high] = extent(&vec3s(points[3].1));
        assert_eq!(vec3s(samples(mesh, "float3[] extent")[3].1), [low, high]);
        let counts = ints(constant(mesh, "int[] faceVertexCounts").unwrap());
        assert_eq!(counts, vec![3; cloth.triangles().len()]);
        let indices = ints(constant(mesh, "int[] faceVertexIndices").unwrap());
        assert_eq!(indices, cloth.triangles().concat());
    }

    #[test]
    fn each_object_holds_only_its_own_particles() {
        let preset = scene(vec![sheet(-0.6, 3, 4), sheet(0.6, 5, 4)], Vec::new());
        let cloth = preset.build().unwrap();
        let mut animation = UsdAnimation::new(60.0);
        animation.add_frame(&cloth);
        let text = written(&animation);
        let model = cloth.model();
        for slot in [0, 1] {
            let own: Vec<Vec3> = (0..model.particle_count())
                .filter(|&i| model.material[i] == slot)
                .map(|i| cloth.particles().position(i))
                .collect();
            let mesh = prim(&text, &format!("Cloth_{slot}"), "Topology_0");
            assert_eq!(vec3s(samples(mesh, "point3f[] points")[0].1), own, "object {slot}");
            let own_triangles = model.triangles.iter().filter(|t| model.material[t[0] as usize] == slot).count();
            let indices = ints(constant(mesh, "int[] faceVertexIndices").unwrap());
            assert_eq!(indices.len(), 3 * own_triangles, "object {slot}");
            assert_eq!(indices.iter().max(), Some(&(own.len() as u32 - 1)), "object {slot}");
        }
    }

    #[test]
    fn a_cut_starts_the_objects_next_topology_prim_at_its_frame() {
        let preset = scene(vec![sheet(-0.6, 6, 6), sheet(0.6, 6, 6)], Vec::new());
        let mut cloth = preset.build().unwrap();
        let mut animation = UsdAnimation::new(60.0);
        record(&mut animation, &mut cloth, &preset, 2);
        let particles_before = cloth.particles().len();
        // Across the left sheet's middle, from its left edge to its centre, seen from the front.
        let eye = Vec3::new(-1.1, 1.5, 3.0);
        let toward = |x: f32| Ray {
            origin: eye,
            direction: Vec3::new(x, 1.5, 0.0) - eye,
        };
        assert!(cloth.cut(&toward(-1.15), &toward(-0.6)) > 0, "the cut crosses the left sheet");
        assert!(cloth.particles().len() > particles_before, "the cut split particles");
        record(&mut animation, &mut cloth, &preset, 2);
        let text = written(&animation);
        let times = |mesh: &str| samples(mesh, "point3f[] points").iter().map(|s| s.0).collect::<Vec<_>>();
        let before = prim(&text, "Cloth_0", "Topology_0");
        let after = prim(&text, "Cloth_0", "Topology_1");
        assert_eq!(times(before), [0, 1]);
        assert_eq!(samples(before, "token visibility"), [(0, "\"inherited\""), (2, "\"invisible\"")]);
        assert_eq!(times(after), [2, 3]);
        assert_eq!(samples(after, "token visibility"), [(0, "\"invisible\""), (2, "\"inherited\"")]);
        let points = |mesh: &str, n: usize| vec3s(samples(mesh, "point3f[] points")[n].1).len();
        assert!(points(after, 0) > points(before, 0), "the cut's copies are points of the new prim");
        let untouched = prim(&text, "Cloth_1", "Topology_0");
        assert_eq!(times(untouched), [0, 1, 2, 3], "the right sheet keeps its prim");
        assert_eq!(samples(untouched, "token visibility"), [(0, "\"inherited\"")]);
        assert!(!text.contains("\"Topology_2\""));
    }

    /// A reset or a new scene starts the topology version again: a cloth cut elsewhere at the
    /// same version is a new topology all the same.
    #[test]
    fn another_cut_at_the_same_topology_version_starts_a_new_prim() {
        let preset = scene(vec![sheet(0.0, 6, 6)], Vec::new());
        let cut_at = |height: f32| {
            let mut cloth = preset.build().unwrap();
            let eye = Vec3::new(-0.5, height, 3.0);
            let toward = |x: f32| Ray {
                origin: eye,
                direction: Vec3::new(x, height, 0.0) - eye,
            };
            assert!(
                cloth.cut(&toward(-0.55), &toward(0.0)) > 0,
                "the cut at {height} m crosses the sheet"
            );
            cloth
        };
        let (high, low) = (cut_at(1.75), cut_at(1.25));
        assert_eq!(high.topology_version(), low.topology_version());
        let mut animation = UsdAnimation::new(60.0);
        animation.add_frame(&high);
        animation.add_frame(&low);
        let text = written(&animation);
        assert_eq!(
            samples(prim(&text, "Cloth_0", "Topology_0"), "token visibility"),
            [(0, "\"inherited\""), (1, "\"invisible\"")]
        );
        assert_eq!(
            samples(prim(&text, "Cloth_0", "Topology_1"), "token visibility"),
            [(0, "\"invisible\""), (1, "\"inherited\"")]
        );
    }

    /// A mesh collider is written as a `Mesh` prim of its own triangles, in its own frame,
    /// placed by its translation and orientation.
    #[test]
    fn a_mesh_collider_is_a_mesh_prim_of_its_triangles() {
        let ball = icosphere(Vec3::ZERO, 0.25, 1).build().unwrap();
        let shape = crate::sim::collision::MeshShape::new(&ball.positions, &ball.triangles).unwrap();
        let mesh = Collider::Mesh {
            file: "ball.obj".into(),
            scale: 1.0,
            position: Vec3::new(0.3, 0.5, -0.2),
            rotation_degrees: Vec3::new(0.0, 90.0, 0.0),
            motion: None,
            shape: crate::sim::collision::LoadedShape(Some(std::sync::Arc::new(shape))),
        };
        let mut cloth = scene(vec![sheet(0.0, 3, 3)], Vec::new()).build().unwrap();
        cloth.set_colliders(vec![mesh]).unwrap();
        let mut animation = UsdAnimation::new(60.0);
        animation.add_frame(&cloth);
        let text = written(&animation);
        assert!(text.contains("def Mesh \"MeshCollider_0\""), "{text}");
        let prim = prim(&text, "Collider_0", "MeshCollider_0");
        let counts = constant(prim, "int[] faceVertexCounts").unwrap();
        assert_eq!(counts.matches('3').count(), ball.triangles.len());
        assert_eq!(constant(prim, "float3 xformOp:translate"), Some("(0.3, 0.5, -0.2)"));
        assert!(constant(prim, "quatf xformOp:orient").is_some());
    }

    #[test]
    fn a_collider_replaced_by_another_kind_starts_a_new_prim() {
        let ball = Collider::Sphere {
            center: Vec3::new(0.0, 0.5, 0.0),
            radius: 0.25,
            motion: None,
        };
        let cube = Collider::Box {
            center: Vec3::new(0.0, 0.5, 0.0),
            half_extents: Vec3::splat(0.25),
            rotation_degrees: Vec3::ZERO,
            motion: None,
        };
        let preset = scene(vec![sheet(0.0, 3, 3)], vec![ball]);
        let mut cloth = preset.build().unwrap();
        let mut animation = UsdAnimation::new(60.0);
        animation.add_frame(&cloth);
        cloth.set_colliders(vec![cube]).unwrap();
        animation.add_frame(&cloth);
        cloth.set_colliders(Vec::new()).unwrap();
        animation.add_frame(&cloth);
        let text = written(&animation);
        let sphere = prim(&text, "Collider_0", "Sphere_0");
        assert_eq!(samples(sphere, "token visibility"), [(0, "\"inherited\""), (1, "\"invisible\"")]);
        let cube = prim(&text, "Collider_0", "Box_1");
        assert!(cube.starts_with(" \"Box_1\"") && text.contains("def Cube \"Box_1\""));
        assert_eq!(
            samples(cube, "token visibility"),
            [(0, "\"invisible\""), (1, "\"inherited\""), (2, "\"invisible\"")]
        );
        assert_eq!(constant(cube, "float3 xformOp:scale"), Some("(0.25, 0.25, 0.25)"));
    }

    #[test]
    fn a_moving_collider_is_sampled_and_a_still_one_written_once() {
        let sphere = Collider::Sphere {
            center: Vec3::new(0.0, 0.5, 0.0),
            radius: 0.25,
            motion: Some(Motion::Linear {
                velocity: Vec3::new(1.0, 0.0, 0.0),
                duration: 10.0,
            }),
        };
        let preset = scene(vec![sheet(0.0, 3, 3)], vec![Collider::Ground { height: 0.0, motion: None }, sphere]);
        let mut cloth = preset.build().unwrap();
        let mut animation = UsdAnimation::new(60.0);
        let mut centres = Vec::new();
        for _ in 0..3 {
            centres.push(vec![cloth.colliders()[1].position().to_array().to_vec()]);
            animation.add_frame(&cloth);
            cloth.step(&preset.solver, &preset.material).unwrap();
        }
        let text = written(&animation);
        let ball = prim(&text, "Collider_1", "Sphere_0");
        let translate = samples(ball, "float3 xformOp:translate");
        assert_eq!(translate.iter().map(|s| tuples(s.1)).collect::<Vec<_>>(), centres);
        assert_ne!(centres[0], centres[2], "the ball moved");
        assert_eq!(constant(ball, "double radius"), Some("0.25"));
        assert_eq!(constant(ball, "uniform token[] xformOpOrder"), Some("[\"xformOp:translate\"]"));
        let ground = prim(&text, "Collider_0", "Ground_0");
        assert_eq!(constant(ground, "float3 xformOp:translate"), Some("(0, 0, 0)"));
    }

    #[test]
    fn texture_coordinates_are_one_per_corner_and_absent_without() {
        let preset = scene(vec![sheet(0.0, 3, 4)], Vec::new());
        let cloth = preset.build().unwrap();
        let mut animation = UsdAnimation::new(60.0);
        animation.add_frame(&cloth);
        let text = written(&animation);
        let st = constant(prim(&text, "Cloth_0", "Topology_0"), "texCoord2f[] primvars:st").unwrap();
        let st = tuples(st.strip_suffix(" (").expect("the interpolation follows"));
        let corners: Vec<Vec<f32>> = cloth.model().corner_uvs.iter().flatten().map(|uv| uv.to_array().to_vec()).collect();
        assert_eq!(corners.len(), 3 * cloth.triangles().len());
        assert_eq!(st, corners);

        let ball = icosphere(Vec3::ZERO, 0.5, 1).build().unwrap();
        let cloth = Cloth::new(ball, &Material::default(), Vec::new()).unwrap();
        let mut animation = UsdAnimation::new(60.0);
        animation.add_frame(&cloth);
        let text = written(&animation);
        assert!(
            constant(prim(&text, "Cloth_0", "Topology_0"), "float3[] extent").is_none(),
            "sampled, not constant"
        );
        assert!(!text.contains("primvars:st"));
    }
}
