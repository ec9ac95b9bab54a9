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
//! that particle's longest edge of it, is in sight too and gets the straight-line rest
//! distance. (Half the edge walked along is not enough on long thin cells: on a 12 × 1024
//! grid of 9 cm × 1 mm cells the line from a top corner to the particle 5.4 cm down the next
//! column passes 4.6 cm from its neighbour on the corner's column, more than half the 9 cm
//! edge, and 0.9 mm from the one above it, more than half the 1 mm edge; so every particle
//! beyond lost its sight and got the longer path length, and the sheet sagged there, held only
//! by its one-sweep solve; docs/physics.md §5.)
//! A cut or a hole breaks the line of sight (the line would have to jump across it), and the
//! particles behind it get the length of the path around it. So tethers are exact on an uncut
//! flat sheet and never pull the cloth across a cut (at worst by about the sight tolerance,
//! half the longest edge there, at the tip).

//! Tethers are rebuilt whenever pins or the topology change (pin toggles, a Shift-release,
//! tearing and cutting, which can free a piece from every pin); a new cloth builds its own.
//! A particle held by the mouse is not an anchor (it moves during the frame); a pinned particle
//! being held stops acting as one until released.
//!
//! When the user pins a point below where it hung, or pins are pulled apart, the cloth
//! between those anchors must stretch, and rest-length tethers would forbid it: a particle on
//! the line between two such anchors could not meet both, and its neighbours, swung about one
//! anchor or the other, folded the sheet over itself in its plane. So every tether of an anchor
//! grows by the largest factor by which the anchor stands farther from another anchor it shares
//! particles with than at rest ([`Tethers::prepare_frame`]); at rest the factor is 1.
//!
//! Every particle's tethers are solved in the last per-particle pass of each sweep, after the
//! distance and bending constraints and before contacts. Anchors do not move during a frame, so
//! each particle's two balls and the circle where their spheres meet are computed once per
//! frame, and the pass projects eight particles at a time with AVX2 (bit for bit the scalar
//! code's result, the tail of a range in a padded vector). It touches only its own particles,
//! so any split of the particles between threads gives the same result.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;

use glam::Vec3;

use super::particles::{PosPtr, COMPENSATED_BELOW_SUBSTEP};

/// Anchors per particle (its nearest pins through the cloth).
pub const ANCHORS: usize = 2;

/// Relative allowance on every tether's length while constraint corrections are summed
/// compensated (substeps below [`COMPENSATED_BELOW_SUBSTEP`]), 2 ppm (about 16 f32 ulps): a
/// particle that a distance constraint holds exactly at the tether's length sits outside it by
/// rounding every other substep, and the tether's projection, rounded again, would undo the
/// sub-ulp corrections the compensated positions keep (a 1 m pendulum ran 0.3 % slow at 1 000
/// substeps). Two millionths of a length is no stretch anyone sees. At longer substeps there
/// are no sub-ulp corrections to keep, and the tethers keep their exact lengths.
pub(crate) const ROUNDING_ALLOWANCE: f32 = 2e-6;

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
    /// The anchors' rest positions in m.
    anchor_rest: Vec<Vec3>,
    /// Number of tethers.
    count: usize,
    /// Every particle's two balls and their meeting circle for the anchors' current positions.
    balls: Balls,
    /// The anchor positions and the length factor `balls` was computed for.
    balls_for: (Vec<Option<Vec3>>, f32, Vec<u32>),
}

/// No anchor (or a held one): a ball that holds everything.
const UNBOUNDED: f32 = 1e18;

/// Per particle (structure of arrays, padded to whole vectors of eight): the balls of its two
/// tethers (a lone tether's ball twice; none: [`UNBOUNDED`]) and the circle where their spheres
/// meet, all fixed while the anchors stay put.
#[derive(Debug, Clone, Default)]
struct Balls {
    a: [Vec<f32>; 3],
    a_radius: Vec<f32>,
    b: [Vec<f32>; 3],
    b_radius: Vec<f32>,
    /// Unit axis from a to b, the circle's centre and radius; `meets` is 1 where the spheres
    /// meet in a circle, 0 elsewhere.
    axis: [Vec<f32>; 3],
    centre: [Vec<f32>; 3],
    circle_radius: Vec<f32>,
    meets: Vec<f32>,
}

/// An edge of the cloth for the distance search: endpoints and rest length in m.
pub(crate) type RestEdge = (u32, u32, f32);

impl Tethers {
    /// Tethers from every particle to its nearest pinned particles through `edges`, measured
    /// on the rest positions `rest`, with particle i's allowed distances scaled by `slack(i)` (≥ 1).
    pub fn build(rest: &[Vec3], pinned: &[bool], edges: impl Iterator<Item = RestEdge>, slack: impl Fn(usize) -> f32) -> Self {
        let n = rest.len();
        let anchors: Vec<u32> = (0..n as u32).filter(|&i| pinned[i as usize]).collect();
        let mut tethers = Tethers {
            slots: vec![[NONE; ANCHORS]; n],
            length: vec![[0.0; ANCHORS]; n],
            anchor_rest: anchors.iter().map(|&a| rest[a as usize]).collect(),
            anchors,
            count: 0,
            balls: Balls::default(),
            balls_for: (Vec::new(), 1.0, Vec::new()),
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
                tethers.length[i][k] = slack(i) * distance;
                tethers.count += 1;
            }
        }
        tethers
    }

    /// Number of tethers.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Particle `i`'s tethers as (anchor particle, allowed distance in m), nearest first: what
    /// the straightforward loop ([`super::reference`]) projects.
    pub fn of(&self, i: usize) -> impl Iterator<Item = (usize, f32)> + '_ {
        let slots = self.slots[i].into_iter().zip(self.length[i]);
        slots
            .filter(|&(slot, _)| slot != NONE)
            .map(|(slot, length)| (self.anchors[slot as usize] as usize, length))
    }

    /// Takes the anchors' positions for the coming frame (`held`, a particle the mouse moves,
    /// is left out) and refreshes every particle's balls if they moved, the substep length
    /// `h` (s) crossed [`COMPENSATED_BELOW_SUBSTEP`] (see [`ROUNDING_ALLOWANCE`]) or the
    /// `exempt` particles (sorted) changed: those are tethered to nothing this frame (the
    /// grabbed patch of a cloth that tears, so a pull can stretch it beyond its hanging
    /// length and tear it).
    pub fn prepare_frame(&mut self, pos: &impl Fn(usize) -> Vec3, held: Option<usize>, exempt: &[u32], h: f32) {
        let anchors: Vec<Option<Vec3>> = self
            .anchors
            .iter()
            .map(|&a| (Some(a as usize) != held).then(|| pos(a as usize)))
            .collect();
        let allowance = if h < COMPENSATED_BELOW_SUBSTEP {
            1.0 + ROUNDING_ALLOWANCE
        } else {
            1.0
        };
        let current = (&self.balls_for.0, self.balls_for.1, &self.balls_for.2[..]);
        if current == (&anchors, allowance, exempt) && self.balls.a_radius.len() >= self.slots.len() {
            return;
        }
        let grow = self.pulled_apart(&anchors);
        let n = self.slots.len().div_ceil(8) * 8;
        let mut balls = Balls::default();
        for i in 0..n {
            let ball = |k: usize| {
                let slot = self
                    .slots
                    .get(i)
                    .filter(|_| exempt.binary_search(&(i as u32)).is_err())
                    .map_or(NONE, |s| s[k]) as usize;
                let anchor = anchors.get(slot).copied().flatten();
                anchor.map(|centre| Ball {
                    centre,
                    radius: self.length[i][k] * grow[slot] * allowance,
                })
            };
            let unbounded = Ball {
                centre: Vec3::ZERO,
                radius: UNBOUNDED,
            };
            let (a, b) = match (ball(0), ball(1)) {
                (Some(a), Some(b)) => (a, b),
                (Some(a), None) | (None, Some(a)) => (a, a),
                (None, None) => (unbounded, unbounded),
            };
            let circle = meeting_circle(a, b);
            balls.push(a, b, circle);
        }
        self.balls = balls;
        self.balls_for = (anchors, allowance, exempt.to_vec());
    }

    /// Per anchor, how much farther it stands from the anchors it shares particles with than
    /// at rest (1 when not farther), for the anchors' current positions `anchors`. When the
    /// user pins a point below where it hung, or pins are dragged apart, the cloth between
    /// those anchors must stretch by that much, so every tether of such an anchor grows by the
    /// same factor. Unscaled, a particle on the line between the anchors could not satisfy
    /// both tethers, and particles beside it were swung about one anchor across neighbours
    /// tethered to the other: the curtain with a pin moved 8 cm down folded over itself in its
    /// plane (724 % strain), then held the whole extension on the edges where the particles'
    /// anchors change (118 %).
    fn pulled_apart(&self, anchors: &[Option<Vec3>]) -> Vec<f32> {
        let mut grow = vec![1.0f32; anchors.len()];
        for slots in &self.slots {
            let [ka, kb] = slots.map(|k| k as usize);
            let (Some(Some(a)), Some(Some(b))) = (anchors.get(ka), anchors.get(kb)) else {
                continue;
            };
            let rest = self.anchor_rest[ka].distance(self.anchor_rest[kb]);
            if rest > 0.0 {
                let factor = a.distance(*b) / rest;
                grow[ka] = grow[ka].max(factor);
                grow[kb] = grow[kb].max(factor);
            }
        }
        grow
    }

    /// The point nearest `x` that particle `i`'s tethers allow this frame (`x` itself for a
    /// particle without tethers): where the soft grab aims it, so the hand never pulls the
    /// cloth beyond its reach ([`crate::sim::solver::SoftGrab`]).
    pub fn reachable(&self, i: usize, x: Vec3) -> Vec3 {
        if i < self.slots.len() && i < self.balls.a_radius.len() {
            self.balls.closest(i, x)
        } else {
            x
        }
    }

    /// Moves the free particles in `range` to the closest point of both their balls (see
    /// [`closest_in_balls`]), eight at a time with AVX2 when `vector` (every particle then, the
    /// last few in a padded vector, so any split of the particles rounds alike).
    ///
    /// # Safety
    /// Every index in `range` must be in bounds of `pos`, no other thread may touch those
    /// particles during the call, [`Self::prepare_frame`] must have run for this frame, and
    /// `vector` needs AVX2.
    pub unsafe fn project(&self, pos: PosPtr, range: Range<usize>, vector: bool) {
        // SAFETY: the caller upholds this function's # Safety contract: every index in `range` must
        // be in bounds of `pos`, no other thread may touch those particles during the call,
        // `Self::prepare_frame` must have run for this frame, and `vector` needs AVX2.
        unsafe {
            let range = range.start..range.end.min(self.slots.len());
            #[cfg(target_arch = "x86_64")]
            if vector {
                return avx2::project(&self.balls, pos, range);
            }
            let _ = vector;
            for i in range {
                let p = pos.get(i);
                if p[3] == 0.0 {
                    continue;
                }
                let x = Vec3::new(p[0], p[1], p[2]);
                let y = self.balls.closest(i, x);
                if y != x {
                    pos.set_xyz(i, y.to_array());
                }
            }
        }
    }
}

/// The circle where the spheres of `a` and `b` meet: unit axis a → b, centre, radius, or
/// `None` if they do not meet in a circle.
pub(crate) fn meeting_circle(a: Ball, b: Ball) -> Option<(Vec3, Vec3, f32)> {
    let axis = b.centre - a.centre;
    let d = axis.length();
    if d <= 0.0 || d > a.radius + b.radius || d < (a.radius - b.radius).abs() {
        return None;
    }
    let n = axis / d;
    // Distance from a's centre to the circle's plane, and the circle's radius.
    let t = (d * d + a.radius * a.radius - b.radius * b.radius) / (2.0 * d);
    let radius = (a.radius * a.radius - t * t).max(0.0).sqrt();
    Some((n, a.centre + n * t, radius))
}

impl Balls {
    fn push(&mut self, a: Ball, b: Ball, circle: Option<(Vec3, Vec3, f32)>) {
        let (n, centre, radius) = circle.unwrap_or((Vec3::ZERO, Vec3::ZERO, 0.0));
        for c in 0..3 {
            self.a[c].push(a.centre[c]);
            self.b[c].push(b.centre[c]);
            self.axis[c].push(n[c]);
            self.centre[c].push(centre[c]);
        }
        self.a_radius.push(a.radius);
        self.b_radius.push(b.radius);
        self.circle_radius.push(radius);
        self.meets.push(if circle.is_some() { 1.0 } else { 0.0 });
    }

    fn ball(centre: &[Vec<f32>; 3], radius: &[f32], i: usize) -> Ball {
        Ball {
            centre: Vec3::new(centre[0][i], centre[1][i], centre[2][i]),
            radius: radius[i],
        }
    }

    /// The closest point to `x` in both of particle `i`'s balls (`x` itself inside both).
    /// The same operations, in the same order, as every lane of the AVX2 pass.
    fn closest(&self, i: usize, x: Vec3) -> Vec3 {
        let a = Self::ball(&self.a, &self.a_radius, i);
        let b = Self::ball(&self.b, &self.b_radius, i);
        let circle = (self.meets[i] > 0.0).then(|| {
            let n = Vec3::new(self.axis[0][i], self.axis[1][i], self.axis[2][i]);
            let centre = Vec3::new(self.centre[0][i], self.centre[1][i], self.centre[2][i]);
            (n, centre, self.circle_radius[i])
        });
        closest_in_balls(x, a, b, circle)
    }
}

/// A tether's allowed region: a ball about the anchor.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ball {
    pub centre: Vec3,
    pub radius: f32,
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

/// The closest point to `x` in the intersection of balls `a` and `b` (`x` itself when inside
/// both). Both tethers are satisfied at once: projecting onto one sphere and then the other
/// would leave a drift along the first sphere every substep, which at a cloth's corner pins
/// never settles. The closest point is the projection onto one ball if that lies in the other,
/// and otherwise the projection onto the `circle` where the spheres meet (axis, centre,
/// radius). Anchors moved apart farther than the tethers reach (no circle) fall back to one
/// projection after the other.
pub(crate) fn closest_in_balls(x: Vec3, a: Ball, b: Ball, circle: Option<(Vec3, Vec3, f32)>) -> Vec3 {
    let (in_a, in_b) = (a.contains(x), b.contains(x));
    if in_a && in_b {
        return x;
    }
    let (onto_a, onto_b) = (a.project(x), b.project(x));
    if !in_a && b.contains(onto_a) {
        return onto_a;
    }
    if !in_b && a.contains(onto_b) {
        return onto_b;
    }
    match circle {
        Some((n, centre, radius)) => {
            let q = x - centre;
            let radial = q - n * q.dot(n);
            let length = radial.length();
            if length > 0.0 {
                centre + radial * (radius / length)
            } else {
                x
            }
        }
        None => b.project(onto_a),
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;
    use std::ops::Range;

    use super::Balls;
    use crate::sim::particles::PosPtr;

    type Xyz = [__m256; 3];

    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); every particle and slot read or written must be in bounds, and no other thread
    /// may touch them during the call.
    #[inline(always)]
    unsafe fn load3(arrays: &[Vec<f32>; 3], i: usize) -> Xyz {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
        // and unshared (see # Safety).
        unsafe {
            [
                _mm256_loadu_ps(arrays[0].as_ptr().add(i)),
                _mm256_loadu_ps(arrays[1].as_ptr().add(i)),
                _mm256_loadu_ps(arrays[2].as_ptr().add(i)),
            ]
        }
    }

    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions).
    #[inline(always)]
    unsafe fn sub(a: Xyz, b: Xyz) -> Xyz {
        // SAFETY: the caller guarantees support for AVX2 (see # Safety).
        unsafe { [_mm256_sub_ps(a[0], b[0]), _mm256_sub_ps(a[1], b[1]), _mm256_sub_ps(a[2], b[2])] }
    }

    /// a·b as glam evaluates it: (x x + y y) + z z.
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions).
    #[inline(always)]
    unsafe fn dot(a: Xyz, b: Xyz) -> __m256 {
        // SAFETY: the caller guarantees support for AVX2 (see # Safety).
        unsafe {
            _mm256_add_ps(
                _mm256_add_ps(_mm256_mul_ps(a[0], b[0]), _mm256_mul_ps(a[1], b[1])),
                _mm256_mul_ps(a[2], b[2]),
            )
        }
    }

    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions).
    #[inline(always)]
    unsafe fn select(m: __m256, if_set: Xyz, otherwise: Xyz) -> Xyz {
        // SAFETY: the caller guarantees support for AVX2 (see # Safety).
        unsafe {
            [
                _mm256_blendv_ps(otherwise[0], if_set[0], m),
                _mm256_blendv_ps(otherwise[1], if_set[1], m),
                _mm256_blendv_ps(otherwise[2], if_set[2], m),
            ]
        }
    }

    /// Ball::contains: |x − c|² ≤ r².
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions).
    #[inline(always)]
    unsafe fn contains(c: Xyz, r: __m256, x: Xyz) -> __m256 {
        // SAFETY: the caller guarantees support for AVX2 (see # Safety).
        unsafe {
            let d = sub(x, c);
            _mm256_cmp_ps::<_CMP_LE_OQ>(dot(d, d), _mm256_mul_ps(r, r))
        }
    }

    /// Ball::project: c + d (r / |d|), x itself where |d| = 0.
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions).
    #[inline(always)]
    unsafe fn onto_ball(c: Xyz, r: __m256, x: Xyz) -> Xyz {
        // SAFETY: the caller guarantees support for AVX2 (see # Safety).
        unsafe { at_distance(c, sub(x, c), r, x) }
    }

    /// c + d (r / |d|): the point at distance r from c toward d, `fallback` where |d| = 0.
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions).
    #[inline(always)]
    unsafe fn at_distance(c: Xyz, d: Xyz, r: __m256, fallback: Xyz) -> Xyz {
        // SAFETY: the caller guarantees support for AVX2 (see # Safety).
        unsafe {
            let length = _mm256_sqrt_ps(dot(d, d));
            let f = _mm256_div_ps(r, length);
            let y = [
                _mm256_add_ps(c[0], _mm256_mul_ps(d[0], f)),
                _mm256_add_ps(c[1], _mm256_mul_ps(d[1], f)),
                _mm256_add_ps(c[2], _mm256_mul_ps(d[2], f)),
            ];
            select(_mm256_cmp_ps::<_CMP_GT_OQ>(length, _mm256_setzero_ps()), y, fallback)
        }
    }

    /// [`super::closest_in_balls`] for particles i..i + 8 at `x`, every branch evaluated and
    /// the scalar code's choice blended in.
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); every particle and slot read or written must be in bounds, and no other thread
    /// may touch them during the call.
    #[inline(always)]
    unsafe fn closest(balls: &Balls, i: usize, x: Xyz) -> Xyz {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
        // and unshared (see # Safety).
        unsafe {
            let (a, ra) = (load3(&balls.a, i), _mm256_loadu_ps(balls.a_radius.as_ptr().add(i)));
            let (b, rb) = (load3(&balls.b, i), _mm256_loadu_ps(balls.b_radius.as_ptr().add(i)));
            let (in_a, in_b) = (contains(a, ra, x), contains(b, rb, x));
            let in_both = _mm256_and_ps(in_a, in_b);
            if _mm256_movemask_ps(in_both) == 0xff {
                return x;
            }
            let (onto_a, onto_b) = (onto_ball(a, ra, x), onto_ball(b, rb, x));
            let take_a = _mm256_andnot_ps(in_a, contains(b, rb, onto_a));
            let take_b = _mm256_andnot_ps(in_b, contains(a, ra, onto_b));
            let settled = _mm256_or_ps(in_both, _mm256_or_ps(take_a, take_b));
            // The circle (or the fallback) only where some lane needs it: most vectors have none.
            let mut y = if _mm256_movemask_ps(settled) == 0xff {
                x
            } else {
                onto_circle_or_both(balls, i, x, (b, rb), onto_a)
            };
            y = select(take_b, onto_b, y);
            y = select(take_a, onto_a, y);
            select(in_both, x, y)
        }
    }

    /// The projection onto the circle where the spheres meet, or where they do not meet onto
    /// ball b after ball a (`onto_a`).
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); every particle and slot read or written must be in bounds, and no other thread
    /// may touch them during the call.
    #[inline(always)]
    unsafe fn onto_circle_or_both(balls: &Balls, i: usize, x: Xyz, (b, rb): (Xyz, __m256), onto_a: Xyz) -> Xyz {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
        // and unshared (see # Safety).
        unsafe {
            let n = load3(&balls.axis, i);
            let centre = load3(&balls.centre, i);
            let radius = _mm256_loadu_ps(balls.circle_radius.as_ptr().add(i));
            let q = sub(x, centre);
            let along = dot(q, n);
            let radial = [
                _mm256_sub_ps(q[0], _mm256_mul_ps(n[0], along)),
                _mm256_sub_ps(q[1], _mm256_mul_ps(n[1], along)),
                _mm256_sub_ps(q[2], _mm256_mul_ps(n[2], along)),
            ];
            let on_circle = at_distance(centre, radial, radius, x);
            let meets = _mm256_cmp_ps::<_CMP_GT_OQ>(_mm256_loadu_ps(balls.meets.as_ptr().add(i)), _mm256_setzero_ps());
            select(meets, on_circle, onto_ball(b, rb, onto_a))
        }
    }

    /// Particles i..i + 8 of `arrays` (x, y, z, w) moved into their balls, the pinned (w = 0)
    /// left where they are.
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); every particle and slot read or written must be in bounds, and no other thread
    /// may touch them during the call.
    #[inline(always)]
    unsafe fn project_vector(balls: &Balls, i: usize, arrays: [*mut f32; 4]) {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
        // and unshared (see # Safety).
        unsafe {
            let x = [_mm256_loadu_ps(arrays[0]), _mm256_loadu_ps(arrays[1]), _mm256_loadu_ps(arrays[2])];
            let free = _mm256_cmp_ps::<_CMP_GT_OQ>(_mm256_loadu_ps(arrays[3]), _mm256_setzero_ps());
            let y = select(free, closest(balls, i, x), x);
            for (c, &array) in arrays.iter().take(3).enumerate() {
                _mm256_storeu_ps(array, y[c]);
            }
        }
    }

    /// [`super::Tethers::project`] with AVX2: whole vectors in place, the last particles of
    /// `range` through a padded copy.
    ///
    /// # Safety
    /// The CPU must support AVX2; every particle and slot read or written must be in bounds, and no
    /// other thread may touch them during the call.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn project(balls: &Balls, pos: PosPtr, range: Range<usize>) {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
        // and unshared (see # Safety).
        unsafe {
            let columns = [pos.x, pos.y, pos.z, pos.w];
            let mut i = range.start;
            while i + 8 <= range.end {
                project_vector(balls, i, columns.map(|array| array.add(i)));
                i += 8;
            }
            let count = range.end - i;
            if count > 0 {
                let mut lanes = [[0f32; 8]; 4];
                for (lane, array) in lanes.iter_mut().zip(columns) {
                    std::ptr::copy_nonoverlapping(array.add(i), lane.as_mut_ptr(), count);
                }
                project_vector(balls, i, lanes.each_mut().map(|lane| lane.as_mut_ptr()));
                for (lane, array) in lanes.iter().zip(columns).take(3) {
                    std::ptr::copy_nonoverlapping(lane.as_ptr(), array.add(i), count);
                }
            }
        }
    }
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
            let edges = &self.neighbour[self.start[node as usize]..self.start[node as usize + 1]];
            // Half the longest edge here: on long thin cells the line to a neighbour across the
            // short side passes a cell's length away, not half the short edge's.
            let width = 0.5 * edges.iter().map(|&(_, length)| length).fold(0.0, f32::max);
            for &(next, length) in edges {
                let there = &found[next as usize];
                if there.len() == ANCHORS || there.iter().any(|&(s, _)| groups[s as usize] == groups[slot as usize]) {
                    continue;
                }
                let target = rest[next as usize];
                let sighted = in_sight && passes_alongside(here, source, target, width);
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
mod tests;
