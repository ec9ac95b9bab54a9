//! A cut's seam snapped onto the stroke ("node snapping", Nienhuys & van der Stappen 2001).
//!
//! A cut separates the cloth along mesh edges, since it only splits vertices. Left at that,
//! a stroke at an angle to the mesh leaves a staircase of edges up to a triangle's size off
//! the stroke. So before anything is split, each triangle edge the cut surface crosses gets
//! one endpoint moved onto the surface: the nearer one, by the fraction `f` of the edge at
//! which the surface crosses it (or the farther one, when the nearer cannot move). The move
//! is made in the rest shape and in the current shape alike (x_v ← x_v + f (x_u − x_v), the
//! same for the rest position, the start-of-step position, the velocity and the texture
//! coordinates), so the seam stays on the stroke after the cloth relaxes. The moved
//! vertices then form a chain on the stroke and the triangles on either side of it keep
//! their shape up to the move.
//!
//! Limits that keep every triangle usable:
//! - a vertex moves at most [`MAX_SNAP`] of an edge, and at most once per cut;
//! - no triangle around the vertex keeps less than [`MIN_AREA_KEPT`] of its rest area or
//!   turns over (in the rest shape);
//! - the vertex's triangles keep their total rest area within [`MAX_AREA_CHANGE`], so the
//!   cloth's outline and mass stay (a border vertex moves only along a straight border, and
//!   a curved rest shape is not snapped);
//! - pinned vertices and the hand's triangle stay where they are.
//!
//! An edge whose endpoints may not move keeps its crossing; the split then runs along the
//! mesh edges there, each triangle around it going to the side where most of it lies. After
//! the moves, every constraint at a moved vertex takes its new rest length (distances keep
//! their compliance coefficient) or rest angle and coefficient (hinges), and the areas around
//! the moved vertices are lumped anew, scaled so their sum (the mass they carry) is what it
//! was.

use glam::Vec3;

use super::TearEditor;
use crate::sim::model::{hinge_at_rest, triangle_area, Compliance, Hinge};

/// Largest move of a snapped vertex, as a fraction of the edge it moves along. Half an edge
/// reaches the stroke from one endpoint or the other on every crossed edge.
const MAX_SNAP: f32 = 0.5;

/// Smallest fraction of its rest area a triangle may keep when one of its corners snaps.
const MIN_AREA_KEPT: f32 = 0.2;

/// Largest change of the total rest area of a snapped vertex's triangles, relative: moving
/// a vertex inside a flat sheet, or along a straight border, changes none (up to rounding);
/// moving a corner or a border vertex off the border would change the cloth's outline, and
/// on a curved rest shape any move changes the area a little: those are not done, so a split
/// that re-lumps the vertex's mass from the areas afterwards keeps the total.
const MAX_AREA_CHANGE: f32 = 1e-5;

/// A triangle edge the cut surface crosses: its endpoints and where, as the fraction of the
/// way from `a` to `b`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Crossing {
    pub a: u32,
    pub b: u32,
    pub at: f32,
}

impl TearEditor<'_> {
    /// Moves one endpoint of each crossing onto the cut surface where the limits of the
    /// [module docs](self) allow, shortest moves first; returns which particles moved onto
    /// it (indexed by particle).
    pub(super) fn snap_to_stroke(&mut self, crossings: &[Crossing]) -> Vec<bool> {
        let mut snapped = vec![false; self.particles.len()];
        let mut moved = Vec::new();
        let mut order: Vec<&Crossing> = crossings.iter().collect();
        // Shortest moves first (in the rest shape), so a vertex reaches the stroke along its
        // shortest crossed edge, not slid along a diagonal.
        let rest = &self.model.positions;
        let shortest_move = |c: &Crossing| c.at.min(1.0 - c.at) * rest[c.a as usize].distance(rest[c.b as usize]);
        order.sort_by(|x, y| shortest_move(x).total_cmp(&shortest_move(y)).then((x.a, x.b).cmp(&(y.a, y.b))));
        for c in order {
            if snapped[c.a as usize] || snapped[c.b as usize] {
                continue;
            }
            let ends = [(c.a, c.b, c.at), (c.b, c.a, 1.0 - c.at)];
            let (near, far) = if c.at <= 0.5 { (ends[0], ends[1]) } else { (ends[1], ends[0]) };
            if let Some(&(v, u, f)) = [near, far].iter().find(|&&(v, u, f)| self.may_snap(v, u, f)) {
                self.move_along_edge(v, u, f);
                moved.push(v);
                snapped[v as usize] = true;
            }
        }
        if !moved.is_empty() {
            self.settle_rest_shape(&moved);
        }
        snapped
    }

    /// Whether vertex `v` may move the fraction `f` of the way toward `u` (see the limits in
    /// the [module docs](self)).
    fn may_snap(&self, v: u32, u: u32, f: f32) -> bool {
        if f > MAX_SNAP || self.particles.inverse_mass(v as usize) == 0.0 || self.is_held(v) {
            return false;
        }
        let rest = &self.model.positions;
        let moved = rest[v as usize].lerp(rest[u as usize], f);
        let fan = &self.topology().vertex_triangles[v as usize];
        let normal = |t: u32, at_v: Vec3| {
            let [a, b, c] = self.model.triangles[t as usize].map(|w| if w == v { at_v } else { rest[w as usize] });
            (b - a).cross(c - a)
        };
        let keeps_shape = fan.iter().all(|&t| {
            let before = normal(t, rest[v as usize]);
            normal(t, moved).dot(before) >= MIN_AREA_KEPT * before.length_squared()
        });
        let area = |at_v: Vec3| fan.iter().map(|&t| normal(t, at_v).length()).sum::<f32>();
        let before = area(rest[v as usize]);
        let outline_kept = (area(moved) - before).abs() <= MAX_AREA_CHANGE * before;
        keeps_shape && outline_kept
    }

    /// Whether the hand holds `v` (the held particle, or a corner of the soft grab's triangle).
    fn is_held(&self, v: u32) -> bool {
        self.grab
            .is_some_and(|g| g.particle == v || g.point.is_some_and(|hit| self.model.triangles[hit.triangle as usize].contains(&v)))
    }

    /// Moves vertex `v` the fraction `f` of the way toward `u`, in the current and the rest
    /// shape alike (position, start-of-step position, velocity, texture coordinates).
    fn move_along_edge(&mut self, v: u32, u: u32, f: f32) {
        let (i, j) = (v as usize, u as usize);
        let p = &mut *self.particles;
        // A new position: its compensation (the rounding carried from earlier substeps) goes.
        p.set_position(i, p.position(i).lerp(p.position(j), f));
        p.prev.set(i, p.prev.get(i).lerp(p.prev.get(j), f));
        p.vel.set(i, p.vel.get(i).lerp(p.vel.get(j), f));
        let rest = &mut self.model.positions;
        rest[i] = rest[i].lerp(rest[j], f);
        self.move_texture_coordinates(v, u, f);
    }

    /// Moves `v`'s texture coordinates in every triangle around it the fraction `f` of the
    /// way toward `u`'s (taken from a triangle holding both).
    fn move_texture_coordinates(&mut self, v: u32, u: u32, f: f32) {
        if self.model.corner_uvs.is_empty() {
            return;
        }
        let fan = self.topology().vertex_triangles[v as usize].clone();
        let corner = |tri: [u32; 3], w: u32| tri.iter().position(|&x| x == w);
        let Some(step) = fan.iter().find_map(|&t| {
            let tri = self.model.triangles[t as usize];
            let uvs = self.model.corner_uvs[t as usize];
            Some((uvs[corner(tri, u)?] - uvs[corner(tri, v)?]) * f)
        }) else {
            return;
        };
        for t in fan {
            let tri = self.model.triangles[t as usize];
            if let Some(k) = corner(tri, v) {
                self.model.corner_uvs[t as usize][k] += step;
            }
        }
    }

    /// After snapping `moved`: the constraints at the moved vertices take their new rest
    /// lengths and angles, and the areas around them are lumped anew.
    fn settle_rest_shape(&mut self, moved: &[u32]) {
        let mut distance_ids: Vec<u32> = Vec::new();
        let mut hinge_ids: Vec<u32> = Vec::new();
        let mut lumped: Vec<u32> = Vec::new();
        for &v in moved {
            let topo = self.topology();
            distance_ids.extend(&topo.vertex_distances[v as usize]);
            hinge_ids.extend(&topo.vertex_hinges[v as usize]);
            lumped.extend(
                topo.vertex_triangles[v as usize]
                    .iter()
                    .flat_map(|&t| self.model.triangles[t as usize]),
            );
        }
        for ids in [&mut distance_ids, &mut hinge_ids, &mut lumped] {
            ids.sort_unstable();
            ids.dedup();
        }
        for id in distance_ids {
            let mut c = self.model.distances[id as usize];
            c.rest = self.model.positions[c.a as usize].distance(self.model.positions[c.b as usize]);
            self.constraints.replace_distance(self.model, id, c, self.materials);
        }
        for id in hinge_ids {
            let old = self.model.hinges[id as usize];
            if let Some(new) = hinge_at_rest(&self.model.positions, old.wings, old.edge) {
                // A fixed compliance stays as it was set; a material one follows the new shape.
                let compliance = if matches!(old.compliance, Compliance::Material(_)) {
                    new.compliance
                } else {
                    old.compliance
                };
                self.constraints
                    .replace_hinge(self.model, id, Hinge { compliance, ..new }, self.materials);
            }
        }
        self.lump_areas(&lumped);
    }

    /// Lumps to each of `vertices` a third of the rest area of every triangle around it,
    /// scaled so that together they carry the area they carried before.
    fn lump_areas(&mut self, vertices: &[u32]) {
        let fresh: Vec<f64> = vertices
            .iter()
            .map(|&v| {
                let fan = self.topology().vertex_triangles[v as usize].iter();
                fan.map(|&t| triangle_area(&self.model.positions, self.model.triangles[t as usize]) as f64 / 3.0)
                    .sum()
            })
            .collect();
        let before: f64 = vertices.iter().map(|&v| self.model.lumped_area[v as usize] as f64).sum();
        let after: f64 = fresh.iter().sum();
        let scale = if after > 0.0 { before / after } else { 1.0 };
        for (&v, area) in vertices.iter().zip(fresh) {
            let area = (area * scale) as f32;
            self.model.lumped_area[v as usize] = area;
            self.particles.area[v as usize] = area;
        }
    }
}
