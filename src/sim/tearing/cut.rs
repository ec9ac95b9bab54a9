//! Where a mouse cut runs through the cloth (docs/physics.md §8).
//!
//! A stroke from the camera sweeps a surface between two rays: [`CutSurface`], the quad from
//! the rays' origins out to [`FAR`] along them. The cut opens the mesh along a *seam*: the
//! triangle edges the surface crosses ([`crossings`]) first have an endpoint snapped onto it
//! ([`super::snapping`]); the seam then runs through the vertices on the stroke, and along the
//! mesh edges around a crossing where neither endpoint could move ([`seam_vertices`]). Each
//! seam vertex is split between the triangles in front of the surface and the others
//! ([`sides_of_seam`]), so the cut leaves a clean edge on each side.

use glam::Vec3;

use super::super::interaction::{ray_triangle, Ray};
use super::topology::{shares_edge, Mesh};

/// How far along the stroke's rays the cut surface reaches (m): beyond any cloth.
const FAR: f32 = 1.0e3;

/// Distance from a cut surface within which a vertex counts as lying on it (m): a seam
/// snapped onto the stroke by an earlier piece of the same stroke lies on it up to rounding.
const ON_STROKE: f32 = 1e-5;

/// The surface swept by a stroke between two rays from the camera.
#[derive(Debug, Clone, Copy)]
pub(super) struct CutSurface {
    /// The corners: the rays' origins, then their points at [`FAR`] (second ray first).
    quad: [Vec3; 4],
    /// Unit normal; the side it points to is the cut's front.
    normal: Vec3,
}

impl CutSurface {
    /// The surface swept from ray `from` to ray `to`, or `None` when it is degenerate (parallel
    /// rays) or not finite.
    pub fn between(from: &Ray, to: &Ray) -> Option<Self> {
        let quad = [from.origin, to.origin, to.at(FAR), from.at(FAR)];
        let normal = (to.at(1.0) - from.at(1.0)).cross(from.direction + to.direction).normalize_or_zero();
        if normal == Vec3::ZERO || !quad.iter().all(|p| p.is_finite()) {
            return None;
        }
        Some(CutSurface { quad, normal })
    }

    /// Where the segment a–b crosses the surface, as the fraction of the way from a to b.
    pub fn crossing(&self, a: Vec3, b: Vec3) -> Option<f32> {
        let q = &self.quad;
        segment_crossing(a, b, q[0], q[1], q[2]).or_else(|| segment_crossing(a, b, q[0], q[2], q[3]))
    }

    /// Signed distance of `p` from the surface's plane (m), positive in front.
    pub fn height(&self, p: Vec3) -> f32 {
        (p - self.quad[0]).dot(self.normal)
    }
}

/// Where the segment a–b crosses triangle (p, q, r), as the fraction of the way from a to b
/// (Möller–Trumbore on a segment).
fn segment_crossing(a: Vec3, b: Vec3, p: Vec3, q: Vec3, r: Vec3) -> Option<f32> {
    let ray = Ray {
        origin: a,
        direction: b - a,
    };
    ray_triangle(&ray, p, q, r).filter(|&t| t <= 1.0)
}

/// A triangle edge the cut surface crosses: its endpoints and where, as the fraction of the
/// way from `a` to `b`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Crossing {
    /// The lower endpoint.
    pub a: u32,
    /// The higher endpoint.
    pub b: u32,
    /// Fraction of the way from `a` to `b`.
    pub at: f32,
}

/// Every edge of `triangles` (diagonals included) that the cut crosses, `crossing_at` giving
/// where (or `None`), ascending by endpoints, each once. Every crossed triangle edge is on the
/// seam, so it has no gap where the stroke only crosses a diagonal.
pub(super) fn crossings(triangles: &[[u32; 3]], crossing_at: impl Fn(u32, u32) -> Option<f32>) -> Vec<Crossing> {
    // Tested as often as triangles hold them (it runs every frame of a held stroke, and
    // sorting every edge of a large sheet would cost more than the tests); the few that
    // cross are deduplicated.
    let mut crossings: Vec<Crossing> = triangles
        .iter()
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .map(|(a, b)| (a.min(b), a.max(b)))
        .filter_map(|(a, b)| crossing_at(a, b).map(|at| Crossing { a, b, at }))
        .collect();
    crossings.sort_unstable_by_key(|c| (c.a, c.b));
    crossings.dedup_by_key(|c| (c.a, c.b));
    crossings
}

/// The `candidates` (ascending) the seam runs through: those `on_seam` (indexed by particle),
/// and the ends of every crossing that kept both ends off it, whose triangles the seam then
/// divides along mesh edges. Other vertices keep all their triangles on one side.
pub(super) fn seam_vertices(candidates: &[u32], crossings: &[Crossing], on_seam: &[bool]) -> Vec<u32> {
    let stuck: Vec<u32> = crossings
        .iter()
        .filter(|c| !on_seam[c.a as usize] && !on_seam[c.b as usize])
        .flat_map(|c| [c.a, c.b])
        .collect();
    candidates
        .iter()
        .copied()
        .filter(|&v| on_seam[v as usize] || stuck.contains(&v))
        .collect()
}

/// Which triangles of `mesh` lie in front of a cut (indexed by triangle), with `on_seam` the
/// vertices the seam runs through and `height` every vertex's signed distance from the cut
/// surface as the cloth lay before the seam moved onto it. A triangle is on the side of its
/// corner off the seam farthest from the surface: where most of it lies, and where it stays
/// once a later piece of the same stroke snaps its nearer corners onto the seam (a crossed
/// edge's nearer end is the one that moves). One with all three corners on the seam goes with
/// most of its edge neighbours that are not (an earlier piece of the stroke may have put it on
/// a side already), or by its corners' heights when they tie. Decided once, before any split
/// renames corners.
pub(super) fn sides_of_seam(mesh: Mesh, on_seam: &[bool], height: &[f32]) -> Vec<bool> {
    let off_seam = |v: u32| !on_seam[v as usize] && height[v as usize].abs() > ON_STROKE;
    let triangles = mesh.triangles;
    let side = |t: usize| -> Option<bool> {
        let off = triangles[t].into_iter().filter(|&v| off_seam(v)).map(|v| height[v as usize]);
        off.max_by(|x, y| x.abs().total_cmp(&y.abs())).map(|h| h > 0.0)
    };
    let sides: Vec<Option<bool>> = (0..triangles.len()).map(side).collect();
    let neighbours = |t: usize| {
        let fans = triangles[t].map(|v| mesh.fan(v));
        let mut around: Vec<u32> = fans.iter().flat_map(|f| f.iter().copied()).filter(|&s| s as usize != t).collect();
        around.sort_unstable();
        around
            .into_iter()
            .filter(move |&s| shares_edge(triangles[t], triangles[s as usize]))
    };
    (0..triangles.len())
        .map(|t| {
            sides[t].unwrap_or_else(|| {
                let votes: i32 = neighbours(t)
                    .filter_map(|s| sides[s as usize])
                    .map(|front| if front { 1 } else { -1 })
                    .sum();
                let heights: f32 = triangles[t].iter().map(|&v| height[v as usize]).sum();
                votes > 0 || (votes == 0 && heights > 0.0)
            })
        })
        .collect()
}
