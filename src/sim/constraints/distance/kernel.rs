//! Which loops project the batches ([`Kernel`]), and the projection of a batch or of a group
//! of batches with the chosen one: the scalar loop here ([`project_slot`], on either layout of
//! the positions), the vector kernels in the width modules.

#[cfg(target_arch = "x86_64")]
use super::{avx2, avx512};
use super::{solve, solve_damped, Correction, DistanceBatch, SubstepConstants, SubstepStart};
use crate::sim::particles::{AosPtr, ParticleAccess, PosPtr, PosW, Positions, Vectors};

/// Which projection loops run the batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    let start = SubstepStart {
        prev: prev.read_only(),
        comp: None,
    };
    // SAFETY: indices checked above; the arrays are borrowed exclusively.
    unsafe { project_raw(kernel, pos.raw(), start, batch, k, first) }
}

/// The projection on raw particle arrays, so that the parts of a phase can be solved by as many
/// threads (one part each, up to [`MAX_PARTS`](crate::sim::constraints::MAX_PARTS)).
///
/// # Safety
/// Every particle index in `batch` must be in bounds of `pos` and `prev`, no other thread may
/// touch those particles during the call, and `kernel` must be supported by this CPU.
pub(crate) unsafe fn project_raw(
    kernel: Kernel,
    pos: PosPtr,
    start: SubstepStart,
    batch: &mut DistanceBatch,
    k: SubstepConstants,
    first: bool,
) {
    // SAFETY: the caller upholds this function's # Safety contract: every particle index in `batch`
    // must be in bounds of `pos` and `prev`, no other thread may touch those particles during the
    // call, and `kernel` must be supported by this CPU.
    unsafe {
        with_damping(std::slice::from_mut(batch), pos, start, k, first, |batches| {
            let batch = &mut batches[0];
            match kernel {
                #[cfg(target_arch = "x86_64")]
                Kernel::Avx2 | Kernel::Avx512 if pos.comp.is_none() => avx2::project(pos, batch, k.inv_h2, first),
                _ => (0..batch.id.len()).for_each(|j| project_slot(pos, batch, j, k.inv_h2, first)),
            }
        });
    }
}

/// Projects a group's batches in order, in one call: level batches, or strips (see
/// [`Group::chained`](crate::sim::constraints::Group::chained): eight lanes, each a run of constraints solved in order, stored
/// step by step).
///
/// # Safety
/// As [`project_raw`], for every batch; strips share no particle with each other.
pub(crate) unsafe fn project_group(
    kernel: Kernel,
    pos: PosPtr,
    start: SubstepStart,
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
        with_damping(batches, pos, start, k, first, |batches| match vector {
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
                    .for_each(|batch| project_raw(kernel, pos, start, batch, undamped, first));
            }
        });
    }
}

/// Runs `project` on `batches`, or, when constraint damping acts on any of them, projects
/// them in order slot by slot with the damped update ([`project_slot_damped`]; see
/// [`super`]'s damping). The slot order is the one every kernel keeps, so the results are the
/// same whichever kernel and however many threads.
///
/// # Safety
/// As [`project_raw`] for every batch.
pub(super) unsafe fn with_damping<P: Shift>(
    batches: &mut [DistanceBatch],
    pos: P,
    start: SubstepStart,
    k: SubstepConstants,
    first: bool,
    project: impl FnOnce(&mut [DistanceBatch]),
) {
    if !batches.iter().any(|b| b.is_damped(k)) {
        return project(batches);
    }
    for batch in batches {
        for j in 0..batch.id.len() {
            // SAFETY: the caller upholds this function's # Safety contract (as `project_raw`),
            // and j < batch.len().
            unsafe { project_slot_damped(pos, start, batch, j, k, first) };
        }
    }
}

/// [`project_slot`] with constraint damping: [`solve_damped`] with γ = α β/h and the ends'
/// motions since the substep began ([`SubstepStart::motion`]).
///
/// # Safety
/// As [`project_raw`], and `j` < `batch.len()`.
#[inline(always)]
unsafe fn project_slot_damped(pos: impl Shift, start: SubstepStart, batch: &mut DistanceBatch, j: usize, k: SubstepConstants, first: bool) {
    // SAFETY: the caller upholds this function's # Safety contract: as `project_raw`, and `j` <
    // `batch.len()`.
    unsafe {
        project_slot_with(pos, batch, j, first, |[ia, ib], [xa, xb], [wa, wb], rest, compliance, old| {
            let motion = [start.motion(ia, xa), start.motion(ib, xb)];
            let (alpha_tilde, gamma) = (compliance * k.inv_h2, compliance * k.damping_over_h);
            solve_damped(xa, wa, xb, wb, motion, rest, alpha_tilde, gamma, old)
        });
    }
}

/// Projects slot `j` of `batch` once ([`solve`] on its ends, rest length, α̃ = α/h² and λ),
/// writing the moved ends and the new λ. On the first sweep of a substep (`first`) λ is taken
/// as 0 and overwritten, also where the constraint is degenerate.
///
/// Works on either layout of the positions: the arrays ([`PosPtr`]) or the solver's
/// `[x, y, z, w]` copy ([`AosPtr`], see [`super::copy`]).
///
/// # Safety
/// As [`project_raw`], and `j` < `batch.len()`.
#[inline(always)]
pub(super) unsafe fn project_slot(pos: impl Shift, batch: &mut DistanceBatch, j: usize, inv_h2: f32, first: bool) {
    // SAFETY: the caller upholds this function's # Safety contract: as `project_raw`, and `j` <
    // `batch.len()`.
    unsafe {
        project_slot_with(pos, batch, j, first, |_, [xa, xb], [wa, wb], rest, compliance, old| {
            solve(xa, wa, xb, wb, rest, compliance * inv_h2, old)
        });
    }
}

/// The body of the slot loops: reads slot `j`'s ends (indices, positions, inverse masses),
/// rest length, compliance and λ (0 on the first sweep), runs `solve` on them and writes the
/// moved ends and the new λ (the old one where `solve` gives nothing).
///
/// # Safety
/// As [`project_raw`], and `j` < `batch.len()`.
#[inline(always)]
unsafe fn project_slot_with(
    pos: impl Shift,
    batch: &mut DistanceBatch,
    j: usize,
    first: bool,
    solve: impl FnOnce([usize; 2], [[f32; 3]; 2], [f32; 2], f32, f32, f32) -> Option<Correction>,
) {
    // SAFETY: the caller upholds this function's # Safety contract: as `project_raw`, and `j` <
    // `batch.len()`.
    unsafe {
        let (ia, ib) = (*batch.a.get_unchecked(j) as usize, *batch.b.get_unchecked(j) as usize);
        let (pa, pb) = (pos.get(ia), pos.get(ib));
        let lambda = batch.lambda.get_unchecked_mut(j);
        let old = if first { 0.0 } else { *lambda };
        let [xa, ya, za, wa] = pa;
        let [xb, yb, zb, wb] = pb;
        let (rest, compliance) = (*batch.rest.get_unchecked(j), *batch.compliance.get_unchecked(j));
        let Some(correction) = solve([ia, ib], [[xa, ya, za], [xb, yb, zb]], [wa, wb], rest, compliance, old) else {
            *lambda = old;
            return;
        };
        *lambda = old + correction.delta_lambda;
        // x_b − w_b f d and x_b + (−(w_b f d)) round alike, so both ends go through one
        // compensated add.
        pos.shift(ia, pa, correction.delta_a);
        pos.shift(ib, pb, correction.delta_b);
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
