//! Sewing (src/sim/sewing.rs) through the public API: a seam pulls its stitches in linearly
//! and is shut at its set time, then holds a hanging panel; a cut across a shut seam opens it
//! there and nowhere else, a cut beside it leaves it, a stroke through open stitches cuts them;
//! a seam with a strength tears under a load above it and holds one well below, with tethers
//! on or off; a stitch to a pin brings its partner to the pin; bad seams are refused at their
//! file:line:col; mesh seams name the OBJ's own vertices; the shipped dress form ends sewn
//! round the form; and a sewn scene that tears its seam is bit-identical on one to three
//! threads.
//!
//! The small scenes are two square panels of [`N`] × [`N`] particles, [`SIDE`] m a side,
//! vertical (rows running down from the top edge), built as a version-2 preset's objects:
//! object 0's vertex (column c, row r) is particle r·N + c, object 1's is N² + r·N + c.

use std::collections::HashSet;
use std::path::Path;

use drape::mesh_file::load_obj;
use drape::preset::{Preset, PresetError};
use drape::scene::{SceneObject, SeamSide, SeamSpec, VertexRun};
use drape::sim::{Cloth, GridSpec, Material, PinMode, Ray};
use glam::Vec3;

use crate::common::{run, G};

/// Side of the test panels, in m.
const SIDE: f32 = 0.3;
/// Particles along each side of a test panel.
const N: u32 = 10;
/// Grid spacing of a test panel, in m.
const SPACING: f32 = SIDE / (N - 1) as f32;
/// The gap below which a seam counts as shut, in m.
const SHUT: f32 = 1e-3;

/// A vertical test panel whose top edge is centred at `origin`.
fn panel(origin: Vec3, pins: PinMode) -> GridSpec {
    GridSpec {
        width: SIDE,
        height: SIDE,
        columns: N,
        rows: N,
        origin,
        pins,
        ..GridSpec::default()
    }
}

/// Row `r` of a test panel, left to right.
fn row(r: u32) -> VertexRun {
    VertexRun::Run {
        first: r * N,
        step: 1,
        count: N,
    }
}

/// Column `c` of a test panel, top to bottom.
fn column(c: u32) -> VertexRun {
    VertexRun::Run {
        first: c,
        step: N as i32,
        count: N,
    }
}

/// A seam sewing run `a` of object `a.0` to run `b` of object `b.0`.
fn seam(a: (usize, VertexRun), b: (usize, VertexRun), close_time: f32, strength: Option<f32>) -> SeamSpec {
    SeamSpec {
        a: SeamSide {
            object: a.0,
            vertices: a.1,
        },
        b: SeamSide {
            object: b.0,
            vertices: b.1,
        },
        close_time,
        strength,
    }
}

/// A version-2 scene of `panels` (objects 0, 1, …) sewn by `seams`, with the default
/// material and solver settings.
fn scene(panels: Vec<GridSpec>, seams: Vec<SeamSpec>) -> Preset {
    Preset {
        objects: panels.into_iter().map(SceneObject::Grid).collect(),
        seams,
        ..Preset::default()
    }
}

/// Particle of vertex (`c`, `r`) of test panel `object`.
fn particle(object: u32, c: u32, r: u32) -> u32 {
    object * N * N + r * N + c
}

fn position(cloth: &Cloth, i: u32) -> Vec3 {
    cloth.particles().position(i as usize)
}

/// The length of every live stitch, in m.
fn stitch_lengths(cloth: &Cloth) -> Vec<f32> {
    cloth
        .live_stitches()
        .map(|[a, b]| position(cloth, a).distance(position(cloth, b)))
        .collect()
}

/// The frames of `dt` s it takes to reach `seconds` (a seam closing in T s is shut after
/// the frame that ends at or after T).
fn frames_for(seconds: f32, dt: f32) -> u32 {
    (f64::from(seconds) / f64::from(dt) - 1e-6).ceil() as u32
}

fn step(cloth: &mut Cloth, preset: &Preset) {
    cloth.step(&preset.solver, &preset.material).expect("valid step");
}

/// Panel B hanging under panel A from a seam closing over T = 0.5 s: A's top row pinned at
/// 1.5 m, B level with A's bottom row but 0.2 m in front of it, A's bottom row sewn to B's top
/// row (every stitch L₀ = 0.2 m). Gravity acts from the start, so B swings in on the seam as
/// it closes.
fn hanging_panels(close_time: f32) -> (Preset, f32) {
    let open = 0.2;
    let a = panel(Vec3::new(0.0, 1.5, 0.0), PinMode::TopEdge);
    let b = panel(Vec3::new(0.0, 1.5 - SIDE, open), PinMode::None);
    let seams = vec![seam((0, row(N - 1)), (1, row(0)), close_time, None)];
    (scene(vec![a, b], seams), open)
}

/// The rest length of every stitch follows L(t) = L₀ (1 − t/T) (src/sim/sewing.rs), and the
/// stitches have compliance 0, so each substep meets the rest length of the frame's end up to
/// the solver's residual: after every frame before T each stitch is L(t) long within 0.1 % of
/// L₀ (at T/2, L₀/2), with gravity pulling B against the seam throughout; after the frame that
/// reaches T the seam is shut (≤ 1 mm). It stays shut through every frame of 3 s of hanging
/// under gravity (the stop at T sets B swinging), and B hangs from A's bottom row: each of
/// B's bottom particles its own height (plus at most the shut gap and 1 % of stretch) from the
/// particle of A its column hangs from, and at least half that height below it (within 60° of
/// straight down), the panels in one piece. (With tethers built through the open stitches and
/// never rebuilt, the gap reached 1.4 mm as B swung and stayed at 0.3 mm: see
/// src/sim/sewing.rs.)
#[test]
fn a_seam_closes_linearly_in_its_set_time_and_then_holds_a_hanging_panel() {
    let close_time = 0.5;
    let (preset, open) = hanging_panels(close_time);
    let mut cloth = preset.build().unwrap();
    assert_eq!(cloth.live_stitches().count(), N as usize);
    assert_eq!(cloth.piece_count(), 1, "the seam joins the panels from the start");
    let dt = preset.solver.dt;
    let shut = frames_for(close_time, dt);
    assert_eq!(shut, 30);
    for frame in 1..shut {
        step(&mut cloth, &preset);
        let expected = open * (1.0 - frame as f32 * dt / close_time);
        for (k, l) in stitch_lengths(&cloth).into_iter().enumerate() {
            assert!(
                (l - expected).abs() <= 1e-3 * open,
                "frame {frame}: stitch {k} is {l} m long, L(t) = {expected} m"
            );
        }
    }
    step(&mut cloth, &preset);
    assert!(cloth.seam_gap() <= SHUT, "gap {} m at T", cloth.seam_gap());
    for frame in 0..frames_for(3.0, dt) {
        step(&mut cloth, &preset);
        assert!(cloth.seam_gap() <= SHUT, "gap {} m {frame} frames after T", cloth.seam_gap());
    }
    assert_eq!(cloth.live_stitches().count(), N as usize);
    assert_eq!(cloth.piece_count(), 1);
    for c in 0..N {
        let above = position(&cloth, particle(0, c, N - 1));
        let bottom = position(&cloth, particle(1, c, N - 1));
        let reach = bottom.distance(above);
        assert!(
            (reach - SIDE).abs() <= SHUT + 0.01 * SIDE,
            "column {c}: B's bottom is {reach} m from A's bottom"
        );
        assert!(
            above.y - bottom.y >= SIDE / 2.0,
            "column {c}: B's bottom is at {bottom}, A's at {above}"
        );
    }
}

/// Panels A and B side by side, edge to edge (A's right column on B's left one, x = 0), both
/// pinned along their top rows, sewn along those columns (a shut seam: every L₀ = 0) and hung
/// for 1 s.
fn side_by_side() -> (Preset, Cloth) {
    let a = panel(Vec3::new(-SIDE / 2.0, 1.5, 0.0), PinMode::TopEdge);
    let b = panel(Vec3::new(SIDE / 2.0, 1.5, 0.0), PinMode::TopEdge);
    let preset = scene(vec![a, b], vec![seam((0, column(N - 1)), (1, column(0)), 0.2, None)]);
    let mut cloth = preset.build().unwrap();
    run(&mut cloth, &preset.solver, &preset.material, frames_for(1.0, preset.solver.dt));
    assert!(cloth.seam_gap() <= SHUT, "gap {}", cloth.seam_gap());
    assert_eq!(cloth.piece_count(), 1);
    (preset, cloth)
}

/// A mouse stroke from an eye 3 m in front of the sheet (z = 3), from the point `from` to
/// the point `to` on the plane z = 0, as the app's right-drag sends it.
fn stroke(from: Vec3, to: Vec3) -> (Ray, Ray) {
    let eye = (from + to) / 2.0 + Vec3::Z * 3.0;
    let toward = |p: Vec3| Ray {
        origin: eye,
        direction: p - eye,
    };
    (toward(from), toward(to))
}

/// The stitches of the side-by-side seam, by row.
fn side_stitch(r: u32) -> [u32; 2] {
    [particle(0, N - 1, r), particle(1, 0, r)]
}

/// A horizontal stroke across both panels and the seam between them, 0.3 spacings above
/// row 5: it severs the sheet, snapping row 5 (the crossed edges' nearer ends) onto the stroke
/// and splitting it, so the stitch of row 5 is cut and every other stitch stays. The part
/// below the cut is its own piece, its halves still sewn (two pieces, not three), and falls
/// away: after 0.5 s each panel's seam vertex below the cut is more than a panel's height
/// from the one above it, two spacings away before (free fall would take it 1.2 m, and
/// self-collision's speed clamp, 0.2 · thickness / substep = 1.8 m/s, still 0.7 m).
#[test]
fn a_cut_across_a_shut_seam_opens_it_there_and_nowhere_else() {
    let (preset, mut cloth) = side_by_side();
    let y = position(&cloth, particle(0, N - 1, 5)).y + 0.3 * SPACING;
    let (from, to) = stroke(Vec3::new(-0.5, y, 0.0), Vec3::new(0.5, y, 0.0));
    assert!(cloth.cut(&from, &to) > 0);
    let live: HashSet<[u32; 2]> = cloth.live_stitches().collect();
    let expected: HashSet<[u32; 2]> = (0..N).filter(|&r| r != 5).map(side_stitch).collect();
    assert_eq!(live, expected, "only row 5's stitch is cut");
    assert_eq!(cloth.piece_count(), 2, "the lower part is cut off, its two halves sewn");
    run(&mut cloth, &preset.solver, &preset.material, frames_for(0.5, preset.solver.dt));
    for (object, c) in [(0, N - 1), (1, 0)] {
        let (above, below) = (particle(object, c, 4), particle(object, c, 6));
        let apart = position(&cloth, above).distance(position(&cloth, below));
        assert!(apart > SIDE, "panel {object}: rows 4 and 6 at the seam are {apart} m apart");
    }
    assert!(
        cloth.seam_gap() <= SHUT,
        "the falling part's stitches hold: gap {}",
        cloth.seam_gap()
    );
}

/// A stroke through panel A alone, parallel to the seam and a spacing and a half from it,
/// from above the top to below the bottom: it severs A but crosses no stitch, so every
/// stitch stays and A's strip beside the seam stays sewn to B (two pieces, not three).
#[test]
fn a_cut_beside_a_seam_leaves_every_stitch() {
    let (preset, mut cloth) = side_by_side();
    let x = position(&cloth, particle(0, N - 2, 0)).x - 0.4 * SPACING;
    let (from, to) = stroke(Vec3::new(x, 1.6, 0.0), Vec3::new(x, 1.1, 0.0));
    let cut = cloth.cut(&from, &to);
    assert!(cut > 0);
    assert_eq!(cloth.live_stitches().count(), N as usize);
    assert_eq!(cloth.piece_count(), 2);
    run(&mut cloth, &preset.solver, &preset.material, 30);
    assert!(cloth.seam_gap() <= SHUT, "gap {}", cloth.seam_gap());
}

/// Two panels facing each other 0.2 m apart, both pinned along their top rows, their bottom
/// rows sewn over T = 1 s. After T/4 a stroke in the plane halfway between them (from an eye
/// above, z = 0.1, fanning from straight down at x = 0 to the right) crosses the stitches of
/// columns 5 to 9, still 0.15 m long and touching no triangle, and cuts exactly those. At T
/// the others are shut; the cut ones are open, each pair of particles more than five times
/// the shut gap apart and farther the farther from the last stitch, as a zip opens.
#[test]
fn a_stroke_through_open_stitches_cuts_those_it_crosses() {
    let (open, close_time) = (0.2, 1.0);
    let a = panel(Vec3::new(0.0, 1.5, 0.0), PinMode::TopEdge);
    let b = panel(Vec3::new(0.0, 1.5, open), PinMode::TopEdge);
    let preset = scene(vec![a, b], vec![seam((0, row(N - 1)), (1, row(N - 1)), close_time, None)]);
    let mut cloth = preset.build().unwrap();
    let dt = preset.solver.dt;
    let quarter = frames_for(close_time / 4.0, dt);
    run(&mut cloth, &preset.solver, &preset.material, quarter);
    let eye = Vec3::new(0.0, 1.5, open / 2.0);
    let ray = |x: f32| Ray {
        origin: eye,
        direction: Vec3::new(x, 1.1, open / 2.0) - eye,
    };
    let cut = cloth.cut(&ray(0.0), &ray(0.5));
    let pair = |c: u32| [particle(0, c, N - 1), particle(1, c, N - 1)];
    let live: Vec<[u32; 2]> = cloth.live_stitches().collect();
    assert_eq!(
        live,
        (0..N / 2).map(pair).collect::<Vec<_>>(),
        "the stitches of columns 0 to 4 are left"
    );
    assert_eq!(cut, (N / 2) as usize, "the cut cut the five stitches and nothing else");
    run(&mut cloth, &preset.solver, &preset.material, frames_for(close_time, dt) - quarter);
    assert!(cloth.seam_gap() <= SHUT, "gap {} m at T", cloth.seam_gap());
    let mut last = 0.0;
    for c in N / 2..N {
        let [a, b] = pair(c);
        let apart = position(&cloth, a).distance(position(&cloth, b));
        assert!(
            apart > 5.0 * SHUT && apart > last,
            "column {c}: {apart} m apart (the column before: {last} m)"
        );
        last = apart;
    }
    assert_eq!(cloth.piece_count(), 1);
}

/// Panel A pinned along its top row; panel B, of areal density `density` kg/m², hanging from
/// it edge to edge (B's top row on A's bottom row, shut at once: L₀ = 0) by a seam of
/// `strength` N/m, in a material with `tethers` on or off.
fn loaded_seam(density: f32, strength: f32, tethers: bool) -> Preset {
    let material = Material {
        tethers,
        ..Material::default()
    };
    let a = panel(Vec3::new(0.0, 1.5, 0.0), PinMode::TopEdge);
    let b = GridSpec {
        material: Some(Material {
            areal_density: density,
            ..material.clone()
        }),
        ..panel(Vec3::new(0.0, 1.5 - SIDE, 0.0), PinMode::None)
    };
    Preset {
        material,
        ..scene(vec![a, b], vec![seam((0, row(N - 1)), (1, row(0)), 0.0, Some(strength))])
    }
}

/// B's areal density in the strength tests, kg/m² (0.9 kg on the 0.3 m seam).
const HEAVY: f32 = 10.0;

/// The load per length of seam B's weight puts on the seam, N/m: B's mass ρ_A · SIDE² (the
/// lumped masses add up to it) times g over the seam's length, SIDE.
fn load_per_length(density: f32) -> f32 {
    density * SIDE * SIDE * G / SIDE
}

/// What 2 s of hanging left.
struct Hung {
    live: usize,
    pieces: usize,
    /// How far B's highest particle is below A's lowest, in m.
    drop: f32,
    /// The seam's gap at the end, in m.
    gap: f32,
}

fn hang_loaded(preset: &Preset) -> Hung {
    let mut cloth = preset.build().unwrap();
    run(&mut cloth, &preset.solver, &preset.material, frames_for(2.0, preset.solver.dt));
    let n = (N * N) as usize;
    let ys: Vec<f32> = cloth.particles().positions().map(|p| p.y).collect();
    let lowest_a = ys[..n].iter().copied().fold(f32::MAX, f32::min);
    let highest_b = ys[n..2 * n].iter().copied().fold(f32::MIN, f32::max);
    Hung {
        live: cloth.live_stitches().count(),
        pieces: cloth.piece_count(),
        drop: lowest_a - highest_b,
        gap: cloth.seam_gap(),
    }
}

/// Asserts that B tore off: no stitch left, two pieces, B more than a metre below A (even at
/// self-collision's speed clamp, 1.8 m/s, B falls that far in 0.7 s of the 2 s).
#[track_caller]
fn assert_torn_off(hung: &Hung) {
    assert_eq!(
        (hung.live, hung.pieces),
        (0, 2),
        "every stitch breaks and B comes off ({} m)",
        hung.drop
    );
    assert!(hung.drop > 1.0, "B fell away: its top is {} m below A", hung.drop);
}

/// Strength (src/sim/sewing.rs): a stitch breaks when its force exceeds the strength times
/// the length of seam it holds. B's weight puts q = ρ_A SIDE g on each metre of the seam
/// (29.4 N/m). A seam of strength q/2 holds half of it: it tears open and B falls away (two
/// pieces, B more than a metre below A after 2 s). One of 4q holds, shut: B is let go at rest,
/// so its weight comes on at once and the seam's force overshoots to at most twice the static
/// load, half the strength. Tethers are off here (the tests after this one have them on).
#[test]
fn a_seam_tears_under_a_load_above_its_strength_and_holds_one_well_below() {
    let q = load_per_length(HEAVY);
    assert_torn_off(&hang_loaded(&loaded_seam(HEAVY, 0.5 * q, false)));
    let held = hang_loaded(&loaded_seam(HEAVY, 4.0 * q, false));
    assert_eq!((held.live, held.pieces), (N as usize, 1), "at 4q no stitch breaks");
    assert!(held.gap <= SHUT, "the seam holding B gapes {} m", held.gap);
}

/// The same seams in the default material, tethers on. Tethers measured through a seam with
/// a strength held B from A's pins directly: the stitches carried none of B's weight, and
/// even a seam of strength q/4 never broke (B did not move). They must not pass through
/// stitches that can break: at q/2 the seam tears and B falls; at 4q no stitch breaks.
#[test]
fn tethers_do_not_carry_a_load_past_a_seam_that_can_tear() {
    let q = load_per_length(HEAVY);
    assert_torn_off(&hang_loaded(&loaded_seam(HEAVY, 0.5 * q, true)));
    let held = hang_loaded(&loaded_seam(HEAVY, 4.0 * q, true));
    assert_eq!((held.live, held.pieces), (N as usize, 1), "at 4q no stitch breaks");
}

/// A seam with a strength holding B below tethered cloth stays shut (≤ 1 mm), as it does
/// without tethers (5 µm in the test before last). It fails, reported for review: the seam
/// gapes 3 to 25 mm (12 mm after 2 s; 0.3 mm with B of cotton, 1.7 mm at 1 kg/m²). Its
/// stitches carry no tethers (the test before), so B hangs from them alone, while the
/// tethers' pass, after the stitches in every sweep, puts A's bottom row back at its distance
/// from the pins and so undoes most of each stitch's pull, which moves A's light particle far
/// more than B's heavy one.
#[test]
fn a_seam_with_a_strength_stays_shut_below_tethered_cloth() {
    let q = load_per_length(HEAVY);
    let held = hang_loaded(&loaded_seam(HEAVY, 4.0 * q, true));
    assert_eq!((held.live, held.pieces), (N as usize, 1), "at 4q no stitch breaks");
    assert!(held.gap <= SHUT, "the seam holding B gapes {} m", held.gap);
}

/// Panel A pinned by its two top corners, panel B level with it 0.1 m in front and free, A's
/// top row sewn to B's over T = 0.3 s: the stitches at A's corners join a pinned particle to
/// a free one, so they pull B's corners onto the pins, which do not move; after T and 1 s of
/// hanging every stitch is shut, B's corners within 1 mm of the pins.
#[test]
fn a_stitch_to_a_pinned_vertex_brings_its_partner_to_the_pin() {
    let close_time = 0.3;
    let a = panel(Vec3::new(0.0, 1.5, 0.0), PinMode::TopCorners);
    let b = panel(Vec3::new(0.0, 1.5, 0.1), PinMode::None);
    let preset = scene(vec![a, b], vec![seam((0, row(0)), (1, row(0)), close_time, None)]);
    let mut cloth = preset.build().unwrap();
    let corners = [0, N - 1];
    let pins: Vec<Vec3> = corners.iter().map(|&c| position(&cloth, particle(0, c, 0))).collect();
    let dt = preset.solver.dt;
    run(&mut cloth, &preset.solver, &preset.material, frames_for(close_time, dt));
    assert!(cloth.seam_gap() <= SHUT, "gap {} at T", cloth.seam_gap());
    run(&mut cloth, &preset.solver, &preset.material, frames_for(1.0, dt));
    for (&c, &pin) in corners.iter().zip(&pins) {
        assert_eq!(position(&cloth, particle(0, c, 0)), pin, "the pin at column {c} moved");
        let partner = position(&cloth, particle(1, c, 0));
        assert!(
            partner.distance(pin) <= SHUT,
            "B's corner {c} is {} m from the pin",
            partner.distance(pin)
        );
    }
    assert!(cloth.seam_gap() <= SHUT, "gap {}", cloth.seam_gap());
    assert_eq!(cloth.piece_count(), 1);
}

/// A test preset: the two hanging panels (`objects` 0 and 1, 100 vertices each) and two
/// seams, the first Runs, the second Lists.
const SEAMED: &str = "(
    version: 2,
    objects: [
        Grid(width: 0.3, height: 0.3, columns: 10, rows: 10, origin: (0.0, 1.5, 0.0), pins: TopEdge),
        Grid(width: 0.3, height: 0.3, columns: 10, rows: 10, origin: (0.0, 1.2, 0.2), pins: None),
    ],
    seams: [
        (
            a: (object: 0, vertices: Run(first: 90, step: 1, count: 10)),
            b: (object: 1, vertices: Run(first: 0, step: 1, count: 10)),
            close_time: 0.5,
        ),
        (
            a: (object: 0, vertices: List([0, 9])),
            b: (object: 1, vertices: List([0, 9])),
            close_time: 0.5,
            strength: 100.0,
        ),
    ],
)
";

/// Line and column (1-based) of `key` on the one line of `text` that contains `marker`.
fn place_of(text: &str, marker: &str, key: &str) -> (usize, usize) {
    let lines: Vec<(usize, &str)> = text.lines().enumerate().filter(|(_, l)| l.contains(marker)).collect();
    assert_eq!(lines.len(), 1, "{marker:?} is on one line");
    let (index, line) = lines[0];
    let col = line.find(key).unwrap_or_else(|| panic!("{key:?} on the line of {marker:?}"));
    (index + 1, line[..col].chars().count() + 1)
}

/// `text` with `from` (which it holds once) replaced by `to`.
fn edited(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from:?} is in the text once");
    text.replacen(from, to, 1)
}

/// Loads `text` as a preset file in `dir`; its error's place and message.
fn refusal(dir: &Path, text: &str) -> ((usize, usize), String) {
    let path = dir.join("seams.ron");
    std::fs::write(&path, text).unwrap();
    match Preset::load(&path) {
        Err(PresetError::Invalid { line, col, message, .. }) => ((line, col), message),
        Err(other) => panic!("refused without a place: {other}"),
        Ok(_) => panic!("loaded:\n{text}"),
    }
}

/// Bad seams are refused at file:line:col, the place found in the text written here: a vertex
/// its object lacks at its run's `a:` or `b:` key (the message names the seam, the vertex and
/// the object's vertex count: a grid's columns × rows, a mesh's vertices); runs of different
/// lengths at the seam's `a:` key; an object the scene lacks at its side's key; a closing
/// time or strength out of range at its own key.
#[test]
fn bad_seams_are_refused_at_their_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("good.ron");
    std::fs::write(&path, SEAMED).unwrap();
    let preset = Preset::load(&path).unwrap();
    assert_eq!(preset.build().unwrap().live_stitches().count(), 12);

    let second_b = "b: (object: 1, vertices: List([0, 9]))";
    let text = edited(SEAMED, second_b, "b: (object: 1, vertices: List([0, 9999]))");
    let (place, message) = refusal(dir.path(), &text);
    assert_eq!(place, place_of(&text, "9999", "b:"), "{message}");
    assert!(message.contains("seams[1].b") && message.contains("vertex 9999"), "{message}");
    assert!(message.contains("objects[1] has 100 vertices"), "{message}");

    let text = edited(
        SEAMED,
        "a: (object: 0, vertices: List([0, 9]))",
        "a: (object: 0, vertices: List([9999, 9]))",
    );
    let (place, message) = refusal(dir.path(), &text);
    assert_eq!(place, place_of(&text, "9999", "a:"), "{message}");
    assert!(
        message.contains("seams[1].a") && message.contains("objects[0] has 100 vertices"),
        "{message}"
    );

    // A run that walks off the grid: 95, 96, … 104.
    let text = edited(SEAMED, "Run(first: 90, step: 1, count: 10)", "Run(first: 95, step: 1, count: 10)");
    let (place, message) = refusal(dir.path(), &text);
    assert_eq!(place, place_of(&text, "first: 95", "a:"), "{message}");
    assert!(message.contains("seams[0].a") && message.contains("vertex 100 "), "{message}");

    let text = edited(SEAMED, second_b, "b: (object: 1, vertices: List([0, 5, 9]))");
    let (place, message) = refusal(dir.path(), &text);
    assert_eq!(place, place_of(&text, "List([0, 9])", "a:"), "{message}");
    assert!(message.contains("seams[1]") && message.contains("differ in length"), "{message}");

    let text = edited(SEAMED, second_b, "b: (object: 2, vertices: List([0, 9]))");
    let (place, message) = refusal(dir.path(), &text);
    assert_eq!(place, place_of(&text, "object: 2", "b:"), "{message}");
    assert!(message.contains("seams[1]") && message.contains("object 2"), "{message}");

    let text = edited(
        SEAMED,
        "close_time: 0.5,\n            strength",
        "close_time: -1.0,\n            strength",
    );
    let (place, message) = refusal(dir.path(), &text);
    assert_eq!(place, place_of(&text, "-1.0", "close_time"), "{message}");
    assert!(message.contains("seams[1]") && message.contains("close_time"), "{message}");

    let text = edited(SEAMED, "strength: 100.0", "strength: 0.0");
    let (place, message) = refusal(dir.path(), &text);
    assert_eq!(place, place_of(&text, "strength: 0.0", "strength"), "{message}");
    assert!(message.contains("seams[1]") && message.contains("strength"), "{message}");
}

/// A seam's keys may come in any order (RON struct fields): a bad `b` written before its
/// seam's `a:` is still placed at its own `b:` key, not at a later seam's.
#[test]
fn a_bad_seam_written_b_first_is_refused_at_its_own_key() {
    let dir = tempfile::tempdir().unwrap();
    let first_a = "            a: (object: 0, vertices: Run(first: 90, step: 1, count: 10)),\n";
    let first_b = "            b: (object: 1, vertices: Run(first: 0, step: 1, count: 10)),\n";
    let bad_b = "            b: (object: 1, vertices: Run(first: 95, step: 1, count: 10)),\n";
    let text = edited(SEAMED, &format!("{first_a}{first_b}"), &format!("{bad_b}{first_a}"));
    let (place, message) = refusal(dir.path(), &text);
    assert!(message.contains("seams[0].b"), "{message}");
    assert_eq!(place, place_of(&text, "first: 95", "b:"), "{message}");
}

/// The dress form's second side seam made one vertex longer than the panels' columns (both
/// runs): vertex 20 + 34 · 21 = 734 of the front panel, which has 21 × 34 = 714 vertices (the
/// OBJ's), is refused at the seam's `a:` key.
#[test]
fn a_seam_past_a_mesh_objects_vertices_is_refused_at_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let shipped = std::fs::read_to_string(crate::common::presets_dir().join("dress_form.ron")).unwrap();
    let text = edited(
        &shipped,
        "a: (object: 0, vertices: Run(first: 20, step: 21, count: 34)),\n            b: (object: 1, vertices: Run(first: 20, step: 21, count: 34))",
        "a: (object: 0, vertices: Run(first: 20, step: 21, count: 35)),\n            b: (object: 1, vertices: Run(first: 20, step: 21, count: 35))",
    );
    let (place, message) = refusal(dir.path(), &text);
    assert_eq!(place, place_of(&text, "a: (object: 0, vertices: Run(first: 20", "a:"), "{message}");
    assert!(
        message.contains("seams[1].a") && message.contains("vertex 734") && message.contains("objects[0] has 714 vertices"),
        "{message}"
    );
}

/// A mesh object's seam vertices are the OBJ file's vertices in file order (the model numbers
/// a mesh's particles in its own order): each dress-form stitch joins front vertex 21 k (or
/// 21 k + 20) to the back's vertex of that number, placed where the preset places the files.
#[test]
fn mesh_seams_sew_the_obj_files_own_vertex_numbers() {
    let preset = crate::common::load_preset("dress_form");
    let cloth = preset.build().unwrap();
    let files = ["assets/skirt_front.obj", "assets/skirt_back.obj"].map(|f| load_obj(Path::new(f)).unwrap().positions);
    let placed: Vec<Vec3> = preset
        .objects
        .iter()
        .map(|object| match object {
            SceneObject::Mesh(mesh) => mesh.position,
            SceneObject::Grid(_) => panic!("the dress form's cloths are meshes"),
        })
        .collect();
    let rest = &cloth.model().positions;
    let stitches: Vec<[u32; 2]> = cloth.live_stitches().collect();
    assert_eq!(stitches.len(), 2 * 34);
    for (k, &[a, b]) in stitches.iter().enumerate() {
        let (side, row) = (k / 34, k % 34);
        let vertex = row * 21 + side * 20;
        for (object, particle) in [a, b].into_iter().enumerate() {
            let expected = files[object][vertex] + placed[object];
            assert!(
                rest[particle as usize].distance(expected) < 1e-6,
                "stitch {k}: particle {particle} rests at {}, vertex {vertex} of object {object} at {expected}",
                rest[particle as usize]
            );
        }
    }
}

/// The shipped dress form after its 600 frames: both side seams shut (within 5 mm), the
/// skirt clear of the form (at most 1 mm inside it) and of itself (no triangles through each
/// other), in one piece with every stitch, and held up by the form: its waistband (the
/// panels' top rows, 2 × 21 particles) is above the form's hips at 0.80 m, not slid down
/// over them.
#[test]
// 600 frames with self-contacts and a 9 504-triangle mesh collider: release only. The run is
// shared (`shipped_run`) with the every-preset tests.
#[cfg(not(debug_assertions))]
fn the_dress_form_ends_sewn_round_the_form_and_held_up_by_it() {
    use crate::common::{all_finite, intersecting_pairs, shipped_run, SHIPPED_FRAMES};
    use drape::headless::collider_penetration;
    shipped_run("dress_form", SHIPPED_FRAMES, |run| {
        let cloth = &run.cloth;
        assert!(all_finite(cloth));
        assert!(cloth.seam_gap() <= 5e-3, "seam gap {}", cloth.seam_gap());
        assert_eq!(cloth.live_stitches().count(), 2 * 34);
        assert!(collider_penetration(cloth) <= 1e-3, "penetration {}", collider_penetration(cloth));
        assert_eq!(intersecting_pairs(cloth), 0);
        assert_eq!(cloth.piece_count(), 1);
        let rest = &cloth.model().positions;
        let top = rest.iter().map(|p| p.y).fold(f32::MIN, f32::max);
        let waistband: Vec<usize> = (0..rest.len()).filter(|&i| rest[i].y == top).collect();
        assert_eq!(waistband.len(), 2 * 21);
        let lowest = waistband.iter().map(|&i| cloth.particles().position(i).y).fold(f32::MAX, f32::min);
        assert!(lowest > 0.80, "the waistband slid down to {lowest} m, below the hips");
    });
}

/// Two 48 × 48 panels (4 608 particles, enough to be split between threads) hanging one from
/// the other by a seam of strength q/2 that tears during the run: 30 frames on one, two and
/// three threads leave the same stitches and the same positions bit for bit (the breaks run
/// in seam and stitch order).
#[test]
// 48² panels, three runs: release only.
#[cfg(not(debug_assertions))]
fn a_tearing_seam_is_bit_identical_on_one_to_three_threads() {
    let big = |origin: Vec3, pins: PinMode| GridSpec {
        columns: 48,
        rows: 48,
        ..panel(origin, pins)
    };
    let q = load_per_length(HEAVY);
    let mut preset = loaded_seam(HEAVY, 0.5 * q, false);
    let bottom_row = VertexRun::Run {
        first: 47 * 48,
        step: 1,
        count: 48,
    };
    let top_row = VertexRun::Run {
        first: 0,
        step: 1,
        count: 48,
    };
    if let [SceneObject::Grid(a), SceneObject::Grid(b)] = &mut preset.objects[..] {
        *a = GridSpec {
            material: a.material.take(),
            ..big(a.origin, PinMode::TopEdge)
        };
        *b = GridSpec {
            material: b.material.take(),
            ..big(b.origin, PinMode::None)
        };
    }
    preset.seams = vec![seam((0, bottom_row), (1, top_row), 0.0, Some(0.5 * q))];
    let run_on = |threads: u32| {
        let cloth = crate::common::run_on_threads(&preset, threads, 30);
        let stitches: Vec<[u32; 2]> = cloth.live_stitches().collect();
        (stitches, crate::common::position_bits(&cloth))
    };
    let one = run_on(1);
    assert!(one.0.len() < 48, "the seam tore in the run");
    for threads in [2, 3] {
        let other = run_on(threads);
        assert!(other.0 == one.0, "{threads} threads: other stitches live");
        assert!(other.1 == one.1, "{threads} threads: positions differ from one thread's");
    }
}
