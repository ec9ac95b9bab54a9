//! Distance constraints C = |x_a − x_b| − L, one batch (a level or a strip, see
//! [`super`]) at a time.
//!
//! With n = (x_a − x_b)/|x_a − x_b|: ∇_a C = n, ∇_b C = −n, so the XPBD update is
//! Δλ = (−C − α̃λ − γ n·(Δx_a − Δx_b)) / ((1 + γ)(w_a + w_b) + α̃),
//! x_a += w_a Δλ n, x_b −= w_b Δλ n (the plus sign the seed article got wrong, docs/physics.md §11), with
//! α̃ = α/h² and γ = αβ/h (XPBD eq. 26; Δx the motion since the substep began).
//! Tension (N) is −λ/h².
//!
//! **Damping, exactly as eq. 26.** A substep with constraint damping projects its batches
//! slot by slot with [`solve_damped`], which evaluates γ n·(Δx_a − Δx_b) from the positions'
//! motion since the substep began (x − x_prev, computed exactly for nearby positions) apart
//! from C. (Folding it into an effective rest length L' = (L + γ l_prev)/(1 + γ), as this
//! solver once did, let the rounding of the lengths l and l_prev — a few 1e-8 m each — through
//! amplified by 1 + γ: a 1 kg mass on α = 0.1 m/N with β = 5 N·s/m at h = 1/7680 s
//! (γ = 3840) rested at 9.8106 N instead of m g.) With γ = 0 (a rigid constraint) the damped
//! update rounds exactly as the undamped one, so β leaves rigid constraints untouched (V8).
//! The damped path is scalar; damping is off by default and in every shipped preset but one.
//!
//! **One rounding everywhere.** The undamped update is [`solve`], a pure function of one
//! constraint. Every kernel evaluates its operations in its order (true square root and
//! division, no fused multiply–add): the scalar loop calls it slot by slot
//! ([`kernel::project_slot`]), every lane of the vector kernels repeats it
//! ([`vector::project_lanes`]), and so does the straightforward loop
//! ([`crate::sim::ReferenceSolver`]). So they all round identically, and a sweep in the same
//! order gives bit-identical positions with any kernel and on any number of threads.
//!
//! **Files.** This module holds the maths; [`batch`] the storage (structure of arrays);
//! [`kernel`] the choice of kernel, the projection of a batch or a group of batches and the
//! damped slot loop; `avx2` and `avx512` the vector kernels, `vector` what the two widths
//! share (one vector's projection, the tiled loop over strips); [`copy`] the kernel on the
//! solver's `[x, y, z, w]` copy; `tests.rs` the tests comparing the kernels. The strain
//! statistics are in [`crate::sim::stats`].

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
mod batch;
pub mod copy;
mod kernel;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
mod vector;

pub use crate::sim::particles::PosW;
use crate::sim::particles::VecPtr;
pub use batch::{DistanceBatch, DistanceItem};
pub use kernel::{project, project_with, Kernel};
pub(crate) use kernel::{project_group, project_raw};

/// Below this length (m) an edge has no direction; it is skipped, never divided by.
pub(crate) const MIN_LENGTH: f32 = 1e-9;

/// Where the particles were when the substep began, for the damping's motion Δx: the start
/// positions, and the positions' compensations now and at the start when they are kept
/// ([`crate::sim::particles`]): the exact motion is (x − x_prev) + (comp − comp_prev), which
/// counts the part of a tiny substep's move an f32 position cannot hold.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SubstepStart {
    /// Positions at the start of the substep.
    pub prev: VecPtr,
    /// The compensations (now, at the start), when kept.
    pub comp: Option<(VecPtr, VecPtr)>,
}

impl SubstepStart {
    /// Particle `i`'s motion since the substep began, now at `x` (m).
    ///
    /// # Safety
    /// `i` in bounds of every array; no other thread writing particle `i`.
    #[inline(always)]
    pub(crate) unsafe fn motion(self, i: usize, [x, y, z]: [f32; 3]) -> [f32; 3] {
        // SAFETY: the caller upholds this function's # Safety contract.
        unsafe {
            let start = self.prev.get(i);
            let moved = [x - start.x, y - start.y, z - start.z];
            match self.comp {
                Some((now, then)) => {
                    let residual = now.get(i) - then.get(i);
                    [moved[0] + residual.x, moved[1] + residual.y, moved[2] + residual.z]
                }
                None => moved,
            }
        }
    }
}

/// Per-substep constants of the projection.
#[derive(Debug, Clone, Copy)]
pub struct SubstepConstants {
    /// 1/h² in 1/s².
    pub inv_h2: f32,
    /// β/h: constraint damping divided by the substep (N/m). γ = α · β/h for distances.
    pub damping_over_h: f32,
    /// γ = τ/h of every compliant hinge (dimensionless; see [`super::hinge`]'s damping).
    pub bend_gamma: f32,
}

/// What one projection of a distance constraint changes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Correction {
    /// Δx_a, the move of the first end (m).
    pub delta_a: [f32; 3],
    /// Δx_b, the move of the second end (m).
    pub delta_b: [f32; 3],
    /// Δλ, the change of the Lagrange multiplier (N·s²).
    pub delta_lambda: f32,
}

/// One undamped XPBD projection of C = |x_a − x_b| − `rest` (in the spirit of PBD's
/// `solve_DistanceConstraint`): ends at `x_a` and `x_b` (m) with inverse masses `w_a` and `w_b`
/// (1/kg), compliance term α̃ = α/h² (`alpha_tilde`, 1/kg) and the multiplier `lambda` so far
/// (N·s²). `None` when the constraint has no direction (length at most [`MIN_LENGTH`]) or
/// nothing can move (w_a + w_b + α̃ not positive): then nothing changes.
///
/// With d = x_a − x_b and n = d/|d|, Δλ = (−C − α̃λ)/(w_a + w_b + α̃) and Δx_a = w_a Δλ n,
/// Δx_b = −w_b Δλ n, evaluated as f = Δλ/|d| = (−C − α̃λ)/((w_a + w_b + α̃)|d|) (one
/// division), Δλ = f |d|, Δx_a = w_a f d, Δx_b = −(w_b f d). Every kernel evaluates exactly
/// these operations in this order (see the module docs); keep them so.
#[inline(always)]
pub fn solve(x_a: [f32; 3], w_a: f32, x_b: [f32; 3], w_b: f32, rest: f32, alpha_tilde: f32, lambda: f32) -> Option<Correction> {
    let (d, len) = separation(x_a, x_b);
    let denom = w_a + w_b + alpha_tilde;
    if !(len > MIN_LENGTH && denom > 0.0) {
        return None;
    }
    let f = (rest - len - alpha_tilde * lambda) / (denom * len);
    Some(correction(d, len, [w_a, w_b], f))
}

/// d = x_a − x_b and |d|, in the order every kernel evaluates them.
#[inline(always)]
fn separation(x_a: [f32; 3], x_b: [f32; 3]) -> ([f32; 3], f32) {
    let d = [x_a[0] - x_b[0], x_a[1] - x_b[1], x_a[2] - x_b[2]];
    (d, (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt())
}

/// The moves of the ends and Δλ from f = Δλ/|d|: Δx_a = w_a f d, Δx_b = −(w_b f d), Δλ = f |d|.
#[inline(always)]
fn correction(d: [f32; 3], len: f32, [w_a, w_b]: [f32; 2], f: f32) -> Correction {
    let (fa, fb) = (w_a * f, w_b * f);
    Correction {
        delta_a: [fa * d[0], fa * d[1], fa * d[2]],
        delta_b: [-(fb * d[0]), -(fb * d[1]), -(fb * d[2])],
        delta_lambda: f * len,
    }
}

/// One damped XPBD projection (XPBD eq. 26): [`solve`] with the damping term
/// γ n·(Δx_a − Δx_b), where `motion_a` and `motion_b` are the ends' motions since the substep
/// began (m) and `gamma` = α β / h. With d = x_a − x_b,
/// f = Δλ/|d| = (−C − α̃λ − γ d·(Δx_a − Δx_b)/|d|) / (((1 + γ)(w_a + w_b) + α̃)|d|). With
/// `gamma` = 0 it rounds exactly as [`solve`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn solve_damped(
    x_a: [f32; 3],
    w_a: f32,
    x_b: [f32; 3],
    w_b: f32,
    [motion_a, motion_b]: [[f32; 3]; 2],
    rest: f32,
    alpha_tilde: f32,
    gamma: f32,
    lambda: f32,
) -> Option<Correction> {
    let (d, len) = separation(x_a, x_b);
    let denom = (1.0 + gamma) * (w_a + w_b) + alpha_tilde;
    if !(len > MIN_LENGTH && denom > 0.0) {
        return None;
    }
    let relative = [motion_a[0] - motion_b[0], motion_a[1] - motion_b[1], motion_a[2] - motion_b[2]];
    let along = (d[0] * relative[0] + d[1] * relative[1] + d[2] * relative[2]) / len;
    let f = (rest - len - alpha_tilde * lambda - gamma * along) / (denom * len);
    Some(correction(d, len, [w_a, w_b], f))
}

/// Engineering strain (l − l0)/l0 of an edge of length `len` and rest length `rest` (0 for a
/// zero rest length).
#[inline(always)]
pub(crate) fn strain(len: f32, rest: f32) -> f32 {
    if rest > 0.0 {
        (len - rest) / rest
    } else {
        0.0
    }
}
