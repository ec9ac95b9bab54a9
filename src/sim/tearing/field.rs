//! The strain field the tear criterion reads: the cloth's strain tensor averaged over a
//! material length ℓ (`tear_length`), not the strain of single edges (docs/physics.md §8).
//!
//! **Per triangle.** With the rest shape's edge vectors D_m (in an orthonormal frame of the
//! triangle's rest plane) and the current ones D_s, the deformation gradient is
//! F = D_s D_m⁻¹ (3 × 2) and the Green strain E = ½(FᵀF − I) (2 × 2), lifted into the rest
//! space as B E Bᵀ with B the frame's two unit vectors. This is the continuum's strain: every
//! direction's stretch, shear included, from the triangle's three corners, the same on a
//! border triangle as inside (an edge-by-edge criterion reads a border's few edges, which one
//! sweep per substep leaves more stretched, and peels the border off as a ribbon).
//!
//! **Averaged over ℓ.** At a point load or a crack tip the continuum's strain is singular, so
//! the strain of the triangles there grows without bound as the mesh is refined, and a
//! criterion on it would tear a fine mesh sooner and elsewhere than a coarse one. Fracture
//! mechanics of fabrics and composites meets this with a nonlocal criterion (the average-stress
//! criterion of Whitney and Nuismer 1974): the material fails where the strain averaged over a
//! characteristic length exceeds its limit. Here the triangles' strains are lumped onto the
//! vertices (area-weighted) and smoothed by n passes, each a vertex → triangle mean → vertex
//! area-weighted mean over the current triangles (so the average never reaches across a
//! crack, and a border is averaged over the cloth that is there). On a regular mesh of spacing
//! h one pass spreads the average by a variance 4h²/9 per axis; n = ⌈9ℓ²/(16h²)⌉ passes make it
//! a Gaussian of standard deviation ℓ/2, so most of the weight lies within ℓ, whatever the
//! mesh. An edge's strain for the criterion is the averaged tensor's normal strain along the
//! edge's rest direction, at the mean of its two ends.

use glam::{Mat3, Vec3};

/// The most smoothing passes a frame makes (a mesh far finer than the tear length): beyond it
/// the average is narrower than ℓ, never more costly.
const MAX_PASSES: usize = 64;

/// The strain tensor field of one cloth, averaged over the tear length.
#[derive(Debug, Clone, Default)]
pub(super) struct StrainField {
    /// Green strain at each vertex, averaged (symmetric, in rest-space coordinates); zero for a
    /// vertex no triangle uses.
    tensor: Vec<Mat3>,
    /// Whether a triangle uses the vertex (a rope's vertices carry no field).
    covered: Vec<bool>,
}

impl StrainField {
    /// The field of the cloth with `triangles` over `rest` positions, at `current` positions,
    /// averaged by `passes` smoothing passes.
    pub fn compute(triangles: &[[u32; 3]], rest: &[Vec3], current: impl Fn(usize) -> Vec3, passes: usize) -> Self {
        let vertices = rest.len();
        let mut sum = vec![Mat3::ZERO; vertices];
        let mut weight = vec![0.0f32; vertices];
        let mut areas = Vec::with_capacity(triangles.len());
        for tri in triangles {
            let corners = tri.map(|i| rest[i as usize]);
            let area = 0.5 * (corners[1] - corners[0]).cross(corners[2] - corners[0]).length();
            areas.push(area);
            let strain = green_strain(corners, tri.map(|i| current(i as usize)));
            for &v in tri {
                sum[v as usize] += strain * area;
                weight[v as usize] += area;
            }
        }
        let covered: Vec<bool> = weight.iter().map(|&w| w > 0.0).collect();
        let mut tensor = normalised(sum, &weight);
        for _ in 0..passes {
            let mut next = vec![Mat3::ZERO; vertices];
            for (tri, &area) in triangles.iter().zip(&areas) {
                let mean = (tensor[tri[0] as usize] + tensor[tri[1] as usize] + tensor[tri[2] as usize]) * (1.0 / 3.0);
                // Weighted by the triangle's area, as in the lumping above.
                for &v in tri {
                    next[v as usize] += mean * area;
                }
            }
            tensor = normalised(next, &weight);
        }
        StrainField { tensor, covered }
    }

    /// The averaged Green strain tensor at vertex `v`, if a triangle uses it.
    pub fn at(&self, v: u32) -> Option<Mat3> {
        self.covered
            .get(v as usize)
            .copied()
            .unwrap_or(false)
            .then(|| self.tensor[v as usize])
    }

    /// The engineering strain along the unit `direction` (rest shape) of an edge from `a` to
    /// `b`, from the field at the mean of its ends; `None` if neither end carries the field.
    pub fn edge_strain(&self, a: u32, b: u32, direction: Vec3) -> Option<f32> {
        let tensor = self.between(a, b)?;
        Some(engineering_strain(direction.dot(tensor * direction)))
    }

    /// The Green strain across an edge from `a` to `b` of unit rest `direction`, in the
    /// cloth's plane (the trace minus the strain along it): what opens a crack running along
    /// the edge. `None` if neither end carries the field.
    pub fn edge_opening(&self, a: u32, b: u32, direction: Vec3) -> Option<f32> {
        let tensor = self.between(a, b)?;
        let trace = tensor.col(0).x + tensor.col(1).y + tensor.col(2).z;
        Some(trace - direction.dot(tensor * direction))
    }

    /// The field at the mean of vertices `a` and `b` (the one end's where the other has none).
    fn between(&self, a: u32, b: u32) -> Option<Mat3> {
        match (self.at(a), self.at(b)) {
            (Some(ta), Some(tb)) => Some((ta + tb) * 0.5),
            (Some(t), None) | (None, Some(t)) => Some(t),
            (None, None) => None,
        }
    }
}

/// Divides each vertex's `sum` by its `weight` (a vertex of weight 0 keeps zero).
fn normalised(mut sum: Vec<Mat3>, weight: &[f32]) -> Vec<Mat3> {
    for (s, &w) in sum.iter_mut().zip(weight) {
        *s = if w > 0.0 { *s * (1.0 / w) } else { Mat3::ZERO };
    }
    sum
}

/// The engineering strain λ − 1 of a direction whose Green strain is `green` (λ² = 1 + 2E;
/// a direction compressed to nothing or beyond reads −1).
pub(super) fn engineering_strain(green: f32) -> f32 {
    (1.0 + 2.0 * green).max(0.0).sqrt() - 1.0
}

/// Smoothing passes that average over a length `tear_length` on a mesh whose stretch edges
/// are `spacing` long on average (m; see the module docs), at most [`MAX_PASSES`].
pub(super) fn smoothing_passes(tear_length: f32, spacing: f32) -> usize {
    if spacing <= 0.0 || tear_length <= 0.0 {
        return 0;
    }
    let passes = (9.0 * tear_length * tear_length / (16.0 * spacing * spacing)).ceil();
    (passes as usize).min(MAX_PASSES)
}

/// Green strain ½(FᵀF − I) of a triangle with `rest` and `current` corners, in rest-space
/// coordinates (a degenerate rest triangle has none).
pub(super) fn green_strain(rest: [Vec3; 3], current: [Vec3; 3]) -> Mat3 {
    let (r1, r2) = (rest[1] - rest[0], rest[2] - rest[0]);
    let normal = r1.cross(r2);
    if normal.length_squared() <= f32::MIN_POSITIVE || r1.length_squared() <= f32::MIN_POSITIVE {
        return Mat3::ZERO;
    }
    let e1 = r1.normalize();
    let e2 = normal.normalize().cross(e1);
    // D_m = [r1 r2] in the (e1, e2) frame: r1 = (|r1|, 0), r2 = (r2·e1, r2·e2).
    let (a, b, c) = (r1.length(), r2.dot(e1), r2.dot(e2));
    // D_m⁻¹ = [[1/a, −b/(ac)], [0, 1/c]].
    let (s1, s2) = (current[1] - current[0], current[2] - current[0]);
    let f1 = s1 / a;
    let f2 = (s2 - s1 * (b / a)) / c;
    let (c11, c12, c22) = (f1.dot(f1), f1.dot(f2), f2.dot(f2));
    let (g11, g12, g22) = (0.5 * (c11 - 1.0), 0.5 * c12, 0.5 * (c22 - 1.0));
    outer(e1, e1) * g11 + (outer(e1, e2) + outer(e2, e1)) * g12 + outer(e2, e2) * g22
}

/// u vᵀ.
fn outer(u: Vec3, v: Vec3) -> Mat3 {
    Mat3::from_cols(u * v.x, u * v.y, u * v.z)
}

#[cfg(test)]
mod tests {
    use glam::{Mat3, Vec3};

    use super::{engineering_strain, green_strain, smoothing_passes, StrainField};

    /// Triangles of a w × h grid of unit spacing in the xy plane.
    fn grid(w: u32, h: u32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let rest = (0..h)
            .flat_map(|y| (0..w).map(move |x| Vec3::new(x as f32, y as f32, 0.0)))
            .collect();
        let mut triangles = Vec::new();
        for y in 0..h - 1 {
            for x in 0..w - 1 {
                let i = y * w + x;
                triangles.push([i, i + 1, i + w + 1]);
                triangles.push([i, i + w + 1, i + w]);
            }
        }
        (rest, triangles)
    }

    #[test]
    fn a_uniform_stretch_and_shear_read_their_closed_form_on_any_triangle() {
        // x' = (1.3 x + 0.2 y, 0.9 y, 0) rotated about z by 40°: C = FᵀF is rotation-free.
        let f = Mat3::from_cols(Vec3::new(1.3, 0.0, 0.0), Vec3::new(0.2, 0.9, 0.0), Vec3::Z);
        let spin = Mat3::from_rotation_z(0.7);
        let expected = (f.transpose() * f - Mat3::IDENTITY) * 0.5;
        let rest = [Vec3::new(0.1, 0.2, 0.0), Vec3::new(1.4, 0.5, 0.0), Vec3::new(-0.3, 1.1, 0.0)];
        let strain = green_strain(rest, rest.map(|p| spin * (f * p)));
        for (i, j) in [(0, 0), (0, 1), (1, 1)] {
            let got = strain.col(j)[i];
            assert!((got - expected.col(j)[i]).abs() < 1e-5, "E[{i}][{j}] = {got}");
        }
        assert!(
            strain.col(2).length() < 1e-6 && strain.row(2).length() < 1e-6,
            "out of plane: {strain}"
        );
        // Along x the fibre is 30 % longer: engineering strain 0.3.
        assert!((engineering_strain(Vec3::X.dot(strain * Vec3::X)) - 0.3).abs() < 1e-5);
    }

    #[test]
    fn smoothing_keeps_a_uniform_field_and_a_border_reads_as_the_inside() {
        let (rest, triangles) = grid(9, 9);
        let stretched = |i: usize| Vec3::new(1.2 * rest[i].x, rest[i].y, 0.0);
        let field = StrainField::compute(&triangles, &rest, stretched, 5);
        for v in [0u32, 4, 40, 80] {
            let along = field.edge_strain(v, v + 1, Vec3::X).unwrap();
            assert!((along - 0.2).abs() < 1e-5, "vertex {v}: {along}");
            let across = field.edge_strain(v, v + 1, Vec3::Y).unwrap();
            assert!(across.abs() < 1e-5, "vertex {v}: {across}");
        }
    }

    /// One stretched triangle in a resting sheet: each pass spreads its strain further and
    /// lowers its peak, and the total (area-weighted) strain stays the same.
    #[test]
    fn smoothing_spreads_a_peak_and_keeps_its_total() {
        let (rest, triangles) = grid(13, 13);
        let centre = 6 * 13 + 6usize;
        let pulled = |i: usize| if i == centre { rest[i] + Vec3::X * 0.5 } else { rest[i] };
        let total = |f: &StrainField| (0..rest.len() as u32).map(|v| f.at(v).unwrap().col(0).x).sum::<f32>();
        let peaks: Vec<f32> = [0, 1, 4]
            .iter()
            .map(|&n| {
                StrainField::compute(&triangles, &rest, pulled, n)
                    .at(centre as u32)
                    .unwrap()
                    .col(0)
                    .x
                    .abs()
            })
            .collect();
        assert!(peaks[0] > peaks[1] && peaks[1] > peaks[2], "{peaks:?}");
        let (one, four) = (
            StrainField::compute(&triangles, &rest, pulled, 1),
            StrainField::compute(&triangles, &rest, pulled, 4),
        );
        let far = centre as u32 + 3;
        assert!(one.at(far).unwrap().col(0).x.abs() < four.at(far).unwrap().col(0).x.abs());
        // The spread stays inside, where every vertex weighs the same (six half-unit triangles):
        // the plain sum is kept.
        assert!((total(&one) - total(&four)).abs() < 1e-4 * total(&one).abs().max(1.0));
    }

    #[test]
    fn passes_grow_with_the_square_of_length_over_spacing() {
        assert_eq!(smoothing_passes(0.0, 0.03), 0);
        assert_eq!(smoothing_passes(0.04, 0.04), 1);
        assert_eq!(smoothing_passes(0.08, 0.04), 3);
        assert_eq!(smoothing_passes(0.08, 0.02), 9);
        assert_eq!(smoothing_passes(10.0, 0.001), 64);
    }
}
