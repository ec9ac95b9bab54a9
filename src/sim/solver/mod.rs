//! The substep loop of [`super::Cloth::step`], run by one thread or one thread per part.
//!
//! A sweep is the list [`SweepPlan::order`]: passes over the particles, the registered
//! constraint sets ([`sets`]: each a [`FrameSet`], solved without knowing its type) and one
//! serial step. With today's two sets (distances on the arrays, hinges on the copy):
//!
//! Work split (see [`super::constraints`]): the sweep is a sequence of phases, each cut into
//! T parts (bands of rows of a grid); thread t solves part t of every phase. A thread waits
//! before each unit (a distance level, a group of strips, a chunk of a hinge colour, a pass
//! over its own particles) only until the other threads have finished the units sharing
//! particles with it that come earlier in the sweep ([`super::constraints::Group::waits`],
//! [`super::constraints::plan_sweep`]); the threads meet at a barrier only around a non-empty
//! tail group or while a soft grab is held. The per-particle passes split the particles by
//! index at the same places as the parts. The tail group (constraints re-pointed or added by
//! tearing), the soft grab's constraints ([`SoftGrab`], after the tail group) and the
//! self-contacts' projection ([`super::self_contact`], last) are solved by thread 0; between
//! them the pressure bodies ([`super::pressure`], one reduction each) by all threads, in chunks
//! combined in a fixed order, and the self-contacts' candidate lists are remade by all threads,
//! each listing its run of particles and triangles into its own share, kept in part order.
//! One thread runs the same operations in the same part-by-part order, so every thread count
//! gives bit-identical results. Per substep, each unit
//! after its wait (the tail between two barriers, and only when it holds constraints, a soft
//! grab is held, a pressure body is closed or self-contacts are on):
//! ```text
//! repeat iterations: (first) velocities of the previous substep + predict, own particles
//!                    | for each distance phase: own part, level by level (or all its strips)
//!                    | own particles to the [x, y, z, w] copy
//!                    | for each hinge colour: own part, chunk by chunk (on the copy)
//!                    | own particles back from the copy
//!                    | [barrier | tail, soft grab (thread 0) | pressure (all, between
//!                    |  barriers) | self-contact lists (all, between barriers, when
//!                    |  remade) | self-contacts (thread 0) | barrier]
//!                    | grip's tethers, tethers and contacts of own
//!                    | particles
//! (after the last substep) velocities of own particles
//! ```
//! (Without the copy — no AVX2 — the hinge phases run on the arrays themselves and the two
//! copy steps are empty units.) Every thread
//! runs with subnormals flushed ([`super::float_mode`]).

use std::ops::Range;

use glam::Vec3;

use super::collision::{project_contact, ContactSettings, NearTriangles, PosedCollider};
use super::constraints::distance::{Kernel, SubstepConstants};
use super::constraints::hinge;
use super::constraints::{Pass, SweepPlan, SweepStep, Wait, MAX_PARTS};
use super::float_mode::FlushSubnormals;
use super::parallel::{Progress, SpinBarrier};
use super::params::{Material, SolverParams};
use super::particles::{two_sum, xyz, AosPtr, PosPtr, VecPtr};
use super::pressure::PressurePass;
use super::self_contact::{SelfContactPass, SelfContactSettings};
use super::stats::{PhaseClock, PhaseTimes};
use super::tethers::Tethers;

mod grab;
mod sets;

pub(crate) use grab::{GrabShape, PatchPoint, SoftGrab};

pub(crate) use sets::{FrameSet, SetInFrame, SolvedBatch, SweepPoint};

/// Everything the substep loop needs besides the state.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FrameSettings {
    /// Substep length h in s.
    pub h: f32,
    pub substeps: u32,
    pub iterations: u32,
    /// Gravity in m/s².
    pub gravity: Vec3,
    /// Air damping factor exp(−k h) per substep.
    pub air: f32,
    /// Speed clamp in m/s (0 = none): [`super::SolverParams::max_speed`], lowered while
    /// self-collision is on ([`super::self_contact`]).
    pub max_speed: f32,
    pub constants: SubstepConstants,
    /// Distance kept from collider surfaces in m.
    pub thickness: f32,
    /// Held particle, where it was at the start of the frame and its target.
    pub held: Option<(usize, Vec3, Vec3)>,
    /// Self-contact settings while self-collision is on.
    pub self_contact: Option<SelfContactSettings>,
}

impl FrameSettings {
    /// The settings of a frame stepped with `params` (validated): the substep length and the
    /// XPBD constants of one substep, with material slot 0's `material` for the bending damping
    /// (the hinge kernels take one constant), and what the mouse holds.
    pub fn derive(params: &SolverParams, material: &Material, held: Option<(usize, Vec3, Vec3)>) -> Self {
        let h = params.substep_dt();
        Self {
            h,
            substeps: params.substeps,
            iterations: params.iterations,
            gravity: params.gravity,
            air: (-params.air_damping * h).exp(),
            max_speed: params.speed_clamp(),
            constants: SubstepConstants {
                inv_h2: 1.0 / (h * h),
                damping_over_h: params.constraint_damping / h,
                // Bending shares the stretch's retardation time τ = β α_unit, measured over the
                // frame (see `constraints::hinge`).
                bend_gamma: params.constraint_damping * material.stretch_compliance_factor() / params.dt,
            },
            thickness: params.collision_thickness,
            held,
            self_contact: params.self_contact(),
        }
    }
}

/// The state of one frame as raw pointers, so several threads can work on disjoint parts.
pub(crate) struct Frame<'a> {
    pub pos: PosPtr,
    pub prev: VecPtr,
    pub vel: VecPtr,
    /// Position compensation and its value at the substep's start ([`super::Particles`]).
    pub comp: VecPtr,
    pub comp_prev: VecPtr,
    pub particles: usize,
    /// Parts each phase is cut into.
    pub parts: usize,
    /// The registered constraint sets, in the order [`SweepPlan::placements`] places.
    pub sets: &'a [Box<dyn FrameSet>],
    /// The `[x, y, z, w]` copy the sets placed on it run on (the hinges, and a coloured
    /// distance sweep), one entry per particle, when the vector kernel can use it (AVX2,
    /// something to run on it); otherwise they run on `pos`. The copy is filled after the sets
    /// placed on the arrays and copied back before the serial step ([`SweepStep::order`]).
    pub aos_copy: Option<AosPtr>,
    /// Bounds of the per-particle passes (`parts + 1` entries) from
    /// [`super::constraints::ConstraintSet::bounds`].
    pub bounds: &'a [u32],
    /// Units per sweep and the passes' waits of the sweep on several threads.
    pub plan: &'a SweepPlan,
    /// No constraint in any set's tail group: the serial step (and its barriers) is skipped
    /// unless a soft grab is held, a pressure body is closed or self-contacts are on.
    pub tail_empty: bool,
    /// The colliders in each substep: one [`PosedCollider`] per collider for a frame in which
    /// none moves (every substep sees them), else `substeps` runs of them, one per substep
    /// ([`Self::colliders_in`]).
    pub colliders: &'a [PosedCollider],
    /// Each particle's near triangles of each mesh collider: slot k's lists at k · particles
    /// ([`PosedCollider::near_slot`]); each thread touches only its own particles'.
    pub near_lists: *mut NearTriangles,
    /// Number of colliders.
    pub collider_count: usize,
    /// The tethers, prepared for this frame, when there are any.
    pub tethers: Option<&'a Tethers>,
    /// The grip's tethers (to the grabbed patch), prepared for this frame, while a patch is
    /// held and the cloth has tethers (solved before the pins' tethers).
    pub grip_tethers: Option<&'a Tethers>,
    /// The self-contact pass, when self-collision is on (lists remade by all threads, contacts
    /// solved by thread 0, in the tail step).
    pub self_contacts: Option<&'a SelfContactPass<'a>>,
    /// The pressure pass, when the model has a closed pressure body (solved in the tail step
    /// by all threads between barriers, before the self-contacts).
    pub pressure: Option<&'a PressurePass<'a>>,
    /// The soft grab's constraints, when the mouse holds the cloth ([`grab`]; solved by thread 0
    /// in the tail step).
    pub grab: Option<SoftGrab<'a>>,
    /// Contact settings per material slot, and each particle's slot ([`super::Model::material`]).
    pub contacts: &'a [ContactSettings],
    pub material: &'a [u16],
    pub settings: FrameSettings,
    pub kernel: Kernel,
}

// SAFETY: the threads of a frame touch disjoint particles and groups between barriers (see
// the module docs); the pointers outlive the frame because `Cloth::step` waits for all.
unsafe impl Sync for Frame<'_> {}

impl Frame<'_> {
    /// Where the particles were when the substep began (start positions and compensations).
    pub(crate) fn start(&self) -> crate::sim::constraints::distance::SubstepStart {
        crate::sim::constraints::distance::SubstepStart {
            prev: self.prev,
            comp: Some((self.comp, self.comp_prev)),
        }
    }

    /// Particles of part `part`'s per-particle passes: its range, and for part 0 also the
    /// particles added after the split (by tearing).
    fn part_particles(&self, part: usize) -> [Range<usize>; 2] {
        let end = *self.bounds.last().unwrap_or(&0) as usize;
        let own = self.bounds[part] as usize..self.bounds[part + 1] as usize;
        let extra = if part == 0 { end..self.particles } else { 0..0 };
        [own, extra]
    }

    /// The colliders as they are in substep `substep` (0-based).
    fn colliders_in(&self, substep: u32) -> &[PosedCollider] {
        if self.colliders.len() == self.collider_count {
            self.colliders
        } else {
            let first = substep as usize * self.collider_count;
            &self.colliders[first..first + self.collider_count]
        }
    }

    /// The parts thread `t` of `threads` solves: a run of consecutive parts, as even as the
    /// division allows.
    fn parts_of(&self, t: usize, threads: usize) -> Range<usize> {
        self.parts * t / threads..self.parts * (t + 1) / threads
    }

    /// Runs the whole frame as thread `t` of `threads`: per substep and iteration, the steps
    /// of [`SweepPlan::order`] (passes over this thread's particles, the registered sets'
    /// phases, the serial step), then the velocities of its particles.
    ///
    /// # Safety
    /// `threads` must be at most the number of parts, with every thread running this
    /// concurrently on the same frame, barrier and (fresh) progress counters; the pointers
    /// must be valid for the frame.
    ///
    /// Returns this thread's time per phase.
    pub unsafe fn run(&self, t: usize, threads: usize, barrier: &SpinBarrier, progress: &Progress) -> PhaseTimes {
        debug_assert!((1..=self.parts).contains(&threads));
        let _subnormals_off = FlushSubnormals::enable();
        let s = self.settings;
        let mut thread = ThreadRun {
            t,
            threads,
            parts: self.parts_of(t, threads),
            barrier,
            pipeline: Pipeline::new((threads > 1).then_some(progress), &self.plan.units),
            clock: PhaseClock::start(),
            grab_lambdas: vec![0.0; self.grab.map_or(0, |g| g.shape.attachments())],
        };
        for substep in 0..s.substeps {
            let progress_of_frame = (substep + 1) as f32 / s.substeps as f32;
            let targets = Targets {
                held: s.held.map(|(i, from, to)| (i, from.lerp(to, progress_of_frame))),
                grab: self.grab.map(|g| g.from.lerp(g.to, progress_of_frame)),
            };
            for iteration in 0..s.iterations {
                let at = SweepPoint {
                    first: iteration == 0,
                    first_of_frame: iteration == 0 && substep == 0,
                };
                for &step in &self.plan.order {
                    // SAFETY: the caller upholds this function's # Safety contract, which
                    // `run_step` shares.
                    unsafe { self.run_step(&mut thread, step, substep, at, targets) };
                }
                thread.pipeline.end_sweep();
                thread.clock.lap(PhaseClock::CONTACTS);
            }
        }
        for part in thread.parts.clone() {
            // SAFETY: as above; the part's particles are this thread's.
            self.part_particles(part)
                .into_iter()
                .for_each(|r| unsafe { self.update_velocities(r) });
        }
        thread.clock.lap(PhaseClock::PREDICT);
        thread.clock.times()
    }

    /// One step of the sweep as thread `thread.t`.
    ///
    /// # Safety
    /// As [`Self::run`], called by every thread for the same step.
    unsafe fn run_step(&self, thread: &mut ThreadRun, step: SweepStep, substep: u32, at: SweepPoint, targets: Targets) {
        match step {
            SweepStep::Pass(pass) => {
                // SAFETY: as this function's # Safety.
                unsafe { self.run_pass(thread, pass, substep, at, targets.held) };
            }
            SweepStep::Set(k) => {
                let set = &self.sets[k];
                let (n, parts) = (self.parts, thread.parts.clone());
                for phase in 0..set.phase_count() {
                    for part in parts.clone() {
                        // SAFETY: as this function's # Safety; part `part` is this thread's.
                        unsafe { set.solve_units(self, phase * n + part, &mut thread.pipeline, at) };
                    }
                }
                thread.clock.lap(set.clock());
            }
            // SAFETY: as this function's # Safety.
            SweepStep::Serial => unsafe { self.run_serial(thread, at, targets.grab) },
        }
    }

    /// Pass `pass` over the particles of each of this thread's parts, each a unit after its
    /// waits.
    ///
    /// # Safety
    /// As [`Self::run_step`].
    unsafe fn run_pass(&self, thread: &mut ThreadRun, pass: Pass, substep: u32, at: SweepPoint, held: Option<(usize, Vec3)>) {
        // SAFETY: the pipeline runs each call after the units sharing its particles, on this
        // thread's own particles (as this function's # Safety).
        let work = |range: Range<usize>| unsafe {
            match pass {
                Pass::Predict if at.first => self.advance(range, held, substep > 0),
                Pass::Predict => {}
                Pass::CopyIn => self
                    .aos_copy
                    .into_iter()
                    .for_each(|copy| hinge::copy_to_aos(self.kernel, self.pos, copy, range.clone())),
                Pass::CopyOut => self
                    .aos_copy
                    .into_iter()
                    .for_each(|copy| hinge::copy_from_aos(self.kernel, copy, self.pos, range.clone())),
                Pass::Contacts => {
                    // After the soft grab; the pins' tethers last, so the hand never pulls
                    // the cloth beyond its reach.
                    for tethers in [self.grip_tethers, self.tethers].into_iter().flatten() {
                        tethers.project(self.pos, range.clone(), self.kernel.has_avx2());
                    }
                    self.project_contacts(range, substep)
                }
            }
        };
        for part in thread.parts.clone() {
            let ranges = self.part_particles(part);
            let waits = &self.plan.pass_waits[part][pass as usize];
            thread.pipeline.unit(part, waits, || ranges.iter().for_each(|r| work(r.clone())));
        }
        match pass {
            Pass::Predict => thread.clock.lap(PhaseClock::PREDICT),
            Pass::Contacts => thread.clock.lap(PhaseClock::CONTACTS),
            Pass::CopyIn | Pass::CopyOut => {}
        }
    }

    /// The serial step, between two barriers, when it has work: thread 0 solves every set's
    /// tail group and the soft grab, all threads the pressure bodies (a reduction in a fixed
    /// order), then the self-contacts (lists remade by all, contacts projected by thread 0).
    ///
    /// # Safety
    /// As [`Self::run_step`].
    unsafe fn run_serial(&self, thread: &mut ThreadRun, at: SweepPoint, grab_target: Option<Vec3>) {
        let has_work = !self.tail_empty || self.grab.is_some() || self.self_contacts.is_some() || self.pressure.is_some();
        if has_work {
            let (t, threads, barrier) = (thread.t, thread.threads, thread.barrier);
            let wait = || barrier.wait(threads as u32);
            wait();
            if t == 0 {
                // SAFETY: between barriers no other thread runs (as this function's # Safety).
                unsafe {
                    self.sets.iter().for_each(|set| set.solve_tail(self, at));
                    if let (Some(grab), Some(target)) = (self.grab, grab_target) {
                        if at.first {
                            thread.grab_lambdas.fill(0.0);
                        }
                        grab.project(self.pos, target, self.tethers, &mut thread.grab_lambdas);
                    }
                }
            }
            if let Some(pressure) = self.pressure {
                // SAFETY: every thread runs it between the same barriers (# Safety).
                unsafe { pressure.run(self.pos, t, threads, at.first, &wait) };
            }
            if let Some(pass) = self.self_contacts {
                thread.clock.lap(PhaseClock::HINGES);
                // SAFETY: as above.
                unsafe { pass.run(self.pos, self.prev, self.particles, at.first, (t, threads), &wait) };
                thread.clock.lap(PhaseClock::SELF_CONTACTS);
            }
            wait();
        }
        thread.clock.lap(PhaseClock::HINGES);
    }

    /// Start of a substep: finish the previous substep's velocity (`finish`, fused here to
    /// save a pass over the particles), remember positions, apply gravity and air damping,
    /// move free particles by h·v and the held particle to its interpolated target.
    ///
    /// # Safety
    /// As [`Self::run`]: the frame's pointers are valid, and no other thread touches the particles
    /// this reads or writes during the call.
    unsafe fn advance(&self, range: Range<usize>, held: Option<(usize, Vec3)>, finish: bool) {
        // SAFETY: the caller guarantees the frame's pointers valid and the particles touched here
        // not shared with another thread (see # Safety).
        unsafe {
            let mut scalar_from = range.start;
            #[cfg(target_arch = "x86_64")]
            if self.kernel.has_avx2() {
                scalar_from = avx2::advance(self, range.clone(), finish);
            }
            (scalar_from..range.end).for_each(|i| self.advance_one(i, finish));
            if let Some((i, target)) = held.filter(|(i, _)| range.contains(i)) {
                self.pos.set_xyz(i, target.to_array());
                self.comp.set(i, Vec3::ZERO);
            }
        }
    }

    /// [`Self::advance`] for particle `i`. The AVX2 pass evaluates the same operations in the
    /// same order, so both round alike (and any split of the particles between threads gives
    /// the same result).
    ///
    /// # Safety
    /// As [`Self::run`]: the frame's pointers are valid, and no other thread touches the particles
    /// this reads or writes during the call.
    #[inline(always)]
    unsafe fn advance_one(&self, i: usize, finish: bool) {
        // SAFETY: the caller guarantees the frame's pointers valid and the particles touched here
        // not shared with another thread (see # Safety).
        unsafe {
            let s = &self.settings;
            let pos = self.pos.get(i);
            let v = if finish { self.velocity(i) } else { self.vel.get(i) };
            let x = xyz(pos);
            self.prev.set(i, x);
            let comp = self.comp.get(i);
            self.comp_prev.set(i, comp);
            // Selects rather than a branch, so the loop stays branch-free.
            let free = pos[3] > 0.0;
            // Air damping acts on the velocity carried in, not on this substep's gravity, so the
            // resting sag does not depend on the air damping.
            let moved = v * s.air + s.gravity * s.h;
            let v = if free { moved } else { v };
            // Compensated sum x + (comp + v h): the new position and the part of the step an f32
            // position cannot hold (Knuth's TwoSum, exact for any magnitudes).
            let (sum, error) = two_sum(x, comp + v * s.h);
            if free {
                self.pos.set_xyz(i, sum.to_array());
                self.comp.set(i, error);
            }
            // The velocity is not stored: the next substep recomputes it from the positions, and
            // the frame's last pass writes the final one.
        }
    }

    /// v = ((x − x_prev) + (comp − comp_prev))/h of particle `i`, the motion of the exact
    /// position, clamped to `max_speed` (0 = no clamp). A true division, as the straightforward
    /// loop writes it, so the two round alike.
    ///
    /// # Safety
    /// As [`Self::run`]: the frame's pointers are valid, and no other thread touches the particles
    /// this reads or writes during the call.
    #[inline(always)]
    unsafe fn velocity(&self, i: usize) -> Vec3 {
        // SAFETY: the caller guarantees the frame's pointers valid and the particles touched here
        // not shared with another thread (see # Safety).
        unsafe {
            let moved = (xyz(self.pos.get(i)) - self.prev.get(i)) + (self.comp.get(i) - self.comp_prev.get(i));
            let v = moved / self.settings.h;
            let max_speed = self.settings.max_speed;
            if max_speed > 0.0 {
                v.clamp_length_max(max_speed)
            } else {
                v
            }
        }
    }

    /// Contacts: the last constraint group of every sweep, with the colliders as they are in
    /// substep `substep`.
    ///
    /// # Safety
    /// As [`Self::run`]: the frame's pointers are valid, and no other thread touches the particles
    /// this reads or writes during the call.
    unsafe fn project_contacts(&self, range: Range<usize>, substep: u32) {
        // SAFETY: the caller guarantees the frame's pointers valid and the particles touched here
        // not shared with another thread (see # Safety).
        unsafe {
            let colliders = self.colliders_in(substep);
            if colliders.is_empty() {
                return;
            }
            let mut scalar_from = range.start;
            #[cfg(target_arch = "x86_64")]
            if self.kernel.has_avx2() {
                scalar_from = avx2::project_contacts(self, colliders, range.clone());
            }
            (scalar_from..range.end).for_each(|i| self.project_contact(colliders, i));
        }
    }

    /// Contacts of particle `i` with every collider of `colliders`.
    ///
    /// # Safety
    /// As [`Self::run`]: the frame's pointers are valid, and no other thread touches the particles
    /// this reads or writes during the call.
    #[inline(always)]
    unsafe fn project_contact(&self, colliders: &[PosedCollider], i: usize) {
        // SAFETY: the caller guarantees the frame's pointers valid and the particles touched here
        // not shared with another thread (see # Safety).
        unsafe {
            let pos = self.pos.get(i);
            if pos[3] == 0.0 {
                return;
            }
            let (mut x, mut start) = (xyz(pos), self.prev.get(i));
            let settings = self.contacts[self.material[i] as usize];
            for posed in colliders {
                let near = posed.near_slot.map(|slot| &mut *self.near_lists.add(slot * self.particles + i));
                project_contact(posed, &mut x, &mut start, settings, near);
            }
            self.pos.set_xyz(i, x.to_array());
            self.prev.set(i, start);
        }
    }

    /// End of the frame: the last substep's velocities.
    ///
    /// # Safety
    /// As [`Self::run`]: the frame's pointers are valid, and no other thread touches the particles
    /// this reads or writes during the call.
    unsafe fn update_velocities(&self, range: Range<usize>) {
        // SAFETY: the caller guarantees the frame's pointers valid and the particles touched here
        // not shared with another thread (see # Safety).
        unsafe {
            let mut scalar_from = range.start;
            #[cfg(target_arch = "x86_64")]
            if self.kernel.has_avx2() {
                scalar_from = avx2::update_velocities(self, range.clone());
            }
            (scalar_from..range.end).for_each(|i| self.vel.set(i, self.velocity(i)));
        }
    }
}

/// One thread's state through a frame ([`Frame::run`]).
struct ThreadRun<'a> {
    /// This thread's index and the number of threads.
    t: usize,
    threads: usize,
    /// The parts this thread solves.
    parts: Range<usize>,
    barrier: &'a SpinBarrier,
    pipeline: Pipeline<'a>,
    clock: PhaseClock,
    /// The soft grab's multipliers, one per attachment (only thread 0 solves the grab).
    grab_lambdas: Vec<f32>,
}

/// Where a substep drives the grabbed particle and the soft grab.
#[derive(Debug, Clone, Copy)]
struct Targets {
    /// The hard grab's particle and its target (m).
    held: Option<(usize, Vec3)>,
    /// The soft grab's target (m).
    grab: Option<Vec3>,
}

/// One thread's place in the sweep on several threads: the units it has finished of each of
/// its parts and what it last saw of the other parts', counted from the start of the frame
/// (see [`super::constraints::Group::waits`]). Alone (no progress counters) it just runs the
/// work.
pub(crate) struct Pipeline<'a> {
    progress: Option<&'a Progress>,
    /// Units finished per part (only this thread's parts advance).
    done: [u32; MAX_PARTS],
    /// Every part's units per sweep.
    per_sweep: &'a [u32],
    /// Sweeps this thread has finished in the frame.
    sweep: u32,
    /// Each part's count when last read (reading one costs a cache miss, so a wait already
    /// met is not read again).
    seen: [u32; MAX_PARTS],
}

impl<'a> Pipeline<'a> {
    fn new(progress: Option<&'a Progress>, per_sweep: &'a [u32]) -> Self {
        Self {
            progress,
            done: [0; MAX_PARTS],
            per_sweep,
            sweep: 0,
            seen: [0; MAX_PARTS],
        }
    }

    /// Runs one unit of `part` once every part it waits for has finished the units it names
    /// of the current sweep (negative: counted back into the previous one), then publishes
    /// it. A wait on one of this thread's own parts is met already (the thread runs its units
    /// in sweep order).
    fn unit(&mut self, part: usize, waits: &[Wait], work: impl FnOnce()) {
        let Some(progress) = self.progress else { return work() };
        for wait in waits {
            let other = wait.part as usize;
            let base = self.sweep as i64 * self.per_sweep[other] as i64;
            let target = (base + wait.units as i64).max(0) as u32;
            if self.seen[other] < target {
                self.seen[other] = progress.wait_for(other, target);
            }
        }
        work();
        self.done[part] += 1;
        progress.publish(part, self.done[part]);
    }

    /// Moves on to the next sweep.
    fn end_sweep(&mut self) {
        self.sweep += 1;
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(test)]
mod tests;
