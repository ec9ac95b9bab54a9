//! The headless command line, run as a real process: `drape simulate`, `drape bench` and
//! `drape soak`, and the window run's arguments that are checked before a window opens.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::{grid_of, ObjFile};

fn drape(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_drape"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the drape binary runs")
}

/// The single JSON line a command printed, with the keys it must have.
fn json_line(output: &Output, keys: &[&str]) -> Value {
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one JSON line expected, got {stdout:?}");
    let value: Value = serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("{e}: {}", lines[0]));
    for key in keys {
        assert!(value.get(key).is_some(), "key `{key}` missing from {value}");
    }
    value
}

fn number(value: &Value, key: &str) -> f64 {
    value[key].as_f64().unwrap_or_else(|| panic!("`{key}` is not a number in {value}"))
}

const SIMULATE_KEYS: [&str; 15] = [
    "frames",
    "collider_penetration",
    "seam_gap",
    "state_hash",
    "particles",
    "constraints",
    "triangles",
    "max_strain",
    "kinetic_energy",
    "ms_per_frame",
    "self_contacts",
    "self_contact_ms",
    "threads",
    "threads_requested",
    "cores",
];

/// Checks an OBJ file of an untorn grid: finite `v`, `vt` and unit `vn` lines, one of each
/// per vertex, and faces whose corners name the same `v`, `vt` and `vn`; returns it.
fn check_grid_obj(path: &Path) -> ObjFile {
    let obj = ObjFile::read(path);
    let vertices = obj.positions.len();
    assert_eq!(
        (obj.texcoords.len(), obj.normals.len()),
        (vertices, vertices),
        "one vt and vn per v"
    );
    assert!(obj.positions.iter().all(|p| p.is_finite()));
    assert!(obj
        .texcoords
        .iter()
        .all(|t| t.len() == 2 && t.iter().all(|c| (0.0..=1.0).contains(c))));
    for n in &obj.normals {
        assert!((n.length() - 1.0).abs() < 1e-3, "normal not unit length: {n}");
    }
    for corner in obj.faces.iter().flatten() {
        assert!(corner.v == corner.vt && corner.v == corner.vn, "{corner:?}");
    }
    obj
}

#[test]
fn simulate_default_preset_writes_a_valid_obj() {
    let dir = tempfile::tempdir().unwrap();
    let obj = dir.path().join("mesh.obj");
    let output = drape(&[
        "simulate",
        "--preset",
        "presets/default.ron",
        "--frames",
        "120",
        "--out",
        obj.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "exit {:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let summary = json_line(&output, &SIMULATE_KEYS);
    assert_eq!(summary["frames"], 120);
    for key in SIMULATE_KEYS.into_iter().filter(|&key| key != "state_hash") {
        assert!(
            number(&summary, key).is_finite() && number(&summary, key) >= 0.0,
            "{key} in {summary}"
        );
    }
    let mesh = check_grid_obj(&obj);
    let (vertices, faces) = (mesh.positions.len(), mesh.faces.len());
    assert_eq!(vertices as f64, number(&summary, "particles"));
    assert_eq!(faces as f64, number(&summary, "triangles"));
    // The default curtain: 48 × 36 particles, two triangles per quad.
    let preset = drape::preset::Preset::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/default.ron")).unwrap();
    let (c, r) = (grid_of(&preset).columns as usize, grid_of(&preset).rows as usize);
    assert_eq!(vertices, c * r);
    assert_eq!(faces, 2 * (c - 1) * (r - 1));
}

#[test]
fn simulate_with_a_broken_preset_exits_2_naming_file_line_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.ron");
    std::fs::write(&path, "(\n    cloth: (\n        columns: \"many\",\n    ),\n)\n").unwrap();
    let obj = dir.path().join("never.obj");
    let output = drape(&[
        "simulate",
        "--preset",
        path.to_str().unwrap(),
        "--frames",
        "5",
        "--out",
        obj.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("{}:3:", path.display())), "stderr: {stderr}");
    assert!(stderr.contains("integer"), "stderr should say what was expected: {stderr}");
    assert!(output.stdout.is_empty());
    assert!(!obj.exists(), "no OBJ from a broken preset");
}

/// `--out` writes the window run's last frame (the real window is exercised by `.ci/smoke`);
/// without `--frames` there is no last frame, so it is refused before any window opens.
#[test]
fn the_window_runs_out_is_refused_without_frames() {
    let dir = tempfile::tempdir().unwrap();
    let obj = dir.path().join("mesh.obj");
    let output = Command::new(env!("CARGO_BIN_EXE_drape"))
        .args(["--out", obj.to_str().unwrap()])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        // Were the flag accepted, the run would fail for want of a display, not hang.
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--frames"));
    assert!(!obj.exists());
}

#[test]
fn simulate_with_a_missing_preset_exits_2() {
    let output = drape(&["simulate", "--preset", "presets/no-such-file.ron", "--frames", "5"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no-such-file.ron"));
}

const BENCH_KEYS: [&str; 16] = [
    "workload",
    "grid",
    "particles",
    "constraints",
    "substeps",
    "iterations",
    "threads",
    "threads_requested",
    "cores",
    "steps",
    "seconds",
    "steps_per_s",
    "proj_per_s",
    "ymin",
    "solver",
    "sweep",
];

#[test]
fn bench_tmp15_reports_the_documented_keys_and_constraint_count() {
    let n = 16u64;
    let output = drape(&["bench", "--workload", "tmp15", "--grid", "16", "--frames", "10"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report = json_line(&output, &BENCH_KEYS);
    assert_eq!(report["workload"], "tmp15");
    assert_eq!(report["grid"], n);
    assert_eq!(report["particles"], n * n);
    // stretch 2n(n−1) + shear 2(n−1)² + bending 2n(n−2)
    let expected = 2 * n * (n - 1) + 2 * (n - 1) * (n - 1) + 2 * n * (n - 2);
    assert_eq!(report["constraints"], expected);
    assert_eq!(report["substeps"], 15);
    assert_eq!(report["iterations"], 1);
    assert_eq!(report["steps"], 10);
    let seconds = number(&report, "seconds");
    assert!(seconds > 0.0);
    let rel = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
    assert!(rel(number(&report, "steps_per_s"), 10.0 / seconds), "{report}");
    assert!(
        rel(number(&report, "proj_per_s"), (expected * 15 * 10) as f64 / seconds),
        "{report}"
    );
    // The cloth starts with its bottom row at y = 2.2 and can only sag below it.
    let ymin = number(&report, "ymin");
    assert!(ymin.is_finite() && ymin < 2.2, "ymin {ymin}");
}

/// `bench` and `simulate` say how many threads were asked for, how many ran, and the cores
/// that capped them: 16 asked for a cloth of more than 4 096 particles run on min(16, cores).
#[test]
fn bench_and_simulate_report_the_threads_asked_for_and_the_cap() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let runs = [
        drape(&["bench", "--grid", "65", "--frames", "1", "--threads", "16"]),
        drape(&[
            "simulate",
            "--preset",
            "presets/falling_strip.ron",
            "--frames",
            "1",
            "--threads",
            "16",
        ]),
    ];
    for output in runs {
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let report = json_line(&output, &["threads", "threads_requested", "cores"]);
        assert!(number(&report, "particles") > 4096.0, "{report}");
        assert_eq!(number(&report, "threads_requested"), 16.0, "{report}");
        assert_eq!(number(&report, "cores"), cores as f64, "{report}");
        assert_eq!(number(&report, "threads"), cores.min(16) as f64, "{report}");
    }
}

#[test]
fn bench_frames_mode_is_deterministic() {
    let ymin = || {
        let output = drape(&["bench", "--workload", "tmp15", "--grid", "12", "--frames", "20"]);
        assert!(output.status.success());
        json_line(&output, &BENCH_KEYS)["ymin"].clone()
    };
    assert_eq!(ymin(), ymin());
}

#[test]
fn bench_preset_workload_runs() {
    let output = drape(&[
        "bench",
        "--workload",
        "preset",
        "--preset",
        "presets/sphere_drape.ron",
        "--frames",
        "5",
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report = json_line(&output, &BENCH_KEYS);
    assert_eq!(report["workload"], "preset");
    assert_eq!(report["steps"], 5);
    assert_eq!(report["sweep"], "grid");
}

/// `--shuffle` numbers the preset's particles at random: the same cloth, swept in colours.
#[test]
fn bench_shuffle_sweeps_the_same_preset_in_colours() {
    let report = |extra: &[&str]| {
        let mut args = vec!["bench", "--workload", "preset", "--preset", "presets/default.ron", "--frames", "3"];
        args.extend_from_slice(extra);
        let output = drape(&args);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        json_line(&output, &BENCH_KEYS)
    };
    let (ordered, shuffled) = (report(&[]), report(&["--shuffle", "3"]));
    assert_eq!((&ordered["sweep"], &shuffled["sweep"]), (&"grid".into(), &"colours".into()));
    for key in ["particles", "constraints", "steps"] {
        assert_eq!(ordered[key], shuffled[key], "{key}");
    }
}

#[test]
fn bench_rejects_bad_input_with_exit_2() {
    for args in [
        &["bench", "--workload", "tmp15", "--grid", "1", "--frames", "1"][..],
        &["bench", "--workload", "tmp15", "--grid", "8", "--substeps", "0", "--frames", "1"][..],
        &["bench", "--workload", "preset", "--frames", "1"][..],
    ] {
        let output = drape(args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(!output.stderr.is_empty());
    }
}

#[test]
fn a_negative_tear_strain_gets_the_range_message_not_an_unknown_argument() {
    let output = drape(&["bench", "--grid", "8", "--frames", "1", "--tear-strain", "-1"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("tear_strain = -1") && stderr.contains("[1e-3, 100]"), "{stderr}");
}

#[test]
fn soak_replays_one_episode_and_reports_its_figures() {
    let output = drape(&["soak", "--seed", "5", "--episode", "1"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let report = json_line(
        &output,
        &[
            "seconds",
            "episodes",
            "steps",
            "actions",
            "storms",
            "scenes",
            "max_abs_position",
            "guard_trips",
            "failures",
        ],
    );
    assert_eq!(number(&report, "episodes"), 1.0);
    assert_eq!(number(&report, "steps"), drape::soak::EPISODE_STEPS as f64);
    assert_eq!(number(&report, "failures"), 0.0);
    assert!(number(&report, "actions") > 10.0);
}

/// The keys of `drape replay`'s line: the `--frames` keys that describe the cloth and the
/// solver, and the hash.
const REPLAY_KEYS: [&str; 14] = [
    "frames",
    "particles",
    "triangles",
    "pinned",
    "max_strain",
    "mean_strain",
    "kinetic_energy",
    "torn_edges",
    "pieces",
    "threads",
    "threads_requested",
    "state_hash",
    "matches_recording",
    "kernel_matches",
];

/// Issue 33: a recording of the real window (a cut) replays headless on one and three threads
/// to the same state bit for bit, and its figures are those of the cut curtain.
#[test]
fn replay_gives_the_same_state_hash_on_one_and_three_threads() {
    let on = |threads: &str| {
        let output = drape(&["replay", "tests/recordings/cut.drec", "--threads", threads]);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        json_line(&output, &REPLAY_KEYS)
    };
    let (one, three) = (on("1"), on("3"));
    for key in [
        "state_hash",
        "pinned",
        "torn_edges",
        "pieces",
        "max_strain",
        "kinetic_energy",
        "frames",
    ] {
        assert_eq!(one[key], three[key], "{key}");
    }
    assert_eq!(one["pieces"], 2);
    assert_eq!(one["state_hash"].as_str().unwrap().len(), 16);
}

/// `--frames N` stops after N frames, and `--export DIR` writes frame 0 and one OBJ per frame.
#[test]
fn replay_exports_one_obj_per_frame() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("frames");
    let output = drape(&[
        "replay",
        "tests/recordings/ctrl_click_pins.drec",
        "--frames",
        "12",
        "--export",
        export.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let line = json_line(&output, &REPLAY_KEYS);
    assert_eq!(line["frames"], 12);
    assert_eq!(line["matches_recording"], Value::Null, "only a whole replay is compared");
    let mut files: Vec<String> = std::fs::read_dir(&export)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files.len(), 13);
    assert_eq!((files[0].as_str(), files[12].as_str()), ("frame_00000.obj", "frame_00012.obj"));
}

/// Issue 33: a truncated or corrupted recording is refused with exit 2 and where and why; so
/// is a file that is not a recording.
#[test]
fn replay_refuses_broken_recordings_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/recordings/cut.drec")).unwrap();
    let truncated = dir.path().join("truncated.drec");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let corrupted = dir.path().join("corrupted.drec");
    let mut flipped = bytes.clone();
    flipped[bytes.len() - 40] ^= 0x04;
    std::fs::write(&corrupted, flipped).unwrap();
    let cases = [
        (truncated, "truncated"),
        (corrupted, "byte "),
        (
            Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/default.ron"),
            "not a Drape recording",
        ),
    ];
    for (path, said) in cases {
        let output = drape(&["replay", path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{}: {stderr}", path.display());
        assert!(stderr.contains(said) && stderr.contains(path.to_str().unwrap()), "{stderr}");
    }
}

/// Issue 33: `--export DIR --format usd` of a real-window recording (a cut) writes one
/// `replay.usda` at the scene's 60 frames a second; OpenUSD (where the `usd-core` package is
/// installed) finds meshes whose points are sampled at every frame, the cut starting new ones.
#[test]
fn replay_exports_usd_that_openusd_reads_frame_by_frame() {
    let dir = tempfile::tempdir().unwrap();
    let output = drape(&[
        "replay",
        "tests/recordings/cut.drec",
        "--export",
        dir.path().to_str().unwrap(),
        "--format",
        "usd",
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let frames = number(&json_line(&output, &REPLAY_KEYS), "frames") as usize;
    let usda = dir.path().join("replay.usda");
    let text = std::fs::read_to_string(&usda).unwrap();
    assert!(text.contains("timeCodesPerSecond = 60"), "{}", &text[..400.min(text.len())]);
    let has_pxr = Command::new("python3")
        .args(["-c", "import pxr"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_pxr {
        eprintln!("replay_exports_usd…: OpenUSD (pip install usd-core) is missing: checked the text only");
        return;
    }
    let script = "import sys\nfrom pxr import Usd, UsdGeom\nstage = Usd.Stage.Open(sys.argv[1])\ntimes = set()\nmeshes = 0\nfor prim in stage.Traverse():\n    if prim.IsA(UsdGeom.Mesh) and prim.GetName().startswith('Topology'):\n        meshes += 1\n        times.update(UsdGeom.Mesh(prim).GetPointsAttr().GetTimeSamples())\nprint(stage.GetTimeCodesPerSecond(), meshes, len(times), min(times), max(times))\n";
    let checked = Command::new("python3")
        .args(["-c", script, usda.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stderr));
    let said = String::from_utf8(checked.stdout).unwrap();
    let fields: Vec<f64> = said.split_whitespace().map(|w| w.parse().unwrap()).collect();
    assert_eq!(fields[0], 60.0, "{said}");
    assert!(fields[1] >= 2.0, "the cut starts a new mesh prim: {said}");
    assert_eq!(
        (fields[2], fields[3], fields[4]),
        ((frames + 1) as f64, 0.0, frames as f64),
        "{said}"
    );
}
