//! Issue 16's tearing scenarios through the public [`Cloth`] API, on the shipped presets: the
//! presets wait for the user (no tear at rest), a pull rips them, a tear leaves no scrap of
//! fewer than [`MIN_FRAGMENT_TRIANGLES`] triangles, nothing flies off, and a torn run repeats
//! bit for bit. The pulls use the soft grab ([`Cloth::grab_point`]): a point of a triangle at
//! the pulled corner, spread over its three corners, as the app grabs.

use std::collections::HashMap;

use drape::preset::Preset;
use drape::sim::tearing::MIN_FRAGMENT_TRIANGLES;
use drape::sim::{Cloth, Material, Ray, TriangleHit};
use glam::Vec3;

use crate::common::{all_finite, grid_of, load_preset, run, shipped_run, SHIPPED_FRAMES};

/// The tear strain the app's tearing switch turns on (30 %).
const APP_TEAR_STRAIN: f32 = 0.3;

/// Triangles in each connected piece, smallest first.
fn piece_sizes(cloth: &Cloth) -> Vec<usize> {
    let labels = cloth.piece_labels();
    let mut sizes: HashMap<u32, usize> = labels
        .iter()
        .enumerate()
        .filter(|&(i, &l)| i == l as usize)
        .map(|(_, &l)| (l, 0))
        .collect();
    for tri in cloth.triangles() {
        *sizes.get_mut(&labels[tri[0] as usize]).expect("every particle has a piece") += 1;
    }
    let mut sizes: Vec<usize> = sizes.into_values().collect();
    sizes.sort_unstable();
    sizes
}

/// The particle each particle was split from (itself for the `original` first particles): a
/// copy shares its original's rest position bit for bit.
fn originals(cloth: &Cloth, original: usize) -> Vec<u32> {
    let key = |p: Vec3| p.to_array().map(f32::to_bits);
    let rest = &cloth.model().positions;
    let by_rest: HashMap<[u32; 3], u32> = (0..original).map(|i| (key(rest[i]), i as u32)).collect();
    rest.iter().map(|&p| by_rest[&key(p)]).collect()
}

/// Edges of the original mesh (as pairs of original particles) whose two triangles no longer
/// share them: the cloth is torn along them.
fn torn_mesh_edges(cloth: &Cloth, original: usize) -> Vec<[u32; 2]> {
    let origin = originals(cloth, original);
    let mut sides: HashMap<[u32; 2], Vec<[u32; 2]>> = HashMap::new();
    for tri in cloth.triangles() {
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            let (oa, ob) = (origin[a as usize], origin[b as usize]);
            sides.entry([oa.min(ob), oa.max(ob)]).or_default().push([a.min(b), a.max(b)]);
        }
    }
    sides
        .into_iter()
        .filter(|(_, actual)| actual.len() == 2 && actual[0] != actual[1])
        .map(|(edge, _)| edge)
        .collect()
}

/// Torn edges in the longest crack: torn mesh edges joined end to end.
fn longest_crack(cloth: &Cloth, original: usize) -> usize {
    let edges = torn_mesh_edges(cloth, original);
    let mut at: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, e) in edges.iter().enumerate() {
        e.iter().for_each(|&v| at.entry(v).or_default().push(i));
    }
    let mut seen = vec![false; edges.len()];
    let mut longest = 0;
    for start in 0..edges.len() {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        let (mut stack, mut count) = (vec![start], 0);
        while let Some(i) = stack.pop() {
            count += 1;
            for next in edges[i].iter().flat_map(|v| &at[v]) {
                if !seen[*next] {
                    seen[*next] = true;
                    stack.push(*next);
                }
            }
        }
        longest = longest.max(count);
    }
    longest
}

/// The axis-aligned box around every particle (m).
fn bounding_box(cloth: &Cloth) -> (Vec3, Vec3) {
    let p = cloth.particles();
    p.positions()
        .fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), x| (lo.min(x), hi.max(x)))
}

/// Distance (m) of the particle farthest outside the box `(lo, hi)`.
fn farthest_outside(cloth: &Cloth, (lo, hi): (Vec3, Vec3)) -> f32 {
    cloth
        .particles()
        .positions()
        .map(|x| x.distance(x.clamp(lo, hi)))
        .fold(0.0, f32::max)
}

fn total_mass(cloth: &Cloth) -> f64 {
    let density = cloth.applied_material().areal_density;
    (0..cloth.particles().len())
        .map(|i| cloth.particles().mass(i, density) as f64)
        .sum()
}

/// What a torn run leaves, measured against the preset's untorn cloth.
struct Outcome {
    cloth: Cloth,
    /// Triangles per piece, smallest first.
    pieces: Vec<usize>,
    /// Torn edges in the longest crack.
    crack: usize,
    /// How far (m) the farthest particle ended outside the starting bounding box.
    flown: f32,
    /// Total mass at the start (kg).
    mass_before: f64,
}

impl Outcome {
    fn smallest_piece(&self) -> usize {
        self.pieces[0]
    }

    fn summary(&self) -> String {
        format!(
            "{} torn edges, pieces {:?}, longest crack {}, {} m outside the start box",
            self.cloth.torn_edges(),
            self.pieces,
            self.crack,
            self.flown
        )
    }
}

/// Runs `frames` frames of `preset` (with `material`), calling `drive(cloth, frame)` before each.
fn run_driven(preset: &Preset, material: &Material, frames: u32, mut drive: impl FnMut(&mut Cloth, u32)) -> Outcome {
    let mut cloth = preset.build().unwrap();
    let original = cloth.particles().len();
    let (start_box, mass_before) = (bounding_box(&cloth), total_mass(&cloth));
    for frame in 0..frames {
        drive(&mut cloth, frame);
        cloth.step(&preset.solver, material).unwrap();
    }
    assert!(all_finite(&cloth));
    Outcome {
        pieces: piece_sizes(&cloth),
        crack: longest_crack(&cloth, original),
        flown: farthest_outside(&cloth, start_box),
        mass_before,
        cloth,
    }
}

/// A soft grab close to `particle`: the point of the first triangle having it that weighs it
/// 0.6 and the triangle's other corners 0.2 each. Returns the point (m).
fn soft_grab_at(cloth: &mut Cloth, particle: u32) -> Vec3 {
    let triangle = cloth.triangles().iter().position(|t| t.contains(&particle)).unwrap();
    let tri = cloth.triangles()[triangle];
    let barycentric = tri.map(|i| if i == particle { 0.6 } else { 0.2 });
    cloth
        .grab_point(TriangleHit {
            triangle: triangle as u32,
            barycentric,
        })
        .unwrap();
    cloth.grabbed_point().unwrap()
}

/// Grabs `particle` in the first frame — softly next to it ([`soft_grab_at`]) or, not `soft`,
/// hard — and moves the grab by `offset(frame)` (m) from where the held point started; with
/// `release_after`, lets go (keeping the drag's velocity) after that many frames.
fn pulled(preset: &Preset, particle: u32, soft: bool, frames: u32, release_after: Option<u32>, offset: impl Fn(u32) -> Vec3) -> Outcome {
    let grab = |cloth: &mut Cloth| {
        if soft {
            soft_grab_at(cloth, particle)
        } else {
            cloth.grab(particle).unwrap();
            cloth.particles().position(particle as usize)
        }
    };
    let start = grab(&mut preset.build().unwrap());
    run_driven(preset, &preset.material, frames, |cloth, frame| {
        if frame == 0 {
            grab(cloth);
        }
        if release_after == Some(frame) {
            cloth.release(None);
        }
        cloth.drag_to(start + offset(frame + 1));
    })
}

/// Down, outward and toward the viewer: the direction a user pulls a hanging sheet's corner.
fn away_from_the_sheet() -> Vec3 {
    Vec3::new(0.6, -1.0, 0.8).normalize()
}

/// The tearable sheet's bottom-right corner dragged steadily away at 0.5 m/s for 2 s.
fn steady_corner_drag() -> Outcome {
    let preset = load_preset("tearable_sheet");
    let corner = grid_of(&preset).index(grid_of(&preset).columns - 1, grid_of(&preset).rows - 1);
    let dt = preset.solver.dt;
    pulled(&preset, corner, true, (2.0 / dt).round() as u32, None, |frame| {
        away_from_the_sheet() * 0.5 * frame as f32 * dt
    })
}

#[test]
fn the_default_curtain_with_tearing_on_hangs_whole_for_600_frames() {
    let preset = load_preset("default");
    let material = Material {
        tear_strain: Some(APP_TEAR_STRAIN),
        ..preset.material.clone()
    };
    let mut cloth = preset.build().unwrap();
    run(&mut cloth, &preset.solver, &material, 600);
    assert_eq!(cloth.torn_edges(), 0, "max strain {}", cloth.stats().max_strain);
}

/// Issue 32: the flag waits for the user for a minute of gusts (it tore one edge after 52 s
/// when its tear criterion averaged over 0.2 s).
#[test]
// Release only: 3 600 frames (141 s in release on a 2-vCPU machine, far longer in a debug
// build), and the minute is the point: the tear it guards against came after 52 s.
#[cfg(not(debug_assertions))]
fn rip_the_flag_flies_whole_for_60_s_without_input() {
    let preset = load_preset("rip_the_flag");
    assert!(preset.material.tear_strain.is_some(), "the flag is tearable");
    // Its first 600 frames are the shipped flag's shared run (`shipped_run`, also run by
    // self_collision.rs's every-preset test); the minute goes on from a copy of it.
    let mut cloth = shipped_run("rip_the_flag", SHIPPED_FRAMES, |run| run.cloth.clone());
    let minute = (60.0 / preset.solver.dt).round() as u32;
    run(&mut cloth, &preset.solver, &preset.material, minute - SHIPPED_FRAMES);
    assert!(all_finite(&cloth));
    assert_eq!(cloth.torn_edges(), 0, "pieces {:?}", piece_sizes(&cloth));
    assert_eq!(piece_sizes(&cloth).len(), 1);
}

/// The particles of `silk_and_denim`'s silk: those of the material slot it brings (slot 1;
/// the denim has the scene's material, slot 0).
fn silk_particles(cloth: &Cloth) -> Vec<usize> {
    (0..cloth.particles().len()).filter(|&i| cloth.model().material[i] == 1).collect()
}

/// Issue 32: the scene waits for the user. Dropped on the denim over the ball, the silk tears
/// nothing and stays on the denim: after 10 s no silk particle is within 5 cm of the floor
/// (the silk slid off onto the floor and tore 10 edges when it was dropped 8 cm off centre).
#[test]
fn silk_and_denim_tear_nothing_without_input_and_the_silk_stays_on_the_denim() {
    // The shipped scene's 600 frames, run once for every test that runs it as shipped
    // (`shipped_run`; self_collision.rs's every-preset test runs it too).
    shipped_run("silk_and_denim", SHIPPED_FRAMES, |run| {
        let cloth = &run.cloth;
        assert!(all_finite(cloth));
        assert_eq!(cloth.torn_edges(), 0, "pieces {:?}", piece_sizes(cloth));
        let silk = silk_particles(cloth);
        assert_eq!(silk.len(), 26 * 26, "the silk is the second object");
        let lowest = silk.iter().map(|&i| cloth.particles().position(i).y).fold(f32::MAX, f32::min);
        assert!(lowest > 0.05, "a silk particle is {lowest} m above the floor");
    });
}

/// "Pin a corner of the silk and pull the opposite one: it rips, the denim does not": after the
/// drop settles, the silk's first corner is pinned and its far corner held and pulled up and
/// away at 1 m/s for 2 s; the silk tears and every torn edge is silk's. (Pulled with nothing
/// holding it, the loose silk lifts off the denim whole, as a real one would; a hand holding
/// one triangle once ripped it by concentrating the pull there.)
#[test]
fn silk_and_denim_the_silk_rips_when_pulled() {
    let preset = load_preset("silk_and_denim");
    let dt = preset.solver.dt;
    let settled = (1.0 / dt).round() as u32;
    let corner = std::cell::Cell::new((0u32, Vec3::ZERO));
    let outcome = run_driven(&preset, &preset.material, 3 * settled, |cloth, frame| {
        if frame == settled {
            let silk = silk_particles(cloth);
            cloth.set_pinned(silk[0] as u32, true);
            let far = *silk.last().unwrap() as u32;
            corner.set((far, soft_grab_at(cloth, far)));
        }
        if frame >= settled {
            let away = Vec3::new(0.6, 0.8, 0.0) * ((frame - settled + 1) as f32 * dt);
            cloth.drag_to(corner.get().1 + away);
        }
    });
    assert!(outcome.cloth.torn_edges() > 0, "{}", outcome.summary());
    let denim_particles = (0..outcome.cloth.particles().len())
        .filter(|&i| outcome.cloth.model().material[i] == 0)
        .count();
    assert_eq!(
        denim_particles,
        30 * 30,
        "the denim gained particles: it tore ({})",
        outcome.summary()
    );
}

#[test]
fn rip_the_flag_rips_when_its_free_corner_is_pulled_hard() {
    let preset = load_preset("rip_the_flag");
    let corner = grid_of(&preset).index(grid_of(&preset).columns - 1, grid_of(&preset).rows - 1);
    let dt = preset.solver.dt;
    // One second in the wind, then the corner pulled away from the pole at 1 m/s for 3 s.
    let flying = (1.0 / dt).round() as u32;
    let start = std::cell::Cell::new(Vec3::ZERO);
    let outcome = run_driven(&preset, &preset.material, 4 * flying, |cloth, frame| {
        if frame == flying {
            start.set(soft_grab_at(cloth, corner));
        }
        if frame >= flying {
            cloth.drag_to(start.get() + Vec3::X * (frame - flying + 1) as f32 * dt);
        }
    });
    assert!(outcome.crack >= 10, "a crack runs into the flag: {}", outcome.summary());
    assert!(outcome.smallest_piece() >= MIN_FRAGMENT_TRIANGLES, "{}", outcome.summary());
}

/// A steady pull rips the sheet into at most three pieces without scraps, conserves mass, and
/// repeats bit for bit.
#[test]
fn the_tearable_sheet_dragged_steadily_by_a_corner_rips_without_scraps() {
    let outcome = steady_corner_drag();
    assert!(outcome.cloth.torn_edges() > 0, "{}", outcome.summary());
    assert!(outcome.pieces.len() <= 3, "{}", outcome.summary());
    assert!(outcome.smallest_piece() >= MIN_FRAGMENT_TRIANGLES, "{}", outcome.summary());
    let mass = total_mass(&outcome.cloth);
    assert!(
        (mass - outcome.mass_before).abs() <= 1e-5 * outcome.mass_before,
        "mass {mass} vs {}",
        outcome.mass_before
    );
    let again = steady_corner_drag();
    assert_eq!(again.cloth.triangles(), outcome.cloth.triangles());
    let bits = |c: &Cloth| {
        c.particles()
            .positions()
            .map(|p| p.to_array().map(f32::to_bits))
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&again.cloth), bits(&outcome.cloth), "a torn run repeats bit for bit");
}

/// Issue 16 asks for a crack of at least 10 edges that runs into the sheet. The first yarn to
/// break is the vertical one next to the grabbed corner (after 0.18 s); the crack then runs
/// from its tip along the row above the corner, a split every one to five frames, straight
/// across the sheet (38 torn edges in one crack, the sheet still in one piece after 2 s).
/// Before the tears ran (tip first, along the yarns, no branching) the tear ringed the corner:
/// longest crack 4 edges, pieces [12, 3030].
#[test]
fn the_tearable_sheet_dragged_steadily_by_a_corner_opens_a_crack_of_10_edges() {
    let outcome = steady_corner_drag();
    assert!(outcome.crack >= 10, "{}", outcome.summary());
}

/// A tear's shape in the sheet's rest shape, in fractions of the sheet (u, v in [0, 1]).
struct TearShape {
    pieces: usize,
    /// The deepest vertex on a crack: its distance to the nearest border of the rest sheet.
    reach: f32,
    /// The narrowest piece's 2 × rest area / rest perimeter.
    narrowest: f32,
}

impl TearShape {
    /// Measures `cloth`, a torn rectangular sheet: pieces by [`Cloth::piece_labels`], crack
    /// vertices as the ends of triangle edges with one triangle.
    fn of(cloth: &Cloth) -> Self {
        let rest = &cloth.model().positions;
        let (lo, hi) = rest
            .iter()
            .fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(l, h), &p| (l.min(p), h.max(p)));
        let uv = |i: u32| {
            let p = (rest[i as usize] - lo) / (hi - lo).max(Vec3::splat(1e-9));
            let flat = if hi.y - lo.y > hi.z - lo.z { (p.x, p.y) } else { (p.x, p.z) };
            glam::Vec2::new(flat.0, flat.1)
        };
        let mut uses: HashMap<[u32; 2], usize> = HashMap::new();
        for t in cloth.triangles() {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                *uses.entry([a.min(b), a.max(b)]).or_default() += 1;
            }
        }
        let labels = cloth.piece_labels();
        let (mut area, mut perimeter): (HashMap<u32, f32>, HashMap<u32, f32>) = (HashMap::new(), HashMap::new());
        let mut reach = 0.0f32;
        for t in cloth.triangles() {
            let [a, b, c] = t.map(uv);
            *area.entry(labels[t[0] as usize]).or_default() += 0.5 * (b - a).perp_dot(c - a).abs();
            for k in 0..3 {
                let (i, j) = (t[k], t[(k + 1) % 3]);
                if uses[&[i.min(j), i.max(j)]] == 1 {
                    *perimeter.entry(labels[t[0] as usize]).or_default() += uv(i).distance(uv(j));
                    let depth = |p: glam::Vec2| p.x.min(1.0 - p.x).min(p.y).min(1.0 - p.y);
                    reach = reach.max(depth(uv(i))).max(depth(uv(j)));
                }
            }
        }
        let narrowest = area.iter().map(|(k, a)| 2.0 * a / perimeter[k]).fold(f32::MAX, f32::min);
        TearShape {
            pieces: area.len(),
            reach,
            narrowest,
        }
    }
}

/// Grabs the middle of the triangle whose rest centroid is nearest `point` (m), as a press
/// there does; returns the grabbed point.
fn grab_nearest_triangle(cloth: &mut Cloth, point: Vec3) -> Vec3 {
    let rest = &cloth.model().positions;
    let centroid = |t: &[u32; 3]| t.iter().map(|&i| rest[i as usize]).sum::<Vec3>() / 3.0;
    let nearest = (0..cloth.triangles().len())
        .min_by(|&i, &j| {
            let d = |k: usize| centroid(&cloth.triangles()[k]).distance(point);
            d(i).total_cmp(&d(j))
        })
        .unwrap();
    let hit = TriangleHit {
        triangle: nearest as u32,
        barycentric: [1.0 / 3.0; 3],
    };
    cloth.grab_point(hit).unwrap();
    cloth.grabbed_point().unwrap()
}

/// Issue 32's gesture through the API on the tearable sheet at `resolution`²: a soft grab 8 %
/// of the sheet in from its right border and 6 % up from its bottom (where the app's press
/// lands), pulled
/// 1.26 m right, down and back over 1 s as the window's drag of (250, 150) px moves it, then
/// held until 2 s. (It was held until 4 s: the last edge tears at frame 40 on 40² and 56 on
/// 80², inside the pull, and from then to frame 240 neither the torn edges nor the pieces,
/// reach or narrowest piece change — measured every 30 frames; a second of hold shows the
/// crack has stopped, and the fine mesh's frames cost 0.1–0.2 s each.)
fn corner_pull(resolution: u32) -> (Cloth, f32) {
    let mut preset = load_preset("tearable_sheet");
    let grid = preset.single_grid_mut().unwrap();
    (grid.columns, grid.rows) = (resolution, resolution);
    let spec = grid_of(&preset);
    let spacing = spec.width / (resolution - 1) as f32;
    let pressed = spec.origin + Vec3::new(0.42 * spec.width, -0.94 * spec.height, 0.0);
    let offset = Vec3::new(1.04, -0.62, -0.35);
    let dt = preset.solver.dt;
    let (pull, hold) = ((1.0 / dt).round() as u32, (2.0 / dt).round() as u32);
    let start = std::cell::Cell::new(Vec3::ZERO);
    let outcome = run_driven(&preset, &preset.material, hold, |cloth, frame| {
        if frame == 0 {
            start.set(grab_nearest_triangle(cloth, pressed));
        }
        cloth.drag_to(start.get() + offset * ((frame + 1).min(pull) as f32 / pull as f32));
    });
    (outcome.cloth, spacing / spec.width)
}

/// Issue 32: a corner pulled hard tears a piece out of the sheet, not a ribbon off its border,
/// and the same on a coarse and a fine mesh: the crack's deepest vertex at least 0.15 of the
/// sheet from its nearest rest border on both, the two within a third of each other. The
/// strain is averaged over the material's tear length (15 cm here), cracks run across the
/// largest principal strain there along the weave and turn with it, and the hand holds a patch
/// of fixed size (8 cm here): the corner comes away as a piece bigger than the hand. Before
/// (edge strain, cracks only straight on), the 40 × 40 sheet peeled a three-row ribbon 0.077
/// deep and the 80 × 80 one a one-column strip along its whole right border; held by one
/// triangle, the fine mesh's piece was 0.127 deep against the coarse one's 0.154.
#[test]
fn a_corner_pulled_hard_tears_out_a_piece_the_same_on_a_coarse_and_a_fine_mesh() {
    let shapes: Vec<(TearShape, f32)> = [40, 80]
        .into_iter()
        .map(|n| {
            let (cloth, spacing) = corner_pull(n);
            assert!(all_finite(&cloth));
            (TearShape::of(&cloth), spacing)
        })
        .collect();
    for (shape, spacing) in &shapes {
        let what = format!(
            "{} pieces, reach {}, narrowest {} (spacing {spacing})",
            shape.pieces, shape.reach, shape.narrowest
        );
        assert!((2..=3).contains(&shape.pieces), "{what}");
        assert!(shape.narrowest >= 2.5 * spacing, "no ribbon: {what}");
        assert!(shape.reach >= 0.15, "the crack runs into the sheet: {what}");
    }
    let (coarse, fine) = (shapes[0].0.reach, shapes[1].0.reach);
    assert!(
        (coarse - fine).abs() <= coarse.min(fine) / 3.0,
        "reach {coarse} on 40², {fine} on 80²"
    );
}

/// The same corner grabbed and moved 1 m in 0.1 s, then let go (soft or hard grab).
fn flick(soft: bool) -> Outcome {
    let preset = load_preset("tearable_sheet");
    let corner = grid_of(&preset).index(grid_of(&preset).columns - 1, grid_of(&preset).rows - 1);
    let dt = preset.solver.dt;
    let flick = (0.1 / dt).round() as u32;
    pulled(&preset, corner, soft, (2.0 / dt).round() as u32, Some(flick), |frame| {
        away_from_the_sheet() * (frame.min(flick) as f32 / flick as f32)
    })
}

fn assert_a_clean_flick(outcome: &Outcome) {
    assert!(outcome.cloth.torn_edges() > 0, "the flick tears: {}", outcome.summary());
    assert!(outcome.smallest_piece() >= MIN_FRAGMENT_TRIANGLES, "{}", outcome.summary());
    assert!(outcome.flown <= 3.0, "{}", outcome.summary());
}

/// A fast flick with the hard grab: no scrap, and nothing flung more than 3 m from where the
/// sheet hung after 2 s.
#[test]
fn a_fast_flick_leaves_no_scraps_and_flings_nothing_far() {
    assert_a_clean_flick(&flick(false));
}

/// The same flick with the soft grab: a 9-edge crack runs from the corner along the row above
/// it, and the jerk tears 6 edges below the pins (15 torn edges, one piece, nothing more than
/// 0.4 m outside the start box). Before the tears ran, cracks nucleated all around the grab
/// and an 8-triangle piece came off at 10 m/s and flew 4.9 m.
#[test]
fn a_fast_soft_flick_leaves_no_scraps_and_flings_nothing_far() {
    assert_a_clean_flick(&flick(true));
}

/// The tearable sheet with 2 kg spread over its bottom row and a notch cut into its left edge
/// halfway down (between rows 19 and 20), over its first five columns.
fn loaded_notched_sheet(preset: &Preset) -> Cloth {
    let spec = &grid_of(preset);
    let mut model = spec.build().unwrap();
    for column in 0..spec.columns {
        model.point_mass[spec.index(column, spec.rows - 1) as usize] = 2.0 / spec.columns as f32;
    }
    let mut cloth = Cloth::new(model, &preset.material, preset.colliders.clone()).unwrap();
    let (left, spacing) = (spec.origin.x - spec.width / 2.0, spec.width / (spec.columns - 1) as f32);
    let y = spec.origin.y - spec.height / 2.0;
    let eye = Vec3::new(left, y, 3.0);
    let toward = |x: f32| Ray {
        origin: eye,
        direction: Vec3::new(x, y, 0.0) - eye,
    };
    assert!(
        cloth.cut(&toward(left - spacing), &toward(left + 5.5 * spacing)) > 0,
        "the notch is cut"
    );
    cloth
}

/// Tears that run: a notched sheet under a steady load, its tear strain lowered until the notch
/// starts to tear and then held, tears from the notch's tip straight across into two halves,
/// one split a frame, without shedding anything.
#[test]
fn a_notched_sheet_under_a_steady_load_tears_straight_across_in_two() {
    let preset = load_preset("tearable_sheet");
    let spec = &grid_of(&preset);
    let mut cloth = loaded_notched_sheet(&preset);
    let (original, notch) = (spec.columns * spec.rows, cloth.torn_edges());
    let mut material = preset.material.clone();
    for _ in 0..240 {
        if cloth.torn_edges() == notch {
            material.tear_strain = material.tear_strain.map(|strain| strain * 0.995);
        }
        cloth.step(&preset.solver, &material).unwrap();
    }
    let pieces = piece_sizes(&cloth);
    let triangles = cloth.triangles().len();
    assert_eq!(pieces.len(), 2, "pieces {pieces:?}");
    assert!(pieces[0] * 5 >= triangles * 2, "two halves: {pieces:?}");
    let crack = longest_crack(&cloth, original as usize);
    assert!(crack >= spec.columns as usize - 1, "the crack spans the width: {crack} edges");
    // Straight across: the halves meet within two rows of the notch.
    let labels = cloth.piece_labels();
    let row_of = |i: usize| ((spec.origin.y - cloth.model().positions[i].y) * (spec.rows - 1) as f32 / spec.height).round() as u32;
    let rows_of = |corner_row: u32| {
        let piece = labels[spec.index(0, corner_row) as usize];
        (0..labels.len()).filter(|&i| labels[i] == piece).map(row_of).collect::<Vec<u32>>()
    };
    let lowest_of_top = rows_of(0).into_iter().max().unwrap();
    let highest_of_bottom = rows_of(spec.rows - 1).into_iter().min().unwrap();
    assert!(
        lowest_of_top <= 21 && highest_of_bottom >= 18,
        "the top half reaches row {lowest_of_top}, the bottom half row {highest_of_bottom} (notch at 19.5)"
    );
}
