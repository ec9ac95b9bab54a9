//! Typed errors of the engine. Every fallible entry point validates its whole input first and
//! returns one of these before touching any state.

use thiserror::Error;

/// Why the engine refused an input. Nothing was changed when one of these is returned.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SimError {
    /// A numeric parameter is NaN, infinite or outside its documented range.
    #[error("invalid {name} = {value}: {expected}")]
    InvalidParameter {
        /// Field name as it appears in presets and the UI, e.g. `"dt"`.
        name: &'static str,
        /// The rejected value (as f64 so integers print exactly).
        value: f64,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// A particle index points past the end of the particle array.
    #[error("{what} refers to particle {index}, but there are only {count} particles")]
    IndexOutOfRange {
        /// Which kind of element holds the bad index ("edge", "triangle", "pin", ...).
        what: &'static str,
        /// The offending index.
        index: usize,
        /// Number of particles in the model.
        count: usize,
    },
    /// A geometric description cannot produce a cloth (e.g. a grid with fewer than 2 rows).
    #[error("invalid geometry: {0}")]
    InvalidGeometry(String),
}

/// Checks that `value` is finite and lies in `[min, max]`.
pub(crate) fn check_range(name: &'static str, value: f32, min: f32, max: f32, expected: &'static str) -> Result<(), SimError> {
    if value.is_finite() && value >= min && value <= max {
        Ok(())
    } else {
        Err(SimError::InvalidParameter {
            name,
            value: value as f64,
            expected,
        })
    }
}

/// Checks that `value` is finite and strictly positive.
pub(crate) fn check_positive(name: &'static str, value: f32) -> Result<(), SimError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(SimError::InvalidParameter {
            name,
            value: value as f64,
            expected: "a finite value > 0",
        })
    }
}

/// Checks that `value` is finite and not negative.
pub(crate) fn check_non_negative(name: &'static str, value: f32) -> Result<(), SimError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(SimError::InvalidParameter {
            name,
            value: value as f64,
            expected: "a finite value >= 0",
        })
    }
}

/// Checks that every component of a vector is finite.
pub(crate) fn check_finite_vec(name: &'static str, v: glam::Vec3) -> Result<(), SimError> {
    for c in v.to_array() {
        if !c.is_finite() {
            return Err(SimError::InvalidParameter {
                name,
                value: c as f64,
                expected: "finite components",
            });
        }
    }
    Ok(())
}
