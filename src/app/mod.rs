//! The desktop sandbox: a macroquad window with egui panels around the headless engine.
//!
//! One frame: read input → egui logic pass (sliders edit the live parameters, buttons return
//! [`Action`]s, and egui says whether it owns the pointer and the keyboard) → keyboard
//! shortcuts, only when no text field owns the keys ([`keys`]) → apply the actions → mouse
//! gestures on the cloth or camera (only when egui does not own the pointer) → fixed-Δt
//! stepping through an [`clock::Accumulator`] → draw the scene → paint egui → record a frame
//! when recording → save changed settings → next frame. Running the UI before the mouse is
//! what keeps a slider drag off the cloth.
//!
//! With `--frames N` (automation) the run is deterministic: exactly one solver frame per
//! rendered frame, then one JSON line of stats and, with `--screenshot`, a PNG of the last
//! frame and, with `--out`, its mesh as OBJ; the settings file is neither read nor written.

mod camera;
mod clock;
mod input;
mod interaction;
mod keys;
mod param_widgets;
mod recorder;
mod render;
mod settings;
mod state;
mod ui;
mod undo;
mod widgets;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

use anyhow::Context as _;
use macroquad::camera::{set_camera, set_default_camera, Camera3D};
use macroquad::color::Color;
use macroquad::conf::Conf;
use macroquad::input::{is_key_down, is_key_pressed, KeyCode};
use macroquad::window::{clear_background, next_frame};
use serde::Serialize;

use drape::preset::Preset;

use crate::AppArgs;
use camera::OrbitCamera;
use clock::{Accumulator, RealTimeRatio};
use input::Viewport;
use keys::{KeyRoute, Shortcut};
use recorder::Recorder;
use render::{HeatMode, Renderer};
use settings::Settings;
use state::{apply, Action, AppState, RunMode};
use ui::{FrameTimes, Panels, WindowRequests};

/// The preset opened when none is given.
const DEFAULT_PRESET: &str = "presets/default.ron";
/// Smoothing factor of the displayed timings (exponential moving average per frame).
const SMOOTHING: f64 = 0.05;
/// Seconds between two writes of changed settings (a window resize changes them every frame).
const SETTINGS_SAVE_INTERVAL_S: f64 = 1.0;
/// Panel scrolling in points per wheel notch.
const PANEL_SCROLL_POINTS_PER_NOTCH: f32 = 50.0;

/// egui's scroll speed per reported wheel "line" that gives [`PANEL_SCROLL_POINTS_PER_NOTCH`].
/// egui-macroquad divides miniquad's wheel value by 90 and egui multiplies lines by this;
/// miniquad reports 120 per notch on Windows but 1 per notch on X11, which made one notch
/// scroll the panels by 0.4 points there.
fn line_scroll_speed(wheel_per_notch: f32) -> f32 {
    PANEL_SCROLL_POINTS_PER_NOTCH * 90.0 / wheel_per_notch
}

/// miniquad's wheel value per notch on this platform (macOS reports pixels: about 1 line).
fn wheel_per_notch() -> f32 {
    if cfg!(target_os = "windows") {
        120.0
    } else if cfg!(target_os = "macos") {
        10.0
    } else {
        1.0
    }
}

/// Opens the sandbox window and runs it until it is closed (or for `--frames` frames).
pub fn run(args: AppArgs) -> anyhow::Result<()> {
    // Automation runs neither read nor write the user's settings, so they repeat anywhere.
    let settings_path = if args.frames.is_some() { None } else { Settings::default_path() };
    let (settings, settings_problem) = settings_path.as_deref().map_or((Settings::default(), None), Settings::load);
    let mut state = initial_state(&args, &settings)?;
    if let Some(problem) = settings_problem {
        state.status = state::Status {
            text: problem,
            error: true,
        };
    }
    if let Some(threads) = args.threads {
        state.threads_override = Some(threads);
        state.step_params().validate().context("--threads")?;
    }
    if let Some(path) = &args.replay {
        // A broken file is bad input (exit 2), said before any window opens.
        let recording = drape::replay::Recording::load(path)?;
        state::open_loaded_recording(&mut state, path.clone(), recording);
        if let Some(playback) = state.playback.as_mut() {
            playback.playing = true;
        } else {
            anyhow::bail!("{}", state.status.text);
        }
    }
    if let Some(path) = &args.record {
        state.session_recording = Some(state::SessionRecording {
            since: 0,
            path: path.clone(),
        });
    }
    // miniquad panics without a display; say what to do instead.
    if cfg!(target_os = "linux") && std::env::var_os("DISPLAY").is_none() && std::env::var_os("WAYLAND_DISPLAY").is_none() {
        anyhow::bail!("no display (DISPLAY is not set): run under X11/Wayland or xvfb-run, or use `drape simulate` / `drape bench`");
    }
    let outcome: Rc<RefCell<Option<anyhow::Result<()>>>> = Rc::default();
    let slot = Rc::clone(&outcome);
    let conf = window_conf(&settings);
    macroquad::Window::from_config(conf, async move {
        let result = App::new(state, args, settings, settings_path).run().await;
        *slot.borrow_mut() = Some(result);
    });
    let result = outcome.borrow_mut().take();
    result.unwrap_or(Ok(()))
}

fn window_conf(settings: &Settings) -> Conf {
    Conf {
        miniquad_conf: macroquad::miniquad::conf::Conf {
            window_title: "Drape — XPBD cloth sandbox".into(),
            window_width: settings.window_width as i32,
            window_height: settings.window_height as i32,
            window_resizable: true,
            sample_count: 1,
            ..Default::default()
        },
        // One draw call must hold a whole cloth chunk (see render.rs).
        draw_call_vertex_capacity: render::DRAW_CALL_VERTICES,
        draw_call_index_capacity: render::DRAW_CALL_INDICES,
        ..Default::default()
    }
}

/// The preset from the command line, else the last one opened (from the settings, if it
/// still loads), else `presets/default.ron`, else the built-in default (so the binary also
/// opens from another working directory).
fn initial_state(args: &AppArgs, settings: &Settings) -> anyhow::Result<AppState> {
    let last = settings
        .last_preset
        .as_ref()
        .filter(|_| args.frames.is_none())
        .and_then(|path| Preset::load(path).ok().map(|p| (p, path.clone())));
    let (preset, source) = match (&args.preset, last) {
        (Some(path), _) => (Preset::load(path)?, Some(path.clone())),
        (None, Some((preset, path))) => (preset, Some(path)),
        (None, None) if Path::new(DEFAULT_PRESET).exists() => {
            (Preset::load(Path::new(DEFAULT_PRESET))?, Some(PathBuf::from(DEFAULT_PRESET)))
        }
        (None, None) => (Preset::default(), None),
    };
    let presets_dir = source
        .as_ref()
        .and_then(|p| p.parent())
        .filter(|d| !d.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("presets"), Path::to_path_buf);
    AppState::new(preset, source, presets_dir)
}

/// The final stats line of an automated run. The keys are a contract: extend, don't rename.
#[derive(Debug, Serialize)]
struct RunReport {
    frames: u32,
    /// The cloth at the end (its keys flattened into the line, `state_hash` among them).
    #[serde(flatten)]
    cloth: drape::replay::ClothFigures,
    /// Mean rendered frames per second over the run (first frame excluded).
    fps: f64,
    /// Mean solver milliseconds per frame.
    step_ms: f64,
    /// Mean milliseconds per frame building and submitting the cloth meshes.
    upload_ms: f64,
    /// Solver threads used: `threads_requested` (or the automatic choice for 0), at most
    /// `cores`.
    threads: u32,
    /// Threads asked for (the preset's `threads` or `--threads`; 0 = automatic).
    threads_requested: u32,
    /// The machine's cores, which cap the threads.
    cores: usize,
    chunks: usize,
    /// Luminance standard deviation of the saved screenshot (with `--screenshot`).
    #[serde(skip_serializing_if = "Option::is_none")]
    screenshot_luma_std: Option<f64>,
    /// Distinct colours sampled from the saved screenshot (with `--screenshot`).
    #[serde(skip_serializing_if = "Option::is_none")]
    screenshot_colours: Option<usize>,
}

struct App {
    state: AppState,
    args: AppArgs,
    camera: OrbitCamera,
    mouse: interaction::Mouse,
    panels: Panels,
    renderer: Renderer,
    accumulator: Accumulator,
    times: FrameTimes,
    framed_scene: Option<u64>,
    viewport: Viewport,
    started: Instant,
    real_time: RealTimeRatio,
    recorder: Option<Recorder>,
    /// Solver frames the last rendered frame ran (what the PNG recorder writes it for).
    solver_frames: u32,
    settings_path: Option<PathBuf>,
    saved_settings: Settings,
    settings_checked: Instant,
}

/// Sums for the automated run's report.
#[derive(Default)]
struct Totals {
    frames: u32,
    step_ms: f64,
    upload_ms: f64,
    timed_since: Option<Instant>,
}

impl App {
    fn new(state: AppState, args: AppArgs, settings: Settings, settings_path: Option<PathBuf>) -> Self {
        let mut panels = Panels::new(&state);
        panels.sections = settings.sections;
        panels.stats_open = settings.stats_open;
        panels.panel_open = settings.panel_open;
        let renderer = Renderer::new();
        egui_macroquad::cfg(|ctx| ctx.options_mut(|o| o.line_scroll_speed = line_scroll_speed(wheel_per_notch())));
        let mut app = Self {
            state,
            args,
            camera: OrbitCamera::default(),
            mouse: interaction::Mouse::default(),
            panels,
            renderer,
            accumulator: Accumulator::default(),
            times: FrameTimes::default(),
            framed_scene: None,
            viewport: window_viewport(),
            started: Instant::now(),
            real_time: RealTimeRatio::default(),
            recorder: None,
            solver_frames: 0,
            settings_path,
            saved_settings: settings,
            settings_checked: Instant::now(),
        };
        if let Some(error) = app.renderer.material_error.clone() {
            app.state.status = state::Status { text: error, error: true };
        }
        app
    }

    async fn run(mut self) -> anyhow::Result<()> {
        let mut totals = Totals::default();
        let mut last = Instant::now();
        // Closing the window ends the loop here, so a session recording is written first.
        macroquad::input::prevent_quit();
        loop {
            if macroquad::input::is_quit_requested() {
                return self.write_session_recording();
            }
            let now = Instant::now();
            let real_dt = now.duration_since(last).as_secs_f64();
            last = now;
            let screenshot = self.frame(real_dt, &mut totals);
            if let Some(limit) = self.args.frames {
                if totals.frames >= limit {
                    return self.finish(&totals);
                }
            }
            self.capture_recording();
            self.save_settings_if_changed();
            if screenshot {
                let path = PathBuf::from(format!("drape-{}.png", unix_seconds()));
                self.state.status = match save_screenshot(&path) {
                    Ok(_) => state::Status {
                        text: format!("screenshot saved to {}", path.display()),
                        error: false,
                    },
                    Err(e) => state::Status {
                        text: format!("screenshot failed: {e:#}"),
                        error: true,
                    },
                };
            }
            next_frame().await;
        }
    }

    /// One frame; returns whether a screenshot was requested.
    fn frame(&mut self, real_dt: f64, totals: &mut Totals) -> bool {
        let mut requests = WindowRequests::default();
        let mut actions = Vec::new();
        let mut pointer_on_ui = false;
        let mut route = KeyRoute::default();
        egui_macroquad::ui(|ctx| {
            route = keys::route_around(ctx, |ctx| {
                actions = self.panels.show(ctx, &mut self.state, &self.times, &mut requests);
            });
            if route.to_shortcuts() {
                actions.extend(keys::undo_request(ctx));
            }
            pointer_on_ui = ctx.wants_pointer_input() || ctx.is_pointer_over_area();
            // What the panels leave free is the 3D viewport.
            let free = ctx.available_rect();
            let scale = ctx.pixels_per_point();
            self.viewport = Viewport {
                origin: glam::Vec2::new(free.min.x, free.min.y) * scale,
                size: (glam::Vec2::new(free.width(), free.height()) * scale).max(glam::Vec2::ONE),
            };
        });
        if self.framed_scene != Some(self.state.scene_version) {
            self.reset_view();
        }
        let shift = is_key_down(KeyCode::LeftShift) || is_key_down(KeyCode::RightShift);
        for shortcut in keys::fired(route, is_key_pressed, shift) {
            self.shortcut(shortcut, &mut actions, &mut requests);
        }
        self.state.watch_settings();
        for action in actions {
            if matches!(
                action,
                Action::Reset | Action::ResetKeepingPins | Action::Load(_) | Action::ApplyGrid(_)
            ) {
                self.accumulator.clear();
                self.real_time.clear();
            }
            apply(&mut self.state, action);
        }
        self.state
            .log
            .playback(self.state.run_mode == RunMode::Paused, self.state.time_scale);
        if requests.reset_view {
            self.reset_view();
        }
        if requests.toggle_recording {
            self.toggle_recording();
        }
        let input = input::read(self.started.elapsed().as_secs_f64(), self.viewport, pointer_on_ui);
        self.mouse.update(&input, &mut self.camera, &mut self.state);

        let (steps, step_ms) = self.advance(real_dt);
        self.solver_frames = steps;
        let simulated = steps as f64 * self.state.preset.solver.dt as f64;
        self.real_time.record(real_dt, simulated, self.state.running());
        let upload_ms = self.draw(input.ctrl);
        self.record(real_dt, step_ms, upload_ms, totals);
        requests.screenshot
    }

    fn shortcut(&mut self, shortcut: Shortcut, actions: &mut Vec<Action>, requests: &mut WindowRequests) {
        let view = &mut self.panels.view;
        match shortcut {
            Shortcut::RunPause => {
                let mode = if self.state.running() { RunMode::Paused } else { RunMode::Running };
                actions.push(Action::SetRunMode(mode));
            }
            Shortcut::Step => actions.push(Action::SetRunMode(RunMode::Step)),
            Shortcut::Reset => actions.push(Action::Reset),
            Shortcut::ResetKeepingPins => actions.push(Action::ResetKeepingPins),
            Shortcut::FrameView => requests.reset_view = true,
            Shortcut::ToggleHelp => self.panels.show_help = !self.panels.show_help,
            Shortcut::CloseHelp => self.panels.show_help = false,
            Shortcut::Screenshot => requests.screenshot = true,
            Shortcut::ToggleRecording => requests.toggle_recording = true,
            Shortcut::ToggleSessionRecording => actions.push(Action::ToggleSessionRecording),
            Shortcut::SaveLastMinute => actions.push(Action::SaveLastMinute),
            Shortcut::Faster => self.state.time_scale = (self.state.time_scale * 2.0).min(2.0),
            Shortcut::Slower => self.state.time_scale = (self.state.time_scale * 0.5).max(0.05),
            Shortcut::Wireframe => view.wireframe = !view.wireframe,
            Shortcut::Particles => view.particles = !view.particles,
            Shortcut::HeatMap => {
                view.heat = match view.heat {
                    HeatMode::Off => HeatMode::Strain,
                    HeatMode::Strain => HeatMode::Force,
                    HeatMode::Force => HeatMode::Off,
                }
            }
            Shortcut::Stats => self.panels.toggle_stats(),
            Shortcut::Controls => self.panels.toggle_controls(),
        }
    }

    /// Starts a recording, or stops the current one and reports where it went.
    fn toggle_recording(&mut self) {
        self.state.status = match self.recorder.take() {
            Some(recorder) => match recorder.finish(1.0 / self.state.preset.solver.dt as f64) {
                Ok(summary) => state::Status {
                    text: summary,
                    error: false,
                },
                Err(e) => state::Status {
                    text: format!("recording failed: {e}"),
                    error: true,
                },
            },
            None => match Recorder::start(Path::new("."), unix_seconds()) {
                Ok(recorder) => {
                    self.recorder = Some(recorder);
                    state::Status::default()
                }
                Err(e) => state::Status {
                    text: format!("cannot start recording: {e}"),
                    error: true,
                },
            },
        };
    }

    /// Adds this frame's 3D view to the recording, once per solver frame it ran.
    fn capture_recording(&mut self) {
        let Some(recorder) = self.recorder.as_mut() else { return };
        if self.solver_frames > 0 {
            let (rgba, width) = screen_rgba();
            let Viewport { origin, size } = self.viewport;
            let rect = (origin.x as usize, origin.y as usize, size.x as usize, size.y as usize);
            let view = recorder::crop(&rgba, width, rect);
            recorder.add(size.x as u32, size.y as u32, view, self.solver_frames);
        }
        self.times.recording = Some((recorder.frames(), recorder.folder().display().to_string()));
    }

    /// The settings as they are now (window size, panel layout, the open preset).
    fn current_settings(&self) -> Settings {
        Settings {
            window_width: macroquad::window::screen_width().round() as u32,
            window_height: macroquad::window::screen_height().round() as u32,
            sections: self.panels.sections,
            stats_open: self.panels.stats_open,
            panel_open: self.panels.panel_open,
            // Absolute, so the next run finds it from any working directory.
            last_preset: self.state.source.as_ref().map(|p| p.canonicalize().unwrap_or_else(|_| p.clone())),
        }
    }

    /// Writes the settings file when something in it changed (at most once a second).
    fn save_settings_if_changed(&mut self) {
        let Some(path) = &self.settings_path else { return };
        if self.settings_checked.elapsed().as_secs_f64() < SETTINGS_SAVE_INTERVAL_S {
            return;
        }
        self.settings_checked = Instant::now();
        let now = self.current_settings();
        if now == self.saved_settings {
            return;
        }
        if let Err(e) = now.save(path) {
            self.state.status = state::Status {
                text: format!("cannot save settings to {}: {e}", path.display()),
                error: true,
            };
            self.settings_path = None; // say it once, not every second
        }
        self.saved_settings = now;
    }

    fn reset_view(&mut self) {
        self.framed_scene = Some(self.state.scene_version);
        if let Some(bounds) = render::scene_bounds(&self.state.cloth) {
            self.camera = OrbitCamera::framing(bounds, self.viewport.size.x / self.viewport.size.y);
        }
    }

    /// Runs the solver frames due now (the player's, while a recording plays); returns how
    /// many ran and their wall time in ms.
    fn advance(&mut self, real_dt: f64) -> (u32, f64) {
        if let Some(playback) = &self.state.playback {
            let steps = match (playback.playing, self.args.frames.is_some()) {
                (false, _) => {
                    self.accumulator.clear();
                    0
                }
                (true, true) => 1,
                (true, false) => {
                    let dt = self.state.preset.solver.dt as f64;
                    let cap = clock::step_cap(self.state.cloth.stats().step_ms);
                    self.accumulator.advance(real_dt, self.state.time_scale as f64, dt, cap)
                }
            };
            let started = Instant::now();
            self.state.play(steps);
            return (steps, started.elapsed().as_secs_f64() * 1e3);
        }
        let steps = match (self.state.run_mode, self.args.frames.is_some()) {
            (RunMode::Paused, _) => 0,
            (RunMode::Step, _) => {
                self.state.run_mode = RunMode::Paused;
                1
            }
            // Automation: exactly one solver frame per rendered frame, so runs repeat.
            (RunMode::Running, true) => 1,
            (RunMode::Running, false) => {
                let dt = self.state.preset.solver.dt as f64;
                let cap = clock::step_cap(self.state.cloth.stats().step_ms);
                self.accumulator.advance(real_dt, self.state.time_scale as f64, dt, cap)
            }
        };
        if self.state.run_mode == RunMode::Paused {
            self.accumulator.clear();
        }
        let started = Instant::now();
        for _ in 0..steps {
            self.state.step();
        }
        (steps, started.elapsed().as_secs_f64() * 1e3)
    }

    /// Draws the 3D scene (with the hover ring in pin colour while `ctrl` is held); returns
    /// the cloth mesh time in ms.
    fn draw(&mut self, ctrl: bool) -> f64 {
        clear_background(Color::new(0.93, 0.94, 0.96, 1.0));
        let Viewport { origin, size } = self.viewport;
        // GL viewports count from the bottom-left corner.
        let bottom = macroquad::window::screen_height() - origin.y - size.y;
        let (z_near, z_far) = self.camera.clip_range();
        set_camera(&Camera3D {
            position: self.camera.eye(),
            target: self.camera.target,
            up: glam::Vec3::Y,
            fovy: self.camera.fov_y(),
            aspect: Some(size.x / size.y),
            viewport: Some((origin.x as i32, bottom as i32, size.x as i32, size.y as i32)),
            z_near,
            z_far,
            ..Default::default()
        });
        let substep = self.state.step_params().substep_dt();
        let cloth = &self.state.cloth;
        let highlight = self.mouse.highlighted_collider();
        let upload_ms = self.renderer.draw(&self.state, &self.camera, &self.panels.view, substep, highlight);
        set_default_camera();
        if let Some(collider) = highlight.and_then(|k| cloth.colliders().get(k)) {
            self.renderer.draw_collider_outline(collider, &self.camera, self.viewport);
        }
        if let (Some(held), Some(from)) = (self.mouse.held(), cloth.grabbed_point()) {
            self.renderer.draw_grab(from, held.target, &self.camera, self.viewport);
        }
        // A cloth that tears is grabbed by the point: no patch to show.
        let radius = if cloth.tears() { 0.0 } else { self.state.preset.solver.grab_radius };
        if let Some(hit) = self
            .mouse
            .hovered_point()
            .filter(|h| (h.triangle as usize) < cloth.triangles().len() && radius > 0.0)
        {
            let [a, b, c] = cloth.triangles()[hit.triangle as usize].map(|i| cloth.particles().position(i as usize));
            if let Some(normal) = (b - a).cross(c - a).try_normalize() {
                self.renderer
                    .draw_grab_radius(cloth.point_on(hit), normal, radius, &self.camera, self.viewport);
            }
        }
        if let Some(i) = self.mouse.hovered().filter(|&i| (i as usize) < cloth.particles().len()) {
            let at = cloth.particles().position(i as usize);
            self.renderer.draw_hover(at, ctrl, &self.camera, self.viewport);
        }
        self.renderer
            .draw_cut_trail(&self.mouse.cut_trail(self.started.elapsed().as_secs_f64()));
        egui_macroquad::draw();
        if let Some(error) = self.renderer.appearance_error.take() {
            self.state.report_error(error);
        }
        upload_ms
    }

    fn record(&mut self, real_dt: f64, step_ms: f64, upload_ms: f64, totals: &mut Totals) {
        let smooth = |old: f64, new: f64| if old == 0.0 { new } else { old + SMOOTHING * (new - old) };
        self.times.frame_s = smooth(self.times.frame_s, real_dt);
        self.times.step_ms = smooth(self.times.step_ms, step_ms);
        self.times.upload_ms = smooth(self.times.upload_ms, upload_ms);
        self.times.chunks = self.renderer.chunk_count();
        self.times.real_time = self.real_time;
        self.times.heat_force_max = self.renderer.heat_force_max();
        let stats = self.state.cloth.stats();
        self.times.phases = stats.phases;
        if self.recorder.is_none() {
            self.times.recording = None;
        }
        self.panels
            .record(self.started.elapsed().as_secs_f64(), stats.kinetic_energy, stats.max_strain);
        totals.frames += 1;
        totals.step_ms += step_ms;
        totals.upload_ms += upload_ms;
        // The first frame includes window and shader start-up; time from its end.
        totals.timed_since.get_or_insert_with(Instant::now);
    }

    /// Writes the session recording, if one runs (the window closes or the run ends).
    fn write_session_recording(&mut self) -> anyhow::Result<()> {
        let Some(recording) = self.state.session_recording.take() else {
            return Ok(());
        };
        let path = &recording.path;
        let written = self.state.write_recording(path, recording.since);
        written
            .map(|_| ())
            .map_err(|why| anyhow::anyhow!("recording not saved to {}: {why}", path.display()))
    }

    /// Ends an automated run: screenshot, mesh, recording, then the stats line.
    fn finish(&mut self, totals: &Totals) -> anyhow::Result<()> {
        self.write_session_recording()?;
        let shot = self.args.screenshot.as_deref().map(save_screenshot).transpose()?;
        let cloth = &self.state.cloth;
        if let Some(path) = &self.args.out {
            drape::headless::save_obj(cloth, path).with_context(|| format!("writing {}", path.display()))?;
        }
        let frames = totals.frames.max(1) as f64;
        let timed = totals.timed_since.map_or(0.0, |t| t.elapsed().as_secs_f64());
        let report = RunReport {
            frames: totals.frames,
            cloth: drape::replay::ClothFigures::of(cloth),
            fps: if timed > 0.0 { (totals.frames - 1) as f64 / timed } else { 0.0 },
            step_ms: totals.step_ms / frames,
            upload_ms: totals.upload_ms / frames,
            threads: cloth.threads_used(&self.state.step_params()),
            threads_requested: self.state.step_params().threads,
            cores: drape::sim::available_cores(),
            chunks: self.renderer.chunk_count(),
            screenshot_luma_std: shot.map(|s| s.luma_std),
            screenshot_colours: shot.map(|s| s.colours),
        };
        println!("{}", serde_json::to_string(&report)?);
        Ok(())
    }
}

/// The whole window (before egui has laid out its panels).
fn window_viewport() -> Viewport {
    Viewport {
        origin: glam::Vec2::ZERO,
        size: glam::Vec2::new(macroquad::window::screen_width(), macroquad::window::screen_height()),
    }
}

fn unix_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Saves what has been drawn this frame (scene and panels) as an opaque PNG and returns its
/// content statistics.
fn save_screenshot(path: &Path) -> anyhow::Result<ImageStats> {
    let (rgba, w) = screen_rgba();
    let h = rgba.len() / (4 * w.max(1));
    write_png(path, &rgba, w as u32, h as u32).with_context(|| format!("writing {}", path.display()))?;
    Ok(ImageStats::of(&rgba, w))
}

/// Writes RGBA pixels as a PNG through [`drape::safe_write`] (checked, never half-written).
fn write_png(path: &Path, rgba: &[u8], width: u32, height: u32) -> std::io::Result<()> {
    use image::ImageEncoder as _;
    drape::safe_write::write_atomically(path, |out| {
        image::codecs::png::PngEncoder::new(out)
            .write_image(rgba, width, height, image::ColorType::Rgba8)
            .map_err(std::io::Error::other)
    })
}

/// What has been drawn this frame as opaque RGBA rows top to bottom, and its width.
fn screen_rgba() -> (Vec<u8>, usize) {
    let image = macroquad::texture::get_screen_data();
    let (w, h) = (image.width as usize, image.height as usize);
    // GL rows run bottom-up; the framebuffer's alpha is meaningless for a picture.
    let mut rgba = Vec::with_capacity(w * h * 4);
    for row in image.bytes.chunks_exact(w * 4).rev() {
        for px in row.chunks_exact(4) {
            rgba.extend_from_slice(&[px[0], px[1], px[2], 255]);
        }
    }
    (rgba, w)
}

/// How much is in a picture: a blank frame has zero luminance spread and one colour.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ImageStats {
    /// Standard deviation of the luminance (0–255) over the sampled pixels.
    luma_std: f64,
    /// Distinct RGB colours among the sampled pixels.
    colours: usize,
}

impl ImageStats {
    /// Statistics of every 7th pixel of every 7th row of an RGBA image `width` pixels wide.
    fn of(rgba: &[u8], width: usize) -> Self {
        const STRIDE: usize = 7;
        let samples: Vec<[u8; 3]> = rgba
            .chunks_exact(width * 4)
            .step_by(STRIDE)
            .flat_map(|row| row.chunks_exact(4).step_by(STRIDE).map(|p| [p[0], p[1], p[2]]))
            .collect();
        let luma: Vec<f64> = samples
            .iter()
            .map(|p| 0.3 * p[0] as f64 + 0.59 * p[1] as f64 + 0.11 * p[2] as f64)
            .collect();
        let n = luma.len().max(1) as f64;
        let mean = luma.iter().sum::<f64>() / n;
        let variance = luma.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / n;
        let colours = samples.iter().collect::<std::collections::HashSet<_>>().len();
        Self {
            luma_std: variance.sqrt(),
            colours,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{initial_state, line_scroll_speed, ImageStats, Settings, PANEL_SCROLL_POINTS_PER_NOTCH};
    use crate::AppArgs;

    #[test]
    fn the_last_preset_reopens_unless_a_preset_is_given_or_it_is_an_automated_run() {
        let dir = tempfile::tempdir().unwrap();
        let last = dir.path().join("mine.ron");
        std::fs::write(&last, "(name: \"Mine\", cloth: (columns: 5, rows: 4))").unwrap();
        let settings = Settings {
            last_preset: Some(last.clone()),
            ..Settings::default()
        };
        let state = initial_state(&AppArgs::default(), &settings).unwrap();
        assert_eq!(
            (state.preset.name.as_str(), state.source.as_deref()),
            ("Mine", Some(last.as_path()))
        );
        assert_eq!(state.presets_dir, dir.path(), "the picker lists the last preset's folder");

        let given = AppArgs {
            preset: Some("presets/silk.ron".into()),
            ..AppArgs::default()
        };
        assert_eq!(initial_state(&given, &settings).unwrap().preset.name, "Silk");
        let automated = AppArgs {
            frames: Some(1),
            ..AppArgs::default()
        };
        assert_ne!(initial_state(&automated, &settings).unwrap().preset.name, "Mine");

        std::fs::write(&last, "(cloth: (colums: 5))").unwrap();
        let fallback = initial_state(&AppArgs::default(), &settings).unwrap();
        assert_ne!(fallback.source.as_deref(), Some(last.as_path()), "a broken last preset is skipped");
    }

    /// Issue 19: one wheel notch scrolled the panels by about 0.5 px on X11.
    #[test]
    fn one_wheel_notch_scrolls_the_panels_by_a_few_lines_everywhere() {
        for per_notch in [1.0f32, 120.0, 10.0] {
            // egui-macroquad hands egui wheel / 90 lines; egui scales lines by the speed.
            let points = per_notch / 90.0 * line_scroll_speed(per_notch);
            assert!((points - PANEL_SCROLL_POINTS_PER_NOTCH).abs() < 1e-3, "{per_notch}: {points}");
        }
    }

    #[test]
    fn a_blank_image_has_no_spread_and_one_colour() {
        let blank = [200u8, 210, 220, 255].repeat(70 * 70);
        let stats = ImageStats::of(&blank, 70);
        assert_eq!(stats.colours, 1);
        assert!(stats.luma_std < 1e-9, "{}", stats.luma_std);
    }

    #[test]
    fn half_black_half_white_has_half_range_spread() {
        let width = 70;
        let image: Vec<u8> = (0..width * width)
            .flat_map(|i| {
                if i % width < width / 2 {
                    [0, 0, 0, 255]
                } else {
                    [255, 255, 255, 255]
                }
            })
            .collect();
        let stats = ImageStats::of(&image, width);
        assert_eq!(stats.colours, 2);
        // Sampled columns 0, 7, …, 63: five of ten are black, so the spread is 255 / 2.
        assert!((stats.luma_std - 127.5).abs() < 1e-9, "{}", stats.luma_std);
    }
}
