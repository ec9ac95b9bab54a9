//! Solver and material parameters: plain structs with public, documented fields (units and
//! defaults on every field), edited in place by the app and serialised verbatim into presets.
//!
//! Every field may change between two steps; [`crate::sim::Cloth::step`] validates the whole
//! set first and derives everything it needs from them, so a live edit never needs a rebuild.

use glam::Vec3;
use serde::{Deserialize, Serialize};

use super::error::{check_finite_vec, check_non_negative, check_positive, check_range, SimError};

/// Time stepping, damping and global forces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SolverParams {
    /// Frame step Δt in seconds. Default 1/60.
    pub dt: f32,
    /// Substeps S per frame (h = Δt / S). Default 15. More substeps = stiffer, more accurate.
    pub substeps: u32,
    /// Gauss–Seidel sweeps per substep. Default 1 ("small steps": substeps beat iterations).
    pub iterations: u32,
    /// Gravity in m/s². Default (0, −9.81, 0).
    pub gravity: Vec3,
    /// Constraint damping β of XPBD eq. 26 (N·s/m for distances). Damps motion along constraint
    /// gradients only, so it never slows free fall. Default 0.
    pub constraint_damping: f32,
    /// Air (velocity) damping k in 1/s: v ← v·exp(−k h) every substep. Slows everything,
    /// including free fall. Default 0.05.
    pub air_damping: f32,
    /// Wind velocity in m/s. Default (0, 0, 0).
    pub wind: Vec3,
    /// Gustiness of the wind: relative amplitude of its slow variation (0 = steady). Default 0.
    pub wind_gust: f32,
    /// Aerodynamic drag coefficient C_d of the cloth's triangles (0 = no air forces, 1 ≈ flat
    /// plate). Default 0.
    pub aerodynamic_drag: f32,
    /// Particle speed limit in m/s (0 = none); guards against explosions after huge drags.
    /// Default 50.
    pub max_speed: f32,
    /// Distance kept between cloth particles and collider surfaces, in m. Default 0.01.
    pub collision_thickness: f32,
    /// Cap on vertex splits per step so a tear cannot run across the whole cloth in one frame.
    /// Default 64.
    pub max_splits_per_step: u32,
    /// Worker threads for the constraint solve (0 = pick by cloth size). Results are
    /// bit-identical for every thread count. Default 0.
    pub threads: u32,
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
            max_splits_per_step: 64,
            threads: 0,
        }
    }
}

impl SolverParams {
    /// Substep length h = Δt / S in seconds.
    pub fn substep_dt(&self) -> f32 {
        self.dt / self.substeps as f32
    }

    /// Checks every field; returns the first problem found.
    pub fn validate(&self) -> Result<(), SimError> {
        check_range("dt", self.dt, f32::MIN_POSITIVE, 10.0, "a time step in (0, 10] seconds")?;
        if self.substeps == 0 || self.substeps > 1000 {
            return Err(SimError::InvalidParameter {
                name: "substeps",
                value: self.substeps as f64,
                expected: "1 to 1000 substeps",
            });
        }
        if self.iterations == 0 || self.iterations > 1000 {
            return Err(SimError::InvalidParameter {
                name: "iterations",
                value: self.iterations as f64,
                expected: "1 to 1000 iterations",
            });
        }
        check_finite_vec("gravity", self.gravity)?;
        check_non_negative("constraint_damping", self.constraint_damping)?;
        check_non_negative("air_damping", self.air_damping)?;
        check_finite_vec("wind", self.wind)?;
        check_range("wind_gust", self.wind_gust, 0.0, 1.0, "a fraction in [0, 1]")?;
        check_range(
            "aerodynamic_drag",
            self.aerodynamic_drag,
            0.0,
            10.0,
            "a drag coefficient in [0, 10]",
        )?;
        check_non_negative("max_speed", self.max_speed)?;
        check_non_negative("collision_thickness", self.collision_thickness)?;
        if self.threads > 256 {
            return Err(SimError::InvalidParameter {
                name: "threads",
                value: self.threads as f64,
                expected: "0 (auto) to 256 threads",
            });
        }
        Ok(())
    }
}

/// A cloth material in SI units. Edge and hinge compliances are derived from it as in section 3
/// of the physics reference; see [`Material::stretch_compliance_factor`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Material {
    /// Young's modulus E in Pa. Default 5 MPa (woven cotton in the fabric plane).
    pub youngs_modulus: f32,
    /// Poisson ratio ν (dimensionless, 0 ≤ ν < 0.5). Enters the bending rigidity. Default 0.3.
    pub poisson_ratio: f32,
    /// Sheet thickness t in m. Default 0.5 mm.
    pub thickness: f32,
    /// Mass per area ρ_A in kg/m². Default 0.15 (a light cotton).
    pub areal_density: f32,
    /// Global compliance scaling: multiplies every compliance (1 = physical). Default 1.
    pub compliance_scale: f32,
    /// Multiplier on stretch (structural edge) stiffness. Default 1.
    pub stretch_stiffness: f32,
    /// Multiplier on shear (diagonal edge) stiffness. Default 1.
    pub shear_stiffness: f32,
    /// Multiplier on bending stiffness. Default 1.
    pub bend_stiffness: f32,
    /// Static friction coefficient μ_s against colliders. Default 0.5.
    pub friction_static: f32,
    /// Kinetic friction coefficient μ_k against colliders. Default 0.4.
    pub friction_kinetic: f32,
    /// Engineering strain at which an edge tears (e.g. 0.5 = 50 % stretch); `None` = never.
    /// Default `None`.
    pub tear_strain: Option<f32>,
    /// Debilitation in [0, 1): edges next to a fresh tear lose this fraction of their tear
    /// strain, so tears run in lines. Default 0.
    pub tear_debilitation: f32,
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
            friction_static: 0.5,
            friction_kinetic: 0.4,
            tear_strain: None,
            tear_debilitation: 0.0,
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

    /// Factor turning a stretch edge's geometric coefficient into its compliance (m/N).
    pub fn stretch_compliance_factor(&self) -> f32 {
        self.compliance_scale / (self.stretch_stiffness * self.membrane_modulus())
    }

    /// Factor turning a shear edge's geometric coefficient into its compliance (m/N).
    pub fn shear_compliance_factor(&self) -> f32 {
        self.compliance_scale / (self.shear_stiffness * self.membrane_modulus())
    }

    /// Factor turning a hinge's geometric coefficient (A1 + A2)/|e|² into its compliance
    /// (1/(N·m)).
    pub fn bend_compliance_factor(&self) -> f32 {
        self.compliance_scale / (self.bend_stiffness * self.bending_rigidity())
    }

    /// Checks every field; returns the first problem found.
    pub fn validate(&self) -> Result<(), SimError> {
        check_positive("youngs_modulus", self.youngs_modulus)?;
        check_range("poisson_ratio", self.poisson_ratio, 0.0, 0.499, "a Poisson ratio in [0, 0.499]")?;
        check_positive("thickness", self.thickness)?;
        check_positive("areal_density", self.areal_density)?;
        check_positive("compliance_scale", self.compliance_scale)?;
        check_positive("stretch_stiffness", self.stretch_stiffness)?;
        check_positive("shear_stiffness", self.shear_stiffness)?;
        check_positive("bend_stiffness", self.bend_stiffness)?;
        check_non_negative("friction_static", self.friction_static)?;
        check_non_negative("friction_kinetic", self.friction_kinetic)?;
        if let Some(strain) = self.tear_strain {
            check_positive("tear_strain", strain)?;
        }
        check_range("tear_debilitation", self.tear_debilitation, 0.0, 0.99, "a fraction in [0, 0.99]")?;
        check_range("tether_slack", self.tether_slack, 1.0, 10.0, "a factor in [1, 10]")?;
        // The derived compliances must be finite too (e.g. E·t must not underflow to 0).
        for (name, value) in [
            ("stretch compliance", self.stretch_compliance_factor()),
            ("shear compliance", self.shear_compliance_factor()),
            ("bending compliance", self.bend_compliance_factor()),
        ] {
            if !value.is_finite() {
                return Err(SimError::InvalidParameter {
                    name,
                    value: value as f64,
                    expected: "material values whose product is a finite compliance",
                });
            }
        }
        Ok(())
    }
}
