//! A colour batch of hinges: its storage (structure of arrays), its damping, the scalar loop
//! over [`super::correction`] and the choice between that loop and the vector kernel.

use std::ops::Range;

use super::{correction, damped};
use crate::sim::constraints::distance::{Kernel, SubstepConstants};
use crate::sim::constraints::Batch;
use crate::sim::particles::{xyz, AosPtr, ParticleAccess, PosPtr, Positions, VecPtr, Vectors};

#[cfg(target_arch = "x86_64")]
use super::vector::Storage;
#[cfg(target_arch = "x86_64")]
use crate::sim::constraints::lanes::{Avx2, Avx512};

/// One hinge as the solver stores it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HingeItem {
    /// p0, p1 (wings), p2, p3 (shared edge), as in [`crate::sim::constraints::bend`].
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
    /// `compliance` while a damped substep projects (see the parent module's docs).
    damped: [Vec<f32>; 2],
    /// The vector kernels run the hinges after the last whole vector as one padded vector
    /// (default `false`: with the scalar code). Set on the chunks of a colour's parts
    /// ([`Batch::pad_rest`]), so that a hinge's rounding does not depend on where its chunk
    /// ends, hence on the number of parts.
    pub(super) padded_rest: bool,
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
        let n = self.id.len();
        let [rest, compliance] = &mut self.damped;
        rest.resize(n, 0.0);
        compliance.resize(n, 0.0);
        for j in 0..n {
            // SAFETY: the caller upholds this function's # Safety contract: every index in
            // bounds of `prev`; no other thread writing those particles.
            let start = std::array::from_fn(|i| unsafe { prev.get(self.particles[i][j] as usize) });
            (rest[j], compliance[j]) = damped(start, self.rest_angle[j], self.compliance[j], k.bend_gamma);
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
trait HingePositions: Storage<Avx2> + Storage<Avx512> {}
#[cfg(target_arch = "x86_64")]
impl<P: Storage<Avx2> + Storage<Avx512>> HingePositions for P {}
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
                return super::vector::project(kernel, pos, batch, k.inv_h2, first);
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

/// The scalar projection of slots `range` (damping is folded into the batch's values).
///
/// # Safety
/// As [`project_raw`].
pub(super) unsafe fn project_scalar(
    pos: impl ParticleAccess,
    batch: &mut HingeBatch,
    range: Range<usize>,
    k: SubstepConstants,
    first: bool,
) {
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
            let w = particles.map(|q| q[3]);
            let Some(step) = correction(p, w, item.rest_angle, item.compliance * k.inv_h2, *lambda) else {
                continue;
            };
            *lambda += step.delta_lambda;
            for i in 0..4 {
                pos.set_xyz(idx[i], (p[i] + step.moves[i]).to_array());
            }
        }
    }
}
