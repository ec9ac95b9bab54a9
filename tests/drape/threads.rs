//! Thread counts through the public API: a cloth large enough to be split (more than 4 096
//! particles), torn while it runs, and the tmp15 workload must give bit-identical positions on
//! every thread count from 1 to 8, each step running on as many threads as it asked for. (On
//! a 2-core machine the oversubscribed runs are slow but must still be exact.)

use drape::headless::{tmp15_cloth, tmp15_material, tmp15_params};
use drape::sim::{Cloth, Collider, GridSpec, Material, SolverParams, TriangleHit, MAX_THREADS};
use glam::Vec3;

/// An 80 × 64 curtain (5 120 particles, about 33 000 constraints) over the ground, pinned at
/// its top corners, with tearing at 20 % strain.
fn tearable_curtain() -> (Cloth, Material, GridSpec) {
    let spec = GridSpec {
        columns: 80,
        rows: 64,
        origin: Vec3::new(0.0, 1.5, 0.0),
        ..GridSpec::default()
    };
    let material = Material {
        tear_strain: Some(0.2),
        ..Material::default()
    };
    let cloth = Cloth::new(
        spec.build().unwrap(),
        &material,
        vec![Collider::Ground { height: 0.0, motion: None }],
    )
    .unwrap();
    assert!(cloth.particles().len() > 4096);
    (cloth, material, spec)
}

/// What a run leaves: torn edges, pieces and every position.
#[derive(PartialEq)]
struct Run {
    torn: usize,
    pieces: usize,
    positions: Vec<Vec3>,
}

impl Run {
    fn of(cloth: &Cloth) -> Self {
        Run {
            torn: cloth.torn_edges(),
            pieces: cloth.piece_count(),
            positions: cloth.particles().positions().collect(),
        }
    }
}

/// Steps `cloth` once and checks the step ran on `threads` threads.
fn step_on(cloth: &mut Cloth, params: &SolverParams, material: &Material) {
    let stats = cloth.step(params, material).unwrap();
    assert_eq!(stats.threads, params.threads, "the step ran on the threads it asked for");
}

/// Grabs a bottom particle (hard, or `soft`ly at a point of a triangle next to it) and yanks it
/// down and sideways for 40 frames, tearing the curtain, on `threads` threads.
fn yank(threads: u32, soft: bool) -> Run {
    let (mut cloth, material, spec) = tearable_curtain();
    let params = SolverParams {
        threads,
        ..SolverParams::default()
    };
    assert_eq!(cloth.threads_used(&params), threads, "the curtain is large enough to split");
    let grabbed = spec.index(spec.columns / 2, spec.rows - 1); // the bottom edge's middle
    let start = cloth.particles().position(grabbed as usize);
    if soft {
        let triangle = cloth.triangles().iter().position(|t| t.contains(&grabbed)).unwrap() as u32;
        let barycentric = [0.5, 0.3, 0.2];
        cloth.grab_point(TriangleHit { triangle, barycentric }).unwrap();
    } else {
        cloth.grab(grabbed).unwrap();
    }
    for frame in 0..40 {
        cloth.drag_to(start + Vec3::new(0.02, -0.03, 0.01) * frame as f32);
        step_on(&mut cloth, &params, &material);
    }
    Run::of(&cloth)
}

#[test]
fn a_torn_curtain_of_5120_particles_is_bit_identical_on_1_to_8_threads() {
    torn_curtain_is_bit_identical(false);
}

/// The same with the soft grab, solved in the tail between barriers (by thread 0).
#[test]
fn a_softly_grabbed_torn_curtain_is_bit_identical_on_1_to_8_threads() {
    torn_curtain_is_bit_identical(true);
}

fn torn_curtain_is_bit_identical(soft: bool) {
    let one = yank(1, soft);
    assert!(one.torn > 0, "the yank should tear the curtain");
    assert!(one.positions.iter().all(|p| p.is_finite()));
    for threads in 2..=8 {
        let run = yank(threads, soft);
        assert_eq!(
            (run.torn, run.pieces),
            (one.torn, one.pieces),
            "{threads} threads: torn edges and pieces"
        );
        let first_difference = one.positions.iter().zip(&run.positions).position(|(a, b)| a != b);
        assert_eq!(first_difference, None, "{threads} threads: positions differ from one thread's");
    }
}

/// 60 frames of tmp15 on a 64 × 64 grid (its 24 000 constraints cut into the most parts).
fn tmp15(threads: u32) -> Run {
    let mut cloth = tmp15_cloth(64).unwrap();
    let params = tmp15_params(15, 1, threads);
    let material = tmp15_material();
    for _ in 0..60 {
        step_on(&mut cloth, &params, &material);
    }
    Run::of(&cloth)
}

#[test]
fn tmp15_is_bit_identical_on_1_to_8_threads() {
    let one = tmp15(1);
    for threads in 2..=8 {
        assert!(tmp15(threads) == one, "{threads} threads: positions differ from one thread's");
    }
}

#[test]
fn more_threads_than_the_engine_can_use_are_refused_with_the_range() {
    let params = SolverParams {
        threads: MAX_THREADS as u32 + 1,
        ..SolverParams::default()
    };
    let message = params.validate().unwrap_err().to_string();
    assert!(message.contains("threads") && message.contains("16"), "{message}");
    // A cloth too small to split runs on one thread whatever is asked.
    let small = tmp15_cloth(32).unwrap();
    let eight = SolverParams {
        threads: 8,
        ..SolverParams::default()
    };
    assert_eq!(small.threads_used(&eight), 1);
}
