//! The AVX2 kernel: eight constraints per vector. A batch shares no particle, so the eight
//! lanes never conflict. The levels are projected here, the strips in [`strips`]; the vector
//! loop of the strain statistics ([`crate::sim::stats`]) is here too.

use std::arch::x86_64::*;

use super::super::lanes::{Avx2, Lanes};
use super::kernel::project_slot;
use super::vector::project_lanes;
use super::DistanceBatch;
use crate::sim::particles::PosPtr;
use crate::sim::stats::StrainSums;

mod strips;
pub(super) use strips::project_strips;

/// Eight particles as x, y, z, w vectors.
type Lanes8 = [__m256; 4];

/// Where a vector's eight particles are: loads and stores them.
trait Ends: Copy {
    /// Loads the eight particles.
    ///
    /// # Safety
    /// The CPU must support AVX2, and the eight particles must be in bounds of `pos`, with no
    /// other thread writing them during the call.
    unsafe fn load(self, pos: PosPtr) -> Lanes8;
    /// Stores the eight particles' positions (w is never written).
    ///
    /// # Safety
    /// The CPU must support AVX2, and the eight particles must be in bounds of `pos`, with no
    /// other thread touching them during the call.
    unsafe fn store(self, pos: PosPtr, xyzw: Lanes8);
}

/// Eight consecutive particles from this index: plain loads and stores.
#[derive(Clone, Copy)]
struct Run(usize);

impl Run {
    /// The run at `idx[0..8]`, if those are eight consecutive indices.
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); every particle and slot read or written must be in bounds, and no other
    /// thread may touch them during the call.
    #[inline(always)]
    unsafe fn at(idx: *const u32) -> Option<Self> {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in
        // bounds and unshared (see # Safety).
        unsafe {
            let lanes = _mm256_loadu_si256(idx as *const __m256i);
            let offsets = _mm256_sub_epi32(lanes, _mm256_set1_epi32(*idx as i32));
            let run = _mm256_cmpeq_epi32(offsets, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
            (_mm256_movemask_ps(_mm256_castsi256_ps(run)) == 0xFF).then(|| Run(*idx as usize))
        }
    }
}

impl Ends for Run {
    #[inline(always)]
    unsafe fn load(self, pos: PosPtr) -> Lanes8 {
        // SAFETY: the caller upholds `Ends::load`'s contract (# Safety): the CPU must support
        // AVX2, and the eight particles must be in bounds of `pos`, with no other thread
        // writing them during the call.
        unsafe {
            let i = self.0;
            [
                _mm256_loadu_ps(pos.x.add(i)),
                _mm256_loadu_ps(pos.y.add(i)),
                _mm256_loadu_ps(pos.z.add(i)),
                _mm256_loadu_ps(pos.w.add(i)),
            ]
        }
    }

    #[inline(always)]
    unsafe fn store(self, pos: PosPtr, [x, y, z, _]: Lanes8) {
        // SAFETY: the caller upholds `Ends::store`'s contract (# Safety): the CPU must support
        // AVX2, and the eight particles must be in bounds of `pos`, with no other thread
        // touching them during the call.
        unsafe {
            _mm256_storeu_ps(pos.x.add(self.0), x);
            _mm256_storeu_ps(pos.y.add(self.0), y);
            _mm256_storeu_ps(pos.z.add(self.0), z);
        }
    }
}

/// The first lanes of a run of consecutive particles (the rest of a batch): masked loads
/// and partial stores ([`store_first`]), so the lanes past the run neither read nor write
/// memory. Their zero inverse masses and lengths make them degenerate, so they move nothing.
#[derive(Clone, Copy)]
struct PartialRun {
    first: usize,
    /// Lanes in use (< 8), and as a mask.
    count: usize,
    mask: __m256i,
}

impl PartialRun {
    /// The lanes of `mask` at `idx` (the others are not read), if they are consecutive
    /// indices.
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); every particle and slot read or written must be in bounds, and no other
    /// thread may touch them during the call.
    #[inline(always)]
    unsafe fn at(idx: *const u32, count: usize, mask: __m256i) -> Option<Self> {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in
        // bounds and unshared (see # Safety).
        unsafe {
            let lanes = _mm256_maskload_epi32(idx as *const i32, mask);
            let offsets = _mm256_sub_epi32(lanes, _mm256_set1_epi32(*idx as i32));
            let run = _mm256_cmpeq_epi32(offsets, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
            let run_or_spare = _mm256_or_si256(run, _mm256_xor_si256(mask, _mm256_set1_epi32(-1)));
            (_mm256_movemask_ps(_mm256_castsi256_ps(run_or_spare)) == 0xFF).then_some(PartialRun {
                first: *idx as usize,
                count,
                mask,
            })
        }
    }
}

impl Ends for PartialRun {
    #[inline(always)]
    unsafe fn load(self, pos: PosPtr) -> Lanes8 {
        // SAFETY: the caller upholds `Ends::load`'s contract (# Safety): the CPU must support
        // AVX2, and the eight particles must be in bounds of `pos`, with no other thread
        // writing them during the call.
        unsafe {
            let (i, m) = (self.first, self.mask);
            [
                _mm256_maskload_ps(pos.x.add(i), m),
                _mm256_maskload_ps(pos.y.add(i), m),
                _mm256_maskload_ps(pos.z.add(i), m),
                _mm256_maskload_ps(pos.w.add(i), m),
            ]
        }
    }

    #[inline(always)]
    unsafe fn store(self, pos: PosPtr, [x, y, z, _]: Lanes8) {
        // SAFETY: the caller upholds `Ends::store`'s contract (# Safety): the CPU must support
        // AVX2, and the eight particles must be in bounds of `pos`, with no other thread
        // touching them during the call.
        unsafe {
            store_first(pos.x.add(self.first), x, self.count);
            store_first(pos.y.add(self.first), y, self.count);
            store_first(pos.z.add(self.first), z, self.count);
        }
    }
}

/// Stores the first `count` (< 8) lanes of `v` at `to`: four, two and one at a time, as
/// the bits of `count` say (masked stores are microcoded and slow on AMD).
///
/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions); every particle and slot read or written must be in bounds, and no other thread
/// may touch them during the call.
#[inline(always)]
unsafe fn store_first(to: *mut f32, v: __m256, count: usize) {
    // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
    // and unshared (see # Safety).
    unsafe {
        let (mut to, mut left) = (to, count);
        let mut part = _mm256_castps256_ps128(v);
        if left >= 4 {
            _mm_storeu_ps(to, part);
            (part, to, left) = (_mm256_extractf128_ps::<1>(v), to.add(4), left - 4);
        }
        if left >= 2 {
            _mm_store_sd(to as *mut f64, _mm_castps_pd(part));
            (part, to, left) = (_mm_movehl_ps(part, part), to.add(2), left - 2);
        }
        if left == 1 {
            _mm_store_ss(to, part);
        }
    }
}

/// Eight arbitrary particles `idx[0..8]`, gathered.
///
/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions); every particle and slot read or written must be in bounds, and no other thread
/// may touch them during the call.
#[inline(always)]
unsafe fn gathered(pos: PosPtr, idx: *const u32) -> Lanes8 {
    // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
    // and unshared (see # Safety).
    unsafe {
        [
            Avx2::gather(pos.x, idx),
            Avx2::gather(pos.y, idx),
            Avx2::gather(pos.z, idx),
            Avx2::gather(pos.w, idx),
        ]
    }
}

/// Per-batch inputs of [`project8`]: the metadata arrays of a batch.
#[derive(Clone, Copy)]
struct Slots {
    rest: *const f32,
    compliance: *const f32,
    lambda: *mut f32,
    inv_h2: __m256,
    first: bool,
}

/// One vector's rest lengths, compliances and λ before the projection.
#[derive(Clone, Copy)]
struct Meta {
    rest: __m256,
    compliance: __m256,
    old_lambda: __m256,
}

impl Slots {
    #[inline(always)]
    fn of(batch: &mut DistanceBatch, inv_h2: __m256, first: bool) -> Self {
        Slots {
            rest: batch.rest.as_ptr(),
            compliance: batch.compliance.as_ptr(),
            lambda: batch.lambda.as_mut_ptr(),
            inv_h2,
            first,
        }
    }

    /// Slots j..j + 8 (on the first sweep of a substep λ is taken as 0).
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); every particle and slot read or written must be in bounds, and no other
    /// thread may touch them during the call.
    #[inline(always)]
    unsafe fn load(&self, j: usize) -> Meta {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in
        // bounds and unshared (see # Safety).
        unsafe {
            Meta {
                rest: _mm256_loadu_ps(self.rest.add(j)),
                compliance: _mm256_loadu_ps(self.compliance.add(j)),
                old_lambda: if self.first {
                    _mm256_setzero_ps()
                } else {
                    _mm256_loadu_ps(self.lambda.add(j))
                },
            }
        }
    }

    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); every particle and slot read or written must be in bounds, and no other
    /// thread may touch them during the call.
    #[inline(always)]
    unsafe fn store(&self, j: usize, lambda: __m256) {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in
        // bounds and unshared (see # Safety).
        unsafe {
            _mm256_storeu_ps(self.lambda.add(j), lambda);
        }
    }

    /// The slots of `mask` from j on; the other lanes read as 0 (and so are degenerate).
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); every particle and slot read or written must be in bounds, and no other
    /// thread may touch them during the call.
    #[inline(always)]
    unsafe fn load_masked(&self, j: usize, mask: __m256i) -> Meta {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in
        // bounds and unshared (see # Safety).
        unsafe {
            Meta {
                rest: _mm256_maskload_ps(self.rest.add(j), mask),
                compliance: _mm256_maskload_ps(self.compliance.add(j), mask),
                old_lambda: if self.first {
                    _mm256_setzero_ps()
                } else {
                    _mm256_maskload_ps(self.lambda.add(j), mask)
                },
            }
        }
    }

    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); every particle and slot read or written must be in bounds, and no other
    /// thread may touch them during the call.
    #[inline(always)]
    unsafe fn store_first(&self, j: usize, count: usize, lambda: __m256) {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in
        // bounds and unshared (see # Safety).
        unsafe {
            store_first(self.lambda.add(j), lambda, count);
        }
    }
}

/// Projects eight constraints between the particles `a` and `b`; returns their new λ.
///
/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions); every particle and slot read or written must be in bounds, and no other thread
/// may touch them during the call.
#[inline(always)]
unsafe fn project8(pos: PosPtr, inv_h2: __m256, m: Meta, a: impl Ends, b: impl Ends) -> __m256 {
    // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
    // and unshared (see # Safety).
    unsafe {
        let (moved_a, moved_b, lambda) = project_lanes::<Avx2>(inv_h2, [m.rest, m.compliance, m.old_lambda], a.load(pos), b.load(pos));
        a.store(pos, moved_a);
        b.store(pos, moved_b);
        lambda
    }
}
/// [`project8`] on slots j..j + 8 of `lanes`, storing λ.
///
/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions); every particle and slot read or written must be in bounds, and no other thread
/// may touch them during the call.
#[inline(always)]
unsafe fn project_slots(pos: PosPtr, lanes: &Slots, j: usize, a: impl Ends, b: impl Ends) {
    // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
    // and unshared (see # Safety).
    unsafe {
        lanes.store(j, project8(pos, lanes.inv_h2, lanes.load(j), a, b));
    }
}

/// [`project_batch`] on one batch.
///
/// # Safety
/// As [`super::project_raw`]; the CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn project(pos: PosPtr, batch: &mut DistanceBatch, inv_h2: f32, first: bool) {
    // SAFETY: the caller upholds this function's # Safety contract: as `super::project_raw`;
    // the CPU must support AVX2.
    unsafe {
        project_batch(pos, batch, inv_h2, first);
    }
}

/// [`project_batch`] on batches in order, in one call (a level of a grid is a few vectors).
///
/// # Safety
/// As [`super::project_raw`] for every batch; the CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn project_levels(pos: PosPtr, batches: &mut [DistanceBatch], inv_h2: f32, first: bool) {
    // SAFETY: the caller upholds this function's # Safety contract: as `super::project_raw` for
    // every batch; the CPU must support AVX2.
    unsafe {
        for batch in batches {
            project_batch(pos, batch, inv_h2, first);
        }
    }
}

/// Eight constraints per vector where a vector's endpoints are eight consecutive particles
/// (a row of a grid): plain loads and stores. A contiguous batch reads no indices at all.
/// Other vectors run as eight scalar projections (same operations, same rounding).
///
/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions); every particle and slot read or written must be in bounds, and no other thread
/// may touch them during the call.
#[inline(always)]
pub(super) unsafe fn project_batch(pos: PosPtr, batch: &mut DistanceBatch, inv_h2: f32, first: bool) {
    // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
    // and unshared (see # Safety).
    unsafe {
        let n = batch.id.len();
        let full = n - n % 8;
        if n == 0 {
            return;
        }
        let lanes = Slots::of(batch, _mm256_set1_ps(inv_h2), first);
        if batch.is_contiguous() {
            let (a, b) = (batch.a[0] as usize, batch.b[0] as usize);
            for j in (0..full).step_by(8) {
                project_slots(pos, &lanes, j, Run(a + j), Run(b + j));
            }
        } else {
            let (a, b) = (batch.a.as_ptr(), batch.b.as_ptr());
            for j in (0..full).step_by(8) {
                match (Run::at(a.add(j)), Run::at(b.add(j))) {
                    (Some(ra), Some(rb)) => project_slots(pos, &lanes, j, ra, rb),
                    // Gathers cost more than eight scalar projections on this class of CPU (Zen).
                    _ => (j..j + 8).for_each(|slot| project_slot(pos, batch, slot, inv_h2, first)),
                }
            }
        }
        if full < n {
            project_remainder(pos, batch, full, inv_h2, &lanes);
        }
    }
}

/// The last `n − full` (< 8) constraints: one vector with the spare lanes masked off (they
/// read and write nothing, and being degenerate move nothing) when both ends are runs of
/// consecutive particles, otherwise one at a time.
///
/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions); every particle and slot read or written must be in bounds, and no other thread
/// may touch them during the call.
#[inline(always)]
unsafe fn project_remainder(pos: PosPtr, batch: &mut DistanceBatch, full: usize, inv_h2: f32, lanes: &Slots) {
    // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
    // and unshared (see # Safety).
    unsafe {
        let count = batch.id.len() - full;
        let mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(count as i32), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        let (a, b) = (batch.a.as_ptr().add(full), batch.b.as_ptr().add(full));
        let ends = if batch.is_contiguous() {
            let run = |first: u32| PartialRun {
                first: first as usize,
                count,
                mask,
            };
            Some((run(*a), run(*b)))
        } else {
            PartialRun::at(a, count, mask).zip(PartialRun::at(b, count, mask))
        };
        let Some((ra, rb)) = ends else {
            return (full..full + count).for_each(|slot| project_slot(pos, batch, slot, inv_h2, lanes.first));
        };
        let lambda = project8(pos, lanes.inv_h2, lanes.load_masked(full, mask), ra, rb);
        lanes.store_first(full, count, lambda);
    }
}

/// The [`StrainSums`] of the whole vectors of a batch of stretch edges (contiguous
/// ends as plain loads, others gathered); returns the sums and where the scalar rest starts.
/// Strain is (l − l0)/l0 as the scalar path evaluates it; Σ|strain| is summed per lane in
/// f32, then in f64.
///
/// # Safety
/// Indices in bounds; the CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn strain_sums(pos: PosPtr, batch: &DistanceBatch) -> (StrainSums, usize) {
    // SAFETY: the caller upholds this function's # Safety contract: indices in bounds; the CPU
    // must support AVX2.
    unsafe {
        let n = batch.id.len();
        let full = n - n % 8;
        let zero = _mm256_setzero_ps();
        let (mut max_strain, mut abs_sum, mut max_neg_lambda) = (zero, zero, zero);
        for j in (0..full).step_by(8) {
            let (a, b) = if batch.is_contiguous() {
                (Run(batch.a[0] as usize + j).load(pos), Run(batch.b[0] as usize + j).load(pos))
            } else {
                (gathered(pos, batch.a.as_ptr().add(j)), gathered(pos, batch.b.as_ptr().add(j)))
            };
            let strain = strain8(batch, j, a, b);
            max_strain = _mm256_max_ps(max_strain, strain);
            abs_sum = _mm256_add_ps(abs_sum, _mm256_andnot_ps(_mm256_set1_ps(-0.0), strain));
            let neg_lambda = _mm256_sub_ps(zero, _mm256_loadu_ps(batch.lambda.as_ptr().add(j)));
            max_neg_lambda = _mm256_max_ps(max_neg_lambda, neg_lambda);
        }
        let sums = StrainSums {
            max_strain: to_array(max_strain).into_iter().fold(0.0, f32::max),
            abs_sum: to_array(abs_sum).into_iter().map(f64::from).sum(),
            count: full,
            max_neg_lambda: to_array(max_neg_lambda).into_iter().fold(0.0, f32::max),
        };
        (sums, full)
    }
}

/// The eight lanes of `v`.
///
/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions).
#[inline(always)]
unsafe fn to_array(v: __m256) -> [f32; 8] {
    // SAFETY: the caller guarantees support for AVX2 (see # Safety).
    unsafe {
        let mut out = [0f32; 8];
        _mm256_storeu_ps(out.as_mut_ptr(), v);
        out
    }
}

/// Strains of slots j..j + 8 between the particles `a` and `b`.
///
/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions); every particle and slot read or written must be in bounds, and no other thread
/// may touch them during the call.
#[inline(always)]
unsafe fn strain8(batch: &DistanceBatch, j: usize, [xa, ya, za, _]: Lanes8, [xb, yb, zb, _]: Lanes8) -> __m256 {
    // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
    // and unshared (see # Safety).
    unsafe {
        let (dx, dy, dz) = (_mm256_sub_ps(xa, xb), _mm256_sub_ps(ya, yb), _mm256_sub_ps(za, zb));
        let len = _mm256_sqrt_ps(_mm256_add_ps(
            _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy)),
            _mm256_mul_ps(dz, dz),
        ));
        let rest = _mm256_loadu_ps(batch.rest.as_ptr().add(j));
        let positive = _mm256_cmp_ps::<_CMP_GT_OQ>(rest, _mm256_setzero_ps());
        _mm256_and_ps(_mm256_div_ps(_mm256_sub_ps(len, rest), rest), positive)
    }
}
