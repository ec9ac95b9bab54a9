//! The colliders of a cloth as they move: scripted paths ([`Collider::motion`]), drags by the
//! mouse ([`Colliders::move_to`]), and the track a frame sweeps them along, one pose per
//! substep, so the cloth is pushed and carried rather than jumped over.

use glam::Vec3;

use crate::sim::collision::{Collider, NearTriangles, PosedCollider};
use crate::sim::error::{check_len, SimError, MAX_COLLIDERS};
use crate::sim::interaction::Ray;

/// Every collider where it is now, where its path starts, the drag asked for the next step
/// and the poses of the frame being stepped.
#[derive(Debug, Clone, Default)]
pub(crate) struct Colliders {
    /// The colliders where they are now.
    now: Vec<Collider>,
    /// Each collider where its path starts (as placed, moved by the drags since): it is now at
    /// this pose translated by its path's offset at the current time.
    homes: Vec<Collider>,
    /// Translation of each collider asked by [`Self::move_to`] for the next step (m).
    moves: Vec<Vec3>,
    /// The colliders in each substep of the frame being stepped (see
    /// [`crate::sim::solver::Frame::colliders`]).
    track: Vec<PosedCollider>,
    /// Each particle's near triangles of each mesh collider: mesh k's lists are entries
    /// k · particles .. (k + 1) · particles ([`PosedCollider::near_slot`]).
    near: Vec<NearTriangles>,
}

impl Colliders {
    /// Validated colliders `homes`, placed on their paths at time `time` (s).
    pub fn new(homes: Vec<Collider>, time: f64) -> Result<Self, SimError> {
        check_len("colliders", homes.len(), MAX_COLLIDERS, "at most 256 colliders")?;
        homes.iter().try_for_each(Collider::validate)?;
        homes.iter().try_for_each(Collider::check_loaded)?;
        let mut colliders = Self {
            moves: vec![Vec3::ZERO; homes.len()],
            homes,
            ..Self::default()
        };
        colliders.now = (0..colliders.homes.len()).map(|k| colliders.on_path(k, time)).collect();
        Ok(colliders)
    }

    /// The colliders where they are now.
    pub fn now(&self) -> &[Collider] {
        &self.now
    }

    /// The poses of the frame being stepped: one per collider when none moves, else one run
    /// of them per substep.
    pub fn track(&self) -> &[PosedCollider] {
        &self.track
    }

    /// The per-particle lists of near triangles for `particles` particles (entries for new
    /// particles list nothing yet), as a pointer for the frame's threads, each of which
    /// touches only its own particles' lists.
    pub fn near_lists(&mut self, particles: usize) -> *mut NearTriangles {
        let meshes = self.now.iter().filter(|c| matches!(c, Collider::Mesh { .. })).count();
        if self.near.len() != meshes * particles {
            // Regrouped per mesh for the new particle count; a list is only a cache.
            self.near = vec![NearTriangles::default(); meshes * particles];
        }
        self.near.as_mut_ptr()
    }

    /// No colliders at all, now or in the frame (the guard's replay without contacts).
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// Collider `k` at time `t` (s) of its path, from its home moved by the pending drag.
    fn on_path(&self, k: usize, t: f64) -> Collider {
        let home = &self.homes[k];
        let moved = self.moves[k];
        match home.motion() {
            Some(path) => home.translated(moved + path.offset(t)),
            None if moved == Vec3::ZERO => home.clone(),
            None => home.translated(moved),
        }
    }

    /// Asks collider `index` to have its [`Collider::position`] at `to` (m) at the end of the
    /// next step (see [`crate::sim::cloth::Cloth::move_collider`]).
    pub fn move_to(&mut self, index: usize, to: Vec3) -> Result<(), SimError> {
        let Some(now) = self.now.get(index) else {
            return Err(SimError::InvalidParameter {
                name: "collider",
                value: index as f64,
                expected: "the index of an existing collider".into(),
            });
        };
        let moved = now.translated(to - now.position());
        moved.validate()?;
        // Measured on the moved collider, so the ground keeps only the vertical part.
        self.moves[index] = moved.position() - now.position();
        Ok(())
    }

    /// The collider `ray` enters first and the ray parameter there, the ground left out.
    pub fn pick(&self, ray: &Ray) -> Option<(usize, f32)> {
        self.now
            .iter()
            .enumerate()
            .filter(|(_, c)| !matches!(c, Collider::Ground { .. }))
            .filter_map(|(k, c)| Some((k, c.ray_distance(ray)?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Fills the track for a frame of `substeps` substeps from `start_time` to `end_time`
    /// (s): each collider moves from where it is to where its path and the pending drag put
    /// it, in equal parts per substep. A frame in which nothing moves gets one entry per
    /// collider.
    pub fn plan_track(&mut self, substeps: u32, start_time: f64, end_time: f64) {
        let travel: Vec<Vec3> = (0..self.now.len())
            .map(|k| {
                let path = |t| self.homes[k].motion().map_or(Vec3::ZERO, |m| m.offset(t));
                self.moves[k] + (path(end_time) - path(start_time))
            })
            .collect();
        self.track.clear();
        if travel.iter().all(|&d| d == Vec3::ZERO) {
            let at_rest = self.now.iter().map(|c| PosedCollider::new(c.clone(), Vec3::ZERO));
            self.track.extend(at_rest);
            self.number_meshes();
            return;
        }
        for substep in 0..substeps {
            let (before, after) = (substep as f32 / substeps as f32, (substep + 1) as f32 / substeps as f32);
            let posed = self
                .now
                .iter()
                .zip(&travel)
                .map(|(c, &d)| PosedCollider::new(c.translated(d * after), d * after - d * before));
            self.track.extend(posed);
        }
        self.number_meshes();
    }

    /// Gives each mesh of the track its slot of near-triangle lists, in collider order.
    fn number_meshes(&mut self) {
        let count = self.now.len().max(1);
        for (k, posed) in self.track.iter_mut().enumerate() {
            let collider = k % count;
            posed.near_slot = matches!(posed.collider, Collider::Mesh { .. })
                .then(|| self.now[..collider].iter().filter(|c| matches!(c, Collider::Mesh { .. })).count());
        }
    }

    /// After a step that ended at `end_time` (s): the pending drags become part of the homes
    /// and every collider is placed on its path.
    pub fn finish_moves(&mut self, end_time: f64) {
        for k in 0..self.now.len() {
            self.now[k] = self.on_path(k, end_time);
            let moved = std::mem::take(&mut self.moves[k]);
            if moved != Vec3::ZERO {
                self.homes[k] = self.homes[k].translated(moved);
            }
        }
    }
}
