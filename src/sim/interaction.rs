//! Picking: which particle a mouse ray points at. The app turns the cursor into a world-space
//! [`Ray`]; the engine never sees pixels.

use glam::Vec3;

use super::cloth::Cloth;

/// A half-line origin + t·direction, t ≥ 0 (direction need not be normalised).
#[derive(Debug, Clone, Copy, PartialEq)]
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
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pick {
    /// The picked particle.
    pub particle: u32,
    /// Ray parameter of the hit (distance along the ray if the direction is normalised).
    pub t: f32,
}

/// Möller–Trumbore ray/triangle intersection; returns t, or `None` on a miss or a degenerate
/// triangle.
pub fn ray_triangle(ray: &Ray, a: Vec3, b: Vec3, c: Vec3) -> Option<f32> {
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
    (u >= 0.0 && v >= 0.0 && u + v <= 1.0 && t >= 0.0).then_some(t)
}

impl Cloth {
    /// The particle the ray points at: the corner nearest the first triangle hit, or, when no
    /// triangle is hit (ropes, a ray grazing the edge), the particle within `radius` m of the ray
    /// that is nearest the ray's origin.
    pub fn pick(&self, ray: &Ray, radius: f32) -> Option<Pick> {
        self.pick_triangle(ray).or_else(|| self.pick_near_ray(ray, radius))
    }

    fn pick_triangle(&self, ray: &Ray) -> Option<Pick> {
        let p = self.particles();
        let mut best: Option<(f32, [u32; 3])> = None;
        for &tri in self.triangles() {
            let [a, b, c] = tri.map(|i| p.position(i as usize));
            if let Some(t) = ray_triangle(ray, a, b, c) {
                if best.is_none_or(|(bt, _)| t < bt) {
                    best = Some((t, tri));
                }
            }
        }
        let (t, tri) = best?;
        let hit = ray.at(t);
        let particle = tri.into_iter().min_by(|&i, &j| {
            let di = p.position(i as usize).distance_squared(hit);
            let dj = p.position(j as usize).distance_squared(hit);
            di.total_cmp(&dj)
        })?;
        Some(Pick { particle, t })
    }

    fn pick_near_ray(&self, ray: &Ray, radius: f32) -> Option<Pick> {
        let len2 = ray.direction.length_squared();
        if len2 <= 0.0 {
            return None;
        }
        let mut best: Option<Pick> = None;
        for (i, x) in self.particles().positions().enumerate() {
            let t = (x - ray.origin).dot(ray.direction) / len2;
            if t < 0.0 || ray.at(t).distance(x) > radius {
                continue;
            }
            if best.is_none_or(|b| t < b.t) {
                best = Some(Pick { particle: i as u32, t });
            }
        }
        best
    }
}
