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

use super::constraints::distance::{DistanceBatch, DistanceItem};
use super::constraints::hinge::{HingeBatch, HingeItem};
use super::constraints::{plan_sweep, ConstraintSet, Placement, SweepPlan};
use super::model::{DistanceConstraint, Hinge, Model};
use super::params::Material;
use super::solver::{FrameSet, SetInFrame, DISTANCE_KERNELS, HINGE_KERNELS};

/// The solver's distance and hinge constraints, kept in step with the model's records.
#[derive(Debug, Clone)]
pub(crate) struct ConstraintStore {
    distances: ConstraintSet<DistanceBatch>,
    hinges: ConstraintSet<HingeBatch>,
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

    /// Number of live constraints (distances + hinges).
    pub fn len(&self) -> usize {
        self.distances.len() + self.hinges.len()
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
        self.distances.resize_particles(particle_count);
        self.hinges.resize_particles(particle_count);
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
    ///
    /// This is where the constraint sets are registered: each is listed once, with its
    /// placement and its kernels, and the plan and the frame iterate the list.
    pub fn sweep(&mut self, parts: usize, distances_on_copy: bool) -> SweepSets<'_> {
        let distance_placement = if distances_on_copy { Placement::Copy } else { Placement::Arrays };
        let placements = [distance_placement, Placement::Copy];
        self.distances.set_parts(parts);
        self.hinges.set_parts(parts);
        let stale = self.distances.waits_stale() || self.hinges.waits_stale();
        if stale || self.plan.placements != placements {
            self.plan = plan_sweep(&mut [&mut self.distances, &mut self.hinges], &placements);
        }
        let (distance_phases, hinge_phases) = (self.distances.phase_count(), self.hinges.phase_count());
        let parts = self.distances.parts();
        let bounds = self.distances.bounds().to_vec();
        let tail_empty = self.distances.tail_is_empty() && self.hinges.tail_is_empty();
        let copy_used = hinge_phases > 0 || distances_on_copy;
        let distances = SetInFrame::new(
            self.distances.groups_mut(),
            distance_phases,
            parts,
            distances_on_copy,
            DISTANCE_KERNELS,
        );
        let hinges = SetInFrame::new(self.hinges.groups_mut(), hinge_phases, parts, true, HINGE_KERNELS);
        SweepSets {
            parts,
            bounds,
            sets: vec![Box::new(distances), Box::new(hinges)],
            plan: &self.plan,
            copy_used,
            tail_empty,
        }
    }
}
