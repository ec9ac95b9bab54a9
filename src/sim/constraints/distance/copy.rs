//! Distance constraints on the solver's `[x, y, z, w]` copy of the positions: the kernel of a
//! coloured distance sweep (a mesh not numbered like a grid; see the sweep order in
//! [`constraints`](crate::sim::constraints)).
//!
//! A colour's constraints share no particle, but their particles lie anywhere in memory, so
//! the level kernels' row loads do not apply, and gathers (four per endpoint) cost more than
//! scalar projections on the CPUs measured. On the `[x, y, z, w]` copy the hinge phases use
//! anyway, an endpoint is one 16-byte load and one store, transposed in registers, so a colour
//! runs eight (AVX2) or sixteen (AVX-512) constraints per vector, the last few one at a time.
//! Every lane and the scalar remainder evaluate [`solve`](super::solve) operation for
//! operation, so both widths give the same positions bit for bit, and any number of threads
//! the same as well.
//!
//! The solver copies the positions in before the distance phases when they run here
//! (a [`Placement::Copy`](crate::sim::constraints::Placement::Copy) set in
//! [`SweepPlan::placements`](crate::sim::constraints::SweepPlan::placements)), instead of before
//! the hinge phases.

use super::kernel::{project_slot, with_damping};
use super::{DistanceBatch, Kernel, SubstepConstants, SubstepStart};
use crate::sim::particles::AosPtr;

/// Projects a group's batches in order on the `[x, y, z, w]` copy `copy` (`prev`, the start
/// positions, is only read for damping). Strips (`chained`) run one slot at a time in slot
/// order, an order each of their lanes keeps.
///
/// # Safety
/// Every particle index in `batches` must be in bounds of `copy` and `prev`, no other thread
/// may touch those particles during the call, and `kernel` must be supported by this CPU.
pub(crate) unsafe fn project_group(
    kernel: Kernel,
    copy: AosPtr,
    start: SubstepStart,
    batches: &mut [DistanceBatch],
    chained: bool,
    k: SubstepConstants,
    first: bool,
) {
    // SAFETY: the caller upholds this function's # Safety contract: every particle index in
    // `batches` must be in bounds of `copy` and `prev`, no other thread may touch those particles
    // during the call, and `kernel` must be supported by this CPU.
    unsafe {
        with_damping(batches, copy, start, k, first, |batches| {
            for batch in batches {
                let vector = if chained { Kernel::Scalar } else { kernel };
                let scalar_from = whole_vectors(vector, copy, batch, k.inv_h2, first);
                (scalar_from..batch.id.len()).for_each(|j| project_slot(copy, batch, j, k.inv_h2, first));
            }
        });
    }
}

/// Projects the whole vectors of `batch` with `kernel`; returns the first slot left for the
/// scalar loop.
///
/// # Safety
/// As [`project_group`].
unsafe fn whole_vectors(kernel: Kernel, copy: AosPtr, batch: &mut DistanceBatch, inv_h2: f32, first: bool) -> usize {
    // SAFETY: the caller upholds this function's # Safety contract: as `project_group`.
    unsafe {
        match kernel {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => vector::project_avx512(copy, batch, inv_h2, first),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => vector::project_avx2(copy, batch, inv_h2, first),
            _ => 0,
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod vector {
    use super::super::super::lanes::{Avx2, Avx512, Lanes};
    use super::super::vector::project_lanes;
    use super::{AosPtr, DistanceBatch};

    /// [`project_whole`] eight constraints per vector.
    ///
    /// # Safety
    /// As [`super::project_group`]; the CPU must support AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn project_avx2(copy: AosPtr, batch: &mut DistanceBatch, inv_h2: f32, first: bool) -> usize {
        // SAFETY: the caller upholds this function's # Safety contract: as `super::project_group`;
        // the CPU must support AVX2 and FMA.
        unsafe { project_whole::<Avx2>(copy, batch, inv_h2, first) }
    }

    /// [`project_whole`] sixteen constraints per vector.
    ///
    /// # Safety
    /// As [`super::project_group`]; the CPU must support AVX-512F, AVX2 and FMA.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn project_avx512(copy: AosPtr, batch: &mut DistanceBatch, inv_h2: f32, first: bool) -> usize {
        // SAFETY: the caller upholds this function's # Safety contract: as `super::project_group`;
        // the CPU must support AVX-512F, AVX2 and FMA.
        unsafe { project_whole::<Avx512>(copy, batch, inv_h2, first) }
    }

    /// The whole vectors of `batch`: endpoints loaded and stored through the copy, λ and the
    /// constraint data loaded as vectors. Returns where the remainder starts.
    ///
    /// # Safety
    /// As [`super::project_group`]; only inlined into a `#[target_feature]` function of `L`'s
    /// width.
    #[inline(always)]
    unsafe fn project_whole<L: Lanes>(copy: AosPtr, batch: &mut DistanceBatch, inv_h2: f32, first: bool) -> usize {
        // SAFETY: the caller upholds this function's # Safety contract: as `super::project_group`;
        // only inlined into a `#[target_feature]` function of `L`'s width.
        unsafe {
            let n = batch.id.len();
            let full = n - n % L::WIDTH;
            let inv_h2 = L::splat(inv_h2);
            let (a, b) = (batch.a.as_ptr(), batch.b.as_ptr());
            let (rest, compliance, lambda) = (batch.rest.as_ptr(), batch.compliance.as_ptr(), batch.lambda.as_mut_ptr());
            let mut j = 0;
            while j < full {
                let old_lambda = if first { L::splat(0.0) } else { L::load(lambda.add(j)) };
                let meta = [L::load(rest.add(j)), L::load(compliance.add(j)), old_lambda];
                let (ends_a, ends_b) = (L::load_aos(copy, a.add(j)), L::load_aos(copy, b.add(j)));
                let (moved_a, moved_b, new_lambda) = project_lanes::<L>(inv_h2, meta, ends_a, ends_b);
                L::store_aos(copy, a.add(j), moved_a);
                L::store_aos(copy, b.add(j), moved_b);
                L::store(lambda.add(j), new_lambda);
                j += L::WIDTH;
            }
            full
        }
    }
}
