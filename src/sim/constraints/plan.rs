//! The plan that lets several threads run one sweep: per unit of work (a level, a group of
//! strips, a chunk of a colour, a part's pass over its particles), the units of other parts
//! it must wait for, found by playing the one-thread order once ([`plan_sweep`]). The solver
//! (`super::super::solver`) follows it.

use std::ops::Range;

use super::{Batch, ConstraintSet, Group};

/// What a unit of one part waits for before it starts: `part` has finished `units` units of
/// its current sweep (negative: counted back into the previous sweep). See [`plan_sweep`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wait {
    pub part: u32,
    pub units: i32,
}

/// The passes over a part's own particles in each sweep, in order: prediction (first sweep of
/// a substep), copy into the hinges' `[x, y, z, w]` array, copy back, contacts. Each is one
/// unit (empty where there is nothing to do), placed among the phases as [`plan_sweep`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pass {
    Predict,
    CopyIn,
    CopyOut,
    Contacts,
}

impl Pass {
    /// Number of passes (the length of a part's [`SweepPlan::pass_waits`] entry).
    pub const COUNT: usize = 4;
}

/// Which positions a constraint set's phases are solved on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// The particle arrays themselves, before the copy-in passes.
    Arrays,
    /// The `[x, y, z, w]` copy, between the copy-in and copy-out passes (the arrays
    /// themselves when the kernel has no use for a copy; the order is the same).
    Copy,
}

/// One step of a sweep. The solver runs, and [`plan_sweep`] plays, the steps of
/// [`SweepStep::order`] in that order, so the two cannot disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SweepStep {
    /// A pass over each part's own particles, part by part.
    Pass(Pass),
    /// The phases of registered constraint set `k`, phase by phase, part by part.
    Set(usize),
    /// The tail groups of every set, then the serial constraints (the soft grab), by one
    /// thread between two barriers (no unit of the plan: nothing runs beside it).
    Serial,
}

impl SweepStep {
    /// The steps of one sweep for constraint sets placed as `placements` (in registration
    /// order): prediction, the sets on the arrays, the copy to the `[x, y, z, w]` array, the
    /// sets on the copy, the copy back, the serial step, contacts.
    pub fn order(placements: &[Placement]) -> Vec<SweepStep> {
        let placed = |wanted: Placement| {
            let sets = placements.iter().enumerate().filter(move |&(_, &p)| p == wanted);
            sets.map(|(k, _)| SweepStep::Set(k))
        };
        let mut steps = vec![SweepStep::Pass(Pass::Predict)];
        steps.extend(placed(Placement::Arrays));
        steps.push(SweepStep::Pass(Pass::CopyIn));
        steps.extend(placed(Placement::Copy));
        steps.extend([SweepStep::Pass(Pass::CopyOut), SweepStep::Serial, SweepStep::Pass(Pass::Contacts)]);
        steps
    }
}

/// What the sweep on several threads needs besides [`Group::waits`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SweepPlan {
    /// Units each part runs per sweep: its passes and its units of every phase.
    pub units: Vec<u32>,
    /// Waits of each part's passes (indexed by [`Pass`]), as [`Group::waits`].
    pub pass_waits: Vec<[Vec<Wait>; Pass::COUNT]>,
    /// Where each registered set's phases run.
    pub placements: Vec<Placement>,
    /// The steps of one sweep ([`SweepStep::order`] of the placements).
    pub order: Vec<SweepStep>,
}

/// A constraint set as [`plan_sweep`] sees it: phases cut into parts, each a list of units.
pub(crate) trait PlannedSet {
    /// Particle index where each part begins, and the end.
    fn part_bounds(&self) -> &[u32];
    /// Particles the constraints may touch.
    fn particle_span(&self) -> usize;
    /// Units of `part` in one sweep of the phases.
    fn phase_units(&self, part: usize) -> u32;
    /// Plays one sweep of the phases into `touches` (phase by phase, part by part, unit by
    /// unit) and returns each phase part's waits, converted by `keep`.
    fn play(&self, touches: &mut Touches, keep: &dyn Fn(&[Option<i64>]) -> Vec<Wait>) -> Vec<Vec<Vec<Wait>>>;
    /// Stores the phase parts' waits computed by [`plan_sweep`].
    fn set_waits(&mut self, waits: Vec<Vec<Vec<Wait>>>);
}

/// Fills the waits of the constraint sets (cut into the same parts, placed as `placements`)
/// and returns the plan, by playing two sweeps in the one-thread order
/// ([`SweepStep::order`]) and remembering for each particle the part that last touched it and
/// how many of that part's units were done by then. A unit waits, for each other part, for the
/// largest such count among its particles; that is enough, because the unit it waits for
/// waited in turn for the particle's earlier touches. The second sweep's waits are kept,
/// counted from the start of the waited-for part's sweep (negative: in the previous sweep).
/// The tail groups are not played: they run between barriers.
pub(crate) fn plan_sweep(sets: &mut [&mut dyn PlannedSet], placements: &[Placement]) -> SweepPlan {
    assert_eq!(sets.len(), placements.len(), "one placement per set");
    let bounds = sets[0].part_bounds().to_vec();
    assert!(
        sets.iter().all(|s| s.part_bounds() == bounds),
        "all sets are cut into the same parts"
    );
    let parts = bounds.len() - 1;
    let units: Vec<u32> = (0..parts)
        .map(|part| Pass::COUNT as u32 + sets.iter().map(|s| s.phase_units(part)).sum::<u32>())
        .collect();
    let own = |part: usize| bounds[part]..bounds[part + 1];
    let span = sets.iter().map(|s| s.particle_span()).max().unwrap_or(0);
    let mut touches = Touches::new(span, parts);
    let mut pass_waits = vec![<[Vec<Wait>; Pass::COUNT]>::default(); parts];
    let mut set_waits = vec![Vec::new(); sets.len()];
    let order = SweepStep::order(placements);
    for sweep in 0..2 {
        let keep = |counts: &[Option<i64>]| -> Vec<Wait> {
            let waits = counts.iter().enumerate().filter_map(|(part, count)| count.map(|c| (part, c)));
            let relative = |(part, count): (usize, i64)| Wait {
                part: part as u32,
                units: (count - sweep * units[part] as i64) as i32,
            };
            waits.map(relative).collect()
        };
        for &step in &order {
            match step {
                SweepStep::Pass(pass) => {
                    for (part, waits) in pass_waits.iter_mut().enumerate() {
                        waits[pass as usize] = keep(&touches.pass(part, own(part)));
                    }
                }
                SweepStep::Set(k) => set_waits[k] = sets[k].play(&mut touches, &keep),
                SweepStep::Serial => {}
            }
        }
    }
    for (set, waits) in sets.iter_mut().zip(set_waits) {
        set.set_waits(waits);
    }
    SweepPlan {
        units,
        pass_waits,
        placements: placements.to_vec(),
        order,
    }
}

/// For [`plan_sweep`]: per particle, the part that last touched it and that
/// part's unit count then.
pub(crate) struct Touches {
    last: Vec<Option<(usize, i64)>>,
    done: Vec<i64>,
}

impl Touches {
    fn new(particles: usize, parts: usize) -> Self {
        Self {
            last: vec![None; particles],
            done: vec![0; parts],
        }
    }

    /// Starts playing the next unit of `part`.
    fn unit(&mut self, part: usize) -> Unit<'_> {
        self.done[part] += 1;
        let parts = self.done.len();
        Unit {
            touches: self,
            part,
            waits: vec![None; parts],
        }
    }

    /// Plays a unit of `part` touching `particles`; returns its waits per part.
    fn pass(&mut self, part: usize, particles: Range<u32>) -> Vec<Option<i64>> {
        let mut unit = self.unit(part);
        particles.for_each(|p| unit.touch(p));
        unit.waits
    }
}

/// A unit being played by [`Touches`].
struct Unit<'a> {
    touches: &'a mut Touches,
    part: usize,
    /// Per part, the unit count it must wait for so far (`None`: nothing of that part).
    waits: Vec<Option<i64>>,
}

impl Unit<'_> {
    fn touch(&mut self, p: u32) {
        let done = self.touches.done[self.part];
        let last = &mut self.touches.last[p as usize];
        if let Some((other, count)) = *last {
            if other != self.part {
                self.waits[other] = self.waits[other].max(Some(count));
            }
        }
        *last = Some((self.part, done));
    }
}

impl<B: Batch> PlannedSet for ConstraintSet<B> {
    fn part_bounds(&self) -> &[u32] {
        &self.bounds
    }

    fn particle_span(&self) -> usize {
        self.particles
    }

    fn phase_units(&self, part: usize) -> u32 {
        let groups = self.groups[..self.phase_count() * self.parts].iter();
        groups.skip(part).step_by(self.parts).map(|g| g.unit_count() as u32).sum()
    }

    fn play(&self, touches: &mut Touches, keep: &dyn Fn(&[Option<i64>]) -> Vec<Wait>) -> Vec<Vec<Vec<Wait>>> {
        let parts = self.parts;
        let groups = &self.groups[..self.phase_count() * parts];
        let play_group = |(g, group): (usize, &Group<B>), touches: &mut Touches| -> Vec<Vec<Wait>> {
            (0..group.unit_count())
                .map(|u| {
                    let mut unit = touches.unit(g % parts);
                    for batch in group.unit(u) {
                        (0..batch.len()).for_each(|i| B::particles(&batch.get(i)).iter().for_each(|&p| unit.touch(p)));
                    }
                    keep(&unit.waits)
                })
                .collect()
        };
        groups.iter().enumerate().map(|group| play_group(group, touches)).collect()
    }

    fn set_waits(&mut self, waits: Vec<Vec<Vec<Wait>>>) {
        for (group, waits) in self.groups.iter_mut().zip(waits) {
            group.waits = waits;
        }
        self.waits_stale = false;
    }
}
