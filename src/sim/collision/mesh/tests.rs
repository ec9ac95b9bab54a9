use glam::Vec3;

use super::*;

/// An axis-aligned box of half extents `half` centred at the origin: 8 corners, 12
/// triangles, wound `outward` or inward.
fn cube(half: Vec3, outward: bool) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let positions = (0..8)
        .map(|k| {
            half * Vec3::new(
                if k & 1 == 0 { -1.0 } else { 1.0 },
                if k & 2 == 0 { -1.0 } else { 1.0 },
                if k & 4 == 0 { -1.0 } else { 1.0 },
            )
        })
        .collect();
    // Each face as a quad of corner numbers (bit 0 = +x, bit 1 = +y, bit 2 = +z), outward.
    let quads = [[0, 4, 6, 2], [1, 3, 7, 5], [0, 1, 5, 4], [2, 6, 7, 3], [0, 2, 3, 1], [4, 5, 7, 6]];
    let triangles = quads
        .iter()
        .flat_map(|&[a, b, c, d]| [[a, b, c], [a, c, d]])
        .map(|[a, b, c]| if outward { [a, b, c] } else { [a, c, b] })
        .collect();
    (positions, triangles)
}

/// A flat square sheet of side `2 half` in the plane y = 0, `n` × `n` quads: open.
fn sheet(half: f32, n: u32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
    let step = 2.0 * half / n as f32;
    let positions = (0..=n)
        .flat_map(|j| (0..=n).map(move |i| Vec3::new(-half + i as f32 * step, 0.0, -half + j as f32 * step)))
        .collect();
    let at = |i: u32, j: u32| j * (n + 1) + i;
    let triangles = (0..n)
        .flat_map(|j| {
            (0..n).flat_map(move |i| {
                [
                    [at(i, j), at(i, j + 1), at(i + 1, j)],
                    [at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)],
                ]
            })
        })
        .collect();
    (positions, triangles)
}

/// Deterministic points in a cube of half size `half` (a linear congruential sequence).
fn points(count: usize, half: f32) -> Vec<Vec3> {
    let mut state = 0x2545_f491_u32;
    let mut next = move || {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (state >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
    };
    (0..count).map(|_| Vec3::new(next(), next(), next()) * half).collect()
}

#[test]
fn a_closed_cube_has_the_boxs_signed_distance_inside_and_out() {
    let half = Vec3::new(0.3, 0.2, 0.1);
    for outward in [true, false] {
        let (positions, triangles) = cube(half, outward);
        let shape = MeshShape::new(&positions, &triangles).unwrap();
        assert!(shape.is_closed(), "a cube is closed whichever way it is wound");
        for p in points(2000, 0.5) {
            let (exact, exact_normal) = super::super::box_surface(p, half);
            let s = shape.surface_within(p, f32::INFINITY, None).unwrap();
            assert!((s.distance - exact).abs() < 1e-5, "at {p}: {} against {exact}", s.distance);
            assert!((s.normal.length() - 1.0).abs() < 1e-4);
            if exact > 0.0 {
                assert!(
                    s.normal.dot(exact_normal) > 0.999,
                    "outside at {p}: normal {} against {exact_normal}",
                    s.normal
                );
            }
        }
    }
}

#[test]
fn a_bounded_query_finds_only_the_surface_within_its_reach() {
    let (positions, triangles) = cube(Vec3::splat(0.5), true);
    let shape = MeshShape::new(&positions, &triangles).unwrap();
    let p = Vec3::new(0.1, 0.53, -0.2);
    assert!(shape.surface_within(p, 0.02, None).is_none(), "3 cm away is beyond a 2 cm reach");
    let s = shape.surface_within(p, 0.04, None).unwrap();
    assert!((s.distance - 0.03).abs() < 1e-6 && s.normal.abs_diff_eq(Vec3::Y, 1e-6));
}

#[test]
fn an_open_sheet_is_a_two_sided_shell() {
    let (positions, triangles) = sheet(0.5, 8);
    let shape = MeshShape::new(&positions, &triangles).unwrap();
    assert!(!shape.is_closed());
    for (p, side) in [(Vec3::new(0.1, 0.004, 0.2), 1.0), (Vec3::new(-0.3, -0.007, 0.05), -1.0)] {
        let s = shape.surface_within(p, 0.01, None).unwrap();
        assert!(
            (s.distance - p.y.abs()).abs() < 1e-7,
            "unsigned on both sides: {} at {p}",
            s.distance
        );
        assert!(
            s.normal.abs_diff_eq(Vec3::Y * side, 1e-6),
            "pointing to the point's side: {}",
            s.normal
        );
    }
    // Beyond the rim the closest point is on the edge.
    let s = shape.surface_within(Vec3::new(0.53, 0.04, 0.0), 1.0, None).unwrap();
    assert!((s.distance - 0.05).abs() < 1e-6);
}

#[test]
fn a_path_through_a_sheet_hits_it_where_it_crosses_from_either_side() {
    let (positions, triangles) = sheet(0.5, 8);
    let shape = MeshShape::new(&positions, &triangles).unwrap();
    let from = Vec3::new(0.21, 0.3, -0.13);
    let hit = shape.first_hit(from, Vec3::new(0.0, -0.4, 0.0), 1.0, None).unwrap();
    assert!((hit.t - 0.75).abs() < 1e-6 && hit.normal.y.abs() > 0.9999);
    assert!(shape.first_hit(Vec3::new(0.21, -0.3, -0.13), Vec3::Y * 0.4, 1.0, None).is_some());
    assert!(
        shape.first_hit(from, Vec3::new(0.0, -0.2, 0.0), 1.0, None).is_none(),
        "stops short of the sheet"
    );
    assert!(
        shape
            .first_hit(Vec3::new(0.7, 0.3, 0.0), Vec3::new(0.0, -0.6, 0.0), 1.0, None)
            .is_none(),
        "beside it"
    );
    // Through a shared edge and a shared corner of the grid: one of its triangles counts.
    for through in [Vec3::new(0.125, 0.0, 0.05), Vec3::new(0.125, 0.0, 0.125)] {
        assert!(
            shape.first_hit(through + Vec3::Y * 0.1, Vec3::Y * -0.2, 1.0, None).is_some(),
            "through {through}"
        );
    }
}

#[test]
fn a_closed_mesh_blocks_only_paths_that_enter_it() {
    let (positions, triangles) = cube(Vec3::splat(0.1), true);
    let shape = MeshShape::new(&positions, &triangles).unwrap();
    let hit = shape
        .first_hit(Vec3::new(0.0, 0.5, 0.02), Vec3::new(0.0, -1.0, 0.0), 1.0, None)
        .unwrap();
    assert!(
        (hit.t - 0.4).abs() < 1e-6 && hit.normal.abs_diff_eq(Vec3::Y, 1e-6),
        "enters through the top"
    );
    assert!(
        shape.first_hit(Vec3::ZERO, Vec3::Y, 1.0, None).is_none(),
        "leaving from inside is free"
    );
}

/// The hierarchy answers as a check of every triangle would: closest distances and first
/// crossings on a mesh of many small triangles at random orientations.
#[test]
fn the_hierarchy_agrees_with_checking_every_triangle() {
    let centres = points(500, 0.5);
    let offsets = points(1500, 0.03);
    let positions: Vec<Vec3> = centres
        .iter()
        .enumerate()
        .flat_map(|(k, &c)| (0..3).map(move |j| (k, j, c)))
        .map(|(k, j, c)| c + offsets[3 * k + j])
        .collect();
    let triangles: Vec<[u32; 3]> = (0..500).map(|k| [3 * k, 3 * k + 1, 3 * k + 2]).collect();
    let shape = MeshShape::new(&positions, &triangles).unwrap();
    let corners: Vec<[Vec3; 3]> = triangles.iter().map(|t| t.map(|v| positions[v as usize])).collect();
    let brute_distance = |p: Vec3| {
        corners
            .iter()
            .map(|&c| p.distance(point_at(c, closest_barycentric(p, c))))
            .fold(f32::INFINITY, f32::min)
    };
    for p in points(300, 0.6) {
        let s = shape.surface_within(p, f32::INFINITY, None).unwrap();
        assert!((s.distance - brute_distance(p)).abs() < 1e-6, "at {p}");
        let bounded = shape.surface_within(p, 0.05, None);
        assert_eq!(bounded.is_some(), brute_distance(p) < 0.05, "bounded at {p}");
    }
    let directions = points(300, 0.4);
    for (from, d) in points(300, 0.5).into_iter().zip(directions) {
        let brute = corners
            .iter()
            .filter_map(|&c| segment_triangle(from, d, c))
            .filter(|&t| t <= 1.0)
            .fold(None, |best: Option<f32>, t| Some(best.map_or(t, |b| b.min(t))));
        assert_eq!(shape.first_hit(from, d, 1.0, None).map(|h| h.t), brute, "from {from} along {d}");
    }
}

#[test]
fn triangles_without_area_are_left_out() {
    let positions = [Vec3::ZERO, Vec3::X, Vec3::X * 2.0, Vec3::Z];
    let shape = MeshShape::new(&positions, &[[0, 1, 2], [0, 1, 3]]).unwrap();
    assert_eq!(shape.triangle_count(), 1);
    assert!(MeshShape::new(&positions, &[[0, 1, 2]]).is_err());
}

/// A particle's list of near triangles answers as the hierarchy does, bit for bit, wherever it
/// covers the question; it lists nothing beyond its reach.
#[test]
fn near_lists_answer_as_the_hierarchy_does() {
    let (positions, triangles) = sheet(0.5, 40);
    let shape = MeshShape::new(&positions, &triangles).unwrap();
    let mut near = NearTriangles::default();
    assert!(!near.covers(Vec3::ZERO, 0.0), "a fresh list covers nothing");
    let mut listed = 0;
    for (anchor, offset) in points(200, 0.4).into_iter().zip(points(200, 0.01)) {
        let anchor = anchor * Vec3::new(1.0, 0.02, 1.0);
        shape.gather(&mut near, anchor, 0.02);
        let p = anchor + offset;
        if near.for_query(p, 0.01).is_none() {
            continue;
        }
        listed += 1;
        assert_eq!(
            shape.surface_within(p, 0.01, Some(&near)),
            shape.surface_within(p, 0.01, None),
            "at {p}"
        );
        let path = Vec3::new(0.002, -0.02, 0.001);
        assert_eq!(
            shape.first_hit(p - path * 0.5, path * 0.4, 1.0, Some(&near)),
            shape.first_hit(p - path * 0.5, path * 0.4, 1.0, None)
        );
    }
    assert!(listed > 100, "only {listed} lists covered their questions");
}
