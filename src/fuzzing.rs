//! The property the fuzz target (`fuzz/`, cargo-fuzz) and its always-on proptest twin
//! (`tests/drape/fuzz.rs`) check on arbitrary input: any bytes either fail to parse as a
//! preset with a located message, or give a preset that round-trips through its text,
//! builds (or names the mesh file that is missing or broken) and steps with finite state
//! inside the world (a step may only be refused by the divergence guard). Large grids and heavy solver settings are scaled down first (to
//! values that are still valid) so every input runs in milliseconds.
//!
//! The recording target ([`check_recording_bytes`]) checks that any bytes are either refused
//! as a recording with a message, or replay a few frames with finite state; since a random
//! change rarely keeps the CRC, each input is also tried with its checksum made right, so the
//! decoder and the replay see the change.

use std::path::Path;

use crate::preset::{Preset, PresetError};
use crate::replay::{Recording, Replay};
use crate::sim::{SimError, WORLD_EXTENT};

/// Frames stepped per input.
const FRAMES: u32 = 3;
/// Largest grid side an input is run at.
const MAX_SIDE: u32 = 24;
/// Largest substeps × iterations an input is run at.
const MAX_SWEEPS: u32 = 40;

/// Checks the property on `data`; panics (a fuzz finding) if it does not hold.
pub fn check_preset_bytes(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let path = Path::new("fuzz.ron");
    // Parsed and checked as `Preset::load` does, so a refusal made there is located too.
    let checked = Preset::parse(text, path).and_then(|preset| preset.check_named_files(text, path).map(|()| preset));
    let mut preset = match checked {
        Ok(preset) => preset,
        Err(PresetError::Invalid { line, col, message, .. }) => {
            assert!(
                line >= 1 && col >= 1 && !message.is_empty(),
                "unlocated error {line}:{col} {message:?}"
            );
            return;
        }
        Err(e) => panic!("parsing text gave an I/O error: {e}"),
    };
    let again = Preset::parse(&preset.to_ron(), Path::new("fuzz-again.ron"))
        .unwrap_or_else(|e| panic!("a valid preset's own text is refused: {e}\n{}", preset.to_ron()));
    assert_eq!(again, preset, "the text does not round-trip");
    scale_down(&mut preset);
    let mut cloth = match preset.build() {
        Ok(cloth) => cloth,
        // A mesh file is only read when the scene is built: missing, broken, or pinned at
        // vertices it lacks, it is refused with its name.
        Err(e) if names_a_mesh_file(&preset, &e.to_string()) => return,
        Err(e) => panic!("a validated preset does not build: {e}"),
    };
    for frame in 0..FRAMES {
        match cloth.step(&preset.solver, &preset.material) {
            Ok(_) | Err(SimError::Diverged { .. }) => {}
            Err(e) => panic!("frame {frame}: a validated preset's step was refused: {e}"),
        }
        let p = cloth.particles();
        for i in 0..p.len() {
            let (x, v) = (p.position(i), p.velocity(i));
            assert!(
                x.is_finite() && v.is_finite() && x.abs().max_element() <= WORLD_EXTENT,
                "frame {frame}: particle {i} at {x} moving {v}"
            );
        }
    }
}

/// Checks the recording property (module docs) on `data`; panics (a fuzz finding) if it
/// does not hold.
pub fn check_recording_bytes(data: &[u8]) {
    let mut fixed = data.to_vec();
    if fixed.len() >= 16 {
        let body = fixed.len() - 4;
        let crc = crc32fast::hash(&fixed[..body]);
        fixed[body..].copy_from_slice(&crc.to_le_bytes());
    }
    for bytes in [data, &fixed[..]] {
        match Recording::from_bytes(bytes) {
            Ok(recording) => replay_briefly(recording),
            Err(message) => assert!(!message.is_empty(), "a refusal without a message"),
        }
    }
}

/// Replays [`FRAMES`] frames of `recording` on one thread, checking the state stays finite;
/// a recording with a scene heavier than [`scale_down`] allows is only decoded.
fn replay_briefly(recording: Recording) {
    let light = |text: &String| {
        Preset::parse(text, Path::new("fuzz")).is_ok_and(|preset| {
            let mut scaled = preset.clone();
            scale_down(&mut scaled);
            scaled == preset && preset.objects.is_empty()
        })
    };
    if !recording.presets.iter().all(light) {
        return;
    }
    let Ok(mut replay) = Replay::new(std::sync::Arc::new(recording), Some(1)) else {
        return;
    };
    for frame in 0..FRAMES {
        if replay.advance().is_err() {
            return;
        }
        let p = replay.cloth().particles();
        assert!(
            (0..p.len()).all(|i| p.position(i).is_finite() && p.velocity(i).is_finite()),
            "frame {frame}: a replayed state is not finite"
        );
    }
}

/// Whether `message` names one of the mesh files the preset names (objects or colliders): a
/// file that cannot be read is reported as `"<file>: …"`, a mesh that does not fit its pins as
/// `"invalid geometry: <file>: pinned vertex … does not exist"`.
fn names_a_mesh_file(preset: &Preset, message: &str) -> bool {
    preset.named_mesh_files().any(|file| message.contains(&file.display().to_string()))
}

/// Keeps the grid at most [`MAX_SIDE`] per side (pins and `pinned_at` cells that fall outside
/// are dropped) and the sweeps per frame at most [`MAX_SWEEPS`]; all still valid values.
fn scale_down(preset: &mut Preset) {
    if let Some(cloth) = preset.single_grid_mut() {
        cloth.columns = cloth.columns.min(MAX_SIDE);
        cloth.rows = cloth.rows.min(MAX_SIDE);
        let (columns, rows) = (cloth.columns, cloth.rows);
        if let crate::sim::PinMode::List(pins) = &mut cloth.pins {
            pins.retain(|&(c, r)| c < columns && r < rows);
        }
        cloth.pinned_at.retain(|pin| pin.column < columns && pin.row < rows);
    }
    let solver = &mut preset.solver;
    solver.iterations = solver.iterations.min(MAX_SWEEPS);
    solver.substeps = solver.substeps.min(MAX_SWEEPS / solver.iterations).max(1);
    // Fewer substeps only lengthen h, which moves α̃ away from overflow: still valid.
    debug_assert!(solver.validate_with(&preset.material).is_ok());
}
