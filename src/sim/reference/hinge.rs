//! Dihedral bending hinges (docs/physics.md §1–§3).
//!
//! A hinge joins two triangles across their shared edge p2 → p3 (wings p0, p1). Its
//! constraint is C = θ − θ0, θ the signed dihedral angle, the difference wrapped into
//! (−π, π] so a hinge never takes the long way round; θ and its gradients ∇_i θ are those of
//! [`dihedral_gradients`] (docs/physics.md §2). The XPBD update:
//!
//! ```text
//! Δλ = (−C − α̃λ)/(Σ_i w_i |∇_i θ|² + α̃),   λ += Δλ,   x_i += w_i Δλ ∇_i θ
//! ```
//!
//! skipped when the hinge is degenerate or the denominator is ≤ 1e-30 or not finite. The
//! engine sweeps hinges by greedy colour (hinges of one colour share no particle), and so
//! does this file.
//!
//! **Damping.** A hinge's compliance is in 1/(N·m), so the distances' γ = α β/h would mix
//! units. Bending is damped as a Kelvin–Voigt material with the stretch's retardation time
//! τ = β α_unit (α_unit the stretch compliance per unit coefficient), measured over the frame:
//! γ = τ/Δt, θ0' = θ0 + γ/(1 + γ) · wrap(θ_start − θ0), α' = α/(1 + γ), θ_start the hinge's
//! angle at the start of the frame (θ0 where it is degenerate). Rigid hinges (α = 0) are not
//! damped.

use super::{greedy_colour_order, RefParticle};
use crate::sim::constraints::bend::{dihedral_angle, dihedral_gradients, wrap_angle};
use crate::sim::constraints::hinge::wrap_difference;
use crate::sim::model::Model;
use crate::sim::params::Material;

/// The hinges in sweep order (greedy colours) with their multipliers.
#[derive(Debug, Clone)]
pub(super) struct Hinges {
    hinges: Vec<Hinge>,
    lambda: Vec<f32>,
    /// Each hinge's (θ0', α') this frame; empty while undamped.
    damped: Vec<(f32, f32)>,
}

#[derive(Debug, Clone, Copy)]
struct Hinge {
    /// p0, p1 (wings), p2, p3 (shared edge).
    particles: [usize; 4],
    /// Rest angle θ0 in radians.
    rest_angle: f32,
    /// Compliance α in 1/(N·m).
    compliance: f32,
}

impl Hinges {
    /// `model`'s hinges under `material`, coloured greedily in model order.
    pub fn new(model: &Model, material: &Material) -> Self {
        let particles = |k: usize| {
            let h = &model.hinges[k];
            [h.wings[0], h.wings[1], h.edge[0], h.edge[1]].map(|i| i as usize)
        };
        let order = greedy_colour_order((0..model.hinges.len()).map(|k| (k, particles(k))), model.particle_count());
        let hinges: Vec<Hinge> = order
            .into_iter()
            .map(|k| Hinge {
                particles: particles(k),
                rest_angle: model.hinges[k].rest_angle,
                compliance: material.hinge_compliance(&model.hinges[k]),
            })
            .collect();
        Self {
            lambda: vec![0.0; hinges.len()],
            hinges,
            damped: Vec::new(),
        }
    }

    /// Number of hinges.
    pub fn len(&self) -> usize {
        self.hinges.len()
    }

    /// Start of a frame: with `gamma` = τ/Δt > 0, every compliant hinge's θ0' and α' from the
    /// particles' positions now.
    pub fn start_frame(&mut self, particles: &[RefParticle], gamma: f32) {
        self.damped.clear();
        if gamma > 0.0 {
            let effective = |h: &Hinge| {
                if h.compliance == 0.0 {
                    return (h.rest_angle, 0.0);
                }
                let [p0, p1, p2, p3] = h.particles.map(|i| particles[i].x);
                let rest = dihedral_angle(p0, p1, p2, p3).map_or(h.rest_angle, |theta| {
                    h.rest_angle + gamma / (1.0 + gamma) * wrap_angle(theta - h.rest_angle)
                });
                (rest, h.compliance / (1.0 + gamma))
            };
            self.damped.extend(self.hinges.iter().map(effective));
        }
    }

    /// Start of a substep: λ = 0.
    pub fn start_substep(&mut self) {
        self.lambda.fill(0.0);
    }

    /// One sweep over every hinge in order (`inv_h2` = 1/h²).
    pub fn sweep(&mut self, particles: &mut [RefParticle], inv_h2: f32) {
        let damped = !self.damped.is_empty();
        for (j, (h, lambda)) in self.hinges.iter().zip(self.lambda.iter_mut()).enumerate() {
            let (rest_angle, compliance) = if damped { self.damped[j] } else { (h.rest_angle, h.compliance) };
            let p = h.particles.map(|i| particles[i].x);
            let Some((theta, grads)) = dihedral_gradients(p[0], p[1], p[2], p[3]) else {
                continue;
            };
            let w = h.particles.map(|i| particles[i].w);
            let weighted: f32 = (0..4).map(|i| w[i] * grads[i].length_squared()).sum();
            let alpha_tilde = compliance * inv_h2;
            let denom = weighted + alpha_tilde;
            if denom <= 1e-30 || !denom.is_finite() {
                continue;
            }
            let c = wrap_difference(theta - rest_angle);
            let dl = (-c - alpha_tilde * *lambda) / denom;
            *lambda += dl;
            for i in 0..4 {
                particles[h.particles[i]].x = p[i] + w[i] * dl * grads[i];
            }
        }
    }
}
