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

use glam::{Vec2, Vec3};

use super::super::interaction::Grab;
use super::super::model::{hinge_at_rest, triangle_area, Compliance, Hinge};
use super::super::particles::Particles;
use super::cut::Crossing;
use super::topology::Mesh;

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

/// One vertex moved onto the cut surface along a crossed edge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Snap {
    /// The vertex that moves.
    pub vertex: u32,
    /// The other end of the edge it moves along.
    pub toward: u32,
    /// How far it moves, as a fraction of the edge (at most [`MAX_SNAP`]).
    pub fraction: f32,
}

/// Snaps one endpoint of each of `crossings` onto the cut surface where the limits of the
/// [module docs](self) allow, shortest moves first, moving it in the rest shape `rest` at once
/// (the limits of later snaps read the moved shape). `mesh` gives the triangles around each
/// vertex, and `fixed` says which vertices may not move at all (pinned, held). Returns the
/// snaps in the order made; each vertex moves at most once.
pub(super) fn snap_rest_shape(crossings: &[Crossing], mesh: Mesh, rest: &mut [Vec3], fixed: impl Fn(u32) -> bool) -> Vec<Snap> {
    let mut snapped = vec![false; rest.len()];
    let mut snaps = Vec::new();
    let mut order: Vec<&Crossing> = crossings.iter().collect();
    // Shortest moves first (in the rest shape), so a vertex reaches the stroke along its
    // shortest crossed edge, not slid along a diagonal.
    let shortest_move = |c: &Crossing| c.at.min(1.0 - c.at) * rest[c.a as usize].distance(rest[c.b as usize]);
    order.sort_by(|x, y| shortest_move(x).total_cmp(&shortest_move(y)).then((x.a, x.b).cmp(&(y.a, y.b))));
    for c in order {
        if snapped[c.a as usize] || snapped[c.b as usize] {
            continue;
        }
        let ends = [(c.a, c.b, c.at), (c.b, c.a, 1.0 - c.at)];
        let (near, far) = if c.at <= 0.5 { (ends[0], ends[1]) } else { (ends[1], ends[0]) };
        let may_snap = |&&(v, u, f): &&(u32, u32, f32)| f <= MAX_SNAP && !fixed(v) && keeps_triangles(mesh, rest, v, u, f);
        if let Some(&(v, u, f)) = [near, far].iter().find(may_snap) {
            rest[v as usize] = rest[v as usize].lerp(rest[u as usize], f);
            snaps.push(Snap {
                vertex: v,
                toward: u,
                fraction: f,
            });
            snapped[v as usize] = true;
        }
    }
    snaps
}

/// Whether vertex `v` may move the fraction `f` of the way toward `u` in the `rest` shape:
/// no triangle around it keeps less than [`MIN_AREA_KEPT`] of its area or turns over, and
/// together they keep their area within [`MAX_AREA_CHANGE`].
fn keeps_triangles(mesh: Mesh, rest: &[Vec3], v: u32, u: u32, f: f32) -> bool {
    let moved = rest[v as usize].lerp(rest[u as usize], f);
    let fan = mesh.fan(v);
    let normal = |t: u32, at_v: Vec3| {
        let [a, b, c] = mesh.triangles[t as usize].map(|w| if w == v { at_v } else { rest[w as usize] });
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

/// Whether `grab` holds vertex `v` of `triangles` (the held particle, or a corner of the soft
/// grab's triangle).
pub(super) fn is_held(grab: Option<Grab>, triangles: &[[u32; 3]], v: u32) -> bool {
    grab.is_some_and(|g| g.particle == v || g.point.is_some_and(|hit| triangles[hit.triangle as usize].contains(&v)))
}

impl Snap {
    /// Makes the snap in the current shape: moves the particle's position, start-of-step
    /// position and velocity.
    pub fn move_particle(&self, particles: &mut Particles) {
        let (i, j, f) = (self.vertex as usize, self.toward as usize, self.fraction);
        // A new position: its compensation (the rounding carried from earlier substeps) goes.
        particles.set_position(i, particles.position(i).lerp(particles.position(j), f));
        particles.prev.set(i, particles.prev.get(i).lerp(particles.prev.get(j), f));
        particles.vel.set(i, particles.vel.get(i).lerp(particles.vel.get(j), f));
    }

    /// Makes the snap in the texture: moves the vertex's coordinates in every triangle around
    /// it the same fraction of the way toward its partner's (taken from a triangle holding
    /// both). `corner_uvs` holds each triangle's corners' coordinates, or nothing.
    pub fn move_texture_coordinates(&self, corner_uvs: &mut [[Vec2; 3]], mesh: Mesh) {
        if corner_uvs.is_empty() {
            return;
        }
        let (v, u, f) = (self.vertex, self.toward, self.fraction);
        let fan = mesh.fan(v);
        let corner = |tri: [u32; 3], w: u32| tri.iter().position(|&x| x == w);
        let Some(step) = fan.iter().find_map(|&t| {
            let tri = mesh.triangles[t as usize];
            let uvs = corner_uvs[t as usize];
            Some((uvs[corner(tri, u)?] - uvs[corner(tri, v)?]) * f)
        }) else {
            return;
        };
        for &t in fan {
            let tri = mesh.triangles[t as usize];
            if let Some(k) = corner(tri, v) {
                corner_uvs[t as usize][k] += step;
            }
        }
    }
}

/// Hinge `old` at the moved `rest` shape: its new rest angle, and its new coefficient when
/// its compliance comes from the material; `None` when the shape gives it none.
pub(super) fn rested_hinge(old: &Hinge, rest: &[Vec3]) -> Option<Hinge> {
    let new = hinge_at_rest(rest, old.wings, old.edge)?;
    // A fixed compliance stays as it was set; a material one follows the new shape.
    let compliance = if matches!(old.compliance, Compliance::Material(_)) {
        new.compliance
    } else {
        old.compliance
    };
    Some(Hinge { compliance, ..new })
}

/// The areas (m²) lumped anew around the `moved` vertices in the `rest` shape: to each
/// corner of their triangles, ascending, a third of the rest area of every triangle around
/// it, scaled so that together they carry what `lumped_area` gave them before.
pub(super) fn relumped_areas(moved: &[u32], mesh: Mesh, rest: &[Vec3], lumped_area: &[f32]) -> Vec<(u32, f32)> {
    let mut vertices: Vec<u32> = moved
        .iter()
        .flat_map(|&v| mesh.fan(v).iter().flat_map(|&t| mesh.triangles[t as usize]))
        .collect();
    vertices.sort_unstable();
    vertices.dedup();
    let fresh: Vec<f64> = vertices
        .iter()
        .map(|&v| {
            let fan = mesh.fan(v).iter();
            fan.map(|&t| triangle_area(rest, mesh.triangles[t as usize]) as f64 / 3.0).sum()
        })
        .collect();
    let before: f64 = vertices.iter().map(|&v| lumped_area[v as usize] as f64).sum();
    let after: f64 = fresh.iter().sum();
    let scale = if after > 0.0 { before / after } else { 1.0 };
    vertices
        .into_iter()
        .zip(fresh)
        .map(|(v, area)| (v, (area * scale) as f32))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::cut::Crossing;
    use super::super::topology::tests::hexagon;
    use super::super::topology::Mesh;
    use super::{relumped_areas, snap_rest_shape, Snap};

    /// On a hexagon, the centre snaps along a crossed spoke; a rim vertex would change the
    /// outline and stays, and so does a fixed vertex. The areas lumped anew keep their sum.
    #[test]
    fn the_centre_snaps_and_the_rim_keeps_the_outline() {
        let (mut rest, triangles, fans) = hexagon();
        let mesh = Mesh {
            triangles: &triangles,
            vertex_triangles: &fans,
        };
        let spoke = Crossing { a: 0, b: 1, at: 0.3 };
        let rim = Crossing { a: 1, b: 2, at: 0.4 };
        let before = rest.clone();
        assert!(snap_rest_shape(&[rim, spoke], mesh, &mut rest, |v| v == 0).is_empty());
        assert_eq!(rest, before);
        let snaps = snap_rest_shape(&[rim, spoke], mesh, &mut rest, |_| false);
        let expected = Snap {
            vertex: 0,
            toward: 1,
            fraction: 0.3,
        };
        assert_eq!(snaps, [expected]);
        assert!((rest[0] - 0.3 * before[1]).length() < 1e-6, "{}", rest[0]);
        assert_eq!(rest[1..], before[1..]);
        let lumped = vec![0.5f32; rest.len()];
        let areas = relumped_areas(&[0], mesh, &rest, &lumped);
        assert_eq!(areas.iter().map(|&(v, _)| v).collect::<Vec<_>>(), [0, 1, 2, 3, 4, 5, 6]);
        let sum: f32 = areas.iter().map(|&(_, area)| area).sum();
        assert!((sum - 3.5).abs() < 1e-5, "{sum}");
    }
}
