//! Thread counts through the public API: a cloth large enough to be split (more than 4 096
//! particles), torn while it runs, and the tmp15 workload must give bit-identical positions on
//! every thread count from 1 to 8 (tmp15 also 16), each step running on as many threads as it
//! asked for. A step never uses more threads than the machine has cores, so these tests assume
//! a 16-core machine ([`with_assumed_cores`]): on 2 cores the oversubscribed runs are slow
//! (their waits sleep) but must still be exact. And the cap itself, on any machine.

use drape::headless::{tmp15_cloth, tmp15_material, tmp15_params};
use drape::sim::{available_cores, with_assumed_cores, Cloth, Collider, GridSpec, Material, SolverParams, TriangleHit, MAX_THREADS};
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
/// down and sideways for 20 frames, tearing the curtain, on `threads` threads.
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
    // 20 frames (it ran 40): the first edge tears at frame 4 and 17 have torn by frame 20,
    // with self-contacts in most frames from 8 on (measured on one thread), so the split
    // threads solve a tearing cloth for 16 frames. The later frames cost the most (0.4-0.8 s
    // each on one thread, nearly all of it the self-contact pass on the stretched curtain):
    // 40 frames on 1 to 8 threads took 274 s in the suite.
    for frame in 0..20 {
        cloth.drag_to(start + Vec3::new(0.02, -0.03, 0.01) * frame as f32);
        step_on(&mut cloth, &params, &material);
    }
    Run::of(&cloth)
}

#[test]
fn a_torn_curtain_of_5120_particles_is_bit_identical_on_1_to_8_threads() {
    with_assumed_cores(MAX_THREADS, || {
        torn_curtain_is_bit_identical(false);
    })
}

/// The same with the soft grab, solved in the tail between barriers (by thread 0).
#[test]
fn a_softly_grabbed_torn_curtain_is_bit_identical_on_1_to_8_threads() {
    with_assumed_cores(MAX_THREADS, || {
        torn_curtain_is_bit_identical(true);
    })
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
fn tmp15_is_bit_identical_on_1_to_8_and_16_threads() {
    with_assumed_cores(MAX_THREADS, || {
        let one = tmp15(1);
        for threads in (2..=8).chain([MAX_THREADS as u32]) {
            assert!(tmp15(threads) == one, "{threads} threads: positions differ from one thread's");
        }
    })
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

/// Asked-for threads are capped at the cores: on an assumed machine of 1, 2, 3 and 16 cores a
/// splittable cloth uses min(asked, cores) threads, and a step runs on that many; on this
/// machine never more than its cores.
#[test]
fn asked_for_threads_are_capped_at_the_cores() {
    let mut cloth = tmp15_cloth(64).unwrap();
    assert_eq!(cloth.max_threads(), MAX_THREADS as u32, "the cloth can be split into 16 parts");
    let asking = |threads: u32| tmp15_params(15, 1, threads);
    for cores in [1, 2, 3, MAX_THREADS] {
        with_assumed_cores(cores, || {
            assert_eq!(available_cores(), cores);
            for asked in 1..=MAX_THREADS as u32 {
                let used = cloth.threads_used(&asking(asked));
                assert_eq!(used, asked.min(cores as u32), "{asked} threads asked on {cores} cores");
            }
            // 24 000 constraints are two automatic threads' worth.
            assert_eq!(cloth.threads_used(&asking(0)), 2.min(cores as u32), "automatic on {cores} cores");
        });
    }
    let stats = with_assumed_cores(3, || cloth.step(&asking(MAX_THREADS as u32), &tmp15_material()).unwrap().clone());
    assert_eq!(stats.threads, 3, "16 threads asked on 3 cores");
    let machine = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(available_cores(), machine);
    for asked in 0..=MAX_THREADS as u32 {
        assert!(cloth.threads_used(&asking(asked)) as usize <= machine, "{asked} threads asked");
    }
}

/// The assumed cores belong to the thread that assumes them, and the machine's come back when
/// the closure returns, nested or panicking.
#[test]
fn assumed_cores_are_the_callers_alone_and_undone_after() {
    let machine = available_cores();
    with_assumed_cores(5, || {
        assert_eq!(std::thread::spawn(available_cores).join().unwrap(), machine, "another thread");
        with_assumed_cores(7, || assert_eq!(available_cores(), 7));
        assert_eq!(available_cores(), 5, "after a nested assumption");
    });
    assert_eq!(available_cores(), machine);
    let panicked = std::panic::catch_unwind(|| with_assumed_cores(9, || panic!("inside")));
    assert!(panicked.is_err());
    assert_eq!(available_cores(), machine, "after a panic");
}
