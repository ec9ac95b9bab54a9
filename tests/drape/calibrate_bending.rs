//! The cantilever bending test (ASTM D1388, `drape::calibrate::cantilever`): the heavy
//! elastica against its closed forms, and the fold check (the simulated strips against the
//! elastica: calibrate.rs, with the other two tests).

use drape::calibrate::cantilever::{astm_overhang_ratio, bending_length_from_angle, elastica_angle, elastica_tip, ASTM_ANGLE_DEGREES};

#[test]
fn a_short_heavy_cantilever_drops_as_the_linear_beam() {
    // Tip drop w L⁴/(8 G) = L (L/c)³/8 while the droop is small.
    for ratio in [0.1, 0.2, 0.3] {
        let c = 0.02;
        let length = ratio * c;
        let (_, drop) = elastica_tip(length, c);
        let linear = length * ratio.powi(3) / 8.0;
        assert!((drop / linear - 1.0).abs() < 5e-3, "L/c {ratio}: {drop} against {linear}");
    }
}

#[test]
fn the_astm_angle_is_reached_at_twice_the_bending_length() {
    // ASTM D1388 takes c = overhang/2 at 41.5° (Peirce's choice of angle).
    let ratio = astm_overhang_ratio();
    assert!((ratio - 2.0).abs() < 0.01, "overhang at 41.5° = {ratio} c");
    assert!((elastica_angle(2.0, 1.0) - ASTM_ANGLE_DEGREES).abs() < 0.2);
}

#[test]
fn the_bending_length_read_from_an_angle_gives_that_angle_back() {
    for angle in [10.0, 41.5, 60.0] {
        let c = bending_length_from_angle(0.05, angle);
        assert!((elastica_angle(0.05, c) - angle).abs() < 1e-3, "{angle}° → c {c}");
    }
}

#[test]
fn the_fold_check_compares_the_cells_with_the_bending_length() {
    use drape::calibrate::{bending_length, FoldResolution, MAX_SPACING_PER_BENDING_LENGTH};
    use drape::sim::{GridSpec, Material, Orientation, PinMode};
    // Cotton: D = E t³/(12(1 − ν²)) = 9.91e-6 N·m, ρ_A g = 1.4715 N/m², c = 1.889 cm.
    let cotton = Material {
        youngs_modulus: 5.5e6,
        poisson_ratio: 0.3,
        thickness: 0.00027,
        areal_density: 0.15,
        ..Material::default()
    };
    let c = bending_length(&cotton, 9.81);
    assert!((c - 0.01889).abs() < 1e-5, "c = {c}");
    let sheet = |columns: u32| {
        let grid = GridSpec {
            width: 1.2,
            height: 1.2,
            columns,
            rows: columns,
            orientation: Orientation::Horizontal,
            pins: PinMode::None,
            ..GridSpec::default()
        };
        FoldResolution::of(&grid.build().unwrap(), &cotton, 9.81).unwrap()
    };
    // The 36 × 36 over 1.2 m the material presets had: 3.43 cm cells, 1.8 c.
    let coarse = sheet(36);
    assert!((coarse.spacing - 1.2 / 35.0).abs() < 1e-4, "{coarse:?}");
    assert!(!coarse.resolves_folds());
    // Just inside and just outside 0.8 c.
    let inside = (1.2 / (MAX_SPACING_PER_BENDING_LENGTH * c * 0.98)).ceil() as u32 + 1;
    assert!(sheet(inside).resolves_folds(), "{:?}", sheet(inside));
    let outside = (1.2 / (MAX_SPACING_PER_BENDING_LENGTH * c * 1.05)).floor() as u32 + 1;
    assert!(!sheet(outside).resolves_folds(), "{:?}", sheet(outside));
}
