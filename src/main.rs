//! The `drape` binary: the desktop sandbox (default) and the headless commands `simulate`,
//! `bench` and `soak`. Headless commands run before any window exists, so they work without a display and
//! exit with a proper code (2 for bad input).

mod app;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use drape::headless::{self, BenchLength};
use drape::preset::Preset;

/// Exit code for bad input (unreadable or invalid preset, invalid parameter).
const EXIT_BAD_INPUT: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "drape",
    version,
    about = "Interactive XPBD cloth sandbox",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    app: AppArgs,
}

/// Options of the desktop sandbox.
#[derive(Debug, Clone, Args, Default)]
pub struct AppArgs {
    /// Preset to open (default: presets/default.ron).
    #[arg(long, value_name = "FILE")]
    pub preset: Option<PathBuf>,
    /// Run this many frames, print one JSON line of stats and exit (automation).
    #[arg(long, value_name = "N")]
    pub frames: Option<u32>,
    /// Save the last frame as PNG before exiting (with --frames).
    #[arg(long, value_name = "FILE.png", requires = "frames")]
    pub screenshot: Option<PathBuf>,
    /// Write the last frame's mesh as Wavefront OBJ before exiting (with --frames), as
    /// `simulate --out` does.
    #[arg(long, value_name = "FILE.obj", requires = "frames")]
    pub out: Option<PathBuf>,
    /// Solver threads: 0 = automatic, 1-16 (bit-identical results for every count).
    #[arg(long, value_name = "N")]
    pub threads: Option<u32>,
    /// Record the session from the start and write it to FILE (a `.drec` recording) when the
    /// run ends, the window closes or the recording is stopped.
    #[arg(long, value_name = "FILE.drec")]
    pub record: Option<PathBuf>,
    /// Open a recording in the player instead of a preset.
    #[arg(long, value_name = "FILE.drec", conflicts_with_all = ["preset", "record"])]
    pub replay: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a preset headless for N frames, print a summary, optionally export OBJ.
    Simulate(SimulateArgs),
    /// Benchmark a workload and print one JSON line.
    Bench(BenchArgs),
    /// Replay a recording headless and print one JSON line: the `--frames` keys and
    /// `state_hash` (bit-identical on any thread count); optionally export every frame.
    Replay(ReplayArgs),
    /// Randomized endurance test: interactions and parameter storms on several scenes, checked
    /// after every step; prints a replay line per failure and one JSON line, exits 1 on failure.
    Soak(SoakArgs),
    /// Run the textile tests (Cusick drape, ASTM D1388 cantilever, strip tensile) on the
    /// material presets and print their figures beside the published ranges.
    Calibrate(CalibrateArgs),
}

#[derive(Debug, Args)]
struct CalibrateArgs {
    /// A material preset's name (silk, cotton, denim, leather, rubber) or any preset file;
    /// repeat for several. Default: the five material presets.
    #[arg(long, value_name = "FILE|NAME")]
    material: Vec<String>,
    /// Print one JSON line instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
struct SoakArgs {
    /// Run episodes for this many seconds.
    #[arg(long, default_value_t = 60.0)]
    seconds: f64,
    /// Seed of the random generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Replay only this episode (from a replay line).
    #[arg(long)]
    episode: Option<u64>,
}

#[derive(Debug, Args)]
struct ReplayArgs {
    /// The recording (`.drec`, from `--record` or the app's Record button).
    file: PathBuf,
    /// Solver threads: 0 = automatic, 1-16 (default: as recorded; results are the same).
    #[arg(long, value_name = "N")]
    threads: Option<u32>,
    /// Replay only the first N frames.
    #[arg(long, value_name = "N")]
    frames: Option<u32>,
    /// Write the last frame's mesh as Wavefront OBJ.
    #[arg(long, value_name = "FILE.obj")]
    out: Option<PathBuf>,
    /// Export every frame into this directory (created if missing), as --format says.
    #[arg(long, value_name = "DIR")]
    export: Option<PathBuf>,
    /// Export format: an OBJ file per frame, or one USD text file (replay.usda).
    #[arg(long, value_enum, default_value_t = ExportFormat::Obj, requires = "export")]
    format: ExportFormat,
}

/// What `replay --export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExportFormat {
    /// `frame_00000.obj`, `frame_00001.obj`, … (frame 0 is the start).
    Obj,
    /// `replay.usda`: one animated mesh per cloth object, colliders, time-sampled.
    Usd,
}

#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
struct SimulateArgs {
    /// Preset file.
    #[arg(long, value_name = "FILE")]
    preset: PathBuf,
    /// Frames to run.
    #[arg(long, value_name = "N", default_value_t = 120)]
    frames: u32,
    /// Write the final mesh as Wavefront OBJ.
    #[arg(long, value_name = "FILE.obj")]
    out: Option<PathBuf>,
    /// Solver threads: 0 = automatic, 1-16 (default: the preset's setting).
    #[arg(long, value_name = "N")]
    threads: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Workload {
    /// The like-for-like cloth workload (see README).
    Tmp15,
    /// A preset file, with its own solver settings.
    Preset,
}

// Negative numbers are values, so `--tear-strain -1` gets the range message rather than
// "unexpected argument '-1'".
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
struct BenchArgs {
    /// Which workload.
    #[arg(long, value_enum, default_value_t = Workload::Tmp15)]
    workload: Workload,
    /// Preset file (with --workload preset).
    #[arg(long, value_name = "FILE")]
    preset: Option<PathBuf>,
    /// Grid resolution N (N × N particles) for tmp15.
    #[arg(long, default_value_t = 128)]
    grid: u32,
    /// Substeps per frame (tmp15; a preset uses its own unless given).
    #[arg(long)]
    substeps: Option<u32>,
    /// Iterations per substep (tmp15; a preset uses its own unless given).
    #[arg(long)]
    iterations: Option<u32>,
    /// Time at least this many seconds after a warm-up.
    #[arg(long, conflicts_with = "frames", default_value_t = 2.0)]
    seconds: f64,
    /// Run exactly N frames from the initial state instead, with no warm-up.
    #[arg(long)]
    frames: Option<u32>,
    /// Solver threads: 0 = automatic, 1-16 (bit-identical results for every count).
    #[arg(long, default_value_t = 0)]
    threads: u32,
    /// Enable tearing at this engineering strain (to measure the cost of the tear check).
    #[arg(long, value_name = "STRAIN")]
    tear_strain: Option<f32>,
    /// Number the preset's particles in a random order drawn from SEED, as a mesh from a file
    /// may be (with --workload preset; measures the coloured sweep against the grid's order).
    #[arg(long, value_name = "SEED")]
    shuffle: Option<u64>,
    /// Renumber the particles along a space-filling curve at build time, as the OBJ loader
    /// does (with --workload preset; after --shuffle it measures a mesh numbered at random).
    #[arg(long)]
    renumber: bool,
    /// Which solver runs tmp15: the engine, or the straightforward Gauss–Seidel loop the
    /// figures are compared against.
    #[arg(long, value_enum, default_value_t = SolverChoice::Colour)]
    solver: SolverChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SolverChoice {
    /// The engine: colour batches, SIMD, threads.
    Colour,
    /// Array of structs, one constraint after another, one thread.
    Reference,
}

/// A failure with the exit code it maps to.
struct Failure {
    code: u8,
    error: anyhow::Error,
}

impl Failure {
    fn bad_input(error: impl Into<anyhow::Error>) -> Self {
        Self {
            code: EXIT_BAD_INPUT,
            error: error.into(),
        }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Self {
        Self { code: 1, error }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Simulate(args)) => simulate(args),
        Some(Command::Bench(args)) => bench(args),
        Some(Command::Soak(args)) => soak(args),
        Some(Command::Replay(args)) => replay(args),
        Some(Command::Calibrate(args)) => calibrate(args),
        None => app::run(cli.app).map_err(|error| {
            let bad_input = error.is::<drape::preset::PresetError>()
                || error.is::<drape::sim::SimError>()
                || error.is::<drape::scene::BuildError>()
                || error.is::<drape::replay::RecordingError>();
            if bad_input {
                Failure::bad_input(error)
            } else {
                Failure::from(error)
            }
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {:#}", failure.error);
            ExitCode::from(failure.code)
        }
    }
}

fn load_preset(path: &std::path::Path) -> Result<Preset, Failure> {
    Preset::load(path).map_err(Failure::bad_input)
}

fn simulate(args: SimulateArgs) -> Result<(), Failure> {
    let preset = load_preset(&args.preset)?;
    let mut params = preset.solver.clone();
    if let Some(threads) = args.threads {
        params.threads = threads;
    }
    let mut cloth = preset.build().map_err(Failure::bad_input)?;
    let summary = headless::simulate(&mut cloth, &params, &preset.material, args.frames).map_err(Failure::bad_input)?;
    if let Some(out) = &args.out {
        headless::save_obj(&cloth, out).map_err(|e| anyhow::anyhow!("writing {}: {e}", out.display()))?;
    }
    println!("{}", serde_json::to_string(&summary).map_err(anyhow::Error::from)?);
    Ok(())
}

fn replay(args: ReplayArgs) -> Result<(), Failure> {
    use drape::replay::{play, PlayError, Recording, Replay};
    if let Some(threads) = args.threads {
        let params = drape::sim::SolverParams {
            threads,
            ..Default::default()
        };
        params.validate().map_err(Failure::bad_input)?;
    }
    let recording = Recording::load(&args.file).map_err(Failure::bad_input)?;
    let mut replay = Replay::new(std::sync::Arc::new(recording), args.threads).map_err(Failure::bad_input)?;
    if let Some(dir) = &args.export {
        std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
    }
    let mut frame = 0u32;
    // 1 / dt in f32 is 59.9999… for dt = 1/60: readers expect whole frame rates.
    let frames_per_second = 1.0 / replay.preset().solver.dt as f64;
    let frames_per_second = if (frames_per_second - frames_per_second.round()).abs() < 1e-3 {
        frames_per_second.round()
    } else {
        frames_per_second
    };
    let mut usd = (args.format == ExportFormat::Usd).then(|| drape::usd_export::UsdAnimation::new(frames_per_second));
    let export = |cloth: &drape::sim::Cloth| -> std::io::Result<()> {
        match (&args.export, usd.as_mut()) {
            (Some(_), Some(usd)) => usd.add_frame(cloth),
            (Some(dir), None) => headless::save_obj(cloth, &dir.join(format!("frame_{frame:05}.obj")))?,
            (None, _) => {}
        }
        frame += 1;
        Ok(())
    };
    let report = play(&mut replay, args.frames, export).map_err(|e| match e {
        PlayError::Replay(e) => Failure::bad_input(e),
        PlayError::Export(e) => Failure::from(anyhow::anyhow!("export: {e}")),
    })?;
    if !replay.kernel_matches() {
        eprintln!(
            "note: recorded with the {:?} kernel, which this CPU lacks; replayed with {:?} (results may differ)",
            replay.recording().kernel,
            replay.kernel()
        );
    }
    if let (Some(dir), Some(usd)) = (&args.export, &usd) {
        let path = dir.join("replay.usda");
        usd.write(&path).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    }
    if let Some(out) = &args.out {
        headless::save_obj(replay.cloth(), out).map_err(|e| anyhow::anyhow!("writing {}: {e}", out.display()))?;
    }
    println!("{}", serde_json::to_string(&report).map_err(anyhow::Error::from)?);
    Ok(())
}

fn calibrate(args: CalibrateArgs) -> Result<(), Failure> {
    use drape::calibrate::{load_material, report, MATERIALS};
    // Named materials are found as the app finds its default preset: under presets/ here.
    let presets = std::path::Path::new("presets");
    let names: Vec<String> = if args.material.is_empty() {
        MATERIALS.iter().map(|name| name.to_string()).collect()
    } else {
        args.material
    };
    let materials = names
        .iter()
        .map(|name| load_material(name, presets))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::bad_input)?;
    let rows = materials
        .iter()
        .map(report::calibrate)
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::bad_input)?;
    if args.json {
        println!("{}", serde_json::json!({ "materials": rows }));
    } else {
        print!("{}", report::table(&rows));
    }
    Ok(())
}

fn soak(args: SoakArgs) -> Result<(), Failure> {
    if !(args.seconds >= 0.0 && args.seconds.is_finite()) {
        return Err(Failure::bad_input(anyhow::anyhow!("--seconds must be a number >= 0")));
    }
    let report = drape::soak::soak(args.seconds, args.seed, args.episode, &mut |line| eprintln!("{line}"));
    println!("{}", serde_json::to_string(&report).map_err(anyhow::Error::from)?);
    if report.failures > 0 {
        return Err(anyhow::anyhow!("soak found {} failure(s); see the replay lines above", report.failures).into());
    }
    Ok(())
}

fn bench(args: BenchArgs) -> Result<(), Failure> {
    let length = match args.frames {
        Some(frames) => BenchLength::Frames(frames),
        None if args.seconds > 0.0 && args.seconds.is_finite() => BenchLength::Seconds(args.seconds),
        None => return Err(Failure::bad_input(anyhow::anyhow!("--seconds must be a positive number"))),
    };
    let report = match args.workload {
        Workload::Tmp15 => {
            let params = headless::tmp15_params(args.substeps.unwrap_or(15), args.iterations.unwrap_or(1), args.threads);
            params.validate().map_err(Failure::bad_input)?;
            let material = drape::sim::Material {
                tear_strain: args.tear_strain,
                ..headless::tmp15_material()
            };
            material.validate().map_err(Failure::bad_input)?;
            if args.solver == SolverChoice::Reference {
                let report = headless::bench_reference(args.grid, &params, length).map_err(Failure::bad_input)?;
                println!("{}", serde_json::to_string(&report).map_err(anyhow::Error::from)?);
                return Ok(());
            }
            let mut cloth = headless::tmp15_cloth(args.grid).map_err(Failure::bad_input)?;
            headless::bench("tmp15", args.grid, &mut cloth, &params, &material, length)
        }
        Workload::Preset => {
            let path = args
                .preset
                .ok_or_else(|| Failure::bad_input(anyhow::anyhow!("--workload preset needs --preset FILE")))?;
            let preset = load_preset(&path)?;
            let mut params = preset.solver.clone();
            params.substeps = args.substeps.unwrap_or(params.substeps);
            params.iterations = args.iterations.unwrap_or(params.iterations);
            params.threads = args.threads;
            let material = drape::sim::Material {
                tear_strain: args.tear_strain.or(preset.material.tear_strain),
                ..preset.material.clone()
            };
            let mut model =
                drape::scene::build_scene_model(&preset.objects(), &preset.seams, preset.mesh_files()).map_err(Failure::bad_input)?;
            if let Some(seed) = args.shuffle {
                model = model.shuffled(seed).0;
            }
            if args.renumber {
                model = model.in_locality_order().0;
            }
            let colliders = drape::scene::load_colliders(&preset.colliders, preset.mesh_files()).map_err(Failure::bad_input)?;
            let mut cloth = drape::sim::Cloth::new(model, &preset.material, colliders).map_err(Failure::bad_input)?;
            let columns = preset.single_grid().map_or(0, |grid| grid.columns);
            headless::bench("preset", columns, &mut cloth, &params, &material, length)
        }
    }
    .map_err(Failure::bad_input)?;
    println!("{}", serde_json::to_string(&report).map_err(anyhow::Error::from)?);
    Ok(())
}
