//! When an edge fails, which fails first, and which way the crack opens (docs/physics.md §8).
//!
//! **The criterion.** Once per frame, on the frame's final positions, every live stretch edge's
//! engineering strain ε = (l − l0)/l0 is folded into a running average
//!
//! ```text
//! ε̄ ← ε̄ + (ε − ε̄) · (1 − e^(−Δt/τ))          (τ = tear_response_time, Δt the frame)
//! ```
//!
//! and the edge fails when both ε̄ and ε exceed ε_max · weakness. Sampling the frame's end state
//! rather than the substeps' peaks, and averaging over a time in seconds rather than over a
//! number of samples, makes the criterion independent of the substep count and of the frame
//! rate: it reads the strain the cloth *holds*, not how finely the solver resolved a snap. A
//! flag whipping in a gust strains an edge past 50 % for a frame or two (0.65 for one frame in
//! `rip_the_flag`); with τ = 0.1 s that moves ε̄ by a sixth of the spike, while a pull held for
//! a few tenths of a second tears. τ = 0 reads the frame's strain alone. The average models
//! the time a yarn takes to give; it does not break a yarn the cloth no longer loads: an edge
//! whose tear was refused or postponed (the budget, a scrap) and which the cloth has since
//! relieved keeps a lagging ε̄ above the threshold, and without the second condition it broke
//! after a flick was let go, freeing an 8-triangle piece at 10 m/s.
//!
//! **Which fails first.** A crack tip concentrates stress, and a mesh with edges of a few
//! centimetres cannot resolve the concentration, so the tip is given priority explicitly:
//! failing edges touching a crack tip (the end of a crack inside the cloth, kept by
//! [`super::TearState`]) fail first, then the rest; within each, the edge furthest past its own
//! threshold (ε̄ / (ε_max · weakness)) first, ties by id. Without this a grabbed corner, where
//! every edge is past the threshold, nucleated cracks all round the grab and they joined into
//! a ring that cut the corner off; with it the crack that started runs on.
//!
//! **The split plane.** Woven cloth tears along its yarns: the crack advances by breaking the
//! yarns that cross it, one after the other, and runs along the other family (a tear follows
//! the grain, as the tongue and trouser tear tests of textiles show). The stretch edges are the
//! yarns. At the vertex being split, the virial stress σ = Σ T_e l_e ê_e ê_eᵀ over its
//! stretched stretch and shear edges (tension T_e = ε_e l0_e / α_e, length l_e, direction ê_e)
//! gives the load along each yarn, ê·σ·ê; the split plane passes through the vertex normal to
//! the most loaded yarn's direction, in the rest shape, and the triangles are assigned to a side
//! by their rest centroids. Using the rest shape keeps the crack on a row of the weave however
//! the cloth is sheared around a grab: on the deformed shape, a plane normal to the continuum's
//! principal stress (radial around a point load) curled the crack round the grabbed corner.

use glam::{Mat3, Vec3};

use super::super::constraints::distance;
use super::super::model::EdgeKind;
use super::TearEditor;

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
    /// the edges whose average and strain both exceed their threshold (`limit` × weakness) as
    /// (average / threshold, id). `criteria` holds each material slot's `(limit, blend)`
    /// (tear strain and smoothing blend), `None` for a material that does not tear, whose
    /// edges are skipped. Those at a crack tip first, then furthest past the threshold
    /// first, ties by id (see the module docs). Edges that already failed once are not checked
    /// again.
    pub(super) fn smooth_strains(&mut self, criteria: &[Option<(f32, f32)>]) -> Vec<(f32, u32)> {
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
                let Some((limit, blend)) = criteria[self.model.material[a] as usize] else {
                    continue;
                };
                let strain = distance::strain(self.particles.position(a).distance(self.particles.position(b)), batch.rest[slot]);
                let average = &mut state.smoothed[i];
                *average += (strain - *average) * blend;
                let threshold = limit * state.weakness.get(i).copied().unwrap_or(1.0);
                if *average > threshold && strain > threshold {
                    failing.push((*average / threshold, id));
                }
            }
        }
        let at_tip = |id: u32| {
            let c = &self.model.distances[id as usize];
            [c.a, c.b].iter().any(|v| self.tearing.tips.binary_search(v).is_ok())
        };
        failing.sort_by(|x, y| at_tip(y.1).cmp(&at_tip(x.1)).then(y.0.total_cmp(&x.0)).then(x.1.cmp(&y.1)));
        failing
    }

    /// The yarns at vertex `v` a tear may split across, most loaded first: its stretched
    /// stretch edges, ordered by the virial stress along them, ê·σ·ê (see the module docs),
    /// each as its unit direction in the rest shape (ties by id).
    pub(super) fn loaded_yarns(&self, v: u32) -> Vec<Vec3> {
        let stress = self.virial_stress(v);
        let mut yarns: Vec<(f32, u32)> = Vec::new();
        for &id in &self.topology().vertex_distances[v as usize] {
            let c = &self.model.distances[id as usize];
            if c.kind != EdgeKind::Stretch {
                continue;
            }
            let along = (self.particles.position(c.b as usize) - self.particles.position(c.a as usize)).normalize_or_zero();
            let load = along.dot(stress * along);
            if load > 0.0 {
                yarns.push((load, id));
            }
        }
        yarns.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        yarns.into_iter().map(|(_, id)| self.rest_direction(id)).collect()
    }

    /// Unit direction of distance constraint `id` in the rest shape.
    pub(super) fn rest_direction(&self, id: u32) -> Vec3 {
        let c = &self.model.distances[id as usize];
        (self.model.positions[c.b as usize] - self.model.positions[c.a as usize]).normalize_or_zero()
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
            let material = &self.materials[self.model.distance_material(c)];
            let tension = strain * c.rest / material.distance_compliance(c).max(RIGID_COMPLIANCE);
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

    /// A sheet stretched by 20 % along a direction θ from its rows: the stress along a yarn at
    /// angle φ to the stretch goes as cos² φ, so the rows' yarns are the most loaded below 45°
    /// and the columns' above, and the split plane is normal to them (in the rest shape).
    #[test]
    fn the_most_loaded_yarn_is_the_one_closest_to_the_stretch() {
        let spec = GridSpec {
            columns: 5,
            rows: 5,
            orientation: Orientation::Horizontal,
            pins: PinMode::None,
            ..GridSpec::default()
        };
        for (degrees, expected) in [(30.0f32, Vec3::X), (60.0, Vec3::Z)] {
            let mut cloth = Cloth::new(spec.build().unwrap(), &Material::default(), Vec::new()).unwrap();
            let (sin, cos) = degrees.to_radians().sin_cos();
            let stretch = Vec3::new(cos, 0.0, sin);
            for i in 0..cloth.particles().len() as u32 {
                let x = cloth.particles().position(i as usize);
                cloth.set_state(i, x + 0.2 * x.dot(stretch) * stretch, Vec3::ZERO).unwrap();
            }
            let yarns = cloth.edit_topology(|e| e.ensure_topology_and(|e| e.loaded_yarns(spec.index(2, 2))));
            assert!(yarns[0].dot(expected).abs() > 0.999, "{degrees}°: {yarns:?}");
            assert!(
                yarns.iter().all(|y| y.dot(expected).abs() > 0.999 || y.dot(expected).abs() < 1e-3),
                "{yarns:?}"
            );
        }
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
