//! Analytic colliders and the contact + friction projection (docs/physics.md §4).
//!
//! Contacts are unilateral position constraints C = sdf(x) − thickness ≥ 0, solved as the last
//! group of every sweep inside every substep (not after the solve, as in the seed article; docs/physics.md §11).
//! Friction is positional Coulomb friction (PBD survey eq. 27–28): with d the penetration
//! corrected and Δx_t the particle's tangential motion during the substep, Δx_t is cancelled
//! when |Δx_t| < μ_s d (sticking), otherwise μ_k d of it is removed (sliding). Because d is a
//! length and the friction cone is applied per substep, the sticking threshold is exactly the
//! Coulomb angle tan θ = μ_s, independent of the substep.
//!
//! Two guards:
//! - a particle that was already inside at the start of the substep (initial overlap, a
//!   collider dragged into the cloth) is pushed out with its start point, so the push does not
//!   become velocity: no popping;
//! - a particle that moved further than its distance to a collider is swept (sphere tracing
//!   along x_prev → x on the exact signed distance), so it cannot tunnel through thin shapes.

use glam::{EulerRot, Quat, Vec3};
use serde::{Deserialize, Serialize};

use super::error::WORLD_EXTENT;
use super::error::{check_components, check_range, SimError};

/// A static analytic collider. Shapes are solid; cloth is kept `collision_thickness` outside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Collider {
    /// The half-space y ≤ `height` (m).
    Ground {
        /// Height of the ground plane in m.
        height: f32,
    },
    /// A ball.
    Sphere {
        /// Centre in m.
        center: Vec3,
        /// Radius in m.
        radius: f32,
    },
    /// A cylinder with hemispherical caps around the segment `a`–`b`.
    Capsule {
        /// First end of the axis, in m.
        a: Vec3,
        /// Second end of the axis, in m.
        b: Vec3,
        /// Radius in m.
        radius: f32,
    },
    /// An oriented box.
    Box {
        /// Centre in m.
        center: Vec3,
        /// Half the edge lengths in m.
        half_extents: Vec3,
        /// Euler angles (X, Y, Z, applied in that order) in degrees. Default 0.
        #[serde(default)]
        rotation_degrees: Vec3,
    },
}

/// Signed distance (m, negative inside) and outward unit normal at a point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SurfacePoint {
    /// Signed distance to the surface in m.
    pub distance: f32,
    /// Outward unit normal of the nearest surface point.
    pub normal: Vec3,
}

impl Collider {
    /// Checks every value against its range: positions inside the world
    /// ([`WORLD_EXTENT`] = 10 km), radii and half extents in [1e-3, 1000] m, rotations in
    /// [−360, 360]°. Names are the preset's keys.
    pub fn validate(&self) -> Result<(), SimError> {
        let (w, size) = (WORLD_EXTENT, "a size in [1e-3, 1000] m");
        let position = "components in [-1e4, 1e4] m";
        match self {
            Collider::Ground { height } => check_range("height", *height, -w, w, "a height in [-1e4, 1e4] m"),
            Collider::Sphere { center, radius } => {
                check_components("center", *center, -w, w, position)?;
                check_range("radius", *radius, 1e-3, 1e3, size)
            }
            Collider::Capsule { a, b, radius } => {
                check_components("a", *a, -w, w, position)?;
                check_components("b", *b, -w, w, position)?;
                check_range("radius", *radius, 1e-3, 1e3, size)
            }
            Collider::Box {
                center,
                half_extents,
                rotation_degrees,
            } => {
                check_components("center", *center, -w, w, position)?;
                check_components("half_extents", *half_extents, 1e-3, 1e3, size)?;
                check_components(
                    "rotation_degrees",
                    *rotation_degrees,
                    -360.0,
                    360.0,
                    "angles in [-360, 360] degrees",
                )
            }
        }
    }

    /// The preset key names of this collider's fields.
    pub fn keys(&self) -> &'static [&'static str] {
        match self {
            Collider::Ground { .. } => &["height"],
            Collider::Sphere { .. } => &["center", "radius"],
            Collider::Capsule { .. } => &["a", "b", "radius"],
            Collider::Box { .. } => &["center", "half_extents", "rotation_degrees"],
        }
    }

    /// Signed distance and normal at `x`.
    pub fn surface(&self, x: Vec3) -> SurfacePoint {
        match *self {
            Collider::Ground { height } => SurfacePoint {
                distance: x.y - height,
                normal: Vec3::Y,
            },
            Collider::Sphere { center, radius } => round_surface(x, center, radius),
            Collider::Capsule { a, b, radius } => {
                let ab = b - a;
                let t = if ab.length_squared() > 0.0 {
                    ((x - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                round_surface(x, a + t * ab, radius)
            }
            Collider::Box {
                center,
                half_extents,
                rotation_degrees,
            } => {
                let rotation = box_rotation(rotation_degrees);
                let local = rotation.inverse() * (x - center);
                let (distance, normal) = box_surface(local, half_extents);
                SurfacePoint {
                    distance,
                    normal: rotation * normal,
                }
            }
        }
    }

    /// First point where the segment `from → to` comes within `margin` of the surface, found
    /// by sphere tracing on the signed distance, with `distance` the signed height of `to` over
    /// the tangent plane there; `None` when the segment stays outside, or when `from` is
    /// already within `margin` (every collider is convex, so a segment that starts inside
    /// can only leave it: nothing was crossed).
    pub fn sweep(&self, from: Vec3, to: Vec3, margin: f32) -> Option<SurfacePoint> {
        let length = from.distance(to);
        if length <= 0.0 {
            return None;
        }
        let dir = (to - from) / length;
        let mut t = 0.0;
        for step in 0..48 {
            let p = from + t * dir;
            let s = self.surface(p);
            let gap = s.distance - margin;
            if gap <= 1e-6 {
                if step == 0 {
                    return None;
                }
                return Some(SurfacePoint {
                    distance: (to - p).dot(s.normal),
                    normal: s.normal,
                });
            }
            t += gap;
            if t >= length {
                return None;
            }
        }
        None
    }
}

fn box_rotation(degrees: Vec3) -> Quat {
    Quat::from_euler(
        EulerRot::XYZ,
        degrees.x.to_radians(),
        degrees.y.to_radians(),
        degrees.z.to_radians(),
    )
}

fn round_surface(x: Vec3, center: Vec3, radius: f32) -> SurfacePoint {
    let d = x - center;
    let len = d.length();
    // At the exact centre any direction is as good; up is the least surprising.
    let normal = if len > 1e-12 { d / len } else { Vec3::Y };
    SurfacePoint {
        distance: len - radius,
        normal,
    }
}

/// Exact signed distance and normal of an axis-aligned box centred at the origin.
fn box_surface(p: Vec3, half: Vec3) -> (f32, Vec3) {
    let q = p.abs() - half;
    let outside = q.max(Vec3::ZERO);
    if outside.length_squared() > 0.0 {
        (outside.length(), (outside * p.signum()).normalize())
    } else {
        // Inside: the nearest face is the one with the largest (least negative) q.
        let axis = if q.x >= q.y && q.x >= q.z {
            Vec3::X
        } else if q.y >= q.z {
            Vec3::Y
        } else {
            Vec3::Z
        };
        (q.max_element(), axis * p.signum())
    }
}

/// Friction coefficients and thickness used by the contact projection.
#[derive(Debug, Clone, Copy)]
pub struct ContactSettings {
    /// Distance kept from surfaces in m.
    pub thickness: f32,
    /// Static friction coefficient μ_s.
    pub mu_static: f32,
    /// Kinetic friction coefficient μ_k.
    pub mu_kinetic: f32,
}

/// Projects one particle out of one collider with friction. `x` is the current position,
/// `start` the position at the start of the substep (moved too if it was already inside).
pub fn project_contact(collider: &Collider, x: &mut Vec3, start: &mut Vec3, s: ContactSettings) {
    let mut contact = collider.surface(*x);
    contact.distance -= s.thickness;
    if contact.distance >= 0.0 {
        // Outside at the end. The signed distance is 1-Lipschitz, so a path shorter than the
        // gap at its end point cannot have touched the collider: one evaluation for the common
        // far-away particle; only longer paths are swept for tunnelling.
        if start.distance(*x) < contact.distance {
            return;
        }
        // A path that ends outside was only blocked if it crossed the collider itself
        // (tunnelling); grazing the thickness shell, or sliding off a curved surface from a
        // start inside the shell, must not move the particle.
        match collider.sweep(*start, *x, 0.0) {
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
    // No popping: what was already inside at the substep start is removed from the start
    // point too, so the correction is not turned into velocity.
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
    // Moving along the tangent plane of a curved surface can dip back in by O(slide²/R).
    let after = collider.surface(*x);
    if after.distance < s.thickness {
        *x += after.normal * (s.thickness - after.distance);
    }
}
