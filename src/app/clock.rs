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

/// Seconds over which the real-time ratio is averaged.
const RATIO_WINDOW_S: f64 = 1.0;
/// Frames shorter than this (s) are not sampled (no display refreshes at 1 kHz).
const MIN_SAMPLE_S: f64 = 1e-3;
/// The simulation counts as behind when it reaches less than this fraction of the time scale.
const BEHIND_FRACTION: f64 = 0.9;

/// How fast simulated time actually advances: simulated seconds per real second, averaged
/// over about [`RATIO_WINDOW_S`]. When the solver cannot keep up, the catch-up cap drops the
/// backlog and this falls below the requested time scale.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RealTimeRatio {
    ratio: Option<f64>,
}

impl RealTimeRatio {
    /// Records a frame of `real_dt` real seconds in which `simulated` seconds were stepped.
    /// Paused frames are left out (the ratio then keeps its last value), and so are frames
    /// shorter than [`MIN_SAMPLE_S`]: the loop's first one lasts microseconds, and as the first
    /// sample its huge ratio would take seconds to average away.
    pub fn record(&mut self, real_dt: f64, simulated: f64, running: bool) {
        if !running || real_dt < MIN_SAMPLE_S {
            return;
        }
        let sample = simulated / real_dt;
        let weight = (real_dt / RATIO_WINDOW_S).min(1.0);
        self.ratio = Some(match self.ratio {
            Some(old) => old + weight * (sample - old),
            None => sample,
        });
    }

    /// Simulated seconds per real second (None before the first running frame).
    #[cfg(test)]
    pub fn ratio(&self) -> Option<f64> {
        self.ratio
    }

    /// Forgets the average (after a pause, a load or a reset).
    pub fn clear(&mut self) {
        self.ratio = None;
    }

    /// Whether the simulation runs visibly slower than `time_scale` asks.
    pub fn behind(&self, time_scale: f64) -> bool {
        self.ratio.is_some_and(|r| r < BEHIND_FRACTION * time_scale)
    }

    /// The toolbar's reading: "1.00× real time", or "0.12× real time (behind: solver too slow)".
    pub fn label(&self, time_scale: f64) -> String {
        match self.ratio {
            None => "paused".to_string(),
            Some(r) if self.behind(time_scale) => format!("{r:.2}× real time · behind"),
            Some(r) => format!("{r:.2}× real time"),
        }
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

    /// Issue 19: a 128² curtain ran at 0.1× real time while the toolbar read 1.00×.
    #[test]
    fn a_capped_slow_solver_reads_as_behind_real_time() {
        let dt = 1.0 / 60.0;
        let mut acc = Accumulator::default();
        let mut ratio = RealTimeRatio::default();
        // Each step takes 160 ms of wall time: the cap lets one step run per 160 ms frame.
        for _ in 0..30 {
            let real = 0.16;
            let steps = acc.advance(real, 1.0, dt, step_cap(160.0));
            ratio.record(real, steps as f64 * dt, true);
        }
        let r = ratio.ratio().unwrap();
        assert!((r - dt / 0.16).abs() < 1e-3, "{r}");
        assert!(ratio.behind(1.0));
        assert!(ratio.label(1.0).contains("0.10× real time · behind"), "{}", ratio.label(1.0));
    }

    #[test]
    fn a_solver_that_keeps_up_is_not_behind_even_in_slow_motion() {
        let dt = 1.0 / 64.0;
        let mut acc = Accumulator::default();
        let mut ratio = RealTimeRatio::default();
        for _ in 0..240 {
            let steps = acc.advance(dt, 0.25, dt, MAX_STEPS_PER_FRAME);
            ratio.record(dt, steps as f64 * dt, true);
        }
        let r = ratio.ratio().unwrap();
        assert!((r - 0.25).abs() < 0.02, "{r}");
        assert!(!ratio.behind(0.25));
        assert!(ratio.behind(1.0), "0.25× is behind a requested 1×");
        assert_eq!(ratio.label(0.25), format!("{r:.2}× real time"));
    }

    #[test]
    fn paused_frames_leave_the_ratio_alone() {
        let mut ratio = RealTimeRatio::default();
        assert_eq!(ratio.label(1.0), "paused");
        ratio.record(0.02, 0.02, true);
        ratio.record(0.02, 0.0, false);
        assert_eq!(ratio.ratio(), Some(1.0));
        ratio.clear();
        assert_eq!(ratio.ratio(), None);
    }

    #[test]
    fn a_first_frame_of_microseconds_does_not_inflate_the_ratio() {
        let mut ratio = RealTimeRatio::default();
        ratio.record(2e-6, 1.0 / 60.0, true);
        for _ in 0..10 {
            ratio.record(0.1, 1.0 / 60.0, true);
        }
        let r = ratio.ratio().unwrap();
        assert!((r - 1.0 / 6.0).abs() < 1e-9, "ten frames of 0.1 s with one 1/60 s step each: {r}");
    }
}
