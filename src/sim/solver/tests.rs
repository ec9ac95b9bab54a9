use glam::Vec3;

use crate::sim::cloth::Cloth;
use crate::sim::collision::Collider;
use crate::sim::constraints::MAX_PARTS as MAX_THREADS;
use crate::sim::grid::GridSpec;
use crate::sim::parallel::with_assumed_cores;
use crate::sim::params::{Material, SolverParams};

/// Steps `cloth` and checks the step ran on as many threads as it asked for.
fn step_on(cloth: &mut Cloth, params: &SolverParams, material: &Material) {
    let wanted = cloth.threads_used(params);
    assert_eq!(cloth.step(params, material).unwrap().threads, wanted);
}

/// A curtain large enough to be split into two parts, with hinges, shear, a ground and a
/// sphere, so every part of the substep loop runs on both threads.
fn curtain(columns: u32, rows: u32) -> Cloth {
    let spec = GridSpec {
        columns,
        rows,
        origin: Vec3::new(0.0, 1.2, 0.0),
        ..GridSpec::default()
    };
    let colliders = vec![
        Collider::Ground { height: 0.0, motion: None },
        Collider::Sphere {
            center: Vec3::new(0.2, 0.4, 0.1),
            radius: 0.3,
            motion: None,
        },
    ];
    Cloth::new(spec.build().unwrap(), &Material::default(), colliders).unwrap()
}

/// Also on 81 × 61 particles: the parts' particle ranges then start off the eight-particle
/// grid of the vector passes, so particles one thread runs in AVX2 vectors another runs
/// through the scalar passes — the two must round alike. On 80 × 64 each of two parts has
/// whole eights of rows, so its horizontal phases start as strips and the tearing turns
/// some back into levels.
#[test]
fn one_two_and_three_threads_give_bit_identical_frames() {
    with_assumed_cores(MAX_THREADS, || {
        for (columns, rows) in [(80, 60), (81, 61), (80, 64)] {
            assert_threads_agree(&curtain(columns, rows));
        }
    })
}

fn assert_threads_agree(base: &Cloth) {
    assert_eq!(
        base.threads_used(&SolverParams {
            threads: 2,
            ..SolverParams::default()
        }),
        2
    );
    let run = |threads: u32| {
        let mut cloth = base.clone();
        let params = SolverParams {
            threads,
            iterations: 2,
            // Off, as in `drag_and_tear`.
            self_collision: false,
            ..SolverParams::default()
        };
        cloth.grab(4000).unwrap();
        for frame in 0..30 {
            cloth.drag_to(Vec3::new(0.3, 0.5 + frame as f32 * 0.01, 0.2));
            step_on(&mut cloth, &params, &Material::default());
        }
        // Then torn: constraints move to the tail (solved between barriers) and groups of
        // strips turn into levels (the waits are planned again).
        // Read at each vertex's own triangles (a tear length of 0): the hard grab's point load
        // tears the curtain within the 20 frames; averaged over 10 cm it would not yet.
        let tearing = Material {
            tear_strain: Some(0.2),
            tear_length: 0.0,
            ..Material::default()
        };
        for frame in 0..20 {
            cloth.drag_to(Vec3::new(0.3, 0.8 + frame as f32 * 0.05, 0.2));
            step_on(&mut cloth, &params, &tearing);
        }
        (cloth.torn_edges(), cloth.particles().positions().collect::<Vec<_>>())
    };
    let one = run(1);
    assert!(one.0 > 0, "the drag should tear the curtain");
    assert!(one.1.iter().all(|p| p.is_finite()));
    for threads in [2, 3] {
        assert!(run(threads) == one, "threads 1 and {threads} differ");
    }
}

/// The AVX-512 kernels (hinges, contiguous levels, strip pairs) evaluate the AVX2 kernels'
/// operations per lane, so a cloth gives the same frames with either, also while it tears
/// (fresh particles and constraints move between batches and the tail) and on two threads.
#[test]
fn avx2_and_avx512_kernels_give_bit_identical_frames() {
    use crate::sim::constraints::distance::Kernel;
    if !Kernel::Avx512.is_supported() {
        eprintln!("avx2_and_avx512_kernels_give_bit_identical_frames: skipped (no AVX-512 on this CPU)");
        return;
    }
    let material = Material {
        tear_strain: Some(0.2),
        ..Material::default()
    };
    let run = |kernel: Kernel, threads: u32| {
        // 64 rows: whole eights in each part, so the horizontal phases start as strips.
        let mut cloth = curtain(81, 64);
        cloth.set_kernel(kernel);
        let params = SolverParams {
            threads,
            // Off, as in `drag_and_tear`: the self-contact passes have no vector kernels (they
            // run the same code whichever kernel the sweeps use), and on this torn, stretched
            // curtain they cost 99 % of the test (measured alone: 450 s with them, 2.3 s
            // without, for the four 40-frame runs).
            self_collision: false,
            ..SolverParams::default()
        };
        cloth.grab(4000).unwrap();
        for frame in 0..40 {
            cloth.drag_to(Vec3::new(0.3, 0.6 + frame as f32 * 0.05, 0.2));
            step_on(&mut cloth, &params, &material);
        }
        (cloth.torn_edges(), cloth.particles().positions().collect::<Vec<_>>())
    };
    for threads in [1, 2] {
        let (avx2, avx512) = (run(Kernel::Avx2, threads), run(Kernel::Avx512, threads));
        assert!(avx2.0 > 0, "the drag should tear the curtain");
        assert!(avx2.1.iter().all(|p| p.is_finite()));
        assert!(avx2 == avx512, "{threads} threads: AVX2 and AVX-512 differ");
    }
}

/// A curtain whose particles were renumbered at random (with bending hinges or without):
/// its distance sweep is coloured and, with a vector kernel, runs on the `[x, y, z, w]`
/// copy (see `constraints::distance::copy`).
fn shuffled_curtain(columns: u32, rows: u32, bending: bool) -> Cloth {
    let spec = GridSpec {
        columns,
        rows,
        bending,
        origin: Vec3::new(0.0, 1.2, 0.0),
        ..GridSpec::default()
    };
    let (model, _) = spec.build().unwrap().shuffled(5);
    let colliders = vec![Collider::Ground { height: 0.0, motion: None }];
    let cloth = Cloth::new(model, &Material::default(), colliders).unwrap();
    assert!(cloth.coloured_sweep(), "a shuffled grid is solved in colours");
    cloth
}

/// Drags particle 100 of `cloth` up and away for 40 frames with tearing on; returns the
/// torn edges and every position.
fn drag_and_tear(cloth: Cloth, kernel: crate::sim::constraints::distance::Kernel, threads: u32) -> (usize, Vec<Vec3>) {
    let params = SolverParams {
        threads,
        // Off: these tests are about the sweeps, and on this crumple self-contacts would take
        // nearly all the time (their agreement across threads:
        // `lists_past_the_cap_give_the_same_frames_on_one_and_two_threads`).
        self_collision: false,
        ..SolverParams::default()
    };
    let cloth = dragged_with_tearing(cloth, kernel, &params, 40);
    (cloth.torn_edges(), cloth.particles().positions().collect())
}

/// `cloth` on `kernel` with particle 100 dragged up and away for `frames` frames under
/// `params`, with tearing on (a tear strain of 0.2).
fn dragged_with_tearing(mut cloth: Cloth, kernel: crate::sim::constraints::distance::Kernel, params: &SolverParams, frames: u32) -> Cloth {
    cloth.set_kernel(kernel);
    let material = Material {
        tear_strain: Some(0.2),
        ..Material::default()
    };
    cloth.grab(100).unwrap();
    let start = cloth.particles().position(100);
    for frame in 0..frames {
        cloth.drag_to(start + Vec3::new(0.03, 0.05, 0.02) * frame as f32);
        step_on(&mut cloth, params, &material);
    }
    cloth
}

/// Without hinges the vector kernels differ from the scalar loop only in the coloured
/// distance sweep on the copy, whose lanes evaluate the scalar projection's operations: every
/// kernel and thread count gives the same frames bit for bit, also while it tears.
#[test]
fn a_coloured_sweep_on_the_copy_matches_the_scalar_loop_bit_for_bit() {
    use crate::sim::constraints::distance::Kernel;
    let scalar = drag_and_tear(shuffled_curtain(80, 64, false), Kernel::Scalar, 1);
    assert!(scalar.0 > 0, "the drag should tear the curtain");
    assert!(scalar.1.iter().all(|p| p.is_finite()));
    let kernels = Kernel::vector_kernels_for("a_coloured_sweep_on_the_copy_matches_the_scalar_loop_bit_for_bit");
    for (kernel, threads) in std::iter::once((Kernel::Scalar, 2)).chain(kernels.into_iter().flat_map(|k| [(k, 1), (k, 2)])) {
        let run = drag_and_tear(shuffled_curtain(80, 64, false), kernel, threads);
        assert!(run == scalar, "{kernel:?} on {threads} thread(s) differs from the scalar loop");
    }
}

/// With hinges (whose vector kernel rounds unlike the scalar one) the vector kernels and
/// thread counts agree with each other bit for bit on a coloured sweep.
#[test]
fn a_coloured_sweep_is_bit_identical_for_every_vector_kernel_and_thread_count() {
    let kernels = crate::sim::constraints::distance::Kernel::vector_kernels_for(
        "a_coloured_sweep_is_bit_identical_for_every_vector_kernel_and_thread_count",
    );
    let Some(&first) = kernels.first() else { return };
    let reference = drag_and_tear(shuffled_curtain(80, 64, true), first, 1);
    assert!(reference.0 > 0, "the drag should tear the curtain");
    for (kernel, threads) in kernels.into_iter().flat_map(|k| [(k, 1), (k, 2)]).skip(1) {
        let run = drag_and_tear(shuffled_curtain(80, 64, true), kernel, threads);
        assert!(run == reference, "{kernel:?} on {threads} thread(s) differs from {first:?} on one");
    }
}

/// The sweep is the straightforward loop's, batched: on tmp15 every position matches the
/// [`crate::sim::ReferenceSolver`] bit for bit, on one part (n = 16, 24, 40: two, three
/// and five strips of eight rows, so AVX-512 pairs them and leaves one alone) and on two
/// parts solved by one or two threads (n = 64), with every kernel this CPU runs.
#[test]
fn engine_reproduces_the_straightforward_loop_bit_for_bit() {
    use crate::headless::{tmp15_cloth, tmp15_material, tmp15_params, ReferenceSolver};
    use crate::sim::constraints::distance::Kernel;
    let kernels =
        std::iter::once(Kernel::Scalar).chain(Kernel::vector_kernels_for("engine_reproduces_the_straightforward_loop_bit_for_bit"));
    let runs = kernels.flat_map(|kernel| [(16, 1), (24, 1), (40, 1), (64, 1), (64, 2)].map(|(n, threads)| (kernel, n, threads)));
    for (kernel, n, threads) in runs {
        let params = tmp15_params(15, 1, threads);
        let mut cloth = tmp15_cloth(n).unwrap();
        cloth.set_kernel(kernel);
        let mut reference = ReferenceSolver::new(&crate::sim::tmp15_model(n).unwrap(), &tmp15_material());
        let start: Vec<Vec3> = reference.positions().collect();
        for _ in 0..20 {
            step_on(&mut cloth, &params, &tmp15_material());
            reference.step(&params);
        }
        let engine: Vec<Vec3> = cloth.particles().positions().collect();
        let straightforward: Vec<Vec3> = reference.positions().collect();
        assert!(engine != start, "the sheet moved");
        assert!(
            engine == straightforward,
            "{kernel:?}, n = {n}, {threads} thread(s): positions differ"
        );
    }
}

/// Subnormal coordinates (here planted in both threads' halves of a flat curtain) read as
/// zero inside the solver and never come out of it, on one thread and on two; the caller's
/// thread keeps IEEE subnormals after the step.
#[test]
fn no_subnormal_leaves_the_solver_and_the_caller_keeps_ieee_mode() {
    let subnormal = f32::MIN_POSITIVE / 16.0;
    for threads in [1, 2] {
        let mut cloth = curtain(80, 60);
        for i in [1000, 4000] {
            let p = cloth.particles().positions().nth(i).unwrap();
            let planted = Vec3::new(p.x, p.y, subnormal);
            cloth.set_state(i as u32, planted, Vec3::new(0.0, 0.0, subnormal)).unwrap();
        }
        let params = SolverParams {
            threads,
            ..SolverParams::default()
        };
        step_on(&mut cloth, &params, &Material::default());
        let coordinates = cloth.particles().positions().flat_map(|p| p.to_array());
        let leaked = coordinates.filter(|c| *c != 0.0 && !c.is_normal()).count();
        assert_eq!(leaked, 0, "{threads} thread(s): subnormal coordinates after a frame");
    }
    assert!(std::hint::black_box(f32::MIN_POSITIVE) / 2.0 > 0.0, "caller's mode restored");
}

/// `threads: 0` takes the second core for a sheet of 64 × 64 with shear edges (24 000
/// constraints), which gains from it, and not for 32 × 32, which is not split.
#[test]
fn automatic_threads_take_the_second_core_from_a_64_square_sheet() {
    let automatic = SolverParams {
        threads: 0,
        ..SolverParams::default()
    };
    let two = if crate::sim::available_cores() >= 2 { 2 } else { 1 };
    assert_eq!(crate::headless::tmp15_cloth(64).unwrap().threads_used(&automatic), two);
    assert_eq!(crate::headless::tmp15_cloth(32).unwrap().threads_used(&automatic), 1);
}

#[test]
fn small_cloths_stay_on_one_thread() {
    let cloth = crate::headless::tmp15_cloth(32).unwrap();
    assert_eq!(
        cloth.threads_used(&SolverParams {
            threads: 2,
            ..SolverParams::default()
        }),
        1
    );
}

/// A caller-defined constraint for the registry's tests: particles `a` and `b` kept at
/// distance `rest` (m) with compliance `alpha` (m/N).
#[derive(Debug, Clone, Copy)]
struct Link {
    ends: [u32; 2],
    rest: f32,
    alpha: f32,
}

impl crate::sim::constraints::custom::CustomConstraint for Link {
    fn particles(&self) -> &[u32] {
        &self.ends
    }
    fn compliance(&self) -> f32 {
        self.alpha
    }
    fn evaluate(&self, x: &[Vec3], gradients: &mut [Vec3]) -> Option<f32> {
        let d = x[0] - x[1];
        let length = d.length();
        if length < 1e-9 {
            return None;
        }
        gradients[0] = d / length;
        gradients[1] = -d / length;
        Some(length - self.rest)
    }
}

/// A registered custom set is scheduled like the engine's own: cut into the threads' parts,
/// the frames are bit-identical on one, two and three threads; and it acts: links asking
/// particles two rows apart to come to half their distance (a gather, like a drawstring) pull
/// those rows together, where without them the rows stay apart.
#[test]
fn custom_constraints_are_solved_on_every_thread_and_bit_identical() {
    with_assumed_cores(MAX_THREADS, || {
        let columns = 80;
        let pairs: Vec<[u32; 2]> = (0..columns).map(|c| [30 * columns + c, 32 * columns + c]).collect();
        let run = |threads: u32, with_links: bool| {
            let mut cloth = curtain(columns, 64);
            if with_links {
                let distance = |[a, b]: [u32; 2]| {
                    cloth
                        .particles()
                        .position(a as usize)
                        .distance(cloth.particles().position(b as usize))
                };
                let links: Vec<Link> = pairs
                    .iter()
                    .map(|&ends| Link {
                        ends,
                        rest: 0.5 * distance(ends),
                        alpha: 0.0,
                    })
                    .collect();
                cloth.add_constraints(links).unwrap();
            }
            let params = SolverParams {
                threads,
                // Off: custom sets are scheduled with the constraint sweeps, which this test
                // is about; the 3 200 self-contacts of the gathered pleat cost 98 % of it
                // (measured alone: 42.6 s with them, 0.9 s without), and their thread
                // agreement is the falling strip's test (tests/drape/self_collision.rs).
                self_collision: false,
                ..SolverParams::default()
            };
            cloth.grab(4000).unwrap();
            for frame in 0..30 {
                cloth.drag_to(Vec3::new(0.3, 0.5 + frame as f32 * 0.02, 0.4));
                step_on(&mut cloth, &params, &Material::default());
            }
            cloth
        };
        // Mean distance of the linked pairs over their distance at rest.
        let gathered = |cloth: &Cloth| {
            let at = |positions: &dyn Fn(usize) -> Vec3, [a, b]: [u32; 2]| positions(a as usize).distance(positions(b as usize));
            let now = |i: usize| cloth.particles().position(i);
            let rest = |i: usize| cloth.model().positions[i];
            pairs.iter().map(|&p| at(&now, p) / at(&rest, p)).sum::<f32>() / pairs.len() as f32
        };
        let one = run(1, true);
        assert!(gathered(&one) < 0.8, "the links gather the rows: {}", gathered(&one));
        assert!(gathered(&run(1, false)) > 0.95, "without links the rows stay apart");
        let positions = |cloth: &Cloth| cloth.particles().positions().collect::<Vec<_>>();
        for threads in [2, 3] {
            let other = run(threads, true);
            assert_eq!(other.stats().threads, threads);
            assert!(positions(&other) == positions(&one), "threads 1 and {threads} differ");
        }
    })
}

/// A custom constraint naming a particle the cloth lacks (or repeating one) is refused and
/// nothing is registered.
#[test]
fn custom_constraints_with_bad_particles_are_refused() {
    let mut cloth = curtain(8, 8);
    let count = cloth.constraint_count();
    let bad = [
        Link {
            ends: [0, 64],
            rest: 0.1,
            alpha: 0.0,
        },
        Link {
            ends: [3, 3],
            rest: 0.1,
            alpha: 0.0,
        },
        Link {
            ends: [0, 1],
            rest: 0.1,
            alpha: -1.0,
        },
    ];
    for link in bad {
        let good = Link {
            ends: [0, 1],
            rest: 0.1,
            alpha: 0.0,
        };
        assert!(cloth.add_constraints([good, link]).is_err(), "{link:?} refused");
        assert_eq!(cloth.constraint_count(), count);
    }
    cloth
        .add_constraints([Link {
            ends: [0, 63],
            rest: 0.1,
            alpha: 0.0,
        }])
        .unwrap();
    assert_eq!(cloth.constraint_count(), count + 1);
}

/// A shuffled curtain with hinges dragged into a crumple by one particle, with self-collision
/// on and tearing, gives the same frames on one thread and two. Its contact lists outgrow the
/// cap (850 000 pairs against 655 360 by frame 33): the edge pairs, listed from each thread's
/// pairs, once came from pairs past the cap on two threads and not on one, and the frames
/// parted there (the bug issue 38 had laid at the hinge kernels' door).
#[cfg(not(debug_assertions))]
#[test]
fn lists_past_the_cap_give_the_same_frames_on_one_and_two_threads() {
    let run = |threads: u32| {
        let params = SolverParams {
            threads,
            ..SolverParams::default()
        };
        assert!(params.self_collision);
        let kernel = crate::sim::constraints::distance::Kernel::detect();
        let cloth = dragged_with_tearing(shuffled_curtain(80, 64, true), kernel, &params, 36);
        (
            cloth.torn_edges(),
            cloth.stats().self_contacts,
            cloth.particles().positions().collect::<Vec<_>>(),
        )
    };
    let one = run(1);
    assert!(
        one.0 > 0 && one.1 > 50_000,
        "the drag tears the curtain and crumples it ({} torn, {} in contact)",
        one.0,
        one.1
    );
    assert!(with_assumed_cores(2, || run(2)) == one, "one and two threads differ");
}
