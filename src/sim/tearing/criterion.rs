//! When an edge fails and which way the crack opens (docs/physics.md §8).
//!
//! **The criterion.** Once per frame, on the frame's final positions, every live stretch edge's
//! engineering strain ε = (l − l0)/l0 is folded into a running average
//!
//! ```text
//! ε̄ ← ε̄ + (ε − ε̄) · (1 − e^(−Δt/τ))          (τ = tear_response_time, Δt the frame)
//! ```
//!
//! and the edge fails when ε̄ > ε_max · weakness. Sampling the frame's end state rather than the
//! substeps' peaks, and averaging over a time in seconds rather than over a number of samples,
//! makes the criterion independent of the substep count and of the frame rate: it reads the
//! strain the cloth *holds*, not how finely the solver resolved a snap. A flag whipping in a
//! gust strains an edge past 50 % for a frame or two (0.65 for one frame in `rip_the_flag`);
//! with τ = 0.1 s that moves ε̄ by a sixth of the spike, while a pull held for a few tenths of
//! a second tears. τ = 0 reads the frame's strain alone.
//!
//! **The split plane.** A crack opens perpendicular to the largest principal stress at its tip.
//! At the vertex being split that direction is the dominant eigenvector of the virial sum
//! Σ T_e l_e ê_e ê_eᵀ over its stretched edges (tension T_e = ε_e l0_e / α_e, length l_e,
//! direction ê_e), found by power iteration from the failing edge's direction; the split plane
//! is normal to it.

use glam::{Mat3, Vec3};

use super::super::constraints::distance;
use super::super::model::EdgeKind;
use super::TearEditor;

/// Power-iteration steps for the principal stress direction: the 3 × 3 tensor's dominant
/// eigenvalue stands well clear of the others at a crack tip, and the start is already close.
const POWER_STEPS: usize = 12;

/// Compliance floor (m/N) when weighting a rigid (α = 0) edge's tension, which is then any
/// force the solve needed: such edges weigh equally per unit strain.
const RIGID_COMPLIANCE: f32 = 1e-12;

/// Fraction of the way the running average moves toward this frame's strain: 1 − e^(−Δt/τ),
/// 1 for τ = 0.
pub(super) fn smoothing_blend(dt: f32, response_time: f32) -> f32 {
    if response_time > 0.0 {
        -(-dt / response_time).exp_m1()
    } else {
        1.0
    }
}

impl TearEditor<'_> {
    /// Folds this frame's strain into every live stretch edge's running average and returns
    /// the edges whose average exceeds their threshold (`limit` × weakness) as (average, id),
    /// worst first, ties by id. Edges that already failed once are not checked again.
    pub(super) fn smooth_strains(&mut self, limit: f32, blend: f32) -> Vec<(f32, u32)> {
        let state = &mut self.tearing;
        state.smoothed.resize(self.model.distances.len(), 0.0);
        let mut failing = Vec::new();
        for batch in self.constraints.distances().iter_batches() {
            for (slot, &id) in batch.id.iter().enumerate() {
                let i = id as usize;
                if batch.kind[slot] != EdgeKind::Stretch || state.spent.get(i).copied().unwrap_or(false) {
                    continue;
                }
                let (a, b) = (batch.a[slot] as usize, batch.b[slot] as usize);
                let strain = distance::strain(self.particles.position(a).distance(self.particles.position(b)), batch.rest[slot]);
                let average = &mut state.smoothed[i];
                *average += (strain - *average) * blend;
                if *average > limit * state.weakness.get(i).copied().unwrap_or(1.0) {
                    failing.push((*average, id));
                }
            }
        }
        failing.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        failing
    }

    /// Direction of the largest principal stress at vertex `v` (see the module docs), or
    /// `guess` when no edge of `v` is stretched.
    pub(super) fn principal_stress_direction(&self, v: u32, guess: Vec3) -> Vec3 {
        let stress = self.virial_stress(v);
        let mut direction = guess;
        for _ in 0..POWER_STEPS {
            let next = (stress * direction).normalize_or_zero();
            if next == Vec3::ZERO {
                return guess;
            }
            direction = next;
        }
        direction
    }

    /// Σ T_e l_e ê_e ê_eᵀ over the stretched stretch and shear edges of `v` (N·m).
    fn virial_stress(&self, v: u32) -> Mat3 {
        let mut stress = Mat3::ZERO;
        for &id in &self.topology().vertex_distances[v as usize] {
            let c = &self.model.distances[id as usize];
            if c.kind == EdgeKind::Bend {
                continue;
            }
            let d = self.particles.position(c.b as usize) - self.particles.position(c.a as usize);
            let strain = distance::strain(d.length(), c.rest);
            if strain <= 0.0 {
                continue;
            }
            let tension = strain * c.rest / self.applied.distance_compliance(c).max(RIGID_COMPLIANCE);
            // T l ê êᵀ = (T / l) d dᵀ.
            let scale = tension / d.length();
            stress += Mat3::from_cols(d * d.x, d * d.y, d * d.z) * scale;
        }
        stress
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::smoothing_blend;
    use crate::sim::{Cloth, GridSpec, Material, Orientation, PinMode};

    /// A sheet stretched by 20 % along the diagonal of its grid: the principal stress at its
    /// centre lies along that diagonal, though every stretch edge (and the guess) is along an
    /// axis.
    #[test]
    fn the_principal_stress_follows_the_stretch_not_the_mesh_axes() {
        let spec = GridSpec {
            columns: 5,
            rows: 5,
            orientation: Orientation::Horizontal,
            pins: PinMode::None,
            ..GridSpec::default()
        };
        let mut cloth = Cloth::new(spec.build().unwrap(), &Material::default(), Vec::new()).unwrap();
        let diagonal = Vec3::new(1.0, 0.0, 1.0).normalize();
        for i in 0..cloth.particles().len() as u32 {
            let x = cloth.particles().position(i as usize);
            cloth.set_state(i, x + 0.2 * x.dot(diagonal) * diagonal, Vec3::ZERO).unwrap();
        }
        let centre = spec.index(2, 2);
        let direction = cloth.edit_topology(|e| e.ensure_topology_and(|e| e.principal_stress_direction(centre, Vec3::X)));
        assert!(direction.dot(diagonal).abs() > 0.99, "{direction}");
    }

    #[test]
    fn the_blend_is_one_without_a_response_time_and_follows_the_exponential_with_one() {
        assert_eq!(smoothing_blend(1.0 / 60.0, 0.0), 1.0);
        let blend = smoothing_blend(0.1, 0.1);
        assert!((blend - (1.0 - (-1.0f32).exp())).abs() < 1e-6, "{blend}");
        // Two half frames move the average as far as one whole frame.
        let half = smoothing_blend(0.05, 0.1);
        assert!((1.0 - (1.0 - half) * (1.0 - half) - blend).abs() < 1e-6);
    }
}
