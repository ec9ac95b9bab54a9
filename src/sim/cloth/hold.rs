//! What the mouse holds: a particle held kinematically (the hard grab: inverse mass 0, moved
//! to the target, as in Ten Minute Physics) or a point of a triangle pulled toward the target
//! through a compliant constraint (the soft grab, [`SoftGrab`]; docs/physics.md §1).

use glam::Vec3;

use crate::sim::interaction::{Grab, TriangleHit};
use crate::sim::model::Model;
use crate::sim::particles::Particles;
use crate::sim::solver::SoftGrab;

/// The grab, if any, and the soft grab's target at the end of the last step.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Hold {
    grab: Option<Grab>,
    /// The soft grab's target at the end of the last step (the start of the next one's
    /// interpolation).
    from: Vec3,
}

impl Hold {
    /// Holds particle `i`, with the target where it is.
    pub fn particle(i: u32, target: Vec3) -> Self {
        let grab = Grab {
            particle: i,
            target,
            point: None,
        };
        Self {
            grab: Some(grab),
            from: target,
        }
    }

    /// Holds the point `hit` (weights summing to 1), now at `target`.
    pub fn point(hit: TriangleHit, target: Vec3, model: &Model) -> Self {
        let grab = Grab {
            particle: 0,
            target,
            point: Some(hit),
        };
        let hold = Self {
            grab: Some(grab),
            from: target,
        };
        Self {
            grab: hold.state(model),
            ..hold
        }
    }

    /// What is held, if anything (for a soft grab, `particle` is the held triangle's corner
    /// with the largest weight as the triangle is now, after any tear).
    pub fn state(&self, model: &Model) -> Option<Grab> {
        let mut g = self.grab?;
        if let Some(hit) = g.point {
            let tri = model.triangles[hit.triangle as usize];
            let heaviest = (0..3).fold(0, |best, k| if hit.barycentric[k] > hit.barycentric[best] { k } else { best });
            g.particle = tri[heaviest];
        }
        Some(g)
    }

    /// The grab as it was started (a soft grab's `particle` is not kept up to date: see
    /// [`Self::state`]).
    pub fn grab(&self) -> Option<Grab> {
        self.grab
    }

    /// The particle held kinematically (the hard grab), if any.
    pub fn held_particle(&self) -> Option<usize> {
        self.grab.filter(|g| g.point.is_none()).map(|g| g.particle as usize)
    }

    /// Moves the target (m) of the current grab, if any.
    pub fn set_target(&mut self, target: Vec3) {
        if let Some(g) = self.grab.as_mut() {
            g.target = target;
        }
    }

    /// Where the held point is now (m): the held particle, or the soft grab's point Σ b_k x_k.
    pub fn point_now(&self, model: &Model, particles: &Particles) -> Option<Vec3> {
        let g = self.grab?;
        Some(match g.point {
            Some(hit) => point_on(hit, model, particles),
            None => particles.position(g.particle as usize),
        })
    }

    /// Velocity of the held point (m/s): Σ b_k v_k, or the held particle's.
    pub fn velocity(&self, model: &Model, particles: &Particles) -> Option<Vec3> {
        let g = self.grab?;
        Some(match g.point {
            Some(hit) => {
                let tri = model.triangles[hit.triangle as usize];
                (0..3).map(|k| particles.velocity(tri[k] as usize) * hit.barycentric[k]).sum()
            }
            None => particles.velocity(g.particle as usize),
        })
    }

    /// The frame's hard grab: the held particle, where it is at the start of the frame and its
    /// target.
    pub fn kinematic(&self, particles: &Particles) -> Option<(usize, Vec3, Vec3)> {
        let g = self.grab.filter(|g| g.point.is_none())?;
        let i = g.particle as usize;
        Some((i, particles.position(i), g.target))
    }

    /// The frame's soft grab constraint with compliance term α̃ = `alpha_tilde` (kg⁻¹).
    pub fn soft(&self, model: &Model, alpha_tilde: f32) -> Option<SoftGrab> {
        let g = self.grab?;
        let hit = g.point?;
        Some(SoftGrab {
            vertices: model.triangles[hit.triangle as usize].map(|i| i as usize),
            weights: hit.barycentric,
            from: self.from,
            to: g.target,
            alpha_tilde,
        })
    }

    /// After a step: the next one's soft grab starts from this one's target.
    pub fn finish_step(&mut self) {
        if let Some(g) = self.grab {
            self.from = g.target;
        }
    }
}

/// Where the point `hit` of a triangle (Σ b_k x_k over its corners) is now (m).
pub(crate) fn point_on(hit: TriangleHit, model: &Model, particles: &Particles) -> Vec3 {
    let tri = model.triangles[hit.triangle as usize];
    (0..3).map(|k| particles.position(tri[k] as usize) * hit.barycentric[k]).sum()
}
