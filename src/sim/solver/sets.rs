//! The constraint sets a frame solves, as data: each registered set is a [`FrameSet`] (its
//! phases' groups and the [`SetKernels`] that project them), and [`super::Frame::run`] solves
//! them in the order of [`SweepStep::order`](crate::sim::constraints::SweepStep::order)
//! without knowing their types. A constraint type brings its kernels here as a
//! [`SolvedBatch`] (distances and hinges are the examples; caller-defined types get the
//! scalar XPBD update of [`custom`](crate::sim::constraints::custom)) and is registered in `ConstraintStore::registry`
//! (`src/sim/constraint_store.rs`).

use super::{Frame, PhaseClock, Pipeline};
use crate::sim::constraints::custom::{CustomBatch, CustomConstraint};
use crate::sim::constraints::distance::copy as distance_copy;
use crate::sim::constraints::distance::{self, DistanceBatch, Kernel};
use crate::sim::constraints::hinge::{self, HingeBatch};
use crate::sim::constraints::{Batch, Group};
use crate::sim::particles::AosPtr;

/// Where a sweep is in the frame.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SweepPoint {
    /// The first sweep of its substep: multipliers restart from zero.
    pub first: bool,
    /// The first sweep of the frame: per-frame data (the hinges' damping terms) is refreshed.
    pub first_of_frame: bool,
}

/// How a frame projects one constraint type.
pub(crate) struct SetKernels<B: Batch> {
    /// One unit of a phase part: its batches in order (strips when `chained`), on the
    /// `[x, y, z, w]` copy when one is given, otherwise on the particle arrays.
    ///
    /// # Safety
    /// The frame's pointers are valid and no other thread touches the unit's particles.
    pub unit: unsafe fn(&Frame, Option<AosPtr>, &mut [B], bool, SweepPoint),
    /// The tail group (constraints re-pointed or added by tearing), on the particle arrays,
    /// by one thread: its colours in order, then its serial batch one constraint at a time.
    ///
    /// # Safety
    /// The frame's pointers are valid and no other thread runs.
    pub tail: unsafe fn(&Frame, &mut Group<B>, SweepPoint),
    /// The [`PhaseClock`] phase its time is charged to.
    pub clock: usize,
}

/// One registered constraint set as the threads of a frame solve it.
pub(crate) trait FrameSet: Sync {
    /// Phases of the set (each cut into the frame's parts).
    fn phase_count(&self) -> usize;
    /// The [`PhaseClock`] phase its time is charged to.
    fn clock(&self) -> usize;
    /// Phase part `g`'s units in order, each after the other threads' units it waits for.
    ///
    /// # Safety
    /// As [`Frame::run`]: the frame's pointers are valid, and this thread owns part `g % parts`.
    unsafe fn solve_units(&self, frame: &Frame, g: usize, pipeline: &mut Pipeline, at: SweepPoint);
    /// The tail group, by one thread while the others wait.
    ///
    /// # Safety
    /// As [`Frame::run`], with no other thread running.
    unsafe fn solve_tail(&self, frame: &Frame, at: SweepPoint);
}

/// A [`super::super::constraints::ConstraintSet`]'s groups (phase parts `phase * parts +
/// part`, then the tail group) lent to one frame, with its kernels.
pub(crate) struct SetInFrame<B: Batch> {
    groups: *mut Group<B>,
    phases: usize,
    parts: usize,
    /// Solved on the `[x, y, z, w]` copy when the frame has one.
    on_copy: bool,
    kernels: SetKernels<B>,
}

impl<B: Batch> SetInFrame<B> {
    /// `groups` must point at `phases * parts + 1` groups that stay valid and untouched by
    /// anything else while a frame uses them.
    pub fn new(groups: &mut [Group<B>], phases: usize, parts: usize, on_copy: bool, kernels: SetKernels<B>) -> Self {
        assert_eq!(groups.len(), phases * parts + 1, "phase parts and the tail group");
        Self {
            groups: groups.as_mut_ptr(),
            phases,
            parts,
            on_copy,
            kernels,
        }
    }
}

// SAFETY: the threads of a frame touch disjoint groups (each its own parts; the tail group by
// one thread between barriers), see `Frame::run`.
unsafe impl<B: Batch> Sync for SetInFrame<B> {}
// SAFETY: as above; the groups outlive the frame (`Cloth::step` waits for every thread).
unsafe impl<B: Batch> Send for SetInFrame<B> {}

impl<B: Batch> FrameSet for SetInFrame<B> {
    fn phase_count(&self) -> usize {
        self.phases
    }

    fn clock(&self) -> usize {
        self.kernels.clock
    }

    unsafe fn solve_units(&self, frame: &Frame, g: usize, pipeline: &mut Pipeline, at: SweepPoint) {
        // SAFETY: the caller guarantees the pointers valid and part `g % parts` this thread's
        // alone (see # Safety).
        unsafe {
            let group = &mut *self.groups.add(g);
            let copy = frame.aos_copy.filter(|_| self.on_copy);
            for unit in 0..group.unit_count() {
                let chained = group.chained;
                let (batches, waits) = group.unit_mut(unit);
                pipeline.unit(g % self.parts, waits, || (self.kernels.unit)(frame, copy, batches, chained, at));
            }
        }
    }

    unsafe fn solve_tail(&self, frame: &Frame, at: SweepPoint) {
        // SAFETY: the caller guarantees the pointers valid and no other thread running.
        unsafe { (self.kernels.tail)(frame, &mut *self.groups.add(self.phases * self.parts), at) }
    }
}

/// A batch type the frame can solve: its kernels.
pub(crate) trait SolvedBatch: Batch + Clone + std::fmt::Debug + Send + Sync + 'static {
    /// How a frame projects a unit and the tail group of this type.
    const KERNELS: SetKernels<Self>;
}

/// Distance constraints: levels and strips with the vector kernels, on the copy for a
/// coloured sweep (see [`distance_copy`]).
impl SolvedBatch for DistanceBatch {
    const KERNELS: SetKernels<Self> = SetKernels {
        unit: distance_unit,
        tail: distance_tail,
        clock: PhaseClock::DISTANCES,
    };
}

/// Bending hinges: colour chunks, on the copy when there is one.
impl SolvedBatch for HingeBatch {
    const KERNELS: SetKernels<Self> = SetKernels {
        unit: hinge_unit,
        tail: hinge_tail,
        clock: PhaseClock::HINGES,
    };
}

/// Caller-defined constraints: the scalar XPBD update
/// ([`crate::sim::constraints::custom::project`]) on the particle
/// arrays, charged to the distances' time.
impl<C: CustomConstraint> SolvedBatch for CustomBatch<C> {
    const KERNELS: SetKernels<Self> = SetKernels {
        unit: custom_unit::<C>,
        tail: custom_tail::<C>,
        clock: PhaseClock::DISTANCES,
    };
}

/// # Safety
/// As [`SetKernels::unit`].
unsafe fn custom_unit<C: CustomConstraint>(
    frame: &Frame,
    _copy: Option<AosPtr>,
    batches: &mut [CustomBatch<C>],
    _chained: bool,
    at: SweepPoint,
) {
    let inv_h2 = frame.settings.constants.inv_h2;
    for batch in batches {
        // SAFETY: the caller guarantees the pointers valid and the unit's particles not shared.
        unsafe { batch.project_all(frame.pos, inv_h2, at.first) };
    }
}

/// # Safety
/// As [`SetKernels::tail`].
unsafe fn custom_tail<C: CustomConstraint>(frame: &Frame, group: &mut Group<CustomBatch<C>>, at: SweepPoint) {
    // SAFETY: the caller guarantees the pointers valid and no other thread running.
    unsafe { custom_unit(frame, None, &mut group.batches, false, at) };
    // SAFETY: as above.
    unsafe { custom_unit(frame, None, std::slice::from_mut(&mut group.tail), false, at) };
}

/// # Safety
/// As [`SetKernels::unit`].
unsafe fn distance_unit(frame: &Frame, copy: Option<AosPtr>, batches: &mut [DistanceBatch], chained: bool, at: SweepPoint) {
    let k = frame.settings.constants;
    // SAFETY: the caller guarantees the pointers valid and the unit's particles not shared.
    unsafe {
        match copy {
            Some(copy) => distance_copy::project_group(frame.kernel, copy, frame.start(), batches, chained, k, at.first),
            None => distance::project_group(frame.kernel, frame.pos, frame.start(), batches, chained, k, at.first),
        }
    }
}

/// # Safety
/// As [`SetKernels::tail`].
unsafe fn distance_tail(frame: &Frame, group: &mut Group<DistanceBatch>, at: SweepPoint) {
    let k = frame.settings.constants;
    // SAFETY: the caller guarantees the pointers valid and no other thread running.
    unsafe {
        distance::project_group(
            frame.kernel,
            frame.pos,
            frame.start(),
            &mut group.batches,
            group.chained,
            k,
            at.first,
        );
        distance::project_raw(Kernel::Scalar, frame.pos, frame.start(), &mut group.tail, k, at.first);
    }
}

/// # Safety
/// As [`SetKernels::unit`].
unsafe fn hinge_unit(frame: &Frame, copy: Option<AosPtr>, batches: &mut [HingeBatch], _chained: bool, at: SweepPoint) {
    let (k, kernel) = (frame.settings.constants, frame.kernel);
    // SAFETY: the caller guarantees the pointers valid and the unit's particles not shared.
    unsafe {
        for batch in batches {
            match copy {
                Some(copy) => hinge::project_raw_aos(kernel, copy, frame.prev, batch, k, at.first, at.first_of_frame),
                None => hinge::project_raw(kernel, frame.pos, frame.prev, batch, k, at.first, at.first_of_frame),
            }
        }
    }
}

/// # Safety
/// As [`SetKernels::tail`].
unsafe fn hinge_tail(frame: &Frame, group: &mut Group<HingeBatch>, at: SweepPoint) {
    let (k, kernel) = (frame.settings.constants, frame.kernel);
    // SAFETY: the caller guarantees the pointers valid and no other thread running.
    unsafe {
        for batch in &mut group.batches {
            hinge::project_raw(kernel, frame.pos, frame.prev, batch, k, at.first, at.first_of_frame);
        }
        hinge::project_raw(
            Kernel::Scalar,
            frame.pos,
            frame.prev,
            &mut group.tail,
            k,
            at.first,
            at.first_of_frame,
        );
    }
}
