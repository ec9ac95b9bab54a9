//! Issue 18's pressure bodies (item 3), through the public API: the icosphere's volume against
//! the polyhedron's closed forms, the builder's checks, a balloon resting on the ground at its
//! target volume, a higher pressure factor inflating it, a cut deflating it, live pressure
//! changes, and bit-identical frames on one to three threads.

use drape::sim::{icosphere, with_assumed_cores, Cloth, Collider, Material, Model, Ray, SimError, SolverParams, MAX_THREADS};
use glam::Vec3;

/// The balloon of the issue: radius 0.3 m.
const RADIUS: f32 = 0.3;

/// A closed icosphere of `RADIUS` with `subdivisions`, resting a centimetre above the
/// collision shell of the ground, all of it one pressure body with factor `pressure` and
/// compliance 0.
fn balloon_model(subdivisions: u32, pressure: f32) -> Model {
    let centre = Vec3::new(0.0, RADIUS + 0.02, 0.0);
    let mut builder = icosphere(centre, RADIUS, subdivisions);
    let all = (0..builder.triangle_count() as u32).collect();
    builder.add_pressure_body(all, pressure, 0.0).expect("a closed sphere");
    builder.build().expect("a valid balloon")
}

/// The balloon on the ground with the default material.
fn balloon(subdivisions: u32, pressure: f32) -> Cloth {
    let ground = vec![Collider::Ground { height: 0.0, motion: None }];
    Cloth::new(balloon_model(subdivisions, pressure), &Material::default(), ground).expect("a valid cloth")
}

/// Steps `cloth` `frames` times with the default parameters (on `threads` threads).
fn run_frames(cloth: &mut Cloth, frames: usize, threads: u32) {
    let params = SolverParams {
        threads,
        ..SolverParams::default()
    };
    for _ in 0..frames {
        cloth.step(&params, &Material::default()).expect("a finite frame");
    }
}

/// The volume of a closed mesh in f64: the signed tetrahedra from the origin.
fn volume64(positions: &[Vec3], triangles: &[[u32; 3]]) -> f64 {
    let tetrahedron = |t: &[u32; 3]| {
        let [a, b, c] = t.map(|i| positions[i as usize].as_dvec3());
        a.dot(b.cross(c)) / 6.0
    };
    triangles.iter().map(tetrahedron).sum()
}

/// Subdivision 0 is the regular icosahedron of circumradius R, whose volume is
/// (5/12)(3 + √5) a³ with a = R / sin(2π/5). Every icosphere is a convex polyhedron with its
/// vertices on the sphere, so its exact volume (the sum of its tetrahedra, in f64) lies between
/// the balls of radius r_in (the nearest face plane) and R; the gap to the sphere is O(edge²)
/// and shrinks more than threefold per subdivision (fourfold in the limit). The engine's f32
/// volume and target agree with the f64 sum.
#[test]
fn icosphere_volume_matches_the_polyhedron_closed_forms() {
    let ball = |r: f64| 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
    let edge = RADIUS as f64 / (2.0 * std::f64::consts::PI / 5.0).sin();
    let icosahedron = 5.0 / 12.0 * (3.0 + 5f64.sqrt()) * edge.powi(3);
    let mut last_gap = f64::INFINITY;
    for subdivisions in 0..=4 {
        let model = balloon_model(subdivisions, 1.0);
        let n = 4u32.pow(subdivisions);
        assert_eq!(
            (model.positions.len(), model.triangles.len()),
            (10 * n as usize + 2, 20 * n as usize)
        );
        let exact = volume64(&model.positions, &model.triangles);
        if subdivisions == 0 {
            assert!((exact / icosahedron - 1.0).abs() < 1e-6, "icosahedron {exact} vs {icosahedron}");
        }
        let centre = Vec3::new(0.0, RADIUS + 0.02, 0.0).as_dvec3();
        let face_distance = |t: &[u32; 3]| {
            let [a, b, c] = t.map(|i| model.positions[i as usize].as_dvec3() - centre);
            (b - a).cross(c - a).normalize().dot(a)
        };
        let inradius = model.triangles.iter().map(face_distance).fold(f64::INFINITY, f64::min);
        assert!(
            ball(inradius) < exact && exact < ball(RADIUS as f64),
            "subdivision {subdivisions}: {exact}"
        );
        let gap = ball(RADIUS as f64) - exact;
        assert!(gap < last_gap / 3.0, "subdivision {subdivisions}: gap {gap} after {last_gap}");
        last_gap = gap;
        let cloth = Cloth::new(model, &Material::default(), Vec::new()).unwrap();
        let reading = cloth.pressure_volumes()[0];
        assert!(reading.closed);
        assert!((reading.volume as f64 / exact - 1.0).abs() < 1e-5, "{} vs {exact}", reading.volume);
        assert!((reading.target as f64 / exact - 1.0).abs() < 1e-5, "{} vs {exact}", reading.target);
    }
}

/// The builder refuses open surfaces, inconsistent winding, inside-out spheres, triangle
/// indices out of range and pressure factors or compliances out of range, each with an error
/// saying so, and adds nothing.
#[test]
fn the_builder_refuses_bodies_that_are_not_closed_or_out_of_range() {
    let message = |result: Result<u32, SimError>| result.expect_err("refused").to_string();
    let builder = || icosphere(Vec3::ZERO, 1.0, 1);
    let all: Vec<u32> = (0..80).collect();
    assert!(message(builder().add_pressure_body(all[1..].to_vec(), 1.0, 0.0)).contains("lies in 1 of its triangles"));
    let mut doubled = all.clone();
    doubled.push(5);
    assert!(message(builder().add_pressure_body(doubled, 1.0, 0.0)).contains("lies in 3 of its triangles"));
    assert!(message(builder().add_pressure_body(vec![0, 80], 1.0, 0.0)).contains("only 80 triangles"));
    assert!(message(builder().add_pressure_body(Vec::new(), 1.0, 0.0)).contains("needs triangles"));
    for bad in [-0.1, 10.5, f32::NAN, f32::INFINITY] {
        assert!(message(builder().add_pressure_body(all.clone(), bad, 0.0)).contains("pressure"));
        assert!(message(builder().add_pressure_body(all.clone(), 1.0, bad * 10.0)).contains("volume compliance"));
    }
    // Inside out: every triangle wound clockwise seen from outside.
    let mut inside_out = icosphere(Vec3::ZERO, 1.0, 0).build().unwrap();
    inside_out.triangles.iter_mut().for_each(|t| t.swap(1, 2));
    let mut builder = drape::sim::ModelBuilder::new();
    inside_out.positions.iter().for_each(|&p| _ = builder.add_particle(p, 1.0));
    inside_out.triangles.iter().for_each(|&t| builder.add_triangle(t));
    assert!(message(builder.add_pressure_body((0..20).collect(), 1.0, 0.0)).contains("positive volume"));
    assert!(builder.build().unwrap().pressure_bodies.is_empty());
    // A model whose body has a parameter out of range is refused by validation too.
    let mut model = balloon_model(0, 1.0);
    model.pressure_bodies[0].pressure = 11.0;
    assert!(Cloth::new(model, &Material::default(), Vec::new()).is_err());
}

/// Issue 18: a closed sphere of radius 0.3 m with pressure factor 1, dropped on the ground
/// under gravity with the default material and solver settings, keeps its volume within 1 %
/// of the target after 300 frames (measured: 0.01 %), its lowest particles on the ground's
/// collision shell. (Cut open, the same balloon loses 80 % of it: see
/// `a_cut_balloon_deflates`.)
#[test]
fn a_balloon_resting_on_the_ground_keeps_its_volume() {
    let mut cloth = balloon(3, 1.0);
    run_frames(&mut cloth, 300, 1);
    let reading = cloth.pressure_volumes()[0];
    let error = reading.volume / reading.target - 1.0;
    let lowest = cloth.particles().positions().map(|p| p.y).fold(f32::INFINITY, f32::min);
    let fastest = (0..cloth.particles().len())
        .map(|i| cloth.particles().velocity(i).length())
        .fold(0.0, f32::max);
    let thickness = SolverParams::default().collision_thickness;
    assert!((lowest - thickness).abs() < 1e-4, "lowest particle at {lowest} m");
    assert!(fastest < 0.2, "still moving at {fastest} m/s");
    assert!(
        reading.closed && error.abs() < 0.01,
        "volume {} vs target {}",
        reading.volume,
        reading.target
    );
}

/// Doubling the pressure factor doubles the volume the balloon is held at, and the resting
/// balloon grows to it within 1 % (stretching its cloth by about 2^(1/3) − 1 = 26 %).
#[test]
fn doubling_the_pressure_factor_grows_the_resting_volume() {
    let rest = |pressure| {
        let mut cloth = balloon(3, pressure);
        run_frames(&mut cloth, 300, 1);
        cloth.pressure_volumes()[0]
    };
    let (single, double) = (rest(1.0), rest(2.0));
    assert!((double.target / single.target - 2.0).abs() < 1e-6);
    assert!((double.volume / double.target - 1.0).abs() < 0.01, "{double:?}");
    assert!(double.volume > 1.98 * single.volume, "{} vs {}", double.volume, single.volume);
}

/// Two camera rays sweeping across the balloon's upper half cut it open: it loses its
/// pressure at once; a frame later it still holds over 90 % of its volume (the cloth has not
/// had time to fall in), and within 2 s (120 frames) its volume falls below half the target
/// (measured: 20 %).
#[test]
fn a_cut_balloon_deflates() {
    let mut cloth = balloon(3, 1.0);
    run_frames(&mut cloth, 30, 1);
    let eye = Vec3::new(0.0, 0.45, 2.0);
    let through = |x: f32| Ray {
        origin: eye,
        direction: (Vec3::new(x, 0.45, 0.0) - eye).normalize(),
    };
    let cut = cloth.cut(&through(-0.5), &through(0.5));
    assert!(cut > 0, "the stroke crosses the balloon");
    let reading = cloth.pressure_volumes()[0];
    assert!(!reading.closed, "a cut balloon is open");
    assert_eq!(reading.gauge_pressure, 0.0, "and has no pressure");
    let mut history = Vec::new();
    for _ in 0..120 {
        run_frames(&mut cloth, 1, 1);
        history.push(cloth.pressure_volumes()[0].volume / reading.target);
    }
    assert!(history[0] > 0.9, "just cut, it still holds its air");
    assert!(*history.last().unwrap() < 0.5, "volume / target every 10 frames: {history:?}");
}

/// The pressure factor changes live: raised to 1.5 the balloon grows to 1.5 V0; a factor out
/// of range or a body that does not exist is refused and changes nothing.
#[test]
fn the_pressure_factor_changes_live_and_is_validated() {
    let mut cloth = balloon(2, 1.0);
    run_frames(&mut cloth, 30, 1);
    for bad in [-1.0, 10.01, f32::NAN, f32::INFINITY] {
        assert!(matches!(
            cloth.set_pressure(0, bad),
            Err(SimError::InvalidParameter { name: "pressure", .. })
        ));
    }
    assert!(cloth.set_pressure(1, 1.5).unwrap_err().to_string().contains("no pressure body 1"));
    assert_eq!(cloth.model().pressure_bodies[0].pressure, 1.0);
    cloth.set_pressure(0, 1.5).unwrap();
    run_frames(&mut cloth, 120, 1);
    let reading = cloth.pressure_volumes()[0];
    let rest_volume = volume64(&cloth.model().positions, cloth.triangles()) as f32;
    assert!((reading.target / (1.5 * rest_volume) - 1.0).abs() < 1e-5);
    assert!((reading.volume / reading.target - 1.0).abs() < 0.01, "{reading:?}");
}

/// The pressure pass is one serial reduction on thread 0, so a balloon of 10 242 particles
/// (large enough to be split between threads) gives bit-identical frames on one, two and
/// three threads, also after a cut opens it.
#[test]
fn a_balloon_is_bit_identical_on_one_to_three_threads() {
    with_assumed_cores(MAX_THREADS, || {
        let run = |threads: u32| {
            let mut cloth = balloon(5, 1.5);
            let params = SolverParams {
                threads,
                ..SolverParams::default()
            };
            assert_eq!(cloth.threads_used(&params), threads);
            // 10 frames whole and 5 cut open (it ran 20 and 10): a split of the reduction
            // rounds differently from the first frame, and the cut's frames are what the
            // pressure pass does with an opened body.
            run_frames(&mut cloth, 10, threads);
            let eye = Vec3::new(0.0, 0.5, 2.0);
            let through = |x: f32| Ray {
                origin: eye,
                direction: (Vec3::new(x, 0.5, 0.0) - eye).normalize(),
            };
            assert!(cloth.cut(&through(-0.1), &through(0.1)) > 0, "the cut opens the balloon");
            run_frames(&mut cloth, 5, threads);
            (cloth.pressure_volumes(), cloth.particles().positions().collect::<Vec<_>>())
        };
        let one = run(1);
        assert!(one.1.iter().all(|p| p.is_finite()));
        for threads in [2, 3] {
            assert!(run(threads) == one, "threads 1 and {threads} differ");
        }
    })
}

/// The icosphere's points lie on the sphere and its triangles face outward.
#[test]
fn icosphere_points_lie_on_the_sphere_facing_out() {
    let centre = Vec3::new(1.0, 2.0, 3.0);
    let model = icosphere(centre, 0.5, 2).build().unwrap();
    assert!(model.positions.iter().all(|p| (p.distance(centre) - 0.5).abs() < 1e-6));
    for t in &model.triangles {
        let [a, b, c] = t.map(|i| model.positions[i as usize].as_dvec3());
        let outward = (a + b + c) / 3.0 - centre.as_dvec3();
        assert!((b - a).cross(c - a).dot(outward) > 0.0);
    }
}

/// The gauge pressure λ/h² is a pressure in Pa: in equilibrium, with no gravity or contact,
/// the forces on every vertex cancel, and summing x_i · (force on i) over the vertices gives
/// the virial identity 3 p V = Σ_e T_e l_e (a distance constraint's gradients give
/// Σ x_i·∇_i C = l, the volume's give 3V, being homogeneous of degree 3, and a hinge's give 0,
/// angles being scale-free). A balloon inflated to k = 2, its cloth stretched, reads the
/// pressure its edge tensions hold. The identity is exact for forces at one configuration;
/// Gauss–Seidel evaluates each projection's gradients where the sweep has got to, so it holds
/// to first order in the corrections (1.0 % at the default settings, 0.5–0.7 % with 10 or 40
/// sweeps), hence 2 %. A pressure in other units (λ, λ h², a sixth of V) misses by orders.
#[test]
fn the_gauge_pressure_balances_the_membrane_tension() {
    let centre = Vec3::new(0.0, 1.0, 0.0);
    let mut builder = icosphere(centre, RADIUS, 3);
    let all = (0..builder.triangle_count() as u32).collect();
    builder.add_pressure_body(all, 2.0, 0.0).unwrap();
    let mut cloth = Cloth::new(builder.build().unwrap(), &Material::default(), Vec::new()).unwrap();
    let params = SolverParams {
        gravity: Vec3::ZERO,
        air_damping: 2.0,
        ..SolverParams::default()
    };
    for _ in 0..300 {
        cloth.step(&params, &Material::default()).unwrap();
    }
    let reading = cloth.pressure_volumes()[0];
    let h = params.substep_dt();
    let p = cloth.particles();
    let virial: f64 = cloth
        .live_distance_ids()
        .map(|id| {
            let c = cloth.model().distances[id as usize];
            let length = p.position(c.a as usize).distance(p.position(c.b as usize));
            cloth.tension(id, h).unwrap() as f64 * length as f64
        })
        .sum();
    let expected = virial / (3.0 * reading.volume as f64);
    assert!(expected > 100.0, "the stretched cloth holds a pressure: {expected} Pa");
    assert!(
        (reading.gauge_pressure as f64 / expected - 1.0).abs() < 0.02,
        "{} vs {expected} Pa",
        reading.gauge_pressure
    );
}

/// A renumbered model keeps its pressure bodies (they list triangles, which keep their
/// order): the shuffled balloon's rest volume is the ordered one's bit for bit, and it rests
/// at it as the ordered one does.
#[test]
fn a_shuffled_balloon_keeps_its_body_and_volume() {
    let ordered = balloon_model(3, 1.0);
    let (shuffled, _) = ordered.shuffled(11);
    assert_eq!(shuffled.pressure_bodies, ordered.pressure_bodies);
    let ground = vec![Collider::Ground { height: 0.0, motion: None }];
    let mut cloth = Cloth::new(shuffled, &Material::default(), ground).unwrap();
    assert_eq!(cloth.pressure_volumes()[0].target, balloon(3, 1.0).pressure_volumes()[0].target);
    run_frames(&mut cloth, 120, 1);
    let reading = cloth.pressure_volumes()[0];
    assert!((reading.volume / reading.target - 1.0).abs() < 0.01, "{reading:?}");
}

/// Tearing opens a body as a cut does: a balloon of a material that tears at 20 % strain,
/// inflated at once to three times its volume (44 % strain), bursts (in its first frame),
/// loses its pressure and falls below half its rest volume (a sixth of its target) within 2 s.
#[test]
fn an_overinflated_balloon_bursts() {
    let tearable = Material {
        tear_strain: Some(0.2),
        ..Material::default()
    };
    let mut cloth = Cloth::new(
        balloon_model(3, 3.0),
        &tearable,
        vec![Collider::Ground { height: 0.0, motion: None }],
    )
    .unwrap();
    // Off: with self-collision on (issue 38) the balloon bursts at frame 2 but its velocity
    // clamp slows the skin's collapse, which still holds 0.072 m³ (64 % of the rest volume)
    // after 2 s; reported for the clamp's review.
    let params = SolverParams {
        self_collision: false,
        ..SolverParams::default()
    };
    let mut burst_at = None;
    for frame in 0..120 {
        cloth.step(&params, &tearable).unwrap();
        if burst_at.is_none() && !cloth.pressure_volumes()[0].closed {
            burst_at = Some(frame);
        }
    }
    let reading = cloth.pressure_volumes()[0];
    assert!(cloth.torn_edges() > 0 && burst_at.is_some(), "{reading:?}");
    assert!(
        reading.volume < 0.5 * reading.target / 3.0,
        "{reading:?} (burst at frame {burst_at:?})"
    );
}
