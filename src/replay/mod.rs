//! Sessions recorded and replayed bit for bit.
//!
//! The solver is deterministic: the same build, started from the same scene and given the same
//! inputs before the same solver frames, reaches the same state bit for bit, on any number of
//! threads (the solver's results do not depend on the thread count). A session is therefore
//! fully described by its starting preset and the inputs that changed the simulation, each
//! stamped with the solver frame it was applied before: a [`Recording`]. Replaying it
//! ([`Replay`]) builds the preset, applies each input before its frame and steps, and arrives
//! at the recorded state, which [`state_hash`] checks.
//!
//! What counts as an input ([`SimInput`]) is exactly what the app does to the simulation
//! outside a step: the mouse's grab, drag targets, release (with its throw velocity) and
//! Shift-release pin, Ctrl+click pins, cuts (the two camera rays of each cut segment), collider
//! drags, pressure edits, scene replacements (load, reset, resize, each carrying the full
//! preset) and the solver and material settings the sliders edit (recorded when a step sees
//! them changed). Camera moves, panels and real time are not inputs: they change no particle.
//! Run mode and time scale are kept for playback only.
//!
//! Inputs are stamped with solver frames, not wall-clock time, which is what makes a replay
//! exact: the app's variable frame rate and catch-up steps decide how many solver frames run
//! between two mouse events, and the recording keeps that count.
//!
//! The kernel (the vector unit the projection loops use) is recorded too. Kernels may round
//! differently, so a replay uses the recorded one where the CPU has it and says so where it
//! does not (the state hash may then differ).

mod file;
mod player;
mod recorder;
mod report;

use glam::Vec3;
use serde::{Deserialize, Serialize};

use crate::preset::Preset;
use crate::sim::constraints::distance::Kernel;
use crate::sim::{Cloth, Material, Pick, Ray, SolverParams, FRAME_WORK_BUDGET};

pub use file::{RecordingError, FORMAT_VERSION, MAGIC, RECORDING_LIMIT};
pub use player::{Replay, ReplayError};
pub use recorder::{SceneSettings, SessionRecorder};
pub use report::{play, ClothFigures, PlayError, ReplayReport};

/// Why the scene was replaced (for the player's display; the preset alone decides the physics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SceneChange {
    /// The scene the recording starts from.
    Start,
    /// A preset file was opened.
    Load,
    /// The scene was rebuilt from its description.
    Reset,
    /// Rebuilt keeping the pins as they were.
    ResetKeepingPins,
    /// Rebuilt with a new grid resolution or size.
    Resize,
}

/// One input that changes the simulation (module docs). Floats are exact bit patterns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SimInput {
    /// The scene was replaced by [`Recording::presets`]`[preset]`.
    Scene {
        /// Index into [`Recording::presets`].
        preset: u32,
        /// Why.
        change: SceneChange,
    },
    /// The solver settings changed (all of them; a replay may override the thread count,
    /// which does not change results).
    Solver(SolverParams),
    /// The scene's material changed.
    Material(Material),
    /// Object `object` got its own material, or follows the scene's again (`None`).
    ObjectMaterial {
        /// Index into the preset's objects.
        object: u32,
        /// Its material.
        material: Option<Material>,
    },
    /// The pressure factor of object `object` (a mesh with pressure) changed.
    Pressure {
        /// Index into the preset's objects.
        object: u32,
        /// The new factor k.
        factor: f32,
    },
    /// The mouse grabbed what this pick found ([`Cloth::grab_pick`]).
    Grab(Pick),
    /// The held point's target moved (m).
    DragTo(Vec3),
    /// The held point was let go, thrown with this velocity (m/s) or keeping its own.
    Release(Option<Vec3>),
    /// The held point was let go and pinned where it is (Shift-release).
    ReleasePinned,
    /// One segment of a cut: every edge crossing the surface between the two rays.
    Cut {
        /// The camera ray through the segment's start.
        from: Ray,
        /// The camera ray through its end.
        to: Ray,
    },
    /// Collider `index` was dragged to `to` (its centre, m).
    MoveCollider {
        /// Index into the cloth's colliders.
        index: u32,
        /// Where its centre goes.
        to: Vec3,
    },
    /// Particle `0` was pinned or unpinned (Ctrl+click).
    TogglePin(u32),
    /// Run mode and time scale, for playback only (they change no particle).
    Playback {
        /// Whether the run was paused.
        paused: bool,
        /// Simulated seconds per real second.
        time_scale: f32,
    },
}

/// An input and the solver frame it was applied before: with `frame` = n, after n steps of
/// the recording and before step n + 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Solver frames run before the input.
    pub frame: u32,
    /// The input.
    pub input: SimInput,
}

/// A recorded session: everything needed to replay it, with no other file.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// The kernel the session ran with.
    pub kernel: Kernel,
    /// Solver threads the session ran with (a replay may use any count).
    pub threads: u32,
    /// The presets the session built, as RON text (each scene replacement names one).
    pub presets: Vec<String>,
    /// The mesh files those presets name, by the path as they write it.
    pub meshes: crate::scene::EmbeddedMeshes,
    /// The inputs in the order they were applied; the first is the starting scene.
    pub events: Vec<Event>,
    /// Solver frames the session ran.
    pub frames: u32,
    /// The frame the player opens at (where a Record press or a "last 60 s" save began; the
    /// frames before it are replayed to get there).
    pub open_at: u32,
    /// [`state_hash`] at the end of the session, when it was known.
    pub final_hash: Option<u64>,
}

/// Why a step did not run (the state is unchanged).
#[derive(Debug, Clone, PartialEq)]
pub struct StepRefused(pub String);

/// One solver frame of a scene, as the app runs it: refused when its work would freeze the
/// window ([`FRAME_WORK_BUDGET`]) or a material or parameter is invalid, and undone by the
/// engine when it diverges. `threads` overrides the preset's thread count.
pub fn step_scene(preset: &Preset, cloth: &mut Cloth, threads: Option<u32>) -> Result<(), StepRefused> {
    let mut params = preset.solver.clone();
    if let Some(threads) = threads {
        params.threads = threads;
    }
    let work = cloth.work_per_step(&params);
    if work > FRAME_WORK_BUDGET {
        return Err(StepRefused(format!(
            "step refused: {:.0} million projections per frame would freeze the window (budget {} million); \
             lower substeps, iterations or the resolution",
            work as f64 / 1e6,
            FRAME_WORK_BUDGET / 1_000_000
        )));
    }
    preset
        .sync_object_materials(cloth)
        .map_err(|e| StepRefused(format!("material refused: {e}")))?;
    cloth
        .step(&params, &preset.material)
        .map(|_| ())
        .map_err(|e| StepRefused(format!("step refused: {e}")))
}

/// Sets the pressure factor of object `object` (a mesh with pressure): on the cloth (its
/// pressure bodies are numbered in object order) and in the preset, so a save keeps it.
pub fn set_pressure(preset: &mut Preset, cloth: &mut Cloth, object: usize, factor: f32) -> Result<(), String> {
    use crate::scene::SceneObject;
    let objects = preset.objects();
    let has_pressure = |o: &SceneObject| matches!(o, SceneObject::Mesh(m) if m.pressure.is_some());
    let body = objects.iter().take(object).filter(|o| has_pressure(o)).count();
    if !objects.get(object).is_some_and(has_pressure) {
        return Err(format!("object {object} has no pressure"));
    }
    cloth.set_pressure(body, factor).map_err(|e| format!("pressure not changed: {e}"))?;
    if let Some(SceneObject::Mesh(mesh)) = preset.objects.get_mut(object) {
        mesh.pressure = Some(factor);
    }
    Ok(())
}

/// A 64-bit FNV-1a hash of every particle's position and velocity bits, in particle order:
/// equal hashes mean (but for a 2⁻⁶⁴ chance) bit-identical states.
pub fn state_hash(cloth: &Cloth) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let particles = cloth.particles();
    let words = (0..particles.len()).flat_map(|i| {
        let (x, v) = (particles.position(i), particles.velocity(i));
        [x.x, x.y, x.z, v.x, v.y, v.z].map(f32::to_bits)
    });
    let mut hash = OFFSET;
    for word in std::iter::once(particles.len() as u32).chain(words) {
        for byte in word.to_le_bytes() {
            hash = (hash ^ byte as u64).wrapping_mul(PRIME);
        }
    }
    hash
}

/// [`state_hash`] as the JSON outputs print it: 16 hex digits (a string, since JSON numbers
/// lose bits past 2⁵³).
pub fn state_hash_text(cloth: &Cloth) -> String {
    format!("{:016x}", state_hash(cloth))
}

/// Applies one input to a scene (the app's own path for each input, so a replay does what the
/// app did). Inputs the engine refuses (a particle or collider out of range, a pick of a
/// triangle that is gone) change nothing, as in the app. `Scene` inputs are the caller's
/// (they need the recording's presets); here they change nothing.
pub fn apply_input(preset: &mut Preset, cloth: &mut Cloth, input: &SimInput) {
    match input {
        SimInput::Scene { .. } | SimInput::Playback { .. } => {}
        SimInput::Solver(params) => preset.solver = params.clone(),
        SimInput::Material(material) => preset.material = material.clone(),
        SimInput::ObjectMaterial { object, material } => {
            if let Some(object) = preset.objects.get_mut(*object as usize) {
                *object.material_mut() = material.clone();
            }
        }
        SimInput::Pressure { object, factor } => {
            let _ = set_pressure(preset, cloth, *object as usize, *factor);
        }
        SimInput::Grab(pick) => {
            let _ = cloth.grab_pick(pick);
        }
        SimInput::DragTo(target) => cloth.drag_to(*target),
        SimInput::Release(throw) => cloth.release(*throw),
        SimInput::ReleasePinned => cloth.release_pinned(),
        SimInput::Cut { from, to } => {
            cloth.cut(from, to);
        }
        SimInput::MoveCollider { index, to } => {
            let _ = cloth.move_collider(*index as usize, *to);
        }
        SimInput::TogglePin(i) => {
            cloth.toggle_pin(*i);
        }
    }
}

#[cfg(test)]
mod tests;
