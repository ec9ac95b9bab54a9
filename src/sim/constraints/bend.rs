//! Dihedral bending (PBD 2007 §4.2, signed form of docs/physics.md §2).
//!
//! For the hinge with shared edge p2 → p3 and wings p0, p1:
//! e = p3 − p2, n1 = (p2 − p0) × (p3 − p0), n2 = (p3 − p1) × (p2 − p1),
//! θ = atan2(((n1 × n2)·e)/(|n1||n2||e|), n̂1·n̂2). The atan2 form is well conditioned at
//! θ = 0 (where acos has an infinite derivative) and tells a fold from its mirror image, so a
//! cloth folded the wrong way is pushed back. The constraint is C = θ − θ0 with the difference
//! wrapped into (−π, π], and the gradients below satisfy Σ∇ = 0 and Σ x × ∇ = 0, so a hinge
//! never pushes or spins the cloth as a whole.

use glam::Vec3;

/// Below this squared length (m², m⁴ for the normals) a hinge is treated as degenerate.
pub(crate) const DEGENERATE: f32 = 1e-20;

/// Signed dihedral angle in radians, or `None` when a triangle or the edge is degenerate.
pub fn dihedral_angle(p0: Vec3, p1: Vec3, p2: Vec3, p3: Vec3) -> Option<f32> {
    dihedral_gradients(p0, p1, p2, p3).map(|(theta, _)| theta)
}

/// Signed dihedral angle and its gradients with respect to p0, p1, p2, p3, or `None` when a
/// triangle or the edge is degenerate. The common factor 1/(|n1||n2|) cancels inside atan2,
/// so only |e| needs a square root; one reciprocal per length replaces per-component divisions.
#[inline]
pub fn dihedral_gradients(p0: Vec3, p1: Vec3, p2: Vec3, p3: Vec3) -> Option<(f32, [Vec3; 4])> {
    let e = p3 - p2;
    let n1 = (p2 - p0).cross(p3 - p0);
    let n2 = (p3 - p1).cross(p2 - p1);
    let (l1, l2, le) = (n1.length_squared(), n2.length_squared(), e.length_squared());
    if l1 < DEGENERATE || l2 < DEGENERATE || le < DEGENERATE {
        return None;
    }
    let e_len = le.sqrt();
    let e_hat = e * (1.0 / e_len);
    let theta = n1.cross(n2).dot(e_hat).atan2(n1.dot(n2));
    let (m1, m2) = (n1 * (1.0 / l1), n2 * (1.0 / l2));
    let g0 = -e_len * m1;
    let g1 = -e_len * m2;
    let g2 = -((p0 - p3).dot(e_hat) * m1 + (p1 - p3).dot(e_hat) * m2);
    let g3 = -((p2 - p0).dot(e_hat) * m1 + (p2 - p1).dot(e_hat) * m2);
    Some((theta, [g0, g1, g2, g3]))
}

/// Wraps an angle difference into (−π, π] so a hinge never takes the long way round.
pub fn wrap_angle(a: f32) -> f32 {
    use std::f32::consts::{PI, TAU};
    let wrapped = (a + PI).rem_euclid(TAU) - PI;
    if wrapped <= -PI {
        wrapped + TAU
    } else {
        wrapped
    }
}
