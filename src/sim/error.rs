//! Typed errors of the engine. Every fallible entry point validates its whole input first and
//! returns one of these before touching any state.

use std::borrow::Cow;

use thiserror::Error;

/// Half the edge of the cube every position lives in, in m (10 km): cloth, colliders, drag
/// targets. A step that would move a particle outside is refused (see
/// [`crate::sim::Cloth::step`]).
pub const WORLD_EXTENT: f32 = 1.0e4;

/// Most particles one cloth may have (4 Mi, four 1024² grids): each costs a few hundred bytes
/// of state and constraints, so this bounds a scene to about 2 GB before it is built.
pub const MAX_PARTICLES: usize = 1 << 22;

/// Most colliders one cloth may have: every particle is tested against each in every
/// substep, so a few hundred already cost more than the cloth itself.
pub const MAX_COLLIDERS: usize = 256;

/// Checks a count of things (particles, colliders) against its largest allowed `max`.
pub(crate) fn check_len(name: &'static str, len: usize, max: usize, expected: &'static str) -> Result<(), SimError> {
    require(len <= max, name, len as f64, expected)
}

/// Why the engine refused an input. Nothing was changed when one of these is returned.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SimError {
    /// A numeric parameter is NaN, infinite or outside its documented range.
    #[error("invalid {name} = {}: {expected}", shown(*value))]
    InvalidParameter {
        /// Field name as it appears in presets and the UI, e.g. `"dt"`.
        name: &'static str,
        /// The rejected value (as f64 so integers print exactly).
        value: f64,
        /// What would have been accepted.
        expected: Cow<'static, str>,
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
    /// A step produced a non-finite value or flung a particle out of the world; the state
    /// before the step was restored. A debug aid: valid input should rarely get here (a torn
    /// piece falling for minutes at a long Δt can legitimately leave the world).
    #[error("step undone: {what} in the {phase} (particle {particle}: {detail}); the state before it was restored")]
    Diverged {
        /// What went wrong: a non-finite value, or a particle beyond [`crate::sim::WORLD_EXTENT`].
        what: &'static str,
        /// Which part of the step produced it: `aerodynamics`, `constraint solve` or
        /// `contacts`.
        phase: &'static str,
        /// The first particle found out of bounds.
        particle: usize,
        /// Its position and velocity after the failed phase.
        detail: String,
    },
    /// A geometric description cannot produce a cloth (e.g. a grid with fewer than 2 rows).
    #[error("invalid geometry: {0}")]
    InvalidGeometry(String),
}

/// `value` as a person writes it: integers in full, very large or small values with an
/// exponent (`1e-36`, not 37 zeros), others as the f32 they came from.
fn shown(value: f64) -> String {
    let magnitude = value.abs();
    if value.fract() == 0.0 && magnitude < 1e6 {
        format!("{value}")
    } else if magnitude.is_finite() && magnitude > 0.0 && !(1e-4..1e6).contains(&magnitude) {
        format!("{:e}", value as f32)
    } else {
        format!("{}", value as f32)
    }
}

/// `Ok` when `accepted`, otherwise the [`SimError::InvalidParameter`] for `name`.
fn require(accepted: bool, name: &'static str, value: f64, expected: &'static str) -> Result<(), SimError> {
    if accepted {
        Ok(())
    } else {
        Err(SimError::InvalidParameter {
            name,
            value,
            expected: expected.into(),
        })
    }
}

/// Checks that `value` is finite and lies in `[min, max]`.
pub(crate) fn check_range(name: &'static str, value: f32, min: f32, max: f32, expected: &'static str) -> Result<(), SimError> {
    require(value.is_finite() && value >= min && value <= max, name, value as f64, expected)
}

/// Checks that `value` is finite and not negative.
pub(crate) fn check_non_negative(name: &'static str, value: f32) -> Result<(), SimError> {
    check_range(name, value, 0.0, f32::MAX, "a finite value >= 0")
}

/// Checks that every component of a vector is finite and lies in `[min, max]`.
pub(crate) fn check_components(name: &'static str, v: glam::Vec3, min: f32, max: f32, expected: &'static str) -> Result<(), SimError> {
    v.to_array().iter().try_for_each(|&c| check_range(name, c, min, max, expected))
}
