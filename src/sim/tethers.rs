//! Long-range attachments ("tethers"; Kim, Chentanez and Müller, "Long Range Attachments",
//! SCA 2012).
//!
//! With one Gauss–Seidel sweep per substep, support travels only a few edges down a cloth per
//! substep, so a large sheet hanging from a few pins sags and its edges near the pins carry
//! strains of tens of percent that no real fabric shows (a 5 MPa cotton strains ≪ 1 % under
//! its own weight). A tether is a unilateral constraint between a free particle i and a pinned
//! anchor a:
//!
//! ```text
//! C(x_i) = |x_i − x_a| − L_ia ≤ 0,   L_ia = slack · (rest distance from a to i through the cloth)
//! ```
//!
//! A particle can never be farther from a pin than the cloth between them allows at rest,
//! whatever the iteration error, so the pins' support reaches the whole sheet in every substep.
//! The anchor is pinned (infinite mass), so the projection moves only x_i, onto the sphere
//! of radius L_ia about x_a, and only when it is outside: a tether never pushes, never
//! compresses the cloth and adds no stiffness to it. Pins joined by an edge form one *group*
//! (a pinned top edge, one side of a hammock, a corner); each particle is tethered to the
//! nearest pin of each of its [`ANCHORS`] nearest groups, measured through the cloth. Two pins
//! of one group pull in nearly the same direction, so a second tether there would add nothing,
//! while one per group holds a sheet between two pinned corners or two pinned sides.
//!
//! Rest distances through the cloth: a multi-source Dijkstra over the live distance constraints
//! (rest lengths as weights) finds each particle's nearest anchors. Plain edge paths zigzag
//! (on a grid of 1.26 × 0.95 cm cells a path to a far corner is 11 % longer than the straight
//! line), so the search also carries *line of sight*: a particle reached from a particle in
//! sight of the anchor, with the straight rest-space line from the anchor passing within half
//! an edge length of that particle, is in sight too and gets the straight-line rest distance.
//! A cut or a hole breaks the line of sight (the line would have to jump across it), and the
//! particles behind it get the length of the path around it. So tethers are exact on an uncut
//! flat sheet and never pull the cloth across a cut (at worst by an edge length at the tip).

//! Tethers are rebuilt whenever pins or the topology change (pin toggles, a Shift-release,
//! tearing and cutting, which can free a piece from every pin); a new cloth builds its own.
//! A particle held by the mouse is not an anchor (it moves during the frame); a pinned particle
//! being held stops acting as one until released.
//!
//! Every particle's tethers are solved in the last per-particle pass of each sweep, after the
//! distance and bending constraints and before contacts, reading the anchors from a copy taken
//! at the start of the frame (anchors do not move during a frame), so the pass touches only its
//! own particles and any split of the particles between threads gives the same result.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;

use glam::Vec3;

use super::particles::PosPtr;

/// Anchors per particle (its nearest pins through the cloth).
pub const ANCHORS: usize = 2;

/// No anchor in this slot.
const NONE: u32 = u32::MAX;

/// The tethers of a cloth: per particle its nearest anchors and the allowed distances.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tethers {
    /// Per particle: indices into `anchors` (`NONE` = unused slot).
    slots: Vec<[u32; ANCHORS]>,
    /// Per particle: the largest allowed distance to each anchor in m (slack included).
    length: Vec<[f32; ANCHORS]>,
    /// The anchoring (pinned) particles.
    anchors: Vec<u32>,
    /// Number of tethers.
    count: usize,
}

/// An edge of the cloth for the distance search: endpoints and rest length in m.
pub(crate) type RestEdge = (u32, u32, f32);

impl Tethers {
    /// Tethers from every particle to its nearest pinned particles through `edges`, measured
    /// on the rest positions `rest`, with allowed distances scaled by `slack` (≥ 1).
    pub fn build(rest: &[Vec3], pinned: &[bool], edges: impl Iterator<Item = RestEdge>, slack: f32) -> Self {
        let n = rest.len();
        let anchors: Vec<u32> = (0..n as u32).filter(|&i| pinned[i as usize]).collect();
        let mut tethers = Tethers {
            slots: vec![[NONE; ANCHORS]; n],
            length: vec![[0.0; ANCHORS]; n],
            anchors,
            count: 0,
        };
        if tethers.anchors.is_empty() {
            return tethers;
        }
        let graph = Adjacency::new(n, edges);
        let groups = graph.pin_groups(&tethers.anchors, pinned);
        for (i, found) in graph.nearest_sources(rest, &tethers.anchors, &groups).into_iter().enumerate() {
            if pinned[i] {
                continue;
            }
            for (k, (slot, distance)) in found.into_iter().enumerate() {
                tethers.slots[i][k] = slot;
                tethers.length[i][k] = slack * distance;
                tethers.count += 1;
            }
        }
        tethers
    }

    /// Number of tethers.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The anchors' positions for one frame (`held`, a particle the mouse moves, is left out).
    pub fn anchor_positions(&self, pos: &impl Fn(usize) -> Vec3, held: Option<usize>) -> Vec<Option<Vec3>> {
        self.anchors
            .iter()
            .map(|&a| (Some(a as usize) != held).then(|| pos(a as usize)))
            .collect()
    }

    /// Projects the tethers of the free particles in `range` onto their spheres.
    ///
    /// # Safety
    /// Every index in `range` must be in bounds of `pos`, and no other thread may touch those
    /// particles during the call.
    pub unsafe fn project(&self, pos: PosPtr, range: Range<usize>, anchors: &[Option<Vec3>]) {
        let end = range.end.min(self.slots.len());
        for i in range.start..end {
            let p = pos.get(i);
            if p[3] == 0.0 {
                continue;
            }
            let balls = std::array::from_fn(|k| {
                let anchor = anchors.get(self.slots[i][k] as usize).copied().flatten();
                anchor.map(|a| Ball {
                    centre: a,
                    radius: self.length[i][k],
                })
            });
            let x = Vec3::new(p[0], p[1], p[2]);
            if let Some(y) = closest_in_balls(x, balls) {
                pos.set_xyz(i, y.to_array());
            }
        }
    }
}

/// A tether's allowed region: a ball about the anchor.
#[derive(Debug, Clone, Copy)]
struct Ball {
    centre: Vec3,
    radius: f32,
}

impl Ball {
    fn contains(self, x: Vec3) -> bool {
        x.distance_squared(self.centre) <= self.radius * self.radius
    }

    /// The closest point of the ball to `x` (outside it).
    fn project(self, x: Vec3) -> Vec3 {
        let d = x - self.centre;
        let length = d.length();
        if length > 0.0 {
            self.centre + d * (self.radius / length)
        } else {
            x
        }
    }
}

/// The closest point to `x` in the intersection of the balls that are present, or `None`
/// when `x` already lies in all of them. Both tethers are satisfied at once: projecting onto
/// one sphere and then the other would leave a drift along the first sphere every substep,
/// which at a cloth's corner pins (two nearly opposed anchors) never settles. For two balls the
/// closest point is the projection onto one of them if that lies in the other, and otherwise
/// the projection onto the circle where the two spheres meet. Anchors moved apart farther than
/// the tethers reach (no common point) fall back to one projection after the other.
fn closest_in_balls(x: Vec3, balls: [Option<Ball>; ANCHORS]) -> Option<Vec3> {
    let [first, second] = balls;
    match (first, second) {
        (None, None) => None,
        (Some(ball), None) | (None, Some(ball)) => (!ball.contains(x)).then(|| ball.project(x)),
        (Some(a), Some(b)) => {
            if a.contains(x) && b.contains(x) {
                return None;
            }
            for (this, other) in [(a, b), (b, a)] {
                if !this.contains(x) {
                    let y = this.project(x);
                    if other.contains(y) {
                        return Some(y);
                    }
                }
            }
            Some(project_onto_meeting_circle(x, a, b).unwrap_or_else(|| b.project(a.project(x))))
        }
    }
}

/// The closest point to `x` on the circle where the spheres of `a` and `b` meet, or `None` if
/// they do not meet.
fn project_onto_meeting_circle(x: Vec3, a: Ball, b: Ball) -> Option<Vec3> {
    let axis = b.centre - a.centre;
    let d = axis.length();
    if d <= 0.0 || d > a.radius + b.radius || d < (a.radius - b.radius).abs() {
        return None;
    }
    let n = axis / d;
    // Distance from a's centre to the circle's plane, and the circle's radius.
    let t = (d * d + a.radius * a.radius - b.radius * b.radius) / (2.0 * d);
    let radius = (a.radius * a.radius - t * t).max(0.0).sqrt();
    let centre = a.centre + n * t;
    let q = x - centre;
    let radial = q - n * q.dot(n);
    let direction = radial.try_normalize().unwrap_or_else(|| n.any_orthonormal_vector());
    Some(centre + direction * radius)
}

/// Neighbours of every particle with edge lengths, in compressed rows.
struct Adjacency {
    start: Vec<usize>,
    neighbour: Vec<(u32, f32)>,
}

impl Adjacency {
    fn new(n: usize, edges: impl Iterator<Item = RestEdge>) -> Self {
        let edges: Vec<RestEdge> = edges.filter(|&(a, b, _)| (a as usize) < n && (b as usize) < n).collect();
        let mut degree = vec![0usize; n + 1];
        for &(a, b, _) in &edges {
            degree[a as usize + 1] += 1;
            degree[b as usize + 1] += 1;
        }
        for i in 0..n {
            degree[i + 1] += degree[i];
        }
        let start = degree;
        let mut fill = start.clone();
        let mut neighbour = vec![(0, 0.0); edges.len() * 2];
        for &(a, b, length) in &edges {
            neighbour[fill[a as usize]] = (b, length);
            fill[a as usize] += 1;
            neighbour[fill[b as usize]] = (a, length);
            fill[b as usize] += 1;
        }
        Adjacency { start, neighbour }
    }

    /// Group label of every source: sources joined through edges between pinned particles
    /// share one (the smallest source index of the group).
    fn pin_groups(&self, sources: &[u32], pinned: &[bool]) -> Vec<u32> {
        let mut slot_of = vec![u32::MAX; pinned.len()];
        for (slot, &s) in sources.iter().enumerate() {
            slot_of[s as usize] = slot as u32;
        }
        let mut group = vec![u32::MAX; sources.len()];
        for start in 0..sources.len() {
            if group[start] != u32::MAX {
                continue;
            }
            let mut stack = vec![sources[start]];
            group[start] = start as u32;
            while let Some(node) = stack.pop() {
                for &(next, _) in &self.neighbour[self.start[node as usize]..self.start[node as usize + 1]] {
                    let slot = slot_of[next as usize];
                    if slot != u32::MAX && group[slot as usize] == u32::MAX {
                        group[slot as usize] = start as u32;
                        stack.push(next);
                    }
                }
            }
        }
        group
    }

    /// For every node, the nearest source of each of its up to [`ANCHORS`] nearest groups
    /// (sources by index into `sources`, `groups` their group labels)
    /// and their rest distances through the cloth, nearest first: Dijkstra from all sources at
    /// once, where a node is settled once per group, at most [`ANCHORS`] times, with line of
    /// sight carried along (see the module docs). Ties break by distance, node and source
    /// index, so the result is deterministic.
    fn nearest_sources(&self, rest: &[Vec3], sources: &[u32], groups: &[u32]) -> Vec<Vec<(u32, f32)>> {
        let n = self.start.len() - 1;
        let mut found: Vec<Vec<(u32, f32)>> = vec![Vec::new(); n];
        // Non-negative f32 distances order like their bit patterns.
        let mut heap: BinaryHeap<Reverse<(u32, u32, u32, bool)>> = BinaryHeap::new();
        for (slot, &s) in sources.iter().enumerate() {
            heap.push(Reverse((0f32.to_bits(), s, slot as u32, true)));
        }
        while let Some(Reverse((bits, node, slot, in_sight))) = heap.pop() {
            let settled = &mut found[node as usize];
            if settled.len() == ANCHORS || settled.iter().any(|&(s, _)| groups[s as usize] == groups[slot as usize]) {
                continue;
            }
            let distance = f32::from_bits(bits);
            settled.push((slot, distance));
            let source = rest[sources[slot as usize] as usize];
            let here = rest[node as usize];
            for &(next, length) in &self.neighbour[self.start[node as usize]..self.start[node as usize + 1]] {
                let there = &found[next as usize];
                if there.len() == ANCHORS || there.iter().any(|&(s, _)| groups[s as usize] == groups[slot as usize]) {
                    continue;
                }
                let target = rest[next as usize];
                let sighted = in_sight && passes_alongside(here, source, target, 0.5 * length);
                // The straight line is never longer than the path (it can only be, when the model's
                // positions are not a rest shape, e.g. built stretched).
                let path = distance + length;
                let candidate = if sighted { source.distance(target).min(path) } else { path };
                heap.push(Reverse((candidate.to_bits(), next, slot, sighted)));
            }
        }
        found
    }
}

/// Whether `p` lies alongside the line from `a` to `b`: between them along it and within
/// `width` of it. A particle in sight of the anchor `a` then sees `b` past itself.
fn passes_alongside(p: Vec3, a: Vec3, b: Vec3, width: f32) -> bool {
    let ab = b - a;
    let length_sq = ab.length_squared();
    if length_sq == 0.0 {
        return false;
    }
    let t = (p - a).dot(ab) / length_sq;
    (0.0..=1.0).contains(&t) && p.distance(a + ab * t) <= width
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A straight chain of `n` particles 0.1 m apart, particle 0 pinned.
    fn chain(n: usize) -> (Vec<Vec3>, Vec<bool>, Vec<RestEdge>) {
        let rest = (0..n).map(|i| Vec3::new(0.1 * i as f32, 0.0, 0.0)).collect();
        let mut pinned = vec![false; n];
        pinned[0] = true;
        let edges = (0..n as u32 - 1).map(|i| (i, i + 1, 0.1)).collect();
        (rest, pinned, edges)
    }

    fn lengths(t: &Tethers, i: usize) -> Vec<f32> {
        t.slots[i]
            .iter()
            .zip(&t.length[i])
            .filter(|(&s, _)| s != NONE)
            .map(|(_, &l)| l)
            .collect()
    }

    #[test]
    fn a_chain_is_tethered_to_its_pin_at_the_rest_distance_times_the_slack() {
        let (rest, pinned, edges) = chain(5);
        let t = Tethers::build(&rest, &pinned, edges.into_iter(), 1.5);
        assert_eq!(t.count(), 4, "every free particle has one tether (one pin)");
        for i in 1..5 {
            let expected = 1.5 * 0.1 * i as f32;
            assert!((lengths(&t, i)[0] - expected).abs() < 1e-6, "particle {i}: {:?}", lengths(&t, i));
        }
        assert!(lengths(&t, 0).is_empty(), "a pin has no tether");
    }

    #[test]
    fn an_uncut_rectangular_grid_gets_straight_line_distances() {
        // 30 × 20 cells of 1.26 × 0.95 cm with both diagonals, pinned at one corner: edge paths
        // to the far corner are ~11 % longer than the straight line; tethers must not be.
        let (columns, rows, dx, dy) = (31usize, 21usize, 0.0126f32, 0.0095f32);
        let at = |c: usize, r: usize| (r * columns + c) as u32;
        let rest: Vec<Vec3> = (0..rows)
            .flat_map(|r| (0..columns).map(move |c| Vec3::new(c as f32 * dx, -(r as f32) * dy, 0.0)))
            .collect();
        let mut edges = Vec::new();
        for r in 0..rows {
            for c in 0..columns {
                let mut link = |c2: usize, r2: usize| {
                    let (a, b) = (at(c, r), at(c2, r2));
                    edges.push((a, b, rest[a as usize].distance(rest[b as usize])));
                };
                if c + 1 < columns {
                    link(c + 1, r);
                }
                if r + 1 < rows {
                    link(c, r + 1);
                    if c + 1 < columns {
                        link(c + 1, r + 1);
                    }
                    if c > 0 {
                        link(c - 1, r + 1);
                    }
                }
            }
        }
        let mut pinned = vec![false; rest.len()];
        pinned[0] = true;
        let t = Tethers::build(&rest, &pinned, edges.into_iter(), 1.0);
        for i in 1..rest.len() {
            let straight = rest[i].distance(rest[0]);
            assert!(
                (lengths(&t, i)[0] - straight).abs() <= 1e-5 * straight.max(1.0),
                "particle {i}: {:?} vs {straight}",
                lengths(&t, i)
            );
        }
    }

    #[test]
    fn a_detour_around_a_cut_uses_the_path_not_the_straight_line() {
        // A U: 0 - 1 - 2 - 3 along the bottom and up, with 0 and 3 side by side at rest
        // (0.1 m apart) but joined only through the U (0.3 m).
        let rest = vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(0.0, -0.1, 0.0),
            Vec3::new(0.1, -0.1, 0.0),
            Vec3::new(0.1, 0.0, 0.0),
        ];
        let pinned = vec![true, false, false, false];
        let edges = vec![(0, 1, 0.1), (1, 2, 0.1), (2, 3, 0.1)];
        let t = Tethers::build(&rest, &pinned, edges.into_iter(), 1.0);
        assert!((lengths(&t, 3)[0] - 0.3).abs() < 1e-6, "{:?}", lengths(&t, 3));
        // Particle 2 is 0.2 m away by the path and 0.1414 m in a straight line: also a detour.
        assert!((lengths(&t, 2)[0] - 0.2).abs() < 1e-6);
    }

    #[test]
    fn particles_take_their_two_nearest_pins_and_pieces_without_pins_none() {
        // Chain 0..5 pinned at both ends, plus a separate edge 5 - 6.
        let mut rest: Vec<Vec3> = (0..5).map(|i| Vec3::new(0.1 * i as f32, 0.0, 0.0)).collect();
        rest.extend([Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.1, 1.0, 0.0)]);
        let mut pinned = vec![false; 7];
        pinned[0] = true;
        pinned[4] = true;
        let edges = vec![(0, 1, 0.1), (1, 2, 0.1), (2, 3, 0.1), (3, 4, 0.1), (5, 6, 0.1)];
        let t = Tethers::build(&rest, &pinned, edges.into_iter(), 1.0);
        let one = lengths(&t, 1);
        assert_eq!(one.len(), 2);
        assert!((one[0] - 0.1).abs() < 1e-6 && (one[1] - 0.3).abs() < 1e-6, "{one:?}");
        assert!(lengths(&t, 5).is_empty() && lengths(&t, 6).is_empty());
    }

    #[test]
    fn two_tethers_are_met_at_once_at_the_closest_point_of_both_balls() {
        let a = Ball {
            centre: Vec3::new(-0.8, 0.0, 0.0),
            radius: 0.8f32.hypot(0.3),
        };
        let b = Ball {
            centre: Vec3::new(0.8, 0.0, 0.0),
            radius: 0.8f32.hypot(0.3),
        };
        // Straight below the middle, 0.3 m allowed, 0.35 m away: pulled up onto the circle.
        let y = closest_in_balls(Vec3::new(0.0, -0.35, 0.0), [Some(a), Some(b)]).unwrap();
        assert!(y.distance(Vec3::new(0.0, -0.3, 0.0)) < 1e-6, "{y}");
        // Off the symmetry plane: the result is on both spheres and no farther from x than
        // the known circle point below it.
        let x = Vec3::new(0.1, -0.4, 0.05);
        let y = closest_in_balls(x, [Some(a), Some(b)]).unwrap();
        for ball in [a, b] {
            assert!((y.distance(ball.centre) - ball.radius).abs() < 1e-5);
        }
        assert!(y.x.abs() < 1e-6, "the circle lies in the plane x = 0");
        // Inside both: untouched; outside one only, with its projection inside the other:
        // that projection.
        assert!(closest_in_balls(Vec3::new(0.0, -0.1, 0.0), [Some(a), Some(b)]).is_none());
        let near_a = Vec3::new(-0.8, -0.9, 0.0);
        let y = closest_in_balls(near_a, [Some(a), Some(b)]).unwrap();
        assert!((y.distance(a.centre) - a.radius).abs() < 1e-5 && b.contains(y));
    }

    #[test]
    fn pins_joined_by_an_edge_count_once_so_the_far_side_holds_too() {
        // Chain 0..6 with 0 and 1 pinned (one group, like a pinned edge) and 5 pinned.
        let rest: Vec<Vec3> = (0..6).map(|i| Vec3::new(0.1 * i as f32, 0.0, 0.0)).collect();
        let pinned = vec![true, true, false, false, false, true];
        let edges = (0..5).map(|i| (i, i + 1, 0.1));
        let t = Tethers::build(&rest, &pinned, edges, 1.0);
        let two = lengths(&t, 2);
        assert_eq!(two.len(), 2, "{two:?}");
        assert!(
            (two[0] - 0.1).abs() < 1e-6 && (two[1] - 0.3).abs() < 1e-6,
            "pin 1 and pin 5, not pins 1 and 0: {two:?}"
        );
    }

    #[test]
    fn projection_pulls_a_particle_back_to_its_sphere_and_never_pushes() {
        let (rest, pinned, edges) = chain(3);
        let t = Tethers::build(&rest, &pinned, edges.into_iter(), 1.0);
        let mut pos = crate::sim::particles::Positions::default();
        pos.push([0.0, 0.0, 0.0, 0.0]);
        pos.push([0.05, 0.0, 0.0, 1.0]); // inside its sphere (0.1 m): untouched
        pos.push([0.0, -0.4, 0.0, 1.0]); // 0.4 m from the pin, allowed 0.2 m
        let anchors = t.anchor_positions(&|i| Vec3::from_array(crate::sim::particles::xyz(pos.get(i)).to_array()), None);
        // SAFETY: three particles, one thread.
        unsafe { t.project(pos.raw(), 0..3, &anchors) };
        assert_eq!(pos.get(1), [0.05, 0.0, 0.0, 1.0]);
        let pulled = pos.get(2);
        assert!((pulled[1] + 0.2).abs() < 1e-6 && pulled[0] == 0.0, "{pulled:?}");
        // A held anchor does not act.
        let mut held = crate::sim::particles::Positions::default();
        held.push([0.0, 0.0, 0.0, 0.0]);
        held.push([0.0, -0.4, 0.0, 1.0]);
        let anchors = t.anchor_positions(&|_| Vec3::ZERO, Some(0));
        // SAFETY: as above.
        unsafe { t.project(held.raw(), 0..2, &anchors) };
        assert_eq!(held.get(1), [0.0, -0.4, 0.0, 1.0]);
    }
}
