//! Dihedral bending hinges, one colour batch at a time (angles and gradients in
//! [`super::bend`]).

use glam::Vec3;

use super::bend::wrap_angle;
use super::distance::{PosW, SubstepConstants};
use super::Batch;

/// Below this squared length (m², m⁴ for the normals) a hinge is degenerate and skipped, as in
/// [`super::bend`].
const DEGENERATE: f32 = 1e-20;

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

    fn id(&self, index: usize) -> u32 {
        self.id[index]
    }

    fn len(&self) -> usize {
        self.id.len()
    }
}

fn xyz(p: PosW) -> Vec3 {
    Vec3::new(p[0], p[1], p[2])
}

/// Projects every hinge of `batch` once (safe wrapper of [`project_raw`]; panics on an
/// out-of-range index). On the first sweep of a substep (`first`) λ starts from 0.
pub fn project(pos: &mut [PosW], prev: &[PosW], batch: &mut HingeBatch, k: SubstepConstants, first: bool) {
    let n = pos.len().min(prev.len());
    assert!(
        batch.items.iter().flat_map(|h| h.particles).all(|i| (i as usize) < n),
        "particle index out of range"
    );
    // SAFETY: indices checked above; the slices are borrowed exclusively.
    unsafe { project_raw(pos.as_mut_ptr(), prev.as_ptr(), batch, k, first) }
}

/// Projects every hinge of `batch` once on raw particle arrays.
///
/// # Safety
/// Every particle index in `batch` must be in bounds of `pos` and `prev`, and no other thread
/// may touch those particles during the call.
pub(crate) unsafe fn project_raw(pos: *mut PosW, prev: *const PosW, batch: &mut HingeBatch, k: SubstepConstants, first: bool) {
    for (item, lambda) in batch.items.iter().zip(batch.lambda.iter_mut()) {
        if first {
            *lambda = 0.0;
        }
        let idx = item.particles.map(|i| i as usize);
        let p = idx.map(|i| xyz(*pos.add(i)));
        let Some((theta, grads)) = angle_and_gradients(p) else {
            continue;
        };
        let w = idx.map(|i| (*pos.add(i))[3]);
        let weighted: f32 = (0..4).map(|i| w[i] * grads[i].length_squared()).sum();
        let alpha_tilde = item.compliance * k.inv_h2;
        let gamma = item.compliance * k.damping_over_h;
        let denom = (1.0 + gamma) * weighted + alpha_tilde;
        if denom <= 1e-30 || !denom.is_finite() {
            continue;
        }
        let damping = if gamma > 0.0 {
            gamma * (0..4).map(|i| grads[i].dot(p[i] - xyz(*prev.add(idx[i])))).sum::<f32>()
        } else {
            0.0
        };
        let c = wrap_difference(theta - item.rest_angle);
        let dl = (-c - alpha_tilde * *lambda - damping) / denom;
        *lambda += dl;
        for i in 0..4 {
            let q = p[i] + w[i] * dl * grads[i];
            (&mut *pos.add(idx[i]))[..3].copy_from_slice(&q.to_array());
        }
    }
}

/// The signed dihedral angle and its gradients as in [`super::bend::dihedral_gradients`], with
/// the shared terms computed once: the common factor 1/(|n1||n2|) cancels inside atan2, so
/// only |e| needs a square root.
#[inline]
fn angle_and_gradients([p0, p1, p2, p3]: [Vec3; 4]) -> Option<(f32, [Vec3; 4])> {
    let e = p3 - p2;
    let n1 = (p2 - p0).cross(p3 - p0);
    let n2 = (p3 - p1).cross(p2 - p1);
    let (l1, l2, le) = (n1.length_squared(), n2.length_squared(), e.length_squared());
    if l1 < DEGENERATE || l2 < DEGENERATE || le < DEGENERATE {
        return None;
    }
    let e_len = le.sqrt();
    // One reciprocal per length instead of a division per component.
    let e_hat = e * (1.0 / e_len);
    let theta = n1.cross(n2).dot(e_hat).atan2(n1.dot(n2));
    let (m1, m2) = (n1 * (1.0 / l1), n2 * (1.0 / l2));
    let g0 = -e_len * m1;
    let g1 = -e_len * m2;
    let g2 = -((p0 - p3).dot(e_hat) * m1 + (p1 - p3).dot(e_hat) * m2);
    let g3 = -((p2 - p0).dot(e_hat) * m1 + (p2 - p1).dot(e_hat) * m2);
    Some((theta, [g0, g1, g2, g3]))
}

/// [`wrap_angle`] without the floating-point remainder for the usual case: θ and θ0 both lie
/// in (−π, π], so their difference needs at most one turn added or removed.
#[inline]
fn wrap_difference(a: f32) -> f32 {
    use std::f32::consts::{PI, TAU};
    if a > PI && a < 3.0 * PI {
        a - TAU
    } else if a <= -PI && a > -3.0 * PI {
        a + TAU
    } else if a.abs() <= PI {
        a
    } else {
        wrap_angle(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::constraints::bend::dihedral_gradients;

    #[test]
    fn fused_gradients_match_the_reference_formulas() {
        let p = [
            Vec3::new(0.1, -0.9, 0.3),
            Vec3::new(-0.2, 1.1, 0.4),
            Vec3::new(-1.0, 0.05, 0.0),
            Vec3::new(1.0, -0.1, 0.1),
        ];
        let (theta, grads) = angle_and_gradients(p).unwrap();
        let (ref_theta, ref_grads) = dihedral_gradients(p[0], p[1], p[2], p[3]).unwrap();
        assert!((theta - ref_theta).abs() < 1e-6, "{theta} vs {ref_theta}");
        for (g, r) in grads.iter().zip(&ref_grads) {
            assert!((*g - *r).length() < 1e-5 * r.length().max(1.0), "{g} vs {r}");
        }
    }

    #[test]
    fn wrap_difference_matches_wrap_angle() {
        for i in -700..=700 {
            let a = i as f32 * 0.0137;
            assert!((wrap_difference(a) - wrap_angle(a)).abs() < 1e-5, "{a}");
        }
    }
}
