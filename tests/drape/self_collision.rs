//! Issue 17's self-collision scenarios, judged by what a user sees: after the cloth has
//! folded and piled, no two of its triangles that share no vertex intersect (a triangle–
//! triangle test on the final mesh), the pile is at rest, and a folded flap lies on top of
//! the layer beneath it. The same scenes without self-collision intersect, so the checker
//! and the scenes can fail. Issue 38: self-collision is on by default, and every shipped
//! preset (a thin variant of two sheets on a ball too) ends 600 frames without crossings.

use drape::preset::Preset;
use drape::sim::{with_assumed_cores, Cloth, Collider, GridSpec, Material, Orientation, PinMode, Ray, SolverParams, MAX_THREADS};
use glam::{DVec3, Vec2, Vec3};

use crate::common::{
    grid_of, intersecting_pairs, load_preset, pendulum, run, shipped_presets, shipped_run, triangles_intersect, untethered,
    validation_params, G, SHIPPED_FRAMES,
};

/// The checker on known cases: crossing triangles intersect, parallel and separated ones do
/// not, a triangle poking through another's interior does.
#[test]
fn the_checker_finds_crossings_and_only_crossings() {
    let flat = [DVec3::new(0.0, 0.0, 0.0), DVec3::new(1.0, 0.0, 0.0), DVec3::new(0.0, 0.0, 1.0)];
    let above = flat.map(|v| v + DVec3::new(0.0, 0.01, 0.0));
    let through = [DVec3::new(0.2, -0.5, 0.2), DVec3::new(0.3, 0.5, 0.2), DVec3::new(0.25, 0.5, 0.3)];
    let beside = through.map(|v| v + DVec3::new(2.0, 0.0, 0.0));
    assert!(!triangles_intersect(flat, above));
    assert!(triangles_intersect(flat, through) && triangles_intersect(through, flat));
    assert!(!triangles_intersect(flat, beside));
}

/// The shipped preset `name` with `edit` applied to its solver settings, run `frames` frames.
fn run_preset(name: &str, edit: impl Fn(&mut SolverParams), frames: u32) -> Cloth {
    let preset = load_preset(name);
    let mut solver = preset.solver.clone();
    edit(&mut solver);
    let mut cloth = preset.build().unwrap();
    run(&mut cloth, &solver, &preset.material, frames);
    cloth
}

/// The falling strip with self-collision `on` for `frames` frames.
fn falling_strip(on: bool, frames: u32) -> Cloth {
    run_preset("falling_strip", |s| s.self_collision = on, frames)
}

/// Ten Minute Physics 15's scene: the strip folds onto itself on the ground; after 600 frames
/// no triangles intersect and the pile is at rest (kinetic energy below 1e-4 J). Without
/// self-collision the same strip falls through itself.
#[test]
fn the_falling_strip_piles_up_without_passing_through_itself() {
    // The shipped strip (self-collision on) run once for every test that runs it as shipped.
    assert!(load_preset("falling_strip").solver.self_collision);
    let cloth = shipped_run("falling_strip", SHIPPED_FRAMES, |run| run.cloth.clone());
    let top = cloth.particles().positions().map(|p| p.y).fold(0.0, f32::max);
    assert!(top > 0.05, "the strip lies flat ({top} m high) instead of piling");
    assert_eq!(intersecting_pairs(&cloth), 0);
    let energy = cloth.stats().kinetic_energy;
    assert!(energy < 1e-4, "the pile still moves: {energy} J");
    let without = falling_strip(false, 300);
    let crossings = intersecting_pairs(&without);
    eprintln!("falling strip: {energy:e} J, {top} m high; without self-collision {crossings} intersecting pairs");
    assert!(crossings > 0, "the strip does not fold through itself without self-collision");
}

/// The self-contact lists are remade by every thread, each listing its run of particles into
/// its own share kept in part order, and projected by thread 0, so the strip (6 000 particles,
/// split into parts; lists remade about every substep while it falls) gives bit-identical
/// frames on one to four threads, and when the thread count changes between frames (lists
/// made on four threads kept or remade on one).
#[test]
fn the_falling_strip_is_bit_identical_on_one_to_four_threads() {
    // 60 frames (it ran 150): the strip touches the ground and itself from frame 15-18 (14
    // self-contacts at 18, 189 at 30, 1 019 at 60, measured with `drape simulate`), so most of
    // the run projects contacts, and a difference between thread counts stays in the
    // positions from then on. The changing run goes 1, 4, 1, 3, 2 threads, 12 frames each, so
    // its lists are made on four threads while the first contacts appear (frames 12-24) and
    // then kept or remade on one.
    let frames = 60;
    with_assumed_cores(MAX_THREADS, || {
        let preset = load_preset("falling_strip");
        let positions = |threads: &[u32]| {
            let mut cloth = preset.build().unwrap();
            for &t in threads {
                let solver = SolverParams {
                    threads: t,
                    ..preset.solver.clone()
                };
                run(&mut cloth, &solver, &preset.material, frames / threads.len() as u32);
                assert_eq!(cloth.stats().threads, t);
            }
            assert!(cloth.stats().self_contacts > 0, "no self-contact to compare");
            cloth.particles().positions().collect::<Vec<Vec3>>()
        };
        let one = positions(&[1]);
        for threads in [&[2][..], &[3], &[4], &[1, 4, 1, 3, 2]] {
            assert!(one == positions(threads), "{threads:?} threads");
        }
    })
}

/// A 1 m sheet of 51 × 51 particles (2 cm spacing) over the ground, with self-collision
/// `on` at 2 cm thickness: centred at `origin` (horizontal) or hanging from it (vertical).
fn sheet(on: bool, origin: Vec3, orientation: Orientation, pins: PinMode) -> (Cloth, SolverParams, Material, GridSpec) {
    let spec = GridSpec {
        columns: 51,
        rows: 51,
        origin,
        orientation,
        pins,
        ..GridSpec::default()
    };
    let material = Material::default();
    let params = SolverParams {
        self_collision: on,
        self_thickness: 0.02,
        ..SolverParams::default()
    };
    let cloth = Cloth::new(
        spec.build().unwrap(),
        &material,
        vec![Collider::Ground { height: 0.0, motion: None }],
    )
    .unwrap();
    (cloth, params, material, spec)
}

/// The sheet lying flat on the ground, self-collision on.
fn sheet_on_the_ground() -> (Cloth, SolverParams, Material, GridSpec) {
    sheet(true, Vec3::new(0.0, 0.01, 0.0), Orientation::Horizontal, PinMode::None)
}

/// Carries the corner (0, 0) of the horizontal sheet `spec` in an arc 0.3 m high over
/// `frames` frames to just above the opposite corner, and releases it.
fn carry_corner_over(cloth: &mut Cloth, spec: &GridSpec, params: &SolverParams, material: &Material, frames: u32) {
    let last = spec.columns - 1;
    let (from, to) = (spec.position(0, 0), spec.position(last, last));
    cloth.grab(spec.index(0, 0)).unwrap();
    for frame in 1..=frames {
        let t = frame as f32 / frames as f32;
        let lift = 0.3 * (std::f32::consts::PI * t).sin() + 0.04 * t;
        cloth.drag_to(from.lerp(to, t) + Vec3::new(0.0, lift, 0.0));
        let stats = cloth.step(params, material).unwrap();
        assert!(params.threads == 0 || stats.threads == params.threads);
    }
    cloth.release(None);
}

/// Folds the sheet corner to corner with `edit` applied to its solver settings: the corner
/// carried over 90 frames, then 300 frames of rest.
fn fold(edit: impl Fn(&mut SolverParams)) -> (Cloth, GridSpec) {
    let (mut cloth, mut params, material, spec) = sheet_on_the_ground();
    edit(&mut params);
    carry_corner_over(&mut cloth, &spec, &params, &material, 90);
    run(&mut cloth, &params, &material, 300);
    (cloth, spec)
}

/// The horizontal position of `v`.
fn xz(v: Vec3) -> Vec2 {
    Vec2::new(v.x, v.z)
}

/// Asserts that the folded sheet has zero intersecting triangles and that every particle of
/// the flap (the half beyond the crease, away from it) lies above the base particle nearest
/// beneath it; returns how many flap particles lie over the base (more than 600).
fn assert_flap_on_top(cloth: &Cloth, spec: &GridSpec) -> usize {
    assert_eq!(intersecting_pairs(cloth), 0);
    let p = cloth.particles();
    let n = spec.columns;
    let grid = |c: u32, r: u32| p.position(spec.index(c, r) as usize);
    let cells = || (0..n).flat_map(move |r| (0..n).map(move |c| (c, r)));
    let base: Vec<(u32, u32)> = cells().filter(|(c, r)| c + r > n - 1).collect();
    let beneath = |x: Vec3| {
        base.iter()
            .map(|&(c, r)| grid(c, r))
            .min_by(|a, b| xz(*a).distance(xz(x)).total_cmp(&xz(*b).distance(xz(x))))
            .unwrap()
    };
    let mut checked = 0;
    for (c, r) in cells().filter(|(c, r)| c + r + 6 < n - 1) {
        let x = grid(c, r);
        let under = beneath(x);
        if xz(under).distance(xz(x)) < 0.02 {
            checked += 1;
            assert!(x.y > under.y, "flap particle ({c}, {r}) at {x} is not above the base at {under}");
        }
    }
    assert!(
        checked > 600,
        "only {checked} flap particles lie over the base: the sheet did not fold"
    );
    checked
}

/// The fold at a 2 cm thickness lies on top of the base; without self-collision the flap
/// sinks into it.
#[test]
fn a_corner_folded_over_the_sheet_lies_on_top_of_it() {
    let (cloth, spec) = fold(|_| ());
    let checked = assert_flap_on_top(&cloth, &spec);
    let (without, _) = fold(|s| s.self_collision = false);
    let crossings = intersecting_pairs(&without);
    eprintln!("fold: {checked} flap particles over the base; without self-collision {crossings} intersecting pairs");
    assert!(crossings > 0, "the flap does not sink into the base without self-collision");
}

/// Vertex–triangle contacts keep a mesh coarser than its thickness from passing through
/// itself: the fold at a 5 mm thickness, a quarter of the 2 cm spacing, lies on top of the
/// base with them; with particle contacts alone the flap slips between the base's particles
/// and intersects it.
#[test]
fn a_fold_thinner_than_the_spacing_needs_vertex_triangle_contacts() {
    let thin = |faces: bool| {
        fold(|s| {
            s.self_thickness = 0.005;
            s.self_vertex_triangle = faces;
        })
    };
    let (cloth, spec) = thin(true);
    let checked = assert_flap_on_top(&cloth, &spec);
    let crossings = intersecting_pairs(&thin(false).0);
    eprintln!("thin fold: {checked} flap particles over the base; particle contacts alone {crossings} intersecting pairs");
    assert!(crossings > 0, "particle contacts alone keep the thin flap out of the base");
}

/// Vertex–triangle contacts are listed by every thread (each its run of triangles) and solved
/// by thread 0 like the pairs: a 65 × 65 sheet (4 225 particles, split into parts; 2 cm
/// spacing) folded at a 5 mm thickness, with faces in contact, gives bit-identical frames on
/// one to four threads, and other frames without faces.
#[test]
fn a_thin_fold_with_faces_is_bit_identical_on_one_to_four_threads() {
    // The corner is carried over 60 frames (as `carry_corner_over`), released, and the fold
    // left 30 frames. Its first 40 frames, with the flap high above the sheet, have nothing
    // near enough to list (measured: no contact before frame 66, 1 000 by frame 80; the cost
    // of a frame rises from frame 44 as the flap comes down), so they run once, on one
    // thread, and each thread count (and the run without faces) goes on from a copy of that
    // cloth: the flap's approach, the landing and the contacts run on every count. Before,
    // five whole runs took 111 s.
    const CARRY: u32 = 60;
    const SHARED: u32 = 40;
    with_assumed_cores(MAX_THREADS, || {
        let spec = GridSpec {
            width: 1.28,
            height: 1.28,
            columns: 65,
            rows: 65,
            origin: Vec3::new(0.0, 0.01, 0.0),
            orientation: Orientation::Horizontal,
            pins: PinMode::None,
            ..GridSpec::default()
        };
        let material = Material::default();
        let params = |threads: u32, faces: bool| SolverParams {
            self_collision: true,
            self_thickness: 0.005,
            self_vertex_triangle: faces,
            threads,
            ..SolverParams::default()
        };
        let last = spec.columns - 1;
        let (from, to) = (spec.position(0, 0), spec.position(last, last));
        // Frames `frames` of the carry: the corner in an arc 0.3 m high to just above the
        // opposite corner.
        let carry = |cloth: &mut Cloth, frames: std::ops::RangeInclusive<u32>, params: &SolverParams| {
            for frame in frames {
                let t = frame as f32 / CARRY as f32;
                let lift = 0.3 * (std::f32::consts::PI * t).sin() + 0.04 * t;
                cloth.drag_to(from.lerp(to, t) + Vec3::new(0.0, lift, 0.0));
                assert_eq!(cloth.step(params, &material).unwrap().threads, params.threads);
            }
        };
        let ground = vec![Collider::Ground { height: 0.0, motion: None }];
        let mut shared = Cloth::new(spec.build().unwrap(), &material, ground).unwrap();
        shared.grab(spec.index(0, 0)).unwrap();
        carry(&mut shared, 1..=SHARED, &params(1, true));
        assert_eq!(shared.stats().self_contacts, 0, "contacts before the shared frames end");
        let positions = |threads: u32, faces: bool| {
            let mut cloth = shared.clone();
            let params = params(threads, faces);
            carry(&mut cloth, SHARED + 1..=CARRY, &params);
            cloth.release(None);
            run(&mut cloth, &params, &material, 30);
            assert!(cloth.stats().self_contacts > 0, "{threads} threads: the fold is not in contact");
            cloth.particles().positions().collect::<Vec<Vec3>>()
        };
        let one = positions(1, true);
        for threads in 2..=4 {
            assert!(one == positions(threads, true), "threads 1 and {threads} differ");
        }
        assert!(one != positions(1, false), "no face was in contact");
    })
}

/// Self-collision settings are checked like every parameter: out of range is refused with
/// the field and its range, before anything moves.
#[test]
fn self_collision_settings_out_of_range_are_refused() {
    let (mut cloth, params, material, _) = sheet_on_the_ground();
    let before = cloth.particles().positions().collect::<Vec<_>>();
    for (bad, field, range) in [
        (
            SolverParams {
                self_thickness: 0.0,
                ..params.clone()
            },
            "self_thickness",
            "[1e-3, 0.05] m",
        ),
        (
            SolverParams {
                self_thickness: f32::NAN,
                ..params.clone()
            },
            "self_thickness",
            "[1e-3, 0.05] m",
        ),
        (
            SolverParams {
                self_friction: -0.1,
                ..params.clone()
            },
            "self_friction",
            "[0, 10]",
        ),
    ] {
        let message = cloth.step(&bad, &material).unwrap_err().to_string();
        assert!(message.contains(field) && message.contains(range), "{message}");
    }
    assert_eq!(cloth.particles().positions().collect::<Vec<_>>(), before);
}

/// A hanging 1 m sheet (51 × 51, 2 cm thickness) cut in two across its middle: the lower
/// half falls to the ground, then the upper half is unpinned and falls onto it. Returns the
/// cloth after 300 frames of rest.
fn cut_sheet(on: bool, edit: impl Fn(&mut SolverParams, &mut Material)) -> Cloth {
    let (mut cloth, mut params, mut material, spec) = sheet(on, Vec3::new(0.0, 1.6, 0.0), Orientation::Vertical, PinMode::TopCorners);
    edit(&mut params, &mut material);
    run(&mut cloth, &params, &material, 30);
    let across = |x: f32| Ray {
        origin: Vec3::new(x, 1.11, 1.0),
        direction: Vec3::new(0.0, 0.0, -1.0),
    };
    assert!(cloth.cut(&across(-1.0), &across(1.0)) > 0);
    run(&mut cloth, &params, &material, 90);
    for corner in [spec.index(0, 0), spec.index(50, 0)] {
        cloth.set_pinned(corner, false);
    }
    run(&mut cloth, &params, &material, 300);
    assert_eq!(cloth.piece_count(), 2);
    cloth
}

/// Tearing and cutting keep self-collision working: the particles a cut adds are listed at
/// once, so the two halves of a cut sheet pile on each other without intersecting (and
/// intersect without self-collision).
#[test]
fn the_halves_of_a_cut_sheet_pile_without_intersecting() {
    let cloth = cut_sheet(true, |_, _| {});
    assert_eq!(intersecting_pairs(&cloth), 0);
    let crossings = intersecting_pairs(&cut_sheet(false, |_, _| {}));
    eprintln!("cut sheet: without self-collision {crossings} intersecting pairs");
    assert!(crossings > 0, "the halves do not pass through each other without self-collision");
}

/// Edge–edge contacts: in the pile of a cut sheet of a soft cloth some 2 cm triangles are
/// stretched so far that two edges cross between particles kept the 2 cm thickness apart;
/// with particle and face contacts alone the pile ends with triangles through each other,
/// with edge–edge contacts with none. The edge pairs are listed by every thread and merged in
/// one order: one and three threads give the same pile, bit for bit. The cloth is softer than
/// the default and the stretch viscosity is off (at the default stiffness the pile has
/// crossed without edge–edge contacts only under the tethers' earlier line-of-sight rule).
/// The pile is chaotic: whether a given stiffness crosses without edge–edge contacts has
/// changed with every change of the contacts' order or of when the lists are remade (a tenth
/// as stiff crossed 8 times with the faces' edge rule, then not at all once the list check
/// measured each displacement; a fifth 21 times, then 0, then 2). So the test looks for the
/// crossing among a few stiffnesses and asks that the same pile with edge–edge contacts has
/// none, on one and three threads alike.
#[test]
fn the_halves_of_a_cut_sheet_need_edge_edge_contacts() {
    let soft = |factor: f32| {
        move |material: &mut Material| {
            material.youngs_modulus *= factor;
            material.stretch_damping_time = 0.0;
        }
    };
    let crossing = [0.1f32, 0.2, 0.05, 0.3, 0.15].into_iter().find(|&factor| {
        let without = intersecting_pairs(&cut_sheet(true, |s, m| {
            s.self_edge_edge = false;
            soft(factor)(m);
        }));
        eprintln!("cut sheet {factor} as stiff: {without} intersecting pairs without edge–edge contacts");
        without > 0
    });
    let factor = crossing.expect("some pile crosses edge through edge without edge–edge contacts");
    let pile = |threads: u32| {
        let cloth = cut_sheet(true, |s, m| {
            s.threads = threads;
            soft(factor)(m);
        });
        assert_eq!(intersecting_pairs(&cloth), 0, "{threads} threads, {factor} as stiff");
        cloth.particles().positions().collect::<Vec<Vec3>>()
    };
    assert!(pile(1) == with_assumed_cores(3, || pile(3)), "one and three threads differ");
}

/// Where the cloth never touches itself, self-collision changes nothing, bit for bit: the
/// default curtain settling from its preset (120 frames), and V1's hanging mass at its
/// equilibrium for every (substeps, iterations) of docs/physics.md §10 (600 frames).
#[test]
fn scenes_without_self_contact_are_unchanged_by_self_collision() {
    let curtain = |on: bool| {
        let cloth = run_preset("default", |s| s.self_collision = on, 120);
        assert_eq!(cloth.stats().self_contacts, 0);
        cloth.particles().positions().collect::<Vec<Vec3>>()
    };
    assert!(curtain(true) == curtain(false), "the default curtain moved differently");
    let material = untethered();
    for (substeps, iterations) in [(1, 1), (1, 5), (10, 1), (4, 5)] {
        let hanging = |on: bool| {
            let mut cloth = pendulum(Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, -1.0, 0.0), 1.0, 1e-3, &material);
            cloth.set_state(1, Vec3::new(0.0, -G * 1e-3, 0.0), Vec3::ZERO).unwrap();
            let params = SolverParams {
                self_collision: on,
                ..validation_params(1.0 / 60.0, substeps, iterations)
            };
            run(&mut cloth, &params, &material, 600);
            cloth.particles().position(1)
        };
        assert_eq!(hanging(true), hanging(false), "V1 at S = {substeps}, n_it = {iterations}");
    }
}

/// Issue 17's second preset: a sheet dropped onto a ball folds where it drapes and meets the
/// ground; with self-collision its folds do not intersect, without they do.
#[test]
fn the_sheet_folding_over_a_ball_does_not_intersect_itself() {
    // With self-collision on it is the shipped preset, run once for every test that runs it.
    assert!(load_preset("sphere_fold").solver.self_collision);
    let on = shipped_run("sphere_fold", SHIPPED_FRAMES, |run| intersecting_pairs(&run.cloth));
    let off = intersecting_pairs(&run_preset("sphere_fold", |s| s.self_collision = false, 600));
    eprintln!("sphere fold: {on} intersecting pairs with self-collision, {off} without");
    assert_eq!(on, 0);
    assert!(off > 0, "the sheet does not fold through itself without self-collision");
}

/// The default curtain with self-collision at its particle spacing (3.4 cm): a bottom corner
/// grabbed, thrown up and across the front of the curtain, released: at no frame of the 120
/// after the throw (checked every 5th) do triangles intersect.
#[test]
fn the_default_curtain_thrown_onto_itself_does_not_intersect() {
    let preset = load_preset("default");
    let thrown = |on: bool| {
        let solver = SolverParams {
            self_collision: on,
            self_thickness: 0.035,
            ..preset.solver.clone()
        };
        let mut cloth = preset.build().unwrap();
        run(&mut cloth, &solver, &preset.material, 60);
        let spec = &grid_of(&preset);
        let corner = spec.index(spec.columns - 1, spec.rows - 1);
        let from = cloth.particles().position(corner as usize);
        cloth.grab(corner).unwrap();
        let target = Vec3::new(-0.3, 1.9, 0.25);
        for frame in 1..=40 {
            let t = frame as f32 / 40.0;
            cloth.drag_to(from.lerp(target, t) + Vec3::new(0.0, 0.0, 0.2 * (std::f32::consts::PI * t).sin()));
            cloth.step(&solver, &preset.material).unwrap();
        }
        cloth.release(Some(Vec3::new(0.0, 0.0, -1.0)));
        (0..24)
            .map(|_| {
                run(&mut cloth, &solver, &preset.material, 5);
                intersecting_pairs(&cloth)
            })
            .max()
            .unwrap()
    };
    let (on, off) = (thrown(true), thrown(false));
    eprintln!("thrown curtain: at most {on} intersecting pairs with self-collision, {off} without");
    assert_eq!(on, 0);
    assert!(off > 0, "the curtain does not fold through itself without self-collision");
}

/// Issue 17, item 3: grabbing, pinning and live parameter changes with self-collision on. A
/// hanging sheet's bottom corner is held (the hard grab) and carried up over the sheet's
/// front, folding it onto itself, while its centre is pinned and the thickness and friction
/// change mid-drag: the held particle is where the hand is, the pinned one never moves,
/// contacts were active, and nothing turns non-finite; after release the fold settles
/// without intersections.
#[test]
fn grabbing_pinning_and_live_changes_work_with_self_collision_on() {
    let (mut cloth, mut params, material, spec) = sheet(true, Vec3::new(0.0, 2.0, 0.0), Orientation::Vertical, PinMode::TopCorners);
    let (corner, centre) = (spec.index(50, 50), spec.index(25, 25));
    cloth.set_pinned(centre, true);
    let pinned_at = cloth.particles().position(centre as usize);
    let start = cloth.particles().position(corner as usize);
    let end = Vec3::new(-0.2, 1.6, 0.01);
    cloth.grab(corner).unwrap();
    let mut most_contacts = 0;
    for frame in 1..=120 {
        let target = start.lerp(end, frame as f32 / 120.0);
        cloth.drag_to(target);
        if frame == 60 {
            (params.self_thickness, params.self_friction) = (0.03, 0.6);
        }
        let stats = cloth.step(&params, &material).unwrap();
        most_contacts = most_contacts.max(stats.self_contacts);
        assert_eq!(
            cloth.particles().position(corner as usize),
            target,
            "frame {frame}: the hand holds the corner"
        );
        assert_eq!(
            cloth.particles().position(centre as usize),
            pinned_at,
            "frame {frame}: the pin holds"
        );
    }
    assert!(most_contacts > 0, "the fold brought layers into contact");
    cloth.release(None);
    run(&mut cloth, &params, &material, 300);
    assert!(cloth.particles().positions().all(|p| p.is_finite()));
    assert_eq!(cloth.particles().position(centre as usize), pinned_at);
    assert_eq!(intersecting_pairs(&cloth), 0, "the folded corner lies on the sheet, not through it");
}

/// A thin sheet (issue 38): the falling strip with a 2 mm self-contact thickness on its 1 cm
/// mesh — its triangles five times the thickness, so the faces and long edges, not the
/// particles, keep the layers apart — piles in 300 frames without intersecting itself (at
/// 1 cm, 0.5 cm and 0.2 cm alike: 0 pairs).
#[test]
// 27 s in release on a 2-vCPU machine (its faces and long edges are listed); far longer in a
// debug build.
#[cfg(not(debug_assertions))]
fn a_thin_strip_piles_without_passing_through_itself() {
    let cloth = run_preset("falling_strip", |s| s.self_thickness = 0.002, 300);
    assert!(
        cloth.particles().positions().map(|p| p.y).fold(f32::INFINITY, f32::min) < 0.01,
        "not on the ground yet"
    );
    assert_eq!(intersecting_pairs(&cloth), 0);
}

/// Issue 38: self-collision is on by default, and a shipped preset turns it off only with a
/// `//` comment on the line or just above it saying why.
#[test]
fn self_collision_is_on_by_default_and_a_preset_turns_it_off_only_saying_why() {
    assert!(SolverParams::default().self_collision);
    for path in shipped_presets() {
        let preset = Preset::load(&path).unwrap_or_else(|e| panic!("{e}"));
        if preset.solver.self_collision {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.trim_start().starts_with("self_collision: false"))
            .unwrap_or_else(|| panic!("{}: self-collision off without a `self_collision: false` line", path.display()));
        let said_why = lines[at].contains("//") || at > 0 && lines[at - 1].trim_start().starts_with("//");
        assert!(
            said_why,
            "{}: self-collision turned off without a comment saying why",
            path.display()
        );
    }
}

/// Issue 38's must-show: every shipped preset, run 600 frames with its shipped settings,
/// ends with no two triangles through each other.
#[test]
// 94-143 s in release on a 2-vCPU machine (22 presets × 600 frames with self-contacts), far
// longer in a debug build: release only. The runs are shared (`shipped_run`) with the tests
// that run a preset as shipped (presets.rs's 120 frames, the falling strip's pile, the sphere
// fold, silk and denim, two sheets on a ball, the flag's minute), so each is simulated once.
#[cfg(not(debug_assertions))]
fn every_shipped_preset_ends_600_frames_without_intersecting_triangles() {
    assert_eq!(SHIPPED_FRAMES, 600);
    let crossed: Vec<(String, usize)> = crate::common::shipped_preset_names()
        .into_iter()
        .map(|name| {
            let pairs = shipped_run(&name, SHIPPED_FRAMES, |run| intersecting_pairs(&run.cloth));
            (name, pairs)
        })
        .filter(|&(_, pairs)| pairs > 0)
        .collect();
    assert!(crossed.is_empty(), "intersecting triangle pairs after 600 frames: {crossed:?}");
}

/// `two_sheets_on_ball` with its self-contact thickness at 0.4 times the shipped 2.5 cm
/// (1 cm, below the 3 cm spacing of both sheets): the sheets still land on each other over
/// the ball without crossing.
#[test]
#[cfg(not(debug_assertions))]
fn two_thin_sheets_on_a_ball_do_not_pass_through_each_other() {
    let cloth = run_preset("two_sheets_on_ball", |s| s.self_thickness *= 0.4, 600);
    assert_eq!(intersecting_pairs(&cloth), 0);
}

/// The default curtain with both its pins removed (Ctrl+click in the app), dropped onto the
/// ground, after 400 frames: a pile with no two triangles through each other under the
/// shipped settings; with self-collision off the same pile passes through itself. The
/// curtain is jittered out of its plane by at most 10 µm (as the falling strip): exactly
/// flat, it lands on its bottom edge and, with self-collision's gentle landing, stays
/// standing (its top at 1.2 m after 400 frames) instead of folding.
#[test]
fn the_unpinned_default_curtain_piles_on_the_ground_without_intersecting() {
    let preset = load_preset("default");
    let spec = GridSpec {
        jitter: 1e-5,
        ..grid_of(&preset)
    };
    let dropped = |on: bool| {
        let mut cloth = Cloth::new(spec.build().unwrap(), &preset.material, preset.colliders.clone()).unwrap();
        for corner in [spec.index(0, 0), spec.index(spec.columns - 1, 0)] {
            cloth.set_pinned(corner, false);
        }
        assert_eq!(cloth.pinned_count(), 0);
        let solver = SolverParams {
            self_collision: on,
            ..preset.solver.clone()
        };
        run(&mut cloth, &solver, &preset.material, 400);
        let top = cloth.particles().positions().map(|p| p.y).fold(f32::MIN, f32::max);
        assert!(top < 0.3, "the curtain has not fallen into a pile: its top is at {top} m");
        intersecting_pairs(&cloth)
    };
    assert!(preset.solver.self_collision, "the shipped curtain collides with itself");
    let (on, off) = (dropped(true), dropped(false));
    eprintln!("unpinned curtain: {on} intersecting pairs with self-collision, {off} without");
    assert_eq!(on, 0);
    assert!(off > 0, "the curtain does not fall through itself without self-collision");
}

/// Resting piles stay calm (issue 38): the default curtain unpinned and dropped on the ground
/// piles up and comes to rest: the median kinetic energy over frames 900–1 200 is below
/// 1e-6 J. Whether a pile keeps a buzzing spot is chaotic, so four jitter seeds are tried:
/// while faces held only particles over their interiors (a particle on a fold's ridge sank
/// between two faces and was popped back out, substep after substep), one in three piles
/// buzzed at 1e-6 to 6e-5 J for good, and these four all did. A pile that settles still
/// creeps (layers sinking into each other at a few mm/s, 1e-8 to 2e-7 J) and now and then
/// slips (a release of its bending energy, up to 1e-3 J for a few dozen frames): the median
/// leaves a slip alone and the bound leaves room for the creep.
#[test]
// 25 s in release on a 2-vCPU machine; far longer in a debug build.
#[cfg(not(debug_assertions))]
fn an_unpinned_curtains_pile_comes_to_rest() {
    let preset = load_preset("default");
    for jitter in [1e-5, 3e-5, 7e-5, 1.5e-4] {
        let spec = GridSpec {
            jitter,
            ..grid_of(&preset)
        };
        let mut cloth = Cloth::new(spec.build().unwrap(), &preset.material, preset.colliders.clone()).unwrap();
        for corner in [spec.index(0, 0), spec.index(spec.columns - 1, 0)] {
            cloth.set_pinned(corner, false);
        }
        run(&mut cloth, &preset.solver, &preset.material, 900);
        let mut energies: Vec<f64> = (0..300)
            .map(|_| cloth.step(&preset.solver, &preset.material).unwrap().kinetic_energy)
            .collect();
        energies.sort_by(f64::total_cmp);
        let median = energies[energies.len() / 2];
        eprintln!("jitter {jitter}: median kinetic energy {median:.2e} J over frames 900-1200");
        assert!(median < 1e-6, "jitter {jitter}: the pile still moves, {median:.2e} J");
    }
}
