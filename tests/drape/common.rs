//! Helpers shared by the test modules: validation solver settings, shipped presets, small
//! hand-built models, state snapshots and the OBJ files Drape writes.

use std::path::{Path, PathBuf};

use drape::preset::Preset;
use drape::sim::{Cloth, Collider, Compliance, EdgeKind, Material, ModelBuilder, SolverParams};
use glam::{DQuat, DVec3, Vec3};

/// The grid of a preset whose scene is one grid (every version-1 preset).
pub fn grid_of(preset: &Preset) -> drape::sim::GridSpec {
    preset.single_grid().expect("a one-grid preset")
}

/// Gravitational acceleration used by every validation scenario (docs/physics.md §10), m/s².
pub const G: f32 = 9.81;

/// Solver settings under which only the physics under test acts: g = 9.81 m/s² straight
/// down, no air damping, no speed clamp, no constraint damping, no self-collision.
pub fn validation_params(dt: f32, substeps: u32, iterations: u32) -> SolverParams {
    SolverParams {
        dt,
        substeps,
        iterations,
        gravity: Vec3::new(0.0, -G, 0.0),
        constraint_damping: 0.0,
        air_damping: 0.0,
        max_speed: 0.0,
        // Its velocity clamp (0.2 · thickness / h) would cap the closed-form motions under test.
        self_collision: false,
        ..SolverParams::default()
    }
}

/// The shipped presets' directory.
pub fn presets_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("presets")
}

/// Every `*.ron` file in `presets/`, sorted.
pub fn shipped_presets() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(presets_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    files.sort();
    files
}

/// A shipped preset run with its shipped settings ([`shipped_run`]).
pub struct ShippedRun {
    pub path: PathBuf,
    pub preset: Preset,
    /// The cloth after [`Self::frames`] frames.
    pub cloth: Cloth,
    pub frames: u32,
    /// The first of the first [`SHIPPED_CHECKED_FRAMES`] frames whose statistics were not
    /// finite, as "frame N: stats", if any.
    pub bad_stats: Option<String>,
    /// After frame [`SHIPPED_CHECKED_FRAMES`]: whether every position and velocity was
    /// finite, and the lowest particle's height (m).
    pub finite_when_checked: bool,
    pub lowest_when_checked: f32,
}

/// Frames whose statistics a [`ShippedRun`] checks (presets.rs: every preset runs 120 frames).
pub const SHIPPED_CHECKED_FRAMES: u32 = 120;
/// The frame count of the tests that run a shipped preset as shipped to its end state.
pub const SHIPPED_FRAMES: u32 = 600;

impl ShippedRun {
    fn new(name: &str) -> Self {
        let path = presets_dir().join(format!("{name}.ron"));
        let preset = Preset::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let cloth = preset.build().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        ShippedRun {
            path,
            preset,
            cloth,
            frames: 0,
            bad_stats: None,
            finite_when_checked: false,
            lowest_when_checked: f32::NAN,
        }
    }

    fn advance_to(&mut self, frames: u32) {
        while self.frames < frames {
            let stats = self
                .cloth
                .step(&self.preset.solver, &self.preset.material)
                .unwrap_or_else(|e| panic!("{} frame {}: {e}", self.path.display(), self.frames));
            let finite = stats.kinetic_energy.is_finite() && stats.max_strain.is_finite() && stats.max_tension.is_finite();
            if !finite && self.bad_stats.is_none() && self.frames < SHIPPED_CHECKED_FRAMES {
                self.bad_stats = Some(format!("frame {}: {stats:?}", self.frames));
            }
            self.frames += 1;
            if self.frames == SHIPPED_CHECKED_FRAMES {
                self.finite_when_checked = all_finite(&self.cloth);
                self.lowest_when_checked = self.cloth.particles().positions().map(|p| p.y).fold(f32::INFINITY, f32::min);
            }
        }
    }
}

/// The shipped preset `presets/{name}.ron` run with its shipped settings (`preset.build()`,
/// then `step(&preset.solver, &preset.material)`, as [`run`] does) for `frames` frames —
/// [`SHIPPED_CHECKED_FRAMES`] or [`SHIPPED_FRAMES`] — handed to `read`. Each preset is
/// simulated once per test binary, as far as the furthest frame asked for, and shared by the
/// tests that run it as shipped (presets.rs, self_collision.rs, tearing.rs, scenes.rs), so
/// 600 frames of a preset are not simulated again by every test that needs them. A run
/// asked for 120 frames may already be further on: read only the checks of its first 120
/// then. A step that fails panics in the test that ran it and in every later one.
pub fn shipped_run<R>(name: &str, frames: u32, read: impl FnOnce(&ShippedRun) -> R) -> R {
    type Slot = std::sync::Arc<std::sync::Mutex<Option<ShippedRun>>>;
    static SLOTS: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<String, Slot>>> = std::sync::OnceLock::new();
    assert!(frames == SHIPPED_CHECKED_FRAMES || frames == SHIPPED_FRAMES, "{frames} frames");
    let slot = SLOTS
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(name.to_owned())
        .or_default()
        .clone();
    let mut run = slot
        .lock()
        .unwrap_or_else(|_| panic!("{name}: an earlier test's run of this preset failed"));
    let run = run.get_or_insert_with(|| ShippedRun::new(name));
    run.advance_to(frames);
    read(run)
}

/// The file stems of [`shipped_presets`].
pub fn shipped_preset_names() -> Vec<String> {
    shipped_presets()
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// The shipped preset `presets/{name}.ron`.
pub fn load_preset(name: &str) -> Preset {
    let path = presets_dir().join(format!("{name}.ron"));
    Preset::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// The default material with tethers off, for scenarios that measure elastic extension under
/// pins: tethers are an inextensibility limit and would cap the extension under test.
pub fn untethered() -> Material {
    Material {
        tethers: false,
        ..Material::default()
    }
}

/// A two-particle pendulum: a pinned anchor at `anchor` and a free particle of `mass` kg at
/// `anchor + offset`, joined by one distance constraint (id 0) of rest length |offset| and
/// fixed compliance `alpha` (m/N), built with `material` (whose scale and multipliers are 1 in
/// the default material, so `alpha` is then used unchanged).
pub fn pendulum(anchor: Vec3, offset: Vec3, mass: f32, alpha: f32, material: &Material) -> Cloth {
    let mut b = ModelBuilder::new();
    let a = b.add_particle(anchor, 0.0);
    b.set_pinned(a, true);
    let p = b.add_particle(anchor + offset, mass);
    b.add_distance(a, p, EdgeKind::Stretch, Compliance::Fixed(alpha));
    Cloth::new(b.build().expect("valid pendulum"), material, Vec::new()).expect("valid cloth")
}

/// One free 1 kg particle at `position` among `colliders`, with the default material.
pub fn single_particle(position: Vec3, colliders: Vec<Collider>) -> Cloth {
    let mut b = ModelBuilder::new();
    b.add_particle(position, 1.0);
    Cloth::new(b.build().expect("valid particle"), &Material::default(), colliders).expect("valid cloth")
}

/// Exact signed distance (m, negative inside) of `x` to `collider`, in f64 from the shape's
/// definition, independent of the engine's own (f32) distance functions.
pub fn signed_distance(collider: &Collider, x: DVec3) -> f64 {
    match collider {
        Collider::Ground { height, .. } => x.y - *height as f64,
        Collider::Sphere { center, radius, .. } => (x - center.as_dvec3()).length() - *radius as f64,
        Collider::Capsule { a, b, radius, .. } => {
            let (a, b) = (a.as_dvec3(), b.as_dvec3());
            let t = ((x - a).dot(b - a) / (b - a).length_squared()).clamp(0.0, 1.0);
            (x - (a + t * (b - a))).length() - *radius as f64
        }
        Collider::Box {
            center,
            half_extents,
            rotation_degrees,
            ..
        } => {
            let r = rotation_degrees.as_dvec3() * (std::f64::consts::PI / 180.0);
            let rotation = DQuat::from_euler(glam::EulerRot::XYZ, r.x, r.y, r.z);
            let local = rotation.inverse() * (x - center.as_dvec3());
            let q = local.abs() - half_extents.as_dvec3();
            q.max(DVec3::ZERO).length() + q.max_element().min(0.0)
        }
        // A mesh has no closed form: the engine's distance, checked against every triangle in
        // its unit tests.
        Collider::Mesh { .. } => f64::from(collider.surface(x.as_vec3()).distance),
    }
}

/// Everything observable about the particle state, for "nothing changed" assertions.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub positions: Vec<Vec3>,
    pub velocities: Vec<Vec3>,
    pub inverse_masses: Vec<f32>,
    pub pinned: usize,
    pub constraints: usize,
    pub topology_version: u64,
}

pub fn snapshot(cloth: &Cloth) -> Snapshot {
    let p = cloth.particles();
    Snapshot {
        positions: p.positions().collect(),
        velocities: (0..p.len()).map(|i| p.velocity(i)).collect(),
        inverse_masses: (0..p.len()).map(|i| p.inverse_mass(i)).collect(),
        pinned: cloth.pinned_count(),
        constraints: cloth.constraint_count(),
        topology_version: cloth.topology_version(),
    }
}

/// True when every position and velocity is finite.
pub fn all_finite(cloth: &Cloth) -> bool {
    let p = cloth.particles();
    (0..p.len()).all(|i| p.position(i).is_finite() && p.velocity(i).is_finite())
}

/// Runs `frames` steps, panicking on a rejected step.
pub fn run(cloth: &mut Cloth, params: &SolverParams, material: &Material, frames: u32) {
    for _ in 0..frames {
        cloth.step(params, material).expect("valid step");
    }
}

/// Asserts |actual − expected| ≤ tol with a readable message.
#[track_caller]
pub fn assert_close(what: &str, actual: f64, expected: f64, tol: f64) {
    assert!(
        (actual - expected).abs() <= tol,
        "{what}: measured {actual:.9e}, expected {expected:.9e} (±{tol:.3e}, off by {:.3e})",
        (actual - expected).abs()
    );
}

/// Whether segment p–q crosses triangle `t` (Möller–Trumbore, both ends included).
fn segment_hits_triangle(p: DVec3, q: DVec3, [a, b, c]: [DVec3; 3]) -> bool {
    let (e1, e2, d) = (b - a, c - a, q - p);
    let h = d.cross(e2);
    let det = e1.dot(h);
    if det.abs() < 1e-18 {
        return false; // parallel to the plane (coplanar overlaps are not counted)
    }
    let s = p - a;
    let u = s.dot(h) / det;
    let k = s.cross(e1);
    let v = d.dot(k) / det;
    let t = e2.dot(k) / det;
    (0.0..=1.0).contains(&u) && v >= 0.0 && u + v <= 1.0 && (0.0..=1.0).contains(&t)
}

/// Whether triangles `x` and `y` intersect: two triangles in general position intersect
/// exactly when an edge of one crosses the other.
pub fn triangles_intersect(x: [DVec3; 3], y: [DVec3; 3]) -> bool {
    let crosses = |s: [DVec3; 3], t: [DVec3; 3]| (0..3).any(|k| segment_hits_triangle(s[k], s[(k + 1) % 3], t));
    crosses(x, y) || crosses(y, x)
}

/// `preset`'s scene after `frames` frames on exactly `threads` threads (16 cores assumed, so a
/// small machine runs the same parts), asserting every frame ran on that many. Release only,
/// as the tests that use it (a debug build takes minutes).
#[cfg(not(debug_assertions))]
pub fn run_on_threads(preset: &Preset, threads: u32, frames: u32) -> Cloth {
    let mut cloth = preset.build().unwrap();
    assert!(cloth.particles().len() > 4096, "too small a cloth to split between threads");
    let params = SolverParams {
        threads,
        ..preset.solver.clone()
    };
    drape::sim::with_assumed_cores(16, || {
        for _ in 0..frames {
            let stats = cloth.step(&params, &preset.material).unwrap();
            assert_eq!(stats.threads, threads);
        }
    });
    cloth
}

/// Every particle's position, bit for bit.
#[cfg(not(debug_assertions))]
pub fn position_bits(cloth: &Cloth) -> Vec<[u32; 3]> {
    cloth.particles().positions().map(|p| p.to_array().map(f32::to_bits)).collect()
}

/// Pairs of triangles of `cloth` that share no vertex and intersect (sweep and prune along x
/// over their bounding boxes, then the exact test). The two particles of a live stitch count
/// as one vertex (as self-contact skips them): a shut seam leaves them a solver residual apart
/// (about 10 µm), where the triangles either side of it meet as if they shared the vertex.
pub fn intersecting_pairs(cloth: &Cloth) -> usize {
    let p = cloth.particles();
    let vertex = sewn_vertices(cloth);
    let tris: Vec<([u32; 3], [DVec3; 3])> = cloth
        .triangles()
        .iter()
        .map(|&t| (t, t.map(|i| p.position(i as usize).as_dvec3())))
        .collect();
    let boxes: Vec<(DVec3, DVec3)> = tris
        .iter()
        .map(|(_, v)| (v[0].min(v[1]).min(v[2]), v[0].max(v[1]).max(v[2])))
        .collect();
    let mut order: Vec<usize> = (0..tris.len()).collect();
    order.sort_by(|&i, &j| boxes[i].0.x.total_cmp(&boxes[j].0.x));
    let mut count = 0;
    for (k, &i) in order.iter().enumerate() {
        for &j in &order[k + 1..] {
            if boxes[j].0.x > boxes[i].1.x {
                break;
            }
            let overlap = boxes[i].0.cmple(boxes[j].1).all() && boxes[j].0.cmple(boxes[i].1).all();
            let shared = tris[i]
                .0
                .iter()
                .any(|&v| tris[j].0.iter().any(|&w| vertex[v as usize] == vertex[w as usize]));
            if overlap && !shared && triangles_intersect(tris[i].1, tris[j].1) {
                count += 1;
            }
        }
    }
    count
}

/// For every particle, one particle standing for it and every particle sewn to it through
/// live stitches ([`Cloth::live_stitches`]); itself where it is not sewn.
pub fn sewn_vertices(cloth: &Cloth) -> Vec<u32> {
    fn root(parent: &mut [u32], mut i: u32) -> u32 {
        while parent[i as usize] != i {
            parent[i as usize] = parent[parent[i as usize] as usize];
            i = parent[i as usize];
        }
        i
    }
    let mut parent: Vec<u32> = (0..cloth.particles().len() as u32).collect();
    for [a, b] in cloth.live_stitches() {
        let (a, b) = (root(&mut parent, a), root(&mut parent, b));
        parent[a.max(b) as usize] = a.min(b);
    }
    (0..parent.len() as u32).map(|i| root(&mut parent, i)).collect()
}

/// One corner of an OBJ face: its `v`, `vt` and `vn` lines, 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjCorner {
    pub v: usize,
    pub vt: usize,
    pub vn: usize,
}

/// A Wavefront OBJ as Drape writes it (`v`, `vt`, `vn`, triangles of `v/vt/vn` corners),
/// parsed strictly: any other statement, a number that does not parse, a corner of another
/// form or naming a missing line panics.
#[derive(Debug, Clone, Default)]
pub struct ObjFile {
    /// `v` lines (m).
    pub positions: Vec<Vec3>,
    /// `vt` lines: (u, v), or three numbers where the model had no texture coordinates.
    pub texcoords: Vec<Vec<f32>>,
    /// `vn` lines.
    pub normals: Vec<Vec3>,
    /// `f` lines, three corners each.
    pub faces: Vec<[ObjCorner; 3]>,
}

impl ObjFile {
    pub fn parse(text: &str) -> Self {
        let mut obj = ObjFile::default();
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let Some((&keyword, rest)) = words.split_first() else {
                continue;
            };
            let numbers = || -> Vec<f32> { rest.iter().map(|w| w.parse().unwrap_or_else(|e| panic!("{e}: {line}"))).collect() };
            match keyword {
                "v" | "vn" => {
                    let numbers = numbers();
                    assert_eq!(numbers.len(), 3, "{line}");
                    let point = Vec3::from_slice(&numbers);
                    if keyword == "v" {
                        obj.positions.push(point);
                    } else {
                        obj.normals.push(point);
                    }
                }
                "vt" => obj.texcoords.push(numbers()),
                "f" => {
                    let corner = |word: &str| {
                        let fields: Vec<usize> = word
                            .split('/')
                            .map(|f| f.parse().unwrap_or_else(|e| panic!("{e}: {line}")))
                            .collect();
                        assert!(fields.len() == 3 && !fields.contains(&0), "corner {word} is not v/vt/vn: {line}");
                        ObjCorner {
                            v: fields[0] - 1,
                            vt: fields[1] - 1,
                            vn: fields[2] - 1,
                        }
                    };
                    assert_eq!(rest.len(), 3, "not a triangle: {line}");
                    obj.faces.push([corner(rest[0]), corner(rest[1]), corner(rest[2])]);
                }
                comment if comment.starts_with('#') => {}
                other => panic!("unexpected OBJ statement {other}: {line}"),
            }
        }
        for corner in obj.faces.iter().flatten() {
            let exists = corner.v < obj.positions.len() && corner.vt < obj.texcoords.len() && corner.vn < obj.normals.len();
            assert!(exists, "{corner:?} names a line the file does not have");
        }
        obj
    }

    pub fn read(path: &Path) -> Self {
        Self::parse(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
    }

    /// The piece of each face, numbered 0, 1, … in order of first face: faces are in one piece
    /// when joined through shared `v` vertices (a torn cloth's split vertices are separate `v`
    /// lines, so a crack separates).
    pub fn face_pieces(&self) -> Vec<usize> {
        let mut parent: Vec<usize> = (0..self.positions.len()).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        for face in &self.faces {
            for corner in &face[1..] {
                let (a, b) = (root(&mut parent, face[0].v), root(&mut parent, corner.v));
                parent[a] = b;
            }
        }
        let mut numbers = std::collections::HashMap::new();
        self.faces
            .iter()
            .map(|face| {
                let next = numbers.len();
                *numbers.entry(root(&mut parent, face[0].v)).or_insert(next)
            })
            .collect()
    }

    /// Connected pieces ([`Self::face_pieces`]).
    pub fn pieces(&self) -> usize {
        self.face_pieces().iter().max().map_or(0, |&last| last + 1)
    }
}
