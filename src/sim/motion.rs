//! Scripted collider paths: a collider with a [`Motion`] is translated by
//! [`Motion::offset`]`(t)` from where it was placed, t being the simulated time in s.
//!
//! A path only translates (the shape keeps its size and rotation). [`crate::sim::Cloth::step`]
//! moves the collider along it over the substeps of each frame, so the cloth feels the
//! collider's velocity through contact and friction (see [`super::collision`]).

use glam::{DVec3, Vec3};
use serde::{Deserialize, Serialize};

use super::error::{check_components, check_range, SimError};

/// A scripted path: the collider's translation from its placed pose as a function of time.
/// Both paths start at offset zero at t = 0, so a collider starts where the preset puts it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Motion {
    /// Moves at `velocity` from t = 0 until t = `duration`, then stays there.
    Linear {
        /// Velocity in m/s, components in [−100, 100].
        velocity: Vec3,
        /// How long it moves, in s, [0, 1000].
        duration: f32,
    },
    /// Swings to and fro along `axis`: offset = â · amplitude · sin(2π t / period), â the unit
    /// vector along `axis`; it first moves toward +`axis`.
    Oscillate {
        /// Direction of the swing (any non-zero length, components in [−1e4, 1e4]).
        axis: Vec3,
        /// Largest distance from the placed pose, in m, [0, 1000].
        amplitude: f32,
        /// Time of one full swing, in s, [0.01, 1e4].
        period: f32,
    },
}

impl Motion {
    /// Checks every value against its range; names are the preset's keys.
    pub fn validate(&self) -> Result<(), SimError> {
        match *self {
            Motion::Linear { velocity, duration } => {
                check_components("velocity", velocity, -100.0, 100.0, "components in [-100, 100] m/s")?;
                check_range("duration", duration, 0.0, 1000.0, "a duration in [0, 1000] s")
            }
            Motion::Oscillate { axis, amplitude, period } => {
                check_components("axis", axis, -1e4, 1e4, "components in [-1e4, 1e4]")?;
                check_range("axis", axis.length(), 1e-6, f32::MAX, "a direction of non-zero length")?;
                check_range("amplitude", amplitude, 0.0, 1000.0, "an amplitude in [0, 1000] m")?;
                check_range("period", period, 0.01, 1e4, "a period in [0.01, 1e4] s")
            }
        }
    }

    /// The preset key names of this path's fields.
    pub fn keys(&self) -> &'static [&'static str] {
        match self {
            Motion::Linear { .. } => &["velocity", "duration"],
            Motion::Oscillate { .. } => &["axis", "amplitude", "period"],
        }
    }

    /// Translation from the placed pose at time `t` (s, ≥ 0), in m. Evaluated in f64, so a
    /// long run does not lose the phase. A valid path gives a finite offset of at most
    /// 1.8e5 m (the linear path's 100 √3 m/s for 1000 s).
    pub fn offset(&self, t: f64) -> Vec3 {
        match *self {
            Motion::Linear { velocity, duration } => (velocity.as_dvec3() * t.min(duration as f64)).as_vec3(),
            Motion::Oscillate { axis, amplitude, period } => {
                let phase = std::f64::consts::TAU * t / period as f64;
                let unit: DVec3 = axis.as_dvec3().normalize();
                (unit * (amplitude as f64 * phase.sin())).as_vec3()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_moves_at_its_velocity_then_stops() {
        let path = Motion::Linear {
            velocity: Vec3::new(0.0, 0.5, 0.0),
            duration: 2.0,
        };
        assert_eq!(path.offset(0.0), Vec3::ZERO);
        assert_eq!(path.offset(1.0), Vec3::new(0.0, 0.5, 0.0));
        assert_eq!(path.offset(2.0), Vec3::new(0.0, 1.0, 0.0));
        assert_eq!(path.offset(30.0), Vec3::new(0.0, 1.0, 0.0));
    }

    #[test]
    fn oscillate_follows_the_sine_along_the_unit_axis() {
        let path = Motion::Oscillate {
            axis: Vec3::new(3.0, 0.0, 4.0),
            amplitude: 0.2,
            period: 2.0,
        };
        assert_eq!(path.offset(0.0), Vec3::ZERO);
        // A quarter period: the full amplitude along (0.6, 0, 0.8).
        assert!(path.offset(0.5).distance(Vec3::new(0.12, 0.0, 0.16)) < 1e-7);
        assert!(path.offset(1.0).length() < 1e-7);
        assert!(path.offset(1.5).distance(Vec3::new(-0.12, 0.0, -0.16)) < 1e-7);
    }

    #[test]
    fn invalid_paths_are_refused_by_name() {
        let refused = |path: Motion| match path.validate() {
            Err(SimError::InvalidParameter { name, .. }) => name,
            other => panic!("{path:?} gave {other:?}"),
        };
        let linear = |velocity: Vec3, duration: f32| Motion::Linear { velocity, duration };
        assert_eq!(refused(linear(Vec3::new(0.0, f32::NAN, 0.0), 1.0)), "velocity");
        assert_eq!(refused(linear(Vec3::new(0.0, 101.0, 0.0), 1.0)), "velocity");
        assert_eq!(refused(linear(Vec3::Y, -1.0)), "duration");
        let swing = |axis: Vec3, amplitude: f32, period: f32| Motion::Oscillate { axis, amplitude, period };
        assert_eq!(refused(swing(Vec3::ZERO, 1.0, 1.0)), "axis");
        assert_eq!(refused(swing(Vec3::Y, 1e4, 1.0)), "amplitude");
        assert_eq!(refused(swing(Vec3::Y, 1.0, 0.0)), "period");
        assert!(swing(Vec3::Y, 1.0, 1.0).validate().is_ok());
    }
}
