//! The step's divergence guard: valid input must never leave NaN (or a cloth flung out of the
//! world) behind, whatever goes wrong inside the solver.
//!
//! Before a step the particle state is known to be finite and inside the world cube
//! ([`WORLD_EXTENT`]): the inputs are validated and every step ends checked. The step keeps
//! a copy of that state (positions, substep starts, velocities: one memcpy of seven arrays),
//! and after the phases that can diverge — the aerodynamic impulses and the substep loop —
//! checks every coordinate with one branch-free pass. If a position is non-finite or outside
//! the world, or a velocity non-finite, the copy is restored and the step returns [`SimError::Diverged`] naming the
//! phase; for the substep loop a replay of the frame without colliders tells the contacts
//! from the constraint solve. A caller (the app) pauses and shows the message.

use super::error::{SimError, WORLD_EXTENT};
use super::particles::{Particles, Positions, Vectors};

/// The particle state at the start of the step.
#[derive(Debug, Clone, Default)]
pub(crate) struct Checkpoint {
    pos: Positions,
    prev: Vectors,
    vel: Vectors,
}

/// True when every value is at most `limit` in magnitude (NaN fails the comparison).
fn within(values: &[f32], limit: f32) -> bool {
    values.iter().fold(true, |ok, v| ok & (v.abs() <= limit))
}

/// The first particle whose position is non-finite or outside the world, or whose velocity
/// is non-finite. (Velocities are not bounded: a particle dragged fast at a tiny Δt is
/// legitimately fast.)
fn first_escape(pos: &Positions, vel: &Vectors) -> Option<usize> {
    let ([x, y, z, _], [vx, vy, vz]) = (pos.arrays(), vel.arrays());
    let arrays = [
        (x, WORLD_EXTENT),
        (y, WORLD_EXTENT),
        (z, WORLD_EXTENT),
        (vx, f32::MAX),
        (vy, f32::MAX),
        (vz, f32::MAX),
    ];
    if arrays.iter().all(|(a, limit)| within(a, *limit)) {
        return None;
    }
    (0..pos.len()).find(|&i| arrays.iter().any(|(a, limit)| !within(&a[i..=i], *limit)))
}

impl Checkpoint {
    /// Remembers the (finite) state of `p`.
    pub(crate) fn save(&mut self, p: &Particles) {
        self.pos.clone_from(&p.pos);
        self.prev.clone_from(&p.prev);
        self.vel.clone_from(&p.vel);
    }

    /// Puts the remembered state back into `p`.
    pub(crate) fn restore(&self, p: &mut Particles) {
        p.pos.clone_from(&self.pos);
        p.prev.clone_from(&self.prev);
        p.vel.clone_from(&self.vel);
    }
}

/// Whether any particle of `p` escaped (see [`first_escape`]).
pub(crate) fn escaped(p: &Particles) -> bool {
    first_escape(&p.pos, &p.vel).is_some()
}

/// The error for the first particle of `p` that escaped during `phase`, if any.
pub(crate) fn divergence(p: &Particles, phase: &'static str) -> Option<SimError> {
    let particle = first_escape(&p.pos, &p.vel)?;
    let value = p.position(particle);
    let velocity = p.velocity(particle);
    let what = if value.is_finite() && velocity.is_finite() {
        "a particle left the 10 km world"
    } else {
        "a non-finite value"
    };
    Some(SimError::Diverged {
        what,
        phase,
        particle,
        detail: format!("position {value}, velocity {velocity}"),
    })
}

/// Work a frame may take before the app refuses it, in constraint and contact projections
/// (about 0.1 s at the solver's measured 2–3e8 projections/s on one core; the 100² curtain at
/// 55 substeps × 8 iterations, 35 million, froze the app for 24 s).
pub const FRAME_WORK_BUDGET: u64 = 20_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_infinity_and_far_values_are_caught_and_others_pass() {
        let mut pos = Positions::default();
        let mut vel = Vectors::default();
        for i in 0..20 {
            pos.push([i as f32, -(i as f32), WORLD_EXTENT, 1.0]);
            vel.push(glam::Vec3::splat(-1e30));
        }
        assert_eq!(first_escape(&pos, &vel), None);
        for (i, bad) in [(3, f32::NAN), (7, f32::INFINITY), (11, WORLD_EXTENT * 1.001)] {
            let mut p = pos.clone();
            p.column_mut(1)[i] = bad;
            assert_eq!(first_escape(&p, &vel), Some(i), "{bad}");
        }
        for (i, bad) in [(3, f32::NAN), (7, f32::NEG_INFINITY)] {
            let mut v = vel.clone();
            v.column_mut(2)[i] = bad;
            assert_eq!(first_escape(&pos, &v), Some(i), "velocity {bad}");
        }
    }
}
