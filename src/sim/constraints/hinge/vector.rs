//! The vector hinge kernel: eight hinges per iteration (AVX2 + FMA) or sixteen (AVX-512F),
//! one generic body over [`Lanes`] with the same formulas as
//! [`dihedral_gradients`](crate::sim::constraints::bend::dihedral_gradients) and
//! [`super::correction`], and a vectorised atan2 (Cephes polynomial, about 1e-7 rad). Both
//! widths evaluate the same operations per lane, so they agree bit for bit; fused
//! multiply–adds and the polynomial make them round unlike the scalar loop.

use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI, TAU};
use std::mem::MaybeUninit;
use std::ops::Range;

use super::batch::project_scalar;
use super::HingeBatch;
use crate::sim::constraints::bend::DEGENERATE;
use crate::sim::constraints::distance::{Kernel, SubstepConstants};
use crate::sim::constraints::lanes::{Avx2, Avx512, Lanes};
use crate::sim::particles::{AosPtr, ParticleAccess, PosPtr};

type V3<L> = [<L as Lanes>::V; 3];

/// # Safety
/// The CPU must support `L`'s width (this is only inlined into a `#[target_feature]` function
/// of that width).
#[inline(always)]
unsafe fn sub<L: Lanes>(a: V3<L>, b: V3<L>) -> V3<L> {
    // SAFETY: the caller guarantees support for `L`'s width (see # Safety).
    unsafe { [L::sub(a[0], b[0]), L::sub(a[1], b[1]), L::sub(a[2], b[2])] }
}

/// # Safety
/// The CPU must support `L`'s width (this is only inlined into a `#[target_feature]` function
/// of that width).
#[inline(always)]
unsafe fn scale<L: Lanes>(a: V3<L>, s: L::V) -> V3<L> {
    // SAFETY: the caller guarantees support for `L`'s width (see # Safety).
    unsafe { [L::mul(a[0], s), L::mul(a[1], s), L::mul(a[2], s)] }
}

/// # Safety
/// The CPU must support `L`'s width (this is only inlined into a `#[target_feature]` function
/// of that width).
#[inline(always)]
unsafe fn dot<L: Lanes>(a: V3<L>, b: V3<L>) -> L::V {
    // SAFETY: the caller guarantees support for `L`'s width (see # Safety).
    unsafe { L::fmadd(a[2], b[2], L::fmadd(a[1], b[1], L::mul(a[0], b[0]))) }
}

/// # Safety
/// The CPU must support `L`'s width (this is only inlined into a `#[target_feature]` function
/// of that width).
#[inline(always)]
unsafe fn cross<L: Lanes>(a: V3<L>, b: V3<L>) -> V3<L> {
    // SAFETY: the caller guarantees support for `L`'s width (see # Safety).
    unsafe {
        [
            L::fmsub(a[1], b[2], L::mul(a[2], b[1])),
            L::fmsub(a[2], b[0], L::mul(a[0], b[2])),
            L::fmsub(a[0], b[1], L::mul(a[1], b[0])),
        ]
    }
}

/// −(s·a + t·b).
///
/// # Safety
/// The CPU must support `L`'s width (this is only inlined into a `#[target_feature]` function
/// of that width).
#[inline(always)]
unsafe fn neg_combine<L: Lanes>(s: L::V, a: V3<L>, t: L::V, b: V3<L>) -> V3<L> {
    // SAFETY: the caller guarantees support for `L`'s width (see # Safety).
    unsafe {
        [
            L::fnmsub(s, a[0], L::mul(t, b[0])),
            L::fnmsub(s, a[1], L::mul(t, b[1])),
            L::fnmsub(s, a[2], L::mul(t, b[2])),
        ]
    }
}

/// atan2(y, x) for lanes where x and y are not both zero.
///
/// # Safety
/// The CPU must support `L`'s width (this is only inlined into a `#[target_feature]` function
/// of that width).
#[inline(always)]
unsafe fn atan2<L: Lanes>(y: L::V, x: L::V) -> L::V {
    // SAFETY: the caller guarantees support for `L`'s width (see # Safety).
    unsafe {
        let (ax, ay) = (L::abs(x), L::abs(y));
        let t = L::div(L::min(ax, ay), L::max(ax, ay));
        // atan t on [0, 1]: above tan(π/8) use atan t = π/4 + atan((t − 1)/(t + 1)).
        let big = L::gt(t, L::splat(0.414_213_57));
        let one = L::splat(1.0);
        let u = L::select(big, L::div(L::sub(t, one), L::add(t, one)), t);
        let base = L::keep(L::splat(FRAC_PI_4), big);
        let z = L::mul(u, u);
        let mut poly = L::splat(8.053_744_5e-2);
        for c in [-1.387_768_6e-1, 1.997_771_1e-1, -3.333_295e-1] {
            poly = L::fmadd(poly, z, L::splat(c));
        }
        let r = L::add(base, L::fmadd(L::mul(poly, z), u, u));
        let r = L::select(L::gt(ay, ax), L::sub(L::splat(FRAC_PI_2), r), r);
        let r = L::select(L::lt(x, L::splat(0.0)), L::sub(L::splat(PI), r), r);
        L::or_sign(r, y)
    }
}

/// Vectors of hinges staged together: the kernel runs each stage over a block before
/// the next, because one vector's chain (loads, cross products, square root, three
/// divisions, atan2, another division) is longer than the out-of-order window can hide, while
/// a stage's iterations are independent and overlap. Hinges of a batch share no particle, so
/// deferring a block's stores past its loads gives the same result.
const BLOCK: usize = 4;

/// One vector after the geometry stage: everything the projection needs but the angle.
#[derive(Clone, Copy)]
struct Staged<L: Lanes> {
    /// Positions and inverse masses of p0…p3.
    q: [[L::V; 4]; 4],
    /// ∇θ with respect to p0…p3.
    grads: [V3<L>; 4],
    /// atan2 arguments: θ = atan2(sin_part, cos_part).
    sin_part: L::V,
    cos_part: L::V,
    /// Σ wᵢ |∇ᵢθ|² + α̃ and α̃ = α / h².
    denom: L::V,
    alpha_tilde: L::V,
    /// Lanes whose hinge is not degenerate.
    valid: L::M,
}

/// A vector's worth of particles at a time, in one of the two layouts.
pub(super) trait Storage<L: Lanes>: ParticleAccess {
    /// Loads particles `indices[0..L::WIDTH]` as x, y, z, w lanes.
    ///
    /// # Safety
    /// The CPU must support `L`'s width, `indices` must be valid for reading `L::WIDTH`
    /// indices, each a particle in bounds of `self`, and no other thread may write those
    /// particles during the call.
    unsafe fn load_lanes(self, indices: *const u32) -> [L::V; 4];
    /// Stores the x, y, z lanes to particles `indices[0..L::WIDTH]` (distinct, or repeated
    /// only in lanes holding equal values: the stores are plain, lane by lane).
    ///
    /// # Safety
    /// As [`Self::load_lanes`], the indices distinct or repeated with equal values, and no
    /// other thread may touch those particles during the call.
    unsafe fn store_lanes(self, indices: *const u32, xyzw: [L::V; 4]);
}

/// The solver's arrays: gathered, and stored lane by lane.
impl<L: Lanes> Storage<L> for PosPtr {
    #[inline(always)]
    unsafe fn load_lanes(self, indices: *const u32) -> [L::V; 4] {
        // SAFETY: the caller upholds `Storage::load_lanes`'s contract (# Safety): the CPU must
        // support `L`'s width, `indices` must be valid for reading `L::WIDTH` indices, each a
        // particle in bounds of `self`, and no other thread may write those particles during
        // the call.
        unsafe {
            let coordinates = [self.x, self.y, self.z, self.w];
            let mut lanes = [L::splat(0.0); 4];
            for (lane, c) in lanes.iter_mut().zip(coordinates) {
                *lane = L::gather(c, indices);
            }
            lanes
        }
    }

    #[inline(always)]
    unsafe fn store_lanes(self, indices: *const u32, [x, y, z, _]: [L::V; 4]) {
        // SAFETY: the caller upholds `Storage::store_lanes`'s contract (# Safety): as
        // `Self::load_lanes`, the indices distinct, and no other thread may touch those
        // particles during the call.
        unsafe {
            // Room for the widest vector; the first L::WIDTH lanes are used.
            let [mut xs, mut ys, mut zs] = [[0f32; 16]; 3];
            for (lanes, v) in [&mut xs, &mut ys, &mut zs].into_iter().zip([x, y, z]) {
                L::store(lanes.as_mut_ptr(), v);
            }
            let lanes = xs.into_iter().zip(ys).zip(zs).take(L::WIDTH);
            for (l, ((x, y), z)) in lanes.enumerate() {
                self.set_xyz(*indices.add(l) as usize, [x, y, z]);
            }
        }
    }
}

/// The `[x, y, z, w]` copy: one 16-byte load or store per particle (w unchanged on store:
/// the kernel never moves it, and no other lane touches the particle).
impl<L: Lanes> Storage<L> for AosPtr {
    #[inline(always)]
    unsafe fn load_lanes(self, indices: *const u32) -> [L::V; 4] {
        // SAFETY: the caller upholds `Storage::load_lanes`'s contract (# Safety): the CPU must
        // support `L`'s width, `indices` must be valid for reading `L::WIDTH` indices, each a
        // particle in bounds of `self`, and no other thread may write those particles during
        // the call.
        unsafe { L::load_aos(self, indices) }
    }

    #[inline(always)]
    unsafe fn store_lanes(self, indices: *const u32, xyzw: [L::V; 4]) {
        // SAFETY: the caller upholds `Storage::store_lanes`'s contract (# Safety): as
        // `Self::load_lanes`, the indices distinct, and no other thread may touch those
        // particles during the call.
        unsafe { L::store_aos(self, indices, xyzw) }
    }
}

/// Where the vector stages find the hinges they project: a batch's arrays, or a
/// [`PaddedRest`].
trait Slots {
    /// Particle k (of [`super::HingeItem::particles`]) of every slot.
    fn particles(&self, k: usize) -> *const u32;
    fn rest_angles(&self) -> *const f32;
    fn compliances(&self) -> *const f32;
    fn lambdas(&mut self) -> *mut f32;
}

/// [`Slots`] of a type holding the columns by the names [`HingeBatch`] gives them.
macro_rules! slots_in_columns {
    ($holder:ty) => {
        impl Slots for $holder {
            #[inline(always)]
            fn particles(&self, k: usize) -> *const u32 {
                self.particles[k].as_ptr()
            }

            #[inline(always)]
            fn rest_angles(&self) -> *const f32 {
                self.rest_angle.as_ptr()
            }

            #[inline(always)]
            fn compliances(&self) -> *const f32 {
                self.compliance.as_ptr()
            }

            #[inline(always)]
            fn lambdas(&mut self) -> *mut f32 {
                self.lambda.as_mut_ptr()
            }
        }
    };
}

slots_in_columns!(HingeBatch);

/// The hinges of a batch after its last whole vector (fewer than eight) as one vector of
/// eight: the lanes beyond them hold copies of the first, which compute exactly what it
/// computes and store the same values, so every hinge of the batch runs the vector
/// operations wherever the batch ends.
struct PaddedRest {
    particles: [[u32; 8]; 4],
    rest_angle: [f32; 8],
    compliance: [f32; 8],
    lambda: [f32; 8],
}

impl PaddedRest {
    /// The hinges of `batch` from slot `from` on (between one and seven).
    fn of(batch: &HingeBatch, from: usize) -> Self {
        let count = batch.id.len() - from;
        debug_assert!((1..8).contains(&count));
        let slot = |l: usize| from + if l < count { l } else { 0 };
        Self {
            particles: std::array::from_fn(|k| std::array::from_fn(|l| batch.particles[k][slot(l)])),
            rest_angle: std::array::from_fn(|l| batch.rest_angle[slot(l)]),
            compliance: std::array::from_fn(|l| batch.compliance[slot(l)]),
            lambda: std::array::from_fn(|l| batch.lambda[slot(l)]),
        }
    }
}

slots_in_columns!(PaddedRest);

/// Particle k's indices of the hinges at slot `j`.
///
/// # Safety
/// `j` must be at most the number of slots (the result is read for a vector of slots
/// from `j` on).
#[inline(always)]
unsafe fn indices(slots: &impl Slots, k: usize, j: usize) -> *const u32 {
    // SAFETY: the caller guarantees `j` ≤ the number of slots (see # Safety), so the
    // offset stays within (or one past) the index array.
    unsafe { slots.particles(k).add(j) }
}

/// Geometry stage: loads the hinges at slot `j` and computes the angle's arguments, the
/// gradients and the denominator (formulas of [`crate::sim::constraints::bend`]).
///
/// # Safety
/// The CPU must support `L`'s width (this is only inlined into a `#[target_feature]` function
/// of that width); every particle and slot read or written must be in bounds, and no other
/// thread may touch them during the call.
#[inline(always)]
unsafe fn geometry<L: Lanes, P: Storage<L>>(pos: P, batch: &impl Slots, j: usize, inv_h2: f32) -> Staged<L> {
    // SAFETY: the caller guarantees support for `L`'s width, every particle and slot touched in
    // bounds and unshared (see # Safety).
    unsafe {
        let compliance = L::load(batch.compliances().add(j));
        let q = [
            pos.load_lanes(indices(batch, 0, j)),
            pos.load_lanes(indices(batch, 1, j)),
            pos.load_lanes(indices(batch, 2, j)),
            pos.load_lanes(indices(batch, 3, j)),
        ];
        let p: [V3<L>; 4] = [0, 1, 2, 3].map(|i| [q[i][0], q[i][1], q[i][2]]);
        let e = sub::<L>(p[3], p[2]);
        let n1 = cross::<L>(sub::<L>(p[2], p[0]), sub::<L>(p[3], p[0]));
        let n2 = cross::<L>(sub::<L>(p[3], p[1]), sub::<L>(p[2], p[1]));
        let (l1, l2, le) = (dot::<L>(n1, n1), dot::<L>(n2, n2), dot::<L>(e, e));
        let degenerate = L::splat(DEGENERATE);
        let valid = L::and(L::and(L::ge(l1, degenerate), L::ge(l2, degenerate)), L::ge(le, degenerate));
        let one = L::splat(1.0);
        let e_len = L::sqrt(le);
        let e_hat = scale::<L>(e, L::div(one, e_len));
        let (m1, m2) = (scale::<L>(n1, L::div(one, l1)), scale::<L>(n2, L::div(one, l2)));
        let neg_e = L::sub(L::splat(0.0), e_len);
        let grads = [
            scale::<L>(m1, neg_e),
            scale::<L>(m2, neg_e),
            neg_combine::<L>(dot::<L>(sub::<L>(p[0], p[3]), e_hat), m1, dot::<L>(sub::<L>(p[1], p[3]), e_hat), m2),
            neg_combine::<L>(dot::<L>(sub::<L>(p[2], p[0]), e_hat), m1, dot::<L>(sub::<L>(p[2], p[1]), e_hat), m2),
        ];
        let mut weighted = L::splat(0.0);
        for i in 0..4 {
            weighted = L::fmadd(q[i][3], dot::<L>(grads[i], grads[i]), weighted);
        }
        let alpha_tilde = L::mul(compliance, L::splat(inv_h2));
        let denom = L::add(weighted, alpha_tilde);
        let finite = L::and(L::gt(denom, L::splat(1e-30)), L::lt(denom, L::splat(f32::INFINITY)));
        Staged {
            q,
            grads,
            sin_part: dot::<L>(cross::<L>(n1, n2), e_hat),
            cos_part: dot::<L>(n1, n2),
            denom,
            alpha_tilde,
            valid: L::and(valid, finite),
        }
    }
}

/// Multiplier stage: the angle, C = θ − θ0 wrapped into (−π, π], and Δλ (zero in invalid
/// lanes); updates λ at slot `j`. A lane whose rest angle lies outside [−π, π] (one turn
/// does not suffice to wrap) gets Δλ = 0 and keeps its λ; the second value says whether
/// there is one, for [`scalar_for_wild_rests`] to project it after the vector's stores.
/// (So a hinge takes the same path whichever hinges share its vector.)
///
/// # Safety
/// The CPU must support `L`'s width (this is only inlined into a `#[target_feature]` function
/// of that width); every particle and slot read or written must be in bounds, and no other
/// thread may touch them during the call.
#[inline(always)]
unsafe fn multiplier<L: Lanes>(staged: &Staged<L>, batch: &mut impl Slots, j: usize, first: bool) -> (L::V, bool) {
    // SAFETY: the caller guarantees support for `L`'s width, every particle and slot touched in
    // bounds and unshared (see # Safety).
    unsafe {
        let rest = L::load(batch.rest_angles().add(j));
        let pi = L::splat(PI);
        let wild = L::any(L::gt(L::abs(rest), pi));
        let theta = atan2::<L>(staged.sin_part, staged.cos_part);
        let c = L::sub(theta, rest);
        let c = L::select(L::gt(c, pi), L::sub(c, L::splat(TAU)), c);
        let c = L::select(L::le(c, L::sub(L::splat(0.0), pi)), L::add(c, L::splat(TAU)), c);
        let lambda = batch.lambdas().add(j);
        let old = if first { L::splat(0.0) } else { L::load(lambda) };
        let num = L::fnmadd(staged.alpha_tilde, old, L::sub(L::splat(0.0), c));
        let tame = L::le(L::abs(rest), pi);
        let dl = L::keep(L::div(num, staged.denom), L::and(staged.valid, tame));
        L::store(lambda, L::add(old, dl));
        (dl, wild)
    }
}

/// The hinges of slots `slots` whose rest angle lies outside [−π, π], with the scalar code
/// (the vector stages left them where they were).
///
/// # Safety
/// As [`super::project_raw`] for those slots.
#[inline(always)]
unsafe fn scalar_for_wild_rests(pos: impl ParticleAccess, batch: &mut HingeBatch, slots: Range<usize>, inv_h2: f32, first: bool) {
    let k = SubstepConstants { inv_h2, ..NO_DAMPING };
    for j in slots {
        if batch.rest_angle[j].abs() > PI {
            // SAFETY: the caller upholds `project_raw`'s contract for these slots.
            unsafe { project_scalar(pos, batch, j..j + 1, k, first) };
        }
    }
}

/// Position stage: moves the hinges at slot `j` by wᵢ Δλ ∇ᵢθ.
///
/// # Safety
/// The CPU must support `L`'s width (this is only inlined into a `#[target_feature]` function
/// of that width); every particle and slot read or written must be in bounds, and no other
/// thread may touch them during the call.
#[inline(always)]
unsafe fn apply<L: Lanes, P: Storage<L>>(pos: P, batch: &impl Slots, j: usize, staged: &Staged<L>, dl: L::V) {
    // SAFETY: the caller guarantees support for `L`'s width, every particle and slot touched in
    // bounds and unshared (see # Safety).
    unsafe {
        let (q, grads) = (&staged.q, &staged.grads);
        for i in 0..4 {
            // Masked lanes have dl = 0 but may carry NaN gradients: mask the step itself.
            let s = L::mul(q[i][3], dl);
            let moved = [
                L::add(q[i][0], L::keep(L::mul(s, grads[i][0]), staged.valid)),
                L::add(q[i][1], L::keep(L::mul(s, grads[i][1]), staged.valid)),
                L::add(q[i][2], L::keep(L::mul(s, grads[i][2]), staged.valid)),
                q[i][3],
            ];
            pos.store_lanes(indices(batch, i, j), moved);
        }
    }
}

/// Sixteen hinges per vector with [`Kernel::Avx512`], eight with [`Kernel::Avx2`].
///
/// # Safety
/// As [`super::project_raw`]; `kernel` is a vector kernel this CPU supports; no damping.
pub(super) unsafe fn project<P: Storage<Avx2> + Storage<Avx512>>(kernel: Kernel, pos: P, batch: &mut HingeBatch, inv_h2: f32, first: bool) {
    // SAFETY: the caller upholds this function's # Safety contract: as `super::project_raw`;
    // `kernel` is a vector kernel this CPU supports; no damping.
    unsafe {
        match kernel {
            Kernel::Avx512 => project_avx512(pos, batch, inv_h2, first),
            _ => project_avx2(pos, batch, inv_h2, first),
        }
    }
}

/// Without damping the scalar path never reads `prev`.
const NO_DAMPING: SubstepConstants = SubstepConstants {
    inv_h2: 0.0,
    damping_over_h: 0.0,
    bend_gamma: 0.0,
};

/// # Safety
/// As [`super::project_raw`] (every index in bounds, the particles touched by no other thread,
/// no two hinges of a vector sharing a particle); the CPU must support AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
unsafe fn project_avx2<P: Storage<Avx2>>(pos: P, batch: &mut HingeBatch, inv_h2: f32, first: bool) {
    // SAFETY: the caller guarantees AVX2 and FMA and `project_raw`'s contract (see # Safety); the
    // kernels below are inlined into this function and get its target features.
    unsafe {
        let done = project_vectors::<Avx2, P>(pos, batch, 0, inv_h2, first);
        project_rest(pos, batch, done, inv_h2, first);
    }
}

/// Sixteen at a time, then one vector of eight where eight are left, so every hinge the
/// AVX2 kernel runs in a vector runs in one here too: the two kernels agree bit for bit.
///
/// # Safety
/// As [`super::project_raw`] (every index in bounds, the particles touched by no other thread,
/// no two hinges of a vector sharing a particle); the CPU must support AVX-512F, AVX2 and FMA.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn project_avx512<P: Storage<Avx512> + Storage<Avx2>>(pos: P, batch: &mut HingeBatch, inv_h2: f32, first: bool) {
    // SAFETY: the caller guarantees AVX-512F, AVX2 and FMA and `project_raw`'s contract (see # Safety); the
    // kernels below are inlined into this function and get its target features.
    unsafe {
        let done = project_vectors::<Avx512, P>(pos, batch, 0, inv_h2, first);
        let done = project_vectors::<Avx2, P>(pos, batch, done, inv_h2, first);
        project_rest(pos, batch, done, inv_h2, first);
    }
}

/// The hinges after the last whole vector, from slot `from` on: one padded vector of
/// eight when the batch asks for it ([`HingeBatch::padded_rest`]), else the scalar code.
///
/// # Safety
/// As [`project_vectors`] with AVX2.
#[inline(always)]
unsafe fn project_rest<P: Storage<Avx2>>(pos: P, batch: &mut HingeBatch, from: usize, inv_h2: f32, first: bool) {
    // SAFETY: the caller guarantees AVX2 and every particle and slot touched in bounds
    // and unshared (see # Safety); the padded lanes repeat a hinge of the batch.
    unsafe {
        let end = batch.id.len();
        let k = SubstepConstants { inv_h2, ..NO_DAMPING };
        if from == end || !batch.padded_rest {
            return project_scalar(pos, batch, from..end, k, first);
        }
        let mut rest = PaddedRest::of(batch, from);
        let staged = geometry::<Avx2, P>(pos, &rest, 0, inv_h2);
        let (dl, wild) = multiplier::<Avx2>(&staged, &mut rest, 0, first);
        apply::<Avx2, P>(pos, &rest, 0, &staged, dl);
        batch.lambda[from..].copy_from_slice(&rest.lambda[..end - from]);
        if wild {
            scalar_for_wild_rests(pos, batch, from..end, inv_h2, first);
        }
    }
}

/// The staged loop over the whole vectors from slot `from` on; returns where they end.
///
/// # Safety
/// The CPU must support `L`'s width (this is only inlined into a `#[target_feature]` function
/// of that width); every particle and slot read or written must be in bounds, and no other
/// thread may touch them during the call.
#[inline(always)]
// Index loops: the same stages written with zipped iterators compiled 1.6× slower.
#[allow(clippy::needless_range_loop)]
unsafe fn project_vectors<L: Lanes, P: Storage<L>>(pos: P, batch: &mut HingeBatch, from: usize, inv_h2: f32, first: bool) -> usize {
    // SAFETY: the caller guarantees support for `L`'s width, every particle and slot touched in
    // bounds and unshared (see # Safety).
    unsafe {
        let full = from + (batch.id.len() - from) / L::WIDTH * L::WIDTH;
        let mut staged = [const { MaybeUninit::<Staged<L>>::uninit() }; BLOCK];
        let mut steps = [(L::splat(0.0), false); BLOCK];
        for block in (from..full).step_by(L::WIDTH * BLOCK) {
            let vectors = BLOCK.min((full - block) / L::WIDTH);
            for v in 0..vectors {
                staged[v].write(geometry::<L, P>(pos, batch, block + L::WIDTH * v, inv_h2));
            }
            // Every slot below `vectors` was written just above.
            for v in 0..vectors {
                steps[v] = multiplier::<L>(staged[v].assume_init_ref(), batch, block + L::WIDTH * v, first);
            }
            for v in 0..vectors {
                let j = block + L::WIDTH * v;
                let (dl, wild) = steps[v];
                apply::<L, P>(pos, batch, j, staged[v].assume_init_ref(), dl);
                if wild {
                    scalar_for_wild_rests(pos, batch, j..j + L::WIDTH, inv_h2, first);
                }
            }
        }
        full
    }
}
