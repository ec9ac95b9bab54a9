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
//! A pair at zero distance has no normal and is skipped. Split copies of a torn vertex share
//! their rest position (d_min = 0) and never collide with each other.
//!
//! # Velocity clamp
//! While self-collision is on, every velocity the solver derives is clamped to
//! v_clamp = [`CLAMP_FRACTION`] · thickness / h (TMP 15's rule), so no particle moves more than
//! a fifth of the thickness in a substep's prediction and cannot cross a layer between two
//! projections. At the default 15 substeps and 1 cm thickness this is 1.8 m/s: a falling cloth
//! reaches it after 0.18 s. A thinner thickness or more substeps raise it.
//!
//! # Determinism
//! The list is checked, made (in particle order) and projected serially by thread 0 between
//! the barriers of the tail step (after the tail group and the soft grab, before tethers and
//! collider contacts), so every thread count gives the same result.

use std::sync::Mutex;

use glam::{IVec3, Vec3};

use super::particles::{xyz, PosPtr, VecPtr};

/// Fraction of the thickness a particle may move in one substep's prediction while
/// self-collision is on: v_clamp = `CLAMP_FRACTION` · thickness / h (Ten Minute Physics 15).
pub const CLAMP_FRACTION: f32 = 0.2;

/// Extra margin of a candidate list, as a fraction of the thickness: a list stays valid until
/// some particle has moved this far beyond the travel it was made for (see
/// [`SelfContacts::prepare`]).
pub const SKIN: f32 = 0.25;

/// Most candidate pairs a list holds, per particle. A cloth whose particles crowd far more
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

/// The spatial hash, the constraint adjacency it excludes and the frame's candidate pairs.
#[derive(Debug, Clone, Default)]
pub(crate) struct SelfContacts {
    /// First entry of each bucket (`buckets + 1` entries), and the particles by bucket with
    /// their cells (so a bucket shared by two cells yields each particle once).
    bucket_start: Vec<u32>,
    entries: Vec<(u32, IVec3)>,
    /// Scratch: the frame's start positions and the counting sort's fill pointers.
    points: Vec<Vec3>,
    fill: Vec<u32>,
    /// Particles joined to each particle by a live distance constraint, sorted (CSR).
    adjacency_start: Vec<u32>,
    adjacency: Vec<u32>,
    /// (topology version, particles, distance constraints) the adjacency was built for.
    adjacency_key: Option<(u64, usize, usize)>,
    /// This frame's candidate pairs, in projection order.
    pub pairs: Vec<Pair>,
    /// Pairs in contact in the last sweep of the last frame.
    pub active: u32,
    /// Positions the pairs were listed at, the margin they were listed with (m) and what they
    /// were listed for (adjacency key, thickness bits); `None` before the first list.
    listed_at: Vec<Vec3>,
    listed_margin: f32,
    listed_for: Option<((u64, usize, usize), u32)>,
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
        (self.adjacency_start, self.adjacency, self.adjacency_key) = (start, adjacency, Some(key));
    }

    /// Whether particles `a` and `b` share a live distance constraint.
    fn adjacent(&self, a: usize, b: u32) -> bool {
        self.adjacency[self.adjacency_start[a] as usize..self.adjacency_start[a + 1] as usize]
            .binary_search(&b)
            .is_ok()
    }

    /// Makes sure the candidate pairs hold every contact until the next call: keeps the last
    /// list while no particle has moved more than its margin allows (below), else lists anew
    /// from the `n` particles' current positions. `rest` are the rest positions, `travel` the
    /// farthest a particle can move until the next call (m). [`Self::refresh_adjacency`]
    /// must have run for the current topology.
    ///
    /// A list made with margin M (every pair closer than d_min + 2M) stays complete while
    /// every particle's displacement since then plus this frame's travel is at most M: two
    /// particles farther apart than that moved at most 2M toward each other. Lists are made
    /// with M = travel + [`SKIN`] · thickness, so a cloth at rest keeps its list.
    pub fn prepare(&mut self, n: usize, position: impl Fn(usize) -> Vec3, rest: &[Vec3], settings: SelfContactSettings, travel: f32) {
        debug_assert_eq!(self.adjacency_start.len(), n + 1, "adjacency of the current topology");
        let listed_for = self.adjacency_key.map(|key| (key, settings.thickness.to_bits()));
        if listed_for.is_some() && self.listed_for == listed_for && self.listed_at.len() == n {
            let moved = (0..n)
                .map(&position)
                .zip(&self.listed_at)
                .map(|(p, q)| p.distance_squared(*q))
                .fold(0.0, f32::max);
            if moved.sqrt() + travel <= self.listed_margin {
                return;
            }
        }
        self.pairs.clear();
        self.listed_margin = travel + SKIN * settings.thickness;
        self.listed_at.clear();
        self.listed_at.extend((0..n).map(&position));
        self.listed_for = listed_for;
        if n < 2 {
            return;
        }
        let margin = self.listed_margin;
        let edge = settings.thickness + 2.0 * margin;
        let buckets = (2 * n).next_power_of_two();
        self.points.clear();
        self.points.extend((0..n).map(&position));
        self.bucket_start.clear();
        self.bucket_start.resize(buckets + 1, 0);
        for &p in &self.points {
            self.bucket_start[bucket_of(cell_of(p, edge), buckets) + 1] += 1;
        }
        for b in 0..buckets {
            self.bucket_start[b + 1] += self.bucket_start[b];
        }
        self.fill.clone_from(&self.bucket_start);
        self.entries.resize(n, (0, IVec3::ZERO));
        for (i, &p) in self.points.iter().enumerate() {
            let c = cell_of(p, edge);
            let b = bucket_of(c, buckets);
            self.entries[self.fill[b] as usize] = (i as u32, c);
            self.fill[b] += 1;
        }
        let cap = MAX_PAIRS_PER_PARTICLE * n;
        'particles: for i in 0..n {
            let p = self.points[i];
            let c = cell_of(p, edge);
            // The cell itself (later particles only) and the 13 cells of the half stencil
            // ahead of it: every pair of neighbouring cells is looked at once.
            for offset in HALF_STENCIL {
                let cell = c + offset;
                let b = bucket_of(cell, buckets);
                for k in self.bucket_start[b] as usize..self.bucket_start[b + 1] as usize {
                    let (j, in_cell) = self.entries[k];
                    if in_cell != cell || (offset == IVec3::ZERO && j as usize <= i) {
                        continue;
                    }
                    let distance2 = p.distance_squared(self.points[j as usize]);
                    if distance2 >= edge * edge {
                        continue;
                    }
                    let min_distance = settings.thickness.min(rest[i].distance(rest[j as usize]));
                    let reach = min_distance + 2.0 * margin;
                    if min_distance > 0.0 && distance2 < reach * reach && !self.adjacent(i, j) {
                        self.pairs.push(Pair {
                            a: i as u32,
                            b: j,
                            min_distance,
                        });
                        if self.pairs.len() == cap {
                            break 'particles;
                        }
                    }
                }
            }
        }
    }
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

/// The self-contact pass of one frame, as the solver's thread 0 runs it.
#[derive(Debug)]
pub(crate) struct SelfContactPass<'a> {
    /// The hash and the candidate pairs (only thread 0 locks them).
    pub contacts: Mutex<&'a mut SelfContacts>,
    /// Rest positions (m).
    pub rest: &'a [Vec3],
    pub settings: SelfContactSettings,
}

impl SelfContactPass<'_> {
    /// One sweep's self-contacts on the `n` particles: on a substep's first sweep (`first`)
    /// the candidate list is checked and remade if a particle left its margin
    /// ([`SelfContacts::prepare`]); then every pair is projected once (module docs) and the
    /// pairs in contact are counted into [`SelfContacts::active`].
    ///
    /// # Safety
    /// `n` particles are in bounds of `pos` and `prev`, and no other thread touches them
    /// during the call.
    pub unsafe fn run(&self, pos: PosPtr, prev: VecPtr, n: usize, first: bool) {
        let mut contacts = self.contacts.lock().unwrap_or_else(|e| e.into_inner());
        if first {
            // SAFETY: the caller guarantees the particles in bounds and unshared (# Safety).
            let position = |i| unsafe { xyz(pos.get(i)) };
            contacts.prepare(n, position, self.rest, self.settings, self.settings.travel);
        }
        // SAFETY: the list indexes particles below `n` (made from them); as above.
        contacts.active = unsafe { project(&contacts.pairs, self.settings.friction, pos, prev) };
    }
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
        contacts.prepare(p.len(), |i| p.position(i), &rest, SETTINGS, travel);
        let listed: Vec<(u32, u32)> = contacts.pairs.iter().map(|q| (q.a.min(q.b), q.a.max(q.b))).collect();
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
        contacts.prepare(2, |i| p.position(i), &rest, SETTINGS, 0.0);
        (p, contacts, rest)
    }

    /// A list is kept while the particles stay within its margin and made anew when one moves
    /// beyond it.
    #[test]
    fn a_list_is_kept_until_a_particle_leaves_its_margin() {
        let (mut p, mut contacts, rest) = two_particles(Vec3::new(0.0, 0.05, 0.0), 1.0);
        assert!(contacts.pairs.is_empty());
        // Within the margin (0.25 × 1 cm): the stale, empty list stays.
        p.set_position(1, Vec3::new(0.0, 0.048, 0.0));
        contacts.prepare(2, |i| p.position(i), &rest, SETTINGS, 0.0);
        assert!(contacts.pairs.is_empty());
        // Beyond it the pair is found.
        p.set_position(1, Vec3::new(0.0, 0.012, 0.0));
        contacts.prepare(2, |i| p.position(i), &rest, SETTINGS, 0.0);
        assert_eq!(contacts.pairs.len(), 1);
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
            unsafe { project(&contacts.pairs, mu, p.pos.raw(), p.prev.raw()) };
            let x = p.position(0);
            assert!((x.x - expected_x).abs() < 1e-7 && (x.y + 0.004).abs() < 1e-7, "μ = {mu}: {x}");
        }
    }

    /// Two free particles closer than the thickness end exactly the thickness apart, mass
    /// weighted, their centre of mass unmoved; a pair farther apart is untouched.
    #[test]
    fn a_pair_is_pushed_to_the_thickness_conserving_momentum() {
        let (mut p, contacts, _) = two_particles(Vec3::new(0.0, 0.004, 0.0), 3.0);
        assert_eq!(contacts.pairs.len(), 1);
        let centre = |p: &Particles| (p.position(0) / 1.0 + p.position(1) / 3.0) / (1.0 + 1.0 / 3.0);
        let before = centre(&p);
        let prev = p.prev.raw();
        // SAFETY: both particles exist; one thread.
        let active = unsafe { project(&contacts.pairs, 0.0, p.pos.raw(), prev) };
        let gap = p.position(0).distance(p.position(1));
        assert!((gap - SETTINGS.thickness).abs() < 1e-7, "{gap}");
        assert!(centre(&p).distance(before) < 1e-8);
        assert_eq!(active, 1);
        let moved = p.position(1);
        // SAFETY: as above.
        unsafe { project(&contacts.pairs, 0.0, p.pos.raw(), p.prev.raw()) };
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
        contacts.prepare(points.len(), |i| p.position(i), &rest, SETTINGS, 0.0);
        assert_eq!(contacts.pairs.len(), MAX_PAIRS_PER_PARTICLE * points.len());
    }
}
