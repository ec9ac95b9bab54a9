//! Per-step statistics: what the app's stats panel and the CLI's JSON line report.

use super::constraints::distance::{strain_sums, DistanceBatch, Kernel, StrainSums};
use super::constraints::ConstraintSet;
use super::particles::Particles;

/// Wall time of a step's phases in ms, summed over its substeps. With two threads it is thread
/// 0's view: a phase includes the time that thread waited in it for the other one.
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

#[cfg(test)]
mod tests {
    use crate::sim::{Cloth, Collider, GridSpec, Material, SolverParams};

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
