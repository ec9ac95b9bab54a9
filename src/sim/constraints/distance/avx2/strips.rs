//! The AVX2 strip kernel: eight rows of a grid side by side, each a lane solved left to
//! right, loaded a tile of eight columns at a time and transposed (see
//! [`solve_side_by_side`]).

use std::arch::x86_64::*;

use super::super::vector::{solve_side_by_side, StripShape, TiledStrip};
use super::super::DistanceBatch;
use super::{project_slots, store_first, Ends, Lanes8, Slots};
use crate::sim::particles::PosPtr;

/// A column of a strip held in a buffer: the x, y, z, w vectors of eight lanes.
#[derive(Clone, Copy)]
struct Column(*mut Lanes8);

impl Ends for Column {
    #[inline(always)]
    unsafe fn load(self, _: PosPtr) -> Lanes8 {
        // SAFETY: the caller upholds `Ends::load`'s contract (# Safety): the CPU must support
        // AVX2, and the eight particles must be in bounds of `pos`, with no other thread
        // writing them during the call.
        unsafe { *self.0 }
    }

    #[inline(always)]
    unsafe fn store(self, _: PosPtr, [x, y, z, _]: Lanes8) {
        // SAFETY: the caller upholds `Ends::store`'s contract (# Safety): the CPU must support
        // AVX2, and the eight particles must be in bounds of `pos`, with no other thread
        // touching them during the call.
        unsafe {
            let column = &mut *self.0;
            (column[0], column[1], column[2]) = (x, y, z);
        }
    }
}

/// Transposes eight rows of eight floats. (Plain statements: a closure would not inherit
/// the caller's AVX2 and its intrinsics would become calls.)
///
/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions).
#[inline(always)]
unsafe fn transpose8(r: &[__m256; 8]) -> [__m256; 8] {
    // SAFETY: the caller guarantees support for AVX2 (see # Safety).
    unsafe {
        let (t0, t1) = (_mm256_unpacklo_ps(r[0], r[1]), _mm256_unpackhi_ps(r[0], r[1]));
        let (t2, t3) = (_mm256_unpacklo_ps(r[2], r[3]), _mm256_unpackhi_ps(r[2], r[3]));
        let (t4, t5) = (_mm256_unpacklo_ps(r[4], r[5]), _mm256_unpackhi_ps(r[4], r[5]));
        let (t6, t7) = (_mm256_unpacklo_ps(r[6], r[7]), _mm256_unpackhi_ps(r[6], r[7]));
        let (u0, u1) = (_mm256_shuffle_ps::<0x44>(t0, t2), _mm256_shuffle_ps::<0xEE>(t0, t2));
        let (u2, u3) = (_mm256_shuffle_ps::<0x44>(t1, t3), _mm256_shuffle_ps::<0xEE>(t1, t3));
        let (u4, u5) = (_mm256_shuffle_ps::<0x44>(t4, t6), _mm256_shuffle_ps::<0xEE>(t4, t6));
        let (u6, u7) = (_mm256_shuffle_ps::<0x44>(t5, t7), _mm256_shuffle_ps::<0xEE>(t5, t7));
        [
            _mm256_permute2f128_ps::<0x20>(u0, u4),
            _mm256_permute2f128_ps::<0x20>(u1, u5),
            _mm256_permute2f128_ps::<0x20>(u2, u6),
            _mm256_permute2f128_ps::<0x20>(u3, u7),
            _mm256_permute2f128_ps::<0x31>(u0, u4),
            _mm256_permute2f128_ps::<0x31>(u1, u5),
            _mm256_permute2f128_ps::<0x31>(u2, u6),
            _mm256_permute2f128_ps::<0x31>(u3, u7),
        ]
    }
}

/// One strip in flight: its lanes' first particles, and a ring of sixteen columns (two
/// tiles of eight; column c at `c % 16`) in lane-vector form.
struct Strip {
    first: [usize; 8],
    shape: StripShape,
    lanes: Slots,
    window: [Lanes8; 16],
}

impl Strip {
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); every particle and slot read or written must be in bounds, and no other
    /// thread may touch them during the call.
    #[inline(always)]
    unsafe fn new(batch: &mut DistanceBatch, inv_h2: __m256, first: bool) -> Self {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in
        // bounds and unshared (see # Safety).
        unsafe {
            Strip {
                first: std::array::from_fn(|k| batch.a[k] as usize),
                shape: StripShape::of(batch),
                lanes: Slots::of(batch, inv_h2, first),
                window: [[_mm256_setzero_ps(); 4]; 16],
            }
        }
    }

    /// Mask of the columns of tile `t` that exist, or `None` when all eight do (plain loads
    /// and stores: masked stores are slow on AMD).
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); every particle and slot read or written must be in bounds, and no other
    /// thread may touch them during the call.
    #[inline(always)]
    unsafe fn mask(&self, t: usize) -> Option<__m256i> {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in
        // bounds and unshared (see # Safety).
        unsafe {
            let left = self.shape.columns.saturating_sub(8 * t).min(8) as i32;
            if left == 8 {
                return None;
            }
            Some(_mm256_cmpgt_epi32(
                _mm256_set1_epi32(left),
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            ))
        }
    }
}

impl TiledStrip for Strip {
    const TILE: usize = 8;

    fn shape(&self) -> StripShape {
        self.shape
    }

    /// Columns 8t..8t+8 of every lane.
    #[inline(always)]
    unsafe fn load(&mut self, pos: PosPtr, t: usize) {
        // SAFETY: the caller upholds `TiledStrip::load`'s contract (# Safety): as the strip
        // kernel (`project_strips` of the strip's width): the CPU supports that width, tile `t`
        // is one of the strip's, and its particles are in bounds of `pos` and touched by no
        // other thread during the call.
        unsafe {
            let half = t % 2;
            let mask = self.mask(t);
            let mut rows = [_mm256_setzero_ps(); 8];
            for (c, p) in [pos.x, pos.y, pos.z, pos.w].into_iter().enumerate() {
                for (row, &first) in rows.iter_mut().zip(&self.first) {
                    let at = p.add(first + 8 * t);
                    _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(Self::PREFETCH_AHEAD) as *const i8);
                    *row = match mask {
                        None => _mm256_loadu_ps(at),
                        Some(mask) => _mm256_maskload_ps(at, mask),
                    };
                }
                for (column, lanes) in transpose8(&rows).into_iter().zip(&mut self.window[8 * half..]) {
                    lanes[c] = column;
                }
            }
        }
    }

    #[inline(always)]
    unsafe fn store(&self, pos: PosPtr, t: usize) {
        // SAFETY: the caller upholds `TiledStrip::store`'s contract (# Safety): as
        // `Self::load`, with tile `t` loaded in the ring.
        unsafe {
            let mask = self.mask(t);
            let mut columns = [_mm256_setzero_ps(); 8];
            for (c, p) in [pos.x, pos.y, pos.z].into_iter().enumerate() {
                for (column, lanes) in columns.iter_mut().zip(&self.window[8 * (t % 2)..]) {
                    *column = lanes[c];
                }
                let rows = transpose8(&columns);
                for (k, &row) in rows.iter().enumerate() {
                    match mask {
                        None => _mm256_storeu_ps(p.add(self.first[k] + 8 * t), row),
                        Some(_) => store_first(p.add(self.first[k] + 8 * t), row, self.shape.columns - 8 * t),
                    }
                }
            }
        }
    }

    /// Slots 8s..8s + 8.
    #[inline(always)]
    unsafe fn solve_step(&mut self, pos: PosPtr, s: usize) {
        // SAFETY: the caller upholds `TiledStrip::solve_step`'s contract (# Safety): as
        // `Self::load`, for the step's tiles, which must be loaded in the ring.
        unsafe {
            let window = self.window.as_mut_ptr();
            let (a, b) = (Column(window.add(s % 16)), Column(window.add((s + self.shape.offset) % 16)));
            project_slots(pos, &self.lanes, 8 * s, a, b);
        }
    }
}

/// Strips four at a time: per tile of eight columns, load (eight row segments per lane,
/// transposed), solve the tile's steps with the strips interleaved step by step (each
/// strip is a chain of dependent steps; four chains keep the divider busy), store. A step's
/// second end lies at most eight columns further, in the next tile, which is loaded before.
///
/// # Safety
/// As [`project_group`](super::super::project_group); the CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(in super::super) unsafe fn project_strips(pos: PosPtr, strips: &mut [DistanceBatch], inv_h2: f32, first: bool) {
    // SAFETY: the caller upholds this function's # Safety contract: as `project_group`;
    // the CPU must support AVX2.
    unsafe {
        let inv_h2 = _mm256_set1_ps(inv_h2);
        // (No closure for `Strip::new`: a closure would not inherit AVX2.)
        for chunk in strips.chunks_mut(4) {
            match chunk {
                [a, b, c, d] => solve_side_by_side(
                    pos,
                    [
                        Strip::new(a, inv_h2, first),
                        Strip::new(b, inv_h2, first),
                        Strip::new(c, inv_h2, first),
                        Strip::new(d, inv_h2, first),
                    ],
                ),
                [a, b, c] => solve_side_by_side(
                    pos,
                    [
                        Strip::new(a, inv_h2, first),
                        Strip::new(b, inv_h2, first),
                        Strip::new(c, inv_h2, first),
                    ],
                ),
                [a, b] => solve_side_by_side(pos, [Strip::new(a, inv_h2, first), Strip::new(b, inv_h2, first)]),
                [a] => solve_side_by_side(pos, [Strip::new(a, inv_h2, first)]),
                _ => {}
            }
        }
    }
}
