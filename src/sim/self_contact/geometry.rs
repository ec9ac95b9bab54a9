//! The triangle geometry of the contacts (Ericson, *Real-Time Collision Detection*): a
//! triangle's bounding box, whether its corners alone keep particles from crossing it, and the
//! point of it closest to a point, with that point's barycentric coordinates.

use glam::Vec3;

/// The bounding box (lowest, highest corner) of a triangle.
pub(super) fn bounds([a, b, c]: [Vec3; 3]) -> (Vec3, Vec3) {
    (a.min(b).min(c), a.max(b).max(c))
}

/// Whether triangle `abc`'s circumradius R = |ab| |bc| |ca| / (2 |ab × ac|) is below `d`: no
/// point of the triangle is then d or more from its nearest corner, so a particle kept d from
/// the corners by the pairs cannot cross it (parent module's docs, "Vertex–triangle contacts").
pub(super) fn covered_by_corners([a, b, c]: [Vec3; 3], d: f32) -> bool {
    let area2 = (b - a).cross(c - a).length_squared();
    (b - a).length_squared() * (c - b).length_squared() * (a - c).length_squared() < 4.0 * d * d * area2
}

/// The point of triangle `abc` closest to `p` (Ericson, *Real-Time Collision Detection*
/// §5.1.5: the vertex, edge or face region `p` projects into).
pub(super) fn closest_point(p: Vec3, corners: [Vec3; 3]) -> Vec3 {
    point_at(corners, closest_barycentric(p, corners))
}

/// The point of triangle `corners` at barycentric coordinates `[u, v, w]`.
pub(crate) fn point_at([a, b, c]: [Vec3; 3], [u, v, w]: [f32; 3]) -> Vec3 {
    a * u + b * v + c * w
}

/// The barycentric coordinates (u, v, w), each in [0, 1] and summing to 1, of the point of
/// triangle `abc` closest to `p` ([`closest_point`]).
pub(crate) fn closest_barycentric(p: Vec3, [a, b, c]: [Vec3; 3]) -> [f32; 3] {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return [1.0, 0.0, 0.0];
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return [0.0, 1.0, 0.0];
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let t = d1 / (d1 - d3);
        return [1.0 - t, t, 0.0];
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return [0.0, 0.0, 1.0];
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let t = d2 / (d2 - d6);
        return [1.0 - t, 0.0, t];
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 >= d3 && d5 >= d6 {
        let t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return [0.0, 1.0 - t, t];
    }
    let scale = 1.0 / (va + vb + vc);
    let (v, w) = (vb * scale, vc * scale);
    [1.0 - v - w, v, w]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A right isosceles triangle of 1 cm legs has circumradius √2/2 cm: covered by its
    /// corners at a 1 cm thickness, not at 7 mm; an equilateral one of side 1 cm (R = 1/√3 cm)
    /// at 6 mm but not at 5.7 mm.
    #[test]
    fn triangles_finer_than_the_thickness_are_covered_by_their_corners() {
        let right = [Vec3::ZERO, Vec3::X * 0.01, Vec3::Z * 0.01];
        assert!(covered_by_corners(right, 0.01) && !covered_by_corners(right, 0.007));
        let equilateral = [Vec3::ZERO, Vec3::X * 0.01, Vec3::new(0.005, 0.0, 0.005 * 3f32.sqrt())];
        assert!(covered_by_corners(equilateral, 0.006) && !covered_by_corners(equilateral, 0.0057));
    }

    /// The closest point lies on the triangle and no point of a dense sample of it is closer,
    /// for points in every vertex, edge and face region.
    #[test]
    fn the_closest_point_of_a_triangle_matches_a_search() {
        let triangle = [Vec3::ZERO, Vec3::new(0.03, 0.0, 0.0), Vec3::new(0.01, 0.005, 0.02)];
        let [a, b, c] = triangle;
        let steps = 200;
        let sample: Vec<Vec3> = (0..=steps)
            .flat_map(|i| (0..=steps - i).map(move |j| (i as f32 / steps as f32, j as f32 / steps as f32)))
            .map(|(v, w)| a + (b - a) * v + (c - a) * w)
            .collect();
        for x in -2..=5 {
            for z in -2..=5 {
                let p = Vec3::new(x as f32 * 0.008, 0.004, z as f32 * 0.006);
                let found = closest_point(p, triangle);
                let searched = sample.iter().map(|q| p.distance(*q)).fold(f32::MAX, f32::min);
                assert!(p.distance(found) <= searched + 1e-6, "{p}: {found} against {searched}");
                assert!(p.distance(found) > searched - 3e-4, "{p}: {found} against {searched}");
            }
        }
    }

    /// A point over the triangle gets the coordinates of its projection, all positive; one
    /// beside an edge those of its foot on the edge (one coordinate 0), one beyond a corner the
    /// corner's; they sum to 1 in each case.
    #[test]
    fn barycentric_coordinates_of_the_closest_point_name_its_region() {
        let triangle = [Vec3::ZERO, Vec3::new(0.03, 0.0, 0.0), Vec3::new(0.0, 0.0, 0.03)];
        let rebuilt = |b| point_at(triangle, b);
        let over = closest_barycentric(Vec3::new(0.01, 0.007, 0.005), triangle);
        assert!(over.iter().all(|&c| c > 0.0) && rebuilt(over).distance(Vec3::new(0.01, 0.0, 0.005)) < 1e-7);
        let beside = closest_barycentric(Vec3::new(0.02, 0.007, 0.02), triangle);
        assert!(beside[0] == 0.0 && rebuilt(beside).distance(Vec3::new(0.015, 0.0, 0.015)) < 1e-7);
        assert_eq!(closest_barycentric(Vec3::new(-0.01, 0.003, -0.01), triangle), [1.0, 0.0, 0.0]);
        for b in [over, beside] {
            assert!((b.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        }
    }
}
