//! Tests of the candidate lists and their projection.

use glam::Vec3;

use super::lists::{Face, SelfContacts};
use super::projection::{project_faces, project_pairs};
use super::{SelfContactSettings, MAX_PAIRS_PER_PARTICLE, SKIN};
use crate::sim::particles::Particles;

/// Reproducible points in a 1 m cube (a 32-bit LCG's upper bits).
pub(super) fn random_points(count: usize) -> Vec<Vec3> {
    let mut seed = 3u32;
    let mut next = || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32
    };
    (0..count).map(|_| Vec3::new(next(), next(), next())).collect()
}

fn particles(points: &[(Vec3, f32)]) -> Particles {
    let mut p = Particles::default();
    for &(x, w) in points {
        p.push(x, w, Vec3::ZERO, 1.0, 0.0, w == 0.0);
    }
    p
}

const SETTINGS: SelfContactSettings = SelfContactSettings {
    thickness: 0.01,
    friction: 0.0,
    travel: 0.0,
    vertex_triangle: true,
    edge_edge: true,
};

/// Pairs are found within their reach and nowhere else, whatever cells they fall in;
/// constraint neighbours are left out; the rest distance caps the contact distance.
#[test]
fn pairs_are_listed_within_reach_only() {
    let points = [
        (Vec3::new(0.0, 0.0, 0.0), 1.0),
        (Vec3::new(0.0, 0.016, 0.0), 1.0),   // within 0.01 + 2 (0.002 + 0.0025) of 0
        (Vec3::new(0.0, -0.021, 0.0), 1.0),  // beyond every reach of 0
        (Vec3::new(0.0, 0.016, 0.004), 1.0), // adjacent to 1 by an edge
        (Vec3::new(0.009, 0.0, 0.0), 0.0),   // fixed, near fixed 5
        (Vec3::new(0.009, 0.0, 0.005), 0.0), // fixed
    ];
    let p = particles(&points);
    let mut rest: Vec<Vec3> = points.iter().map(|q| q.0 * 10.0).collect();
    rest[3] = rest[1] + Vec3::new(0.0, 0.0, 0.002);
    let mut contacts = SelfContacts::default();
    contacts.refresh_adjacency((0, points.len(), 1), || [(1u32, 3u32)].into_iter());
    let travel = 0.002;
    contacts.prepare(p.len(), |i| p.position(i), &rest, &[], SETTINGS, travel);
    let listed: Vec<(u32, u32)> = contacts.pairs().iter().map(|q| (q.a.min(q.b), q.a.max(q.b))).collect();
    let margin = travel + SKIN * SETTINGS.thickness;
    let mut expected = Vec::new();
    for i in 0..points.len() {
        for j in i + 1..points.len() {
            let min = SETTINGS.thickness.min(rest[i].distance(rest[j]));
            if points[i].0.distance(points[j].0) < min + 2.0 * margin && (i, j) != (1, 3) {
                expected.push((i as u32, j as u32));
            }
        }
    }
    let mut sorted = listed.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, expected);
    assert!(expected.contains(&(0, 1)) && expected.contains(&(4, 5)) && !expected.contains(&(0, 2)));
}

/// Particle 0 (free) at the origin and particle 1 at `second` with inverse mass `w`, far
/// apart at rest, listed with no travel.
fn two_particles(second: Vec3, w: f32) -> (Particles, SelfContacts, [Vec3; 2]) {
    let p = particles(&[(Vec3::ZERO, 1.0), (second, w)]);
    let rest = [Vec3::ZERO, Vec3::new(1.0, 0.0, 0.0)];
    let mut contacts = SelfContacts::default();
    contacts.refresh_adjacency((0, 2, 0), std::iter::empty);
    contacts.prepare(2, |i| p.position(i), &rest, &[], SETTINGS, 0.0);
    (p, contacts, rest)
}

/// A list is kept while the particles stay within its margin and made anew when one moves
/// beyond it.
#[test]
fn a_list_is_kept_until_a_particle_leaves_its_margin() {
    let (mut p, mut contacts, rest) = two_particles(Vec3::new(0.0, 0.05, 0.0), 1.0);
    assert!(contacts.pairs().is_empty());
    // Within the margin (0.25 × 1 cm): the stale, empty list stays.
    p.set_position(1, Vec3::new(0.0, 0.048, 0.0));
    contacts.prepare(2, |i| p.position(i), &rest, &[], SETTINGS, 0.0);
    assert!(contacts.pairs().is_empty());
    // Beyond it the pair is found.
    p.set_position(1, Vec3::new(0.0, 0.012, 0.0));
    contacts.prepare(2, |i| p.position(i), &rest, &[], SETTINGS, 0.0);
    assert_eq!(contacts.pairs().len(), 1);
}

/// A list is kept while the cloth moves as a whole, however far (a falling cloth), and made
/// anew once a particle has moved against the others by more than twice its skin: their
/// displacements then spread beyond it around their common shift.
#[test]
fn a_list_is_kept_while_the_cloth_moves_as_a_whole() {
    let (mut p, mut contacts, rest) = two_particles(Vec3::new(0.0, 0.05, 0.0), 1.0);
    let fall = Vec3::new(0.0, -1.0, 0.0);
    let skin = SKIN * SETTINGS.thickness;
    p.set_position(0, fall);
    p.set_position(1, Vec3::new(0.0, 0.05, 0.0) + fall);
    assert!(
        !contacts.begin(2, |i| p.position(i), &rest, SETTINGS, 0.0),
        "remade for a common shift"
    );
    // Apart by just under twice the skin: each is within the skin of their common shift.
    p.set_position(1, Vec3::new(0.0, 0.05 - 1.9 * skin, 0.0) + fall);
    assert!(
        !contacts.begin(2, |i| p.position(i), &rest, SETTINGS, 0.0),
        "remade within the skin"
    );
    p.set_position(1, Vec3::new(0.0, 0.05 - 2.1 * skin, 0.0) + fall);
    assert!(contacts.begin(2, |i| p.position(i), &rest, SETTINGS, 0.0), "kept beyond the skin");
}

/// Friction between layers is positional Coulomb: a free particle pressed 4 mm into a
/// fixed one while sliding 1 mm sideways in the substep sticks when μ d exceeds the slide
/// (μ = 1) and loses μ d of it otherwise (μ = 0.1).
#[test]
fn friction_between_layers_sticks_or_slides_by_mu_times_the_depth() {
    for (mu, expected_x) in [(1.0, 0.0), (0.1, 0.001 - 0.1 * 0.004)] {
        let (mut p, contacts, _) = two_particles(Vec3::new(0.001, 0.006, 0.0), 0.0);
        p.set_position(0, Vec3::new(0.001, 0.0, 0.0));
        // SAFETY: both particles exist; one thread.
        unsafe { project_pairs(&contacts.pairs(), mu, p.pos.raw(), p.prev.raw()) };
        let x = p.position(0);
        assert!((x.x - expected_x).abs() < 1e-7 && (x.y + 0.004).abs() < 1e-7, "μ = {mu}: {x}");
    }
}

/// Two free particles closer than the thickness end exactly the thickness apart, mass
/// weighted, their centre of mass unmoved; a pair farther apart is untouched.
#[test]
fn a_pair_is_pushed_to_the_thickness_conserving_momentum() {
    let (mut p, contacts, _) = two_particles(Vec3::new(0.0, 0.004, 0.0), 3.0);
    assert_eq!(contacts.pairs().len(), 1);
    let centre = |p: &Particles| (p.position(0) / 1.0 + p.position(1) / 3.0) / (1.0 + 1.0 / 3.0);
    let before = centre(&p);
    let prev = p.prev.raw();
    // SAFETY: both particles exist; one thread.
    let active = unsafe { project_pairs(&contacts.pairs(), 0.0, p.pos.raw(), prev) };
    let gap = p.position(0).distance(p.position(1));
    assert!((gap - SETTINGS.thickness).abs() < 1e-7, "{gap}");
    assert!(centre(&p).distance(before) < 1e-8);
    assert_eq!(active, 1);
    let moved = p.position(1);
    // SAFETY: as above.
    unsafe { project_pairs(&contacts.pairs(), 0.0, p.pos.raw(), p.prev.raw()) };
    assert!(p.position(1).distance(moved) < 1e-8);
}

/// A crowd of particles far closer than the thickness lists at most
/// [`MAX_PAIRS_PER_PARTICLE`] pairs per particle.
#[test]
fn a_crowd_lists_at_most_the_cap() {
    let points: Vec<(Vec3, f32)> = (0..400)
        .map(|i| (Vec3::new((i % 20) as f32, (i / 20) as f32, 0.0) * 1e-4, 1.0))
        .collect();
    let p = particles(&points);
    let rest: Vec<Vec3> = points.iter().map(|q| q.0 * 1e4).collect();
    let mut contacts = SelfContacts::default();
    contacts.refresh_adjacency((0, points.len(), 0), std::iter::empty);
    contacts.prepare(points.len(), |i| p.position(i), &rest, &[], SETTINGS, 0.0);
    assert_eq!(contacts.pairs().len(), MAX_PAIRS_PER_PARTICLE * points.len());
}

/// The triangle (0, 0, 0), (3 cm, 0, 0), (0, 0, 3 cm) in the ground plane with corner
/// inverse mass `w`, a particle 3 (inverse mass 1) at `start` moved to `now`, and its face
/// contact at the thickness.
fn over_a_triangle(w: f32, start: Vec3, now: Vec3) -> (Particles, Vec<Face>) {
    let mut p = particles(&[
        (Vec3::ZERO, w),
        (Vec3::new(0.03, 0.0, 0.0), w),
        (Vec3::new(0.0, 0.0, 0.03), w),
        (start, 1.0),
    ]);
    p.set_position(3, now);
    let face = Face {
        particle: 3,
        triangle: [0, 1, 2],
        min_distance: SETTINGS.thickness,
    };
    (p, vec![face])
}

/// A particle 4 mm above the centroid of a free triangle of equal masses (b_k = 1/3,
/// W = 1 + 3/9): it rises by 6 mm / W = 4.5 mm and every corner sinks 1.5 mm, so it ends
/// exactly the thickness above the face, the centre of mass unmoved.
#[test]
fn a_particle_over_a_face_is_pushed_to_the_thickness_conserving_momentum() {
    let centroid = Vec3::new(0.01, 0.0, 0.01);
    let (mut p, faces) = over_a_triangle(1.0, centroid + Vec3::Y * 0.004, centroid + Vec3::Y * 0.004);
    let centre = |p: &Particles| (0..4).map(|i| p.position(i)).sum::<Vec3>() / 4.0;
    let before = centre(&p);
    // SAFETY: the four particles exist; one thread.
    let active = unsafe { project_faces(&faces, 0.0, p.pos.raw(), p.prev.raw()) };
    assert_eq!(active, 1);
    assert!((p.position(3).y - 0.0085).abs() < 1e-8, "{}", p.position(3));
    for k in 0..3 {
        assert!((p.position(k).y + 0.0015).abs() < 1e-8, "{}", p.position(k));
    }
    assert!(centre(&p).distance(before) < 1e-8);
}

/// The side is the one the particle started the substep on: a particle that crossed a
/// fixed face from 2 mm below to 3 mm above within the substep is put back 1 cm below,
/// and one that started above at the same place is kept 1 cm above.
#[test]
fn a_particle_that_crossed_a_face_is_put_back_on_its_side() {
    let at = |y: f32| Vec3::new(0.01, y, 0.01);
    for (start, expected) in [(-0.002, -0.01), (0.005, 0.01)] {
        let (mut p, faces) = over_a_triangle(0.0, at(start), at(0.003));
        // SAFETY: the four particles exist; one thread.
        unsafe { project_faces(&faces, 0.0, p.pos.raw(), p.prev.raw()) };
        assert!(p.position(3).distance(at(expected)) < 1e-8, "from {start}: {}", p.position(3));
    }
}

/// Beside a fixed face, 3 mm above its plane and 7.7 mm from the nearest point q of its long
/// edge: pushed along p − q to exactly the thickness from q. Left alone: the same point
/// reached from above the plane's other side (it crossed the plane beside the face, not the
/// face), and a point beside the face farther than the thickness from it.
#[test]
fn a_particle_beside_a_face_is_held_by_its_edge() {
    let (beside, q) = (Vec3::new(0.02, 0.003, 0.02), Vec3::new(0.015, 0.0, 0.015));
    let (mut p, faces) = over_a_triangle(0.0, beside, beside);
    // SAFETY: the four particles exist; one thread.
    assert_eq!(unsafe { project_faces(&faces, 0.0, p.pos.raw(), p.prev.raw()) }, 1);
    let expected = q + (beside - q).normalize() * SETTINGS.thickness;
    assert!(p.position(3).distance(expected) < 1e-8, "{}", p.position(3));
    let below = beside * Vec3::new(1.0, -1.0, 1.0);
    for (start, now) in [(beside, below), (Vec3::new(0.03, 0.003, 0.03), Vec3::new(0.03, 0.003, 0.03))] {
        let (mut p, faces) = over_a_triangle(0.0, start, now);
        // SAFETY: as above.
        assert_eq!(unsafe { project_faces(&faces, 0.0, p.pos.raw(), p.prev.raw()) }, 0);
        assert_eq!(p.position(3), now);
    }
}

/// A particle 4 mm over the ridge of a fold (two fixed faces meeting at 90° on a 4 cm edge)
/// is over neither face, and 2 cm from the ridge's ends: the faces' shared edge holds it at
/// the thickness, straight above the ridge, where faces over their interiors only let it sink
/// through.
#[test]
fn a_particle_over_a_folds_ridge_is_held_at_the_thickness() {
    let over = Vec3::new(0.0, 0.004, 0.0);
    let mut p = particles(&[
        (Vec3::new(0.0, 0.0, -0.02), 0.0),
        (Vec3::new(0.0, 0.0, 0.02), 0.0),
        (Vec3::new(-0.02, -0.02, 0.0), 0.0),
        (Vec3::new(0.02, -0.02, 0.0), 0.0),
        (over, 1.0),
    ]);
    let face = |triangle| Face {
        particle: 4,
        triangle,
        min_distance: SETTINGS.thickness,
    };
    let faces = [face([0, 1, 2]), face([1, 0, 3])];
    // SAFETY: the five particles exist; one thread.
    let active = unsafe { project_faces(&faces, 0.0, p.pos.raw(), p.prev.raw()) };
    assert_eq!(active, 1, "the first face's edge holds it, the second finds it clear");
    assert!(
        p.position(4).distance(Vec3::new(0.0, SETTINGS.thickness, 0.0)) < 1e-8,
        "{}",
        p.position(4)
    );
}

/// Friction against a face is positional Coulomb as between particles: a particle pressed
/// 4 mm into a fixed face while sliding 1 mm along it sticks at μ = 1 and loses μ d of
/// the slide at μ = 0.1.
#[test]
fn friction_on_a_face_sticks_or_slides_by_mu_times_the_depth() {
    for (mu, expected_x) in [(1.0, 0.01), (0.1, 0.011 - 0.1 * 0.004)] {
        let (mut p, faces) = over_a_triangle(0.0, Vec3::new(0.01, 0.006, 0.01), Vec3::new(0.011, 0.006, 0.01));
        // SAFETY: the four particles exist; one thread.
        unsafe { project_faces(&faces, mu, p.pos.raw(), p.prev.raw()) };
        let x = p.position(3);
        assert!((x.x - expected_x).abs() < 1e-7 && (x.y - 0.01).abs() < 1e-7, "μ = {mu}: {x}");
    }
}

/// Faces are listed for particles within reach of the triangle (not of its corners) and
/// nowhere else; a corner, a particle joined to a corner and a far particle are not; the
/// rest distance caps the contact distance within a piece and not across pieces; with
/// faces off nothing is listed.
#[test]
fn faces_are_listed_within_reach_only() {
    let points = [
        (Vec3::ZERO, 1.0),
        (Vec3::new(0.06, 0.0, 0.0), 1.0),
        (Vec3::new(0.0, 0.0, 0.06), 1.0),
        (Vec3::new(0.02, 0.012, 0.02), 1.0),  // 12 mm over the face, 31 mm from corner 0
        (Vec3::new(0.02, 0.03, 0.02), 1.0),   // beyond the reach 0.01 + 2 × 0.0025
        (Vec3::new(0.02, -0.005, 0.02), 1.0), // joined to corner 0
        (Vec3::new(0.02, 0.004, 0.01), 1.0),  // 4 mm over the face, 3.5 mm from it at rest
    ];
    let p = particles(&points);
    let mut rest: Vec<Vec3> = points.iter().map(|q| q.0 + Vec3::Y).collect();
    rest[6].y -= 0.0005;
    let sheet = [(0u32, 1u32), (1, 2), (2, 0), (0, 5)];
    // Particle 6 in the triangle's piece (joined through 5, not to a corner), then apart.
    for (joined, key, expected) in [(true, 1, 0.0035), (false, 2, SETTINGS.thickness)] {
        let edges = sheet.into_iter().chain(joined.then_some((5, 6)));
        let mut contacts = SelfContacts::default();
        contacts.refresh_adjacency((key, points.len(), 4 + joined as usize), || edges.clone());
        contacts.prepare(p.len(), |i| p.position(i), &rest, &[[0, 1, 2]], SETTINGS, 0.0);
        let mut listed: Vec<(u32, f32)> = contacts.faces().iter().map(|f| (f.particle, f.min_distance)).collect();
        listed.sort_by_key(|f| f.0);
        assert_eq!(listed.iter().map(|f| f.0).collect::<Vec<_>>(), [3, 6]);
        assert!(
            listed[0].1 == SETTINGS.thickness && (listed[1].1 - expected).abs() < 1e-6,
            "{listed:?}"
        );
        let off = SelfContactSettings {
            vertex_triangle: false,
            ..SETTINGS
        };
        contacts.prepare(p.len(), |i| p.position(i), &rest, &[[0, 1, 2]], off, 0.0);
        assert!(contacts.faces().is_empty());
    }
}
