//! Distance constraints C = |x_a − x_b| − L (docs/physics.md §1), with constraint damping
//! (§3).
//!
//! With d = x_a − x_b and n = d/|d|: ∇_a C = n, ∇_b C = −n, so
//! Δλ = (−C − α̃λ)/(w_a + w_b + α̃), x_a += w_a Δλ n, x_b −= w_b Δλ n. The engine evaluates
//! it as f = Δλ/|d| (one division), Δλ = f |d|, Δx_a = w_a f d, Δx_b = −w_b f d; so does
//! this file. Skipped when |d| ≤ [`MIN_LENGTH`] or the denominator is not positive.
//!
//! **Damping** (XPBD eq. 26, γ = α β/h):
//! Δλ = (−C − α̃λ − γ n·(Δx_a − Δx_b))/((1 + γ)(w_a + w_b) + α̃), Δx the ends' motions since
//! the substep's start ((x − x_prev) + (comp − comp_prev)), evaluated as the engine's `solve_damped` does (f = Δλ/|d| with the
//! damping term d·(Δx_a − Δx_b)/|d|). Rigid edges (α = 0) have γ = 0 and round as undamped.
//!
//! **Sweep order.** By edge kind (stretch, shear, bend), then index distance |b − a| (the
//! edge's direction on a grid numbered row by row), then model order: the order of a
//! straightforward loop over a grid. A mesh numbered any other way has nearly one direction
//! per edge; when the kinds and directions come to more than 64, the engine colours each kind
//! greedily instead (the same fixed point, another Gauss–Seidel order), and so does this file.

use super::{greedy_colour_order, RefParticle};
use crate::sim::constraints::distance::MIN_LENGTH;
use crate::sim::model::{EdgeKind, Model};
use crate::sim::params::Material;

/// Most (kind, direction) runs a sweep follows; beyond, it goes by colours (the engine's
/// `MAX_KEYED_PHASES`).
const MAX_GRID_RUNS: usize = 64;

/// The distance constraints in sweep order with their multipliers.
#[derive(Debug, Clone)]
pub(super) struct Distances {
    constraints: Vec<Distance>,
    lambda: Vec<f32>,
    /// β/h of this substep in N/m (γ = α β/h; 0 while undamped).
    damping_over_h: f32,
}

#[derive(Debug, Clone, Copy)]
struct Distance {
    a: usize,
    b: usize,
    /// Rest length L in m.
    rest: f32,
    /// Compliance α in m/N.
    compliance: f32,
}

impl Distances {
    /// `model`'s distance constraints under `material`, in sweep order.
    pub fn new(model: &Model, material: &Material) -> Self {
        let key = |k: usize| {
            let c = &model.distances[k];
            (c.kind as u8, c.b.abs_diff(c.a))
        };
        let mut order: Vec<usize> = (0..model.distances.len()).collect();
        order.sort_by_key(|&k| key(k));
        let runs = order.chunk_by(|&j, &k| key(j) == key(k)).count();
        if runs > MAX_GRID_RUNS {
            let ends = |k: usize| (k, [model.distances[k].a as usize, model.distances[k].b as usize]);
            order = [EdgeKind::Stretch, EdgeKind::Shear, EdgeKind::Bend]
                .into_iter()
                .flat_map(|kind| {
                    let of_kind = (0..model.distances.len()).filter(|&k| model.distances[k].kind == kind);
                    greedy_colour_order(of_kind.map(ends), model.particle_count())
                })
                .collect();
        }
        let constraints: Vec<Distance> = order
            .into_iter()
            .map(|k| {
                let c = &model.distances[k];
                Distance {
                    a: c.a as usize,
                    b: c.b as usize,
                    rest: c.rest,
                    compliance: material.distance_compliance(c),
                }
            })
            .collect();
        Self {
            lambda: vec![0.0; constraints.len()],
            constraints,
            damping_over_h: 0.0,
        }
    }

    /// Number of constraints.
    pub fn len(&self) -> usize {
        self.constraints.len()
    }

    /// Start of a substep (after the prediction): λ = 0, and the damping β/h
    /// (`damping_over_h`, N/m) of its sweeps.
    pub fn start_substep(&mut self, damping_over_h: f32) {
        self.lambda.fill(0.0);
        self.damping_over_h = damping_over_h;
    }

    /// One sweep over every constraint in order (`inv_h2` = 1/h²); corrections summed
    /// compensated when `compensated`.
    pub fn sweep(&mut self, particles: &mut [RefParticle], inv_h2: f32, compensated: bool) {
        for (c, lambda) in self.constraints.iter().zip(self.lambda.iter_mut()) {
            let (pa, pb) = (particles[c.a], particles[c.b]);
            let d = pa.x - pb.x;
            let len = (d.x * d.x + d.y * d.y + d.z * d.z).sqrt();
            let alpha_tilde = c.compliance * inv_h2;
            let damped = self.damping_over_h > 0.0 && c.compliance > 0.0;
            let gamma = if damped { c.compliance * self.damping_over_h } else { 0.0 };
            let denom = if damped {
                (1.0 + gamma) * (pa.w + pb.w) + alpha_tilde
            } else {
                pa.w + pb.w + alpha_tilde
            };
            if !(len > MIN_LENGTH && denom > 0.0) {
                continue;
            }
            // Δλ = (−C − α̃λ − γ n·Δ)/denom moves x_a by w_a Δλ d/|d|: f = Δλ/|d| in one division.
            let undamped = c.rest - len - alpha_tilde * *lambda;
            let numerator = if damped {
                let relative = ((pa.x - pa.prev) + (pa.comp - pa.comp_prev)) - ((pb.x - pb.prev) + (pb.comp - pb.comp_prev));
                let along = (d.x * relative.x + d.y * relative.y + d.z * relative.z) / len;
                undamped - gamma * along
            } else {
                undamped
            };
            let f = numerator / (denom * len);
            *lambda += f * len;
            particles[c.a].shift(pa.w * f * d, compensated);
            particles[c.b].shift(-(pb.w * f * d), compensated);
        }
    }
}
