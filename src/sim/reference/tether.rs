//! Tethers, long-range attachments to the pins (docs/physics.md §5; Kim, Chentanez and
//! Müller 2012).
//!
//! A tether keeps a free particle i within L_ia of a pinned anchor a (L_ia the rest distance
//! through the cloth times the material's slack): C = |x_i − x_a| − L_ia ≤ 0. Each particle
//! has up to two, to the nearest pin of each of its two nearest groups of pins; which anchors
//! and how long is a search through the cloth, done once by the engine's
//! `super::super::tethers::Tethers::build` and read here. The anchor is pinned, so only x_i
//! moves, and only when outside: to the closest point of the intersection of its two balls,
//! which is the projection onto one ball if that lies in the other, else the projection onto
//! the circle where the two spheres meet; anchors too far apart for the spheres to meet fall
//! back to one projection after the other. A lone tether is its ball twice. No compliance, no
//! λ, no damping.
//!
//! While corrections are summed compensated (h < 1/1200 s) every ball is 2 ppm larger, so
//! rounding at the tether's length does not undo sub-ulp corrections (the engine's
//! `ROUNDING_ALLOWANCE`).

use glam::Vec3;

use super::RefParticle;
use crate::sim::model::Model;
use crate::sim::params::Material;
use crate::sim::tethers::{closest_in_balls, meeting_circle, Ball, Tethers as Search, ROUNDING_ALLOWANCE};

/// Every particle's tethers and, for the current frame, the region they allow.
#[derive(Debug, Clone)]
pub(super) struct Tethers {
    /// Per particle: (anchor particle, allowed distance in m), nearest first; empty when no
    /// particle has a tether.
    of: Vec<Vec<(usize, f32)>>,
    /// Per particle: its two balls and the circle where their spheres meet, `None` without
    /// tethers (made at the start of each frame).
    regions: Vec<Option<Region>>,
}

/// The two balls a particle must lie in and the circle where their spheres meet (axis,
/// centre, radius): the engine's geometry ([`crate::sim::tethers`]), called, not copied.
type Region = (Ball, Ball, Option<(Vec3, Vec3, f32)>);

impl Tethers {
    /// The tethers the engine builds for `model` under `material` (none when the material
    /// turns them off): through every distance constraint, from the pinned particles.
    pub fn new(model: &Model, material: &Material) -> Self {
        let edges = model.distances.iter().map(|c| (c.a, c.b, c.rest));
        let search = material
            .tethers
            .then(|| Search::build(&model.positions, &model.pinned, edges, |_| material.tether_slack));
        let of = match search {
            Some(search) if search.count() > 0 => (0..model.particle_count()).map(|i| search.of(i).collect()).collect(),
            _ => Vec::new(),
        };
        Self { of, regions: Vec::new() }
    }

    /// Whether no particle has a tether.
    pub fn is_empty(&self) -> bool {
        self.of.is_empty()
    }

    /// Start of a frame: every tethered particle's region about the anchors where they are
    /// now, grown by 2 ppm when `compensated`.
    pub fn start_frame(&mut self, particles: &[RefParticle], compensated: bool) {
        let allowance = if compensated { 1.0 + ROUNDING_ALLOWANCE } else { 1.0 };
        let ball = |&(anchor, length): &(usize, f32)| Ball {
            centre: particles[anchor].x,
            radius: length * allowance,
        };
        let region = |tethers: &Vec<(usize, f32)>| {
            let (a, b) = match tethers.as_slice() {
                [] => return None,
                [lone] => (ball(lone), ball(lone)),
                [first, second, ..] => (ball(first), ball(second)),
            };
            Some((a, b, meeting_circle(a, b)))
        };
        self.regions = self.of.iter().map(region).collect();
    }

    /// Moves `x`, particle `i`'s position, to the closest point its tethers allow.
    pub fn project(&self, i: usize, x: &mut Vec3) {
        if let Some((a, b, circle)) = self.regions.get(i).copied().flatten() {
            *x = closest_in_balls(*x, a, b, circle);
        }
    }
}
