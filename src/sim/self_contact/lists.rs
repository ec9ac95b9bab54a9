//! The candidate lists (the parent module's docs, "Detection"): the state kept from frame to
//! frame (the sorted cells and the faces' hash, the constraint adjacency the lists leave out,
//! the positions and margin of the last list), and the listing of particle pairs and
//! vertex–triangle candidates, each thread into its own share.

use std::ops::{DerefMut, Range};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use glam::{IVec3, Vec3};

use super::cells::{Probe, Reach, SortedCells};
use super::edges::{EdgePair, MeshEdges};
use super::geometry::{bounds, closest_point, covered_by_corners};
use super::hash::SpatialHash;
use super::slabs::{sort_into_runs, Slabs};
use super::{SelfContactSettings, MAX_PAIRS_PER_PARTICLE, SKIN};

/// One candidate pair of the frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pair {
    pub a: u32,
    pub b: u32,
    /// Contact distance d_min = min(thickness, rest distance) in m.
    pub min_distance: f32,
}

/// One candidate (particle, triangle) of the frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Face {
    pub particle: u32,
    /// The triangle's corners.
    pub triangle: [u32; 3],
    /// Contact distance d_min = min(thickness, rest distance to the triangle) in m.
    pub min_distance: f32,
}

/// The sorted cells and the faces' hash, the constraint adjacency they exclude and the
/// frame's candidate pairs and faces.
#[derive(Debug, Clone, Default)]
pub(crate) struct SelfContacts {
    /// The particles sorted by cell at the pairs' cell edge, and hashed at the coarser one of
    /// the faces.
    cells: SortedCells,
    face_hash: SpatialHash,
    /// The triangles' edges around each particle.
    pub(super) mesh_edges: MeshEdges,
    /// Scratch: the positions the lists are made from.
    pub(super) points: Vec<Vec3>,
    /// Particles joined to each particle by a live distance constraint, sorted (CSR).
    adjacency_start: Vec<u32>,
    adjacency: Vec<u32>,
    /// Each particle's piece (the smallest particle joined to it through live distance
    /// constraints): the rest distance caps contacts only within a piece.
    piece: Vec<u32>,
    /// (topology version, particles, distance constraints) the adjacency was built for.
    pub(super) adjacency_key: Option<(u64, usize, usize)>,
    /// This frame's candidate pairs and faces, one share per part of the last list: the
    /// lists are the shares' pairs (then faces) in share order.
    pub(super) shares: Shares,
    /// The slabs the particles lay in when the lists were made (see [`super::slabs`]).
    pub(super) slabs: Slabs,
    /// Pairs and faces in contact in the last sweep of the last frame.
    pub active: u32,
    /// Positions the pairs were listed at, the margin they were listed with (m) and what they
    /// were listed for (adjacency key, thickness bits, faces on, edges on); `None` before the
    /// first list.
    listed_at: Vec<Vec3>,
    pub(super) listed_margin: f32,
    listed_for: Option<ListedFor>,
}

/// What a list was made for: the adjacency key (topology version, particles, distance
/// constraints), the thickness's bits and whether faces and edge pairs were on.
type ListedFor = ((u64, usize, usize), u32, bool, bool);

/// The part of the candidate lists one thread makes: the pairs of a range of particles, the
/// faces of a range of triangles.
#[derive(Debug, Clone, Default)]
pub(super) struct Share {
    pub(super) pairs: Vec<Pair>,
    pub(super) faces: Vec<Face>,
    pub(super) edges: Vec<EdgePair>,
    /// The triangles of the range that list faces (not [`covered_by_corners`]), and the
    /// largest side of their bounding boxes (m).
    coarse: Vec<[u32; 3]>,
    pub(super) extent: Option<f32>,
    /// Where each slab's run of the pairs, faces and edge pairs starts once they are sorted by
    /// slab ([`Share::sort_by_slab`]).
    pub(super) pair_runs: Vec<u32>,
    pub(super) face_runs: Vec<u32>,
    pub(super) edge_runs: Vec<u32>,
}

impl Share {
    /// Empties the lists.
    pub(super) fn clear(&mut self) {
        for list in [&mut self.pair_runs, &mut self.face_runs, &mut self.edge_runs] {
            list.clear();
        }
        self.pairs.clear();
        self.faces.clear();
        self.edges.clear();
    }

    /// Sorts the pairs, faces and edge pairs stably by their key among `slabs`
    /// ([`Slabs::key`]), each kind's runs in [`Share::pair_runs`] and its siblings.
    pub(super) fn sort_by_slab(&mut self, slabs: &Slabs) {
        let keys = slabs.count() + 1;
        sort_into_runs(&mut self.pairs, &mut self.pair_runs, keys, |p| slabs.key(&[p.a, p.b]));
        let face_key = |f: &Face| slabs.key(&[f.particle, f.triangle[0], f.triangle[1], f.triangle[2]]);
        sort_into_runs(&mut self.faces, &mut self.face_runs, keys, face_key);
        let edge_key = |e: &EdgePair| slabs.key(&[e.a[0], e.a[1], e.b[0], e.b[1]]);
        sort_into_runs(&mut self.edges, &mut self.edge_runs, keys, edge_key);
    }
}

/// What a list is made from: the rest positions, the triangles and the settings.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sources<'a> {
    pub(super) rest: &'a [Vec3],
    pub(super) triangles: &'a [[u32; 3]],
    pub(super) settings: SelfContactSettings,
}

impl SelfContacts {
    /// Whether the adjacency is the one of `key` (then [`Self::refresh_adjacency`] keeps it).
    pub fn adjacency_is(&self, key: (u64, usize, usize)) -> bool {
        self.adjacency_key == Some(key)
    }

    /// Rebuilds the adjacency when `key` (topology version, particle and constraint counts)
    /// changed: `edges` lists the particle pairs of the live distance constraints.
    pub fn refresh_adjacency<I: Iterator<Item = (u32, u32)>>(&mut self, key: (u64, usize, usize), edges: impl Fn() -> I) {
        if self.adjacency_is(key) {
            return;
        }
        let n = key.1;
        let mut start = vec![0u32; n + 1];
        for (a, b) in edges() {
            start[a as usize + 1] += 1;
            start[b as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut adjacency = vec![0u32; start[n] as usize];
        for (a, b) in edges() {
            for (from, to) in [(a, b), (b, a)] {
                adjacency[fill[from as usize] as usize] = to;
                fill[from as usize] += 1;
            }
        }
        for i in 0..n {
            adjacency[start[i] as usize..start[i + 1] as usize].sort_unstable();
        }
        self.piece = crate::sim::model::joined_pieces(n, edges());
        (self.adjacency_start, self.adjacency, self.adjacency_key) = (start, adjacency, Some(key));
    }

    /// The contact distance d_min = min(thickness, `rest_distance`) of particle `i` against
    /// particle or triangle corner `j`: two pieces a cut or tear separated collide at the full
    /// thickness, even where they lay together at rest.
    pub(super) fn contact_distance(&self, thickness: f32, i: usize, j: u32, rest_distance: impl FnOnce() -> f32) -> f32 {
        if self.piece[i] == self.piece[j as usize] {
            thickness.min(rest_distance())
        } else {
            thickness
        }
    }

    /// Whether particles `a` and `b` share a live distance constraint.
    #[inline(always)]
    pub(super) fn adjacent(&self, a: usize, b: u32) -> bool {
        // A scan without branches: a particle has a dozen or two neighbours, and the answer
        // varies from one candidate to the next, so a binary search mispredicts.
        let joined = &self.adjacency[self.adjacency_start[a] as usize..self.adjacency_start[a + 1] as usize];
        // Sorted: most candidates (another layer of a pile) lie outside the neighbours' range.
        match (joined.first(), joined.last()) {
            (Some(&low), Some(&high)) if (low..=high).contains(&b) => joined.iter().fold(false, |found, &j| found | (j == b)),
            _ => false,
        }
    }

    /// Makes sure the candidate pairs and faces hold every contact until the next call, as
    /// one thread ([`super::SelfContactPass::remake_lists`] with one part): keeps the last lists while
    /// no particle has moved more than their margin allows, else lists anew from the `n`
    /// particles' current positions. `rest` are the rest positions, `triangles` the faces
    /// (corners below `n`), `travel` the farthest a particle can move from this call to the
    /// last projection before the next (m).
    #[cfg(test)]
    pub(super) fn prepare(
        &mut self,
        n: usize,
        position: impl Fn(usize) -> Vec3,
        rest: &[Vec3],
        triangles: &[[u32; 3]],
        settings: SelfContactSettings,
        travel: f32,
    ) {
        let settings = SelfContactSettings { travel, ..settings };
        super::SelfContactPass::new(self, 1, rest, triangles, settings).remake_lists(n, position, 0, 1, &|| {});
    }

    /// The candidate pairs, in projection order.
    #[cfg(test)]
    pub(super) fn pairs(&self) -> Vec<Pair> {
        self.shares.0.iter().flat_map(|s| read(s).pairs.clone()).collect()
    }

    /// The candidate faces, in projection order.
    #[cfg(test)]
    pub(super) fn faces(&self) -> Vec<Face> {
        self.shares.0.iter().flat_map(|s| read(s).faces.clone()).collect()
    }

    /// The candidate edge pairs, in projection order.
    #[cfg(test)]
    pub(super) fn edge_pairs(&self) -> Vec<EdgePair> {
        self.shares.0.iter().flat_map(|s| read(s).edges.clone()).collect()
    }

    /// Whether the lists must be made anew, and if so sorts the `n` particles at `position`
    /// (rest positions `rest`) by cell for them (the first step of
    /// [`super::SelfContactPass::remake_lists`]). [`Self::refresh_adjacency`] must have run for
    /// the current topology.
    ///
    /// A list made with margin M (every pair closer than d_min + 2M) stays complete while
    /// every particle's displacement since then, less a shift s common to all, plus `travel`
    /// (the farthest a particle can move from this check to the last projection before the
    /// next, m) is at most M: two particles
    /// farther apart than that moved at most 2M toward each other, since a common shift moves
    /// no pair. s is the centre of the displacements' bounding box ([`displacements_within`]),
    /// so a cloth falling as a whole keeps its list. Lists are made with
    /// M = travel + [`SKIN`] · thickness, so a cloth at rest keeps its list too.
    pub(super) fn begin(
        &mut self,
        n: usize,
        position: impl Fn(usize) -> Vec3,
        rest: &[Vec3],
        settings: SelfContactSettings,
        travel: f32,
    ) -> bool {
        debug_assert_eq!(self.adjacency_start.len(), n + 1, "adjacency of the current topology");
        let listed_for = self
            .adjacency_key
            .map(|key| (key, settings.thickness.to_bits(), settings.vertex_triangle, settings.edge_edge));
        let same_kind = listed_for.is_some() && self.listed_for == listed_for && self.listed_at.len() == n;
        if same_kind && displacements_within(n, &position, &self.listed_at, self.listed_margin - travel) {
            return false;
        }
        self.listed_margin = travel + SKIN * settings.thickness;
        self.listed_at.clear();
        self.listed_at.extend((0..n).map(&position));
        self.listed_for = listed_for;
        self.points.clone_from(&self.listed_at);
        self.cells
            .fill(&self.points, rest, &self.piece, settings.thickness + 2.0 * self.listed_margin);
        true
    }

    /// The most pairs (and, separately, faces) the lists hold.
    pub(super) fn cap(&self) -> usize {
        MAX_PAIRS_PER_PARTICLE * self.points.len()
    }

    /// Part `t` of `threads` of a new list into `share`: the pairs of the `t`-th run of
    /// particles and, with faces on, the triangles of the `t`-th run of `triangles` that list
    /// faces ([`covered_by_corners`]) with the largest side of their bounding boxes.
    pub(super) fn list_share(&self, share: &mut Share, t: usize, threads: usize, sources: Sources) {
        let run = |count: usize| count * t / threads..count * (t + 1) / threads;
        share.clear();
        share.coarse.clear();
        share.extent = None;
        self.list_pairs(&mut share.pairs, run(self.points.len()), sources.rest, sources.settings.thickness);
        if sources.settings.vertex_triangle {
            let thickness = sources.settings.thickness;
            let corners_of = |t: &[u32; 3]| t.map(|v| self.points[v as usize]);
            let triangles = &sources.triangles[run(sources.triangles.len())];
            share
                .coarse
                .extend(triangles.iter().filter(|t| !covered_by_corners(corners_of(t), thickness)));
            share.extent = share
                .coarse
                .iter()
                .map(|t| bounds(corners_of(t)))
                .map(|(l, h)| (h - l).max_element())
                .reduce(f32::max);
        }
    }

    /// Lists into `pairs` every pair of a particle in `particles` closer than its reach
    /// d_min + 2M from the sorted cells (see [`super`]), at most [`Self::cap`].
    fn list_pairs(&self, pairs: &mut Vec<Pair>, particles: Range<usize>, rest: &[Vec3], thickness: f32) {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") {
            // SAFETY: this CPU runs AVX2.
            return unsafe { self.list_pairs_avx2(pairs, particles, rest, thickness) };
        }
        self.list_pairs_inline(pairs, particles, rest, thickness);
    }

    /// [`Self::list_pairs`] in AVX2's eight lanes (the same operations, so the same lists).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn list_pairs_avx2(&self, pairs: &mut Vec<Pair>, particles: Range<usize>, rest: &[Vec3], thickness: f32) {
        self.list_pairs_inline(pairs, particles, rest, thickness);
    }

    /// [`Self::list_pairs`], inlined into each instruction set's caller.
    #[inline(always)]
    fn list_pairs_inline(&self, pairs: &mut Vec<Pair>, particles: Range<usize>, rest: &[Vec3], thickness: f32) {
        let cap = self.cap();
        let reach = Reach {
            thickness,
            twice_margin: 2.0 * self.listed_margin,
        };
        let mut near = Vec::new();
        for i in particles {
            let probe = Probe {
                p: self.points[i],
                rest: rest[i],
                piece: self.piece[i],
            };
            near.clear();
            for run in self.cells.half_stencil(i) {
                self.cells.near(run, probe, reach, &mut near);
            }
            for &(j, min_distance) in &near {
                if !self.adjacent(i, j) {
                    pairs.push(Pair {
                        a: i as u32,
                        b: j,
                        min_distance,
                    });
                    if pairs.len() == cap {
                        return;
                    }
                }
            }
        }
    }

    /// The pairs' largest reach, the cells' edge (m).
    pub(super) fn pair_reach(&self) -> f32 {
        self.cells.edge()
    }

    /// The cell edge of the faces' hash (m), as last filled.
    pub(super) fn face_hash_edge(&self) -> f32 {
        self.face_hash.edge()
    }

    /// Hashes the particles again for the faces, with cells of edge `extent` (the largest
    /// bounding-box side of a triangle that lists faces, m, `None` when there is none) plus
    /// twice the pairs' cell edge (the largest reach).
    pub(super) fn fill_face_hash(&mut self, extent: Option<f32>) {
        if let Some(extent) = extent {
            self.face_hash.fill(&self.points, extent + 2.0 * self.cells.edge());
        }
    }

    /// Lists into `share` every (particle, triangle of `share.coarse`) closer than its reach
    /// d_min + 2M (see [`super`]): each triangle tests the particles in the at most 2 × 2 × 2
    /// cells of the face hash its bounding box grown by the reach covers that lie within reach
    /// of the box, skipping its corners and the particles joined to them. At most
    /// [`Self::cap`].
    pub(super) fn list_faces(&self, share: &mut Share, rest: &[Vec3], thickness: f32) {
        let (margin, reach, cap, points) = (self.listed_margin, self.cells.edge(), self.cap(), &self.points);
        for &triangle in &share.coarse {
            let corners = triangle.map(|v| points[v as usize]);
            let (low, high) = bounds(corners);
            let (centre, radius) = ((low + high) * 0.5, 0.5 * low.distance(high) + reach);
            let (first, last) = (self.face_hash.cell(low - reach), self.face_hash.cell(high + reach));
            for z in first.z..=last.z {
                for y in first.y..=last.y {
                    for x in first.x..=last.x {
                        for j in self.face_hash.in_cell(IVec3::new(x, y, z)) {
                            let p = points[j as usize];
                            if triangle.contains(&j) || p.distance_squared(centre) >= radius * radius {
                                continue;
                            }
                            let distance = p.distance(closest_point(p, corners));
                            if distance >= reach || triangle.iter().any(|&v| self.adjacent(v as usize, j)) {
                                continue;
                            }
                            let r = rest[j as usize];
                            let at_rest = || r.distance(closest_point(r, triangle.map(|v| rest[v as usize])));
                            let min_distance = self.contact_distance(thickness, j as usize, triangle[0], at_rest);
                            if min_distance > 0.0 && distance < min_distance + 2.0 * margin {
                                share.faces.push(Face {
                                    particle: j,
                                    triangle,
                                    min_distance,
                                });
                                if share.faces.len() == cap {
                                    return;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Whether every displacement `position(i) − listed_at[i]` of the `n` particles lies within
/// `allowed` (m) of the centre of their bounding box. Half the box's diagonal bounds them all
/// in the pass that finds the box; only when that bound is over `allowed` does a second pass
/// measure each (a pile whose layers slid past each other in opposite directions often
/// passes it: the box's corners are empty).
fn displacements_within(n: usize, position: impl Fn(usize) -> Vec3, listed_at: &[Vec3], allowed: f32) -> bool {
    if allowed < 0.0 {
        return false;
    }
    let displacement = |i: usize| position(i) - listed_at[i];
    let (low, high) = (0..n)
        .map(displacement)
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(low, high), d| (low.min(d), high.max(d)));
    if n == 0 || 0.5 * (high - low).length() <= allowed {
        return true;
    }
    let centre = (low + high) * 0.5;
    (0..n).all(|i| (displacement(i) - centre).length_squared() <= allowed * allowed)
}

/// Cuts the lists held by `shares` (in order) to their first `cap` pairs, faces and edge
/// pairs, as one thread listing them in order would have stopped.
pub(super) fn truncate_to_cap<S: DerefMut<Target = Share>>(shares: impl IntoIterator<Item = S>, cap: usize) {
    let (mut pairs, mut faces, mut edges) = (0, 0, 0);
    for mut share in shares {
        share.pairs.truncate(cap - pairs);
        share.faces.truncate(cap - faces);
        share.edges.truncate(cap - edges);
        pairs += share.pairs.len();
        faces += share.faces.len();
        edges += share.edges.len();
    }
}

/// The lists' shares, one per part of the last list, each behind a lock so that every thread
/// writes its own while all read the hashes, and all read every share while projecting.
#[derive(Debug, Default)]
pub(super) struct Shares(pub(super) Vec<RwLock<Share>>);

impl Clone for Shares {
    fn clone(&self) -> Self {
        Self(self.0.iter().map(|s| RwLock::new(read(s).clone())).collect())
    }
}

/// A share of the lists, locked by the thread that writes it.
pub(super) fn locked(share: &RwLock<Share>) -> RwLockWriteGuard<'_, Share> {
    share.write().unwrap_or_else(|e| e.into_inner())
}

/// A share of the lists, to read.
pub(super) fn read(share: &RwLock<Share>) -> RwLockReadGuard<'_, Share> {
    share.read().unwrap_or_else(|e| e.into_inner())
}

/// A share of the lists, held exclusively.
pub(super) fn unpoisoned(share: &mut RwLock<Share>) -> &mut Share {
    share.get_mut().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::self_contact::tests::random_points;

    /// The check passes when every displacement lies within the allowance of the centre of
    /// their bounding box, also when the box's half diagonal does not (two layers slid apart
    /// in opposite directions along x and y: the box's corners are empty), and fails as soon
    /// as one displacement is past it.
    #[test]
    fn displacements_are_checked_one_by_one_when_their_box_is_too_large() {
        let listed_at = vec![Vec3::ZERO; 4];
        let slid = [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y].map(|d| d * 0.003);
        let position = |i: usize| slid[i];
        // Half the box's diagonal: 0.003 · √2 = 4.2 mm; each displacement: 3 mm from the centre.
        assert!(displacements_within(4, position, &listed_at, 0.0031));
        assert!(!displacements_within(4, position, &listed_at, 0.0029));
        let common = |i: usize| slid[i] + Vec3::splat(0.5);
        assert!(displacements_within(4, common, &listed_at, 0.0031), "a common shift moves no pair");
        assert!(
            !displacements_within(4, |_| Vec3::ZERO, &listed_at, -0.001),
            "a travel beyond the margin"
        );
    }

    /// The AVX2 listing and the portable one list the same pairs in the same order (the lists,
    /// hence the frames, are the same on every CPU), here on 3 000 random points in two pieces
    /// with constraint neighbours left out.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_avx2_and_portable_listings_agree() {
        if !is_x86_feature_detected!("avx2") {
            eprintln!("the_avx2_and_portable_listings_agree: skipped (no AVX2 on this CPU)");
            return;
        }
        let points: Vec<Vec3> = random_points(3000).iter().map(|&p| p * 0.3).collect();
        let rest: Vec<Vec3> = points.iter().map(|&p| p * 0.8).collect();
        let n = points.len();
        let joined = || (0..n as u32 - 1).filter(|&i| i != 1500).map(|i| (i, i + 1));
        let settings = SelfContactSettings {
            thickness: 0.01,
            friction: 0.0,
            travel: 0.002,
            vertex_triangle: false,
            edge_edge: false,
        };
        let mut contacts = SelfContacts::default();
        contacts.refresh_adjacency((0, n, n), joined);
        assert!(contacts.begin(n, |i| points[i], &rest, settings, settings.travel));
        let (mut portable, mut avx2) = (Vec::new(), Vec::new());
        contacts.list_pairs_inline(&mut portable, 0..n, &rest, settings.thickness);
        // SAFETY: AVX2 was detected above.
        unsafe { contacts.list_pairs_avx2(&mut avx2, 0..n, &rest, settings.thickness) };
        let capped = portable.iter().filter(|p| p.min_distance < settings.thickness).count();
        assert!(portable.len() > 1000 && capped > 20, "{} pairs, {capped} capped", portable.len());
        assert_eq!(portable, avx2);
    }
}
