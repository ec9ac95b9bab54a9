//! The hand's grip on the cloth for one frame: the patch it takes at a grab's first step, the
//! grip's tethers for a cloth without pins, and the force it holds with (docs/physics.md §1,
//! "The grab"; the attachments themselves are [`crate::sim::solver::SoftGrab`]).

use super::{hold, Cloth};
use crate::sim::params::SolverParams;

/// The least force the grip keeps when it slips (N), so it always holds a little.
const MIN_GRIP_FORCE: f32 = 0.01;

/// How many times its weight the grip holds a cloth without pins, however strained: a hand
/// lifts a cloth off the floor even when the cloth, hanging from a small patch, stretches
/// more than the slip strain under one sweep per substep (12 % on the default curtain lifted
/// by its centre, where a slip at 5 % left it on the floor).
const WEIGHT_CARRIED: f32 = 1.5;

/// Factor on the lengths of the grip's tethers ([`hold::Hold::grip`]): 3 % of give, so a cloth
/// hanging from the hand swings without the tethers jerking it.
const GRIP_GIVE: f32 = 1.03;

/// The soft grab's settings for one frame, from [`SolverParams`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Grip {
    /// Radius of the held patch in m.
    pub radius: f32,
    /// α̃ = α/h² of the whole grab (kg⁻¹).
    pub alpha_tilde: f32,
    /// The force limit times h² (kg·m).
    pub max_lambda: f32,
}

impl Cloth {
    /// At a soft grab's first step: takes the patch within `radius` m of the hit point and
    /// builds the grip's tethers to it ([`hold::Hold::grip`]).
    pub(super) fn take_patch(&mut self, radius: f32) {
        if let Some(hit) = self.hold.patch_wanted() {
            self.hold.set_patch(hold::patch_around(hit, radius, &self.model, &self.particles));
        }
        // Only for a cloth nothing else holds up: beside the pins' tethers the grip's fought
        // them (on the line between two pins their balls meet in a point), stretching the top
        // edge of a 128² curtain by 66 %, while the pins' tethers already carry a pinned cloth.
        if self.tethers.count() > 0 {
            return;
        }
        if let Some(anchors) = self.hold.grip_wanted(self.particles.len()) {
            let loosened: Vec<(bool, f32)> = self
                .tether_settings()
                .into_iter()
                .map(|(on, slack)| (on, slack * GRIP_GIVE))
                .collect();
            let grip = self.build_tethers(&loosened, &anchors);
            self.hold.set_grip(grip);
        }
    }

    /// The strain at which the grip slips ([`SolverParams::grab_slip_strain`]); never on a
    /// cloth that tears: it gives way by tearing, and a grip slipping at the strain of the
    /// edge next to the hand (which may not tear there, or the hand would rip out a scrap)
    /// held `rip_the_flag` at that strain without ever tearing it.
    pub(super) fn grip_slip_strain(&self, params: &SolverParams) -> f32 {
        if self.tears() {
            f32::INFINITY
        } else {
            params.grab_slip_strain
        }
    }

    /// The least and the most force the grip holds with (N): `grab_max_force` at most, and at
    /// least [`WEIGHT_CARRIED`] × the weight of a cloth without pins (nothing else holds it
    /// up) or a hundredth of a newton.
    pub(super) fn grip_force_range(&self, params: &SolverParams) -> (f32, f32) {
        let least = if self.hold.grab().is_some_and(|g| g.point.is_some()) && self.pinned_count() == 0 {
            WEIGHT_CARRIED * self.total_mass() * params.gravity.length()
        } else {
            0.0
        };
        (least.max(MIN_GRIP_FORCE), params.grab_max_force)
    }

    /// The cloth's mass in kg.
    fn total_mass(&self) -> f32 {
        (0..self.particles.len()).map(|i| self.particles.mass(i, self.density_of(i))).sum()
    }
}
