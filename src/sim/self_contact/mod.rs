//! Self-contact: particle–particle contacts between parts of one cloth (docs/physics.md §4,
//! "Self-contact"), after Ten Minute Physics 15 (TMP 15, Matthias Müller's tutorial on cloth
//! self-collision with a spatial hash).
//!
//! # Detection, checked every substep
//! A candidate list holds every pair closer than its reach d_min + 2M, with d_min the pair's
//! contact distance below and M the list's margin. It is made from the particles sorted by
//! cell (cells of edge thickness + 2M, ordered by (z, y, x) so a row of cells is one run of
//! memory: [`cells`]). Two particles farther apart than their reach cannot come
//! closer than d_min while neither has moved more than M, nor when both moved by a common
//! shift s plus at most M each; so the list stays complete as long as every particle's
//! displacement since it was made, less s (the centre of the displacements' bounding box),
//! plus u, how far it can move from the check to the last projection before the next check,
//! is at most M (a Verlet list; each displacement is measured when half the box's diagonal
//! alone does not settle it). Thread 0 checks that on the first sweep of every substep,
//! after the substep's prediction and constraint phases, so u only bounds the corrections
//! that follow within the substep (the contacts' own pushes, tethers, colliders, further
//! sweeps): u = h · min(v_clamp, max_i |v_i| + |g| Δt), as much as a prediction (the speeds
//! at the frame's start); the next prediction is seen by the next check. It remakes the list
//! with M = u + [`SKIN`] · thickness when the check fails: a cloth at rest or falling as a
//! whole keeps its list, one whose parts move against each other (landing, folding) remakes
//! it about every substep, each time with a reach of a few substeps' travel rather than a
//! frame's.
//!
//! Pairs joined by a live distance constraint (edges, shear diagonals, bend edges) are left
//! out; pairs of two fixed particles are listed (pins change between frames) and skipped by
//! the projection. The cell edge is the largest reach, so a pair lies in the same or
//! neighbouring cells: each particle looks at its own cell and the 13 neighbours ahead of it
//! (a half stencil, so each pair is met once), five runs of consecutive entries whose
//! distances and reaches are tested in SIMD lanes. A new topology (tearing, cutting: new
//! particles, removed edges) or thickness remakes the list at once.
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
//! between p and the point q of the face, and conserves momentum (Σ b_k = 1). Beside the face
//! (the triangle's closest point q to p on an edge or a corner, barycentric b_k ≥ 0 with one
//! or two of them 0) and on the side p came from, the contact is C = |p − q| − d_min ≥ 0 with
//! the normal (p − q)/|p − q| in place of s n and the same update: a particle on a fold's
//! ridge, over neither of the two faces that meet there, is held by their shared edge instead
//! of sinking between them until it is over a face again and popped back out (the flicker
//! kept a pile buzzing). Beside the face on the far side of its plane the particle crossed
//! elsewhere, not through this face: no contact; farther than d_min beside the face, no
//! contact either, known before the normal and the side are computed. Faces whose area is
//! zero are skipped. The faces are found through a second hash of the particles with
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
//! ([`SelfContactPass::remake_lists`]). Thread 0 checks the lists and sorts the particles by
//! cell; each of the T threads then lists the pairs of its run of particles (n t / T up to n (t + 1) / T)
//! and the faces of its run of triangles into its own share of the lists, and the shares are
//! kept in part order: read share after share, they are exactly the one-thread lists (pairs
//! in particle order, faces in triangle order) in the same order, and cut at the same cap.
//! Edge pairs are listed per share and merged in sorted order by thread 0.
//!
//! The projection runs on every thread too ([`slabs`]): when the lists are made, thread 0
//! cuts space into slabs as wide as the largest reach (of the faces' hash, when faces are
//! listed) across the longest side of the particles' bounding box, and each thread sorts its
//! share by slab (a contact's key is the lower slab of its particles when they lie in two
//! neighbouring slabs, else a remainder key). Contacts keyed three slabs apart share no
//! particle, so every sweep projects the slabs in three colours (key mod 3), each colour's
//! slabs shared among the threads by their numbers of contacts, with a barrier after each
//! colour; thread 0 then projects the remainder. Within a slab the contacts keep the one-thread
//! list's order (pairs, then faces, then edge pairs, share after share), and a slab is
//! projected whole by one thread, so every thread count gives the same result, bit for bit.
//! The order is no longer the list's (slab by slab instead of particle by particle), which a
//! pile's chaotic outcome shows; each contact is still projected once a sweep, Gauss–Seidel.
//!
//! # Where the parts live
//! [`cells`]: the particles sorted by cell, the pairs are listed from. [`hash`]: the spatial
//! hash the faces are listed from. [`lists`]: the state kept between frames (adjacency,
//! cells and hash, the last lists) and the listing of pairs and faces into the
//! threads' shares. [`projection`]: the pairs' and faces' projection. [`geometry`]: closest
//! point, barycentric coordinates and bounding box of a triangle. [`edges`]: the edge–edge
//! contacts, listing and projection. [`slabs`]: the slabs, colours and sort that let every
//! thread project. This module: the settings and the pass the frame runs.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use glam::Vec3;

use super::particles::{xyz, PosPtr, VecPtr};

mod cells;
mod edges;
pub(crate) mod geometry;
mod hash;
mod lists;
mod projection;
mod slabs;
#[cfg(test)]
mod tests;

use edges::{merge_sorted, project_edges};
pub(crate) use lists::SelfContacts;
use lists::{locked, read, truncate_to_cap, unpoisoned, Share, Sources};
use projection::{project_faces, project_pairs};
use slabs::{run_of, slabs_of_thread};

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
    /// How far a particle can move from a substep's check of the candidate list to the
    /// substep's last projection of the contacts (m), set per frame by the cloth.
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

/// The self-contact pass of one frame, run by every thread of the frame between barriers.
#[derive(Debug)]
pub(crate) struct SelfContactPass<'a> {
    /// The hashes, the adjacency and the lists: written by thread 0 while the others wait,
    /// read by all (each thread t writing its share t of the lists).
    contacts: RwLock<&'a mut SelfContacts>,
    /// Whether this substep's check remakes the lists (set by thread 0).
    remake: AtomicBool,
    /// Contacts the threads found in contact in this sweep's three colours of slabs.
    active: AtomicU32,
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
            shares.resize_with(threads, RwLock::default);
        }
        Self {
            contacts: RwLock::new(contacts),
            remake: AtomicBool::new(false),
            active: AtomicU32::new(0),
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
    /// `(t, threads)`): on a substep's first sweep (`first`) the candidate lists are checked
    /// and remade by all the threads if a particle left their margin ([`Self::remake_lists`]);
    /// then every contact is projected once (module docs): the slabs of each colour by all
    /// the threads, the remainder by thread 0, which counts those in contact into
    /// [`SelfContacts::active`].
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
            self.remake_lists(n, position, t, threads, sync);
        }
        let mut active = 0;
        for colour in 0..3 {
            // SAFETY: the lists index particles below `n` (made from them), and the slabs of a
            // colour share no particle (module `slabs`), so each thread moves its own.
            active += unsafe { self.project_colour(colour, (t, threads), pos, prev) };
            if colour == 2 {
                self.active.fetch_add(active, Ordering::Relaxed);
            }
            sync();
        }
        if t == 0 {
            let remainder_key = self.contacts().slabs.count();
            // SAFETY: as above; the other threads are past the last colour's barrier.
            let remainder = unsafe { self.project_slab(remainder_key, pos, prev) };
            let active = self.active.swap(0, Ordering::Relaxed) + remainder;
            self.contacts_mut().active = active;
        }
    }

    /// Projects the slabs of `colour` that fall to thread `t` of `threads`
    /// ([`slabs_of_thread`]); returns how many contacts were in contact.
    ///
    /// # Safety
    /// As [`Self::run`], with every thread projecting the same colour at the same time.
    unsafe fn project_colour(&self, colour: u32, (t, threads): (usize, usize), pos: PosPtr, prev: VecPtr) -> u32 {
        let contacts = self.contacts();
        let shares: Vec<_> = contacts.shares.0.iter().map(read).collect();
        slabs_of_thread(colour, contacts.slabs.sizes(), (t, threads))
            // SAFETY: as this function's # Safety.
            .map(|slab| unsafe { project_runs(&shares, slab, self.sources.settings, pos, prev) })
            .sum()
    }

    /// Projects the contacts keyed `slab` (the remainder for [`slabs::Slabs::count`]) of
    /// every share; returns how many were in contact.
    ///
    /// # Safety
    /// As [`Self::run`], with no other thread touching the slab's particles.
    unsafe fn project_slab(&self, slab: u32, pos: PosPtr, prev: VecPtr) -> u32 {
        let contacts = self.contacts();
        let shares: Vec<_> = contacts.shares.0.iter().map(read).collect();
        // SAFETY: as this function's # Safety.
        unsafe { project_runs(&shares, slab, self.sources.settings, pos, prev) }
    }

    /// The lists' check and, when it fails, their remaking by thread `t` of `threads` (every
    /// thread calls this; `sync` is a barrier of them all; `position` is read by thread 0
    /// only, before its first `sync`): thread 0 checks the lists and sorts the particles by
    /// cell ([`SelfContacts::begin`]); sync; each thread lists the pairs of its run of particles
    /// and finds the triangles of its run that list faces into its share; with faces on: sync;
    /// thread 0 hashes the particles for the faces at the largest triangle's size; sync; each
    /// thread lists the faces of its triangles; with edge pairs on: sync; thread 0 cuts the
    /// lists at the cap; sync; each thread lists the edge pairs of its pairs; sync; thread 0
    /// merges the edge pairs, cuts the lists at the cap and cuts space into slabs; sync; each thread sorts its share by slab; sync; thread 0 counts
    /// each slab's contacts (read by every sweep's projection); sync. The shares in order hold
    /// exactly the lists one thread makes, in its order, so every thread count gives the same
    /// lists.
    fn remake_lists(&self, n: usize, position: impl Fn(usize) -> Vec3, t: usize, threads: usize, sync: &dyn Fn()) {
        let Sources { rest, settings, .. } = self.sources;
        if t == 0 {
            let mut contacts = self.contacts_mut();
            let remake = contacts.begin(n, &position, rest, settings, settings.travel);
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
            // Edge pairs are listed from the particle pairs, so the pairs (and the faces, which
            // are final) past the cap go first, as one thread listing in order would have
            // stopped before them (else their edges would join the sorted edge list, and more
            // threads would list more).
            sync();
            if t == 0 {
                let mut contacts = self.contacts_mut();
                let cap = contacts.cap();
                truncate_to_cap(contacts.shares.0.iter_mut().map(unpoisoned), cap);
            }
            sync();
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
                unpoisoned(share).clear();
            }
            merge_sorted(&mut shares[..threads].iter_mut().map(|s| &mut unpoisoned(s).edges).collect::<Vec<_>>());
            truncate_to_cap(shares.iter_mut().map(unpoisoned), cap);
            let faces = shares.iter_mut().any(|s| !unpoisoned(s).faces.is_empty());
            let contacts = &mut **contacts;
            let width = if faces { contacts.face_hash_edge() } else { contacts.pair_reach() };
            contacts.slabs.cut(&contacts.points, width);
        }
        sync();
        {
            let contacts = self.contacts();
            locked(&contacts.shares.0[t]).sort_by_slab(&contacts.slabs);
        }
        sync();
        if t == 0 {
            let mut contacts = self.contacts_mut();
            let contacts = &mut **contacts;
            let shares = &mut contacts.shares.0;
            let shares: Vec<&Share> = shares.iter_mut().map(|s| &*unpoisoned(s)).collect();
            contacts.slabs.set_sizes(|slab| shares.iter().map(|s| slab_size(s, slab)).sum());
        }
        sync();
    }
}

/// How many contacts of `share` are keyed `slab`.
fn slab_size(share: &Share, slab: u32) -> u32 {
    [&share.pair_runs, &share.face_runs, &share.edge_runs]
        .into_iter()
        .map(|runs| run_of(runs, slab).len() as u32)
        .sum()
}

/// Projects the contacts keyed `slab` of every share of `shares` with `settings`: the pairs of
/// every share in order, then the faces, then the edge pairs (the one-thread list's order
/// within the slab); returns how many were in contact.
///
/// # Safety
/// The contacts index particles in bounds of `pos` and `prev`, and no other thread touches
/// them during the call.
unsafe fn project_runs(shares: &[RwLockReadGuard<'_, Share>], slab: u32, settings: SelfContactSettings, pos: PosPtr, prev: VecPtr) -> u32 {
    let (mu, thickness) = (settings.friction, settings.thickness);
    // SAFETY: as this function's # Safety.
    unsafe {
        shares
            .iter()
            .map(|s| project_pairs(&s.pairs[run_of(&s.pair_runs, slab)], mu, pos, prev))
            .sum::<u32>()
            + shares
                .iter()
                .map(|s| project_faces(&s.faces[run_of(&s.face_runs, slab)], mu, pos, prev))
                .sum::<u32>()
            + shares
                .iter()
                .map(|s| project_edges(&s.edges[run_of(&s.edge_runs, slab)], thickness, mu, pos, prev))
                .sum::<u32>()
    }
}
