//! Criterion benches of the solver: the distance kernel on one batch of independent edges
//! (consecutive particles: plain loads; scattered: gathers), the hinge kernel on one colour
//! (scalar vs the vector kernels), and whole `Cloth::step` frames of the tmp15 workload and of
//! the default preset at 128 × 128 on one and two threads, and on one thread with its particles
//! numbered at random (a coloured sweep), and frames with a mesh collider of 20 480 triangles.
//! Run with `cargo bench --bench solver`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use drape::headless::{tmp15_cloth, tmp15_material, tmp15_params};
use drape::sim::collision::{LoadedShape, MeshShape};
use drape::sim::constraints::distance::{project_with, DistanceBatch, DistanceItem, Kernel, PosW, SubstepConstants};
use drape::sim::constraints::hinge::{self, HingeBatch, HingeItem};
use drape::sim::constraints::{bend, distance};
use drape::sim::particles::{Positions, Vectors};
use drape::sim::{Collider, EdgeKind};

const K: SubstepConstants = SubstepConstants {
    inv_h2: 900.0 * 900.0,
    damping_over_h: 0.0,
    bend_gamma: 0.0,
};

/// An n × n grid of particles 1 cm apart and one batch of independent edges: the vertical
/// edges of every other row (`runs`: eight consecutive particles per vector) or the even
/// horizontal edges (scattered: every lane's particle is gathered).
fn grid_batch(n: u32, runs: bool) -> (Vec<PosW>, DistanceBatch) {
    let pos: Vec<PosW> = (0..n * n)
        .map(|i| [(i % n) as f32 * 0.01, (i / n) as f32 * 0.01, 0.0, 1.0])
        .collect();
    let mut batch = DistanceBatch::default();
    let edges: Vec<(u32, u32)> = if runs {
        (0..n - 1)
            .step_by(2)
            .flat_map(|r| (0..n).map(move |c| (r * n + c, (r + 1) * n + c)))
            .collect()
    } else {
        (0..n)
            .flat_map(|r| (0..n - 1).step_by(2).map(move |c| (r * n + c, r * n + c + 1)))
            .collect()
    };
    for (a, b) in edges {
        let item = DistanceItem {
            ends: [a, b],
            rest: 0.0101,
            compliance: 1e-4,
            kind: EdgeKind::Stretch,
        };
        batch.push_item(batch.id.len() as u32, item);
    }
    (pos, batch)
}

fn distance_kernels(c: &mut Criterion) {
    let mut group = c.benchmark_group("distance_kernel");
    for (name, runs) in [("runs", true), ("scattered", false)] {
        for n in [64u32, 256] {
            let (pos, batch) = grid_batch(n, runs);
            group.throughput(Throughput::Elements(batch.id.len() as u64));
            for kernel in [Kernel::Scalar, Kernel::detect()] {
                let (mut p, mut b) = (Positions::from(pos.as_slice()), batch.clone());
                let prev = Vectors::from(pos.as_slice());
                group.bench_with_input(BenchmarkId::new(format!("{name}/{kernel:?}"), n), &n, |bench, _| {
                    bench.iter(|| project_with(kernel, &mut p, &prev, &mut b, K, true))
                });
            }
        }
    }
    let (pos, batch) = grid_batch(256, true);
    let (mut p, mut b) = (Positions::from(pos.as_slice()), batch);
    let prev = Vectors::from(pos.as_slice());
    group.bench_function("runs/auto/256", |bench| {
        bench.iter(|| distance::project(&mut p, &prev, &mut b, K, true))
    });
    group.finish();
}

fn hinge_kernel(c: &mut Criterion) {
    // Hinges across the vertical edges of a gently folded strip, one per quad: no shared
    // particle within a row pair, as in a colour batch.
    let n = 128u32;
    let pos: Vec<PosW> = (0..3 * n)
        .map(|i| {
            let (x, y) = ((i % n) as f32 * 0.01, (i / n) as f32 * 0.01);
            [x, y, 0.002 * (x * 40.0).sin(), 1.0]
        })
        .collect();
    let mut batch = HingeBatch::default();
    for col in (0..n - 1).step_by(2) {
        let p = |c: u32, r: u32| r * n + c;
        let item = HingeItem {
            particles: [p(col, 0), p(col + 1, 2), p(col, 1), p(col + 1, 1)],
            rest_angle: 0.0,
            compliance: 1.0,
        };
        let xyz = |i: u32| glam::Vec3::from_slice(&pos[i as usize][..3]);
        assert!(bend::dihedral_angle(
            xyz(item.particles[0]),
            xyz(item.particles[1]),
            xyz(item.particles[2]),
            xyz(item.particles[3])
        )
        .is_some());
        batch.push_item(batch.id.len() as u32, item);
    }
    let mut group = c.benchmark_group("hinge_kernel");
    group.throughput(Throughput::Elements(batch.id.len() as u64));
    for kernel in [Kernel::Scalar, Kernel::Avx2, Kernel::Avx512]
        .into_iter()
        .filter(|k| k.is_supported())
    {
        let mut p = Positions::from(pos.as_slice());
        let prev = Vectors::from(pos.as_slice());
        group.bench_function(format!("{kernel:?}"), |bench| {
            bench.iter(|| hinge::project_with(kernel, &mut p, &prev, &mut batch, K, true))
        });
    }
    group.finish();
}

fn tmp15_frames(c: &mut Criterion) {
    let mut group = c.benchmark_group("tmp15_step");
    group.sample_size(10);
    let material = tmp15_material();
    for (grid, threads) in [(32u32, 1u32), (128, 1), (128, 2), (256, 1), (256, 2)] {
        let mut cloth = tmp15_cloth(grid).unwrap();
        let params = tmp15_params(15, 1, threads);
        // Projections per frame, so criterion reports projections per second.
        group.throughput(Throughput::Elements(cloth.constraint_count() as u64 * 15));
        group.bench_with_input(BenchmarkId::new(format!("threads{threads}"), grid), &grid, |bench, _| {
            bench.iter(|| cloth.step(&params, &material).map(|s| s.step_ms).unwrap())
        });
    }
    group.finish();
}

/// Whole frames of the default preset (hanging curtain: stretch, shear and bending hinges,
/// ground contact) at 128 × 128 particles with the preset's 15 × 1 substeps, on one and two
/// threads: the app's workload, where the hinges dominate.
fn curtain_frames(c: &mut Criterion) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/default.ron");
    let mut preset = drape::preset::Preset::load(&path).unwrap();
    let grid = preset.single_grid_mut().expect("the default preset is one grid");
    (grid.columns, grid.rows) = (128, 128);
    let mut group = c.benchmark_group("curtain_128_step");
    group.sample_size(10);
    // The fastest kernel, and on an AVX-512 CPU also the AVX2 one (hinges eight per vector).
    let mut kernels = vec![Kernel::detect()];
    if kernels[0] == Kernel::Avx512 {
        kernels.push(Kernel::Avx2);
    }
    for kernel in kernels {
        for threads in [1u32, 2] {
            let mut cloth = preset.build().unwrap();
            cloth.set_kernel(kernel);
            let params = drape::sim::SolverParams {
                threads,
                ..preset.solver.clone()
            };
            // Let the curtain fall and fold first, as it has in the app.
            for _ in 0..60 {
                cloth.step(&params, &preset.material).unwrap();
            }
            let name = match kernel == Kernel::detect() {
                true => format!("threads{threads}"),
                false => format!("{kernel:?}/threads{threads}"),
            };
            group.bench_function(name, |bench| {
                bench.iter(|| cloth.step(&params, &preset.material).map(|s| s.step_ms).unwrap())
            });
        }
    }
    // The same curtain with its particles numbered at random and then renumbered along a
    // space-filling curve, as a mesh from a file is: solved in colours on the [x, y, z, w]
    // copy instead of the grid's order.
    let grid = preset.single_grid().expect("the default preset is one grid");
    let (shuffled, _) = grid.build().unwrap().shuffled(7);
    let (renumbered, _) = shuffled.in_locality_order();
    let mut cloth = drape::sim::Cloth::new(renumbered, &preset.material, preset.colliders.clone()).unwrap();
    let params = drape::sim::SolverParams {
        threads: 1,
        ..preset.solver.clone()
    };
    for _ in 0..60 {
        cloth.step(&params, &preset.material).unwrap();
    }
    group.bench_function("shuffled/threads1", |bench| {
        bench.iter(|| cloth.step(&params, &preset.material).map(|s| s.step_ms).unwrap())
    });
    group.finish();
}

/// A mesh ball: an icosphere of `radius` (m) at `centre`, `subdivisions` times divided (5:
/// 20 480 triangles), as a collider.
fn mesh_ball(centre: glam::Vec3, radius: f32, subdivisions: u32) -> Collider {
    let model = drape::sim::icosphere(glam::Vec3::ZERO, radius, subdivisions).build().unwrap();
    let shape = MeshShape::new(&model.positions, &model.triangles).unwrap();
    Collider::Mesh {
        file: "icosphere".into(),
        scale: 1.0,
        position: centre,
        rotation_degrees: glam::Vec3::ZERO,
        motion: None,
        shape: LoadedShape(Some(std::sync::Arc::new(shape))),
    }
}

/// Whole frames, one thread, with a mesh collider of 20 480 triangles: the default curtain with
/// the mesh ball under it (issue 36: at most 20 % more than without) and presets/sphere_drape.ron's
/// sheet resting on the analytic ball and on a mesh ball of the same radius.
fn mesh_collider_frames(c: &mut Criterion) {
    let load = |name: &str| drape::preset::Preset::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap();
    let (curtain, drape_preset) = (load("presets/default.ron"), load("presets/sphere_drape.ron"));
    let under = mesh_ball(glam::Vec3::new(0.0, 0.45, 0.0), 0.4, 5);
    let ball = mesh_ball(glam::Vec3::new(0.0, 0.8, 0.0), 0.45, 5);
    let without_ball: Vec<Collider> = drape_preset
        .colliders
        .iter()
        .filter(|c| !matches!(c, Collider::Sphere { .. }))
        .cloned()
        .collect();
    let scenes = [
        ("curtain/ground", &curtain, curtain.colliders.clone()),
        ("curtain/mesh_under", &curtain, [curtain.colliders.clone(), vec![under]].concat()),
        ("sheet_on_ball/analytic", &drape_preset, drape_preset.colliders.clone()),
        ("sheet_on_ball/mesh", &drape_preset, [without_ball, vec![ball]].concat()),
    ];
    let mut group = c.benchmark_group("mesh_collider_step");
    group.sample_size(10);
    for (name, preset, colliders) in scenes {
        let mut cloth = preset.build().unwrap();
        cloth.set_colliders(colliders).unwrap();
        let params = drape::sim::SolverParams {
            threads: 1,
            ..preset.solver.clone()
        };
        // Settled first: the curtain hanging, the sheet lying on the ball.
        for _ in 0..120 {
            cloth.step(&params, &preset.material).unwrap();
        }
        group.bench_function(name, |bench| {
            bench.iter(|| cloth.step(&params, &preset.material).map(|s| s.step_ms).unwrap())
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    distance_kernels,
    hinge_kernel,
    tmp15_frames,
    curtain_frames,
    mesh_collider_frames
);
criterion_main!(benches);
