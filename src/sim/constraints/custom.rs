//! Constraint types defined outside the engine: the public extension point.
//!
//! A constraint type is its function C(x) of a few particles and the gradients ∇_i C; the
//! XPBD update is the same for every type (docs/physics.md §1). With α̃ = α/h²,
//! ```text
//! Δλ  = (−C − α̃ λ) / (Σ_i w_i |∇_i C|² + α̃)
//! x_i += w_i ∇_i C Δλ          λ += Δλ
//! ```
//! ([`xpbd_update`]). So a new type implements [`CustomConstraint`] — which particles, its
//! compliance, C and ∇C — and [`crate::sim::cloth::Cloth::add_constraints`] registers a set of
//! them. The engine then schedules them like its own distances and hinges: batches of
//! constraints sharing no particle, cut into the threads' parts with the waits that keep the
//! one-thread order ([`super::ConstraintSet`], [`super::plan_sweep`]), so the results are
//! bit-identical on every thread count. A registered set is solved on the particle arrays
//! after the model's distances, in the order the sets were added, with the scalar update
//! below (no vector kernel: a type the engine ships gets one in its own folder).
//!
//! Custom constraints keep their particle indices through tearing (only the model's
//! distances and hinges are re-pointed to the particle copies a tear makes).
//!
//! ```
//! use drape::sim::constraints::custom::CustomConstraint;
//! use drape::sim::{Cloth, GridSpec, Material, PinMode, SolverParams};
//! use glam::Vec3;
//!
//! /// Holds one particle at a height: C = y − height (a rigid "shelf" under a point).
//! #[derive(Debug, Clone, Copy)]
//! struct AtHeight {
//!     particle: [u32; 1],
//!     height: f32,
//! }
//!
//! impl CustomConstraint for AtHeight {
//!     fn particles(&self) -> &[u32] {
//!         &self.particle
//!     }
//!     fn compliance(&self) -> f32 {
//!         0.0
//!     }
//!     fn evaluate(&self, x: &[Vec3], gradients: &mut [Vec3]) -> Option<f32> {
//!         gradients[0] = Vec3::Y;
//!         Some(x[0].y - self.height)
//!     }
//! }
//!
//! // A free 8 × 8 sheet, 1 m above the origin, held up by one corner only.
//! let spec = GridSpec { columns: 8, rows: 8, pins: PinMode::None, ..GridSpec::default() };
//! let mut cloth = Cloth::new(spec.build()?, &Material::default(), Vec::new())?;
//! let corner = spec.index(0, 0);
//! let height = cloth.particles().position(corner as usize).y;
//! cloth.add_constraints([AtHeight { particle: [corner], height }])?;
//! let params = SolverParams::default();
//! for _ in 0..60 {
//!     cloth.step(&params, &Material::default())?;
//! }
//! // The corner stays at its height (to float precision) while the rest of the sheet falls
//! // and hangs from it.
//! let far = spec.index(7, 7) as usize;
//! assert!((cloth.particles().position(corner as usize).y - height).abs() < 1e-4);
//! assert!(cloth.particles().position(far).y < height - 0.5);
//! # Ok::<(), drape::sim::SimError>(())
//! ```

use glam::Vec3;

use super::Batch;
use crate::sim::particles::{xyz, PosPtr};

/// Most particles one custom constraint may act on.
pub const MAX_PARTICLES: usize = 4;

/// A constraint type of the caller's: which particles, how compliant, and C(x) with its
/// gradients. See the [module docs](self) for a worked example.
pub trait CustomConstraint: Copy + Send + Sync + std::fmt::Debug + 'static {
    /// The particles it acts on (1 to [`MAX_PARTICLES`] distinct indices).
    fn particles(&self) -> &[u32];
    /// Compliance α, the inverse stiffness, in the units of C per newton (m/N for a length);
    /// 0 is rigid.
    fn compliance(&self) -> f32;
    /// C(x) for the positions `x` of [`Self::particles`] (in that order), writing ∇_i C into
    /// `gradients[i]`; `None` leaves the particles alone this time (an inequality that
    /// holds, a degenerate configuration).
    fn evaluate(&self, x: &[Vec3], gradients: &mut [Vec3]) -> Option<f32>;
}

/// The XPBD multiplier update Δλ = (−C − α̃λ) / (Σ w_i |∇_i C|² + α̃) for a constraint with
/// value `c`, current multiplier `lambda`, α̃ = α/h² `alpha_tilde` (the compliance over the
/// squared substep) and `weighted_gradients` = Σ w_i |∇_i C|². Zero when nothing can move.
///
/// ```
/// use drape::sim::constraints::custom::xpbd_update;
/// // Two free particles of 1 kg (w = 1) held 0.1 m too far apart by a rigid link: each
/// // gradient has length 1, so Σ w |∇C|² = 2 and the first update closes the whole gap.
/// assert_eq!(xpbd_update(0.1, 0.0, 0.0, 2.0), -0.05);
/// // A compliant link closes only part of it: α̃ = 2 gives Δλ = −0.1 / 4.
/// assert_eq!(xpbd_update(0.1, 0.0, 2.0, 2.0), -0.025);
/// ```
#[inline]
pub fn xpbd_update(c: f32, lambda: f32, alpha_tilde: f32, weighted_gradients: f32) -> f32 {
    let denominator = weighted_gradients + alpha_tilde;
    if denominator <= 0.0 {
        return 0.0;
    }
    (-c - alpha_tilde * lambda) / denominator
}

/// The corrections of one projection: position i of the constraint moves by
/// `corrections[i]`, and its multiplier by `delta_lambda`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projection {
    pub corrections: [Vec3; MAX_PARTICLES],
    pub delta_lambda: f32,
}

/// One XPBD projection of `constraint` at positions `x` with inverse masses `w` (1/kg, 0 for
/// a pinned particle), multiplier `lambda` and α̃ = α/h² `alpha_tilde`: a pure function, the
/// whole of what the engine does with a custom constraint.
pub fn project<C: CustomConstraint>(constraint: &C, x: &[Vec3], w: &[f32], lambda: f32, alpha_tilde: f32) -> Option<Projection> {
    let mut gradients = [Vec3::ZERO; MAX_PARTICLES];
    let n = x.len();
    let c = constraint.evaluate(x, &mut gradients[..n])?;
    let weighted: f32 = (0..n).map(|i| w[i] * gradients[i].length_squared()).sum();
    let delta_lambda = xpbd_update(c, lambda, alpha_tilde, weighted);
    let mut corrections = [Vec3::ZERO; MAX_PARTICLES];
    for i in 0..n {
        corrections[i] = gradients[i] * (w[i] * delta_lambda);
    }
    Some(Projection { corrections, delta_lambda })
}

/// Checks a constraint's particles: 1 to [`MAX_PARTICLES`] distinct indices below
/// `particle_count`, and a finite, non-negative compliance.
pub(crate) fn check<C: CustomConstraint>(constraint: &C, particle_count: usize) -> Result<(), &'static str> {
    let particles = constraint.particles();
    if particles.is_empty() || particles.len() > MAX_PARTICLES {
        return Err("1 to 4 particles per constraint");
    }
    if particles.iter().any(|&p| p as usize >= particle_count) {
        return Err("particle indices of the cloth");
    }
    let distinct = particles.iter().enumerate().all(|(k, p)| !particles[..k].contains(p));
    if !distinct {
        return Err("distinct particles in one constraint");
    }
    let alpha = constraint.compliance();
    if !alpha.is_finite() || alpha < 0.0 {
        return Err("a finite, non-negative compliance");
    }
    Ok(())
}

/// A batch of custom constraints: the constraints, their model ids and multipliers.
#[derive(Debug, Clone)]
pub struct CustomBatch<C> {
    items: Vec<C>,
    id: Vec<u32>,
    lambda: Vec<f32>,
}

impl<C> Default for CustomBatch<C> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            id: Vec::new(),
            lambda: Vec::new(),
        }
    }
}

impl<C: CustomConstraint> Batch for CustomBatch<C> {
    type Item = C;

    fn particles(item: &C) -> &[u32] {
        item.particles()
    }

    fn push(&mut self, id: u32, item: C) {
        self.items.push(item);
        self.id.push(id);
        self.lambda.push(0.0);
    }

    fn swap_remove(&mut self, index: usize) -> Option<u32> {
        self.items.swap_remove(index);
        self.id.swap_remove(index);
        self.lambda.swap_remove(index);
        self.id.get(index).copied()
    }

    fn get(&self, index: usize) -> C {
        self.items[index]
    }

    fn id(&self, index: usize) -> u32 {
        self.id[index]
    }

    fn len(&self) -> usize {
        self.items.len()
    }
}

impl<C: CustomConstraint> CustomBatch<C> {
    /// Projects every constraint of the batch once, in slot order, on `pos` with
    /// 1/h² = `inv_h2`; `first`: the substep's first sweep (multipliers restart at zero).
    ///
    /// # Safety
    /// Every particle index is in bounds of `pos`, and no other thread touches the batch's
    /// particles during the call.
    pub(crate) unsafe fn project_all(&mut self, pos: PosPtr, inv_h2: f32, first: bool) {
        for (j, constraint) in self.items.iter().enumerate() {
            let particles = constraint.particles();
            let n = particles.len();
            let mut x = [Vec3::ZERO; MAX_PARTICLES];
            let mut w = [0.0; MAX_PARTICLES];
            let mut now = [[0.0; 4]; MAX_PARTICLES];
            for (k, &p) in particles.iter().enumerate() {
                // SAFETY: the caller guarantees the index in bounds and the particle ours.
                now[k] = unsafe { pos.get(p as usize) };
                (x[k], w[k]) = (xyz(now[k]), now[k][3]);
            }
            let lambda = if first { 0.0 } else { self.lambda[j] };
            let alpha_tilde = constraint.compliance() * inv_h2;
            let Some(step) = project(constraint, &x[..n], &w[..n], lambda, alpha_tilde) else {
                continue;
            };
            self.lambda[j] = lambda + step.delta_lambda;
            for (k, &p) in particles.iter().enumerate() {
                // SAFETY: as above.
                unsafe { pos.shift(p as usize, now[k], step.corrections[k].to_array()) };
            }
        }
    }
}
