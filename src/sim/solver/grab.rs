//! The soft grab's constraints: what the mouse's hand does to the cloth in every sweep
//! (docs/physics.md §1, "The grab").
//!
//! A hand holds a patch of cloth, not a point: the particles within the grab radius R of the
//! hit point follow the cursor target t, each at its own offset o_i from the hit point as the
//! patch lay when it was grabbed (so the patch keeps its shape in the hand), through a
//! compliant attachment
//!
//! ```text
//! C_i = |x_i − (t + o_i)|,   α_i = α / s_i,   s_i = ω(d_i) / Σ_j ω(d_j),   ω(d) = 1 − d²/(2R²)
//! ```
//!
//! d_i the rest distance from the hit point, α the grab compliance: the shares s_i sum to 1, so
//! the patch as a whole is one spring of compliance α, and the particles near the centre hold
//! hardest. With radius 0 (or no particle within it) the hand holds the hit point itself,
//! p = Σ_k b_k x_k over the hit triangle's corners (C = |p − t|, ∇_k C = b_k n, as Ten Minute
//! Physics' grab but compliant).
//!
//! **The grip is bounded.** Fingers cannot pull cloth with any force: the pull of attachment i
//! is its multiplier over h² (XPBD: f = λ/h²), and λ_i is clamped to the share s_i F of the
//! grab force limit F (`SolverParams::grab_max_force`) in every projection,
//!
//! ```text
//! Δλ_i = (−C_i − α̃_i λ_i) / (w_i + α̃_i),   λ_i ← max(λ_i + Δλ_i, −s_i F h²),   x_i += w_i n_i Δλ_i
//! ```
//!
//! (λ ≤ 0: C ≥ 0 pulls toward the target). Where the cloth needs more than F to follow, the
//! grip slips: the patch stays where the cloth's pull balances F and the grab line shows the
//! gap to the cursor.
//!
//! **The hand and the tethers agree.** Each attachment aims at the point of its target that
//! the particle's tethers allow ([`Tethers::reachable`]; the hit point aims by its heaviest
//! corner's; on a cloth that tears the held particles have no tethers, so a pull can tear it), so when the cursor goes beyond the cloth's reach the patch stops at the reach,
//! taut, and slides along it toward the cursor (a curtain pulled sideways swings up about its
//! far pin). Aimed beyond the reach, the grab and the tethers would fight in every sweep: the
//! grab moved the patch out by as much as its force allowed, the tethers moved the patch back,
//! and the cloth around it, solved before both, was left stretched by the difference (112 %
//! on the default curtain pulled 0.77 m sideways).

use glam::Vec3;

use crate::sim::particles::{xyz, PosPtr};
use crate::sim::tethers::Tethers;

/// A particle of the grabbed patch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PatchPoint {
    /// The particle.
    pub particle: u32,
    /// Its offset from the hit point when grabbed (m): it is held at target + offset.
    pub offset: Vec3,
    /// Its share s_i of the grab's stiffness and force (the shares of a patch sum to 1).
    pub share: f32,
}

/// What the hand holds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum GrabShape<'a> {
    /// The point Σ b_k x_k of a triangle: its corners and their weights b_k (summing to 1).
    Point { vertices: [usize; 3], weights: [f32; 3] },
    /// A patch of particles around the hit point, the firmest first (not empty).
    Patch(&'a [PatchPoint]),
}

impl GrabShape<'_> {
    /// Number of multipliers the shape needs: one per attachment.
    pub fn attachments(&self) -> usize {
        match self {
            Self::Point { .. } => 1,
            Self::Patch(points) => points.len(),
        }
    }

    /// Every particle the shape moves.
    pub fn particles(&self) -> impl Iterator<Item = usize> + '_ {
        let (point, patch) = match self {
            Self::Point { vertices, .. } => (&vertices[..], &[][..]),
            Self::Patch(points) => (&[][..], *points),
        };
        point.iter().copied().chain(patch.iter().map(|p| p.particle as usize))
    }
}

/// The frame's soft grab.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SoftGrab<'a> {
    pub shape: GrabShape<'a>,
    /// The target at the start of the frame and at its end (m); substep s aims at
    /// lerp(from, to, (s + 1)/S), as the hard grab does.
    pub from: Vec3,
    pub to: Vec3,
    /// α̃ = α/h² of the whole grab (kg⁻¹).
    pub alpha_tilde: f32,
    /// The bound on the grab's multiplier, F h² (N·s², so kg·m): the force limit over a
    /// substep.
    pub max_lambda: f32,
}

impl SoftGrab<'_> {
    /// One projection of every attachment toward `target`, or as near it as `reach` (the
    /// frame's tethers, if any) allows, accumulating their multipliers in `lambdas` (one per
    /// attachment, reset by the caller on a substep's first sweep).
    ///
    /// # Safety
    /// The particles are in bounds of `pos`, and no other thread touches them during the call.
    pub unsafe fn project(&self, pos: PosPtr, target: Vec3, reach: Option<&Tethers>, lambdas: &mut [f32]) {
        debug_assert_eq!(lambdas.len(), self.shape.attachments());
        let reachable = |i: usize, x: Vec3| reach.map_or(x, |tethers| tethers.reachable(i, x));
        match self.shape {
            GrabShape::Point { vertices, weights } => {
                let heaviest = (0..3).fold(0, |best, k| if weights[k] > weights[best] { k } else { best });
                let target = reachable(vertices[heaviest], target);
                // SAFETY: the caller guarantees the particles in bounds and not shared.
                unsafe { self.project_point(pos, vertices, weights, target, &mut lambdas[0]) }
            }
            GrabShape::Patch(points) => {
                // The patch moves as a whole to where its firmest particle (the first) can
                // reach, then each particle as near its place there as it can reach, so the
                // patch keeps its shape along the reach instead of each particle sliding on
                // its own.
                let firmest = &points[0];
                let aim = target + firmest.offset;
                let target = target + (reachable(firmest.particle as usize, aim) - aim);
                for (point, lambda) in points.iter().zip(lambdas) {
                    let target = reachable(point.particle as usize, target + point.offset);
                    // SAFETY: as above.
                    unsafe { self.project_patch_point(pos, point.particle as usize, point.share, target, lambda) };
                }
            }
        }
    }

    /// The multiplier of an attachment of share `share` after adding `delta` to `lambda`,
    /// clamped to the grip's bound: returns the step actually taken.
    fn clamped(&self, lambda: &mut f32, delta: f32, share: f32) -> f32 {
        let next = (*lambda + delta).max(-self.max_lambda * share);
        let taken = next - *lambda;
        *lambda = next;
        taken
    }

    /// # Safety
    /// As [`Self::project`].
    unsafe fn project_point(&self, pos: PosPtr, vertices: [usize; 3], weights: [f32; 3], target: Vec3, lambda: &mut f32) {
        // SAFETY: the caller guarantees the vertices in bounds and not shared (see # Safety).
        unsafe {
            let [a, b, c] = vertices.map(|i| pos.get(i));
            let [ba, bb, bc] = weights;
            let p = xyz(a) * ba + xyz(b) * bb + xyz(c) * bc;
            let d = p - target;
            let length = d.length();
            // Σ w_k b_k² |∇C|², with |∇C| = |n| = 1.
            let denominator = a[3] * ba * ba + b[3] * bb * bb + c[3] * bc * bc + self.alpha_tilde;
            if length <= 1e-9 || denominator <= 0.0 {
                return;
            }
            let n = d / length;
            let delta = self.clamped(lambda, (-length - self.alpha_tilde * *lambda) / denominator, 1.0);
            for (k, (x, weight)) in [a, b, c].into_iter().zip(weights).enumerate() {
                let step = n * (x[3] * weight * delta);
                pos.shift(vertices[k], x, step.to_array());
            }
        }
    }

    /// # Safety
    /// As [`Self::project`].
    unsafe fn project_patch_point(&self, pos: PosPtr, i: usize, share: f32, target: Vec3, lambda: &mut f32) {
        // SAFETY: the caller guarantees the particle in bounds and not shared (see # Safety).
        let x = unsafe { pos.get(i) };
        let d = xyz(x) - target;
        let length = d.length();
        let alpha_tilde = self.alpha_tilde / share;
        let denominator = x[3] + alpha_tilde;
        if length <= 1e-9 || x[3] <= 0.0 || !denominator.is_finite() {
            return;
        }
        let delta = self.clamped(lambda, (-length - alpha_tilde * *lambda) / denominator, share);
        let step = d * (x[3] * delta / length);
        // SAFETY: as above.
        unsafe { pos.shift(i, x, step.to_array()) };
    }
}
