//! Issue 37's standard tests against their limits and closed forms: the Cusick drape test
//! (a stiff plate stays flat, DC rises with bending rigidity and converges as the mesh is
//! refined, the shadow's area and the node count of known shapes), and the fabric presets
//! through all three tests against their published ranges.

use std::f32::consts::{PI, TAU};

use drape::calibrate::cusick::{count_nodes, run_cusick, specimen, CusickSetup, Shadow, OUTLINE_BINS};
use drape::sim::Material;
use glam::Vec2;

/// Cotton as `presets/cotton.ron` sets it, with thickness `t` in m (bending rigidity ∝ t³).
fn cotton_of_thickness(t: f32) -> Material {
    Material {
        youngs_modulus: 5.5e6 * 2.7e-4 / t,
        thickness: t,
        areal_density: 0.15,
        ..Material::default()
    }
}

#[test]
fn the_specimen_is_a_uniform_near_equilateral_mesh() {
    let setup = CusickSetup::default();
    let s = specimen(&setup);
    let p = &s.mesh.positions;
    for tri in &s.mesh.triangles {
        for k in 0..3 {
            let len = p[tri[k] as usize].distance(p[tri[(k + 1) % 3] as usize]);
            assert!(
                (0.6 * setup.spacing..1.5 * setup.spacing).contains(&len),
                "edge of {len} m at spacing {}",
                setup.spacing
            );
        }
    }
    let outer = p.iter().map(|q| q.length()).fold(0.0, f32::max);
    assert!((outer - 0.15).abs() < 1e-5, "specimen radius {outer}");
    s.mesh.check().expect("a manifold mesh wound alike");
}

#[test]
fn a_flat_specimen_measures_one_and_has_no_nodes() {
    let setup = CusickSetup {
        seconds: 0.0,
        ..CusickSetup::default()
    };
    let flat = run_cusick(&cotton_of_thickness(2.7e-4), &setup).unwrap();
    assert!((flat.drape_coefficient - 1.0).abs() < 1e-6, "{flat:?}");
    assert_eq!(flat.nodes, 0, "{flat:?}");
}

#[test]
fn a_thick_stiff_plate_stays_nearly_flat() {
    let leather = Material {
        youngs_modulus: 2.0e7,
        poisson_ratio: 0.4,
        thickness: 5.0e-3,
        areal_density: 0.4,
        ..Material::default()
    };
    let result = run_cusick(&leather, &CusickSetup::default()).unwrap();
    assert!(result.drape_coefficient >= 0.95, "{result:?}");
    assert!(result.kinetic_energy < 1e-6, "not at rest: {result:?}");
}

#[test]
fn the_drape_coefficient_rises_with_bending_rigidity() {
    let setup = CusickSetup::default();
    let dc: Vec<f32> = [1.0e-4, 2.7e-4, 5.0e-4]
        .map(|t| run_cusick(&cotton_of_thickness(t), &setup).unwrap().drape_coefficient)
        .to_vec();
    // Well below the stiff plate's 0.95; a 1 cm mesh cannot fold a sheet of 7 mm bending
    // length as finely as it would (DC 0.51 here).
    assert!(dc[0] < 0.6, "a limp sheet hangs: DC {dc:?}");
    assert!(dc[0] < dc[1] && dc[1] < dc[2], "DC not monotone in rigidity: {dc:?}");
}

#[test]
fn the_drape_coefficient_converges_as_the_mesh_is_refined() {
    let cotton = cotton_of_thickness(2.7e-4);
    let dc: Vec<f32> = [0.02, 0.015, 0.01]
        .map(|spacing| {
            let setup = CusickSetup {
                spacing,
                ..CusickSetup::default()
            };
            run_cusick(&cotton, &setup).unwrap().drape_coefficient
        })
        .to_vec();
    assert!((dc[2] - dc[1]).abs() < (dc[1] - dc[0]).abs(), "DC at 2, 1.5 and 1 cm: {dc:?}");
    // The rule's claim (docs/materials.md): at 0.8 bending lengths (1.5 cm for cotton) DC is
    // within a few percent of the finer mesh's.
    assert!((dc[2] - dc[1]).abs() < 0.03 * dc[2], "DC at 2, 1.5 and 1 cm: {dc:?}");
}

#[test]
fn the_shadow_of_a_disc_and_a_square_has_their_area() {
    let pixel = 5.0e-4;
    // A disc of radius 0.15 m as a fan of 2 000 triangles (its polygon's area is π R² to 2e-6).
    let n = 2000;
    let centre = Vec2::new(0.013, -0.007);
    let mut points = vec![centre];
    points.extend((0..n).map(|k| centre + 0.15 * Vec2::from_angle(TAU * k as f32 / n as f32)));
    let fan: Vec<[u32; 3]> = (0..n).map(|k| [0, 1 + k, 1 + (k + 1) % n]).collect();
    let disc = Shadow::of_triangles(&points, &fan, pixel).area();
    assert!((disc / (PI * 0.15 * 0.15) - 1.0).abs() < 0.005, "disc {disc} m²");
    // A square of side 0.2 m turned by 30°, as two triangles wound opposite ways.
    let corners: Vec<Vec2> = [(0.0, 0.0), (0.2, 0.0), (0.2, 0.2), (0.0, 0.2)]
        .map(|(x, y)| Vec2::from_angle(PI / 6.0).rotate(Vec2::new(x, y)))
        .to_vec();
    let square = Shadow::of_triangles(&corners, &[[0, 1, 2], [0, 3, 2]], pixel).area();
    assert!((square / 0.04 - 1.0).abs() < 0.005, "square {square} m²");
}

#[test]
fn an_outline_of_k_lobes_has_k_nodes() {
    for k in 4..=9 {
        let outline: Vec<f32> = (0..OUTLINE_BINS)
            .map(|i| {
                let phi = TAU * i as f32 / OUTLINE_BINS as f32;
                0.12 + 0.02 * (k as f32 * phi + 0.3).cos()
            })
            .collect();
        assert_eq!(count_nodes(&outline, 0.003), k, "{k} lobes");
    }
    // A ripple below the prominence is no node.
    let ripple: Vec<f32> = (0..OUTLINE_BINS).map(|i| 0.15 + 1e-4 * (i as f32).sin()).collect();
    assert_eq!(count_nodes(&ripple, 0.003), 0);
}

/// Issue 37's table as a test: the four fabric presets through `drape calibrate`'s three tests,
/// each drape coefficient and bending length inside its class's published range (the one
/// number docs/materials.md says is out, denim's bending length, is checked to be out and
/// still said there), both measures ordered silk < cotton < denim < leather, each
/// cantilever's bending length within 5 % of the elastica's for the material's rigidity
/// (docs/materials.md, "What the cantilever reads"; measured from the clamp column instead of
/// the half cell behind it, cotton read 0.85), each tensile slope within 2 % of E·t, and the
/// strip and the specimen at rest when measured.
#[cfg(not(debug_assertions))]
#[test]
fn the_fabric_presets_land_in_their_published_ranges_in_order() {
    use drape::calibrate::load_material;
    use drape::calibrate::report::{calibrate, fabric_class};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs = std::fs::read_to_string(root.join("docs/materials.md")).unwrap();
    let names = ["silk", "cotton", "denim", "leather"];
    let rows: Vec<_> = names
        .iter()
        .map(|name| calibrate(&load_material(name, &root.join("presets")).unwrap()).unwrap())
        .collect();
    for (row, name) in rows.iter().zip(names) {
        let class = fabric_class(name).unwrap();
        let inside = |value: f32, (low, high): (f32, f32)| (low..=high).contains(&value);
        assert!(inside(row.drape_coefficient, class.drape_coefficient), "{name}: DC {row:?}");
        let documented_out = name == "denim";
        assert_eq!(
            inside(row.bending_length, class.bending_length),
            !documented_out,
            "{name}: c {row:?}"
        );
        assert!(
            (row.bending_length / row.material_bending_length - 1.0).abs() <= 0.05,
            "{name}: {row:?}"
        );
        assert!((row.tensile_stiffness / row.membrane_modulus - 1.0).abs() < 0.02, "{name}: {row:?}");
        // Measured at rest: the strip's settle check and the specimen's damping did their work.
        assert!(row.cantilever_kinetic_energy < 1e-9, "{name}: strip not at rest {row:?}");
        assert!(row.cusick_kinetic_energy < 1e-6, "{name}: specimen not at rest {row:?}");
    }
    assert!(
        docs.contains("**denim's bending length**"),
        "docs/materials.md says why denim's c is out"
    );
    for pair in rows.windows(2) {
        assert!(pair[0].drape_coefficient < pair[1].drape_coefficient, "DC order: {pair:?}");
        assert!(pair[0].bending_length < pair[1].bending_length, "c order: {pair:?}");
    }
}
