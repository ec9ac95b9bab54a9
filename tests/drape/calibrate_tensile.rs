//! The strip tensile test of issue 37 ([`drape::calibrate::tensile`]) against its closed form:
//! the slope of force per width against strain is the membrane modulus E·t.

use std::path::Path;

use drape::calibrate::tensile::{run_tensile, TensileResult, TensileSetup};
use drape::calibrate::MATERIALS;
use drape::sim::Material;

fn material(name: &str) -> Material {
    drape::calibrate::load_material(name, Path::new(env!("CARGO_MANIFEST_DIR")).join("presets").as_path())
        .unwrap()
        .material
}

fn pulled(material: &Material) -> TensileResult {
    run_tensile(material, &TensileSetup::default()).unwrap()
}

/// Relative difference of `a` from `b`.
fn off(a: f32, b: f32) -> f32 {
    (a / b - 1.0).abs()
}

#[test]
fn every_material_preset_pulls_at_its_membrane_modulus() {
    // Silk (391 N/m) to leather (12 000 N/m), light to heavy: the substep and the settling time
    // follow the material.
    for name in MATERIALS {
        let result = pulled(&material(name));
        assert!(off(result.stiffness, result.expected) < 0.02, "{name}: {result:?}");
        for &(strain, force) in &result.points {
            assert!(off(force / strain, result.stiffness) < 0.02, "{name} not linear: {result:?}");
        }
    }
}

#[test]
fn whole_strip_carries_its_side_edges_extra_width() {
    // The side lines of structural edges bound one cell each yet are full-stiffness: 3a/4 of
    // extra width, 7.5 % on 5 mm cells over 5 cm.
    let setup = TensileSetup::default();
    let result = pulled(&material("cotton"));
    let extra = 0.75 * setup.spacing / setup.width;
    assert!(off(result.strip_stiffness / result.stiffness, 1.0 + extra) < 0.01, "{result:?}");
}

#[test]
fn the_slope_follows_the_edges_stiffness() {
    let cotton = material("cotton");
    let base = pulled(&cotton).stiffness;
    // Both multipliers doubled: every in-plane edge twice as stiff, the membrane twice as stiff.
    let doubled = pulled(&Material {
        stretch_stiffness: 2.0,
        shear_stiffness: 2.0,
        ..cotton.clone()
    });
    assert!(off(doubled.stiffness, 2.0 * base) < 0.02, "{base} then {doubled:?}");
    // The structural edges alone doubled: stiffer, but not twice (the diagonals carry part of
    // the load), and outside E·t: the test sees a wrong modulus.
    let stretch = pulled(&Material {
        stretch_stiffness: 2.0,
        ..cotton
    });
    assert!(off(stretch.stiffness, stretch.expected) > 0.2, "{stretch:?}");
    assert!(stretch.stiffness < 1.9 * base, "{base} then {stretch:?}");
}
