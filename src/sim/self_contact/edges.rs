//! Edge–edge self-contacts (the parent module's docs, "Edge–edge contacts", carry the theory):
//! the mesh's edges, the ones long enough to cross another edge between particles the pairs
//! keep apart, their candidate list and its projection.

use glam::Vec3;

use super::lists::{Pair, SelfContacts, Share};
use super::projection::contact_push;
use crate::sim::particles::{xyz, PosPtr, VecPtr};

/// One candidate pair of mesh edges of the frame, kept the thickness apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct EdgePair {
    /// The two edges' endpoints.
    pub a: [u32; 2],
    pub b: [u32; 2],
}

/// How much longer than strictly needed two edges must be to list an edge–edge contact: a
/// pair is listed when ℓ_a² + ℓ_b² ≥ 4 (`EDGE_SLACK` d)² (parent docs, "Edge–edge
/// contacts"). Diagonals (√2 d) of a mesh as fine as its thickness stay with the particle
/// pairs unless stretched by more than this.
pub const EDGE_SLACK: f32 = 1.05;

/// The mesh's edges around each particle: `neighbours[start[i]..start[i + 1]]` are the
/// particles sharing a triangle edge with particle i, ascending.
#[derive(Debug, Clone, Default)]
pub(super) struct MeshEdges {
    start: Vec<u32>,
    neighbours: Vec<u32>,
    /// The squared length of each edge at each particle (in `neighbours`' order) and of the
    /// longest edge at each particle when the lists were last made (m²).
    length2: Vec<f32>,
    longest2: Vec<f32>,
    /// (topology key, triangle count) the edges were collected for.
    made_for: Option<((u64, usize, usize), usize)>,
}

impl MeshEdges {
    /// Collects the edges of `triangles` over `n` particles when the topology `key` changed.
    pub(super) fn refresh(&mut self, key: (u64, usize, usize), n: usize, triangles: &[[u32; 3]]) {
        if self.made_for == Some((key, triangles.len())) {
            return;
        }
        let mut around: Vec<Vec<u32>> = vec![Vec::new(); n];
        for t in triangles {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                around[a as usize].push(b);
                around[b as usize].push(a);
            }
        }
        self.start.clear();
        self.neighbours.clear();
        self.start.push(0);
        for mut list in around {
            list.sort_unstable();
            list.dedup();
            self.neighbours.extend(list);
            self.start.push(self.neighbours.len() as u32);
        }
        self.made_for = Some((key, triangles.len()));
    }

    /// Measures the longest edge at each particle at `points`.
    pub(super) fn measure(&mut self, points: &[Vec3]) {
        self.length2.clear();
        self.longest2.clear();
        for (i, &p) in points.iter().enumerate() {
            let around = &self.neighbours[self.start[i] as usize..self.start[i + 1] as usize];
            self.length2.extend(around.iter().map(|&j| p.distance_squared(points[j as usize])));
            let lengths = &self.length2[self.start[i] as usize..];
            self.longest2.push(lengths.iter().copied().fold(0.0, f32::max));
        }
    }

    /// The edges at particle `i`, endpoints ascending, with their squared lengths (m²).
    fn at(&self, i: u32) -> impl Iterator<Item = ([u32; 2], f32)> + '_ {
        let range = self.start[i as usize] as usize..self.start[i as usize + 1] as usize;
        let lengths = &self.length2[range.clone()];
        self.neighbours[range]
            .iter()
            .zip(lengths)
            .map(move |(&j, &l2)| ([i.min(j), i.max(j)], l2))
    }
}

/// The squared length bound 4 (`EDGE_SLACK` d)² (m²) two edges' squared lengths must reach
/// together for a contact, at thickness `d` (m).
fn crossing_bound2(thickness: f32) -> f32 {
    4.0 * (EDGE_SLACK * thickness).powi(2)
}

impl SelfContacts {
    /// Lists into `share` the edge pairs met around its particle pairs (parent docs): for a
    /// listed pair (i, j) of particles whose edges may cross, every edge at i against every
    /// edge at j. Sorted, each pair once.
    pub(super) fn list_edges(&self, share: &mut Share, rest: &[Vec3], thickness: f32, faces: bool) {
        let (mesh, bound2) = (&self.mesh_edges, crossing_bound2(thickness));
        let longest2 = |i: u32| mesh.longest2[i as usize];
        // Where faces are listed, a particle with an edge of 2 d or longer (a triangle no
        // longer covered by its corners) is left to them.
        let fine = |i: u32| !faces || longest2(i) < 4.0 * thickness * thickness;
        let crossable = |p: &&Pair| longest2(p.a) + longest2(p.b) >= bound2 && fine(p.a) && fine(p.b);
        let mut candidates = Vec::new();
        for pair in share.pairs.iter().filter(crossable) {
            for (a, la2) in mesh.at(pair.a).filter(|e| e.1 + longest2(pair.b) >= bound2) {
                let long_enough = |b: &([u32; 2], f32)| la2 + b.1 >= bound2 && !a.iter().any(|v| b.0.contains(v));
                candidates.extend(
                    mesh.at(pair.b)
                        .filter(long_enough)
                        .map(|(b, _)| if a < b { (a, b) } else { (b, a) }),
                );
            }
        }
        // One pair is met from up to four particle pairs: test it once.
        candidates.sort_unstable();
        candidates.dedup();
        share.edges.clear();
        share
            .edges
            .extend(candidates.into_iter().filter_map(|(a, b)| self.edge_pair(a, b, rest, thickness)));
    }

    /// Edges `a` < `b` (sharing no end, long enough to cross) as a candidate pair, when they
    /// have no ends joined by a live distance constraint, were at least the thickness apart at
    /// rest (or lie in two pieces) and come closer than d + 2M.
    fn edge_pair(&self, a: [u32; 2], b: [u32; 2], rest: &[Vec3], thickness: f32) -> Option<EdgePair> {
        let at = |points: &[Vec3], [p, q]: [u32; 2]| [points[p as usize], points[q as usize]];
        let distance = segment_distance(at(&self.points, a), at(&self.points, b));
        let reach = thickness + 2.0 * self.listed_margin;
        if distance >= reach || a.iter().any(|&v| b.iter().any(|&u| self.adjacent(v as usize, u))) {
            return None;
        }
        let at_rest = || segment_distance(at(rest, a), at(rest, b));
        if self.contact_distance(thickness, a[0] as usize, b[0], at_rest) < thickness {
            return None;
        }
        Some(EdgePair { a, b })
    }
}

/// Merges the sorted, deduplicated edge lists `lists` into the first, sorted and each pair
/// once, emptying the others: the list one thread makes, whatever the parts.
pub(super) fn merge_sorted(lists: &mut [&mut Vec<EdgePair>]) {
    let Some((first, rest)) = lists.split_first_mut() else {
        return;
    };
    for other in rest {
        let mut merged = Vec::with_capacity(first.len() + other.len());
        let (mut i, mut j) = (0, 0);
        while i < first.len() || j < other.len() {
            let take_first = j == other.len() || (i < first.len() && (first[i].a, first[i].b) <= (other[j].a, other[j].b));
            let next = if take_first { first[i] } else { other[j] };
            if take_first {
                i += 1
            } else {
                j += 1
            }
            if merged.last().is_none_or(|last: &EdgePair| (last.a, last.b) != (next.a, next.b)) {
                merged.push(next);
            }
        }
        **first = merged;
        other.clear();
    }
}

/// The parameters (s, t) in [0, 1]² of the closest points p1 + s (q1 − p1) and
/// p2 + t (q2 − p2) of two segments (Ericson, *Real-Time Collision Detection* §5.1.9; a
/// segment of zero length is its point, parallel segments take s = 0 or the nearest end).
fn closest_parameters([p1, q1]: [Vec3; 2], [p2, q2]: [Vec3; 2]) -> (f32, f32) {
    let (d1, d2, r) = (q1 - p1, q2 - p2, p1 - p2);
    let (a, e, f) = (d1.dot(d1), d2.dot(d2), d2.dot(r));
    if a == 0.0 && e == 0.0 {
        return (0.0, 0.0);
    }
    if a == 0.0 {
        return (0.0, (f / e).clamp(0.0, 1.0));
    }
    let c = d1.dot(r);
    if e == 0.0 {
        return ((-c / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d1.dot(d2);
    let denominator = a * e - b * b;
    let s = if denominator > 0.0 {
        ((b * f - c * e) / denominator).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let t = (b * s + f) / e;
    if t < 0.0 {
        ((-c / a).clamp(0.0, 1.0), 0.0)
    } else if t > 1.0 {
        (((b - c) / a).clamp(0.0, 1.0), 1.0)
    } else {
        (s, t)
    }
}

/// The distance between two segments (m).
fn segment_distance(a: [Vec3; 2], b: [Vec3; 2]) -> f32 {
    let (s, t) = closest_parameters(a, b);
    a[0].lerp(a[1], s).distance(b[0].lerp(b[1], t))
}

/// Projects every edge pair once, keeping `thickness` (m) between the edges (parent docs);
/// returns how many were in contact.
///
/// # Safety
/// Every pair's particles are in bounds of `pos` and `prev`, and no other thread touches the
/// particles during the call.
pub(super) unsafe fn project_edges(pairs: &[EdgePair], thickness: f32, mu: f32, pos: PosPtr, prev: VecPtr) -> u32 {
    let mut active = 0;
    for pair in pairs {
        let ends = [pair.a[0], pair.a[1], pair.b[0], pair.b[1]].map(|v| v as usize);
        // SAFETY: the caller guarantees the pair in bounds and unshared (see # Safety).
        unsafe {
            let v = ends.map(|i| pos.get(i));
            let x = v.map(xyz);
            let start = ends.map(|i| prev.get(i));
            let (s, t) = closest_parameters([x[0], x[1]], [x[2], x[3]]);
            // The gradients' weights: p = (1 − s) x_0 + s x_1 moves along n, q along −n.
            let c = [1.0 - s, s, t - 1.0, -t];
            let point = |y: &[Vec3; 4]| (y[0] * c[0] + y[1] * c[1], -(y[2] * c[2] + y[3] * c[3]));
            let ((p, q), (p_start, q_start)) = (point(&x), point(&start));
            let inside = s > 0.0 && s < 1.0 && t > 0.0 && t < 1.0;
            let Some(normal) = contact_normal(p - q, inside, x, p_start - q_start) else {
                continue;
            };
            let depth = thickness - (p - q).dot(normal);
            let weight = (0..4).map(|k| c[k] * c[k] * v[k][3]).sum::<f32>();
            if depth <= 0.0 || weight <= 0.0 {
                continue;
            }
            active += 1;
            let push = contact_push(normal, depth, (p - p_start) - (q - q_start), mu, weight);
            for k in 0..4 {
                pos.shift(ends[k], v[k], (push * (c[k] * v[k][3])).to_array());
            }
        }
    }
    active
}

/// The unit normal of an edge contact, pointing from edge b (`x[2]`–`x[3]`) to edge a
/// (`x[0]`–`x[1]`): along `gap` = p − q (the closest points), or the edges' common
/// perpendicular e_a × e_b when they touch. When the closest points lie `inside` both edges
/// (so p − q is perpendicular to both), it is turned to the side of the gap at the substep's
/// `start` (p and q at the same parameters), so edges that passed through each other go
/// back; otherwise the closest points are an end and an edge, which cannot pass through each
/// other, and the normal is the gap's, as for a particle pair. `None` when neither exists.
fn contact_normal(gap: Vec3, inside: bool, x: [Vec3; 4], gap_at_start: Vec3) -> Option<Vec3> {
    if !inside {
        return gap.try_normalize();
    }
    let normal = gap.try_normalize().or_else(|| (x[1] - x[0]).cross(x[3] - x[2]).try_normalize())?;
    Some(if normal.dot(gap_at_start) < 0.0 { -normal } else { normal })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::particles::Particles;
    use crate::sim::self_contact::SelfContactSettings;

    /// Free particles at `points` (inverse mass 1), at rest where they are.
    fn particles(points: &[Vec3]) -> Particles {
        let mut p = Particles::default();
        for &x in points {
            p.push(x, 1.0, Vec3::ZERO, 1.0, 0.0, false);
        }
        p
    }

    /// The closest points agree with a dense search over both segments, also for parallel,
    /// touching and degenerate segments.
    #[test]
    fn closest_points_of_segments_match_a_search() {
        let mut seed = 7u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        let mut cases: Vec<[Vec3; 4]> = (0..200).map(|_| [(); 4].map(|_| Vec3::new(next(), next(), next()))).collect();
        let x = Vec3::X;
        cases.push([Vec3::ZERO, x, Vec3::Y, Vec3::Y + x]); // parallel
        cases.push([Vec3::ZERO, Vec3::ZERO, Vec3::Y, Vec3::Z]); // a point
        cases.push([-x, x, -Vec3::Z, Vec3::Z]); // crossing
        for [p1, q1, p2, q2] in cases {
            let found = segment_distance([p1, q1], [p2, q2]);
            let steps = 400;
            let searched = (0..=steps)
                .flat_map(|i| (0..=steps).map(move |j| (i as f32 / steps as f32, j as f32 / steps as f32)))
                .map(|(s, t)| p1.lerp(q1, s).distance(p2.lerp(q2, t)))
                .fold(f32::MAX, f32::min);
            assert!(found <= searched + 1e-6 && found > searched - 4e-3, "{found} against {searched}");
        }
    }

    /// Edge a (particles 0–1, 1.5 cm along x) `height` above edge b (2–3, 1.5 cm along z),
    /// crossing at right angles over their midpoints, and their contact.
    fn crossed_edges(height: f32) -> ([Vec3; 4], [EdgePair; 1]) {
        let points = [
            Vec3::new(-0.0075, height, 0.0),
            Vec3::new(0.0075, height, 0.0),
            Vec3::new(0.0, 0.0, -0.0075),
            Vec3::new(0.0, 0.0, 0.0075),
        ];
        (points, [EdgePair { a: [0, 1], b: [2, 3] }])
    }

    /// Edge a 4 mm above edge b, all free with equal masses: one projection leaves them
    /// exactly the thickness apart, moved symmetrically, the centre of mass still; then
    /// nothing moves.
    #[test]
    fn crossing_edges_are_pushed_to_the_thickness_conserving_momentum() {
        let (points, pair) = crossed_edges(0.004);
        let d = 0.01;
        let mut p = particles(&points);
        let centre = |p: &Particles| (0..4).map(|i| p.position(i)).sum::<Vec3>() / 4.0;
        let before = centre(&p);
        // SAFETY: the four particles exist; one thread.
        let active = unsafe { project_edges(&pair, 0.01, 0.0, p.pos.raw(), p.prev.raw()) };
        assert_eq!(active, 1);
        let gap = p.position(0).y - p.position(2).y;
        assert!((gap - d).abs() < 1e-7, "{gap}");
        assert!((p.position(0).y - 0.007).abs() < 1e-7 && (p.position(2).y + 0.003).abs() < 1e-7);
        assert!(centre(&p).distance(before) < 1e-8);
        let settled: Vec<Vec3> = (0..4).map(|i| p.position(i)).collect();
        // SAFETY: as above.
        assert_eq!(unsafe { project_edges(&pair, 0.01, 0.0, p.pos.raw(), p.prev.raw()) }, 0);
        assert!((0..4).all(|i| p.position(i) == settled[i]));
    }

    /// An edge that passed through another within the substep (3 mm above it at the start,
    /// 2 mm below now) is put back on its side, the thickness above, not pushed on through.
    #[test]
    fn an_edge_that_crossed_another_is_put_back_on_its_side() {
        let (points, pair) = crossed_edges(0.003);
        let mut p = particles(&points);
        for (i, &x) in points[..2].iter().enumerate() {
            p.set_position(i, x - Vec3::new(0.0, 0.005, 0.0));
        }
        // SAFETY: the four particles exist; one thread.
        unsafe { project_edges(&pair, 0.01, 0.0, p.pos.raw(), p.prev.raw()) };
        let gap = p.position(0).y - p.position(2).y;
        assert!((gap - 0.01).abs() < 1e-7, "{gap}");
    }

    /// Two triangles whose long edges cross 5 mm apart list that edge pair when the edges
    /// are long enough to cross between particles kept the thickness apart (1.5 cm edges,
    /// 1 cm thickness), and not when they are not (2 cm thickness), nor with edges off.
    #[test]
    fn edge_pairs_are_listed_only_where_they_can_cross() {
        let points = [
            Vec3::new(-0.0075, 0.005, 0.0),
            Vec3::new(0.0075, 0.005, 0.0),
            Vec3::new(0.0, 0.005, 0.012),
            Vec3::new(0.0, 0.0, -0.0075),
            Vec3::new(0.0, 0.0, 0.0075),
            Vec3::new(-0.012, 0.0, 0.0),
        ];
        let p = particles(&points);
        // Far apart at rest: two pieces of cloth.
        let rest: Vec<Vec3> = points.iter().enumerate().map(|(i, &x)| x + Vec3::X * (i / 3) as f32).collect();
        let triangles = [[0, 1, 2], [3, 4, 5]];
        let listed = |thickness: f32, edge_edge: bool| {
            let mut contacts = SelfContacts::default();
            let edges = || [(0u32, 1u32), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)].into_iter();
            contacts.refresh_adjacency((0, 6, 6), edges);
            let settings = SelfContactSettings {
                thickness,
                friction: 0.0,
                travel: 0.0,
                vertex_triangle: true,
                edge_edge,
            };
            contacts.prepare(6, |i| p.position(i), &rest, &triangles, settings, 0.0);
            contacts.edge_pairs().iter().map(|e| (e.a, e.b)).collect::<Vec<_>>()
        };
        assert_eq!(listed(0.01, true), vec![([0, 1], [3, 4])]);
        assert!(listed(0.02, true).is_empty());
        assert!(listed(0.01, false).is_empty());
    }

    /// Sorted lists merge into the first, sorted, each pair once.
    #[test]
    fn sorted_edge_lists_merge_without_duplicates() {
        let pair = |a: u32, b: u32| EdgePair {
            a: [a, a + 1],
            b: [b, b + 1],
        };
        let (mut x, mut y, mut z) = (vec![pair(0, 5), pair(2, 7)], vec![pair(0, 5), pair(1, 9)], vec![pair(3, 8)]);
        merge_sorted(&mut [&mut x, &mut y, &mut z]);
        assert_eq!(x, vec![pair(0, 5), pair(1, 9), pair(2, 7), pair(3, 8)]);
        assert!(y.is_empty() && z.is_empty());
    }
}
