//! Issue 33 item 3's USD file, through the public API: two sheets among the four collider
//! shapes (the ball swinging), one sheet cut partway through, written as one `.usda` and read
//! back by OpenUSD itself (`tests/usd_check.py`, where `python3 -c "import pxr"` works): the
//! stage's frame rate and time range, one mesh per object and topology with a points sample on
//! each frame of its span holding the cloth's f32 positions bit for bit, faces facing their
//! normals, texture coordinates, the visibility switch at the cut, the ball's centres and the
//! capsule's and box's poses. Without OpenUSD only the text's structure is checked.

use std::process::Command;

use drape::preset::Preset;
use drape::scene::SceneObject;
use drape::sim::{Cloth, Collider, GridSpec, Motion, Ray};
use drape::usd_export::UsdAnimation;
use glam::{Quat, Vec3};
use serde_json::{json, Value};

/// Frames recorded, and the frame at whose start the left sheet is cut.
const FRAMES: usize = 12;
const CUT_FRAME: usize = 5;

/// A 6 × 6 vertical sheet, 1 m square, its top edge's centre at (`x`, 2, 0).
fn sheet(x: f32) -> SceneObject {
    SceneObject::Grid(GridSpec {
        columns: 6,
        rows: 6,
        origin: Vec3::new(x, 2.0, 0.0),
        ..GridSpec::default()
    })
}

fn scene() -> Preset {
    Preset {
        objects: vec![sheet(-0.6), sheet(0.6)],
        colliders: vec![
            Collider::Ground { height: 0.0, motion: None },
            Collider::Sphere {
                center: Vec3::new(0.0, 0.5, 0.8),
                radius: 0.2,
                motion: Some(Motion::Oscillate {
                    axis: Vec3::X,
                    amplitude: 0.3,
                    period: 1.0,
                }),
            },
            Collider::Capsule {
                a: Vec3::new(-0.5, 0.4, -0.8),
                b: Vec3::new(0.5, 0.6, -0.7),
                radius: 0.06,
                motion: None,
            },
            Collider::Box {
                center: Vec3::new(0.0, 0.3, 1.5),
                half_extents: Vec3::new(0.2, 0.1, 0.3),
                rotation_degrees: Vec3::new(10.0, 20.0, 30.0),
                motion: None,
            },
        ],
        ..Preset::default()
    }
}

/// Cuts the left sheet across its middle, from its left edge to its centre.
fn cut_left_sheet(cloth: &mut Cloth) {
    let eye = Vec3::new(-1.1, 1.5, 3.0);
    let toward = |x: f32| Ray {
        origin: eye,
        direction: Vec3::new(x, 1.5, 0.0) - eye,
    };
    let version = cloth.topology_version();
    assert!(cloth.cut(&toward(-1.15), &toward(-0.6)) > 0, "the cut crosses the left sheet");
    assert!(cloth.topology_version() > version);
}

/// Object `slot` on one frame: its particles' positions in the cloth's order and its
/// triangle count.
struct ObjectFrame {
    positions: Vec<Vec3>,
    triangles: usize,
}

fn object_frame(cloth: &Cloth, slot: u16) -> ObjectFrame {
    let model = cloth.model();
    let in_object = |i: usize| model.material[i] == slot;
    ObjectFrame {
        positions: (0..model.particle_count())
            .filter(|&i| in_object(i))
            .map(|i| cloth.particles().position(i))
            .collect(),
        triangles: model.triangles.iter().filter(|t| in_object(t[0] as usize)).count(),
    }
}

fn bits(v: Vec3) -> Value {
    json!(v.to_array().map(f32::to_bits))
}

/// The expectations of a cloth mesh prim over frames `first..end` of `frames` (each frame's
/// objects): its point and face counts, and its first, middle and last points' bits on its
/// first and last frames.
fn mesh_expectations(path: &str, frames: &[Vec<ObjectFrame>], slot: usize, first: usize, end: usize) -> Value {
    let at = |frame: usize| &frames[frame][slot];
    let points = at(first).positions.len();
    let points_at: Vec<Value> = [first, end - 1]
        .iter()
        .flat_map(|&frame| {
            [0, points / 2, points - 1].map(|index| json!({"frame": frame, "index": index, "bits": bits(at(frame).positions[index])}))
        })
        .collect();
    json!({
        "path": path, "first": first, "end": end, "points": points, "faces": at(first).triangles,
        // Grids have texture coordinates.
        "uvs": true,
        "points_at": points_at,
        // The sheets hang flat at frame 0, where each face's normal is its corners' normal.
        "flat_at": (first == 0).then_some(0),
    })
}

/// Where `local` points of a shape posed at `frame` should land, and the attribute values
/// it should have.
fn pose(path: &str, prim_type: &str, frame: usize, points: &[(Vec3, Vec3)], attributes: Value) -> Value {
    let (local, world): (Vec<_>, Vec<_>) = points.iter().map(|(l, w)| (l.to_array(), w.to_array())).unzip();
    json!({"path": path, "type": prim_type, "frame": frame, "local": local, "world": world, "attributes": attributes})
}

/// The capsule's ends and the box's corners as they should be posed on the last frame.
fn poses(cloth: &Cloth) -> Vec<Value> {
    let last = FRAMES - 1;
    let [_, _, Collider::Capsule { a, b, radius, .. }, Collider::Box { center, half_extents, .. }] = cloth.colliders() else {
        panic!("the scene's colliders: {:?}", cloth.colliders());
    };
    let height = a.distance(*b);
    let ends = [(Vec3::new(0.0, height / 2.0, 0.0), *b), (Vec3::new(0.0, -height / 2.0, 0.0), *a)];
    // The file holds an f32 as its shortest text, which USD reads as the double of that text.
    let as_written = |x: f32| x.to_string().parse::<f64>().unwrap();
    let capsule = json!({"height": as_written(height), "radius": as_written(*radius), "axis": "Y"});
    let rotation: Quat = cloth.colliders()[3].rotation();
    let corners = [Vec3::ONE, Vec3::new(1.0, -1.0, 1.0), Vec3::new(-1.0, 1.0, -1.0)]
        .map(|corner| (corner, *center + rotation * (*half_extents * corner)));
    vec![
        pose("/Drape/Collider_2/Capsule_0", "Capsule", last, &ends, capsule),
        pose("/Drape/Collider_3/Box_0", "Cube", last, &corners, json!({"size": 2.0})),
    ]
}

/// The sample counts of every `points` attribute of `text`, in the order written.
fn points_sample_counts(text: &str) -> Vec<usize> {
    let blocks = text.split("point3f[] points.timeSamples = {\n").skip(1);
    blocks.map(|block| block.lines().take_while(|l| l.trim() != "}").count()).collect()
}

fn openusd_present() -> bool {
    Command::new("python3")
        .args(["-c", "import pxr"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn openusd_reads_a_cut_sheet_and_a_whole_one_among_moving_colliders_as_written() {
    let preset = scene();
    let mut cloth = preset.build().unwrap();
    let frames_per_second = 1.0 / preset.solver.dt as f64;
    let mut animation = UsdAnimation::new(frames_per_second);
    let mut objects = Vec::new();
    let mut ball = Vec::new();
    for frame in 0..FRAMES {
        if frame == CUT_FRAME {
            cut_left_sheet(&mut cloth);
        }
        animation.add_frame(&cloth);
        objects.push(vec![object_frame(&cloth, 0), object_frame(&cloth, 1)]);
        ball.push(cloth.colliders()[1].position());
        cloth.step(&preset.solver, &preset.material).unwrap();
    }
    assert_ne!(ball[0], ball[FRAMES - 1], "the ball swings");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session.usda");
    animation.write(&file).unwrap();

    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        points_sample_counts(&text),
        [CUT_FRAME, FRAMES - CUT_FRAME, FRAMES],
        "Cloth_0's two spans, Cloth_1's one"
    );
    for prim in [
        "Mesh \"Ground_0\"",
        "Sphere \"Sphere_0\"",
        "Capsule \"Capsule_0\"",
        "Cube \"Box_0\"",
    ] {
        assert_eq!(text.matches(&format!("def {prim}")).count(), 1, "{prim}");
    }

    let ball_at =
        [0, FRAMES / 2, FRAMES - 1].map(|frame| json!({"path": "/Drape/Collider_1/Sphere_0", "frame": frame, "bits": bits(ball[frame])}));
    let expected = json!({
        "frames_per_second": frames_per_second,
        "frames": FRAMES,
        "ground": "/Drape/Collider_0/Ground_0",
        "meshes": [
            mesh_expectations("/Drape/Cloth_0/Topology_0", &objects, 0, 0, CUT_FRAME),
            mesh_expectations("/Drape/Cloth_0/Topology_1", &objects, 0, CUT_FRAME, FRAMES),
            mesh_expectations("/Drape/Cloth_1/Topology_0", &objects, 1, 0, FRAMES),
        ],
        "translations": ball_at,
        "poses": poses(&cloth),
    });
    if !openusd_present() {
        eprintln!("skipped the OpenUSD check: `python3 -c \"import pxr\"` fails (pip install usd-core)");
        return;
    }
    let expectations = dir.path().join("expected.json");
    std::fs::write(&expectations, expected.to_string()).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/usd_check.py");
    let output = Command::new("python3").arg(script).arg(&file).arg(&expectations).output().unwrap();
    assert!(
        output.status.success(),
        "OpenUSD disagrees with the file:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
