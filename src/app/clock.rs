//! Fixed-step timing: real frame time (scaled for slow motion) accumulates, and the solver
//! advances in whole steps of Δt. A variable Δt would make the cloth jitter, and unbounded
//! catch-up after a stall would spiral (each late frame running more steps than the last), so
//! at most [`MAX_STEPS_PER_FRAME`] steps run per frame — fewer when the steps are slow, see
//! [`step_cap`] — and the rest of the backlog is dropped (the cloth then runs in slow motion
//! rather than freezing the window).

/// Cap on solver steps per rendered frame.
pub const MAX_STEPS_PER_FRAME: u32 = 4;
/// Wall time per frame the solver may use for catch-up, in ms.
pub const STEP_BUDGET_MS: f64 = 40.0;

/// How many steps fit the frame budget when one step takes `step_ms` (at least one).
pub fn step_cap(step_ms: f64) -> u32 {
    if step_ms <= 0.0 {
        return MAX_STEPS_PER_FRAME;
    }
    ((STEP_BUDGET_MS / step_ms).floor() as u32).clamp(1, MAX_STEPS_PER_FRAME)
}

/// The time not yet simulated.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Accumulator {
    /// Simulated seconds owed, in [0, Δt) between frames.
    pending: f64,
}

impl Accumulator {
    /// Adds `real_dt` seconds of wall time scaled by `time_scale` and returns how many steps
    /// of `step_dt` to run now (at most `cap`).
    pub fn advance(&mut self, real_dt: f64, time_scale: f64, step_dt: f64, cap: u32) -> u32 {
        self.pending += real_dt.max(0.0) * time_scale.max(0.0);
        let steps = (self.pending / step_dt).floor();
        if steps > cap as f64 {
            self.pending = 0.0;
            return cap;
        }
        self.pending -= steps * step_dt;
        steps as u32
    }

    /// Forgets the backlog (after a pause or a reset).
    pub fn clear(&mut self) {
        self.pending = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A binary fraction, so sums of frame times are exact and step counts are too.
    const DT: f64 = 1.0 / 64.0;

    #[test]
    fn steps_match_elapsed_time_over_uneven_frames() {
        let mut acc = Accumulator::default();
        let frames = [0.25 * DT, 1.5 * DT, 0.75 * DT, 2.125 * DT, 0.5 * DT, 1.875 * DT];
        let steps: u32 = frames.iter().map(|&f| acc.advance(f, 1.0, DT, MAX_STEPS_PER_FRAME)).sum();
        let total: f64 = frames.iter().sum();
        assert_eq!(steps, (total / DT).floor() as u32);
        assert!(acc.pending < DT);
    }

    #[test]
    fn time_scale_slows_the_simulation() {
        let mut acc = Accumulator::default();
        let steps: u32 = (0..60).map(|_| acc.advance(DT, 0.25, DT, MAX_STEPS_PER_FRAME)).sum();
        assert_eq!(steps, 15);
    }

    #[test]
    fn a_stall_runs_at_most_the_cap_and_drops_the_rest() {
        let mut acc = Accumulator::default();
        assert_eq!(acc.advance(2.0, 1.0, DT, MAX_STEPS_PER_FRAME), MAX_STEPS_PER_FRAME);
        assert_eq!(acc.advance(DT * 0.5, 1.0, DT, MAX_STEPS_PER_FRAME), 0);
    }

    #[test]
    fn slow_steps_lower_the_cap_but_never_below_one() {
        assert_eq!(step_cap(0.0), MAX_STEPS_PER_FRAME);
        assert_eq!(step_cap(STEP_BUDGET_MS / 2.0), 2);
        assert_eq!(step_cap(STEP_BUDGET_MS * 10.0), 1);
        let mut acc = Accumulator::default();
        assert_eq!(acc.advance(1.0, 1.0, DT, step_cap(STEP_BUDGET_MS)), 1);
    }
}
