//! Collider contacts with positional Coulomb friction (docs/physics.md §4).
//!
//! A contact is the unilateral constraint C = sdf(x) − thickness ≥ 0 (no adhesion), solved per
//! particle and collider as the last step of every sweep. With x the particle's position and
//! x_start its position at the substep's start:
//!
//! 1. Inside the shell (sdf(x) < thickness): depth d = thickness − sdf(x), normal n = ∇sdf.
//! 2. Outside: untouched, unless the path x_start → x crossed the collider itself (sphere
//!    tracing on the signed distance, at most 48 steps) and x lies less than the thickness
//!    above the tangent plane where it crossed: then that depth and normal. (A path shorter
//!    than the gap at x cannot have touched: the signed distance is 1-Lipschitz.)
//! 3. No popping: if x_start was inside the shell too, it moves out along n by the smaller of
//!    its own depth and d, so the push-out does not become velocity.
//! 4. x += n d.
//! 5. Friction, with Δx_t the tangential part of x − x_start: |Δx_t| < μ_s d sticks
//!    (x −= Δx_t); otherwise it slides, x −= Δx_t · min(μ_k d/|Δx_t|, 1).
//! 6. A slide along a curved surface that dips back into the shell is pushed out along the
//!    new normal.
//!
//! The geometry (signed distance and outward normal of the ground, sphere, capsule and box) is
//! [`Collider::surface`].

use glam::Vec3;

use crate::sim::collision::{Collider, ContactSettings, SurfacePoint};

/// Sphere-tracing steps of the sweep along a substep's path.
const SWEEP_STEPS: u32 = 48;

/// Projects a particle at `x` whose substep started at `start` out of `collider`, with
/// friction (`start` moves too if it was inside the shell already).
pub(super) fn project(collider: &Collider, x: &mut Vec3, start: &mut Vec3, s: ContactSettings) {
    let mut contact = collider.surface(*x);
    contact.distance -= s.thickness;
    if contact.distance >= 0.0 {
        if start.distance(*x) < contact.distance {
            return;
        }
        match sweep(collider, *start, *x) {
            Some(hit) if hit.distance < s.thickness => {
                contact = SurfacePoint {
                    distance: hit.distance - s.thickness,
                    normal: hit.normal,
                }
            }
            _ => return,
        }
    }
    let depth = -contact.distance;
    let n = contact.normal;
    let start_gap = collider.surface(*start).distance - s.thickness;
    if start_gap < 0.0 {
        *start += n * (-start_gap).min(depth);
    }
    *x += n * depth;
    let moved = *x - *start;
    let tangential = moved - n * moved.dot(n);
    let slide = tangential.length();
    if slide < s.mu_static * depth {
        *x -= tangential;
    } else if slide > 0.0 {
        *x -= tangential * (s.mu_kinetic * depth / slide).min(1.0);
    }
    let after = collider.surface(*x);
    if after.distance < s.thickness {
        *x += after.normal * (s.thickness - after.distance);
    }
}

/// Where the path `from → to` first reaches the collider's surface (sphere tracing), with
/// `distance` the height of `to` over the tangent plane there; `None` when it stays outside
/// or starts on or in the surface (the colliders are convex: a path starting inside can only
/// leave).
fn sweep(collider: &Collider, from: Vec3, to: Vec3) -> Option<SurfacePoint> {
    let length = from.distance(to);
    if length <= 0.0 {
        return None;
    }
    let dir = (to - from) / length;
    let mut t = 0.0;
    for step in 0..SWEEP_STEPS {
        let s = collider.surface(from + t * dir);
        if s.distance <= 1e-6 {
            return (step > 0).then(|| SurfacePoint {
                distance: (to - (from + t * dir)).dot(s.normal),
                normal: s.normal,
            });
        }
        t += s.distance;
        if t >= length {
            return None;
        }
    }
    None
}
