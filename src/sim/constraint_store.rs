//! [`ConstraintStore`]: a cloth's constraints as the solver keeps them, behind the few
//! operations the rest of the engine needs.
//!
//! The model ([`Model::distances`], [`Model::hinges`]) holds each constraint's record: its
//! particles, rest value and compliance rule. The solver holds the same constraints in sweep
//! order ([`ConstraintSet`]), with their effective compliances and multipliers, addressed by
//! the model's index (the constraint's *id*). The store keeps the two in step: a constraint is
//! added, re-pointed or removed in both at once, and compliances are rewritten only from the
//! model's records through [`Material::distance_compliance`] and
//! [`Material::hinge_compliance`]. It also owns the plan of waits between the threads' parts,
//! refreshed whenever the parts or the sweep's units change.

use super::constraints::custom::{CustomBatch, CustomConstraint};
use super::constraints::distance::{DistanceBatch, DistanceItem};
use super::constraints::hinge::{HingeBatch, HingeItem};
use super::constraints::{plan_sweep, ConstraintSet, Placement, PlannedSet, SweepPlan};
use super::model::{DistanceConstraint, Hinge, Model};
use super::params::Material;
use super::solver::{FrameSet, SetInFrame, SolvedBatch};

/// The solver's constraint sets: the model's distances and hinges, kept in step with the
/// model's records, then the custom sets registered through
/// [`super::cloth::Cloth::add_constraints`].
#[derive(Debug, Clone)]
pub(crate) struct ConstraintStore {
    distances: ConstraintSet<DistanceBatch>,
    hinges: ConstraintSet<HingeBatch>,
    /// Sets of caller-defined constraint types, in registration order.
    custom: Vec<Box<dyn RegisteredSet>>,
    /// The sweep's unit counts and pass waits per part, refreshed when the units change.
    plan: SweepPlan,
}

/// What one frame of the solver reads from the store (see [`ConstraintStore::sweep`]).
pub(crate) struct SweepSets<'a> {
    /// Parts the phases are cut into.
    pub parts: usize,
    /// Particle index where each part begins, and the end.
    pub bounds: Vec<u32>,
    /// The registered sets, lent to the frame.
    pub sets: Vec<Box<dyn FrameSet>>,
    pub plan: &'a SweepPlan,
    /// Whether a set placed on the `[x, y, z, w]` copy has phases to solve.
    pub copy_used: bool,
    /// Whether no set has constraints in its tail group.
    pub tail_empty: bool,
}

/// One registered constraint set as the store and the frame handle it, whatever its type:
/// implemented by every [`ConstraintSet`] whose batch type has kernels ([`SolvedBatch`]).
pub(crate) trait RegisteredSet: PlannedSet + Send + Sync + std::fmt::Debug {
    /// Number of live constraints.
    fn len(&self) -> usize;
    /// Makes room for particles added by a split.
    fn resize_particles(&mut self, particle_count: usize);
    /// Cuts the phases into `parts` parts (see [`ConstraintSet::set_parts`]).
    fn set_parts(&mut self, parts: usize);
    /// Whether the units changed since the plan's waits were filled.
    fn waits_stale(&self) -> bool;
    /// Whether the tail group is empty.
    fn tail_is_empty(&self) -> bool;
    /// Number of phases.
    fn phase_count(&self) -> usize;
    /// Its groups lent to one frame with its kernels, on the `[x, y, z, w]` copy when
    /// `on_copy`.
    fn in_frame(&mut self, on_copy: bool) -> Box<dyn FrameSet>;
    /// Itself as the plan sees it.
    fn as_planned(&mut self) -> &mut dyn PlannedSet;
    /// A copy (the store is cloned with its cloth).
    fn clone_box(&self) -> Box<dyn RegisteredSet>;
}

impl<B: SolvedBatch> RegisteredSet for ConstraintSet<B> {
    fn len(&self) -> usize {
        ConstraintSet::len(self)
    }
    fn resize_particles(&mut self, particle_count: usize) {
        ConstraintSet::resize_particles(self, particle_count);
    }
    fn set_parts(&mut self, parts: usize) {
        ConstraintSet::set_parts(self, parts);
    }
    fn waits_stale(&self) -> bool {
        ConstraintSet::waits_stale(self)
    }
    fn tail_is_empty(&self) -> bool {
        ConstraintSet::tail_is_empty(self)
    }
    fn phase_count(&self) -> usize {
        ConstraintSet::phase_count(self)
    }
    fn in_frame(&mut self, on_copy: bool) -> Box<dyn FrameSet> {
        let (phases, parts) = (self.phase_count(), self.parts());
        Box::new(SetInFrame::new(self.groups_mut(), phases, parts, on_copy, B::KERNELS))
    }
    fn as_planned(&mut self) -> &mut dyn PlannedSet {
        self
    }
    fn clone_box(&self) -> Box<dyn RegisteredSet> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn RegisteredSet> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

pub(crate) fn distance_item(c: &DistanceConstraint, m: &Material) -> DistanceItem {
    DistanceItem {
        ends: [c.a, c.b],
        rest: c.rest,
        compliance: m.distance_compliance(c),
        kind: c.kind,
    }
}

pub(crate) fn hinge_item(h: &Hinge, m: &Material) -> HingeItem {
    HingeItem {
        particles: [h.wings[0], h.wings[1], h.edge[0], h.edge[1]],
        rest_angle: h.rest_angle,
        compliance: m.hinge_compliance(h),
    }
}

impl ConstraintStore {
    /// Every constraint of `model`, with the compliances of its material slot in `materials`,
    /// in sweep order.
    pub fn new(model: &Model, materials: &[Material]) -> Self {
        let n = model.particle_count();
        let distance = |c: &DistanceConstraint| distance_item(c, &materials[model.distance_material(c)]);
        let hinge = |h: &Hinge| hinge_item(h, &materials[model.hinge_material(h)]);
        Self {
            distances: ConstraintSet::new(n, model.distances.iter().map(distance)),
            hinges: ConstraintSet::new(n, model.hinges.iter().map(hinge)),
            custom: Vec::new(),
            plan: SweepPlan::default(),
        }
    }

    /// The distance constraints in sweep order.
    pub fn distances(&self) -> &ConstraintSet<DistanceBatch> {
        &self.distances
    }

    /// The hinges in sweep order.
    pub fn hinges(&self) -> &ConstraintSet<HingeBatch> {
        &self.hinges
    }

    /// The registry: every set with where its phases run, in registration order — the
    /// model's distances (on the `[x, y, z, w]` copy when `distances_on_copy`) and hinges
    /// (always on the copy), then the custom sets (on the particle arrays). The cut into
    /// parts, the plan of waits and the frame follow this list; a constraint type the model
    /// carries is one field and one entry here.
    fn registry(&mut self, distances_on_copy: bool) -> (Vec<(&mut dyn RegisteredSet, Placement)>, &mut SweepPlan) {
        let Self {
            distances,
            hinges,
            custom,
            plan,
        } = self;
        let distance_placement = if distances_on_copy { Placement::Copy } else { Placement::Arrays };
        let model: [(&mut dyn RegisteredSet, Placement); 2] = [(distances, distance_placement), (hinges, Placement::Copy)];
        let custom = custom
            .iter_mut()
            .map(|set| (&mut **set as &mut dyn RegisteredSet, Placement::Arrays));
        (model.into_iter().chain(custom).collect(), plan)
    }

    /// Number of live constraints in every set.
    pub fn len(&self) -> usize {
        self.distances.len() + self.hinges.len() + self.custom.iter().map(|set| set.len()).sum::<usize>()
    }

    /// Registers a set of custom constraints (indices checked by the caller) over
    /// `particle_count` particles.
    pub fn add_custom<C: CustomConstraint>(&mut self, constraints: Vec<C>, particle_count: usize) {
        let split = self.distances.split_particles();
        self.custom.push(Box::new(ConstraintSet::<CustomBatch<C>>::new_beside(
            split,
            particle_count,
            constraints,
        )));
        self.plan = SweepPlan::default();
    }

    /// Adds `c` to the model and the sweep; returns its id.
    pub fn add_distance(&mut self, model: &mut Model, c: DistanceConstraint, materials: &[Material]) -> u32 {
        let id = self.distances.insert(distance_item(&c, &materials[model.distance_material(&c)]));
        assert_eq!(id as usize, model.distances.len(), "model and solver ids stay in step");
        model.distances.push(c);
        id
    }

    /// Replaces distance constraint `id` by `c` (an endpoint moved to a particle copy).
    pub fn replace_distance(&mut self, model: &mut Model, id: u32, c: DistanceConstraint, materials: &[Material]) {
        model.distances[id as usize] = c;
        self.distances
            .replace(id, distance_item(&c, &materials[model.distance_material(&c)]));
    }

    /// Sets distance constraint `id`'s rest length (m) in its record and, while it is live, in
    /// the sweep (a seam's pull-in, [`crate::sim::sewing`]).
    pub fn set_distance_rest(&mut self, model: &mut Model, id: u32, rest: f32) {
        model.distances[id as usize].rest = rest;
        if let Some(slot) = self.distances.slot(id) {
            self.distances.batch_mut(slot).rest[slot.index as usize] = rest;
        }
    }

    /// Distance constraint `id`'s multiplier λ from the last substep (N·s²), or `None` once
    /// it was removed.
    pub fn distance_lambda(&self, id: u32) -> Option<f32> {
        let slot = self.distances.slot(id)?;
        Some(self.distances.batch(slot).lambda[slot.index as usize])
    }

    /// Takes distance constraint `id` out of the sweep (its record stays, as a torn edge).
    pub fn remove_distance(&mut self, id: u32) {
        self.distances.remove(id);
    }

    /// Replaces hinge `id` by `h` (a particle moved to a copy).
    pub fn replace_hinge(&mut self, model: &mut Model, id: u32, h: Hinge, materials: &[Material]) {
        model.hinges[id as usize] = h;
        self.hinges.replace(id, hinge_item(&h, &materials[model.hinge_material(&h)]));
    }

    /// Takes hinge `id` out of the sweep (its record stays).
    pub fn remove_hinge(&mut self, id: u32) {
        self.hinges.remove(id);
    }

    /// Makes room for particles added by a split (`particle_count` in all).
    pub fn resize_particles(&mut self, particle_count: usize) {
        for (set, _) in self.registry(false).0 {
            set.resize_particles(particle_count);
        }
    }

    /// Rewrites every live constraint's compliance from its record under its slot's material
    /// in `materials`, passed through `distance_blend(id, α)` or `hinge_blend(id, α)` (a
    /// stiffness ramp's blend; the identity otherwise).
    pub fn refresh_compliances(
        &mut self,
        model: &Model,
        materials: &[Material],
        distance_blend: impl Fn(u32, f32) -> f32,
        hinge_blend: impl Fn(u32, f32) -> f32,
    ) {
        for batch in self.distances.iter_batches_mut() {
            for (compliance, &id) in batch.compliance.iter_mut().zip(&batch.id) {
                let c = &model.distances[id as usize];
                *compliance = distance_blend(id, materials[model.distance_material(c)].distance_compliance(c));
            }
        }
        for batch in self.hinges.iter_batches_mut() {
            for (compliance, &id) in batch.compliance.iter_mut().zip(&batch.id) {
                let h = &model.hinges[id as usize];
                *compliance = hinge_blend(id, materials[model.hinge_material(h)].hinge_compliance(h));
            }
        }
    }

    /// The compliance in use for every distance and hinge, by id (NaN for removed ones).
    pub fn compliances_by_id(&self, model: &Model) -> [Vec<f32>; 2] {
        let mut distances = vec![f32::NAN; model.distances.len()];
        for batch in self.distances.iter_batches() {
            for (&compliance, &id) in batch.compliance.iter().zip(&batch.id) {
                distances[id as usize] = compliance;
            }
        }
        let mut hinges = vec![f32::NAN; model.hinges.len()];
        for batch in self.hinges.iter_batches() {
            for (&compliance, &id) in batch.compliance.iter().zip(&batch.id) {
                hinges[id as usize] = compliance;
            }
        }
        [distances, hinges]
    }

    /// Most parts the sweep can be cut into (1 for a small cloth).
    pub fn max_parts(&self) -> usize {
        self.distances.max_parts()
    }

    /// Cuts the sweep into `parts` parts (if not already) and refreshes the plan of waits
    /// when the units or the placements changed, then lends the sets to one frame of the
    /// solver. `distances_on_copy`: whether the distances are solved on the `[x, y, z, w]`
    /// copy (the hinges always are).
    pub fn sweep(&mut self, parts: usize, distances_on_copy: bool) -> SweepSets<'_> {
        let bounds = {
            self.distances.set_parts(parts);
            self.distances.bounds().to_vec()
        };
        let (mut sets, plan) = self.registry(distances_on_copy);
        sets.iter_mut().for_each(|(set, _)| set.set_parts(parts));
        let placements: Vec<Placement> = sets.iter().map(|&(_, placement)| placement).collect();
        if sets.iter().any(|(set, _)| set.waits_stale()) || plan.placements != placements {
            let mut planned: Vec<&mut dyn PlannedSet> = sets.iter_mut().map(|(set, _)| set.as_planned()).collect();
            *plan = plan_sweep(&mut planned, &placements);
        }
        let copy_used = sets
            .iter()
            .any(|(set, placement)| *placement == Placement::Copy && set.phase_count() > 0);
        let tail_empty = sets.iter().all(|(set, _)| set.tail_is_empty());
        let frame_sets = sets
            .into_iter()
            .map(|(set, placement)| set.in_frame(placement == Placement::Copy))
            .collect();
        SweepSets {
            parts: bounds.len() - 1,
            bounds,
            sets: frame_sets,
            plan,
            copy_used,
            tail_empty,
        }
    }
}
