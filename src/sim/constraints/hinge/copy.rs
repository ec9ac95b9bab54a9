//! The `[x, y, z, w]` copy of the positions that the vector hinge kernel runs on: one 16-byte
//! load or store per particle, where the solver's arrays (one per coordinate) take a gather
//! or a scattered store per coordinate. The solver copies its particle ranges in before the
//! hinge phases and back after them, eight particles at a time by an AVX2 transpose.

use std::ops::Range;

use crate::sim::constraints::distance::Kernel;
use crate::sim::particles::{xyz, AosPtr, ParticleAccess, PosPtr};

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

#[cfg(target_arch = "x86_64")]
mod vector {
    use std::arch::x86_64::*;
    use std::ops::Range;

    use crate::sim::constraints::lanes::{Avx2, Lanes};
    use crate::sim::particles::{AosPtr, PosPtr};

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
}
