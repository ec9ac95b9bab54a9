//! The sandbox's state and everything that changes it structurally, free of window code so it
//! is unit-tested headless.
//!
//! Sliders edit [`AppState::preset`]'s solver and material fields in place (the engine reads
//! them every step, so those edits are live). Anything that replaces or rebuilds the scene, or
//! touches files, goes through an [`Action`] and [`apply`]: the UI and the keyboard return
//! actions, the loop applies them, and a failure only writes the status line — the running
//! scene is replaced only once its successor has been built.

use std::path::{Path, PathBuf};

use drape::preset::Preset;
use drape::replay::{self, Recording, Replay, SceneChange, SceneSettings, SessionRecorder, SimInput};

use super::undo::{History, Snapshot};
use drape::sim::{Cloth, GridSpec, Material, Pick, PinMode, PinnedAt, Ray, SolverParams};
use glam::Vec3;

/// Whether the simulation advances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunMode {
    /// Advance in real time (scaled by the time scale).
    Running,
    /// Hold still; the mouse can still move the cloth when stepping resumes.
    Paused,
    /// Advance exactly one frame, then pause.
    Step,
}

/// Resolution and size of the rectangular cloth, as edited in the Scene panel before Apply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridSize {
    /// Particles along the width.
    pub columns: u32,
    /// Particles along the height.
    pub rows: u32,
    /// Width in m.
    pub width: f32,
    /// Height in m.
    pub height: f32,
}

/// A structural change requested by the UI, the keyboard or the mouse.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Run, pause, or advance one frame.
    SetRunMode(RunMode),
    /// Rebuild the cloth from the current scene description (keeps the edited material; pins
    /// added, removed or moved since are undone, and the status line says how many).
    Reset,
    /// Rebuild the cloth, keeping the pins as they are now and where they are (they become
    /// part of the scene).
    ResetKeepingPins,
    /// Open a preset file; a broken one leaves the running scene alone.
    Load(PathBuf),
    /// Save the scene as `<presets dir>/<name>.ron`; an existing file is only replaced with
    /// `overwrite` (the UI asks first).
    SaveAs {
        /// File stem, also written as the preset's display name.
        name: String,
        /// The description saved with it (shown in the picker's tooltip).
        description: String,
        /// Replace an existing file.
        overwrite: bool,
    },
    /// Rebuild the cloth with a new resolution and size.
    ApplyGrid(GridSize),
    /// Pin or unpin a particle.
    TogglePin(u32),
    /// Re-read the presets directory.
    RefreshPresets,
    /// Change the pressure factor of mesh object `object` (which has pressure) to `factor`,
    /// live and in the scene description.
    SetPressure {
        /// Index into the scene's objects.
        object: usize,
        /// The new pressure factor k.
        factor: f32,
    },
    /// Make object k the one the Material panel edits.
    SelectObject(usize),
    /// Start recording the session, or stop and write the recording (F8).
    ToggleSessionRecording,
    /// Write the last 60 s of the session as a recording (F7).
    SaveLastMinute,
    /// Open a recording in the player (the running scene is replaced by the replay).
    OpenRecording(PathBuf),
    /// Player: go to this frame of the recording.
    Seek(u32),
    /// Player: continue by hand from the frame shown (the recording's inputs up to it stay
    /// in the log, so a recording started now still replays from the recording's start).
    TakeOver,
    /// Back to before the last undoable action (Ctrl+Z).
    Undo,
    /// Forward again to after the last undone action (Ctrl+Shift+Z or Ctrl+Y).
    Redo,
}

/// A recording open in the player.
pub struct Playback {
    /// The replay; [`AppState::cloth`] and [`AppState::preset`] show its current frame.
    pub replay: Replay,
    /// The file.
    pub path: PathBuf,
    /// Playing (else paused at the frame shown).
    pub playing: bool,
    /// A seek under way: the frame it goes to (far seeks are spread over the window's frames,
    /// [`SEEK_BUDGET`] of replay each, so the window stays responsive).
    pub seeking_to: Option<u32>,
    /// [`Replay::scenes_built`] when the shown scene was copied (a change re-frames it).
    shown_scenes: u32,
}

/// Wall time a seek may replay in one window frame.
pub const SEEK_BUDGET: std::time::Duration = std::time::Duration::from_millis(30);

/// Seconds of simulation "save the last 60 s" keeps in view.
pub const LAST_SECONDS: f32 = 60.0;

/// One line of feedback shown at the bottom of the window.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Status {
    /// The message.
    pub text: String,
    /// Shown in red when true.
    pub error: bool,
}

/// A preset file the picker lists.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetEntry {
    /// The file.
    pub path: PathBuf,
    /// File stem.
    pub stem: String,
    /// The preset's display name; None when the file cannot be loaded.
    pub name: Option<String>,
    /// The description and file name, or why the file cannot be loaded (the tooltip).
    pub summary: String,
}

impl PresetEntry {
    /// Reads `path` for the picker.
    fn read(path: PathBuf, stem: String) -> Self {
        let (name, summary) = match Preset::load(&path) {
            Ok(p) if p.description.is_empty() => (Some(p.name), format!("{stem}.ron")),
            Ok(p) => (Some(p.name), format!("{}\n{stem}.ron", p.description)),
            Err(e) => (None, format!("cannot be loaded: {e}")),
        };
        Self { path, stem, name, summary }
    }

    /// The picker's line: the preset's name, or the file name marked as broken.
    pub fn label(&self) -> String {
        match &self.name {
            Some(name) if !name.trim().is_empty() => name.clone(),
            Some(_) => self.stem.clone(),
            None => format!("⚠ {} (broken)", self.stem),
        }
    }

    /// Whether the file can be loaded.
    pub fn is_broken(&self) -> bool {
        self.name.is_none()
    }
}

/// The (scene version, cloth topology version) a cached count or measure was taken at.
type TopologyVersion = (u64, u64);

/// Everything the sandbox knows apart from the window: the scene and its description, the run
/// mode, and the feedback for the user.
pub struct AppState {
    /// The scene description; its solver and material are edited live by the sliders.
    pub preset: Preset,
    /// The simulated cloth built from `preset`.
    pub cloth: Cloth,
    /// The file the scene came from (None for the built-in default).
    pub source: Option<PathBuf>,
    /// Where presets are listed from and saved to.
    pub presets_dir: PathBuf,
    /// The presets found in `presets_dir`.
    pub presets: Vec<PresetEntry>,
    /// Run / pause / step.
    pub run_mode: RunMode,
    /// Simulated seconds per real second (slow motion below 1).
    pub time_scale: f32,
    /// Worker threads from the command line, overriding the preset's.
    pub threads_override: Option<u32>,
    /// Increases whenever `cloth` is replaced (the renderer and camera re-frame on it).
    pub scene_version: u64,
    /// The feedback line.
    pub status: Status,
    /// A save that waits for the user to confirm overwriting this file.
    pub pending_overwrite: Option<String>,
    /// The object the Material panel edits in a scene of several objects (index into
    /// `preset.objects`).
    pub selected_object: usize,
    /// Piece count and the (scene, topology) version it was counted for.
    pieces_cache: std::cell::Cell<(Option<TopologyVersion>, usize)>,
    /// Mean stretch-edge rest length (the mesh spacing, m) and the (scene, topology) version it
    /// was measured for: the Stats panel reads it every frame.
    spacing_cache: std::cell::Cell<(Option<TopologyVersion>, Option<f32>)>,
    /// Every input since the scene was last replaced (or, while a session recording runs,
    /// since the scene it started in): what a recording and "save the last 60 s" write
    /// ([`drape::replay`]).
    pub log: SessionRecorder,
    /// The session recording in progress, if any.
    pub session_recording: Option<SessionRecording>,
    /// Where session recordings are written (default `recordings/` in the working directory).
    pub recordings_dir: PathBuf,
    /// The recording open in the player, if any: the mouse only moves the camera then.
    pub playback: Option<Playback>,
    /// Undo and redo steps ([`super::undo`]).
    pub history: History,
    /// The scene before the cutting stroke in progress, until a segment cuts something.
    stroke_undo: Option<Snapshot>,
}

/// A session recording in progress.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecording {
    /// The frame of [`AppState::log`] where it started (the player opens there).
    pub since: u32,
    /// Where it is written when it stops.
    pub path: PathBuf,
}

impl AppState {
    /// Builds the state around `preset` (loaded from `source`, if any).
    pub fn new(preset: Preset, source: Option<PathBuf>, presets_dir: PathBuf) -> anyhow::Result<Self> {
        let mut preset = preset;
        preset.embed_meshes()?;
        let cloth = preset.build()?;
        let log = SessionRecorder::new(&preset, cloth.kernel(), preset.solver.threads);
        let mut state = Self {
            preset,
            cloth,
            source,
            presets_dir,
            presets: Vec::new(),
            run_mode: RunMode::Running,
            time_scale: 1.0,
            threads_override: None,
            scene_version: 0,
            status: Status::default(),
            pending_overwrite: None,
            selected_object: 0,
            pieces_cache: std::cell::Cell::new((None, 1)),
            spacing_cache: std::cell::Cell::new((None, None)),
            log,
            session_recording: None,
            recordings_dir: PathBuf::from("recordings"),
            playback: None,
            history: History::default(),
            stroke_undo: None,
        };
        state.presets = list_presets(&state.presets_dir);
        Ok(state)
    }

    /// The solver parameters a step uses: the preset's, with the command line's thread count.
    pub fn step_params(&self) -> SolverParams {
        let mut params = self.preset.solver.clone();
        if let Some(threads) = self.threads_override {
            params.threads = threads;
        }
        params
    }

    /// Advances the cloth one frame ([`replay::step_scene`], logged); a refused parameter, a
    /// frame over the work budget or a diverged step (undone by the engine) pauses and
    /// reports instead.
    pub fn step(&mut self) {
        self.log.before_step(&self.preset);
        let refused = replay::step_scene(&self.preset, &mut self.cloth, self.threads_override).err();
        self.log.stepped();
        if let Some(refused) = refused {
            self.run_mode = RunMode::Paused;
            self.report_error(refused.0);
        }
    }

    /// Applies a mouse input to the cloth and logs it.
    fn input(&mut self, input: SimInput) {
        replay::apply_input(&mut self.preset, &mut self.cloth, &input);
        self.log.input(input);
    }

    /// Grabs what `pick` found ([`Cloth::grab_pick`]), an undo step; false when the engine
    /// refuses.
    pub fn grab(&mut self, pick: &Pick) -> bool {
        let before = self.snapshot("grab");
        let grabbed = self.cloth.grab_pick(pick).is_ok();
        if grabbed {
            self.history.push(before);
            self.log.input(SimInput::Grab(*pick));
        }
        grabbed
    }

    /// Moves the held point's target (m); an unchanged target is not logged again.
    pub fn drag_to(&mut self, target: Vec3) {
        if self.cloth.grab_state().is_some_and(|g| g.target != target) {
            self.input(SimInput::DragTo(target));
        }
    }

    /// Lets go, throwing with `throw` (m/s).
    pub fn release(&mut self, throw: Option<Vec3>) {
        self.input(SimInput::Release(throw));
    }

    /// Lets go and pins the held point where it is.
    pub fn release_pinned(&mut self) {
        self.input(SimInput::ReleasePinned);
    }

    /// A cutting stroke starts: the scene as it is now becomes the stroke's undo step once a
    /// segment cuts something ([`Self::cut`]); a stroke that cuts nothing leaves no step. One
    /// copy a stroke, as a grab takes one a press (not one a frame until the first cut).
    pub fn begin_stroke(&mut self) {
        self.stroke_undo = Some(self.snapshot("cut"));
    }

    /// Cuts every edge crossing the surface between two camera rays; returns how many. The
    /// first segment of a stroke that cuts anything makes the stroke an undo step.
    pub fn cut(&mut self, from: &Ray, to: &Ray) -> usize {
        let cut = self.cloth.cut(from, to);
        self.log.input(SimInput::Cut { from: *from, to: *to });
        if cut > 0 {
            if let Some(before) = self.stroke_undo.take() {
                self.history.push(before);
            }
        }
        cut
    }

    /// The cutting stroke ends (a stroke that cut nothing forgets its undo step).
    pub fn end_stroke(&mut self) {
        self.stroke_undo = None;
    }

    /// Keeps the scene as it is now as an undo step labelled `label`.
    pub fn checkpoint(&mut self, label: &str) {
        let snapshot = self.snapshot(label);
        self.history.push(snapshot);
    }

    /// The scene as it is now, for the history.
    fn snapshot(&self, label: &str) -> Snapshot {
        Snapshot {
            label: label.into(),
            preset: self.preset.clone(),
            cloth: self.cloth.clone(),
            source: self.source.clone(),
            log: self.log.clone(),
            scene_version: self.scene_version,
            selected_object: self.selected_object,
        }
    }

    /// Puts a snapshot back (undo or redo); a snapshot of another scene re-frames the view.
    fn restore(&mut self, snapshot: Snapshot) {
        if snapshot.scene_version != self.scene_version {
            self.scene_version += 1;
        }
        self.preset = snapshot.preset;
        self.cloth = snapshot.cloth;
        self.source = snapshot.source;
        self.log = snapshot.log;
        self.selected_object = snapshot.selected_object;
        self.pending_overwrite = None;
        self.pieces_cache.set((None, 1));
        self.spacing_cache.set((None, None));
    }

    /// Called every frame after the panels: a settings edit that starts now becomes an undo
    /// step holding the settings from before it ([`History::watch_settings`]).
    pub fn watch_settings(&mut self) {
        if self.playback.is_some() {
            return;
        }
        if let Some(before) = self.history.watch_settings(SceneSettings::of(&self.preset)) {
            let mut snapshot = self.snapshot("settings edit");
            before.write_to(&mut snapshot.preset);
            self.history.push(snapshot);
        }
    }

    /// Drags collider `index`'s centre to `to` (m); a target the engine refuses (outside
    /// the world) leaves it where it is. A drag is one undo step, kept at its press
    /// (`checkpoint("collider drag")`).
    pub fn move_collider(&mut self, index: usize, to: Vec3) {
        if self.cloth.move_collider(index, to).is_ok() {
            self.log.input(SimInput::MoveCollider { index: index as u32, to });
        }
    }

    /// Whether time advances: the player plays, or (without one) the run mode is Running.
    pub fn running(&self) -> bool {
        match &self.playback {
            Some(playback) => playback.playing,
            None => self.run_mode == RunMode::Running,
        }
    }

    /// Player: continues a seek under way for [`SEEK_BUDGET`], else replays `frames` frames
    /// if playing (stopping at the end); then shows the frame.
    pub fn play(&mut self, frames: u32) {
        let Some(playback) = self.playback.as_mut() else { return };
        if let Some(target) = playback.seeking_to {
            let started = std::time::Instant::now();
            let mut result = Ok(false);
            while matches!(result, Ok(false)) && started.elapsed() < SEEK_BUDGET {
                result = playback.replay.step_toward(target);
            }
            if !matches!(result, Ok(false)) {
                playback.seeking_to = None;
            }
            return self.show_replay(result.map(|_| ()));
        }
        if !playback.playing {
            return;
        }
        let mut result = Ok(());
        for _ in 0..frames {
            if playback.replay.at_end() {
                result = playback.replay.run_to_end();
                playback.playing = false;
                break;
            }
            result = playback.replay.advance();
            if result.is_err() {
                break;
            }
        }
        self.show_replay(result);
    }

    /// Copies the replay's frame into the scene shown; a failed replay closes the player.
    fn show_replay(&mut self, result: Result<(), replay::ReplayError>) {
        let Some(playback) = self.playback.as_mut() else { return };
        if let Err(e) = result {
            self.playback = None;
            return self.report_error(format!("replay stopped: {e}"));
        }
        self.cloth = playback.replay.cloth().clone();
        self.preset = playback.replay.preset().clone();
        if playback.shown_scenes != playback.replay.scenes_built() {
            playback.shown_scenes = playback.replay.scenes_built();
            self.scene_version += 1;
        }
    }

    /// The log as a recording that opens at frame `open_at`.
    pub fn recording(&self, open_at: u32) -> Recording {
        self.log.recording(open_at, &self.cloth)
    }

    /// Writes the log as a recording that opens at frame `since` to `path` (its folder made
    /// when missing); returns what was written.
    pub fn write_recording(&self, path: &Path, since: u32) -> Result<Recording, String> {
        let recording = self.recording(since);
        if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        }
        recording.save(path).map_err(|e| e.to_string())?;
        Ok(recording)
    }

    /// The object whose material the Material panel edits: the selected one when the scene
    /// has several objects, none (the scene's material) otherwise.
    pub fn material_object(&self) -> Option<usize> {
        (self.preset.objects.len() > 1).then(|| self.selected_object.min(self.preset.objects.len() - 1))
    }

    /// The material the Material panel shows (see [`Self::material_object`]).
    pub fn edited_material(&self) -> &Material {
        match self.material_object() {
            Some(k) => self.preset.object_material(k),
            None => &self.preset.material,
        }
    }

    /// Writes the Material panel's edit: into the selected object's own material (which it
    /// gets if it had none), or the scene's. The next step blends it in.
    pub fn set_edited_material(&mut self, material: Material) {
        match self.material_object() {
            Some(k) => self.set_object_material(k, Some(material)),
            None => self.preset.material = material,
        }
    }

    /// Replaces the Material panel's material by the calibrated fabric `name` (one of
    /// [`drape::calibrate::MATERIALS`], read from `presets_dir`'s `<name>.ron`), blended in by
    /// the next steps; a missing or broken file is reported and changes nothing.
    pub fn pick_fabric(&mut self, name: &str) {
        match drape::calibrate::load_material(name, &self.presets_dir) {
            Ok(fabric) => {
                self.set_edited_material(fabric.material);
                self.report(format!("Material: {} (presets/{name}.ron)", fabric.name));
            }
            Err(e) => self.report_error(format!("{e:#}")),
        }
    }

    /// Gives object `k` its own material, or the scene's again (`None`).
    pub fn set_object_material(&mut self, k: usize, material: Option<Material>) {
        if let Some(object) = self.preset.objects.get_mut(k) {
            *object.material_mut() = material;
        }
    }

    /// The grid's resolution and size, when the scene is one grid (the Scene panel's grid
    /// controls edit it).
    pub fn grid_size(&self) -> Option<GridSize> {
        self.preset.single_grid().map(|c| GridSize {
            columns: c.columns,
            rows: c.rows,
            width: c.width,
            height: c.height,
        })
    }

    /// The scene as it would be saved: the description with its live-edited solver and
    /// material, and the pins as they are now (as an explicit list, with the positions of
    /// those away from rest, once they were edited).
    pub fn scene_preset(&self, name: &str) -> Preset {
        let mut preset = self.preset.clone();
        preset.name = name.to_string();
        if let (Some(pins), Some(grid)) = (self.edited_pins(), preset.single_grid_mut()) {
            pins.write_to(grid);
        }
        preset
    }

    /// The grid's pins as they are now, when the user has changed them (None when they match
    /// the scene's pins and where it puts them, or the scene is not one grid). Tearing
    /// appends particles, so the grid's own are the first `columns × rows`.
    pub fn edited_pins(&self) -> Option<PinEdits> {
        let spec = self.preset.single_grid()?;
        let particles = self.cloth.particles();
        let grid_count = (spec.columns * spec.rows) as usize;
        if particles.len() < grid_count {
            return None;
        }
        let was_pinned = spec.pinned_mask();
        let rest = |i: u32| spec.position(i % spec.columns, i / spec.columns);
        let mut start: Vec<Vec3> = (0..grid_count as u32).map(rest).collect();
        for (i, position) in spec.start_positions() {
            start[i as usize] = position;
        }
        let mut edits = PinEdits::default();
        for i in 0..grid_count as u32 {
            let (was, is) = (was_pinned[i as usize], particles.is_pinned(i as usize));
            let at = particles.position(i as usize);
            if is {
                let (column, row) = (i % spec.columns, i / spec.columns);
                edits.now.push((column, row));
                // Only a pin away from its rest position is given one: a pin at rest needs
                // none, and a pinned top edge saves as its cells alone, not twice as long.
                if at.distance(rest(i)) > PIN_PLACE_TOLERANCE {
                    edits.pinned_at.push(PinnedAt { column, row, position: at });
                }
            }
            edits.added += usize::from(is && !was);
            edits.removed += usize::from(was && !is);
            edits.moved += usize::from(is && was && at.distance(start[i as usize]) > PIN_PLACE_TOLERANCE);
        }
        (edits.added + edits.removed + edits.moved > 0).then_some(edits)
    }

    /// Connected pieces of the cloth, cached per topology version (counting is O(n)).
    pub fn pieces(&self) -> usize {
        self.per_topology(&self.pieces_cache, || self.cloth.piece_count())
    }

    /// Mean rest length of the cloth's stretch edges in m, cached per topology version (the
    /// mean is O(edges)); `None` without stretch edges.
    pub fn mesh_spacing(&self) -> Option<f32> {
        self.per_topology(&self.spacing_cache, || drape::calibrate::mean_stretch_spacing(self.cloth.model()))
    }

    /// The value `cache` holds for the current (scene, topology) version, or `compute`'s,
    /// stored for the frames until either changes.
    fn per_topology<T: Copy>(&self, cache: &std::cell::Cell<(Option<TopologyVersion>, T)>, compute: impl FnOnce() -> T) -> T {
        let version = (self.scene_version, self.cloth.topology_version());
        let (cached_at, value) = cache.get();
        if cached_at == Some(version) {
            return value;
        }
        let value = compute();
        cache.set((Some(version), value));
        value
    }

    /// Shows `text` in the status line as information.
    pub fn report(&mut self, text: impl Into<String>) {
        self.status = Status {
            text: text.into(),
            error: false,
        };
    }

    pub fn report_error(&mut self, text: impl Into<String>) {
        self.status = Status {
            text: text.into(),
            error: true,
        };
    }

    /// Replaces the scene with `preset` if it builds; otherwise reports and keeps the old one.
    /// The log records the change (or, when no session recording runs, starts over from it).
    fn replace_scene(&mut self, mut preset: Preset, source: Option<PathBuf>, change: SceneChange) -> bool {
        if let Err(e) = preset.embed_meshes() {
            self.report_error(format!("cannot build the scene: {e}"));
            return false;
        }
        match preset.build() {
            Ok(cloth) => {
                if self.playback.is_none() {
                    let label = match change {
                        SceneChange::Load => "load",
                        SceneChange::Resize => "resize",
                        _ => "reset",
                    };
                    self.checkpoint(label);
                }
                self.history.forget_edit();
                self.playback = None;
                self.log_scene(&preset, &cloth, change);
                self.preset = preset;
                self.cloth = cloth;
                self.source = source;
                self.scene_version += 1;
                self.pending_overwrite = None;
                self.selected_object = self.selected_object.min(self.preset.objects.len().saturating_sub(1));
                true
            }
            Err(e) => {
                self.report_error(format!("cannot build the scene: {e}"));
                false
            }
        }
    }

    /// Logs a scene replacement: into the session recording when one runs, else as the start
    /// of a fresh log (what came before is another scene's).
    fn log_scene(&mut self, preset: &Preset, cloth: &Cloth, change: SceneChange) {
        match &self.session_recording {
            Some(_) => self.log.scene(preset, change),
            None => self.log = SessionRecorder::new(preset, cloth.kernel(), preset.solver.threads),
        }
    }
}

/// How far a pinned particle may be from a position, in m, and still count as there: a tenth
/// of a millimetre, well under what shows or the millimetre a saved pin keeps, and well over
/// the rounding of an f32 position some metres from the origin.
const PIN_PLACE_TOLERANCE: f32 = 1e-4;

/// How the pins differ from the scene's: see [`AppState::edited_pins`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PinEdits {
    /// Every pinned grid cell now, as `(column, row)`.
    pub now: Vec<(u32, u32)>,
    /// The pinned cells away from their rest position, and where they are.
    pub pinned_at: Vec<PinnedAt>,
    /// Pins the user added.
    pub added: usize,
    /// Scene pins the user removed.
    pub removed: usize,
    /// Scene pins the user moved (dragged while pinned, or unpinned and pinned elsewhere).
    pub moved: usize,
}

impl PinEdits {
    /// Makes `grid`'s pins these: the cells as a list, those away from rest with their position.
    fn write_to(&self, grid: &mut GridSpec) {
        grid.pins = PinMode::List(self.now.clone());
        grid.pinned_at = self.pinned_at.clone();
    }
}

/// What a plain reset says about the user's pin edits it undoes.
fn reset_message(edits: Option<&PinEdits>) -> String {
    let Some(edits) = edits else {
        return "reset: the cloth is back at its start".into();
    };
    let mut undone = Vec::new();
    if edits.added > 0 {
        undone.push(format!("{} pin(s) you added were removed", edits.added));
    }
    if edits.removed > 0 {
        undone.push(format!("{} pin(s) you removed are back", edits.removed));
    }
    if edits.moved > 0 {
        undone.push(format!("{} pin(s) you moved are back in place", edits.moved));
    }
    format!("reset: {} (Shift+R resets and keeps your pins)", undone.join(", "))
}

/// Applies one action to the state. Failures are reported in [`AppState::status`] and leave
/// the running scene untouched.
pub fn apply(state: &mut AppState, action: Action) {
    let changes_the_replay = matches!(
        action,
        Action::TogglePin(_)
            | Action::SetPressure { .. }
            | Action::ToggleSessionRecording
            | Action::SaveLastMinute
            | Action::Undo
            | Action::Redo
    );
    if state.playback.is_some() && changes_the_replay {
        return state.report_error("the player shows a recording: Take over to change or record it");
    }
    match action {
        Action::SetRunMode(mode) if state.playback.is_some() => player_run_mode(state, mode),
        Action::SetRunMode(mode) => state.run_mode = mode,
        Action::Reset | Action::ResetKeepingPins if state.playback.is_some() => apply(state, Action::Seek(0)),
        Action::Reset => {
            let message = reset_message(state.edited_pins().as_ref());
            let preset = state.preset.clone();
            let source = state.source.clone();
            if state.replace_scene(preset, source, SceneChange::Reset) {
                state.report(message);
            }
        }
        Action::ResetKeepingPins => {
            let mut preset = state.preset.clone();
            let edits = state.edited_pins();
            if let (Some(edits), Some(grid)) = (&edits, preset.single_grid_mut()) {
                edits.write_to(grid);
            }
            let source = state.source.clone();
            if state.replace_scene(preset, source, SceneChange::ResetKeepingPins) {
                let kept = edits.map_or(0, |e| e.now.len());
                state.report(format!("reset, keeping the {kept} pin(s) as they were"));
            }
        }
        Action::Load(path) => match Preset::load(&path) {
            Ok(preset) => {
                if state.replace_scene(preset, Some(path.clone()), SceneChange::Load) {
                    state.selected_object = 0;
                    state.report(format!("loaded {}", path.display()));
                }
            }
            Err(e) => state.report_error(e.to_string()),
        },
        Action::SaveAs {
            name,
            description,
            overwrite,
        } => save_as(state, &name, &description, overwrite),
        Action::ApplyGrid(size) => {
            let mut preset = state.preset.clone();
            if !preset.seams.is_empty() {
                // A resize renumbers the grid's vertices, which its seams name.
                state.report_error("a sewn grid cannot be resized: its seams name its vertices by number");
                return;
            }
            let Some(grid) = preset.single_grid_mut() else {
                state.report_error("only a scene of one grid can be resized");
                return;
            };
            grid.columns = size.columns;
            grid.rows = size.rows;
            grid.width = size.width;
            grid.height = size.height;
            let source = state.source.clone();
            if state.replace_scene(preset, source, SceneChange::Resize) {
                state.report(format!("rebuilt a {} × {} cloth", size.columns, size.rows));
            }
        }
        Action::TogglePin(i) => {
            state.checkpoint("pin");
            state.input(SimInput::TogglePin(i));
            let pinned = state.cloth.particles().is_pinned(i as usize);
            state.report(format!("particle {i} {}", if pinned { "pinned" } else { "unpinned" }));
        }
        Action::RefreshPresets => state.presets = list_presets(&state.presets_dir),
        Action::SetPressure { object, factor } => set_pressure(state, object, factor),
        Action::SelectObject(k) => state.selected_object = k,
        Action::ToggleSessionRecording => match state.session_recording.take() {
            Some(recording) => save_recording(state, &recording.path, recording.since),
            None => {
                let path = new_recording_path(&state.recordings_dir, "session");
                state.report(format!("recording the session to {} (F8 stops)", path.display()));
                state.session_recording = Some(SessionRecording {
                    since: state.log.frame(),
                    path,
                });
            }
        },
        Action::OpenRecording(path) => open_recording(state, path),
        Action::Seek(frame) => {
            if let Some(playback) = state.playback.as_mut() {
                playback.seeking_to = Some(playback.replay.jump_toward(frame));
                state.play(0);
            }
        }
        Action::TakeOver => {
            if let Some(playback) = state.playback.take() {
                let (replay, frame) = (&playback.replay, playback.replay.frame());
                state.log = SessionRecorder::resume(replay.recording(), replay.events_applied(), frame, &state.preset);
                state.run_mode = RunMode::Paused;
                state.report(format!("took over at frame {frame}: the scene is yours (Space runs it)"));
            }
        }
        Action::Undo | Action::Redo => undo_or_redo(state, action == Action::Undo),
        Action::SaveLastMinute => {
            let frames = (LAST_SECONDS / state.preset.solver.dt).round() as u32;
            let since = state.log.frame().saturating_sub(frames);
            let path = new_recording_path(&state.recordings_dir, "last-60s");
            save_recording(state, &path, since);
        }
    }
}

/// Undoes (or redoes) the last step, saying what.
fn undo_or_redo(state: &mut AppState, undo: bool) {
    let present = state.snapshot("");
    let step = if undo {
        state.history.undo(present)
    } else {
        state.history.redo(present)
    };
    match step {
        Some(snapshot) => {
            let what = if undo { "undid" } else { "redid" };
            state.report(format!("{what} the {}", snapshot.label));
            state.restore(snapshot);
        }
        None => state.report_error(if undo { "nothing to undo" } else { "nothing to redo" }),
    }
}

/// Space and N in the player: play / pause, or one frame.
fn player_run_mode(state: &mut AppState, mode: RunMode) {
    let Some(playback) = state.playback.as_mut() else { return };
    match mode {
        RunMode::Running => playback.playing = !playback.replay.at_end(),
        RunMode::Paused => playback.playing = false,
        RunMode::Step => {
            let next = playback.replay.frame() + 1;
            playback.playing = false;
            apply(state, Action::Seek(next));
        }
    }
}

/// Opens a recording in the player at the frame it opens at, paused; a broken file is
/// reported and the running scene kept.
fn open_recording(state: &mut AppState, path: PathBuf) {
    match Recording::load(&path) {
        Ok(recording) => open_loaded_recording(state, path, recording),
        Err(e) => state.report_error(format!("cannot open the recording: {e}")),
    }
}

/// [`open_recording`] of a recording already read from `path` (the `--replay` flag reads it
/// first, so a broken file is an error before any window opens).
pub fn open_loaded_recording(state: &mut AppState, path: PathBuf, recording: Recording) {
    let opened = Replay::new(std::sync::Arc::new(recording), state.threads_override).map_err(|e| e.to_string());
    let replay = match opened {
        Ok(replay) => replay,
        Err(why) => return state.report_error(format!("cannot open the recording: {why}")),
    };
    let open_at = replay.recording().open_at;
    let (frames, kernel_note) = (
        replay.recording().frames,
        if replay.kernel_matches() {
            ""
        } else {
            " (recorded with another kernel: frames may differ)"
        },
    );
    if state.playback.is_none() {
        // After a take over, undo goes back to the scene before the recording was opened.
        state.checkpoint("opening of the recording");
    }
    state.session_recording = None;
    state.source = None;
    state.playback = Some(Playback {
        replay,
        path: path.clone(),
        playing: false,
        seeking_to: Some(open_at),
        shown_scenes: 0,
    });
    state.play(0);
    state.report(format!(
        "playing {}: frame {open_at} of {frames}{kernel_note} · Space plays, Take over continues by hand",
        path.display()
    ));
}

/// Writes the log as a recording that opens at frame `since`, and says where it went.
pub fn save_recording(state: &mut AppState, path: &Path, since: u32) {
    match state.write_recording(path, since) {
        Ok(recording) => state.report(format!(
            "saved {}: {} frames, {} inputs (drape replay {} to check it)",
            path.display(),
            recording.frames - recording.open_at,
            recording.events.len(),
            path.display()
        )),
        Err(why) => state.report_error(format!("recording not saved: {why}")),
    }
}

/// The `*.drec` files in `dir`, newest first (empty when it cannot be read).
pub fn list_recordings(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "drec"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    found.sort_by(|a, b| b.cmp(a));
    found.into_iter().map(|(_, path)| path).collect()
}

/// `dir/drape-<kind>-<unix time>.drec`, with a counter added when that file exists.
fn new_recording_path(dir: &Path, kind: &str) -> PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    (1..)
        .map(|n| match n {
            1 => dir.join(format!("drape-{kind}-{stamp}.drec")),
            n => dir.join(format!("drape-{kind}-{stamp}-{n}.drec")),
        })
        .find(|path| !path.exists())
        .expect("some counter is free")
}

fn save_as(state: &mut AppState, name: &str, description: &str, overwrite: bool) {
    let name = name.trim();
    if let Err(why) = check_preset_name(name) {
        state.report_error(why);
        return;
    }
    let path = state.presets_dir.join(format!("{name}.ron"));
    if path.exists() && !overwrite {
        state.pending_overwrite = Some(name.to_string());
        state.report_error(format!("{} exists: confirm to overwrite it", path.display()));
        return;
    }
    state.pending_overwrite = None;
    let mut preset = state.scene_preset(name);
    preset.description = description.trim().to_string();
    match preset.save(&path) {
        Ok(()) => {
            state.preset.name = preset.name;
            state.preset.description = preset.description;
            state.source = Some(path.clone());
            state.presets = list_presets(&state.presets_dir);
            state.report(format!("saved {}", path.display()));
        }
        Err(e) => state.report_error(format!("save failed: {e}")),
    }
}

/// A preset name must be a plain file stem: no separators, no leading dot.
fn check_preset_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("enter a name to save under".into());
    }
    let allowed = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | ' ' | '.');
    if name.starts_with('.') || !name.chars().all(allowed) {
        return Err(format!("'{name}' is not a valid preset name (letters, digits, - _ . and spaces)"));
    }
    Ok(())
}

/// The `*.ron` files in `dir`, sorted by preset name with broken files last (empty when the
/// directory cannot be read).
pub fn list_presets(dir: &Path) -> Vec<PresetEntry> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut list: Vec<PresetEntry> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .filter_map(|path| {
            let stem = path.file_stem()?.to_string_lossy().into_owned();
            (!stem.starts_with('.')).then(|| PresetEntry::read(path, stem))
        })
        .collect();
    // By the name the picker shows; broken files last.
    list.sort_by_cached_key(|p| (p.is_broken(), p.label().to_lowercase(), p.stem.clone()));
    list
}

/// Sets the pressure factor of mesh object `object` ([`replay::set_pressure`]), logged.
fn set_pressure(state: &mut AppState, object: usize, factor: f32) {
    if !state.history.continues("pressure") {
        state.checkpoint("pressure");
    }
    match replay::set_pressure(&mut state.preset, &mut state.cloth, object, factor) {
        Ok(()) => {
            state.log.input(SimInput::Pressure {
                object: object as u32,
                factor,
            });
            state.report(format!("object {object}: pressure factor {factor:.2}"));
        }
        Err(why) => state.report_error(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drape::sim::Ray;

    fn small_preset() -> Preset {
        let mut preset = Preset::default();
        let grid = preset.single_grid_mut().expect("the default scene is one grid");
        (grid.columns, grid.rows) = (6, 5);
        preset
    }

    /// Issue 34: a FIFO named like a preset hung the list (its read waited for a writer).
    #[test]
    fn a_fifo_in_the_presets_folder_is_listed_as_broken_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        small_preset().save(&dir.path().join("good.ron")).unwrap();
        let fifo = dir.path().join("pipe.ron");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let list = list_presets(dir.path());
        let labels: Vec<String> = list.iter().map(PresetEntry::label).collect();
        assert_eq!(labels, [small_preset().name, "⚠ pipe (broken)".into()]);
        assert!(
            list[1].summary.contains("a FIFO (named pipe), not a regular file"),
            "{}",
            list[1].summary
        );
    }

    fn state_in(dir: &Path) -> AppState {
        AppState::new(small_preset(), None, dir.to_path_buf()).expect("default preset builds")
    }

    /// Issue 37: the Material panel's fabric picker takes a material preset's material whole;
    /// from a folder without it the status says so and the material stays.
    #[test]
    fn picking_a_fabric_takes_its_presets_material_or_reports_why_not() {
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
        let mut state = AppState::new(small_preset(), None, shipped.clone()).unwrap();
        state.pick_fabric("denim");
        let denim = Preset::load(&shipped.join("denim.ron")).unwrap().material;
        assert_eq!(*state.edited_material(), denim);
        assert!(
            !state.status.error && state.status.text.contains("Denim"),
            "{:?}",
            state.status.text
        );

        let empty = tempfile::tempdir().unwrap();
        let mut state = state_in(empty.path());
        let before = state.edited_material().clone();
        state.pick_fabric("silk");
        assert_eq!(*state.edited_material(), before);
        assert!(state.status.error && state.status.text.contains("silk"), "{:?}", state.status.text);
    }

    #[test]
    fn run_mode_actions_switch_modes() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        apply(&mut state, Action::SetRunMode(RunMode::Paused));
        assert_eq!(state.run_mode, RunMode::Paused);
        apply(&mut state, Action::SetRunMode(RunMode::Step));
        assert_eq!(state.run_mode, RunMode::Step);
    }

    #[test]
    fn toggle_pin_pins_and_unpins() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        let before = state.cloth.pinned_count();
        apply(&mut state, Action::TogglePin(7));
        assert_eq!(state.cloth.pinned_count(), before + 1);
        assert!(state.cloth.particles().is_pinned(7));
        apply(&mut state, Action::TogglePin(7));
        assert_eq!(state.cloth.pinned_count(), before);
        assert!(!state.status.error);
    }

    #[test]
    fn reset_restores_rest_positions_and_keeps_edited_material() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        let rest = state.cloth.particles().position(20);
        for _ in 0..10 {
            state.step();
        }
        assert_ne!(state.cloth.particles().position(20), rest);
        state.preset.material.youngs_modulus = 1.0e5;
        apply(&mut state, Action::Reset);
        assert_eq!(state.cloth.particles().position(20), rest);
        assert_eq!(state.cloth.applied_material().youngs_modulus, 1.0e5);
        assert_eq!(state.scene_version, 1);
    }

    #[test]
    fn apply_grid_rebuilds_with_new_resolution() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        let size = GridSize {
            columns: 9,
            rows: 4,
            width: 2.0,
            height: 0.5,
        };
        apply(&mut state, Action::ApplyGrid(size));
        assert_eq!(state.cloth.particles().len(), 36);
        assert_eq!(state.grid_size(), Some(size));
    }

    #[test]
    fn invalid_grid_is_refused_and_scene_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        let size = GridSize {
            columns: 1,
            ..state.grid_size().expect("a one-grid scene")
        };
        apply(&mut state, Action::ApplyGrid(size));
        assert!(state.status.error);
        assert_eq!(state.cloth.particles().len(), 30);
        assert_eq!(state.scene_version, 0);
    }

    #[test]
    fn save_then_load_gives_the_same_scene() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        state.preset.material.youngs_modulus = 2.5e6;
        state.preset.solver.substeps = 7;
        apply(&mut state, Action::TogglePin(12));
        apply(
            &mut state,
            Action::SaveAs {
                name: "mine".into(),
                description: "my own curtain".into(),
                overwrite: false,
            },
        );
        assert!(!state.status.error, "{}", state.status.text);
        let path = dir.path().join("mine.ron");
        assert!(state.presets.iter().any(|p| p.path == path));

        let mut other = state_in(dir.path());
        apply(&mut other, Action::Load(path));
        assert!(!other.status.error, "{}", other.status.text);
        assert_eq!(other.preset.material.youngs_modulus, 2.5e6);
        assert_eq!(other.preset.solver.substeps, 7);
        assert_eq!(other.preset.name, "mine");
        assert_eq!(
            other.preset.description, "my own curtain",
            "the description is the one typed, not the old one"
        );
        let pinned = |s: &AppState| (0..30).map(|i| s.cloth.particles().is_pinned(i)).collect::<Vec<_>>();
        assert_eq!(pinned(&other), pinned(&state));
    }

    /// Issue 31: a particle pinned 10 cm above its rest position reloaded pinned at its rest
    /// cell (pins were saved as cells only).
    #[test]
    fn a_pin_saved_away_from_rest_reloads_where_it_was_pinned() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        let i = 14; // (2, 2) of the 6 × 5 curtain: not a scene pin
        let held_at = state.cloth.particles().position(i) + Vec3::new(0.0, 0.1, 0.0);
        state.cloth.set_state(i as u32, held_at, Vec3::ZERO).unwrap();
        apply(&mut state, Action::TogglePin(i as u32));
        for _ in 0..20 {
            state.step(); // the cloth hangs from it: the scene saved is not the one built
        }
        assert_eq!(state.cloth.particles().position(i), held_at, "a pin does not move");
        let save = Action::SaveAs {
            name: "held".into(),
            description: String::new(),
            overwrite: false,
        };
        apply(&mut state, save);
        assert!(!state.status.error, "{}", state.status.text);
        let path = dir.path().join("held.ron");
        let saved = Preset::load(&path).unwrap().single_grid().unwrap();
        assert_eq!(
            saved.pinned_at.len(),
            1,
            "only the pin away from rest has a position: {:?}",
            saved.pinned_at
        );

        let mut other = state_in(dir.path());
        apply(&mut other, Action::Load(path));
        assert!(!other.status.error, "{}", other.status.text);
        let particles = other.cloth.particles();
        assert!(particles.is_pinned(i));
        let off = particles.position(i).distance(held_at);
        assert!(off < 1e-3, "reloaded {off} m from where it was pinned");
        assert_eq!(particles.velocity(i), Vec3::ZERO, "it starts at rest");
        let pinned = |s: &AppState| (0..30).filter(|&k| s.cloth.particles().is_pinned(k)).collect::<Vec<_>>();
        assert_eq!(pinned(&other), [0, 5, 14]);
        assert_eq!(other.edited_pins(), None, "the reloaded scene is the one saved");
    }

    #[test]
    fn save_refuses_to_overwrite_until_confirmed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("taken.ron");
        std::fs::write(&path, "precious").unwrap();
        let mut state = state_in(dir.path());
        let save = |overwrite| Action::SaveAs {
            name: "taken".into(),
            description: String::new(),
            overwrite,
        };
        apply(&mut state, save(false));
        assert!(state.status.error);
        assert_eq!(state.pending_overwrite.as_deref(), Some("taken"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious");
        apply(&mut state, save(true));
        assert!(!state.status.error, "{}", state.status.text);
        assert_eq!(state.pending_overwrite, None);
        assert!(Preset::load(&path).is_ok());
    }

    #[test]
    fn save_rejects_names_that_are_paths() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        for name in ["", "../escape", "a/b", ".hidden"] {
            apply(
                &mut state,
                Action::SaveAs {
                    name: name.into(),
                    description: String::new(),
                    overwrite: true,
                },
            );
            assert!(state.status.error, "{name:?} accepted");
        }
        assert!(list_presets(dir.path()).is_empty());
    }

    #[test]
    fn broken_preset_reports_position_and_keeps_scene() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broken.ron");
        std::fs::write(&path, "(\n    cloth: (columns: \"many\"),\n)\n").unwrap();
        let mut state = state_in(dir.path());
        for _ in 0..5 {
            state.step();
        }
        let positions: Vec<_> = state.cloth.particles().positions().collect();
        apply(&mut state, Action::Load(path));
        assert!(state.status.error);
        assert!(state.status.text.contains("broken.ron:2:"), "{}", state.status.text);
        assert_eq!(state.cloth.particles().positions().collect::<Vec<_>>(), positions);
        assert_eq!(state.scene_version, 0);
        assert_eq!(state.source, None);
    }

    /// The Material slider writes `preset.material`; the next steps must use it without a reset.
    #[test]
    fn lowering_youngs_modulus_live_lengthens_the_cloth() {
        let dir = tempfile::tempdir().unwrap();
        let (mut stiff, mut soft) = (state_in(dir.path()), state_in(dir.path()));
        // Tethers are an inextensibility limit; this measures elastic extension under pins.
        (stiff.preset.material.tethers, soft.preset.material.tethers) = (false, false);
        for _ in 0..60 {
            stiff.step();
            soft.step();
        }
        soft.preset.material.youngs_modulus /= 1000.0;
        for _ in 0..240 {
            stiff.step();
            soft.step();
        }
        let lowest = |s: &AppState| s.cloth.particles().positions().map(|p| p.y).fold(f32::INFINITY, f32::min);
        assert_eq!(soft.scene_version, 0, "no rebuild");
        assert!(lowest(&soft) < lowest(&stiff) - 0.05, "{} vs {}", lowest(&soft), lowest(&stiff));
        assert!(soft.cloth.stats().max_strain > 3.0 * stiff.cloth.stats().max_strain);
    }

    #[test]
    fn step_with_invalid_params_pauses_and_reports() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        state.preset.solver.substeps = 0;
        state.step();
        assert_eq!(state.run_mode, RunMode::Paused);
        assert!(state.status.error);
    }

    #[test]
    fn a_frame_over_the_work_budget_pauses_and_reports_without_stepping() {
        // The 100² curtain at 55 substeps × 8 iterations once froze the window for 24 s.
        let dir = tempfile::tempdir().unwrap();
        let mut preset = small_preset();
        let grid = preset.single_grid_mut().expect("a one-grid scene");
        (grid.columns, grid.rows) = (100, 100);
        (preset.solver.substeps, preset.solver.iterations) = (55, 8);
        let mut state = AppState::new(preset, None, dir.path().to_path_buf()).unwrap();
        let before: Vec<_> = state.cloth.particles().positions().collect();
        state.step();
        assert_eq!(state.run_mode, RunMode::Paused);
        assert!(state.status.error && state.status.text.contains("budget"), "{}", state.status.text);
        assert!(state.cloth.particles().positions().eq(before.iter().copied()), "the cloth moved");
        state.preset.solver.iterations = 1;
        state.step();
        assert!(
            !state.cloth.particles().positions().eq(before.iter().copied()),
            "within the budget it steps"
        );
    }

    #[test]
    fn presets_are_listed_sorted_and_ron_only() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.ron", "a.ron", "notes.txt", ".a.ron.tmp-1"] {
            std::fs::write(dir.path().join(name), "()").unwrap();
        }
        std::fs::write(dir.path().join("b.ron"), "(name: \"Bee\", description: \"buzz\")").unwrap();
        std::fs::write(dir.path().join("c.ron"), "(nonsense: 1)").unwrap();
        let list = list_presets(dir.path());
        let stems: Vec<_> = list.iter().map(|p| p.stem.as_str()).collect();
        assert_eq!(stems, ["b", "a", "c"], "sorted by the names shown");
        let labels: Vec<_> = list.iter().map(PresetEntry::label).collect();
        assert_eq!(
            labels,
            ["Bee", "Untitled", "⚠ c (broken)"],
            "names, not file names; broken files marked, last"
        );
        assert_eq!(list[0].summary, "buzz\nb.ron");
        assert_eq!(list[1].summary, "a.ron");
        assert!(list[2].is_broken() && !list[0].is_broken() && !list[1].is_broken());
        assert!(list[2].summary.starts_with("cannot be loaded:"), "{}", list[2].summary);
    }

    #[test]
    fn the_shipped_presets_are_listed_by_their_names() {
        let list = list_presets(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/presets")));
        let default = list.iter().find(|p| p.stem == "default").expect("default.ron listed");
        assert_eq!(default.label(), "Hanging curtain");
        assert!(list.iter().all(|p| !p.is_broken()), "every shipped preset loads");
    }

    /// Issue 19: R silently removed the pins the user had added.
    #[test]
    fn reset_says_what_happens_to_added_pins_and_shift_reset_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        let scene_pins = state.cloth.pinned_count();
        apply(&mut state, Action::TogglePin(12));
        apply(&mut state, Action::TogglePin(13));
        apply(&mut state, Action::Reset);
        assert_eq!(state.cloth.pinned_count(), scene_pins);
        assert!(
            state.status.text.contains("2 pin(s) you added were removed"),
            "{}",
            state.status.text
        );
        assert!(state.status.text.contains("Shift+R"), "{}", state.status.text);

        apply(&mut state, Action::TogglePin(12));
        apply(&mut state, Action::ResetKeepingPins);
        assert_eq!(state.cloth.pinned_count(), scene_pins + 1);
        assert!(state.cloth.particles().is_pinned(12));
        apply(&mut state, Action::Reset);
        assert!(state.cloth.particles().is_pinned(12), "kept pins are part of the scene now");
        assert_eq!(state.status.text, "reset: the cloth is back at its start");

        // A scene pin moved while pinned counts as an edit: R puts it back, Shift+R keeps it.
        let rest = state.cloth.particles().position(0);
        state.cloth.set_state(0, rest + Vec3::new(0.0, 0.1, 0.0), Vec3::ZERO).unwrap();
        apply(&mut state, Action::Reset);
        assert!(
            state.status.text.contains("1 pin(s) you moved are back in place"),
            "{}",
            state.status.text
        );
        assert_eq!(state.cloth.particles().position(0), rest);
        state.cloth.set_state(0, rest + Vec3::new(0.0, 0.1, 0.0), Vec3::ZERO).unwrap();
        apply(&mut state, Action::ResetKeepingPins);
        assert_eq!(state.cloth.particles().position(0), rest + Vec3::new(0.0, 0.1, 0.0));
        assert!(state.cloth.particles().is_pinned(0));
    }

    #[test]
    fn the_pressure_slider_changes_the_balloon_and_the_scene_it_saves() {
        let dir = tempfile::tempdir().unwrap();
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/balloon.ron");
        let mut state = AppState::new(Preset::load(&path).unwrap(), None, dir.path().to_path_buf()).unwrap();
        let built = state.cloth.pressure_volumes()[0].target;
        apply(&mut state, Action::SetPressure { object: 0, factor: 2.0 });
        let target = state.cloth.pressure_volumes()[0].target;
        assert!((target / built - 2.0).abs() < 1e-5, "held at twice the volume: {target} vs {built}");
        assert!(matches!(&state.scene_preset("b").objects[0], drape::scene::SceneObject::Mesh(m) if m.pressure == Some(2.0)));
        apply(&mut state, Action::SetPressure { object: 0, factor: 50.0 });
        assert!(state.status.error, "out of range: {}", state.status.text);
        assert_eq!(state.cloth.pressure_volumes()[0].target, target, "unchanged");
    }

    /// With several objects the Material panel edits the selected one: the edit becomes that
    /// object's own material, the cloth's slot for it takes it at the next step, the other
    /// object keeps the scene's, and Save as writes it back.
    #[test]
    fn the_material_panel_edits_the_selected_object_and_save_as_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/two_sheets_on_ball.ron");
        let mut state = AppState::new(Preset::load(&path).unwrap(), None, dir.path().to_path_buf()).unwrap();
        let scene = state.preset.material.clone();
        assert_eq!(state.material_object(), Some(0));
        apply(&mut state, Action::SelectObject(1));
        assert_eq!(state.edited_material(), &scene, "an object without its own shows the scene's");
        let mut edited = scene.clone();
        edited.areal_density = 0.4;
        edited.tear_strain = Some(0.3);
        state.set_edited_material(edited.clone());
        state.step();
        assert!(!state.status.error, "{}", state.status.text);
        assert_eq!(state.cloth.materials(), [scene.clone(), edited.clone()]);
        assert_eq!(state.preset.material, scene, "the scene's material is untouched");
        apply(
            &mut state,
            Action::SaveAs {
                name: "two".into(),
                description: String::new(),
                overwrite: false,
            },
        );
        let saved = Preset::load(&dir.path().join("two.ron")).unwrap();
        assert_eq!(saved.objects[0].material(), None);
        assert_eq!(saved.objects[1].material(), Some(&edited));
        // One object: the panel edits the scene's material.
        let one = AppState::new(small_preset(), None, dir.path().to_path_buf()).unwrap();
        assert_eq!(one.material_object(), None);
    }

    /// Grabs the middle of the cloth, drags it toward the viewer and lets go with a throw,
    /// with steps between: the inputs a session recording must carry.
    fn grab_and_throw(state: &mut AppState) {
        let centre = state.cloth.particles().positions().sum::<Vec3>() / state.cloth.particles().len() as f32;
        let ray = Ray {
            origin: centre + Vec3::Z * 2.0,
            direction: -Vec3::Z,
        };
        let pick = state.cloth.pick(&ray, 0.1).unwrap();
        assert!(state.grab(&pick));
        for k in 1..=5 {
            state.drag_to(centre + Vec3::new(0.0, 0.02, 0.03) * k as f32);
            state.step();
        }
        state.release(Some(Vec3::new(0.5, 1.0, 0.0)));
        state.step();
    }

    /// Lets the player's seek under way run to its frame, as the window's frames would.
    fn finish_seek(state: &mut AppState) {
        while state.playback.as_ref().is_some_and(|p| p.seeking_to.is_some()) {
            state.play(0);
        }
    }

    /// The replay of the recording at `path` to its end.
    fn replayed(path: &Path) -> (Recording, Cloth) {
        let recording = Recording::load(path).unwrap();
        let mut replay = Replay::new(std::sync::Arc::new(recording.clone()), None).unwrap();
        replay.run_to_end().unwrap();
        (recording, replay.cloth().clone())
    }

    /// Issue 33: F8 starts a session recording and stops it into a file that replays to the
    /// state the session ended in, across a grab, a pin, a slider edit and a preset load, and
    /// the player opens it where the recording started.
    #[test]
    fn a_session_recording_replays_to_the_state_it_ended_in() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        state.recordings_dir = dir.path().join("recordings");
        state.step();
        apply(&mut state, Action::ToggleSessionRecording);
        let since = state.session_recording.as_ref().unwrap().since;
        assert_eq!(since, 1);
        grab_and_throw(&mut state);
        apply(&mut state, Action::TogglePin(7));
        state.preset.solver.gravity.x = 2.0;
        let other = dir.path().join("other.ron");
        let mut preset = small_preset();
        preset.single_grid_mut().unwrap().columns = 9;
        preset.save(&other).unwrap();
        apply(&mut state, Action::Load(other));
        grab_and_throw(&mut state);
        apply(&mut state, Action::ToggleSessionRecording);
        let saved = list_recordings(&state.recordings_dir);
        assert_eq!(saved.len(), 1, "{}", state.status.text);
        let (recording, cloth) = replayed(&saved[0]);
        assert_eq!(recording.open_at, since);
        assert_eq!(cloth.particles().len(), 9 * 5, "the loaded scene");
        assert_eq!(replay::state_hash(&cloth), replay::state_hash(&state.cloth));
        apply(&mut state, Action::OpenRecording(saved[0].clone()));
        finish_seek(&mut state);
        assert_eq!(state.playback.as_ref().unwrap().replay.frame(), since, "{}", state.status.text);
    }

    /// Issue 33: "save the last 60 s" writes a file that replays to the current state and
    /// opens 60 s of frames before the end.
    #[test]
    fn the_last_minute_saves_a_replayable_file_opening_60_s_before_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        state.recordings_dir = dir.path().to_path_buf();
        state.preset.solver.dt = 0.05;
        let minute = (LAST_SECONDS / 0.05).round() as u32;
        for _ in 0..minute + 30 {
            state.step();
        }
        grab_and_throw(&mut state);
        apply(&mut state, Action::SaveLastMinute);
        let saved = list_recordings(dir.path());
        assert_eq!(saved.len(), 1, "{}", state.status.text);
        let (recording, cloth) = replayed(&saved[0]);
        assert_eq!(recording.frames, minute + 36);
        assert_eq!(recording.open_at, 36);
        assert_eq!(replay::state_hash(&cloth), replay::state_hash(&state.cloth));
    }

    /// Issue 33: taking over in the player continues from the frame shown; a recording
    /// started then replays from the recording's start through the new inputs.
    #[test]
    fn taking_over_continues_from_the_frame_shown_and_records_on() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        state.recordings_dir = dir.path().to_path_buf();
        apply(&mut state, Action::ToggleSessionRecording);
        for _ in 0..10 {
            state.step();
        }
        grab_and_throw(&mut state);
        for _ in 0..10 {
            state.step();
        }
        apply(&mut state, Action::ToggleSessionRecording);
        let first = list_recordings(dir.path()).remove(0);
        apply(&mut state, Action::OpenRecording(first.clone()));
        apply(&mut state, Action::Seek(12));
        finish_seek(&mut state);
        let shown = replay::state_hash(&state.cloth);
        apply(&mut state, Action::TogglePin(3));
        assert!(state.status.error, "the player refuses edits: {}", state.status.text);
        apply(&mut state, Action::TakeOver);
        assert!(state.playback.is_none());
        assert_eq!(replay::state_hash(&state.cloth), shown, "the scene is the frame shown");
        apply(&mut state, Action::ToggleSessionRecording);
        apply(&mut state, Action::TogglePin(3));
        for _ in 0..5 {
            state.step();
        }
        apply(&mut state, Action::ToggleSessionRecording);
        let second = list_recordings(dir.path()).into_iter().find(|p| p != &first).unwrap();
        let (recording, cloth) = replayed(&second);
        assert_eq!((recording.open_at, recording.frames), (12, 17));
        assert_eq!(replay::state_hash(&cloth), replay::state_hash(&state.cloth));
    }

    /// Taking over at the end keeps the inputs made after the recording's last step (a pin
    /// here): a recording started then replays to the live state.
    #[test]
    fn taking_over_at_the_end_keeps_the_inputs_after_the_last_step() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        state.recordings_dir = dir.path().to_path_buf();
        apply(&mut state, Action::ToggleSessionRecording);
        for _ in 0..4 {
            state.step();
        }
        apply(&mut state, Action::TogglePin(8));
        apply(&mut state, Action::ToggleSessionRecording);
        let first = list_recordings(dir.path()).remove(0);
        apply(&mut state, Action::OpenRecording(first.clone()));
        apply(&mut state, Action::Seek(4));
        finish_seek(&mut state);
        assert!(state.cloth.particles().is_pinned(8), "the pin after the last step is shown");
        apply(&mut state, Action::TakeOver);
        apply(&mut state, Action::ToggleSessionRecording);
        state.step();
        apply(&mut state, Action::ToggleSessionRecording);
        let second = list_recordings(dir.path()).into_iter().find(|p| p != &first).unwrap();
        let (_, cloth) = replayed(&second);
        assert!(cloth.particles().is_pinned(8));
        assert_eq!(replay::state_hash(&cloth), replay::state_hash(&state.cloth));
    }

    /// The scene's state for comparing undo steps: the cloth's bits, its pins and topology,
    /// and the settings.
    fn fingerprint(state: &AppState) -> (u64, usize, usize, usize, SceneSettings, u32) {
        let cloth = &state.cloth;
        let grid = state.preset.single_grid().map_or(0, |g| g.columns);
        (
            replay::state_hash(cloth),
            cloth.pinned_count(),
            cloth.torn_edges(),
            cloth.triangles().len(),
            SceneSettings::of(&state.preset),
            grid,
        )
    }

    /// Issue 35: every undoable action kind, undone, gives back the state from before it bit
    /// for bit (the frames run after it included), and redone, the state from before the undo.
    #[test]
    fn every_action_kind_undoes_and_redoes_to_a_bit_identical_state() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other.ron");
        let mut wide = small_preset();
        wide.single_grid_mut().unwrap().columns = 8;
        wide.save(&other).unwrap();
        type Act = Box<dyn Fn(&mut AppState)>;
        let centre_ray = |state: &AppState| {
            let centre = state.cloth.particles().positions().sum::<Vec3>() / state.cloth.particles().len() as f32;
            Ray {
                origin: centre + Vec3::Z * 2.0,
                direction: -Vec3::Z,
            }
        };
        let kinds: Vec<(&str, Act)> = vec![
            ("grab", Box::new(grab_and_throw)),
            (
                "cut",
                Box::new(move |s: &mut AppState| {
                    let ray = centre_ray(s);
                    let (from, to) = (
                        Ray {
                            origin: ray.origin - Vec3::X,
                            ..ray
                        },
                        Ray {
                            origin: ray.origin + Vec3::X,
                            ..ray
                        },
                    );
                    s.begin_stroke();
                    assert!(s.cut(&from, &to) > 0);
                    s.end_stroke();
                }),
            ),
            ("pin", Box::new(|s: &mut AppState| apply(s, Action::TogglePin(12)))),
            ("load", Box::new(move |s: &mut AppState| apply(s, Action::Load(other.clone())))),
            ("reset", Box::new(|s: &mut AppState| apply(s, Action::Reset))),
            (
                "resize",
                Box::new(|s: &mut AppState| {
                    let size = GridSize {
                        columns: 9,
                        ..s.grid_size().unwrap()
                    };
                    apply(s, Action::ApplyGrid(size))
                }),
            ),
            (
                "settings edit",
                Box::new(|s: &mut AppState| {
                    s.preset.solver.gravity.x = 3.0;
                    s.watch_settings();
                }),
            ),
        ];
        for (label, act) in kinds {
            let mut state = state_in(dir.path());
            // More frames than after the action, so a reset's state differs from this one.
            for _ in 0..8 {
                state.step();
            }
            state.watch_settings();
            let before = fingerprint(&state);
            act(&mut state);
            for _ in 0..5 {
                state.step();
            }
            let after = fingerprint(&state);
            assert_ne!(before, after, "{label}: the action changed nothing");
            assert_eq!(state.history.undo_label(), Some(label));
            apply(&mut state, Action::Undo);
            assert_eq!(fingerprint(&state), before, "{label}: undone");
            apply(&mut state, Action::Redo);
            assert_eq!(fingerprint(&state), after, "{label}: redone");
        }
    }

    /// A run of pressure changes is one step (a collider drag's one step is checked through
    /// the mouse, in `interaction`).
    #[test]
    fn a_pressure_slide_is_one_step() {
        let dir = tempfile::tempdir().unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let balloon = Preset::load(&root.join("presets/balloon.ron")).unwrap();
        let mut state = AppState::new(balloon, None, dir.path().to_path_buf()).unwrap();
        state.step();
        let before = fingerprint(&state);
        for factor in [1.2, 1.4, 1.6] {
            apply(&mut state, Action::SetPressure { object: 0, factor });
            state.step();
        }
        assert_eq!(state.history.len(), 1);
        apply(&mut state, Action::Undo);
        assert_eq!(fingerprint(&state), before);
    }

    /// The history keeps at most 64 steps (the oldest go) and a new action clears redo.
    #[test]
    fn the_history_is_bounded_and_a_new_action_clears_redo() {
        let dir = tempfile::tempdir().unwrap();
        let mut state = state_in(dir.path());
        for k in 0..70 {
            apply(&mut state, Action::TogglePin(k % 30));
        }
        assert_eq!(state.history.len(), super::super::undo::MAX_STEPS);
        apply(&mut state, Action::Undo);
        assert!(state.history.redo_label().is_some());
        apply(&mut state, Action::TogglePin(3));
        assert_eq!(state.history.redo_label(), None);
    }
}
