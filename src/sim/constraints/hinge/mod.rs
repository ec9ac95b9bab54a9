//! Dihedral bending hinges: the constraint, its XPBD step and its damping (the angle and its
//! gradients are [`super::bend`]'s).
//!
//! **The constraint.** A hinge is the two triangles (p0, p2, p3) and (p1, p3, p2) on the
//! shared edge p2 → p3, with the wings p0 and p1. Its constraint is C = θ − θ0, θ the signed
//! dihedral angle of [`super::bend`], θ0 the rest angle (the angle as built), the difference
//! wrapped into (−π, π] so a hinge never takes the long way round. Its compliance α is in
//! 1/(N·m) (docs/physics.md §2).
//!
//! **The step.** XPBD with α̃ = α/h² (h the substep) and the multiplier λ of the substep
//! (0 on its first sweep):
//! ```text
//! Δλ = (−C − α̃ λ) / (Σ_i w_i |∇_i θ|² + α̃),   λ += Δλ,   p_i += w_i Δλ ∇_i θ
//! ```
//! ([`correction`]). A hinge with a degenerate triangle or edge ([`super::bend::DEGENERATE`])
//! or a denominator at most 1e-30 or not finite is skipped. The gradients sum to zero, so a
//! hinge moves the cloth's centre of mass by nothing.
//!
//! **Damping.** A hinge's compliance is in 1/(N·m), not m/N, so the distance constraints' β
//! (N·s/m) cannot be used as γ = α β / h: on a 5 MPa cotton hinge that gives γ ≈ 10⁷, a hinge
//! that cancels every change of its angle within a substep, and the cloth crumples into spikes.
//! Bending is damped as a Kelvin–Voigt material instead, with the retardation time of the
//! stretch: τ = β α_unit, α_unit = 1/(E t) (scaled like the stretch compliance), the time in
//! which the viscous stress β ε̇ equals the elastic one; γ = τ/h for every hinge
//! ([`SubstepConstants::bend_gamma`](super::distance::SubstepConstants::bend_gamma)). As for the distances (see [`super::distance`]) the damped
//! update is the undamped one with the effective rest angle θ0' = θ0 + γ/(1 + γ) (θ_start − θ0)
//! and compliance α/(1 + γ) ([`damped`], [`HingeBatch::prepare_damping`]); rigid hinges
//! (α = 0) are not damped. Evaluating θ_start costs a scalar dihedral angle per hinge, three
//! times the vector projection, so bending is damped over the *frame*: θ_start is the angle at
//! the frame's start and γ = τ/Δt. At the frame's end the hinge's moment is then
//! ((θ − θ0) + τ (θ − θ_start)/Δt)/α, the Kelvin–Voigt law with the angular rate measured over
//! the frame (backward Euler at the frame step, so unconditionally stable).
//!
//! **Where the rest lives.** [`batch`]: the storage of a colour batch (structure of arrays),
//! its damping, the scalar loop over [`correction`] and the choice of kernel. `vector` (x86-64):
//! the same step at eight or sixteen hinges per vector. [`copy`]: the `[x, y, z, w]` copy of
//! the positions the hinge phases run on. The vector kernel rounds unlike the scalar loop (fused
//! multiply–adds, a polynomial atan2), which the schedule takes care of (see
//! [`super::ConstraintSet::schedule_phases`]); its two widths agree bit for bit.

use glam::Vec3;

use super::bend::{dihedral_angle, dihedral_gradients, wrap_angle};

mod batch;
mod copy;
#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
mod vector;

pub use batch::{project, project_with, HingeBatch, HingeItem};
pub(crate) use batch::{project_raw, project_raw_aos, vector_kernel_applies};
pub(crate) use copy::{copy_from_aos, copy_to_aos};

/// One hinge's XPBD step ([`correction`]): the change of its multiplier and the moves of its
/// particles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Correction {
    /// Δλ (N·m·s², like λ).
    pub delta_lambda: f32,
    /// wᵢ Δλ ∇ᵢθ for p0…p3 (m).
    pub moves: [Vec3; 4],
}

/// The XPBD step of the hinge on `p` = p0…p3 with inverse masses `w` (1/kg), rest angle
/// `rest_angle` (rad), α̃ = `alpha_tilde` (α/h²) and multiplier `lambda` (module docs), or
/// `None` when it is degenerate or its denominator vanishes.
#[inline]
pub fn correction(p: [Vec3; 4], w: [f32; 4], rest_angle: f32, alpha_tilde: f32, lambda: f32) -> Option<Correction> {
    let (theta, grads) = dihedral_gradients(p[0], p[1], p[2], p[3])?;
    let weighted: f32 = (0..4).map(|i| w[i] * grads[i].length_squared()).sum();
    let denom = weighted + alpha_tilde;
    if denom <= 1e-30 || !denom.is_finite() {
        return None;
    }
    let c = wrap_difference(theta - rest_angle);
    let delta_lambda = (-c - alpha_tilde * lambda) / denom;
    Some(Correction {
        delta_lambda,
        moves: std::array::from_fn(|i| w[i] * delta_lambda * grads[i]),
    })
}

/// The effective rest angle θ0' and compliance α' of a hinge damped by γ = `gamma`
/// (module docs, "Damping"), whose particles were at `start` when the frame began; a rigid
/// hinge (`compliance` 0) and one degenerate at `start` keep their rest angle.
#[inline]
pub fn damped(start: [Vec3; 4], rest_angle: f32, compliance: f32, gamma: f32) -> (f32, f32) {
    if compliance == 0.0 {
        return (rest_angle, 0.0);
    }
    let start_angle = dihedral_angle(start[0], start[1], start[2], start[3]);
    let rest = start_angle.map_or(rest_angle, |theta| {
        rest_angle + gamma / (1.0 + gamma) * wrap_angle(theta - rest_angle)
    });
    (rest, compliance / (1.0 + gamma))
}

/// [`wrap_angle`] without the floating-point remainder for the usual case: θ and θ0 both lie
/// in (−π, π], so their difference needs at most one turn added or removed.
#[inline]
pub(crate) fn wrap_difference(a: f32) -> f32 {
    use std::f32::consts::{PI, TAU};
    if a > PI && a < 3.0 * PI {
        a - TAU
    } else if a <= -PI && a > -3.0 * PI {
        a + TAU
    } else if a.abs() <= PI {
        a
    } else {
        wrap_angle(a)
    }
}
