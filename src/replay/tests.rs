use std::sync::Arc;

use glam::Vec3;

use super::*;
use crate::sim::Ray;

/// A recorded session in the making: inputs are applied the way the app applies them and
/// recorded, steps are the app's steps.
struct Session {
    preset: Preset,
    cloth: Cloth,
    recorder: SessionRecorder,
}

impl Session {
    fn new(preset: Preset) -> Self {
        let cloth = preset.build().unwrap();
        let recorder = SessionRecorder::new(&preset, cloth.kernel(), preset.solver.threads);
        Self { preset, cloth, recorder }
    }

    fn act(&mut self, input: SimInput) {
        apply_input(&mut self.preset, &mut self.cloth, &input);
        self.recorder.input(input);
    }

    fn replace(&mut self, preset: Preset, change: SceneChange) {
        self.cloth = preset.build().unwrap();
        self.preset = preset;
        self.recorder.scene(&self.preset, change);
    }

    fn run(&mut self, frames: u32) {
        for _ in 0..frames {
            self.recorder.before_step(&self.preset);
            let _ = step_scene(&self.preset, &mut self.cloth, None);
            self.recorder.stepped();
        }
    }

    fn recording(&self) -> Recording {
        self.recorder.recording(0, &self.cloth)
    }

    /// The centre of the cloth and a point left of it and right of it, past its edges.
    fn span(&self) -> (Vec3, Vec3, Vec3) {
        let n = self.cloth.particles().len() as f32;
        let centre = self.cloth.particles().positions().sum::<Vec3>() / n;
        (centre, centre - Vec3::X, centre + Vec3::X)
    }
}

/// A 10 × 8 curtain on one thread, small enough for debug builds.
fn small_preset() -> Preset {
    let mut preset = Preset::default();
    let grid = preset.single_grid_mut().unwrap();
    (grid.columns, grid.rows) = (10, 8);
    preset.solver.threads = 1;
    preset
}

/// A camera ray from 2 m in front of the curtain (+z) through `at`.
fn ray_through(at: Vec3) -> Ray {
    let origin = at + Vec3::new(0.0, 0.0, 2.0);
    Ray {
        origin,
        direction: at - origin,
    }
}

/// Replays `recording` through its file bytes on `threads` threads; returns the final cloth.
fn replayed(recording: &Recording, threads: Option<u32>) -> Cloth {
    let read = Recording::from_bytes(&recording.to_bytes()).unwrap();
    assert_eq!(&read, recording, "the file keeps the recording exactly");
    let mut replay = Replay::new(Arc::new(read), threads).unwrap();
    replay.run_to_end().unwrap();
    replay.cloth().clone()
}

/// Each input kind, applied between frames of a session that runs on: the replay ends in the
/// recorded state bit for bit, and the session ends somewhere else than the same session
/// without the input (so the input mattered).
#[test]
fn every_input_kind_replays_bit_exactly() {
    type Script = fn(&mut Session);
    let kinds: [(&str, Script); 9] = [
        ("grab, drag and throw", |s| {
            let (centre, ..) = s.span();
            let pick = s.cloth.pick(&ray_through(centre), 0.05).unwrap();
            s.act(SimInput::Grab(pick));
            for k in 0..5 {
                s.act(SimInput::DragTo(centre + Vec3::new(0.05 * k as f32, 0.0, 0.1)));
                s.run(1);
            }
            s.act(SimInput::Release(Some(Vec3::new(0.0, 2.0, 1.0))));
        }),
        ("grab and Shift-release pin", |s| {
            let (centre, ..) = s.span();
            s.act(SimInput::Grab(s.cloth.pick(&ray_through(centre), 0.05).unwrap()));
            s.act(SimInput::DragTo(centre + Vec3::new(0.0, 0.2, 0.3)));
            s.run(3);
            s.act(SimInput::ReleasePinned);
        }),
        ("cut", |s| {
            let (_, left, right) = s.span();
            s.act(SimInput::Cut {
                from: ray_through(left),
                to: ray_through(right),
            });
        }),
        ("Ctrl+click pin", |s| s.act(SimInput::TogglePin(0))),
        ("solver edit", |s| {
            s.preset.solver.gravity = Vec3::new(1.0, -9.81, 0.0);
        }),
        ("material edit", |s| {
            s.preset.material.youngs_modulus *= 0.1;
        }),
        ("collider drag", |s| {
            s.replace(with_ball(s.preset.clone()), SceneChange::Load);
            s.run(2);
            let (centre, ..) = s.span();
            s.act(SimInput::MoveCollider {
                index: 0,
                to: centre + Vec3::new(0.0, 0.0, 0.05),
            });
        }),
        ("resize", |s| {
            let mut preset = s.preset.clone();
            preset.single_grid_mut().unwrap().columns = 7;
            s.replace(preset, SceneChange::Resize);
        }),
        ("reset", |s| {
            let preset = s.preset.clone();
            s.replace(preset, SceneChange::Reset);
        }),
    ];
    for (kind, script) in kinds {
        let mut plain = Session::new(small_preset());
        plain.run(10);
        plain.run(12);
        let mut session = Session::new(small_preset());
        session.run(10);
        script(&mut session);
        session.run(12);
        let recording = session.recording();
        let replay = replayed(&recording, None);
        assert_eq!(state_hash(&replay), state_hash(&session.cloth), "{kind}: replayed state");
        assert_eq!(recording.final_hash, Some(state_hash(&session.cloth)), "{kind}");
        assert_ne!(
            state_hash(&plain.cloth),
            state_hash(&session.cloth),
            "{kind}: the input changed nothing"
        );
        assert_eq!(replay.pinned_count(), session.cloth.pinned_count(), "{kind}");
        assert_eq!(replay.torn_edges(), session.cloth.torn_edges(), "{kind}");
    }
}

fn with_ball(mut preset: Preset) -> Preset {
    let centre = Vec3::new(0.5, 1.5, -0.12);
    preset.colliders = vec![crate::sim::Collider::Sphere {
        center: centre,
        radius: 0.1,
        motion: None,
    }];
    preset
}

/// Issue 33: a recording made on one thread replays identically on four (and two). The
/// cloth has more than 4 096 particles, so a step really runs on several threads (where the
/// machine has several cores).
#[test]
fn a_recording_made_on_one_thread_replays_identically_on_four() {
    let mut preset = small_preset();
    let grid = preset.single_grid_mut().unwrap();
    (grid.columns, grid.rows) = (70, 60);
    let mut session = Session::new(preset);
    session.preset.solver.self_collision = true;
    session.run(5);
    let (centre, left, right) = session.span();
    session.act(SimInput::Grab(session.cloth.pick(&ray_through(centre), 0.05).unwrap()));
    session.act(SimInput::DragTo(centre + Vec3::new(0.2, 0.1, 0.2)));
    session.run(8);
    session.act(SimInput::Release(None));
    session.act(SimInput::Cut {
        from: ray_through(left),
        to: ray_through(right),
    });
    session.run(8);
    let recording = session.recording();
    let four = SolverParams {
        threads: 4,
        ..session.preset.solver.clone()
    };
    let cores = crate::sim::available_cores() as u32;
    assert_eq!(
        session.cloth.threads_used(&four),
        cores.min(4),
        "the replay on four threads runs on several"
    );
    for threads in [1, 2, 4] {
        assert_eq!(
            state_hash(&replayed(&recording, Some(threads))),
            state_hash(&session.cloth),
            "{threads} threads"
        );
    }
}

/// Scrubbing: back to frame 0, forward again, and to a frame between checkpoints give the
/// states a straight run gives there.
#[test]
fn seeking_back_and_forth_gives_the_states_of_a_straight_run() {
    let mut session = Session::new(small_preset());
    session.run(3);
    let (_, left, right) = session.span();
    session.act(SimInput::Cut {
        from: ray_through(left),
        to: ray_through(right),
    });
    session.run(297);
    let recording = Arc::new(session.recording());
    let mut straight = Replay::new(Arc::clone(&recording), None).unwrap();
    let mut at_frame = Vec::new();
    while !straight.at_end() {
        at_frame.push(state_hash(straight.cloth()));
        straight.advance().unwrap();
    }
    let mut replay = Replay::new(recording, None).unwrap();
    for frame in [250, 0, 299, 130, 2, 4, 121] {
        replay.seek(frame).unwrap();
        assert_eq!(replay.frame(), frame);
        assert_eq!(state_hash(replay.cloth()), at_frame[frame as usize], "frame {frame}");
    }
    replay.seek(300).unwrap();
    assert_eq!(state_hash(replay.cloth()), state_hash(&session.cloth));
}

/// Slider edits are recorded once per change, at the step that first sees them, not every
/// frame; an unchanged step records nothing.
#[test]
fn a_slider_edit_is_recorded_once_when_a_step_sees_it() {
    let mut session = Session::new(small_preset());
    session.run(4);
    let before = session.recorder.event_count();
    session.preset.solver.air_damping = 0.5;
    session.run(4);
    let recording = session.recording();
    assert_eq!(recording.events.len(), before + 1);
    assert_eq!(
        recording.events.last().unwrap(),
        &Event {
            frame: 4,
            input: SimInput::Solver(session.preset.solver.clone())
        }
    );
}

/// Issue 33: a 10-minute session of active dragging (a drag target every frame at 60 frames
/// a second, a grab and release every second) stays under 1 MB.
#[test]
fn ten_minutes_of_dragging_fit_in_a_megabyte() {
    let mut recording = Session::new(small_preset()).recording();
    let pick = crate::sim::Pick {
        particle: 3,
        t: 1.7,
        hit: None,
    };
    for frame in 0..36_000 {
        let input = match frame % 60 {
            0 => SimInput::Grab(pick),
            59 => SimInput::Release(Some(Vec3::new(0.1, 0.2, 0.3))),
            _ => SimInput::DragTo(Vec3::new(0.1 + frame as f32 * 1e-5, 1.234567, 0.7654321)),
        };
        recording.events.push(Event { frame, input });
    }
    recording.frames = 36_000;
    let bytes = recording.to_bytes();
    assert!(bytes.len() < 1 << 20, "{} bytes", bytes.len());
    assert_eq!(Recording::from_bytes(&bytes).unwrap(), recording);
}

/// A truncated file and a file with any single byte flipped are refused with where and why,
/// never a panic.
#[test]
fn truncated_or_corrupted_files_are_refused_with_the_byte_where_reading_stopped() {
    let mut session = Session::new(small_preset());
    session.run(2);
    session.act(SimInput::DragTo(Vec3::ONE));
    session.run(1);
    let bytes = session.recording().to_bytes();
    for cut in 0..bytes.len() {
        let error = Recording::from_bytes(&bytes[..cut]).unwrap_err();
        assert!(
            error.contains("truncated") || error.contains("not a Drape recording"),
            "cut at {cut}: {error}"
        );
    }
    for at in 0..bytes.len() {
        let mut broken = bytes.clone();
        broken[at] ^= 0x10;
        let error = Recording::from_bytes(&broken).unwrap_err();
        let said_where = error.starts_with("byte ") || error.contains("not a Drape recording") || error.contains("preset 0");
        assert!(said_where, "flip at {at}: {error}");
    }
}

/// The inputs of a mesh scene: a pressure edit and an object's own material replay bit for
/// bit, and the recording carries the mesh file, so it replays with the file gone.
#[test]
fn pressure_and_object_material_edits_replay_with_the_mesh_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(dir.path().join("presets")).unwrap();
    std::fs::create_dir_all(dir.path().join("assets")).unwrap();
    std::fs::copy(root.join("assets/sphere.obj"), dir.path().join("assets/sphere.obj")).unwrap();
    std::fs::copy(root.join("presets/balloon.ron"), dir.path().join("presets/balloon.ron")).unwrap();
    let mut preset = Preset::load(&dir.path().join("presets/balloon.ron")).unwrap();
    preset.embed_meshes().unwrap();
    preset.solver.threads = 1;
    let mut plain = Session::new(preset.clone());
    plain.run(15);
    let mut session = Session::new(preset);
    session.run(5);
    session.act(SimInput::Pressure { object: 0, factor: 2.5 });
    session.run(5);
    let mut stiff = session.preset.material.clone();
    stiff.youngs_modulus *= 4.0;
    *session.preset.objects[0].material_mut() = Some(stiff);
    session.run(5);
    let recording = session.recording();
    assert!(recording.events.iter().any(|e| matches!(e.input, SimInput::ObjectMaterial { .. })));
    assert_eq!(recording.meshes.len(), 1);
    drop(dir);
    assert_eq!(state_hash(&replayed(&recording, None)), state_hash(&session.cloth));
    assert_ne!(
        state_hash(&plain.cloth),
        state_hash(&session.cloth),
        "the edits changed the balloon"
    );
}
