//! Per-step statistics: what the app's stats panel and the CLI's JSON line report.

#[cfg(target_arch = "x86_64")]
use super::constraints::distance::avx2;
use super::constraints::distance::{strain, DistanceBatch, Kernel};
use super::constraints::{Batch, ConstraintSet};
use super::model::EdgeKind;
use super::particles::{Particles, Positions};

/// Wall time of a step's phases in ms, summed over its substeps. With several threads it is
/// thread 0's view: a phase includes the time that thread waited in it for the others.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseTimes {
    /// Air forces, gravity, damping, moving particles and deriving velocities.
    pub predict_ms: f64,
    /// Distance (stretch and shear) constraints.
    pub distances_ms: f64,
    /// Bending hinges (and the constraints re-pointed by tearing).
    pub hinges_ms: f64,
    /// Tethers, collider contacts and friction.
    pub contacts_ms: f64,
    /// The tear check and vertex splits.
    pub tearing_ms: f64,
    /// Self-contacts: the spatial hash and pair list once per frame, and their projection in
    /// every sweep (0 while self-collision is off).
    pub self_contacts_ms: f64,
}

/// Adds the time since the last lap to one phase; a handful of clock reads per substep.
pub(crate) struct PhaseClock {
    last: std::time::Instant,
    /// Seconds per phase: predict, distances, hinges, contacts, self-contacts.
    seconds: [f64; 5],
}

impl PhaseClock {
    pub(crate) const PREDICT: usize = 0;
    pub(crate) const DISTANCES: usize = 1;
    pub(crate) const HINGES: usize = 2;
    pub(crate) const CONTACTS: usize = 3;
    pub(crate) const SELF_CONTACTS: usize = 4;

    pub(crate) fn start() -> Self {
        Self {
            last: std::time::Instant::now(),
            seconds: [0.0; 5],
        }
    }

    /// Charges the time since the previous lap to `phase`.
    pub(crate) fn lap(&mut self, phase: usize) {
        let now = std::time::Instant::now();
        self.seconds[phase] += now.duration_since(self.last).as_secs_f64();
        self.last = now;
    }

    pub(crate) fn times(&self) -> PhaseTimes {
        let ms = self.seconds.map(|s| s * 1e3);
        PhaseTimes {
            predict_ms: ms[Self::PREDICT],
            distances_ms: ms[Self::DISTANCES],
            hinges_ms: ms[Self::HINGES],
            contacts_ms: ms[Self::CONTACTS],
            tearing_ms: 0.0,
            self_contacts_ms: ms[Self::SELF_CONTACTS],
        }
    }
}

/// Measurements taken at the end of a step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepStats {
    /// Number of particles.
    pub particles: usize,
    /// Live constraints (distances + hinges).
    pub constraints: usize,
    /// Kinetic energy ½ Σ m v² of the free particles in J.
    pub kinetic_energy: f64,
    /// Largest engineering strain (l − l0)/l0 over the stretch edges.
    pub max_strain: f32,
    /// Mean |strain| over the stretch edges.
    pub mean_strain: f32,
    /// Largest stretch-edge tension in N during the last substep (−λ/h²).
    pub max_tension: f32,
    /// Edges torn by strain or cut since the cloth was built.
    pub torn_edges: usize,
    /// Self-contacts (particle pairs closer than their contact distance) projected in the
    /// last sweep of the step (0 while self-collision is off).
    pub self_contacts: usize,
    /// Wall time of the step in ms.
    pub step_ms: f64,
    /// Threads the solver ran on: [`super::Cloth::threads_used`], or 1 if the OS refused the
    /// threads.
    pub threads: u32,
    /// Where the step's time went.
    pub phases: PhaseTimes,
}

impl StepStats {
    /// Measures particles `p` (particle i weighing `mass(i)` kg) and the distance constraints
    /// after a step whose substep length was `h` seconds (`constraints` and `torn_edges` are
    /// left for the caller).
    pub(crate) fn measure(p: &Particles, distances: &ConstraintSet<DistanceBatch>, mass: impl Fn(usize) -> f32, h: f32) -> Self {
        let kinetic_energy = (0..p.len())
            .filter(|&i| p.inverse_mass(i) > 0.0)
            .map(|i| 0.5 * mass(i) as f64 * p.velocity(i).length_squared() as f64)
            .sum();
        let pos = &p.pos;
        // The solver relies on the same bound for every constraint index.
        assert!(distances.particle_count() <= pos.len());
        let kernel = Kernel::detect();
        let sums = distances
            .iter_batches()
            // SAFETY: indices are below the schedule's particle count, checked above.
            .map(|batch| unsafe { strain_sums(kernel, pos, batch) })
            .fold(StrainSums::default(), StrainSums::merge);
        Self {
            particles: p.len(),
            constraints: 0,
            kinetic_energy,
            max_strain: sums.max_strain,
            mean_strain: if sums.count > 0 {
                (sums.abs_sum / sums.count as f64) as f32
            } else {
                0.0
            },
            max_tension: sums.max_neg_lambda / (h * h),
            torn_edges: 0,
            self_contacts: 0,
            step_ms: 0.0,
            threads: 1,
            phases: PhaseTimes::default(),
        }
    }
}

/// Strain statistics of a batch's stretch edges (other kinds are skipped).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct StrainSums {
    /// Largest engineering strain (l − l0)/l0, at least 0.
    pub max_strain: f32,
    /// Σ |strain|.
    pub abs_sum: f64,
    /// Number of stretch edges.
    pub count: usize,
    /// Largest −λ (N·s²), at least 0: the largest tension times h².
    pub max_neg_lambda: f32,
}

impl StrainSums {
    /// Adds one edge; `strain` as [`strain`] gives it.
    fn add(&mut self, strain: f32, lambda: f32) {
        self.max_strain = self.max_strain.max(strain);
        self.abs_sum += strain.abs() as f64;
        self.count += 1;
        self.max_neg_lambda = self.max_neg_lambda.max(-lambda);
    }

    /// Both sets together.
    pub fn merge(self, other: Self) -> Self {
        StrainSums {
            max_strain: self.max_strain.max(other.max_strain),
            abs_sum: self.abs_sum + other.abs_sum,
            count: self.count + other.count,
            max_neg_lambda: self.max_neg_lambda.max(other.max_neg_lambda),
        }
    }
}

/// [`StrainSums`] of the stretch edges of `batch`: eight per AVX2 vector when the batch holds
/// only stretch edges ([`avx2::strain_sums`]), else one at a time.
///
/// # Safety
/// Every particle index in `batch` must be in bounds of `pos` (a [`ConstraintSet`]'s particle
/// count at most `pos.len()`).
unsafe fn strain_sums(kernel: Kernel, pos: &Positions, batch: &DistanceBatch) -> StrainSums {
    // SAFETY: the caller upholds this function's # Safety contract: every particle index in `batch`
    // must be in bounds of `pos` (a `ConstraintSet`'s particle count at most `pos.len()`).
    unsafe {
        let mut sums = StrainSums::default();
        let stretch = batch.stretch_count();
        if stretch == 0 {
            return sums;
        }
        let mut scalar_from = 0;
        #[cfg(target_arch = "x86_64")]
        if kernel.has_avx2() && stretch == batch.len() {
            (sums, scalar_from) = avx2::strain_sums(pos.read_only(), batch);
        }
        for slot in (scalar_from..batch.len()).filter(|&slot| batch.kind[slot] == EdgeKind::Stretch) {
            let (a, b) = (pos.get(batch.a[slot] as usize), pos.get(batch.b[slot] as usize));
            let len = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
            sums.add(strain(len, batch.rest[slot]), batch.lambda[slot]);
        }
        sums
    }
}

#[cfg(test)]
mod tests {
    use super::{strain, strain_sums, DistanceBatch, EdgeKind, Kernel, Positions};
    use crate::sim::cloth::Cloth;
    use crate::sim::collision::Collider;
    use crate::sim::constraints::distance::DistanceItem;
    use crate::sim::constraints::Batch;
    use crate::sim::grid::GridSpec;
    use crate::sim::params::{Material, SolverParams};

    fn item(a: u32, b: u32, rest: f32, compliance: f32) -> DistanceItem {
        DistanceItem::stretch(a, b, rest, compliance)
    }

    /// Strain statistics: a row of edges each stretched to (1 + k/10) of its rest length has
    /// strains k/10 exactly as computed; the vector path (contiguous, gathered, with a scalar
    /// rest) agrees with the scalar one.
    #[test]
    fn strain_sums_give_the_closed_form_strains_on_every_path() {
        // Particles 0..=n on the x axis, edge k from particle k to k + 1 with rest length 0.1
        // and actual length 0.1 · (1 + k/10); λ = −k.
        let n = 19u32;
        let mut x = 0.0f32;
        let mut pos = vec![[0.0, 0.0, 0.0, 1.0]];
        for k in 0..n {
            x += 0.1 * (1.0 + k as f32 / 10.0);
            pos.push([x, 0.0, 0.0, 1.0]);
        }
        let soa = Positions::from(pos.as_slice());
        let expected = |order: &[u32]| {
            let strains: Vec<f32> = order
                .iter()
                .map(|&k| strain(soa.arrays()[0][k as usize + 1] - soa.arrays()[0][k as usize], 0.1))
                .collect();
            (
                strains.iter().fold(0.0f32, |m, &s| m.max(s)),
                strains.iter().map(|&s| s.abs() as f64).sum::<f64>(),
            )
        };
        for order in [(0..n).collect::<Vec<u32>>(), (0..n).rev().collect()] {
            let mut batch = DistanceBatch::default();
            for &k in &order {
                batch.push(k, item(k, k + 1, 0.1, 0.0));
                *batch.lambda.last_mut().unwrap() = -(k as f32);
            }
            assert_eq!(batch.is_contiguous(), order[0] == 0);
            let (max_strain, abs_sum) = expected(&order);
            // The closed form, to the rounding of the positions.
            assert!((max_strain - 1.8).abs() < 1e-5, "{max_strain}");
            for kernel in [Kernel::Scalar, Kernel::detect()] {
                // SAFETY: indices below n + 1 = pos.len().
                let sums = unsafe { strain_sums(kernel, &soa, &batch) };
                assert_eq!(sums.count, n as usize);
                assert_eq!(sums.max_strain, max_strain, "{kernel:?}");
                assert_eq!(sums.max_neg_lambda, (n - 1) as f32, "{kernel:?}");
                assert!(
                    (sums.abs_sum - abs_sum).abs() < 1e-6 * abs_sum,
                    "{kernel:?}: {} vs {abs_sum}",
                    sums.abs_sum
                );
            }
            // A shear edge (stretched 10×) in the batch is not a stretch edge: same sums, on
            // the one-at-a-time path; removing it again restores the vector path's input.
            let shear = DistanceItem {
                kind: EdgeKind::Shear,
                ..item(0, n, 0.01, 0.0)
            };
            batch.push(n, shear);
            // SAFETY: as above.
            let with_shear = unsafe { strain_sums(Kernel::detect(), &soa, &batch) };
            assert_eq!((with_shear.count, with_shear.max_strain), (n as usize, max_strain));
            batch.swap_remove(n as usize);
            // SAFETY: as above.
            assert_eq!(unsafe { strain_sums(Kernel::detect(), &soa, &batch) }.count, n as usize);
        }
    }

    /// The phases are disjoint slices of the step, so they never add up to more than it, and
    /// a cloth with stretch edges and hinges spends time in both.
    #[test]
    fn phase_times_are_slices_of_the_step() {
        let spec = GridSpec {
            columns: 24,
            rows: 24,
            ..GridSpec::default()
        };
        let material = Material::default();
        let mut cloth = Cloth::new(
            spec.build().unwrap(),
            &material,
            vec![Collider::Ground { height: 0.0, motion: None }],
        )
        .unwrap();
        let params = SolverParams {
            threads: 1,
            ..SolverParams::default()
        };
        for _ in 0..3 {
            let stats = cloth.step(&params, &material).unwrap().clone();
            let p = stats.phases;
            let parts = [
                p.predict_ms,
                p.distances_ms,
                p.hinges_ms,
                p.contacts_ms,
                p.tearing_ms,
                p.self_contacts_ms,
            ];
            assert!(parts.iter().all(|t| t.is_finite() && *t >= 0.0), "{p:?}");
            assert!(p.distances_ms > 0.0 && p.hinges_ms > 0.0, "{p:?}");
            let sum: f64 = parts.iter().sum();
            assert!(sum <= stats.step_ms, "{sum} ms of phases in a {} ms step", stats.step_ms);
        }
    }
}
