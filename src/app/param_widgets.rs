//! The panels' widget for one row of the parameter table ([`drape::sim::param_table`]): a
//! checkbox for a toggle, three boxes for a vector, and for a number a slider whose rail
//! spans the row's slider range on its scale, a value box shown and typed in the row's units,
//! and a tooltip with the help text, the default and the accepted range. A typed value may
//! leave the rail but is clamped to the accepted range, so whatever the panels produce the
//! validation accepts, and a preset's value beyond the rail is shown as it is.
//!
//! Counts drag by [`PIXELS_PER_COUNT`] in their value box (one substep at a time) and run on a
//! logarithmic rail where the table says so, which puts fine steps at the small end where
//! their defaults are.

use drape::sim::param_table::{Bounds, FieldMut, Param, Scale, Shown, Value};
use egui_macroquad::egui::{self, Ui};

use super::widgets::{parse_si, round_significant, si, LogRange};

/// Width of every parameter slider's rail, in points.
pub const RAIL_WIDTH: f32 = 100.0;
/// Pointer travel in a count's value box that changes it by one, in points.
pub const PIXELS_PER_COUNT: f64 = 8.0;

/// The row's widget, editing `target`'s field in place. An optional field (the tear strain)
/// is edited while present; its on/off switch is the caller's.
pub fn param_widget<T: Default>(ui: &mut Ui, param: &Param<T>, target: &mut T) {
    ui.spacing_mut().slider_width = RAIL_WIDTH;
    match (param.access.write)(target) {
        FieldMut::Toggle(on) => {
            with_tooltip(ui.checkbox(on, param.label), param);
        }
        FieldMut::Real(value) => real(ui, param, value),
        FieldMut::OptionalReal(value) => {
            if let Some(value) = value.as_mut() {
                real(ui, param, value);
            }
        }
        FieldMut::Count(value) => count(ui, param, value),
        FieldMut::Vector(value) => vector(ui, param, value),
    }
}

/// `response` with the row's [`tooltip`], written only while the pointer is on it (every
/// row's widgets are laid out every frame).
pub fn with_tooltip<T: Default>(response: egui::Response, param: &Param<T>) -> egui::Response {
    response.on_hover_ui(|ui| {
        ui.label(tooltip(param));
    })
}

/// The tooltip: help, default and accepted range in the units the panel shows.
pub fn tooltip<T: Default>(param: &Param<T>) -> String {
    let default = match param.default_value() {
        Value::Real(v) | Value::OptionalReal(Some(v)) => shown(param, v as f64),
        Value::OptionalReal(None) => "off".into(),
        Value::Count(n) => n.to_string(),
        Value::Vector(v) => format!("({}, {}, {}) {}", v.x, v.y, v.z, param.unit),
        Value::Toggle(on) => if on { "on" } else { "off" }.into(),
    };
    let accepts = match param.default_value() {
        Value::Toggle(_) => String::new(),
        _ => format!(
            " · accepts {} to {}",
            shown(param, param.accepted.min),
            shown(param, param.accepted.max)
        ),
    };
    format!("{}\nDefault {default}{accepts}", param.help)
}

/// `value` as the panel shows it: "16.67 ms", "5.000 MPa", "30 %", "0.05 m/s".
pub fn shown<T>(param: &Param<T>, value: f64) -> String {
    match param.shown {
        Shown::Plain if param.unit.is_empty() => format!("{}", round_significant(value, 4)),
        Shown::Plain => format!("{} {}", round_significant(value, 4), param.unit),
        Shown::SiPrefix => si(value, param.unit),
        Shown::Scaled { factor, offset, suffix } => {
            format!("{} {suffix}", round_significant((value + offset) * factor, 4))
        }
    }
}

/// Reads what the user typed in the panel's units ("16 ms", "5 MPa", "30 %", "0.05") back
/// into the field's SI value.
pub fn typed<T>(param: &Param<T>, text: &str) -> Option<f64> {
    let text = text.trim();
    match param.shown {
        Shown::Plain => text.trim_end_matches(param.unit).trim().parse().ok(),
        Shown::SiPrefix => parse_si(text),
        Shown::Scaled { factor, offset, suffix } => {
            let number: f64 = text.trim_end_matches(suffix).trim().parse().ok()?;
            Some(number / factor - offset)
        }
    }
}

/// A real number on the row's rail.
fn real<T: Default>(ui: &mut Ui, param: &Param<T>, value: &mut f32) {
    match param.scale {
        Scale::Linear => linear(ui, param, value),
        Scale::Logarithmic => logarithmic(ui, param, value),
    }
}

/// A linear slider: egui's, unclamped so typed values may leave the rail, then clamped to the
/// accepted range.
fn linear<T: Default>(ui: &mut Ui, param: &Param<T>, value: &mut f32) {
    let mut edited = *value as f64;
    with_tooltip(
        ui.add(
            egui::Slider::new(&mut edited, param.slider.min..=param.slider.max)
                .text(param.label)
                .clamping(egui::SliderClamping::Never)
                .custom_formatter(|v, _| shown(param, v))
                .custom_parser(|text| typed(param, text)),
        ),
        param,
    );
    store(param.accepted, edited, value);
}

/// Writes an edit back, clamped to `accepted` (untouched values keep their bits).
fn store(accepted: Bounds, edited: f64, value: &mut f32) {
    if edited != *value as f64 {
        *value = accepted.clamp(edited) as f32;
    }
}

/// A logarithmic slider (see [`super::widgets`]): the rail edits the decimal exponent over the
/// row's slider range; the value box drags at a fixed number of pixels per decade and takes
/// typed values ("5 MPa"), applied when the edit ends (Enter, Tab or a click elsewhere):
/// applying each keystroke would run the cloth at "5 Pa" while "5 MPa" is being typed.
fn logarithmic<T: Default>(ui: &mut Ui, param: &Param<T>, value: &mut f32) {
    let rail = LogRange::new(param.slider.min, param.slider.max);
    // A field whose accepted range reaches 0 is typed down to the rail's end.
    let accepted = LogRange::new(param.accepted.min.max(param.slider.min), param.accepted.max);
    let mut exponent = LogRange::exponent(*value as f64);
    let before = exponent;
    ui.horizontal(|ui| {
        with_tooltip(
            ui.add(
                egui::Slider::new(&mut exponent, rail.exponents())
                    .show_value(false)
                    .clamping(egui::SliderClamping::Edits),
            ),
            param,
        );
        with_tooltip(
            ui.add(
                egui::DragValue::new(&mut exponent)
                    .range(accepted.exponents())
                    .clamp_existing_to_range(false)
                    .speed(LogRange::drag_speed())
                    .update_while_editing(false)
                    .custom_formatter(|x, _| shown(param, LogRange::value(x)))
                    .custom_parser(|text| typed(param, text).filter(|v| *v > 0.0).map(LogRange::exponent)),
            ),
            param,
        );
        with_tooltip(ui.label(param.label), param);
    });
    if exponent != before {
        store(param.accepted, LogRange::value(exponent), value);
    }
}

/// A whole number: the rail on the row's scale, the value box a step per
/// [`PIXELS_PER_COUNT`], typed values clamped to the accepted range.
fn count<T: Default>(ui: &mut Ui, param: &Param<T>, value: &mut u32) {
    let mut edited = *value;
    with_tooltip(
        ui.add(
            egui::Slider::new(&mut edited, param.slider.min as u32..=param.slider.max as u32)
                .text(param.label)
                .logarithmic(param.scale == Scale::Logarithmic)
                .clamping(egui::SliderClamping::Never)
                .drag_value_speed(1.0 / PIXELS_PER_COUNT),
        ),
        param,
    );
    if edited != *value {
        *value = param.accepted.clamp(edited as f64) as u32;
    }
}

/// Three boxes, x, y and z, each clamped to the accepted range.
fn vector<T: Default>(ui: &mut Ui, param: &Param<T>, value: &mut glam::Vec3) {
    let range = param.accepted.min as f32..=param.accepted.max as f32;
    ui.horizontal(|ui| {
        with_tooltip(ui.label(param.label), param);
        for (axis, component) in ["x", "y", "z"].iter().zip([&mut value.x, &mut value.y, &mut value.z]) {
            with_tooltip(
                ui.add(
                    egui::DragValue::new(component)
                        .speed(0.05)
                        .range(range.clone())
                        .prefix(format!("{axis} "))
                        .suffix(format!(" {}", param.unit)),
                ),
                param,
            );
        }
    });
}

/// Points of rail travel per step of a count at `value` on a rail `width` points long: at
/// least 1 means every value near it can be reached by dragging the rail (none skipped).
#[cfg(test)]
pub fn rail_points_per_step<T>(param: &Param<T>, value: f64, width: f64) -> f64 {
    let Bounds { min, max } = param.slider;
    match param.scale {
        Scale::Linear => width / (max - min),
        // x = ln(v / min) / ln(max / min) of the rail: dx/dv = 1 / (v ln(max / min)).
        Scale::Logarithmic => width / (value * (max / min).ln()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drape::sim::param_table::{find, MATERIAL, SOLVER};

    #[test]
    fn values_are_shown_and_typed_in_the_panels_units_both_ways() {
        let dt = find(SOLVER, "dt").unwrap();
        assert_eq!(shown(dt, 1.0 / 60.0), "16.67 ms");
        assert!((typed(dt, "16.67 ms").unwrap() - 0.01667).abs() < 1e-12);
        let slack = find(MATERIAL, "tether_slack").unwrap();
        assert_eq!(shown(slack, 1.1), "10 % slack");
        assert!((typed(slack, "10 % slack").unwrap() - 1.1).abs() < 1e-12);
        let modulus = find(MATERIAL, "youngs_modulus").unwrap();
        assert_eq!(typed(modulus, &shown(modulus, 5e6)), Some(5e6));
        let speed = find(SOLVER, "max_speed").unwrap();
        // "m/s" is the unit, not a milli prefix.
        assert_eq!(typed(speed, &shown(speed, 50.0)), Some(50.0));
        assert_eq!(typed(speed, "120"), Some(120.0));
    }

    /// Issue 35: the substeps slider jumped from 15 to 1 in a 30 px drag.
    #[test]
    fn counts_move_in_fine_steps_near_their_defaults() {
        for param in SOLVER {
            let Value::Count(default) = param.default_value() else {
                continue;
            };
            let default = (default as f64).max(param.slider.min);
            let per_step = rail_points_per_step(param, default, RAIL_WIDTH as f64);
            assert!(per_step >= 1.0, "{}: {per_step:.2} points per step at {default}", param.key);
        }
    }

    #[test]
    fn tooltips_give_the_default_and_the_accepted_range() {
        let substeps = find(SOLVER, "substeps").unwrap();
        let tip = tooltip(substeps);
        assert!(tip.ends_with("Default 15 · accepts 1 to 1000"), "{tip}");
        let thickness = find(SOLVER, "self_thickness").unwrap();
        assert!(
            tooltip(thickness).ends_with("Default 10 mm · accepts 1 mm to 50 mm"),
            "{}",
            tooltip(thickness)
        );
    }
}
