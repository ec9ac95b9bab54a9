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
