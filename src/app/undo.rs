//! Undo and redo: Ctrl+Z / Ctrl+Shift+Z (or Ctrl+Y) and the toolbar's Undo and Redo.
//!
//! Every undoable action first keeps a [`Snapshot`] of the scene as it is: the scene
//! description, the whole cloth (its particles, topology, contact lists, grab, tear state:
//! the solver's complete state, so a restored cut or tear is bit for bit what it was), the
//! file it came from and the session log (a recording in progress rewinds with it). Undo puts
//! that snapshot back and keeps the present for redo; a new action clears the redo steps.
//!
//! Undoable: a grab (its result: undo returns to before the press), a cut stroke (once it cuts
//! something), a Ctrl+click pin, a collider drag, a pressure change, a settings edit (a slider
//! drag or typed value: one step per edit, which ends once the settings rest for
//! [`EDIT_PAUSE`]), load, reset and resize. Undo goes back in time too: the cloth is where it
//! was before the action, not the present cloth with the action taken out.
//!
//! At most [`MAX_STEPS`] steps are kept, and at most [`MEMORY_BUDGET`] of them: the oldest
//! are dropped first. A snapshot is a copy of the cloth, measured at 2.1 MB for the default
//! 48 × 36 curtain and 16.4 MB for a 128² one after 30 frames with self-collision on (about
//! [`BYTES_PER_PARTICLE`] a particle), so the default curtain keeps all 64 steps in 134 MB and a
//! 128² cloth 64 steps in 1 GiB; beyond some 14 000 particles fewer than 64 are kept.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use drape::preset::Preset;
use drape::replay::{SceneSettings, SessionRecorder};
use drape::sim::Cloth;

/// Most undo steps kept.
pub const MAX_STEPS: usize = 64;
/// Most memory the undo steps take, estimated from their particles.
pub const MEMORY_BUDGET: usize = 1 << 30;
/// Memory of a snapshot per particle of its cloth (measured: 1.2 KB at 48 × 36, 1.0 KB at 128²).
pub const BYTES_PER_PARTICLE: usize = 1_250;
/// A settings edit (or a run of pressure changes) ends once nothing changed for this long.
pub const EDIT_PAUSE: Duration = Duration::from_millis(600);

/// The scene as an undo step restores it (module docs).
#[derive(Clone)]
pub struct Snapshot {
    /// What the step undoes ("cut", "grab", "load", …).
    pub label: String,
    /// The scene description.
    pub preset: Preset,
    /// The simulated cloth.
    pub cloth: Cloth,
    /// The file the scene came from.
    pub source: Option<PathBuf>,
    /// The session log.
    pub log: SessionRecorder,
    /// The scene's version when taken (a restore into another scene re-frames the view).
    pub scene_version: u64,
    /// The object the Material panel edits.
    pub selected_object: usize,
}

/// The undo and redo steps, and the settings edit in progress.
#[derive(Default)]
pub struct History {
    undo: VecDeque<Snapshot>,
    redo: Vec<Snapshot>,
    /// The settings as they were when the last edit ended (None: take them at the next look).
    settled: Option<SceneSettings>,
    /// The settings seen last, and when they last changed, while an edit runs.
    editing: Option<(SceneSettings, Instant)>,
    /// The label and time of the last step kept, to fold a run of the same action into one.
    last_push: Option<(String, Instant)>,
}

impl History {
    /// Keeps `snapshot` as the newest undo step and forgets the redo steps; drops the oldest
    /// steps past [`MAX_STEPS`] or [`MEMORY_BUDGET`] (the newest is always kept).
    pub fn push(&mut self, snapshot: Snapshot) {
        self.last_push = Some((snapshot.label.clone(), Instant::now()));
        self.redo.clear();
        self.undo.push_back(snapshot);
        let bytes = |s: &Snapshot| s.cloth.particles().len() * BYTES_PER_PARTICLE;
        while self.undo.len() > 1 && (self.undo.len() > MAX_STEPS || self.undo.iter().map(bytes).sum::<usize>() > MEMORY_BUDGET) {
            self.undo.pop_front();
        }
    }

    /// Undo steps kept.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.undo.len()
    }

    /// Whether an action labelled `label` continues the step kept last (the same action
    /// within [`EDIT_PAUSE`]): then it needs no step of its own.
    pub fn continues(&mut self, label: &str) -> bool {
        match &mut self.last_push {
            Some((last, at)) if last == label && at.elapsed() < EDIT_PAUSE => {
                *at = Instant::now();
                true
            }
            _ => false,
        }
    }

    /// Takes the newest undo step, keeping `present` (labelled as it) for redo.
    pub fn undo(&mut self, present: Snapshot) -> Option<Snapshot> {
        let back = self.undo.pop_back()?;
        self.redo.push(Snapshot {
            label: back.label.clone(),
            ..present
        });
        self.forget_edit();
        Some(back)
    }

    /// Takes the newest redo step, keeping `present` (labelled as it) for undo.
    pub fn redo(&mut self, present: Snapshot) -> Option<Snapshot> {
        let next = self.redo.pop()?;
        self.undo.push_back(Snapshot {
            label: next.label.clone(),
            ..present
        });
        self.forget_edit();
        Some(next)
    }

    /// What undo would undo, if anything.
    pub fn undo_label(&self) -> Option<&str> {
        self.undo.back().map(|s| s.label.as_str())
    }

    /// What redo would redo, if anything.
    pub fn redo_label(&self) -> Option<&str> {
        self.redo.last().map(|s| s.label.as_str())
    }

    /// Forgets the settings edit in progress and the settled settings (after the scene was
    /// replaced or restored: its settings are not an edit).
    pub fn forget_edit(&mut self) {
        self.settled = None;
        self.editing = None;
        self.last_push = None;
    }

    /// Looks at the settings `now`: returns the settings to undo to when an edit starts (the
    /// caller keeps a step with them), and ends an edit once they rested for [`EDIT_PAUSE`].
    pub fn watch_settings(&mut self, now: SceneSettings) -> Option<SceneSettings> {
        let settled = self.settled.get_or_insert_with(|| now.clone());
        match &mut self.editing {
            None if now != *settled => {
                let before = settled.clone();
                self.editing = Some((now, Instant::now()));
                Some(before)
            }
            None => None,
            Some((seen, at)) => {
                if now != *seen {
                    *seen = now;
                    *at = Instant::now();
                } else if at.elapsed() >= EDIT_PAUSE {
                    self.settled = Some(now);
                    self.editing = None;
                }
                None
            }
        }
    }
}
