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

use super::cloth::Cloth;
use super::error::SimError;
use super::params::{SolverParams, WORLD_EXTENT};
use super::particles::{Positions, Vectors};
use super::solver::FrameSettings;

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
    let arrays = [
        (&pos.x, WORLD_EXTENT),
        (&pos.y, WORLD_EXTENT),
        (&pos.z, WORLD_EXTENT),
        (&vel.x, f32::MAX),
        (&vel.y, f32::MAX),
        (&vel.z, f32::MAX),
    ];
    if arrays.iter().all(|(a, limit)| within(a, *limit)) {
        return None;
    }
    (0..pos.len()).find(|&i| arrays.iter().any(|(a, limit)| !within(&a[i..=i], *limit)))
}

impl Cloth {
    /// Remembers the current (finite) particle state.
    pub(crate) fn save_checkpoint(&mut self) {
        let (c, p) = (&mut self.checkpoint, &self.particles);
        c.pos.clone_from(&p.pos);
        c.prev.clone_from(&p.prev);
        c.vel.clone_from(&p.vel);
    }

    fn restore_checkpoint(&mut self) {
        let (c, p) = (&self.checkpoint, &mut self.particles);
        p.pos.clone_from(&c.pos);
        p.prev.clone_from(&c.prev);
        p.vel.clone_from(&c.vel);
    }

    /// After `phase`: restores the checkpoint and reports if anything escaped. With the
    /// frame's `settings` (the substep loop), the frame is replayed without colliders to
    /// name the phase that produced the value.
    pub(crate) fn guard(&mut self, phase: &'static str, settings: Option<FrameSettings>) -> Result<(), SimError> {
        let Some(particle) = first_escape(&self.particles.pos, &self.particles.vel) else {
            return Ok(());
        };
        let value = self.particles.position(particle);
        let velocity = self.particles.velocity(particle);
        let what = if value.is_finite() && velocity.is_finite() {
            "a particle left the 10 km world"
        } else {
            "a non-finite value"
        };
        self.restore_checkpoint();
        let phase = match settings {
            Some(settings) if !self.colliders().is_empty() => {
                let mut without = self.clone();
                without.set_colliders(Vec::new())?;
                without.run_substeps(settings, 1);
                match first_escape(&without.particles.pos, &without.particles.vel) {
                    Some(_) => "constraint solve",
                    None => "contacts",
                }
            }
            Some(_) => "constraint solve",
            None => phase,
        };
        Err(SimError::Diverged {
            what,
            phase,
            particle,
            detail: format!("position {value}, velocity {velocity}"),
        })
    }
}

/// Work a frame may take before the app refuses it, in constraint and contact projections
/// (about 0.1 s at the solver's measured 2–3e8 projections/s on one core; the 100² curtain at
/// 55 substeps × 8 iterations, 35 million, froze the app for 24 s).
pub const FRAME_WORK_BUDGET: u64 = 20_000_000;

impl Cloth {
    /// Projections one step with `params` performs: (constraints + particles × colliders) ×
    /// substeps × iterations. Compared with [`FRAME_WORK_BUDGET`] before a step that would
    /// freeze an interactive caller.
    pub fn work_per_step(&self, params: &SolverParams) -> u64 {
        let per_sweep = self.constraint_count() as u64 + (self.particles.len() * self.colliders().len()) as u64;
        per_sweep * params.substeps as u64 * params.iterations as u64
    }
}

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
            p.y[i] = bad;
            assert_eq!(first_escape(&p, &vel), Some(i), "{bad}");
        }
        for (i, bad) in [(3, f32::NAN), (7, f32::NEG_INFINITY)] {
            let mut v = vel.clone();
            v.z[i] = bad;
            assert_eq!(first_escape(&pos, &v), Some(i), "velocity {bad}");
        }
    }
}
