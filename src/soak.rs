//! `drape soak`: a randomized endurance test through the public API. Episodes of
//! [`EPISODE_STEPS`] steps cycle through four scenes (the default curtain, the tearable
//! sheet, a 64² sheet over every collider kind, a 100² curtain), on 1, 2, 4 and 16 threads
//! ([`EPISODE_THREADS`]): every four episodes run each scene and each thread count once, and
//! sixteen run every pair ([`episode_setup`]), so a 15-minute soak (about a dozen episodes)
//! has 16-thread episodes.
//! Before each step a seeded generator may grab, drag (up to 20 m), throw, release, pin,
//! cut, toggle tearing, move a collider (up to 20 m), reset, or raise a storm: every solver and material field set to a
//! random value the validation accepts (drawn from zero, ordinary and extreme magnitudes;
//! substeps × iterations kept within a work budget). After every step it checks that the
//! state is finite and inside the world, that every index is valid and that mass is
//! conserved (tearing splits area, never makes or loses it). A step the divergence guard
//! refuses is counted (the state stayed finite) and the settings go back to the scene's, as
//! a person would after the app paused. Each failure and guard trip prints a replay
//! line: an episode depends only on the seed and its number, and the solver is
//! deterministic, so `--episode` reruns it exactly; the settings of that step follow it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::Instant;

use glam::Vec3;
use serde::Serialize;

use crate::preset::{Embedded, Preset};
use crate::sim::{
    with_assumed_cores, Cloth, Collider, Material, Orientation, PinMode, Ray, SimError, SolverParams, FRAME_WORK_BUDGET, MAX_THREADS,
    WORLD_EXTENT,
};

/// Steps per episode.
pub const EPISODE_STEPS: u32 = 150;
/// Scenes the episodes cycle through.
pub const SCENES: [&str; 4] = [
    "default curtain",
    "tearable sheet",
    "64² over colliders and a table mesh",
    "100² curtain",
];
/// The thread counts the episodes cycle through ([`episode_setup`]). Each runs on as many OS
/// threads as it asks, however many cores the machine has ([`crate::sim::with_assumed_cores`]):
/// the solver's waits are soaked oversubscribed too (a user's request is capped at the cores).
pub const EPISODE_THREADS: [u32; 4] = [1, 2, 4, MAX_THREADS as u32];
/// Work per step a storm may ask for: a tenth of the app's budget keeps episodes short.
const SOAK_WORK_BUDGET: u64 = FRAME_WORK_BUDGET / 10;

/// SplitMix64: a small, well-mixed generator, so a seed means the same run everywhere.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, p: f32) -> bool {
        self.unit() < p
    }

    fn vector(&mut self, scale: f32) -> Vec3 {
        Vec3::new(self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0)) * scale
    }

    /// A storm value: zero, an ordinary magnitude, or an extreme one, either sign.
    fn wild(&mut self) -> f32 {
        let magnitude = match self.below(4) {
            0 => 0.0,
            1 => 10f32.powf(self.range(-3.0, 3.0)),
            _ => 10f32.powf(self.range(-8.0, 14.0)),
        };
        if self.chance(0.2) {
            -magnitude
        } else {
            magnitude
        }
    }

    /// A storm count: log-uniform in [0, 1e6].
    fn count(&mut self) -> u32 {
        10f32.powf(self.range(0.0, 6.0)) as u32 - u32::from(self.chance(0.1))
    }
}

/// What a soak run found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SoakReport {
    /// Wall time in s.
    pub seconds: f64,
    /// Episodes started.
    pub episodes: u64,
    /// Steps run.
    pub steps: u64,
    /// Interactions and storms applied.
    pub actions: u64,
    /// Of those, storms.
    pub storms: u64,
    /// Distinct scenes run.
    pub scenes: usize,
    /// Largest |coordinate| of any particle after any step, in m.
    pub max_abs_position: f32,
    /// Steps the divergence guard undid (state restored, still finite).
    pub guard_trips: u64,
    /// Of those, steps whose solver produced a non-finite value (the rest flung a particle
    /// beyond the world).
    pub guard_nonfinite: u64,
    /// Non-finite states, panics, bad indices, lost mass or refused valid input.
    pub failures: u64,
}

/// Runs episodes from `seed` for `seconds` (or only `episode`), printing a replay line for
/// each failure and guard trip through `log`.
pub fn soak(seconds: f64, seed: u64, episode: Option<u64>, log: &mut dyn FnMut(String)) -> SoakReport {
    let started = Instant::now();
    let mut report = SoakReport::default();
    let mut scenes_seen = [false; SCENES.len()];
    let deadline = || episode.is_none() && started.elapsed().as_secs_f64() >= seconds;
    let mut number = episode.unwrap_or(0);
    loop {
        scenes_seen[(number % SCENES.len() as u64) as usize] = true;
        report.episodes += 1;
        with_assumed_cores(MAX_THREADS, || run_episode(seed, number, &mut report, log, &deadline));
        if episode.is_some() || deadline() {
            break;
        }
        number += 1;
    }
    report.scenes = scenes_seen.iter().filter(|&&s| s).count();
    report.seconds = started.elapsed().as_secs_f64();
    report
}

/// The table mesh of the colliders' scene.
const TABLE: &str = "assets/table.obj";

/// The scene of an episode, as a preset.
fn scene(index: usize) -> Preset {
    let parse = |text: &str, name: &str| Preset::parse(text, Path::new(name)).expect("shipped presets are valid");
    let curtain = || parse(include_str!("../presets/default.ron"), "presets/default.ron");
    match index {
        0 => curtain(),
        1 => parse(include_str!("../presets/tearable_sheet.ron"), "presets/tearable_sheet.ron"),
        2 => {
            let mut p = curtain();
            let cloth = p.single_grid_mut().expect("the default preset is one grid");
            (cloth.columns, cloth.rows) = (64, 64);
            cloth.orientation = Orientation::Horizontal;
            cloth.origin = Vec3::new(0.0, 1.6, 0.0);
            cloth.pins = PinMode::None;
            p.colliders = vec![
                Collider::Ground { height: 0.0, motion: None },
                Collider::Sphere {
                    center: Vec3::new(0.3, 0.8, 0.0),
                    radius: 0.35,
                    motion: None,
                },
                Collider::Capsule {
                    a: Vec3::new(-0.7, 0.9, 0.1),
                    b: Vec3::new(0.7, 0.9, -0.1),
                    radius: 0.06,
                    motion: None,
                },
                Collider::Box {
                    center: Vec3::new(-0.4, 0.4, 0.0),
                    half_extents: Vec3::splat(0.3),
                    rotation_degrees: Vec3::new(0.0, 20.0, 10.0),
                    motion: None,
                },
                // Last, so it is the collider the episodes drag about.
                Collider::Mesh {
                    file: TABLE.into(),
                    scale: 1.0,
                    position: Vec3::new(0.0, 0.0, 1.0),
                    rotation_degrees: Vec3::new(0.0, 15.0, 0.0),
                    motion: None,
                    shape: Default::default(),
                },
            ];
            // Carried with the scene, so the soak runs from any directory.
            let table = [(TABLE.into(), include_str!("../assets/table.obj").to_owned())];
            p.embedded_meshes = Embedded(Some(std::sync::Arc::new(table.into_iter().collect())));
            p
        }
        _ => {
            let mut p = curtain();
            let cloth = p.single_grid_mut().expect("the default preset is one grid");
            (cloth.columns, cloth.rows) = (100, 100);
            p
        }
    }
}

/// Mass of the particles' lumped area (m² per unit density) and of their point masses (kg).
fn mass_budget(cloth: &Cloth) -> (f64, f64) {
    let p = cloth.particles();
    (0..p.len()).fold((0.0, 0.0), |(area, point), i| {
        let point_mass = p.mass(i, 0.0) as f64;
        (area + p.mass(i, 1.0) as f64 - point_mass, point + point_mass)
    })
}

/// The run state of one episode.
struct Episode {
    rng: Rng,
    preset: Preset,
    params: SolverParams,
    material: Material,
    cloth: Cloth,
    mass: (f64, f64),
}

/// Episode `number`'s scene (an index into [`SCENES`]) and thread count: the scenes in turn,
/// the thread counts shifted by one every round of scenes (a Latin square), so any four
/// consecutive episodes from a multiple of four cover every scene and every thread count, and
/// any sixteen every pair.
pub fn episode_setup(number: u64) -> (usize, u32) {
    let (scenes, counts) = (SCENES.len() as u64, EPISODE_THREADS.len() as u64);
    let scene = number % scenes;
    let threads = EPISODE_THREADS[((number + number / scenes) % counts) as usize];
    (scene as usize, threads)
}

fn run_episode(seed: u64, number: u64, report: &mut SoakReport, log: &mut dyn FnMut(String), stop: &dyn Fn() -> bool) {
    let (scene_index, threads) = episode_setup(number);
    let preset = scene(scene_index);
    let mut params = preset.solver.clone();
    params.threads = threads;
    let cloth = preset.build().expect("soak scenes build");
    let mut e = Episode {
        rng: Rng::new(seed ^ number.wrapping_mul(0xa076_1d64_78bd_642f)),
        material: preset.material.clone(),
        mass: mass_budget(&cloth),
        params,
        preset,
        cloth,
    };
    let replay = |step: u32, what: &str| {
        format!(
            "replay: drape soak --seed {seed} --episode {number}   ({}, {threads} thread(s), step {step}: {what})",
            SCENES[scene_index]
        )
    };
    for step in 0..EPISODE_STEPS {
        if stop() {
            return;
        }
        if let Some(storm) = act(&mut e) {
            report.actions += 1;
            report.storms += u64::from(storm);
        }
        report.steps += 1;
        let stepped = catch_unwind(AssertUnwindSafe(|| e.cloth.step(&e.params, &e.material).map(|_| ())));
        let problem = match stepped {
            Err(_) => Some("panic".to_string()),
            Ok(Err(SimError::Diverged { what, phase, .. })) => {
                report.guard_trips += 1;
                report.guard_nonfinite += u64::from(what.contains("non-finite"));
                log(replay(step, &format!("guard: {what} in the {phase}, state restored")));
                log(format!("  settings: {:?} {:?}", e.params, e.material));
                // As a person would after the app paused: back to the scene's settings.
                e.params = SolverParams {
                    threads,
                    ..e.preset.solver.clone()
                };
                e.material = e.preset.material.clone();
                None
            }
            Ok(Err(refused)) => Some(format!("valid input refused: {refused}")),
            Ok(Ok(())) => check(&e.cloth, e.mass, &mut report.max_abs_position).err(),
        };
        if let Some(problem) = problem {
            report.failures += 1;
            log(replay(step, &problem));
            log(format!("  settings: {:?} {:?}", e.params, e.material));
            return;
        }
    }
}

/// Finiteness, index validity and mass conservation after a step.
fn check(cloth: &Cloth, mass: (f64, f64), max_abs: &mut f32) -> Result<(), String> {
    let p = cloth.particles();
    for i in 0..p.len() {
        let (x, v) = (p.position(i), p.velocity(i));
        if !(x.is_finite() && v.is_finite() && x.abs().max_element() <= WORLD_EXTENT) {
            return Err(format!("particle {i} at {x} moving {v}"));
        }
        *max_abs = max_abs.max(x.abs().max_element());
    }
    cloth.model().validate().map_err(|e| format!("bad model: {e}"))?;
    let (area, point) = mass_budget(cloth);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-4 * b.abs().max(1e-9);
    if !close(area, mass.0) || !close(point, mass.1) {
        return Err(format!(
            "mass changed: area {area} (was {}), point mass {point} (was {})",
            mass.0, mass.1
        ));
    }
    Ok(())
}

/// Maybe applies one random action; returns `Some(true)` for a storm, `Some(false)` for an
/// interaction, `None` for no action.
fn act(e: &mut Episode) -> Option<bool> {
    let r = &mut e.rng;
    if !r.chance(0.35) {
        return None;
    }
    let n = e.cloth.particles().len();
    let any = |r: &mut Rng| r.below(n) as u32;
    match r.below(12) {
        0 | 1 => {
            let i = any(r);
            e.cloth.grab(i).expect("index in range");
        }
        2 | 3 => {
            let reach = if r.chance(0.1) { 20.0 } else { 3.0 };
            let target = e.cloth.grab_state().map_or(Vec3::ZERO, |g| g.target) + r.vector(reach);
            e.cloth.drag_to(target);
        }
        4 => e.cloth.release(Some(r.vector(60.0))),
        5 => {
            if r.chance(0.5) {
                e.cloth.release(None)
            } else {
                e.cloth.release_pinned()
            }
        }
        6 => {
            let i = any(r);
            e.cloth.toggle_pin(i);
        }
        7 => {
            let origin = Vec3::new(0.0, 1.5, 4.0);
            let ray = |r: &mut Rng| Ray {
                origin,
                direction: Vec3::new(r.range(-0.3, 0.3), r.range(-0.4, 0.2), -1.0),
            };
            let (from, to) = (ray(r), ray(r));
            e.cloth.cut(&from, &to);
        }
        8 => {
            e.material.tear_strain = match e.material.tear_strain {
                Some(_) => None,
                None => Some(10f32.powf(r.range(-2.0, 0.5))),
            }
        }
        10 => {
            // Moves a collider (the ground's height only) up to 3 m, or 20 m, through the
            // cloth; a move that would leave the world is refused and changes nothing.
            let movable = e.cloth.colliders().iter().rposition(|c| !matches!(c, Collider::Ground { .. }));
            if let Some(k) = movable.map(|last| r.below(last + 1)) {
                let reach = if r.chance(0.1) { 20.0 } else { 3.0 };
                let _ = e.cloth.move_collider(k, e.cloth.colliders()[k].position() + r.vector(reach));
            }
        }
        9 => {
            if r.chance(0.3) {
                e.cloth = e.preset.build().expect("soak scenes build");
                e.cloth.set_material_now(&e.material).expect("accepted material");
                e.mass = mass_budget(&e.cloth);
            }
        }
        _ => {
            storm(r, &mut e.params, &mut e.material);
            fit_work(&e.cloth, &mut e.params, &e.material);
            return Some(true);
        }
    }
    Some(false)
}

/// Sets every solver and material field to a random value the validation accepts (a value
/// it refuses is drawn again, up to eight times, then the field keeps its value).
fn storm(r: &mut Rng, params: &mut SolverParams, material: &mut Material) {
    type Field<T> = fn(&mut T) -> &mut f32;
    let solver_fields: [Field<SolverParams>; 13] = [
        |p| &mut p.dt,
        |p| &mut p.gravity.x,
        |p| &mut p.gravity.y,
        |p| &mut p.gravity.z,
        |p| &mut p.constraint_damping,
        |p| &mut p.air_damping,
        |p| &mut p.wind.x,
        |p| &mut p.wind_gust,
        |p| &mut p.aerodynamic_drag,
        |p| &mut p.max_speed,
        |p| &mut p.collision_thickness,
        |p| &mut p.self_thickness,
        |p| &mut p.self_friction,
    ];
    let material_fields: [Field<Material>; 15] = [
        |m| &mut m.youngs_modulus,
        |m| &mut m.poisson_ratio,
        |m| &mut m.thickness,
        |m| &mut m.areal_density,
        |m| &mut m.compliance_scale,
        |m| &mut m.stretch_stiffness,
        |m| &mut m.shear_stiffness,
        |m| &mut m.bend_stiffness,
        |m| &mut m.stretch_damping_time,
        |m| &mut m.friction_static,
        |m| &mut m.friction_kinetic,
        |m| &mut m.tear_debilitation,
        |m| &mut m.tear_response_time,
        |m| &mut m.tear_length,
        |m| &mut m.tether_slack,
    ];
    let counts: [fn(&mut SolverParams) -> &mut u32; 3] = [|p| &mut p.substeps, |p| &mut p.iterations, |p| &mut p.max_splits_per_step];
    for field in solver_fields {
        draw(params, field, |p| p.validate().is_ok(), || r.wild());
    }
    for field in counts {
        let old = *field(params);
        *field(params) = (0..8)
            .map(|_| r.count())
            .find(|&c| {
                *field(params) = c;
                params.validate().is_ok()
            })
            .unwrap_or(old);
    }
    for field in material_fields {
        draw(material, field, |m| m.validate().is_ok(), || r.wild());
    }
    material.tethers = r.chance(0.5);
    params.self_collision = r.chance(0.5);
}

/// Sets `field` of `target` to the first of eight draws `accepted` takes, else leaves it.
fn draw<T>(target: &mut T, field: fn(&mut T) -> &mut f32, accepted: impl Fn(&T) -> bool, mut value: impl FnMut() -> f32) {
    let old = *field(target);
    for _ in 0..8 {
        *field(target) = value();
        if accepted(target) {
            return;
        }
    }
    *field(target) = old;
}

/// Lowers iterations, then substeps, until a step fits the soak's work budget and the
/// material's compliance check.
fn fit_work(cloth: &Cloth, params: &mut SolverParams, material: &Material) {
    while cloth.work_per_step(params) > SOAK_WORK_BUDGET || params.validate_with(material).is_err() {
        if params.iterations > 1 {
            params.iterations /= 2;
        } else if params.substeps > 1 {
            params.substeps /= 2;
        } else {
            params.dt = (params.dt * 2.0).min(10.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_episode_is_reproducible_from_its_seed() {
        let run = || {
            let mut lines = Vec::new();
            let report = soak(0.0, 7, Some(2), &mut |line| lines.push(line));
            (report.steps, report.actions, report.storms, report.max_abs_position, lines)
        };
        let first = run();
        assert_eq!(first.0, EPISODE_STEPS as u64);
        assert!(first.1 > 20 && first.2 > 0, "actions {} storms {}", first.1, first.2);
        assert_eq!(first, run());
    }

    /// Every four episodes from a multiple of four run each scene and each thread count once
    /// (so a 15-minute soak of a dozen episodes has 16-thread ones), and sixteen every pair.
    #[test]
    fn episodes_cover_every_scene_and_thread_count_early() {
        let setups: Vec<(usize, u32)> = (0..16).map(episode_setup).collect();
        for round in setups.chunks(4) {
            let mut scenes: Vec<usize> = round.iter().map(|s| s.0).collect();
            let mut threads: Vec<u32> = round.iter().map(|s| s.1).collect();
            scenes.sort_unstable();
            threads.sort_unstable();
            assert_eq!(scenes, [0, 1, 2, 3]);
            assert_eq!(threads, EPISODE_THREADS);
        }
        let mut pairs = setups.clone();
        pairs.sort_unstable();
        pairs.dedup();
        assert_eq!(pairs.len(), 16, "{setups:?}");
    }

    #[test]
    fn storms_only_set_accepted_values() {
        let mut r = Rng::new(1);
        let (mut params, mut material) = (SolverParams::default(), Material::default());
        let mut changed = 0;
        for _ in 0..200 {
            let before = (params.clone(), material.clone());
            storm(&mut r, &mut params, &mut material);
            params.validate().unwrap();
            material.validate().unwrap();
            changed += usize::from(before != (params.clone(), material.clone()));
        }
        assert_eq!(changed, 200, "every storm changes something");
    }
}
