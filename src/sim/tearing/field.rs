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

use std::ops::{Add, AddAssign, Mul};

use glam::Vec3;

/// The most smoothing passes a frame makes (a mesh far finer than the tear length): beyond it
/// the average is narrower than ℓ, never more costly.
const MAX_PASSES: usize = 64;

/// A symmetric 3 × 3 tensor (a strain in rest-space coordinates) by its six components.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Sym3 {
    pub xx: f32,
    pub yy: f32,
    pub zz: f32,
    pub xy: f32,
    pub xz: f32,
    pub yz: f32,
}

impl Sym3 {
    const ZERO: Sym3 = Sym3 {
        xx: 0.0,
        yy: 0.0,
        zz: 0.0,
        xy: 0.0,
        xz: 0.0,
        yz: 0.0,
    };

    /// ½(u vᵀ + v uᵀ).
    fn symmetric_outer(u: Vec3, v: Vec3) -> Self {
        Sym3 {
            xx: u.x * v.x,
            yy: u.y * v.y,
            zz: u.z * v.z,
            xy: 0.5 * (u.x * v.y + v.x * u.y),
            xz: 0.5 * (u.x * v.z + v.x * u.z),
            yz: 0.5 * (u.y * v.z + v.y * u.z),
        }
    }

    /// dᵀ E d: the (Green) strain along the unit direction `d`.
    pub fn along(&self, d: Vec3) -> f32 {
        d.x * d.x * self.xx
            + d.y * d.y * self.yy
            + d.z * d.z * self.zz
            + 2.0 * (d.x * d.y * self.xy + d.x * d.z * self.xz + d.y * d.z * self.yz)
    }

    /// The trace: the sum of the strains along any three orthogonal directions.
    pub fn trace(&self) -> f32 {
        self.xx + self.yy + self.zz
    }
}

impl Add for Sym3 {
    type Output = Sym3;
    fn add(self, o: Sym3) -> Sym3 {
        Sym3 {
            xx: self.xx + o.xx,
            yy: self.yy + o.yy,
            zz: self.zz + o.zz,
            xy: self.xy + o.xy,
            xz: self.xz + o.xz,
            yz: self.yz + o.yz,
        }
    }
}

impl AddAssign for Sym3 {
    fn add_assign(&mut self, o: Sym3) {
        *self = *self + o;
    }
}

impl Mul<f32> for Sym3 {
    type Output = Sym3;
    fn mul(self, k: f32) -> Sym3 {
        Sym3 {
            xx: self.xx * k,
            yy: self.yy * k,
            zz: self.zz * k,
            xy: self.xy * k,
            xz: self.xz * k,
            yz: self.yz * k,
        }
    }
}

/// A triangle's rest shape as the strain needs it: an orthonormal frame (e1, e2) of its rest
/// plane, e1 along its first edge, and D_m⁻¹ = [[1/a, −b/(ac)], [0, 1/c]] for the rest edge
/// vectors r1 = (a, 0), r2 = (b, c) in that frame.
#[derive(Debug, Clone, Copy)]
struct TriangleFrame {
    e1: Vec3,
    e2: Vec3,
    inverse_a: f32,
    b_over_a: f32,
    inverse_c: f32,
    /// Rest area (m²); 0 for a degenerate triangle, which carries no strain.
    area: f32,
}

impl TriangleFrame {
    fn of(rest: [Vec3; 3]) -> Self {
        let (r1, r2) = (rest[1] - rest[0], rest[2] - rest[0]);
        let normal = r1.cross(r2);
        if normal.length_squared() <= f32::MIN_POSITIVE || r1.length_squared() <= f32::MIN_POSITIVE {
            return TriangleFrame {
                e1: Vec3::ZERO,
                e2: Vec3::ZERO,
                inverse_a: 0.0,
                b_over_a: 0.0,
                inverse_c: 0.0,
                area: 0.0,
            };
        }
        let e1 = r1.normalize();
        let e2 = normal.normalize().cross(e1);
        let (a, b, c) = (r1.length(), r2.dot(e1), r2.dot(e2));
        TriangleFrame {
            e1,
            e2,
            inverse_a: 1.0 / a,
            b_over_a: b / a,
            inverse_c: 1.0 / c,
            area: 0.5 * normal.length(),
        }
    }

    /// Green strain ½(FᵀF − I) with F = D_s D_m⁻¹ for the `current` corners, lifted into rest
    /// space as g11 e1e1ᵀ + g12 (e1e2ᵀ + e2e1ᵀ) + g22 e2e2ᵀ.
    fn green_strain(&self, current: [Vec3; 3]) -> Sym3 {
        if self.area == 0.0 {
            return Sym3::ZERO;
        }
        let (s1, s2) = (current[1] - current[0], current[2] - current[0]);
        let f1 = s1 * self.inverse_a;
        let f2 = (s2 - s1 * self.b_over_a) * self.inverse_c;
        let (g11, g12, g22) = (0.5 * (f1.dot(f1) - 1.0), 0.5 * f1.dot(f2), 0.5 * (f2.dot(f2) - 1.0));
        let (e1, e2) = (self.e1, self.e2);
        Sym3::symmetric_outer(e1, e1) * g11 + Sym3::symmetric_outer(e1, e2) * (2.0 * g12) + Sym3::symmetric_outer(e2, e2) * g22
    }
}

/// What the field needs of the rest shape and the triangles, built once per topology.
#[derive(Debug, Clone, Default)]
struct RestShape {
    frames: Vec<TriangleFrame>,
    /// Per vertex, the rest area of its triangles (m²); 0 for a vertex no triangle uses.
    weight: Vec<f32>,
    /// One smoothing pass as a gather: vertex v's new value is Σ w · `value[u]` over the (u, w)
    /// in `spread[start[v]..start[v + 1]]` (v itself and its neighbours; the w sum to 1).
    start: Vec<u32>,
    spread: Vec<(u32, f32)>,
}

impl RestShape {
    fn build(triangles: &[[u32; 3]], rest: &[Vec3]) -> Self {
        let frames: Vec<TriangleFrame> = triangles.iter().map(|t| TriangleFrame::of(t.map(|i| rest[i as usize]))).collect();
        let vertices = rest.len();
        let mut weight = vec![0.0f32; vertices];
        let mut fan_start = vec![0u32; vertices + 1];
        for (tri, frame) in triangles.iter().zip(&frames) {
            for &v in tri {
                weight[v as usize] += frame.area;
                fan_start[v as usize + 1] += 1;
            }
        }
        for v in 0..vertices {
            fan_start[v + 1] += fan_start[v];
        }
        let mut fans = vec![0u32; fan_start[vertices] as usize];
        let mut filled = fan_start.clone();
        for (t, tri) in triangles.iter().enumerate() {
            for &v in tri {
                fans[filled[v as usize] as usize] = t as u32;
                filled[v as usize] += 1;
            }
        }
        // The pass (see the module docs): each triangle's mean, weighted by its area, over the
        // area of v's triangles; a corner u of k of them gets Σ area/3 of those.
        let (mut start, mut spread) = (Vec::with_capacity(vertices + 1), Vec::new());
        start.push(0);
        for v in 0..vertices {
            let first = spread.len();
            for &t in &fans[fan_start[v] as usize..fan_start[v + 1] as usize] {
                let share = frames[t as usize].area / (3.0 * weight[v]);
                for u in triangles[t as usize] {
                    match spread[first..].iter_mut().find(|(w, _): &&mut (u32, f32)| *w == u) {
                        Some(entry) => entry.1 += share,
                        None => spread.push((u, share)),
                    }
                }
            }
            start.push(spread.len() as u32);
        }
        RestShape {
            frames,
            weight,
            start,
            spread,
        }
    }
}

/// The strain tensor field of one cloth, averaged over the tear length.
#[derive(Debug, Clone, Default)]
pub(super) struct StrainField {
    /// The rest shape's frames and the smoothing pass, until the topology changes.
    rest: Option<RestShape>,
    /// Green strain at each vertex, averaged (in rest-space coordinates).
    tensor: Vec<Sym3>,
    /// Scratch: the previous pass's values.
    previous: Vec<Sym3>,
}

impl StrainField {
    /// Measures the field of the cloth with `triangles` over `rest` positions, at `current`
    /// positions, averaged by `passes` smoothing passes. The rest shape's part is reused until
    /// [`Self::forget_rest_shape`].
    pub fn measure(&mut self, triangles: &[[u32; 3]], rest: &[Vec3], current: impl Fn(usize) -> Vec3, passes: usize) {
        let shape = self.rest.get_or_insert_with(|| RestShape::build(triangles, rest));
        debug_assert_eq!((shape.frames.len(), shape.weight.len()), (triangles.len(), rest.len()));
        self.tensor.clear();
        self.tensor.resize(rest.len(), Sym3::ZERO);
        for (tri, frame) in triangles.iter().zip(&shape.frames) {
            let strain = frame.green_strain(tri.map(|i| current(i as usize))) * frame.area;
            for &v in tri {
                self.tensor[v as usize] += strain;
            }
        }
        for (t, &w) in self.tensor.iter_mut().zip(&shape.weight) {
            *t = if w > 0.0 { *t * (1.0 / w) } else { Sym3::ZERO };
        }
        for _ in 0..passes {
            std::mem::swap(&mut self.tensor, &mut self.previous);
            self.tensor.clear();
            self.tensor.extend(shape.start.windows(2).map(|range| {
                shape.spread[range[0] as usize..range[1] as usize]
                    .iter()
                    .fold(Sym3::ZERO, |sum, &(u, w)| sum + self.previous[u as usize] * w)
            }));
        }
    }

    /// The triangles or the rest shape changed (a tear or a cut): the next measurement
    /// rebuilds the rest shape's part. Until then the field keeps its values.
    pub fn forget_rest_shape(&mut self) {
        self.rest = None;
    }

    /// The averaged Green strain tensor at vertex `v`, if a triangle uses it (and the rest
    /// shape measured with is still current).
    pub fn at(&self, v: u32) -> Option<Sym3> {
        let weight = self.rest.as_ref()?.weight.get(v as usize)?;
        (*weight > 0.0).then(|| self.tensor[v as usize])
    }

    /// The engineering strain along the unit `direction` (rest shape) of an edge from `a` to
    /// `b`, from the field at the mean of its ends; `None` if neither end carries the field.
    pub fn edge_strain(&self, a: u32, b: u32, direction: Vec3) -> Option<f32> {
        let tensor = self.between(a, b)?;
        Some(engineering_strain(tensor.along(direction)))
    }

    /// The Green strain the field at `v` puts across a line through it of unit rest
    /// `direction`, in the cloth's plane (the trace minus the strain along it): what opens a
    /// crack running that way. `None` where there is no field.
    pub fn opening_at(&self, v: u32, direction: Vec3) -> Option<f32> {
        let tensor = self.at(v)?;
        Some(tensor.trace() - tensor.along(direction))
    }

    /// The field at the mean of vertices `a` and `b` (the one end's where the other has none).
    fn between(&self, a: u32, b: u32) -> Option<Sym3> {
        match (self.at(a), self.at(b)) {
            (Some(ta), Some(tb)) => Some((ta + tb) * 0.5),
            (Some(t), None) | (None, Some(t)) => Some(t),
            (None, None) => None,
        }
    }
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

#[cfg(test)]
mod tests {
    use glam::{Mat3, Vec3};

    use super::{engineering_strain, smoothing_passes, StrainField, TriangleFrame};

    /// The field of `triangles` over `rest` at `current`, smoothed `passes` times.
    fn field_of(triangles: &[[u32; 3]], rest: &[Vec3], current: impl Fn(usize) -> Vec3, passes: usize) -> StrainField {
        let mut field = StrainField::default();
        field.measure(triangles, rest, current, passes);
        field
    }

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
        let strain = TriangleFrame::of(rest).green_strain(rest.map(|p| spin * (f * p)));
        for (got, (i, j)) in [(strain.xx, (0, 0)), (strain.xy, (0, 1)), (strain.yy, (1, 1))] {
            assert!((got - expected.col(j)[i]).abs() < 1e-5, "E[{i}][{j}] = {got}");
        }
        let out_of_plane = [strain.zz, strain.xz, strain.yz];
        assert!(out_of_plane.iter().all(|e| e.abs() < 1e-6), "out of plane: {strain:?}");
        // Along x the fibre is 30 % longer: engineering strain 0.3.
        assert!((engineering_strain(strain.along(Vec3::X)) - 0.3).abs() < 1e-5);
    }

    #[test]
    fn smoothing_keeps_a_uniform_field_and_a_border_reads_as_the_inside() {
        let (rest, triangles) = grid(9, 9);
        let stretched = |i: usize| Vec3::new(1.2 * rest[i].x, rest[i].y, 0.0);
        let field = field_of(&triangles, &rest, stretched, 5);
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
        let total = |f: &StrainField| (0..rest.len() as u32).map(|v| f.at(v).unwrap().xx).sum::<f32>();
        let peaks: Vec<f32> = [0, 1, 4]
            .iter()
            .map(|&n| field_of(&triangles, &rest, pulled, n).at(centre as u32).unwrap().xx.abs())
            .collect();
        assert!(peaks[0] > peaks[1] && peaks[1] > peaks[2], "{peaks:?}");
        let (one, four) = (field_of(&triangles, &rest, pulled, 1), field_of(&triangles, &rest, pulled, 4));
        let far = centre as u32 + 3;
        assert!(one.at(far).unwrap().xx.abs() < four.at(far).unwrap().xx.abs());
        // The spread stays inside, where every vertex weighs the same (six half-unit triangles):
        // the plain sum is kept.
        assert!((total(&one) - total(&four)).abs() < 1e-4 * total(&one).abs().max(1.0));
    }

    /// The rest shape is kept between measurements (the positions are not), and a new one is
    /// read once it is forgotten: measured against its own stretched shape, a sheet is at rest.
    #[test]
    fn a_kept_field_reads_new_positions_and_a_new_rest_shape_once_told() {
        let (rest, triangles) = grid(5, 5);
        let stretched: Vec<Vec3> = rest.iter().map(|p| Vec3::new(1.25 * p.x, p.y, 0.0)).collect();
        let mut field = field_of(&triangles, &rest, |i| rest[i], 2);
        field.measure(&triangles, &rest, |i| stretched[i], 2);
        assert_eq!(field.tensor, field_of(&triangles, &rest, |i| stretched[i], 2).tensor);
        field.forget_rest_shape();
        assert!(field.at(0).is_none(), "no field until it is measured again");
        field.measure(&triangles, &stretched, |i| stretched[i], 2);
        assert!(field.tensor.iter().all(|t| t.along(Vec3::X).abs() < 1e-6), "{:?}", field.tensor[12]);
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
