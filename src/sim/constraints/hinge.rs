//! Dihedral bending hinges, one colour batch at a time (angles and gradients in
//! [`super::bend`]).

use glam::Vec3;

use super::bend::{dihedral_gradients, wrap_angle};
use super::distance::{PosW, SubstepConstants};
use super::Batch;

/// One hinge as the solver stores it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HingeItem {
    /// p0, p1 (wings), p2, p3 (shared edge), as in [`super::bend`].
    pub particles: [u32; 4],
    /// Rest angle θ0 in radians.
    pub rest_angle: f32,
    /// Effective compliance α in 1/(N·m).
    pub compliance: f32,
}

/// A colour batch of hinges (array of structs: the hinge solve is gradient-bound, not
/// load-bound, and hinges are a small share of the work).
#[derive(Debug, Default, Clone)]
pub struct HingeBatch {
    /// The hinges.
    pub items: Vec<HingeItem>,
    /// Lagrange multipliers of the current substep.
    pub lambda: Vec<f32>,
    /// Model id of each slot.
    pub id: Vec<u32>,
}

impl Batch for HingeBatch {
    type Item = HingeItem;

    fn particles(item: &HingeItem) -> &[u32] {
        &item.particles
    }

    fn push(&mut self, id: u32, item: HingeItem) {
        self.items.push(item);
        self.lambda.push(0.0);
        self.id.push(id);
    }

    fn swap_remove(&mut self, index: usize) -> Option<u32> {
        self.items.swap_remove(index);
        self.lambda.swap_remove(index);
        self.id.swap_remove(index);
        self.id.get(index).copied()
    }

    fn get(&self, index: usize) -> HingeItem {
        self.items[index]
    }

    fn len(&self) -> usize {
        self.id.len()
    }
}

fn xyz(p: PosW) -> Vec3 {
    Vec3::new(p[0], p[1], p[2])
}

/// Projects every hinge of `batch` once.
pub fn project(pos: &mut [PosW], prev: &[PosW], batch: &mut HingeBatch, k: SubstepConstants) {
    for (item, lambda) in batch.items.iter().zip(batch.lambda.iter_mut()) {
        let idx = item.particles.map(|i| i as usize);
        let p = idx.map(|i| xyz(pos[i]));
        let Some((theta, grads)) = dihedral_gradients(p[0], p[1], p[2], p[3]) else {
            continue;
        };
        let w = idx.map(|i| pos[i][3]);
        let weighted: f32 = (0..4).map(|i| w[i] * grads[i].length_squared()).sum();
        let alpha_tilde = item.compliance * k.inv_h2;
        let gamma = item.compliance * k.damping_over_h;
        let denom = (1.0 + gamma) * weighted + alpha_tilde;
        if denom <= 1e-30 || !denom.is_finite() {
            continue;
        }
        let damping = if gamma > 0.0 {
            gamma * (0..4).map(|i| grads[i].dot(p[i] - xyz(prev[idx[i]]))).sum::<f32>()
        } else {
            0.0
        };
        let c = wrap_angle(theta - item.rest_angle);
        let dl = (-c - alpha_tilde * *lambda - damping) / denom;
        *lambda += dl;
        for i in 0..4 {
            let q = p[i] + w[i] * dl * grads[i];
            pos[idx[i]][..3].copy_from_slice(&q.to_array());
        }
    }
}
