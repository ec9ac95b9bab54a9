//! Live stiffness changes without a jerk.
//!
//! Changing a stretched cloth's stiffness at once releases (or demands) elastic energy within
//! one frame: a curtain made 100× stiffer snaps up at metres per second. Instead, every
//! constraint's compliance is blended *linearly in compliance* from its value when the change
//! was requested to the new material's. A hanging cloth's equilibrium strain is proportional to
//! compliance, so under a linear blend the equilibrium shape moves at a constant speed: the
//! strain to shed (or gain), the mean stretch strain times |1 − α_new/α_old|, times the cloth's
//! size, over the blend's duration. The duration is chosen so that speed stays below
//! [`MAX_RETRACT_SPEED`] (at least [`RAMP_SECONDS`], at most [`MAX_RAMP_SECONDS`]): a small
//! slider move blends in 0.3 s, E typed from 2.5 kPa back to 5 MPa on a curtain stretched by
//! tens of percent takes seconds, and neither throws the cloth. (A blend that is geometric in
//! stiffness would do most of such a change in its first frames, the opposite of what is
//! needed.) A new request during a ramp starts from the blended values, so dragging a slider
//! is smooth too. Density and friction take effect at once (they do not store energy).

use super::cloth::Cloth;
use super::params::Material;

/// Shortest stiffness blend in simulated seconds (changes that move the cloth little).
pub const RAMP_SECONDS: f32 = 0.3;

/// Longest stiffness blend in simulated seconds.
pub const MAX_RAMP_SECONDS: f32 = 5.0;

/// Speed in m/s at which a blend may move the cloth's equilibrium shape.
pub const MAX_RETRACT_SPEED: f32 = 0.5;

/// Compliances at the start of a blend, by constraint id, and how far the blend has come.
#[derive(Debug, Clone)]
pub(crate) struct ComplianceRamp {
    from_distance: Vec<f32>,
    from_hinge: Vec<f32>,
    /// The stretch compliance factor (m/N per unit coefficient) at the start and the end.
    stretch_factor: [f32; 2],
    /// Duration of this blend in s.
    seconds: f32,
    progress: f32,
}

impl ComplianceRamp {
    /// The stretch compliance factor the blend has reached.
    fn current_stretch_factor(&self) -> f32 {
        let [from, to] = self.stretch_factor;
        from + (to - from) * self.progress
    }
}

/// Blend duration for a cloth of size `extent` (m) at mean stretch strain `mean_strain` whose
/// stretch compliance goes from `from` to `to`: the equilibrium moves by about
/// extent · strain · |1 − to/from|, at [`MAX_RETRACT_SPEED`] at most.
pub(crate) fn blend_seconds(extent: f32, mean_strain: f32, from: f32, to: f32) -> f32 {
    let travel = extent * mean_strain.abs() * (1.0 - to / from).abs();
    let seconds = travel / MAX_RETRACT_SPEED;
    if seconds.is_finite() {
        seconds.clamp(RAMP_SECONDS, MAX_RAMP_SECONDS)
    } else {
        MAX_RAMP_SECONDS
    }
}

/// Whether two materials give different compliances.
fn stiffness_differs(a: &Material, b: &Material) -> bool {
    (
        a.youngs_modulus,
        a.poisson_ratio,
        a.thickness,
        a.compliance_scale,
        a.stretch_stiffness,
        a.shear_stiffness,
        a.bend_stiffness,
    ) != (
        b.youngs_modulus,
        b.poisson_ratio,
        b.thickness,
        b.compliance_scale,
        b.stretch_stiffness,
        b.shear_stiffness,
        b.bend_stiffness,
    )
}

impl Cloth {
    /// Takes `target` as the material, blending stiffness changes over [`RAMP_SECONDS`];
    /// `dt` is the frame step about to be taken.
    pub(crate) fn ramp_material(&mut self, target: &Material, dt: f32) {
        if self.applied != *target {
            if stiffness_differs(&self.applied, target) {
                self.ramp = Some(self.snapshot_compliances(target));
            }
            let density_changed = self.applied.areal_density != target.areal_density;
            self.applied = target.clone();
            if density_changed {
                self.update_inverse_masses();
            }
        }
        let Some(ramp) = self.ramp.as_mut() else { return };
        ramp.progress = (ramp.progress + dt / ramp.seconds).min(1.0);
        let done = ramp.progress >= 1.0;
        self.refresh_compliances();
        if done {
            self.ramp = None;
        }
    }

    /// The blend from the compliances in use now toward `target`'s.
    fn snapshot_compliances(&self, target: &Material) -> ComplianceRamp {
        let mut from_distance = vec![f32::NAN; self.model.distances.len()];
        for batch in self.distances.iter_batches() {
            for (slot, &id) in batch.id.iter().enumerate() {
                from_distance[id as usize] = batch.compliance[slot];
            }
        }
        let mut from_hinge = vec![f32::NAN; self.model.hinges.len()];
        for batch in self.hinges.iter_batches() {
            for (&compliance, &id) in batch.compliance.iter().zip(&batch.id) {
                from_hinge[id as usize] = compliance;
            }
        }
        let from = self
            .ramp
            .as_ref()
            .map_or(self.applied.stretch_compliance_factor(), ComplianceRamp::current_stretch_factor);
        let to = target.stretch_compliance_factor();
        ComplianceRamp {
            from_distance,
            from_hinge,
            stretch_factor: [from, to],
            seconds: blend_seconds(self.extent(), self.stats().mean_strain, from, to),
            progress: 0.0,
        }
    }

    /// Rewrites every constraint's effective compliance from the applied material, blended
    /// with the ramp's start values while a ramp runs. Constraints created during the ramp
    /// (tearing) have no start value and take the target at once.
    pub(crate) fn refresh_compliances(&mut self) {
        let material = &self.applied;
        let blend = |from: Option<&f32>, to: f32, ramp: &ComplianceRamp| match from {
            Some(&f) if f.is_finite() => f + (to - f) * ramp.progress,
            _ => to,
        };
        let ramp = self.ramp.as_ref();
        for batch in self.distances.iter_batches_mut() {
            for (slot, &id) in batch.id.iter().enumerate() {
                let to = material.distance_compliance(&self.model.distances[id as usize]);
                batch.compliance[slot] = ramp.map_or(to, |r| blend(r.from_distance.get(id as usize), to, r));
            }
        }
        for batch in self.hinges.iter_batches_mut() {
            for (compliance, &id) in batch.compliance.iter_mut().zip(&batch.id) {
                let to = material.hinge_compliance(&self.model.hinges[id as usize]);
                *compliance = ramp.map_or(to, |r| blend(r.from_hinge.get(id as usize), to, r));
            }
        }
    }
}

impl Cloth {
    /// Length of the diagonal of the particles' bounding box in m.
    fn extent(&self) -> f32 {
        let mut positions = self.particles.positions();
        let Some(first) = positions.next() else { return 0.0 };
        let (lo, hi) = positions.fold((first, first), |(lo, hi), p| (lo.min(p), hi.max(p)));
        lo.distance(hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blend_duration_keeps_the_equilibrium_speed_bounded() {
        // A 2 m cloth at 50 % strain made 2 000× stiffer sheds ~1 m of stretch: 2 s at 0.5 m/s.
        let seconds = blend_seconds(2.0, 0.5, 2000.0, 1.0);
        assert!((seconds - 2.0 * 0.5 * (1.0 - 1.0 / 2000.0) / MAX_RETRACT_SPEED).abs() < 1e-6);
        // A small change on a taut cloth takes the shortest blend, a huge one the longest.
        assert_eq!(blend_seconds(1.0, 0.001, 1.0, 0.8), RAMP_SECONDS);
        assert_eq!(blend_seconds(1.0, 0.001, 1.0, 1e9), MAX_RAMP_SECONDS);
        assert_eq!(blend_seconds(1.0, 0.5, 0.0, 1.0), MAX_RAMP_SECONDS);
    }
}
