//! `drape calibrate`: the textile industry's standard drape and bending tests run on a
//! material, so its numbers can be set beside the published ranges of its fabric class
//! (docs/materials.md).
//!
//! Each test is a small headless scene built from the material alone:
//! - [`cusick`]: the Cusick drape test (BS 5058 / ISO 9073-9): a 30 cm circular specimen
//!   clamped on an 18 cm support disc; drape coefficient DC = (S − S_d)/(S_f − S_d) from the
//!   area of its shadow, and the number of nodes (folds) round it;
//! - [`cantilever`]: the cantilever bending test (ASTM D1388): bending length and flexural
//!   rigidity from the overhang at which a strip droops 41.5°;
//! - [`tensile`]: a strip pulled to a few percent strain; the slope of force per width
//!   against strain is the membrane modulus E·t.
//!
//! The materials are those of the shipped material presets ([`MATERIALS`]), or any preset's.

pub mod cantilever;
pub mod cusick;
pub mod report;
pub mod tensile;

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::preset::Preset;
use crate::sim::Material;

/// The shipped material presets, lightest bending first: `presets/<name>.ron`.
pub const MATERIALS: [&str; 5] = ["silk", "cotton", "denim", "leather", "rubber"];

/// A material to calibrate: its preset's `name` and values.
#[derive(Debug, Clone)]
pub struct NamedMaterial {
    /// Name shown in the table, e.g. "Cotton".
    pub name: String,
    /// The material as the preset sets it.
    pub material: Material,
}

/// Reads the material of `name_or_file`: one of [`MATERIALS`] (found in `presets_dir`), or
/// the path of any preset file.
pub fn load_material(name_or_file: &str, presets_dir: &Path) -> anyhow::Result<NamedMaterial> {
    let path = if MATERIALS.contains(&name_or_file.to_ascii_lowercase().as_str()) {
        presets_dir.join(format!("{}.ron", name_or_file.to_ascii_lowercase()))
    } else {
        PathBuf::from(name_or_file)
    };
    let preset = Preset::load(&path).with_context(|| format!("material {name_or_file}"))?;
    let name = preset.name.clone();
    Ok(NamedMaterial {
        name,
        material: preset.material,
    })
}

/// Largest mesh spacing, in bending lengths, at which the Cusick drape coefficient is within a
/// few percent of its converged value (docs/materials.md, "Resolution: the rule").
pub const MAX_SPACING_PER_BENDING_LENGTH: f32 = 0.8;

/// The bending length c = (D/(ρ_A g))^(1/3) in m of `material` under gravity of magnitude
/// `gravity` (m/s²): the length over which the cloth's own weight bends it (infinite without
/// gravity).
pub fn bending_length(material: &Material, gravity: f32) -> f32 {
    (material.bending_rigidity() / (material.areal_density * gravity)).cbrt()
}

/// How finely a cloth's mesh resolves its material's folds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FoldResolution {
    /// Mean rest length of the stretch edges, m.
    pub spacing: f32,
    /// The material's bending length, m ([`bending_length`]).
    pub bending_length: f32,
}

impl FoldResolution {
    /// The cells of `spacing` (m) against `material`'s bending length under gravity `gravity`
    /// (m/s²).
    pub fn new(spacing: f32, material: &Material, gravity: f32) -> Self {
        Self {
            spacing,
            bending_length: bending_length(material, gravity),
        }
    }

    /// Measures `model` ([`mean_stretch_spacing`]) against `material` under gravity `gravity`
    /// (m/s²); `None` for a model without stretch edges.
    pub fn of(model: &crate::sim::Model, material: &Material, gravity: f32) -> Option<Self> {
        mean_stretch_spacing(model).map(|spacing| Self::new(spacing, material, gravity))
    }

    /// Whether the spacing is at most [`MAX_SPACING_PER_BENDING_LENGTH`] bending lengths.
    pub fn resolves_folds(&self) -> bool {
        self.spacing <= MAX_SPACING_PER_BENDING_LENGTH * self.bending_length
    }
}

/// Mean rest length in m of `model`'s stretch edges (its mesh spacing); `None` without any.
pub fn mean_stretch_spacing(model: &crate::sim::Model) -> Option<f32> {
    let (sum, count) = model
        .distances
        .iter()
        .filter(|d| d.kind == crate::sim::EdgeKind::Stretch)
        .fold((0.0f64, 0usize), |(sum, count), d| (sum + f64::from(d.rest), count + 1));
    (count > 0).then(|| (sum / count as f64) as f32)
}
