//! Dihedral bending hinges, one colour batch at a time (angles and gradients in
//! [`super::bend`]).

use super::bend::{dihedral_gradients, wrap_angle, DEGENERATE};
use std::ops::Range;

use super::distance::{Kernel, SubstepConstants};
use super::Batch;
use crate::sim::particles::{xyz, AosPtr, ParticleAccess, PosPtr, Positions, VecPtr, Vectors};

/// One hinge as the solver stores it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HingeItem {
    /// p0, p1 (wings), p2, p3 (shared edge), as in [`super::bend`].
    pub particles: [u32; 4],
    /// Rest angle θ0 in radians.
    pub rest_angle: f32,
    /// Effective compliance α in 1/(N·m).
    pub compliance: f32,
}

/// A colour batch of hinges in structure-of-arrays layout: the vector kernel loads eight
/// hinges' indices, rest angles and compliances with one load each.
#[derive(Debug, Default, Clone)]
pub struct HingeBatch {
    /// Particle k of every hinge (the order of [`HingeItem::particles`]).
    pub particles: [Vec<u32>; 4],
    /// Rest angles θ0 in radians.
    pub rest_angle: Vec<f32>,
    /// Effective compliances α in 1/(N·m).
    pub compliance: Vec<f32>,
    /// Lagrange multipliers of the current substep.
    pub lambda: Vec<f32>,
    /// Model id of each slot.
    pub id: Vec<u32>,
}

impl Batch for HingeBatch {
    type Item = HingeItem;

    fn particles(item: &HingeItem) -> &[u32] {
        &item.particles
    }

    fn push(&mut self, id: u32, item: HingeItem) {
        for (column, &p) in self.particles.iter_mut().zip(&item.particles) {
            column.push(p);
        }
        self.rest_angle.push(item.rest_angle);
        self.compliance.push(item.compliance);
        self.lambda.push(0.0);
        self.id.push(id);
    }

    fn swap_remove(&mut self, index: usize) -> Option<u32> {
        for column in &mut self.particles {
            column.swap_remove(index);
        }
        self.rest_angle.swap_remove(index);
        self.compliance.swap_remove(index);
        self.lambda.swap_remove(index);
        self.id.swap_remove(index);
        self.id.get(index).copied()
    }

    fn get(&self, index: usize) -> HingeItem {
        HingeItem {
            particles: self.particles.each_ref().map(|column| column[index]),
            rest_angle: self.rest_angle[index],
            compliance: self.compliance[index],
        }
    }

    fn id(&self, index: usize) -> u32 {
        self.id[index]
    }

    fn len(&self) -> usize {
        self.id.len()
    }
}

impl HingeBatch {
    /// Appends a hinge with model id `id` (what the scheduler does; benches build batches
    /// with it).
    pub fn push_item(&mut self, id: u32, item: HingeItem) {
        Batch::push(self, id, item);
    }
}

/// Projects every hinge of `batch` once with the scalar kernel (safe wrapper of
/// [`project_raw`]; panics on an out-of-range index). On the first sweep of a substep
/// (`first`) λ starts from 0.
pub fn project(pos: &mut Positions, prev: &Vectors, batch: &mut HingeBatch, k: SubstepConstants, first: bool) {
    project_with(Kernel::Scalar, pos, prev, batch, k, first);
}

/// [`project`] with a chosen kernel (benches and tests compare them). Panics on an
/// out-of-range index, an unsupported kernel, or (for a vector kernel) hinges sharing a
/// particle.
pub fn project_with(kernel: Kernel, pos: &mut Positions, prev: &Vectors, batch: &mut HingeBatch, k: SubstepConstants, first: bool) {
    assert!(
        kernel == Kernel::Scalar || Kernel::detect() == kernel,
        "{kernel:?} is not supported here"
    );
    let n = pos.len().min(prev.len());
    let mut seen = vec![false; n];
    for &i in batch.particles.iter().flatten() {
        let i = i as usize;
        assert!(i < n, "particle index out of range");
        assert!(
            kernel == Kernel::Scalar || !std::mem::replace(&mut seen[i], true),
            "hinges share a particle"
        );
    }
    // SAFETY: indices and disjointness checked above; the slices are borrowed exclusively.
    unsafe { project_raw(kernel, pos.raw(), prev.read_only(), batch, k, first) }
}

/// Projects every hinge of `batch` once on raw particle arrays with `kernel` (AVX2 for undamped
/// colour batches; a batch shares no particle, so eight hinges run in lanes).
///
/// # Safety
/// Every particle index in `batch` must be in bounds of `pos` and `prev`, no other thread may
/// touch those particles during the call, `kernel` must be supported by this CPU, and unless
/// it is [`Kernel::Scalar`] no two hinges of the batch may share a particle.
pub(crate) unsafe fn project_raw(kernel: Kernel, pos: PosPtr, prev: VecPtr, batch: &mut HingeBatch, k: SubstepConstants, first: bool) {
    #[cfg(target_arch = "x86_64")]
    if vector_kernel_applies(kernel, k) {
        return avx2::project(pos, batch, k.inv_h2, first);
    }
    project_scalar(pos, prev, batch, 0..batch.len(), k, first)
}

/// Whether hinge batches run in the vector kernel: AVX2 and no constraint damping (the vector
/// kernel has no damping term, which reads the start positions). The solver keeps the
/// `[x, y, z, w]` copy for the hinge phases exactly then.
pub(crate) fn vector_kernel_applies(kernel: Kernel, k: SubstepConstants) -> bool {
    kernel == Kernel::Avx2 && k.damping_over_h == 0.0
}

/// [`project_raw`] on the solver's `[x, y, z, w]` copy of the positions, without damping.
///
/// # Safety
/// As [`project_raw`], with every index in bounds of `pos`; no damping.
pub(crate) unsafe fn project_raw_aos(kernel: Kernel, pos: AosPtr, batch: &mut HingeBatch, k: SubstepConstants, first: bool) {
    debug_assert_eq!(k.damping_over_h, 0.0, "damping reads the start positions");
    #[cfg(target_arch = "x86_64")]
    if vector_kernel_applies(kernel, k) {
        return avx2::project(pos, batch, k.inv_h2, first);
    }
    project_scalar(pos, VecPtr::UNREAD, batch, 0..batch.len(), k, first)
}

/// Copies the positions of particles `range` into the `[x, y, z, w]` copy (before the hinge
/// phases).
///
/// # Safety
/// `range` in bounds of both, no other thread touching those particles, `kernel` supported.
pub(crate) unsafe fn copy_to_aos(kernel: Kernel, pos: PosPtr, copy: AosPtr, range: Range<usize>) {
    let mut scalar_from = range.start;
    #[cfg(target_arch = "x86_64")]
    if kernel == Kernel::Avx2 {
        scalar_from = avx2::copy_to_aos(pos, copy, range.clone());
    }
    (scalar_from..range.end).for_each(|i| *copy.0.add(i) = pos.get(i));
}

/// Copies the positions of particles `range` back from the `[x, y, z, w]` copy (after the hinge
/// phases; w is never changed there).
///
/// # Safety
/// As [`copy_to_aos`].
pub(crate) unsafe fn copy_from_aos(kernel: Kernel, copy: AosPtr, pos: PosPtr, range: Range<usize>) {
    let mut scalar_from = range.start;
    #[cfg(target_arch = "x86_64")]
    if kernel == Kernel::Avx2 {
        scalar_from = avx2::copy_from_aos(copy, pos, range.clone());
    }
    (scalar_from..range.end).for_each(|i| pos.set_xyz(i, xyz(copy.get(i)).to_array()));
}

/// The scalar projection of slots `range` (any kernel, with or without damping).
///
/// # Safety
/// As [`project_raw`].
unsafe fn project_scalar(
    pos: impl ParticleAccess,
    prev: VecPtr,
    batch: &mut HingeBatch,
    range: Range<usize>,
    k: SubstepConstants,
    first: bool,
) {
    for j in range {
        let item = batch.get(j);
        let lambda = &mut batch.lambda[j];
        if first {
            *lambda = 0.0;
        }
        let idx = item.particles.map(|i| i as usize);
        let particles = idx.map(|i| pos.get(i));
        let p = particles.map(xyz);
        let Some((theta, grads)) = dihedral_gradients(p[0], p[1], p[2], p[3]) else {
            continue;
        };
        let w = particles.map(|q| q[3]);
        let weighted: f32 = (0..4).map(|i| w[i] * grads[i].length_squared()).sum();
        let alpha_tilde = item.compliance * k.inv_h2;
        let gamma = item.compliance * k.damping_over_h;
        let denom = (1.0 + gamma) * weighted + alpha_tilde;
        if denom <= 1e-30 || !denom.is_finite() {
            continue;
        }
        let damping = if gamma > 0.0 {
            gamma * (0..4).map(|i| grads[i].dot(p[i] - prev.get(idx[i]))).sum::<f32>()
        } else {
            0.0
        };
        let c = wrap_difference(theta - item.rest_angle);
        let dl = (-c - alpha_tilde * *lambda - damping) / denom;
        *lambda += dl;
        for i in 0..4 {
            let q = p[i] + w[i] * dl * grads[i];
            pos.set_xyz(idx[i], q.to_array());
        }
    }
}

/// [`wrap_angle`] without the floating-point remainder for the usual case: θ and θ0 both lie
/// in (−π, π], so their difference needs at most one turn added or removed.
#[inline]
fn wrap_difference(a: f32) -> f32 {
    use std::f32::consts::{PI, TAU};
    if a > PI && a < 3.0 * PI {
        a - TAU
    } else if a <= -PI && a > -3.0 * PI {
        a + TAU
    } else if a.abs() <= PI {
        a
    } else {
        wrap_angle(a)
    }
}

/// The AVX2 hinge kernel: eight hinges per iteration, with the same formulas as
/// [`angle_and_gradients`] and a vectorised atan2 (Cephes polynomial, about 1e-7 rad).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;
    use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI, TAU};
    use std::mem::MaybeUninit;
    use std::ops::Range;

    use super::super::distance::avx2::{Ends, Gathered, Lanes8};
    use super::{project_scalar, AosPtr, HingeBatch, ParticleAccess, PosPtr, SubstepConstants, VecPtr, DEGENERATE};

    type V3 = [__m256; 3];

    #[inline(always)]
    unsafe fn sub(a: V3, b: V3) -> V3 {
        [_mm256_sub_ps(a[0], b[0]), _mm256_sub_ps(a[1], b[1]), _mm256_sub_ps(a[2], b[2])]
    }

    #[inline(always)]
    unsafe fn scale(a: V3, s: __m256) -> V3 {
        [_mm256_mul_ps(a[0], s), _mm256_mul_ps(a[1], s), _mm256_mul_ps(a[2], s)]
    }

    #[inline(always)]
    unsafe fn dot(a: V3, b: V3) -> __m256 {
        _mm256_fmadd_ps(a[2], b[2], _mm256_fmadd_ps(a[1], b[1], _mm256_mul_ps(a[0], b[0])))
    }

    #[inline(always)]
    unsafe fn cross(a: V3, b: V3) -> V3 {
        [
            _mm256_fmsub_ps(a[1], b[2], _mm256_mul_ps(a[2], b[1])),
            _mm256_fmsub_ps(a[2], b[0], _mm256_mul_ps(a[0], b[2])),
            _mm256_fmsub_ps(a[0], b[1], _mm256_mul_ps(a[1], b[0])),
        ]
    }

    /// −(s·a + t·b).
    #[inline(always)]
    unsafe fn neg_combine(s: __m256, a: V3, t: __m256, b: V3) -> V3 {
        let c = |i: usize| _mm256_fnmsub_ps(s, a[i], _mm256_mul_ps(t, b[i]));
        [c(0), c(1), c(2)]
    }

    /// atan2(y, x) for lanes where x and y are not both zero.
    #[inline(always)]
    unsafe fn atan2(y: __m256, x: __m256) -> __m256 {
        let sign = _mm256_set1_ps(-0.0);
        let (ax, ay) = (_mm256_andnot_ps(sign, x), _mm256_andnot_ps(sign, y));
        let t = _mm256_div_ps(_mm256_min_ps(ax, ay), _mm256_max_ps(ax, ay));
        // atan t on [0, 1]: above tan(π/8) use atan t = π/4 + atan((t − 1)/(t + 1)).
        let big = _mm256_cmp_ps::<_CMP_GT_OQ>(t, _mm256_set1_ps(0.414_213_57));
        let one = _mm256_set1_ps(1.0);
        let u = _mm256_blendv_ps(t, _mm256_div_ps(_mm256_sub_ps(t, one), _mm256_add_ps(t, one)), big);
        let base = _mm256_and_ps(big, _mm256_set1_ps(FRAC_PI_4));
        let z = _mm256_mul_ps(u, u);
        let mut poly = _mm256_set1_ps(8.053_744_5e-2);
        for c in [-1.387_768_6e-1, 1.997_771_1e-1, -3.333_295e-1] {
            poly = _mm256_fmadd_ps(poly, z, _mm256_set1_ps(c));
        }
        let r = _mm256_add_ps(base, _mm256_fmadd_ps(_mm256_mul_ps(poly, z), u, u));
        let r = _mm256_blendv_ps(r, _mm256_sub_ps(_mm256_set1_ps(FRAC_PI_2), r), _mm256_cmp_ps::<_CMP_GT_OQ>(ay, ax));
        let r = _mm256_blendv_ps(
            r,
            _mm256_sub_ps(_mm256_set1_ps(PI), r),
            _mm256_cmp_ps::<_CMP_LT_OQ>(x, _mm256_setzero_ps()),
        );
        _mm256_or_ps(r, _mm256_and_ps(y, sign))
    }

    /// Vectors of eight hinges staged together: the kernel runs each stage over a block before
    /// the next, because one vector's chain (loads, cross products, square root, three
    /// divisions, atan2, another division) is longer than the out-of-order window can hide, while
    /// a stage's iterations are independent and overlap. Hinges of a batch share no particle, so
    /// deferring a block's stores past its loads gives the same result.
    const BLOCK: usize = 4;

    /// One vector after the geometry stage: everything the projection needs but the angle.
    #[derive(Clone, Copy)]
    struct Staged {
        /// Positions and inverse masses of p0…p3.
        q: [[__m256; 4]; 4],
        /// ∇θ with respect to p0…p3.
        grads: [V3; 4],
        /// atan2 arguments: θ = atan2(sin_part, cos_part).
        sin_part: __m256,
        cos_part: __m256,
        /// Σ wᵢ |∇ᵢθ|² + α̃ and α̃ = α / h².
        denom: __m256,
        alpha_tilde: __m256,
        /// All-ones in lanes whose hinge is not degenerate.
        valid: __m256,
    }

    /// Eight particles at a time, in one of the two layouts.
    pub(super) trait Storage: ParticleAccess {
        /// Loads particles `indices[0..8]` as x, y, z, w lanes.
        unsafe fn load8(self, indices: *const u32) -> Lanes8;
        /// Stores the x, y, z lanes to particles `indices[0..8]` (all distinct).
        unsafe fn store8(self, indices: *const u32, xyzw: Lanes8);
    }

    impl Storage for PosPtr {
        #[inline(always)]
        unsafe fn load8(self, indices: *const u32) -> Lanes8 {
            Gathered::at(indices).load(self)
        }

        #[inline(always)]
        unsafe fn store8(self, indices: *const u32, xyzw: Lanes8) {
            Gathered::at(indices).store(self, xyzw)
        }
    }

    impl Storage for AosPtr {
        /// Eight 16-byte loads, paired into 256-bit rows (lanes l and l + 4) and transposed.
        #[inline(always)]
        unsafe fn load8(self, indices: *const u32) -> Lanes8 {
            let rows = [
                self.pair(indices, 0),
                self.pair(indices, 1),
                self.pair(indices, 2),
                self.pair(indices, 3),
            ];
            transpose(rows)
        }

        /// The transpose back, and eight 16-byte stores (w unchanged: the kernel never moves
        /// it, and no other lane touches the particle).
        #[inline(always)]
        unsafe fn store8(self, indices: *const u32, xyzw: Lanes8) {
            let rows = transpose(xyzw);
            for (l, row) in rows.into_iter().enumerate() {
                let (low, high) = (_mm256_castps256_ps128(row), _mm256_extractf128_ps::<1>(row));
                _mm_storeu_ps(self.0.add(*indices.add(l) as usize) as *mut f32, low);
                _mm_storeu_ps(self.0.add(*indices.add(l + 4) as usize) as *mut f32, high);
            }
        }
    }

    impl AosPtr {
        /// Particles `indices[l]` (low half) and `indices[l + 4]` (high half).
        #[inline(always)]
        unsafe fn pair(self, indices: *const u32, l: usize) -> __m256 {
            let low = _mm_loadu_ps(self.0.add(*indices.add(l) as usize) as *const f32);
            let high = _mm_loadu_ps(self.0.add(*indices.add(l + 4) as usize) as *const f32);
            _mm256_set_m128(high, low)
        }
    }

    /// 4 × 4 transpose in each 128-bit half: rows [a_l | a_{l+4}] of [x, y, z, w] become
    /// x, y, z, w vectors of lanes 0…7, and back (the transpose is its own inverse).
    #[inline(always)]
    unsafe fn transpose([r0, r1, r2, r3]: Lanes8) -> Lanes8 {
        let (t0, t1) = (_mm256_unpacklo_ps(r0, r1), _mm256_unpacklo_ps(r2, r3));
        let (t2, t3) = (_mm256_unpackhi_ps(r0, r1), _mm256_unpackhi_ps(r2, r3));
        [
            _mm256_shuffle_ps::<0x44>(t0, t1),
            _mm256_shuffle_ps::<0xEE>(t0, t1),
            _mm256_shuffle_ps::<0x44>(t2, t3),
            _mm256_shuffle_ps::<0xEE>(t2, t3),
        ]
    }

    /// [`super::copy_to_aos`] for the whole vectors of `range`; returns where the scalar rest
    /// starts.
    ///
    /// # Safety
    /// As [`super::copy_to_aos`].
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn copy_to_aos(pos: PosPtr, copy: AosPtr, range: Range<usize>) -> usize {
        let vectors_end = range.end - range.len() % 8;
        for i in (range.start..vectors_end).step_by(8) {
            let rows = transpose([
                _mm256_loadu_ps(pos.x.add(i)),
                _mm256_loadu_ps(pos.y.add(i)),
                _mm256_loadu_ps(pos.z.add(i)),
                _mm256_loadu_ps(pos.w.add(i)),
            ]);
            for (l, row) in rows.into_iter().enumerate() {
                _mm_storeu_ps(copy.0.add(i + l) as *mut f32, _mm256_castps256_ps128(row));
                _mm_storeu_ps(copy.0.add(i + l + 4) as *mut f32, _mm256_extractf128_ps::<1>(row));
            }
        }
        vectors_end
    }

    /// [`super::copy_from_aos`] for the whole vectors of `range`; returns where the scalar
    /// rest starts.
    ///
    /// # Safety
    /// As [`super::copy_to_aos`].
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn copy_from_aos(copy: AosPtr, pos: PosPtr, range: Range<usize>) -> usize {
        let vectors_end = range.end - range.len() % 8;
        for i in (range.start..vectors_end).step_by(8) {
            let rows = [0, 1, 2, 3].map(|l| {
                let low = _mm_loadu_ps(copy.0.add(i + l) as *const f32);
                _mm256_set_m128(_mm_loadu_ps(copy.0.add(i + l + 4) as *const f32), low)
            });
            let [x, y, z, _] = transpose(rows);
            _mm256_storeu_ps(pos.x.add(i), x);
            _mm256_storeu_ps(pos.y.add(i), y);
            _mm256_storeu_ps(pos.z.add(i), z);
        }
        vectors_end
    }

    /// Particle k's indices of the eight hinges at slot `j`.
    #[inline(always)]
    unsafe fn indices(batch: &HingeBatch, k: usize, j: usize) -> *const u32 {
        batch.particles[k].as_ptr().add(j)
    }

    /// Geometry stage: loads the hinges at slot `j` and computes the angle's arguments, the
    /// gradients and the denominator (formulas of [`super::super::bend`]).
    #[inline(always)]
    unsafe fn geometry<P: Storage>(pos: P, batch: &HingeBatch, j: usize, inv_h2: f32) -> Staged {
        let compliance = _mm256_loadu_ps(batch.compliance.as_ptr().add(j));
        let q = [
            pos.load8(indices(batch, 0, j)),
            pos.load8(indices(batch, 1, j)),
            pos.load8(indices(batch, 2, j)),
            pos.load8(indices(batch, 3, j)),
        ];
        let p: [V3; 4] = [0, 1, 2, 3].map(|i| [q[i][0], q[i][1], q[i][2]]);
        let e = sub(p[3], p[2]);
        let n1 = cross(sub(p[2], p[0]), sub(p[3], p[0]));
        let n2 = cross(sub(p[3], p[1]), sub(p[2], p[1]));
        let (l1, l2, le) = (dot(n1, n1), dot(n2, n2), dot(e, e));
        let degenerate = _mm256_set1_ps(DEGENERATE);
        let mut valid = _mm256_and_ps(
            _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_GE_OQ>(l1, degenerate),
                _mm256_cmp_ps::<_CMP_GE_OQ>(l2, degenerate),
            ),
            _mm256_cmp_ps::<_CMP_GE_OQ>(le, degenerate),
        );
        let one = _mm256_set1_ps(1.0);
        let e_len = _mm256_sqrt_ps(le);
        let e_hat = scale(e, _mm256_div_ps(one, e_len));
        let (m1, m2) = (scale(n1, _mm256_div_ps(one, l1)), scale(n2, _mm256_div_ps(one, l2)));
        let neg_e = _mm256_sub_ps(_mm256_setzero_ps(), e_len);
        let grads = [
            scale(m1, neg_e),
            scale(m2, neg_e),
            neg_combine(dot(sub(p[0], p[3]), e_hat), m1, dot(sub(p[1], p[3]), e_hat), m2),
            neg_combine(dot(sub(p[2], p[0]), e_hat), m1, dot(sub(p[2], p[1]), e_hat), m2),
        ];
        let weighted = (0..4).fold(_mm256_setzero_ps(), |acc, i| _mm256_fmadd_ps(q[i][3], dot(grads[i], grads[i]), acc));
        let alpha_tilde = _mm256_mul_ps(compliance, _mm256_set1_ps(inv_h2));
        let denom = _mm256_add_ps(weighted, alpha_tilde);
        valid = _mm256_and_ps(valid, _mm256_cmp_ps::<_CMP_GT_OQ>(denom, _mm256_set1_ps(1e-30)));
        valid = _mm256_and_ps(valid, _mm256_cmp_ps::<_CMP_LT_OQ>(denom, _mm256_set1_ps(f32::INFINITY)));
        Staged {
            q,
            grads,
            sin_part: dot(cross(n1, n2), e_hat),
            cos_part: dot(n1, n2),
            denom,
            alpha_tilde,
            valid,
        }
    }

    /// Multiplier stage: the angle, C = θ − θ0 wrapped into (−π, π], and Δλ (zero in invalid
    /// lanes); updates λ at slot `j`. `None` when a rest angle lies outside [−π, π]: one turn
    /// does not suffice to wrap, so the scalar path (with the general wrap) takes the vector.
    #[inline(always)]
    unsafe fn multiplier(staged: &Staged, batch: &mut HingeBatch, j: usize, first: bool) -> Option<__m256> {
        let rest = _mm256_loadu_ps(batch.rest_angle.as_ptr().add(j));
        let pi = _mm256_set1_ps(PI);
        if _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(_mm256_andnot_ps(_mm256_set1_ps(-0.0), rest), pi)) != 0 {
            return None;
        }
        let theta = atan2(staged.sin_part, staged.cos_part);
        let c = _mm256_sub_ps(theta, rest);
        let c = _mm256_blendv_ps(c, _mm256_sub_ps(c, _mm256_set1_ps(TAU)), _mm256_cmp_ps::<_CMP_GT_OQ>(c, pi));
        let c = _mm256_blendv_ps(
            c,
            _mm256_add_ps(c, _mm256_set1_ps(TAU)),
            _mm256_cmp_ps::<_CMP_LE_OQ>(c, _mm256_sub_ps(_mm256_setzero_ps(), pi)),
        );
        let lambda = batch.lambda.as_mut_ptr().add(j);
        let old = if first { _mm256_setzero_ps() } else { _mm256_loadu_ps(lambda) };
        let num = _mm256_fnmadd_ps(staged.alpha_tilde, old, _mm256_sub_ps(_mm256_setzero_ps(), c));
        let dl = _mm256_and_ps(_mm256_div_ps(num, staged.denom), staged.valid);
        _mm256_storeu_ps(lambda, _mm256_add_ps(old, dl));
        Some(dl)
    }

    /// Position stage: moves the hinges at slot `j` by wᵢ Δλ ∇ᵢθ.
    #[inline(always)]
    unsafe fn apply<P: Storage>(pos: P, batch: &HingeBatch, j: usize, staged: &Staged, dl: __m256) {
        let (q, grads) = (&staged.q, &staged.grads);
        for i in 0..4 {
            // Masked lanes have dl = 0 but may carry NaN gradients: mask the step itself.
            let s = _mm256_mul_ps(q[i][3], dl);
            let step = |c: usize| _mm256_and_ps(_mm256_mul_ps(s, grads[i][c]), staged.valid);
            let moved = [
                _mm256_add_ps(q[i][0], step(0)),
                _mm256_add_ps(q[i][1], step(1)),
                _mm256_add_ps(q[i][2], step(2)),
                q[i][3],
            ];
            pos.store8(indices(batch, i, j), moved);
        }
    }

    /// # Safety
    /// As [`super::project_raw`]; the CPU must support AVX2 and FMA; no damping.
    #[target_feature(enable = "avx2,fma")]
    // Index loops: the same stages written with zipped iterators compiled 1.6× slower.
    #[allow(clippy::needless_range_loop)]
    pub(super) unsafe fn project<P: Storage>(pos: P, batch: &mut HingeBatch, inv_h2: f32, first: bool) {
        let n = batch.id.len();
        let full = n - n % 8;
        let k = SubstepConstants {
            inv_h2,
            damping_over_h: 0.0,
        };
        let mut staged = [const { MaybeUninit::<Staged>::uninit() }; BLOCK];
        let mut steps = [None; BLOCK];
        for block in (0..full).step_by(8 * BLOCK) {
            let vectors = BLOCK.min((full - block) / 8);
            for v in 0..vectors {
                staged[v].write(geometry(pos, batch, block + 8 * v, inv_h2));
            }
            // Every slot below `vectors` was written just above.
            for v in 0..vectors {
                steps[v] = multiplier(staged[v].assume_init_ref(), batch, block + 8 * v, first);
            }
            for v in 0..vectors {
                let j = block + 8 * v;
                match steps[v] {
                    Some(dl) => apply(pos, batch, j, staged[v].assume_init_ref(), dl),
                    None => project_scalar(pos, VecPtr::UNREAD, batch, j..j + 8, k, first),
                }
            }
        }
        // Without damping the scalar path never reads `prev`.
        project_scalar(pos, VecPtr::UNREAD, batch, full..n, k, first);
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;

    #[test]
    fn simd_hinges_match_scalar_hinges_on_random_batches() {
        if Kernel::detect() == Kernel::Scalar {
            return;
        }
        let mut seed = 11u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
        let k = SubstepConstants {
            inv_h2: 900.0 * 900.0,
            damping_over_h: 0.0,
        };
        // 21: a partial block of two vectors and a scalar remainder; 40: a full block of four
        // and one more; 64: two full blocks.
        for hinges in [3u32, 8, 21, 40, 64] {
            let mut pos = Vec::new();
            let mut batch = HingeBatch::default();
            for j in 0..hinges {
                // Two triangles on the edge (−0.5, 0, 0)–(0.5, 0, 0), folded by a random angle.
                let fold = (next() - 0.5) * 6.0;
                let w = |pinned: bool, r: f32| if pinned { 0.0 } else { 0.5 + r };
                let wing = Vec3::new(next() - 0.5, fold.cos(), fold.sin()) * (0.5 + next());
                let mut quad = [
                    [next() - 0.5, -0.8, 0.05 * next(), w(j % 5 == 0, next())],
                    [wing.x, wing.y, wing.z, w(false, next())],
                    [-0.5, 0.0, 0.0, w(j % 3 == 0, next())],
                    [0.5, 0.0, 0.0, w(false, next())],
                ];
                if j % 7 == 6 {
                    quad[1] = [quad[2][0], quad[2][1], quad[2][2], quad[1][3]]; // degenerate wing
                }
                pos.extend(quad);
                batch.push(
                    j,
                    HingeItem {
                        particles: [4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3],
                        // Every 13th rest angle lies beyond π: its vector takes the scalar
                        // path in the middle of a block.
                        rest_angle: if j % 13 == 12 { 3.5 } else { (next() - 0.5) * 6.2 },
                        compliance: [0.0, 1e-3, 1.0][j as usize % 3],
                    },
                );
            }
            let [scalar, simd] = [Kernel::Scalar, Kernel::Avx2].map(|kernel| {
                let (mut p, mut b) = (Positions::from(pos.as_slice()), batch.clone());
                let prev = Vectors::from(pos.as_slice());
                // SAFETY: indices in range, single thread, kernel detected above, hinges disjoint.
                unsafe {
                    project_raw(kernel, p.raw(), prev.read_only(), &mut b, k, true);
                    project_raw(kernel, p.raw(), prev.read_only(), &mut b, k, false);
                }
                (p.to_vec(), b.lambda)
            });
            // The vector kernel on the [x, y, z, w] copy, filled and read back with the copy
            // passes (84 particles for 21 hinges: a scalar rest), is the same bit for bit.
            let mut p = Positions::from(pos.as_slice());
            let mut copy = vec![[f32::NAN; 4]; pos.len()];
            let (mut b, everything) = (batch.clone(), 0..pos.len());
            // SAFETY: as above; the copy holds every particle.
            unsafe {
                let copy = AosPtr(copy.as_mut_ptr());
                copy_to_aos(Kernel::Avx2, p.raw(), copy, everything.clone());
                project_raw_aos(Kernel::Avx2, copy, &mut b, k, true);
                project_raw_aos(Kernel::Avx2, copy, &mut b, k, false);
                copy_from_aos(Kernel::Avx2, copy, p.raw(), everything);
            }
            assert!(
                p.to_vec() == simd.0 && b.lambda == simd.1,
                "{hinges} hinges: the copy's result differs"
            );
            for (s, v) in scalar.0.iter().zip(&simd.0) {
                for c in 0..4 {
                    assert!(v[c].is_finite() && (s[c] - v[c]).abs() <= 2e-5, "{s:?} vs {v:?}");
                }
            }
            for (s, v) in scalar.1.iter().zip(&simd.1) {
                assert!(v.is_finite() && (s - v).abs() <= 1e-3 * s.abs() + 1e-9, "λ {s} vs {v}");
            }
        }
    }

    #[test]
    fn wrap_difference_matches_wrap_angle() {
        for i in -700..=700 {
            let a = i as f32 * 0.0137;
            assert!((wrap_difference(a) - wrap_angle(a)).abs() < 1e-5, "{a}");
        }
    }
}
