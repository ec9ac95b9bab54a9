//! Dihedral bending hinges, one colour batch at a time (angles and gradients in
//! [`super::bend`]).
//!
//! **Damping.** A hinge's compliance is in 1/(N·m), not m/N, so the distance constraints' β
//! (N·s/m) cannot be used as γ = α β / h: on a 5 MPa cotton hinge that gives γ ≈ 10⁷, a hinge
//! that cancels every change of its angle within a substep, and the cloth crumples into spikes.
//! Bending is damped as a Kelvin–Voigt material instead, with the retardation time of the
//! stretch: τ = β α_unit, α_unit = 1/(E t) (scaled like the stretch compliance), the time in
//! which the viscous stress β ε̇ equals the elastic one; γ = τ/h for every hinge
//! ([`SubstepConstants::bend_gamma`]). As for the distances (see [`super::distance`]) the damped
//! update is the undamped one with the effective rest angle θ0' = θ0 + γ/(1 + γ) (θ_start − θ0)
//! and compliance α/(1 + γ) ([`HingeBatch::prepare_damping`]); rigid hinges (α = 0) are not
//! damped. Evaluating θ_start costs a scalar dihedral angle per hinge, three times the vector
//! projection, so bending is damped over the *frame*: θ_start is the angle at the frame's
//! start and γ = τ/Δt. At the frame's end the hinge's moment is then
//! ((θ − θ0) + τ (θ − θ_start)/Δt)/α, the Kelvin–Voigt law with the angular rate measured over
//! the frame (backward Euler at the frame step, so unconditionally stable).

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
    /// The effective rest angles and compliances of damping, swapped with `rest_angle` and
    /// `compliance` while a damped substep projects (see the module docs).
    damped: [Vec<f32>; 2],
    /// The vector kernels run the hinges after the last whole vector as one padded vector
    /// (default `false`: with the scalar code). Set on the chunks of a colour's parts
    /// ([`Batch::pad_rest`]), so that a hinge's rounding does not depend on where its chunk
    /// ends, hence on the number of parts.
    padded_rest: bool,
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

    fn pad_rest(&mut self) {
        self.padded_rest = true;
    }
}

impl HingeBatch {
    /// Appends a hinge with model id `id` (what the scheduler does; benches build batches
    /// with it).
    pub fn push_item(&mut self, id: u32, item: HingeItem) {
        Batch::push(self, id, item);
    }

    /// Model ids of the hinges a vector kernel projects with the scalar code for where they
    /// sit: those after the last whole vector of eight, unless the batch pads its rest. (A
    /// hinge whose rest angle lies beyond ±π takes it wherever it sits.)
    #[cfg(test)]
    pub(crate) fn scalar_ids(&self) -> &[u32] {
        let vectors = if self.padded_rest { self.id.len() } else { self.id.len() / 8 * 8 };
        &self.id[vectors..]
    }

    /// Whether constraint damping acts on this batch.
    fn is_damped(&self, k: SubstepConstants) -> bool {
        k.bend_gamma > 0.0 && self.compliance.iter().any(|&alpha| alpha > 0.0)
    }

    /// Computes the effective rest angles and compliances of damping from the frame's start
    /// positions `prev` (a hinge degenerate there keeps its rest angle).
    ///
    /// # Safety
    /// Every index in bounds of `prev`; no other thread writing those particles.
    unsafe fn prepare_damping(&mut self, prev: VecPtr, k: SubstepConstants) {
        // SAFETY: the caller upholds this function's # Safety contract: every index in bounds of
        // `prev`; no other thread writing those particles.
        unsafe {
            let n = self.id.len();
            let [rest, compliance] = &mut self.damped;
            rest.resize(n, 0.0);
            compliance.resize(n, 0.0);
            let gamma = k.bend_gamma;
            for j in 0..n {
                let [p0, p1, p2, p3] = std::array::from_fn(|i| prev.get(self.particles[i][j] as usize));
                let theta0 = self.rest_angle[j];
                let rigid = self.compliance[j] == 0.0;
                let start = super::bend::dihedral_angle(p0, p1, p2, p3).filter(|_| !rigid);
                rest[j] = start.map_or(theta0, |theta| theta0 + gamma / (1.0 + gamma) * wrap_angle(theta - theta0));
                compliance[j] = if rigid { 0.0 } else { self.compliance[j] / (1.0 + gamma) };
            }
        }
    }

    /// Swaps the effective damping values in for the rest angles and compliances (or back).
    fn swap_damped(&mut self) {
        let [rest, compliance] = &mut self.damped;
        std::mem::swap(&mut self.rest_angle, rest);
        std::mem::swap(&mut self.compliance, compliance);
    }
}

/// Runs `solve` on `batch` with constraint damping folded into its rest angles and compliances,
/// computed from `prev` when `refresh` is set (the first sweep of a frame).
///
/// # Safety
/// As [`project_raw`].
unsafe fn with_damping(batch: &mut HingeBatch, prev: VecPtr, k: SubstepConstants, refresh: bool, solve: impl FnOnce(&mut HingeBatch)) {
    // SAFETY: the caller upholds this function's # Safety contract: as `project_raw`.
    unsafe {
        if !batch.is_damped(k) {
            return solve(batch);
        }
        if refresh {
            batch.prepare_damping(prev, k);
        }
        batch.swap_damped();
        solve(batch);
        batch.swap_damped();
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
    assert!(kernel.is_supported(), "{kernel:?} is not supported here");
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
    unsafe { project_raw(kernel, pos.raw(), prev.read_only(), batch, k, first, first) }
}

/// Projects every hinge of `batch` once on raw particle arrays with `kernel` (the vector kernel
/// for undamped colour batches: a batch shares no particle, so eight or sixteen hinges run in
/// lanes).
///
/// # Safety
/// Every particle index in `batch` must be in bounds of `pos` and `prev`, no other thread may
/// touch those particles during the call, `kernel` must be supported by this CPU, and unless
/// it is [`Kernel::Scalar`] no two hinges of the batch may share a particle.
pub(crate) unsafe fn project_raw(
    kernel: Kernel,
    pos: PosPtr,
    prev: VecPtr,
    batch: &mut HingeBatch,
    k: SubstepConstants,
    first: bool,
    refresh_damping: bool,
) {
    // SAFETY: the caller upholds this function's # Safety contract, which is `project_on`'s.
    unsafe { project_on(kernel, pos, prev, batch, k, first, refresh_damping) }
}

/// Particle arrays the hinge kernels run on: scalar access, and on x86-64 the vector loads and
/// stores of both widths (the solver's positions, or the `[x, y, z, w]` copy).
#[cfg(target_arch = "x86_64")]
trait HingePositions: vector::Storage<super::lanes::Avx2> + vector::Storage<super::lanes::Avx512> {}
#[cfg(target_arch = "x86_64")]
impl<P: vector::Storage<super::lanes::Avx2> + vector::Storage<super::lanes::Avx512>> HingePositions for P {}
#[cfg(not(target_arch = "x86_64"))]
trait HingePositions: ParticleAccess {}
#[cfg(not(target_arch = "x86_64"))]
impl<P: ParticleAccess> HingePositions for P {}

/// [`project_raw`] on either kind of particle array.
///
/// # Safety
/// As [`project_raw`], with every index in bounds of `pos`.
unsafe fn project_on(
    kernel: Kernel,
    pos: impl HingePositions,
    prev: VecPtr,
    batch: &mut HingeBatch,
    k: SubstepConstants,
    first: bool,
    refresh_damping: bool,
) {
    // SAFETY: the caller upholds this function's # Safety contract: as `project_raw`.
    unsafe {
        with_damping(batch, prev, k, refresh_damping, |batch| {
            #[cfg(target_arch = "x86_64")]
            if vector_kernel_applies(kernel) {
                return vector::project(kernel, pos, batch, k.inv_h2, first);
            }
            project_scalar(pos, batch, 0..batch.len(), k, first)
        })
    }
}

/// Whether hinge batches run in the vector kernel (AVX2 or AVX-512). The solver keeps the
/// `[x, y, z, w]` copy for the hinge phases exactly then.
pub(crate) fn vector_kernel_applies(kernel: Kernel) -> bool {
    kernel.has_avx2()
}

/// [`project_raw`] on the solver's `[x, y, z, w]` copy of the positions (`prev`, the start
/// positions, only read for damping).
///
/// # Safety
/// As [`project_raw`], with every index in bounds of `pos`.
pub(crate) unsafe fn project_raw_aos(
    kernel: Kernel,
    pos: AosPtr,
    prev: VecPtr,
    batch: &mut HingeBatch,
    k: SubstepConstants,
    first: bool,
    refresh_damping: bool,
) {
    // SAFETY: the caller upholds this function's # Safety contract, which is `project_on`'s.
    unsafe { project_on(kernel, pos, prev, batch, k, first, refresh_damping) }
}

/// Copies the positions of particles `range` into the `[x, y, z, w]` copy (before the hinge
/// phases).
///
/// # Safety
/// `range` in bounds of both, no other thread touching those particles, `kernel` supported.
pub(crate) unsafe fn copy_to_aos(kernel: Kernel, pos: PosPtr, copy: AosPtr, range: Range<usize>) {
    // SAFETY: the caller upholds this function's # Safety contract: `range` in bounds of both, no
    // other thread touching those particles, `kernel` supported.
    unsafe {
        let mut scalar_from = range.start;
        #[cfg(target_arch = "x86_64")]
        if kernel.has_avx2() {
            scalar_from = vector::copy_to_aos(pos, copy, range.clone());
        }
        (scalar_from..range.end).for_each(|i| *copy.0.add(i) = pos.get(i));
    }
}

/// Copies the positions of particles `range` back from the `[x, y, z, w]` copy (after the hinge
/// phases; w is never changed there).
///
/// # Safety
/// As [`copy_to_aos`].
pub(crate) unsafe fn copy_from_aos(kernel: Kernel, copy: AosPtr, pos: PosPtr, range: Range<usize>) {
    // SAFETY: the caller upholds this function's # Safety contract: as `copy_to_aos`.
    unsafe {
        let mut scalar_from = range.start;
        #[cfg(target_arch = "x86_64")]
        if kernel.has_avx2() {
            scalar_from = vector::copy_from_aos(copy, pos, range.clone());
        }
        (scalar_from..range.end).for_each(|i| pos.set_xyz(i, xyz(copy.get(i)).to_array()));
    }
}

/// The scalar projection of slots `range` (damping is folded into the batch's values).
///
/// # Safety
/// As [`project_raw`].
unsafe fn project_scalar(pos: impl ParticleAccess, batch: &mut HingeBatch, range: Range<usize>, k: SubstepConstants, first: bool) {
    // SAFETY: the caller upholds this function's # Safety contract: as `project_raw`.
    unsafe {
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
            let denom = weighted + alpha_tilde;
            if denom <= 1e-30 || !denom.is_finite() {
                continue;
            }
            let c = wrap_difference(theta - item.rest_angle);
            let dl = (-c - alpha_tilde * *lambda) / denom;
            *lambda += dl;
            for i in 0..4 {
                let q = p[i] + w[i] * dl * grads[i];
                pos.set_xyz(idx[i], q.to_array());
            }
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

/// The vector hinge kernel: eight hinges per iteration (AVX2 + FMA) or sixteen (AVX-512F),
/// one generic body ([`super::lanes`]) with the same formulas as [`super::bend::dihedral_gradients`] and a
/// vectorised atan2 (Cephes polynomial, about 1e-7 rad). Both widths evaluate the same
/// operations per lane, so they agree bit for bit.
#[cfg(target_arch = "x86_64")]
mod vector {
    use std::arch::x86_64::*;
    use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI, TAU};
    use std::mem::MaybeUninit;
    use std::ops::Range;

    use super::super::lanes::{Avx2, Avx512, Lanes};
    use super::{project_scalar, AosPtr, HingeBatch, Kernel, ParticleAccess, PosPtr, SubstepConstants, DEGENERATE};

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

    /// [`super::copy_to_aos`] for the whole vectors of `range`; returns where the scalar rest
    /// starts.
    ///
    /// # Safety
    /// As [`super::copy_to_aos`].
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn copy_to_aos(pos: PosPtr, copy: AosPtr, range: Range<usize>) -> usize {
        // SAFETY: the caller upholds this function's # Safety contract: as `super::copy_to_aos`.
        unsafe {
            let vectors_end = range.end - range.len() % 8;
            for i in (range.start..vectors_end).step_by(8) {
                let rows = Avx2::transpose([
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
    }

    /// [`super::copy_from_aos`] for the whole vectors of `range`; returns where the scalar
    /// rest starts.
    ///
    /// # Safety
    /// As [`super::copy_to_aos`].
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn copy_from_aos(copy: AosPtr, pos: PosPtr, range: Range<usize>) -> usize {
        // SAFETY: the caller upholds this function's # Safety contract: as `super::copy_to_aos`.
        unsafe {
            let vectors_end = range.end - range.len() % 8;
            for i in (range.start..vectors_end).step_by(8) {
                let rows = [0, 1, 2, 3].map(|l| {
                    let low = _mm_loadu_ps(copy.0.add(i + l) as *const f32);
                    _mm256_set_m128(_mm_loadu_ps(copy.0.add(i + l + 4) as *const f32), low)
                });
                let [x, y, z, _] = Avx2::transpose(rows);
                _mm256_storeu_ps(pos.x.add(i), x);
                _mm256_storeu_ps(pos.y.add(i), y);
                _mm256_storeu_ps(pos.z.add(i), z);
            }
            vectors_end
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
    /// gradients and the denominator (formulas of [`super::super::bend`]).
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
    pub(super) unsafe fn project<P: Storage<Avx2> + Storage<Avx512>>(
        kernel: Kernel,
        pos: P,
        batch: &mut HingeBatch,
        inv_h2: f32,
        first: bool,
    ) {
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
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use crate::sim::particles::PosW;

    use super::*;

    /// Reproducible numbers in [0, 1) from `seed` (a 64-bit LCG's upper bits).
    fn uniform_numbers(mut seed: u64) -> impl FnMut() -> f32 {
        move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 40) as f32 / (1u64 << 24) as f32
        }
    }

    /// `hinges` random hinges on disjoint particles, every 7th with a degenerate wing and, when
    /// `wild_rest`, every 13th with a rest angle beyond π (it takes the scalar path).
    fn random_hinges(next: &mut impl FnMut() -> f32, hinges: u32, wild_rest: bool) -> (Vec<PosW>, HingeBatch) {
        let mut pos = Vec::new();
        let mut batch = HingeBatch::default();
        for j in 0..hinges {
            // Two triangles on the edge (−0.5, 0, 0)–(0.5, 0, 0), folded by a random angle.
            let fold = (next() - 0.5) * 6.0;
            let mut w = |pinned: bool| {
                let r = next();
                if pinned {
                    0.0
                } else {
                    0.5 + r
                }
            };
            let (w0, w1, w2, w3) = (w(j % 5 == 0), w(false), w(j % 3 == 0), w(false));
            let wing = Vec3::new(next() - 0.5, fold.cos(), fold.sin()) * (0.5 + next());
            let mut quad = [
                [next() - 0.5, -0.8, 0.05 * next(), w0],
                [wing.x, wing.y, wing.z, w1],
                [-0.5, 0.0, 0.0, w2],
                [0.5, 0.0, 0.0, w3],
            ];
            if j % 7 == 6 {
                quad[1] = [quad[2][0], quad[2][1], quad[2][2], quad[1][3]]; // degenerate wing
            }
            pos.extend(quad);
            let rest_angle = (next() - 0.5) * 6.2;
            batch.push(
                j,
                HingeItem {
                    particles: [4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3],
                    rest_angle: if wild_rest && j % 13 == 12 { 3.5 } else { rest_angle },
                    compliance: [0.0, 1e-3, 1.0][j as usize % 3],
                },
            );
        }
        (pos, batch)
    }

    /// Two sweeps (the first resets λ) with `kernel` on the solver's arrays, or on the
    /// `[x, y, z, w]` copy filled and read back with the copy passes.
    fn two_sweeps(kernel: Kernel, on_copy: bool, pos: &[PosW], batch: &HingeBatch) -> (Vec<PosW>, Vec<f32>) {
        two_sweeps_of(kernel, on_copy, pos, std::slice::from_ref(batch))
    }

    /// [`two_sweeps`] of several batches of disjoint hinges, one after another in each sweep;
    /// the multipliers of all, in order.
    fn two_sweeps_of(kernel: Kernel, on_copy: bool, pos: &[PosW], batches: &[HingeBatch]) -> (Vec<PosW>, Vec<f32>) {
        let k = SubstepConstants {
            inv_h2: 900.0 * 900.0,
            damping_over_h: 0.0,
            bend_gamma: 0.0,
        };
        let (mut p, mut batches, prev) = (Positions::from(pos), batches.to_vec(), Vectors::from(pos));
        let mut copy = vec![[f32::NAN; 4]; pos.len()];
        let copy = AosPtr(copy.as_mut_ptr());
        // SAFETY: indices in range, single thread, kernel supported (checked by the caller),
        // hinges disjoint, the copy holds every particle.
        unsafe {
            if on_copy {
                copy_to_aos(kernel, p.raw(), copy, 0..pos.len());
            }
            for first in [true, false] {
                for b in &mut batches {
                    match on_copy {
                        true => project_raw_aos(kernel, copy, prev.read_only(), b, k, first, first),
                        false => project_raw(kernel, p.raw(), prev.read_only(), b, k, first, first),
                    }
                }
            }
            if on_copy {
                copy_from_aos(kernel, copy, p.raw(), 0..pos.len());
            }
        }
        (p.to_vec(), batches.into_iter().flat_map(|b| b.lambda).collect())
    }

    /// `batch` cut into two batches at slot `at`, each running its rest padded or not.
    fn cut_at(batch: &HingeBatch, at: usize, padded: bool) -> [HingeBatch; 2] {
        let piece = |slots: std::ops::Range<usize>| {
            let mut piece = HingeBatch::default();
            slots.for_each(|i| piece.push(batch.id(i), batch.get(i)));
            if padded {
                piece.pad_rest();
            }
            piece
        };
        [piece(0..at), piece(at..batch.len())]
    }

    /// Hinges cut into batches anywhere, each running its rest as a padded vector, move bit for
    /// bit as in one batch of whole vectors (which the threads rely on: a colour's parts end
    /// where the particle bands do); run with the scalar code instead, the rests round
    /// differently.
    #[test]
    fn a_padded_rest_rounds_like_a_whole_vector_wherever_the_batch_ends() {
        let name = "a_padded_rest_rounds_like_a_whole_vector_wherever_the_batch_ends";
        let mut next = uniform_numbers(5);
        // With rest angles beyond π: those hinges run the scalar code, whatever their vector.
        let (pos, batch) = random_hinges(&mut next, 48, true);
        for kernel in Kernel::vector_kernels_for(name) {
            for on_copy in [false, true] {
                let whole = two_sweeps(kernel, on_copy, &pos, &batch);
                let mut scalar_rests_differ = false;
                for at in 1..batch.len() {
                    let padded = two_sweeps_of(kernel, on_copy, &pos, &cut_at(&batch, at, true));
                    assert!(padded == whole, "{kernel:?}, copy {on_copy}: cut at {at}");
                    scalar_rests_differ |= two_sweeps_of(kernel, on_copy, &pos, &cut_at(&batch, at, false)) != whole;
                }
                assert!(scalar_rests_differ, "{kernel:?}: the scalar code rounds like the vectors here");
            }
        }
    }

    #[test]
    fn simd_hinges_match_scalar_hinges_on_random_batches() {
        let vector_kernels = Kernel::vector_kernels_for("simd_hinges_match_scalar_hinges_on_random_batches");
        if vector_kernels.is_empty() {
            return;
        }
        let mut next = uniform_numbers(11);
        // 21: a partial block and a scalar remainder at both widths; 40: a full AVX2 block and
        // one more vector, two AVX-512 vectors and an AVX2 one; 64: whole blocks of eight lanes;
        // 100: a whole AVX-512 block, two more vectors and a scalar rest; 84 particles for 21
        // hinges give the copy passes a scalar rest.
        for hinges in [3u32, 8, 21, 40, 64, 100] {
            for wild_rest in [true, false] {
                let (pos, batch) = random_hinges(&mut next, hinges, wild_rest);
                let scalar = two_sweeps(Kernel::Scalar, false, &pos, &batch);
                let simd = vector_kernels
                    .iter()
                    .map(|&kernel| two_sweeps(kernel, false, &pos, &batch))
                    .collect::<Vec<_>>();
                for (&kernel, result) in vector_kernels.iter().zip(&simd) {
                    assert!(
                        two_sweeps(kernel, true, &pos, &batch) == *result,
                        "{hinges} hinges, {kernel:?}: the copy's result differs"
                    );
                    for (s, v) in scalar.0.iter().zip(&result.0) {
                        for c in 0..4 {
                            assert!(v[c].is_finite() && (s[c] - v[c]).abs() <= 2e-5, "{s:?} vs {v:?}");
                        }
                    }
                    for (s, v) in scalar.1.iter().zip(&result.1) {
                        assert!(v.is_finite() && (s - v).abs() <= 1e-3 * s.abs() + 1e-9, "λ {s} vs {v}");
                    }
                }
                // The widths agree bit for bit (a hinge with a rest angle beyond π runs the
                // scalar code whatever its vector holds).
                if simd.len() == 2 {
                    assert!(simd[0] == simd[1], "{hinges} hinges: AVX-512 differs from AVX2");
                }
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
