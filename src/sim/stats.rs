//! Per-step statistics: what the app's stats panel and the CLI's JSON line report.

use super::cloth::Cloth;
use super::constraints::distance::{strain_sums, Kernel, StrainSums};
use super::params::Material;

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
    /// Wall time of the step in ms.
    pub step_ms: f64,
    /// Threads the solver ran on (1 or 2; 1 also when the two-thread pool was busy stepping
    /// another cloth).
    pub threads: u32,
}

impl StepStats {
    /// Measures `cloth` after a step whose substep length was `h` seconds.
    pub fn measure(cloth: &Cloth, material: &Material, h: f32) -> Self {
        let p = cloth.particles();
        let kinetic_energy = (0..p.len())
            .filter(|&i| p.inverse_mass(i) > 0.0)
            .map(|i| 0.5 * p.mass(i, material.areal_density) as f64 * p.velocity(i).length_squared() as f64)
            .sum();
        let pos = &cloth.particles.pos;
        // The solver relies on the same bound for every constraint index.
        assert!(cloth.distances.particle_count() <= pos.len());
        let kernel = Kernel::detect();
        let sums = cloth
            .distances
            .iter_batches()
            // SAFETY: indices are below the schedule's particle count, checked above.
            .map(|batch| unsafe { strain_sums(kernel, pos, batch) })
            .fold(StrainSums::default(), StrainSums::merge);
        Self {
            particles: p.len(),
            constraints: cloth.constraint_count(),
            kinetic_energy,
            max_strain: sums.max_strain,
            mean_strain: if sums.count > 0 {
                (sums.abs_sum / sums.count as f64) as f32
            } else {
                0.0
            },
            max_tension: sums.max_neg_lambda / (h * h),
            torn_edges: cloth.torn_edges(),
            step_ms: 0.0,
            threads: 1,
        }
    }
}
