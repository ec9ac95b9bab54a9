//! Number widgets as pure mappings, so their feel is unit-tested: SI formatting and parsing
//! ("5 MPa" both ways) and the logarithmic scale behind the sliders for moduli and multipliers.
//!
//! A logarithmic slider edits the decimal exponent x = log₁₀ v: equal drags multiply the value
//! by equal factors. Its rail spans a sensible range for cloth, and the value box next to it
//! drags at [`PIXELS_PER_DECADE`] (Shift drags ten times slower, egui's fine mode), so a short
//! drag nudges the value by a few per cent instead of jumping by decades.

use std::ops::RangeInclusive;

/// Pointer travel in the value box that multiplies the value by 10.
pub const PIXELS_PER_DECADE: f64 = 200.0;

/// A positive range edited on a logarithmic scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogRange {
    /// Smallest value on the rail (> 0).
    pub min: f64,
    /// Largest value on the rail.
    pub max: f64,
}

impl LogRange {
    /// A range from `min` to `max` (both > 0).
    pub const fn new(min: f64, max: f64) -> Self {
        Self { min, max }
    }

    /// The slider's range: the exponents of the ends.
    pub fn exponents(&self) -> RangeInclusive<f64> {
        self.min.log10()..=self.max.log10()
    }

    /// The exponent shown for `value`; values outside the rail keep their own exponent so a
    /// preset's out-of-range value is shown as it is, not clamped.
    pub fn exponent(value: f64) -> f64 {
        value.max(f64::MIN_POSITIVE).log10()
    }

    /// The value at exponent `x`, rounded to four significant digits so the numbers a drag
    /// produces stay readable (5.012 MPa rather than 5.0118723 MPa).
    pub fn value(x: f64) -> f64 {
        round_significant(10f64.powf(x), 4)
    }

    /// Value-box drag speed in exponent units per pixel.
    pub fn drag_speed() -> f64 {
        1.0 / PIXELS_PER_DECADE
    }

    /// The value after dragging the value box by `pixels` from `value` (clamped to the rail).
    #[cfg(test)]
    pub fn dragged(&self, value: f64, pixels: f64) -> f64 {
        let (lo, hi) = (self.min.log10(), self.max.log10());
        Self::value((Self::exponent(value) + pixels * Self::drag_speed()).clamp(lo, hi))
    }
}

/// `v` rounded to `digits` significant digits.
pub fn round_significant(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(digits - 1 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

/// Formats `v` with an SI prefix and four significant digits: 5e6 → "5.000 MPa".
pub fn si(v: f64, unit: &str) -> String {
    let prefixes = [(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")];
    if v == 0.0 {
        return format!("0 {unit}");
    }
    let (scale, prefix) = prefixes
        .iter()
        .find(|(s, _)| v.abs() >= *s * 0.9995)
        .copied()
        .unwrap_or((1e-9, "n"));
    let scaled = v / scale;
    let decimals = if scaled.abs() >= 99.995 {
        1
    } else if scaled.abs() >= 9.9995 {
        2
    } else {
        3
    };
    format!("{scaled:.decimals$} {prefix}{unit}")
}

/// Short axis label: at most three significant digits with an SI prefix, no trailing zeros
/// ("0", "2.5 m", "120 µ"), so a plot's axis stays narrow whatever the magnitude.
pub fn axis_label(v: f64) -> String {
    if v.abs() < 1e-12 {
        return "0".into();
    }
    let prefixes = [(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")];
    let (scale, prefix) = prefixes
        .iter()
        .find(|(s, _)| v.abs() >= *s * 0.9995)
        .copied()
        .unwrap_or((1e-9, "n"));
    let number = format!("{:.3}", round_significant(v / scale, 3));
    let number = number.trim_end_matches('0').trim_end_matches('.');
    if prefix.is_empty() {
        number.to_string()
    } else {
        format!("{number} {prefix}")
    }
}

/// Parses what [`si`] writes ("5.000 MPa", "0.500 mm", "2 m", "5MPa") or a plain number ("5e6").
/// A lone `m` is the unit metre, not milli.
pub fn parse_si(text: &str) -> Option<f64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .unwrap_or(text.len());
    let (number, rest) = text.split_at(split);
    let value: f64 = number.trim().parse().ok()?;
    let rest = rest.trim();
    let scale = match rest.chars().next() {
        Some('G') => 1e9,
        Some('M') => 1e6,
        Some('k') => 1e3,
        Some('m') if rest.chars().count() > 1 => 1e-3,
        Some('µ' | 'u') => 1e-6,
        Some('n') if rest.chars().count() > 1 => 1e-9,
        _ => 1.0,
    };
    Some(value * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    const YOUNGS: LogRange = LogRange::new(1e4, 1e9);

    #[test]
    fn si_round_trips_through_the_parser() {
        for v in [5.0e6, 1.0e3, 0.15, 5.0e-4, 2.5e9, 2.7e-4, 999.96] {
            let text = si(v, "Pa");
            let back = parse_si(&text).unwrap();
            assert!((back - v).abs() <= v * 1e-3, "{v} → {text} → {back}");
        }
        assert_eq!(si(5.0e6, "Pa"), "5.000 MPa");
        assert_eq!(si(2.7e-4, "m"), "270.0 µm");
        assert_eq!(parse_si("5e6"), Some(5e6));
        assert_eq!(parse_si("5 MPa"), Some(5e6));
        assert_eq!(parse_si("5MPa"), Some(5e6));
        assert_eq!(parse_si("2 m"), Some(2.0));
        assert_eq!(parse_si("0.5 mm"), Some(0.5e-3));
        assert_eq!(parse_si("MPa"), None);
    }

    /// Issue 19: a 40 px drag took E from 5 MPa to 2.5 kPa (a factor 2000).
    #[test]
    fn a_short_drag_nudges_a_modulus_by_a_few_tens_of_per_cent() {
        let after = YOUNGS.dragged(5e6, -40.0);
        let factor = 5e6 / after;
        // 40 px at 200 px per decade = 10^0.2 = 1.585.
        assert!((factor - 10f64.powf(0.2)).abs() < 1e-3, "{after}");
        // A whole decade takes 200 px either way.
        assert!((YOUNGS.dragged(5e6, PIXELS_PER_DECADE) - 5e7).abs() < 1e3);
    }

    /// Issue 19: a 72 px drag took bending × from 1 to 1000.
    #[test]
    fn a_72_pixel_drag_on_a_multiplier_stays_within_a_factor_of_three() {
        let bending = LogRange::new(0.01, 100.0);
        let after = bending.dragged(1.0, 72.0);
        assert!(after > 2.0 && after < 3.0, "{after}");
    }

    #[test]
    fn drags_clamp_to_the_rail_and_exponents_round_trip() {
        assert_eq!(YOUNGS.dragged(5e6, 1e6), 1e9);
        assert_eq!(YOUNGS.dragged(5e6, -1e6), 1e4);
        assert_eq!(YOUNGS.exponents(), 4.0..=9.0);
        for v in [1.5e4, 5e6, 2e7, 0.15] {
            assert!((LogRange::value(LogRange::exponent(v)) - v).abs() <= v * 1e-9, "{v}");
        }
        // A preset's value beyond the rail keeps its own exponent.
        assert_eq!(LogRange::exponent(1e10), 10.0);
    }

    #[test]
    fn axis_labels_are_short_whatever_the_magnitude() {
        assert_eq!(axis_label(0.0), "0");
        assert_eq!(axis_label(1e-13), "0");
        assert_eq!(axis_label(0.0025), "2.5 m");
        assert_eq!(axis_label(0.000012), "12 µ");
        assert_eq!(axis_label(1.0), "1");
        assert_eq!(axis_label(12.5), "12.5");
        assert_eq!(axis_label(1500.0), "1.5 k");
        assert!(axis_label(0.000_000_001).len() <= 6);
    }
}
