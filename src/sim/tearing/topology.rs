//! Who touches whom: the adjacency a split edits, and the questions a tear asks of the mesh
//! around a vertex.
//!
//! [`Topology`] lists, per vertex, the triangles, live distance constraints and live hinges
//! that use it, and per constraint its *support*: the triangles that generate it (the one or
//! two containing an edge, the two of a quad for a diagonal, the two wings of a hinge). It is
//! built on a cloth's first tear or cut, so a cloth that never tears never pays for it, and
//! every split then keeps it up to date.
//!
//! [`Mesh`] reads the triangles together with the triangles around each vertex (its *fan*):
//! how a fan divides into edge-connected groups, whether a vertex lies on a border, which
//! triangles lie across an edge, which vertices a split opens. Every answer is ordered by
//! index, so splits are deterministic.

use super::super::constraint_store::ConstraintStore;
use super::super::model::Model;

/// Marks an unused support slot.
pub(super) const NONE: u32 = u32::MAX;

/// Adjacency and supports of the model a tear edits.
#[derive(Debug, Clone, Default)]
pub(super) struct Topology {
    /// Per vertex: the triangles using it.
    pub vertex_triangles: Vec<Vec<u32>>,
    /// Per vertex: the live distance constraints using it.
    pub vertex_distances: Vec<Vec<u32>>,
    /// Per vertex: the live hinges using it (wings and edge).
    pub vertex_hinges: Vec<Vec<u32>>,
    /// Per distance id: its support triangles, [`NONE`] where it has fewer than two.
    pub distance_support: Vec<[u32; 2]>,
    /// Per hinge id: the triangles of its two wings, [`NONE`] where one is missing.
    pub hinge_support: Vec<[u32; 2]>,
}

fn add_to(lists: &mut [Vec<u32>], vertex: u32, id: u32) {
    lists[vertex as usize].push(id);
}

fn remove_from(lists: &mut [Vec<u32>], vertex: u32, id: u32) {
    if let Some(list) = lists.get_mut(vertex as usize) {
        list.retain(|&x| x != id);
    }
}

/// Whether triangles `a` and `b` have an edge (two corners) in common.
pub(super) fn shares_edge(a: [u32; 3], b: [u32; 3]) -> bool {
    a.iter().filter(|v| b.contains(v)).count() >= 2
}

impl Topology {
    /// The adjacency of `model`, listing the constraints that are live in `constraints`.
    pub fn build(model: &Model, constraints: &ConstraintStore) -> Self {
        let mut t = Topology {
            vertex_triangles: vec![Vec::new(); model.particle_count()],
            ..Default::default()
        };
        for (id, tri) in model.triangles.iter().enumerate() {
            tri.iter().for_each(|&v| add_to(&mut t.vertex_triangles, v, id as u32));
        }
        t.vertex_distances = vec![Vec::new(); model.particle_count()];
        t.vertex_hinges = vec![Vec::new(); model.particle_count()];
        for (id, c) in model.distances.iter().enumerate() {
            if constraints.distances().slot(id as u32).is_some() {
                add_to(&mut t.vertex_distances, c.a, id as u32);
                add_to(&mut t.vertex_distances, c.b, id as u32);
            }
            let support = t.distance_support_of(&model.triangles, c.a, c.b);
            t.distance_support.push(support);
        }
        for (id, h) in model.hinges.iter().enumerate() {
            if constraints.hinges().slot(id as u32).is_some() {
                for v in h.wings.iter().chain(&h.edge) {
                    add_to(&mut t.vertex_hinges, *v, id as u32);
                }
            }
            let find = |wing: u32| t.find_triangle(&model.triangles, &[wing, h.edge[0], h.edge[1]]);
            t.hinge_support.push([find(h.wings[0]), find(h.wings[1])]);
        }
        t
    }

    /// First triangle containing all of `vertices`, or `NONE`.
    fn find_triangle(&self, triangles: &[[u32; 3]], vertices: &[u32]) -> u32 {
        self.vertex_triangles[vertices[0] as usize]
            .iter()
            .copied()
            .find(|&t| vertices.iter().all(|v| triangles[t as usize].contains(v)))
            .unwrap_or(NONE)
    }

    /// Support of a distance constraint a–b: the triangles containing the edge, or the two
    /// face-adjacent triangles of a quad whose opposite corners are a and b.
    fn distance_support_of(&self, triangles: &[[u32; 3]], a: u32, b: u32) -> [u32; 2] {
        let around_a = &self.vertex_triangles[a as usize];
        let mut edge = around_a.iter().copied().filter(|&t| triangles[t as usize].contains(&b));
        if let Some(first) = edge.next() {
            return [first, edge.next().unwrap_or(NONE)];
        }
        for &ta in around_a {
            for &tb in &self.vertex_triangles[b as usize] {
                if shares_edge(triangles[ta as usize], triangles[tb as usize]) {
                    return [ta, tb];
                }
            }
        }
        [NONE, NONE]
    }

    /// The fans of `triangles` as this adjacency lists them.
    pub fn mesh<'a>(&'a self, triangles: &'a [[u32; 3]]) -> Mesh<'a> {
        Mesh {
            triangles,
            vertex_triangles: &self.vertex_triangles,
        }
    }

    /// Makes room for the vertices of `particle_count` particles (new copies start with
    /// nothing around them).
    pub fn grow(&mut self, particle_count: usize) {
        for lists in [&mut self.vertex_triangles, &mut self.vertex_distances, &mut self.vertex_hinges] {
            lists.resize(particle_count, Vec::new());
        }
    }

    /// Records that triangle `t` now uses vertex `to` where it used `from`.
    pub fn move_triangle(&mut self, t: u32, from: u32, to: u32) {
        remove_from(&mut self.vertex_triangles, from, t);
        add_to(&mut self.vertex_triangles, to, t);
    }

    /// Lists distance constraint `id` at its ends `a` and `b`.
    pub fn link_distance(&mut self, id: u32, [a, b]: [u32; 2]) {
        add_to(&mut self.vertex_distances, a, id);
        add_to(&mut self.vertex_distances, b, id);
    }

    /// Removes distance constraint `id` from the lists of its ends `a` and `b`.
    pub fn unlink_distance(&mut self, id: u32, [a, b]: [u32; 2]) {
        remove_from(&mut self.vertex_distances, a, id);
        remove_from(&mut self.vertex_distances, b, id);
    }

    /// Lists hinge `id` at each of `vertices`.
    pub fn link_hinge(&mut self, id: u32, vertices: &[u32]) {
        vertices.iter().for_each(|&v| add_to(&mut self.vertex_hinges, v, id));
    }

    /// Removes hinge `id` from the lists of each of `vertices`.
    pub fn unlink_hinge(&mut self, id: u32, vertices: &[u32]) {
        vertices.iter().for_each(|&v| remove_from(&mut self.vertex_hinges, v, id));
    }

    /// The distance constraints and the hinges using any of `vertices`, each ascending.
    pub fn constraints_at<'v>(&self, vertices: impl IntoIterator<Item = &'v u32>) -> (Vec<u32>, Vec<u32>) {
        let mut distance_ids: Vec<u32> = Vec::new();
        let mut hinge_ids: Vec<u32> = Vec::new();
        for &u in vertices {
            distance_ids.extend(&self.vertex_distances[u as usize]);
            hinge_ids.extend(&self.vertex_hinges[u as usize]);
        }
        for ids in [&mut distance_ids, &mut hinge_ids] {
            ids.sort_unstable();
            ids.dedup();
        }
        (distance_ids, hinge_ids)
    }
}

/// The triangles with, per vertex, the triangles around it (its fan).
#[derive(Debug, Clone, Copy)]
pub(super) struct Mesh<'a> {
    /// Corners of each triangle.
    pub triangles: &'a [[u32; 3]],
    /// Per vertex: the triangles using it.
    pub vertex_triangles: &'a [Vec<u32>],
}

impl<'a> Mesh<'a> {
    /// The triangles around vertex `v`.
    pub fn fan(&self, v: u32) -> &'a [u32] {
        &self.vertex_triangles[v as usize]
    }

    /// The triangles around `v` grouped by `side` (of a triangle id), each side further split
    /// into edge-connected fans (so no copy is ever a bow-tie vertex). Deterministic order: by
    /// the smallest triangle id of each group.
    pub fn fan_groups_by(&self, v: u32, side: impl Fn(u32) -> bool) -> Vec<Vec<u32>> {
        self.fan_components(v, |s, t| side(s) == side(t))
    }

    /// The triangles around vertex `v` in edge-connected groups, the fan cut along its edge to
    /// `u`: an open fan (at a crack tip or a border) falls into the two arcs on either side of
    /// that edge, which is how a crack extends from `v` to `u`.
    pub fn fan_groups_cut_at(&self, v: u32, u: u32) -> Vec<Vec<u32>> {
        let has_u = |t: u32| self.triangles[t as usize].contains(&u);
        self.fan_components(v, |s, t| !(has_u(s) && has_u(t)))
    }

    /// The triangles around `v`, ascending, in groups connected through shared edges between
    /// pairs `joined` allows.
    fn fan_components(&self, v: u32, joined: impl Fn(u32, u32) -> bool) -> Vec<Vec<u32>> {
        let mut fan = self.fan(v).to_vec();
        fan.sort_unstable();
        let mut group_of = vec![usize::MAX; fan.len()];
        let mut groups: Vec<Vec<u32>> = Vec::new();
        for start in 0..fan.len() {
            if group_of[start] != usize::MAX {
                continue;
            }
            let g = groups.len();
            groups.push(Vec::new());
            let mut stack = vec![start];
            group_of[start] = g;
            while let Some(i) = stack.pop() {
                groups[g].push(fan[i]);
                for j in 0..fan.len() {
                    if group_of[j] == usize::MAX
                        && shares_edge(self.triangles[fan[i] as usize], self.triangles[fan[j] as usize])
                        && joined(fan[i], fan[j])
                    {
                        group_of[j] = g;
                        stack.push(j);
                    }
                }
            }
        }
        groups
    }

    /// Whether vertex `v` lies on a boundary of the mesh: one of its edges has one triangle.
    pub fn on_boundary(&self, v: u32) -> bool {
        let fan = self.fan(v);
        fan.iter().any(|&t| {
            self.triangles[t as usize]
                .into_iter()
                .filter(|&u| u != v)
                .any(|u| fan.iter().filter(|&&s| self.triangles[s as usize].contains(&u)).count() == 1)
        })
    }

    /// Triangles sharing an edge with triangle `t`.
    pub fn edge_neighbours(&self, t: u32) -> Vec<u32> {
        let tri = self.triangles[t as usize];
        let mut out = Vec::with_capacity(3);
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            out.extend(
                self.fan(a)
                    .iter()
                    .copied()
                    .filter(|&u| u != t && self.triangles[u as usize].contains(&b)),
            );
        }
        out
    }

    /// The far ends of the edges through `v` that splitting it into `groups` opens (the
    /// crack's new tips where they were inside the cloth), ascending.
    pub fn crack_ends(&self, v: u32, groups: &[Vec<u32>]) -> Vec<u32> {
        let tri = |t: u32| self.triangles[t as usize];
        let mut ends: Vec<u32> = Vec::new();
        for (g, group) in groups.iter().enumerate() {
            for other in &groups[g + 1..] {
                for (&s, &t) in group.iter().flat_map(|s| other.iter().map(move |t| (s, t))) {
                    ends.extend(tri(s).into_iter().filter(|&u| u != v && tri(t).contains(&u)));
                }
            }
        }
        ends.sort_unstable();
        ends.dedup();
        ends
    }

    /// Vertices sharing a triangle with one of `members`, excluding `members`, ascending.
    pub fn ring(&self, members: &[u32]) -> Vec<u32> {
        let mut ring: Vec<u32> = members
            .iter()
            .flat_map(|&m| self.fan(m).iter().flat_map(|&t| self.triangles[t as usize]))
            .filter(|v| !members.contains(v))
            .collect();
        ring.sort_unstable();
        ring.dedup();
        ring
    }
}

#[cfg(test)]
pub(super) mod tests {
    use glam::Vec3;

    use super::Mesh;

    /// A regular hexagon of unit radius in the xz plane: centre 0, rim 1–6 counter-clockwise,
    /// triangle k = [0, k + 1, k + 2] (6 wrapping to 1). Returns the rest positions, the
    /// triangles and the triangles around each vertex.
    pub(in super::super) fn hexagon() -> (Vec<Vec3>, Vec<[u32; 3]>, Vec<Vec<u32>>) {
        let mut positions = vec![Vec3::ZERO];
        positions.extend((0..6).map(|k| {
            let (sin, cos) = (k as f32 * std::f32::consts::FRAC_PI_3).sin_cos();
            Vec3::new(cos, 0.0, sin)
        }));
        let triangles: Vec<[u32; 3]> = (0..6).map(|k| [0, k + 1, (k + 1) % 6 + 1]).collect();
        let mut fans = vec![Vec::new(); positions.len()];
        for (t, tri) in triangles.iter().enumerate() {
            tri.iter().for_each(|&v| fans[v as usize].push(t as u32));
        }
        (positions, triangles, fans)
    }

    #[test]
    fn a_closed_fan_splits_into_one_group_per_side_and_opens_at_two_rim_vertices() {
        let (_, triangles, fans) = hexagon();
        let mesh = Mesh {
            triangles: &triangles,
            vertex_triangles: &fans,
        };
        let groups = mesh.fan_groups_by(0, |t| t < 3);
        let sorted = |mut group: Vec<u32>| {
            group.sort_unstable();
            group
        };
        assert_eq!(groups.into_iter().map(sorted).collect::<Vec<_>>(), [vec![0, 1, 2], vec![3, 4, 5]]);
        assert_eq!(mesh.crack_ends(0, &[vec![0, 1, 2], vec![3, 4, 5]]), [1, 4]);
        // Every triangle on its own side: one group each.
        assert_eq!(mesh.fan_groups_by(0, |t| t % 2 == 0).len(), 6);
        assert!(!mesh.on_boundary(0));
        assert!((1..=6).all(|v| mesh.on_boundary(v)));
        assert_eq!(mesh.ring(&[0]), [1, 2, 3, 4, 5, 6]);
        assert_eq!(sorted(mesh.edge_neighbours(0)), [1, 5]);
    }
}
