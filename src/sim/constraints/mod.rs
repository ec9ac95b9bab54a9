//! Constraint storage for the solver: constraints grouped by region and graph colour.
//!
//! Gauss–Seidel projects constraints one after another, each seeing the previous one's
//! result. When consecutive constraints share a particle, each projection waits for the
//! previous store; colouring removes that chain. A colour (batch) holds constraints that share
//! no particle, so the constraints of one batch can be projected in any order, in SIMD lanes,
//! with bit-identical results. The sweep is still Gauss–Seidel *across* batches. Colours are
//! assigned greedily with a 64-bit mask of used colours per particle; the rare constraint that
//! finds all 64 colours taken goes to a serial tail batch. Inside a batch constraints are
//! sorted by particle index, so a sweep walks memory forward.
//!
//! Two cores: a large cloth's particles are split by index into [`REGIONS`] contiguous
//! regions (a horizontal cut for a row-major grid). A constraint whose particles all lie in one
//! region belongs to that region's group; the few crossing a cut (and any touching particles
//! added later by tearing) belong to the interface group, solved after the regions. Regions
//! share no particle, so they can be solved on different threads with no synchronisation
//! until the interface; the split depends only on the cloth, never on the thread count, so
//! results are bit-identical for every thread count. Each group is coloured on its own.
//!
//! Topology edits (tearing) keep the colouring valid incrementally: removing a constraint frees
//! its colour bit, moving an endpoint to a fresh particle copy re-places the constraint (the
//! copy is in the interface group), and a new constraint takes the lowest colour free at its
//! ends in its group.

pub mod bend;
pub mod distance;
pub mod hinge;

/// Colour index of the serial tail batch (constraints that found no free colour).
pub(crate) const TAIL: u32 = u32::MAX;
/// Number of colours tracked in the per-particle masks.
const MAX_COLOURS: u32 = 64;
/// Regions a large cloth is split into (one per core of the target machine).
pub(crate) const REGIONS: usize = 2;
/// Cloths with fewer particles stay one region: the interface and the synchronisation would
/// cost more than a second core saves.
const MIN_SPLIT_PARTICLES: usize = 4096;

/// One colour's worth of constraints in a storage layout chosen by the constraint type.
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
    /// Order of constraints inside a batch: by first particle, so a sweep walks memory
    /// forward (a type may group kinds first).
    fn sort_key(item: &Self::Item) -> u64 {
        Self::particles(item).iter().copied().min().unwrap_or(0) as u64
    }
    /// Number of constraints.
    fn len(&self) -> usize;
}

/// Where a constraint lives: its group (region or interface), colour and slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    pub group: u32,
    pub colour: u32,
    pub index: u32,
}

/// The constraints of one region (or of the interface), by colour.
#[derive(Debug, Default, Clone)]
pub(crate) struct Group<B: Batch> {
    /// Batches in solve order; `batches[c]` holds colour `c`.
    pub batches: Vec<B>,
    /// Constraints that found no free colour, solved serially after the batches.
    pub tail: B,
    /// Per particle: bit c set when a constraint of this group's colour c touches it.
    used: Vec<u64>,
}

impl<B: Batch> Group<B> {
    /// Batches in solve order, tail last.
    pub fn iter_batches_mut(&mut self) -> impl Iterator<Item = &mut B> {
        self.batches.iter_mut().chain(std::iter::once(&mut self.tail))
    }

    fn batch_mut(&mut self, colour: u32) -> &mut B {
        if colour == TAIL {
            &mut self.tail
        } else {
            &mut self.batches[colour as usize]
        }
    }
}

/// Constraints grouped by region and colour, addressable by model id.
#[derive(Debug, Default, Clone)]
pub(crate) struct Coloured<B: Batch> {
    /// Region groups in particle order, then the interface group.
    groups: Vec<Group<B>>,
    /// Region r owns particles `bounds[r]..bounds[r + 1]`; particles past the last bound
    /// (added after construction) belong to no region.
    bounds: Vec<u32>,
    /// Slot of each model id (`None` once removed).
    slots: Vec<Option<Slot>>,
}

impl<B: Batch> Coloured<B> {
    /// Colours `items` (model ids 0..n) greedily in order over `particle_count` particles, then
    /// sorts every batch by particle index so a sweep walks memory forward.
    pub fn new(particle_count: usize, items: impl IntoIterator<Item = B::Item>) -> Self {
        let regions = if particle_count >= MIN_SPLIT_PARTICLES { REGIONS } else { 1 };
        let bounds = (0..=regions).map(|r| (particle_count * r / regions) as u32).collect();
        let mut set = Self {
            groups: (0..=regions)
                .map(|_| Group {
                    batches: Vec::new(),
                    tail: B::default(),
                    used: vec![0; particle_count],
                })
                .collect(),
            bounds,
            slots: Vec::new(),
        };
        for item in items {
            set.insert(item);
        }
        set.sort_batches();
        set
    }

    /// Adds a constraint, returning its id.
    pub fn insert(&mut self, item: B::Item) -> u32 {
        let id = self.slots.len() as u32;
        self.slots.push(None);
        self.place(id, item);
        id
    }

    /// The group a constraint belongs to: its particles' common region, else the interface.
    fn group_of(&self, item: &B::Item) -> usize {
        let region = |p: u32| self.bounds.windows(2).position(|w| (w[0]..w[1]).contains(&p));
        let mut particles = B::particles(item).iter();
        let first = particles.next().and_then(|&p| region(p));
        match first {
            Some(r) if particles.all(|&p| region(p) == Some(r)) => r,
            _ => self.groups.len() - 1,
        }
    }

    fn place(&mut self, id: u32, item: B::Item) {
        let g = self.group_of(&item);
        let group = &mut self.groups[g];
        let particles = B::particles(&item);
        let used = particles.iter().fold(0u64, |m, &p| m | group.used[p as usize]);
        let colour = (!used).trailing_zeros();
        let colour = if colour < MAX_COLOURS {
            for &p in particles {
                group.used[p as usize] |= 1 << colour;
            }
            while group.batches.len() <= colour as usize {
                group.batches.push(B::default());
            }
            colour
        } else {
            TAIL
        };
        let batch = group.batch_mut(colour);
        let index = batch.len() as u32;
        batch.push(id, item);
        self.slots[id as usize] = Some(Slot {
            group: g as u32,
            colour,
            index,
        });
    }

    /// Reorders every batch by [`Batch::sort_key`] (same colours, new slots).
    fn sort_batches(&mut self) {
        for group in &mut self.groups {
            for batch in group.iter_batches_mut() {
                let mut order: Vec<usize> = (0..batch.len()).collect();
                order.sort_by_key(|&i| B::sort_key(&batch.get(i)));
                let mut sorted = B::default();
                for i in order {
                    sorted.push(batch.id(i), batch.get(i));
                }
                *batch = sorted;
            }
        }
        for (g, group) in self.groups.iter().enumerate() {
            let colours = (0..group.batches.len() as u32).chain(std::iter::once(TAIL));
            for colour in colours {
                let batch = if colour == TAIL {
                    &group.tail
                } else {
                    &group.batches[colour as usize]
                };
                for index in 0..batch.len() {
                    self.slots[batch.id(index) as usize] = Some(Slot {
                        group: g as u32,
                        colour,
                        index: index as u32,
                    });
                }
            }
        }
    }

    /// Removes constraint `id` (no-op if already removed).
    pub fn remove(&mut self, id: u32) {
        let Some(slot) = self.slots[id as usize].take() else { return };
        let group = &mut self.groups[slot.group as usize];
        let item = group.batch_mut(slot.colour).get(slot.index as usize);
        if slot.colour != TAIL {
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

    /// Replaces constraint `id`'s data (e.g. an endpoint moved to a new particle copy),
    /// recolouring it if its particles changed.
    pub fn replace(&mut self, id: u32, item: B::Item) {
        self.remove(id);
        self.place(id, item);
    }

    /// Grows the per-particle colour masks after particles were added. The new particles
    /// belong to no region, so their constraints go to the interface group.
    pub fn resize_particles(&mut self, particle_count: usize) {
        for group in &mut self.groups {
            group.used.resize(particle_count, 0);
        }
    }

    /// Number of particles the colour masks cover (every constraint index is below it).
    pub fn particle_count(&self) -> usize {
        self.groups[0].used.len()
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

    /// Batches in solve order (regions in order, then the interface; tails last in each).
    pub fn iter_batches_mut(&mut self) -> impl Iterator<Item = &mut B> {
        self.groups.iter_mut().flat_map(Group::iter_batches_mut)
    }

    /// Batches in solve order (regions in order, then the interface; tails last in each).
    pub fn iter_batches(&self) -> impl Iterator<Item = &B> {
        self.groups.iter().flat_map(|g| g.batches.iter().chain(std::iter::once(&g.tail)))
    }

    /// The region groups followed by the interface group.
    pub fn groups_mut(&mut self) -> &mut [Group<B>] {
        &mut self.groups
    }

    /// Particle ranges of the regions (`regions() + 1` bounds).
    pub fn bounds(&self) -> &[u32] {
        &self.bounds
    }

    /// Number of live constraints.
    pub fn len(&self) -> usize {
        self.iter_batches().map(B::len).sum()
    }

    /// Number of colour batches in use (over all groups, excluding tails).
    pub fn colour_count(&self) -> usize {
        self.groups.iter().map(|g| g.batches.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::distance::{DistanceBatch, DistanceItem};
    use super::*;

    fn item(a: u32, b: u32) -> DistanceItem {
        DistanceItem {
            ends: [a, b],
            rest: 1.0,
            compliance: 0.0,
            kind: crate::sim::model::EdgeKind::Stretch,
        }
    }

    /// No batch of any group may touch a particle twice, and regions keep to their particles.
    fn assert_valid(set: &Coloured<DistanceBatch>) {
        let interface = set.groups.len() - 1;
        for (g, group) in set.groups.iter().enumerate() {
            for batch in &group.batches {
                let mut seen = std::collections::HashSet::new();
                for (&a, &b) in batch.a.iter().zip(&batch.b) {
                    assert!(seen.insert(a) && seen.insert(b), "particle shared inside a batch");
                    if g != interface {
                        let range = set.bounds[g]..set.bounds[g + 1];
                        assert!(range.contains(&a) && range.contains(&b), "constraint outside its region");
                    }
                }
            }
        }
        for id in 0..set.slots.len() as u32 {
            if let Some(slot) = set.slot(id) {
                assert_eq!(set.batch(slot).id[slot.index as usize], id);
            }
        }
    }

    fn chain(n: u32) -> Coloured<DistanceBatch> {
        Coloured::new(n as usize, (0..n - 1).map(|i| item(i, i + 1)))
    }

    #[test]
    fn large_chain_splits_into_regions_and_one_interface_constraint() {
        let n = MIN_SPLIT_PARTICLES as u32;
        let set = chain(n);
        assert_valid(&set);
        assert_eq!(set.bounds, vec![0, n / 2, n]);
        assert_eq!(set.groups.last().unwrap().batches.iter().map(|b| b.a.len()).sum::<usize>(), 1);
        assert_eq!(set.len(), n as usize - 1);
    }

    #[test]
    fn edits_keep_colouring_valid_and_slots_consistent() {
        let n = MIN_SPLIT_PARTICLES as u32;
        let mut set = chain(n);
        set.remove(10);
        set.remove(10);
        set.resize_particles(n as usize + 1);
        set.replace(11, item(n, 12));
        let added = set.insert(item(5, 7));
        assert_valid(&set);
        assert_eq!(set.slot(10), None);
        assert_eq!(set.slot(11).unwrap().group as usize, set.groups.len() - 1);
        assert_eq!(
            set.batch(set.slot(added).unwrap()).get(set.slot(added).unwrap().index as usize),
            item(5, 7)
        );
        assert_eq!(set.len(), n as usize - 1);
    }

    #[test]
    fn batches_are_sorted_by_particle() {
        let set = chain(64);
        for batch in set.iter_batches() {
            assert!(batch.a.windows(2).all(|w| w[0] <= w[1]));
        }
    }
}
