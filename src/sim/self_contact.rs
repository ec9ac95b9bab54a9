//! Self-contact: particle–particle contacts between parts of one cloth (docs/physics.md §4,
//! "Self-contact"), after Ten Minute Physics 15 (Müller, "Self collisions of cloth").
//!
//! # Detection, once per frame
//! Every particle is put into a spatial hash (cells of edge r, a table of 2n buckets filled by
//! a counting sort into two flat arrays) at the frame's start positions, and every pair closer
//! than its reach is listed: reach = d_min + 2 u, with d_min the pair's contact distance below
//! and u the farthest a particle can travel in the frame, u = Δt · min(v_clamp, max_i |v_i| +
//! |g| Δt). Two particles farther apart than their reach at the frame's start cannot come
//! closer than d_min during it, so the list holds every contact the frame can make. Pairs
//! joined by a live distance constraint (edges, shear diagonals, bend edges) and pairs of two
//! fixed particles are left out. The cell edge is the largest reach, so each particle looks at
//! its 27 neighbouring cells (each bucket once, even when two cells hash alike).
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
//! The list is built serially in particle order and projected serially by thread 0 between
//! the barriers of the tail step (after the tail group and the soft grab, before tethers and
//! collider contacts), so every thread count gives the same result.

use std::sync::atomic::{AtomicU32, Ordering};

use glam::{IVec3, Vec3};

use super::particles::{xyz, Particles, PosPtr, VecPtr};

/// Fraction of the thickness a particle may move in one substep's prediction while
/// self-collision is on: v_clamp = `CLAMP_FRACTION` · thickness / h (Ten Minute Physics 15).
pub const CLAMP_FRACTION: f32 = 0.2;

/// What the self-contact pass needs of the parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SelfContactSettings {
    /// Distance kept between particles of the cloth, in m.
    pub thickness: f32,
    /// Coulomb friction coefficient between layers (static and kinetic alike).
    pub friction: f32,
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
    /// First entry of each bucket (`buckets + 1` entries) and the particles by bucket.
    bucket_start: Vec<u32>,
    entries: Vec<u32>,
    /// Particles joined to each particle by a live distance constraint, sorted (CSR).
    adjacency_start: Vec<u32>,
    adjacency: Vec<u32>,
    /// (topology version, particles, distance constraints) the adjacency was built for.
    adjacency_key: Option<(u64, usize, usize)>,
    /// This frame's candidate pairs, in projection order.
    pub pairs: Vec<Pair>,
    /// Pairs in contact in the last sweep of the last frame.
    pub active: usize,
}

/// Hash of a cell (the multipliers of Ten Minute Physics 15).
fn bucket_of(cell: IVec3, buckets: usize) -> usize {
    let h = cell.x.wrapping_mul(92_837_111) ^ cell.y.wrapping_mul(689_287_499) ^ cell.z.wrapping_mul(283_923_481);
    h.unsigned_abs() as usize % buckets
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

    /// Lists this frame's candidate pairs from the particles at the frame's start; `rest` are
    /// the rest positions, `travel` the farthest a particle can move in the frame (m).
    /// [`Self::refresh_adjacency`] must have run for the current topology.
    pub fn prepare_frame(&mut self, particles: &Particles, rest: &[Vec3], settings: SelfContactSettings, travel: f32) {
        let n = particles.len();
        self.pairs.clear();
        debug_assert_eq!(self.adjacency_start.len(), n + 1, "adjacency of the current topology");
        if n < 2 {
            return;
        }
        let edge = settings.thickness + 2.0 * travel;
        let buckets = 2 * n;
        let cells: Vec<IVec3> = particles.positions().map(|p| cell_of(p, edge)).collect();
        self.bucket_start.clear();
        self.bucket_start.resize(buckets + 1, 0);
        for &c in &cells {
            self.bucket_start[bucket_of(c, buckets) + 1] += 1;
        }
        for b in 0..buckets {
            self.bucket_start[b + 1] += self.bucket_start[b];
        }
        let mut fill = self.bucket_start.clone();
        self.entries.resize(n, 0);
        for (i, &c) in cells.iter().enumerate() {
            let b = bucket_of(c, buckets);
            self.entries[fill[b] as usize] = i as u32;
            fill[b] += 1;
        }
        let mut near = Vec::with_capacity(27);
        for (i, &c) in cells.iter().enumerate() {
            let (p, w) = (particles.position(i), particles.inverse_mass(i));
            near.clear();
            for dz in -1..=1 {
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        near.push(bucket_of(c + IVec3::new(dx, dy, dz), buckets));
                    }
                }
            }
            near.sort_unstable();
            near.dedup();
            for &b in &near {
                for &j in &self.entries[self.bucket_start[b] as usize..self.bucket_start[b + 1] as usize] {
                    if j as usize <= i || (w == 0.0 && particles.inverse_mass(j as usize) == 0.0) {
                        continue;
                    }
                    let min_distance = settings.thickness.min(rest[i].distance(rest[j as usize]));
                    let reach = min_distance + 2.0 * travel;
                    let close = p.distance_squared(particles.position(j as usize)) < reach * reach;
                    if min_distance > 0.0 && close && !self.adjacent(i, j) {
                        self.pairs.push(Pair {
                            a: i as u32,
                            b: j,
                            min_distance,
                        });
                    }
                }
            }
        }
    }
}

/// The self-contact pass of one frame, as the solver's thread 0 runs it.
#[derive(Debug)]
pub(crate) struct SelfContactPass<'a> {
    pub pairs: &'a [Pair],
    pub settings: SelfContactSettings,
    /// Pairs in contact during the last sweep (for the statistics).
    pub active: AtomicU32,
}

impl SelfContactPass<'_> {
    /// Projects every pair once (module docs) and records how many were in contact.
    ///
    /// # Safety
    /// Every pair's particles are in bounds of `pos` and `prev`, and no other thread touches
    /// the particles during the call.
    pub unsafe fn project(&self, pos: PosPtr, prev: VecPtr) {
        let mu = self.settings.friction;
        let mut active = 0;
        for pair in self.pairs {
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
        self.active.store(active, Ordering::Relaxed);
    }
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
    };

    /// Pairs are found within their reach and nowhere else, whatever cells they fall in;
    /// constraint neighbours and two fixed particles are left out; the rest distance caps
    /// the contact distance.
    #[test]
    fn pairs_are_listed_within_reach_only() {
        let points = [
            (Vec3::new(0.0, 0.0, 0.0), 1.0),
            (Vec3::new(0.0, 0.013, 0.0), 1.0),   // within 0.01 + 2·0.002 of 0
            (Vec3::new(0.0, -0.015, 0.0), 1.0),  // beyond every reach of 0
            (Vec3::new(0.0, 0.013, 0.004), 1.0), // adjacent to 1 by an edge
            (Vec3::new(0.009, 0.0, 0.0), 0.0),   // fixed, near fixed 5
            (Vec3::new(0.009, 0.0, 0.005), 0.0), // fixed
        ];
        let p = particles(&points);
        let mut rest: Vec<Vec3> = points.iter().map(|q| q.0 * 10.0).collect();
        rest[3] = rest[1] + Vec3::new(0.0, 0.0, 0.002);
        let mut contacts = SelfContacts::default();
        contacts.refresh_adjacency((0, points.len(), 1), || [(1u32, 3u32)].into_iter());
        contacts.prepare_frame(&p, &rest, SETTINGS, 0.002);
        let listed: Vec<(u32, u32)> = contacts.pairs.iter().map(|q| (q.a, q.b)).collect();
        let mut expected = Vec::new();
        for i in 0..points.len() {
            for j in i + 1..points.len() {
                let min = SETTINGS.thickness.min(rest[i].distance(rest[j]));
                let reach = min + 0.004;
                let both_fixed = points[i].1 == 0.0 && points[j].1 == 0.0;
                if points[i].0.distance(points[j].0) < reach && !both_fixed && (i, j) != (1, 3) {
                    expected.push((i as u32, j as u32));
                }
            }
        }
        let mut sorted = listed.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, expected);
        assert!(!expected.is_empty() && expected.contains(&(0, 1)) && !expected.contains(&(0, 2)));
    }

    /// Two free particles closer than the thickness end exactly the thickness apart, mass
    /// weighted, their centre of mass unmoved; a pair farther apart is untouched.
    #[test]
    fn a_pair_is_pushed_to_the_thickness_conserving_momentum() {
        let points = [(Vec3::ZERO, 1.0), (Vec3::new(0.0, 0.004, 0.0), 3.0)];
        let mut p = particles(&points);
        let rest = [Vec3::ZERO, Vec3::new(1.0, 0.0, 0.0)];
        let mut contacts = SelfContacts::default();
        contacts.refresh_adjacency((0, 2, 0), std::iter::empty);
        contacts.prepare_frame(&p, &rest, SETTINGS, 0.0);
        assert_eq!(contacts.pairs.len(), 1);
        let pass = SelfContactPass {
            pairs: &contacts.pairs,
            settings: SETTINGS,
            active: AtomicU32::new(0),
        };
        let centre = |p: &Particles| (p.position(0) / 1.0 + p.position(1) / 3.0) / (1.0 + 1.0 / 3.0);
        let before = centre(&p);
        let prev = p.prev.raw();
        // SAFETY: both particles exist; one thread.
        unsafe { pass.project(p.pos.raw(), prev) };
        let gap = p.position(0).distance(p.position(1));
        assert!((gap - SETTINGS.thickness).abs() < 1e-7, "{gap}");
        assert!(centre(&p).distance(before) < 1e-8);
        assert_eq!(pass.active.load(Ordering::Relaxed), 1);
        let moved = p.position(1);
        // SAFETY: as above.
        unsafe { pass.project(p.pos.raw(), p.prev.raw()) };
        assert!(p.position(1).distance(moved) < 1e-8);
    }
}
