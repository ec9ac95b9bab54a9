//! Live parameter changes: stiffness edits ramp in over a few frames instead of jerking the
//! cloth, and every field can change between steps without a rebuild.

use glam::Vec3;

use super::cloth::Cloth;
use super::grid::GridSpec;
use super::params::{Material, SolverParams};

fn settled_curtain() -> (Cloth, SolverParams, Material) {
    let spec = GridSpec {
        columns: 16,
        rows: 16,
        bending: false,
        ..GridSpec::default()
    };
    // No tethers: the test needs a curtain stretched by its own weight, which tethers forbid.
    let material = Material {
        youngs_modulus: 5.0e4,
        tethers: false,
        ..Material::default()
    };
    let params = SolverParams {
        air_damping: 2.0,
        ..SolverParams::default()
    };
    let mut cloth = Cloth::new(spec.build().unwrap(), &material, Vec::new()).unwrap();
    for _ in 0..240 {
        cloth.step(&params, &material).unwrap();
    }
    (cloth, params, material)
}

/// Largest velocity change of any particle over the next `frames` frames.
fn peak_jerk(cloth: &mut Cloth, params: &SolverParams, material: &Material, frames: usize) -> f32 {
    let mut peak = 0.0f32;
    for _ in 0..frames {
        let before: Vec<Vec3> = (0..cloth.particles().len()).map(|i| cloth.particles().velocity(i)).collect();
        cloth.step(params, material).unwrap();
        let change = before
            .iter()
            .enumerate()
            .map(|(i, v)| (cloth.particles().velocity(i) - *v).length())
            .fold(0.0, f32::max);
        peak = peak.max(change);
    }
    peak
}

#[test]
fn a_hundredfold_stiffer_material_ramps_in_without_a_jerk() {
    // The soft curtain hangs stretched by tens of percent; made 100× stiffer at once it would
    // snap back within a frame.
    let (mut ramped, params, material) = settled_curtain();
    let mut immediate = ramped.clone();
    let stiffer = Material {
        youngs_modulus: material.youngs_modulus * 100.0,
        ..material.clone()
    };
    let ramped_peak = peak_jerk(&mut ramped, &params, &stiffer, 30);
    immediate.set_material_now(&stiffer).unwrap();
    let immediate_peak = peak_jerk(&mut immediate, &params, &stiffer, 30);
    assert!(
        ramped_peak < 0.25 * immediate_peak,
        "ramped {ramped_peak} m/s vs immediate {immediate_peak} m/s"
    );
    assert_eq!(ramped.applied_material(), &stiffer, "the ramp reaches the requested material");
}

#[test]
fn solver_parameters_change_between_steps_without_rebuilding() {
    let (mut cloth, params, material) = settled_curtain();
    let particles = cloth.particles().len();
    let variants = [
        SolverParams {
            dt: 1.0 / 120.0,
            ..params.clone()
        },
        SolverParams {
            substeps: 3,
            iterations: 4,
            ..params.clone()
        },
        SolverParams {
            constraint_damping: 5.0,
            ..params.clone()
        },
        SolverParams {
            gravity: Vec3::new(2.0, -9.81, 0.0),
            ..params.clone()
        },
        SolverParams {
            air_damping: 0.0,
            max_speed: 0.0,
            ..params.clone()
        },
    ];
    for variant in &variants {
        for _ in 0..5 {
            cloth.step(variant, &material).unwrap();
        }
        assert_eq!(cloth.particles().len(), particles);
        assert!(cloth.particles().positions().all(|p| p.is_finite()));
    }
    // Gravity with a sideways component swings the curtain sideways: the change took effect.
    assert!(cloth.particles().positions().map(|p| p.x).sum::<f32>() > 0.0);
}
