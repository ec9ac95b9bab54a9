//! Per-step statistics: what the app's stats panel and the CLI's JSON line report.

use super::cloth::Cloth;
use super::model::EdgeKind;
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
}

impl StepStats {
    /// Measures `cloth` after a step whose substep length was `h` seconds.
    pub fn measure(cloth: &Cloth, material: &Material, h: f32) -> Self {
        let p = cloth.particles();
        let kinetic_energy = (0..p.len())
            .filter(|&i| p.inverse_mass(i) > 0.0)
            .map(|i| 0.5 * p.mass(i, material.areal_density) as f64 * p.velocity(i).length_squared() as f64)
            .sum();
        let (mut max_strain, mut sum, mut count, mut max_tension) = (0.0f32, 0.0f64, 0usize, 0.0f32);
        let pos = &cloth.particles.pos;
        let inv_h2 = 1.0 / (h * h);
        for batch in cloth.distances.iter_batches() {
            // A phase's batches hold one kind, so this branch is predictable.
            for slot in (0..batch.id.len()).filter(|&slot| batch.kind[slot] == EdgeKind::Stretch) {
                let (a, b, rest) = (pos.get(batch.a[slot] as usize), pos.get(batch.b[slot] as usize), batch.rest[slot]);
                let len = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
                let strain = if rest > 0.0 { (len - rest) / rest } else { 0.0 };
                max_strain = max_strain.max(strain);
                sum += strain.abs() as f64;
                count += 1;
                max_tension = max_tension.max(-batch.lambda[slot] * inv_h2);
            }
        }
        Self {
            particles: p.len(),
            constraints: cloth.constraint_count(),
            kinetic_energy,
            max_strain,
            mean_strain: if count > 0 { (sum / count as f64) as f32 } else { 0.0 },
            max_tension,
            torn_edges: cloth.torn_edges(),
            step_ms: 0.0,
        }
    }
}
