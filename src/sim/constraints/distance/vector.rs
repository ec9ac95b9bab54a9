//! What the vector kernels of both widths share: the projection of one vector of constraints
//! ([`project_lanes`], [`solve`](super::solve) lane by lane), and the tiled loop that runs strips
//! (eight rows side by side with AVX2, sixteen with AVX-512; see
//! [`Group::chained`](crate::sim::constraints::Group::chained)).

use super::super::lanes::Lanes;
use super::{DistanceBatch, MIN_LENGTH};
use crate::sim::particles::PosPtr;

/// The projection of one vector of constraints at either width: from the rest lengths,
/// compliances and λ before it, and the endpoints' x, y, z, w, the moved endpoints and the
/// new λ. The operations of [`solve`](super::solve), in its order: see there.
///
/// # Safety
/// The CPU must support `L`'s width (this is only inlined into a `#[target_feature]` function
/// of that width).
#[inline(always)]
pub(super) unsafe fn project_lanes<L: Lanes>(
    inv_h2: L::V,
    [rest, compliance, old_lambda]: [L::V; 3],
    [xa, ya, za, wa]: [L::V; 4],
    [xb, yb, zb, wb]: [L::V; 4],
) -> ([L::V; 4], [L::V; 4], L::V) {
    // SAFETY: the caller guarantees support for `L`'s width (see # Safety).
    unsafe {
        let zero = L::splat(0.0);
        let (dx, dy, dz) = (L::sub(xa, xb), L::sub(ya, yb), L::sub(za, zb));
        let len2 = L::add(L::add(L::mul(dx, dx), L::mul(dy, dy)), L::mul(dz, dz));
        let len = L::sqrt(len2);
        let alpha_tilde = L::mul(compliance, inv_h2);
        let denom = L::add(L::add(wa, wb), alpha_tilde);
        let num = L::sub(L::sub(rest, len), L::mul(alpha_tilde, old_lambda));
        let valid = L::and(L::gt(len, L::splat(MIN_LENGTH)), L::gt(denom, zero));
        // Degenerate lanes may compute inf or NaN here; the mask turns their f into exactly 0.
        let f = L::keep(L::div(num, L::mul(denom, len)), valid);
        let (fa, fb) = (L::mul(wa, f), L::mul(wb, f));
        let moved_a = [
            L::add(xa, L::mul(fa, dx)),
            L::add(ya, L::mul(fa, dy)),
            L::add(za, L::mul(fa, dz)),
            wa,
        ];
        let moved_b = [
            L::sub(xb, L::mul(fb, dx)),
            L::sub(yb, L::mul(fb, dy)),
            L::sub(zb, L::mul(fb, dz)),
            wb,
        ];
        (moved_a, moved_b, L::add(old_lambda, L::mul(f, len)))
    }
}

/// The extent of a strip (eight rows stored step by step, slot 8 s + k).
#[derive(Clone, Copy)]
pub(super) struct StripShape {
    /// Steps (constraints per lane).
    pub(super) steps: usize,
    /// Index offset from a constraint's first end to its second (1 along a row, 2 for second
    /// neighbours).
    pub(super) offset: usize,
    /// Columns (particles per lane) the strip touches: steps + offset.
    pub(super) columns: usize,
}

impl StripShape {
    pub(super) fn of(strip: &DistanceBatch) -> Self {
        let steps = strip.id.len() / 8;
        let offset = (strip.b[0] - strip.a[0]) as usize;
        StripShape {
            steps,
            offset,
            columns: steps + offset,
        }
    }
}

/// Strips as the tiled loop runs them (eight rows per strip with AVX2, sixteen per strip pair
/// with AVX-512): a ring of two tiles of [`TiledStrip::TILE`] columns.
pub(super) trait TiledStrip {
    /// Columns per tile (the vector width).
    const TILE: usize;
    /// How far ahead (floats) the tile loads prefetch their rows: two tiles. Four strips of
    /// eight rows are 128 streams (rows × x, y, z, w), more than the hardware prefetchers
    /// follow, so on a sheet larger than L2 every tile load used to wait for memory.
    const PREFETCH_AHEAD: usize = 2 * Self::TILE;
    fn shape(&self) -> StripShape;
    /// Loads tile `t` into its half of the ring.
    ///
    /// # Safety
    /// As the strip kernel (`project_strips` of the strip's width): the CPU supports that width,
    /// tile `t` is one of the strip's, and its particles are in bounds of `pos` and touched by no
    /// other thread during the call.
    unsafe fn load(&mut self, pos: PosPtr, t: usize);
    /// Solves step `s`, whose columns are in the ring (`pos` for kernels that want it; the
    /// ring holds everything the step reads and writes).
    ///
    /// # Safety
    /// As [`Self::load`], for the step's tiles, which must be loaded in the ring.
    unsafe fn solve_step(&mut self, pos: PosPtr, s: usize);
    /// Stores tile `t` back from its half of the ring (positions only).
    ///
    /// # Safety
    /// As [`Self::load`], with tile `t` loaded in the ring.
    unsafe fn store(&self, pos: PosPtr, t: usize);
}

/// Runs `N` strips of equal length tile by tile, their steps interleaved (each strip is a
/// chain of dependent steps; several chains keep the divider busy). A step's second end lies
/// at most a tile further, in the next tile, which is loaded before.
///
/// # Safety
/// The CPU must support the strips' width (this is only inlined into the `#[target_feature]`
/// strip kernels of that width); every particle and slot read or written must be in bounds, and
/// no other thread may touch them during the call.
#[inline(always)]
pub(super) unsafe fn solve_side_by_side<S: TiledStrip, const N: usize>(pos: PosPtr, mut in_flight: [S; N]) {
    // SAFETY: the caller guarantees support for the strips' width, every particle and slot
    // touched in bounds and unshared (see # Safety).
    unsafe {
        for strip in in_flight.iter_mut() {
            strip.load(pos, 0);
        }
        let StripShape { steps, columns, .. } = in_flight[0].shape();
        for t in 0..columns.div_ceil(S::TILE) {
            for strip in in_flight.iter_mut() {
                strip.load(pos, t + 1);
            }
            for s in S::TILE * t..steps.min(S::TILE * (t + 1)) {
                for strip in in_flight.iter_mut() {
                    strip.solve_step(pos, s);
                }
            }
            for strip in in_flight.iter() {
                strip.store(pos, t);
            }
        }
    }
}
