//! Playing a recording back: headless to its end, or frame by frame with seeking.
//!
//! Seeking backwards restores the nearest checkpoint (a copy of the scene and cloth taken
//! every [`Replay::checkpoint_interval`] frames as the replay first passes them) and replays
//! forward from it, so scrubbing costs at most one interval of frames. Checkpoints are kept to
//! at most [`MAX_CHECKPOINTS`]; when full, every other one is dropped and the interval doubles,
//! so a long recording keeps evenly spaced checkpoints in bounded memory.

use std::sync::Arc;

use super::{apply_input, step_scene, Recording, SimInput, StepRefused};
use crate::preset::{Embedded, Preset};
use crate::scene::BuildError;
use crate::sim::constraints::distance::Kernel;
use crate::sim::Cloth;

/// Most checkpoints a replay keeps.
pub const MAX_CHECKPOINTS: usize = 32;
/// Frames between checkpoints at the start (2 s at 60 frames a second).
const FIRST_CHECKPOINT_INTERVAL: u32 = 120;

/// Why a recording cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The recording does not start with its scene, or names a preset it lacks or that does
    /// not parse (only a recording made in code can: [`Recording::load`] checks files).
    #[error("the recording is inconsistent: {0}")]
    Inconsistent(String),
    /// A preset of the recording does not build.
    #[error("frame {frame}: the scene does not build: {source}")]
    Build {
        /// The frame of the scene change.
        frame: u32,
        /// Why.
        source: BuildError,
    },
}

/// The state of a replay at one frame.
#[derive(Clone)]
struct Snapshot {
    frame: u32,
    /// Index of the next event to apply.
    next_event: usize,
    /// Scenes built so far (the start counts): changes exactly when the scene is replaced.
    scenes: u32,
    preset: Preset,
    cloth: Cloth,
}

/// A recording being played back.
pub struct Replay {
    recording: Arc<Recording>,
    /// The recording's mesh files, shared by every preset it builds.
    meshes: Arc<crate::scene::EmbeddedMeshes>,
    now: Snapshot,
    threads: Option<u32>,
    kernel: Kernel,
    checkpoints: Vec<Snapshot>,
    checkpoint_interval: u32,
    /// The last refused step's reason (the app paused there when it was recorded).
    refused: Option<StepRefused>,
}

impl Replay {
    /// Builds the recording's starting scene. `threads` overrides the recorded thread count
    /// (results do not depend on it). The recorded kernel is used when this CPU has it, else
    /// the fastest it has ([`Self::kernel_matches`]).
    pub fn new(recording: Arc<Recording>, threads: Option<u32>) -> Result<Self, ReplayError> {
        let kernel = if recording.kernel.is_supported() {
            recording.kernel
        } else {
            Kernel::detect()
        };
        let meshes = Arc::new(recording.meshes.clone());
        let Some(SimInput::Scene { preset, .. }) = recording.events.first().map(|e| &e.input) else {
            return Err(ReplayError::Inconsistent("it does not start with a scene".into()));
        };
        let preset = scene_preset(&recording, *preset, &meshes)?;
        let cloth = build(&preset, kernel, 0)?;
        let now = Snapshot {
            frame: 0,
            next_event: 1,
            scenes: 1,
            preset,
            cloth,
        };
        Ok(Self {
            checkpoints: vec![now.clone()],
            recording,
            meshes,
            now,
            threads,
            kernel,
            checkpoint_interval: FIRST_CHECKPOINT_INTERVAL,
            refused: None,
        })
    }

    /// The recording.
    pub fn recording(&self) -> &Arc<Recording> {
        &self.recording
    }

    /// Inputs of the recording applied so far (the first this many of its events): at the
    /// end this includes the inputs after the last frame, which [`Self::frame`] alone does
    /// not tell.
    pub fn events_applied(&self) -> usize {
        self.now.next_event
    }

    /// Solver frames replayed so far.
    pub fn frame(&self) -> u32 {
        self.now.frame
    }

    /// Scenes built up to [`Self::frame`], the starting one included: it changes exactly
    /// when the recording replaced the scene (a load, reset or resize), so a viewer knows
    /// to redraw everything.
    pub fn scenes_built(&self) -> u32 {
        self.now.scenes
    }

    /// The scene as it is at [`Self::frame`].
    pub fn preset(&self) -> &Preset {
        &self.now.preset
    }

    /// The cloth as it is at [`Self::frame`].
    pub fn cloth(&self) -> &Cloth {
        &self.now.cloth
    }

    /// The solver settings of the scene now, with the replay's thread count.
    pub fn step_params(&self) -> crate::sim::SolverParams {
        let mut params = self.now.preset.solver.clone();
        params.threads = self.threads.unwrap_or(params.threads);
        params
    }

    /// Whether the replay runs with the kernel the recording was made with.
    pub fn kernel_matches(&self) -> bool {
        self.kernel == self.recording.kernel
    }

    /// The kernel the replay runs with.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Frames between checkpoints now.
    pub fn checkpoint_interval(&self) -> u32 {
        self.checkpoint_interval
    }

    /// The last step the replay refused, as the recorded session did.
    pub fn refused(&self) -> Option<&StepRefused> {
        self.refused.as_ref()
    }

    /// Whether every frame has been replayed.
    pub fn at_end(&self) -> bool {
        self.now.frame >= self.recording.frames
    }

    /// Replays one solver frame: the inputs stamped with it, then the step. Does nothing at
    /// the end.
    pub fn advance(&mut self) -> Result<(), ReplayError> {
        if self.at_end() {
            return Ok(());
        }
        self.apply_due()?;
        self.refused = step_scene(&self.now.preset, &mut self.now.cloth, self.threads).err();
        self.now.frame += 1;
        if self.now.frame.is_multiple_of(self.checkpoint_interval) && self.checkpoints.last().is_some_and(|c| c.frame < self.now.frame) {
            self.add_checkpoint();
        }
        Ok(())
    }

    /// Replays to the end, including the inputs after the last frame (a release or a pin
    /// made after the last step still changes the state).
    pub fn run_to_end(&mut self) -> Result<(), ReplayError> {
        while !self.at_end() {
            self.advance()?;
        }
        self.apply_due()
    }

    /// Goes to frame `frame` (clamped to the recording): forward by replaying, backward from
    /// the nearest checkpoint before it. At the end, the inputs after the last frame are
    /// applied.
    pub fn seek(&mut self, frame: u32) -> Result<(), ReplayError> {
        let frame = self.jump_toward(frame);
        while !self.step_toward(frame)? {}
        Ok(())
    }

    /// The first half of a seek that a window spreads over several of its frames: restores
    /// the checkpoint a seek to `frame` starts from (when going back, or when one lies
    /// between here and there) and returns the frame to go to (clamped to the recording);
    /// then [`Self::step_toward`] until it says the replay is there.
    pub fn jump_toward(&mut self, frame: u32) -> u32 {
        let frame = frame.min(self.recording.frames);
        let nearest = self.checkpoints.iter().rev().find(|c| c.frame <= frame).expect("frame 0 is kept");
        if frame < self.now.frame || nearest.frame > self.now.frame {
            self.now = nearest.clone();
        }
        frame
    }

    /// One frame toward `frame` (at or after the current one); true once there (at the end,
    /// with the inputs after the last frame applied).
    pub fn step_toward(&mut self, frame: u32) -> Result<bool, ReplayError> {
        if self.now.frame < frame {
            self.advance()?;
        }
        let there = self.now.frame >= frame;
        if there && self.at_end() {
            self.apply_due()?;
        }
        Ok(there)
    }

    /// Applies the inputs stamped with the current frame.
    fn apply_due(&mut self) -> Result<(), ReplayError> {
        let recording = Arc::clone(&self.recording);
        while let Some(event) = recording.events.get(self.now.next_event).filter(|e| e.frame <= self.now.frame) {
            self.now.next_event += 1;
            match event.input {
                SimInput::Scene { preset, .. } => {
                    let preset = scene_preset(&recording, preset, &self.meshes)?;
                    self.now.cloth = build(&preset, self.kernel, event.frame)?;
                    self.now.preset = preset;
                    self.now.scenes += 1;
                }
                ref input => apply_input(&mut self.now.preset, &mut self.now.cloth, input),
            }
        }
        Ok(())
    }

    /// Keeps the current state as a checkpoint, thinning the list when it is full.
    fn add_checkpoint(&mut self) {
        if self.checkpoints.len() >= MAX_CHECKPOINTS {
            let mut k = 0;
            self.checkpoints.retain(|_| {
                k += 1;
                k % 2 == 1
            });
            self.checkpoint_interval *= 2;
            if !self.now.frame.is_multiple_of(self.checkpoint_interval) {
                return;
            }
        }
        self.checkpoints.push(self.now.clone());
    }
}

/// Preset `index` of the recording, carrying the recording's mesh files.
fn scene_preset(recording: &Recording, index: u32, meshes: &Arc<crate::scene::EmbeddedMeshes>) -> Result<Preset, ReplayError> {
    let text = recording
        .presets
        .get(index as usize)
        .ok_or_else(|| ReplayError::Inconsistent(format!("there is no preset {index}")))?;
    let mut preset = Preset::parse(text, std::path::Path::new("recording")).map_err(|e| ReplayError::Inconsistent(e.to_string()))?;
    preset.embedded_meshes = Embedded(Some(Arc::clone(meshes)));
    Ok(preset)
}

fn build(preset: &Preset, kernel: Kernel, frame: u32) -> Result<Cloth, ReplayError> {
    let mut cloth = preset.build().map_err(|source| ReplayError::Build { frame, source })?;
    cloth.set_kernel(kernel);
    Ok(cloth)
}
