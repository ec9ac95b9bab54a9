//! Headless commands shared by the CLI, the tests and the benches: run a scene for N frames,
//! benchmark the tmp15 workload, and export a mesh as Wavefront OBJ.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use glam::Vec3;
use serde::Serialize;

pub use crate::sim::ReferenceSolver;
use crate::sim::{available_cores, tmp15_model, Cloth, Material, SimError, SolverParams, TexturedVertices};

/// Writes the cloth's current surface as OBJ: `v` positions (m), `vt` rest-shape texture
/// coordinates, `vn` smooth normals and `f v/vt/vn` faces. Split (torn) vertices are written
/// as separate vertices; each keeps the texture coordinates of its rest shape, so a torn
/// cloth can be laid back out flat from the file.
///
/// The `vt` lines are the model's texture coordinates ([`crate::sim::Model::corner_uvs`]) in
/// [`TexturedVertices`] order: `vt` k belongs to `v` k, and a vertex on a texture seam gets
/// one further `vt` line per extra coordinate, after them. A grid's are (column / (columns −
/// 1), row / (rows − 1)); an object without any that is joined to objects with them has
/// (0, 0). A model without any texture coordinates (an icosphere, a hand-built model, an OBJ
/// without `vt`) gets its rest positions instead, `vt x y z` in m, one per vertex: the three
/// numbers OBJ allows a `vt`, which other tools read as (u, v) and a depth.
pub fn write_obj(cloth: &Cloth, out: &mut impl Write) -> std::io::Result<()> {
    let mut normals = Vec::new();
    cloth.vertex_normals(&mut normals);
    let model = cloth.model();
    let textured =
        (!model.corner_uvs.is_empty()).then(|| TexturedVertices::new(cloth.particles().len(), cloth.triangles(), &model.corner_uvs));
    writeln!(
        out,
        "# drape cloth: {} vertices, {} triangles; vt: rest-shape texture coordinates{}",
        cloth.particles().len(),
        cloth.triangles().len(),
        if textured.is_some() { "" } else { " (rest positions in m)" }
    )?;
    for p in cloth.particles().positions() {
        writeln!(out, "v {} {} {}", p.x, p.y, p.z)?;
    }
    match &textured {
        Some(vertices) => vertices.uv.iter().try_for_each(|uv| writeln!(out, "vt {} {}", uv.x, uv.y))?,
        None => model
            .positions
            .iter()
            .try_for_each(|p| writeln!(out, "vt {} {} {}", p.x, p.y, p.z))?,
    }
    for n in &normals {
        writeln!(out, "vn {} {} {}", n.x, n.y, n.z)?;
    }
    for (t, triangle) in cloth.triangles().iter().enumerate() {
        let texture = textured.as_ref().map_or(*triangle, |vertices| vertices.triangles[t]);
        let corner = |k: usize| format!("{}/{}/{}", triangle[k] + 1, texture[k] + 1, triangle[k] + 1);
        writeln!(out, "f {} {} {}", corner(0), corner(1), corner(2))?;
    }
    Ok(())
}

/// Writes the OBJ to `path` crash-safely ([`crate::safe_write`]); every I/O error is
/// returned.
pub fn save_obj(cloth: &Cloth, path: &Path) -> std::io::Result<()> {
    crate::safe_write::write_atomically(path, |mut out| write_obj(cloth, &mut out))
}

/// The one-line summary `drape simulate` prints.
#[derive(Debug, Clone, Serialize)]
pub struct SimulateSummary {
    /// Frames run.
    pub frames: u32,
    /// Particles at the end.
    pub particles: usize,
    /// Live constraints at the end.
    pub constraints: usize,
    /// Triangles at the end.
    pub triangles: usize,
    /// Largest stretch-edge strain at the end.
    pub max_strain: f32,
    /// Edges torn or cut during the run.
    pub torn_edges: usize,
    /// Connected pieces at the end.
    pub pieces: usize,
    /// Kinetic energy at the end (J).
    pub kinetic_energy: f64,
    /// Mean wall time per frame (ms).
    pub ms_per_frame: f64,
    /// Height (y) of the lowest particle at the end (m).
    pub min_y: f32,
    /// Self-contacts touching in the last frame (0 while self-collision is off).
    pub self_contacts: usize,
    /// Mean wall time per frame spent on self-contacts (ms; part of `ms_per_frame`).
    pub self_contact_ms: f64,
    /// Solver threads used: `threads_requested` (or the automatic choice for 0), at most
    /// `cores` ([`Cloth::threads_used`]).
    pub threads: u32,
    /// Threads asked for (the preset's `threads` or `--threads`; 0 = automatic).
    pub threads_requested: u32,
    /// The machine's cores, which cap the threads ([`crate::sim::available_cores`]).
    pub cores: usize,
    /// [`crate::replay::state_hash`] at the end, 16 hex digits: equal runs print equal hashes.
    pub state_hash: String,
    /// The deepest any particle sits inside any collider at the end, in m
    /// ([`collider_penetration`]).
    pub collider_penetration: f32,
    /// The largest distance between two sewn particles at the end, in m; 0 without seams
    /// ([`Cloth::seam_gap`]).
    pub seam_gap: f32,
}

/// Runs `frames` frames of `cloth` and summarises the end state.
pub fn simulate(cloth: &mut Cloth, params: &SolverParams, material: &Material, frames: u32) -> Result<SimulateSummary, SimError> {
    let started = Instant::now();
    let mut self_contact_ms = 0.0;
    for _ in 0..frames {
        self_contact_ms += cloth.step(params, material)?.phases.self_contacts_ms;
    }
    let elapsed = started.elapsed().as_secs_f64() * 1e3;
    let per_frame = |ms: f64| if frames > 0 { ms / frames as f64 } else { 0.0 };
    let stats = cloth.stats();
    Ok(SimulateSummary {
        frames,
        particles: cloth.particles().len(),
        constraints: cloth.constraint_count(),
        triangles: cloth.triangles().len(),
        max_strain: stats.max_strain,
        torn_edges: cloth.torn_edges(),
        pieces: cloth.piece_count(),
        kinetic_energy: stats.kinetic_energy,
        ms_per_frame: per_frame(elapsed),
        min_y: lowest_height(cloth),
        self_contacts: stats.self_contacts,
        self_contact_ms: per_frame(self_contact_ms),
        threads: cloth.threads_used(params),
        threads_requested: params.threads,
        cores: available_cores(),
        state_hash: crate::replay::state_hash_text(cloth),
        collider_penetration: collider_penetration(cloth),
        seam_gap: cloth.seam_gap(),
    })
}

/// The deepest any particle sits below the surface of any collider, in m (0 when none is
/// inside; the collision thickness is not counted, and an open mesh, a shell with no inside,
/// never is).
pub fn collider_penetration(cloth: &Cloth) -> f32 {
    let colliders = cloth.colliders();
    cloth
        .particles()
        .positions()
        .flat_map(|p| colliders.iter().map(move |c| -c.surface(p).distance))
        .fold(0.0, f32::max)
}

/// Height (y) of the lowest particle in m (+∞ for no particles).
pub fn lowest_height(cloth: &Cloth) -> f32 {
    cloth.particles().positions().map(|p| p.y).fold(f32::INFINITY, f32::min)
}

/// How long a benchmark runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BenchLength {
    /// Warm up, then time whole frames for at least this long.
    Seconds(f64),
    /// Exactly this many frames from the initial state, no warm-up.
    Frames(u32),
}

/// The one-line JSON `drape bench` prints. Keys are a contract: extend, don't rename.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// Workload name (`tmp15` or `preset`).
    pub workload: String,
    /// Grid resolution (particles per side).
    pub grid: u32,
    /// Particles.
    pub particles: usize,
    /// Constraints projected per sweep.
    pub constraints: usize,
    /// Substeps per frame.
    pub substeps: u32,
    /// Iterations per substep.
    pub iterations: u32,
    /// Worker threads used: `threads_requested` (or the automatic choice for 0), at most
    /// `cores` ([`Cloth::threads_used`]).
    pub threads: u32,
    /// Threads asked for (`--threads`; 0 = automatic).
    pub threads_requested: u32,
    /// The machine's cores, which cap the threads ([`crate::sim::available_cores`]).
    pub cores: usize,
    /// Frames timed.
    pub steps: u64,
    /// Wall time of the timed frames (s).
    pub seconds: f64,
    /// Frames per second.
    pub steps_per_s: f64,
    /// Constraint projections per second: constraints × substeps × iterations × steps / seconds.
    pub proj_per_s: f64,
    /// Lowest particle height at the end (m).
    pub ymin: f32,
    /// Which solver ran: `colour` (the engine) or `reference` (the straightforward loop).
    pub solver: String,
    /// The distance sweep's order: `grid` (the straightforward loop's, for a mesh numbered
    /// row by row) or `colours` (any other numbering, e.g. `--shuffle`).
    pub sweep: String,
}

/// Solver parameters of the tmp15 workload: Δt = 1/60, gravity −10, no damping, no clamp,
/// no self-collision.
pub fn tmp15_params(substeps: u32, iterations: u32, threads: u32) -> SolverParams {
    SolverParams {
        dt: 1.0 / 60.0,
        substeps,
        iterations,
        gravity: Vec3::new(0.0, -10.0, 0.0),
        constraint_damping: 0.0,
        air_damping: 0.0,
        max_speed: 0.0,
        // The workload is TMP's cloth without collisions, defined exactly so its figures
        // compare across solvers and builds (the reference loop has no self-contacts).
        self_collision: false,
        threads,
        ..SolverParams::default()
    }
}

/// The tmp15 workload's material: its compliances are fixed by the model, and it has no
/// tethers and no stretch damping (the workload is defined exactly, so figures compare across
/// solvers).
pub fn tmp15_material() -> Material {
    Material {
        tethers: false,
        stretch_damping_time: 0.0,
        ..Material::default()
    }
}

/// Builds the tmp15 cloth for an n × n grid.
pub fn tmp15_cloth(n: u32) -> Result<Cloth, SimError> {
    Cloth::new(tmp15_model(n)?, &tmp15_material(), Vec::new())
}

/// Benchmarks `cloth` under `params`.
pub fn bench(
    workload: &str,
    grid: u32,
    cloth: &mut Cloth,
    params: &SolverParams,
    material: &Material,
    length: BenchLength,
) -> Result<BenchReport, SimError> {
    let (frames, seconds) = time_frames(length, || cloth.step(params, material).map(|_| ()))?;
    let constraints = cloth.constraint_count();
    let projections = constraints as f64 * params.substeps as f64 * params.iterations as f64 * frames as f64;
    Ok(BenchReport {
        workload: workload.into(),
        grid,
        particles: cloth.particles().len(),
        constraints,
        substeps: params.substeps,
        iterations: params.iterations,
        threads: cloth.threads_used(params),
        threads_requested: params.threads,
        cores: available_cores(),
        steps: frames,
        seconds,
        steps_per_s: frames as f64 / seconds,
        proj_per_s: projections / seconds,
        ymin: lowest_height(cloth),
        solver: "colour".into(),
        sweep: if cloth.coloured_sweep() { "colours" } else { "grid" }.into(),
    })
}

/// Runs `frame` for `length` (warm-up included for [`BenchLength::Seconds`]); returns the
/// timed frames and seconds.
fn time_frames(length: BenchLength, mut frame: impl FnMut() -> Result<(), SimError>) -> Result<(u64, f64), SimError> {
    let (frames, elapsed) = match length {
        BenchLength::Frames(frames) => {
            let started = Instant::now();
            for _ in 0..frames {
                frame()?;
            }
            (frames as u64, started.elapsed())
        }
        BenchLength::Seconds(seconds) => {
            let warm_up = Instant::now();
            while warm_up.elapsed() < Duration::from_secs_f64((seconds * 0.1).min(0.5)) {
                frame()?;
            }
            let started = Instant::now();
            let mut frames = 0u64;
            while started.elapsed().as_secs_f64() < seconds {
                frame()?;
                frames += 1;
            }
            (frames, started.elapsed())
        }
    };
    Ok((frames, elapsed.as_secs_f64().max(1e-9)))
}

/// Benchmarks the [`ReferenceSolver`] on the tmp15 workload; the report has the same keys as
/// [`bench()`] with `solver: "reference"` and `threads: 1` (whatever `threads_requested`).
pub fn bench_reference(grid: u32, params: &SolverParams, length: BenchLength) -> Result<BenchReport, SimError> {
    params.validate()?;
    let model = tmp15_model(grid)?;
    let mut solver = ReferenceSolver::new(&model, &tmp15_material());
    let (frames, seconds) = time_frames(length, || {
        solver.step(params);
        Ok(())
    })?;
    let constraints = solver.constraint_count();
    let projections = constraints as f64 * params.substeps as f64 * params.iterations as f64 * frames as f64;
    Ok(BenchReport {
        workload: "tmp15".into(),
        grid,
        particles: model.particle_count(),
        constraints,
        substeps: params.substeps,
        iterations: params.iterations,
        threads: 1,
        threads_requested: params.threads,
        cores: available_cores(),
        steps: frames,
        seconds,
        steps_per_s: frames as f64 / seconds,
        proj_per_s: projections / seconds,
        ymin: solver.ymin(),
        solver: "reference".into(),
        sweep: "grid".into(),
    })
}
