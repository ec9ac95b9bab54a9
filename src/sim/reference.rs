//! The straightforward solver: the XPBD substep loop of docs/physics.md §1 written as plainly
//! as it reads, for distance constraints only. Particles are an array of structs, constraints
//! are projected one after another (plain Gauss–Seidel) in model order grouped by edge kind,
//! then direction (as in Ten Minute Physics), with no batching, no SIMD and no threads.
//!
//! It is the engine's oracle: [`super::Cloth`] sweeps the constraints in this same order,
//! batched, and evaluates the same operations in the same order (true square root and
//! division, no fused multiply–add, the same compensated sums), so on a grid of distance
//! constraints (the tmp15 workload) the engine reproduces it bit for bit, on any kernel and
//! thread count (`engine_reproduces_the_straightforward_loop_bit_for_bit` in `solver.rs`).
//! It is also the baseline of `drape bench --solver reference`. Read it first: the rest of the
//! engine is this loop made fast.

use glam::Vec3;

use super::constraints::distance::MIN_LENGTH;
use super::particles::{two_sum, COMPENSATED_BELOW_SUBSTEP};
use super::{Material, Model, SolverParams};

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
                compliance: material.distance_compliance(c),
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
