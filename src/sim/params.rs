//! Solver and material parameters: plain structs with public, documented fields (units and
//! defaults on every field), edited in place by the app and serialised verbatim into presets.
//! Each field's accepted range, slider, units as shown and help text are its row of
//! [`super::param_table`], which the validation here, the app's panels and docs/presets.md
//! are all made from.
//!
//! Every field may change between two steps; [`crate::sim::Cloth::step`] validates the whole
//! set first and derives everything it needs from them, so a live edit never needs a rebuild.
//!
//! # Why the ranges are what they are
//! Each range is wide enough for real cloth and scenes (foam-soft rubber at 1 kPa to steel at
//! 200 GPa, a 10 µm film to a 5 cm felt, a handkerchief to a sail in a gale) and narrow enough
//! that no combination inside them overflows f32 in a frame: the substep is at least
//! 1e-5 s / 1000 = 1e-8 s, so 1/h² ≤ 1e16; the softest compliance factor (bending of a 10 µm,
//! 1 kPa sheet scaled by 1e4 / 1e-3) is 1.2e20, so α̃ = α/h² stays below 1e37 — and
//! [`SolverParams::validate_with`] refuses the rare corner where it would not. Forces are
//! bounded (|g| ≤ 100 m/s², wind ≤ 100 m/s) and so are the scene's sizes
//! ([`super::error::WORLD_EXTENT`]), so squared lengths and energies stay far below f32's 3.4e38.

use glam::Vec3;
use serde::{Deserialize, Serialize};

use super::error::SimError;
use super::model::{Compliance, DistanceConstraint, EdgeKind, Hinge};
use super::param_table;
use super::self_contact::SelfContactSettings;

/// Largest α̃ = α/h² a step accepts (f32 overflows at 3.4e38; the headroom covers the
/// geometric factors of thin triangles).
const MAX_ALPHA_TILDE: f32 = 1.0e34;

/// Time stepping, damping and global forces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SolverParams {
    /// Frame step Δt in s. Default 1/60.
    pub dt: f32,
    /// Substeps S per frame (h = Δt / S). Default 15. More substeps =
    /// stiffer, more accurate.
    pub substeps: u32,
    /// Gauss–Seidel sweeps per substep. Default 1 ("small steps": substeps beat iterations).
    pub iterations: u32,
    /// Gravity in m/s². Default (0, −9.81, 0); each component in [−100, 100].
    pub gravity: Vec3,
    /// Constraint damping β of XPBD eq. 26 (N·s/m for distances). Damps motion along constraint
    /// gradients only, so it never slows free fall. Default 0.
    pub constraint_damping: f32,
    /// Air (velocity) damping k in 1/s: v ← v·exp(−k h) every substep. Slows everything,
    /// including free fall. Default 0.05.
    pub air_damping: f32,
    /// Wind velocity in m/s. Default (0, 0, 0); each component in [−100, 100].
    pub wind: Vec3,
    /// Gustiness of the wind: relative amplitude of its slow variation (0 = steady). Default 0.
    pub wind_gust: f32,
    /// Aerodynamic drag coefficient C_d of the cloth's triangles (0 = no air forces, 1 ≈ flat
    /// plate). Default 0.
    pub aerodynamic_drag: f32,
    /// Particle speed limit in m/s (0 = none); guards against explosions after huge drags.
    /// Default 50.
    pub max_speed: f32,
    /// Distance kept between cloth particles and collider surfaces, in m. Default 0.01; range
    /// [0, 0.5].
    pub collision_thickness: f32,
    /// Cap on tear splits per step (0 holds tearing). Default 1: a crack advances one vertex a
    /// frame, so it is seen to run and the load shifts onto its tip before the next split; a
    /// larger budget lets a strained cloth split in many places in one frame and shred. Range
    /// 0 to 1 000 000.
    pub max_splits_per_step: u32,
    /// Threads for the constraint solve (0 = pick by cloth size and the machine's cores),
    /// never more than the machine's cores ([`crate::sim::Cloth::threads_used`]). Results are
    /// bit-identical for every thread count. A cloth of fewer than 4 096 particles runs on
    /// one. Default 0.
    pub threads: u32,
    /// Compliance α of the soft grab ([`crate::sim::Cloth::grab_point`]) in m/N: how far the
    /// grabbed patch trails the cursor per newton of pull (the hard grab,
    /// [`crate::sim::Cloth::grab`], has none). Default 1e-4 m/N: a 10 N pull leaves the patch
    /// 1 mm behind, so the grab feels firm. 0 holds the patch as stiffly as the substeps allow.
    pub grab_compliance: f32,
    /// Radius R of the patch the soft grab holds, in m: the particles within R of the hit
    /// point (in the rest shape, connected to it through the cloth) follow the cursor like
    /// cloth between fingers, the nearer the centre the firmer (docs/physics.md §1, "The
    /// grab"). 0 holds the hit point alone. Default 0.05 m (two fingertips).
    pub grab_radius: f32,
    /// Largest force the soft grab pulls with, in N: beyond it the grip slips and the cloth
    /// stays where its own pull balances the grip. Default 40 N — a firm pinch, many times a
    /// curtain's weight.
    pub grab_max_force: f32,
    /// Strain at which the grip slips: while the cloth's largest strain is past it, the force
    /// the grab holds with drops, so a pull beyond the cloth's reach stretches it this far
    /// and no further (docs/physics.md §1, "The grab"). A cloth that tears never makes it
    /// slip: it gives way by tearing. Default 0.05 (5 %).
    pub grab_slip_strain: f32,
    /// Self-collision: particles of the cloth keep `self_thickness` apart, with friction
    /// between layers (docs/physics.md §4, "Self-contact"). While on, velocities are clamped
    /// to 0.2 · `self_thickness` / h. Default `true`: a cloth that folds or piles would
    /// otherwise pass through itself.
    pub self_collision: bool,
    /// Distance kept between particles of the cloth when self-collision is on, in m (pairs
    /// closer at rest keep their rest distance). Default 0.01.
    pub self_thickness: f32,
    /// Coulomb friction coefficient between layers of the cloth (static and kinetic alike).
    /// Default 0.3.
    pub self_friction: f32,
    /// Vertex–triangle self-contacts: while `self_collision` is on, a particle also keeps
    /// `self_thickness` from the face of every triangle it is not a corner of (pushed along
    /// the face's normal back to the side it came from), so a layer cannot slip between the
    /// particles of a mesh coarser than the thickness (docs/physics.md §4, "Self-contact").
    /// Default `true`.
    pub self_vertex_triangle: bool,
    /// Edge–edge self-contacts: while `self_collision` is on, two edges of triangles that
    /// share no particle keep `self_thickness` apart when they are long enough to pass
    /// between particles the pairs keep apart (ℓ_a² + ℓ_b² ≥ 4 · `self_thickness`²), so two
    /// layers cannot cross edge through edge (docs/physics.md §4, "Self-contact"). Default
    /// `true`.
    pub self_edge_edge: bool,
}

impl Default for SolverParams {
    fn default() -> Self {
        Self {
            dt: 1.0 / 60.0,
            // 15 × 1 is the tmp15 setting: enough substeps for a 64² cloth to hang nearly
            // inextensible at 60 Hz while staying well inside one core's budget.
            substeps: 15,
            iterations: 1,
            gravity: Vec3::new(0.0, -9.81, 0.0),
            constraint_damping: 0.0,
            // A little air drag makes a released cloth come to rest in a few seconds, as real
            // fabric does, without visibly slowing a fall.
            air_damping: 0.05,
            wind: Vec3::ZERO,
            wind_gust: 0.0,
            aerodynamic_drag: 0.0,
            max_speed: 50.0,
            collision_thickness: 0.01,
            // A notched sheet under a steady load tears into two clean halves at 1 split a
            // frame; at 2 the crack wanders, at 4 pieces break off, at 64 it shreds.
            max_splits_per_step: 1,
            threads: 0,
            grab_compliance: DEFAULT_GRAB_COMPLIANCE,
            grab_radius: DEFAULT_GRAB_RADIUS,
            grab_max_force: DEFAULT_GRAB_MAX_FORCE,
            grab_slip_strain: 0.05,
            // On: the first thing a user tries (unpin the curtain, throw a corner over) folds
            // the cloth onto itself, and without self-collision it falls through itself.
            self_collision: true,
            // Ten Minute Physics 15's thickness: a centimetre, about a grid spacing of a 1 m
            // sheet at 128², so layers cannot pass between particles.
            self_thickness: 0.01,
            // Cotton on cotton.
            self_friction: 0.3,
            self_vertex_triangle: true,
            self_edge_edge: true,
        }
    }
}

/// Default [`SolverParams::grab_compliance`] in m/N.
pub const DEFAULT_GRAB_COMPLIANCE: f32 = 1.0e-4;
/// Default [`SolverParams::grab_radius`] in m.
pub const DEFAULT_GRAB_RADIUS: f32 = 0.05;
/// Default [`SolverParams::grab_max_force`] in N.
pub const DEFAULT_GRAB_MAX_FORCE: f32 = 40.0;

impl SolverParams {
    /// Substep length h = Δt / S in seconds.
    pub fn substep_dt(&self) -> f32 {
        self.dt / self.substeps as f32
    }

    /// Checks every field against its range in [`param_table::SOLVER`]; returns the first
    /// problem found.
    pub fn validate(&self) -> Result<(), SimError> {
        param_table::check_all(param_table::SOLVER, self)
    }

    /// The self-contact settings when self-collision is on.
    pub(crate) fn self_contact(&self) -> Option<SelfContactSettings> {
        self.self_collision.then_some(SelfContactSettings {
            thickness: self.self_thickness,
            friction: self.self_friction,
            travel: 0.0,
            vertex_triangle: self.self_vertex_triangle,
            edge_edge: self.self_edge_edge,
        })
    }

    /// The speed clamp of the frame in m/s (0 = none): `max_speed`, lowered to the
    /// self-contact clamp while self-collision is on.
    pub(crate) fn speed_clamp(&self) -> f32 {
        match self.self_contact() {
            Some(s) if self.max_speed > 0.0 => self.max_speed.min(s.speed_clamp(self.substep_dt())),
            Some(s) => s.speed_clamp(self.substep_dt()),
            None => self.max_speed,
        }
    }

    /// Checks what no single field shows: under `material` every compliance divided by h²
    /// must stay far from f32 overflow (only the softest materials at the shortest substeps
    /// come near it).
    pub fn validate_with(&self, material: &Material) -> Result<(), SimError> {
        let inv_h2 = 1.0 / (self.substep_dt() * self.substep_dt());
        let softest = [
            material.stretch_compliance_factor(),
            material.shear_compliance_factor(),
            material.bend_compliance_factor(),
        ]
        .into_iter()
        .fold(0.0, f32::max);
        if softest * inv_h2 <= MAX_ALPHA_TILDE {
            Ok(())
        } else {
            Err(SimError::InvalidParameter {
                name: "substeps",
                value: self.substeps as f64,
                expected: "fewer substeps or a longer dt for so soft a material (compliance / h² above 1e34)".into(),
            })
        }
    }
}

/// A cloth material in SI units. Edge and hinge compliances are derived from it as in
/// docs/physics.md §2; see [`Material::stretch_compliance_factor`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Material {
    /// Young's modulus E in Pa. Default 5 MPa (woven cotton in the fabric plane); range
    /// [1e3, 1e12] (soft foam to steel).
    pub youngs_modulus: f32,
    /// Poisson ratio ν (dimensionless). Enters the bending rigidity. Default 0.3; range
    /// [0, 0.499].
    pub poisson_ratio: f32,
    /// Sheet thickness t in m. Default 0.5 mm (a 10 µm film to felt).
    pub thickness: f32,
    /// Mass per area ρ_A in kg/m². Default 0.15 (a light cotton).
    pub areal_density: f32,
    /// Global compliance scaling: multiplies every compliance (1 = physical). Default 1; range
    /// [1e-3, 1e4].
    pub compliance_scale: f32,
    /// Multiplier on stretch (structural edge) stiffness. Default 1.
    pub stretch_stiffness: f32,
    /// Multiplier on shear (diagonal edge) stiffness. Default 1.
    pub shear_stiffness: f32,
    /// Multiplier on bending stiffness. Default 1.
    pub bend_stiffness: f32,
    /// Time constant τ in s of the cloth's internal stretch damping (Kelvin–Voigt viscosity,
    /// docs/physics.md §3, "Stretch viscosity"): at the end of every frame each stretch and
    /// shear edge's stretching speed is damped as by a dashpot of τ × the edge's stiffness,
    /// implicitly over the frame. Mesh-scale stretch vibrations, which one sweep per substep
    /// leaves ringing on a fine cloth, die within a few frames; motion that does not stretch
    /// the cloth (falling, swinging, folding, flapping) is untouched. Default 2e-5 s; range
    /// [0, 1] (0 = none).
    pub stretch_damping_time: f32,
    /// Static friction coefficient μ_s against colliders. Default 0.5.
    pub friction_static: f32,
    /// Kinetic friction coefficient μ_k against colliders. Default 0.4.
    pub friction_kinetic: f32,
    /// Engineering strain at which an edge tears (e.g. 0.5 = 50 % stretch); `None` = never.
    /// Default `None`.
    pub tear_strain: Option<f32>,
    /// Debilitation: the edges at a crack's new tip lose this fraction of their tear strain
    /// (per split that reaches them), so tears run in lines. Default 0.
    pub tear_debilitation: f32,
    /// Response time τ in s of the tear criterion: an edge fails when its strain, averaged
    /// over about the last τ seconds (an exponential average sampled once per frame), exceeds
    /// the tear strain, so a snap lasting a frame or two does not tear while a steady pull does
    /// (0 = the strain of the frame alone). Default 0.1 s.
    pub tear_response_time: f32,
    /// Length ℓ in m over which the tear criterion averages the cloth's strain (a Gaussian of
    /// standard deviation ℓ/2; docs/physics.md §8): the strain at a point load or a crack tip,
    /// which the mesh cannot resolve, is read as the material around it feels it, so a tear
    /// starts and runs in the same place on a coarse and a fine mesh of the same cloth. Keep it
    /// above the mesh spacing of the coarsest mesh it should agree with. With several tearing
    /// materials the largest applies. It also sets the scale of what a tear leaves: a corner
    /// pulled off comes away about ℓ across. Default 0.1 m (0 = the strain at
    /// each vertex's own triangles).
    pub tear_length: f32,
    /// Long-range attachments (tethers, Kim, Chentanez and Müller 2012): every free particle
    /// stays within `tether_slack` × its rest distance through the cloth from its nearest pins,
    /// which stops the over-stretch that one sweep per substep leaves near the pins of a large
    /// cloth. They limit stretch only (never push), so a material meant to stretch visibly
    /// (rubber) turns them off or raises the slack. Default `true`.
    pub tethers: bool,
    /// Factor (≥ 1) on every tether's rest distance: 1 = no stretch beyond the rest geodesic,
    /// 1.1 = 10 % allowed. Default 1.
    pub tether_slack: f32,
}

impl Default for Material {
    fn default() -> Self {
        Self {
            youngs_modulus: 5.0e6,
            poisson_ratio: 0.3,
            thickness: 5.0e-4,
            areal_density: 0.15,
            compliance_scale: 1.0,
            stretch_stiffness: 1.0,
            shear_stiffness: 1.0,
            bend_stiffness: 1.0,
            // Seven times what a 128 × 128 cotton curtain needs to stop ringing (3e-6 s), and yet
            // a damping ratio ωτ/2 below 2e-4 for anything slower than 2 Hz. Five times more
            // (1e-4 s) left the default curtain with a third pin below it stuck at 52 % strain.
            stretch_damping_time: 2.0e-5,
            friction_static: 0.5,
            friction_kinetic: 0.4,
            tear_strain: None,
            tear_debilitation: 0.0,
            // A flag's snap in a gust strains its edges for one to four frames at 60 Hz; a pull
            // by hand lasts far longer.
            tear_response_time: 0.1,
            // Three spacings of a 40 × 40 metre-sized sheet: much less, and the average is the
            // mesh's rather than the material's (at 5 cm a corner pull spiralled into one-element
            // ribbons on an 80 × 80 sheet).
            tear_length: 0.1,
            tethers: true,
            // A 5 MPa sheet strains well under 1 % under its own weight, so tethers at their rest
            // distance cost the real material nothing.
            tether_slack: 1.0,
        }
    }
}

impl Material {
    /// Membrane modulus E·t in N/m.
    pub fn membrane_modulus(&self) -> f32 {
        self.youngs_modulus * self.thickness
    }

    /// Plate bending rigidity D = E t³ / (12 (1 − ν²)) in N·m.
    pub fn bending_rigidity(&self) -> f32 {
        let t = self.thickness;
        self.youngs_modulus * t * t * t / (12.0 * (1.0 - self.poisson_ratio * self.poisson_ratio))
    }

    /// Compliance α of distance constraint `c` in m/N (docs/physics.md §2): its geometric
    /// coefficient over the membrane modulus E·t (or its fixed compliance), times
    /// `compliance_scale`, over the stiffness multiplier of its kind. The one place the
    /// material's compliances are derived: the solver's constraints, the stiffness ramp and
    /// the reference solver all take them from here.
    pub fn distance_compliance(&self, c: &DistanceConstraint) -> f32 {
        let multiplier = match c.kind {
            EdgeKind::Stretch => self.stretch_stiffness,
            EdgeKind::Shear => self.shear_stiffness,
            EdgeKind::Bend => self.bend_stiffness,
            EdgeKind::Seam => 1.0,
        };
        let base = match c.compliance {
            Compliance::Material(coef) => coef / self.membrane_modulus(),
            Compliance::Fixed(alpha) => alpha,
        };
        base * self.compliance_scale / multiplier
    }

    /// Compliance α of hinge `h` in 1/(N·m) (docs/physics.md §2): its geometric coefficient
    /// (A1 + A2)/|e|² over the bending rigidity D (or its fixed compliance), times
    /// `compliance_scale`, over the bending multiplier.
    pub fn hinge_compliance(&self, h: &Hinge) -> f32 {
        let base = match h.compliance {
            Compliance::Material(coef) => coef / self.bending_rigidity(),
            Compliance::Fixed(alpha) => alpha,
        };
        base * self.compliance_scale / self.bend_stiffness
    }

    /// [`Self::distance_compliance`] of a stretch edge per unit geometric coefficient (m/N),
    /// where one material-wide value is needed: the hinges' damping scale, the stiffness
    /// ramp, the overflow check of [`SolverParams::validate_with`]. (One quotient, so it may
    /// differ from the per-edge value in the last bit.)
    pub fn stretch_compliance_factor(&self) -> f32 {
        self.compliance_scale / (self.stretch_stiffness * self.membrane_modulus())
    }

    /// [`Self::distance_compliance`] of a shear edge per unit geometric coefficient (m/N).
    pub fn shear_compliance_factor(&self) -> f32 {
        self.compliance_scale / (self.shear_stiffness * self.membrane_modulus())
    }

    /// [`Self::hinge_compliance`] per unit geometric coefficient (1/(N·m)).
    pub fn bend_compliance_factor(&self) -> f32 {
        self.compliance_scale / (self.bend_stiffness * self.bending_rigidity())
    }

    /// Checks every field against its range in [`param_table::MATERIAL`]; returns the first
    /// problem found.
    pub fn validate(&self) -> Result<(), SimError> {
        param_table::check_all(param_table::MATERIAL, self)
    }
}
