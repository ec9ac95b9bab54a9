//! [`Cloth`]: the simulation state and the XPBD frame loop (docs/physics.md §1).

use std::time::Instant;

mod colliders;
mod grip;
mod hold;
mod sewing;

use colliders::Colliders;
use grip::Grip;
use hold::Hold;

use glam::Vec3;

use super::collision::{Collider, ContactSettings};
use super::constraint_store::ConstraintStore;
use super::constraints::custom::{self, CustomConstraint};
use super::constraints::distance::{self, Kernel};
use super::constraints::hinge;
use super::error::SimError;
use super::error::WORLD_EXTENT;
use super::guard::{self, Checkpoint};
use super::interaction::{Grab, Pick, Ray, TriangleHit};
use super::model::{DistanceConstraint, EdgeKind, Model};
use super::parallel::{self, Progress, SpinBarrier};
use super::params::{Material, SolverParams};
use super::particles::COMPENSATED_BELOW_SUBSTEP;
use super::particles::{AosPtr, Particles, PosW};
use super::pressure::{check_pressure_factor, PressureState, PressureVolume};
use super::ramp::{self, ComplianceRamp};
use super::self_contact::{SelfContactPass, SelfContacts};
use super::solver::{Frame, FrameSettings};
use super::stats::{PhaseTimes, StepStats};
use super::tearing::{self, TearEditor, TearState};
use super::tethers::Tethers;
use super::viscosity::StretchViscosity;

/// Fastest throw [`Cloth::release`] gives a particle, in m/s.
pub const MAX_THROW_SPEED: f32 = 1000.0;

/// A simulated cloth (or rope, or any particle model) with its colliders.
#[derive(Debug, Clone)]
pub struct Cloth {
    particles: Particles,
    /// Current topology and rest data; tearing edits it.
    model: Model,
    /// The solver's constraints, kept in step with the model's records.
    constraints: ConstraintStore,
    /// The colliders, their paths and drags.
    colliders: Colliders,
    /// What the mouse holds.
    hold: Hold,
    /// The material of each slot ([`Model::material`]) the compliances were last computed
    /// from (ramps toward the requested ones).
    applied: Vec<Material>,
    /// Each slot's own material, or `None` to follow the material passed to [`Self::step`].
    own: Vec<Option<Material>>,
    stats: StepStats,
    topology_version: u64,
    /// The stretch viscosity's edges ([`super::viscosity`]).
    viscosity: StretchViscosity,
    tearing: TearState,
    /// Simulated time in s (drives wind gusts).
    time: f64,
    /// A stiffness change being blended in (see [`super::ramp`]).
    ramp: Option<ComplianceRamp>,
    /// Scratch for the hinge phases and a coloured distance sweep: the positions as one
    /// `[x, y, z, w]` per particle (see [`Frame::aos_copy`]).
    aos_positions: Vec<PosW>,
    /// The projection loops the solver runs (the fastest this CPU has unless chosen).
    kernel: Kernel,
    /// Long-range attachments to the pins (empty when the material turns them off).
    tethers: Tethers,
    /// The tether settings of each slot `tethers` was built for; `None` when pins or topology
    /// changed since.
    tethers_built_for: Option<Vec<(bool, f32)>>,
    /// The particle state at the start of the step (see [`super::guard`]).
    checkpoint: Checkpoint,
    /// Self-contacts: the spatial hash and the frame's candidate pairs.
    self_contacts: SelfContacts,
    /// The pressure bodies' surfaces, rest volumes and multipliers.
    pressure: PressureState,
}

impl Cloth {
    /// Builds the runtime state from a model, the material (masses and compliances) and
    /// colliders. Everything is validated first. Every material slot of the model starts with
    /// `material` and follows the one passed to [`Self::step`] until
    /// [`Self::set_material`] gives it its own.
    pub fn new(model: Model, material: &Material, colliders: Vec<Collider>) -> Result<Self, SimError> {
        model.validate()?;
        material.validate()?;
        let colliders = Colliders::new(colliders, 0.0)?;
        let n = model.particle_count();
        let mut particles = Particles::default();
        for i in 0..n {
            particles.push(
                model.positions[i],
                0.0,
                Vec3::ZERO,
                model.lumped_area[i],
                model.point_mass[i],
                model.pinned[i],
            );
        }
        let slots = model.material_slots();
        let applied = vec![material.clone(); slots];
        let constraints = ConstraintStore::new(&model, &applied);
        let pressure = PressureState::new(&model.pressure_bodies, &model.triangles, &model.positions);
        let mut cloth = Self {
            particles,
            model,
            constraints,
            colliders,
            hold: Hold::default(),
            applied,
            own: vec![None; slots],
            stats: StepStats::default(),
            topology_version: 0,
            viscosity: StretchViscosity::default(),
            tearing: TearState::default(),
            time: 0.0,
            ramp: None,
            aos_positions: Vec::new(),
            kernel: Kernel::detect(),
            tethers: Tethers::default(),
            tethers_built_for: None,
            checkpoint: Checkpoint::default(),
            self_contacts: SelfContacts::default(),
            pressure,
        };
        cloth.update_inverse_masses();
        Ok(cloth)
    }

    /// The particles (positions, velocities, masses).
    pub fn particles(&self) -> &Particles {
        &self.particles
    }

    /// Current topology: triangles, constraints and rest data.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Render triangles (indices into the particles).
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.model.triangles
    }

    /// Increases whenever particles, triangles or constraints are added or removed.
    pub fn topology_version(&self) -> u64 {
        self.topology_version
    }

    /// The colliders where they are now.
    pub fn colliders(&self) -> &[Collider] {
        self.colliders.now()
    }

    /// Replaces the colliders after validating them. Their scripted paths start now: each is
    /// placed at its path's offset at the current simulated time.
    pub fn set_colliders(&mut self, colliders: Vec<Collider>) -> Result<(), SimError> {
        self.colliders = Colliders::new(colliders, self.time)?;
        Ok(())
    }

    /// Moves collider `index` so that its [`Collider::position`] (its centre; the ground's
    /// height) reaches `to` (m) at the end of the next step, sweeping through the substeps so
    /// the cloth is pushed and carried rather than jumped over. A collider on a scripted path
    /// has the whole path moved along; the rotation stays. The last call before a step counts.
    /// Fails, changing nothing, when the index is out of range or the moved collider would
    /// leave the world.
    pub fn move_collider(&mut self, index: usize, to: Vec3) -> Result<(), SimError> {
        self.colliders.move_to(index, to)
    }

    /// The collider `ray` enters first and the ray parameter there (the distance in m for a
    /// unit direction), the ground left out (it is not moved by picking). See
    /// [`Collider::ray_distance`].
    pub fn pick_collider(&self, ray: &Ray) -> Option<(usize, f32)> {
        self.colliders.pick(ray)
    }

    /// Statistics of the last step.
    pub fn stats(&self) -> &StepStats {
        &self.stats
    }

    /// The material last requested for slot 0 (the whole cloth when it has one material);
    /// stiffness changes blend in over [`super::ramp::RAMP_SECONDS`].
    pub fn applied_material(&self) -> &Material {
        &self.applied[0]
    }

    /// The material last requested for each material slot ([`Model::material`]: a scene's
    /// objects in order), as [`Self::applied_material`].
    pub fn materials(&self) -> &[Material] {
        &self.applied
    }

    /// Whether the cloth can tear (a material of it has a `tear_strain`). Such a cloth is
    /// grabbed by the point, not a patch, its grip never slips and its held particles leave
    /// their tethers (docs/physics.md §1, "The grab").
    pub fn tears(&self) -> bool {
        self.applied.iter().any(|m| m.tear_strain.is_some())
    }

    /// Gives material slot `slot` its own material (`Some`), or makes it follow the material
    /// passed to [`Self::step`] again (`None`). Takes effect at the next step, stiffness
    /// blended in as any live change, or at once with [`Self::set_material_now`].
    pub fn set_material(&mut self, slot: usize, material: Option<Material>) -> Result<(), SimError> {
        if slot >= self.own.len() {
            return Err(SimError::IndexOutOfRange {
                what: "material slot",
                index: slot,
                count: self.own.len(),
            });
        }
        material.as_ref().map_or(Ok(()), Material::validate)?;
        self.own[slot] = material;
        Ok(())
    }

    /// The material each slot is to have when `scene` is the material passed to the step.
    fn wanted_materials(&self, scene: &Material) -> Vec<Material> {
        self.own.iter().map(|own| own.as_ref().unwrap_or(scene).clone()).collect()
    }

    /// The projection loops the solver runs.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Chooses the projection loops (benches and tests compare them; results agree bit for
    /// bit between the vector kernels). Panics if this CPU does not support `kernel`.
    pub fn set_kernel(&mut self, kernel: Kernel) {
        assert!(kernel.is_supported(), "{kernel:?} is not supported here");
        self.kernel = kernel;
    }

    /// Registers a set of constraints of a caller-defined type ([`CustomConstraint`]): from
    /// the next step on they are solved in every sweep after the model's distances, scheduled
    /// like the engine's own constraints (any thread count gives the same result). Fails,
    /// changing nothing, when a constraint names a particle the cloth does not have, repeats a
    /// particle, has more than four, or has a negative or non-finite compliance.
    pub fn add_constraints<C: CustomConstraint>(&mut self, constraints: impl IntoIterator<Item = C>) -> Result<(), SimError> {
        let constraints: Vec<C> = constraints.into_iter().collect();
        let n = self.particles.len();
        for (k, constraint) in constraints.iter().enumerate() {
            custom::check(constraint, n).map_err(|expected| SimError::InvalidParameter {
                name: "custom constraint",
                value: k as f64,
                expected: expected.into(),
            })?;
        }
        self.constraints.add_custom(constraints, n);
        Ok(())
    }

    /// Number of live constraints (distances, hinges and custom ones).
    pub fn constraint_count(&self) -> usize {
        self.constraints.len()
    }

    /// Number of distance-constraint colours (batches).
    pub fn colour_count(&self) -> usize {
        self.constraints.distances().colour_count()
    }

    /// Whether the distance constraints are solved in greedy colours (a mesh not numbered
    /// like a grid, row by row) rather than in the straightforward loop's order (a grid); see
    /// [`super::constraints`]' sweep order.
    pub fn coloured_sweep(&self) -> bool {
        !self.constraints.distances().is_keyed()
    }

    /// Applies `material` at once, without ramping (after a preset load or a reset), to every
    /// slot without its own material, and the slots' own materials at once too.
    pub fn set_material_now(&mut self, material: &Material) -> Result<(), SimError> {
        material.validate()?;
        self.applied = self.wanted_materials(material);
        self.ramp = None;
        self.refresh_compliances();
        self.update_inverse_masses();
        Ok(())
    }

    /// Advances one frame of `params.dt` seconds. Parameters are validated before anything
    /// changes; the material is ramped toward `material` if it changed. A frame that would
    /// leave a non-finite value or a particle outside the world is undone and refused with
    /// [`SimError::Diverged`] (see [`super::guard`]).
    pub fn step(&mut self, params: &SolverParams, material: &Material) -> Result<&StepStats, SimError> {
        params.validate()?;
        material.validate()?;
        let wanted = self.wanted_materials(material);
        wanted.iter().try_for_each(|m| params.validate_with(m))?;
        let started = Instant::now();
        self.ramp_material(wanted, params.dt);
        self.pull_seams(params.dt);
        let h = params.substep_dt();
        let held = self.hold.kinematic(&self.particles);
        let mut settings = FrameSettings::derive(params, &self.applied[0], held);
        let wind = super::aero::wind_at(params, self.time);
        self.checkpoint.save(&self.particles);
        super::aero::apply_drag(&mut self.particles, &self.model.triangles, params.dt, wind, params.aerodynamic_drag);
        let aero_ms = started.elapsed().as_secs_f64() * 1e3;
        self.refresh_tethers();
        self.guard("aerodynamics", None)?;
        let self_started = Instant::now();
        self.self_contacts.active = 0;
        if let Some(contact) = settings.self_contact.as_mut() {
            contact.travel = self.prepare_self_contacts(params);
        }
        let self_ms = self_started.elapsed().as_secs_f64() * 1e3;
        let end_time = self.time + params.dt as f64;
        self.colliders.plan_track(settings.substeps, self.time, end_time);
        let grip_force = self.grip_force_range(params);
        let grip = Grip {
            radius: params.grab_radius,
            alpha_tilde: params.grab_compliance / (h * h),
            max_lambda: self.hold.pull(grip_force) * h * h,
        };
        let (threads, mut phases) = self.run_substeps(settings, grip, self.threads_used(params) as usize);
        phases.self_contacts_ms += self_ms;
        self.guard("substeps", Some((settings, grip)))?;
        self.hold.finish_step();
        let live = self.constraints.distances().live_ids();
        let (topology, dt) = (self.topology_version, params.dt);
        self.viscosity
            .damp(&mut self.particles, &self.model, live, &self.applied, topology, dt);
        self.colliders.finish_moves(end_time);
        phases.predict_ms += aero_ms;
        self.time = end_time;
        self.stats = self.measure(h);
        self.hold.slip(self.stats.max_strain, self.grip_slip_strain(params), grip_force);
        let tear_started = Instant::now();
        if self.edit_topology(|editor| editor.tear_overstrained(params) + editor.break_seams(h)) > 0 {
            self.stats = self.measure(h);
        }
        phases.tearing_ms = tear_started.elapsed().as_secs_f64() * 1e3;
        self.stats.step_ms = started.elapsed().as_secs_f64() * 1e3;
        self.stats.threads = threads;
        self.stats.phases = phases;
        self.stats.self_contacts = self.self_contacts.active as usize;
        Ok(&self.stats)
    }

    /// The substep loop ([`super::solver`]) on `threads` threads (at most
    /// [`Self::max_threads`]); returns the number it ran on (1 when the OS refused threads) and
    /// thread 0's time per phase. The phases are cut into one part per thread first (again
    /// whenever the thread count changes).
    fn run_substeps(&mut self, settings: FrameSettings, grip: Grip, threads: usize) -> (u32, PhaseTimes) {
        // Anchors are pinned, so they stay where they are for the whole frame.
        let held = settings.held.map(|(i, ..)| i);
        // A cloth that tears is held by a patch too (issue 32): held by one triangle, the pull
        // concentrated on that triangle, so the crack started nearer the hand on a finer mesh
        // (a corner piece 0.13 of the sheet deep at 80², 0.15 at 40²); by the patch, the load
        // leaves the hand over a fixed size and the crack starts in the same place on any mesh.
        // (Read by single edges, cracks once followed the patch's rim and cut it out; read from
        // the strain field, they run round it at the tear length.)
        self.take_patch(grip.radius);
        // A cloth that tears can be pulled beyond its reach, or a pull could never tear it:
        // the tethers let go of the hand's particles (the grab then aims where it likes).
        let mut exempt = if self.tears() {
            self.hold.held_particles(&self.model)
        } else {
            Vec::new()
        };
        exempt.extend(self.breakable_sewn_particles());
        exempt.sort_unstable();
        exempt.dedup();
        let particles = &self.particles;
        self.tethers.prepare_frame(&|i| particles.position(i), held, &exempt, settings.h);
        self.hold.prepare_grip(&self.particles, settings.h);
        let grip_tethers = self.hold.grip();
        let grab = self.hold.soft(&self.model, grip.alpha_tilde, grip.max_lambda);
        let p = &mut self.particles;
        // The solver reads particles by the constraints' indices without bounds checks.
        let (distances, hinges) = (self.constraints.distances(), self.constraints.hinges());
        assert!(distances.particle_count() <= p.len() && hinges.particle_count() <= p.len());
        assert!(grab.is_none_or(|g| g.shape.particles().all(|i| i < p.len())));
        assert!(p.prev.len() == p.len() && p.vel.len() == p.len());
        assert!(p.comp.len() == p.len() && p.comp_prev.len() == p.len());
        let kernel = self.kernel;
        let vector = hinge::vector_kernel_applies(kernel);
        let compensated = settings.h < COMPENSATED_BELOW_SUBSTEP;
        // A coloured distance sweep runs on the hinges' [x, y, z, w] copy too, except while
        // corrections are summed compensated (the copy holds plain positions).
        let distances_on_copy = vector && !distances.is_keyed() && !compensated;
        let sets = self.constraints.sweep(threads, distances_on_copy);
        let copy_pays = vector && sets.copy_used;
        let aos_copy = copy_pays.then(|| {
            self.aos_positions.resize(p.len(), [0.0; 4]);
            AosPtr(self.aos_positions.as_mut_ptr())
        });
        let self_pass = settings.self_contact.map(|contact| {
            SelfContactPass::new(
                &mut self.self_contacts,
                threads,
                &self.model.positions,
                &self.model.triangles,
                contact,
            )
        });
        let pressure_pass = self
            .pressure
            .any_closed()
            .then(|| self.pressure.pass(&self.model.pressure_bodies, settings.constants.inv_h2));
        let pos = p.pos.raw();
        let contacts: Vec<ContactSettings> = self.applied.iter().map(|m| ContactSettings::of(settings.thickness, m)).collect();
        let near_lists = self.colliders.near_lists(p.len());
        let frame = Frame {
            pos: if compensated { pos.compensated(p.comp.raw()) } else { pos },
            prev: p.prev.raw(),
            vel: p.vel.raw(),
            comp: p.comp.raw(),
            comp_prev: p.comp_prev.raw(),
            particles: p.len(),
            parts: sets.parts,
            sets: &sets.sets,
            aos_copy,
            bounds: &sets.bounds,
            plan: sets.plan,
            tail_empty: sets.tail_empty,
            near_lists,
            colliders: self.colliders.track(),
            collider_count: self.colliders.now().len(),
            tethers: (self.tethers.count() > 0).then_some(&self.tethers),
            grip_tethers,
            self_contacts: self_pass.as_ref(),
            pressure: pressure_pass.as_ref(),
            grab,
            contacts: &contacts,
            material: &self.model.material,
            settings,
            kernel,
        };
        let (barrier, progress) = (SpinBarrier::default(), Progress::default());
        let first_thread = std::sync::Mutex::new(PhaseTimes::default());
        // SAFETY: `frame` borrows the state exclusively until every thread has returned, and
        // `threads` is at most the number of parts (see `threads_used`).
        let job = |t| {
            // SAFETY: as above; this is thread `t` of `threads`, all on the same frame, barrier
            // and fresh progress counters (see `Frame::run`'s # Safety).
            let phases = unsafe { frame.run(t, threads, &barrier, &progress) };
            if t == 0 {
                *first_thread.lock().unwrap_or_else(|e| e.into_inner()) = phases;
            }
        };
        if threads > 1 && parallel::run(&job, threads) {
            return (threads as u32, first_thread.into_inner().unwrap_or_else(|e| e.into_inner()));
        }
        // SAFETY: one thread, on a frame that borrows the state exclusively (see `Frame::run`).
        (1, unsafe { frame.run(0, 1, &barrier, &progress) })
    }

    /// Before a frame with self-collision on: the constraint adjacency the self-contacts
    /// leave out (rebuilt when the topology changed), and how far a particle can move from a
    /// substep's check of the candidate list to the substep's last projection of the
    /// contacts, h · min(v_clamp, max_i |v_i| + |g| Δt): the check comes after the substep's
    /// prediction, so only the corrections that follow it in the substep move a particle,
    /// bounded by as much as a prediction (see [`super::self_contact`]).
    fn prepare_self_contacts(&mut self, params: &SolverParams) -> f32 {
        let key = (self.topology_version, self.particles.len(), self.model.distances.len());
        let across_seams = if self.self_contacts.adjacency_is(key) {
            Vec::new() // the adjacency is kept: nothing to list
        } else {
            self.joined_across_seams()
        };
        let (distances, model) = (self.constraints.distances(), &self.model);
        let edges = || {
            let live = distances.live_ids().map(|id| {
                let c = &model.distances[id as usize];
                (c.a, c.b)
            });
            live.chain(across_seams.iter().copied())
        };
        self.self_contacts.refresh_adjacency(key, edges);
        let p = &self.particles;
        let fastest = (0..p.len()).map(|i| p.velocity(i).length()).fold(0.0, f32::max);
        let clamp = params.speed_clamp();
        let speed = fastest + params.gravity.length() * params.dt;
        params.substep_dt() * if clamp > 0.0 { speed.min(clamp) } else { speed }
    }

    /// After `phase`: restores the checkpoint and reports if anything escaped (see
    /// [`super::guard`]). With the frame's `settings` (the substep loop), the frame is replayed
    /// without colliders to name the phase that produced the value.
    fn guard(&mut self, phase: &'static str, settings: Option<(FrameSettings, Grip)>) -> Result<(), SimError> {
        let Some(mut error) = guard::divergence(&self.particles, phase) else {
            return Ok(());
        };
        self.checkpoint.restore(&mut self.particles);
        if let (Some(settings), SimError::Diverged { phase, .. }) = (settings, &mut error) {
            *phase = self.diverging_part(settings);
        }
        Err(error)
    }

    /// Which part of the substep loop `settings` diverges in: a replay without colliders tells
    /// the contacts from the constraint solve.
    fn diverging_part(&self, (settings, grip): (FrameSettings, Grip)) -> &'static str {
        if self.colliders.now().is_empty() {
            return "constraint solve";
        }
        let mut without = self.clone();
        without.colliders.clear();
        without.run_substeps(settings, grip, 1);
        if guard::escaped(&without.particles) {
            "constraint solve"
        } else {
            "contacts"
        }
    }

    /// Projections one step with `params` performs: (constraints + particles × colliders +
    /// triangles of closed pressure bodies) × substeps × iterations. Compared with [`guard::FRAME_WORK_BUDGET`] before a step that would
    /// freeze an interactive caller.
    pub fn work_per_step(&self, params: &SolverParams) -> u64 {
        let contacts = self.particles.len() * self.colliders.now().len();
        let per_sweep = (self.constraint_count() + contacts + self.pressure.work_per_sweep()) as u64;
        per_sweep * params.substeps as u64 * params.iterations as u64
    }

    /// The solver's constraints (tests of their schedule).
    #[cfg(test)]
    pub(crate) fn constraint_store(&self) -> &ConstraintStore {
        &self.constraints
    }

    /// Each pressure body's volume now, the volume it is held at (k V0, m³), whether it is
    /// still closed (a torn or cut body has no pressure) and the gauge pressure inside during
    /// the last substep (Pa), in the model's order.
    pub fn pressure_volumes(&self) -> Vec<PressureVolume> {
        self.pressure.volumes(&self.model.pressure_bodies, |i| self.particles.position(i))
    }

    /// Sets pressure body `body`'s pressure factor k (finite, in [0, 10]): it is held at k times
    /// its rest volume from the next step on. Refused, with nothing changed, for a factor out
    /// of range or a body that does not exist.
    pub fn set_pressure(&mut self, body: usize, pressure: f32) -> Result<(), SimError> {
        check_pressure_factor(pressure)?;
        let count = self.model.pressure_bodies.len();
        let target = self
            .model
            .pressure_bodies
            .get_mut(body)
            .ok_or_else(|| SimError::InvalidGeometry(format!("there is no pressure body {body}: the model has {count}")))?;
        target.pressure = pressure;
        Ok(())
    }

    /// Edges torn by strain or cut so far.
    pub fn torn_edges(&self) -> usize {
        self.tearing.torn_edges
    }

    /// Number of connected pieces (particles joined by triangles or live distance constraints).
    pub fn piece_count(&self) -> usize {
        let labels = self.piece_labels();
        labels.iter().enumerate().filter(|&(i, &l)| i == l as usize).count()
    }

    /// For every particle, the smallest particle index of its connected piece.
    pub fn piece_labels(&self) -> Vec<u32> {
        tearing::piece_labels(self.particles.len(), &self.model, &self.constraints)
    }

    /// Cuts the cloth along the surface swept between two world-space rays (a mouse stroke
    /// from the camera): every stretch edge crossing it is cut (see [`super::tearing`]).
    /// Returns the number of edges cut.
    pub fn cut(&mut self, from: &Ray, to: &Ray) -> usize {
        self.edit_topology(|editor| editor.cut(from, to))
    }

    /// Runs a tearing edit, then brings what depends on the topology up to date if it changed:
    /// inverse masses (masses were re-lumped), the tethers (a tear can free a piece from its
    /// pins or force a detour around the crack), the pressure bodies (an opened one loses its
    /// pressure) and the topology version.
    pub(crate) fn edit_topology<R>(&mut self, edit: impl FnOnce(&mut TearEditor) -> R) -> R {
        let mut editor = TearEditor {
            particles: &mut self.particles,
            model: &mut self.model,
            constraints: &mut self.constraints,
            materials: &self.applied,
            tearing: &mut self.tearing,
            grab: self.hold.grab(),
            changed: false,
        };
        let result = edit(&mut editor);
        if editor.changed {
            self.update_inverse_masses();
            self.invalidate_tethers();
            let m = &self.model;
            self.pressure.refresh(&m.pressure_bodies, &m.triangles, &m.positions);
            self.topology_version += 1;
        }
        result
    }

    /// The statistics of the state now, after a step of substep length `h` (s).
    fn measure(&self, h: f32) -> StepStats {
        let mass = |i: usize| self.particles.mass(i, self.density_of(i));
        StepStats {
            constraints: self.constraint_count(),
            torn_edges: self.torn_edges(),
            ..StepStats::measure(&self.particles, self.constraints.distances(), mass, h)
        }
    }

    /// Areal density in kg/m² of particle `i`'s material.
    fn density_of(&self, i: usize) -> f32 {
        self.applied[self.model.material[i] as usize].areal_density
    }

    /// Takes `target` as the slots' materials, blending stiffness changes over
    /// [`super::ramp::RAMP_SECONDS`] or more; `dt` is the frame step about to be taken.
    fn ramp_material(&mut self, target: Vec<Material>, dt: f32) {
        if self.applied != target {
            let stiffness_changed = self.applied.iter().zip(&target).any(|(a, b)| ramp::stiffness_differs(a, b));
            if stiffness_changed {
                let extent = ramp::extent(&self.particles);
                let now = (self.applied.as_slice(), self.ramp.as_ref());
                let started = ComplianceRamp::start(&self.constraints, &self.model, now, &target, extent, self.stats.mean_strain);
                self.ramp = Some(started);
            }
            let density_changed = self.applied.iter().zip(&target).any(|(a, b)| a.areal_density != b.areal_density);
            self.applied = target;
            if density_changed {
                self.update_inverse_masses();
            }
        }
        let Some(ramp) = self.ramp.as_mut() else { return };
        let done = ramp.advance(dt);
        self.refresh_compliances();
        if done {
            self.ramp = None;
        }
    }

    /// Rewrites every constraint's compliance from the applied material (blended while a
    /// stiffness ramp runs).
    fn refresh_compliances(&mut self) {
        ramp::refresh_compliances(&mut self.constraints, &self.model, &self.applied, self.ramp.as_ref());
    }

    /// Rebuilds the tethers if pins, topology or the materials' tether settings changed since
    /// they were built. Only the edges of materials with tethers on carry them (a scene's
    /// objects are not joined, so an object without tethers gets none), each particle's at its
    /// own material's slack.
    fn refresh_tethers(&mut self) {
        let wanted = self.tether_settings();
        if self.tethers_built_for.as_ref() == Some(&wanted) {
            return;
        }
        self.tethers = self.build_tethers(&wanted, &self.particles.pinned);
        self.tethers_built_for = Some(wanted);
        self.hold.forget_grip();
    }

    /// Each material slot's (tethers on, slack).
    fn tether_settings(&self) -> Vec<(bool, f32)> {
        self.applied.iter().map(|m| (m.tethers, m.tether_slack)).collect()
    }

    /// Tethers of every particle to its nearest `anchors` through the live distance
    /// constraints of the materials whose tethers are on (`wanted`, see
    /// [`Self::tether_settings`]), but the stitches of seams with a strength
    /// ([`Model::breakable_stitches`]); none when no material has them on.
    fn build_tethers(&self, wanted: &[(bool, f32)], anchors: &[bool]) -> Tethers {
        if !wanted.iter().any(|&(on, _)| on) {
            return Tethers::default();
        }
        let model = &self.model;
        let breakable = model.breakable_stitches();
        let edges = self.constraints.distances().live_ids().filter_map(|id| {
            let c = &model.distances[id as usize];
            (wanted[model.distance_material(c)].0 && !breakable[id as usize]).then_some((c.a, c.b, c.rest))
        });
        let slack = |i: usize| wanted[model.material[i] as usize].1;
        Tethers::build(&model.positions, anchors, edges, slack)
    }

    /// Marks the tethers for a rebuild before the next step (pins or topology changed).
    fn invalidate_tethers(&mut self) {
        self.tethers_built_for = None;
        self.hold.forget_grip();
    }

    /// Number of tethers the last step solved (0 when turned off or nothing is pinned).
    pub fn tether_count(&self) -> usize {
        self.tethers.count()
    }

    /// Inverse masses from lumped areas (times each particle's material's density), point
    /// masses and pins. A massless free particle (no area, no point mass) is treated as
    /// pinned rather than divided by.
    fn update_inverse_masses(&mut self) {
        let held = self.hold.held_particle();
        let (materials, slots) = (&self.applied, &self.model.material);
        let p = &mut self.particles;
        for i in 0..p.len() {
            let mass = p.mass(i, materials[slots[i] as usize].areal_density);
            let free = !p.pinned[i] && Some(i) != held && mass > 0.0;
            p.pos.column_mut(3)[i] = if free { 1.0 / mass } else { 0.0 };
        }
    }

    /// What is held, if anything (for a soft grab, `particle` is the held triangle's corner
    /// with the largest weight as the triangle is now, after any tear).
    pub fn grab_state(&self) -> Option<Grab> {
        self.hold.state(&self.model)
    }

    /// The particles the mouse holds: the hard grab's particle, or the soft grab's patch
    /// (taken at the grab's first step; the hit triangle's corners before it, and when the
    /// radius holds the hit point alone). Empty when nothing is held.
    pub fn held_particles(&self) -> Vec<u32> {
        self.hold.held_particles(&self.model)
    }

    /// Where the held point is now (m): the held particle, or the soft grab's point Σ b_k x_k.
    pub fn grabbed_point(&self) -> Option<Vec3> {
        self.hold.point_now(&self.model, &self.particles)
    }

    /// Where the point `hit` of a triangle (Σ b_k x_k over its corners) is now (m); it moves
    /// with the cloth, and a tear keeps it on the same triangle. Panics if the triangle is out
    /// of range.
    pub fn point_on(&self, hit: TriangleHit) -> Vec3 {
        hold::point_on(hit, &self.model, &self.particles)
    }

    /// The hard grab: starts holding particle `i` kinematically, exactly at the target
    /// (releasing any previous hold). Fails if `i` is out of range.
    pub fn grab(&mut self, i: u32) -> Result<(), SimError> {
        self.check_index("grab", i)?;
        self.release(None);
        self.hold = Hold::particle(i, self.particles.position(i as usize));
        self.update_inverse_masses();
        Ok(())
    }

    /// The soft grab: starts pulling the cloth around the point Σ b_k x_k of triangle
    /// `hit.triangle` toward the target (releasing any previous hold): the patch within
    /// [`SolverParams::grab_radius`] of it, taken at the next step, or the point alone,
    /// through attachments of total compliance [`SolverParams::grab_compliance`] pulling with
    /// at most [`SolverParams::grab_max_force`] (docs/physics.md §1, "The grab"). The held
    /// particles keep their mass. The weights must be
    /// finite and non-negative with a positive sum (they are scaled to sum to 1). Fails if
    /// the triangle is out of range or the weights are not.
    pub fn grab_point(&mut self, hit: TriangleHit) -> Result<(), SimError> {
        let count = self.model.triangles.len();
        if hit.triangle as usize >= count {
            return Err(SimError::IndexOutOfRange {
                what: "grab_point",
                index: hit.triangle as usize,
                count,
            });
        }
        for w in hit.barycentric {
            super::error::check_range("barycentric", w, 0.0, 1e6, "weights >= 0 with a positive sum")?;
        }
        let sum: f32 = hit.barycentric.iter().sum();
        super::error::check_range("barycentric", sum, 1e-6, 3e6, "weights >= 0 with a positive sum")?;
        let hit = TriangleHit {
            barycentric: hit.barycentric.map(|w| w / sum),
            ..hit
        };
        self.release(None);
        self.hold = Hold::point(hit, self.point_on(hit), &self.model);
        self.update_inverse_masses();
        Ok(())
    }

    /// Grabs what [`Self::pick`] found: softly at the hit point when it hit a triangle
    /// ([`Self::grab_point`]), else the particle found near the ray, hard ([`Self::grab`]).
    pub fn grab_pick(&mut self, pick: &Pick) -> Result<(), SimError> {
        match pick.hit {
            Some(hit) => self.grab_point(hit),
            None => self.grab(pick.particle),
        }
    }

    /// Moves the hold target (m). Non-finite targets are ignored; finite ones are clamped
    /// into the world cube ([`WORLD_EXTENT`]).
    pub fn drag_to(&mut self, target: Vec3) {
        if target.is_finite() {
            self.hold
                .set_target(target.clamp(Vec3::splat(-WORLD_EXTENT), Vec3::splat(WORLD_EXTENT)));
        }
    }

    /// Lets go of the held particle or patch. With `Some(v)` it is thrown with velocity v
    /// (m/s, at most [`MAX_THROW_SPEED`]; non-finite throws are ignored): the held particle
    /// takes v, or the soft grab's particles ([`Self::held_particles`]) all gain v − Σ b_k v_k,
    /// so the hit point moves at v and the patch keeps its relative motion. With `None` it
    /// keeps the velocity of its last drag motion.
    pub fn release(&mut self, throw: Option<Vec3>) {
        let Some(g) = self.grab_state() else { return };
        if let Some(v) = throw.filter(|v| v.is_finite()) {
            let v = v.clamp_length_max(MAX_THROW_SPEED);
            match g.point {
                Some(_) => {
                    let now = self.hold.velocity(&self.model, &self.particles).unwrap_or_default();
                    let change = v - now;
                    for i in self.hold.held_particles(&self.model) {
                        let vi = self.particles.velocity(i as usize) + change;
                        self.particles.vel.set(i as usize, vi.clamp_length_max(MAX_THROW_SPEED));
                    }
                }
                None => self.particles.vel.set(g.particle as usize, v),
            }
        }
        self.hold = Hold::default();
        self.update_inverse_masses();
    }

    /// Lets go of the held particle and pins it where it is; a soft grab pins the held
    /// triangle's corner with the largest weight.
    pub fn release_pinned(&mut self) {
        if let Some(g) = self.grab_state() {
            self.hold = Hold::default();
            self.set_pinned(g.particle, true);
        }
    }

    /// Pins or unpins particle `i` (ignored when out of range).
    pub fn set_pinned(&mut self, i: u32, pinned: bool) {
        let i = i as usize;
        if i < self.particles.len() {
            self.particles.pinned[i] = pinned;
            if pinned {
                self.particles.vel.set(i, Vec3::ZERO);
            }
            self.update_inverse_masses();
            self.invalidate_tethers();
        }
    }

    /// Flips the pin of particle `i`; returns the new state.
    pub fn toggle_pin(&mut self, i: u32) -> bool {
        let pinned = !self.particles.pinned.get(i as usize).copied().unwrap_or(true);
        self.set_pinned(i, pinned);
        pinned
    }

    /// Number of pinned particles.
    pub fn pinned_count(&self) -> usize {
        self.particles.pinned.iter().filter(|&&p| p).count()
    }

    /// Overwrites particle `i`'s position and velocity (tests, scripted scenes).
    pub fn set_state(&mut self, i: u32, position: Vec3, velocity: Vec3) -> Result<(), SimError> {
        self.check_index("set_state", i)?;
        let (w, speed) = (WORLD_EXTENT, MAX_THROW_SPEED);
        super::error::check_components("position", position, -w, w, "components in [-1e4, 1e4] m")?;
        super::error::check_components("velocity", velocity, -speed, speed, "components in [-1000, 1000] m/s")?;
        self.particles.set_position(i as usize, position);
        self.particles.vel.set(i as usize, velocity);
        Ok(())
    }

    fn check_index(&self, what: &'static str, i: u32) -> Result<(), SimError> {
        if (i as usize) < self.particles.len() {
            Ok(())
        } else {
            Err(SimError::IndexOutOfRange {
                what,
                index: i as usize,
                count: self.particles.len(),
            })
        }
    }

    /// Tension of distance constraint `id` in N during the last substep (−λ/h²), or `None`
    /// if it was removed. `h` is the substep length used.
    pub fn tension(&self, id: u32, h: f32) -> Option<f32> {
        let distances = self.constraints.distances();
        let slot = distances.slot(id)?;
        Some(-distances.batch(slot).lambda[slot.index as usize] / (h * h))
    }

    /// Per-vertex heat value for rendering: the largest |strain| (or |tension| in N with
    /// `force`) over the vertex's live stretch edges.
    pub fn vertex_heat(&self, force: bool, h: f32, out: &mut Vec<f32>) {
        out.clear();
        out.resize(self.particles.len(), 0.0);
        for batch in self.constraints.distances().iter_batches() {
            for slot in 0..batch.id.len() {
                let c = &self.model.distances[batch.id[slot] as usize];
                if c.kind != EdgeKind::Stretch {
                    continue;
                }
                let value = if force {
                    (batch.lambda[slot] / (h * h)).abs()
                } else {
                    self.strain_of(c).abs()
                };
                for end in [c.a, c.b] {
                    let v = &mut out[end as usize];
                    *v = v.max(value);
                }
            }
        }
    }

    /// Engineering strain (l − l0)/l0 of a distance constraint (0 for zero rest length).
    pub fn strain_of(&self, c: &DistanceConstraint) -> f32 {
        let length = self
            .particles
            .position(c.a as usize)
            .distance(self.particles.position(c.b as usize));
        distance::strain(length, c.rest)
    }

    /// Ids of the live distance constraints, ascending (an order that does not depend on how
    /// the sweep is cut into parts, so what is built from it — tethers, cuts — does not
    /// depend on the thread count).
    pub fn live_distance_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.constraints.distances().live_ids()
    }

    /// The particle the ray points at: the corner nearest the first triangle hit, or, when no
    /// triangle is hit (ropes, a ray grazing the edge), the particle within `radius` m of the
    /// ray that is nearest the ray's origin.
    pub fn pick(&self, ray: &Ray, radius: f32) -> Option<Pick> {
        super::interaction::pick(&self.particles, &self.model.triangles, ray, radius)
    }

    /// Area-weighted smooth vertex normals of the current triangles.
    pub fn vertex_normals(&self, out: &mut Vec<Vec3>) {
        out.clear();
        out.resize(self.particles.len(), Vec3::ZERO);
        for tri in &self.model.triangles {
            let [a, b, c] = tri.map(|i| self.particles.position(i as usize));
            let n = (b - a).cross(c - a); // length = 2 × area: area weighting for free
            for &i in tri {
                out[i as usize] += n;
            }
        }
        for n in out.iter_mut() {
            *n = n.normalize_or_zero();
        }
    }
}

impl Cloth {
    /// Threads a step with `params` uses: what `params.threads` asks, at most the machine's
    /// cores ([`crate::sim::available_cores`]: more threads than cores only wait for each
    /// other, and a step ran 10 times slower on 16 threads than on one on 2 cores) and at
    /// most [`Self::max_threads`]. `threads: 0` picks one thread per
    /// [`AUTO_CONSTRAINTS_PER_THREAD`] constraints begun. Results are bit-identical for every
    /// count, so the cap changes no result.
    pub fn threads_used(&self, params: &SolverParams) -> u32 {
        let wanted = match params.threads {
            0 => 1 + self.constraint_count() / AUTO_CONSTRAINTS_PER_THREAD,
            n => n as usize,
        };
        wanted.min(parallel::available_cores()).min(self.max_threads() as usize) as u32
    }

    /// Most threads this cloth's step can use: 1 below 4 096 particles (not worth the
    /// synchronisation), else [`crate::sim::MAX_THREADS`].
    pub fn max_threads(&self) -> u32 {
        self.constraints.max_parts() as u32
    }
}

/// Constraints per thread `threads: 0` aims for. From 20 000 constraints a second thread
/// pays off: a 64 × 64 sheet already gains (tmp15, 24 000 constraints: 1.13–1.23×; the default
/// curtain, 28 000: 1.7×, both on two cores). Beyond two threads the figure is not measured yet
/// (the development machines have two cores).
const AUTO_CONSTRAINTS_PER_THREAD: usize = 20_000;
