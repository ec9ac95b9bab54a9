//! The egui panels. Sliders write straight into the live [`Preset`](drape::preset::Preset)
//! solver and material (the engine reads them every step and ramps stiffness changes);
//! everything structural is returned as an [`Action`] for [`super::state::apply`].
//!
//! Layout, from the outside in: the toolbar on top, one fixed-height status line at the
//! bottom, the settings panel on the right (scrolls, sections remember whether they are
//! open), and the Stats panel docked on the left or collapsed to one line above the status
//! line. What is left is the 3D view, so no panel ever covers the scene, and nothing in the
//! panels changes its size when a value, a label or a status message changes.

use std::collections::VecDeque;

use egui_macroquad::egui::{self, Color32, RichText, Ui};
use egui_plot::{Line, Plot, PlotPoints};

use super::clock::RealTimeRatio;
use super::param_widgets::{param_widget, with_tooltip};
use super::render::{heat_color, HeatMode, ViewOptions};
use super::settings::Sections;
use super::state::{list_recordings, Action, AppState, GridSize, Playback, RunMode};
use super::widgets::{axis_label, si};
use drape::scene::{MeshSpec, SceneObject};
use drape::sim::param_table::{self, Param};
use drape::sim::pressure::MAX_PRESSURE_FACTOR;
use drape::sim::PhaseTimes;

/// Every binding, shown in the help overlay (and mirrored in the README's Controls section).
pub const CONTROLS: &[(&str, &str)] = &[
    (
        "Left-drag on cloth",
        "grab a patch of cloth there (grab radius) and pull it toward the cursor, as far as the cloth reaches; release to throw it with the mouse velocity",
    ),
    (
        "Shift held on release",
        "pin the grabbed particle (the hit triangle's nearest corner) where it is",
    ),
    (
        "Left-drag on a collider",
        "move it (where no cloth is under the cursor; it lights up): it pushes and carries the cloth",
    ),
    ("Ctrl + left-click", "pin / unpin the particle under the cursor"),
    ("Right-drag", "cut every edge the stroke crosses"),
    ("Left-drag on background  or  middle-drag  or  Alt + left-drag", "orbit the camera"),
    ("Shift + any of those", "pan the camera"),
    ("Mouse wheel", "zoom toward the point under the cursor"),
    ("F", "reset the view (frame the scene)"),
    ("Space", "run / pause"),
    ("N  or  Right arrow", "advance one frame (pauses)"),
    ("R", "reset the scene (pins you added are removed; the status line says so)"),
    ("Shift + R", "reset the scene keeping the pins as they are now"),
    ("+ / −", "time scale ×2 / ÷2 (slow motion)"),
    ("W / P / M", "wireframe / particles / heat map (off, strain, force)"),
    ("S", "Stats panel open / one line"),
    ("C", "controls panel open / a strip at the right edge"),
    ("F9", "start / stop recording PNG frames of the view, one per solver frame (drape-rec-<time>/; an .mp4 too with ffmpeg)"),
    ("F8", "start / stop recording the session (recordings/*.drec: replays bit for bit, exports to USD)"),
    ("F7", "save the last 60 s of the session as a recording"),
    ("Ctrl + Z  /  Ctrl + Shift + Z", "undo / redo (grabs, cuts, pins, collider drags, settings edits, loads, resets)"),
    ("F12", "save a screenshot (drape-<time>.png in the working directory)"),
    ("H  or  F1", "show / hide this help"),
];

/// The one-line reminder at the bottom of the window.
pub const HINT: &str = "Left-drag: grab (collider: move, background: orbit) · Ctrl+click: pin · Right-drag: cut · Shift-drag: pan · Wheel: zoom · Space: run/pause · R: reset · Ctrl+Z: undo · F8: record session · H: help";

/// Seconds of history in the stats plots.
const HISTORY_SECONDS: f64 = 10.0;
/// Smallest energy span of the energy plot in J, so 1e-8 J of rest noise draws flat.
const ENERGY_PLOT_FLOOR_J: f64 = 1e-3;
/// Smallest span of the strain plot in %.
const STRAIN_PLOT_FLOOR_PERCENT: f64 = 1.0;
/// Height of the status line in points (fixed: a message never moves the view).
const STATUS_HEIGHT: f32 = 24.0;
/// Width of the docked Stats panel in points.
const STATS_WIDTH: f32 = 270.0;
/// Width of the open controls panel until the user drags it, in points.
const CONTROLS_WIDTH: f32 = 340.0;
/// Width of the side panel collapsed to a strip, in points.
const STRIP_WIDTH: f32 = 28.0;
/// Least share of the window's width the 3D view keeps when the Stats panel docks.
const MIN_VIEW_SHARE: f32 = 0.6;

/// Timing and other per-frame facts measured by the loop, shown in the panels.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameTimes {
    /// Seconds per rendered frame (smoothed); fps is its inverse.
    pub frame_s: f64,
    /// Solver milliseconds per frame (smoothed).
    pub step_ms: f64,
    /// Milliseconds building and submitting the cloth meshes (smoothed).
    pub upload_ms: f64,
    /// The last step's phases in ms.
    pub phases: PhaseTimes,
    /// Cloth draw chunks.
    pub chunks: usize,
    /// Simulated seconds per real second.
    pub real_time: RealTimeRatio,
    /// The force that shows as full red in the force heat map, in N.
    pub heat_force_max: f32,
    /// Frames recorded so far and the folder, while recording.
    pub recording: Option<(u32, String)>,
}

/// Requests that concern the window rather than the scene.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowRequests {
    /// Re-frame the camera on the scene.
    pub reset_view: bool,
    /// Save a screenshot after this frame.
    pub screenshot: bool,
    /// Start or stop recording frames.
    pub toggle_recording: bool,
}

/// UI-only state: edit buffers, the help toggle, the panel layout and the plot history.
pub struct Panels {
    /// Help overlay visible.
    pub show_help: bool,
    /// View switches.
    pub view: ViewOptions,
    /// Which side-panel sections are open (remembered in the settings file).
    pub sections: Sections,
    /// Stats docked open (false: one line).
    pub stats_open: bool,
    /// The side panel of controls open (false: a narrow strip).
    pub panel_open: bool,
    /// The Stats panel was opened (S, ▶ Stats) while the controls were hidden and it would not
    /// fit beside them: it docks until the controls are shown again.
    stats_called_up: bool,
    /// Whether the Stats panel docked in the last frame.
    stats_docked: bool,
    /// Width of the open controls panel in the last frame it was open, in points.
    controls_width: f32,
    save_name: String,
    save_description: String,
    grid: Option<GridSize>,
    grid_scene: Option<u64>,
    history: VecDeque<[f64; 3]>,
}

/// Where the Stats panel has room. Docked, it must leave the view [`MIN_VIEW_SHARE`] of the
/// window; it docks on its own only where it would also fit beside the open controls, so
/// showing or hiding the controls never makes it appear or go and hidden controls give the
/// view the whole width (less the strip). Called up while the controls are hidden (S,
/// ▶ Stats), it docks wherever it fits now.
#[derive(Debug, Clone, Copy, PartialEq)]
struct StatsLayout {
    /// It fits beside the controls as they are now.
    fits_now: bool,
    /// It fits beside the controls when they are open.
    fits_beside_controls: bool,
}

impl StatsLayout {
    /// The layout of a `window` points wide whose controls take `controls_now` points now and
    /// `controls_open` when open.
    fn of(window: f32, controls_now: f32, controls_open: f32) -> Self {
        let fits = |controls: f32| window - controls - STATS_WIDTH >= MIN_VIEW_SHARE * window;
        Self {
            fits_now: fits(controls_now),
            fits_beside_controls: fits(controls_open),
        }
    }

    /// Whether a Stats panel the user keeps open docks.
    fn docks(&self, called_up: bool) -> bool {
        self.fits_now && (self.fits_beside_controls || called_up)
    }
}

impl Panels {
    /// Fresh panels for `state`.
    pub fn new(state: &AppState) -> Self {
        Self {
            show_help: false,
            view: ViewOptions::default(),
            sections: Sections::default(),
            stats_open: true,
            panel_open: true,
            stats_called_up: false,
            stats_docked: false,
            controls_width: CONTROLS_WIDTH,
            save_name: String::new(),
            save_description: String::new(),
            grid: state.grid_size(),
            grid_scene: None,
            history: VecDeque::new(),
        }
    }

    /// Appends one sample (time in s, kinetic energy, max strain) and forgets old ones.
    pub fn record(&mut self, time: f64, energy: f64, max_strain: f32) {
        self.history.push_back([time, energy, max_strain as f64]);
        while self.history.front().is_some_and(|s| time - s[0] > HISTORY_SECONDS) {
            self.history.pop_front();
        }
    }

    /// Shows or hides the controls (C, the panel's buttons). The Stats panel keeps its place:
    /// one called up while they were hidden goes back to one line with them.
    pub fn toggle_controls(&mut self) {
        self.panel_open = !self.panel_open;
        self.stats_called_up = false;
    }

    /// Docks the Stats panel, or collapses it to one line when docked (S, the Stats buttons).
    pub fn toggle_stats(&mut self) {
        if self.stats_docked {
            self.stats_open = false;
        } else {
            self.stats_open = true;
            self.stats_called_up = !self.panel_open;
        }
    }

    /// Lays out every panel; returns the actions the user asked for.
    pub fn show(&mut self, ctx: &egui::Context, state: &mut AppState, times: &FrameTimes, requests: &mut WindowRequests) -> Vec<Action> {
        if self.grid_scene != Some(state.scene_version) {
            // A new scene (load, reset, resize): reload the edit buffers, restart the plots.
            self.grid_scene = Some(state.scene_version);
            self.grid = state.grid_size();
            self.history.clear();
            self.save_name = state
                .source
                .as_ref()
                .and_then(|p| p.file_stem())
                .map_or_else(|| "my-scene".to_string(), |s| s.to_string_lossy().into_owned());
            self.save_description = state.preset.description.clone();
        }
        let mut actions = Vec::new();
        egui::TopBottomPanel::top("run").show(ctx, |ui| self.run_bar(ui, state, times, requests, &mut actions));
        egui::TopBottomPanel::bottom("status")
            .exact_height(STATUS_HEIGHT)
            .show(ctx, |ui| status_bar(ui, state, times));
        if let Some(playback) = &state.playback {
            egui::TopBottomPanel::bottom("player").show(ctx, |ui| player_bar(ui, playback, &mut actions));
        }
        let side_width = if self.panel_open {
            let panel = egui::SidePanel::right("panels").default_width(CONTROLS_WIDTH).min_width(300.0);
            let width = panel
                .show(ctx, |ui| {
                    if ui
                        .small_button("Hide ▶")
                        .on_hover_text("Collapse the controls to a strip, giving the view the room (C)")
                        .clicked()
                    {
                        self.toggle_controls();
                    }
                    self.side_panel(ui, state, &mut actions);
                })
                .response
                .rect
                .width();
            self.controls_width = width;
            width
        } else {
            let strip = egui::SidePanel::right("panels-strip").exact_width(STRIP_WIDTH).resizable(false);
            strip.show(ctx, |ui| {
                if ui.small_button("◀").on_hover_text("Show the controls (C)").clicked() {
                    self.toggle_controls();
                }
            });
            STRIP_WIDTH
        };
        let layout = StatsLayout::of(ctx.screen_rect().width(), side_width, self.controls_width);
        self.stats_docked = self.stats_open && layout.docks(self.stats_called_up);
        if self.stats_docked {
            self.stats_docked(ctx, state, times);
        } else {
            self.stats_line(ctx, state, times, layout.fits_now);
        }
        if self.view.heat != HeatMode::Off {
            heat_legend(ctx, &self.view, times.heat_force_max);
        }
        egui::Window::new("Controls")
            .open(&mut self.show_help)
            .collapsible(false)
            .resizable(false)
            .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
            .show(ctx, help_grid);
        actions
    }

    /// The side panel's sections.
    fn side_panel(&mut self, ui: &mut Ui, state: &mut AppState, actions: &mut Vec<Action>) {
        egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            let s = &mut self.sections;
            section(ui, "Solver", &mut s.solver, |ui| solver_panel(ui, state));
            section(ui, "Wind & limits", &mut s.air, |ui| air_panel(ui, state));
            section(ui, "Material", &mut s.material, |ui| material_panel(ui, state));
            let mut scene_open = s.scene;
            section(ui, "Scene", &mut scene_open, |ui| self.scene_panel(ui, state, actions));
            self.sections.scene = scene_open;
            section(ui, "View", &mut self.sections.view, |ui| view_panel(ui, &mut self.view));
            ui.add_space(8.0);
        });
    }

    /// The Stats panel docked on the left.
    fn stats_docked(&mut self, ctx: &egui::Context, state: &AppState, times: &FrameTimes) {
        egui::SidePanel::left("stats")
            .exact_width(STATS_WIDTH)
            .resizable(false)
            .show(ctx, |ui| {
                egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
                    if ui
                        .button("◀ Stats")
                        .on_hover_text("Collapse the Stats panel to one line (S)")
                        .clicked()
                    {
                        self.toggle_stats();
                    }
                    self.stats_panel(ui, state, times);
                });
            });
    }

    /// The Stats panel as one line at the bottom (collapsed, or no room to dock it).
    fn stats_line(&mut self, ctx: &egui::Context, state: &AppState, times: &FrameTimes, fits: bool) {
        egui::TopBottomPanel::bottom("stats-line").show(ctx, |ui| {
            ui.horizontal(|ui| {
                let tip = if fits {
                    "Open the Stats panel (S)"
                } else {
                    "The window is too narrow to dock the Stats panel beside the controls: widen it or hide the controls (C)"
                };
                if ui
                    .add_enabled(fits, egui::Button::new("▶ Stats"))
                    .on_hover_text(tip)
                    .on_disabled_hover_text(tip)
                    .clicked()
                {
                    self.toggle_stats();
                }
                ui.label(compact_stats(state, times));
            });
        });
    }

    fn run_bar(&mut self, ui: &mut Ui, state: &mut AppState, times: &FrameTimes, requests: &mut WindowRequests, actions: &mut Vec<Action>) {
        ui.horizontal_wrapped(|ui| {
            // Wrapped: in a narrow window the buttons that do not fit go to a second row.
            // Fixed sizes: labels that change (Run/Pause, the real-time reading) never push
            // the buttons after them around.
            let running = state.running();
            let (label, mode) = if running {
                ("⏸ Pause", RunMode::Paused)
            } else {
                ("▶ Run", RunMode::Running)
            };
            let button = |ui: &mut Ui, text: &str, width: f32| ui.add_sized([width, 20.0], egui::Button::new(text));
            if button(ui, label, 70.0)
                .on_hover_text("Run or pause the simulation (Space)")
                .clicked()
            {
                actions.push(Action::SetRunMode(mode));
            }
            if button(ui, "⏭ Step", 60.0)
                .on_hover_text("Advance exactly one frame of Δt, then pause (N)")
                .clicked()
            {
                actions.push(Action::SetRunMode(RunMode::Step));
            }
            if button(ui, "⟲ Reset", 64.0)
                .on_hover_text(
                    "Rebuild the cloth from the scene, keeping the edited settings (R). Pins you added are removed; Shift+R keeps them",
                )
                .clicked()
            {
                actions.push(Action::Reset);
            }
            let steps = [
                ("Undo", state.history.undo_label(), "Ctrl+Z", Action::Undo),
                ("Redo", state.history.redo_label(), "Ctrl+Shift+Z", Action::Redo),
            ];
            for (verb, step, keys, action) in steps {
                let tip = step.map_or_else(
                    || format!("Nothing to {}", verb.to_lowercase()),
                    |l| format!("{verb} the {l} ({keys})"),
                );
                if ui
                    .add_enabled(step.is_some(), egui::Button::new(verb))
                    .on_hover_text(&tip)
                    .on_disabled_hover_text(&tip)
                    .clicked()
                {
                    actions.push(action);
                }
            }
            ui.separator();
            ui.add(
                egui::Slider::new(&mut state.time_scale, 0.05..=2.0)
                    .logarithmic(true)
                    .text("time scale")
                    .custom_formatter(|v, _| format!("{v:.2}×")),
            )
            .on_hover_text("Simulated seconds per real second you ask for; below 1 is slow motion (+ / −)");
            real_time_label(ui, state, times);
            ui.separator();
            if button(ui, "🎥 View", 64.0)
                .on_hover_text("Frame the cloth and colliders (F)")
                .clicked()
            {
                requests.reset_view = true;
            }
            if button(ui, "📷", 28.0).on_hover_text("Save a screenshot (F12)").clicked() {
                requests.screenshot = true;
            }
            let rec = if times.recording.is_some() { "⏹ Stop" } else { "⏺ Rec" };
            if button(ui, rec, 60.0)
                .on_hover_text("Record the 3D view as numbered PNG frames in a new drape-rec-<time> folder (F9)")
                .clicked()
            {
                requests.toggle_recording = true;
            }
            let session = if state.session_recording.is_some() {
                "⏹ Session"
            } else {
                "⏺ Session"
            };
            if button(ui, session, 76.0)
                .on_hover_text(
                    "Record the session: every grab, cut, pin and setting, replayable bit for bit \
                     (drape replay FILE) and exportable to USD, saved in recordings/ (F8)",
                )
                .clicked()
            {
                actions.push(Action::ToggleSessionRecording);
            }
            if button(ui, "⏪ 60 s", 56.0)
                .on_hover_text("Save the last 60 s of the session as a recording in recordings/ (F7)")
                .clicked()
            {
                actions.push(Action::SaveLastMinute);
            }
            if button(ui, "❓ Help", 60.0).on_hover_text("List every control (H or F1)").clicked() {
                self.show_help = !self.show_help;
            }
            ui.separator();
            // Whole, never broken across the toolbar's rows.
            ui.add(egui::Label::new(RichText::new(&state.preset.name).strong()).extend())
                .on_hover_text(&state.preset.description);
        });
    }

    fn scene_panel(&mut self, ui: &mut Ui, state: &AppState, actions: &mut Vec<Action>) {
        recordings_picker(ui, state, actions);
        ui.horizontal(|ui| {
            let current = if state.source.is_some() {
                state.preset.name.clone()
            } else {
                "(built-in default)".to_string()
            };
            egui::ComboBox::from_id_salt("preset")
                .selected_text(current)
                .width(190.0)
                .show_ui(ui, |ui| {
                    for entry in &state.presets {
                        let selected = state.source.as_ref() == Some(&entry.path);
                        let text = if entry.is_broken() {
                            RichText::new(entry.label()).color(Color32::from_rgb(235, 80, 70))
                        } else {
                            RichText::new(entry.label())
                        };
                        if ui.selectable_label(selected, text).on_hover_text(&entry.summary).clicked() {
                            actions.push(Action::Load(entry.path.clone()));
                        }
                    }
                })
                .response
                .on_hover_text(format!("Open a preset from {}", state.presets_dir.display()));
            if ui.button("⟳").on_hover_text("Re-read the presets directory").clicked() {
                actions.push(Action::RefreshPresets);
            }
            if ui
                .button("Reset")
                .on_hover_text("Rebuild the cloth from the scene (R); Shift+R keeps the pins you added")
                .clicked()
            {
                actions.push(Action::Reset);
            }
        });
        egui::Grid::new("save").num_columns(2).show(ui, |ui| {
            ui.label("Save as")
                .on_hover_text("Write the scene (with the current settings and pins) as a preset");
            ui.horizontal(|ui| {
                ui.add(egui::TextEdit::singleline(&mut self.save_name).desired_width(150.0))
                    .on_hover_text(format!("File name without .ron, saved in {}", state.presets_dir.display()));
                if ui
                    .button("💾 Save")
                    .on_hover_text("Refuses to replace an existing file unless you confirm")
                    .clicked()
                {
                    actions.push(Action::SaveAs {
                        name: self.save_name.clone(),
                        description: self.save_description.clone(),
                        overwrite: false,
                    });
                }
            });
            ui.end_row();
            ui.label("Description").on_hover_text("Saved with the preset; shown in the picker");
            ui.add(egui::TextEdit::singleline(&mut self.save_description).desired_width(210.0));
            ui.end_row();
        });
        // Always laid out (empty when nothing waits), so the grid below never moves.
        ui.horizontal(|ui| {
            ui.set_min_height(22.0);
            if let Some(name) = state.pending_overwrite.clone() {
                ui.label(RichText::new(format!("{name}.ron exists.")).color(Color32::from_rgb(230, 160, 40)));
                if ui.button("Overwrite").clicked() {
                    actions.push(Action::SaveAs {
                        name,
                        description: self.save_description.clone(),
                        overwrite: true,
                    });
                }
            }
        });
        self.objects_list(ui, state, actions);
        let Some(grid) = self.grid.as_mut() else {
            return;
        };
        egui::Grid::new("grid").num_columns(2).show(ui, |ui| {
            size_field(ui, "columns", "Columns", &mut grid.columns, 1.0, "");
            size_field(ui, "rows", "Rows", &mut grid.rows, 1.0, "");
            size_field(ui, "width", "Width", &mut grid.width, 0.01, " m");
            size_field(ui, "height", "Height", &mut grid.height, 0.01, " m");
        });
        let changed = Some(*grid) != state.grid_size();
        if ui
            .add_enabled(changed, egui::Button::new("Apply size"))
            .on_hover_text("Rebuild the cloth with this resolution and size (restarts it)")
            .clicked()
        {
            actions.push(Action::ApplyGrid(*grid));
        }
    }

    /// One line per cloth of the scene (what it is), with a pressure control for inflated
    /// meshes.
    fn objects_list(&self, ui: &mut Ui, state: &AppState, actions: &mut Vec<Action>) {
        let objects = state.preset.objects();
        ui.label(format!("Objects ({})", objects.len())).on_hover_text(
            "The cloths of the scene; they share the solver settings, and each has its own material or the scene's. \
             Click one to edit its material in the Material panel",
        );
        for (k, object) in objects.iter().enumerate() {
            let own = if object.material().is_some() { " · own material" } else { "" };
            let text = match object {
                SceneObject::Grid(grid) => format!(
                    "{k}: grid {} × {}, {:.2} × {:.2} m{own}",
                    grid.columns, grid.rows, grid.width, grid.height
                ),
                SceneObject::Mesh(mesh) => format!("{k}: mesh {} × {}{own}", mesh.file.display(), mesh.scale),
            };
            if objects.len() > 1 {
                let selected = state.selected_object == k;
                if ui.selectable_label(selected, RichText::new(text).small()).clicked() {
                    actions.push(Action::SelectObject(k));
                }
            } else {
                ui.label(RichText::new(text).small());
            }
            if let SceneObject::Mesh(MeshSpec {
                pressure: Some(factor), ..
            }) = object
            {
                let mut edited = *factor;
                let slider = egui::Slider::new(&mut edited, 0.0..=MAX_PRESSURE_FACTOR).text("pressure ×");
                let response = ui
                    .add(slider)
                    .on_hover_text("Pressure factor k: the closed mesh is held at k times its volume as built (0 sucks it flat)");
                if response.changed() {
                    actions.push(Action::SetPressure { object: k, factor: edited });
                }
            }
        }
    }

    fn stats_panel(&self, ui: &mut Ui, state: &AppState, times: &FrameTimes) {
        let stats = state.cloth.stats();
        egui::Grid::new("stats").num_columns(2).show(ui, |ui| {
            let mut row = |name: &str, value: String, tip: &str| {
                ui.label(name).on_hover_text(tip);
                ui.label(value);
                ui.end_row();
            };
            let fps = if times.frame_s > 0.0 { 1.0 / times.frame_s } else { 0.0 };
            row("fps", format!("{fps:.0}"), "Rendered frames per second");
            let threads = threads_label(state.step_params().threads, stats.threads, drape::sim::available_cores());
            row("step", format!("{:.2} ms · {threads}", times.step_ms), THREADS_TIP);
            row(
                "mesh",
                format!("{:.2} ms · {} chunk(s)", times.upload_ms, times.chunks),
                "Building and uploading the cloth mesh per frame",
            );
            row("particles", state.cloth.particles().len().to_string(), "Simulated particles");
            row("pinned", state.cloth.pinned_count().to_string(), "Pinned particles");
            row(
                "constraints",
                stats.constraints.to_string(),
                "Distance constraints + bending hinges",
            );
            row(
                "max strain",
                format!("{:.2} %", stats.max_strain * 100.0),
                "How much the most stretched edge is longer than at rest",
            );
            row(
                "mean strain",
                format!("{:.3} %", stats.mean_strain * 100.0),
                "Average stretch of the edges",
            );
            row("max tension", format!("{:.3} N", stats.max_tension), "Pull on the most loaded edge");
            row(
                "kinetic energy",
                si(stats.kinetic_energy, "J"),
                "Energy of motion ½ Σ m v² of the free particles",
            );
            row(
                "torn edges",
                stats.torn_edges.to_string(),
                "Edges torn by strain or cut with the right mouse button since the last reset",
            );
            row("pieces", state.pieces().to_string(), "Connected pieces of cloth");
            row(
                "self-contacts",
                format!("{} · {:.2} ms", stats.self_contacts, stats.phases.self_contacts_ms),
                "Pairs of particles of the cloth touching each other in the last step, and the time spent finding and solving them (0 while self-collision is off)",
            );
            for (k, body) in state.cloth.pressure_volumes().iter().enumerate() {
                let value = match body.closed {
                    true => format!("{:.1} / {:.1} L · {:.0} Pa", body.volume * 1e3, body.target * 1e3, body.gauge_pressure),
                    false => "punctured".to_string(),
                };
                row(
                    &format!("pressure {k}"),
                    value,
                    "A closed mesh's volume now and the volume it is held at (litres), and the gauge pressure inside",
                );
            }
            fold_row(ui, state);
        });
        phase_rows(ui, &times.phases, times.upload_ms);
        self.plot(ui, "energy", "kinetic energy (J)", 1, ENERGY_PLOT_FLOOR_J);
        self.plot(ui, "strain", "max strain (%)", 2, STRAIN_PLOT_FLOOR_PERCENT);
    }

    fn plot(&self, ui: &mut Ui, id: &str, name: &str, column: usize, floor: f64) {
        let scale = if column == 2 { 100.0 } else { 1.0 };
        ui.label(name);
        let points: Vec<[f64; 2]> = match self.history.back() {
            Some(&[latest, ..]) => self.history.iter().map(|s| [s[0] - latest, s[column] * scale]).collect(),
            None => Vec::new(),
        };
        Plot::new(id)
            .height(70.0)
            .width(ui.available_width())
            .allow_drag(false)
            .allow_zoom(false)
            .allow_scroll(false)
            .allow_boxed_zoom(false)
            .show_x(false)
            .include_y(0.0)
            .include_y(floor)
            .include_x(-HISTORY_SECONDS)
            .include_x(0.0)
            .y_axis_min_width(34.0)
            .y_axis_formatter(|mark, _| axis_label(mark.value))
            .x_axis_formatter(|mark, _| format!("{:.0} s", mark.value))
            .show(ui, |plot| plot.line(Line::new(PlotPoints::from(points)).name(name)));
    }
}

/// The "folds" row: the mesh spacing against the scene material's bending length, with a
/// warning when the mesh is too coarse to form that material's folds (docs/materials.md).
fn fold_row(ui: &mut Ui, state: &AppState) {
    let Some(fold) = fold_resolution(state) else {
        return;
    };
    let text = format!("{:.1} cm cells · c {:.1} cm", fold.spacing * 100.0, fold.bending_length * 100.0);
    let (value, tip) = if fold.resolves_folds() {
        (
            RichText::new(text),
            "Mesh spacing against the material's bending length c = (D/(ρ_A g))^(1/3): at most 0.8 c resolves its folds".to_string(),
        )
    } else {
        (
            RichText::new(format!("⚠ {text}")).color(Color32::from_rgb(240, 160, 40)),
            format!(
                "Mesh too coarse for this material's folds: cells of {:.1} cm against a bending length of {:.1} cm. \
                 Folds are a few bending lengths across; at most 0.8 c ({:.1} cm) per cell tells silk from denim \
                 (more columns and rows, and more substeps for the finer hinges)",
                fold.spacing * 100.0,
                fold.bending_length * 100.0,
                drape::calibrate::MAX_SPACING_PER_BENDING_LENGTH * fold.bending_length * 100.0
            ),
        )
    };
    ui.label("folds").on_hover_text(&tip);
    ui.label(value).on_hover_text(tip);
    ui.end_row();
}

/// "0.98× real time", orange with a warning when the solver cannot keep up.
fn real_time_label(ui: &mut Ui, state: &AppState, times: &FrameTimes) {
    let scale = state.time_scale as f64;
    let paused = !state.running();
    let text = if paused {
        "paused".to_string()
    } else {
        times.real_time.label(scale)
    };
    let behind = !paused && times.real_time.behind(scale);
    let text = if behind {
        RichText::new(format!("⚠ {text}")).color(Color32::from_rgb(240, 160, 40))
    } else {
        RichText::new(text)
    };
    let tip = if behind {
        format!(
            "The solver needs {:.1} ms per frame of {:.1} ms, so the simulation runs slower than asked: \
             lower the resolution or the substeps to catch up",
            state.cloth.stats().step_ms,
            state.preset.solver.dt * 1e3
        )
    } else {
        "Simulated seconds per real second actually reached".to_string()
    };
    ui.add_sized([190.0, 20.0], egui::Label::new(text)).on_hover_text(tip);
}

/// The collapsed Stats panel: the numbers a user watches most, on one line.
fn compact_stats(state: &AppState, times: &FrameTimes) -> String {
    let stats = state.cloth.stats();
    let fps = if times.frame_s > 0.0 { 1.0 / times.frame_s } else { 0.0 };
    let coarse = fold_resolution(state).is_some_and(|fold| !fold.resolves_folds());
    format!(
        "fps {fps:.0} · step {:.1} ms · {} particles · max strain {:.1} % · {} torn · {} piece(s){}",
        times.step_ms,
        state.cloth.particles().len(),
        stats.max_strain * 100.0,
        stats.torn_edges,
        state.pieces(),
        if coarse {
            " · ⚠ mesh too coarse for this material's folds"
        } else {
            ""
        }
    )
}

/// The cloth's mesh spacing against the scene material's bending length.
fn fold_resolution(state: &AppState) -> Option<drape::calibrate::FoldResolution> {
    let gravity = state.preset.solver.gravity.length();
    let spacing = state.mesh_spacing()?;
    Some(drape::calibrate::FoldResolution::new(spacing, &state.preset.material, gravity))
}

/// The per-phase row: where the last step's time went.
/// The part of a frame that costs the most: its name, its share of the frame (step and mesh
/// upload), and what lowers it; None for a frame that took no time.
fn slowest_part(phases: &PhaseTimes, upload_ms: f64) -> Option<(&'static str, f64, &'static str)> {
    let resolution = "lower the resolution or the substeps";
    let parts = [
        (
            "self-contacts",
            phases.self_contacts_ms,
            "raise the self thickness, or lower the resolution",
        ),
        ("distance constraints", phases.distances_ms, resolution),
        ("bending", phases.hinges_ms, resolution),
        ("collisions and tethers", phases.contacts_ms, resolution),
        ("tearing", phases.tearing_ms, "lower the tear splits per step"),
        ("moving particles", phases.predict_ms, resolution),
        ("the mesh upload", upload_ms, "lower the resolution"),
    ];
    let total: f64 = parts.iter().map(|p| p.1).sum();
    let (name, ms, advice) = parts.into_iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    (total > 0.0).then(|| (name, ms / total, advice))
}

/// The status bar's cue while the scene runs behind real time: what takes most of the frame.
fn behind_cue(ui: &mut Ui, state: &AppState, times: &FrameTimes) {
    let scale = state.time_scale as f64;
    if !state.running() || !times.real_time.behind(scale) {
        return;
    }
    let Some((part, share, advice)) = slowest_part(&times.phases, times.upload_ms) else {
        return;
    };
    let frame_ms = state.cloth.stats().step_ms + times.upload_ms;
    ui.label(RichText::new(format!("⚠ behind: {part} {:.0} %", share * 100.0)).color(Color32::from_rgb(240, 160, 40)))
        .on_hover_text(format!(
            "The scene runs slower than real time: {part} take {:.0} % of the {frame_ms:.1} ms a frame costs; {advice}",
            share * 100.0
        ));
    ui.separator();
}

fn phase_rows(ui: &mut Ui, phases: &PhaseTimes, upload_ms: f64) {
    ui.label("time per phase (ms)")
        .on_hover_text("Where the last step's wall time went, and the mesh upload of the last frame");
    egui::Grid::new("phases").num_columns(2).show(ui, |ui| {
        let cells = [
            (
                "predict",
                phases.predict_ms,
                "Gravity, damping and moving particles by their velocity",
            ),
            ("distances", phases.distances_ms, "Stretch and shear constraints"),
            ("hinges", phases.hinges_ms, "Bending constraints"),
            ("contacts", phases.contacts_ms, "Collisions with the ground and colliders"),
            ("tearing", phases.tearing_ms, "Checking for and splitting over-stretched edges"),
            ("mesh", upload_ms, "Building and uploading the cloth mesh"),
        ];
        for (k, (name, ms, tip)) in cells.into_iter().enumerate() {
            ui.label(format!("{name} {ms:.2}")).on_hover_text(tip);
            if k % 2 == 1 {
                ui.end_row();
            }
        }
    });
}

/// The player's bar: play / pause / step, a frame slider that scrubs, take over and close.
fn player_bar(ui: &mut Ui, playback: &Playback, actions: &mut Vec<Action>) {
    let replay = &playback.replay;
    let (frame, frames) = (replay.frame(), replay.recording().frames);
    let seconds = |f: u32| f as f32 * replay.preset().solver.dt;
    ui.horizontal(|ui| {
        ui.label(RichText::new("PLAYER").strong().color(Color32::from_rgb(90, 160, 235)))
            .on_hover_text(format!(
                "{}: {} inputs; the mouse moves the camera only",
                playback.path.display(),
                replay.recording().events.len()
            ));
        if ui.button("⏮").on_hover_text("Back to the start (R)").clicked() {
            actions.push(Action::Seek(0));
        }
        let (label, mode) = if playback.playing {
            ("⏸ Pause", RunMode::Paused)
        } else {
            ("▶ Play", RunMode::Running)
        };
        if ui
            .add_sized([70.0, 20.0], egui::Button::new(label))
            .on_hover_text("Space")
            .clicked()
        {
            actions.push(Action::SetRunMode(mode));
        }
        if ui.button("⏭ Step").on_hover_text("One frame (N)").clicked() {
            actions.push(Action::SetRunMode(RunMode::Step));
        }
        let mut shown = frame;
        ui.spacing_mut().slider_width = (ui.available_width() - 330.0).max(120.0);
        let slider = ui.add(egui::Slider::new(&mut shown, 0..=frames).text("frame"));
        if slider.on_hover_text("Drag to scrub back and forth").changed() {
            actions.push(Action::Seek(shown));
        }
        match playback.seeking_to {
            Some(target) => ui.label(RichText::new(format!("seeking {frame} → {target}")).color(Color32::from_rgb(235, 170, 60))),
            None => ui.label(format!("{:.2} / {:.2} s", seconds(frame), seconds(frames))),
        };
        if ui
            .button("✋ Take over")
            .on_hover_text("Continue by hand from this frame (a recording started then replays from the recording's start)")
            .clicked()
        {
            actions.push(Action::TakeOver);
        }
    });
}

/// The recordings in the recordings folder, newest first, each opening in the player.
fn recordings_picker(ui: &mut Ui, state: &AppState, actions: &mut Vec<Action>) {
    ui.horizontal(|ui| {
        let shown = state
            .playback
            .as_ref()
            .and_then(|p| p.path.file_name())
            .map_or_else(|| "open a recording…".to_string(), |n| n.to_string_lossy().into_owned());
        egui::ComboBox::from_id_salt("recording")
            .selected_text(shown)
            .width(250.0)
            .show_ui(ui, |ui| {
                let found = list_recordings(&state.recordings_dir);
                if found.is_empty() {
                    ui.label(format!("no recordings in {} yet (F8 records)", state.recordings_dir.display()));
                }
                for path in found {
                    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    if ui.selectable_label(false, name).clicked() {
                        actions.push(Action::OpenRecording(path));
                    }
                }
            })
            .response
            .on_hover_text(format!("Play a session recording from {}", state.recordings_dir.display()));
    });
}

/// A collapsible section whose open state lives in `open` (and so in the settings file).
fn section(ui: &mut Ui, title: &str, open: &mut bool, body: impl FnOnce(&mut Ui)) {
    let response = egui::CollapsingHeader::new(title).open(Some(*open)).show(ui, body);
    if response.header_response.clicked() {
        *open = !*open;
    }
}

fn status_bar(ui: &mut Ui, state: &AppState, times: &FrameTimes) {
    ui.horizontal_centered(|ui| {
        if let Some(recording) = &state.session_recording {
            let frames = state.log.frame().saturating_sub(recording.since);
            ui.label(RichText::new(format!("● SESSION {frames} frames")).color(Color32::from_rgb(235, 80, 70)))
                .on_hover_text(format!("Recording to {} (F8 stops)", recording.path.display()));
            ui.separator();
        }
        behind_cue(ui, state, times);
        if let Some((frames, folder)) = &times.recording {
            ui.label(RichText::new(format!("REC {frames} frames in {folder}/")).color(Color32::from_rgb(235, 80, 70)))
                .on_hover_text("F9 stops the recording");
            ui.separator();
        }
        let text = if state.status.text.is_empty() {
            RichText::new(HINT)
        } else if state.status.error {
            RichText::new(&state.status.text).color(Color32::from_rgb(235, 80, 70))
        } else {
            RichText::new(&state.status.text).color(Color32::from_rgb(120, 200, 120))
        };
        // One line, cut with an ellipsis: a long message never grows the bar.
        ui.add(egui::Label::new(text).truncate())
            .on_hover_text(if state.status.text.is_empty() { HINT } else { &state.status.text });
    });
}

fn help_grid(ui: &mut Ui) {
    egui::Grid::new("controls").num_columns(2).striped(true).show(ui, |ui| {
        for (keys, what) in CONTROLS {
            ui.label(RichText::new(*keys).strong());
            ui.label(*what);
            ui.end_row();
        }
    });
}

/// The legend's tick labels at 0, ½ and 1 of the colour ramp.
pub fn legend_ticks(heat: HeatMode, strain_range: f32, force_max: f32) -> [String; 3] {
    let label = |t: f32| match heat {
        HeatMode::Force => si((t * force_max) as f64, "N"),
        _ => format!("{:.1} %", t * strain_range * 100.0),
    };
    [label(0.0), label(0.5), label(1.0)]
}

/// The heat map's colour ramp with its scale, in the bottom-right corner of the 3D view.
fn heat_legend(ctx: &egui::Context, view: &ViewOptions, force_max: f32) {
    let free = ctx.available_rect();
    let title = match view.heat {
        HeatMode::Force => "edge force",
        _ => "strain",
    };
    let ticks = legend_ticks(view.heat, view.heat_range, force_max);
    egui::Area::new(egui::Id::new("heat-legend"))
        .fixed_pos(free.right_bottom() - egui::vec2(12.0, 12.0))
        .pivot(egui::Align2::RIGHT_BOTTOM)
        .interactable(false)
        .show(ctx, |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.label(RichText::new(title).strong());
                let (rect, _) = ui.allocate_exact_size(egui::vec2(200.0, 14.0), egui::Sense::hover());
                const STEPS: usize = 40;
                for k in 0..STEPS {
                    let t = (k as f32 + 0.5) / STEPS as f32;
                    let c = heat_color(t);
                    let x0 = rect.left() + rect.width() * k as f32 / STEPS as f32;
                    let x1 = rect.left() + rect.width() * (k + 1) as f32 / STEPS as f32;
                    let colour = Color32::from_rgb((c.r * 255.0) as u8, (c.g * 255.0) as u8, (c.b * 255.0) as u8);
                    ui.painter()
                        .rect_filled(egui::Rect::from_x_y_ranges(x0..=x1 + 0.5, rect.y_range()), 0.0, colour);
                }
                let (labels, _) = ui.allocate_exact_size(egui::vec2(200.0, 14.0), egui::Sense::hover());
                let font = egui::TextStyle::Small.resolve(ui.style());
                let colour = ui.visuals().text_color();
                for (tick, align) in ticks
                    .iter()
                    .zip([egui::Align2::LEFT_TOP, egui::Align2::CENTER_TOP, egui::Align2::RIGHT_TOP])
                {
                    let x = labels.left() + labels.width() * (align.x().to_factor());
                    ui.painter().text(egui::pos2(x, labels.top()), align, tick, font.clone(), colour);
                }
            });
        });
}

/// The Solver section's rows, in order (keys of [`param_table::SOLVER`]).
const SOLVER_ROWS: &[&str] = &["dt", "substeps", "iterations", "constraint_damping", "air_damping", "gravity"];
/// The self-collision rows shown while it is on.
const SELF_COLLISION_ROWS: &[&str] = &["self_thickness", "self_friction", "self_vertex_triangle", "self_edge_edge"];
/// The Wind & limits section's rows.
const AIR_ROWS: &[&str] = &[
    "wind",
    "wind_gust",
    "aerodynamic_drag",
    "max_speed",
    "collision_thickness",
    "max_splits_per_step",
];
/// The grab's rows.
const GRAB_ROWS: &[&str] = &["grab_radius", "grab_max_force", "grab_slip_strain"];
/// Solver fields only a preset (or the command line) sets: the thread count has `--threads`
/// and changes nothing but speed; the grab's compliance is tuned once for the feel of the
/// mouse.
#[cfg(test)]
const SOLVER_PRESET_ONLY: &[&str] = &["threads", "grab_compliance"];
/// The Material section's rows before the tethers.
const MATERIAL_ROWS: &[&str] = &[
    "youngs_modulus",
    "poisson_ratio",
    "thickness",
    "areal_density",
    "compliance_scale",
    "stretch_stiffness",
    "shear_stiffness",
    "bend_stiffness",
    "stretch_damping_time",
    "friction_static",
    "friction_kinetic",
];
/// The tearing rows under its switch.
const TEARING_ROWS: &[&str] = &["tear_strain", "tear_length", "tear_debilitation", "tear_response_time"];
/// The tear strain a switched-on tearing starts at (30 %: a firm pull tears, the cloth's own
/// weight does not).
const TEAR_STRAIN_SWITCHED_ON: f32 = 0.3;

/// One of the Scene panel's size fields: a label and a value box with the range and tooltip
/// of the grid's `key` row.
fn size_field<N: egui::emath::Numeric>(ui: &mut Ui, key: &str, label: &str, value: &mut N, speed: f64, suffix: &str) {
    let param = param_table::find(param_table::GRID, key).unwrap_or_else(|| panic!("no grid parameter `{key}`"));
    with_tooltip(ui.label(label), param);
    let range = N::from_f64(param.accepted.min)..=N::from_f64(param.accepted.max);
    with_tooltip(ui.add(egui::DragValue::new(value).range(range).speed(speed).suffix(suffix)), param);
    ui.end_row();
}

/// The widgets of `keys`' rows of `table`, in order.
fn rows<T: Default>(ui: &mut Ui, table: &[Param<T>], keys: &[&str], target: &mut T) {
    for key in keys {
        let param = param_table::find(table, key).unwrap_or_else(|| panic!("no parameter `{key}`"));
        param_widget(ui, param, target);
    }
}

fn solver_panel(ui: &mut Ui, state: &mut AppState) {
    let s = &mut state.preset.solver;
    rows(ui, param_table::SOLVER, SOLVER_ROWS, s);
    rows(ui, param_table::SOLVER, &["self_collision"], s);
    let on = s.self_collision;
    ui.add_enabled_ui(on, |ui| rows(ui, param_table::SOLVER, SELF_COLLISION_ROWS, s));
}

fn air_panel(ui: &mut Ui, state: &mut AppState) {
    let s = &mut state.preset.solver;
    rows(ui, param_table::SOLVER, AIR_ROWS, s);
    ui.label(RichText::new("Grab").strong());
    rows(ui, param_table::SOLVER, GRAB_ROWS, s);
}

/// The Material panel: the scene's material, or, in a scene of several objects, the material
/// of the object selected in the Scene panel (the first edit gives an object that uses the
/// scene's material its own copy).
fn material_panel(ui: &mut Ui, state: &mut AppState) {
    if let Some(k) = state.material_object() {
        let object = &state.preset.objects[k];
        let whose = if object.material().is_some() {
            "its own material"
        } else {
            "the scene's material"
        };
        ui.label(RichText::new(format!("Object {k}: {} · {whose}", object.label())).strong())
            .on_hover_text("Pick the object in the Scene panel's list; a change gives it its own material");
        if object.material().is_some() && ui.button("Use the scene's material").clicked() {
            state.set_object_material(k, None);
        }
    }
    fabric_picker(ui, state);
    let mut edited = state.edited_material().clone();
    material_fields(ui, &mut edited);
    if edited != *state.edited_material() {
        state.set_edited_material(edited);
    }
}

/// A drop-down of the calibrated fabrics (`drape calibrate` measures them; docs/materials.md):
/// picking one replaces the material, blended in as a slider change is.
fn fabric_picker(ui: &mut Ui, state: &mut AppState) {
    let mut picked = None;
    egui::ComboBox::from_id_salt("fabric")
        .selected_text("calibrated fabric…")
        .width(160.0)
        .show_ui(ui, |ui| {
            for name in drape::calibrate::MATERIALS {
                if ui.selectable_label(false, name).clicked() {
                    picked = Some(name);
                }
            }
        })
        .response
        .on_hover_text("Replace the material by one of the calibrated material presets (presets/<name>.ron)");
    if let Some(name) = picked {
        state.pick_fabric(name);
    }
}

/// Every field of a material, live.
fn material_fields(ui: &mut Ui, m: &mut drape::sim::Material) {
    rows(ui, param_table::MATERIAL, MATERIAL_ROWS, m);
    rows(ui, param_table::MATERIAL, &["tethers"], m);
    // The slack row stays laid out, disabled while tethers are off.
    let on = m.tethers;
    ui.add_enabled_ui(on, |ui| rows(ui, param_table::MATERIAL, &["tether_slack"], m));
    tearing_controls(ui, m);
}

/// Tearing on/off and its rows. The rows are always laid out (disabled while tearing is off,
/// showing the strain it would start at) so toggling tearing never moves the sections below.
fn tearing_controls(ui: &mut Ui, m: &mut drape::sim::Material) {
    let mut tearing = m.tear_strain.is_some();
    ui.checkbox(&mut tearing, "tearing")
        .on_hover_text("Let edges tear when stretched too far (right-drag cuts either way)");
    match (tearing, m.tear_strain) {
        (true, None) => m.tear_strain = Some(TEAR_STRAIN_SWITCHED_ON),
        (false, Some(_)) => m.tear_strain = None,
        _ => {}
    }
    ui.add_enabled_ui(tearing, |ui| {
        if tearing {
            rows(ui, param_table::MATERIAL, TEARING_ROWS, m);
        } else {
            // Disabled rows of what switching tearing on would start from.
            let mut preview = drape::sim::Material {
                tear_strain: Some(TEAR_STRAIN_SWITCHED_ON),
                ..m.clone()
            };
            rows(ui, param_table::MATERIAL, TEARING_ROWS, &mut preview);
        }
    });
}

fn view_panel(ui: &mut Ui, view: &mut ViewOptions) {
    ui.checkbox(&mut view.shading, "shading")
        .on_hover_text("Lit smooth shading (off = flat colours)");
    ui.checkbox(&mut view.wireframe, "wireframe")
        .on_hover_text("Draw the triangle edges over the cloth (W)");
    ui.checkbox(&mut view.particles, "particles")
        .on_hover_text("A dot per particle (P)");
    ui.checkbox(&mut view.pins, "pins").on_hover_text("Red markers on pinned particles");
    ui.checkbox(&mut view.stitches, "stitches")
        .on_hover_text("Seams: a thread across each open stitch, a running stitch along closed ones");
    ui.checkbox(&mut view.colliders, "colliders")
        .on_hover_text("Draw the ground, its shadow and the colliders");
    ui.horizontal(|ui| {
        ui.label("heat map").on_hover_text("Colour the cloth by stretch or pull (M cycles)");
        ui.radio_value(&mut view.heat, HeatMode::Off, "off")
            .on_hover_text("Front and back colours");
        ui.radio_value(&mut view.heat, HeatMode::Strain, "strain")
            .on_hover_text("How much the edges at each point are stretched");
        ui.radio_value(&mut view.heat, HeatMode::Force, "force")
            .on_hover_text("How hard the edges at each point pull, relative to the strongest pull");
    });
    ui.add_enabled(
        view.heat == HeatMode::Strain,
        egui::Slider::new(&mut view.heat_range, 0.001..=0.5)
            .logarithmic(true)
            .text("strain range")
            .custom_formatter(|v, _| format!("{:.1} %", v * 100.0)),
    )
    .on_hover_text("Stretch shown as full red");
}

/// Hover text of the Stats panel's step row.
const THREADS_TIP: &str = "Solver wall time per rendered frame, and the threads the last step ran on. \
A cloth of fewer than 4096 particles runs on one thread whatever is asked; a larger one on up to 16, \
but never on more threads than this machine has cores (more would only wait for each other). \
Results are the same on any number of threads.";

/// The threads the last step ran on, and how many were asked for when that differs
/// (`asked` 0 = automatic), with the machine's `cores` when they were the cap.
fn threads_label(asked: u32, ran: u32, cores: usize) -> String {
    match asked {
        0 => format!("{ran} thread(s), auto"),
        asked if asked > ran && ran as usize == cores => format!("{ran} of {asked} threads ({cores} cores)"),
        asked if asked != ran => format!("{ran} of {asked} threads"),
        _ => format!("{ran} thread(s)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key in `lists` and how often it appears.
    fn appearances<'k>(lists: &[&[&'k str]]) -> std::collections::HashMap<&'k str, usize> {
        let mut seen = std::collections::HashMap::new();
        for key in lists.iter().flat_map(|list| list.iter()) {
            *seen.entry(*key).or_insert(0) += 1;
        }
        seen
    }

    /// Issue 35: every parameter of the table has exactly one widget in the panels (or is said
    /// to be a preset's alone), and every row the panels ask for exists.
    #[test]
    fn the_panels_show_every_parameter_of_the_table_once() {
        let solver = appearances(&[
            SOLVER_ROWS,
            &["self_collision"],
            SELF_COLLISION_ROWS,
            AIR_ROWS,
            GRAB_ROWS,
            SOLVER_PRESET_ONLY,
        ]);
        let material = appearances(&[MATERIAL_ROWS, &["tethers", "tether_slack"], TEARING_ROWS]);
        for (table, seen) in [
            (param_table::SOLVER.iter().map(|p| p.key).collect::<Vec<_>>(), &solver),
            (param_table::MATERIAL.iter().map(|p| p.key).collect(), &material),
        ] {
            for key in &table {
                assert_eq!(seen.get(key), Some(&1), "`{key}` appears {:?} times in the panels", seen.get(key));
            }
            for key in seen.keys() {
                assert!(table.contains(key), "the panels ask for `{key}`, which the table does not have");
            }
        }
    }

    /// Issue 35 item 3: at 1024 points the open controls leave the view at least 60 % and the
    /// hidden ones all of it but the strip; hiding the controls never docks the Stats panel by
    /// itself, and a Stats panel called up with them hidden docks.
    #[test]
    fn a_small_window_gives_the_view_the_room() {
        let window = 1024.0;
        let open = StatsLayout::of(window, CONTROLS_WIDTH, CONTROLS_WIDTH);
        assert!(!open.docks(false));
        assert!((window - CONTROLS_WIDTH) / window >= MIN_VIEW_SHARE);
        let hidden = StatsLayout::of(window, STRIP_WIDTH, CONTROLS_WIDTH);
        assert!(!hidden.docks(false), "hiding the controls docked the Stats panel");
        assert!((window - STRIP_WIDTH) / window > 0.97);
        assert!(hidden.docks(true), "called up, the Stats panel docks where it fits");
        // A wide window docks it beside the open controls.
        assert!(StatsLayout::of(1920.0, CONTROLS_WIDTH, CONTROLS_WIDTH).docks(false));
    }

    #[test]
    fn the_step_row_says_when_fewer_threads_ran_than_were_asked() {
        assert_eq!(threads_label(0, 2, 2), "2 thread(s), auto");
        assert_eq!(threads_label(2, 2, 2), "2 thread(s)");
        assert_eq!(threads_label(8, 2, 2), "2 of 8 threads (2 cores)");
        // A cloth too small to split, on a bigger machine.
        assert_eq!(threads_label(8, 1, 4), "1 of 8 threads");
    }

    /// Issue 35: the status bar names the part of the frame that costs the most.
    #[test]
    fn the_slowest_part_of_a_frame_is_named_with_its_share() {
        let phases = PhaseTimes {
            predict_ms: 0.5,
            distances_ms: 1.5,
            hinges_ms: 1.0,
            contacts_ms: 0.5,
            tearing_ms: 0.0,
            self_contacts_ms: 6.0,
        };
        let (part, share, _) = slowest_part(&phases, 0.5).unwrap();
        assert_eq!((part, share), ("self-contacts", 0.6));
        let (part, share, _) = slowest_part(&phases, 85.5).unwrap();
        assert_eq!((part, share), ("the mesh upload", 0.9));
        assert_eq!(slowest_part(&PhaseTimes::default(), 0.0), None);
    }

    #[test]
    fn legend_ticks_follow_the_range_or_the_largest_force() {
        assert_eq!(legend_ticks(HeatMode::Strain, 0.05, 0.0), ["0.0 %", "2.5 %", "5.0 %"]);
        assert_eq!(legend_ticks(HeatMode::Force, 0.05, 2.0), ["0 N", "1.000 N", "2.000 N"]);
    }

    #[test]
    fn the_help_lists_every_shortcut_key() {
        let keys: String = CONTROLS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(" ");
        for key in [
            "Space",
            "R",
            "Shift + R",
            "W / P / M",
            "S",
            "C",
            "F9",
            "F8",
            "F7",
            "Ctrl + Z",
            "F12",
            "H",
        ] {
            assert!(keys.contains(key), "{key} missing from the help");
        }
    }
}
