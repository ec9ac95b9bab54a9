//! Picking: which particle a mouse ray points at. The app turns the cursor into a world-space
//! [`Ray`]; the engine never sees pixels.

use glam::Vec3;

use super::particles::Particles;

/// A half-line origin + t·direction, t ≥ 0 (direction need not be normalised).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ray {
    /// Start point in m.
    pub origin: Vec3,
    /// Direction.
    pub direction: Vec3,
}

impl Ray {
    /// Point at parameter `t`.
    pub fn at(&self, t: f32) -> Vec3 {
        self.origin + self.direction * t
    }
}

/// The result of a pick.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pick {
    /// The picked particle.
    pub particle: u32,
    /// Ray parameter of the hit (distance along the ray if the direction is normalised).
    pub t: f32,
    /// The triangle hit and where, when the ray hit one (what [`crate::sim::Cloth::grab_pick`] holds);
    /// `None` when the particle was found near the ray instead.
    pub hit: Option<TriangleHit>,
}

/// A point on a triangle: its index in [`crate::sim::Cloth::triangles`] and the barycentric weights of
/// its three corners (non-negative, summing to 1): the point is Σ b_k x_k.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TriangleHit {
    /// Index of the triangle in [`crate::sim::Cloth::triangles`].
    pub triangle: u32,
    /// Weights of the triangle's corners, in the triangle's order.
    pub barycentric: [f32; 3],
}

/// What the mouse holds. The hard grab ([`crate::sim::Cloth::grab`]) makes one particle kinematic
/// (inverse mass 0) and moves it to `target` over the substeps of each frame, so its velocity
/// is the drag velocity. The soft grab ([`crate::sim::Cloth::grab_point`], [`crate::sim::Cloth::grab_pick`]) pulls a
/// point of a triangle toward `target` through a compliant constraint
/// ([`crate::sim::SolverParams::grab_compliance`]); the triangle's corners keep their mass, so the pull
/// loads the cloth around them as fingers do (docs/physics.md §1, "The grab").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grab {
    /// The held particle (hard grab), or the corner of the held triangle with the largest
    /// weight (soft grab).
    pub particle: u32,
    /// Where the held point should be at the end of the next step (m).
    pub target: Vec3,
    /// The soft grab's triangle and barycentric weights; `None` for the hard grab.
    pub point: Option<TriangleHit>,
}

/// Möller–Trumbore ray/triangle intersection; returns t, or `None` on a miss or a degenerate
/// triangle.
pub fn ray_triangle(ray: &Ray, a: Vec3, b: Vec3, c: Vec3) -> Option<f32> {
    ray_triangle_uv(ray, a, b, c).map(|(t, _, _)| t)
}

/// [`ray_triangle`] with the hit's barycentric coordinates (u, v) of `b` and `c`: the hit is
/// (1 − u − v) a + u b + v c.
fn ray_triangle_uv(ray: &Ray, a: Vec3, b: Vec3, c: Vec3) -> Option<(f32, f32, f32)> {
    let (e1, e2) = (b - a, c - a);
    let p = ray.direction.cross(e2);
    let det = e1.dot(p);
    if det.abs() < 1e-12 {
        return None;
    }
    let inv = 1.0 / det;
    let s = ray.origin - a;
    let u = s.dot(p) * inv;
    let q = s.cross(e1);
    let v = ray.direction.dot(q) * inv;
    let t = e2.dot(q) * inv;
    (u >= 0.0 && v >= 0.0 && u + v <= 1.0 && t >= 0.0).then_some((t, u, v))
}

/// The particle the ray points at: the corner nearest the first of `triangles` hit, or, when no
/// triangle is hit (ropes, a ray just off the cloth's silhouette), the particle within `radius`
/// m of the ray that is nearest the ray's origin — held at that corner of one of its triangles
/// when it has any, so a press just off the cloth grabs the cloth there as a press on it would.
pub(crate) fn pick(p: &Particles, triangles: &[[u32; 3]], ray: &Ray, radius: f32) -> Option<Pick> {
    pick_triangle(p, triangles, ray).or_else(|| {
        let near = pick_near_ray(p, ray, radius)?;
        let corner_of = |(k, tri): (usize, &[u32; 3])| {
            let corner = tri.iter().position(|&i| i == near.particle)?;
            let mut barycentric = [0.0; 3];
            barycentric[corner] = 1.0;
            Some(TriangleHit {
                triangle: k as u32,
                barycentric,
            })
        };
        Some(Pick {
            hit: triangles.iter().enumerate().find_map(corner_of),
            ..near
        })
    })
}

fn pick_triangle(p: &Particles, triangles: &[[u32; 3]], ray: &Ray) -> Option<Pick> {
    let mut best: Option<(f32, f32, f32, usize)> = None;
    for (k, &tri) in triangles.iter().enumerate() {
        let [a, b, c] = tri.map(|i| p.position(i as usize));
        if let Some((t, u, v)) = ray_triangle_uv(ray, a, b, c) {
            if best.is_none_or(|(bt, ..)| t < bt) {
                best = Some((t, u, v, k));
            }
        }
    }
    let (t, u, v, k) = best?;
    let tri = triangles[k];
    let hit = TriangleHit {
        triangle: k as u32,
        barycentric: [(1.0 - u - v).max(0.0), u, v],
    };
    let at = ray.at(t);
    let particle = tri.into_iter().min_by(|&i, &j| {
        let di = p.position(i as usize).distance_squared(at);
        let dj = p.position(j as usize).distance_squared(at);
        di.total_cmp(&dj)
    })?;
    Some(Pick {
        particle,
        t,
        hit: Some(hit),
    })
}

fn pick_near_ray(p: &Particles, ray: &Ray, radius: f32) -> Option<Pick> {
    let len2 = ray.direction.length_squared();
    if len2 <= 0.0 {
        return None;
    }
    let mut best: Option<Pick> = None;
    for (i, x) in p.positions().enumerate() {
        let t = (x - ray.origin).dot(ray.direction) / len2;
        if t < 0.0 || ray.at(t).distance(x) > radius {
            continue;
        }
        if best.is_none_or(|b| t < b.t) {
            best = Some(Pick {
                particle: i as u32,
                t,
                hit: None,
            });
        }
    }
    best
}
