//! Issue 33 item 4: the mouse gestures of the real window, recorded under Xvfb with xdotool
//! (`drape --frames N --record FILE`, see docs/recording.md) and kept in `tests/recordings/`,
//! replayed without a window on every commit. Each test checks what the gesture must do to the
//! cloth, from the physics, not from numbers of an earlier run: the recordings carry their
//! scenes, so a change to the solver changes the figures but not what the gesture achieves.
//! Every recording also replays bit for bit alike on one and two threads.

use std::path::Path;
use std::sync::Arc;

use drape::replay::{state_hash, Recording, Replay};
use drape::sim::Cloth;
use glam::Vec3;

use crate::common::all_finite;

fn replay_of(name: &str, threads: u32) -> Replay {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/recordings").join(name);
    let recording = Recording::load(&path).unwrap_or_else(|e| panic!("{e}"));
    Replay::new(Arc::new(recording), Some(threads)).unwrap()
}

/// Replays `name` to its end on one thread, calling `each` with the cloth after every frame
/// (and the start), checking every state is finite; then checks that two threads end in the
/// same state bit for bit.
fn replay_checked(name: &str, mut each: impl FnMut(&Cloth)) -> Cloth {
    let mut replay = replay_of(name, 1);
    each(replay.cloth());
    while !replay.at_end() {
        replay.advance().unwrap();
        assert!(all_finite(replay.cloth()), "{name}: frame {}", replay.frame());
        each(replay.cloth());
    }
    replay.run_to_end().unwrap();
    let mut on_two = replay_of(name, 2);
    on_two.run_to_end().unwrap();
    assert_eq!(
        state_hash(on_two.cloth()),
        state_hash(replay.cloth()),
        "{name}: one and two threads"
    );
    replay.cloth().clone()
}

/// The default curtain grabbed at the middle of its lower edge and dragged right, up, left
/// and down in turn (150 px, 120 px on a 1280 × 800 window): during each hold the held point
/// moves toward where the cursor took the grab's target, by at least 1 cm even straight down,
/// where the pinned cotton barely stretches; and no edge doubles its length (the spike of
/// issue 32 took one triangle to 30 times its length).
#[test]
fn four_grabs_carry_the_cloth_the_way_the_cursor_went() {
    let mut holds = Vec::new();
    let mut started: Option<(Vec3, Vec3)> = None;
    let mut last: Option<(Vec3, Vec3)> = None;
    let mut worst_strain = 0.0f32;
    replay_checked("grab_four_ways.drec", |cloth| {
        worst_strain = worst_strain.max(cloth.stats().max_strain);
        let now = cloth.grabbed_point().zip(cloth.grab_state().map(|g| g.target));
        match (now, started) {
            (Some(held), None) => started = Some(held),
            (None, Some((point, target))) => {
                let (point_end, target_end) = last.expect("held the frame before");
                holds.push((point_end - point, target_end - target));
                started = None;
            }
            _ => {}
        }
        last = now;
    });
    assert_eq!(holds.len(), 4, "{holds:?}");
    let screen_directions = [Vec3::X, Vec3::Y, -Vec3::X, -Vec3::Y];
    for ((moved, dragged), screen) in holds.iter().zip(screen_directions) {
        assert!(dragged.dot(screen) > 0.1, "the recording drags {dragged} for {screen}");
        let toward = moved.dot(dragged.normalize());
        assert!(toward > 0.01, "moved {moved} for a drag of {dragged}");
    }
    assert!(worst_strain < 1.0, "max strain {worst_strain}");
}

/// The tearable sheet pulled hard at its lower right corner (the gesture of issue 32): it
/// tears, and what comes off is a piece of cloth, not a one-element ribbon: every piece has
/// particles of more than a few rows and columns.
#[test]
fn a_corner_pull_of_the_tearable_sheet_tears_off_a_piece() {
    let cloth = replay_checked("corner_pull.drec", |_| {});
    assert!(cloth.torn_edges() > 0);
    let labels = cloth.piece_labels();
    let mut sizes = std::collections::BTreeMap::<u32, usize>::new();
    labels.iter().for_each(|&l| *sizes.entry(l).or_default() += 1);
    assert!(sizes.len() >= 2, "pieces {sizes:?}");
    assert!(sizes.values().all(|&n| n >= 25), "a sliver came off: {sizes:?}");
}

/// A right-drag across the lower part of the default curtain (47 % down the window, about
/// four fifths down the curtain) cuts it in two, each piece at least a tenth of the cloth.
#[test]
fn a_cut_across_the_curtain_parts_it_in_two() {
    let cloth = replay_checked("cut.drec", |_| {});
    let labels = cloth.piece_labels();
    let top = labels.iter().filter(|&&l| l == 0).count();
    assert_eq!(cloth.piece_count(), 2);
    let share = top as f32 / labels.len() as f32;
    assert!((0.1..0.9).contains(&share), "the top piece holds {share} of the particles");
}

/// Ctrl+click on the curtain twice pins two particles; a third Ctrl+click on the first pin's
/// marker unpins it: 2 → 3 → 4 → 3 pins, and a pinned particle stays where it was pinned.
#[test]
fn ctrl_clicks_pin_and_unpin() {
    let mut counts = vec![];
    replay_checked("ctrl_click_pins.drec", |cloth| {
        let pinned = cloth.pinned_count();
        if counts.last() != Some(&pinned) {
            counts.push(pinned);
        }
    });
    assert_eq!(counts, [2, 3, 4, 3]);
}
