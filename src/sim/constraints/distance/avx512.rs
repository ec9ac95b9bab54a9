//! Sixteen constraints per AVX-512F vector: the levels whose slot j joins particles a₀ + j and
//! b₀ + j (a row of a grid), the batch's end masked off, and the strips in pairs (sixteen
//! rows); other levels, and a strip without partner, run the AVX2 kernel. Every lane
//! evaluates [`project_lanes`], so the result is the AVX2 kernel's (and the
//! straightforward loop's) bit for bit.

use std::arch::x86_64::*;

use super::super::lanes::Avx512;
use super::avx2::project_batch;
use super::vector::{project_lanes, solve_side_by_side, StripShape, TiledStrip};
use super::DistanceBatch;
use crate::sim::particles::PosPtr;

/// [`super::avx2::project_levels`] with the contiguous levels sixteen at a time.
///
/// # Safety
/// As [`super::project_raw`] for every batch; the CPU must support AVX-512F, AVX2 and FMA.
#[target_feature(enable = "avx512f,avx2,fma")]
pub(super) unsafe fn project_levels(pos: PosPtr, batches: &mut [DistanceBatch], inv_h2: f32, first: bool) {
    // SAFETY: the caller upholds this function's # Safety contract: as `super::project_raw` for
    // every batch; the CPU must support AVX-512F, AVX2 and FMA.
    unsafe {
        for batch in batches {
            match batch.is_contiguous() {
                true => project_contiguous(pos, batch, _mm512_set1_ps(inv_h2), first),
                false => project_batch(pos, batch, inv_h2, first),
            }
        }
    }
}

/// Slots j..j + 16 of a contiguous batch, those past its end masked off: they load as 0
/// (degenerate, so they move nothing) and store nothing.
///
/// # Safety
/// The CPU must support AVX-512F, AVX2 and FMA (this is only inlined into the module's
/// `#[target_feature]` functions); every particle and slot read or written must be in bounds,
/// and no other thread may touch them during the call.
#[inline(always)]
unsafe fn project_contiguous(pos: PosPtr, batch: &mut DistanceBatch, inv_h2: __m512, first: bool) {
    // SAFETY: the caller guarantees support for AVX-512F, AVX2 and FMA, every particle and slot
    // touched in bounds and unshared (see # Safety).
    unsafe {
        let n = batch.id.len();
        let (a, b) = match (batch.a.first(), batch.b.first()) {
            (Some(&a), Some(&b)) => (a as usize, b as usize),
            _ => return,
        };
        let (rest, compliance, lambda) = (batch.rest.as_ptr(), batch.compliance.as_ptr(), batch.lambda.as_mut_ptr());
        for j in (0..n).step_by(16) {
            let mask = if n - j >= 16 { u16::MAX } else { (1u16 << (n - j)) - 1 };
            let old_lambda = if first {
                _mm512_setzero_ps()
            } else {
                _mm512_maskz_loadu_ps(mask, lambda.add(j))
            };
            let meta = [
                _mm512_maskz_loadu_ps(mask, rest.add(j)),
                _mm512_maskz_loadu_ps(mask, compliance.add(j)),
                old_lambda,
            ];
            let (ends_a, ends_b) = (masked_particles(pos, a + j, mask), masked_particles(pos, b + j, mask));
            let (moved_a, moved_b, new_lambda) = project_lanes::<Avx512>(inv_h2, meta, ends_a, ends_b);
            for (i, moved) in [(a + j, moved_a), (b + j, moved_b)] {
                for (c, v) in [pos.x, pos.y, pos.z].into_iter().zip(moved) {
                    _mm512_mask_storeu_ps(c.add(i), mask, v);
                }
            }
            _mm512_mask_storeu_ps(lambda.add(j), mask, new_lambda);
        }
    }
}

/// Particles `i …` (the lanes of `mask`) as x, y, z, w vectors.
///
/// # Safety
/// The CPU must support AVX-512F, AVX2 and FMA (this is only inlined into the module's
/// `#[target_feature]` functions); every particle and slot read or written must be in bounds,
/// and no other thread may touch them during the call.
#[inline(always)]
unsafe fn masked_particles(pos: PosPtr, i: usize, mask: u16) -> [__m512; 4] {
    // SAFETY: the caller guarantees support for AVX-512F, AVX2 and FMA, every particle and slot
    // touched in bounds and unshared (see # Safety).
    unsafe {
        let mut lanes = [_mm512_setzero_ps(); 4];
        for (lane, c) in lanes.iter_mut().zip([pos.x, pos.y, pos.z, pos.w]) {
            *lane = _mm512_maskz_loadu_ps(mask, c.add(i));
        }
        lanes
    }
}

/// [`super::avx2::project_strips`] with strips paired: two strips of eight rows are one of
/// sixteen lanes, its tiles sixteen columns wide and transposed 16 × 16; two pairs run
/// interleaved step by step (four chains, as the AVX2 loop). A strip left without a partner
/// runs the AVX2 loop. Each lane still solves its row left to right with the same
/// operations, so the result is the AVX2 loop's bit for bit.
///
/// # Safety
/// As [`super::project_group`]; the CPU must support AVX-512F, AVX2 and FMA.
#[target_feature(enable = "avx512f,avx2,fma")]
pub(super) unsafe fn project_strips(pos: PosPtr, strips: &mut [DistanceBatch], inv_h2: f32, first: bool) {
    // SAFETY: the caller upholds this function's # Safety contract: as `super::project_group`;
    // the CPU must support AVX-512F, AVX2 and FMA.
    unsafe {
        let inv_h2_lanes = _mm512_set1_ps(inv_h2);
        let mut quads = strips.chunks_exact_mut(4);
        for quad in &mut quads {
            let [a, b, c, d] = quad else { unreachable!() };
            solve_side_by_side(
                pos,
                [StripPair::new(a, b, inv_h2_lanes, first), StripPair::new(c, d, inv_h2_lanes, first)],
            );
        }
        let rest = quads.into_remainder();
        let paired = rest.len() / 2 * 2;
        if let [a, b] = &mut rest[..paired] {
            solve_side_by_side(pos, [StripPair::new(a, b, inv_h2_lanes, first)]);
        }
        super::avx2::project_strips(pos, &mut rest[paired..], inv_h2, first);
    }
}

/// Two strips of equal length side by side: lanes 0–7 are the first strip's rows, 8–15
/// the second's.
struct StripPair {
    /// First particle of each lane's row.
    first: [usize; 16],
    shape: StripShape,
    /// Rest lengths, compliances and λ of the two strips (slot 8 s + k: lane k, step s).
    rest: [*const f32; 2],
    compliance: [*const f32; 2],
    lambda: [*mut f32; 2],
    inv_h2: __m512,
    first_sweep: bool,
    /// Two tiles of sixteen columns (a ring): per column the x, y, z, w vectors of the
    /// sixteen lanes.
    window: [[__m512; 4]; 32],
}

impl StripPair {
    /// # Safety
    /// The CPU must support AVX-512F, AVX2 and FMA (this is only inlined into the module's
    /// `#[target_feature]` functions); every particle and slot read or written must be in
    /// bounds, and no other thread may touch them during the call.
    #[inline(always)]
    unsafe fn new(a: &mut DistanceBatch, b: &mut DistanceBatch, inv_h2: __m512, first_sweep: bool) -> Self {
        // SAFETY: the caller guarantees support for AVX-512F, AVX2 and FMA, every particle and
        // slot touched in bounds and unshared (see # Safety).
        unsafe {
            debug_assert_eq!(a.id.len(), b.id.len(), "paired strips have equal length");
            StripPair {
                first: std::array::from_fn(|k| if k < 8 { a.a[k] } else { b.a[k - 8] } as usize),
                shape: StripShape::of(a),
                rest: [a.rest.as_ptr(), b.rest.as_ptr()],
                compliance: [a.compliance.as_ptr(), b.compliance.as_ptr()],
                lambda: [a.lambda.as_mut_ptr(), b.lambda.as_mut_ptr()],
                inv_h2,
                first_sweep,
                window: [[_mm512_setzero_ps(); 4]; 32],
            }
        }
    }

    /// The columns of tile `t` that exist.
    #[inline(always)]
    fn mask(&self, t: usize) -> __mmask16 {
        let left = self.shape.columns.saturating_sub(16 * t).min(16);
        (((1u32 << left) - 1) & 0xFFFF) as __mmask16
    }

    /// Slots 8s..8s + 8 of both strips as one vector.
    ///
    /// # Safety
    /// The CPU must support AVX-512F, AVX2 and FMA (this is only inlined into the module's
    /// `#[target_feature]` functions); every particle and slot read or written must be in
    /// bounds, and no other thread may touch them during the call.
    #[inline(always)]
    unsafe fn load_slots(from: [*const f32; 2], s: usize) -> __m512 {
        // SAFETY: the caller guarantees support for AVX-512F, AVX2 and FMA, every particle and
        // slot touched in bounds and unshared (see # Safety).
        unsafe {
            let (low, high) = (_mm256_loadu_ps(from[0].add(8 * s)), _mm256_loadu_ps(from[1].add(8 * s)));
            _mm512_castpd_ps(_mm512_insertf64x4::<1>(
                _mm512_castpd256_pd512(_mm256_castps_pd(low)),
                _mm256_castps_pd(high),
            ))
        }
    }
}

impl TiledStrip for StripPair {
    const TILE: usize = 16;

    fn shape(&self) -> StripShape {
        self.shape
    }

    /// Columns 16t..16t + 16 of every lane.
    #[inline(always)]
    unsafe fn load(&mut self, pos: PosPtr, t: usize) {
        // SAFETY: the caller upholds `TiledStrip::load`'s contract (# Safety): as the strip
        // kernel (`project_strips` of the strip's width): the CPU supports that width, tile `t`
        // is one of the strip's, and its particles are in bounds of `pos` and touched by no
        // other thread during the call.
        unsafe {
            let (half, mask) = (t % 2, self.mask(t));
            let mut rows = [_mm512_setzero_ps(); 16];
            for (c, p) in [pos.x, pos.y, pos.z, pos.w].into_iter().enumerate() {
                for (row, &first) in rows.iter_mut().zip(&self.first) {
                    let at = p.add(first + 16 * t);
                    _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(Self::PREFETCH_AHEAD) as *const i8);
                    *row = _mm512_maskz_loadu_ps(mask, at);
                }
                for (column, lanes) in transpose16(&rows).into_iter().zip(&mut self.window[16 * half..]) {
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
            let mut columns = [_mm512_setzero_ps(); 16];
            for (c, p) in [pos.x, pos.y, pos.z].into_iter().enumerate() {
                for (column, lanes) in columns.iter_mut().zip(&self.window[16 * (t % 2)..]) {
                    *column = lanes[c];
                }
                for (row, &first) in transpose16(&columns).iter().zip(&self.first) {
                    _mm512_mask_storeu_ps(p.add(first + 16 * t), mask, *row);
                }
            }
        }
    }

    #[inline(always)]
    unsafe fn solve_step(&mut self, _: PosPtr, s: usize) {
        // SAFETY: the caller upholds `TiledStrip::solve_step`'s contract (# Safety): as
        // `Self::load`, for the step's tiles, which must be loaded in the ring.
        unsafe {
            let (a, b) = (s % 32, (s + self.shape.offset) % 32);
            let old_lambda = match self.first_sweep {
                true => _mm512_setzero_ps(),
                false => Self::load_slots(self.lambda.map(|p| p as *const f32), s),
            };
            let meta = [Self::load_slots(self.rest, s), Self::load_slots(self.compliance, s), old_lambda];
            let (moved_a, moved_b, lambda) = project_lanes::<Avx512>(self.inv_h2, meta, self.window[a], self.window[b]);
            self.window[a][..3].copy_from_slice(&moved_a[..3]);
            self.window[b][..3].copy_from_slice(&moved_b[..3]);
            _mm256_storeu_ps(self.lambda[0].add(8 * s), _mm512_castps512_ps256(lambda));
            let high = _mm512_extractf64x4_pd::<1>(_mm512_castps_pd(lambda));
            _mm256_storeu_ps(self.lambda[1].add(8 * s), _mm256_castpd_ps(high));
        }
    }
}

/// Transposes sixteen rows of sixteen floats (its own inverse): pairs of rows interleaved
/// by 32 and 64 bits, then 128-bit lanes gathered across the four quarters.
///
/// # Safety
/// The CPU must support AVX-512F, AVX2 and FMA (this is only inlined into the module's
/// `#[target_feature]` functions).
#[inline(always)]
unsafe fn transpose16(r: &[__m512; 16]) -> [__m512; 16] {
    // SAFETY: the caller guarantees support for AVX-512F, AVX2 and FMA (see # Safety).
    unsafe {
        let pd = _mm512_castps_pd;
        let ps = _mm512_castpd_ps;
        let mut t = [_mm512_setzero_ps(); 16];
        for i in 0..8 {
            t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
            t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
        }
        // u[4i + m], quarter q: rows 4i..4i + 4 of column 4q + m.
        let mut u = [_mm512_setzero_ps(); 16];
        for i in 0..4 {
            u[4 * i] = ps(_mm512_unpacklo_pd(pd(t[4 * i]), pd(t[4 * i + 2])));
            u[4 * i + 1] = ps(_mm512_unpackhi_pd(pd(t[4 * i]), pd(t[4 * i + 2])));
            u[4 * i + 2] = ps(_mm512_unpacklo_pd(pd(t[4 * i + 1]), pd(t[4 * i + 3])));
            u[4 * i + 3] = ps(_mm512_unpackhi_pd(pd(t[4 * i + 1]), pd(t[4 * i + 3])));
        }
        let mut columns = [_mm512_setzero_ps(); 16];
        for m in 0..4 {
            let even = (
                _mm512_shuffle_f32x4::<0x88>(u[m], u[4 + m]),
                _mm512_shuffle_f32x4::<0x88>(u[8 + m], u[12 + m]),
            );
            let odd = (
                _mm512_shuffle_f32x4::<0xDD>(u[m], u[4 + m]),
                _mm512_shuffle_f32x4::<0xDD>(u[8 + m], u[12 + m]),
            );
            columns[m] = _mm512_shuffle_f32x4::<0x88>(even.0, even.1);
            columns[8 + m] = _mm512_shuffle_f32x4::<0xDD>(even.0, even.1);
            columns[4 + m] = _mm512_shuffle_f32x4::<0x88>(odd.0, odd.1);
            columns[12 + m] = _mm512_shuffle_f32x4::<0xDD>(odd.0, odd.1);
        }
        columns
    }
}
