//! Particle state in structure-of-arrays form.
//!
//! Position and inverse mass are packed as `[x, y, z, w]` so a constraint projection reads
//! everything it needs about a particle in one 16-byte load; the other quantities live in
//! their own arrays and are touched only by the per-particle passes.

use glam::Vec3;

use super::constraints::distance::PosW;

/// The particles of a cloth.
#[derive(Debug, Clone, Default)]
pub struct Particles {
    /// Position (m) and inverse mass (1/kg; 0 while pinned or held).
    pub(crate) pos: Vec<PosW>,
    /// Position at the start of the current substep (m); w unused.
    pub(crate) prev: Vec<PosW>,
    /// Velocity in m/s.
    pub(crate) vel: Vec<Vec3>,
    /// Area lumped to the particle (m²); mass = area · ρ_A + point mass.
    pub(crate) area: Vec<f32>,
    /// Extra mass in kg.
    pub(crate) point_mass: Vec<f32>,
    /// Permanently pinned (until toggled).
    pub(crate) pinned: Vec<bool>,
}

impl Particles {
    /// Number of particles.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// True when there are no particles.
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    /// Position of particle `i` in m.
    pub fn position(&self, i: usize) -> Vec3 {
        xyz(self.pos[i])
    }

    /// Velocity of particle `i` in m/s.
    pub fn velocity(&self, i: usize) -> Vec3 {
        self.vel[i]
    }

    /// Inverse mass of particle `i` as the solver uses it (0 when pinned or held).
    pub fn inverse_mass(&self, i: usize) -> f32 {
        self.pos[i][3]
    }

    /// Mass of particle `i` in kg for areal density `density` (kg/m²).
    pub fn mass(&self, i: usize, density: f32) -> f32 {
        self.area[i] * density + self.point_mass[i]
    }

    /// Whether particle `i` is pinned.
    pub fn is_pinned(&self, i: usize) -> bool {
        self.pinned[i]
    }

    /// Iterator over all positions.
    pub fn positions(&self) -> impl ExactSizeIterator<Item = Vec3> + '_ {
        self.pos.iter().map(|&p| xyz(p))
    }

    pub(crate) fn set_position(&mut self, i: usize, p: Vec3) {
        self.pos[i][..3].copy_from_slice(&p.to_array());
    }

    /// Appends a particle (used by tearing when a vertex is split).
    pub(crate) fn push(&mut self, pos: Vec3, inv_mass: f32, vel: Vec3, area: f32, point_mass: f32, pinned: bool) -> u32 {
        self.pos.push([pos.x, pos.y, pos.z, inv_mass]);
        self.prev.push([pos.x, pos.y, pos.z, 0.0]);
        self.vel.push(vel);
        self.area.push(area);
        self.point_mass.push(point_mass);
        self.pinned.push(pinned);
        (self.pos.len() - 1) as u32
    }
}

/// The xyz part of a packed particle.
pub(crate) fn xyz(p: PosW) -> Vec3 {
    Vec3::new(p[0], p[1], p[2])
}
