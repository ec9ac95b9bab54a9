//! One vector kernel, two widths: the operations a constraint kernel needs, on eight lanes
//! (AVX2 + FMA, `__m256`) or sixteen (AVX-512F, `__m512`).
//!
//! A kernel written against [`Lanes`] compiles to either width. Each arithmetic method is the
//! same IEEE operation at both widths, and the masks select the same lanes (a masked blend
//! where AVX2 has `blendv`, a zero-masking move where it has an `and` with a comparison
//! mask), so a lane rounds identically at either width and the two kernels agree bit for bit.
//!
//! The methods are `#[inline(always)]` and carry no target feature of their own: they are only
//! ever inlined into a `#[target_feature]` entry point of the matching width, which is where
//! the intrinsics get their instructions. For the same reason no intrinsic (nor a method here)
//! is called inside a closure or `array::map` in the kernels: a closure is a function of its own,
//! without the entry point's target features, and where the compiler does not inline it the
//! intrinsics stay calls (one such build ran the hinge kernel fifteen times slower). Loops and
//! `#[inline(always)]` functions are used instead.

use std::arch::x86_64::*;

use crate::sim::particles::AosPtr;

/// A SIMD width and its instructions.
///
/// Every method is `unsafe`: it needs a CPU with the width's features (AVX2 and FMA for [`Avx2`],
/// AVX-512F for [`Avx512`]), and, carrying no target feature itself, is only to be inlined into a
/// `#[target_feature]` function of that width (see the module docs). The methods taking pointers
/// say in their `# Safety` what they must point to.
pub(crate) trait Lanes: Copy {
    /// f32 lanes.
    type V: Copy;
    /// One bit (AVX-512) or one all-ones lane (AVX2) per lane that passed a comparison.
    type M: Copy;
    /// Lanes per vector.
    const WIDTH: usize;

    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn splat(x: f32) -> Self::V;
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]), and `p` must be valid for reading
    /// `WIDTH` f32.
    unsafe fn load(p: *const f32) -> Self::V;
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]), and `p` must be valid for writing
    /// `WIDTH` f32.
    unsafe fn store(p: *mut f32, v: Self::V);
    /// Lanes `base[idx[l]]`.
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]), `idx` must be valid for reading
    /// `WIDTH` indices, and every `base[idx[l]]` must be readable.
    unsafe fn gather(base: *const f32, idx: *const u32) -> Self::V;
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn sub(a: Self::V, b: Self::V) -> Self::V;
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn mul(a: Self::V, b: Self::V) -> Self::V;
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn div(a: Self::V, b: Self::V) -> Self::V;
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn sqrt(a: Self::V) -> Self::V;
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn min(a: Self::V, b: Self::V) -> Self::V;
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn max(a: Self::V, b: Self::V) -> Self::V;
    /// a·b + c, one rounding.
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn fmadd(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// a·b − c, one rounding.
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn fmsub(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// −(a·b) + c, one rounding.
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn fnmadd(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// −(a·b) − c, one rounding.
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn fnmsub(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// |a| (sign bit cleared).
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn abs(a: Self::V) -> Self::V;
    /// `magnitude` with the sign bit of `sign` or-ed in.
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn or_sign(magnitude: Self::V, sign: Self::V) -> Self::V;
    /// a > b (ordered, quiet).
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn gt(a: Self::V, b: Self::V) -> Self::M;
    /// a ≥ b (ordered, quiet).
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn ge(a: Self::V, b: Self::V) -> Self::M;
    /// a < b (ordered, quiet).
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn lt(a: Self::V, b: Self::V) -> Self::M;
    /// a ≤ b (ordered, quiet).
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn le(a: Self::V, b: Self::V) -> Self::M;
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn and(a: Self::M, b: Self::M) -> Self::M;
    /// Whether any lane is set.
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn any(m: Self::M) -> bool;
    /// `if_set` in the lanes of `m`, `otherwise` elsewhere.
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn select(m: Self::M, if_set: Self::V, otherwise: Self::V) -> Self::V;
    /// `v` in the lanes of `m`, +0 elsewhere.
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn keep(v: Self::V, m: Self::M) -> Self::V;
    /// Particles `idx[0..WIDTH]` of an `[x, y, z, w]` array as x, y, z, w vectors.
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]), `idx` must be valid for reading
    /// `WIDTH` indices, and each must be a particle in bounds of `base` that no other thread
    /// writes.
    unsafe fn load_aos(base: AosPtr, idx: *const u32) -> [Self::V; 4];
    /// Stores x, y, z, w vectors to particles `idx[0..WIDTH]` of an `[x, y, z, w]` array, lane
    /// by lane (a particle repeated in lanes holding equal values is stored twice alike).
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]), `idx` must be valid for reading
    /// `WIDTH` indices, distinct or repeated only with equal values, and each must be a particle
    /// in bounds of `base` that no other thread touches.
    unsafe fn store_aos(base: AosPtr, idx: *const u32, xyzw: [Self::V; 4]);
    /// 4 × 4 transposes in every 128-bit quarter: rows [a_l | a_{l+4} | …] of [x, y, z, w]
    /// become x, y, z, w vectors of lanes 0, 1, 2, 3 | 4, 5, 6, 7 | …, and back (the transpose
    /// is its own inverse).
    ///
    /// # Safety
    /// The CPU must support the width's features (see [`Lanes`]).
    unsafe fn transpose(rows: [Self::V; 4]) -> [Self::V; 4];
}

/// Particle `idx[l]` of an `[x, y, z, w]` array (see the module docs on why not a closure).
///
/// # Safety
/// `idx.add(l)` must be readable, and the particle it names in bounds of `base` and not written
/// by another thread during the call.
#[inline(always)]
unsafe fn aos_particle(base: AosPtr, idx: *const u32, l: usize) -> __m128 {
    // SAFETY: the caller guarantees `idx[l]` readable and particle `idx[l]` in bounds and not
    // written by another thread (see # Safety); `_mm_loadu_ps` is SSE, baseline on x86-64.
    unsafe { _mm_loadu_ps(base.0.add(*idx.add(l) as usize) as *const f32) }
}

/// Eight lanes: AVX2 + FMA.
#[derive(Clone, Copy)]
pub(crate) struct Avx2;

/// Sixteen lanes: AVX-512F.
#[derive(Clone, Copy)]
pub(crate) struct Avx512;

/// [`Lanes::transpose`]: the instructions work per 128-bit quarter at either width.
macro_rules! transpose4 {
    ($rows:expr, $unpacklo:ident, $unpackhi:ident, $shuffle:ident) => {{
        let [r0, r1, r2, r3] = $rows;
        let (t0, t1) = ($unpacklo(r0, r1), $unpacklo(r2, r3));
        let (t2, t3) = ($unpackhi(r0, r1), $unpackhi(r2, r3));
        [
            $shuffle::<0x44>(t0, t1),
            $shuffle::<0xEE>(t0, t1),
            $shuffle::<0x44>(t2, t3),
            $shuffle::<0xEE>(t2, t3),
        ]
    }};
}

impl Lanes for Avx2 {
    type V = __m256;
    type M = __m256;
    const WIDTH: usize = 8;

    #[inline(always)]
    unsafe fn splat(x: f32) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::splat`'s # Safety).
        unsafe { _mm256_set1_ps(x) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA, and `p` valid for reading eight f32 (see
        // `Lanes::load`'s # Safety).
        unsafe { _mm256_loadu_ps(p) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: __m256) {
        // SAFETY: the caller guarantees AVX2 and FMA, and `p` valid for writing eight f32 (see
        // `Lanes::store`'s # Safety).
        unsafe { _mm256_storeu_ps(p, v) }
    }
    #[inline(always)]
    unsafe fn gather(base: *const f32, idx: *const u32) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA, `idx` valid for reading eight indices and
        // every `base[idx[l]]` readable (see `Lanes::gather`'s # Safety).
        unsafe { _mm256_i32gather_ps::<4>(base, _mm256_loadu_si256(idx as *const __m256i)) }
    }
    #[inline(always)]
    unsafe fn add(a: __m256, b: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::add`'s # Safety).
        unsafe { _mm256_add_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn sub(a: __m256, b: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::sub`'s # Safety).
        unsafe { _mm256_sub_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn mul(a: __m256, b: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::mul`'s # Safety).
        unsafe { _mm256_mul_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn div(a: __m256, b: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::div`'s # Safety).
        unsafe { _mm256_div_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn sqrt(a: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::sqrt`'s # Safety).
        unsafe { _mm256_sqrt_ps(a) }
    }
    #[inline(always)]
    unsafe fn min(a: __m256, b: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::min`'s # Safety).
        unsafe { _mm256_min_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn max(a: __m256, b: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::max`'s # Safety).
        unsafe { _mm256_max_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn fmadd(a: __m256, b: __m256, c: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::fmadd`'s # Safety).
        unsafe { _mm256_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn fmsub(a: __m256, b: __m256, c: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::fmsub`'s # Safety).
        unsafe { _mm256_fmsub_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn fnmadd(a: __m256, b: __m256, c: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::fnmadd`'s # Safety).
        unsafe { _mm256_fnmadd_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn fnmsub(a: __m256, b: __m256, c: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::fnmsub`'s # Safety).
        unsafe { _mm256_fnmsub_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn abs(a: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::abs`'s # Safety).
        unsafe { _mm256_andnot_ps(_mm256_set1_ps(-0.0), a) }
    }
    #[inline(always)]
    unsafe fn or_sign(magnitude: __m256, sign: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::or_sign`'s # Safety).
        unsafe { _mm256_or_ps(magnitude, _mm256_and_ps(sign, _mm256_set1_ps(-0.0))) }
    }
    #[inline(always)]
    unsafe fn gt(a: __m256, b: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::gt`'s # Safety).
        unsafe { _mm256_cmp_ps::<_CMP_GT_OQ>(a, b) }
    }
    #[inline(always)]
    unsafe fn ge(a: __m256, b: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::ge`'s # Safety).
        unsafe { _mm256_cmp_ps::<_CMP_GE_OQ>(a, b) }
    }
    #[inline(always)]
    unsafe fn lt(a: __m256, b: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::lt`'s # Safety).
        unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(a, b) }
    }
    #[inline(always)]
    unsafe fn le(a: __m256, b: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::le`'s # Safety).
        unsafe { _mm256_cmp_ps::<_CMP_LE_OQ>(a, b) }
    }
    #[inline(always)]
    unsafe fn and(a: __m256, b: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::and`'s # Safety).
        unsafe { _mm256_and_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn any(m: __m256) -> bool {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::any`'s # Safety).
        unsafe { _mm256_movemask_ps(m) != 0 }
    }
    #[inline(always)]
    unsafe fn select(m: __m256, if_set: __m256, otherwise: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::select`'s # Safety).
        unsafe { _mm256_blendv_ps(otherwise, if_set, m) }
    }
    #[inline(always)]
    unsafe fn keep(v: __m256, m: __m256) -> __m256 {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::keep`'s # Safety).
        unsafe { _mm256_and_ps(v, m) }
    }

    #[inline(always)]
    unsafe fn transpose(rows: [__m256; 4]) -> [__m256; 4] {
        // SAFETY: the caller guarantees AVX2 and FMA (see `Lanes::transpose`'s # Safety).
        unsafe { transpose4!(rows, _mm256_unpacklo_ps, _mm256_unpackhi_ps, _mm256_shuffle_ps) }
    }

    /// Eight 16-byte loads, paired into 256-bit rows (particles l and l + 4), transposed.
    #[inline(always)]
    unsafe fn load_aos(base: AosPtr, idx: *const u32) -> [__m256; 4] {
        // SAFETY: the caller guarantees AVX2 and FMA, and `idx[0..8]` readable, each a particle in
        // bounds of `base` that no other thread writes (see `Lanes::load_aos`'s # Safety).
        unsafe {
            let mut rows = [_mm256_setzero_ps(); 4];
            for (l, row) in rows.iter_mut().enumerate() {
                *row = _mm256_set_m128(aos_particle(base, idx, l + 4), aos_particle(base, idx, l));
            }
            Self::transpose(rows)
        }
    }

    /// The transpose back, and eight 16-byte stores.
    #[inline(always)]
    unsafe fn store_aos(base: AosPtr, idx: *const u32, xyzw: [__m256; 4]) {
        // SAFETY: the caller guarantees AVX2 and FMA, and `idx[0..8]` readable and distinct (or
        // repeated with equal values), each a particle in bounds of `base` that no other thread
        // touches (see `Lanes::store_aos`'s # Safety).
        unsafe {
            let rows = Self::transpose(xyzw);
            for (l, row) in rows.into_iter().enumerate() {
                let particle = |l: usize| base.0.add(*idx.add(l) as usize) as *mut f32;
                _mm_storeu_ps(particle(l), _mm256_castps256_ps128(row));
                _mm_storeu_ps(particle(l + 4), _mm256_extractf128_ps::<1>(row));
            }
        }
    }
}

impl Lanes for Avx512 {
    type V = __m512;
    type M = __mmask16;
    const WIDTH: usize = 16;

    #[inline(always)]
    unsafe fn splat(x: f32) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::splat`'s # Safety).
        unsafe { _mm512_set1_ps(x) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F, and `p` valid for reading sixteen f32 (see
        // `Lanes::load`'s # Safety).
        unsafe { _mm512_loadu_ps(p) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: __m512) {
        // SAFETY: the caller guarantees AVX-512F, and `p` valid for writing sixteen f32 (see
        // `Lanes::store`'s # Safety).
        unsafe { _mm512_storeu_ps(p, v) }
    }
    #[inline(always)]
    unsafe fn gather(base: *const f32, idx: *const u32) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F, `idx` valid for reading sixteen indices and every
        // `base[idx[l]]` readable (see `Lanes::gather`'s # Safety).
        unsafe { _mm512_i32gather_ps::<4>(_mm512_loadu_si512(idx as *const __m512i), base) }
    }
    #[inline(always)]
    unsafe fn add(a: __m512, b: __m512) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::add`'s # Safety).
        unsafe { _mm512_add_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn sub(a: __m512, b: __m512) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::sub`'s # Safety).
        unsafe { _mm512_sub_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn mul(a: __m512, b: __m512) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::mul`'s # Safety).
        unsafe { _mm512_mul_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn div(a: __m512, b: __m512) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::div`'s # Safety).
        unsafe { _mm512_div_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn sqrt(a: __m512) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::sqrt`'s # Safety).
        unsafe { _mm512_sqrt_ps(a) }
    }
    #[inline(always)]
    unsafe fn min(a: __m512, b: __m512) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::min`'s # Safety).
        unsafe { _mm512_min_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn max(a: __m512, b: __m512) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::max`'s # Safety).
        unsafe { _mm512_max_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn fmadd(a: __m512, b: __m512, c: __m512) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::fmadd`'s # Safety).
        unsafe { _mm512_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn fmsub(a: __m512, b: __m512, c: __m512) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::fmsub`'s # Safety).
        unsafe { _mm512_fmsub_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn fnmadd(a: __m512, b: __m512, c: __m512) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::fnmadd`'s # Safety).
        unsafe { _mm512_fnmadd_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn fnmsub(a: __m512, b: __m512, c: __m512) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::fnmsub`'s # Safety).
        unsafe { _mm512_fnmsub_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn abs(a: __m512) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::abs`'s # Safety).
        unsafe { _mm512_abs_ps(a) }
    }
    #[inline(always)]
    unsafe fn or_sign(magnitude: __m512, sign: __m512) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::or_sign`'s # Safety).
        unsafe {
            // AVX-512F has bitwise operations on integer lanes only (the float ones are AVX-512DQ).
            let sign_bit = _mm512_and_si512(_mm512_castps_si512(sign), _mm512_set1_epi32(i32::MIN));
            _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(magnitude), sign_bit))
        }
    }
    #[inline(always)]
    unsafe fn gt(a: __m512, b: __m512) -> __mmask16 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::gt`'s # Safety).
        unsafe { _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, b) }
    }
    #[inline(always)]
    unsafe fn ge(a: __m512, b: __m512) -> __mmask16 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::ge`'s # Safety).
        unsafe { _mm512_cmp_ps_mask::<_CMP_GE_OQ>(a, b) }
    }
    #[inline(always)]
    unsafe fn lt(a: __m512, b: __m512) -> __mmask16 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::lt`'s # Safety).
        unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, b) }
    }
    #[inline(always)]
    unsafe fn le(a: __m512, b: __m512) -> __mmask16 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::le`'s # Safety).
        unsafe { _mm512_cmp_ps_mask::<_CMP_LE_OQ>(a, b) }
    }
    #[inline(always)]
    unsafe fn and(a: __mmask16, b: __mmask16) -> __mmask16 {
        a & b
    }
    #[inline(always)]
    unsafe fn any(m: __mmask16) -> bool {
        m != 0
    }
    #[inline(always)]
    unsafe fn select(m: __mmask16, if_set: __m512, otherwise: __m512) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::select`'s # Safety).
        unsafe { _mm512_mask_blend_ps(m, otherwise, if_set) }
    }
    #[inline(always)]
    unsafe fn keep(v: __m512, m: __mmask16) -> __m512 {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::keep`'s # Safety).
        unsafe { _mm512_maskz_mov_ps(m, v) }
    }

    #[inline(always)]
    unsafe fn transpose(rows: [__m512; 4]) -> [__m512; 4] {
        // SAFETY: the caller guarantees AVX-512F (see `Lanes::transpose`'s # Safety).
        unsafe { transpose4!(rows, _mm512_unpacklo_ps, _mm512_unpackhi_ps, _mm512_shuffle_ps) }
    }

    /// Sixteen 16-byte loads, four to a 512-bit row (particles l, l + 4, l + 8, l + 12),
    /// transposed.
    #[inline(always)]
    unsafe fn load_aos(base: AosPtr, idx: *const u32) -> [__m512; 4] {
        // SAFETY: the caller guarantees AVX-512F, and `idx[0..16]` readable, each a particle in
        // bounds of `base` that no other thread writes (see `Lanes::load_aos`'s # Safety).
        unsafe {
            let mut rows = [_mm512_setzero_ps(); 4];
            for (l, row) in rows.iter_mut().enumerate() {
                let low = _mm256_set_m128(aos_particle(base, idx, l + 4), aos_particle(base, idx, l));
                let high = _mm256_set_m128(aos_particle(base, idx, l + 12), aos_particle(base, idx, l + 8));
                // (`insertf32x8` would need AVX-512DQ.)
                *row = _mm512_castpd_ps(_mm512_insertf64x4::<1>(
                    _mm512_castpd256_pd512(_mm256_castps_pd(low)),
                    _mm256_castps_pd(high),
                ));
            }
            Self::transpose(rows)
        }
    }

    /// The transpose back, and sixteen 16-byte stores.
    #[inline(always)]
    unsafe fn store_aos(base: AosPtr, idx: *const u32, xyzw: [__m512; 4]) {
        // SAFETY: the caller guarantees AVX-512F, and `idx[0..16]` readable and distinct (or
        // repeated with equal values), each a particle in bounds of `base` that no other thread
        // touches (see `Lanes::store_aos`'s # Safety).
        unsafe {
            let rows = Self::transpose(xyzw);
            for (l, row) in rows.into_iter().enumerate() {
                let particle = |l: usize| base.0.add(*idx.add(l) as usize) as *mut f32;
                _mm_storeu_ps(particle(l), _mm512_extractf32x4_ps::<0>(row));
                _mm_storeu_ps(particle(l + 4), _mm512_extractf32x4_ps::<1>(row));
                _mm_storeu_ps(particle(l + 8), _mm512_extractf32x4_ps::<2>(row));
                _mm_storeu_ps(particle(l + 12), _mm512_extractf32x4_ps::<3>(row));
            }
        }
    }
}
