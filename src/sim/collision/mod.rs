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
//! Moving colliders (dragged by [`crate::sim::Cloth::move_collider`], or following a scripted
//! [`Motion`]) translate by `shift` during a substep. The contact is solved in the collider's
//! frame: the particle's start point is taken as `x_prev + shift` (where it was relative to the
//! collider's pose at the substep's end), so the penetration, the sweep and the friction all
//! see the motion relative to the surface. A particle at rest on a collider that moves is
//! carried along by static friction (its relative tangential motion is cancelled, so it moves
//! with the surface), and a collider moving into a particle pushes it out, which becomes the
//! particle's velocity (at most the collider's in the normal direction). A static collider has
//! `shift` = 0 and is solved exactly as before.
//!
//! Two guards:
//! - a particle that was already inside the collider at the start of the substep (initial
//!   overlap: placed or teleported inside) is pushed out with its start point, so the push
//!   does not become velocity relative to the collider: no popping, and a particle inside a
//!   moving collider leaves with the collider's velocity;
//! - a particle that moved (relative to the collider) further than its distance to it is
//!   swept (sphere tracing along the relative path on the exact signed distance), so it cannot
//!   tunnel through thin shapes, nor a fast collider through it.

use std::path::PathBuf;
use std::sync::Arc;

use glam::{EulerRot, Quat, Vec3};
use serde::{Deserialize, Serialize};

use super::error::WORLD_EXTENT;
use super::error::{check_components, check_range, SimError};
use super::interaction::Ray;
pub use super::motion::Motion;
use super::params::Material;
pub use mesh::{MeshShape, NearTriangles};

pub mod mesh;

/// A collider: an analytic shape or a triangle mesh. Shapes are solid (an open mesh is a
/// two-sided shell); cloth is kept `collision_thickness` outside. Each
/// may follow a scripted [`Motion`] (default none: it stays where it is placed, unless
/// dragged with [`crate::sim::Cloth::move_collider`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Collider {
    /// The half-space y ≤ `height` (m).
    Ground {
        /// Height of the ground plane in m.
        height: f32,
        /// Scripted path: its vertical part raises and lowers the plane, its horizontal part
        /// moves the surface (a conveyor belt, felt through friction). Default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        motion: Option<Motion>,
    },
    /// A ball.
    Sphere {
        /// Centre in m.
        center: Vec3,
        /// Radius in m.
        radius: f32,
        /// Scripted path of the centre. Default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        motion: Option<Motion>,
    },
    /// A cylinder with hemispherical caps around the segment `a`–`b`.
    Capsule {
        /// First end of the axis, in m.
        a: Vec3,
        /// Second end of the axis, in m.
        b: Vec3,
        /// Radius in m.
        radius: f32,
        /// Scripted path of both ends. Default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        motion: Option<Motion>,
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
        /// Scripted path of the centre (the rotation stays). Default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        motion: Option<Motion>,
    },
    /// A triangle mesh read from an OBJ file ([`mesh`]): a closed mesh is a solid, an open one
    /// a two-sided shell.
    Mesh {
        /// The OBJ file, e.g. `"assets/table.obj"`; a relative path is looked up next to the
        /// preset first, as for cloth meshes. Required.
        file: PathBuf,
        /// Uniform scale applied to the file's coordinates. Default 1; range [0.001, 1000].
        #[serde(default = "unit_scale")]
        scale: f32,
        /// Where the file's origin is placed, in m (the point a drag moves). Default (0, 0, 0).
        #[serde(default)]
        position: Vec3,
        /// Euler angles (X, Y, Z, applied in that order, about the file's origin) in degrees.
        /// Default 0.
        #[serde(default)]
        rotation_degrees: Vec3,
        /// Scripted path of the origin (the rotation stays). Default none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        motion: Option<Motion>,
        /// The triangles, scaled, in the collider's own frame: read from `file` when the scene
        /// is built (`crate::scene::load_colliders`), not part of the preset.
        #[serde(skip)]
        shape: LoadedShape,
    },
}

/// A mesh collider's shape once its file is read; shared by every copy of the collider (the
/// poses of each substep), and compared by identity.
#[derive(Clone, Default)]
pub struct LoadedShape(pub Option<Arc<MeshShape>>);

impl PartialEq for LoadedShape {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        }
    }
}

impl std::fmt::Debug for LoadedShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(shape) => write!(f, "{} triangles", shape.triangle_count()),
            None => f.write_str("not loaded"),
        }
    }
}

fn unit_scale() -> f32 {
    1.0
}

/// A collider where it is at the end of a substep, and how far it moved during that substep.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PosedCollider {
    /// The collider at the end of the substep.
    pub collider: Collider,
    /// Its translation during the substep, in m (zero for a collider at rest).
    pub shift: Vec3,
    /// Its orientation ([`Collider::rotation`]), made once here rather than from Euler angles
    /// in each of the contacts' signed-distance evaluations.
    rotation: Quat,
    /// A mesh's box in world coordinates (lowest and highest corner, m), holding the rotated
    /// box of its triangles; `None` for another shape or a mesh whose file was not read.
    mesh_bounds: Option<(Vec3, Vec3)>,
    /// Which of the cloth's per-particle lists of near triangles a mesh uses (one set of
    /// lists per mesh collider, see [`NearTriangles`]); `None` for another shape.
    pub near_slot: Option<usize>,
}

impl PosedCollider {
    /// `collider` at the end of a substep during which it moved by `shift` (m).
    pub fn new(collider: Collider, shift: Vec3) -> Self {
        let rotation = collider.rotation();
        let mesh_bounds = match &collider {
            Collider::Mesh { position, shape, .. } => shape.0.as_ref().map(|shape| {
                let (low, high) = shape.bounds();
                let (centre, half) = ((low + high) * 0.5, (high - low) * 0.5);
                // The rotated box's half extents along the world axes: |R| · half.
                let m = glam::Mat3::from_quat(rotation);
                let reach = Vec3::new(m.row(0).abs().dot(half), m.row(1).abs().dot(half), m.row(2).abs().dot(half));
                let middle = *position + rotation * centre;
                // Rounding in the rotation must not shrink the box below the triangles.
                let reach = reach + Vec3::splat(1e-6 * (middle.abs().max_element() + reach.max_element()));
                (middle - reach, middle + reach)
            }),
            _ => None,
        };
        Self {
            collider,
            shift,
            rotation,
            mesh_bounds,
            near_slot: None,
        }
    }

    /// A mesh's box in world coordinates (see [`Self::mesh_bounds`]).
    pub fn mesh_bounds(&self) -> Option<(Vec3, Vec3)> {
        self.mesh_bounds
    }

    /// [`Collider::surface`] with the orientation made once.
    fn surface(&self, x: Vec3) -> SurfacePoint {
        self.collider.surface_rotated(x, self.rotation)
    }
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
    /// A scripted path is checked by [`Motion::validate`]; it may carry the collider out of the
    /// world (nothing follows it there but the cloth it carries, which the step's guard stops).
    pub fn validate(&self) -> Result<(), SimError> {
        self.motion().map_or(Ok(()), Motion::validate)?;
        self.validate_pose()
    }

    /// [`Self::validate`] without the path: the shape where it is.
    fn validate_pose(&self) -> Result<(), SimError> {
        let (w, size) = (WORLD_EXTENT, "a size in [1e-3, 1000] m");
        let position = "components in [-1e4, 1e4] m";
        match self {
            Collider::Ground { height, .. } => check_range("height", *height, -w, w, "a height in [-1e4, 1e4] m"),
            Collider::Sphere { center, radius, .. } => {
                check_components("center", *center, -w, w, position)?;
                check_range("radius", *radius, 1e-3, 1e3, size)
            }
            Collider::Capsule { a, b, radius, .. } => {
                check_components("a", *a, -w, w, position)?;
                check_components("b", *b, -w, w, position)?;
                check_range("radius", *radius, 1e-3, 1e3, size)
            }
            Collider::Box {
                center,
                half_extents,
                rotation_degrees,
                ..
            } => {
                check_components("center", *center, -w, w, position)?;
                check_components("half_extents", *half_extents, 1e-3, 1e3, size)?;
                check_rotation(*rotation_degrees)
            }
            Collider::Mesh {
                file,
                scale,
                position: origin,
                rotation_degrees,
                ..
            } => {
                if file.as_os_str().is_empty() {
                    return Err(SimError::InvalidGeometry("a mesh collider needs a `file`".into()));
                }
                check_range("scale", *scale, 1e-3, 1e3, "a factor in [0.001, 1000]")?;
                check_components("position", *origin, -w, w, position)?;
                check_rotation(*rotation_degrees)
            }
        }
    }

    /// A mesh collider whose file has not been read into its shape (see
    /// [`Collider::Mesh::shape`]): refused by a cloth, which would have nothing to collide with.
    pub fn check_loaded(&self) -> Result<(), SimError> {
        match self {
            Collider::Mesh { file, shape, .. } if shape.0.is_none() => Err(SimError::InvalidGeometry(format!(
                "mesh collider {}: its file was not read (build the scene from a preset)",
                file.display()
            ))),
            _ => Ok(()),
        }
    }

    /// The preset key names of this collider's fields, its path's included.
    pub fn keys(&self) -> Vec<&'static str> {
        let shape: &[&str] = match self {
            Collider::Ground { .. } => &["height"],
            Collider::Sphere { .. } => &["center", "radius"],
            Collider::Capsule { .. } => &["a", "b", "radius"],
            Collider::Box { .. } => &["center", "half_extents", "rotation_degrees"],
            Collider::Mesh { .. } => &["file", "scale", "position", "rotation_degrees"],
        };
        let path = self.motion().map_or(&[][..], |m| m.keys());
        let motion: &[&str] = if path.is_empty() { &[] } else { &["motion"] };
        [shape, motion, path].concat()
    }

    /// The scripted path, if any.
    pub fn motion(&self) -> Option<&Motion> {
        match self {
            Collider::Ground { motion, .. }
            | Collider::Sphere { motion, .. }
            | Collider::Capsule { motion, .. }
            | Collider::Box { motion, .. }
            | Collider::Mesh { motion, .. } => motion.as_ref(),
        }
    }

    /// The point a drag moves, in m: the centre (of a capsule, the middle of its axis; of a
    /// mesh, its file's origin); for the ground, (0, height, 0).
    pub fn position(&self) -> Vec3 {
        match *self {
            Collider::Ground { height, .. } => Vec3::new(0.0, height, 0.0),
            Collider::Sphere { center, .. } | Collider::Box { center, .. } => center,
            Collider::Capsule { a, b, .. } => (a + b) * 0.5,
            Collider::Mesh { position, .. } => position,
        }
    }

    /// The collider moved by `d` (m); the ground only by `d.y`. Its path is kept.
    pub fn translated(&self, d: Vec3) -> Collider {
        let mut moved = self.clone();
        match &mut moved {
            Collider::Ground { height, .. } => *height += d.y,
            Collider::Sphere { center, .. } | Collider::Box { center, .. } => *center += d,
            Collider::Mesh { position, .. } => *position += d,
            Collider::Capsule { a, b, .. } => {
                *a += d;
                *b += d;
            }
        }
        moved
    }

    /// Ray parameter of the first point where `ray` enters the collider (the distance in m
    /// for a unit direction), found by sphere tracing on the signed distance up to
    /// [`WORLD_EXTENT`] · 4 along the ray; `None` when it misses, grazes the outline closer
    /// than the trace resolves (1e-6 m), or starts inside.
    pub fn ray_distance(&self, ray: &Ray) -> Option<f32> {
        let scale = ray.direction.length();
        if !(scale > 0.0 && scale.is_finite() && ray.origin.is_finite()) {
            return None;
        }
        let direction = ray.direction / scale;
        let rotation = self.rotation();
        if let Collider::Mesh { position, shape, .. } = self {
            let shape = shape.0.as_ref()?;
            let local = rotation.inverse();
            let hit = shape.first_hit(local * (ray.origin - *position), local * direction, 4.0 * WORLD_EXTENT, None)?;
            return Some(hit.t / scale);
        }
        let (t, _) = self.trace(ray.origin, direction, 4.0 * WORLD_EXTENT, 0.0, PICK_TRACE_STEPS, rotation)?;
        Some(t / scale)
    }

    /// The orientation of a box or a mesh (identity for the other shapes, which need none).
    pub fn rotation(&self) -> Quat {
        match *self {
            Collider::Box { rotation_degrees, .. } | Collider::Mesh { rotation_degrees, .. } => box_rotation(rotation_degrees),
            _ => Quat::IDENTITY,
        }
    }

    /// Signed distance and normal at `x` (an open mesh's distance is unsigned; a mesh whose
    /// file was not read is infinitely far).
    pub fn surface(&self, x: Vec3) -> SurfacePoint {
        self.surface_rotated(x, self.rotation())
    }

    /// [`Collider::surface`] given the collider's [`Collider::rotation`].
    fn surface_rotated(&self, x: Vec3, rotation: Quat) -> SurfacePoint {
        match *self {
            Collider::Ground { height, .. } => SurfacePoint {
                distance: x.y - height,
                normal: Vec3::Y,
            },
            Collider::Sphere { center, radius, .. } => round_surface(x, center, radius),
            Collider::Capsule { a, b, radius, .. } => {
                let ab = b - a;
                let t = if ab.length_squared() > 0.0 {
                    ((x - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                round_surface(x, a + t * ab, radius)
            }
            Collider::Box { center, half_extents, .. } => {
                let local = rotation.inverse() * (x - center);
                let (distance, normal) = box_surface(local, half_extents);
                SurfacePoint {
                    distance,
                    normal: rotation * normal,
                }
            }
            Collider::Mesh { .. } => self.mesh_surface_within(x, f32::INFINITY, rotation, None).unwrap_or(SurfacePoint {
                distance: f32::INFINITY,
                normal: Vec3::Y,
            }),
        }
    }

    /// A mesh collider's [`MeshShape::surface_within`] at the world point `x`, in world
    /// terms; `None` for another collider, an unread file, or a surface farther than
    /// `max_distance` (m).
    fn mesh_surface_within(&self, x: Vec3, max_distance: f32, rotation: Quat, near: Option<&NearTriangles>) -> Option<SurfacePoint> {
        let Collider::Mesh { position, shape, .. } = self else {
            return None;
        };
        let s = shape
            .0
            .as_ref()?
            .surface_within(rotation.inverse() * (x - *position), max_distance, near)?;
        Some(SurfacePoint {
            distance: s.distance,
            normal: rotation * s.normal,
        })
    }

    /// First point where the segment `from → to` comes within `margin` of the surface, found
    /// by sphere tracing on the signed distance, with `distance` the signed height of `to` over
    /// the tangent plane there; `None` when the segment stays outside, or when `from` is
    /// already within `margin` (every collider is convex, so a segment that starts inside
    /// can only leave it: nothing was crossed).
    fn sweep(&self, from: Vec3, to: Vec3, margin: f32, rotation: Quat) -> Option<SurfacePoint> {
        let length = from.distance(to);
        if length <= 0.0 {
            return None;
        }
        let dir = (to - from) / length;
        let (t, s) = self.trace(from, dir, length, margin, SWEEP_TRACE_STEPS, rotation)?;
        Some(SurfacePoint {
            distance: (to - (from + t * dir)).dot(s.normal),
            normal: s.normal,
        })
    }

    /// Sphere tracing from `from` along the unit direction `dir`: the first t ≤ `length`
    /// (m) within `steps` steps where the point comes within `margin` (+ 1e-6 m) of the
    /// surface, with the surface there; `None` when the path stays outside, gets no closer
    /// within the steps, or starts within `margin`.
    fn trace(&self, from: Vec3, dir: Vec3, length: f32, margin: f32, steps: u32, rotation: Quat) -> Option<(f32, SurfacePoint)> {
        let mut t = 0.0;
        for step in 0..steps {
            let s = self.surface_rotated(from + t * dir, rotation);
            let gap = s.distance - margin;
            if gap <= 1e-6 {
                return (step > 0).then_some((t, s));
            }
            t += gap;
            if t >= length {
                return None;
            }
        }
        None
    }
}

/// Least skin of a particle's near-triangle list in m, for a thickness of 0.
const NEAR_SKIN_FLOOR: f32 = 1e-3;

/// Sphere-tracing steps of the contact's sweep (a short path: a substep's travel).
const SWEEP_TRACE_STEPS: u32 = 48;

/// Sphere-tracing steps of [`Collider::ray_distance`]: a mouse ray may pass close by the
/// outline, where each step gains little.
const PICK_TRACE_STEPS: u32 = 256;

fn check_rotation(degrees: Vec3) -> Result<(), SimError> {
    check_components("rotation_degrees", degrees, -360.0, 360.0, "angles in [-360, 360] degrees")
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

impl ContactSettings {
    /// `material`'s friction with `thickness` (m) kept from surfaces.
    pub fn of(thickness: f32, material: &Material) -> Self {
        Self {
            thickness,
            mu_static: material.friction_static,
            mu_kinetic: material.friction_kinetic,
        }
    }
}

/// Projects one particle out of one collider with friction. `x` is the current position,
/// `start` the position at the start of the substep (moved too if it was already inside);
/// `posed` is the collider at the end of the substep with its translation during it, so
/// friction acts on the motion relative to the collider's surface. `near` is the particle's
/// list of a mesh's near triangles (kept between calls; none: ask the hierarchy).
pub(crate) fn project_contact(
    posed: &PosedCollider,
    x: &mut Vec3,
    start: &mut Vec3,
    s: ContactSettings,
    mut near: Option<&mut NearTriangles>,
) {
    // Where the particle started relative to the collider's pose at the end of the substep
    // (`start` itself for a collider at rest).
    let from = *start + posed.shift;
    let contact = match posed.collider {
        Collider::Mesh { .. } => posed.mesh_contact(from, *x, s.thickness, near.as_deref_mut()),
        _ => posed.analytic_contact(from, *x, s.thickness),
    };
    if let Some(contact) = contact {
        resolve_contact(posed, contact, from, x, start, s, near.as_deref());
    }
}

impl PosedCollider {
    /// The contact of the path `from → x` with an analytic collider: the surface at `x` less
    /// the thickness (negative: the depth to remove) when `x` is within the thickness, or
    /// where the path crossed the collider itself; `None` when untouched.
    fn analytic_contact(&self, from: Vec3, x: Vec3, thickness: f32) -> Option<SurfacePoint> {
        let mut contact = self.surface(x);
        contact.distance -= thickness;
        if contact.distance >= 0.0 {
            // Outside at the end. The signed distance is 1-Lipschitz, so a path shorter than the
            // gap at its end point cannot have touched the collider: one evaluation for the common
            // far-away particle; only longer paths are swept for tunnelling.
            if from.distance(x) < contact.distance {
                return None;
            }
            // A path that ends outside was only blocked if it crossed the collider itself
            // (tunnelling); grazing the thickness shell, or sliding off a curved surface from a
            // start inside the shell, must not move the particle.
            match self.collider.sweep(from, x, 0.0, self.rotation) {
                Some(hit) if hit.distance < thickness => {
                    contact = SurfacePoint {
                        distance: hit.distance - thickness,
                        normal: hit.normal,
                    }
                }
                _ => return None,
            }
        }
        Some(contact)
    }

    /// [`Self::analytic_contact`] for a mesh: a path that crossed a triangle (entered it, for
    /// a closed mesh) is put back on the side it came from, else the surface within the
    /// thickness of `x` is the contact (see [`mesh`]). `near` is listed again around `x` when
    /// it does not cover the path and the thickness around it.
    fn mesh_contact(&self, from: Vec3, x: Vec3, thickness: f32, near: Option<&mut NearTriangles>) -> Option<SurfacePoint> {
        let Collider::Mesh { position, shape, .. } = &self.collider else {
            return None;
        };
        let shape = shape.0.as_ref()?;
        let inverse = self.rotation.inverse();
        let (local_from, local_x) = (inverse * (from - *position), inverse * (x - *position));
        // One box test for a particle nowhere near the mesh.
        let (low, high) = shape.bounds();
        let (path_low, path_high) = (local_from.min(local_x), local_from.max(local_x));
        if (path_low - thickness).cmpgt(high).any() || (path_high + thickness).cmplt(low).any() {
            return None;
        }
        let path = local_x - local_from;
        let near = near.map(|near| {
            if !(near.covers(local_x, thickness) && near.covers(local_from, thickness)) {
                // The skin spares a new list while the particle moves less than half the
                // thickness; the friction and the start's check ask within the thickness
                // around points at most the path's length from the end.
                shape.gather(near, local_x, path.length() + thickness * 1.5 + NEAR_SKIN_FLOOR);
            }
            &*near
        });
        let crossing = (path != Vec3::ZERO).then(|| shape.first_hit(local_from, path, 1.0, near)).flatten();
        let local = match crossing {
            Some(hit) => {
                let back = if path.dot(hit.normal) > 0.0 { -hit.normal } else { hit.normal };
                SurfacePoint {
                    distance: (local_x - (local_from + path * hit.t)).dot(back),
                    normal: back,
                }
            }
            None => shape.surface_within(local_x, thickness, near)?,
        };
        Some(SurfacePoint {
            distance: local.distance - thickness,
            normal: self.rotation * local.normal,
        })
    }

    /// The signed distance at `x` where it is below `thickness` (m), else `thickness`: all the
    /// contact resolution needs to know, and for a mesh a bounded query.
    fn distance_below(&self, x: Vec3, thickness: f32, near: Option<&NearTriangles>) -> SurfacePoint {
        match self.collider {
            Collider::Mesh { .. } => self
                .collider
                .mesh_surface_within(x, thickness, self.rotation, near)
                .unwrap_or(SurfacePoint {
                    distance: thickness,
                    normal: Vec3::Y,
                }),
            _ => self.surface(x),
        }
    }
}

/// Moves `x` out along `contact` (its distance less the thickness, negative) with positional
/// Coulomb friction on the motion relative to the surface since `from` (see the module docs).
fn resolve_contact(
    posed: &PosedCollider,
    contact: SurfacePoint,
    mut from: Vec3,
    x: &mut Vec3,
    start: &mut Vec3,
    s: ContactSettings,
    near: Option<&NearTriangles>,
) {
    let depth = -contact.distance;
    let n = contact.normal;
    // No popping: what was already inside at the substep start is removed from the start
    // point too, so the correction is not turned into velocity relative to the collider.
    let start_gap = posed.distance_below(from, s.thickness, near).distance - s.thickness;
    if start_gap < 0.0 {
        let push = n * (-start_gap).min(depth);
        from += push;
        *start += push;
    }
    *x += n * depth;
    let moved = *x - from;
    let tangential = moved - n * moved.dot(n);
    let slide = tangential.length();
    if slide < s.mu_static * depth {
        *x -= tangential;
    } else if slide > 0.0 {
        *x -= tangential * (s.mu_kinetic * depth / slide).min(1.0);
    }
    // Moving along the tangent plane of a curved surface can dip back in by O(slide²/R).
    let after = posed.distance_below(*x, s.thickness, near);
    if after.distance < s.thickness {
        *x += after.normal * (s.thickness - after.distance);
    }
}
