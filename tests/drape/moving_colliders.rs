//! Issue 18 item 4, movable colliders: friction carries cloth with a moving surface, a
//! collider moved into a particle pushes it out no faster than itself, rays pick colliders,
//! scripted paths follow their closed forms, and a collider that does not move gives the static
//! collider's results bit for bit.

use std::path::Path;

use drape::preset::Preset;
use drape::sim::{Cloth, Collider, GridSpec, Material, Motion, Orientation, PinMode, Ray, SolverParams};
use glam::{Quat, Vec3};

use crate::common::{assert_close, single_particle, validation_params, G};

const DT: f32 = 1.0 / 60.0;
const SUBSTEPS: u32 = 10;
const THICKNESS: f32 = 0.01;

/// Validation settings (no damping, no speed clamp) with the collision thickness above.
fn params() -> SolverParams {
    SolverParams {
        collision_thickness: THICKNESS,
        ..validation_params(DT, SUBSTEPS, 1)
    }
}

fn friction(mu: f32) -> Material {
    Material {
        friction_static: mu,
        friction_kinetic: mu,
        ..Material::default()
    }
}

/// A wide slab whose top face is the plane y = 0, moving along +x at `speed` m/s for 10 s.
fn conveyor_box(speed: f32) -> Collider {
    Collider::Box {
        center: Vec3::new(0.0, -0.5, 0.0),
        half_extents: Vec3::new(50.0, 0.5, 50.0),
        rotation_degrees: Vec3::ZERO,
        motion: Some(Motion::Linear {
            velocity: Vec3::new(speed, 0.0, 0.0),
            duration: 10.0,
        }),
    }
}

/// Sticking: a particle resting on a box that starts moving sideways at v slides while
/// kinetic friction accelerates it at μ g, then sticks and rides at exactly v (relative
/// velocity 0), having slipped v²/(2 μ g) behind the box (up to one substep's travel v h).
#[test]
fn a_particle_on_a_moving_box_is_carried_at_its_speed_when_friction_holds() {
    let (speed, mu) = (0.5f32, 10.0f32);
    let mut cloth = single_particle(Vec3::new(0.0, THICKNESS, 0.0), vec![conveyor_box(speed)]);
    let frames = 120;
    for frame in 0..frames {
        cloth.step(&params(), &friction(mu)).unwrap();
        let v = cloth.particles().velocity(0);
        // Sliding ends after v / (μ g) = 5 ms, well inside the first frame.
        assert!(
            (v - Vec3::new(speed, 0.0, 0.0)).length() < 1e-4,
            "frame {frame}: the particle moves at {v} m/s, the box at {speed}"
        );
    }
    let box_travel = speed * DT * frames as f32;
    let slip = box_travel - cloth.particles().position(0).x;
    let expected = speed * speed / (2.0 * mu * G);
    let h = DT / SUBSTEPS as f32;
    assert_close("slip behind the box (m)", slip as f64, expected as f64, (speed * h) as f64);
    assert_close("height (m)", cloth.particles().position(0).y as f64, THICKNESS as f64, 1e-6);
}

/// Without friction the box slides away under the particle: not carried at all.
#[test]
fn a_particle_on_a_moving_box_without_friction_stays_put() {
    let start = Vec3::new(0.2, THICKNESS, -0.1);
    let mut cloth = single_particle(start, vec![conveyor_box(0.5)]);
    for _ in 0..120 {
        cloth.step(&params(), &friction(0.0)).unwrap();
        assert_eq!(cloth.particles().velocity(0).x, 0.0);
        assert_eq!(cloth.particles().velocity(0).z, 0.0);
    }
    assert_eq!(cloth.particles().position(0).x, start.x);
    assert_eq!(cloth.colliders()[0].position().x, 0.5 * 2.0);
}

/// A sphere dragged through a weightless particle at rest, frame by frame at 1.2 m/s and then
/// in one jump of 0.3 m (18 m/s over the frame), pushes it out in front of it; the particle is
/// never faster than the sphere and never left inside it.
#[test]
fn a_collider_moved_into_a_resting_particle_pushes_it_out_no_faster_than_itself() {
    let radius = 0.2;
    let sphere = Collider::Sphere {
        center: Vec3::new(-0.5, 0.0, 0.0),
        radius,
        motion: None,
    };
    let mut cloth = single_particle(Vec3::ZERO, vec![sphere]);
    let weightless = SolverParams {
        gravity: Vec3::ZERO,
        ..params()
    };
    let check = |cloth: &mut Cloth, step: Vec3| {
        let to = cloth.colliders()[0].position() + step;
        cloth.move_collider(0, to).unwrap();
        cloth.step(&weightless, &friction(0.5)).unwrap();
        let collider_speed = step.length() / DT;
        let speed = cloth.particles().velocity(0).length();
        assert!(
            speed <= collider_speed * (1.0 + 1e-4),
            "particle at {speed} m/s, sphere at {collider_speed}"
        );
        let gap = cloth.particles().position(0).distance(cloth.colliders()[0].position()) - radius;
        assert!(gap >= THICKNESS - 1e-5, "left {gap} m from the surface");
        speed
    };
    let steady = Vec3::new(1.2 * DT, 0.0, 0.0);
    let mut last = 0.0;
    for _ in 0..30 {
        last = check(&mut cloth, steady);
    }
    // Head-on, the particle ends up riding in front of the sphere at its speed.
    assert_close("pushed particle's speed (m/s)", last as f64, 1.2, 1e-3);
    check(&mut cloth, Vec3::new(0.3, 0.0, 0.0));
}

/// A particle inside a collider that moves (placed there, not moved into) is pushed out with
/// its start point: it leaves with the collider's velocity, up to the curvature's share
/// (each substep's shift s dips the surface by about s²/R, so v h / R relatively), instead of
/// popping out at depth / h (120 m/s here).
#[test]
fn a_particle_inside_a_moving_collider_leaves_without_popping() {
    let (velocity, radius) = (Vec3::new(0.0, 0.8, 0.0), 0.3);
    let sphere = Collider::Sphere {
        center: Vec3::ZERO,
        radius,
        motion: Some(Motion::Linear { velocity, duration: 10.0 }),
    };
    let h = DT / SUBSTEPS as f32;
    let allowed = velocity.length() * (1.0 + velocity.length() * h / radius);
    let mut cloth = single_particle(Vec3::new(0.1, 0.05, 0.0), vec![sphere]);
    let weightless = SolverParams {
        gravity: Vec3::ZERO,
        ..params()
    };
    for frame in 0..60 {
        cloth.step(&weightless, &friction(0.5)).unwrap();
        let speed = cloth.particles().velocity(0).length();
        assert!(speed <= allowed, "frame {frame}: {speed} m/s, the sphere {velocity}");
    }
}

/// A sphere, a box (square and turned 45° about y) and a capsule 5 m down the −z axis.
fn targets() -> Vec<Collider> {
    vec![
        Collider::Ground {
            height: -2.0,
            motion: None,
        },
        Collider::Sphere {
            center: Vec3::new(0.0, 0.0, -5.0),
            radius: 1.0,
            motion: None,
        },
        Collider::Box {
            center: Vec3::new(3.0, 0.0, -5.0),
            half_extents: Vec3::splat(1.0),
            rotation_degrees: Vec3::new(0.0, 45.0, 0.0),
            motion: None,
        },
        Collider::Capsule {
            a: Vec3::new(-3.0, -1.0, -5.0),
            b: Vec3::new(-3.0, 1.0, -5.0),
            radius: 0.5,
            motion: None,
        },
        Collider::Box {
            center: Vec3::new(0.0, 3.0, -5.0),
            half_extents: Vec3::new(0.5, 0.25, 2.0),
            rotation_degrees: Vec3::ZERO,
            motion: None,
        },
    ]
}

/// Rays along −z: the sphere's front at 5 − r, the turned box's front edge at 5 − √2, the
/// capsule's side at 5 − r, the flat box's front face at 5 − 2; a direction of length 2
/// halves the parameter; a ray between them misses, one down at the ground is not a pick.
#[test]
fn rays_pick_the_collider_they_enter_first_at_its_distance() {
    let cloth = single_particle(Vec3::new(0.0, 10.0, 0.0), targets());
    let along_z = |x: f32, y: f32| Ray {
        origin: Vec3::new(x, y, 0.0),
        direction: Vec3::NEG_Z,
    };
    let cases = [
        (along_z(0.0, 0.0), 1, 4.0),
        (along_z(3.0, 0.0), 2, 5.0 - 2f32.sqrt()),
        (along_z(-3.0, 0.5), 3, 4.5),
        (along_z(0.0, 3.0), 4, 3.0),
        (
            Ray {
                origin: Vec3::new(0.0, 0.0, 0.0),
                direction: Vec3::new(0.0, 0.0, -2.0),
            },
            1,
            2.0,
        ),
    ];
    for (ray, index, distance) in cases {
        let (picked, t) = cloth.pick_collider(&ray).unwrap_or_else(|| panic!("{ray:?} picked nothing"));
        assert_eq!(picked, index, "{ray:?}");
        assert_close("ray parameter", t as f64, distance as f64, 1e-4);
        assert_close(
            "own distance",
            cloth.colliders()[index].ray_distance(&ray).unwrap() as f64,
            distance as f64,
            1e-4,
        );
    }
    assert_eq!(cloth.pick_collider(&along_z(1.5, 0.0)), None, "between the sphere and the box");
    let down = Ray {
        origin: Vec3::new(0.0, 0.0, 2.0),
        direction: Vec3::NEG_Y,
    };
    assert_eq!(cloth.pick_collider(&down), None, "the ground is not picked");
    let from_inside = Ray {
        origin: Vec3::new(0.0, 0.0, -5.0),
        direction: Vec3::X,
    };
    assert_eq!(cloth.colliders()[1].ray_distance(&from_inside), None);
}

/// Scripted paths put the colliders where their closed forms say at every frame's end:
/// a box rising at 0.3 m/s for 1 s, then resting; a sphere swinging 0.25 m along (1, 0, 1)
/// with a 0.8 s period; a capsule (both ends) on the same swing.
#[test]
fn scripted_paths_follow_their_closed_forms() {
    let swing = Motion::Oscillate {
        axis: Vec3::new(1.0, 0.0, 1.0),
        amplitude: 0.25,
        period: 0.8,
    };
    let colliders = vec![
        Collider::Box {
            center: Vec3::new(0.0, -1.0, 0.0),
            half_extents: Vec3::splat(0.2),
            rotation_degrees: Vec3::new(0.0, 30.0, 0.0),
            motion: Some(Motion::Linear {
                velocity: Vec3::new(0.0, 0.3, 0.0),
                duration: 1.0,
            }),
        },
        Collider::Sphere {
            center: Vec3::new(2.0, 0.0, 0.0),
            radius: 0.1,
            motion: Some(swing),
        },
        Collider::Capsule {
            a: Vec3::new(-2.0, 0.0, 0.0),
            b: Vec3::new(-2.0, 0.5, 0.0),
            radius: 0.1,
            motion: Some(swing),
        },
    ];
    let mut cloth = single_particle(Vec3::new(0.0, 5.0, 0.0), colliders);
    for frame in 1..=120 {
        cloth.step(&params(), &Material::default()).unwrap();
        let t = frame as f64 * DT as f64;
        let rise = 0.3 * t.min(1.0);
        let along = 0.25 * (std::f64::consts::TAU * t / 0.8).sin() / 2f64.sqrt();
        let expected = [
            Vec3::new(0.0, (-1.0 + rise) as f32, 0.0),
            Vec3::new((2.0 + along) as f32, 0.0, along as f32),
            Vec3::new((-2.0 + along) as f32, 0.25, along as f32),
        ];
        for (collider, want) in cloth.colliders().iter().zip(expected) {
            let off = collider.position().distance(want);
            assert!(off < 1e-5, "frame {frame}: {collider:?} is {off} m from {want}");
        }
    }
    let Collider::Capsule { a, b, .. } = &cloth.colliders()[2] else {
        unreachable!()
    };
    assert_close("capsule length kept", a.distance(*b) as f64, 0.5, 1e-6);
}

/// A sheet falling over a sphere and onto a box on the ground, with each collider given as
/// `motion`.
fn drape(motion: Option<Motion>) -> Cloth {
    let spec = GridSpec {
        columns: 24,
        rows: 24,
        orientation: Orientation::Horizontal,
        origin: Vec3::new(0.1, 1.2, 0.0),
        pins: PinMode::None,
        ..GridSpec::default()
    };
    let colliders = vec![
        Collider::Ground { height: 0.0, motion },
        Collider::Sphere {
            center: Vec3::new(0.0, 0.6, 0.0),
            radius: 0.3,
            motion,
        },
        Collider::Box {
            center: Vec3::new(0.4, 0.2, 0.1),
            half_extents: Vec3::splat(0.2),
            rotation_degrees: Vec3::new(0.0, 20.0, 0.0),
            motion,
        },
    ];
    Cloth::new(spec.build().unwrap(), &Material::default(), colliders).unwrap()
}

/// Paths that never move (zero velocity, zero amplitude) give the static colliders' frames
/// bit for bit.
#[test]
fn colliders_that_do_not_move_give_the_static_results_bit_for_bit() {
    let run = |motion: Option<Motion>| {
        let mut cloth = drape(motion);
        for _ in 0..90 {
            cloth.step(&SolverParams::default(), &Material::default()).unwrap();
        }
        cloth.particles().positions().collect::<Vec<_>>()
    };
    let fixed = run(None);
    assert!(fixed.iter().any(|p| p.y < 0.9), "the sheet should reach the colliders");
    let still = Motion::Linear {
        velocity: Vec3::ZERO,
        duration: 5.0,
    };
    let frozen = Motion::Oscillate {
        axis: Vec3::Y,
        amplitude: 0.0,
        period: 1.0,
    };
    assert!(run(Some(still)) == fixed, "a zero-velocity path changed the result");
    assert!(run(Some(frozen)) == fixed, "a zero-amplitude swing changed the result");
}

/// A moved collider is where it was asked to be after the step, turns only as a
/// translation, and bad moves are refused without changing anything.
#[test]
fn move_collider_reaches_its_target_and_refuses_bad_moves() {
    let mut cloth = single_particle(Vec3::new(0.0, 5.0, 0.0), targets());
    let to = Vec3::new(0.5, 1.0, -4.0);
    cloth.move_collider(1, to).unwrap();
    assert_eq!(cloth.colliders()[1].position(), Vec3::new(0.0, 0.0, -5.0), "moves with the step");
    cloth.step(&params(), &Material::default()).unwrap();
    assert!(cloth.colliders()[1].position().distance(to) < 1e-6);
    cloth.move_collider(0, Vec3::new(7.0, -1.5, 3.0)).unwrap();
    cloth.step(&params(), &Material::default()).unwrap();
    assert_eq!(
        cloth.colliders()[0],
        Collider::Ground {
            height: -1.5,
            motion: None
        }
    );
    let before = cloth.colliders().to_vec();
    assert!(cloth.move_collider(9, Vec3::ZERO).is_err());
    assert!(cloth.move_collider(2, Vec3::new(f32::NAN, 0.0, 0.0)).is_err());
    assert!(cloth.move_collider(3, Vec3::new(2e4, 0.0, 0.0)).is_err());
    cloth.step(&params(), &Material::default()).unwrap();
    assert_eq!(cloth.colliders(), &before[..]);
}

/// A turned box keeps its rotation when moved.
#[test]
fn a_moved_box_keeps_its_rotation() {
    let turned = &targets()[2];
    let moved = turned.translated(Vec3::new(1.0, 2.0, 3.0));
    let Collider::Box { rotation_degrees, .. } = moved else {
        unreachable!()
    };
    assert_eq!(rotation_degrees, Vec3::new(0.0, 45.0, 0.0));
    let corner = Quat::from_rotation_y(45f32.to_radians()) * Vec3::splat(1.0) + Vec3::new(4.0, 2.0, -2.0);
    assert!(moved.surface(corner).distance.abs() < 1e-5);
}

/// The preset's `motion` field: parsed, round-tripped, and refused with the key's place
/// when out of range or misspelt.
#[test]
fn presets_describe_paths_and_refuse_bad_ones_at_their_place() {
    let text = "(\n    colliders: [\n        Ground(height: 0.0),\n        Sphere(\n            center: (0.0, 0.5, 0.0),\n            radius: 0.2,\n            motion: Some(Linear(velocity: (0.0, 0.4, 0.0), duration: 2.0)),\n        ),\n    ],\n)\n";
    let preset = Preset::parse(text, Path::new("p.ron")).unwrap();
    assert_eq!(
        preset.colliders[1].motion(),
        Some(&Motion::Linear {
            velocity: Vec3::new(0.0, 0.4, 0.0),
            duration: 2.0
        })
    );
    let again = Preset::parse(&preset.to_ron(), Path::new("q.ron")).unwrap();
    assert_eq!(again, preset);
    assert_eq!(again.to_ron(), preset.to_ron());
    let fast = text.replace("(0.0, 0.4, 0.0)", "(0.0, 400.0, 0.0)");
    let error = Preset::parse(&fast, Path::new("p.ron")).unwrap_err().to_string();
    assert_eq!(
        error,
        "p.ron:7:33: colliders[1]: invalid velocity = 400: components in [-100, 100] m/s"
    );
    let misspelt = text.replace("duration", "durration");
    let error = Preset::parse(&misspelt, Path::new("p.ron")).unwrap_err().to_string();
    assert!(error.starts_with("p.ron:7:"), "{error}");
    assert!(
        error.contains("unknown field `durration`") && error.contains("did you mean `duration`?"),
        "{error}"
    );
    let no_axis = text.replace(
        "Linear(velocity: (0.0, 0.4, 0.0), duration: 2.0)",
        "Oscillate(axis: (0.0, 0.0, 0.0), amplitude: 0.1, period: 1.0)",
    );
    let error = Preset::parse(&no_axis, Path::new("p.ron")).unwrap_err().to_string();
    assert!(
        error.starts_with("p.ron:7:") && error.contains("invalid axis = 0: a direction of non-zero length"),
        "{error}"
    );
}
