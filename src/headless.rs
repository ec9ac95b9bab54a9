//! Headless commands shared by the CLI, the tests and the benches: run a scene for N frames,
//! benchmark the tmp15 workload, and export a mesh as Wavefront OBJ.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use glam::Vec3;
use serde::Serialize;

use crate::sim::cloth::distance_compliance;
use crate::sim::constraints::distance::MIN_LENGTH;
use crate::sim::particles::{two_sum, COMPENSATED_BELOW_SUBSTEP};
use crate::sim::{tmp15_model, Cloth, Material, Model, SimError, SolverParams};

/// Writes the cloth's current surface as OBJ: `v` positions, `vn` smooth normals and
/// `f a//a b//b c//c` faces. Split (torn) vertices are written as separate vertices.
pub fn write_obj(cloth: &Cloth, out: &mut impl Write) -> std::io::Result<()> {
    let mut normals = Vec::new();
    cloth.vertex_normals(&mut normals);
    writeln!(
        out,
        "# drape cloth: {} vertices, {} triangles",
        cloth.particles().len(),
        cloth.triangles().len()
    )?;
    for p in cloth.particles().positions() {
        writeln!(out, "v {} {} {}", p.x, p.y, p.z)?;
    }
    for n in &normals {
        writeln!(out, "vn {} {} {}", n.x, n.y, n.z)?;
    }
    for tri in cloth.triangles() {
        let [a, b, c] = tri.map(|i| i + 1);
        writeln!(out, "f {a}//{a} {b}//{b} {c}//{c}")?;
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
}

/// Runs `frames` frames of `cloth` and summarises the end state.
pub fn simulate(cloth: &mut Cloth, params: &SolverParams, material: &Material, frames: u32) -> Result<SimulateSummary, SimError> {
    let started = Instant::now();
    for _ in 0..frames {
        cloth.step(params, material)?;
    }
    let elapsed = started.elapsed().as_secs_f64() * 1e3;
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
        ms_per_frame: if frames > 0 { elapsed / frames as f64 } else { 0.0 },
        min_y: lowest_height(cloth),
    })
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
    /// Worker threads used.
    pub threads: u32,
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
}

/// Solver parameters of the tmp15 workload: Δt = 1/60, gravity −10, no damping, no clamp.
pub fn tmp15_params(substeps: u32, iterations: u32, threads: u32) -> SolverParams {
    SolverParams {
        dt: 1.0 / 60.0,
        substeps,
        iterations,
        gravity: Vec3::new(0.0, -10.0, 0.0),
        constraint_damping: 0.0,
        air_damping: 0.0,
        max_speed: 0.0,
        threads,
        ..SolverParams::default()
    }
}

/// The tmp15 workload's material: its compliances are fixed by the model, and it has no
/// tethers (the workload is defined exactly, so figures compare across solvers).
pub fn tmp15_material() -> Material {
    Material {
        tethers: false,
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
        steps: frames,
        seconds,
        steps_per_s: frames as f64 / seconds,
        proj_per_s: projections / seconds,
        ymin: lowest_height(cloth),
        solver: "colour".into(),
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

/// The straightforward solver the `bench` figures are compared against: particles as an array
/// of structs, distance constraints projected one after another (plain Gauss–Seidel, each
/// projection waiting for the previous one's stores) in model order grouped by edge kind, then
/// direction (as in Ten Minute Physics), no batching, no SIMD, no threads. Same XPBD substep
/// loop and physics as the engine on the tmp15 workload (distance constraints, gravity, no
/// damping, no collisions), written with the same operations in the same order (true square
/// root and division, no fused multiply–add), so the engine, which sweeps in this order,
/// reproduces it bit for bit.
#[derive(Debug, Clone)]
pub struct ReferenceSolver {
    particles: Vec<RefParticle>,
    constraints: Vec<RefConstraint>,
    lambda: Vec<f32>,
}

#[derive(Debug, Clone, Copy)]
struct RefParticle {
    x: Vec3,
    prev: Vec3,
    /// Compensation: the exact position is x + comp (as the engine keeps it).
    comp: Vec3,
    comp_prev: Vec3,
    v: Vec3,
    /// Inverse mass (1/kg), 0 when pinned.
    w: f32,
}

impl RefParticle {
    /// Moves the particle by `delta` (m), its rounding error kept in `comp` when
    /// `compensated` (as the engine's constraint corrections below
    /// [`COMPENSATED_BELOW_SUBSTEP`]).
    fn shift(&mut self, delta: Vec3, compensated: bool) {
        let (moved, error) = two_sum(self.x, delta);
        self.x = moved;
        if compensated {
            self.comp += error;
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct RefConstraint {
    a: usize,
    b: usize,
    rest: f32,
    /// Compliance α (m/N).
    compliance: f32,
}

impl ReferenceSolver {
    /// Builds the solver from `model` under `material` (masses and compliances as the engine
    /// derives them).
    pub fn new(model: &Model, material: &Material) -> Self {
        let particles = (0..model.particle_count())
            .map(|i| {
                let mass = model.lumped_area[i] * material.areal_density + model.point_mass[i];
                RefParticle {
                    x: model.positions[i],
                    prev: model.positions[i],
                    comp: Vec3::ZERO,
                    comp_prev: Vec3::ZERO,
                    v: Vec3::ZERO,
                    w: if model.pinned[i] || mass <= 0.0 { 0.0 } else { 1.0 / mass },
                }
            })
            .collect();
        let mut order: Vec<_> = model.distances.iter().collect();
        order.sort_by_key(|c| (c.kind as u8, c.b.abs_diff(c.a)));
        let constraints: Vec<_> = order
            .into_iter()
            .map(|c| RefConstraint {
                a: c.a as usize,
                b: c.b as usize,
                rest: c.rest,
                compliance: distance_compliance(c, material),
            })
            .collect();
        let lambda = vec![0.0; constraints.len()];
        Self {
            particles,
            constraints,
            lambda,
        }
    }

    /// Number of distance constraints.
    pub fn constraint_count(&self) -> usize {
        self.constraints.len()
    }

    /// Particle positions in m.
    pub fn positions(&self) -> impl ExactSizeIterator<Item = Vec3> + '_ {
        self.particles.iter().map(|p| p.x)
    }

    /// Lowest particle height (m).
    pub fn ymin(&self) -> f32 {
        self.particles.iter().map(|p| p.x.y).fold(f32::INFINITY, f32::min)
    }

    /// Advances one frame (gravity, substeps and iterations from `params`; damping, speed
    /// clamp and collisions are not part of the workload).
    pub fn step(&mut self, params: &SolverParams) {
        let h = params.substep_dt();
        let inv_h2 = 1.0 / (h * h);
        let compensated = h < COMPENSATED_BELOW_SUBSTEP;
        for _ in 0..params.substeps {
            for p in self.particles.iter_mut().filter(|p| p.w > 0.0) {
                p.prev = p.x;
                p.comp_prev = p.comp;
                p.v += params.gravity * h;
                // x + (comp + v h) summed exactly (TwoSum), so tiny steps add up.
                (p.x, p.comp) = two_sum(p.x, p.comp + p.v * h);
            }
            self.lambda.fill(0.0);
            for _ in 0..params.iterations {
                for (c, lambda) in self.constraints.iter().zip(self.lambda.iter_mut()) {
                    let (pa, pb) = (self.particles[c.a], self.particles[c.b]);
                    let d = pa.x - pb.x;
                    let len = (d.x * d.x + d.y * d.y + d.z * d.z).sqrt();
                    let alpha_tilde = c.compliance * inv_h2;
                    let denom = pa.w + pb.w + alpha_tilde;
                    if !(len > MIN_LENGTH && denom > 0.0) {
                        continue;
                    }
                    // Δλ = (−C − α̃λ)/denom moves x_a by w_a Δλ d/|d|: f = Δλ/|d| in one division.
                    let f = (c.rest - len - alpha_tilde * *lambda) / (denom * len);
                    *lambda += f * len;
                    self.particles[c.a].shift(pa.w * f * d, compensated);
                    self.particles[c.b].shift(-(pb.w * f * d), compensated);
                }
            }
            for p in self.particles.iter_mut().filter(|p| p.w > 0.0) {
                p.v = ((p.x - p.prev) + (p.comp - p.comp_prev)) / h;
            }
        }
    }
}

/// Benchmarks the [`ReferenceSolver`] on the tmp15 workload; the report has the same keys as
/// [`bench()`] with `solver: "reference"` and `threads: 1`.
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
        steps: frames,
        seconds,
        steps_per_s: frames as f64 / seconds,
        proj_per_s: projections / seconds,
        ymin: solver.ymin(),
        solver: "reference".into(),
    })
}
