//! Triangle-mesh colliders: the signed distance, the first crossing of a path and a mouse ray,
//! all answered from a bounding volume hierarchy over the triangles.
//!
//! **Closed or open.** A mesh whose every edge joins exactly two triangles wound the opposite
//! way along it is *closed*: it bounds a solid, is turned outward when built (its signed volume
//! made positive), and its signed distance is negative inside. The sign comes from the
//! angle-weighted pseudo-normal of the feature (face, edge or vertex) holding the closest point
//! (Bærentzen & Aanæs, *Signed distance computation using the angle weighted pseudonormal*,
//! 2005): (x − q) · n_feature < 0 exactly when x is inside a closed manifold mesh. Any other
//! mesh is *open* — a sheet, a paddle, a table top of single faces — and is a two-sided shell:
//! its distance is unsigned and cloth is kept the thickness away from it on the side it comes
//! from.
//!
//! **Why paths are tested for crossings.** A distance field alone cannot tell which side of a
//! sheet a particle came from once it is through, and a closed mesh thinner than a substep's
//! travel is crossed in one step. So the contact ([`super::project_contact`]) first asks for the
//! first triangle the particle's path of the substep crosses ([`MeshShape::first_hit`], exact
//! segment–triangle tests, Möller & Trumbore 1997); only a path that crossed nothing is
//! projected on the distance. A closed mesh only blocks paths that enter it, so what started
//! inside (placed there) is free to leave.
//!
//! **The hierarchy.** A binary tree of axis-aligned boxes, built once by splitting the
//! triangles at the median centroid along the longest axis, down to [`LEAF_SIZE`] triangles a
//! leaf; the triangles are stored in leaf order. A distance query is bounded (`max_distance`):
//! a contact only needs the surface within the thickness, so it visits only the boxes that
//! near, and a particle far from the mesh costs one box test. The queries are plain
//! sequential code on the shape alone, so any thread gets the same answer bit for bit.
//!
//! **Each particle's near triangles.** A particle resting on a mesh asks about the same few
//! triangles several times a substep (the crossing, the surface at its end point, at its start,
//! after friction). Each particle keeps the triangles within a reach of an anchor point
//! ([`NearTriangles`]: the thickness, a skin and the path's length around where it was listed),
//! and answers a question about a point p within r from them while |p − anchor| + r ≤ reach;
//! otherwise it lists them again, and asks the hierarchy when more than [`NEAR_CAPACITY`] are
//! near. The answers are the same either way, bit for bit: both take the closest triangle (the
//! first crossing) over the same candidates with the same arithmetic, ties going to the lower
//! triangle index.
//!
//! Chosen by hand rather than through a crate: the queries the contacts need (a bounded,
//! signed distance with its pseudo-normal, the first crossing of a short segment) are a
//! hundred lines on glam's types, where parry3d would bring nalgebra and a conversion at every
//! call in the contact loop.

use std::collections::HashMap;

use glam::Vec3;

use super::SurfacePoint;
use crate::sim::self_contact::geometry::{closest_barycentric, point_at};

/// Triangles in a leaf of the hierarchy.
const LEAF_SIZE: usize = 4;

/// Triangles a particle's [`NearTriangles`] holds; more near it and it asks the hierarchy.
pub const NEAR_CAPACITY: usize = 14;

/// The triangles of one mesh within `reach` of `anchor` (m, the collider's frame), listed for
/// one particle (see the module docs); a fresh one covers nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NearTriangles {
    anchor: Vec3,
    /// Reach in m; negative: nothing listed yet.
    reach: f32,
    /// Triangles listed; more than [`NEAR_CAPACITY`]: too many, ask the hierarchy.
    count: u32,
    /// The listed triangles, nearest to the anchor first.
    triangles: [u32; NEAR_CAPACITY],
    /// Their distances from the anchor in m: a question about p stops at the first triangle
    /// whose distance less |p − anchor| (a lower bound on its distance from p) exceeds what it
    /// has found.
    distances: [f32; NEAR_CAPACITY],
}

impl Default for NearTriangles {
    fn default() -> Self {
        Self {
            anchor: Vec3::ZERO,
            reach: -1.0,
            count: 0,
            triangles: [0; NEAR_CAPACITY],
            distances: [0.0; NEAR_CAPACITY],
        }
    }
}

impl NearTriangles {
    /// Whether every triangle within `radius` of `p` is listed.
    pub(crate) fn covers(&self, p: Vec3, radius: f32) -> bool {
        p.distance(self.anchor) + radius <= self.reach
    }

    /// The listed triangles that may lie within `radius` of `p` (the first of those nearer to
    /// the anchor than |p − anchor| + `radius`, with a margin for rounding), if the list covers
    /// the question and is complete.
    fn for_query(&self, p: Vec3, radius: f32) -> Option<&[u32]> {
        if !(self.covers(p, radius) && self.count as usize <= NEAR_CAPACITY) {
            return None;
        }
        let limit = (p.distance(self.anchor) + radius) * (1.0 + 1e-5) + 1e-7;
        let listed = &self.distances[..self.count as usize];
        Some(&self.triangles[..listed.partition_point(|&d| d <= limit)])
    }
}

/// Depth the traversal stack allows: a median split halves the triangles at each level, so
/// 64 levels hold far more than the 2²⁰ triangles a mesh file may have.
const STACK_DEPTH: usize = 64;

/// A box of the hierarchy.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Node {
    /// Lowest corner in m.
    min: Vec3,
    /// Highest corner in m.
    max: Vec3,
    /// A leaf's first triangle, or an inner node's first child (the second follows it).
    start: u32,
    /// A leaf's number of triangles; 0 for an inner node.
    count: u32,
}

/// A collider's triangles in its own frame, with their hierarchy (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct MeshShape {
    /// Each triangle's corners in m, in leaf order.
    corners: Vec<[Vec3; 3]>,
    /// Each triangle's unit normal (outward for a closed mesh).
    normals: Vec<Vec3>,
    /// A closed mesh's pseudo-normals of each triangle's features: its corners a, b, c, its
    /// edges ab, bc, ca, then its face. Empty for an open mesh.
    pseudo_normals: Vec<[Vec3; 7]>,
    /// The hierarchy; node 0 is the root.
    nodes: Vec<Node>,
}

/// The first triangle a segment or ray meets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Parameter along the path (0 at its start, 1 at the end of a segment).
    pub t: f32,
    /// The triangle's unit normal (outward for a closed mesh).
    pub normal: Vec3,
}

impl MeshShape {
    /// The shape of the triangles `triangles` over the vertices `positions` (m, the collider's
    /// own frame). Triangles without area are left out; fails when none is left.
    pub fn new(positions: &[Vec3], triangles: &[[u32; 3]]) -> Result<Self, String> {
        let mut kept: Vec<[u32; 3]> = triangles
            .iter()
            .copied()
            .filter(|t| t.iter().all(|&v| (v as usize) < positions.len()))
            .filter(|&[a, b, c]| {
                let [a, b, c] = [a, b, c].map(|v| positions[v as usize]);
                (b - a).cross(c - a).length_squared() > 0.0
            })
            .collect();
        if kept.is_empty() {
            return Err("the mesh has no triangle with an area".into());
        }
        let closed = is_closed(&kept);
        if closed && signed_volume(positions, &kept) < 0.0 {
            kept.iter_mut().for_each(|t| t.swap(1, 2));
        }
        let order = build_order(positions, &kept);
        let kept: Vec<[u32; 3]> = order.1.iter().map(|&t| kept[t as usize]).collect();
        let corners: Vec<[Vec3; 3]> = kept.iter().map(|t| t.map(|v| positions[v as usize])).collect();
        let normals = corners.iter().map(|&[a, b, c]| (b - a).cross(c - a).normalize()).collect();
        let pseudo_normals = if closed { pseudo_normals(positions, &kept) } else { Vec::new() };
        Ok(Self {
            corners,
            normals,
            pseudo_normals,
            nodes: order.0,
        })
    }

    /// Whether the mesh bounds a solid (see the module docs).
    pub fn is_closed(&self) -> bool {
        !self.pseudo_normals.is_empty()
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.corners.len()
    }

    /// Each triangle's corners in m (the collider's own frame), outward for a closed mesh.
    pub fn triangles(&self) -> &[[Vec3; 3]] {
        &self.corners
    }

    /// Lowest and highest corner of the mesh's box, in m.
    pub fn bounds(&self) -> (Vec3, Vec3) {
        (self.nodes[0].min, self.nodes[0].max)
    }

    /// The surface within `max_distance` (m) of `p`: its signed distance (negative inside a
    /// closed mesh, never for an open one) and the unit normal pointing from the surface to
    /// `p`'s side; `None` when the surface is farther. Pass `f32::INFINITY` for the distance
    /// wherever it is. `near`, when it covers the question, spares the hierarchy.
    pub fn surface_within(&self, p: Vec3, max_distance: f32, near: Option<&NearTriangles>) -> Option<SurfacePoint> {
        let mut best = Closest::within(max_distance);
        match near.and_then(|n| n.for_query(p, max_distance)) {
            Some(listed) => self.closest_among(p, listed.iter().map(|&t| t as usize), &mut best),
            None => self.closest(p, &mut best),
        }
        let (triangle, barycentric) = best.found?;
        let q = point_at(self.corners[triangle], barycentric);
        let outward = match self.pseudo_normals.get(triangle) {
            Some(features) => features[feature(barycentric)],
            None => self.normals[triangle],
        };
        let offset = p - q;
        let distance = best.distance_squared.sqrt();
        if distance <= 1e-9 {
            return Some(SurfacePoint {
                distance: 0.0,
                normal: outward.normalize(),
            });
        }
        let sign = if self.is_closed() && offset.dot(outward) < 0.0 { -1.0 } else { 1.0 };
        Some(SurfacePoint {
            distance: sign * distance,
            normal: offset / distance * sign,
        })
    }

    /// Lists in `near` the triangles within `reach` (m) of `anchor`, nearest first.
    pub fn gather(&self, near: &mut NearTriangles, anchor: Vec3, reach: f32) {
        near.anchor = anchor;
        near.reach = reach;
        near.count = 0;
        let bound = reach * reach;
        let mut found = [(0.0f32, 0u32); NEAR_CAPACITY];
        self.visit_near(anchor, bound, |t| {
            let d2 = anchor.distance_squared(point_at(self.corners[t], closest_barycentric(anchor, self.corners[t])));
            if d2 <= bound {
                if let Some(slot) = found.get_mut(near.count as usize) {
                    *slot = (d2.sqrt(), t as u32);
                }
                near.count += 1;
            }
        });
        let listed = &mut found[..(near.count as usize).min(NEAR_CAPACITY)];
        listed.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (k, &(distance, t)) in listed.iter().enumerate() {
            near.distances[k] = distance;
            near.triangles[k] = t;
        }
    }

    /// Calls `visit` with every triangle in a leaf whose box is within squared distance `bound`
    /// of `p`.
    fn visit_near(&self, p: Vec3, bound: f32, mut visit: impl FnMut(usize)) {
        let mut stack = [0u32; STACK_DEPTH];
        let mut depth = 1;
        while depth > 0 {
            depth -= 1;
            let node = self.nodes[stack[depth] as usize];
            if box_distance_squared(p, &node) > bound {
                continue;
            }
            if node.count > 0 {
                (node.start as usize..(node.start + node.count) as usize).for_each(&mut visit);
            } else {
                stack[depth] = node.start;
                stack[depth + 1] = node.start + 1;
                depth += 2;
            }
        }
    }

    /// The closest triangle to `p` into `best`: branch and bound over the hierarchy, nearer
    /// child first.
    fn closest(&self, p: Vec3, best: &mut Closest) {
        let mut stack = [0u32; STACK_DEPTH];
        let mut depth = 1;
        while depth > 0 {
            depth -= 1;
            let node = self.nodes[stack[depth] as usize];
            if box_distance_squared(p, &node) > best.distance_squared {
                continue;
            }
            if node.count > 0 {
                self.closest_among(p, node.start as usize..(node.start + node.count) as usize, best);
                continue;
            }
            let (left, right) = (node.start, node.start + 1);
            let near_left = box_distance_squared(p, &self.nodes[left as usize]) <= box_distance_squared(p, &self.nodes[right as usize]);
            let (near, far) = if near_left { (left, right) } else { (right, left) };
            stack[depth] = far;
            stack[depth + 1] = near;
            depth += 2;
        }
    }

    /// The closest to `p` of `triangles` into `best`.
    fn closest_among(&self, p: Vec3, triangles: impl Iterator<Item = usize>, best: &mut Closest) {
        for t in triangles {
            let barycentric = closest_barycentric(p, self.corners[t]);
            best.offer(t, barycentric, p.distance_squared(point_at(self.corners[t], barycentric)));
        }
    }

    /// The first triangle the path `origin + t · direction`, 0 ≤ t ≤ `max_t`, meets; for a
    /// closed mesh only where it enters (its direction against the outward normal). `near`,
    /// when it covers the path, spares the hierarchy.
    pub fn first_hit(&self, origin: Vec3, direction: Vec3, max_t: f32, near: Option<&NearTriangles>) -> Option<Hit> {
        let end = origin + direction * max_t;
        // Every point of the path is within the farther end's distance of the anchor.
        let listed = near.and_then(|n| {
            let farther = if origin.distance(n.anchor) >= end.distance(n.anchor) {
                origin
            } else {
                end
            };
            n.for_query(farther, 0.0).filter(|_| n.covers(origin, 0.0) && n.covers(end, 0.0))
        });
        let mut best = FirstHit { max_t, found: None };
        match listed {
            Some(listed) => self.hits_among(origin, direction, listed.iter().map(|&t| t as usize), &mut best),
            None => self.hits(origin, direction, &mut best),
        }
        best.found.map(|(t, at)| Hit {
            t: at,
            normal: self.normals[t],
        })
    }

    /// The first crossing of the path into `best`, over the hierarchy.
    fn hits(&self, origin: Vec3, direction: Vec3, best: &mut FirstHit) {
        let inverse = direction.recip();
        let mut stack = [0u32; STACK_DEPTH];
        let mut depth = 1;
        while depth > 0 {
            depth -= 1;
            let node = self.nodes[stack[depth] as usize];
            if !path_meets_box(origin, inverse, best.reach(), &node) {
                continue;
            }
            if node.count == 0 {
                stack[depth] = node.start;
                stack[depth + 1] = node.start + 1;
                depth += 2;
                continue;
            }
            self.hits_among(origin, direction, node.start as usize..(node.start + node.count) as usize, best);
        }
    }

    /// The first crossing of the path through `triangles` into `best`.
    fn hits_among(&self, origin: Vec3, direction: Vec3, triangles: impl Iterator<Item = usize>, best: &mut FirstHit) {
        for t in triangles {
            if self.is_closed() && direction.dot(self.normals[t]) >= 0.0 {
                continue;
            }
            if let Some(at) = segment_triangle(origin, direction, self.corners[t]) {
                best.offer(t, at);
            }
        }
    }
}

/// The closest triangle found so far: the least squared distance below the bound, ties to the
/// lower index (so any order of visiting the candidates gives the same answer).
struct Closest {
    distance_squared: f32,
    found: Option<(usize, [f32; 3])>,
}

impl Closest {
    /// Nothing found, looking within `max_distance` (m).
    fn within(max_distance: f32) -> Self {
        Self {
            distance_squared: max_distance * max_distance,
            found: None,
        }
    }

    fn offer(&mut self, triangle: usize, barycentric: [f32; 3], distance_squared: f32) {
        let closer = distance_squared < self.distance_squared
            || (distance_squared == self.distance_squared && self.found.is_some_and(|(t, _)| triangle < t));
        if closer {
            self.distance_squared = distance_squared;
            self.found = Some((triangle, barycentric));
        }
    }
}

/// The first crossing found so far: the least parameter up to `max_t`, ties to the lower
/// index.
struct FirstHit {
    max_t: f32,
    found: Option<(usize, f32)>,
}

impl FirstHit {
    /// How far along the path a crossing still counts.
    fn reach(&self) -> f32 {
        self.found.map_or(self.max_t, |(_, t)| t)
    }

    fn offer(&mut self, triangle: usize, t: f32) {
        let first = match self.found {
            None => t <= self.max_t,
            Some((best, at)) => t < at || (t == at && triangle < best),
        };
        if first {
            self.found = Some((triangle, t));
        }
    }
}

/// Which pseudo-normal of a triangle holds the point at `barycentric` (see
/// [`MeshShape::pseudo_normals`]): a corner where two coordinates are 0, an edge where one is,
/// else the face.
fn feature([u, v, w]: [f32; 3]) -> usize {
    match (u == 0.0, v == 0.0, w == 0.0) {
        (false, true, true) => 0,
        (true, false, true) => 1,
        (true, true, false) => 2,
        (false, false, true) => 3,
        (true, false, false) => 4,
        (false, true, false) => 5,
        _ => 6,
    }
}

/// Whether every edge joins exactly two triangles that run along it in opposite directions.
fn is_closed(triangles: &[[u32; 3]]) -> bool {
    let mut directed: HashMap<(u32, u32), u32> = HashMap::with_capacity(triangles.len() * 3);
    for &[a, b, c] in triangles {
        for edge in [(a, b), (b, c), (c, a)] {
            *directed.entry(edge).or_default() += 1;
        }
    }
    directed
        .iter()
        .all(|(&(a, b), &count)| count == 1 && directed.get(&(b, a)) == Some(&1))
}

/// Six times the volume the triangles enclose, positive when they face outward.
fn signed_volume(positions: &[Vec3], triangles: &[[u32; 3]]) -> f32 {
    triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|v| positions[v as usize]);
            f64::from(a.dot(b.cross(c)))
        })
        .sum::<f64>() as f32
}

/// The hierarchy over `triangles` and the order of the triangles in its leaves.
fn build_order(positions: &[Vec3], triangles: &[[u32; 3]]) -> (Vec<Node>, Vec<u32>) {
    let boxes: Vec<(Vec3, Vec3)> = triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|v| positions[v as usize]);
            (a.min(b).min(c), a.max(b).max(c))
        })
        .collect();
    let mut order: Vec<u32> = (0..triangles.len() as u32).collect();
    let mut nodes = vec![Node {
        min: Vec3::ZERO,
        max: Vec3::ZERO,
        start: 0,
        count: 0,
    }];
    split(&mut nodes, 0, &mut order, 0, &boxes);
    (nodes, order)
}

/// Fills node `node` with the triangles `items` (their boxes in `boxes`), which start at
/// `first` in leaf order, splitting it at the median centroid of its longest axis.
fn split(nodes: &mut Vec<Node>, node: usize, items: &mut [u32], first: usize, boxes: &[(Vec3, Vec3)]) {
    let (min, max) = items.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &t| {
        let (a, b) = boxes[t as usize];
        (lo.min(a), hi.max(b))
    });
    nodes[node].min = min;
    nodes[node].max = max;
    if items.len() <= LEAF_SIZE {
        nodes[node].start = first as u32;
        nodes[node].count = items.len() as u32;
        return;
    }
    let centre = |t: u32| boxes[t as usize].0 + boxes[t as usize].1;
    let (lo, hi) = items.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), &t| {
        (lo.min(centre(t)), hi.max(centre(t)))
    });
    let extent = hi - lo;
    let axis = if extent.x >= extent.y && extent.x >= extent.z {
        0
    } else if extent.y >= extent.z {
        1
    } else {
        2
    };
    let mid = items.len() / 2;
    // Ties broken by index, so the tree does not depend on the selection's internal order.
    items.select_nth_unstable_by(mid, |&a, &b| centre(a)[axis].total_cmp(&centre(b)[axis]).then(a.cmp(&b)));
    let left = nodes.len();
    nodes.extend([nodes[node]; 2]);
    nodes[node].start = left as u32;
    nodes[node].count = 0;
    let (low, high) = items.split_at_mut(mid);
    split(nodes, left, low, first, boxes);
    split(nodes, left + 1, high, first + mid, boxes);
}

/// The pseudo-normals of each triangle's corners, edges and face (see
/// [`MeshShape::pseudo_normals`]): a corner's is the sum of the
/// normals of the triangles around it weighted by their angles there, an edge's the sum of
/// its two triangles' normals.
fn pseudo_normals(positions: &[Vec3], triangles: &[[u32; 3]]) -> Vec<[Vec3; 7]> {
    let corners = |t: &[u32; 3]| t.map(|v| positions[v as usize]);
    let face = |t: &[u32; 3]| {
        let [a, b, c] = corners(t);
        (b - a).cross(c - a).normalize()
    };
    let mut at_vertex = vec![Vec3::ZERO; positions.len()];
    let mut at_edge: HashMap<(u32, u32), Vec3> = HashMap::with_capacity(triangles.len() * 3);
    for t in triangles {
        let n = face(t);
        let p = corners(t);
        for k in 0..3 {
            let (prev, next) = (p[(k + 2) % 3] - p[k], p[(k + 1) % 3] - p[k]);
            at_vertex[t[k] as usize] += n * prev.angle_between(next);
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *at_edge.entry((a.min(b), a.max(b))).or_insert(Vec3::ZERO) += n;
        }
    }
    triangles
        .iter()
        .map(|t| {
            let edge = |k: usize| {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                at_edge[&(a.min(b), a.max(b))]
            };
            [
                at_vertex[t[0] as usize],
                at_vertex[t[1] as usize],
                at_vertex[t[2] as usize],
                edge(0),
                edge(1),
                edge(2),
                face(t),
            ]
        })
        .collect()
}

/// Squared distance from `p` to the box of `node` (0 inside).
fn box_distance_squared(p: Vec3, node: &Node) -> f32 {
    (node.min - p).max(p - node.max).max(Vec3::ZERO).length_squared()
}

/// Whether the path `origin + t · d`, 0 ≤ t ≤ `reach`, meets the box of `node` (slab test;
/// `inverse` = 1 / d componentwise). A path parallel to a slab is in it or not, whatever 0 · ∞
/// would make of an origin on its plane.
fn path_meets_box(origin: Vec3, inverse: Vec3, reach: f32, node: &Node) -> bool {
    let (mut near, mut far) = (0.0f32, reach);
    for axis in 0..3 {
        let (o, inv, lo, hi) = (origin[axis], inverse[axis], node.min[axis], node.max[axis]);
        if inv.is_infinite() {
            if o < lo || o > hi {
                return false;
            }
            continue;
        }
        let (a, b) = ((lo - o) * inv, (hi - o) * inv);
        near = near.max(a.min(b));
        far = far.min(a.max(b));
    }
    near <= far
}

/// Parameter t ≥ 0 where the path `origin + t · d` meets triangle `abc` (Möller–Trumbore,
/// either side), with a tolerance of 1e-6 of the triangle's size at its edges so a path
/// through a shared edge hits one of its triangles.
fn segment_triangle(origin: Vec3, d: Vec3, [a, b, c]: [Vec3; 3]) -> Option<f32> {
    const EDGE_TOLERANCE: f32 = 1e-6;
    let (e1, e2) = (b - a, c - a);
    let p = d.cross(e2);
    let det = e1.dot(p);
    if det.abs() <= f32::MIN_POSITIVE {
        return None;
    }
    let inv = 1.0 / det;
    let s = origin - a;
    let u = s.dot(p) * inv;
    let q = s.cross(e1);
    let v = d.dot(q) * inv;
    let inside = u >= -EDGE_TOLERANCE && v >= -EDGE_TOLERANCE && u + v <= 1.0 + EDGE_TOLERANCE;
    let t = e2.dot(q) * inv;
    (inside && t >= 0.0).then_some(t)
}

#[cfg(test)]
mod tests;
