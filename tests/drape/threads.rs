//! Thread counts through the public API: a cloth large enough to be split (more than 4 096
//! particles), torn while it runs, must give bit-identical positions on one and two threads.

use std::time::{Duration, Instant};

use drape::sim::{Cloth, Collider, GridSpec, Material, SolverParams};
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
    let cloth = Cloth::new(spec.build().unwrap(), &material, vec![Collider::Ground { height: 0.0 }]).unwrap();
    assert!(cloth.particles().len() > 4096);
    (cloth, material, spec)
}

/// What a run leaves: torn edges, pieces, every position, and how many of its steps ran on
/// two threads (a step finds the solver pool busy when another test holds it, and then runs
/// on one: the same arithmetic, so the positions must not care).
struct Run {
    torn: usize,
    pieces: usize,
    positions: Vec<Vec3>,
    two_thread_steps: usize,
}

/// Grabs a bottom particle and yanks it down and sideways for 40 frames, tearing the
/// curtain, on `threads` threads.
fn yank(threads: u32) -> Run {
    let (mut cloth, material, spec) = tearable_curtain();
    let params = SolverParams {
        threads,
        ..SolverParams::default()
    };
    assert_eq!(cloth.threads_used(&params), threads, "the curtain is large enough to split");
    let grabbed = spec.index(spec.columns / 2, spec.rows - 1); // the bottom edge's middle
    let start = cloth.particles().position(grabbed as usize);
    cloth.grab(grabbed).unwrap();
    let mut two_thread_steps = 0;
    for frame in 0..40 {
        cloth.drag_to(start + Vec3::new(0.02, -0.03, 0.01) * frame as f32);
        let stats = cloth.step(&params, &material).unwrap();
        two_thread_steps += usize::from(stats.threads == 2);
    }
    Run {
        torn: cloth.torn_edges(),
        pieces: cloth.piece_count(),
        positions: cloth.particles().positions().collect(),
        two_thread_steps,
    }
}

#[test]
fn a_torn_curtain_of_5120_particles_is_bit_identical_on_one_and_two_threads() {
    let one = yank(1);
    assert!(one.torn > 0, "the yank should tear the curtain");
    assert!(one.positions.iter().all(|p| p.is_finite()));
    assert_eq!(one.two_thread_steps, 0);
    // Another test may hold the pool for a while (realism's 256² curtain steps on two threads
    // for most of a minute on a busy machine): trying for two minutes makes a two-thread step
    // certain.
    let deadline = Instant::now() + Duration::from_secs(120);
    let two = std::iter::repeat_with(|| yank(2))
        .find(|run| run.two_thread_steps > 0 || Instant::now() > deadline)
        .filter(|run| run.two_thread_steps > 0)
        .expect("no step ran on two threads in two minutes");
    assert_eq!((one.torn, one.pieces), (two.torn, two.pieces), "torn edges and pieces");
    let first_difference = one.positions.iter().zip(&two.positions).position(|(a, b)| a != b);
    assert_eq!(first_difference, None, "particle positions differ between one and two threads");
}
