//! Strip tensile test: a strip clamped at both ends is pulled to a few percent strain, and the
//! slope of the force per unit width it carries against its strain is its membrane modulus.
//!
//! # What it measures
//! In fabrics the in-plane stiffness is measured on strips: ISO 13934-1 pulls a 50 mm wide
//! strip over a 200 mm gauge length to break, and Kawabata's KES-FB1 tensile tester pulls a
//! 20 cm × 5 cm specimen to 500 gf/cm and reads the load–extension curve; the initial slope of
//! force per width against strain is the membrane modulus E·t (N/m) that the material presets
//! quote (docs/materials.md). Here the same strip, 5 cm × 20 cm by default, is the engine's own
//! grid ([`GridSpec`], docs/physics.md §2) under the material: its two end rows are clamped
//! (pinned), one clamp is moved to impose an engineering strain, gravity is off, and the strip
//! is brought to rest. Under uniaxial stress with free sides σ = E ε, so the force per width
//! over the strain is E·t: the grid with diagonals is an isotropic ν = 1/3 membrane of modulus
//! E·t whose energy is exact under homogeneous strain, and the uniaxial state (ε_xx = −ε/3) is
//! an exact equilibrium of its interior and of its free sides (on square cells every cell has
//! its own diagonals, so the sides are not softer in shear).
//!
//! # Where it measures
//! - *Strain*: the mean stretch of the middle third of the strip's length (its interior
//!   columns). The clamps stop the Poisson contraction at the ends, and within about a width of
//!   each clamp the strip is stretched under a plane-strain constraint, up to 1/(1 − ν²) = 9/8
//!   times stiffer; the imposed clamp strain is therefore not the strain of the strip (on the
//!   5 × 20 cm strip the middle third strains 0.8 % more than the clamps impose). The end zone's
//!   disturbance decays over about a width, so the middle third of a strip four widths long
//!   is nearly clear of it: the measured slope is 0.8 % above E·t on 5 mm cells and 0.25 % on
//!   2.5 mm ones, so most of what remains is the mesh's.
//! - *Force*: the tension of every edge crossing the mid section, each its elastic force
//!   (l − l₀)/α along the strip, summed over the middle half of the width (a structural edge on
//!   that band's border counted half, as it is shared with the cells outside) and divided by
//!   that band's width: the membrane's stress resultant N = σ t. The whole strip carries more
//!   than N times its width: its two side lines of structural edges each bound one cell only,
//!   yet are as stiff as an interior line shared by two, so the strip carries an extra
//!   3a/4 of width (a the spacing: 3.75 % on 2.5 mm, 7.5 % on 5 mm over 5 cm).
//!   [`TensileResult::strip_stiffness`] reports that whole-strip slope.
//!
//! # How it comes to rest
//! The forces are read from the edges' lengths, not from the solver's multipliers λ: with one
//! sweep per substep λ restarts at zero every substep, and at rest it holds only the last
//! substep's small correction. Lengths give the material's force only where the solver's rest
//! state is the material's equilibrium, which one sweep reaches only when every edge is
//! compliant next to the particles' inertia: α/h² ≫ (w_a + w_b) (w the inverse masses). Where
//! the edges are stiffer than that (h² (w_a + w_b) ≫ α, as at the presets' 15 substeps of a
//! frame) the sweep acts as a projection on rigid edges and the rest state is set by masses and
//! substep, not by α: the 5 × 20 cm cotton strip settled 3.6 % soft at 15 substeps of 1/60 s.
//! So the substep h is set from the model: the smallest α/(h² (w_a + w_b)) over the edges is
//! [`TensileSetup::softness`]. The strip is damped by its stretch viscosity at the time
//! constant 1/ω₁ of its lowest stretch mode (ω₁ = π c/L, c the membrane wave speed), which damps
//! that mode critically and every higher one at least as fast, and runs
//! [`TensileSetup::settle`] wave crossings L/c at each strain. Tethers, which would hold every
//! particle within its rest distance of the clamps, are turned off: they are a stretch limit
//! of their own, not the membrane.

use glam::Vec3;

use crate::sim::{Cloth, DistanceConstraint, GridSpec, Material, Orientation, PinMode, SimError, SolverParams};

/// The strip, the strains imposed on it and how long it settles at each.
#[derive(Debug, Clone, PartialEq)]
pub struct TensileSetup {
    /// Width of the strip in m. Default 0.05 (ISO 13934-1's 50 mm).
    pub width: f32,
    /// Length between the clamps in m. Default 0.2 (ISO 13934-1's 200 mm gauge).
    pub length: f32,
    /// Grid spacing in m, the same along and across (square cells). Default 5 mm.
    pub spacing: f32,
    /// Engineering strains imposed by moving one clamp. Default 0.5, 1, 2 and 3 %.
    pub strains: Vec<f32>,
    /// Smallest ratio α/(h² (w_a + w_b)) over the edges, which sets the substep h (module
    /// docs). Default 20: the slope moved by under 0.05 % from 10 to 160.
    pub softness: f32,
    /// Time run at each strain, in wave crossings L/c of the strip. Default 8: the slope moved
    /// by under 0.05 % from 5 to 40.
    pub settle: f32,
    /// Substeps per frame (the frame only sets how often the stretch viscosity acts).
    /// Default 20.
    pub substeps: u32,
}

impl Default for TensileSetup {
    fn default() -> Self {
        Self {
            width: 0.05,
            length: 0.2,
            spacing: 5.0e-3,
            strains: vec![0.005, 0.01, 0.02, 0.03],
            softness: 20.0,
            settle: 8.0,
            substeps: 20,
        }
    }
}

/// What the test measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TensileResult {
    /// Measured membrane modulus in N/m: the least-squares slope through the origin of
    /// `points`.
    pub stiffness: f32,
    /// The material's membrane modulus E·t in N/m ([`Material::membrane_modulus`]).
    pub expected: f32,
    /// (strain, force per unit width in N/m) at each imposed strain, both measured in the
    /// middle of the strip (module docs).
    pub points: Vec<(f32, f32)>,
    /// Slope in N/m of the whole mid section's force per the strip's width against the same
    /// strains: `stiffness` plus the side edges' extra 3a/4 of width (module docs).
    pub strip_stiffness: f32,
}

/// Pulls a strip of `material` to each of `setup.strains` and measures its membrane modulus.
/// Errors are the engine's: an invalid material or strip, or a solver that diverged.
pub fn run_tensile(material: &Material, setup: &TensileSetup) -> Result<TensileResult, SimError> {
    let spec = strip(setup);
    let mut material = Material {
        tethers: false,
        ..material.clone()
    };
    material.stretch_damping_time = crossing_time(&material, setup.length) / std::f32::consts::PI;
    let solver = solver(&spec, &material, setup)?;
    let frames = (setup.settle * crossing_time(&material, setup.length) / solver.dt).ceil() as u32;
    let mut points = Vec::new();
    let mut strip_points = Vec::new();
    for &strain in &setup.strains {
        let cloth = pulled(&spec, &material, &solver, frames, strain)?;
        let measured = middle_strain(&cloth, &spec);
        points.push((measured, band_force(&cloth, &material, &spec, spec.columns / 4)));
        strip_points.push((measured, band_force(&cloth, &material, &spec, 0)));
    }
    Ok(TensileResult {
        stiffness: slope(&points),
        expected: material.membrane_modulus(),
        strip_stiffness: slope(&strip_points),
        points,
    })
}

/// Least-squares slope of a line through the origin.
fn slope(points: &[(f32, f32)]) -> f32 {
    let (xy, xx) = points.iter().fold((0.0, 0.0), |(xy, xx), &(x, y)| (xy + x * y, xx + x * x));
    xy / xx
}

/// The strip as a grid hanging along −y from the origin, both end rows pinned.
fn strip(setup: &TensileSetup) -> GridSpec {
    let columns = (setup.width / setup.spacing).round().max(1.0) as u32 + 1;
    let rows = (setup.length / setup.spacing).round().max(1.0) as u32 + 1;
    let clamps = (0..columns).flat_map(|c| [(c, 0), (c, rows - 1)]).collect();
    GridSpec {
        width: setup.width,
        height: setup.length,
        columns,
        rows,
        origin: Vec3::ZERO,
        orientation: Orientation::Vertical,
        pins: PinMode::List(clamps),
        ..GridSpec::default()
    }
}

/// Time in s a membrane wave takes along the strip: L/c, c = √(k/ρ_A) with k the material's
/// membrane modulus under its stiffer multiplier and its compliance scale.
fn crossing_time(material: &Material, length: f32) -> f32 {
    let multiplier = material.stretch_stiffness.max(material.shear_stiffness) / material.compliance_scale;
    length / (multiplier * material.membrane_modulus() / material.areal_density).sqrt()
}

/// Solver settings with the substep from [`TensileSetup::softness`], gravity and
/// self-collision off.
fn solver(spec: &GridSpec, material: &Material, setup: &TensileSetup) -> Result<SolverParams, SimError> {
    let cloth = Cloth::new(spec.build()?, material, Vec::new())?;
    let particles = cloth.particles();
    // The inverse masses of unpinned particles (pinned ones read 0).
    let w = |i: u32| 1.0 / particles.mass(i as usize, material.areal_density);
    let stiffest = cloth
        .model()
        .distances
        .iter()
        .map(|c| (w(c.a) + w(c.b)) / material.distance_compliance(c))
        .fold(0.0, f32::max);
    let h = 1.0 / (setup.softness * stiffest).sqrt();
    Ok(SolverParams {
        dt: h * setup.substeps as f32,
        substeps: setup.substeps,
        iterations: 1,
        gravity: Vec3::ZERO,
        air_damping: 0.0,
        self_collision: false,
        ..SolverParams::default()
    })
}

/// The strip after `frames` frames with its last row moved by `strain` × its length. It starts
/// in the uniaxial state (stretched along, contracted by ν = 1/3 across) so that only the
/// clamps' end zones have far to move.
fn pulled(spec: &GridSpec, material: &Material, solver: &SolverParams, frames: u32, strain: f32) -> Result<Cloth, SimError> {
    let mut cloth = Cloth::new(spec.build()?, material, Vec::new())?;
    for row in 1..spec.rows {
        let across = if row + 1 == spec.rows { 1.0 } else { 1.0 - strain / 3.0 };
        for column in 0..spec.columns {
            let p = spec.position(column, row);
            let at = Vec3::new(p.x * across, p.y * (1.0 + strain), p.z);
            cloth.set_state(spec.index(column, row), at, Vec3::ZERO)?;
        }
    }
    for _ in 0..frames {
        cloth.step(solver, material)?;
    }
    Ok(cloth)
}

/// The middle third's mean engineering strain along the strip.
fn middle_strain(cloth: &Cloth, spec: &GridSpec) -> f32 {
    let last = (spec.rows - 1) as f32;
    let (top, bottom) = ((last / 3.0).round() as u32, (2.0 * last / 3.0).round() as u32);
    let rest = spec.position(0, top).y - spec.position(0, bottom).y;
    let y = |c, r| cloth.particles().position(spec.index(c, r) as usize).y;
    let sum: f32 = (0..spec.columns).map(|c| (y(c, top) - y(c, bottom)) / rest - 1.0).sum();
    sum / spec.columns as f32
}

/// Force per unit width in N/m across the mid section, over the band of columns
/// `margin ..= columns − 1 − margin` (the whole strip at 0, every line of edges in full).
fn band_force(cloth: &Cloth, material: &Material, spec: &GridSpec, margin: u32) -> f32 {
    let row = (spec.rows - 1) / 2;
    let (first, last) = (margin, spec.columns - 1 - margin);
    let force: f32 = cloth
        .model()
        .distances
        .iter()
        .filter(|c| (c.a / spec.columns).min(c.b / spec.columns) <= row && row < (c.a / spec.columns).max(c.b / spec.columns))
        .map(|c| {
            let (ca, cb) = (c.a % spec.columns, c.b % spec.columns);
            let inside = first <= ca.min(cb) && ca.max(cb) <= last;
            // A line of structural edges on the band's border is shared with the cells outside.
            let border = margin > 0 && ca == cb && (ca == first || ca == last);
            let weight = if !inside {
                0.0
            } else if border {
                0.5
            } else {
                1.0
            };
            weight * axial_tension(cloth, material, c)
        })
        .sum();
    let band_width = (last - first) as f32 * spec.width / (spec.columns - 1) as f32;
    force / band_width
}

/// Elastic tension of edge `c` in N, (l − l₀)/α, resolved along the strip.
fn axial_tension(cloth: &Cloth, material: &Material, c: &DistanceConstraint) -> f32 {
    let d = cloth.particles().position(c.a as usize) - cloth.particles().position(c.b as usize);
    let length = d.length();
    (length - c.rest) / material.distance_compliance(c) * d.y.abs() / length
}
