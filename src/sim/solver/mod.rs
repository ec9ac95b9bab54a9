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
//! tearing), the soft grab's constraint ([`SoftGrab`], after the tail group) and the
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
//!                    | tethers (none on the soft grab's corners) and contacts of own particles
//! (after the last substep) velocities of own particles
//! ```
//! (Without the copy — no AVX2 — the hinge phases run on the arrays themselves and the two
//! copy steps are empty units.) Every thread
//! runs with subnormals flushed ([`super::float_mode`]).

use std::ops::Range;

use glam::Vec3;

use super::collision::{project_contact, Collider, ContactSettings, PosedCollider};
use super::constraints::distance::{Kernel, SubstepConstants};
use super::constraints::hinge;
use super::constraints::{pass, SweepPlan, SweepStep, Wait, MAX_PARTS};
use super::float_mode::FlushSubnormals;
use super::parallel::{Progress, SpinBarrier};
use super::particles::{two_sum, xyz, AosPtr, PosPtr, VecPtr};
use super::pressure::PressurePass;
use super::self_contact::{SelfContactPass, SelfContactSettings};
use super::stats::{PhaseClock, PhaseTimes};
use super::tethers::Tethers;

mod sets;

pub(crate) use sets::{FrameSet, SetInFrame, SweepPoint, DISTANCE_KERNELS, HINGE_KERNELS};

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
    /// The soft grab's constraint, when one is held.
    pub soft_grab: Option<SoftGrab>,
    /// Self-contact settings while self-collision is on.
    pub self_contact: Option<SelfContactSettings>,
}

/// The soft grab's XPBD constraint C = |p − target| between the point p = Σ b_k x_k of a
/// triangle and the cursor target, with compliance α (docs/physics.md §1, "The grab").
/// Solved by thread 0 in the tail step of every sweep.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SoftGrab {
    /// The triangle's corners.
    pub vertices: [usize; 3],
    /// Their barycentric weights b_k (summing to 1).
    pub weights: [f32; 3],
    /// The target at the start of the frame and at its end (m); substep s aims at
    /// lerp(from, to, (s + 1)/S), as the hard grab does.
    pub from: Vec3,
    pub to: Vec3,
    /// α̃ = α/h² (kg⁻¹).
    pub alpha_tilde: f32,
}

impl SoftGrab {
    /// One projection of the constraint toward `target`, accumulating its multiplier in
    /// `lambda` (reset by the caller on a substep's first sweep).
    ///
    /// # Safety
    /// The vertices are in bounds of `pos`, and no other thread touches them during the call.
    unsafe fn project(&self, pos: PosPtr, target: Vec3, lambda: &mut f32) {
        // SAFETY: the caller guarantees the vertices in bounds and not shared (see # Safety).
        unsafe {
            let [a, b, c] = self.vertices.map(|i| pos.get(i));
            let [ba, bb, bc] = self.weights;
            let p = xyz(a) * ba + xyz(b) * bb + xyz(c) * bc;
            let d = p - target;
            let length = d.length();
            // Σ w_k b_k² |∇C|², with |∇C| = |n| = 1.
            let denominator = a[3] * ba * ba + b[3] * bb * bb + c[3] * bc * bc + self.alpha_tilde;
            if length <= 1e-9 || denominator <= 0.0 {
                return;
            }
            let n = d / length;
            let delta = (-length - self.alpha_tilde * *lambda) / denominator;
            *lambda += delta;
            for (k, (x, weight)) in [a, b, c].into_iter().zip(self.weights).enumerate() {
                let step = n * (x[3] * weight * delta);
                pos.shift(self.vertices[k], x, step.to_array());
            }
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
    /// Number of colliders.
    pub collider_count: usize,
    /// The tethers, prepared for this frame, when there are any.
    pub tethers: Option<&'a Tethers>,
    /// The self-contact pass, when self-collision is on (lists remade by all threads, contacts
    /// solved by thread 0, in the tail step).
    pub self_contacts: Option<&'a SelfContactPass<'a>>,
    /// The pressure pass, when the model has a closed pressure body (solved in the tail step
    /// by all threads between barriers, before the self-contacts).
    pub pressure: Option<&'a PressurePass<'a>>,
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

    /// Runs the whole frame as thread `t` of `threads`.
    ///
    /// # Safety
    /// `threads` must be at most the number of parts, with every thread running this
    /// concurrently on the same frame, barrier and (fresh) progress counters; the pointers
    /// must be valid for the frame.
    ///
    /// Returns this thread's time per phase.
    pub unsafe fn run(&self, t: usize, threads: usize, barrier: &SpinBarrier, progress: &Progress) -> PhaseTimes {
        // SAFETY: the caller upholds this function's # Safety contract: `threads` must be at
        // most the number of parts, with every thread running this concurrently on the same
        // frame, barrier and (fresh) progress counters; the pointers must be valid for the
        // frame.
        unsafe {
            debug_assert!((1..=self.parts).contains(&threads));
            let _subnormals_off = FlushSubnormals::enable();
            let mut clock = PhaseClock::start();
            let s = self.settings;
            let parties = threads as u32;
            let parts = self.parts_of(t, threads);
            let mut pipeline = Pipeline::new((threads > 1).then_some(progress), &self.plan.units);
            // Pass `k` of each of this thread's parts, each a unit after its waits.
            let passes = |pipeline: &mut Pipeline, k: usize, pass: &dyn Fn(Range<usize>)| {
                for part in parts.clone() {
                    let ranges = self.part_particles(part);
                    pipeline.unit(part, &self.plan.pass_waits[part][k], || ranges.iter().for_each(|r| pass(r.clone())));
                }
            };
            let n = self.parts;
            let (first_part, end_part) = (parts.start, parts.end);
            let groups = move |phases: usize| (0..phases).flat_map(move |phase| (first_part..end_part).map(move |part| phase * n + part));
            let tail_runs = !self.tail_empty || s.soft_grab.is_some() || self.self_contacts.is_some() || self.pressure.is_some();
            // The soft grab's multiplier: only thread 0 solves it (in the tail).
            let mut grab_lambda = 0.0f32;
            for substep in 0..s.substeps {
                let progress_of_frame = (substep + 1) as f32 / s.substeps as f32;
                let held = s.held.map(|(i, from, to)| (i, from.lerp(to, progress_of_frame)));
                let grab_target = s.soft_grab.map(|g| g.from.lerp(g.to, progress_of_frame));
                for iteration in 0..s.iterations {
                    let first = iteration == 0;
                    let at = SweepPoint {
                        first,
                        first_of_frame: first && substep == 0,
                    };
                    for &step in &self.plan.order {
                        match step {
                            SweepStep::Pass(pass::PREDICT) => {
                                passes(&mut pipeline, pass::PREDICT, &|r| {
                                    if first {
                                        self.advance(r, held, substep > 0);
                                    }
                                });
                                clock.lap(PhaseClock::PREDICT);
                            }
                            SweepStep::Pass(pass::COPY_IN) => passes(&mut pipeline, pass::COPY_IN, &|r| {
                                if let Some(copy) = self.aos_copy {
                                    hinge::copy_to_aos(self.kernel, self.pos, copy, r);
                                }
                            }),
                            SweepStep::Set(k) => {
                                let set = &self.sets[k];
                                for g in groups(set.phase_count()) {
                                    set.solve_units(self, g, &mut pipeline, at);
                                }
                                clock.lap(set.clock());
                            }
                            SweepStep::Pass(pass::COPY_OUT) => passes(&mut pipeline, pass::COPY_OUT, &|r| {
                                if let Some(copy) = self.aos_copy {
                                    hinge::copy_from_aos(self.kernel, copy, self.pos, r);
                                }
                            }),
                            SweepStep::Serial => {
                                if tail_runs {
                                    barrier.wait(parties);
                                    if t == 0 {
                                        self.sets.iter().for_each(|set| set.solve_tail(self, at));
                                        if let (Some(grab), Some(target)) = (s.soft_grab, grab_target) {
                                            if first {
                                                grab_lambda = 0.0;
                                            }
                                            grab.project(self.pos, target, &mut grab_lambda);
                                        }
                                    }
                                    if let Some(pressure) = self.pressure {
                                        pressure.run(self.pos, t, threads, first, &|| barrier.wait(parties));
                                    }
                                    if let Some(pass) = self.self_contacts {
                                        clock.lap(PhaseClock::HINGES);
                                        pass.run(self.pos, self.prev, self.particles, first, (t, threads), &|| barrier.wait(parties));
                                        clock.lap(PhaseClock::SELF_CONTACTS);
                                    }
                                    barrier.wait(parties);
                                }
                                clock.lap(PhaseClock::HINGES);
                            }
                            SweepStep::Pass(pass::CONTACTS) => {
                                passes(&mut pipeline, pass::CONTACTS, &|r| {
                                    if let Some(tethers) = self.tethers {
                                        // The soft grab's corners have no tethers this frame
                                        // (`Tethers::prepare_frame`).
                                        tethers.project(self.pos, r.clone(), self.kernel.has_avx2());
                                    }
                                    self.project_contacts(r, substep)
                                });
                                clock.lap(PhaseClock::CONTACTS);
                            }
                            SweepStep::Pass(other) => unreachable!("no pass {other}"),
                        }
                    }
                    pipeline.end_sweep();
                    clock.lap(PhaseClock::CONTACTS);
                }
            }
            for part in first_part..end_part {
                self.part_particles(part).into_iter().for_each(|r| self.update_velocities(r));
            }
            clock.lap(PhaseClock::PREDICT);
            clock.times()
        }
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
                project_contact(posed, &mut x, &mut start, settings);
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

/// The per-particle passes eight particles at a time, in the scalar passes' operations.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;
    use std::ops::Range;

    use glam::Vec3;

    use super::{Collider, Frame, PosedCollider};

    /// x, y, z of eight particles.
    type Xyz = [__m256; 3];

    /// Loads three arrays at `i`. (Plain statements throughout this module: a closure would
    /// not inherit AVX2 and its intrinsics would become calls.)
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); the frame's pointers must be valid, the particles read or written in bounds, and
    /// no other thread may touch them during the call.
    #[inline(always)]
    unsafe fn load([x, y, z]: [*mut f32; 3], i: usize) -> Xyz {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
        // and unshared (see # Safety).
        unsafe { [_mm256_loadu_ps(x.add(i)), _mm256_loadu_ps(y.add(i)), _mm256_loadu_ps(z.add(i))] }
    }

    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); the frame's pointers must be valid, the particles read or written in bounds, and
    /// no other thread may touch them during the call.
    #[inline(always)]
    unsafe fn store(arrays: [*mut f32; 3], i: usize, v: Xyz) {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
        // and unshared (see # Safety).
        unsafe {
            for (p, v) in arrays.into_iter().zip(v) {
                _mm256_storeu_ps(p.add(i), v);
            }
        }
    }

    /// [`Frame::velocity`] of particles i..i + 8.
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); the frame's pointers must be valid, the particles read or written in bounds, and
    /// no other thread may touch them during the call.
    #[inline(always)]
    unsafe fn velocity(frame: &Frame, i: usize) -> Xyz {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
        // and unshared (see # Safety).
        unsafe {
            let pos = [frame.pos.x, frame.pos.y, frame.pos.z];
            let prev = [frame.prev.x, frame.prev.y, frame.prev.z];
            let (x, start, h) = (load(pos, i), load(prev, i), _mm256_set1_ps(frame.settings.h));
            let comp = load([frame.comp.x, frame.comp.y, frame.comp.z], i);
            let comp_prev = load([frame.comp_prev.x, frame.comp_prev.y, frame.comp_prev.z], i);
            let mut v = [_mm256_setzero_ps(); 3];
            for c in 0..3 {
                let moved = _mm256_add_ps(_mm256_sub_ps(x[c], start[c]), _mm256_sub_ps(comp[c], comp_prev[c]));
                v[c] = _mm256_div_ps(moved, h);
            }
            let max_speed = frame.settings.max_speed;
            if max_speed <= 0.0 {
                return v;
            }
            // glam's clamp_length_max: max · (v / |v|) where |v|² > max².
            let length_sq = length_squared(v);
            let max = _mm256_set1_ps(max_speed);
            let over = _mm256_cmp_ps::<_CMP_GT_OQ>(length_sq, _mm256_mul_ps(max, max));
            let length = _mm256_sqrt_ps(length_sq);
            for c in &mut v {
                *c = _mm256_blendv_ps(*c, _mm256_mul_ps(max, _mm256_div_ps(*c, length)), over);
            }
            v
        }
    }

    /// [`Frame::advance_one`] for the whole vectors of `range`; returns where the scalar rest
    /// starts.
    ///
    /// # Safety
    /// The CPU must support AVX2; the frame's pointers must be valid, the particles read or written
    /// in bounds, and no other thread may touch them during the call.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn advance(frame: &Frame, range: Range<usize>, finish: bool) -> usize {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
        // and unshared (see # Safety).
        unsafe {
            let s = &frame.settings;
            let (air, h) = (_mm256_set1_ps(s.air), _mm256_set1_ps(s.h));
            let g = s.gravity * s.h;
            let gravity_h = [_mm256_set1_ps(g.x), _mm256_set1_ps(g.y), _mm256_set1_ps(g.z)];
            let (pos, prev, vel) = (
                [frame.pos.x, frame.pos.y, frame.pos.z],
                [frame.prev.x, frame.prev.y, frame.prev.z],
                [frame.vel.x, frame.vel.y, frame.vel.z],
            );
            let (comp, comp_prev) = (
                [frame.comp.x, frame.comp.y, frame.comp.z],
                [frame.comp_prev.x, frame.comp_prev.y, frame.comp_prev.z],
            );
            // As the scalar pass, the velocity is read (first substep) but not stored.
            let end = range.start + range.len() / 8 * 8;
            for i in (range.start..end).step_by(8) {
                let mut v = if finish { velocity(frame, i) } else { load(vel, i) };
                let mut x = load(pos, i);
                store(prev, i, x);
                let mut error = load(comp, i);
                store(comp_prev, i, error);
                let free = _mm256_cmp_ps::<_CMP_GT_OQ>(_mm256_loadu_ps(frame.pos.w.add(i)), _mm256_setzero_ps());
                for c in 0..3 {
                    v[c] = _mm256_blendv_ps(v[c], _mm256_add_ps(_mm256_mul_ps(v[c], air), gravity_h[c]), free);
                    // TwoSum of x + (comp + v h), as the scalar pass; pinned particles keep theirs.
                    let step = _mm256_add_ps(error[c], _mm256_mul_ps(v[c], h));
                    let sum = _mm256_add_ps(x[c], step);
                    let virtual_step = _mm256_sub_ps(sum, x[c]);
                    let lost = _mm256_add_ps(
                        _mm256_sub_ps(x[c], _mm256_sub_ps(sum, virtual_step)),
                        _mm256_sub_ps(step, virtual_step),
                    );
                    x[c] = _mm256_blendv_ps(x[c], sum, free);
                    error[c] = _mm256_blendv_ps(error[c], lost, free);
                }
                store(pos, i, x);
                store(comp, i, error);
            }
            end
        }
    }

    /// |v|² as glam evaluates it: (x² + y²) + z².
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions).
    #[inline(always)]
    unsafe fn length_squared(v: Xyz) -> __m256 {
        // SAFETY: the caller guarantees support for AVX2 (see # Safety).
        unsafe {
            _mm256_add_ps(
                _mm256_add_ps(_mm256_mul_ps(v[0], v[0]), _mm256_mul_ps(v[1], v[1])),
                _mm256_mul_ps(v[2], v[2]),
            )
        }
    }

    /// |v| as glam evaluates it.
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions).
    #[inline(always)]
    unsafe fn length(v: Xyz) -> __m256 {
        // SAFETY: the caller guarantees support for AVX2 (see # Safety).
        unsafe { _mm256_sqrt_ps(length_squared(v)) }
    }

    /// Whether all of particles i..i + 8 pass the scalar contact's early out for every
    /// collider (outside by more than the substep's travel: untouched), evaluated with the same
    /// operations; false when a collider has no vector form here (capsules, boxes) or moves.
    ///
    /// # Safety
    /// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
    /// functions); the frame's pointers must be valid, the particles read or written in bounds, and
    /// no other thread may touch them during the call.
    #[inline(always)]
    unsafe fn clear_of_colliders(frame: &Frame, colliders: &[PosedCollider], i: usize) -> bool {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
        // and unshared (see # Safety).
        unsafe {
            let x = load([frame.pos.x, frame.pos.y, frame.pos.z], i);
            let start = load([frame.prev.x, frame.prev.y, frame.prev.z], i);
            let travel = length([
                _mm256_sub_ps(start[0], x[0]),
                _mm256_sub_ps(start[1], x[1]),
                _mm256_sub_ps(start[2], x[2]),
            ]);
            let thickness = _mm256_set1_ps(frame.settings.thickness);
            let mut clear = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
            for posed in colliders {
                if posed.shift != Vec3::ZERO {
                    return false;
                }
                let surface = match posed.collider {
                    Collider::Ground { height, .. } => _mm256_sub_ps(x[1], _mm256_set1_ps(height)),
                    Collider::Sphere { center, radius, .. } => {
                        let c = [_mm256_set1_ps(center.x), _mm256_set1_ps(center.y), _mm256_set1_ps(center.z)];
                        let d = [_mm256_sub_ps(x[0], c[0]), _mm256_sub_ps(x[1], c[1]), _mm256_sub_ps(x[2], c[2])];
                        _mm256_sub_ps(length(d), _mm256_set1_ps(radius))
                    }
                    _ => return false,
                };
                let gap = _mm256_sub_ps(surface, thickness);
                let untouched = _mm256_and_ps(
                    _mm256_cmp_ps::<_CMP_GE_OQ>(gap, _mm256_setzero_ps()),
                    _mm256_cmp_ps::<_CMP_LT_OQ>(travel, gap),
                );
                clear = _mm256_and_ps(clear, untouched);
            }
            _mm256_movemask_ps(clear) == 0xFF
        }
    }

    /// [`Frame::project_contacts`] for the whole vectors of `range`: eight particles clear of
    /// every collider are skipped together (the scalar pass would leave them unchanged), the
    /// others go one by one; returns where the scalar rest starts.
    ///
    /// # Safety
    /// The CPU must support AVX2; the frame's pointers must be valid, the particles read or written
    /// in bounds, and no other thread may touch them during the call.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn project_contacts(frame: &Frame, colliders: &[PosedCollider], range: Range<usize>) -> usize {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
        // and unshared (see # Safety).
        unsafe {
            let end = range.start + range.len() / 8 * 8;
            for i in (range.start..end).step_by(8) {
                if !clear_of_colliders(frame, colliders, i) {
                    (i..i + 8).for_each(|p| frame.project_contact(colliders, p));
                }
            }
            end
        }
    }

    /// [`Frame::update_velocities`] for the whole vectors of `range`; returns where the scalar
    /// rest starts.
    ///
    /// # Safety
    /// The CPU must support AVX2; the frame's pointers must be valid, the particles read or written
    /// in bounds, and no other thread may touch them during the call.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn update_velocities(frame: &Frame, range: Range<usize>) -> usize {
        // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
        // and unshared (see # Safety).
        unsafe {
            let vel = [frame.vel.x, frame.vel.y, frame.vel.z];
            let end = range.start + range.len() / 8 * 8;
            for i in (range.start..end).step_by(8) {
                store(vel, i, velocity(frame, i));
            }
            end
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use crate::sim::{Cloth, Collider, GridSpec, Material, SolverParams};

    /// Steps `cloth` and checks the step ran on as many threads as it asked for.
    fn step_on(cloth: &mut Cloth, params: &SolverParams, material: &Material) {
        let wanted = cloth.threads_used(params);
        assert_eq!(cloth.step(params, material).unwrap().threads, wanted);
    }

    /// A curtain large enough to be split into two parts, with hinges, shear, a ground and a
    /// sphere, so every part of the substep loop runs on both threads.
    fn curtain(columns: u32, rows: u32) -> Cloth {
        let spec = GridSpec {
            columns,
            rows,
            origin: Vec3::new(0.0, 1.2, 0.0),
            ..GridSpec::default()
        };
        let colliders = vec![
            Collider::Ground { height: 0.0, motion: None },
            Collider::Sphere {
                center: Vec3::new(0.2, 0.4, 0.1),
                radius: 0.3,
                motion: None,
            },
        ];
        Cloth::new(spec.build().unwrap(), &Material::default(), colliders).unwrap()
    }

    /// Also on 81 × 61 particles: the parts' particle ranges then start off the eight-particle
    /// grid of the vector passes, so particles one thread runs in AVX2 vectors another runs
    /// through the scalar passes — the two must round alike. On 80 × 64 each of two parts has
    /// whole eights of rows, so its horizontal phases start as strips and the tearing turns
    /// some back into levels.
    #[test]
    fn one_two_and_three_threads_give_bit_identical_frames() {
        for (columns, rows) in [(80, 60), (81, 61), (80, 64)] {
            assert_threads_agree(&curtain(columns, rows));
        }
    }

    fn assert_threads_agree(base: &Cloth) {
        assert_eq!(
            base.threads_used(&SolverParams {
                threads: 2,
                ..SolverParams::default()
            }),
            2
        );
        let run = |threads: u32| {
            let mut cloth = base.clone();
            let params = SolverParams {
                threads,
                iterations: 2,
                ..SolverParams::default()
            };
            cloth.grab(4000).unwrap();
            for frame in 0..30 {
                cloth.drag_to(Vec3::new(0.3, 0.5 + frame as f32 * 0.01, 0.2));
                step_on(&mut cloth, &params, &Material::default());
            }
            // Then torn: constraints move to the tail (solved between barriers) and groups of
            // strips turn into levels (the waits are planned again).
            let tearing = Material {
                tear_strain: Some(0.2),
                ..Material::default()
            };
            for frame in 0..20 {
                cloth.drag_to(Vec3::new(0.3, 0.8 + frame as f32 * 0.05, 0.2));
                step_on(&mut cloth, &params, &tearing);
            }
            (cloth.torn_edges(), cloth.particles().positions().collect::<Vec<_>>())
        };
        let one = run(1);
        assert!(one.0 > 0, "the drag should tear the curtain");
        assert!(one.1.iter().all(|p| p.is_finite()));
        for threads in [2, 3] {
            assert!(run(threads) == one, "threads 1 and {threads} differ");
        }
    }

    /// The AVX-512 kernels (hinges, contiguous levels, strip pairs) evaluate the AVX2 kernels'
    /// operations per lane, so a cloth gives the same frames with either, also while it tears
    /// (fresh particles and constraints move between batches and the tail) and on two threads.
    #[test]
    fn avx2_and_avx512_kernels_give_bit_identical_frames() {
        use crate::sim::constraints::distance::Kernel;
        if !Kernel::Avx512.is_supported() {
            eprintln!("avx2_and_avx512_kernels_give_bit_identical_frames: skipped (no AVX-512 on this CPU)");
            return;
        }
        let material = Material {
            tear_strain: Some(0.2),
            ..Material::default()
        };
        let run = |kernel: Kernel, threads: u32| {
            // 64 rows: whole eights in each part, so the horizontal phases start as strips.
            let mut cloth = curtain(81, 64);
            cloth.set_kernel(kernel);
            let params = SolverParams {
                threads,
                ..SolverParams::default()
            };
            cloth.grab(4000).unwrap();
            for frame in 0..40 {
                cloth.drag_to(Vec3::new(0.3, 0.6 + frame as f32 * 0.05, 0.2));
                step_on(&mut cloth, &params, &material);
            }
            (cloth.torn_edges(), cloth.particles().positions().collect::<Vec<_>>())
        };
        for threads in [1, 2] {
            let (avx2, avx512) = (run(Kernel::Avx2, threads), run(Kernel::Avx512, threads));
            assert!(avx2.0 > 0, "the drag should tear the curtain");
            assert!(avx2.1.iter().all(|p| p.is_finite()));
            assert!(avx2 == avx512, "{threads} threads: AVX2 and AVX-512 differ");
        }
    }

    /// A curtain whose particles were renumbered at random (with bending hinges or without):
    /// its distance sweep is coloured and, with a vector kernel, runs on the `[x, y, z, w]`
    /// copy (see `constraints::distance_copy`).
    fn shuffled_curtain(columns: u32, rows: u32, bending: bool) -> Cloth {
        let spec = GridSpec {
            columns,
            rows,
            bending,
            origin: Vec3::new(0.0, 1.2, 0.0),
            ..GridSpec::default()
        };
        let (model, _) = spec.build().unwrap().shuffled(5);
        let colliders = vec![Collider::Ground { height: 0.0, motion: None }];
        let cloth = Cloth::new(model, &Material::default(), colliders).unwrap();
        assert!(cloth.coloured_sweep(), "a shuffled grid is solved in colours");
        cloth
    }

    /// Drags particle 100 of `cloth` up and away for 40 frames with tearing on; returns the
    /// torn edges and every position.
    fn drag_and_tear(mut cloth: Cloth, kernel: crate::sim::constraints::distance::Kernel, threads: u32) -> (usize, Vec<Vec3>) {
        cloth.set_kernel(kernel);
        let params = SolverParams {
            threads,
            ..SolverParams::default()
        };
        let material = Material {
            tear_strain: Some(0.2),
            ..Material::default()
        };
        cloth.grab(100).unwrap();
        let start = cloth.particles().position(100);
        for frame in 0..40 {
            cloth.drag_to(start + Vec3::new(0.03, 0.05, 0.02) * frame as f32);
            step_on(&mut cloth, &params, &material);
        }
        (cloth.torn_edges(), cloth.particles().positions().collect())
    }

    /// Without hinges the vector kernels differ from the scalar loop only in the coloured
    /// distance sweep on the copy, whose lanes evaluate the scalar projection's operations: every
    /// kernel and thread count gives the same frames bit for bit, also while it tears.
    #[test]
    fn a_coloured_sweep_on_the_copy_matches_the_scalar_loop_bit_for_bit() {
        use crate::sim::constraints::distance::Kernel;
        let scalar = drag_and_tear(shuffled_curtain(80, 64, false), Kernel::Scalar, 1);
        assert!(scalar.0 > 0, "the drag should tear the curtain");
        assert!(scalar.1.iter().all(|p| p.is_finite()));
        let kernels = Kernel::vector_kernels_for("a_coloured_sweep_on_the_copy_matches_the_scalar_loop_bit_for_bit");
        for (kernel, threads) in std::iter::once((Kernel::Scalar, 2)).chain(kernels.into_iter().flat_map(|k| [(k, 1), (k, 2)])) {
            let run = drag_and_tear(shuffled_curtain(80, 64, false), kernel, threads);
            assert!(run == scalar, "{kernel:?} on {threads} thread(s) differs from the scalar loop");
        }
    }

    /// With hinges (whose vector kernel rounds unlike the scalar one) the vector kernels and
    /// thread counts agree with each other bit for bit on a coloured sweep.
    #[test]
    fn a_coloured_sweep_is_bit_identical_for_every_vector_kernel_and_thread_count() {
        let kernels = crate::sim::constraints::distance::Kernel::vector_kernels_for(
            "a_coloured_sweep_is_bit_identical_for_every_vector_kernel_and_thread_count",
        );
        let Some(&first) = kernels.first() else { return };
        let reference = drag_and_tear(shuffled_curtain(80, 64, true), first, 1);
        assert!(reference.0 > 0, "the drag should tear the curtain");
        for (kernel, threads) in kernels.into_iter().flat_map(|k| [(k, 1), (k, 2)]).skip(1) {
            let run = drag_and_tear(shuffled_curtain(80, 64, true), kernel, threads);
            assert!(run == reference, "{kernel:?} on {threads} thread(s) differs from {first:?} on one");
        }
    }

    /// The sweep is the straightforward loop's, batched: on tmp15 every position matches the
    /// [`crate::sim::ReferenceSolver`] bit for bit, on one part (n = 16, 24, 40: two, three
    /// and five strips of eight rows, so AVX-512 pairs them and leaves one alone) and on two
    /// parts solved by one or two threads (n = 64), with every kernel this CPU runs.
    #[test]
    fn engine_reproduces_the_straightforward_loop_bit_for_bit() {
        use crate::headless::{tmp15_cloth, tmp15_material, tmp15_params, ReferenceSolver};
        use crate::sim::constraints::distance::Kernel;
        let kernels =
            std::iter::once(Kernel::Scalar).chain(Kernel::vector_kernels_for("engine_reproduces_the_straightforward_loop_bit_for_bit"));
        let runs = kernels.flat_map(|kernel| [(16, 1), (24, 1), (40, 1), (64, 1), (64, 2)].map(|(n, threads)| (kernel, n, threads)));
        for (kernel, n, threads) in runs {
            let params = tmp15_params(15, 1, threads);
            let mut cloth = tmp15_cloth(n).unwrap();
            cloth.set_kernel(kernel);
            let mut reference = ReferenceSolver::new(&crate::sim::tmp15_model(n).unwrap(), &tmp15_material());
            let start: Vec<Vec3> = reference.positions().collect();
            for _ in 0..20 {
                step_on(&mut cloth, &params, &tmp15_material());
                reference.step(&params);
            }
            let engine: Vec<Vec3> = cloth.particles().positions().collect();
            let straightforward: Vec<Vec3> = reference.positions().collect();
            assert!(engine != start, "the sheet moved");
            assert!(
                engine == straightforward,
                "{kernel:?}, n = {n}, {threads} thread(s): positions differ"
            );
        }
    }

    /// Subnormal coordinates (here planted in both threads' halves of a flat curtain) read as
    /// zero inside the solver and never come out of it, on one thread and on two; the caller's
    /// thread keeps IEEE subnormals after the step.
    #[test]
    fn no_subnormal_leaves_the_solver_and_the_caller_keeps_ieee_mode() {
        let subnormal = f32::MIN_POSITIVE / 16.0;
        for threads in [1, 2] {
            let mut cloth = curtain(80, 60);
            for i in [1000, 4000] {
                let p = cloth.particles().positions().nth(i).unwrap();
                let planted = Vec3::new(p.x, p.y, subnormal);
                cloth.set_state(i as u32, planted, Vec3::new(0.0, 0.0, subnormal)).unwrap();
            }
            let params = SolverParams {
                threads,
                ..SolverParams::default()
            };
            step_on(&mut cloth, &params, &Material::default());
            let coordinates = cloth.particles().positions().flat_map(|p| p.to_array());
            let leaked = coordinates.filter(|c| *c != 0.0 && !c.is_normal()).count();
            assert_eq!(leaked, 0, "{threads} thread(s): subnormal coordinates after a frame");
        }
        assert!(std::hint::black_box(f32::MIN_POSITIVE) / 2.0 > 0.0, "caller's mode restored");
    }

    /// `threads: 0` takes the second core for a sheet of 64 × 64 with shear edges (24 000
    /// constraints), which gains from it, and not for 32 × 32, which is not split.
    #[test]
    fn automatic_threads_take_the_second_core_from_a_64_square_sheet() {
        let automatic = SolverParams {
            threads: 0,
            ..SolverParams::default()
        };
        let two = if crate::sim::parallel::available() >= 2 { 2 } else { 1 };
        assert_eq!(crate::headless::tmp15_cloth(64).unwrap().threads_used(&automatic), two);
        assert_eq!(crate::headless::tmp15_cloth(32).unwrap().threads_used(&automatic), 1);
    }

    #[test]
    fn small_cloths_stay_on_one_thread() {
        let cloth = crate::headless::tmp15_cloth(32).unwrap();
        assert_eq!(
            cloth.threads_used(&SolverParams {
                threads: 2,
                ..SolverParams::default()
            }),
            1
        );
    }
}
