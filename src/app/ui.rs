//! The egui panels. Sliders write straight into the live [`Preset`](drape::preset::Preset)
//! solver and material (the engine reads them every step and ramps stiffness changes);
//! everything structural is returned as an [`Action`] for [`super::state::apply`].

use std::collections::VecDeque;

use egui_macroquad::egui::{self, Color32, RichText, Ui};
use egui_plot::{Line, Plot, PlotPoints};

use super::render::{HeatMode, ViewOptions};
use super::state::{Action, AppState, GridSize, RunMode};

/// Every binding, shown in the help overlay (and mirrored in the README's Controls section).
pub const CONTROLS: &[(&str, &str)] = &[
    ("Left-drag on cloth", "grab a particle; release to throw it with the mouse velocity"),
    ("Shift held on release", "leave the grabbed particle pinned where it is"),
    ("Ctrl + left-click", "pin / unpin the particle under the cursor"),
    ("Right-drag", "cut every edge the stroke crosses"),
    ("Middle-drag  or  Alt + left-drag", "orbit the camera"),
    ("Shift + middle-drag  or  Alt + Shift + left-drag", "pan the camera"),
    ("Mouse wheel", "zoom"),
    ("F", "reset the view (frame the scene)"),
    ("Space", "run / pause"),
    ("N  or  Right arrow", "advance one frame (pauses)"),
    ("R", "reset the scene"),
    ("+ / −", "time scale ×2 / ÷2 (slow motion)"),
    ("W / P / M", "wireframe / particles / heat map (off, strain, force)"),
    ("F12", "save a screenshot (drape-<time>.png in the working directory)"),
    ("H  or  F1", "show / hide this help"),
];

/// The one-line reminder at the bottom of the window.
pub const HINT: &str =
    "Left-drag: grab · Shift+release: pin · Ctrl+click: pin/unpin · Right-drag: cut · Middle/Alt-drag: orbit · Shift: pan · Wheel: zoom · Space: run/pause · R: reset · H: help";

/// Seconds of history in the stats plots.
const HISTORY_SECONDS: f64 = 10.0;

/// Timing measured by the loop, shown in the Stats panel.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FrameTimes {
    /// Seconds per rendered frame (smoothed); fps is its inverse.
    pub frame_s: f64,
    /// Solver milliseconds per frame (smoothed).
    pub step_ms: f64,
    /// Milliseconds building and submitting the cloth meshes (smoothed).
    pub upload_ms: f64,
    /// Cloth draw chunks.
    pub chunks: usize,
}

/// Requests that concern the window rather than the scene.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowRequests {
    /// Re-frame the camera on the scene.
    pub reset_view: bool,
    /// Save a screenshot after this frame.
    pub screenshot: bool,
}

/// UI-only state: edit buffers, the help toggle and the plot history.
pub struct Panels {
    /// Help overlay visible.
    pub show_help: bool,
    /// View switches.
    pub view: ViewOptions,
    save_name: String,
    grid: GridSize,
    grid_scene: Option<u64>,
    history: VecDeque<[f64; 3]>,
}

impl Panels {
    /// Fresh panels for `state`.
    pub fn new(state: &AppState) -> Self {
        Self {
            show_help: false,
            view: ViewOptions::default(),
            save_name: String::new(),
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

    /// Lays out every panel; returns the actions the user asked for.
    pub fn show(&mut self, ctx: &egui::Context, state: &mut AppState, times: &FrameTimes, requests: &mut WindowRequests) -> Vec<Action> {
        if self.grid_scene != Some(state.scene_version) {
            // A new scene: reload the edit buffers from it.
            self.grid_scene = Some(state.scene_version);
            self.grid = state.grid_size();
            self.save_name = state
                .source
                .as_ref()
                .and_then(|p| p.file_stem())
                .map_or_else(|| "my-scene".to_string(), |s| s.to_string_lossy().into_owned());
        }
        let mut actions = Vec::new();
        egui::TopBottomPanel::top("run").show(ctx, |ui| self.run_bar(ui, state, requests, &mut actions));
        let status = egui::TopBottomPanel::bottom("status").show(ctx, |ui| status_bar(ui, state));
        egui::SidePanel::right("panels").default_width(330.0).show(ctx, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                section(ui, "Solver", true, |ui| solver_panel(ui, state));
                section(ui, "Material", true, |ui| material_panel(ui, state));
                section(ui, "Scene", true, |ui| self.scene_panel(ui, state, &mut actions));
                section(ui, "View", true, |ui| view_panel(ui, &mut self.view));
            });
        });
        // Stats float over the bottom-left of the 3D view so the plots are always in sight.
        egui::Window::new("Stats")
            .anchor(egui::Align2::LEFT_BOTTOM, [8.0, -8.0 - status.response.rect.height()])
            .resizable(false)
            .default_width(250.0)
            .show(ctx, |ui| self.stats_panel(ui, state, times));
        egui::Window::new("Controls")
            .open(&mut self.show_help)
            .collapsible(false)
            .resizable(false)
            .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
            .show(ctx, help_grid);
        actions
    }

    fn run_bar(&mut self, ui: &mut Ui, state: &mut AppState, requests: &mut WindowRequests, actions: &mut Vec<Action>) {
        ui.horizontal(|ui| {
            let running = state.run_mode == RunMode::Running;
            let (label, mode) = if running {
                ("⏸ Pause", RunMode::Paused)
            } else {
                ("▶ Run", RunMode::Running)
            };
            if ui.button(label).on_hover_text("Run or pause the simulation (Space)").clicked() {
                actions.push(Action::SetRunMode(mode));
            }
            if ui
                .button("⏭ Step")
                .on_hover_text("Advance exactly one frame of Δt, then pause (N)")
                .clicked()
            {
                actions.push(Action::SetRunMode(RunMode::Step));
            }
            if ui
                .button("⟲ Reset")
                .on_hover_text("Rebuild the cloth from the scene, keeping the edited settings (R)")
                .clicked()
            {
                actions.push(Action::Reset);
            }
            ui.separator();
            ui.add(
                egui::Slider::new(&mut state.time_scale, 0.05..=2.0)
                    .logarithmic(true)
                    .text("time scale")
                    .suffix("×"),
            )
            .on_hover_text("Simulated seconds per real second; below 1 is slow motion (+ / −)");
            ui.separator();
            if ui.button("🎥 View").on_hover_text("Frame the cloth and colliders (F)").clicked() {
                requests.reset_view = true;
            }
            if ui.button("📷").on_hover_text("Save a screenshot (F12)").clicked() {
                requests.screenshot = true;
            }
            if ui.button("❓ Help").on_hover_text("List every control (H or F1)").clicked() {
                self.show_help = !self.show_help;
            }
            ui.separator();
            ui.label(RichText::new(&state.preset.name).strong())
                .on_hover_text(&state.preset.description);
        });
    }

    fn scene_panel(&mut self, ui: &mut Ui, state: &AppState, actions: &mut Vec<Action>) {
        let current = state
            .source
            .as_ref()
            .and_then(|p| p.file_stem())
            .map(|s| s.to_string_lossy().into_owned());
        ui.horizontal(|ui| {
            egui::ComboBox::from_id_salt("preset")
                .selected_text(current.as_deref().unwrap_or("(built-in default)"))
                .width(180.0)
                .show_ui(ui, |ui| {
                    for entry in &state.presets {
                        let selected = state.source.as_ref() == Some(&entry.path);
                        if ui.selectable_label(selected, &entry.stem).on_hover_text(&entry.summary).clicked() {
                            actions.push(Action::Load(entry.path.clone()));
                        }
                    }
                })
                .response
                .on_hover_text(format!("Open a preset from {}", state.presets_dir.display()));
            if ui.button("⟳").on_hover_text("Re-read the presets directory").clicked() {
                actions.push(Action::RefreshPresets);
            }
            if ui.button("Reset").on_hover_text("Rebuild the cloth from the scene (R)").clicked() {
                actions.push(Action::Reset);
            }
        });
        ui.horizontal(|ui| {
            ui.label("Save as")
                .on_hover_text("Write the scene (with the current settings and pins) as a preset");
            ui.add(egui::TextEdit::singleline(&mut self.save_name).desired_width(140.0))
                .on_hover_text(format!("File name without .ron, saved in {}", state.presets_dir.display()));
            if ui
                .button("💾 Save")
                .on_hover_text("Refuses to replace an existing file unless you confirm")
                .clicked()
            {
                actions.push(Action::SaveAs {
                    name: self.save_name.clone(),
                    overwrite: false,
                });
            }
        });
        if let Some(name) = state.pending_overwrite.clone() {
            ui.horizontal(|ui| {
                ui.label(RichText::new(format!("{name}.ron exists.")).color(Color32::from_rgb(230, 160, 40)));
                if ui.button("Overwrite").clicked() {
                    actions.push(Action::SaveAs { name, overwrite: true });
                }
            });
        }
        ui.separator();
        egui::Grid::new("grid").num_columns(2).show(ui, |ui| {
            ui.label("Columns").on_hover_text("Particles along the width (2–1024)");
            ui.add(egui::DragValue::new(&mut self.grid.columns).range(2..=1024));
            ui.end_row();
            ui.label("Rows").on_hover_text("Particles along the height (2–1024)");
            ui.add(egui::DragValue::new(&mut self.grid.rows).range(2..=1024));
            ui.end_row();
            ui.label("Width").on_hover_text("Cloth width in metres");
            ui.add(
                egui::DragValue::new(&mut self.grid.width)
                    .range(0.05..=20.0)
                    .speed(0.01)
                    .suffix(" m"),
            );
            ui.end_row();
            ui.label("Height")
                .on_hover_text("Cloth height (or depth, when lying flat) in metres");
            ui.add(
                egui::DragValue::new(&mut self.grid.height)
                    .range(0.05..=20.0)
                    .speed(0.01)
                    .suffix(" m"),
            );
            ui.end_row();
        });
        let changed = self.grid != state.grid_size();
        if ui
            .add_enabled(changed, egui::Button::new("Apply size"))
            .on_hover_text("Rebuild the cloth with this resolution and size (restarts it)")
            .clicked()
        {
            actions.push(Action::ApplyGrid(self.grid));
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
            row(
                "step",
                format!("{:.2} ms · {} thread(s)", times.step_ms, stats.threads),
                "Solver wall time per frame, and the threads the last step ran on",
            );
            row(
                "mesh",
                format!("{:.2} ms · {} chunk(s)", times.upload_ms, times.chunks),
                "Building the cloth mesh per frame",
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
                "Largest stretch (l − l₀)/l₀ over the stretch edges",
            );
            row(
                "mean strain",
                format!("{:.3} %", stats.mean_strain * 100.0),
                "Mean |strain| over the stretch edges",
            );
            row(
                "max tension",
                format!("{:.3} N", stats.max_tension),
                "Largest stretch-edge force in the last substep",
            );
            row(
                "kinetic energy",
                format!("{:.4} J", stats.kinetic_energy),
                "½ Σ m v² of the free particles",
            );
            row(
                "torn edges",
                stats.torn_edges.to_string(),
                "Edges torn by strain or cut with the right mouse button since the last reset",
            );
            row("pieces", state.pieces().to_string(), "Connected pieces of cloth");
        });
        self.plot(ui, "energy", "kinetic energy (J)", 1);
        self.plot(ui, "strain", "max strain (%)", 2);
    }

    fn plot(&self, ui: &mut Ui, id: &str, name: &str, column: usize) {
        let scale = if column == 2 { 100.0 } else { 1.0 };
        let Some(&[latest, ..]) = self.history.back() else { return };
        let points: Vec<[f64; 2]> = self.history.iter().map(|s| [s[0] - latest, s[column] * scale]).collect();
        ui.label(name);
        Plot::new(id)
            .height(60.0)
            .width(240.0)
            .allow_drag(false)
            .allow_zoom(false)
            .allow_scroll(false)
            .show_x(false)
            .include_y(0.0)
            .show(ui, |plot| plot.line(Line::new(PlotPoints::from(points)).name(name)));
    }
}

fn section(ui: &mut Ui, title: &str, open: bool, body: impl FnOnce(&mut Ui)) {
    egui::CollapsingHeader::new(title).default_open(open).show(ui, body);
}

fn status_bar(ui: &mut Ui, state: &AppState) {
    ui.horizontal_wrapped(|ui| {
        ui.label(HINT);
    });
    if !state.status.text.is_empty() {
        let color = if state.status.error {
            Color32::from_rgb(235, 80, 70)
        } else {
            Color32::from_rgb(120, 200, 120)
        };
        ui.label(RichText::new(&state.status.text).color(color));
    }
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

/// Formats `v` with an SI prefix: 5e6 → "5.00 M" + unit.
fn si(v: f64, unit: &str) -> String {
    let prefixes = [(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "µ")];
    let (scale, prefix) = prefixes.iter().find(|(s, _)| v.abs() >= *s).copied().unwrap_or((1e-6, "µ"));
    format!("{:.3} {prefix}{unit}", v / scale)
}

/// Parses what [`si`] writes ("5.000 MPa", "0.500 mm", "2 m") or a plain number ("5e6").
fn parse_si(text: &str) -> Option<f64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .unwrap_or(text.len());
    let (number, rest) = text.split_at(split);
    let value: f64 = number.trim().parse().ok()?;
    let scale = match rest.trim().chars().next() {
        Some('G') => 1e9,
        Some('M') => 1e6,
        Some('k') => 1e3,
        Some('m') if rest.trim().len() > 1 => 1e-3,
        Some('µ' | 'u') => 1e-6,
        _ => 1.0,
    };
    Some(value * scale)
}

/// A slider with a tooltip.
fn slider<N: egui::emath::Numeric>(ui: &mut Ui, value: &mut N, range: std::ops::RangeInclusive<N>, label: &str, tip: &str) {
    ui.add(egui::Slider::new(value, range).text(label)).on_hover_text(tip);
}

/// A logarithmic slider; with a `unit` the value is shown with an SI prefix (5.000 MPa).
fn log_slider(ui: &mut Ui, value: &mut f32, range: std::ops::RangeInclusive<f32>, label: &str, unit: Option<&'static str>, tip: &str) {
    let slider = egui::Slider::new(value, range).logarithmic(true).text(label);
    let slider = match unit {
        Some(unit) => slider.custom_formatter(move |v, _| si(v, unit)).custom_parser(parse_si),
        None => slider,
    };
    ui.add(slider).on_hover_text(tip);
}

fn solver_panel(ui: &mut Ui, state: &mut AppState) {
    let s = &mut state.preset.solver;
    ui.add(
        egui::Slider::new(&mut s.dt, 1.0 / 480.0..=1.0 / 20.0)
            .logarithmic(true)
            .text("Δt")
            .custom_formatter(|v, _| format!("{:.2} ms", v * 1e3))
            .custom_parser(|t| parse_si(t.trim_end_matches("ms").trim()).map(|ms| ms * 1e-3)),
    )
    .on_hover_text("Frame step Δt in seconds: one solver frame advances the cloth by Δt. Default 1/60 s");
    slider(
        ui,
        &mut s.substeps,
        1..=100,
        "substeps",
        "Substeps S per frame (h = Δt/S). More = stiffer and more accurate, slower",
    );
    slider(
        ui,
        &mut s.iterations,
        1..=20,
        "iterations",
        "Gauss–Seidel sweeps per substep. Substeps usually beat iterations",
    );
    slider(
        ui,
        &mut s.constraint_damping,
        0.0..=10.0,
        "constraint damping",
        "β of XPBD eq. 26 in N·s/m: damps motion along constraints only, never free fall",
    );
    slider(
        ui,
        &mut s.air_damping,
        0.0..=10.0,
        "air damping",
        "k in 1/s: v ← v·exp(−k h) each substep; slows everything",
    );
    ui.horizontal(|ui| {
        ui.label("gravity")
            .on_hover_text("Gravity vector in m/s² (x, y, z); default (0, −9.81, 0)");
        for (axis, v) in ["x", "y", "z"].iter().zip([&mut s.gravity.x, &mut s.gravity.y, &mut s.gravity.z]) {
            ui.add(egui::DragValue::new(v).speed(0.05).range(-100.0..=100.0).prefix(format!("{axis} ")))
                .on_hover_text(format!("Gravity {axis} component in m/s²"));
        }
    });
}

fn material_panel(ui: &mut Ui, state: &mut AppState) {
    let m = &mut state.preset.material;
    log_slider(
        ui,
        &mut m.youngs_modulus,
        1e3..=1e10,
        "Young's modulus E",
        Some("Pa"),
        "In-plane stiffness E in pascals (cotton ≈ 5 MPa, rubber ≈ 1 MPa). Lower E = stretchier cloth",
    );
    slider(
        ui,
        &mut m.poisson_ratio,
        0.0..=0.499,
        "Poisson ratio ν",
        "Dimensionless, 0 ≤ ν < 0.5; enters the bending rigidity",
    );
    log_slider(
        ui,
        &mut m.thickness,
        1e-5..=1e-2,
        "thickness t",
        Some("m"),
        "Sheet thickness in metres; stretch ∝ E·t, bending ∝ E·t³",
    );
    log_slider(
        ui,
        &mut m.areal_density,
        0.01..=5.0,
        "areal density ρ_A (kg/m²)",
        None,
        "Mass per area in kg/m² (light cotton 0.15); masses are lumped from triangle areas",
    );
    log_slider(
        ui,
        &mut m.compliance_scale,
        1e-3..=1e4,
        "compliance scale",
        None,
        "Multiplies every compliance (inverse stiffness); 1 = physical, higher = softer",
    );
    log_slider(
        ui,
        &mut m.stretch_stiffness,
        0.01..=100.0,
        "stretch ×",
        None,
        "Multiplier on the stretch (structural edge) stiffness",
    );
    log_slider(
        ui,
        &mut m.shear_stiffness,
        0.01..=100.0,
        "shear ×",
        None,
        "Multiplier on the shear (diagonal edge) stiffness",
    );
    log_slider(
        ui,
        &mut m.bend_stiffness,
        0.01..=1000.0,
        "bending ×",
        None,
        "Multiplier on the bending stiffness",
    );
    slider(
        ui,
        &mut m.friction_static,
        0.0..=2.0,
        "static friction μs",
        "Coulomb static coefficient against colliders",
    );
    slider(
        ui,
        &mut m.friction_kinetic,
        0.0..=2.0,
        "kinetic friction μk",
        "Coulomb kinetic coefficient against colliders",
    );
    tearing_controls(ui, m);
}

/// Tear strain (off or a value) and debilitation.
fn tearing_controls(ui: &mut Ui, m: &mut drape::sim::Material) {
    let mut tearing = m.tear_strain.is_some();
    ui.checkbox(&mut tearing, "tearing")
        .on_hover_text("Let edges tear when stretched past the tear strain (right-drag cuts either way)");
    match (tearing, m.tear_strain) {
        (true, None) => m.tear_strain = Some(0.3),
        (false, Some(_)) => m.tear_strain = None,
        _ => {}
    }
    if let Some(strain) = m.tear_strain.as_mut() {
        ui.add(
            egui::Slider::new(strain, 0.02..=3.0)
                .logarithmic(true)
                .text("tear strain")
                .custom_formatter(|v, _| format!("{:.1} %", v * 100.0))
                .custom_parser(|t| t.trim_end_matches('%').trim().parse::<f64>().ok().map(|p| p / 100.0)),
        )
        .on_hover_text("Engineering strain (l − l₀)/l₀ at which an edge tears; 30 % = stretched to 1.3× its rest length");
    }
    slider(
        ui,
        &mut m.tear_debilitation,
        0.0..=0.9,
        "debilitation",
        "Fraction of tear strain lost by the edges next to a fresh tear, so tears run in lines (0 = none)",
    );
}

fn view_panel(ui: &mut Ui, view: &mut ViewOptions) {
    ui.checkbox(&mut view.shading, "shading")
        .on_hover_text("Lit smooth shading (off = flat colours)");
    ui.checkbox(&mut view.wireframe, "wireframe")
        .on_hover_text("Draw the triangle edges (W)");
    ui.checkbox(&mut view.particles, "particles")
        .on_hover_text("A dot per particle (P)");
    ui.checkbox(&mut view.pins, "pins").on_hover_text("Red markers on pinned particles");
    ui.checkbox(&mut view.colliders, "colliders")
        .on_hover_text("Draw the ground and the colliders");
    ui.horizontal(|ui| {
        ui.label("heat map").on_hover_text("Colour the cloth by stretch (M cycles)");
        ui.radio_value(&mut view.heat, HeatMode::Off, "off")
            .on_hover_text("Front and back colours");
        ui.radio_value(&mut view.heat, HeatMode::Strain, "strain")
            .on_hover_text("Largest |strain| of the vertex's edges");
        ui.radio_value(&mut view.heat, HeatMode::Force, "force")
            .on_hover_text("Largest edge tension, relative to the cloth's largest");
    });
    ui.add_enabled(
        view.heat == HeatMode::Strain,
        egui::Slider::new(&mut view.heat_range, 0.001..=0.5)
            .logarithmic(true)
            .text("strain range")
            .custom_formatter(|v, _| format!("{:.1} %", v * 100.0)),
    )
    .on_hover_text("Strain shown as full red");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn si_round_trips_through_the_parser() {
        for v in [5.0e6, 1.0e3, 0.15, 5.0e-4, 2.5e9] {
            let text = si(v, "Pa");
            let back = parse_si(&text).unwrap();
            assert!((back - v).abs() <= v * 1e-3, "{v} → {text} → {back}");
        }
        assert_eq!(parse_si("5e6"), Some(5e6));
        assert_eq!(parse_si("2 m"), Some(2.0));
    }
}
