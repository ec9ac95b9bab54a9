//! The fuzz target's property (`drape::fuzzing::check_preset_bytes`, see `fuzz/`) on
//! proptest-generated inputs, so it runs in every `cargo test` even without a nightly
//! toolchain: shipped presets with numbers replaced by zero, ordinary and extreme values,
//! spans deleted or duplicated, and preset keys inserted.

use proptest::prelude::*;

use std::path::Path;

/// The shipped presets' texts.
fn seeds() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect()
}

/// A number as it might appear in a hostile file.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("0".to_string()),
        Just("-0.0".to_string()),
        (-1e3f32..1e3).prop_map(|v| format!("{v}")),
        (-38i32..39, any::<bool>()).prop_map(|(e, neg)| format!("{}1e{e}", if neg { "-" } else { "" })),
        any::<u32>().prop_map(|v| v.to_string()),
    ]
}

/// One edit of a text: (kind, position fraction, length fraction, replacement).
fn edit() -> impl Strategy<Value = (u8, f64, f64, String)> {
    let word = prop_oneof![
        number(),
        Just("columns: 1024,".to_string()),
        Just("Sphere(center: (0.0, 1.0, 0.0), radius: 999.0),".to_string()),
        Just("pins: List([(0, 0), (1023, 2)]),".to_string()),
        Just("tear_strain: Some(0.001),".to_string()),
        Just("pinned_at: [(0, 0, (0.0, 1e4, 0.0))],".to_string()),
        Just("stretch_damping_time: 1.0, grab_radius: 0.5, grab_slip_strain: 0.001,".to_string()),
        Just(")".to_string()),
    ];
    (0u8..3, 0.0..1.0f64, 0.0..0.2f64, word)
}

/// Applies `edit` to `text` at a character boundary.
fn apply(text: &mut String, (kind, at, len, word): &(u8, f64, f64, String)) {
    let floor = |t: &String, i: usize| (0..=i.min(t.len())).rev().find(|&i| t.is_char_boundary(i)).unwrap();
    let start = floor(text, (at * text.len() as f64) as usize);
    match kind {
        // Replace the number starting at or after `start`.
        0 => {
            if let Some(offset) = text[start..].find(|c: char| c.is_ascii_digit()) {
                let begin = start + offset;
                let end = text[begin..]
                    .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | '-')))
                    .map_or(text.len(), |e| begin + e);
                text.replace_range(begin..end, word);
            }
        }
        // Delete a span.
        1 => {
            let end = floor(text, start + (len * text.len() as f64) as usize);
            text.replace_range(start..end, "");
        }
        // Insert a word.
        _ => text.insert_str(start, word),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn mutated_presets_are_refused_with_a_location_or_run_finite(seed in 0usize..64, edits in prop::collection::vec(edit(), 1..4)) {
        let seeds = seeds();
        let mut text = seeds[seed % seeds.len()].clone();
        for e in &edits {
            apply(&mut text, e);
        }
        drape::fuzzing::check_preset_bytes(text.as_bytes());
    }
}

/// A small recording to mutate: a 10 × 8 curtain grabbed, dragged, cut and pinned.
fn seed_recording() -> Vec<u8> {
    use drape::replay::{apply_input, step_scene, SessionRecorder, SimInput};
    use drape::sim::Ray;
    use glam::Vec3;
    let mut preset = drape::preset::Preset::default();
    let grid = preset.single_grid_mut().unwrap();
    (grid.columns, grid.rows) = (10, 8);
    let mut cloth = preset.build().unwrap();
    let mut recorder = SessionRecorder::new(&preset, cloth.kernel(), 1);
    let ray = |x: f32| Ray {
        origin: Vec3::new(x, 1.5, 2.0),
        direction: -Vec3::Z,
    };
    let inputs = [
        SimInput::TogglePin(5),
        SimInput::Cut {
            from: ray(-0.5),
            to: ray(1.5),
        },
        SimInput::Grab(cloth.pick(&ray(0.5), 0.1).unwrap()),
        SimInput::DragTo(Vec3::new(0.5, 1.6, 0.3)),
        SimInput::Release(Some(Vec3::Y)),
    ];
    for input in inputs {
        apply_input(&mut preset, &mut cloth, &input);
        recorder.input(input);
        let _ = step_scene(&preset, &mut cloth, Some(1));
        recorder.stepped();
    }
    recorder.recording(0, &cloth).to_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// The recording fuzz target's property (`drape::fuzzing::check_recording_bytes`) on a
    /// real recording with bytes flipped, removed or inserted, or cut short.
    #[test]
    fn mutated_recordings_are_refused_with_a_message_or_replay_finite(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = seed_recording();
        for (at, value) in &flips {
            let at = at.index(bytes.len());
            bytes[at] ^= value;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        drape::fuzzing::check_recording_bytes(&bytes);
    }
}
