//! Taking a recording while a session runs.

use std::collections::HashMap;

use super::{state_hash, Event, Recording, SceneChange, SimInput};
use crate::preset::Preset;
use crate::scene::EmbeddedMeshes;
use crate::sim::constraints::distance::Kernel;
use crate::sim::{Cloth, Material, SolverParams};

/// The settings a step reads from a preset, which the app's sliders edit in place: the
/// solver's, the scene's material and each object's own. A recorder keeps the last recorded
/// ones (a step that sees them changed records the change first,
/// [`SessionRecorder::before_step`]); the app's undo keeps the ones before an edit.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneSettings {
    /// The solver settings.
    pub solver: SolverParams,
    /// The scene's material.
    pub material: Material,
    /// Each object's own material (none: the scene's).
    pub object_materials: Vec<Option<Material>>,
}

impl SceneSettings {
    /// The settings of `preset`.
    pub fn of(preset: &Preset) -> Self {
        Self {
            solver: preset.solver.clone(),
            material: preset.material.clone(),
            object_materials: preset.objects.iter().map(|o| o.material().cloned()).collect(),
        }
    }

    /// Writes them into `preset` (objects it lacks are skipped).
    pub fn write_to(&self, preset: &mut Preset) {
        preset.solver = self.solver.clone();
        preset.material = self.material.clone();
        for (object, material) in preset.objects.iter_mut().zip(&self.object_materials) {
            *object.material_mut() = material.clone();
        }
    }
}

/// Records a session: the app tells it every input as it applies it, and every step.
#[derive(Debug, Clone)]
pub struct SessionRecorder {
    kernel: Kernel,
    threads: u32,
    presets: Vec<String>,
    /// Index of each preset text in `presets`, so a reset stores its preset once.
    preset_index: HashMap<String, u32>,
    meshes: EmbeddedMeshes,
    events: Vec<Event>,
    frame: u32,
    settings: SceneSettings,
    playback: Option<(bool, f32)>,
}

impl SessionRecorder {
    /// Starts recording at `preset`, just built into a cloth that runs with `kernel` on
    /// `threads` threads.
    pub fn new(preset: &Preset, kernel: Kernel, threads: u32) -> Self {
        let mut recorder = Self {
            kernel,
            threads,
            presets: Vec::new(),
            preset_index: HashMap::new(),
            meshes: EmbeddedMeshes::new(),
            events: Vec::new(),
            frame: 0,
            settings: SceneSettings::of(preset),
            playback: None,
        };
        recorder.scene(preset, SceneChange::Start);
        recorder
    }

    /// Continues `recording` from a replay taken over at `frame` after applying its first
    /// `applied` inputs ([`super::Replay::events_applied`]): those are kept, the rest dropped,
    /// and `preset` is the scene as it is then.
    pub fn resume(recording: &Recording, applied: usize, frame: u32, preset: &Preset) -> Self {
        let frame = frame.min(recording.frames);
        let preset_index = recording.presets.iter().enumerate().map(|(k, t)| (t.clone(), k as u32)).collect();
        Self {
            kernel: recording.kernel,
            threads: recording.threads,
            presets: recording.presets.clone(),
            preset_index,
            meshes: recording.meshes.clone(),
            events: recording.events.iter().take(applied).cloned().collect(),
            frame,
            settings: SceneSettings::of(preset),
            playback: None,
        }
    }

    /// Solver frames recorded so far.
    pub fn frame(&self) -> u32 {
        self.frame
    }

    /// Inputs recorded so far.
    pub fn event_count(&self) -> usize {
        self.events.len()
    }

    /// Records an input the app just applied.
    pub fn input(&mut self, input: SimInput) {
        self.events.push(Event { frame: self.frame, input });
    }

    /// Records that the scene was replaced by `preset` (just built), with its mesh files.
    pub fn scene(&mut self, preset: &Preset, change: SceneChange) {
        self.embed_meshes(preset);
        let text = preset.to_ron();
        let next = self.presets.len() as u32;
        let index = *self.preset_index.entry(text.clone()).or_insert(next);
        if index == next {
            self.presets.push(text);
        }
        self.settings = SceneSettings::of(preset);
        self.input(SimInput::Scene { preset: index, change });
    }

    /// Records the run mode and time scale when they changed (playback only).
    pub fn playback(&mut self, paused: bool, time_scale: f32) {
        if self.playback != Some((paused, time_scale)) {
            self.playback = Some((paused, time_scale));
            self.input(SimInput::Playback { paused, time_scale });
        }
    }

    /// Called before each step with the preset it steps with: records the solver and
    /// material settings that changed since the last step (the sliders edit them in place).
    pub fn before_step(&mut self, preset: &Preset) {
        let now = SceneSettings::of(preset);
        if now == self.settings {
            return;
        }
        if now.solver != self.settings.solver {
            self.input(SimInput::Solver(now.solver.clone()));
        }
        if now.material != self.settings.material {
            self.input(SimInput::Material(now.material.clone()));
        }
        for (object, material) in now.object_materials.iter().enumerate() {
            if self.settings.object_materials.get(object) != Some(material) {
                self.input(SimInput::ObjectMaterial {
                    object: object as u32,
                    material: material.clone(),
                });
            }
        }
        self.settings = now;
    }

    /// Called after each step the app attempted (a refused step counts too: a replay refuses
    /// it the same way).
    pub fn stepped(&mut self) {
        self.frame += 1;
    }

    /// The recording so far, opening at frame `open_at`, ending at `cloth`'s state.
    pub fn recording(&self, open_at: u32, cloth: &Cloth) -> Recording {
        Recording {
            kernel: self.kernel,
            threads: self.threads,
            presets: self.presets.clone(),
            meshes: self.meshes.clone(),
            events: self.events.clone(),
            frames: self.frame,
            open_at: open_at.min(self.frame),
            final_hash: Some(state_hash(cloth)),
        }
    }

    /// Adds the texts of the mesh files `preset` carries ([`Preset::embed_meshes`], which
    /// the app calls before it builds a scene, so the recording holds the very texts the
    /// scene was built from).
    fn embed_meshes(&mut self, preset: &Preset) {
        let Some(carried) = &preset.embedded_meshes.0 else { return };
        for (file, text) in carried.iter() {
            self.meshes.entry(file.clone()).or_insert_with(|| text.clone());
        }
    }
}
