//! Constraint storage for the solver: constraints grouped by graph colour.
//!
//! Gauss–Seidel projects constraints one after another, each seeing the previous one's
//! result. When consecutive constraints share a particle, each projection waits for the
//! previous store; colouring removes that chain. A colour (batch) holds constraints that share
//! no particle, so the constraints of one batch can be projected in any order, in SIMD lanes or
//! on several threads, with bit-identical results. The sweep is still Gauss–Seidel *across*
//! batches. Colours are assigned greedily with a 64-bit mask of used colours per particle;
//! the rare constraint that finds all 64 colours taken goes to a serial tail batch.
//!
//! Topology edits (tearing) keep the colouring valid incrementally: removing a constraint frees
//! its colour bit, moving an endpoint to a fresh particle copy keeps it (the copy is in no other
//! constraint of that colour), and a new constraint takes the lowest colour free at its ends.

pub mod bend;
pub mod distance;
pub mod hinge;

/// Colour index of the serial tail batch (constraints that found no free colour).
pub(crate) const TAIL: u32 = u32::MAX;
/// Number of colours tracked in the per-particle masks.
const MAX_COLOURS: u32 = 64;

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
    /// Number of constraints.
    fn len(&self) -> usize;
}

/// Where a constraint lives: its colour and slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    pub colour: u32,
    pub index: u32,
}

/// Constraints grouped by colour, addressable by model id.
#[derive(Debug, Default, Clone)]
pub(crate) struct Coloured<B: Batch> {
    /// Batches in solve order; `batches[c]` holds colour `c`.
    pub batches: Vec<B>,
    /// Constraints that found no free colour, solved serially after the batches.
    pub tail: B,
    /// Slot of each model id (`None` once removed).
    slots: Vec<Option<Slot>>,
    /// Per particle: bit c set when a constraint of colour c touches it.
    used: Vec<u64>,
}

impl<B: Batch> Coloured<B> {
    /// Colours `items` (model ids 0..n) greedily in order over `particle_count` particles.
    pub fn new(particle_count: usize, items: impl IntoIterator<Item = B::Item>) -> Self {
        let mut set = Self {
            batches: Vec::new(),
            tail: B::default(),
            slots: Vec::new(),
            used: vec![0; particle_count],
        };
        for item in items {
            set.insert(item);
        }
        set
    }

    /// Adds a constraint, returning its id.
    pub fn insert(&mut self, item: B::Item) -> u32 {
        let id = self.slots.len() as u32;
        self.slots.push(None);
        self.place(id, item);
        id
    }

    fn place(&mut self, id: u32, item: B::Item) {
        let particles = B::particles(&item);
        let used = particles.iter().fold(0u64, |m, &p| m | self.used[p as usize]);
        let colour = (!used).trailing_zeros();
        let batch = if colour < MAX_COLOURS {
            for &p in particles {
                self.used[p as usize] |= 1 << colour;
            }
            while self.batches.len() <= colour as usize {
                self.batches.push(B::default());
            }
            &mut self.batches[colour as usize]
        } else {
            &mut self.tail
        };
        let colour = if colour < MAX_COLOURS { colour } else { TAIL };
        let index = batch.len() as u32;
        batch.push(id, item);
        self.slots[id as usize] = Some(Slot { colour, index });
    }

    /// Removes constraint `id` (no-op if already removed).
    pub fn remove(&mut self, id: u32) {
        let Some(slot) = self.slots[id as usize].take() else { return };
        let batch = if slot.colour == TAIL {
            &mut self.tail
        } else {
            &mut self.batches[slot.colour as usize]
        };
        let item = batch.get(slot.index as usize);
        if slot.colour != TAIL {
            for &p in B::particles(&item) {
                self.used[p as usize] &= !(1u64 << slot.colour);
            }
        }
        if let Some(moved) = batch.swap_remove(slot.index as usize) {
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

    /// Grows the per-particle colour masks after particles were added.
    pub fn resize_particles(&mut self, particle_count: usize) {
        self.used.resize(particle_count, 0);
    }

    /// Slot of constraint `id`, if it still exists.
    pub fn slot(&self, id: u32) -> Option<Slot> {
        self.slots.get(id as usize).copied().flatten()
    }

    /// The batch holding `slot`.
    pub fn batch(&self, slot: Slot) -> &B {
        if slot.colour == TAIL {
            &self.tail
        } else {
            &self.batches[slot.colour as usize]
        }
    }

    /// Batches in solve order, tail last.
    pub fn iter_batches_mut(&mut self) -> impl Iterator<Item = &mut B> {
        self.batches.iter_mut().chain(std::iter::once(&mut self.tail))
    }

    /// Batches in solve order, tail last.
    pub fn iter_batches(&self) -> impl Iterator<Item = &B> {
        self.batches.iter().chain(std::iter::once(&self.tail))
    }

    /// Number of live constraints.
    pub fn len(&self) -> usize {
        self.iter_batches().map(B::len).sum()
    }

    /// Number of colours in use (excluding the tail).
    pub fn colour_count(&self) -> usize {
        self.batches.len()
    }
}
