//! The headless XPBD cloth engine (no window, no UI).
//!
//! # The method in a page
//! Extended position-based dynamics (Macklin, Müller, Chentanez 2016) advances particles by
//! predicting positions from velocities and then projecting constraints C(x) = 0 one at a time
//! (Gauss–Seidel). Each constraint j carries a compliance α_j (inverse stiffness) and a
//! Lagrange multiplier λ_j; with α̃ = α/h² the update
//! Δλ = (−C − α̃λ) / (Σ w_i |∇C_i|² + α̃), x_i += w_i ∇C_i Δλ
//! converges to the implicit (backward-Euler) solution of a spring with stiffness 1/α, so the
//! stiffness no longer depends on the step size or iteration count as it did in plain PBD.
//! Following "Small Steps" (Macklin et al. 2019) a frame of Δt is split into S substeps of
//! h = Δt/S with one sweep each; λ restarts at zero every substep.
//!
//! One frame, as implemented by [`Cloth::step`]:
//! ```text
//! for each substep: x_prev = x; v += h g; x += h v        (free particles)
//!                   λ = 0
//!                   repeat iterations: distances, hinges, then contacts (with friction)
//!                   v = (x − x_prev)/h
//! ```
//! Damping is XPBD eq. 26 (constraint damping β, along constraint gradients only) plus a
//! separately named air damping. Material → compliance follows docs/physics.md §2
//! (see [`model`]); collisions and friction §4 (see [`collision`]).
//!
//! # Reading order
//! [`reference`](mod@reference) is that loop written plainly, the oracle the fast code is tested against;
//! then [`cloth`] (the facade: one frame top to bottom), [`constraints`] (the sweep order, the
//! batches, the threads and how to add a constraint type: [`constraints::custom`]) and the
//! substep loop in `solver`.
//!
//! # Example
//! The engine reproduces the plain loop bit for bit on a grid of distance constraints:
//! ```
//! use drape::headless::{tmp15_cloth, tmp15_material, tmp15_params};
//! use drape::sim::{tmp15_model, ReferenceSolver};
//!
//! let params = tmp15_params(10, 1, 1);
//! let mut cloth = tmp15_cloth(16)?;
//! let mut reference = ReferenceSolver::new(&tmp15_model(16)?, &tmp15_material());
//! for _ in 0..30 {
//!     cloth.step(&params, &tmp15_material())?;
//!     reference.step(&params);
//! }
//! let engine: Vec<_> = cloth.particles().positions().collect();
//! let plain: Vec<_> = reference.positions().collect();
//! assert_eq!(engine, plain);
//! // The sheet has moved (the comparison is of motion, not of a state at rest).
//! assert_ne!(engine, tmp15_model(16)?.positions);
//! # Ok::<(), drape::sim::SimError>(())
//! ```

pub mod aero;
pub mod appearance;
pub mod cloth;
pub mod collision;
mod constraint_store;
pub mod constraints;
pub mod error;
mod float_mode;
pub mod grid;
mod guard;
pub mod interaction;
pub mod mesh;
pub mod model;
pub mod motion;
mod parallel;
pub mod param_table;
pub mod params;
pub mod particles;
pub mod pressure;
pub mod ramp;
pub mod reference;
pub mod self_contact;
pub mod sewing;
pub mod shapes;
mod solver;
pub mod stats;
pub mod tearing;
mod tethers;
pub mod texture;
pub mod viscosity;

pub use cloth::{Cloth, MAX_THROW_SPEED};
pub use collision::{Collider, Motion};
/// Most threads a step can use ([`SolverParams::threads`]).
pub use constraints::MAX_PARTS as MAX_THREADS;
pub use error::SimError;
pub use error::{MAX_COLLIDERS, MAX_PARTICLES, WORLD_EXTENT};
pub use grid::{tmp15_model, Diagonals, GridLattice, GridSpec, Orientation, PinMode, PinnedAt};
pub use guard::FRAME_WORK_BUDGET;
pub use interaction::{Grab, Pick, Ray, TriangleHit};
pub use mesh::{MeshDefect, MeshPins, TriangleMesh};
pub use model::{Compliance, DistanceConstraint, EdgeKind, Hinge, Model, ModelBuilder};
pub use parallel::{available_cores, with_assumed_cores};
pub use params::{Material, SolverParams};
pub use particles::Particles;
pub use pressure::{PressureBody, PressureVolume};
pub use reference::ReferenceSolver;
pub use shapes::icosphere;
pub use stats::{PhaseTimes, StepStats};
pub use texture::TexturedVertices;
#[cfg(test)]
mod live_tests;
