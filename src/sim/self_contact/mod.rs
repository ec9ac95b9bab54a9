//! Self-contact: particle–particle contacts between parts of one cloth (docs/physics.md §4,
//! "Self-contact"), after Ten Minute Physics 15 (TMP 15, Matthias Müller's tutorial on cloth
//! self-collision with a spatial hash).
//!
//! # Detection, checked every substep
//! A candidate list holds every pair closer than its reach d_min + 2M, with d_min the pair's
//! contact distance below and M the list's margin. It is made from a spatial hash over the
//! particles (cells of edge thickness + 2M, a power-of-two table of buckets filled by a
//! counting sort into two flat arrays). Two particles farther apart than their reach cannot
//! come closer than d_min while neither has moved more than M, so the list stays complete as
//! long as every particle's displacement since it was made, plus how far it can move before
//! the next check, is at most M (a Verlet list). Thread 0 checks that on the first sweep of
//! every substep, with u = 2 h · min(v_clamp, max_i |v_i| + |g| Δt) (a substep's prediction
//! and as much again for the constraint corrections; the speeds at the frame's start), and
//! remakes the list with M = u + [`SKIN`] · thickness when it fails: a cloth at rest keeps its
//! list for good, a falling one remakes it about every substep, each time with a reach of a
//! few substeps' travel rather than a frame's.
//!
//! Pairs joined by a live distance constraint (edges, shear diagonals, bend edges) are left
//! out; pairs of two fixed particles are listed (pins change between frames) and skipped by
//! the projection. The cell edge is the largest reach, so a pair lies in the same or
//! neighbouring cells: each particle looks at its own cell and the 13 neighbours ahead of it
//! (a half stencil, so each pair is met once), skipping entries of other cells that share a
//! bucket. A new topology (tearing, cutting: new particles, removed edges) or thickness remakes
//! the list at once.
//!
//! # Response, every sweep of every substep
//! Each listed pair is a unilateral distance constraint C = |x_a − x_b| − d_min ≥ 0 with
//! compliance 0, projected in list order (i ascending):
//! ```text
//! d_min = min(thickness, |r_a − r_b|)       r the rest positions (TMP 15's rule: a pair
//!                                           closer at rest than the thickness is kept at
//!                                           its rest distance, so a fine mesh is not
//!                                           pushed apart by its own thickness)
//! if |x_a − x_b| < d_min:  n = (x_a − x_b)/|x_a − x_b|,  depth = d_min − |x_a − x_b|
//!     x_a += w_a/(w_a + w_b) depth n,   x_b −= w_b/(w_a + w_b) depth n
//!     Δx_t = the tangential part of (x_a − x_a,prev) − (x_b − x_b,prev)
//!     x_a −= w_a/(w_a + w_b) f Δx_t,    x_b += w_b/(w_a + w_b) f Δx_t,
//!     f = min(1, μ depth / |Δx_t|)          (positional Coulomb friction between layers)
//! ```
//! A pair at zero distance has no normal and is skipped. The rest distance caps d_min only
//! within one piece (particles joined through live distance constraints): split copies of a
//! torn vertex share their rest position (d_min = 0) and never collide with each other while
//! the tear leaves them in one piece, but two pieces a cut or tear separated collide at the
//! full thickness everywhere, also where they lay side by side at rest (a cut's seam).
//!
//! # Vertex–triangle contacts
//! Particles alone let a layer slip between the particles of another when the spacing is
//! larger than the thickness. So (with [`SelfContactSettings::vertex_triangle`]) a particle p
//! also keeps its distance from the face of every triangle (x_0, x_1, x_2) it is not a corner
//! of and not joined to by a distance constraint (Provot 1997; Bridson, Fedkiw and Anderson
//! 2002): the candidate list holds every such (particle, triangle) closer than
//! d_min + 2M, with d_min = min(thickness, the rest distance from p to the triangle). While the
//! projection q of p onto the triangle's plane falls inside the triangle (barycentric
//! coordinates b_k ≥ 0), the contact is the unilateral constraint
//! ```text
//! C = s n·(p − q) − d_min ≥ 0,   q = Σ b_k x_k,   n = (x_1 − x_0) × (x_2 − x_0) / |…|
//! s = sign of (p − x_0)·((x_1 − x_0) × (x_2 − x_0)) at the substep's start positions
//! ```
//! (the side p came from, so a particle that crossed the face within the substep is put back
//! on its side, never pushed through), with ∇_p C = s n and ∇_{x_k} C = −b_k s n (the normal
//! held fixed). Compliance 0, so the XPBD update is Δλ = −C / W with
//! W = w_p + Σ b_k² w_k, and with depth = −C:
//! ```text
//! push = depth s n − f Δx_t,     Δx_t = tangential part of (p − p_start) − Σ b_k (x_k − x_k,start)
//! p   += w_p / W · push,         f = min(1, μ depth / |Δx_t|)   (Coulomb, as for pairs)
//! x_k −= b_k w_k / W · push
//! ```
//! which leaves p exactly d_min from the plane (C = 0), cancels f of the tangential slip
//! between p and the point q of the face, and conserves momentum (Σ b_k = 1). Faces whose
//! area is zero are skipped. The faces are found through a second hash of the particles with
//! cells as large as the largest triangle plus twice the largest reach: each triangle looks
//! at the (at most 2 × 2 × 2) cells its bounding box, grown by the reach, covers, rejects
//! particles outside the box's grown bounding sphere and tests the exact point–triangle
//! distance (Ericson, *Real-Time Collision Detection* §5.1.5). Since the distance moves by at
//! most M when p moves by M and by at most M when every corner does, the Verlet argument and
//! margin of the pairs hold for the faces too, and both lists are made together.
//!
//! Faces are listed only where the pairs leave a hole: no point of a triangle is farther from
//! its nearest corner than its circumradius R, so while R < thickness a particle crossing the
//! face would come closer than the thickness to a corner, which its pairs forbid (for a
//! particle farther than the thickness from the triangle at rest, whose pairs with the
//! corners all have d_min = thickness). Such a triangle, judged as it is when the list is
//! made, lists no faces: a mesh as fine as its thickness (the falling strip, a 128² curtain
//! at 1 cm) pays nothing for them; a coarser one (1 cm against a 2 cm or 3.4 cm spacing) gets
//! them where they are needed.
//!
//! # Edge–edge contacts
//! Particle pairs that keep every two particles d apart still let two edges pass through
//! each other when the edges are long: edges a and b crossing at one point have two ends, one
//! of each, at most √(ℓ_a² + ℓ_b²) / 2 apart (the bound is met when they cross at right
//! angles at their midpoints), so a crossing is possible between particles held d apart once
//! ℓ_a² + ℓ_b² ≥ 4 d² — the diagonals of a mesh as fine as its thickness, or any mesh
//! stretched near it (the halves of a cut sheet piled on each other crossed this way). So
//! (with [`SelfContactSettings::edge_edge`]) two triangle edges that share no particle and
//! whose ends are not joined by a distance constraint keep d apart when
//! ℓ_a² + ℓ_b² ≥ 4 ([`edges::EDGE_SLACK`] d)² at the time the list is made (the slack leaves a
//! barely stretched fine mesh, such as the falling strip, to its pairs). With p and q the
//! closest points of the segments (Ericson §5.1.9) at parameters s and t:
//! ```text
//! C = n·(p − q) − d ≥ 0,   p = (1 − s) x_a0 + s x_a1,   q = (1 − t) x_b0 + t x_b1
//! n = (p − q)/|p − q| (the edges' common perpendicular when they touch), turned to the side
//!     p was on at the substep's start (p and q at the same s, t), so crossed edges go back
//! W = (1 − s)² w_a0 + s² w_a1 + (1 − t)² w_b0 + t² w_b1,   push = (depth n − f Δx_t) / W
//! x_a0 += (1 − s) w_a0 push,  x_a1 += s w_a1 push,  x_b0 −= (1 − t) w_b0 push,  x_b1 −= t w_b1 push
//! ```
//! with Δx_t the tangential slip of p against q since the substep's start and f Coulomb's
//! factor as for the pairs; momentum is conserved and C = 0 after the projection. Edges
//! closer at rest than the thickness within one piece are left to the distance constraints,
//! as for the pairs. Candidates come from the particle pairs: each listed pair (i, j) of
//! particles whose longest edges can together cross lists every edge at i against every edge
//! at j (sorted and deduplicated, then tested for the reach d + 2M), so two edges are found
//! when two of their ends are within the pairs' reach — which holds for edges that can cross
//! between pairs, whose nearest ends are at most about d · `EDGE_SLACK` apart when they meet.
//! Where faces are listed, particles with an edge of 2 d or longer (triangles no longer
//! covered by their corners) are left to the vertex–triangle contacts: their edge–edge
//! candidates through the pairs would be many times the pairs for a rare kind of crossing.
//!
//! # Velocity clamp
//! While self-collision is on, every velocity the solver derives is clamped to
//! v_clamp = [`CLAMP_FRACTION`] · thickness / h (TMP 15's rule), so no particle moves more than
//! a fifth of the thickness in a substep's prediction and cannot cross a layer between two
//! projections. At the default 15 substeps and 1 cm thickness this is 1.8 m/s: a falling cloth
//! reaches it after 0.18 s. A thinner thickness or more substeps raise it.
//!
//! # Threads and determinism
//! The pass runs between the barriers of the tail step (after the tail group and the soft
//! grab, before tethers and collider contacts), on every thread of the frame
//! ([`SelfContactPass::remake_lists`]). Thread 0 checks the lists and fills the hash; each of
//! the T threads then lists the pairs of its run of particles (n t / T up to n (t + 1) / T)
//! and the faces of its run of triangles into its own share of the lists, and the shares are
//! kept in part order: read share after share, they are exactly the one-thread lists (pairs
//! in particle order, faces in triangle order) in the same order, and cut at the same cap.
//! Edge pairs are listed per share and merged in sorted order by thread 0. Thread 0 projects
//! the lists serially (pairs, then faces, share after share, then edge pairs), so every
//! thread count gives the same result.

use std::ops::{DerefMut, Range};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use glam::{IVec3, Vec3};

use super::particles::{xyz, PosPtr, VecPtr};

mod edges;

use edges::{merge_sorted, project_edges, EdgePair, MeshEdges};

/// Fraction of the thickness a particle may move in one substep's prediction while
/// self-collision is on: v_clamp = `CLAMP_FRACTION` · thickness / h (Ten Minute Physics 15).
pub const CLAMP_FRACTION: f32 = 0.2;

/// Extra margin of a candidate list, as a fraction of the thickness: a list stays valid until
/// some particle has moved this far beyond the travel it was made for (see
/// [`SelfContacts::begin`]).
pub const SKIN: f32 = 0.25;

/// Most candidate pairs (and, separately, faces) a list holds, per particle. A cloth whose particles crowd far more
/// closely than its thickness (a fine mesh with a thick `self_thickness`) would list
/// hundreds of pairs each and stall the frame; its list stops here (the pairs of the
/// lowest-numbered particles are kept, the same on every run). Layers 1 cm apart at 1 cm
/// spacing list about 25 per particle.
pub const MAX_PAIRS_PER_PARTICLE: usize = 128;

/// What the self-contact pass needs of the parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SelfContactSettings {
    /// Distance kept between particles of the cloth, in m.
    pub thickness: f32,
    /// Coulomb friction coefficient between layers (static and kinetic alike).
    pub friction: f32,
    /// How far a particle can move from one substep's check of the candidate list to the
    /// next (m), set per frame by the cloth.
    pub travel: f32,
    /// Whether particles also collide with the faces of triangles (module docs, "Vertex–triangle
    /// contacts").
    pub vertex_triangle: bool,
    /// Whether edges long enough to pass between the particles collide with each other
    /// (module docs, "Edge–edge contacts").
    pub edge_edge: bool,
}

impl SelfContactSettings {
    /// The speed clamp v_clamp = [`CLAMP_FRACTION`] · thickness / h in m/s for substep `h`.
    pub fn speed_clamp(&self, h: f32) -> f32 {
        CLAMP_FRACTION * self.thickness / h
    }
}

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

/// The spatial hashes, the constraint adjacency they exclude and the frame's candidate pairs
/// and faces.
#[derive(Debug, Clone, Default)]
pub(crate) struct SelfContacts {
    /// The particles hashed at the pairs' cell edge, and at the coarser one of the faces.
    hash: Hash,
    face_hash: Hash,
    /// The triangles' edges around each particle.
    mesh_edges: MeshEdges,
    /// Scratch: the positions the lists are made from.
    points: Vec<Vec3>,
    /// Particles joined to each particle by a live distance constraint, sorted (CSR).
    adjacency_start: Vec<u32>,
    adjacency: Vec<u32>,
    /// Each particle's piece (the smallest particle joined to it through live distance
    /// constraints): the rest distance caps contacts only within a piece.
    piece: Vec<u32>,
    /// (topology version, particles, distance constraints) the adjacency was built for.
    adjacency_key: Option<(u64, usize, usize)>,
    /// This frame's candidate pairs and faces, one share per part of the last list: the
    /// lists are the shares' pairs (then faces) in share order.
    shares: Shares,
    /// Pairs and faces in contact in the last sweep of the last frame.
    pub active: u32,
    /// Positions the pairs were listed at, the margin they were listed with (m) and what they
    /// were listed for (adjacency key, thickness bits, faces on, edges on); `None` before the
    /// first list.
    listed_at: Vec<Vec3>,
    listed_margin: f32,
    listed_for: Option<ListedFor>,
}

/// What a list was made for: the adjacency key (topology version, particles, distance
/// constraints), the thickness's bits and whether faces and edge pairs were on.
type ListedFor = ((u64, usize, usize), u32, bool, bool);

/// The part of the candidate lists one thread makes: the pairs of a range of particles, the
/// faces of a range of triangles.
#[derive(Debug, Clone, Default)]
struct Share {
    pairs: Vec<Pair>,
    faces: Vec<Face>,
    edges: Vec<EdgePair>,
    /// The triangles of the range that list faces (not [`covered_by_corners`]), and the
    /// largest side of their bounding boxes (m).
    coarse: Vec<[u32; 3]>,
    extent: Option<f32>,
}

/// What a list is made from: the rest positions, the triangles and the settings.
#[derive(Debug, Clone, Copy)]
struct Sources<'a> {
    rest: &'a [Vec3],
    triangles: &'a [[u32; 3]],
    settings: SelfContactSettings,
}

/// A spatial hash of points: cells of edge `edge`, a power-of-two table of buckets filled
/// by a counting sort into two flat arrays.
#[derive(Debug, Clone, Default)]
struct Hash {
    /// Cell edge in m.
    edge: f32,
    /// First entry of each bucket (`buckets + 1` entries), and the points by bucket with
    /// their cells (so a bucket shared by two cells yields each point once).
    bucket_start: Vec<u32>,
    entries: Vec<(u32, IVec3)>,
    /// Scratch: the counting sort's fill pointers.
    fill: Vec<u32>,
}

impl Hash {
    /// Hashes `points` into cells of edge `edge` (m) over 2 · points buckets, rounded up to a
    /// power of two.
    fn fill(&mut self, points: &[Vec3], edge: f32) {
        let buckets = (2 * points.len()).max(2).next_power_of_two();
        self.edge = edge;
        self.bucket_start.clear();
        self.bucket_start.resize(buckets + 1, 0);
        for &p in points {
            self.bucket_start[bucket_of(cell_of(p, edge), buckets) + 1] += 1;
        }
        for b in 0..buckets {
            self.bucket_start[b + 1] += self.bucket_start[b];
        }
        self.fill.clone_from(&self.bucket_start);
        self.entries.resize(points.len(), (0, IVec3::ZERO));
        for (i, &p) in points.iter().enumerate() {
            let c = cell_of(p, edge);
            let b = bucket_of(c, buckets);
            self.entries[self.fill[b] as usize] = (i as u32, c);
            self.fill[b] += 1;
        }
    }

    /// The cell of `p`.
    fn cell(&self, p: Vec3) -> IVec3 {
        cell_of(p, self.edge)
    }

    /// The points in `cell`.
    fn in_cell(&self, cell: IVec3) -> impl Iterator<Item = u32> + '_ {
        let b = bucket_of(cell, self.bucket_start.len() - 1);
        self.entries[self.bucket_start[b] as usize..self.bucket_start[b + 1] as usize]
            .iter()
            .filter(move |e| e.1 == cell)
            .map(|e| e.0)
    }
}

/// Bucket of a cell among `buckets` (a power of two): the multipliers of Ten Minute Physics
/// 15, their top bits taken by a Fibonacci multiply (a mask, not a division).
fn bucket_of(cell: IVec3, buckets: usize) -> usize {
    let h = cell.x.wrapping_mul(92_837_111) ^ cell.y.wrapping_mul(689_287_499) ^ cell.z.wrapping_mul(283_923_481);
    let mixed = (h as u32 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> (64 - buckets.trailing_zeros())) as usize & (buckets - 1)
}

/// The cell of `p` for cell edge `edge` (m).
fn cell_of(p: Vec3, edge: f32) -> IVec3 {
    (p / edge).floor().as_ivec3()
}

impl SelfContacts {
    /// Rebuilds the adjacency when `key` (topology version, particle and constraint counts)
    /// changed: `edges` lists the particle pairs of the live distance constraints.
    pub fn refresh_adjacency<I: Iterator<Item = (u32, u32)>>(&mut self, key: (u64, usize, usize), edges: impl Fn() -> I) {
        if self.adjacency_key == Some(key) {
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
        self.piece = super::model::joined_pieces(n, edges());
        (self.adjacency_start, self.adjacency, self.adjacency_key) = (start, adjacency, Some(key));
    }

    /// The contact distance d_min = min(thickness, `rest_distance`) of particle `i` against
    /// particle or triangle corner `j`: two pieces a cut or tear separated collide at the full
    /// thickness, even where they lay together at rest.
    fn contact_distance(&self, thickness: f32, i: usize, j: u32, rest_distance: impl FnOnce() -> f32) -> f32 {
        if self.piece[i] == self.piece[j as usize] {
            thickness.min(rest_distance())
        } else {
            thickness
        }
    }

    /// Whether particles `a` and `b` share a live distance constraint.
    fn adjacent(&self, a: usize, b: u32) -> bool {
        self.adjacency[self.adjacency_start[a] as usize..self.adjacency_start[a + 1] as usize]
            .binary_search(&b)
            .is_ok()
    }

    /// Makes sure the candidate pairs and faces hold every contact until the next call, as
    /// one thread ([`SelfContactPass::remake_lists`] with one part): keeps the last lists while
    /// no particle has moved more than their margin allows, else lists anew from the `n`
    /// particles' current positions. `rest` are the rest positions, `triangles` the faces
    /// (corners below `n`), `travel` the farthest a particle can move until the next call (m).
    #[cfg(test)]
    fn prepare(
        &mut self,
        n: usize,
        position: impl Fn(usize) -> Vec3,
        rest: &[Vec3],
        triangles: &[[u32; 3]],
        settings: SelfContactSettings,
        travel: f32,
    ) {
        let settings = SelfContactSettings { travel, ..settings };
        SelfContactPass::new(self, 1, rest, triangles, settings).remake_lists(n, &position, 0, 1, &|| {});
    }

    /// The candidate pairs, in projection order.
    #[cfg(test)]
    fn pairs(&self) -> Vec<Pair> {
        self.shares.0.iter().flat_map(|s| locked(s).pairs.clone()).collect()
    }

    /// The candidate faces, in projection order.
    #[cfg(test)]
    fn faces(&self) -> Vec<Face> {
        self.shares.0.iter().flat_map(|s| locked(s).faces.clone()).collect()
    }

    /// The candidate edge pairs, in projection order.
    #[cfg(test)]
    fn edge_pairs(&self) -> Vec<EdgePair> {
        self.shares.0.iter().flat_map(|s| locked(s).edges.clone()).collect()
    }

    /// Whether the lists must be made anew, and if so hashes the `n` particles at `position`
    /// for them (the first step of [`SelfContactPass::remake_lists`]). [`Self::refresh_adjacency`]
    /// must have run for the current topology.
    ///
    /// A list made with margin M (every pair closer than d_min + 2M) stays complete while
    /// every particle's displacement since then plus `travel` (the farthest a particle can
    /// move until the next check, m) is at most M: two particles farther apart than that moved
    /// at most 2M toward each other. Lists are made with M = travel + [`SKIN`] · thickness,
    /// so a cloth at rest keeps its list.
    fn begin(&mut self, n: usize, position: impl Fn(usize) -> Vec3, settings: SelfContactSettings, travel: f32) -> bool {
        debug_assert_eq!(self.adjacency_start.len(), n + 1, "adjacency of the current topology");
        let listed_for = self
            .adjacency_key
            .map(|key| (key, settings.thickness.to_bits(), settings.vertex_triangle, settings.edge_edge));
        if listed_for.is_some() && self.listed_for == listed_for && self.listed_at.len() == n {
            let moved = (0..n)
                .map(&position)
                .zip(&self.listed_at)
                .map(|(p, q)| p.distance_squared(*q))
                .fold(0.0, f32::max);
            if moved.sqrt() + travel <= self.listed_margin {
                return false;
            }
        }
        self.listed_margin = travel + SKIN * settings.thickness;
        self.listed_at.clear();
        self.listed_at.extend((0..n).map(&position));
        self.listed_for = listed_for;
        self.points.clone_from(&self.listed_at);
        self.hash.fill(&self.points, settings.thickness + 2.0 * self.listed_margin);
        true
    }

    /// The most pairs (and, separately, faces) the lists hold.
    fn cap(&self) -> usize {
        MAX_PAIRS_PER_PARTICLE * self.points.len()
    }

    /// Part `t` of `threads` of a new list into `share`: the pairs of the `t`-th run of
    /// particles and, with faces on, the triangles of the `t`-th run of `triangles` that list
    /// faces ([`covered_by_corners`]) with the largest side of their bounding boxes.
    fn list_share(&self, share: &mut Share, t: usize, threads: usize, sources: Sources) {
        let run = |count: usize| count * t / threads..count * (t + 1) / threads;
        share.pairs.clear();
        share.faces.clear();
        share.edges.clear();
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
    /// d_min + 2M from the hash (module docs), at most [`Self::cap`].
    fn list_pairs(&self, pairs: &mut Vec<Pair>, particles: Range<usize>, rest: &[Vec3], thickness: f32) {
        let (margin, edge, cap) = (self.listed_margin, self.hash.edge, self.cap());
        'particles: for i in particles {
            let p = self.points[i];
            let c = self.hash.cell(p);
            // The cell itself (later particles only) and the 13 cells of the half stencil
            // ahead of it: every pair of neighbouring cells is looked at once.
            for offset in HALF_STENCIL {
                for j in self.hash.in_cell(c + offset) {
                    if offset == IVec3::ZERO && j as usize <= i {
                        continue;
                    }
                    let distance2 = p.distance_squared(self.points[j as usize]);
                    if distance2 >= edge * edge {
                        continue;
                    }
                    let min_distance = self.contact_distance(thickness, i, j, || rest[i].distance(rest[j as usize]));
                    let reach = min_distance + 2.0 * margin;
                    if min_distance > 0.0 && distance2 < reach * reach && !self.adjacent(i, j) {
                        pairs.push(Pair {
                            a: i as u32,
                            b: j,
                            min_distance,
                        });
                        if pairs.len() == cap {
                            break 'particles;
                        }
                    }
                }
            }
        }
    }

    /// Hashes the particles again for the faces, with cells of edge `extent` (the largest
    /// bounding-box side of a triangle that lists faces, m, `None` when there is none) plus
    /// twice the pairs' cell edge (the largest reach).
    fn fill_face_hash(&mut self, extent: Option<f32>) {
        if let Some(extent) = extent {
            self.face_hash.fill(&self.points, extent + 2.0 * self.hash.edge);
        }
    }

    /// Lists into `share` every (particle, triangle of `share.coarse`) closer than its reach
    /// d_min + 2M (module docs): each triangle tests the particles in the at most 2 × 2 × 2
    /// cells of the face hash its bounding box grown by the reach covers that lie within reach
    /// of the box, skipping its corners and the particles joined to them. At most
    /// [`Self::cap`].
    fn list_faces(&self, share: &mut Share, rest: &[Vec3], thickness: f32) {
        let (margin, reach, cap, points) = (self.listed_margin, self.hash.edge, self.cap(), &self.points);
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

/// The bounding box (lowest, highest corner) of a triangle.
fn bounds([a, b, c]: [Vec3; 3]) -> (Vec3, Vec3) {
    (a.min(b).min(c), a.max(b).max(c))
}

/// Cuts the lists held by `shares` (in order) to their first `cap` pairs, faces and edge
/// pairs, as one thread listing them in order would have stopped.
fn truncate_to_cap<S: DerefMut<Target = Share>>(shares: impl IntoIterator<Item = S>, cap: usize) {
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

/// Whether triangle `abc`'s circumradius R = |ab| |bc| |ca| / (2 |ab × ac|) is below `d`: no
/// point of the triangle is then d or more from its nearest corner, so a particle kept d from
/// the corners by the pairs cannot cross it (module docs).
fn covered_by_corners([a, b, c]: [Vec3; 3], d: f32) -> bool {
    let area2 = (b - a).cross(c - a).length_squared();
    (b - a).length_squared() * (c - b).length_squared() * (a - c).length_squared() < 4.0 * d * d * area2
}

/// The point of triangle `abc` closest to `p` (Ericson, *Real-Time Collision Detection*
/// §5.1.5: the vertex, edge or face region `p` projects into).
fn closest_point(p: Vec3, [a, b, c]: [Vec3; 3]) -> Vec3 {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 >= d3 && d5 >= d6 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let scale = 1.0 / (va + vb + vc);
    a + ab * (vb * scale) + ac * (vc * scale)
}

/// Barycentric coordinates of the projection of `p` onto the plane of triangle `abc` (of
/// non-zero area), when it falls inside the triangle or on its edges.
fn barycentric_inside(p: Vec3, [a, b, c]: [Vec3; 3]) -> Option<[f32; 3]> {
    let (e0, e1, d) = (b - a, c - a, p - a);
    let (d00, d01, d11) = (e0.dot(e0), e0.dot(e1), e1.dot(e1));
    let (d20, d21) = (d.dot(e0), d.dot(e1));
    let det = d00 * d11 - d01 * d01;
    let v = (d11 * d20 - d01 * d21) / det;
    let w = (d00 * d21 - d01 * d20) / det;
    let u = 1.0 - v - w;
    (u >= 0.0 && v >= 0.0 && w >= 0.0).then_some([u, v, w])
}

/// The cell itself and the 13 of its 26 neighbours with (z, y, x) lexicographically ahead of
/// it: with the mirror offsets of the other 13 they cover each neighbouring pair once.
const HALF_STENCIL: [IVec3; 14] = [
    IVec3::new(0, 0, 0),
    IVec3::new(1, 0, 0),
    IVec3::new(-1, 1, 0),
    IVec3::new(0, 1, 0),
    IVec3::new(1, 1, 0),
    IVec3::new(-1, -1, 1),
    IVec3::new(0, -1, 1),
    IVec3::new(1, -1, 1),
    IVec3::new(-1, 0, 1),
    IVec3::new(0, 0, 1),
    IVec3::new(1, 0, 1),
    IVec3::new(-1, 1, 1),
    IVec3::new(0, 1, 1),
    IVec3::new(1, 1, 1),
];

/// The self-contact pass of one frame, run by every thread of the frame between barriers.
#[derive(Debug)]
pub(crate) struct SelfContactPass<'a> {
    /// The hashes, the adjacency and the lists: written by thread 0 while the others wait,
    /// read by all (each thread t writing its share t of the lists).
    contacts: RwLock<&'a mut SelfContacts>,
    /// Whether this substep's check remakes the lists (set by thread 0).
    remake: AtomicBool,
    sources: Sources<'a>,
}

impl<'a> SelfContactPass<'a> {
    /// The pass over `contacts` for a frame on up to `threads` threads, with the rest
    /// positions `rest` (m), the cloth's `triangles` and `settings`.
    pub fn new(
        contacts: &'a mut SelfContacts,
        threads: usize,
        rest: &'a [Vec3],
        triangles: &'a [[u32; 3]],
        settings: SelfContactSettings,
    ) -> Self {
        let shares = &mut contacts.shares.0;
        if shares.len() < threads {
            shares.resize_with(threads, Mutex::default);
        }
        Self {
            contacts: RwLock::new(contacts),
            remake: AtomicBool::new(false),
            sources: Sources { rest, triangles, settings },
        }
    }

    /// The hashes, adjacency and lists, to read.
    fn contacts(&self) -> RwLockReadGuard<'_, &'a mut SelfContacts> {
        self.contacts.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The hashes, adjacency and lists, to write (thread 0, while the others wait).
    fn contacts_mut(&self) -> RwLockWriteGuard<'_, &'a mut SelfContacts> {
        self.contacts.write().unwrap_or_else(|e| e.into_inner())
    }

    /// One sweep's self-contacts on the `n` particles, as thread `t` of `threads` (the pair
    /// `(t, threads)`): on a
    /// substep's first sweep (`first`) the candidate lists are checked and remade by all the
    /// threads if a particle left their margin ([`Self::remake_lists`]); then thread 0
    /// projects every pair and then every face once (module docs) and counts those in contact
    /// into [`SelfContacts::active`].
    ///
    /// # Safety
    /// Every thread of the frame calls this with the same `first` and `n` and `sync` a
    /// barrier of them all; `n` particles are in bounds of `pos` and `prev`, and nothing
    /// else touches them during the call.
    pub unsafe fn run(&self, pos: PosPtr, prev: VecPtr, n: usize, first: bool, (t, threads): (usize, usize), sync: &dyn Fn()) {
        if first {
            // SAFETY: the particles are in bounds and unshared (# Safety); only thread 0 reads
            // them in `remake_lists`, before its first `sync`, and writes them after its last.
            let position = |i| unsafe { xyz(pos.get(i)) };
            self.remake_lists(n, &position, t, threads, sync);
        }
        if t == 0 {
            let (mu, thickness) = (self.sources.settings.friction, self.sources.settings.thickness);
            let mut contacts = self.contacts_mut();
            let shares = &mut contacts.shares.0;
            // SAFETY: the lists index particles below `n` (made from them); as above.
            let active = unsafe {
                shares.iter_mut().map(|s| project(&unpoisoned(s).pairs, mu, pos, prev)).sum::<u32>()
                    + shares
                        .iter_mut()
                        .map(|s| project_faces(&unpoisoned(s).faces, mu, pos, prev))
                        .sum::<u32>()
                    + shares
                        .iter_mut()
                        .map(|s| project_edges(&unpoisoned(s).edges, thickness, mu, pos, prev))
                        .sum::<u32>()
            };
            contacts.active = active;
        }
    }

    /// The lists' check and, when it fails, their remaking by thread `t` of `threads` (every
    /// thread calls this; `sync` is a barrier of them all; `position` is read by thread 0
    /// only, before its first `sync`): thread 0 checks the lists and hashes the particles
    /// ([`SelfContacts::begin`]); sync; each thread lists the pairs of its run of particles
    /// and finds the triangles of its run that list faces into its share; with faces on: sync;
    /// thread 0 hashes the particles for the faces at the largest triangle's size; sync; each
    /// thread lists the faces of its triangles; sync; thread 0 cuts the lists at the cap. The
    /// shares in order hold exactly the lists one thread makes, in its order, so every
    /// thread count gives the same lists.
    fn remake_lists(&self, n: usize, position: &dyn Fn(usize) -> Vec3, t: usize, threads: usize, sync: &dyn Fn()) {
        let Sources { rest, settings, .. } = self.sources;
        if t == 0 {
            let mut contacts = self.contacts_mut();
            let remake = contacts.begin(n, position, settings, settings.travel);
            if remake && settings.edge_edge {
                let key = contacts.adjacency_key.expect("adjacency of the current topology");
                let contacts = &mut **contacts;
                contacts.mesh_edges.refresh(key, n, self.sources.triangles);
                contacts.mesh_edges.measure(&contacts.points);
            }
            self.remake.store(remake, Ordering::Relaxed);
        }
        sync();
        if !self.remake.load(Ordering::Relaxed) {
            return;
        }
        {
            let contacts = self.contacts();
            contacts.list_share(&mut locked(&contacts.shares.0[t]), t, threads, self.sources);
        }
        if settings.vertex_triangle {
            sync();
            if t == 0 {
                let mut contacts = self.contacts_mut();
                let extent = contacts.shares.0[..threads]
                    .iter_mut()
                    .filter_map(|s| unpoisoned(s).extent)
                    .reduce(f32::max);
                contacts.fill_face_hash(extent);
            }
            sync();
            let contacts = self.contacts();
            contacts.list_faces(&mut locked(&contacts.shares.0[t]), rest, settings.thickness);
        }
        if settings.edge_edge {
            let contacts = self.contacts();
            contacts.list_edges(
                &mut locked(&contacts.shares.0[t]),
                rest,
                settings.thickness,
                settings.vertex_triangle,
            );
        }
        sync();
        if t == 0 {
            let mut contacts = self.contacts_mut();
            let cap = contacts.cap();
            let shares = &mut contacts.shares.0;
            for share in &mut shares[threads..] {
                let share = unpoisoned(share);
                share.pairs.clear();
                share.faces.clear();
                share.edges.clear();
            }
            merge_sorted(&mut shares[..threads].iter_mut().map(|s| &mut unpoisoned(s).edges).collect::<Vec<_>>());
            truncate_to_cap(shares.iter_mut().map(unpoisoned), cap);
        }
    }
}

/// The lists' shares, one per part of the last list, each behind a lock so that every thread
/// writes its own while all read the hashes.
#[derive(Debug, Default)]
struct Shares(Vec<Mutex<Share>>);

impl Clone for Shares {
    fn clone(&self) -> Self {
        Self(self.0.iter().map(|s| Mutex::new(locked(s).clone())).collect())
    }
}

/// A share of the lists, locked by the thread that writes it.
fn locked(share: &Mutex<Share>) -> MutexGuard<'_, Share> {
    share.lock().unwrap_or_else(|e| e.into_inner())
}

/// A share of the lists, held exclusively.
fn unpoisoned(share: &mut Mutex<Share>) -> &mut Share {
    share.get_mut().unwrap_or_else(|e| e.into_inner())
}

/// Projects every pair once (module docs); returns how many were in contact.
///
/// # Safety
/// Every pair's particles are in bounds of `pos` and `prev`, and no other thread touches the
/// particles during the call.
unsafe fn project(pairs: &[Pair], mu: f32, pos: PosPtr, prev: VecPtr) -> u32 {
    let mut active = 0;
    for pair in pairs {
        let (ia, ib) = (pair.a as usize, pair.b as usize);
        // SAFETY: the caller guarantees the pair in bounds and unshared (see # Safety).
        unsafe {
            let (a, b) = (pos.get(ia), pos.get(ib));
            let weights = a[3] + b[3];
            let d = xyz(a) - xyz(b);
            let distance2 = d.length_squared();
            if distance2 >= pair.min_distance * pair.min_distance || distance2 == 0.0 || weights <= 0.0 {
                continue;
            }
            active += 1;
            let distance = distance2.sqrt();
            let n = d / distance;
            let depth = pair.min_distance - distance;
            let (ka, kb) = (a[3] / weights, b[3] / weights);
            let (xa, xb) = (xyz(a) + n * (depth * ka), xyz(b) - n * (depth * kb));
            let relative = (xa - prev.get(ia)) - (xb - prev.get(ib));
            let tangential = relative - n * relative.dot(n);
            let slip = tangential.length();
            let cancel = if slip > 0.0 {
                tangential * (mu * depth / slip).min(1.0)
            } else {
                Vec3::ZERO
            };
            pos.shift(ia, a, (xa - cancel * ka - xyz(a)).to_array());
            pos.shift(ib, b, (xb + cancel * kb - xyz(b)).to_array());
        }
    }
    active
}

/// The correction of a contact with unit `normal`, penetration `depth` (m) and slip `slide`
/// (m) of its two sides since the substep's start, per unit of inverse mass over the
/// contact's generalized inverse mass `weight`: (depth n − f Δx_t) / W, with Δx_t the slip's
/// tangential part and f = min(1, μ depth / |Δx_t|) (positional Coulomb friction, μ = `mu`).
fn contact_push(normal: Vec3, depth: f32, slide: Vec3, mu: f32, weight: f32) -> Vec3 {
    let tangential = slide - normal * slide.dot(normal);
    let length = tangential.length();
    let cancel = if length > 0.0 {
        tangential * (mu * depth / length).min(1.0)
    } else {
        Vec3::ZERO
    };
    (normal * depth - cancel) / weight
}

/// Projects every vertex–triangle candidate once (module docs); returns how many were in
/// contact.
///
/// # Safety
/// Every face's particles are in bounds of `pos` and `prev`, and no other thread touches the
/// particles during the call.
unsafe fn project_faces(faces: &[Face], mu: f32, pos: PosPtr, prev: VecPtr) -> u32 {
    let mut active = 0;
    for face in faces {
        let (ip, corners) = (face.particle as usize, face.triangle.map(|v| v as usize));
        // SAFETY: the caller guarantees the face in bounds and unshared (see # Safety).
        unsafe {
            let (p, v) = (pos.get(ip), corners.map(|i| pos.get(i)));
            let x = v.map(xyz);
            let Some(n) = (x[1] - x[0]).cross(x[2] - x[0]).try_normalize() else {
                continue;
            };
            let Some(b) = barycentric_inside(xyz(p), x) else {
                continue;
            };
            let (p_start, x_start) = (prev.get(ip), corners.map(|i| prev.get(i)));
            let before = (p_start - x_start[0]).dot((x_start[1] - x_start[0]).cross(x_start[2] - x_start[0]));
            let now = (xyz(p) - x[0]).dot(n);
            let n = if before > 0.0 || (before == 0.0 && now >= 0.0) { n } else { -n };
            let depth = face.min_distance - (xyz(p) - x[0]).dot(n);
            let weight = p[3] + (0..3).map(|k| b[k] * b[k] * v[k][3]).sum::<f32>();
            if depth <= 0.0 || weight <= 0.0 {
                continue;
            }
            active += 1;
            let slide = (xyz(p) - p_start) - (0..3).map(|k| (x[k] - x_start[k]) * b[k]).sum::<Vec3>();
            let push = contact_push(n, depth, slide, mu, weight);
            pos.shift(ip, p, (push * p[3]).to_array());
            for k in 0..3 {
                pos.shift(corners[k], v[k], (push * -(b[k] * v[k][3])).to_array());
            }
        }
    }
    active
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::particles::Particles;

    fn particles(points: &[(Vec3, f32)]) -> Particles {
        let mut p = Particles::default();
        for &(x, w) in points {
            p.push(x, w, Vec3::ZERO, 1.0, 0.0, w == 0.0);
        }
        p
    }

    const SETTINGS: SelfContactSettings = SelfContactSettings {
        thickness: 0.01,
        friction: 0.0,
        travel: 0.0,
        vertex_triangle: true,
        edge_edge: true,
    };

    /// Pairs are found within their reach and nowhere else, whatever cells they fall in;
    /// constraint neighbours are left out; the rest distance caps the contact distance.
    #[test]
    fn pairs_are_listed_within_reach_only() {
        let points = [
            (Vec3::new(0.0, 0.0, 0.0), 1.0),
            (Vec3::new(0.0, 0.016, 0.0), 1.0),   // within 0.01 + 2 (0.002 + 0.0025) of 0
            (Vec3::new(0.0, -0.021, 0.0), 1.0),  // beyond every reach of 0
            (Vec3::new(0.0, 0.016, 0.004), 1.0), // adjacent to 1 by an edge
            (Vec3::new(0.009, 0.0, 0.0), 0.0),   // fixed, near fixed 5
            (Vec3::new(0.009, 0.0, 0.005), 0.0), // fixed
        ];
        let p = particles(&points);
        let mut rest: Vec<Vec3> = points.iter().map(|q| q.0 * 10.0).collect();
        rest[3] = rest[1] + Vec3::new(0.0, 0.0, 0.002);
        let mut contacts = SelfContacts::default();
        contacts.refresh_adjacency((0, points.len(), 1), || [(1u32, 3u32)].into_iter());
        let travel = 0.002;
        contacts.prepare(p.len(), |i| p.position(i), &rest, &[], SETTINGS, travel);
        let listed: Vec<(u32, u32)> = contacts.pairs().iter().map(|q| (q.a.min(q.b), q.a.max(q.b))).collect();
        let margin = travel + SKIN * SETTINGS.thickness;
        let mut expected = Vec::new();
        for i in 0..points.len() {
            for j in i + 1..points.len() {
                let min = SETTINGS.thickness.min(rest[i].distance(rest[j]));
                if points[i].0.distance(points[j].0) < min + 2.0 * margin && (i, j) != (1, 3) {
                    expected.push((i as u32, j as u32));
                }
            }
        }
        let mut sorted = listed.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, expected);
        assert!(expected.contains(&(0, 1)) && expected.contains(&(4, 5)) && !expected.contains(&(0, 2)));
    }

    /// Particle 0 (free) at the origin and particle 1 at `second` with inverse mass `w`, far
    /// apart at rest, listed with no travel.
    fn two_particles(second: Vec3, w: f32) -> (Particles, SelfContacts, [Vec3; 2]) {
        let p = particles(&[(Vec3::ZERO, 1.0), (second, w)]);
        let rest = [Vec3::ZERO, Vec3::new(1.0, 0.0, 0.0)];
        let mut contacts = SelfContacts::default();
        contacts.refresh_adjacency((0, 2, 0), std::iter::empty);
        contacts.prepare(2, |i| p.position(i), &rest, &[], SETTINGS, 0.0);
        (p, contacts, rest)
    }

    /// A list is kept while the particles stay within its margin and made anew when one moves
    /// beyond it.
    #[test]
    fn a_list_is_kept_until_a_particle_leaves_its_margin() {
        let (mut p, mut contacts, rest) = two_particles(Vec3::new(0.0, 0.05, 0.0), 1.0);
        assert!(contacts.pairs().is_empty());
        // Within the margin (0.25 × 1 cm): the stale, empty list stays.
        p.set_position(1, Vec3::new(0.0, 0.048, 0.0));
        contacts.prepare(2, |i| p.position(i), &rest, &[], SETTINGS, 0.0);
        assert!(contacts.pairs().is_empty());
        // Beyond it the pair is found.
        p.set_position(1, Vec3::new(0.0, 0.012, 0.0));
        contacts.prepare(2, |i| p.position(i), &rest, &[], SETTINGS, 0.0);
        assert_eq!(contacts.pairs().len(), 1);
    }

    /// Friction between layers is positional Coulomb: a free particle pressed 4 mm into a
    /// fixed one while sliding 1 mm sideways in the substep sticks when μ d exceeds the slide
    /// (μ = 1) and loses μ d of it otherwise (μ = 0.1).
    #[test]
    fn friction_between_layers_sticks_or_slides_by_mu_times_the_depth() {
        for (mu, expected_x) in [(1.0, 0.0), (0.1, 0.001 - 0.1 * 0.004)] {
            let (mut p, contacts, _) = two_particles(Vec3::new(0.001, 0.006, 0.0), 0.0);
            p.set_position(0, Vec3::new(0.001, 0.0, 0.0));
            // SAFETY: both particles exist; one thread.
            unsafe { project(&contacts.pairs(), mu, p.pos.raw(), p.prev.raw()) };
            let x = p.position(0);
            assert!((x.x - expected_x).abs() < 1e-7 && (x.y + 0.004).abs() < 1e-7, "μ = {mu}: {x}");
        }
    }

    /// Two free particles closer than the thickness end exactly the thickness apart, mass
    /// weighted, their centre of mass unmoved; a pair farther apart is untouched.
    #[test]
    fn a_pair_is_pushed_to_the_thickness_conserving_momentum() {
        let (mut p, contacts, _) = two_particles(Vec3::new(0.0, 0.004, 0.0), 3.0);
        assert_eq!(contacts.pairs().len(), 1);
        let centre = |p: &Particles| (p.position(0) / 1.0 + p.position(1) / 3.0) / (1.0 + 1.0 / 3.0);
        let before = centre(&p);
        let prev = p.prev.raw();
        // SAFETY: both particles exist; one thread.
        let active = unsafe { project(&contacts.pairs(), 0.0, p.pos.raw(), prev) };
        let gap = p.position(0).distance(p.position(1));
        assert!((gap - SETTINGS.thickness).abs() < 1e-7, "{gap}");
        assert!(centre(&p).distance(before) < 1e-8);
        assert_eq!(active, 1);
        let moved = p.position(1);
        // SAFETY: as above.
        unsafe { project(&contacts.pairs(), 0.0, p.pos.raw(), p.prev.raw()) };
        assert!(p.position(1).distance(moved) < 1e-8);
    }

    /// A crowd of particles far closer than the thickness lists at most
    /// [`MAX_PAIRS_PER_PARTICLE`] pairs per particle.
    #[test]
    fn a_crowd_lists_at_most_the_cap() {
        let points: Vec<(Vec3, f32)> = (0..400)
            .map(|i| (Vec3::new((i % 20) as f32, (i / 20) as f32, 0.0) * 1e-4, 1.0))
            .collect();
        let p = particles(&points);
        let rest: Vec<Vec3> = points.iter().map(|q| q.0 * 1e4).collect();
        let mut contacts = SelfContacts::default();
        contacts.refresh_adjacency((0, points.len(), 0), std::iter::empty);
        contacts.prepare(points.len(), |i| p.position(i), &rest, &[], SETTINGS, 0.0);
        assert_eq!(contacts.pairs().len(), MAX_PAIRS_PER_PARTICLE * points.len());
    }

    /// The triangle (0, 0, 0), (3 cm, 0, 0), (0, 0, 3 cm) in the ground plane with corner
    /// inverse mass `w`, a particle 3 (inverse mass 1) at `start` moved to `now`, and its face
    /// contact at the thickness.
    fn over_a_triangle(w: f32, start: Vec3, now: Vec3) -> (Particles, Vec<Face>) {
        let mut p = particles(&[
            (Vec3::ZERO, w),
            (Vec3::new(0.03, 0.0, 0.0), w),
            (Vec3::new(0.0, 0.0, 0.03), w),
            (start, 1.0),
        ]);
        p.set_position(3, now);
        let face = Face {
            particle: 3,
            triangle: [0, 1, 2],
            min_distance: SETTINGS.thickness,
        };
        (p, vec![face])
    }

    /// A particle 4 mm above the centroid of a free triangle of equal masses (b_k = 1/3,
    /// W = 1 + 3/9): it rises by 6 mm / W = 4.5 mm and every corner sinks 1.5 mm, so it ends
    /// exactly the thickness above the face, the centre of mass unmoved.
    #[test]
    fn a_particle_over_a_face_is_pushed_to_the_thickness_conserving_momentum() {
        let centroid = Vec3::new(0.01, 0.0, 0.01);
        let (mut p, faces) = over_a_triangle(1.0, centroid + Vec3::Y * 0.004, centroid + Vec3::Y * 0.004);
        let centre = |p: &Particles| (0..4).map(|i| p.position(i)).sum::<Vec3>() / 4.0;
        let before = centre(&p);
        // SAFETY: the four particles exist; one thread.
        let active = unsafe { project_faces(&faces, 0.0, p.pos.raw(), p.prev.raw()) };
        assert_eq!(active, 1);
        assert!((p.position(3).y - 0.0085).abs() < 1e-8, "{}", p.position(3));
        for k in 0..3 {
            assert!((p.position(k).y + 0.0015).abs() < 1e-8, "{}", p.position(k));
        }
        assert!(centre(&p).distance(before) < 1e-8);
    }

    /// The side is the one the particle started the substep on: a particle that crossed a
    /// fixed face from 2 mm below to 3 mm above within the substep is put back 1 cm below,
    /// and one that started above at the same place is kept 1 cm above; a particle whose
    /// projection misses the face is left alone.
    #[test]
    fn a_particle_that_crossed_a_face_is_put_back_on_its_side() {
        let at = |y: f32| Vec3::new(0.01, y, 0.01);
        for (start, expected) in [(-0.002, -0.01), (0.005, 0.01)] {
            let (mut p, faces) = over_a_triangle(0.0, at(start), at(0.003));
            // SAFETY: the four particles exist; one thread.
            unsafe { project_faces(&faces, 0.0, p.pos.raw(), p.prev.raw()) };
            assert!(p.position(3).distance(at(expected)) < 1e-8, "from {start}: {}", p.position(3));
        }
        let outside = Vec3::new(0.02, 0.003, 0.02);
        let (mut p, faces) = over_a_triangle(0.0, outside, outside);
        // SAFETY: as above.
        assert_eq!(unsafe { project_faces(&faces, 0.0, p.pos.raw(), p.prev.raw()) }, 0);
        assert_eq!(p.position(3), outside);
    }

    /// Friction against a face is positional Coulomb as between particles: a particle pressed
    /// 4 mm into a fixed face while sliding 1 mm along it sticks at μ = 1 and loses μ d of
    /// the slide at μ = 0.1.
    #[test]
    fn friction_on_a_face_sticks_or_slides_by_mu_times_the_depth() {
        for (mu, expected_x) in [(1.0, 0.01), (0.1, 0.011 - 0.1 * 0.004)] {
            let (mut p, faces) = over_a_triangle(0.0, Vec3::new(0.01, 0.006, 0.01), Vec3::new(0.011, 0.006, 0.01));
            // SAFETY: the four particles exist; one thread.
            unsafe { project_faces(&faces, mu, p.pos.raw(), p.prev.raw()) };
            let x = p.position(3);
            assert!((x.x - expected_x).abs() < 1e-7 && (x.y - 0.01).abs() < 1e-7, "μ = {mu}: {x}");
        }
    }

    /// Faces are listed for particles within reach of the triangle (not of its corners) and
    /// nowhere else; a corner, a particle joined to a corner and a far particle are not; the
    /// rest distance caps the contact distance within a piece and not across pieces; with
    /// faces off nothing is listed.
    #[test]
    fn faces_are_listed_within_reach_only() {
        let points = [
            (Vec3::ZERO, 1.0),
            (Vec3::new(0.06, 0.0, 0.0), 1.0),
            (Vec3::new(0.0, 0.0, 0.06), 1.0),
            (Vec3::new(0.02, 0.012, 0.02), 1.0),  // 12 mm over the face, 31 mm from corner 0
            (Vec3::new(0.02, 0.03, 0.02), 1.0),   // beyond the reach 0.01 + 2 × 0.0025
            (Vec3::new(0.02, -0.005, 0.02), 1.0), // joined to corner 0
            (Vec3::new(0.02, 0.004, 0.01), 1.0),  // 4 mm over the face, 3.5 mm from it at rest
        ];
        let p = particles(&points);
        let mut rest: Vec<Vec3> = points.iter().map(|q| q.0 + Vec3::Y).collect();
        rest[6].y -= 0.0005;
        let sheet = [(0u32, 1u32), (1, 2), (2, 0), (0, 5)];
        // Particle 6 in the triangle's piece (joined through 5, not to a corner), then apart.
        for (joined, key, expected) in [(true, 1, 0.0035), (false, 2, SETTINGS.thickness)] {
            let edges = sheet.into_iter().chain(joined.then_some((5, 6)));
            let mut contacts = SelfContacts::default();
            contacts.refresh_adjacency((key, points.len(), 4 + joined as usize), || edges.clone());
            contacts.prepare(p.len(), |i| p.position(i), &rest, &[[0, 1, 2]], SETTINGS, 0.0);
            let mut listed: Vec<(u32, f32)> = contacts.faces().iter().map(|f| (f.particle, f.min_distance)).collect();
            listed.sort_by_key(|f| f.0);
            assert_eq!(listed.iter().map(|f| f.0).collect::<Vec<_>>(), [3, 6]);
            assert!(
                listed[0].1 == SETTINGS.thickness && (listed[1].1 - expected).abs() < 1e-6,
                "{listed:?}"
            );
            let off = SelfContactSettings {
                vertex_triangle: false,
                ..SETTINGS
            };
            contacts.prepare(p.len(), |i| p.position(i), &rest, &[[0, 1, 2]], off, 0.0);
            assert!(contacts.faces().is_empty());
        }
    }

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
}
