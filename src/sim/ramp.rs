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

use super::constraint_store::ConstraintStore;
use super::model::Model;
use super::params::Material;
use super::particles::Particles;

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
    /// Each material slot's stretch compliance factor (m/N per unit coefficient) at the start
    /// and the end.
    stretch_factor: Vec<[f32; 2]>,
    /// Duration of this blend in s.
    seconds: f32,
    progress: f32,
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
pub(crate) fn stiffness_differs(a: &Material, b: &Material) -> bool {
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

impl ComplianceRamp {
    /// A blend from the compliances `constraints` use now toward those of `target` (one
    /// material per slot). `applied` is the materials in use and `previous` the blend still
    /// running, if any (a new request starts from where it got); `extent` (m) and
    /// `mean_strain` size the blend's duration (see [`blend_seconds`]): the longest any slot
    /// needs.
    pub(crate) fn start(
        constraints: &ConstraintStore,
        model: &Model,
        (applied, previous): (&[Material], Option<&ComplianceRamp>),
        target: &[Material],
        extent: f32,
        mean_strain: f32,
    ) -> Self {
        let [from_distance, from_hinge] = constraints.compliances_by_id(model);
        let stretch_factor: Vec<[f32; 2]> = (0..target.len())
            .map(|slot| {
                let from = previous.map_or(applied[slot].stretch_compliance_factor(), |r| r.current_stretch_factor(slot));
                [from, target[slot].stretch_compliance_factor()]
            })
            .collect();
        let seconds = stretch_factor
            .iter()
            .map(|&[from, to]| blend_seconds(extent, mean_strain, from, to))
            .fold(RAMP_SECONDS, f32::max);
        ComplianceRamp {
            from_distance,
            from_hinge,
            stretch_factor,
            seconds,
            progress: 0.0,
        }
    }

    /// The stretch compliance factor the blend has reached in material slot `slot`.
    fn current_stretch_factor(&self, slot: usize) -> f32 {
        let [from, to] = self.stretch_factor[slot];
        from + (to - from) * self.progress
    }

    /// Moves the blend on by a frame of `dt` seconds; true once it has arrived.
    pub(crate) fn advance(&mut self, dt: f32) -> bool {
        self.progress = (self.progress + dt / self.seconds).min(1.0);
        self.progress >= 1.0
    }

    /// The compliance between `from` (the start value, if the constraint had one) and `to`.
    /// Constraints created during the ramp (tearing) have no start value and take `to` at once.
    fn blend(&self, from: Option<&f32>, to: f32) -> f32 {
        match from {
            Some(&f) if f.is_finite() => f + (to - f) * self.progress,
            _ => to,
        }
    }
}

/// Rewrites every constraint's effective compliance from its slot's material in `materials`,
/// blended with the ramp's start values while a ramp runs.
pub(crate) fn refresh_compliances(constraints: &mut ConstraintStore, model: &Model, materials: &[Material], ramp: Option<&ComplianceRamp>) {
    constraints.refresh_compliances(
        model,
        materials,
        |id, to| ramp.map_or(to, |r| r.blend(r.from_distance.get(id as usize), to)),
        |id, to| ramp.map_or(to, |r| r.blend(r.from_hinge.get(id as usize), to)),
    );
}

/// Length of the diagonal of the particles' bounding box in m.
pub(crate) fn extent(particles: &Particles) -> f32 {
    let mut positions = particles.positions();
    let Some(first) = positions.next() else { return 0.0 };
    let (lo, hi) = positions.fold((first, first), |(lo, hi), p| (lo.min(p), hi.max(p)));
    lo.distance(hi)
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
