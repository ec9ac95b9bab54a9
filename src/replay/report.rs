//! `drape replay`: a recording played headless, and the one JSON line it prints.

use std::time::Instant;

use serde::Serialize;

use super::{state_hash, Replay, ReplayError};
use crate::sim::{available_cores, Cloth};

/// What the JSON lines of `drape replay` and `drape --frames` say about the cloth at the end
/// (flattened into both: the keys are a contract).
#[derive(Debug, Clone, Serialize)]
pub struct ClothFigures {
    /// Particles at the end.
    pub particles: usize,
    /// Triangles at the end.
    pub triangles: usize,
    /// Pinned particles at the end.
    pub pinned: usize,
    /// Largest stretch-edge strain of the last step.
    pub max_strain: f32,
    /// Mean stretch-edge strain of the last step.
    pub mean_strain: f32,
    /// Kinetic energy after the last step (J).
    pub kinetic_energy: f64,
    /// Edges torn or cut.
    pub torn_edges: usize,
    /// Connected pieces at the end.
    pub pieces: usize,
    /// [`super::state_hash`] at the end, 16 hex digits.
    pub state_hash: String,
    /// The deepest any particle sits inside any collider, in m
    /// ([`crate::headless::collider_penetration`]).
    pub collider_penetration: f32,
    /// The largest distance between two sewn particles, in m; 0 without seams
    /// ([`Cloth::seam_gap`]).
    pub seam_gap: f32,
}

impl ClothFigures {
    /// The figures of `cloth` as it is now (strain and energy of its last step).
    pub fn of(cloth: &Cloth) -> Self {
        let stats = cloth.stats();
        Self {
            particles: cloth.particles().len(),
            triangles: cloth.triangles().len(),
            pinned: cloth.pinned_count(),
            max_strain: stats.max_strain,
            mean_strain: stats.mean_strain,
            kinetic_energy: stats.kinetic_energy,
            torn_edges: cloth.torn_edges(),
            pieces: cloth.piece_count(),
            state_hash: format!("{:016x}", state_hash(cloth)),
            collider_penetration: crate::headless::collider_penetration(cloth),
            seam_gap: cloth.seam_gap(),
        }
    }
}

/// The line `drape replay` prints: the keys of the app's `--frames` line (the ones that
/// describe the cloth and the solver), plus the state hash and how the replay compares with
/// the recording. The keys are a contract: extend, don't rename.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayReport {
    /// Solver frames replayed.
    pub frames: u32,
    /// The cloth at the end.
    #[serde(flatten)]
    pub cloth: ClothFigures,
    /// Frames replayed per wall-clock second.
    pub fps: f64,
    /// Mean wall time per frame (ms), export included.
    pub step_ms: f64,
    /// Solver threads used at the end.
    pub threads: u32,
    /// Threads asked for (`--threads`, else the recorded scene's; 0 = automatic).
    pub threads_requested: u32,
    /// The machine's cores.
    pub cores: usize,
    /// The hash the recording ended with (none when it was not known).
    pub recorded_hash: Option<String>,
    /// Whether `state_hash` equals `recorded_hash`: only when the whole recording was
    /// replayed and its hash is known.
    pub matches_recording: Option<bool>,
    /// The kernel the replay ran with.
    pub kernel: String,
    /// Whether that is the recording's kernel (a different one may round differently).
    pub kernel_matches: bool,
    /// Inputs in the recording.
    pub events: usize,
    /// Simulated seconds per wall-clock second (above 1: faster than real time).
    pub real_time_factor: f64,
}

/// Why a headless replay stopped.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// The recording could not be replayed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// A frame could not be exported.
    #[error("export: {0}")]
    Export(#[from] std::io::Error),
}

/// Replays `frames` frames (at most the recording's; all of them and the inputs after the
/// last when `frames` is none), calling `each_frame` with the cloth at the start and after
/// every frame (for exports), and reports.
pub fn play(
    replay: &mut Replay,
    frames: Option<u32>,
    mut each_frame: impl FnMut(&Cloth) -> std::io::Result<()>,
) -> Result<ReplayReport, PlayError> {
    let total = replay.recording().frames;
    let last = frames.unwrap_or(total).min(total);
    let started = Instant::now();
    each_frame(replay.cloth())?;
    while replay.frame() < last {
        replay.advance()?;
        each_frame(replay.cloth())?;
    }
    if last == total {
        replay.run_to_end()?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let cloth = replay.cloth();
    let hash = state_hash(cloth);
    let recorded = replay.recording().final_hash;
    let params = replay.step_params();
    let per_second = |count: f64| if seconds > 0.0 { count / seconds } else { 0.0 };
    Ok(ReplayReport {
        frames: replay.frame(),
        cloth: ClothFigures::of(cloth),
        fps: per_second(replay.frame() as f64),
        step_ms: if replay.frame() > 0 {
            seconds * 1e3 / replay.frame() as f64
        } else {
            0.0
        },
        threads: cloth.threads_used(&params),
        threads_requested: params.threads,
        cores: available_cores(),
        recorded_hash: recorded.map(|h| format!("{h:016x}")),
        matches_recording: recorded.filter(|_| last == total).map(|h| h == hash),
        kernel: format!("{:?}", replay.kernel()),
        kernel_matches: replay.kernel_matches(),
        events: replay.recording().events.len(),
        real_time_factor: per_second(replay.frame() as f64 * params.dt as f64),
    })
}
