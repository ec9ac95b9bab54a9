//! Distance constraints C = |x_a − x_b| − L, one batch (a level or a strip, see
//! [`super`]) at a time.
//!
//! With n = (x_a − x_b)/|x_a − x_b|: ∇_a C = n, ∇_b C = −n, so the XPBD update is
//! Δλ = (−C − α̃λ − γ n·(Δx_a − Δx_b)) / ((1 + γ)(w_a + w_b) + α̃),
//! x_a += w_a Δλ n, x_b −= w_b Δλ n (the plus sign the seed article got wrong, docs/physics.md §11), with
//! α̃ = α/h² and γ = αβ/h (XPBD eq. 26; Δx the motion since the substep began).
//! Tension (N) is −λ/h².
//!
//! **Damping without a damped kernel.** With n·(Δx_a − Δx_b) taken as the length change since
//! the substep began, l − l_prev (the same to first order, and exact along the edge), the damped
//! update divided through by (1 + γ) is the undamped one,
//! Δλ = (L' − l − α̃'λ) / (w_a + w_b + α̃'), with the *effective* rest length
//! L' = (L + γ l_prev)/(1 + γ) and compliance α' = α/(1 + γ). So a damped batch computes L' and
//! α' once per substep from the start positions ([`DistanceBatch::prepare_damping`]), swaps them
//! in for its rest lengths and compliances, and runs the same vector kernels as an undamped one:
//! damping costs one pass over the start positions per substep instead of a scalar solve.

use super::Batch;
use crate::sim::particles::{AosPtr, ParticleAccess, PosPtr, Positions, VecPtr, Vectors};

/// What a distance constraint models; selects the stiffness multiplier and the statistics it
/// contributes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    /// Structural edge: resists stretching along the weave. Counted in strain statistics.
    Stretch,
    /// Diagonal edge: resists in-plane shear.
    Shear,
    /// Distance to a second neighbour: a cheap bending resistance.
    Bend,
}

/// Below this length (m) an edge has no direction; it is skipped, never divided by.
pub(crate) const MIN_LENGTH: f32 = 1e-9;

pub use crate::sim::particles::PosW;

/// One distance constraint as handed to a batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DistanceItem {
    /// Endpoints.
    pub ends: [u32; 2],
    /// Rest length L in m.
    pub rest: f32,
    /// Effective compliance α in m/N.
    pub compliance: f32,
    /// What the edge models (statistics read the stretch edges).
    pub kind: EdgeKind,
}

/// A batch (a level or a strip) in structure-of-arrays layout, so the projection loop streams contiguous
/// arrays.
#[derive(Debug, Default, Clone)]
pub struct DistanceBatch {
    /// First endpoints.
    pub a: Vec<u32>,
    /// Second endpoints.
    pub b: Vec<u32>,
    /// Rest lengths (m).
    pub rest: Vec<f32>,
    /// Compliances α (m/N).
    pub compliance: Vec<f32>,
    /// Lagrange multipliers of the current substep (N·s²).
    pub lambda: Vec<f32>,
    /// Edge kinds.
    pub kind: Vec<EdgeKind>,
    /// Model id of each slot.
    pub id: Vec<u32>,
    /// The effective rest lengths L' (m) and compliances α' (m/N) of constraint damping (see the
    /// module docs), swapped with `rest` and `compliance` while a damped substep projects.
    damped: [Vec<f32>; 2],
    /// True while every slot j joins particles `a[0] + j` and `b[0] + j` (a level along a row of
    /// a grid): the AVX2 kernel then reads no indices. Kept by `push` and `swap_remove`, so
    /// `a` and `b` must change only through them.
    contiguous: bool,
    /// Number of stretch edges (statistics skip batches without any). Kept by `push` and
    /// `swap_remove`, like `contiguous`.
    stretch_count: usize,
}

impl Batch for DistanceBatch {
    type Item = DistanceItem;

    fn particles(item: &DistanceItem) -> &[u32] {
        &item.ends
    }

    fn push(&mut self, id: u32, item: DistanceItem) {
        let [a, b] = item.ends;
        self.contiguous = match (self.a.last(), self.b.last()) {
            (Some(&last_a), Some(&last_b)) => self.contiguous && last_a.checked_add(1) == Some(a) && last_b.checked_add(1) == Some(b),
            _ => true,
        };
        self.stretch_count += usize::from(item.kind == EdgeKind::Stretch);
        self.a.push(item.ends[0]);
        self.b.push(item.ends[1]);
        self.rest.push(item.rest);
        self.compliance.push(item.compliance);
        self.lambda.push(0.0);
        self.kind.push(item.kind);
        self.id.push(id);
    }

    fn swap_remove(&mut self, index: usize) -> Option<u32> {
        // Dropping the last slot keeps a contiguous batch contiguous; moving it does not.
        self.contiguous &= index + 1 == self.a.len();
        self.stretch_count -= usize::from(self.kind[index] == EdgeKind::Stretch);
        self.a.swap_remove(index);
        self.b.swap_remove(index);
        self.rest.swap_remove(index);
        self.compliance.swap_remove(index);
        self.lambda.swap_remove(index);
        self.kind.swap_remove(index);
        self.id.swap_remove(index);
        self.id.get(index).copied()
    }

    fn get(&self, index: usize) -> DistanceItem {
        DistanceItem {
            ends: [self.a[index], self.b[index]],
            rest: self.rest[index],
            compliance: self.compliance[index],
            kind: self.kind[index],
        }
    }

    fn id(&self, index: usize) -> u32 {
        self.id[index]
    }

    /// Edge kind, then index distance |b − a| (the edge's direction on a grid): the order of
    /// the straightforward loop. Every batch thus holds one kind.
    fn phase_key(item: &DistanceItem) -> Option<u64> {
        Some(((item.kind as u64) << 32) | item.ends[0].abs_diff(item.ends[1]) as u64)
    }

    fn len(&self) -> usize {
        self.id.len()
    }
}

impl DistanceBatch {
    /// Appends a constraint with model id `id` (what the scheduler does; benches build batches
    /// with it).
    pub fn push_item(&mut self, id: u32, item: DistanceItem) {
        Batch::push(self, id, item);
    }

    /// Whether slot j joins particles `a[0] + j` and `b[0] + j` for every j.
    pub fn is_contiguous(&self) -> bool {
        self.contiguous
    }

    /// Whether constraint damping acts on this batch (γ = αβ/h vanishes for rigid constraints,
    /// so β leaves them bit-for-bit untouched, V8).
    fn is_damped(&self, k: SubstepConstants) -> bool {
        k.damping_over_h > 0.0 && self.compliance.iter().any(|&alpha| alpha > 0.0)
    }

    /// Computes the effective rest lengths and compliances of damping from the substep's start
    /// positions `prev`: L' = (L + γ l_prev)/(1 + γ), α' = α/(1 + γ), γ = α β/h.
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
            for j in 0..n {
                let gamma = self.compliance[j] * k.damping_over_h;
                let length = (prev.get(self.a[j] as usize) - prev.get(self.b[j] as usize)).length();
                rest[j] = (self.rest[j] + gamma * length) / (1.0 + gamma);
                compliance[j] = self.compliance[j] / (1.0 + gamma);
            }
        }
    }

    /// Swaps the effective damping values in for the rest lengths and compliances (or back).
    fn swap_damped(&mut self) {
        let [rest, compliance] = &mut self.damped;
        std::mem::swap(&mut self.rest, rest);
        std::mem::swap(&mut self.compliance, compliance);
    }
}

/// Runs `solve` on `batches` with constraint damping folded into their rest lengths and
/// compliances (see the module docs), computed on the first sweep of a substep (`first`).
///
/// # Safety
/// As [`project_raw`] for every batch.
pub(crate) unsafe fn with_damping(
    batches: &mut [DistanceBatch],
    prev: VecPtr,
    k: SubstepConstants,
    first: bool,
    solve: impl FnOnce(&mut [DistanceBatch]),
) {
    // SAFETY: the caller upholds this function's # Safety contract: as `project_raw` for every
    // batch.
    unsafe {
        if !batches.iter().any(|b| b.is_damped(k)) {
            return solve(batches);
        }
        for batch in batches.iter_mut().filter(|b| b.is_damped(k)) {
            if first {
                batch.prepare_damping(prev, k);
            }
            batch.swap_damped();
        }
        solve(batches);
        // Swapped in, the effective compliances are positive exactly where the real ones are.
        for batch in batches.iter_mut().filter(|b| b.is_damped(k)) {
            batch.swap_damped();
        }
    }
}

/// Per-substep constants of the projection.
#[derive(Debug, Clone, Copy)]
pub struct SubstepConstants {
    /// 1/h² in 1/s².
    pub inv_h2: f32,
    /// β/h: constraint damping divided by the substep (N/m). γ = α · β/h for distances.
    pub damping_over_h: f32,
    /// γ = τ/h of every compliant hinge (dimensionless; see [`super::hinge`]'s damping).
    pub bend_gamma: f32,
}

/// Which projection loops run the batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Portable scalar loop.
    Scalar,
    /// Eight constraints per AVX2 + FMA vector (x86-64, detected at run time).
    Avx2,
    /// [`Kernel::Avx2`], with hinges, the levels along grid rows and the row strips (in pairs)
    /// sixteen per AVX-512F vector (x86-64, detected at run time). Same results bit for bit.
    Avx512,
}

impl Kernel {
    /// The fastest kernel this CPU runs.
    pub fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            return if is_x86_feature_detected!("avx512f") {
                Kernel::Avx512
            } else {
                Kernel::Avx2
            };
        }
        Kernel::Scalar
    }

    /// Whether this CPU runs the kernel.
    pub fn is_supported(self) -> bool {
        match self {
            Kernel::Scalar => true,
            Kernel::Avx2 => Kernel::detect().has_avx2(),
            Kernel::Avx512 => Kernel::detect() == Kernel::Avx512,
        }
    }

    /// Whether the AVX2 + FMA loops run (every kernel but the scalar one).
    pub fn has_avx2(self) -> bool {
        self != Kernel::Scalar
    }

    /// The vector kernels this CPU runs, for tests comparing them with the scalar loop; says on
    /// stderr which ones `test` cannot check here, so a pass on a CPU without them is not
    /// mistaken for a pass of them.
    #[cfg(test)]
    pub(crate) fn vector_kernels_for(test: &str) -> Vec<Kernel> {
        let (supported, skipped): (Vec<Kernel>, Vec<Kernel>) = [Kernel::Avx2, Kernel::Avx512].into_iter().partition(|k| k.is_supported());
        for kernel in skipped {
            eprintln!("{test}: skipped the {kernel:?} kernel (not supported by this CPU)");
        }
        supported
    }
}

/// Projects every constraint of `batch` once with the fastest kernel. On the first sweep of a
/// substep (`first`) λ is taken as 0 and overwritten, which replaces a reset pass. `prev` is
/// only read when damping is on.
pub fn project(pos: &mut Positions, prev: &Vectors, batch: &mut DistanceBatch, k: SubstepConstants, first: bool) {
    project_with(Kernel::detect(), pos, prev, batch, k, first);
}

/// [`project`] with a chosen kernel (tests compare them). Panics if `kernel` is not supported
/// by this CPU or an index is out of range.
pub fn project_with(kernel: Kernel, pos: &mut Positions, prev: &Vectors, batch: &mut DistanceBatch, k: SubstepConstants, first: bool) {
    assert!(kernel.is_supported(), "{kernel:?} is not supported here");
    let n = pos.len().min(prev.len());
    assert!(
        batch.a.iter().chain(&batch.b).all(|&i| (i as usize) < n),
        "particle index out of range"
    );
    // SAFETY: indices checked above; the arrays are borrowed exclusively.
    unsafe { project_raw(kernel, pos.raw(), prev.read_only(), batch, k, first) }
}

/// The projection on raw particle arrays, so the two parts of a phase can be solved by two threads.
///
/// # Safety
/// Every particle index in `batch` must be in bounds of `pos` and `prev`, no other thread may
/// touch those particles during the call, and `kernel` must be supported by this CPU.
pub(crate) unsafe fn project_raw(kernel: Kernel, pos: PosPtr, prev: VecPtr, batch: &mut DistanceBatch, k: SubstepConstants, first: bool) {
    // SAFETY: the caller upholds this function's # Safety contract: every particle index in `batch`
    // must be in bounds of `pos` and `prev`, no other thread may touch those particles during the
    // call, and `kernel` must be supported by this CPU.
    unsafe {
        with_damping(std::slice::from_mut(batch), prev, k, first, |batches| {
            let batch = &mut batches[0];
            match kernel {
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 | Kernel::Avx512 if pos.comp.is_none() => avx2::project(pos, batch, k.inv_h2, first),
                _ => (0..batch.id.len()).for_each(|j| project_one(pos, batch, j, k.inv_h2, first)),
            }
        });
    }
}

/// Projects a group's batches in order, in one call: level batches, or strips (see
/// [`super::Group::chained`]: eight lanes, each a run of constraints solved in order, stored
/// step by step).
///
/// # Safety
/// As [`project_raw`], for every batch; strips share no particle with each other.
pub(crate) unsafe fn project_group(
    kernel: Kernel,
    pos: PosPtr,
    prev: VecPtr,
    batches: &mut [DistanceBatch],
    chained: bool,
    k: SubstepConstants,
    first: bool,
) {
    // SAFETY: the caller upholds this function's # Safety contract: as `project_raw`, for every
    // batch; strips share no particle with each other.
    unsafe {
        // Compensated corrections (tiny substeps) take the scalar loop, which rounds as the kernels.
        let vector = if pos.comp.is_some() { Kernel::Scalar } else { kernel };
        with_damping(batches, prev, k, first, |batches| match vector {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 if chained => avx512::project_strips(pos, batches, k.inv_h2, first),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 if chained => avx2::project_strips(pos, batches, k.inv_h2, first),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => avx512::project_levels(pos, batches, k.inv_h2, first),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => avx2::project_levels(pos, batches, k.inv_h2, first),
            // A strip's slot order is an order each lane keeps, so one at a time it is a batch.
            _ => {
                let kernel = if chained { Kernel::Scalar } else { vector };
                let undamped = SubstepConstants { damping_over_h: 0.0, ..k };
                batches
                    .iter_mut()
                    .for_each(|batch| project_raw(kernel, pos, prev, batch, undamped, first));
            }
        });
    }
}

/// One undamped projection: with d = x_a − x_b and n = d/|d|, Δλ = (−C − α̃λ)/(w_a + w_b + α̃)
/// and Δx_a = w_a Δλ n, Δx_b = −w_b Δλ n, evaluated as f = Δλ/|d| =
/// (−C − α̃λ)/((w_a + w_b + α̃)|d|) (one division), Δλ = f |d|, Δx_a = w_a f d, Δx_b = −w_b f d.
/// Every lane of the AVX2 kernel and the straightforward loop
/// ([`crate::sim::ReferenceSolver`]) evaluate exactly these operations in this order (true
/// square root and division, no fused multiply–add), so the three round identically and a sweep
/// in the same order gives bit-identical positions.
///
/// Works on either layout of the positions: the arrays ([`PosPtr`]) or the solver's
/// `[x, y, z, w]` copy ([`AosPtr`], see [`super::distance_copy`]).
///
/// # Safety
/// As [`project_raw`], and `j` < `batch.len()`.
#[inline(always)]
pub(super) unsafe fn project_one(pos: impl Shift, batch: &mut DistanceBatch, j: usize, inv_h2: f32, first: bool) {
    // SAFETY: the caller upholds this function's # Safety contract: as `project_raw`, and `j` <
    // `batch.len()`.
    unsafe {
        let (ia, ib) = (*batch.a.get_unchecked(j) as usize, *batch.b.get_unchecked(j) as usize);
        let (pa, pb) = (pos.get(ia), pos.get(ib));
        let d = [pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]];
        let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let alpha_tilde = *batch.compliance.get_unchecked(j) * inv_h2;
        let denom = pa[3] + pb[3] + alpha_tilde;
        let lambda = batch.lambda.get_unchecked_mut(j);
        let old = if first { 0.0 } else { *lambda };
        if !(len > MIN_LENGTH && denom > 0.0) {
            *lambda = old;
            return;
        }
        let f = (*batch.rest.get_unchecked(j) - len - alpha_tilde * old) / (denom * len);
        *lambda = old + f * len;
        let (fa, fb) = (pa[3] * f, pb[3] * f);
        // pb − fb d and pb + (−fb d) round alike, so both ends go through one compensated add.
        pos.shift(ia, pa, std::array::from_fn(|c| fa * d[c]));
        pos.shift(ib, pb, std::array::from_fn(|c| -(fb * d[c])));
    }
}

/// Positions a projection moves particles in: the f32 sum p + delta, and on the arrays also
/// its rounding error into the compensation when that is on ([`PosPtr::shift`]).
pub(super) trait Shift: ParticleAccess {
    /// Moves particle `i`, now at `p`, by `delta` (m).
    ///
    /// # Safety
    /// As [`ParticleAccess::set_xyz`].
    unsafe fn shift(self, i: usize, p: PosW, delta: [f32; 3]);
}

impl Shift for PosPtr {
    #[inline(always)]
    unsafe fn shift(self, i: usize, p: PosW, delta: [f32; 3]) {
        // SAFETY: the caller upholds `Shift::shift`'s contract (# Safety): as
        // `ParticleAccess::set_xyz`.
        unsafe { PosPtr::shift(self, i, p, delta) }
    }
}

impl Shift for AosPtr {
    #[inline(always)]
    unsafe fn shift(self, i: usize, p: PosW, delta: [f32; 3]) {
        // SAFETY: the caller upholds `Shift::shift`'s contract (# Safety): as
        // `ParticleAccess::set_xyz`.
        unsafe {
            self.set_xyz(i, std::array::from_fn(|c| p[c] + delta[c]));
        }
    }
}

/// Strain statistics of a batch's stretch edges (other kinds are skipped).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct StrainSums {
    /// Largest engineering strain (l − l0)/l0, at least 0.
    pub max_strain: f32,
    /// Σ |strain|.
    pub abs_sum: f64,
    /// Number of stretch edges.
    pub count: usize,
    /// Largest −λ (N·s²), at least 0: the largest tension times h².
    pub max_neg_lambda: f32,
}

impl StrainSums {
    /// Adds one edge; `strain` as [`strain`] gives it.
    fn add(&mut self, strain: f32, lambda: f32) {
        self.max_strain = self.max_strain.max(strain);
        self.abs_sum += strain.abs() as f64;
        self.count += 1;
        self.max_neg_lambda = self.max_neg_lambda.max(-lambda);
    }

    /// Both sets together.
    pub fn merge(self, other: Self) -> Self {
        StrainSums {
            max_strain: self.max_strain.max(other.max_strain),
            abs_sum: self.abs_sum + other.abs_sum,
            count: self.count + other.count,
            max_neg_lambda: self.max_neg_lambda.max(other.max_neg_lambda),
        }
    }
}

/// Engineering strain (l − l0)/l0 of an edge of length `len` and rest length `rest` (0 for a
/// zero rest length).
#[inline(always)]
pub(crate) fn strain(len: f32, rest: f32) -> f32 {
    if rest > 0.0 {
        (len - rest) / rest
    } else {
        0.0
    }
}

/// [`StrainSums`] of the stretch edges of `batch`: eight per AVX2 vector when the batch holds
/// only stretch edges, else one at a time.
///
/// # Safety
/// Every particle index in `batch` must be in bounds of `pos` (a [`super::ConstraintSet`]'s
/// particle count at most `pos.len()`).
pub(crate) unsafe fn strain_sums(kernel: Kernel, pos: &Positions, batch: &DistanceBatch) -> StrainSums {
    // SAFETY: the caller upholds this function's # Safety contract: every particle index in `batch`
    // must be in bounds of `pos` (a `super::ConstraintSet`'s particle count at most `pos.len()`).
    unsafe {
        let mut sums = StrainSums::default();
        let stretch = batch.stretch_count;
        if stretch == 0 {
            return sums;
        }
        let mut scalar_from = 0;
        #[cfg(target_arch = "x86_64")]
        if kernel.has_avx2() && stretch == batch.len() {
            (sums, scalar_from) = avx2::strain_sums(pos.read_only(), batch);
        }
        for slot in (scalar_from..batch.len()).filter(|&slot| batch.kind[slot] == EdgeKind::Stretch) {
            let (a, b) = (pos.get(batch.a[slot] as usize), pos.get(batch.b[slot] as usize));
            let len = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
            sums.add(strain(len, batch.rest[slot]), batch.lambda[slot]);
        }
        sums
    }
}

/// The AVX2 kernel: eight constraints per vector. A batch shares no particle, so the eight
/// lanes never conflict.
#[cfg(target_arch = "x86_64")]
pub(super) mod avx2 {
    use std::arch::x86_64::*;

    use super::super::lanes::{Avx2, Lanes};
    use super::{project_one, solve_side_by_side, DistanceBatch, PosPtr, StripShape, TiledStrip, MIN_LENGTH};

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

    /// The projection of one vector of constraints at either width: from the rest lengths,
    /// compliances and λ before it, and the endpoints' x, y, z, w, the moved endpoints and the
    /// new λ. The operations of `project_one`, in its order: see there.
    ///
    /// # Safety
    /// The CPU must support `L`'s width (this is only inlined into a `#[target_feature]` function
    /// of that width).
    #[inline(always)]
    pub(in crate::sim::constraints) unsafe fn project_lanes<L: Lanes>(
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
            if batch.contiguous {
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
                        _ => (j..j + 8).for_each(|slot| project_one(pos, batch, slot, inv_h2, first)),
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
            let ends = if batch.contiguous {
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
                return (full..full + count).for_each(|slot| project_one(pos, batch, slot, inv_h2, lanes.first));
            };
            let lambda = project8(pos, lanes.inv_h2, lanes.load_masked(full, mask), ra, rb);
            lanes.store_first(full, count, lambda);
        }
    }

    /// [`super::strain_sums`] of the whole vectors of a batch of stretch edges (contiguous
    /// ends as plain loads, others gathered); returns the sums and where the scalar rest starts.
    /// Strain is (l − l0)/l0 as the scalar path evaluates it; Σ|strain| is summed per lane in
    /// f32, then in f64.
    ///
    /// # Safety
    /// Indices in bounds; the CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn strain_sums(pos: PosPtr, batch: &DistanceBatch) -> (super::StrainSums, usize) {
        // SAFETY: the caller upholds this function's # Safety contract: indices in bounds; the CPU
        // must support AVX2.
        unsafe {
            let n = batch.id.len();
            let full = n - n % 8;
            let zero = _mm256_setzero_ps();
            let (mut max_strain, mut abs_sum, mut max_neg_lambda) = (zero, zero, zero);
            for j in (0..full).step_by(8) {
                let (a, b) = if batch.contiguous {
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
            let sums = super::StrainSums {
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
    /// As [`super::project_group`]; the CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn project_strips(pos: PosPtr, strips: &mut [DistanceBatch], inv_h2: f32, first: bool) {
        // SAFETY: the caller upholds this function's # Safety contract: as `super::project_group`;
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
}

/// The extent of a strip (eight rows stored step by step, slot 8 s + k).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct StripShape {
    /// Steps (constraints per lane).
    steps: usize,
    /// Index offset from a constraint's first end to its second (1 along a row, 2 for second
    /// neighbours).
    offset: usize,
    /// Columns (particles per lane) the strip touches: steps + offset.
    columns: usize,
}

#[cfg(target_arch = "x86_64")]
impl StripShape {
    fn of(strip: &DistanceBatch) -> Self {
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
#[cfg(target_arch = "x86_64")]
trait TiledStrip {
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
/// The CPU must support AVX-512F, AVX2 and FMA (this is only inlined into the module's
/// `#[target_feature]` functions); every particle and slot read or written must be in bounds, and
/// no other thread may touch them during the call.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn solve_side_by_side<S: TiledStrip, const N: usize>(pos: PosPtr, mut in_flight: [S; N]) {
    // SAFETY: the caller guarantees support for AVX-512F, AVX2 and FMA, every particle and slot
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

/// Sixteen constraints per AVX-512F vector: the levels whose slot j joins particles a₀ + j and
/// b₀ + j (a row of a grid), the batch's end masked off, and the strips in pairs (sixteen
/// rows); other levels, and a strip without partner, run the AVX2 kernel. Every lane
/// evaluates [`avx2::project_lanes`], so the result is the AVX2 kernel's (and the
/// straightforward loop's) bit for bit.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::super::lanes::Avx512;
    use super::avx2::{project_batch, project_lanes};
    use super::{solve_side_by_side, DistanceBatch, PosPtr, StripShape, TiledStrip};

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
                match batch.contiguous {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (tests only need spread, not quality).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> f32 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 40) as f32 / (1u64 << 24) as f32
        }
    }

    /// [`project_with`] on particles given as `[x, y, z, w]`.
    fn project_aos(kernel: Kernel, pos: &mut Vec<PosW>, prev: &[PosW], batch: &mut DistanceBatch, k: SubstepConstants, first: bool) {
        let mut soa = Positions::from(pos.as_slice());
        project_with(kernel, &mut soa, &Vectors::from(prev), batch, k, first);
        *pos = soa.to_vec();
    }

    const K: SubstepConstants = SubstepConstants {
        inv_h2: 900.0 * 900.0,
        damping_over_h: 0.0,
        bend_gamma: 0.0,
    };

    fn item(a: u32, b: u32, rest: f32, compliance: f32) -> DistanceItem {
        DistanceItem {
            ends: [a, b],
            rest,
            compliance,
            kind: EdgeKind::Stretch,
        }
    }

    /// 2·`pairs` random particles (some pinned) and one constraint per pair, so no particle is
    /// shared; includes coincident ends, pinned–pinned pairs and zero rest lengths.
    fn random_batch(rng: &mut Lcg, pairs: u32) -> (Vec<PosW>, DistanceBatch) {
        let mut pos: Vec<PosW> = (0..2 * pairs)
            .map(|_| {
                let w = if rng.next() < 0.2 { 0.0 } else { 0.1 + 2.0 * rng.next() };
                [rng.next() * 2.0 - 1.0, rng.next() * 3.0, rng.next() - 0.5, w]
            })
            .collect();
        let mut batch = DistanceBatch::default();
        for j in 0..pairs {
            let (a, b) = (2 * j, 2 * j + 1);
            match j % 7 {
                0 => pos[b as usize] = [pos[a as usize][0], pos[a as usize][1], pos[a as usize][2], pos[b as usize][3]],
                1 => (pos[a as usize][3], pos[b as usize][3]) = (0.0, 0.0),
                _ => {}
            }
            let rest = if j % 5 == 0 { 0.0 } else { rng.next() };
            let compliance = [0.0, 1e-4, 1.0][j as usize % 3];
            batch.push(j, item(a, b, rest, compliance));
        }
        (pos, batch)
    }

    #[test]
    fn simd_kernel_matches_scalar_kernel_bit_for_bit_on_random_batches() {
        if Kernel::detect() == Kernel::Scalar {
            return; // nothing to compare on this CPU
        }
        let mut rng = Lcg(7);
        for pairs in [1, 7, 8, 9, 64, 203] {
            let (pos, batch) = random_batch(&mut rng, pairs);
            let [scalar, simd] = [Kernel::Scalar, Kernel::Avx2].map(|kernel| {
                let (mut p, mut b) = (pos.clone(), batch.clone());
                project_aos(kernel, &mut p, &pos, &mut b, K, true);
                project_aos(kernel, &mut p, &pos, &mut b, K, false);
                (p, b)
            });
            // Same operations in the same order: the lanes round exactly as the scalar loop.
            assert!(simd.0.iter().flatten().all(|v| v.is_finite()));
            assert_eq!(scalar.0, simd.0, "positions");
            assert_eq!(scalar.1.lambda, simd.1.lambda, "λ");
        }
    }

    /// Contiguous levels (slot j joins particles j and n + j) through the level loop of every
    /// kernel: AVX2 vectors with a masked remainder, AVX-512 vectors with the end masked off;
    /// both round exactly as the scalar loop. Sizes around eight and sixteen lanes.
    #[test]
    fn contiguous_levels_match_the_scalar_loop_bit_for_bit_at_every_width() {
        let mut rng = Lcg(5);
        for n in [1u32, 7, 8, 9, 15, 16, 17, 40, 203] {
            let (pairs, random) = random_batch(&mut rng, n);
            let mut pos = pairs.clone();
            let mut level = DistanceBatch::default();
            for j in 0..n {
                // The random batch's pair j, renumbered to particles j and n + j.
                (pos[j as usize], pos[(n + j) as usize]) = (pairs[2 * j as usize], pairs[2 * j as usize + 1]);
                let DistanceItem { rest, compliance, .. } = random.get(j as usize);
                level.push(j, item(j, n + j, rest, compliance));
            }
            assert!(level.is_contiguous());
            let run = |kernel: Kernel| {
                let (mut p, prev, mut batches) = (Positions::from(pos.as_slice()), Vectors::from(pos.as_slice()), [level.clone()]);
                for first in [true, false] {
                    // SAFETY: indices in range, single thread, kernel supported.
                    unsafe { project_group(kernel, p.raw(), prev.read_only(), &mut batches, false, K, first) };
                }
                (p.to_vec(), batches[0].lambda.clone())
            };
            let scalar = run(Kernel::Scalar);
            // (The one constraint of n = 1 is degenerate: zero length.)
            assert!(n == 1 || scalar.0 != pos, "the level moved its particles");
            for kernel in Kernel::vector_kernels_for("contiguous_levels_match_the_scalar_loop_bit_for_bit_at_every_width") {
                assert!(run(kernel) == scalar, "{n} constraints: {kernel:?} differs from the scalar loop");
            }
        }
    }

    #[test]
    fn every_kernel_solves_a_rigid_constraint_exactly_and_skips_degenerate_ones() {
        for kernel in [Kernel::Scalar, Kernel::detect()] {
            // Eight copies so the SIMD lanes run, plus one in the scalar remainder.
            let mut pos = Vec::new();
            let mut batch = DistanceBatch::default();
            for j in 0..9u32 {
                pos.push([0.0, j as f32, 0.0, 1.0]);
                pos.push([2.0, j as f32, 0.0, 3.0]);
                batch.push(j, item(2 * j, 2 * j + 1, 1.0, 0.0));
            }
            // Degenerate: the last pair coincides.
            pos[17] = pos[16];
            let prev = pos.clone();
            project_aos(kernel, &mut pos, &prev, &mut batch, K, true);
            for j in 0..8 {
                let (a, b) = (pos[2 * j], pos[2 * j + 1]);
                // C = 1 m shared 1 : 3 by inverse mass: a moves 0.25 m, b 0.75 m.
                assert!((a[0] - 0.25).abs() < 1e-6 && (b[0] - 1.25).abs() < 1e-6, "{kernel:?} {a:?} {b:?}");
                assert!((batch.lambda[j] + 0.25).abs() < 1e-6, "λ = −C/(w_a + w_b)");
            }
            assert_eq!(pos[16], prev[16]);
            assert_eq!(pos[17], prev[17]);
            assert_eq!(batch.lambda[8], 0.0);
        }
    }

    #[test]
    fn first_sweep_overwrites_stale_lambda_and_later_sweeps_keep_the_compliance_term() {
        for kernel in [Kernel::Scalar, Kernel::detect()] {
            let mut pos = vec![[0.0, 0.0, 0.0, 1.0], [2.0, 0.0, 0.0, 1.0]];
            let prev = pos.clone();
            let mut batch = DistanceBatch::default();
            batch.push(0, item(0, 1, 1.0, 1e-6));
            batch.lambda[0] = 123.0;
            project_aos(kernel, &mut pos, &prev, &mut batch, K, true);
            let alpha_tilde = 1e-6 * K.inv_h2;
            let first = -1.0 / (2.0 + alpha_tilde);
            assert!((batch.lambda[0] - first).abs() < 1e-6 * first.abs());
            // Second sweep: Δλ = (−C − α̃λ)/(w + α̃) with the remaining C.
            let c = (pos[1][0] - pos[0][0]) - 1.0;
            project_aos(kernel, &mut pos, &prev, &mut batch, K, false);
            let expected = first + (-c - alpha_tilde * first) / (2.0 + alpha_tilde);
            assert!(
                (batch.lambda[0] - expected).abs() < 1e-5 * expected.abs(),
                "{} vs {expected}",
                batch.lambda[0]
            );
        }
    }

    /// Strain statistics: a row of edges each stretched to (1 + k/10) of its rest length has
    /// strains k/10 exactly as computed; the vector path (contiguous, gathered, with a scalar
    /// rest) agrees with the scalar one.
    #[test]
    fn strain_sums_give_the_closed_form_strains_on_every_path() {
        // Particles 0..=n on the x axis, edge k from particle k to k + 1 with rest length 0.1
        // and actual length 0.1 · (1 + k/10); λ = −k.
        let n = 19u32;
        let mut x = 0.0f32;
        let mut pos = vec![[0.0, 0.0, 0.0, 1.0]];
        for k in 0..n {
            x += 0.1 * (1.0 + k as f32 / 10.0);
            pos.push([x, 0.0, 0.0, 1.0]);
        }
        let soa = Positions::from(pos.as_slice());
        let expected = |order: &[u32]| {
            let strains: Vec<f32> = order
                .iter()
                .map(|&k| strain(soa.arrays()[0][k as usize + 1] - soa.arrays()[0][k as usize], 0.1))
                .collect();
            (
                strains.iter().fold(0.0f32, |m, &s| m.max(s)),
                strains.iter().map(|&s| s.abs() as f64).sum::<f64>(),
            )
        };
        for order in [(0..n).collect::<Vec<u32>>(), (0..n).rev().collect()] {
            let mut batch = DistanceBatch::default();
            for &k in &order {
                batch.push(k, item(k, k + 1, 0.1, 0.0));
                *batch.lambda.last_mut().unwrap() = -(k as f32);
            }
            assert_eq!(batch.is_contiguous(), order[0] == 0);
            let (max_strain, abs_sum) = expected(&order);
            // The closed form, to the rounding of the positions.
            assert!((max_strain - 1.8).abs() < 1e-5, "{max_strain}");
            for kernel in [Kernel::Scalar, Kernel::detect()] {
                // SAFETY: indices below n + 1 = pos.len().
                let sums = unsafe { strain_sums(kernel, &soa, &batch) };
                assert_eq!(sums.count, n as usize);
                assert_eq!(sums.max_strain, max_strain, "{kernel:?}");
                assert_eq!(sums.max_neg_lambda, (n - 1) as f32, "{kernel:?}");
                assert!(
                    (sums.abs_sum - abs_sum).abs() < 1e-6 * abs_sum,
                    "{kernel:?}: {} vs {abs_sum}",
                    sums.abs_sum
                );
            }
            // A shear edge (stretched 10×) in the batch is not a stretch edge: same sums, on
            // the one-at-a-time path; removing it again restores the vector path's input.
            let shear = DistanceItem {
                kind: EdgeKind::Shear,
                ..item(0, n, 0.01, 0.0)
            };
            batch.push(n, shear);
            // SAFETY: as above.
            let with_shear = unsafe { strain_sums(Kernel::detect(), &soa, &batch) };
            assert_eq!((with_shear.count, with_shear.max_strain), (n as usize, max_strain));
            batch.swap_remove(n as usize);
            // SAFETY: as above.
            assert_eq!(unsafe { strain_sums(Kernel::detect(), &soa, &batch) }.count, n as usize);
        }
    }
}
