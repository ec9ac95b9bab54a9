//! Tearing and cutting by vertex splitting (PBD 2007 §5; docs/physics.md §8).
//!
//! A tear never deletes triangles or leaves ragged ones: it *splits a vertex*. The triangles
//! around the vertex are divided by a plane through it (normal to its most loaded yarn in the
//! rest shape for a tear, the cut surface for a mouse cut); each side's edge-connected fan
//! keeps its own copy of the vertex, so the surface stays a clean manifold and the crack opens
//! across the loaded yarns, as woven fabric does. A tear makes exactly two copies: a plane that
//! would divide the fan in three (through a crack tip, across the crack) would branch the
//! crack, which a slow tear does not do, and the next yarn is tried. Afterwards:
//! - masses are re-lumped from the rest areas of the triangles each copy keeps (the triangles
//!   are partitioned, so total mass is conserved; copies share position and velocity, so
//!   momentum is conserved too);
//! - every constraint touching the vertex is re-attached from its *support* triangles (the
//!   triangles that generate it: the one or two containing an edge, the two of a quad for a
//!   diagonal, the two of a hinge). Supports that no longer share an edge mean the constraint
//!   spans the crack: a shared edge becomes one boundary edge per side (each with twice the
//!   compliance, i.e. half the stiffness), a diagonal or hinge across it is removed;
//! - re-attached constraints restart with λ = 0 (their slot is rebuilt), and the colouring
//!   stays valid incrementally (see [`super::constraints`]);
//! - the far ends of the edges the split opened that were inside the cloth become the crack's
//!   tips (the split vertex stops being one), and their edges are debilitated.
//!
//! When an edge fails and along which plane is [`criterion`]'s; a tear that would cut off a
//! scrap is refused ([`fragments`]); mouse cuts split unconditionally.
//!
//! Everything is ordered by index (candidates at a tip first, then by how far past their
//! threshold, then id), so the same inputs
//! give bit-identical results. A pinned vertex keeps its pin on the original copy only, so a
//! tear can free a piece from its pin; a held vertex stays held by the original.

use glam::Vec3;

use super::constraint_store::ConstraintStore;
use super::interaction::{Grab, Ray};
use super::model::{Compliance, DistanceConstraint, EdgeKind, Model};
use super::params::{Material, SolverParams};
use super::particles::Particles;

mod criterion;
mod fragments;
mod snapping;

use snapping::Crossing;

pub use fragments::{MIN_FRAGMENT_TRIANGLES, MIN_HELD_FRAGMENT_TRIANGLES};

/// Distance from a cut surface within which a vertex counts as lying on it (m): a seam
/// snapped onto the stroke by an earlier piece of the same stroke lies on it up to rounding.
const ON_STROKE: f32 = 1e-5;

/// Marks an unused support slot.
const NONE: u32 = u32::MAX;

/// Tearing bookkeeping kept by a [`crate::sim::Cloth`].
#[derive(Debug, Clone, Default)]
pub(crate) struct TearState {
    /// Adjacency and supports, built on the first tear or cut and then kept up to date.
    topology: Option<Topology>,
    /// Per distance id: multiplier on the tear strain (debilitation); missing = 1.
    weakness: Vec<f32>,
    /// Per distance id: already failed once (its vertex was split); missing = false.
    spent: Vec<bool>,
    /// Per distance id: the strain averaged over the material's `tear_response_time`
    /// (see [`criterion`]); missing = 0. Cleared while tearing is off.
    smoothed: Vec<f32>,
    /// Crack tips: ends of cracks that stop inside the cloth, ascending (see [`criterion`]).
    tips: Vec<u32>,
    /// Edges torn by strain or cut so far.
    pub torn_edges: usize,
}

#[derive(Debug, Clone, Default)]
struct Topology {
    vertex_triangles: Vec<Vec<u32>>,
    vertex_distances: Vec<Vec<u32>>,
    vertex_hinges: Vec<Vec<u32>>,
    distance_support: Vec<[u32; 2]>,
    hinge_support: Vec<[u32; 2]>,
}

fn add_to(lists: &mut [Vec<u32>], vertex: u32, id: u32) {
    lists[vertex as usize].push(id);
}

fn remove_from(lists: &mut [Vec<u32>], vertex: u32, id: u32) {
    if let Some(list) = lists.get_mut(vertex as usize) {
        list.retain(|&x| x != id);
    }
}

fn shares_edge(a: [u32; 3], b: [u32; 3]) -> bool {
    a.iter().filter(|v| b.contains(v)).count() >= 2
}

impl Topology {
    fn build(model: &Model, constraints: &ConstraintStore) -> Self {
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
}

/// A plane dividing the triangles around a vertex.
#[derive(Debug, Clone, Copy)]
struct SplitPlane {
    point: Vec3,
    normal: Vec3,
}

impl SplitPlane {
    /// A plane that puts every triangle on one side: groups are then the fan's edge-connected
    /// components.
    const NONE: SplitPlane = SplitPlane {
        point: Vec3::ZERO,
        normal: Vec3::ZERO,
    };
}

/// What a tear could do at one vertex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TearSplit {
    /// The vertex was split.
    Made,
    /// Every split plane that divides its fan would cut off a fragment: nothing was done.
    WouldShed,
    /// No split plane divides its fan.
    Impossible,
}

/// The split of one vertex: which particle ended up in which triangle.
struct Family {
    members: Vec<u32>,
}

impl Family {
    /// The family member used by triangle `tri`.
    fn member_in(&self, tri: [u32; 3]) -> Option<u32> {
        tri.into_iter().find(|v| self.members.contains(v))
    }
}

/// Tearing's hands on a cloth: the state a split edits (particles, model, the solver's
/// constraints and tearing's own bookkeeping), borrowed from the cloth for one tear check or
/// cut. The cloth re-lumps inverse masses, rebuilds its tethers and bumps its topology version
/// afterwards when [`Self::changed`] is set.
pub(crate) struct TearEditor<'a> {
    pub particles: &'a mut Particles,
    pub model: &'a mut Model,
    pub constraints: &'a mut ConstraintStore,
    /// The material of each slot ([`Model::material`]): new and re-pointed constraints take
    /// their slot's compliance, and each edge tears by its slot's settings.
    pub materials: &'a [Material],
    pub tearing: &'a mut TearState,
    /// What the hand holds (a tear may not leave it a scrap, see [`fragments`]).
    pub grab: Option<Grab>,
    /// The topology changed (a vertex was split or a constraint removed).
    pub changed: bool,
}

/// For every particle (of `particle_count`), the smallest particle index of its connected
/// piece: particles joined by `model`'s triangles or a live distance constraint.
pub(crate) fn piece_labels(particle_count: usize, model: &Model, constraints: &ConstraintStore) -> Vec<u32> {
    let sides = model.triangles.iter().flat_map(|tri| [(tri[0], tri[1]), (tri[1], tri[2])]);
    let springs = constraints.distances().live_ids().map(|id| {
        let c = model.distances[id as usize];
        (c.a, c.b)
    });
    super::model::joined_pieces(particle_count, sides.chain(springs))
}

impl TearEditor<'_> {
    /// Ids of the live distance constraints, ascending.
    fn live_distance_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.constraints.distances().live_ids()
    }

    /// End-of-frame tear check (see [`criterion`]): folds the frame's strains into their
    /// running averages and fails the edges whose average exceeds `tear_strain` (lowered by
    /// debilitation), worst first, until `params.max_splits_per_step` have torn. `max_strain`
    /// is the frame's largest strain: without averaging (a zero response time) the scan is
    /// skipped when no edge can have reached its threshold, so idle tearing costs nothing.
    /// Returns the number of edges that tore.
    pub fn tear_overstrained(&mut self, params: &SolverParams, max_strain: f32) -> usize {
        let Some(lowest) = self.materials.iter().filter_map(|m| m.tear_strain).reduce(f32::min) else {
            self.tearing.smoothed.clear();
            return 0;
        };
        let criteria: Vec<Option<(f32, f32)>> = self
            .materials
            .iter()
            .map(|m| Some((m.tear_strain?, criterion::smoothing_blend(params.dt, m.tear_response_time))))
            .collect();
        let unsmoothed = criteria.iter().flatten().all(|&(_, blend)| blend == 1.0);
        if unsmoothed && !self.may_reach(lowest, max_strain) {
            return 0;
        }
        let failing = self.smooth_strains(&criteria);
        let torn = self.tear_worst_first(&failing, params.max_splits_per_step as usize);
        if torn > 0 {
            self.finish_topology_change();
        }
        torn
    }

    /// Whether an edge could be above its threshold when the largest strain is `max_strain`
    /// (with slack for rounding, so an edge is never missed).
    fn may_reach(&self, limit: f32, max_strain: f32) -> bool {
        let weakest = self.tearing.weakness.iter().copied().fold(1.0f32, f32::min);
        max_strain >= limit * weakest * (1.0 - 1e-5)
    }

    /// Tears the `failing` edges in order until `budget` have torn (refused tears do not
    /// count); returns how many tore.
    fn tear_worst_first(&mut self, failing: &[(f32, u32)], budget: usize) -> usize {
        let mut torn = 0;
        for &(_, id) in failing {
            if torn == budget {
                break;
            }
            torn += usize::from(self.tear_edge(id));
        }
        torn
    }

    /// Cuts the cloth along the surface swept between two world-space rays (a mouse stroke
    /// from the camera): every stretch edge crossing it is cut. The seam is first snapped onto
    /// the stroke ([`snapping`]); then the vertices on the seam are split between the
    /// triangles in front of the surface and the others. Returns the number of edges the cut
    /// opened (each now a boundary edge on either side) or cut through (ropes).
    pub fn cut(&mut self, from: &Ray, to: &Ray) -> usize {
        const FAR: f32 = 1.0e3;
        let quad = [from.origin, to.origin, to.at(FAR), from.at(FAR)];
        let normal = (to.at(1.0) - from.at(1.0)).cross(from.direction + to.direction).normalize_or_zero();
        if normal == Vec3::ZERO || !quad.iter().all(|p| p.is_finite()) {
            return 0;
        }
        let crossing_at = |a: u32, b: u32| {
            let (a, b) = (self.particles.position(a as usize), self.particles.position(b as usize));
            segment_crossing(a, b, quad[0], quad[1], quad[2]).or_else(|| segment_crossing(a, b, quad[0], quad[2], quad[3]))
        };
        let crossed: Vec<u32> = self
            .live_distance_ids()
            .filter(|&id| {
                let c = self.model.distances[id as usize];
                c.kind == EdgeKind::Stretch && crossing_at(c.a, c.b).is_some()
            })
            .collect();
        // Every crossed triangle edge (diagonals included) is on the seam, so it has no gap
        // where the stroke only crosses a diagonal.
        // Tested as often as triangles hold them (it runs every frame of a held stroke, and
        // sorting every edge of a large sheet would cost more than the tests); the few that
        // cross are deduplicated.
        let mut crossings: Vec<Crossing> = self
            .model
            .triangles
            .iter()
            .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
            .map(|(a, b)| (a.min(b), a.max(b)))
            .filter_map(|(a, b)| crossing_at(a, b).map(|at| Crossing { a, b, at }))
            .collect();
        crossings.sort_unstable_by_key(|c| (c.a, c.b));
        crossings.dedup_by_key(|c| (c.a, c.b));
        let mut vertices: Vec<u32> = crossed
            .iter()
            .flat_map(|&id| [self.model.distances[id as usize].a, self.model.distances[id as usize].b])
            .chain(crossings.iter().flat_map(|c| [c.a, c.b]))
            .collect();
        if vertices.is_empty() {
            return 0;
        }
        self.ensure_topology();
        vertices.sort_unstable();
        vertices.dedup();
        // Sides as the cloth lies before the seam moves onto the stroke.
        let height: Vec<f32> = (0..self.particles.len())
            .map(|i| (self.particles.position(i) - quad[0]).dot(normal))
            .collect();
        let on_seam = self.snap_to_stroke(&crossings);
        let in_front = self.sides_of_seam(&on_seam, &height);
        // The seam runs through the vertices on it, and along the mesh edges around a crossing
        // that kept both ends off it; other vertices keep all their triangles on one side.
        let stuck: Vec<u32> = crossings
            .iter()
            .filter(|c| !on_seam[c.a as usize] && !on_seam[c.b as usize])
            .flat_map(|c| [c.a, c.b])
            .collect();
        // Every edge the seam opens becomes one boundary edge per side: a new record each.
        let records = self.model.distances.len();
        for v in vertices.into_iter().filter(|&v| on_seam[v as usize] || stuck.contains(&v)) {
            let groups = self.fan_groups_by(v, |t| in_front[t as usize]);
            if groups.len() >= 2 {
                self.apply_split(v, groups);
            }
        }
        let mut opened = self.model.distances.len() - records;
        // Edges without triangles to separate (ropes, bare springs) are simply cut.
        for &id in &crossed {
            if self.topology().distance_support[id as usize][0] == NONE {
                self.remove_distance(id);
                opened += 1;
            }
        }
        self.tearing.torn_edges += opened;
        self.finish_topology_change();
        opened
    }

    /// Which triangles lie in front of a cut (indexed by triangle), with `on_seam` the
    /// vertices the seam runs through and `height` every vertex's signed distance from the cut
    /// surface as the cloth lay before the seam moved onto it. A triangle is on the side of its
    /// corner off the seam farthest from the surface: where most of it lies, and where it stays
    /// once a later piece of the same stroke snaps its nearer corners onto the seam (a crossed
    /// edge's nearer end is the one that moves). One with all three corners on the seam goes with most of
    /// its edge neighbours that are not (an earlier piece of the stroke may have put it on a
    /// side already), or by its corners' heights when they tie. Decided once, before any split
    /// renames corners.
    fn sides_of_seam(&self, on_seam: &[bool], height: &[f32]) -> Vec<bool> {
        let off_seam = |v: u32| !on_seam[v as usize] && height[v as usize].abs() > ON_STROKE;
        let triangles = &self.model.triangles;
        let side = |t: usize| -> Option<bool> {
            let off = triangles[t].into_iter().filter(|&v| off_seam(v)).map(|v| height[v as usize]);
            off.max_by(|x, y| x.abs().total_cmp(&y.abs())).map(|h| h > 0.0)
        };
        let sides: Vec<Option<bool>> = (0..triangles.len()).map(side).collect();
        let neighbours = |t: usize| {
            let fans = triangles[t].map(|v| &self.topology().vertex_triangles[v as usize]);
            let mut around: Vec<u32> = fans.iter().flat_map(|f| f.iter().copied()).filter(|&s| s as usize != t).collect();
            around.sort_unstable();
            around
                .into_iter()
                .filter(move |&s| shares_edge(triangles[t], triangles[s as usize]))
        };
        (0..triangles.len())
            .map(|t| {
                sides[t].unwrap_or_else(|| {
                    let votes: i32 = neighbours(t)
                        .filter_map(|s| sides[s as usize])
                        .map(|front| if front { 1 } else { -1 })
                        .sum();
                    let heights: f32 = triangles[t].iter().map(|&v| height[v as usize]).sum();
                    votes > 0 || (votes == 0 && heights > 0.0)
                })
            })
            .collect()
    }

    /// Builds the topology if needed, then runs `then` (tests reach single splits this way).
    #[cfg(test)]
    fn ensure_topology_and<R>(&mut self, then: impl FnOnce(&mut Self) -> R) -> R {
        self.ensure_topology();
        then(self)
    }

    fn ensure_topology(&mut self) {
        if self.tearing.topology.is_none() {
            self.tearing.topology = Some(Topology::build(self.model, self.constraints));
        }
    }

    fn topology(&self) -> &Topology {
        self.tearing.topology.as_ref().expect("topology is built before any split")
    }

    fn topology_mut(&mut self) -> &mut Topology {
        self.tearing.topology.as_mut().expect("topology is built before any split")
    }

    /// Tells the cloth to bring what depends on the topology up to date.
    fn finish_topology_change(&mut self) {
        self.changed = true;
    }

    /// Fails distance constraint `id`: splits the first of its endpoints, in
    /// [`Self::split_order`], that can be split without shedding a fragment (see
    /// [`Self::tear_split_at`]). If neither endpoint has triangles on both sides of a split
    /// plane, the constraint is removed. Returns whether the edge tore; it does not when every
    /// possible split would shed a fragment.
    fn tear_edge(&mut self, id: u32) -> bool {
        if self.constraints.distances().slot(id).is_none() {
            return false;
        }
        self.ensure_topology();
        let c = self.model.distances[id as usize];
        let along = self.rest_direction(id);
        let mut sheds = false;
        for v in self.split_order(c.a, c.b) {
            match self.tear_split_at(v, along) {
                TearSplit::Made => {
                    set_flag(&mut self.tearing.spent, id);
                    self.tearing.torn_edges += 1;
                    return true;
                }
                TearSplit::WouldShed => sheds = true,
                TearSplit::Impossible => {}
            }
        }
        if sheds {
            return false;
        }
        self.remove_distance(id);
        self.tearing.torn_edges += 1;
        true
    }

    /// Splits vertex `v` for a tear into two: by the plane normal to its most loaded yarn
    /// that divides its fan in two (see [`criterion`]), the other yarns next, the failing edge
    /// (`along`, in the rest shape) last, unless the split would shed a fragment. A plane that
    /// divides the fan in three would branch the crack at its tip and is passed over.
    fn tear_split_at(&mut self, v: u32, along: Vec3) -> TearSplit {
        let point = self.model.positions[v as usize];
        let mut outcome = TearSplit::Impossible;
        let mut normals = self.loaded_yarns(v);
        normals.push(along);
        for normal in normals {
            let groups = self.fan_groups(v, SplitPlane { point, normal });
            if groups.len() != 2 {
                continue;
            }
            if self.sheds_fragment(v, &groups) {
                outcome = TearSplit::WouldShed;
                continue;
            }
            self.apply_split(v, groups);
            return TearSplit::Made;
        }
        outcome
    }

    /// The endpoints of a failing edge in the order a tear tries them: free before pinned or
    /// held; a crack tip or an edge of the cloth (a vertex whose fan is open) before an interior
    /// vertex, so an existing crack runs on instead of a new slit opening beside it; then the
    /// one with more triangles, then the lower index.
    fn split_order(&self, a: u32, b: u32) -> [u32; 2] {
        let mut order = [a, b];
        order.sort_by_key(|&v| {
            (
                self.particles.inverse_mass(v as usize) == 0.0,
                self.tearing.tips.binary_search(&v).is_err(),
                !self.on_boundary(v),
                usize::MAX - self.topology().vertex_triangles[v as usize].len(),
                v,
            )
        });
        order
    }

    /// Whether vertex `v` lies on a boundary of the mesh: one of its edges has one triangle.
    fn on_boundary(&self, v: u32) -> bool {
        let fan = &self.topology().vertex_triangles[v as usize];
        fan.iter().any(|&t| {
            self.model.triangles[t as usize]
                .into_iter()
                .filter(|&u| u != v)
                .any(|u| fan.iter().filter(|&&s| self.model.triangles[s as usize].contains(&u)).count() == 1)
        })
    }

    /// Splits vertex `v` by the plane through `point` with `normal`; returns whether any copy
    /// was made.
    fn split_vertex(&mut self, v: u32, plane: SplitPlane) -> bool {
        let groups = self.fan_groups(v, plane);
        if groups.len() < 2 {
            return false;
        }
        self.apply_split(v, groups);
        true
    }

    /// Gives every fan group of `v` after the first its own copy of `v`, then re-lumps the
    /// masses, re-attaches the constraints, weakens the edges around it and separates bow ties.
    fn apply_split(&mut self, v: u32, groups: Vec<Vec<u32>>) {
        let ends = self.crack_ends(v, &groups);
        let tips: Vec<u32> = ends.iter().copied().filter(|&u| !self.on_boundary(u)).collect();
        let mut family = Family { members: vec![v] };
        for group in &groups[1..] {
            let copy = self.copy_particle(v);
            family.members.push(copy);
            for &t in group {
                let tri = &mut self.model.triangles[t as usize];
                tri.iter_mut().filter(|x| **x == v).for_each(|x| *x = copy);
                let topo = self.topology_mut();
                remove_from(&mut topo.vertex_triangles, v, t);
                add_to(&mut topo.vertex_triangles, copy, t);
            }
        }
        self.relump(&family);
        self.constraints.resize_particles(self.particles.len());
        // Constraints of the split vertex change ends; constraints of its neighbours (e.g. a
        // quad diagonal whose quad the crack just ran through) may now span the crack.
        let ring = self.ring_of(&family);
        let mut distance_ids: Vec<u32> = Vec::new();
        let mut hinge_ids: Vec<u32> = Vec::new();
        for &u in family.members.iter().chain(&ring) {
            distance_ids.extend(&self.topology().vertex_distances[u as usize]);
            hinge_ids.extend(&self.topology().vertex_hinges[u as usize]);
        }
        for ids in [&mut distance_ids, &mut hinge_ids] {
            ids.sort_unstable();
            ids.dedup();
        }
        distance_ids.into_iter().for_each(|id| self.reattach_distance(id, &family));
        hinge_ids.into_iter().for_each(|id| self.reattach_hinge(id, &family));
        self.debilitate(&ends);
        let known = &mut self.tearing.tips;
        known.retain(|u| *u != v);
        known.extend(tips);
        known.sort_unstable();
        known.dedup();
        self.separate_bow_ties(&ring);
    }

    /// The far ends of the edges through `v` that the split into `groups` opens (the
    /// crack's new tips where they were inside the cloth), ascending.
    fn crack_ends(&self, v: u32, groups: &[Vec<u32>]) -> Vec<u32> {
        let tri = |t: u32| self.model.triangles[t as usize];
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

    /// Vertices sharing a triangle with a member of `family`, excluding the family.
    fn ring_of(&self, family: &Family) -> Vec<u32> {
        let mut ring: Vec<u32> = family
            .members
            .iter()
            .flat_map(|&m| {
                self.topology().vertex_triangles[m as usize]
                    .iter()
                    .flat_map(|&t| self.model.triangles[t as usize])
            })
            .filter(|v| !family.members.contains(v))
            .collect();
        ring.sort_unstable();
        ring.dedup();
        ring
    }

    /// A split can leave a neighbour whose fan is held together by that vertex alone (the
    /// crack tip ran into it): such a bow-tie vertex gets one copy per edge-connected fan, so
    /// the surface stays manifold. Splitting by connectivity cannot create new bow-ties.
    fn separate_bow_ties(&mut self, ring: &[u32]) {
        for &u in ring {
            // A zero normal puts every triangle on the same side: groups are the fan's
            // edge-connected components.
            self.split_vertex(u, SplitPlane::NONE);
        }
    }

    /// The triangles around `v` grouped by side of the plane through the rest shape (by their
    /// centroids), each side further split into edge-connected fans; see [`Self::fan_groups_by`].
    fn fan_groups(&self, v: u32, plane: SplitPlane) -> Vec<Vec<u32>> {
        let height = |i: u32| (self.model.positions[i as usize] - plane.point).dot(plane.normal);
        self.fan_groups_by(v, |t| self.model.triangles[t as usize].map(height).iter().sum::<f32>() >= 0.0)
    }

    /// The triangles around `v` grouped by `side` (of a triangle id), each side further split
    /// into edge-connected fans (so no copy is ever a bow-tie vertex). Deterministic order: by
    /// the smallest triangle id of each group.
    fn fan_groups_by(&self, v: u32, side: impl Fn(u32) -> bool) -> Vec<Vec<u32>> {
        let mut fan = self.topology().vertex_triangles[v as usize].clone();
        fan.sort_unstable();
        let sides: Vec<bool> = fan.iter().map(|&t| side(t)).collect();
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
                        && sides[j] == sides[i]
                        && shares_edge(self.model.triangles[fan[i] as usize], self.model.triangles[fan[j] as usize])
                    {
                        group_of[j] = g;
                        stack.push(j);
                    }
                }
            }
        }
        groups
    }

    /// Appends a copy of particle `v` (same position, start point and velocity; never pinned,
    /// never held) to the particles and the model.
    fn copy_particle(&mut self, v: u32) -> u32 {
        let i = v as usize;
        let p = &mut self.particles;
        let copy = p.push(p.position(i), 0.0, p.vel.get(i), 0.0, 0.0, false);
        p.prev.set(copy as usize, p.prev.get(i));
        p.comp.set(copy as usize, p.comp.get(i));
        p.comp_prev.set(copy as usize, p.comp_prev.get(i));
        let m = &mut self.model;
        m.positions.push(m.positions[i]);
        m.lumped_area.push(0.0);
        m.point_mass.push(0.0);
        m.pinned.push(false);
        m.material.push(m.material[i]);
        let topo = self.topology_mut();
        for lists in [&mut topo.vertex_triangles, &mut topo.vertex_distances, &mut topo.vertex_hinges] {
            lists.resize(copy as usize + 1, Vec::new());
        }
        copy
    }

    /// Re-lumps area (from rest triangle areas) and point mass over the members of a split.
    fn relump(&mut self, family: &Family) {
        let areas: Vec<f32> = family
            .members
            .iter()
            .map(|&m| {
                let tris = &self.topology().vertex_triangles[m as usize];
                tris.iter()
                    .map(|&t| super::model::triangle_area(&self.model.positions, self.model.triangles[t as usize]) / 3.0)
                    .sum()
            })
            .collect();
        let total: f32 = areas.iter().sum();
        let point_mass = self.model.point_mass[family.members[0] as usize];
        for (k, &m) in family.members.iter().enumerate() {
            let share = if total > 0.0 {
                areas[k] / total
            } else if k == 0 {
                1.0
            } else {
                0.0
            };
            let i = m as usize;
            self.model.lumped_area[i] = areas[k];
            self.model.point_mass[i] = point_mass * share;
            self.particles.area[i] = areas[k];
            self.particles.point_mass[i] = point_mass * share;
        }
    }

    /// Re-attaches a distance constraint after a split of `family` from its supports.
    fn reattach_distance(&mut self, id: u32, family: &Family) {
        let [s0, s1] = self.topology().distance_support[id as usize];
        if self.constraints.distances().slot(id).is_none() || s0 == NONE {
            return; // removed, or no triangles to decide by: stays with the original vertex
        }
        let old = self.model.distances[id as usize];
        let tri = |t: u32| self.model.triangles[t as usize];
        let member = |end: u32, t: u32| {
            if family.members.contains(&end) {
                family.member_in(tri(t)).unwrap_or(end)
            } else {
                end
            }
        };
        let touches = |t: u32, end: u32| tri(t).contains(&end) || (family.members.contains(&end) && family.member_in(tri(t)).is_some());
        let with_ends = |t_a: u32, t_b: u32| DistanceConstraint {
            a: member(old.a, t_a),
            b: member(old.b, t_b),
            ..old
        };
        if s1 == NONE || shares_edge(tri(s0), tri(s1)) {
            let new = with_ends(s0, if s1 == NONE { s0 } else { s1 });
            if new != old {
                self.set_distance(id, new, [s0, s1]);
            }
            return;
        }
        // The supports no longer share an edge: the constraint spans the crack.
        let is_edge = [s0, s1].iter().all(|&t| touches(t, old.a) && touches(t, old.b));
        if !is_edge {
            self.remove_distance(id);
            return;
        }
        // A shared edge on the crack: one boundary edge per side, each half as stiff.
        let (first, second) = (with_ends(s0, s0), with_ends(s1, s1));
        let halved = |c: DistanceConstraint| DistanceConstraint {
            compliance: doubled(c.compliance),
            ..c
        };
        self.set_distance(id, halved(first), [s0, NONE]);
        let twin = self.add_distance(halved(second), [s1, NONE]);
        self.inherit_tear_history(id, twin);
    }

    /// Re-attaches a hinge after a split of `family`; a hinge across the crack is removed.
    fn reattach_hinge(&mut self, id: u32, family: &Family) {
        if self.constraints.hinges().slot(id).is_none() {
            return;
        }
        let [t1, t2] = self.topology().hinge_support[id as usize];
        if t1 == NONE || t2 == NONE {
            return;
        }
        let (tri1, tri2) = (self.model.triangles[t1 as usize], self.model.triangles[t2 as usize]);
        let old = self.model.hinges[id as usize];
        let mut all = old.wings.to_vec();
        all.extend_from_slice(&old.edge);
        if !shares_edge(tri1, tri2) {
            self.constraints.remove_hinge(id);
            for v in all {
                remove_from(&mut self.topology_mut().vertex_hinges, v, id);
            }
            return;
        }
        let pick = |v: u32, t: [u32; 3]| {
            if family.members.contains(&v) {
                family.member_in(t).unwrap_or(v)
            } else {
                v
            }
        };
        let mut new = old;
        new.wings = [pick(old.wings[0], tri1), pick(old.wings[1], tri2)];
        new.edge = old.edge.map(|v| pick(v, tri1));
        if new != old {
            for v in all {
                remove_from(&mut self.topology_mut().vertex_hinges, v, id);
            }
            for v in new.wings.iter().chain(&new.edge) {
                add_to(&mut self.topology_mut().vertex_hinges, *v, id);
            }
            self.constraints.replace_hinge(self.model, id, new, self.materials);
        }
    }

    fn set_distance(&mut self, id: u32, c: DistanceConstraint, support: [u32; 2]) {
        let old = self.model.distances[id as usize];
        let topo = self.topology_mut();
        remove_from(&mut topo.vertex_distances, old.a, id);
        remove_from(&mut topo.vertex_distances, old.b, id);
        add_to(&mut topo.vertex_distances, c.a, id);
        add_to(&mut topo.vertex_distances, c.b, id);
        topo.distance_support[id as usize] = support;
        self.constraints.replace_distance(self.model, id, c, self.materials);
    }

    /// Adds distance constraint `c` with `support`; returns its id.
    fn add_distance(&mut self, c: DistanceConstraint, support: [u32; 2]) -> u32 {
        let id = self.constraints.add_distance(self.model, c, self.materials);
        let topo = self.topology_mut();
        add_to(&mut topo.vertex_distances, c.a, id);
        add_to(&mut topo.vertex_distances, c.b, id);
        topo.distance_support.push(support);
        id
    }

    /// Gives edge `twin`, the other side of edge `id` split by a crack, `id`'s averaged strain
    /// and weakness: it is the same piece of cloth.
    fn inherit_tear_history(&mut self, id: u32, twin: u32) {
        copy_entry(&mut self.tearing.smoothed, id, twin, 0.0);
        copy_entry(&mut self.tearing.weakness, id, twin, 1.0);
    }

    fn remove_distance(&mut self, id: u32) {
        self.constraints.remove_distance(id);
        let c = self.model.distances[id as usize];
        if let Some(topo) = self.tearing.topology.as_mut() {
            remove_from(&mut topo.vertex_distances, c.a, id);
            remove_from(&mut topo.vertex_distances, c.b, id);
        }
    }

    /// Weakens the edges of the crack's new tips `ends` (the stress concentration a mesh
    /// cannot resolve), so the next failure is likely there and tears run on.
    fn debilitate(&mut self, ends: &[u32]) {
        let ids: Vec<u32> = ends
            .iter()
            .flat_map(|&u| self.topology().vertex_distances[u as usize].clone())
            .collect();
        for id in ids {
            let c = &self.model.distances[id as usize];
            let factor = 1.0 - self.materials[self.model.distance_material(c)].tear_debilitation;
            if factor >= 1.0 {
                continue;
            }
            let w = &mut self.tearing.weakness;
            if w.len() <= id as usize {
                w.resize(id as usize + 1, 1.0);
            }
            w[id as usize] *= factor;
        }
    }
}

fn set_flag(flags: &mut Vec<bool>, id: u32) {
    if flags.len() <= id as usize {
        flags.resize(id as usize + 1, false);
    }
    flags[id as usize] = true;
}

/// Sets `values[to]` to `values[from]`, reading and padding with `missing` past the end.
fn copy_entry(values: &mut Vec<f32>, from: u32, to: u32, missing: f32) {
    let value = values.get(from as usize).copied().unwrap_or(missing);
    if values.len() <= to as usize {
        values.resize(to as usize + 1, missing);
    }
    values[to as usize] = value;
}

fn doubled(c: Compliance) -> Compliance {
    match c {
        Compliance::Material(coef) => Compliance::Material(2.0 * coef),
        Compliance::Fixed(alpha) => Compliance::Fixed(2.0 * alpha),
    }
}

/// Where the segment a–b crosses triangle (p, q, r), as the fraction of the way from a to b
/// (Möller–Trumbore on a segment).
fn segment_crossing(a: Vec3, b: Vec3, p: Vec3, q: Vec3, r: Vec3) -> Option<f32> {
    let ray = Ray {
        origin: a,
        direction: b - a,
    };
    super::interaction::ray_triangle(&ray, p, q, r).filter(|&t| t <= 1.0)
}

#[cfg(test)]
mod tests;
