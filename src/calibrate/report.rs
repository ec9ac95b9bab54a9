//! The three tests run on one material, set beside the published ranges of its fabric class
//! (docs/materials.md gives the sources), as the table and JSON `drape calibrate` prints.

use serde::Serialize;

use super::cantilever::{run_cantilever, CantileverSetup};
use super::cusick::{run_cusick, CusickSetup};
use super::tensile::{run_tensile, TensileSetup};
use super::NamedMaterial;
use crate::sim::SimError;

/// A published range (low, high) of one measure for one fabric class.
pub type Range = (f32, f32);

/// The published ranges of one fabric class (docs/materials.md, "Published ranges").
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FabricClass {
    /// The shipped material preset it belongs to (its file stem).
    pub material: &'static str,
    /// Cusick drape coefficient (dimensionless).
    pub drape_coefficient: Range,
    /// ASTM D1388 bending length, m.
    pub bending_length: Range,
}

/// The fabric classes of the shipped materials (rubber sheet is not a textile: no published
/// drape or cantilever figures, so it has none).
pub const FABRIC_CLASSES: [FabricClass; 4] = [
    FabricClass {
        material: "silk",
        drape_coefficient: (0.25, 0.50),
        bending_length: (0.010, 0.016),
    },
    FabricClass {
        material: "cotton",
        drape_coefficient: (0.55, 0.75),
        bending_length: (0.015, 0.025),
    },
    FabricClass {
        material: "denim",
        drape_coefficient: (0.70, 0.90),
        bending_length: (0.025, 0.040),
    },
    FabricClass {
        material: "leather",
        drape_coefficient: (0.85, 0.98),
        bending_length: (0.035, 0.070),
    },
];

/// The published ranges for the material called `name` (case-insensitive), if it has any.
pub fn fabric_class(name: &str) -> Option<&'static FabricClass> {
    FABRIC_CLASSES.iter().find(|class| class.material.eq_ignore_ascii_case(name))
}

/// One material's results, with the published ranges of its class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// Material name.
    pub material: String,
    /// Cusick drape coefficient, dimensionless.
    pub drape_coefficient: f32,
    /// Cusick nodes (folds).
    pub nodes: u32,
    /// ASTM D1388 bending length, m.
    pub bending_length: f32,
    /// Flexural rigidity G = ρ_A g c³, N·m.
    pub flexural_rigidity: f32,
    /// The bending length of the material's own rigidity D, (D/(ρ_A g))^(1/3), m.
    pub material_bending_length: f32,
    /// Tensile stiffness measured (force per width over strain), N/m.
    pub tensile_stiffness: f32,
    /// The material's membrane modulus E·t, N/m.
    pub membrane_modulus: f32,
    /// Published ranges of its fabric class, if any.
    pub published: Option<FabricClass>,
    /// Kinetic energy of the Cusick specimen when measured, J: near 0 once it has come to rest.
    pub cusick_kinetic_energy: f32,
    /// Kinetic energy of the cantilever strip when measured, J (at the test's scaled mass,
    /// [`CantileverSetup::mass_scale`]): near 0 once it has come to rest.
    pub cantilever_kinetic_energy: f32,
}

/// Runs the Cusick, cantilever and tensile tests on `material` at their default settings.
pub fn calibrate(material: &NamedMaterial) -> Result<Calibration, SimError> {
    let m = &material.material;
    let cusick = run_cusick(m, &CusickSetup::default())?;
    let cantilever = run_cantilever(m, &CantileverSetup::default())?;
    let tensile = run_tensile(m, &TensileSetup::default())?;
    Ok(Calibration {
        material: material.name.clone(),
        drape_coefficient: cusick.drape_coefficient,
        nodes: cusick.nodes,
        bending_length: cantilever.bending_length,
        flexural_rigidity: cantilever.flexural_rigidity,
        material_bending_length: cantilever.material_bending_length,
        tensile_stiffness: tensile.stiffness,
        membrane_modulus: tensile.expected,
        published: fabric_class(&material.name).copied(),
        cusick_kinetic_energy: cusick.kinetic_energy,
        cantilever_kinetic_energy: cantilever.kinetic_energy,
    })
}

/// `value` formatted, with "  (low–high)" and a mark when outside a range, else "  (–)".
fn beside(value: f32, range: Option<Range>, scale: f32, decimals: usize) -> String {
    match range {
        Some((low, high)) => {
            let mark = if (low..=high).contains(&value) { " " } else { "!" };
            format!(
                "{:.d$}{mark} ({:.d$}–{:.d$})",
                value * scale,
                low * scale,
                high * scale,
                d = decimals
            )
        }
        None => format!("{:.d$}  (–)", value * scale, d = decimals),
    }
}

/// The table `drape calibrate` prints: one row per material, each measure beside its
/// published range ("!" marks a value outside it).
pub fn table(rows: &[Calibration]) -> String {
    let mut out = format!(
        "{:<10} {:<20} {:>5} {:<22} {:>10} {:>14}\n",
        "material", "drape coeff. (pub.)", "nodes", "bending length cm", "G µN·m", "E·t N/m (set)"
    );
    for row in rows {
        let class = row.published;
        out += &format!(
            "{:<10} {:<20} {:>5} {:<22} {:>10.2} {:>6.0} ({:.0})\n",
            row.material,
            beside(row.drape_coefficient, class.map(|c| c.drape_coefficient), 1.0, 2),
            row.nodes,
            beside(row.bending_length, class.map(|c| c.bending_length), 100.0, 2),
            row.flexural_rigidity * 1e6,
            row.tensile_stiffness,
            row.membrane_modulus,
        );
    }
    out
}
