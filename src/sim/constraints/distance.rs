//! Distance constraints C = |x_a − x_b| − L, one colour batch at a time.
//!
//! With n = (x_a − x_b)/|x_a − x_b|: ∇_a C = n, ∇_b C = −n, so the XPBD update is
//! Δλ = (−C − α̃λ − γ n·(Δx_a − Δx_b)) / ((1 + γ)(w_a + w_b) + α̃),
//! x_a += w_a Δλ n, x_b −= w_b Δλ n (the plus sign the seed article got wrong), with
//! α̃ = α/h² and γ = αβ/h (XPBD eq. 26; Δx the motion since the substep began).
//! Tension (N) is −λ/h².

use super::Batch;

/// Below this length (m) an edge has no direction; it is skipped, never divided by.
const MIN_LENGTH: f32 = 1e-9;

/// Particle data as the solver reads it: x, y, z in m and inverse mass in 1/kg.
pub type PosW = [f32; 4];

/// One distance constraint as handed to a batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DistanceItem {
    /// Endpoints.
    pub ends: [u32; 2],
    /// Rest length L in m.
    pub rest: f32,
    /// Effective compliance α in m/N.
    pub compliance: f32,
}

/// A colour batch in structure-of-arrays layout, so the projection loop streams contiguous
/// arrays.
#[derive(Debug, Default, Clone)]
pub struct DistanceBatch {
    /// First endpoints.
    pub a: Vec<u32>,
    /// Second endpoints.
    pub b: Vec<u32>,
    /// Rest lengths (m).
    pub rest: Vec<f32>,
    /// Compliances α (m/N).
    pub compliance: Vec<f32>,
    /// Lagrange multipliers of the current substep (N·s²).
    pub lambda: Vec<f32>,
    /// Model id of each slot.
    pub id: Vec<u32>,
}

impl Batch for DistanceBatch {
    type Item = DistanceItem;

    fn particles(item: &DistanceItem) -> &[u32] {
        &item.ends
    }

    fn push(&mut self, id: u32, item: DistanceItem) {
        self.a.push(item.ends[0]);
        self.b.push(item.ends[1]);
        self.rest.push(item.rest);
        self.compliance.push(item.compliance);
        self.lambda.push(0.0);
        self.id.push(id);
    }

    fn swap_remove(&mut self, index: usize) -> Option<u32> {
        self.a.swap_remove(index);
        self.b.swap_remove(index);
        self.rest.swap_remove(index);
        self.compliance.swap_remove(index);
        self.lambda.swap_remove(index);
        self.id.swap_remove(index);
        self.id.get(index).copied()
    }

    fn get(&self, index: usize) -> DistanceItem {
        DistanceItem {
            ends: [self.a[index], self.b[index]],
            rest: self.rest[index],
            compliance: self.compliance[index],
        }
    }

    fn len(&self) -> usize {
        self.id.len()
    }
}

impl DistanceBatch {
    /// Sets every λ to zero (start of a substep).
    pub fn reset_lambda(&mut self) {
        self.lambda.fill(0.0);
    }
}

/// Per-substep constants of the projection.
#[derive(Debug, Clone, Copy)]
pub struct SubstepConstants {
    /// 1/h² in 1/s².
    pub inv_h2: f32,
    /// β/h: constraint damping divided by the substep (N/m). γ = α · β/h.
    pub damping_over_h: f32,
}

/// Projects slots `range` of `batch` once. `prev` is only read when damping is on.
pub fn project(pos: &mut [PosW], prev: &[PosW], batch: &mut DistanceBatch, range: std::ops::Range<usize>, k: SubstepConstants) {
    for j in range {
        let (ia, ib) = (batch.a[j] as usize, batch.b[j] as usize);
        let (pa, pb) = (pos[ia], pos[ib]);
        let d = [pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]];
        let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let w = pa[3] + pb[3];
        let alpha_tilde = batch.compliance[j] * k.inv_h2;
        let gamma = batch.compliance[j] * k.damping_over_h;
        let denom = (1.0 + gamma) * w + alpha_tilde;
        if len < MIN_LENGTH || denom <= 0.0 {
            continue;
        }
        let n = [d[0] / len, d[1] / len, d[2] / len];
        let damping = if gamma > 0.0 {
            let (qa, qb) = (prev[ia], prev[ib]);
            gamma * ((0..3).map(|c| n[c] * ((pa[c] - qa[c]) - (pb[c] - qb[c]))).sum::<f32>())
        } else {
            0.0
        };
        let c = len - batch.rest[j];
        let dl = (-c - alpha_tilde * batch.lambda[j] - damping) / denom;
        batch.lambda[j] += dl;
        for c in 0..3 {
            pos[ia][c] = pa[c] + pa[3] * dl * n[c];
            pos[ib][c] = pb[c] - pb[3] * dl * n[c];
        }
    }
}
