//! When an edge fails, which fails first, and which way the crack opens (docs/physics.md §8).
//!
//! **The criterion.** Once per frame, on the frame's final positions, every live stretch edge's
//! engineering strain ε, read from the strain field averaged over the tear length
//! ([`super::field`]; an edge's own (l − l0)/l0 where no triangle carries the field), is folded
//! into a running average
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
//! **The split.** Woven cloth tears along its yarns: the crack advances by breaking the yarns
//! that cross it, one after the other, and runs along the other family (a tear follows the
//! grain, as the tongue and trouser tear tests of textiles show), across the largest principal
//! strain (mode I). The stretch edges are the yarns. At a crack tip or a border the crack runs
//! on along the inner yarn the field at the vertex opens most (see
//! [`super::TearEditor::crack_extensions`]); at an interior vertex the split plane passes
//! through it normal to the yarn the field stretches most, êᵀEê ([`loaded_yarns`]), in the
//! rest shape, which keeps the crack on the weave however the cloth is sheared around a grab.

use glam::Vec3;

use super::field::Sym3;

use super::super::model::{DistanceConstraint, EdgeKind};
use super::super::params::Material;

/// Fraction of the way the running average moves toward this frame's strain: 1 − e^(−Δt/τ),
/// 1 for τ = 0.
pub(super) fn smoothing_blend(dt: f32, response_time: f32) -> f32 {
    if response_time > 0.0 {
        -(-dt / response_time).exp_m1()
    } else {
        1.0
    }
}

/// When the edges of one material fail, for frames of one length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Criterion {
    /// ε_max: the engineering strain at which an edge of full strength fails.
    pub tear_strain: f32,
    /// The running average's [`smoothing_blend`] over one frame.
    pub blend: f32,
}

impl Criterion {
    /// `material`'s criterion for frames of `dt` seconds; `None` when it does not tear.
    pub fn of(material: &Material, dt: f32) -> Option<Self> {
        Some(Criterion {
            tear_strain: material.tear_strain?,
            blend: smoothing_blend(dt, material.tear_response_time),
        })
    }
}

/// What the criterion remembers of each distance constraint, by id. Entries past the end of
/// each list hold its default, so new constraints need no entry.
#[derive(Debug, Clone, Default)]
pub(super) struct StrainHistory {
    /// Multiplier on the tear strain (debilitation); missing = 1.
    weakness: Vec<f32>,
    /// Already failed once (its vertex was split); missing = false.
    spent: Vec<bool>,
    /// The strain averaged over the material's `tear_response_time`; missing = 0.
    smoothed: Vec<f32>,
}

impl StrainHistory {
    /// Drops every running average (tearing is off: they restart from 0 when it is back on).
    pub fn forget_averages(&mut self) {
        self.smoothed.clear();
    }

    /// Whether edge `id` already failed once (it is not checked again).
    pub fn is_spent(&self, id: u32) -> bool {
        self.spent.get(id as usize).copied().unwrap_or(false)
    }

    /// Records that edge `id` failed.
    pub fn mark_spent(&mut self, id: u32) {
        if self.spent.len() <= id as usize {
            self.spent.resize(id as usize + 1, false);
        }
        self.spent[id as usize] = true;
    }

    /// Folds this frame's `strain` of edge `id` into its running average; returns how far the
    /// average is past the edge's threshold (`criterion`'s tear strain × weakness), as
    /// average / threshold, when the average and the strain both exceed it.
    pub fn fold(&mut self, id: u32, strain: f32, criterion: Criterion) -> Option<f32> {
        let i = id as usize;
        if self.smoothed.len() <= i {
            self.smoothed.resize(i + 1, 0.0);
        }
        let average = &mut self.smoothed[i];
        *average += (strain - *average) * criterion.blend;
        let threshold = criterion.tear_strain * self.weakness.get(i).copied().unwrap_or(1.0);
        if *average > threshold && strain > threshold {
            Some(*average / threshold)
        } else {
            None
        }
    }

    /// Multiplies edge `id`'s weakness by `factor` (a debilitation; 1 leaves it).
    pub fn weaken(&mut self, id: u32, factor: f32) {
        if factor >= 1.0 {
            return;
        }
        let w = &mut self.weakness;
        if w.len() <= id as usize {
            w.resize(id as usize + 1, 1.0);
        }
        w[id as usize] *= factor;
    }

    /// Gives edge `twin`, the other side of edge `id` split by a crack, `id`'s averaged strain
    /// and weakness: it is the same piece of cloth.
    pub fn inherit(&mut self, id: u32, twin: u32) {
        copy_entry(&mut self.smoothed, id, twin, 0.0);
        copy_entry(&mut self.weakness, id, twin, 1.0);
    }
}

/// Sets `values[to]` to `values[from]`, reading and padding with `missing` past the end.
fn copy_entry(values: &mut Vec<f32>, from: u32, to: u32, missing: f32) {
    let value = values.get(from as usize).copied().unwrap_or(missing);
    if values.len() <= to as usize {
        values.resize(to as usize + 1, missing);
    }
    values[to as usize] = value;
}

/// Orders failing edges, (average / threshold, id) as [`StrainHistory::fold`] gives them, the
/// way they tear: those `at_tip` (a crack tip) first, then furthest past the threshold first,
/// ties by id (see the module docs).
pub(super) fn worst_first(failing: &mut [(f32, u32)], at_tip: impl Fn(u32) -> bool) {
    failing.sort_by(|x, y| at_tip(y.1).cmp(&at_tip(x.1)).then(y.0.total_cmp(&x.0)).then(x.1.cmp(&y.1)));
}

/// The yarns at a vertex a tear may split across, most loaded first: of the vertex's distance
/// constraints `at_vertex` (ids into `edges`), its stretch edges stretched under the averaged
/// Green `strain` at the vertex (rest-space coordinates, see [`super::field`]), ordered by the
/// strain along them, êᵀEê, each as its unit direction ê in the `rest` shape (ties by id).
pub(super) fn loaded_yarns(at_vertex: &[u32], edges: &[DistanceConstraint], rest: &[Vec3], strain: Sym3) -> Vec<Vec3> {
    let mut yarns: Vec<(f32, u32, Vec3)> = Vec::new();
    for &id in at_vertex {
        let c = &edges[id as usize];
        if c.kind != EdgeKind::Stretch {
            continue;
        }
        let along = rest_direction(c, rest);
        let load = strain.along(along);
        if load > 0.0 {
            yarns.push((load, id, along));
        }
    }
    yarns.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
    yarns.into_iter().map(|(_, _, along)| along).collect()
}

/// Unit direction of distance constraint `c` in the `rest` shape.
pub(super) fn rest_direction(c: &DistanceConstraint, rest: &[Vec3]) -> Vec3 {
    (rest[c.b as usize] - rest[c.a as usize]).normalize_or_zero()
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::{smoothing_blend, worst_first, Criterion, StrainHistory};
    use crate::sim::cloth::Cloth;
    use crate::sim::grid::{GridSpec, Orientation, PinMode};
    use crate::sim::params::Material;

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
            let yarns = cloth.edit_topology(|e| {
                e.ensure_topology_and(|e| {
                    e.measure_field(0.0);
                    e.loaded_yarns(spec.index(2, 2))
                })
            });
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

    /// Half-way blends: the average goes 0.075, 0.1125 under a held strain of 0.15, so the
    /// edge fails at the second check; relieved, it does not, though its average lags above.
    #[test]
    fn an_edge_fails_when_its_average_and_its_strain_both_pass_the_weakened_threshold() {
        let criterion = Criterion {
            tear_strain: 0.1,
            blend: 0.5,
        };
        let mut history = StrainHistory::default();
        assert_eq!(history.fold(3, 0.15, criterion), None);
        let excess = history.fold(3, 0.15, criterion).expect("the average 0.1125 is past 0.1");
        assert!((excess - 1.125).abs() < 1e-6, "{excess}");
        let slow = Criterion { blend: 0.1, ..criterion };
        assert_eq!(history.fold(3, 0.02, slow), None, "the average 0.103 is past, the strain is not");
        // Weakened to half its strength, a fresh edge fails at 0.06 (averages 0.06 at once).
        history.weaken(5, 0.5);
        let once = Criterion { blend: 1.0, ..criterion };
        assert!(history.fold(5, 0.06, once).is_some());
        assert!(history.fold(4, 0.06, once).is_none(), "edge 4 keeps its strength");
        // The twin of a split edge fails as the edge would.
        history.inherit(5, 9);
        assert!(history.fold(9, 0.06, once).is_some());
    }

    #[test]
    fn edges_at_a_crack_tip_tear_first_then_the_furthest_past_their_threshold() {
        let mut failing = vec![(1.5, 7), (2.0, 3), (1.2, 9), (2.0, 1)];
        worst_first(&mut failing, |id| id == 9);
        assert_eq!(failing.iter().map(|f| f.1).collect::<Vec<_>>(), [9, 1, 3, 7]);
    }
}
