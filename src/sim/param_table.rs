//! The one table of the tunable parameters: for every field of [`SolverParams`] and
//! [`Material`], its name in presets, its label in the panels, its unit, the range a preset
//! may give it, the range of its slider and how the slider maps (linear or logarithmic,
//! integer steps), how the panels show it and its help text.
//!
//! [`GRID`] holds the numbers of a grid ([`GridSpec`]) the same way; the Scene panel's size
//! fields take their ranges and tooltips from it and docs/presets.md's Grid table has its rows.
//!
//! Three things are made from it, so they cannot disagree:
//! - validation: [`SolverParams::validate`] and [`Material::validate`] check every field
//!   against its [`Param::accepted`] range ([`check_all`]), with a message built from the row;
//! - the app's panels: each slider, checkbox and vector row is built from its row (rail,
//!   mapping, formatting, typed values clamped to the accepted range, the tooltip with the
//!   default and the range);
//! - the reference: the Material and Solver tables of docs/presets.md are
//!   [`markdown_table`]'s output, and a test fails when the file differs.
//!
//! The default of every field stays in the structs' `Default` impls (one place each); the
//! table reads it from there.

use std::borrow::Cow;

use glam::Vec3;

use super::constraints::MAX_PARTS as MAX_THREADS;
use super::error::SimError;
use super::grid::GridSpec;
use super::params::{Material, SolverParams};

/// A field's value, read from its struct.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// A real number.
    Real(f32),
    /// A real number that may be absent (`None` switches the feature off).
    OptionalReal(Option<f32>),
    /// A whole number.
    Count(u32),
    /// A vector of three real components.
    Vector(Vec3),
    /// On or off.
    Toggle(bool),
}

/// A field of a struct, to edit in place.
#[derive(Debug)]
pub enum FieldMut<'a> {
    /// A real number.
    Real(&'a mut f32),
    /// A real number that may be absent.
    OptionalReal(&'a mut Option<f32>),
    /// A whole number.
    Count(&'a mut u32),
    /// A vector of three real components.
    Vector(&'a mut Vec3),
    /// On or off.
    Toggle(&'a mut bool),
}

/// The two ways to reach a field of `T`.
pub struct Access<T: 'static> {
    /// Reads the field.
    pub read: fn(&T) -> Value,
    /// Borrows the field to edit it.
    pub write: fn(&mut T) -> FieldMut<'_>,
}

/// Both accessors of field `$field` of kind `$kind` (a [`Value`] variant).
macro_rules! access {
    ($kind:ident, $field:ident) => {
        Access {
            read: |p| Value::$kind(p.$field),
            write: |p| FieldMut::$kind(&mut p.$field),
        }
    };
}

/// A closed interval [min, max] of a field's values (for a vector, of each component).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Bounds {
    /// [min, max].
    pub const fn new(min: f64, max: f64) -> Self {
        Self { min, max }
    }

    /// Whether `value` lies inside.
    pub fn contains(&self, value: f64) -> bool {
        (self.min..=self.max).contains(&value)
    }

    /// `value` moved to the nearest end when it lies outside.
    pub fn clamp(&self, value: f64) -> f64 {
        value.clamp(self.min, self.max)
    }
}

/// How a slider's rail maps pointer travel to values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Equal travel adds equal amounts.
    Linear,
    /// Equal travel multiplies by equal factors: fine steps at the small end, where the
    /// defaults of counts and moduli are.
    Logarithmic,
}

/// How the panels show and read a value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shown {
    /// As it is, followed by the unit.
    Plain,
    /// With an SI prefix on the unit ("5.000 MPa", "270.0 µm").
    SiPrefix,
    /// As `(value + offset) × factor` followed by `suffix`: milliseconds, millimetres,
    /// per cent.
    Scaled {
        /// Multiplies the value (after the offset).
        factor: f64,
        /// Added to the value first (−1 shows a factor of 1.1 as "+10 %").
        offset: f64,
        /// Written after the number.
        suffix: &'static str,
    },
}

impl Shown {
    /// Shown in thousandths of the unit (ms, mm).
    const fn milli(suffix: &'static str) -> Self {
        Self::Scaled {
            factor: 1e3,
            offset: 0.0,
            suffix,
        }
    }

    /// A fraction shown in per cent.
    const PERCENT: Self = Self::Scaled {
        factor: 100.0,
        offset: 0.0,
        suffix: "%",
    };
}

/// One row of the table: everything about one field.
pub struct Param<T: 'static> {
    /// The field's name in presets (and in error messages), e.g. `substeps`.
    pub key: &'static str,
    /// Its label in the panels.
    pub label: &'static str,
    /// SI unit ("" for a pure number).
    pub unit: &'static str,
    /// What the value is, for messages: "a time step in [1e-5, 10] s", "1 to 1000 substeps".
    pub quantity: &'static str,
    /// The values a preset may give it (validation refuses the rest).
    pub accepted: Bounds,
    /// The span of its slider's rail (inside `accepted`; typed values may go beyond it, up to
    /// `accepted`).
    pub slider: Bounds,
    /// How the rail maps.
    pub scale: Scale,
    /// How the value is shown and typed.
    pub shown: Shown,
    /// What it does, in a sentence or two: the panels' tooltip and the reference's text.
    pub help: &'static str,
    /// More for the reference only (links, theory); may be empty.
    pub more: &'static str,
    /// How to reach the field.
    pub access: Access<T>,
}

impl<T: Default> Param<T> {
    /// The field's value in `T::default()`.
    pub fn default_value(&self) -> Value {
        (self.access.read)(&T::default())
    }

    /// Checks the field of `target` against [`Self::accepted`].
    /// The message is only built for a refused value: every step validates every field.
    pub fn check(&self, target: &T) -> Result<(), SimError> {
        let (min, max) = (self.accepted.min as f32, self.accepted.max as f32);
        let outside = |x: f32| !(x.is_finite() && (min..=max).contains(&x));
        let counts = self.accepted.min as u32..=self.accepted.max as u32;
        let refused = match (self.access.read)(target) {
            Value::Real(v) | Value::OptionalReal(Some(v)) => Some(v).filter(|&v| outside(v)).map(f64::from),
            Value::Count(n) => Some(n).filter(|n| !counts.contains(n)).map(f64::from),
            Value::Vector(v) => v.to_array().into_iter().find(|&c| outside(c)).map(f64::from),
            Value::OptionalReal(None) | Value::Toggle(_) => None,
        };
        refused.map_or(Ok(()), |value| {
            Err(SimError::InvalidParameter {
                name: self.key,
                value,
                expected: self.expected(),
            })
        })
    }

    /// What the field accepts, as error messages say it: "a time step in [1e-5, 10] s",
    /// "1 to 1000 substeps", "components in [-100, 100] m/s²".
    pub fn expected(&self) -> Cow<'static, str> {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", self.unit)
        };
        Cow::Owned(match self.default_value() {
            Value::Count(_) => format!("{} {}", self.accepted_text(), self.quantity),
            _ => format!("{} in {}{unit}", self.quantity, self.accepted_text()),
        })
    }

    /// The accepted range as the reference writes it: "[1e-5, 10]", "1 to 1000" for counts,
    /// "" for toggles.
    pub fn accepted_text(&self) -> String {
        let Bounds { min, max } = self.accepted;
        match self.default_value() {
            Value::Count(_) => format!("{} to {}", min as u32, max as u32),
            Value::Toggle(_) => String::new(),
            _ => format!("[{}, {}]", number(min as f32), number(max as f32)),
        }
    }

    /// The default as the reference writes it: "1/60", "5e6", "(0, -9.81, 0)", "`true`",
    /// "none".
    pub fn default_text(&self) -> String {
        match self.default_value() {
            Value::Real(v) | Value::OptionalReal(Some(v)) => number(v),
            Value::OptionalReal(None) => "none".into(),
            Value::Count(n) => n.to_string(),
            Value::Vector(v) => format!("({}, {}, {})", number(v.x), number(v.y), number(v.z)),
            Value::Toggle(on) => format!("`{on}`"),
        }
    }

    /// The reference's type column: "number, s", "integer", "(x, y, z), m/s²", "bool",
    /// "number or none".
    pub fn type_text(&self) -> String {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(", {}", self.unit)
        };
        match self.default_value() {
            Value::Real(_) => format!("number{unit}"),
            Value::OptionalReal(_) => format!("number or none{unit}"),
            Value::Count(_) => format!("integer{unit}"),
            Value::Vector(_) => format!("(x, y, z){unit}"),
            Value::Toggle(_) => "bool".into(),
        }
    }

    /// The reference's row: `| key | type | default | accepted | help more |`.
    pub fn markdown_row(&self) -> String {
        let accepted = match self.default_value() {
            Value::Vector(_) => format!("components in {}", self.accepted_text()),
            _ => self.accepted_text(),
        };
        let text = if self.more.is_empty() {
            self.help.to_string()
        } else {
            format!("{} {}", self.help, self.more)
        };
        let cells = [
            format!("`{}`", self.key),
            self.type_text(),
            self.default_text(),
            accepted,
            text.replace('|', "\\|"),
        ];
        format!("| {} |", cells.join(" | ")).replace("|  |", "| |")
    }
}

/// Checks every field of `target` against its row; the first problem found.
pub fn check_all<T: Default>(table: &[Param<T>], target: &T) -> Result<(), SimError> {
    table.iter().try_for_each(|param| param.check(target))
}

/// The row of `key` in `table`.
pub fn find<'t, T>(table: &'t [Param<T>], key: &str) -> Option<&'t Param<T>> {
    table.iter().find(|param| param.key == key)
}

/// The reference's table of `table` (header and one row per field, in the table's order).
pub fn markdown_table<T: Default>(table: &[Param<T>]) -> String {
    let mut text = String::from("| Field | Type | Default | Accepted | What it does |\n|---|---|---|---|---|\n");
    for param in table {
        text.push_str(&param.markdown_row());
        text.push('\n');
    }
    text
}

/// `v` as a person writes it: "1/60" for the reciprocal of a whole number with a long
/// decimal, otherwise the shorter of its decimal and exponent forms ("0.05", "5e6", "1e-5";
/// the decimal on a tie), each the shortest that reads back as `v`.
pub fn number(v: f32) -> String {
    let decimal = format!("{v}");
    let exponent = format!("{v:e}");
    let reciprocal = (1.0 / v).round();
    if decimal.len() > 8 && (2.0..=1e6).contains(&reciprocal) && 1.0 / reciprocal == v {
        format!("1/{reciprocal}")
    } else if exponent.len() < decimal.len() {
        exponent
    } else {
        decimal
    }
}

/// An on/off field's row (no range, no rail: a checkbox).
const fn toggle<T>(key: &'static str, label: &'static str, help: &'static str, more: &'static str, access: Access<T>) -> Param<T> {
    Param {
        key,
        label,
        unit: "",
        quantity: "",
        accepted: Bounds::new(0.0, 1.0),
        slider: Bounds::new(0.0, 1.0),
        scale: Scale::Linear,
        shown: Shown::Plain,
        help,
        more,
        access,
    }
}

/// Every field of [`SolverParams`], in the struct's order.
pub static SOLVER: &[Param<SolverParams>] = &[
    Param {
        key: "dt",
        label: "Δt",
        unit: "s",
        quantity: "a time step",
        accepted: Bounds::new(1e-5, 10.0),
        slider: Bounds::new(1.0 / 480.0, 1.0 / 20.0),
        scale: Scale::Logarithmic,
        shown: Shown::milli("ms"),
        help: "Frame step: simulated time per solver frame. Smaller is more accurate but slower.",
        more: "",
        access: access!(Real, dt),
    },
    Param {
        key: "substeps",
        label: "substeps",
        unit: "",
        quantity: "substeps",
        accepted: Bounds::new(1.0, 1000.0),
        slider: Bounds::new(1.0, 200.0),
        scale: Scale::Logarithmic,
        shown: Shown::Plain,
        help: "S, how many small steps each frame is cut into (h = Δt / S). More = stiffer, more accurate cloth, but slower.",
        more: "",
        access: access!(Count, substeps),
    },
    Param {
        key: "iterations",
        label: "iterations",
        unit: "",
        quantity: "iterations",
        accepted: Bounds::new(1.0, 1000.0),
        slider: Bounds::new(1.0, 50.0),
        scale: Scale::Logarithmic,
        shown: Shown::Plain,
        help: "Gauss–Seidel sweeps per substep. Raising substeps usually helps more.",
        more: "",
        access: access!(Count, iterations),
    },
    Param {
        key: "gravity",
        label: "gravity",
        unit: "m/s²",
        quantity: "components",
        accepted: Bounds::new(-100.0, 100.0),
        slider: Bounds::new(-100.0, 100.0),
        scale: Scale::Linear,
        shown: Shown::Plain,
        help: "Gravitational acceleration along x, y, z; Earth's is (0, −9.81, 0).",
        more: "",
        access: access!(Vector, gravity),
    },
    Param {
        key: "constraint_damping",
        label: "constraint damping",
        unit: "N·s/m",
        quantity: "a damping",
        accepted: Bounds::new(0.0, 100.0),
        slider: Bounds::new(0.0, 10.0),
        scale: Scale::Linear,
        shown: Shown::Plain,
        help: "β: calms stretching and bending wobble by damping motion along the constraints only, so it never slows a free fall.",
        more: "See physics.md §3 and [Damping, wind and drag](#damping-wind-and-drag).",
        access: access!(Real, constraint_damping),
    },
    Param {
        key: "air_damping",
        label: "air damping",
        unit: "1/s",
        quantity: "a damping rate",
        accepted: Bounds::new(0.0, 100.0),
        slider: Bounds::new(0.0, 10.0),
        scale: Scale::Linear,
        shown: Shown::Plain,
        help: "k: v ← v · exp(−k h) every substep. Slows every motion a little, free fall included, like moving through thick air.",
        more: "",
        access: access!(Real, air_damping),
    },
    Param {
        key: "wind",
        label: "wind",
        unit: "m/s",
        quantity: "components",
        accepted: Bounds::new(-100.0, 100.0),
        slider: Bounds::new(-100.0, 100.0),
        scale: Scale::Linear,
        shown: Shown::Plain,
        help: "Wind velocity along x, y, z; it pushes the cloth only through the aerodynamic drag.",
        more: "",
        access: access!(Vector, wind),
    },
    Param {
        key: "wind_gust",
        label: "gusts",
        unit: "",
        quantity: "a fraction",
        accepted: Bounds::new(0.0, 1.0),
        slider: Bounds::new(0.0, 1.0),
        scale: Scale::Linear,
        shown: Shown::PERCENT,
        help: "Relative amplitude of the wind's slow gusts: 0 = steady, 1 (100 %) = strong gusts.",
        more: "",
        access: access!(Real, wind_gust),
    },
    Param {
        key: "aerodynamic_drag",
        label: "aerodynamic drag",
        unit: "",
        quantity: "a drag coefficient",
        accepted: Bounds::new(0.0, 10.0),
        slider: Bounds::new(0.0, 3.0),
        scale: Scale::Linear,
        shown: Shown::Plain,
        help: "C_d of the cloth's triangles: how strongly air pushes on its faces (0 = no air forces, 1 ≈ a flat plate).",
        more: "",
        access: access!(Real, aerodynamic_drag),
    },
    Param {
        key: "max_speed",
        label: "max speed",
        unit: "m/s",
        quantity: "a speed",
        accepted: Bounds::new(0.0, 1000.0),
        slider: Bounds::new(0.0, 200.0),
        scale: Scale::Linear,
        shown: Shown::Plain,
        help: "Particle speed limit (0 = none), so a wild drag cannot blow the cloth up.",
        more: "",
        access: access!(Real, max_speed),
    },
    Param {
        key: "collision_thickness",
        label: "collision thickness",
        unit: "m",
        quantity: "a distance",
        accepted: Bounds::new(0.0, 0.5),
        slider: Bounds::new(0.0, 0.05),
        scale: Scale::Linear,
        shown: Shown::milli("mm"),
        help: "Gap kept between the cloth and the colliders or the ground.",
        more: "",
        access: access!(Real, collision_thickness),
    },
    Param {
        key: "max_splits_per_step",
        label: "splits per step",
        unit: "",
        quantity: "splits",
        accepted: Bounds::new(0.0, 1_000_000.0),
        slider: Bounds::new(1.0, 1024.0),
        scale: Scale::Logarithmic,
        shown: Shown::Plain,
        help: "Tear splits per frame at most (0 holds tearing). At 1 a crack runs one vertex a frame and the load shifts onto its tip; a larger budget lets a strained cloth split in many places at once and shred.",
        more: "",
        access: access!(Count, max_splits_per_step),
    },
    Param {
        key: "threads",
        label: "threads",
        unit: "",
        quantity: "threads (0 = auto)",
        accepted: Bounds::new(0.0, MAX_THREADS as f64),
        slider: Bounds::new(0.0, MAX_THREADS as f64),
        scale: Scale::Linear,
        shown: Shown::Plain,
        help: "Solver threads; 0 picks by the cloth's size and the machine's cores. Never more than the machine's cores (more would only wait for each other). A cloth of fewer than 4 096 particles runs on one. Results are bit-identical for every count.",
        more: "`--threads` overrides it.",
        access: access!(Count, threads),
    },
    Param {
        key: "grab_compliance",
        label: "grab compliance",
        unit: "m/N",
        quantity: "a compliance",
        accepted: Bounds::new(0.0, 1.0),
        slider: Bounds::new(0.0, 1e-2),
        scale: Scale::Linear,
        shown: Shown::SiPrefix,
        help: "Compliance of the mouse's soft grab: at the default a 10 N pull leaves the grabbed point 1 mm behind the cursor. 0 holds it as stiffly as the substeps allow.",
        more: "",
        access: access!(Real, grab_compliance),
    },
    Param {
        key: "grab_radius",
        label: "grab radius",
        unit: "m",
        quantity: "a radius",
        accepted: Bounds::new(0.0, 0.5),
        slider: Bounds::new(0.0, 0.2),
        scale: Scale::Linear,
        shown: Shown::milli("mm"),
        help: "The mouse holds the cloth within this distance of the point pressed, like fingers (in the rest shape, reached through the cloth), the nearer the centre the firmer. 0 holds that point alone.",
        more: "",
        access: access!(Real, grab_radius),
    },
    Param {
        key: "grab_max_force",
        label: "grab force",
        unit: "N",
        quantity: "a force",
        accepted: Bounds::new(0.01, 10_000.0),
        slider: Bounds::new(0.1, 1000.0),
        scale: Scale::Logarithmic,
        shown: Shown::Plain,
        help: "The hardest the mouse pulls the cloth (the grab starts at 1 N and firms up while the cloth is below the slip strain).",
        more: "",
        access: access!(Real, grab_max_force),
    },
    Param {
        key: "grab_slip_strain",
        label: "grip slips at",
        unit: "",
        quantity: "a strain",
        accepted: Bounds::new(0.001, 10.0),
        slider: Bounds::new(0.01, 0.5),
        scale: Scale::Linear,
        shown: Shown::PERCENT,
        help: "Strain at which the grip slips: while the cloth's largest strain is past it, the grab's force drops, so a pull beyond the cloth's reach stretches it this far and no further. A cloth that tears never makes it slip: it gives way by tearing.",
        more: "A cloth without pins keeps 1.5 × its weight.",
        access: access!(Real, grab_slip_strain),
    },
    toggle(
        "self_collision",
        "self-collision",
        "The cloth collides with itself: its particles keep the self thickness apart, with friction between layers, so folds lie on each other instead of passing through. Slows fast motion to a fifth of the thickness per substep.",
        "See [Self-collision](#self-collision).",
        access!(Toggle, self_collision),
    ),
    Param {
        key: "self_thickness",
        label: "self thickness",
        unit: "m",
        quantity: "a distance",
        accepted: Bounds::new(1e-3, 0.05),
        slider: Bounds::new(1e-3, 0.05),
        scale: Scale::Logarithmic,
        shown: Shown::milli("mm"),
        help: "Distance kept between layers of the cloth; keep it near the particle spacing (pairs closer at rest keep their rest distance).",
        more: "",
        access: access!(Real, self_thickness),
    },
    Param {
        key: "self_friction",
        label: "self friction",
        unit: "",
        quantity: "a coefficient",
        accepted: Bounds::new(0.0, 10.0),
        slider: Bounds::new(0.0, 2.0),
        scale: Scale::Linear,
        shown: Shown::Plain,
        help: "Coulomb friction between layers of the cloth (static and kinetic alike).",
        more: "",
        access: access!(Real, self_friction),
    },
    toggle(
        "self_vertex_triangle",
        "particles against faces",
        "With self-collision on, particles also keep the thickness from the faces of triangles they are not a corner of, so a layer cannot slip between the particles of a mesh coarser than the thickness.",
        "",
        access!(Toggle, self_vertex_triangle),
    ),
    toggle(
        "self_edge_edge",
        "edges against edges",
        "With self-collision on, edges long enough to pass between particles keep the thickness from each other, so layers cannot cross edge through edge.",
        "",
        access!(Toggle, self_edge_edge),
    ),
];

/// A stiffness multiplier's row (stretch, shear, bending): the same range, their own rail.
const fn multiplier(
    key: &'static str,
    label: &'static str,
    slider: Bounds,
    help: &'static str,
    access: Access<Material>,
) -> Param<Material> {
    Param {
        key,
        label,
        unit: "",
        quantity: "a multiplier",
        accepted: Bounds::new(1e-3, 1e3),
        slider,
        scale: Scale::Logarithmic,
        shown: Shown::Plain,
        help,
        more: "",
        access,
    }
}

/// A friction coefficient's row (static, kinetic).
const fn friction(key: &'static str, label: &'static str, help: &'static str, access: Access<Material>) -> Param<Material> {
    Param {
        key,
        label,
        unit: "",
        quantity: "a coefficient",
        accepted: Bounds::new(0.0, 10.0),
        slider: Bounds::new(0.0, 2.0),
        scale: Scale::Linear,
        shown: Shown::Plain,
        help,
        more: "",
        access,
    }
}

/// Every field of [`Material`], in the struct's order.
pub static MATERIAL: &[Param<Material>] = &[
    Param {
        key: "youngs_modulus",
        label: "Young's modulus E",
        unit: "Pa",
        quantity: "a modulus",
        accepted: Bounds::new(1e3, 1e12),
        slider: Bounds::new(1e4, 1e9),
        scale: Scale::Logarithmic,
        shown: Shown::SiPrefix,
        help: "How hard the fabric resists stretching in its plane, from soft foam to steel (woven cotton ≈ 5 MPa, rubber ≈ 1.5 MPa). Lower = stretchier.",
        more: "",
        access: access!(Real, youngs_modulus),
    },
    Param {
        key: "poisson_ratio",
        label: "Poisson ratio ν",
        unit: "",
        quantity: "a Poisson ratio",
        accepted: Bounds::new(0.0, 0.499),
        slider: Bounds::new(0.0, 0.499),
        scale: Scale::Linear,
        shown: Shown::Plain,
        help: "How much the fabric narrows when stretched; enters the bending rigidity D = E t³ / (12 (1 − ν²)).",
        more: "",
        access: access!(Real, poisson_ratio),
    },
    Param {
        key: "thickness",
        label: "thickness t",
        unit: "m",
        quantity: "a thickness",
        accepted: Bounds::new(1e-5, 0.05),
        slider: Bounds::new(1e-5, 5e-3),
        scale: Scale::Logarithmic,
        shown: Shown::SiPrefix,
        help: "Sheet thickness, a 10 µm film to a 5 cm felt: E t resists stretching and E t³ bending, so thicker cloth stretches less and bends much less.",
        more: "",
        access: access!(Real, thickness),
    },
    Param {
        key: "areal_density",
        label: "areal density ρ_A",
        unit: "kg/m²",
        quantity: "a density",
        accepted: Bounds::new(1e-3, 100.0),
        slider: Bounds::new(0.01, 5.0),
        scale: Scale::Logarithmic,
        shown: Shown::Plain,
        help: "Mass per square metre (tissue 0.02, light cotton 0.15, denim 0.4); particle masses are lumped from the triangle areas.",
        more: "",
        access: access!(Real, areal_density),
    },
    Param {
        key: "compliance_scale",
        label: "compliance scale",
        unit: "",
        quantity: "a factor",
        accepted: Bounds::new(1e-3, 1e4),
        slider: Bounds::new(0.01, 100.0),
        scale: Scale::Logarithmic,
        shown: Shown::Plain,
        help: "Multiplies every compliance: above 1 softens, below 1 stiffens everything at once (1 = the material as given).",
        more: "",
        access: access!(Real, compliance_scale),
    },
    multiplier(
        "stretch_stiffness",
        "stretch ×",
        Bounds::new(0.1, 10.0),
        "Multiplier on the stretch (structural edge) stiffness, along the threads.",
        access!(Real, stretch_stiffness),
    ),
    multiplier(
        "shear_stiffness",
        "shear ×",
        Bounds::new(0.1, 10.0),
        "Multiplier on the shear (diagonal edge) stiffness.",
        access!(Real, shear_stiffness),
    ),
    multiplier(
        "bend_stiffness",
        "bending ×",
        Bounds::new(0.01, 100.0),
        "Multiplier on the bending stiffness: higher = broader, stiffer folds.",
        access!(Real, bend_stiffness),
    ),
    Param {
        key: "stretch_damping_time",
        label: "stretch damping",
        unit: "s",
        quantity: "a time",
        accepted: Bounds::new(0.0, 1.0),
        slider: Bounds::new(0.0, 1e-4),
        scale: Scale::Linear,
        shown: Shown::Scaled {
            factor: 1e6,
            offset: 0.0,
            suffix: "µs",
        },
        help: "τ of the cloth's internal stretch damping: each stretch and shear edge's stretching speed is damped as by a dashpot of τ × its stiffness, so fine cloth stops buzzing after a pull; falling, swinging, folding and flapping are not slowed. 0 = none.",
        more: "See physics.md §3.",
        access: access!(Real, stretch_damping_time),
    },
    friction(
        "friction_static",
        "static friction μs",
        "μ_s against colliders: resting cloth sticks on a slope up to tan θ = μ_s before it slides.",
        access!(Real, friction_static),
    ),
    friction(
        "friction_kinetic",
        "kinetic friction μk",
        "μ_k against colliders: how strongly sliding cloth is slowed.",
        access!(Real, friction_kinetic),
    ),
    Param {
        key: "tear_strain",
        label: "tear strain",
        unit: "",
        quantity: "a strain",
        accepted: Bounds::new(1e-3, 100.0),
        slider: Bounds::new(0.02, 3.0),
        scale: Scale::Logarithmic,
        shown: Shown::PERCENT,
        help: "Engineering strain (l − l0)/l0 at which an edge tears: 0.3 (30 %) tears at 1.3 × its rest length. None never tears.",
        more: "See [Tearing](#tearing).",
        access: access!(OptionalReal, tear_strain),
    },
    Param {
        key: "tear_debilitation",
        label: "debilitation",
        unit: "",
        quantity: "a fraction",
        accepted: Bounds::new(0.0, 0.99),
        slider: Bounds::new(0.0, 0.9),
        scale: Scale::Linear,
        shown: Shown::Plain,
        help: "Fraction of their tear strain the edges at a crack's new tip lose per split that reaches them, so tears run in lines (0 = not at all).",
        more: "",
        access: access!(Real, tear_debilitation),
    },
    Param {
        key: "tear_response_time",
        label: "tear response",
        unit: "s",
        quantity: "a time",
        accepted: Bounds::new(0.0, 10.0),
        slider: Bounds::new(0.0, 1.0),
        scale: Scale::Linear,
        shown: Shown::milli("ms"),
        help: "τ: the strain is averaged over about the last τ seconds before it tears (0 = the frame's alone), so a snap of a frame or two does not tear while a held pull does.",
        more: "",
        access: access!(Real, tear_response_time),
    },
    Param {
        key: "tear_length",
        label: "tear length",
        unit: "m",
        quantity: "a length",
        accepted: Bounds::new(0.0, 1.0),
        slider: Bounds::new(0.0, 0.5),
        scale: Scale::Linear,
        shown: Shown::milli("mm"),
        help: "ℓ: the strain a tear reads is the cloth's, averaged over about ℓ (not one edge's), so a tear starts and runs alike on a coarse and a fine mesh; a corner pulled off comes away about ℓ across. Keep it above the mesh spacing.",
        more: "A border is no weaker than the rest (physics.md §8).",
        access: access!(Real, tear_length),
    },
    toggle(
        "tethers",
        "tethers",
        "Long-range attachments: every point stays within reach of its nearest pins, so a big cloth does not over-stretch near them. Turn off for stretchy materials.",
        "See [Tethers](#tethers).",
        access!(Toggle, tethers),
    ),
    Param {
        key: "tether_slack",
        label: "tether slack",
        unit: "",
        quantity: "a factor",
        accepted: Bounds::new(1.0, 10.0),
        slider: Bounds::new(1.0, 2.0),
        scale: Scale::Linear,
        shown: Shown::Scaled {
            factor: 100.0,
            offset: -1.0,
            suffix: "% slack",
        },
        help: "Factor on every tether's length: 1 (0 % slack) = no stretch beyond the rest distance through the cloth, 1.1 = 10 % allowed.",
        more: "",
        access: access!(Real, tether_slack),
    },
];

/// A grid's extent's row (width, height).
const fn extent(key: &'static str, label: &'static str, help: &'static str, access: Access<GridSpec>) -> Param<GridSpec> {
    Param {
        key,
        label,
        unit: "m",
        quantity: "a length",
        accepted: Bounds::new(0.01, 100.0),
        slider: Bounds::new(0.1, 10.0),
        scale: Scale::Logarithmic,
        shown: Shown::Plain,
        help,
        more: "",
        access,
    }
}

/// A grid's resolution's row (columns, rows).
const fn resolution(key: &'static str, label: &'static str, help: &'static str, access: Access<GridSpec>) -> Param<GridSpec> {
    Param {
        key,
        label,
        unit: "",
        quantity: "particles per side",
        accepted: Bounds::new(2.0, 1024.0),
        slider: Bounds::new(2.0, 256.0),
        scale: Scale::Logarithmic,
        shown: Shown::Plain,
        help,
        more: "",
        access,
    }
}

/// The numbers of a grid ([`GridSpec`]), in the struct's order.
pub static GRID: &[Param<GridSpec>] = &[
    extent("width", "width", "Size along x (a swatch to a sail).", access!(Real, width)),
    extent(
        "height",
        "height",
        "Size down y (`Vertical`) or along z (`Horizontal`).",
        access!(Real, height),
    ),
    resolution("columns", "columns", "Particles along the width.", access!(Count, columns)),
    resolution("rows", "rows", "Particles along the height.", access!(Count, rows)),
    Param {
        key: "origin",
        label: "origin",
        unit: "m",
        quantity: "components",
        accepted: Bounds::new(-1000.0, 1000.0),
        slider: Bounds::new(-1000.0, 1000.0),
        scale: Scale::Linear,
        shown: Shown::Plain,
        help: "Centre of the top edge (`Vertical`) or of the sheet (`Horizontal`).",
        more: "",
        access: access!(Vector, origin),
    },
    Param {
        key: "jitter",
        label: "jitter",
        unit: "m",
        quantity: "a distance",
        accepted: Bounds::new(0.0, 0.01),
        slider: Bounds::new(0.0, 0.01),
        scale: Scale::Linear,
        shown: Shown::milli("mm"),
        help: "Moves each particle off the plane by a fixed pseudo-random amount in [−jitter, jitter] (the same on every build), so a sheet that would fold exactly in its plane buckles.",
        more: "",
        access: access!(Real, jitter),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_a_person_writes_them() {
        assert_eq!(number(1.0 / 60.0), "1/60");
        assert_eq!(number(1.0 / 480.0), "1/480");
        assert_eq!(number(0.05), "0.05");
        assert_eq!(number(5e6), "5e6");
        assert_eq!(number(1e-5), "1e-5");
        assert_eq!(number(-9.81), "-9.81");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(1000.0), "1e3");
        assert_eq!(number(100.0), "100");
        assert_eq!(number(5e-4), "5e-4");
        assert_eq!(number(0.15), "0.15");
    }

    #[test]
    fn messages_name_the_range_and_the_unit() {
        let dt = find(SOLVER, "dt").unwrap();
        assert_eq!(dt.expected(), "a time step in [1e-5, 10] s");
        assert_eq!(find(SOLVER, "substeps").unwrap().expected(), "1 to 1000 substeps");
        assert_eq!(find(SOLVER, "gravity").unwrap().expected(), "components in [-100, 100] m/s²");
        assert_eq!(find(MATERIAL, "youngs_modulus").unwrap().expected(), "a modulus in [1e3, 1e12] Pa");
    }
}
