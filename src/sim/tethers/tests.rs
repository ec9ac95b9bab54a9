//! Tests of the tethers: distances through the cloth, the balls and their projection.

use super::*;

/// A straight chain of `n` particles 0.1 m apart, particle 0 pinned.
fn chain(n: usize) -> (Vec<Vec3>, Vec<bool>, Vec<RestEdge>) {
    let rest = (0..n).map(|i| Vec3::new(0.1 * i as f32, 0.0, 0.0)).collect();
    let mut pinned = vec![false; n];
    pinned[0] = true;
    let edges = (0..n as u32 - 1).map(|i| (i, i + 1, 0.1)).collect();
    (rest, pinned, edges)
}

fn lengths(t: &Tethers, i: usize) -> Vec<f32> {
    t.slots[i]
        .iter()
        .zip(&t.length[i])
        .filter(|(&s, _)| s != NONE)
        .map(|(_, &l)| l)
        .collect()
}

#[test]
fn a_chain_is_tethered_to_its_pin_at_the_rest_distance_times_the_slack() {
    let (rest, pinned, edges) = chain(5);
    let t = Tethers::build(&rest, &pinned, edges.into_iter(), |_| 1.5);
    assert_eq!(t.count(), 4, "every free particle has one tether (one pin)");
    for i in 1..5 {
        let expected = 1.5 * 0.1 * i as f32;
        assert!((lengths(&t, i)[0] - expected).abs() < 1e-6, "particle {i}: {:?}", lengths(&t, i));
    }
    assert!(lengths(&t, 0).is_empty(), "a pin has no tether");
}

/// A `columns` × `rows` grid of `dx` × `dy` cells with both diagonals: rest positions and
/// edges; particle (c, r) is r · columns + c.
fn grid(columns: usize, rows: usize, dx: f32, dy: f32) -> (Vec<Vec3>, Vec<RestEdge>) {
    let at = |c: usize, r: usize| (r * columns + c) as u32;
    let rest: Vec<Vec3> = (0..rows)
        .flat_map(|r| (0..columns).map(move |c| Vec3::new(c as f32 * dx, -(r as f32) * dy, 0.0)))
        .collect();
    let mut edges = Vec::new();
    for r in 0..rows {
        for c in 0..columns {
            let mut link = |c2: usize, r2: usize| {
                let (a, b) = (at(c, r), at(c2, r2));
                edges.push((a, b, rest[a as usize].distance(rest[b as usize])));
            };
            if c + 1 < columns {
                link(c + 1, r);
            }
            if r + 1 < rows {
                link(c, r + 1);
                if c + 1 < columns {
                    link(c + 1, r + 1);
                }
                if c > 0 {
                    link(c - 1, r + 1);
                }
            }
        }
    }
    (rest, edges)
}

#[test]
fn an_uncut_rectangular_grid_gets_straight_line_distances() {
    // 30 × 20 cells of 1.26 × 0.95 cm with both diagonals, pinned at one corner: edge paths
    // to the far corner are ~11 % longer than the straight line; tethers must not be. So on
    // long thin cells (issue 34: 9 cm × 1 mm and 1 mm × 9 cm), where a line from the corner
    // passes farther than half the short edge from every particle beside it.
    for (columns, rows, dx, dy) in [(31, 21, 0.0126, 0.0095), (12, 300, 0.09, 0.001), (300, 12, 0.001, 0.09)] {
        let (rest, edges) = grid(columns, rows, dx, dy);
        let mut pinned = vec![false; rest.len()];
        pinned[0] = true;
        let t = Tethers::build(&rest, &pinned, edges.into_iter(), |_| 1.0);
        for i in 1..rest.len() {
            let straight = rest[i].distance(rest[0]);
            assert!(
                (lengths(&t, i)[0] - straight).abs() <= 1e-5 * straight.max(1.0),
                "{columns} × {rows} cells of {dx} × {dy} m, particle {i}: {:?} vs {straight}",
                lengths(&t, i)
            );
        }
    }
}

#[test]
fn a_detour_around_a_cut_uses_the_path_not_the_straight_line() {
    // A U: 0 - 1 - 2 - 3 along the bottom and up, with 0 and 3 side by side at rest
    // (0.1 m apart) but joined only through the U (0.3 m).
    let rest = vec![
        Vec3::new(0.0, 0.0, 0.0),
        Vec3::new(0.0, -0.1, 0.0),
        Vec3::new(0.1, -0.1, 0.0),
        Vec3::new(0.1, 0.0, 0.0),
    ];
    let pinned = vec![true, false, false, false];
    let edges = vec![(0, 1, 0.1), (1, 2, 0.1), (2, 3, 0.1)];
    let t = Tethers::build(&rest, &pinned, edges.into_iter(), |_| 1.0);
    assert!((lengths(&t, 3)[0] - 0.3).abs() < 1e-6, "{:?}", lengths(&t, 3));
    // Particle 2 is 0.2 m away by the path and 0.1414 m in a straight line: also a detour.
    assert!((lengths(&t, 2)[0] - 0.2).abs() < 1e-6);
}

#[test]
fn particles_take_their_two_nearest_pins_and_pieces_without_pins_none() {
    // Chain 0..5 pinned at both ends, plus a separate edge 5 - 6.
    let mut rest: Vec<Vec3> = (0..5).map(|i| Vec3::new(0.1 * i as f32, 0.0, 0.0)).collect();
    rest.extend([Vec3::new(0.0, 1.0, 0.0), Vec3::new(0.1, 1.0, 0.0)]);
    let mut pinned = vec![false; 7];
    pinned[0] = true;
    pinned[4] = true;
    let edges = vec![(0, 1, 0.1), (1, 2, 0.1), (2, 3, 0.1), (3, 4, 0.1), (5, 6, 0.1)];
    let t = Tethers::build(&rest, &pinned, edges.into_iter(), |_| 1.0);
    let one = lengths(&t, 1);
    assert_eq!(one.len(), 2);
    assert!((one[0] - 0.1).abs() < 1e-6 && (one[1] - 0.3).abs() < 1e-6, "{one:?}");
    assert!(lengths(&t, 5).is_empty() && lengths(&t, 6).is_empty());
}

#[test]
fn two_tethers_are_met_at_once_at_the_closest_point_of_both_balls() {
    let a = Ball {
        centre: Vec3::new(-0.8, 0.0, 0.0),
        radius: 0.8f32.hypot(0.3),
    };
    let b = Ball {
        centre: Vec3::new(0.8, 0.0, 0.0),
        radius: 0.8f32.hypot(0.3),
    };
    let circle = meeting_circle(a, b);
    assert!(circle.is_some());
    let closest = |x: Vec3| closest_in_balls(x, a, b, circle);
    // Straight below the middle, 0.3 m allowed, 0.35 m away: pulled up onto the circle.
    let y = closest(Vec3::new(0.0, -0.35, 0.0));
    assert!(y.distance(Vec3::new(0.0, -0.3, 0.0)) < 1e-6, "{y}");
    // Off the symmetry plane: the result is on both spheres and no farther from x than
    // the known circle point below it.
    let x = Vec3::new(0.1, -0.4, 0.05);
    let y = closest(x);
    for ball in [a, b] {
        assert!((y.distance(ball.centre) - ball.radius).abs() < 1e-5);
    }
    assert!(y.x.abs() < 1e-6, "the circle lies in the plane x = 0");
    // Inside both: untouched; outside one only, with its projection inside the other:
    // that projection.
    let inside = Vec3::new(0.0, -0.1, 0.0);
    assert_eq!(closest(inside), inside);
    let near_a = Vec3::new(-0.8, -0.9, 0.0);
    let y = closest(near_a);
    assert!((y.distance(a.centre) - a.radius).abs() < 1e-5 && b.contains(y));
}

#[test]
fn pins_joined_by_an_edge_count_once_so_the_far_side_holds_too() {
    // Chain 0..6 with 0 and 1 pinned (one group, like a pinned edge) and 5 pinned.
    let rest: Vec<Vec3> = (0..6).map(|i| Vec3::new(0.1 * i as f32, 0.0, 0.0)).collect();
    let pinned = vec![true, true, false, false, false, true];
    let edges = (0..5).map(|i| (i, i + 1, 0.1));
    let t = Tethers::build(&rest, &pinned, edges, |_| 1.0);
    let two = lengths(&t, 2);
    assert_eq!(two.len(), 2, "{two:?}");
    assert!(
        (two[0] - 0.1).abs() < 1e-6 && (two[1] - 0.3).abs() < 1e-6,
        "pin 1 and pin 5, not pins 1 and 0: {two:?}"
    );
}

#[test]
fn projection_pulls_a_particle_back_to_its_sphere_and_never_pushes() {
    let (rest, pinned, edges) = chain(3);
    let t = Tethers::build(&rest, &pinned, edges.into_iter(), |_| 1.0);
    let mut pos = crate::sim::particles::Positions::default();
    pos.push([0.0, 0.0, 0.0, 0.0]);
    pos.push([0.05, 0.0, 0.0, 1.0]); // inside its sphere (0.1 m): untouched
    pos.push([0.0, -0.4, 0.0, 1.0]); // 0.4 m from the pin, allowed 0.2 m
    let kernels = [false, cfg!(target_arch = "x86_64") && is_x86_feature_detected!("avx2")];
    for vector in kernels.into_iter().filter(|&k| !k || kernels[1]) {
        let mut t = t.clone();
        let mut moved = pos.clone();
        t.prepare_frame(&|i| crate::sim::particles::xyz(pos.get(i)), None, &[], 1.0 / 900.0);
        // SAFETY: three particles, one thread, AVX2 checked.
        unsafe { t.project(moved.raw(), 0..3, vector) };
        assert_eq!(moved.get(1), [0.05, 0.0, 0.0, 1.0], "vector {vector}");
        let pulled = moved.get(2);
        assert!((pulled[1] + 0.2).abs() < 1e-6 && pulled[0] == 0.0, "vector {vector}: {pulled:?}");
    }
    // A held anchor does not act.
    let mut t = t.clone();
    let mut held = crate::sim::particles::Positions::default();
    held.push([0.0, 0.0, 0.0, 0.0]);
    held.push([0.0, -0.4, 0.0, 1.0]);
    t.prepare_frame(&|_| Vec3::ZERO, Some(0), &[], 1.0 / 900.0);
    // SAFETY: as above.
    unsafe { t.project(held.raw(), 0..2, false) };
    assert_eq!(held.get(1), [0.0, -0.4, 0.0, 1.0]);
}

/// Positions of a 12 × 9 grid pinned at its top corners, every particle displaced by up to
/// ±40 % of the sheet in a fixed pseudo-random pattern (many outside their balls, some
/// outside both), and the tethers prepared with the corners `spread` m farther apart.
fn scrambled_sheet(spread: f32) -> (Tethers, crate::sim::particles::Positions) {
    let (columns, rows) = (12, 9);
    let (rest, edges) = grid(columns, rows, 0.1, 0.1);
    let mut pinned = vec![false; rest.len()];
    pinned[0] = true;
    pinned[columns - 1] = true;
    let mut t = Tethers::build(&rest, &pinned, edges.into_iter(), |_| 1.0);
    let mut pos = crate::sim::particles::Positions::default();
    let mut seed = 0x2545_f491_u32;
    let mut noise = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        (seed as f32 / u32::MAX as f32 - 0.5) * 0.8
    };
    for (i, x) in rest.iter().enumerate() {
        let w = if pinned[i] { 0.0 } else { 1.0 };
        let moved = if pinned[i] {
            *x + Vec3::X * if i == 0 { -spread } else { 0.0 }
        } else {
            *x + Vec3::new(noise(), noise(), noise())
        };
        pos.push([moved.x, moved.y, moved.z, w]);
    }
    t.prepare_frame(&|i| crate::sim::particles::xyz(pos.get(i)), None, &[], 1.0 / 900.0);
    (t, pos)
}

#[test]
fn the_avx2_pass_moves_every_particle_exactly_as_the_scalar_pass() {
    if !(cfg!(target_arch = "x86_64") && is_x86_feature_detected!("avx2")) {
        eprintln!("skipped: no AVX2 on this CPU, only the scalar tether pass exists here");
        return;
    }
    for spread in [0.0, 0.3] {
        let (t, pos) = scrambled_sheet(spread);
        let n = pos.len();
        let (mut scalar, mut vector) = (pos.clone(), pos.clone());
        // SAFETY: every index below `n` is in bounds, one thread, AVX2 checked above.
        unsafe {
            t.project(scalar.raw(), 0..n, false);
            // An odd split, so whole vectors and a padded tail both run.
            t.project(vector.raw(), 0..37, true);
            t.project(vector.raw(), 37..n, true);
        }
        let moved = (0..n).filter(|&i| scalar.get(i) != pos.get(i)).count();
        assert!(moved > n / 4, "the scramble must leave many particles outside ({moved})");
        for i in 0..n {
            let (s, v) = (scalar.get(i), vector.get(i));
            assert!(
                s.iter().zip(&v).all(|(a, b)| a.to_bits() == b.to_bits()),
                "spread {spread}, particle {i}: {s:?} vs {v:?}"
            );
        }
    }
}

#[test]
fn anchors_pulled_apart_let_the_cloth_between_them_stretch_as_far() {
    // Corners 1.1 m apart at rest, pulled 0.3 m farther: every tether grows by 1.4 / 1.1,
    // so a top-edge particle can sit on the straight line between the corners.
    let (t, mut pos) = scrambled_sheet(0.3);
    let factor = 1.4f32 / 1.1;
    let middle = 5;
    let grown = [t.balls.a_radius[middle], t.balls.b_radius[middle]];
    for (k, radius) in grown.into_iter().enumerate() {
        assert!((radius / (t.length[middle][k] * factor) - 1.0).abs() < 1e-5, "tether {k}: {radius}");
    }
    // Particle 5 of the top edge, on the line between the moved corners: inside both balls.
    let on_line = Vec3::new(-0.3 + 1.4 * 5.0 / 11.0, 0.0, 0.0);
    pos.set_xyz(middle, on_line);
    // SAFETY: index in bounds, one thread, scalar pass.
    unsafe { t.project(pos.raw(), middle..middle + 1, false) };
    let after = pos.get(middle);
    assert!((after[0] - on_line.x).abs() < 1e-6 && after[1].abs() < 1e-6, "moved to {after:?}");
}
