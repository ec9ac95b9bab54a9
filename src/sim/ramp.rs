//! Live stiffness changes without a jerk.
//!
//! Changing a stretched cloth's stiffness at once releases (or demands) elastic energy within
//! one frame: a curtain made 100× stiffer snaps up at metres per second. Instead, every
//! constraint's compliance is blended *linearly in compliance* from its value when the change
//! was requested to the new material's over [`RAMP_SECONDS`]. Since a hanging cloth's strain is
//! proportional to compliance, the cloth then moves to its new shape at an even pace. A new
//! request during a ramp starts from the blended values, so dragging a slider is smooth too.
//! Density and friction take effect at once (they do not store energy).

use super::cloth::{distance_compliance, hinge_compliance, Cloth};
use super::params::Material;

/// Duration of a stiffness blend in simulated seconds.
pub const RAMP_SECONDS: f32 = 0.3;

/// Compliances at the start of a blend, by constraint id, and how far the blend has come.
#[derive(Debug, Clone)]
pub(crate) struct ComplianceRamp {
    from_distance: Vec<f32>,
    from_hinge: Vec<f32>,
    progress: f32,
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
                self.ramp = Some(self.snapshot_compliances());
            }
            let density_changed = self.applied.areal_density != target.areal_density;
            self.applied = target.clone();
            if density_changed {
                self.update_inverse_masses();
            }
        }
        let Some(ramp) = self.ramp.as_mut() else { return };
        ramp.progress = (ramp.progress + dt / RAMP_SECONDS).min(1.0);
        let done = ramp.progress >= 1.0;
        self.refresh_compliances();
        if done {
            self.ramp = None;
        }
    }

    fn snapshot_compliances(&self) -> ComplianceRamp {
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
        ComplianceRamp {
            from_distance,
            from_hinge,
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
                let to = distance_compliance(&self.model.distances[id as usize], material);
                batch.compliance[slot] = ramp.map_or(to, |r| blend(r.from_distance.get(id as usize), to, r));
            }
        }
        for batch in self.hinges.iter_batches_mut() {
            for (compliance, &id) in batch.compliance.iter_mut().zip(&batch.id) {
                let to = hinge_compliance(&self.model.hinges[id as usize], material);
                *compliance = ramp.map_or(to, |r| blend(r.from_hinge.get(id as usize), to, r));
            }
        }
    }
}
