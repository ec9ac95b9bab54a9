//! Constraint storage for the solver: the Gauss–Seidel sweep cut into batches of independent
//! constraints.
//!
//! Gauss–Seidel projects constraints one after another, each seeing the previous one's result.
//! When consecutive constraints share a particle, each projection waits for the previous
//! store. A batch holds constraints that share no particle, so its constraints can be projected
//! in any order, in SIMD lanes, with bit-identical results; the sweep is Gauss–Seidel *across*
//! batches.
//!
//! **Sweep order.** The sweep is cut into *phases*, solved one after another:
//! - Distance constraints are ordered like the straightforward loop: by edge kind, then by
//!   index distance |b − a| (the edge's direction on a grid), then by model order; each run of
//!   equal keys is one phase. Inside a phase every constraint gets the *level*
//!   `max(level after each of its particles)`, and its particles then carry `level + 1`
//!   (level scheduling). Constraints sharing a particle keep their order and one level shares
//!   no particle, so solving the levels in turn *is* the sequential sweep, bit for bit, with
//!   the independent projections batched: on an n × n grid a level of the vertical, diagonal
//!   and vertical-bend phases is a row of edges between consecutive particles. A *run*
//!   (consecutive constraints each one particle further: the edges along a row) is placed as
//!   a whole, so a row stays one level even where its later edges would be free earlier (the
//!   diagonals of a sheet's lower half each start at a different row), and a level whose slot
//!   j joins particles a₀ + j and b₀ + j is marked contiguous: the kernel then reads no
//!   indices. With one sweep per substep a hanging sheet is far from
//!   converged and the order decides how far support travels down the sheet per substep, so
//!   keeping the straightforward order keeps the physics of the plain loop, not just its
//!   fixed point.
//! - That order batches only a mesh numbered like a grid, row by row. Numbered any other way
//!   (a shuffled grid, a mesh from a file) nearly every constraint has an index distance of
//!   its own, and the phases would be thousands of levels of one constraint. So the order is
//!   chosen per model: keyed phases when there are at most [`MAX_KEYED_PHASES`](schedule::MAX_KEYED_PHASES) of them,
//!   otherwise each edge kind in turn is coloured greedily in model order, like the hinges
//!   below (a different Gauss–Seidel order, the same fixed point).
//! - Phases along rows (horizontal stretch and bend edges) would have one edge per row in a
//!   level, a column of particles a row apart. When the rows come in whole eights they are
//!   stored as *strips* instead ([`Group::chained`]): eight rows side by side, each a SIMD lane
//!   solved left to right, so the kernel loads row segments and transposes them rather than
//!   gathering one particle per lane. Otherwise every further eight rows start a few levels
//!   later (skew), so a level's particles do not all fall in one cache set.
//! - Hinges are ordered by a greedy colouring (lowest colour free at all four particles, 64
//!   colours tracked per particle); each colour is one phase of one level, cut into chunks
//!   (see below). Their order matters less (bending is soft)
//!   and a colouring gives few, large batches.
//!
//! **Threads.** For T threads a cloth of at least 4 096 particles has its phases cut into T
//! *parts* (up to [`MAX_PARTS`]; [`ConstraintSet::set_parts`], again whenever T changes):
//! consecutive stretches of the phase in sweep order, part k being the constraints whose
//! lowest particle lies in the k-th of T equal particle ranges (on a grid built row by row:
//! the k-th band of rows). Each part is scheduled on its own; one thread solving parts 0, 1,
//! … of every phase in turn is the sequential sweep, bit for bit. T threads solve one part
//! each and run the passes over the particles (prediction, the `[x, y, z, w]` copies,
//! contacts) on the same ranges, so each keeps its band of the sheet in its cache, and no
//! part's constraints reach into the bands above it. A colour's part is solved in chunks of
//! [`CHUNK`]. The hinges' vector kernel rounds unlike their scalar one, so which hinges
//! run the scalar code must not depend on T: only a colour's own rest (after its last whole
//! eight) does, every other batch running its rest as a padded vector (see
//! [`ConstraintSet::schedule_phases`]). Distances round alike in every kernel. So the results
//! do not depend on T. Neighbouring parts of a phase
//! may share particles where they meet (the vertical edges across a band's border): every
//! *unit* (a level, a whole group of strips, a chunk of a colour, a part's pass) carries a
//! list of [`Wait`]s, how many units of which other parts must be done before it starts —
//! those that come earlier in the one-thread order and share a particle with it
//! ([`plan_sweep`] plays that order and fills [`Group::waits`]). So the threads never touch a
//! particle out of the sequential order, and instead of meeting at a barrier after every
//! phase each thread trails the band above it by part of a phase, from one sweep into the
//! next. (A colour's constraints that found no free colour among 64 form a phase of several
//! levels, cut like any other; no cloth mesh comes near that.)
//!
//! **Topology edits** (tearing) keep every batch valid incrementally: a removed constraint
//! leaves its batch (the last slot moves into its place); a constraint whose endpoint moved to a
//! fresh particle copy, and a new constraint, go to the *tail* group, solved by one thread
//! after the phases and coloured greedily as they arrive (a constraint finding all 64 colours
//! taken goes to the tail's serial batch). A group of strips turns back into levels (the same
//! order) the first time one of its constraints leaves.
//!
//! # Adding a constraint type
//!
//! A type is its maths, its storage and its kernels, registered once; the schedule, the plan
//! of waits, the threads and the frame loop then handle it without knowing its type.
//!
//! **From outside the engine** (a prototype, a scene's own rule): implement
//! [`custom::CustomConstraint`] — its particles, compliance, C and ∇C — and register a set
//! with `Cloth::add_constraints`; the engine applies the XPBD update ([`custom::project`])
//! in scalar code. The compiled example in [`custom`] registers and steps one.
//!
//! **Inside the engine** (a type worth a vector kernel; the distance constraint is the one to
//! copy), one folder beside `distance/` and `hinge/`:
//! 1. **The maths**, a safe pure function with the theory in the module's `//!` docs (as
//!    [`distance::solve`]): the constraint, its gradients and the XPBD update
//!    (docs/physics.md §1). Check the gradient
//!    against central differences in a unit test, as `bend.rs` does.
//! 2. **The storage**: a structure-of-arrays batch type implementing [`Batch`] (push,
//!    swap_remove, get, id, len, the particles a constraint touches) and, if the type has an
//!    order worth keeping on a grid, a [`Batch::phase_key`] (upper 32 bits a class, lower bits
//!    a direction); without one it is coloured greedily. [`ConstraintSet`] then schedules it
//!    into phases, parts, levels or colours and keeps ids addressable through topology edits.
//! 3. **The kernels**: its `SolvedBatch` impl in `src/sim/solver/sets.rs`, a `SetKernels`
//!    naming how to project one unit of a phase (on the `[x, y, z, w]` copy when given one)
//!    and the tail group, and the Stats phase it is charged to. A vector kernel is the scalar
//!    maths through [`lanes::Lanes`], operation for operation, so every width agrees bit for
//!    bit with the scalar loop (test it as the distance and hinge tests do).
//! 4. **The registration**: one field of `ConstraintStore` (`src/sim/constraint_store.rs`)
//!    built from the model's records in `ConstraintStore::new`, and one entry in
//!    `ConstraintStore::registry` with its [`Placement`]. Every `ConstraintSet` of a
//!    `SolvedBatch` is a `RegisteredSet`; the cut into parts, [`SweepStep::order`],
//!    [`plan_sweep`] and `Frame::run` follow the registry, so the plan of waits always plays
//!    the units in the order the threads run them. If tearing can move its particles, it is
//!    re-pointed through a `replace_…` of the store from `src/sim/tearing/`.
//! 5. **The tests**: the closed form the constraint exists for, bit-identical frames on one
//!    and several threads and with either vector kernel (`src/sim/solver/tests.rs`), and the
//!    statistics (`src/sim/stats.rs`) if it carries a force worth showing.
//!
//! Passes over the particles (prediction, the copies, tethers and contacts) are the
//! [`Pass`] steps of the same order, and serial work (the tail groups, the soft grab) is its
//! [`SweepStep::Serial`] step. A pass that sums over the particles (a closed mesh's volume,
//! [`super::pressure`]) runs inside the serial step: between barriers, the threads write
//! partial sums over fixed chunks that thread 0 combines in chunk order, so the sum does not
//! depend on the thread count.

pub mod bend;
pub mod custom;
pub mod distance;
pub mod hinge;
#[cfg(target_arch = "x86_64")]
mod lanes;
mod plan;
mod schedule;

pub(crate) use plan::{plan_sweep, Pass, Placement, PlannedSet, SweepPlan, SweepStep, Wait};
use schedule::{by_band, chunked, independent, level_schedule, part_cuts, phases, schedule_part, CHUNK, LANES, UNSPLIT_CHUNK};

/// Colour index of the serial batch of the tail group (constraints that found no free colour).
pub(crate) const TAIL: u32 = u32::MAX;
/// Number of colours tracked in the per-particle masks of greedy colourings.
const MAX_COLOURS: u32 = 64;
/// Most parts a cloth's phases are cut into, hence most threads a step runs on.
pub const MAX_PARTS: usize = 16;
/// Cloths with fewer particles keep every phase in one part: the synchronisation would cost
/// more than a second core saves.
const MIN_SPLIT_PARTICLES: usize = 4096;

/// One batch's worth of constraints in a storage layout chosen by the constraint type.
pub(crate) trait Batch: Default {
    /// Per-constraint data the batch stores.
    type Item: Copy;
    /// Particles the constraint touches.
    fn particles(item: &Self::Item) -> &[u32];
    /// Appends a constraint with model id `id`.
    fn push(&mut self, id: u32, item: Self::Item);
    /// Removes slot `index` by moving the last slot into it; returns the moved constraint's id.
    fn swap_remove(&mut self, index: usize) -> Option<u32>;
    /// Reads slot `index` back.
    fn get(&self, index: usize) -> Self::Item;
    /// Model id of slot `index`.
    fn id(&self, index: usize) -> u32;
    /// Number of constraints.
    fn len(&self) -> usize;
    /// Asks the kernels to run the constraints after the batch's last whole vector in a
    /// padded vector rather than with the scalar code, so that no constraint's rounding
    /// depends on where its batch ends (see [`ConstraintSet::schedule_phases`]). Nothing to do
    /// for a type whose vector and scalar kernels round alike.
    fn pad_rest(&mut self) {}
    /// The sweep-order key of a constraint type ordered like the straightforward loop (equal
    /// keys form one phase, level-scheduled), or `None` to order by greedy colour. The upper
    /// 32 bits are the constraint's *class* (distances: the edge kind): classes are solved in
    /// order also when the keys do not batch and the sweep is coloured instead (see
    /// [`MAX_KEYED_PHASES`](schedule::MAX_KEYED_PHASES)).
    fn phase_key(_item: &Self::Item) -> Option<u64> {
        None
    }
}

/// Where a constraint lives: its group (phase part or tail), batch and slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    pub group: u32,
    /// Batch index in the group (a level, or a colour in the tail), [`TAIL`] for the tail's
    /// serial batch.
    pub colour: u32,
    pub index: u32,
}

/// One part of a phase (levels in order), or the tail group (greedy colours).
#[derive(Debug, Default, Clone)]
pub(crate) struct Group<B: Batch> {
    /// Batches in solve order.
    pub batches: Vec<B>,
    /// Serial batch of the tail group: constraints that found no free colour, solved one at a
    /// time after the colours. Always empty in a phase part.
    pub tail: B,
    /// Tail group only: per particle, bit c set when a constraint of colour c touches it.
    used: Vec<u64>,
    /// The batches are strips, not levels (see [`strips`](schedule::strips)): eight lanes side by side, each a
    /// run of constraints solved in order, stored step by step (slot `8 s + k` is lane k's
    /// constraint s). A strip's constraints share particles along each lane.
    pub chained: bool,
    /// Phase parts only, one list per unit (see [`Group::unit_count`]): how many units of
    /// which other parts' sweeps (see [`SweepPlan::units`]) must be done before this unit
    /// starts, so that no two threads touch a particle out of the sequential order. Computed
    /// by [`plan_sweep`] for the current batches; conservative after a removal.
    pub waits: Vec<Vec<Wait>>,
}

impl<B: Batch> Group<B> {
    /// Units the threads synchronise on: a group of strips is one (its strips run
    /// interleaved), a group of levels one per level.
    pub fn unit_count(&self) -> usize {
        if self.chained {
            1
        } else {
            self.batches.len()
        }
    }

    /// The batches of unit `u` and what it waits for.
    pub fn unit_mut(&mut self, u: usize) -> (&mut [B], &[Wait]) {
        let batches = if self.chained {
            &mut self.batches[..]
        } else {
            std::slice::from_mut(&mut self.batches[u])
        };
        (batches, &self.waits[u])
    }

    /// The batches of unit `u`.
    fn unit(&self, u: usize) -> &[B] {
        if self.chained {
            &self.batches
        } else {
            std::slice::from_ref(&self.batches[u])
        }
    }

    /// Batches in solve order, serial batch last.
    pub fn iter_batches_mut(&mut self) -> impl Iterator<Item = &mut B> {
        self.batches.iter_mut().chain(std::iter::once(&mut self.tail))
    }

    fn iter_batches(&self) -> impl Iterator<Item = &B> {
        self.batches.iter().chain(std::iter::once(&self.tail))
    }

    fn batch_mut(&mut self, colour: u32) -> &mut B {
        if colour == TAIL {
            &mut self.tail
        } else {
            &mut self.batches[colour as usize]
        }
    }

    /// Appends `item` with the lowest colour free at all its particles (tail group only).
    fn place_greedy(&mut self, id: u32, item: B::Item) -> (u32, u32) {
        let particles = B::particles(&item);
        let used = particles.iter().fold(0u64, |m, &p| m | self.used[p as usize]);
        let colour = (!used).trailing_zeros();
        let colour = if colour < MAX_COLOURS {
            particles.iter().for_each(|&p| self.used[p as usize] |= 1 << colour);
            if self.batches.len() <= colour as usize {
                self.batches.resize_with(colour as usize + 1, B::default);
            }
            colour
        } else {
            TAIL
        };
        let batch = self.batch_mut(colour);
        batch.push(id, item);
        (colour, batch.len() as u32 - 1)
    }
}

/// The solver's storage of one constraint type: its constraints in sweep order (phases of
/// `parts` parts, each a list of levels, strips or colour chunks, then the tail group),
/// addressable by model id, with the edits tearing needs (insert, remove, replace) and the
/// cut into parts for threads.
#[derive(Debug, Default, Clone)]
pub(crate) struct ConstraintSet<B: Batch> {
    /// `groups[phase * parts + part]`, then the tail group last.
    groups: Vec<Group<B>>,
    /// Parts each phase is cut into (one per thread of the step).
    parts: usize,
    /// Per-particle passes split the particles at these bounds (`parts + 1` entries);
    /// particles added later (by tearing) go to the first thread.
    bounds: Vec<u32>,
    /// Particles the schedule covers (every constraint index is below it).
    particles: usize,
    /// Slot of each model id (`None` once removed).
    slots: Vec<Option<Slot>>,
    /// The units changed (a group of strips became levels) since [`plan_sweep`] last filled
    /// the waits.
    waits_stale: bool,
    /// The phases are keyed ([`Batch::phase_key`]), not greedy colours (see [`phases`]).
    keyed: bool,
}

impl<B: Batch> ConstraintSet<B> {
    /// Schedules `items` (model ids 0..n) over `particle_count` particles in one part: phases
    /// in sweep order, each level-scheduled (see the module docs). [`Self::set_parts`] cuts
    /// them for more threads.
    pub fn new(particle_count: usize, items: impl IntoIterator<Item = B::Item>) -> Self {
        Self::with_parts(particle_count, items, 1)
    }

    /// [`Self::new`] cut into `parts` parts.
    fn with_parts(particle_count: usize, items: impl IntoIterator<Item = B::Item>, parts: usize) -> Self {
        let items: Vec<B::Item> = items.into_iter().collect();
        let (phases, keyed) = phases::<B>(&items, particle_count);
        let mut set = Self {
            groups: Vec::new(),
            parts,
            bounds: (0..=parts).map(|p| (particle_count * p / parts) as u32).collect(),
            particles: particle_count,
            slots: vec![None; items.len()],
            waits_stale: true,
            keyed,
        };
        set.groups = set.schedule_phases(&items, &phases);
        set.groups.push(Group {
            used: vec![0; particle_count],
            ..Group::default()
        });
        set.record_slots();
        set
    }

    /// [`Self::new`] for a set registered beside sets built earlier, over `particle_count`
    /// particles today: its parts split the first `split` particles, as theirs do
    /// ([`Self::split_particles`]; tearing appends particles after them).
    pub fn new_beside(split: usize, particle_count: usize, items: impl IntoIterator<Item = B::Item>) -> Self {
        let mut set = Self::new(particle_count, items);
        set.bounds = vec![0, split as u32];
        set
    }

    /// Number of parts each phase is cut into.
    pub fn parts(&self) -> usize {
        self.parts
    }

    /// Most parts the phases can be cut into: one for a cloth too small to be worth a second
    /// thread (fewer than 4 096 particles), else [`MAX_PARTS`].
    pub fn max_parts(&self) -> usize {
        if self.split_particles() < MIN_SPLIT_PARTICLES {
            1
        } else {
            MAX_PARTS
        }
    }

    /// Particles the parts' bounds split (the particles when the set was built; particles
    /// added later belong to the first part's passes).
    pub fn split_particles(&self) -> usize {
        *self.bounds.last().unwrap_or(&0) as usize
    }

    /// Cuts every phase into `parts` parts (clamped to [`Self::max_parts`]), one per thread:
    /// the live constraints of each phase in sweep order (ascending model id, see [`phases`];
    /// removals never reorder the rest), cut where their lowest particle crosses the bounds of
    /// equal particle ranges, each part level-scheduled anew (see [`Self::schedule_phases`]).
    /// Any cut of that order into consecutive parts is the same sweep. The tail group stays as
    /// it is.
    pub fn set_parts(&mut self, parts: usize) {
        let parts = parts.clamp(1, self.max_parts());
        if parts == self.parts {
            return;
        }
        let phases: Vec<Vec<u32>> = (0..self.phase_count()).map(|phase| self.phase_ids(phase)).collect();
        let items = self.items_by_id();
        let n = self.split_particles();
        self.bounds = (0..=parts).map(|p| (n * p / parts) as u32).collect();
        self.parts = parts;
        let tail = self.groups.pop().expect("a tail group");
        let old_tail = self.groups.len() as u32;
        self.groups = self.schedule_phases(&items, &phases);
        self.groups.push(tail);
        let new_tail = self.tail_group() as u32;
        self.slots
            .iter_mut()
            .flatten()
            .filter(|s| s.group == old_tail)
            .for_each(|s| s.group = new_tail);
        (0..self.tail_group()).for_each(|g| self.record_group_slots(g));
        self.waits_stale = true;
    }

    /// The live constraints of `phase` in sweep order (ascending model id).
    fn phase_ids(&self, phase: usize) -> Vec<u32> {
        let groups = &self.groups[phase * self.parts..(phase + 1) * self.parts];
        let mut ids: Vec<u32> = groups
            .iter()
            .flat_map(|g| g.batches.iter())
            .flat_map(|b| (0..b.len()).map(|i| b.id(i)))
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Every live constraint's data at its model id (a removed id holds a copy of a live
    /// constraint's; the schedule never reads it).
    fn items_by_id(&self) -> Vec<B::Item> {
        let ids = 0..self.slots.len() as u32;
        let live = |id: u32| self.slot(id).map(|slot| self.batch(slot).get(slot.index as usize));
        let Some(filler) = ids.clone().find_map(live) else {
            return Vec::new();
        };
        ids.map(|id| live(id).unwrap_or(filler)).collect()
    }

    /// The phase groups for `phases` (lists of ids in sweep order): each phase cut at
    /// [`Self::bounds`] into `parts` consecutive parts (see [`part_cuts`]), each
    /// level-scheduled, a colour's part in chunks of [`CHUNK`].
    ///
    /// Where a colour is cut must not change how its constraints round, or the results would
    /// depend on the number of threads: the hinges' vector kernel rounds unlike their scalar
    /// one (fused multiply–adds), and a batch's constraints after its last whole vector would
    /// run the scalar code. So in a set that can be cut (see [`Self::max_parts`]) every batch
    /// of a phase part runs that rest as a padded vector ([`Batch::pad_rest`]; later removals
    /// by tearing end the same way), and only a colour's own rest — its constraints after its
    /// last whole eight, the same for any cut — runs the scalar code, as a batch of its own at
    /// the end of the last part (where one unpadded batch per colour had it, so the results of
    /// every earlier build are kept). A set too small to be cut keeps chunks of
    /// [`UNSPLIT_CHUNK`] with scalar rests, as it always had.
    fn schedule_phases(&self, items: &[B::Item], phases: &[Vec<u32>]) -> Vec<Group<B>> {
        let mut scratch = vec![0u32; self.particles];
        let mut groups = Vec::with_capacity(phases.len() * self.parts);
        let splittable = self.max_parts() > 1;
        for phase in phases {
            if !splittable {
                groups.push(chunked(schedule_part::<B>(items, phase, &mut scratch), UNSPLIT_CHUNK));
                continue;
            }
            let colour = !self.keyed && independent::<B>(items, phase, &mut scratch);
            let whole = if colour {
                phase.len() / LANES as usize * LANES as usize
            } else {
                phase.len()
            };
            let (vectors, rest) = phase.split_at(whole);
            let vectors = if colour {
                by_band::<B>(items, vectors, &self.bounds)
            } else {
                vectors.to_vec()
            };
            let cuts = part_cuts::<B>(items, &vectors, &self.bounds);
            for (k, part) in cuts.windows(2).enumerate() {
                let mut group = chunked(schedule_part::<B>(items, &vectors[part[0]..part[1]], &mut scratch), CHUNK);
                group.batches.iter_mut().for_each(B::pad_rest);
                if k + 1 == self.parts && !rest.is_empty() {
                    group.batches.extend(schedule_part::<B>(items, rest, &mut scratch).batches);
                }
                groups.push(group);
            }
        }
        groups
    }

    /// Writes every constraint's slot after the groups were built.
    fn record_slots(&mut self) {
        (0..self.groups.len()).for_each(|g| self.record_group_slots(g));
    }

    /// Writes the slots of group `g`'s constraints.
    fn record_group_slots(&mut self, g: usize) {
        for (colour, batch) in self.groups[g].batches.iter().enumerate() {
            for index in 0..batch.len() {
                self.slots[batch.id(index) as usize] = Some(Slot {
                    group: g as u32,
                    colour: colour as u32,
                    index: index as u32,
                });
            }
        }
    }

    /// Adds a constraint to the tail group, returning its id.
    pub fn insert(&mut self, item: B::Item) -> u32 {
        let id = self.slots.len() as u32;
        self.slots.push(None);
        self.place_in_tail(id, item);
        id
    }

    fn tail_group(&self) -> usize {
        self.groups.len() - 1
    }

    fn place_in_tail(&mut self, id: u32, item: B::Item) {
        let group = self.tail_group();
        let (colour, index) = self.groups[group].place_greedy(id, item);
        self.slots[id as usize] = Some(Slot {
            group: group as u32,
            colour,
            index,
        });
    }

    /// Turns a group of strips back into levels (same sweep), so its constraints can leave
    /// their slots one by one. Their λ restart from 0, as at the next substep.
    fn unchain(&mut self, g: usize) {
        let group = &self.groups[g];
        let mut members: Vec<(u32, B::Item)> = group
            .batches
            .iter()
            .flat_map(|b| (0..b.len()).map(move |i| (b.id(i), b.get(i))))
            .collect();
        members.sort_by_key(|&(id, _)| id);
        let (ids, items): (Vec<u32>, Vec<B::Item>) = members.into_iter().unzip();
        let mut scratch = vec![0; self.particles];
        self.groups[g] = level_schedule::<B>(&items, &ids, &mut scratch, |_| 0);
        self.record_group_slots(g);
        self.waits_stale = true;
    }

    /// Removes constraint `id` (no-op if already removed).
    pub fn remove(&mut self, id: u32) {
        if let Some(slot) = self.slot(id).filter(|s| self.groups[s.group as usize].chained) {
            self.unchain(slot.group as usize);
        }
        let Some(slot) = self.slots[id as usize].take() else { return };
        let group = &mut self.groups[slot.group as usize];
        let item = group.batch_mut(slot.colour).get(slot.index as usize);
        if !group.used.is_empty() && slot.colour != TAIL {
            for &p in B::particles(&item) {
                group.used[p as usize] &= !(1u64 << slot.colour);
            }
        }
        if let Some(moved) = group.batch_mut(slot.colour).swap_remove(slot.index as usize) {
            if let Some(s) = self.slots[moved as usize].as_mut() {
                s.index = slot.index;
            }
        }
    }

    /// Replaces constraint `id`'s data (e.g. an endpoint moved to a new particle copy): it
    /// leaves its batch for the tail group.
    pub fn replace(&mut self, id: u32, item: B::Item) {
        self.remove(id);
        self.place_in_tail(id, item);
    }

    /// Grows the tail's colour masks after particles were added (their constraints are in the
    /// tail group).
    pub fn resize_particles(&mut self, particle_count: usize) {
        let tail = self.tail_group();
        self.groups[tail].used.resize(particle_count, 0);
        self.particles = particle_count;
    }

    /// Number of particles the schedule covers (every constraint index is below it).
    pub fn particle_count(&self) -> usize {
        self.particles
    }

    /// Model ids of the live constraints, ascending.
    pub fn live_ids(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.slots.len() as u32).filter(|&id| self.slots[id as usize].is_some())
    }

    /// Slot of constraint `id`, if it still exists.
    pub fn slot(&self, id: u32) -> Option<Slot> {
        self.slots.get(id as usize).copied().flatten()
    }

    /// The batch holding `slot`.
    pub fn batch(&self, slot: Slot) -> &B {
        let group = &self.groups[slot.group as usize];
        if slot.colour == TAIL {
            &group.tail
        } else {
            &group.batches[slot.colour as usize]
        }
    }

    /// The batch holding `slot`, to change a constraint's data in place (not its particles).
    pub fn batch_mut(&mut self, slot: Slot) -> &mut B {
        self.groups[slot.group as usize].batch_mut(slot.colour)
    }

    /// Batches in solve order (phases and their parts in order, then the tail).
    pub fn iter_batches_mut(&mut self) -> impl Iterator<Item = &mut B> {
        self.groups.iter_mut().flat_map(Group::iter_batches_mut)
    }

    /// Batches in solve order (phases and their parts in order, then the tail).
    pub fn iter_batches(&self) -> impl Iterator<Item = &B> {
        self.groups.iter().flat_map(Group::iter_batches)
    }

    /// The phase parts (`phase * parts + part`) followed by the tail group.
    pub fn groups_mut(&mut self) -> &mut [Group<B>] {
        &mut self.groups
    }

    /// Whether the units changed since [`plan_sweep`] last filled the waits.
    pub fn waits_stale(&self) -> bool {
        self.waits_stale
    }

    /// Whether the phases follow [`Batch::phase_key`] (a grid's order), not greedy colours.
    pub fn is_keyed(&self) -> bool {
        self.keyed
    }

    /// Whether the tail group holds no constraint.
    pub fn tail_is_empty(&self) -> bool {
        self.groups[self.tail_group()].iter_batches().all(|b| b.len() == 0)
    }

    /// Number of phases.
    pub fn phase_count(&self) -> usize {
        (self.groups.len() - 1) / self.parts
    }

    /// Particle ranges of the per-particle passes (`parts + 1` bounds).
    pub fn bounds(&self) -> &[u32] {
        &self.bounds
    }

    /// Number of live constraints.
    pub fn len(&self) -> usize {
        self.iter_batches().map(B::len).sum()
    }

    /// Number of batches in use (over all groups, excluding the serial batch).
    pub fn colour_count(&self) -> usize {
        self.groups.iter().map(|g| g.batches.iter().filter(|b| b.len() > 0).count()).sum()
    }
}

#[cfg(test)]
mod tests;
