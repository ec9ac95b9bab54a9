//! Validation scenarios of docs/physics.md (§10): every expectation is computed from
//! its closed form here, never pasted from a run. V7 (tearing) lands with the tearing work,
//! V9 lives in `robustness.rs`.

use drape::sim::constraints::bend::{dihedral_angle, dihedral_gradients};
use drape::sim::{Cloth, Collider, Compliance, EdgeKind, GridSpec, Material, Model, ModelBuilder, Orientation, PinMode, SolverParams};
use glam::{Quat, Vec3};
use proptest::prelude::*;

use crate::common::{assert_close, pendulum, run, signed_distance, single_particle, untethered, validation_params, G};

/// Frame step of every scenario, s.
const DT: f32 = 1.0 / 60.0;

// ---------------------------------------------------------------------------------------
// V1 hanging mass
// ---------------------------------------------------------------------------------------

const V1_MASS: f32 = 1.0;
const V1_REST: f32 = 1.0;
const V1_ALPHA: f32 = 1e-3;
const V1_SETTINGS: [(u32, u32); 4] = [(1, 1), (1, 5), (10, 1), (4, 5)];

/// The V1 pendulum. The anchor sits at (0, L0, 0) so the mass hangs next to the origin where
/// f32 positions are finest: at |y| ≈ 1 the position quantum (1.2e-7 m) divided by h would
/// feed velocity noise of the order of the 1e-4 tolerance into the slowly damped oscillator.
/// Untethered, stepped with [`untethered`]: a tether would cap the elastic extension V1 measures.
fn hanging_mass() -> Cloth {
    pendulum(
        Vec3::new(0.0, V1_REST, 0.0),
        Vec3::new(0.0, -V1_REST, 0.0),
        V1_MASS,
        V1_ALPHA,
        &untethered(),
    )
}

/// Extension of the V1 constraint (anchor at (0, L0, 0)), m.
fn hanging_extension(cloth: &Cloth) -> f64 {
    let anchor = glam::DVec3::new(0.0, V1_REST as f64, 0.0);
    cloth.particles().position(1).as_dvec3().distance(anchor) - V1_REST as f64
}

#[test]
fn v1_hanging_mass_stays_at_equilibrium_with_tension_mg() {
    let expected = (V1_MASS * G * V1_ALPHA) as f64; // m g α
    for (substeps, iterations) in V1_SETTINGS {
        let mut cloth = hanging_mass();
        let equilibrium = Vec3::new(0.0, -V1_MASS * G * V1_ALPHA, 0.0);
        cloth.set_state(1, equilibrium, Vec3::ZERO).unwrap();
        let params = validation_params(DT, substeps, iterations);
        let h = params.substep_dt();
        for frame in 0..600 {
            cloth.step(&params, &untethered()).unwrap();
            let what = format!("S={substeps} n_it={iterations} frame {frame}");
            assert_close(&format!("{what}: extension"), hanging_extension(&cloth), expected, 1e-4 * expected);
            let tension = cloth.tension(0, h).unwrap() as f64;
            let mg = (V1_MASS * G) as f64;
            assert_close(&format!("{what}: tension −λ/h²"), tension, mg, 1e-4 * mg);
        }
    }
}

#[test]
fn v1_hanging_mass_converges_from_rest_length() {
    let expected = (V1_MASS * G * V1_ALPHA) as f64;
    for (substeps, iterations) in V1_SETTINGS {
        let mut cloth = hanging_mass();
        let params = validation_params(DT, substeps, iterations);
        // Backward Euler shrinks the oscillation by (1 + h²/(mα))^(−1/2) per substep; run
        // until the closed form says it is below 1e-6 of the extension.
        let h = params.substep_dt() as f64;
        let per_substep = -0.5 * (1.0 + h * h / (V1_MASS * V1_ALPHA) as f64).ln();
        let frames = ((1e-6f64).ln() / (per_substep * substeps as f64)).ceil() as u32;
        run(&mut cloth, &params, &untethered(), frames);
        let what = format!("S={substeps} n_it={iterations} after {frames} frames: extension");
        assert_close(&what, hanging_extension(&cloth), expected, 1e-4 * expected);
    }
}

// ---------------------------------------------------------------------------------------
// V2 oscillator vs the backward-Euler recurrence
// ---------------------------------------------------------------------------------------

/// A mass `m` (kg) on a spring of compliance `alpha` (m/N) to a pinned anchor, damped by β
/// (`beta`, N·s/m), stepped by backward Euler with step `h` (s).
struct Oscillator {
    h: f64,
    m: f64,
    alpha: f64,
    beta: f64,
}

/// e_1..=e_steps of e_{k+1} = (2e_k − e_{k−1} + (βh/m) e_k) / (1 + h²/(mα) + βh/m) with
/// e_0 = e_{−1} = e0; after every `substeps` steps (a frame) the stretch viscosity of
/// docs/physics.md §3 scales the step's speed (e_k − e_{k−1})/h by `viscous_factor`
/// (α/(α + τΔt/m) for a mass on a pinned anchor; 1 = none).
fn backward_euler_oscillator(oscillator: &Oscillator, e0: f64, steps: usize, substeps: usize, viscous_factor: f64) -> Vec<f64> {
    let &Oscillator { h, m, alpha, beta } = oscillator;
    let (mut previous, mut current) = (e0, e0);
    let mut out = Vec::with_capacity(steps);
    for step in 1..=steps {
        let next = (2.0 * current - previous + beta * h / m * current) / (1.0 + h * h / (m * alpha) + beta * h / m);
        (previous, current) = (current, next);
        if step % substeps == 0 {
            previous = current - (current - previous) * viscous_factor;
        }
        out.push(next);
    }
    out
}

/// x-coordinates minus rest length of the oscillator at the end of every frame, with the
/// material's stretch damping time `tau` (s).
fn xpbd_oscillator(substeps: u32, iterations: u32, beta: f32, tau: f32, frames: usize) -> (f32, Vec<f64>) {
    // Tethers off: the oscillator starts stretched by half its length, which a tether forbids.
    let material = Material {
        stretch_damping_time: tau,
        ..untethered()
    };
    let mut cloth = pendulum(Vec3::ZERO, Vec3::X, 1.0, 1e-3, &material);
    cloth.set_state(1, Vec3::new(1.5, 0.0, 0.0), Vec3::ZERO).unwrap();
    let params = SolverParams {
        gravity: Vec3::ZERO,
        constraint_damping: beta,
        ..validation_params(DT, substeps, iterations)
    };
    let trace = (0..frames)
        .map(|_| {
            cloth.step(&params, &material).unwrap();
            cloth.particles().position(1).x as f64 - 1.0
        })
        .collect();
    (params.substep_dt(), trace)
}

/// The XPBD oscillator at every frame against the recurrence of backward Euler (with the
/// frame's stretch viscosity, `tau`), for S = 1 and 4 and n_it = 1 and 5.
fn assert_oscillator_follows_backward_euler(beta: f32, tau: f32) {
    let frames = 240;
    for substeps in [1u32, 4] {
        let mut traces = Vec::new();
        for iterations in [1u32, 5] {
            let (h, trace) = xpbd_oscillator(substeps, iterations, beta, tau, frames);
            let (alpha, mass) = (1e-3f64, 1.0f64);
            let viscous_factor = alpha / (alpha + tau as f64 * DT as f64 / mass);
            let steps = frames * substeps as usize;
            let oscillator = Oscillator {
                h: h as f64,
                m: mass,
                alpha,
                beta: beta as f64,
            };
            let expected = backward_euler_oscillator(&oscillator, 0.5, steps, substeps as usize, viscous_factor);
            for (frame, &e) in trace.iter().enumerate() {
                let k = (frame + 1) * substeps as usize - 1;
                let what = format!("β={beta} τ={tau} S={substeps} n_it={iterations} frame {frame}");
                assert_close(&what, e, expected[k], 1e-5);
            }
            traces.push(trace);
        }
        for (frame, (one, five)) in traces[0].iter().zip(&traces[1]).enumerate() {
            assert_close(
                &format!("β={beta} τ={tau} S={substeps} frame {frame}: n_it=5 vs n_it=1"),
                *five,
                *one,
                1e-6,
            );
        }
    }
}

#[test]
fn v2_oscillator_matches_backward_euler_step_for_step() {
    for beta in [0.0f32, 2.0] {
        assert_oscillator_follows_backward_euler(beta, 0.0);
    }
}

/// The stretch viscosity (docs/physics.md §3) is the frame's backward-Euler dashpot: with
/// τ = 5 ms (the edge keeps α/(α + τΔt/m) ≈ 92 % of its stretching speed a frame) the
/// oscillator follows the recurrence with that factor applied at every frame's end, and it
/// loses amplitude the undamped one keeps.
#[test]
fn v2_stretch_viscosity_is_the_frames_backward_euler_dashpot() {
    assert_oscillator_follows_backward_euler(0.0, 5e-3);
    let amplitude = |trace: &[f64]| trace[180..].iter().fold(0.0f64, |a, e| a.max(e.abs()));
    let (_, undamped) = xpbd_oscillator(4, 1, 0.0, 0.0, 240);
    let (_, damped) = xpbd_oscillator(4, 1, 0.0, 5e-3, 240);
    assert!(
        amplitude(&damped) < 0.5 * amplitude(&undamped),
        "damped amplitude {:.4} m against {:.4} m undamped",
        amplitude(&damped),
        amplitude(&undamped)
    );
}

#[test]
fn v2_damping_changes_the_trajectory() {
    // Guards the test above against a solver that ignores β: the two recurrences differ.
    let (_, undamped) = xpbd_oscillator(1, 1, 0.0, 0.0, 60);
    let (_, damped) = xpbd_oscillator(1, 1, 2.0, 0.0, 60);
    let difference = undamped.iter().zip(&damped).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(difference > 1e-3, "β = 2 N·s/m changed the trajectory by only {difference}");
}

// ---------------------------------------------------------------------------------------
// V3 compliant chain
// ---------------------------------------------------------------------------------------

const CHAIN_N: usize = 20;
const CHAIN_REST: f32 = 0.1;
const CHAIN_ALPHA: f32 = 1e-4;

/// A pinned anchor at the origin with `CHAIN_N` 1 kg particles below it, constraint j joining
/// particles j and j + 1. Untethered (stepped with [`untethered`]): tethers would cap the
/// elastic extension V3 measures.
fn chain() -> Cloth {
    let mut b = ModelBuilder::new();
    let anchor = b.add_particle(Vec3::ZERO, 0.0);
    b.set_pinned(anchor, true);
    for i in 1..=CHAIN_N {
        let p = b.add_particle(Vec3::new(0.0, -CHAIN_REST * i as f32, 0.0), 1.0);
        b.add_distance(p - 1, p, EdgeKind::Stretch, Compliance::Fixed(CHAIN_ALPHA));
    }
    Cloth::new(b.build().unwrap(), &untethered(), Vec::new()).unwrap()
}

/// Places the chain at its analytic equilibrium: segment j (1-based from the top) carries the
/// weight of the n − j + 1 particles below it and stretches by α m g (n − j + 1).
fn place_chain_at_equilibrium(cloth: &mut Cloth) {
    let mut y = 0.0f64;
    for j in 1..=CHAIN_N {
        y -= CHAIN_REST as f64 + (CHAIN_ALPHA * G) as f64 * (CHAIN_N - j + 1) as f64;
        cloth.set_state(j as u32, Vec3::new(0.0, y as f32, 0.0), Vec3::ZERO).unwrap();
    }
}

fn chain_extension(cloth: &Cloth) -> f64 {
    -cloth.particles().position(CHAIN_N).y as f64 - CHAIN_N as f64 * CHAIN_REST as f64
}

fn chain_expected_extension() -> f64 {
    let n = CHAIN_N as f64;
    (1.0 * G * CHAIN_ALPHA) as f64 * n * (n + 1.0) / 2.0 // m g α n(n+1)/2 = 0.20601 m
}

#[test]
fn v3_compliant_chain_converged_extension_and_top_tension() {
    let expected = chain_expected_extension();
    for (substeps, iterations) in [(1u32, 100u32), (4, 25)] {
        let mut cloth = chain();
        place_chain_at_equilibrium(&mut cloth);
        let params = validation_params(DT, substeps, iterations);
        run(&mut cloth, &params, &untethered(), 600);
        let what = format!("S={substeps} n_it={iterations}");
        // 5e-4 relative: the f32 floor. Near equilibrium a link's correction is its error times
        // w/(w + α̃); once that is below half an ulp of |y| ≈ 2 m it rounds away, so each of the
        // 20 links can rest a few ulps off, all the same way in a top-down sweep. At S = 4 the
        // result is identical for 25, 50 and 100 iterations (1.4e-4 relative): converged,
        // stagnated in f32. A wrong coefficient (4/3, a missing h², α instead of α̃) is ≥ 1e-2 off.
        assert_close(
            &format!("{what}: total extension"),
            chain_extension(&cloth),
            expected,
            5e-4 * expected,
        );
        let top = (CHAIN_N as f32 * 1.0 * G) as f64; // n m g
        let tension = cloth.tension(0, params.substep_dt()).unwrap() as f64;
        assert_close(&format!("{what}: top tension"), tension, top, 1e-3 * top);
    }
}

#[test]
fn v3_compliant_chain_one_sweep_excess_is_bounded_by_g_h2_n2() {
    let expected = chain_expected_extension();
    for substeps in [10u32, 30] {
        let mut cloth = chain();
        place_chain_at_equilibrium(&mut cloth);
        let params = validation_params(DT, substeps, 1);
        let h = params.substep_dt() as f64;
        let bound = G as f64 * h * h * (CHAIN_N * CHAIN_N) as f64;
        // Started at the exact equilibrium, the chain swings (barely damped) about the one-sweep
        // steady state; each mode swings between 0 and twice its share of the steady excess, so
        // their sum stays within a few times the bound, and its time average over many periods
        // of the slowest mode (≈ 0.8 s) is the steady excess.
        let (frames, settle) = (900, 60);
        let mut sum = 0.0;
        for frame in 0..frames {
            cloth.step(&params, &untethered()).unwrap();
            let excess = chain_extension(&cloth) - expected;
            assert!(
                (-bound..=2.0 * bound).contains(&excess),
                "S={substeps} frame {frame}: excess {excess:.3e} m outside [−1, 2] × g h² n² = {bound:.3e}"
            );
            if frame >= settle {
                sum += excess;
            }
        }
        // The sign of the steady excess depends on the sweep order (the straightforward top-down
        // sweep lands slightly short at S = 30), its size does not.
        let mean = sum / (frames - settle) as f64;
        assert!(
            mean.abs() <= bound,
            "S={substeps}: mean excess {mean:.3e} m outside ±g h² n² = ±{bound:.3e}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// V4 hanging sheet vs Young's modulus
// ---------------------------------------------------------------------------------------

const SHEET_COLUMNS: u32 = 11;
const SHEET_ROWS: u32 = 21;
const SHEET_SPACING: f32 = 0.05;
const SHEET_MASS: f32 = 5e-4;
const SHEET_TOP: f32 = 0.5;

/// E t = 4e4 Pa × 0.5 mm = 20 N/m.
pub(crate) fn sheet_material() -> Material {
    Material {
        youngs_modulus: 4e4,
        thickness: 5e-4,
        // Tethers are an inextensibility limit; V4 measures elastic extension under pins.
        tethers: false,
        ..Material::default()
    }
}

/// The V4 sheet built from point masses (every particle exactly 5e-4 kg, unlike a lumped
/// grid whose boundary particles carry less), top row pinned, structural edges only with the
/// grid coefficient 1 (α = 1/(E t)). Every column is then an identical chain and the
/// horizontal edges keep their rest length, so the chain closed form holds exactly.
fn v4_sheet() -> Cloth {
    Cloth::new(v4_sheet_model(), &sheet_material(), Vec::new()).unwrap()
}

/// The model of [`v4_sheet`].
pub(crate) fn v4_sheet_model() -> Model {
    let mut b = ModelBuilder::new();
    for row in 0..SHEET_ROWS {
        for column in 0..SHEET_COLUMNS {
            // Rows span y ∈ [0.5, −0.5]: the smaller the coordinates, the finer f32 positions.
            let x = Vec3::new(column as f32 * SHEET_SPACING, SHEET_TOP - row as f32 * SHEET_SPACING, 0.0);
            let i = b.add_particle(x, SHEET_MASS);
            b.set_pinned(i, row == 0);
            if column > 0 {
                b.add_distance(i - 1, i, EdgeKind::Stretch, Compliance::Material(1.0));
            }
            if row > 0 {
                b.add_distance(i - SHEET_COLUMNS, i, EdgeKind::Stretch, Compliance::Material(1.0));
            }
        }
    }
    b.build().unwrap()
}

/// m g α n(n+1)/2 with α = 1/(E t) of `material` and n = 20: 0.0515 m for
/// [`sheet_material`].
pub(crate) fn v4_expected_displacement(material: &Material) -> f64 {
    let alpha = 1.0 / (material.youngs_modulus as f64 * material.thickness as f64); // 1/(E t)
    let n = (SHEET_ROWS - 1) as f64;
    SHEET_MASS as f64 * G as f64 * alpha * n * (n + 1.0) / 2.0
}

/// Displacement of every bottom-row particle below its rest-length position, m, of the
/// sheet whose particles start at number `first`.
pub(crate) fn v4_bottom_displacements(cloth: &Cloth, first: usize) -> Vec<f64> {
    let start_y = SHEET_TOP as f64 - (SHEET_ROWS - 1) as f64 * SHEET_SPACING as f64;
    let bottom = first + ((SHEET_ROWS - 1) * SHEET_COLUMNS) as usize;
    (0..SHEET_COLUMNS as usize)
        .map(|column| start_y - cloth.particles().position(bottom + column).y as f64)
        .collect()
}

#[test]
fn v4_hanging_sheet_holds_the_youngs_modulus_equilibrium() {
    let material = sheet_material();
    let expected = v4_expected_displacement(&material);
    let mut cloth = v4_sheet();
    // Place every column at the chain equilibrium derived from E t; a wrong compliance (e.g.
    // the 4/3 of the diagonal grid, or α = L0/(E h)) would swing it away within a period.
    let n = SHEET_ROWS - 1;
    for row in 1..=n {
        let sag: f64 = (1..=row).map(|j| (n - j + 1) as f64).sum::<f64>() * SHEET_MASS as f64 * G as f64 / 20.0;
        for column in 0..SHEET_COLUMNS {
            let i = row * SHEET_COLUMNS + column;
            let rest = cloth.model().positions[i as usize];
            cloth.set_state(i, rest - Vec3::new(0.0, sag as f32, 0.0), Vec3::ZERO).unwrap();
        }
    }
    // Converged settings (n_it ≥ 10): one sweep per substep would add its own excess
    // (bounded by g h² n², see V3).
    let params = validation_params(DT, 10, 10);
    for frame in 0..120 {
        cloth.step(&params, &material).unwrap();
        for (column, d) in v4_bottom_displacements(&cloth, 0).into_iter().enumerate() {
            // f32 positions quantised at ~3e-8 m, turned into velocity by Δx/h every substep,
            // keep the undamped sheet trembling at the 1e-5 m level; 1e-3 of 5 cm still
            // separates a compliance off by a few per cent.
            assert_close(
                &format!("frame {frame} bottom particle {column}: displacement"),
                d,
                expected,
                1e-3 * expected,
            );
        }
    }
}

#[test]
fn v4_hanging_sheet_settles_at_the_youngs_modulus_displacement() {
    let material = sheet_material();
    let expected = v4_expected_displacement(&material);
    let mut cloth = v4_sheet();
    // From rest length, constraint damping (which leaves converged equilibria unchanged, V8)
    // settles the column modes: the slowest, the first, decays at β μ₁/2m ≈ 1.8/s
    // (μ₁ = 4 sin²(π/82)), so 8 s leave ~1e-6 of the initial 5 cm swing. β is kept small
    // because γ = αβ/h (9 here) both slows Gauss–Seidel ((1 + γ) w against α̃: 30 sweeps)
    // and multiplies the f32 rounding of the relative motion it damps (γ = 60 put the rest
    // state off by 1e-3).
    let params = SolverParams {
        constraint_damping: 0.3,
        ..validation_params(DT, 10, 30)
    };
    run(&mut cloth, &params, &material, 480);
    for (column, d) in v4_bottom_displacements(&cloth, 0).into_iter().enumerate() {
        assert_close(&format!("bottom particle {column}: displacement"), d, expected, 1e-3 * expected);
    }
}

/// The V4 sheet with its particles renumbered at random: the solver no longer sees a grid
/// and sweeps the constraints in greedy colours (on the `[x, y, z, w]` copy with a vector
/// kernel), a different Gauss–Seidel order with the same fixed point, so the sheet must
/// settle at the same closed-form displacement. `new_index[i]` is particle i's new number.
#[test]
fn v4_shuffled_sheet_settles_at_the_same_displacement() {
    let material = sheet_material();
    let expected = v4_expected_displacement(&material);
    let ordered = v4_sheet();
    let (model, new_index) = ordered.model().shuffled(17);
    let mut cloth = Cloth::new(model, &material, Vec::new()).unwrap();
    assert!(!ordered.coloured_sweep() && cloth.coloured_sweep());
    let params = SolverParams {
        constraint_damping: 0.3,
        ..validation_params(DT, 10, 30)
    };
    run(&mut cloth, &params, &material, 480);
    let start_y = SHEET_TOP as f64 - (SHEET_ROWS - 1) as f64 * SHEET_SPACING as f64;
    let bottom = (SHEET_ROWS - 1) * SHEET_COLUMNS;
    for column in 0..SHEET_COLUMNS {
        let i = new_index[(bottom + column) as usize] as usize;
        let d = start_y - cloth.particles().position(i).y as f64;
        assert_close(&format!("bottom particle {column}: displacement"), d, expected, 1e-3 * expected);
    }
}

// ---------------------------------------------------------------------------------------
// V5 collisions
// ---------------------------------------------------------------------------------------

const THICKNESS: f32 = 0.01;

/// Penetration of `x` into the `thickness` shell of `collider` beyond the allowed 1e-4 of the
/// thickness (m; ≤ 0 means fine).
fn shell_violation(collider: &Collider, x: Vec3, thickness: f32) -> f64 {
    (thickness as f64 - signed_distance(collider, x.as_dvec3())) - 1e-4 * thickness as f64
}

/// Runs `cloth` for `seconds` one substep at a time (dt = h, S = 1, the same integration as
/// S substeps per frame) and checks every particle against every collider after each.
fn assert_no_penetration_after_every_substep(cloth: &mut Cloth, params: &SolverParams, material: &Material, seconds: f32) {
    let colliders = cloth.colliders().to_vec();
    for substep in 0..(seconds / params.dt).round() as u32 {
        cloth.step(params, material).unwrap();
        for (i, x) in cloth.particles().positions().enumerate() {
            for collider in &colliders {
                let violation = shell_violation(collider, x, params.collision_thickness);
                assert!(
                    violation <= 0.0,
                    "substep {substep}: particle {i} at {x} is {violation:.3e} m too deep in {collider:?}"
                );
            }
        }
    }
}

#[test]
fn v5_sheet_dropped_on_sphere_never_penetrates_and_rests_on_apex() {
    let sphere_center = Vec3::new(0.0, 0.6, 0.0);
    let radius = 0.5;
    let colliders = vec![
        Collider::Sphere {
            center: sphere_center,
            radius,
            motion: None,
        },
        Collider::Ground { height: 0.0, motion: None },
    ];
    // A 2 m sheet: its middle drapes over the sphere, its corners reach the ground.
    let spec = GridSpec {
        width: 2.0,
        height: 2.0,
        columns: 21,
        rows: 21,
        origin: Vec3::new(0.0, 1.25, 0.0),
        orientation: Orientation::Horizontal,
        pins: PinMode::None,
        ..GridSpec::default()
    };
    let material = Material::default();
    let mut cloth = Cloth::new(spec.build().unwrap(), &material, colliders.clone()).unwrap();
    // One substep per call (dt = h, S = 1) is the same integration as S substeps per frame and
    // lets the test look at the state after every substep. A little air damping lets the
    // draped sheet come to rest; it does not touch the contact projection under test.
    let substeps = 10;
    let params = SolverParams {
        dt: DT / substeps as f32,
        substeps: 1,
        collision_thickness: THICKNESS,
        air_damping: 0.5,
        ..validation_params(DT, 1, 1)
    };
    assert_no_penetration_after_every_substep(&mut cloth, &params, &material, 5.0);
    let ground_touched = cloth.particles().positions().any(|x| x.y < 2.0 * THICKNESS);
    assert!(ground_touched, "the sheet's corners should rest on the ground");
    let apex = spec.index(10, 10) as usize;
    let rest_height = sphere_center.y + radius + THICKNESS;
    let apex_y = cloth.particles().position(apex).y;
    assert_close("apex height (sphere top + thickness)", apex_y as f64, rest_height as f64, 1e-4);
    let speed = cloth.particles().velocity(apex).length();
    assert!(speed < 1e-3, "apex should rest in contact, moves at {speed} m/s");
}

#[test]
fn v5_box_and_capsule_are_never_penetrated() {
    // The shipped table-and-rail scene, at substep granularity.
    let preset =
        drape::preset::Preset::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/capsule_and_box.ron")).unwrap();
    assert!(preset.colliders.iter().any(|c| matches!(c, Collider::Box { .. })));
    assert!(preset.colliders.iter().any(|c| matches!(c, Collider::Capsule { .. })));
    let mut cloth = preset.build().unwrap();
    let params = SolverParams {
        dt: preset.solver.dt / preset.solver.substeps as f32,
        substeps: 1,
        ..preset.solver.clone()
    };
    assert_no_penetration_after_every_substep(&mut cloth, &params, &preset.material, 2.0);
    // And the cloth does lie on both of them.
    for collider in preset.colliders.iter().filter(|c| !matches!(c, Collider::Ground { .. })) {
        let touching = cloth
            .particles()
            .positions()
            .any(|x| signed_distance(collider, x.as_dvec3()) < (params.collision_thickness + 1e-3) as f64);
        assert!(touching, "nothing rests on {collider:?}");
    }
}

#[test]
fn v5_particle_started_below_the_ground_is_not_launched() {
    let mut cloth = single_particle(Vec3::new(0.0, -0.01, 0.0), vec![Collider::Ground { height: 0.0, motion: None }]);
    let params = SolverParams {
        collision_thickness: THICKNESS,
        ..validation_params(DT, 10, 1)
    };
    let mut highest = f32::NEG_INFINITY;
    for _ in 0..120 {
        cloth.step(&params, &Material::default()).unwrap();
        highest = highest.max(cloth.particles().position(0).y);
    }
    // "Rises at most 1 mm above it": above the surface it is pushed to (ground + thickness).
    assert!(highest <= THICKNESS + 1e-3, "particle popped up to {highest} m");
    assert_close("final height", cloth.particles().position(0).y as f64, THICKNESS as f64, 1e-6);
}

#[test]
fn v5_particle_resting_on_the_ground_keeps_zero_velocity() {
    let start = Vec3::new(0.3, THICKNESS, -0.2);
    let mut cloth = single_particle(start, vec![Collider::Ground { height: 0.0, motion: None }]);
    let params = SolverParams {
        collision_thickness: THICKNESS,
        ..validation_params(DT, 10, 1)
    };
    for frame in 0..600 {
        cloth.step(&params, &Material::default()).unwrap();
        let v = cloth.particles().velocity(0);
        assert!(v.length() <= 1e-5, "frame {frame}: resting particle moves at {v} m/s");
    }
    let drift = cloth.particles().position(0).distance(start);
    assert!(drift <= 1e-6, "resting particle drifted {drift} m in 10 s");
}

// ---------------------------------------------------------------------------------------
// V6 friction on an incline
// ---------------------------------------------------------------------------------------

const MU: f32 = 0.5;
const INCLINE_HALF_THICKNESS: f32 = 0.05;

/// A large thin box tilted by `degrees` about z whose top face passes through the origin,
/// and the rotation that maps the flat frame onto the incline.
fn incline(degrees: f32) -> (Collider, Quat) {
    let rotation = Quat::from_rotation_z(degrees.to_radians());
    let collider = Collider::Box {
        center: rotation * Vec3::new(0.0, -INCLINE_HALF_THICKNESS, 0.0),
        half_extents: Vec3::new(3.0, INCLINE_HALF_THICKNESS, 3.0),
        rotation_degrees: Vec3::new(0.0, 0.0, degrees),
        motion: None,
    };
    (collider, rotation)
}

fn friction_material() -> Material {
    Material {
        friction_static: MU,
        friction_kinetic: MU,
        ..Material::default()
    }
}

/// A single 1 kg particle resting on the incline, or a 5 × 5 patch (0.2 m, lumped masses,
/// shear and bending) lying on it, both exactly `THICKNESS` above the surface.
fn on_incline(degrees: f32, patch: bool) -> Cloth {
    let (collider, rotation) = incline(degrees);
    let mut model = if patch {
        GridSpec {
            width: 0.2,
            height: 0.2,
            columns: 5,
            rows: 5,
            origin: Vec3::ZERO,
            orientation: Orientation::Horizontal,
            pins: PinMode::None,
            ..GridSpec::default()
        }
        .build()
        .unwrap()
    } else {
        let mut b = ModelBuilder::new();
        b.add_particle(Vec3::ZERO, 1.0);
        b.build().unwrap()
    };
    // Rest lengths and angles are invariant under the rigid placement.
    for p in &mut model.positions {
        *p = rotation * (*p + Vec3::new(0.0, THICKNESS, 0.0));
    }
    Cloth::new(model, &friction_material(), vec![collider]).unwrap()
}

fn incline_params(substeps: u32) -> SolverParams {
    SolverParams {
        collision_thickness: THICKNESS,
        ..validation_params(DT, substeps, 1)
    }
}

/// Spacing of f32 values next to `v` (m for positions).
fn ulp(v: f32) -> f32 {
    f32::from_bits(v.abs().to_bits() + 1) - v.abs()
}

fn centroid(cloth: &Cloth) -> Vec3 {
    let p = cloth.particles();
    p.positions().sum::<Vec3>() / p.len() as f32
}

#[test]
fn v6_below_the_friction_angle_particle_and_patch_stay_put() {
    let critical = (MU as f64).atan().to_degrees(); // 26.565°
    let degrees = (critical - 5.0) as f32;
    for patch in [false, true] {
        for substeps in [1u32, 10, 100] {
            let mut cloth = on_incline(degrees, patch);
            let start: Vec<Vec3> = cloth.particles().positions().collect();
            run(&mut cloth, &incline_params(substeps), &friction_material(), 120);
            // Resting on a tilted face, f32 positions cannot hold still exactly: the ±1-ulp
            // normal jitter that v = Δx/h leaves every substep is not aligned with the slope
            // and walks the particle by up to half an ulp per substep. At S ≤ 10 that stays far
            // below 1e-6 m in 2 s; at S = 100 (12 000 substeps) it is bounded by N·ulp/2. Any
            // real creep (e.g. friction as v_t ← (1 − μ) v_t: ~1e-3 m) is far above both.
            let n_substeps = 120 * substeps as usize;
            let largest = start.iter().map(|x| x.abs().max_element()).fold(0.0, f32::max);
            let tolerance = 1e-6f32.max(n_substeps as f32 * ulp(largest) / 2.0);
            for (i, (x, x0)) in cloth.particles().positions().zip(&start).enumerate() {
                let s = x.distance(*x0);
                let normal = incline(degrees).1 * Vec3::Y;
                assert!(
                    s <= tolerance,
                    "θ={degrees:.3}° S={substeps} patch={patch}: particle {i} moved {s:.3e} m > {tolerance:.3e} ({:.3e} m along the normal)",
                    (x - *x0).dot(normal)
                );
            }
        }
    }
}

#[test]
fn v6_above_the_friction_angle_displacement_follows_coulomb() {
    let critical = (MU as f64).atan().to_degrees();
    let degrees = (critical + 8.0) as f32;
    let theta = (degrees as f64).to_radians();
    let acceleration = G as f64 * (theta.sin() - MU as f64 * theta.cos()); // g (sinθ − μ cosθ)
    let t = 0.25f64;
    let expected = 0.5 * acceleration * t * t;
    let (_, rotation) = incline(degrees);
    let down_slope = rotation * Vec3::NEG_X;
    // S = 100 is left out: its per-substep penetration g h² cosθ ≈ 2.2e-7 m is only ~100 f32
    // ulps of the patch's coordinates, and rounding of the contact depth then weakens the
    // friction enough to lengthen the slide by 0.8 % (particle) to 2.7 % (patch).
    for patch in [false, true] {
        for substeps in [1u32, 10, 30] {
            let mut cloth = on_incline(degrees, patch);
            // Start half the slide up the slope so the particle passes the origin, where f32
            // positions are finest: position rounding feeds v = Δx/h and accumulates as
            // ~ulp·N^1.5 over N substeps.
            let shift = -down_slope * (expected / 2.0) as f32;
            for i in 0..cloth.particles().len() {
                let x = cloth.particles().position(i);
                cloth.set_state(i as u32, x + shift, Vec3::ZERO).unwrap();
            }
            let start = centroid(&cloth);
            let frames = (t / DT as f64).round() as u32;
            run(&mut cloth, &incline_params(substeps), &friction_material(), frames);
            let s = (centroid(&cloth) - start).dot(down_slope) as f64;
            // Symplectic Euler with positional friction gives ½ a t (t + h): first order in h.
            let h = DT as f64 / substeps as f64;
            let what = format!("θ={degrees:.3}° S={substeps} patch={patch}: slide distance");
            // The scheme's exact discrete answer is ½ a t (t + h): first order in h. The
            // allowance on top is f32 rounding of the contact depth (g h² cosθ is ~1000 ulps
            // at S = 30, the bias grows like 1/h²: +2e-4 at S = 10, +1.4e-3 at S = 30).
            assert_close(&what, s, expected * (1.0 + h / t), 3e-3 * expected);
        }
    }
}

// ---------------------------------------------------------------------------------------
// V8 damping
// ---------------------------------------------------------------------------------------

#[test]
fn v8_constraint_damping_keeps_the_hanging_mass_equilibrium() {
    let expected = (V1_MASS * G * V1_ALPHA) as f64;
    for beta in [2.0f32, 50.0] {
        for (substeps, iterations) in V1_SETTINGS {
            let mut cloth = hanging_mass();
            let params = SolverParams {
                constraint_damping: beta,
                ..validation_params(DT, substeps, iterations)
            };
            run(&mut cloth, &params, &untethered(), 1200);
            let what = format!("β={beta} S={substeps} n_it={iterations}: extension");
            assert_close(&what, hanging_extension(&cloth), expected, 1e-4 * expected);
        }
    }
}

/// Issue 34 item 8: a 1 kg mass at rest on one soft constraint (α = 0.1 m/N) carries m g to
/// f32 rounding whatever the damping. Folded into an effective rest length, β = 5 N·s/m at
/// h = 1/7680 s (γ = αβ/h = 3840) amplified the rounding of the lengths by 1 + γ: 9.8079 N.
#[test]
fn v8_a_damped_soft_constraint_carries_m_g_at_rest_to_f32_rounding() {
    let (alpha, substeps) = (0.1f32, 128u32);
    let h = DT / substeps as f32;
    for beta in [5.0f32, 20.0] {
        let mut cloth = pendulum(Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.0, -1.0, 0.0), 1.0, alpha, &untethered());
        let params = SolverParams {
            constraint_damping: beta,
            air_damping: 0.0,
            ..validation_params(DT, substeps, 1)
        };
        // 40 s: the slower mode of β = 20 (overdamped, ζ = 3.2) decays as exp(−t k/β) = exp(−t/2 s).
        run(&mut cloth, &params, &untethered(), 2400);
        let tension = cloth.tension(0, h).expect("constraint 0") as f64;
        let extension = (cloth.particles().position(1).as_dvec3() - glam::DVec3::new(0.0, 1.0, 0.0)).length() - 1.0;
        // The tension from λ within 4 f32 ulps of m g (1 ulp is 9.5e-7 N), and from the
        // extension (T = e/α) within 4 ulps of the 1 m position's 6e-8 m, over α.
        let ulp = (G.next_up() - G) as f64;
        assert_close(&format!("β={beta}: tension"), tension, G as f64, 4.0 * ulp);
        let position_ulp = (1.0f32.next_up() - 1.0) as f64;
        assert_close(
            &format!("β={beta}: extension / α"),
            extension / alpha as f64,
            G as f64,
            4.0 * position_ulp / alpha as f64,
        );
    }
}

#[test]
fn v8_constraint_damping_has_no_effect_on_rigid_constraints() {
    // α = 0 makes γ = αβ/h = 0: a swinging rigid pendulum must not notice β.
    let trace = |beta: f32| {
        let mut cloth = pendulum(Vec3::ZERO, Vec3::new(0.8, -0.6, 0.0), 1.0, 0.0, &Material::default());
        let params = SolverParams {
            constraint_damping: beta,
            ..validation_params(DT, 10, 2)
        };
        (0..120)
            .map(|_| {
                cloth.step(&params, &Material::default()).unwrap();
                cloth.particles().position(1)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(trace(0.0), trace(10.0));
}

#[test]
fn v8_free_fall_is_not_slowed_by_constraint_damping_or_stretch_viscosity() {
    // A flat sheet at y = 0 falling for 0.5 s: it stays below |y| = 1.3 m, where the f32
    // position quantum is q = 2^-23 m·(1 m scale).
    let spec = GridSpec {
        columns: 11,
        rows: 11,
        origin: Vec3::ZERO,
        orientation: Orientation::Horizontal,
        pins: PinMode::None,
        ..GridSpec::default()
    };
    let (substeps, frames) = (10u32, 30u32);
    let fall = |beta: f32, tau: f32| {
        let material = Material {
            stretch_damping_time: tau,
            ..Material::default()
        };
        let mut cloth = Cloth::new(spec.build().unwrap(), &material, Vec::new()).unwrap();
        let params = SolverParams {
            constraint_damping: beta,
            ..validation_params(DT, substeps, 1)
        };
        run(&mut cloth, &params, &material, frames);
        (params.substep_dt() as f64, cloth.particles().positions().collect::<Vec<_>>())
    };
    let (h, undamped) = fall(0.0, 0.0);
    let (_, damped) = fall(5.0, 0.0);
    // The largest stretch viscosity (τ = 1 s) stops every edge's stretching within a frame;
    // a rigid fall stretches none.
    let (_, viscous) = fall(0.0, 1.0);
    // Symplectic Euler from rest: after N substeps the drop is g h² N(N + 1)/2. Velocities are
    // recomputed as Δx/h from f32 positions, so rounding (≤ q/2 per substep) accumulates to at
    // most N² q/4 — 0.2 % here, well below what any velocity damping would remove.
    let n = (frames * substeps) as f64;
    let expected = G as f64 * h * h * n * (n + 1.0) / 2.0;
    let tolerance = n * n * (2.0f64).powi(-23) / 4.0;
    for (i, (a, b)) in undamped.iter().zip(&damped).enumerate() {
        assert_close(&format!("particle {i}: drop without damping"), -a.y as f64, expected, tolerance);
        // Σ∇θ of a hinge is zero only to rounding, so β acts on a rigid translation at the
        // 1e-6 level; anything that really slowed the fall would be far above 1e-5.
        let change = (a.y - b.y).abs() as f64;
        assert!(
            change <= 1e-5 * expected,
            "particle {i}: β = 5 changed the fall by {change:.3e} m: {a} vs {b}"
        );
        let change = (a.y - viscous[i].y).abs() as f64;
        assert!(
            change <= 1e-5 * expected,
            "particle {i}: τ = 1 s changed the fall by {change:.3e} m: {a} vs {}",
            viscous[i]
        );
    }
}

// ---------------------------------------------------------------------------------------
// Dihedral bending: angle, gradients, invariants
// ---------------------------------------------------------------------------------------

/// A hinge with edge p2 = 0 → p3 = |e| x̂, wing p0 in the −y half of the x–y plane and wing p1
/// rotated about the edge by `fold` from the flat position (+y half).
fn folded_hinge(fold: f32) -> [Vec3; 4] {
    let p0 = Vec3::new(0.4, -0.7, 0.0);
    let p1 = Quat::from_rotation_x(fold) * Vec3::new(0.6, 0.8, 0.0);
    [p0, p1, Vec3::ZERO, Vec3::new(1.2, 0.0, 0.0)]
}

#[test]
fn dihedral_angle_of_a_known_fold_and_its_mirror() {
    for fold in [-2.5f32, -1.0, -0.1, 0.0, 0.3, 1.5, 3.0] {
        let [p0, p1, p2, p3] = folded_hinge(fold);
        let theta = dihedral_angle(p0, p1, p2, p3).unwrap();
        assert_close(&format!("|θ| of a fold by {fold}"), theta.abs() as f64, fold.abs() as f64, 1e-5);
        let mirror = |p: Vec3| Vec3::new(p.x, p.y, -p.z);
        let mirrored = dihedral_angle(mirror(p0), mirror(p1), mirror(p2), mirror(p3)).unwrap();
        assert_close(&format!("mirror of a fold by {fold}"), mirrored as f64, -theta as f64, 1e-5);
    }
    // Same fold direction, same sign: the angle tells a fold from its mirror image.
    let sign = |fold: f32| {
        let [p0, p1, p2, p3] = folded_hinge(fold);
        dihedral_angle(p0, p1, p2, p3).unwrap().signum()
    };
    assert_eq!(sign(0.5), sign(1.5));
    assert_ne!(sign(0.5), sign(-0.5));
}

#[test]
fn dihedral_angle_of_degenerate_hinges_is_none() {
    let e = Vec3::X;
    assert_eq!(dihedral_angle(Vec3::Y, -Vec3::Y, Vec3::ZERO, Vec3::ZERO), None, "zero-length edge");
    assert_eq!(dihedral_angle(0.5 * e, -Vec3::Y, Vec3::ZERO, e), None, "wing on the edge line");
    assert!(dihedral_gradients(Vec3::Y, 2.0 * e, Vec3::ZERO, e).is_none(), "collinear wing");
}

/// A well-shaped hinge: edge length in [0.5, 1.5], wings at least 0.3 from the edge line,
/// folded by less than 170°, then rigidly rotated and moved.
fn hinge_strategy() -> impl Strategy<Value = [Vec3; 4]> {
    (
        0.5f32..1.5,
        (-0.5f32..1.5, 0.3f32..1.0),
        (-0.5f32..1.5, 0.3f32..1.0),
        -2.9f32..2.9,
        (-3.0f32..3.0, -3.0f32..3.0, -3.0f32..3.0),
        (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0),
    )
        .prop_map(|(len, (a0, r0), (a1, r1), fold, (ax, ay, az), (tx, ty, tz))| {
            let rotation = Quat::from_euler(glam::EulerRot::XYZ, ax, ay, az);
            let local = [
                Vec3::new(a0, -r0, 0.0),
                Quat::from_rotation_x(fold) * Vec3::new(a1, r1, 0.0),
                Vec3::ZERO,
                Vec3::new(len, 0.0, 0.0),
            ];
            local.map(|p| rotation * p + Vec3::new(tx, ty, tz))
        })
}

proptest! {
    #[test]
    fn dihedral_gradient_matches_central_differences(p in hinge_strategy()) {
        let (theta, grads) = dihedral_gradients(p[0], p[1], p[2], p[3]).unwrap();
        let eps = 1e-3f32;
        for i in 0..4 {
            for axis in 0..3 {
                let shifted = |delta: f32| {
                    let mut q = p;
                    q[i][axis] += delta;
                    dihedral_angle(q[0], q[1], q[2], q[3]).unwrap()
                };
                let numeric = (shifted(eps) - shifted(-eps)) / (2.0 * eps);
                let analytic = grads[i][axis];
                prop_assert!(
                    (numeric - analytic).abs() <= 2e-3 * (1.0 + analytic.abs()),
                    "θ = {theta}: ∂θ/∂p{i}[{axis}] analytic {analytic}, central difference {numeric}"
                );
            }
        }
    }

    #[test]
    fn dihedral_gradients_have_no_net_force_or_torque(p in hinge_strategy()) {
        let (_, g) = dihedral_gradients(p[0], p[1], p[2], p[3]).unwrap();
        let scale = g.iter().map(|v| v.length()).fold(0.0, f32::max);
        let net: Vec3 = g.iter().sum();
        let torque: Vec3 = p.iter().zip(&g).map(|(x, gi)| x.cross(*gi)).sum();
        let lever = p.iter().map(|x| x.length()).fold(0.0, f32::max);
        prop_assert!(net.length() <= 1e-5 * scale, "Σ∇ = {net}");
        prop_assert!(torque.length() <= 1e-5 * scale * (1.0 + lever), "Σ x × ∇ = {torque}");
    }
}

#[test]
fn flat_grid_hinges_rest_at_zero_with_area_coefficients() {
    let spacing = 0.1f32;
    let spec = GridSpec {
        width: spacing * 4.0,
        height: spacing * 4.0,
        columns: 5,
        rows: 5,
        ..GridSpec::default()
    };
    let model = spec.build().unwrap();
    // Interior edges of a 4 × 4-quad grid split into two triangles each: 16 diagonals plus
    // 2 × 4 × 3 interior structural edges.
    assert_eq!(model.hinges.len(), 16 + 24);
    for h in &model.hinges {
        assert!(h.rest_angle.abs() < 1e-6, "flat hinge {h:?} has rest angle {}", h.rest_angle);
        let [a, b] = h.edge.map(|i| model.positions[i as usize]);
        let e2 = a.distance_squared(b) as f64;
        // (A1 + A2)/|e|² with two right triangles of area s²/2.
        let expected = (spacing * spacing) as f64 / e2;
        let Compliance::Material(coef) = h.compliance else {
            panic!("grid hinges use the material")
        };
        assert_close("hinge coefficient (A1 + A2)/|e|²", coef as f64, expected, 1e-5 * expected);
    }
}

// ---------------------------------------------------------------------------------------
// Material → compliance (docs/physics.md §2)
// ---------------------------------------------------------------------------------------

#[test]
fn material_moduli_follow_the_plate_formulas() {
    let m = Material {
        youngs_modulus: 3e6,
        poisson_ratio: 0.25,
        thickness: 4e-4,
        compliance_scale: 2.0,
        stretch_stiffness: 4.0,
        shear_stiffness: 0.5,
        bend_stiffness: 8.0,
        ..Material::default()
    };
    let (e, nu, t) = (3e6f64, 0.25f64, 4e-4f64);
    let d = e * t.powi(3) / (12.0 * (1.0 - nu * nu));
    let rel = |what: &str, a: f32, b: f64| assert_close(what, a as f64, b, 1e-6 * b);
    rel("E t", m.membrane_modulus(), e * t);
    rel("D", m.bending_rigidity(), d);
    rel(
        "stretch factor scale/(mult E t)",
        m.stretch_compliance_factor(),
        2.0 / (4.0 * e * t),
    );
    rel("shear factor", m.shear_compliance_factor(), 2.0 / (0.5 * e * t));
    rel("bend factor scale/(mult D)", m.bend_compliance_factor(), 2.0 / (8.0 * d));
}

#[test]
fn grid_edge_coefficients_follow_the_reference_table() {
    // Square cells: the table's 4/3 and 8/3 (1 without diagonals), unchanged by issue 34.
    for shear in [true, false] {
        let spec = GridSpec {
            columns: 4,
            rows: 4,
            shear,
            ..GridSpec::default()
        };
        let model = spec.build().unwrap();
        let (structural, diagonal) = if shear { (4.0 / 3.0, 8.0 / 3.0) } else { (1.0, f32::NAN) };
        let count = |kind| model.distances.iter().filter(|d| d.kind == kind).count();
        assert_eq!(count(EdgeKind::Stretch), (3 * 4 + 4 * 3) as usize);
        assert_eq!(count(EdgeKind::Shear), if shear { 2 * 3 * 3 } else { 0 });
        for d in &model.distances {
            let expected = if d.kind == EdgeKind::Stretch { structural } else { diagonal };
            assert_eq!(d.compliance, Compliance::Material(expected), "{d:?}");
        }
    }
}

/// Strain energy per rest area (J/m² per unit E t) that the edges of `spec`'s built `model`
/// store under the small homogeneous strain `strain` (ε_xx, ε_yy, ε_xy in the grid's plane):
/// each edge of stiffness E t/coefficient stores ½ k (l − L)² with l from the strained rest
/// positions, and every particle owns one edge across, one down and one pair of diagonals, so
/// each kind's mean energy per edge (pair) summed over the kinds, over the cell area, is the
/// lattice's energy density.
fn lattice_energy_density(spec: &GridSpec, model: &Model, strain: [f64; 3]) -> f64 {
    let [exx, eyy, exy] = strain;
    let deform = |p: Vec3| {
        let (x, y) = (p.x as f64, p.y as f64);
        (x + exx * x + exy * y, y + exy * x + eyy * y)
    };
    let (mut energy, mut count) = ([0.0f64; 3], [0usize; 3]);
    for d in &model.distances {
        let (pa, pb) = (model.positions[d.a as usize], model.positions[d.b as usize]);
        let ((xa, ya), (xb, yb)) = (deform(pa), deform(pb));
        let rest = pa.as_dvec3().distance(pb.as_dvec3());
        let stretched = ((xb - xa).powi(2) + (yb - ya).powi(2)).sqrt();
        let Compliance::Material(coefficient) = d.compliance else {
            panic!("{d:?}")
        };
        let kind = match d.kind {
            EdgeKind::Shear => 2,
            _ if (pa.y - pb.y).abs() < 1e-9 => 0,
            _ => 1,
        };
        energy[kind] += 0.5 * (stretched - rest).powi(2) / coefficient as f64;
        count[kind] += 1;
    }
    let cell = (spec.width / (spec.columns - 1) as f32) as f64 * (spec.height / (spec.rows - 1) as f32) as f64;
    let per_pair = [1.0, 1.0, 2.0];
    (0..3)
        .filter(|&k| count[k] > 0)
        .map(|k| energy[k] / count[k] as f64 * per_pair[k])
        .sum::<f64>()
        / cell
}

/// The plane-stress membrane's energy density per unit E t at Poisson ratio `nu`.
fn membrane_energy_density([exx, eyy, exy]: [f64; 3], nu: f64) -> f64 {
    (exx * exx + eyy * eyy + 2.0 * nu * exx * eyy + 2.0 * (1.0 - nu) * exy * exy) / (2.0 * (1.0 - nu * nu))
}

#[test]
fn a_grid_stores_the_isotropic_membranes_energy_whatever_its_cells_aspect() {
    // docs/physics.md §2: with diagonals the lattice is the ν = 1/3 membrane, on square cells,
    // on rectangles and on cells 93 times as long as wide (issue 34's 1024 × 12 on a metre);
    // without them it is the ν = 0 membrane in stretch. Strains of 1e-4 keep the geometric
    // nonlinearity (second order in the strain) at 1e-4 of the energy.
    let strains = [[1e-4, 0.0, 0.0], [0.0, 1e-4, 0.0], [0.0, 0.0, 1e-4], [1e-4, -0.5e-4, 0.7e-4]];
    for (columns, rows, width, height) in [
        (9, 9, 1.0, 1.0),
        (13, 9, 1.0, 1.0),
        (9, 5, 1.0, 1.5),
        (1024, 12, 1.0, 1.0),
        (12, 1024, 1.0, 1.0),
        (300, 4, 0.3, 1.0),
    ] {
        let spec = GridSpec {
            columns,
            rows,
            width,
            height,
            bending: false,
            ..GridSpec::default()
        };
        let ladder = GridSpec {
            shear: false,
            ..spec.clone()
        };
        let (model, ladder_model) = (spec.build().unwrap(), ladder.build().unwrap());
        for strain in strains {
            let what = format!("{columns}×{rows} over {width} × {height} m, strain {strain:?}");
            let expected = membrane_energy_density(strain, 1.0 / 3.0);
            assert_close(&what, lattice_energy_density(&spec, &model, strain), expected, 1e-3 * expected);
            if strain[2] == 0.0 {
                let expected = membrane_energy_density(strain, 0.0);
                assert_close(
                    &format!("ladder {what}"),
                    lattice_energy_density(&ladder, &ladder_model, strain),
                    expected,
                    1e-3 * expected,
                );
            }
        }
    }
}

#[test]
fn grid_masses_are_lumped_from_areal_density() {
    let spec = GridSpec {
        width: 1.5,
        height: 0.9,
        columns: 7,
        rows: 5,
        pins: PinMode::None,
        ..GridSpec::default()
    };
    let density = 0.3f32;
    let material = Material {
        areal_density: density,
        ..Material::default()
    };
    let cloth = Cloth::new(spec.build().unwrap(), &material, Vec::new()).unwrap();
    let p = cloth.particles();
    let total: f64 = (0..p.len()).map(|i| p.mass(i, density) as f64).sum();
    assert_close("Σ m_i = ρ_A × area", total, 0.3 * 1.5 * 0.9, 1e-6);
    for i in 0..p.len() {
        assert_close(
            "inverse mass",
            p.inverse_mass(i) as f64,
            1.0 / p.mass(i, density) as f64,
            1e-6 / p.mass(i, density) as f64,
        );
    }
}

/// A hanging mass on a material-derived edge stretches by m g × coef × scale / (mult E t):
/// the compliance scale and stiffness multipliers act on the physics, not just the numbers.
#[test]
fn material_compliance_reaches_the_solver() {
    let coef = 0.5f32;
    let material = Material {
        youngs_modulus: 2e5,
        thickness: 1e-3, // E t = 200 N/m
        compliance_scale: 3.0,
        stretch_stiffness: 2.0,
        // Tethers are an inextensibility limit; this measures elastic extension under pins.
        tethers: false,
        ..Material::default()
    };
    let mut b = ModelBuilder::new();
    // Masses hang next to y = 0 where f32 positions are finest (see `hanging_mass`).
    let anchor = b.add_particle(Vec3::Y, 0.0);
    b.set_pinned(anchor, true);
    let p = b.add_particle(Vec3::ZERO, 0.2);
    b.add_distance(anchor, p, EdgeKind::Stretch, Compliance::Material(coef));
    let q = b.add_particle(Vec3::new(0.5, 0.0, 0.0), 0.2);
    let anchor2 = b.add_particle(Vec3::new(0.5, 1.0, 0.0), 0.0);
    b.set_pinned(anchor2, true);
    b.add_distance(anchor2, q, EdgeKind::Stretch, Compliance::Fixed(1e-3));
    let mut cloth = Cloth::new(b.build().unwrap(), &material, Vec::new()).unwrap();
    let params = SolverParams {
        constraint_damping: 1.0,
        ..validation_params(DT, 10, 2)
    };
    run(&mut cloth, &params, &material, 600);
    let mg = 0.2 * G as f64;
    let material_alpha = coef as f64 * 3.0 / (2.0 * 2e5 * 1e-3);
    let fixed_alpha = 1e-3 * 3.0 / 2.0;
    let stretch = |i: usize, top: Vec3| cloth.particles().position(i).as_dvec3().distance(top.as_dvec3()) - 1.0;
    assert_close(
        "material edge extension",
        stretch(p as usize, Vec3::Y),
        mg * material_alpha,
        1e-3 * mg * material_alpha,
    );
    assert_close(
        "fixed edge extension",
        stretch(q as usize, Vec3::new(0.5, 1.0, 0.0)),
        mg * fixed_alpha,
        1e-3 * mg * fixed_alpha,
    );
}
