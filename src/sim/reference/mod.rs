//! The straightforward solver: the XPBD frame of docs/physics.md §1 written as plainly as it
//! reads. Read it first: the rest of the engine is this loop made fast.
//!
//! Particles are an array of structs; constraints are projected one after another (plain
//! Gauss–Seidel, each projection seeing the previous one's result), with no batching, no SIMD,
//! no threads and no `unsafe`. One frame of Δt, in the order [`super::cloth::Cloth::step`]
//! runs it (h = Δt/S, α̃ = α/h², w = 1/m, 0 for pinned particles):
//!
//! ```text
//! once per frame:
//!     hinge damping: each compliant hinge's effective rest angle θ0' and compliance α'
//!         from its angle at the frame's start                              (hinge.rs)
//!     tether balls: each particle's allowed region about its anchors       (tether.rs)
//! for each of S substeps:
//!     free particles: x_prev = x;  v ← v·exp(−k h) + h g;  x ← x + h v      (TwoSum-compensated)
//!     λ = 0 for every constraint
//!     distance damping: each compliant edge's effective rest length L' and compliance α'
//!         from its length at the substep's start                           (distance.rs)
//!     repeat n_it sweeps:
//!         distance constraints, in sweep order: by edge kind (stretch, shear, bend), then
//!             by direction |b − a|, then model order (a mesh not numbered like a grid:
//!             each kind in greedy colours instead)                         (distance.rs)
//!         dihedral hinges, greedy colour by colour                         (hinge.rs)
//!         each free particle: its tethers, then every collider in turn
//!             (contact with positional Coulomb friction)                   (tether.rs, contact.rs)
//!     free particles: v = (x − x_prev)/h, clamped to max_speed
//! once, after the substeps:
//!     stretch viscosity: each stretch and shear edge's dashpot over the frame,
//!         in model order                                          (super::viscosity)
//! ```
//!
//! Each other file holds one constraint kind: its maths in the `//!` docs and the projection as the
//! engine evaluates it, operation for operation (true square root and division, no fused
//! multiply–add, the same compensated sums). Geometry the engine keeps as plain safe functions
//! is called, not copied: the dihedral angle and its gradients
//! ([`super::constraints::bend`]), the colliders' signed distances ([`Collider::surface`]) and
//! the tethers' anchors and lengths (a search through the cloth, `super::tethers`).
//!
//! **The oracle.** The engine sweeps in this same order, so wherever it runs the same scalar
//! operations it reproduces this loop bit for bit: distance constraints, damping, tethers,
//! contacts, prediction and velocities on every kernel and thread count, hinges with the
//! scalar kernel ([`super::constraints::distance::Kernel::Scalar`]). The vector hinge kernel
//! rounds differently (fused multiply–adds, a polynomial atan2), so there the engine follows
//! this loop within a tolerance. The tests beside this file (`tests.rs`) check both, and
//! `engine_reproduces_the_straightforward_loop_bit_for_bit` (`src/sim/solver/tests.rs`) checks
//! the tmp15 workload. It is also the baseline of `drape bench --solver reference`.
//!
//! **Left out** (the engine's, not here): aerodynamic drag and wind, self-contacts, pressure
//! bodies, the grabs, tearing, moving colliders (a collider's `motion` is ignored: it stays
//! where it is placed), stiffness ramps, several materials in one cloth, the checks of the
//! parameters and the divergence guard. The anchors stay
//! where the model puts them, so no tether grows (docs/physics.md §5, "anchors pulled apart").

mod contact;
mod distance;
mod hinge;
#[cfg(test)]
mod tests;
mod tether;

use glam::Vec3;

use super::collision::{Collider, ContactSettings};
use super::float_mode::FlushSubnormals;
use super::model::Model;
use super::params::{Material, SolverParams};
use super::particles::{two_sum, COMPENSATED_BELOW_SUBSTEP};
use super::viscosity;
use distance::Distances;
use hinge::Hinges;
use tether::Tethers;

/// The straightforward XPBD loop (see the module docs): distance constraints, dihedral
/// hinges, tethers and collider contacts with friction, constraint and air damping, gravity,
/// pins and the speed clamp, as plain scalar code in the engine's sweep order. The `bench`
/// figures are compared against it, and the engine's bit-for-bit tests take it as their
/// oracle.
#[derive(Debug, Clone)]
pub struct ReferenceSolver {
    particles: Vec<RefParticle>,
    distances: Distances,
    hinges: Hinges,
    tethers: Tethers,
    colliders: Vec<Collider>,
    /// The material's friction against colliders (the thickness comes with each step).
    friction: ContactSettings,
    /// Stretch compliance per unit coefficient (m/N): bending damping's time scale is β times
    /// it ([`Material::stretch_compliance_factor`]).
    stretch_compliance_factor: f32,
    /// The stretch and shear edges in model order, each (a, b, compliance α in m/N), and the
    /// material's stretch damping time τ in s ([`super::viscosity`]).
    viscous_edges: Vec<(usize, usize, f32)>,
    stretch_damping_time: f32,
}

/// One particle.
#[derive(Debug, Clone, Copy)]
struct RefParticle {
    /// Position in m.
    x: Vec3,
    /// Position at the start of the substep in m.
    prev: Vec3,
    /// Compensation: the exact position is x + comp (as the engine keeps it).
    comp: Vec3,
    comp_prev: Vec3,
    /// Velocity in m/s.
    v: Vec3,
    /// Inverse mass (1/kg), 0 when pinned.
    w: f32,
}

impl RefParticle {
    /// Whether constraints move the particle (it has mass and is not pinned).
    fn is_free(&self) -> bool {
        self.w > 0.0
    }

    /// Moves the particle by `delta` (m), its rounding error kept in `comp` when
    /// `compensated` (as the engine's distance corrections below
    /// [`COMPENSATED_BELOW_SUBSTEP`]).
    fn shift(&mut self, delta: Vec3, compensated: bool) {
        let (moved, error) = two_sum(self.x, delta);
        self.x = moved;
        if compensated {
            self.comp += error;
        }
    }
}

impl ReferenceSolver {
    /// Builds the solver from `model` under `material` (masses, compliances and tethers as the
    /// engine derives them), without colliders.
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
        Self {
            particles,
            distances: Distances::new(model, material),
            hinges: Hinges::new(model, material),
            tethers: Tethers::new(model, material),
            colliders: Vec::new(),
            friction: ContactSettings::of(0.0, material),
            stretch_compliance_factor: material.stretch_compliance_factor(),
            viscous_edges: model
                .distances
                .iter()
                .filter(|c| viscosity::is_damped(c.kind))
                .map(|c| (c.a as usize, c.b as usize, material.distance_compliance(c)))
                .collect(),
            stretch_damping_time: material.stretch_damping_time,
        }
    }

    /// The solver with `colliders` (solved in this order; each stays where it is placed).
    pub fn with_colliders(self, colliders: Vec<Collider>) -> Self {
        Self { colliders, ..self }
    }

    /// Number of distance constraints and hinges.
    pub fn constraint_count(&self) -> usize {
        self.distances.len() + self.hinges.len()
    }

    /// Particle positions in m.
    pub fn positions(&self) -> impl ExactSizeIterator<Item = Vec3> + '_ {
        self.particles.iter().map(|p| p.x)
    }

    /// Particle velocities in m/s.
    pub fn velocities(&self) -> impl ExactSizeIterator<Item = Vec3> + '_ {
        self.particles.iter().map(|p| p.v)
    }

    /// Lowest particle height (m).
    pub fn ymin(&self) -> f32 {
        self.particles.iter().map(|p| p.x.y).fold(f32::INFINITY, f32::min)
    }

    /// Advances one frame of `params.dt` (substeps, iterations, gravity, damping, speed clamp
    /// and collision thickness from `params`; what the module docs leave out is not read).
    pub fn step(&mut self, params: &SolverParams) {
        // Subnormals off, as on the engine's solver threads (`float_mode`): the damping term of
        // a particle that barely moves sideways goes subnormal, and flushed or kept it rounds
        // differently.
        let _subnormals_off = FlushSubnormals::enable();
        let h = params.substep_dt();
        let inv_h2 = 1.0 / (h * h);
        let compensated = h < COMPENSATED_BELOW_SUBSTEP;
        let air = (-params.air_damping * h).exp();
        let contact = ContactSettings {
            thickness: params.collision_thickness,
            ..self.friction
        };
        // Bending is damped over the frame with τ = β α_unit (γ = τ/Δt, see hinge.rs).
        let bend_gamma = params.constraint_damping * self.stretch_compliance_factor / params.dt;
        self.hinges.start_frame(&self.particles, bend_gamma);
        self.tethers.start_frame(&self.particles, compensated);
        let per_particle = !(self.tethers.is_empty() && self.colliders.is_empty());
        for _ in 0..params.substeps {
            for p in self.particles.iter_mut().filter(|p| p.is_free()) {
                p.prev = p.x;
                p.comp_prev = p.comp;
                // Air damping acts on the velocity carried in, not on this substep's gravity.
                p.v = p.v * air + params.gravity * h;
                // x + (comp + v h) summed exactly (TwoSum), so tiny steps add up.
                (p.x, p.comp) = two_sum(p.x, p.comp + p.v * h);
            }
            self.distances.start_substep(params.constraint_damping / h);
            self.hinges.start_substep();
            for _ in 0..params.iterations {
                self.distances.sweep(&mut self.particles, inv_h2, compensated);
                self.hinges.sweep(&mut self.particles, inv_h2);
                if per_particle {
                    self.project_tethers_and_contacts(contact);
                }
            }
            for p in self.particles.iter_mut().filter(|p| p.is_free()) {
                let v = ((p.x - p.prev) + (p.comp - p.comp_prev)) / h;
                p.v = if params.max_speed > 0.0 {
                    v.clamp_length_max(params.max_speed)
                } else {
                    v
                };
            }
        }
        self.damp_stretching(params.dt);
    }

    /// End of the frame: each stretch and shear edge's dashpot over the frame `dt`, edge after
    /// edge in model order ([`viscosity::damp_edge`]).
    fn damp_stretching(&mut self, dt: f32) {
        let tau_dt = self.stretch_damping_time * dt;
        if tau_dt == 0.0 {
            return;
        }
        for &(a, b, compliance) in &self.viscous_edges {
            let end = |p: &RefParticle| viscosity::EdgeEnd { x: p.x, v: p.v, w: p.w };
            let (end_a, end_b) = (end(&self.particles[a]), end(&self.particles[b]));
            (self.particles[a].v, self.particles[b].v) = viscosity::damp_edge(end_a, end_b, compliance, tau_dt);
        }
    }

    /// The last step of a sweep: each free particle's tethers, then its contact with every
    /// collider in turn.
    fn project_tethers_and_contacts(&mut self, contact: ContactSettings) {
        for (i, p) in self.particles.iter_mut().enumerate().filter(|(_, p)| p.is_free()) {
            self.tethers.project(i, &mut p.x);
            for collider in &self.colliders {
                contact::project(collider, &mut p.x, &mut p.prev, contact);
            }
        }
    }
}

/// Greedy colouring, the order the engine sweeps constraints without a grid order in: in the
/// order of `constraints` (index, particles), each takes the lowest of 64 colours that no
/// constraint already coloured uses at any of its particles; those finding all 64 taken come
/// last. Returns the indices colour by colour, each colour in the given order. The constraints
/// of one colour share no particle, so any order within a colour is the same sweep.
fn greedy_colour_order<const N: usize>(constraints: impl Iterator<Item = (usize, [usize; N])>, particle_count: usize) -> Vec<usize> {
    const COLOURS: u32 = 64;
    let mut used = vec![0u64; particle_count];
    let mut colours = vec![Vec::new(); COLOURS as usize + 1];
    for (index, particles) in constraints {
        let taken = particles.iter().fold(0u64, |mask, &p| mask | used[p]);
        let colour = (!taken).trailing_zeros();
        if colour < COLOURS {
            particles.iter().for_each(|&p| used[p] |= 1 << colour);
        }
        colours[colour.min(COLOURS) as usize].push(index);
    }
    colours.concat()
}
