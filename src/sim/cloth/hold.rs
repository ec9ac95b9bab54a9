//! What the mouse holds: a particle held kinematically (the hard grab: inverse mass 0, moved
//! to the target, as in Ten Minute Physics) or a patch of cloth around a point of a triangle
//! pulled toward the target through compliant, force-bounded attachments (the soft grab,
//! [`SoftGrab`]; docs/physics.md §1).

use glam::Vec3;

use crate::sim::interaction::{Grab, TriangleHit};
use crate::sim::model::Model;
use crate::sim::particles::Particles;
use crate::sim::solver::{GrabShape, PatchPoint, SoftGrab};
use crate::sim::tethers::Tethers;

/// The force a grip starts with (N), firming up from there ([`Hold::slip`]): a hand closes on
/// the cloth. Grabbed at the full 40 N, a 128² curtain's 65-particle patch jerked the cloth
/// to 47 % strain in its first frame and set it swinging for seconds.
const FIRST_GRIP_FORCE: f32 = 1.0;

/// `force` (N) within `(least, most)`; `most` wins if they cross.
fn within((least, most): (f32, f32), force: f32) -> f32 {
    force.max(least).min(most)
}

/// The grab, if any, and the soft grab's target at the end of the last step.
#[derive(Debug, Clone, Default)]
pub(crate) struct Hold {
    grab: Option<Grab>,
    /// The soft grab's target at the end of the last step (the start of the next one's
    /// interpolation).
    from: Vec3,
    /// The soft grab's patch, taken at its first step with that step's grab radius (empty:
    /// the hit point alone is held).
    patch: Option<Vec<PatchPoint>>,
    /// The grip's tethers: every particle outside the patch tethered to the patch's nearest
    /// particle, as to a pin (see [`Self::grip`]); built with the patch, rebuilt when the
    /// cloth's tethers are.
    grip: Option<Tethers>,
    /// The force the grip holds with now (N; `None` until the grab's first step), lowered
    /// while the cloth is strained past the slip strain ([`Self::slip`]).
    force: Option<f32>,
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
            patch: None,
            grip: None,
            force: None,
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
            patch: None,
            grip: None,
            force: None,
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

    /// The force the grip pulls with at most in the coming step (N), within `range`:
    /// [`FIRST_GRIP_FORCE`] at the grab's first step, then as [`Self::slip`] left it.
    pub fn pull(&self, range: (f32, f32)) -> f32 {
        within(range, self.force.unwrap_or(FIRST_GRIP_FORCE))
    }

    /// After a step whose largest strain was `strain`: the grip slips where the cloth is
    /// strained past `slip_strain`, so the force it holds with drops in proportion (at most
    /// halving in a frame), and firms up in proportion (at most doubling in a frame) while the
    /// cloth is below it, within `range` (N). A hand cannot pull woven cloth harder than the
    /// friction of its pinch, which the cloth's tension at the fingers reaches when it is
    /// visibly stretched; measured on the cloth's strain rather than as a fixed force, the
    /// bound holds whatever the solver's effective stiffness (one sweep per substep makes a
    /// stiff cloth stretch more under the same force than the material would).
    pub fn slip(&mut self, strain: f32, slip_strain: f32, range: (f32, f32)) {
        if self.grab.and_then(|g| g.point).is_none() {
            return;
        }
        let ratio = (slip_strain / strain.max(1e-9)).clamp(0.5, 2.0);
        self.force = Some(within(range, self.pull(range) * ratio));
    }

    /// The hit of a soft grab whose patch is not taken yet (see [`Self::set_patch`]).
    pub fn patch_wanted(&self) -> Option<TriangleHit> {
        self.grab.and_then(|g| g.point).filter(|_| self.patch.is_none())
    }

    /// Sets the soft grab's patch ([`patch_around`]).
    pub fn set_patch(&mut self, patch: Vec<PatchPoint>) {
        self.patch = Some(patch);
    }

    /// The patch's particles as anchors (a mask over `n` particles) when the grip's tethers
    /// are to be built: a patch is held and they are not built yet.
    pub fn grip_wanted(&self, n: usize) -> Option<Vec<bool>> {
        let patch = self.patch.as_ref().filter(|p| !p.is_empty() && self.grip.is_none())?;
        let mut anchors = vec![false; n];
        patch.iter().for_each(|p| anchors[p.particle as usize] = true);
        Some(anchors)
    }

    /// Sets the grip's tethers, built from [`Self::grip_wanted`]'s anchors.
    pub fn set_grip(&mut self, tethers: Tethers) {
        self.grip = Some(tethers);
    }

    /// Drops the grip's tethers, to be rebuilt before the next step (pins, topology or the
    /// tether settings changed).
    pub fn forget_grip(&mut self) {
        self.grip = None;
    }

    /// Prepares the grip's tethers for the coming frame with the patch where it is now and
    /// substep `h` (s), when a patch is held and the cloth has tethers.
    ///
    /// A cloth hanging from the hand is in the position a hanging cloth is in without tethers:
    /// one sweep per substep carries the load a few edges, so it sagged from the patch and the
    /// edges at the patch's rim stretched by 40 % on the default curtain lifted off the floor
    /// by its centre. So, for a cloth without pins, the hand holds every particle within its
    /// rest distance (through the cloth, times the slack and a little give) of the patch's
    /// nearest particle, where that particle was at the start of the frame (the hand moves a
    /// centimetre or two a frame; the stretch constraints take up that lag): 12 %.
    pub fn prepare_grip(&mut self, particles: &Particles, h: f32) {
        if let Some(grip) = self.grip.as_mut() {
            grip.prepare_frame(&|i| particles.position(i), None, &[], h);
        }
    }

    /// The grip's tethers prepared by [`Self::prepare_grip`], if it has any.
    pub fn grip(&self) -> Option<&Tethers> {
        self.grip.as_ref().filter(|t| t.count() > 0)
    }

    /// The frame's soft grab: its attachments with compliance term α̃ = `alpha_tilde` (kg⁻¹)
    /// and multiplier bound `max_lambda` (kg·m), on the patch (the hit point alone until
    /// [`Self::set_patch`] and when the patch is empty).
    pub fn soft(&self, model: &Model, alpha_tilde: f32, max_lambda: f32) -> Option<SoftGrab<'_>> {
        let g = self.grab?;
        let hit = g.point?;
        let vertices = model.triangles[hit.triangle as usize].map(|i| i as usize);
        let shape = match &self.patch {
            Some(patch) if !patch.is_empty() => GrabShape::Patch(patch),
            _ => GrabShape::Point {
                vertices,
                weights: hit.barycentric,
            },
        };
        Some(SoftGrab {
            shape,
            from: self.from,
            to: g.target,
            alpha_tilde,
            max_lambda,
        })
    }

    /// The particles the soft grab holds (after its first step), or the hit triangle's
    /// corners before it and when the hit point alone is held.
    pub fn held_particles(&self, model: &Model) -> Vec<u32> {
        let Some(hit) = self.grab.and_then(|g| g.point) else {
            return self.held_particle().map(|i| vec![i as u32]).unwrap_or_default();
        };
        match &self.patch {
            Some(patch) if !patch.is_empty() => patch.iter().map(|p| p.particle).collect(),
            _ => model.triangles[hit.triangle as usize].to_vec(),
        }
    }

    /// After a step: the next one's soft grab starts from this one's target.
    pub fn finish_step(&mut self) {
        if let Some(g) = self.grab {
            self.from = g.target;
        }
    }
}

/// The particles within `radius` m of the hit point in the rest shape, reached from the hit
/// triangle through triangles (so a fold or a cut's far side lying near in space is not
/// grabbed), with their offsets from the hit point now and their shares ω(d) / Σ ω,
/// ω(d) = 1 − d²/(2R²) (see [`crate::sim::solver::SoftGrab`]), the firmest first (ties: the
/// lowest index), the rest ascending. Empty when none lies within
/// the radius (a radius under the mesh spacing).
pub(crate) fn patch_around(hit: TriangleHit, radius: f32, model: &Model, particles: &Particles) -> Vec<PatchPoint> {
    if radius <= 0.0 {
        return Vec::new();
    }
    let corners = model.triangles[hit.triangle as usize];
    let rest_hit: Vec3 = (0..3).map(|k| model.positions[corners[k] as usize] * hit.barycentric[k]).sum();
    let weight = |i: u32| {
        let d2 = model.positions[i as usize].distance_squared(rest_hit) / (radius * radius);
        if d2 < 1.0 {
            1.0 - 0.5 * d2
        } else {
            0.0
        }
    };
    let mut neighbours = vec![Vec::new(); particles.len()];
    for tri in &model.triangles {
        for (k, &i) in tri.iter().enumerate() {
            neighbours[i as usize].extend([tri[(k + 1) % 3], tri[(k + 2) % 3]]);
        }
    }
    let mut seen = vec![false; particles.len()];
    let mut stack: Vec<u32> = corners.into_iter().filter(|&i| weight(i) > 0.0).collect();
    stack.iter().for_each(|&i| seen[i as usize] = true);
    let mut patch = Vec::new();
    while let Some(i) = stack.pop() {
        patch.push(i);
        for &j in &neighbours[i as usize] {
            if !seen[j as usize] && weight(j) > 0.0 {
                seen[j as usize] = true;
                stack.push(j);
            }
        }
    }
    patch.sort_unstable();
    let total: f32 = patch.iter().map(|&i| weight(i)).sum();
    let at = point_on(hit, model, particles);
    let mut points: Vec<PatchPoint> = patch
        .into_iter()
        .map(|i| PatchPoint {
            particle: i,
            offset: particles.position(i as usize) - at,
            share: weight(i) / total,
        })
        .collect();
    // The solve moves the patch by where its firmest particle can reach: found once here.
    let firmest = (0..points.len()).reduce(|best, k| if points[k].share > points[best].share { k } else { best });
    if let Some(firmest) = firmest {
        points[..=firmest].rotate_right(1);
    }
    points
}

/// Where the point `hit` of a triangle (Σ b_k x_k over its corners) is now (m).
pub(crate) fn point_on(hit: TriangleHit, model: &Model, particles: &Particles) -> Vec3 {
    let tri = model.triangles[hit.triangle as usize];
    (0..3).map(|k| particles.position(tri[k] as usize) * hit.barycentric[k]).sum()
}
