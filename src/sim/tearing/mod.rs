//! Tearing and cutting by vertex splitting (PBD 2007 §5; docs/physics.md §8).
//!
//! A tear never deletes triangles or leaves ragged ones: it *splits a vertex*. The triangles
//! around the vertex are divided in two: at a crack tip or a border along the inner yarn the
//! strain field opens most, at an interior vertex by a plane through it normal to its most
//! loaded yarn in the rest shape, for a mouse cut by the cut surface; each side's
//! edge-connected fan keeps its own copy of the vertex, so the surface stays a clean manifold
//! and the crack opens across the loaded yarns, as woven fabric does. A tear makes exactly two
//! copies: a split that would divide the fan in three would branch the crack, which a slow tear
//! does not do, and the next candidate is tried. Afterwards:
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
//! Everything is ordered by index (candidates at a tip first, then by how far past their
//! threshold, then id), so the same inputs give bit-identical results. A pinned vertex keeps
//! its pin on the original copy only, so a tear can free a piece from its pin; a held vertex
//! stays held by the original.
//!
//! The files, one concern each:
//! - [`field`]: the strain field averaged over the tear length, which the criterion reads;
//! - [`criterion`]: when an edge fails, which fails first, along which yarn it splits;
//! - [`fragments`]: the refusal of a tear that would cut off a scrap (mouse cuts split
//!   unconditionally), and the connected pieces of a cloth;
//! - [`cut`]: where a mouse stroke's seam runs through the mesh, and [`snapping`]: the seam
//!   moved onto the stroke;
//! - [`topology`]: the adjacency a split keeps up to date, and the questions asked of a
//!   vertex's fan;
//! - this file: [`TearState`], and [`TearEditor`], whose methods run a tear or a cut on the
//!   cloth with the pieces above and make the splits.

use glam::Vec3;

use super::constraint_store::ConstraintStore;
use super::constraints::distance;
use super::interaction::{Grab, Ray};
use super::model::{Compliance, DistanceConstraint, EdgeKind, Hinge, Model};
use super::params::{Material, SolverParams};
use super::particles::Particles;

mod criterion;
mod cut;
mod field;
mod fragments;
mod snapping;
mod topology;

use criterion::{Criterion, StrainHistory};
use cut::{Crossing, CutSurface};
use field::StrainField;
use fragments::FragmentCheck;
use topology::{shares_edge, Mesh, Topology, NONE};

pub(crate) use fragments::piece_labels;
pub use fragments::{MIN_FRAGMENT_TRIANGLES, MIN_HELD_FRAGMENT_TRIANGLES};

/// Tearing bookkeeping kept by a [`crate::sim::cloth::Cloth`].
#[derive(Debug, Clone, Default)]
pub(crate) struct TearState {
    /// Adjacency and supports, built on the first tear or cut and then kept up to date.
    topology: Option<Topology>,
    /// The criterion's memory of every edge: weakness, failed once, averaged strain (see
    /// [`criterion`]). The averages are cleared while tearing is off.
    history: StrainHistory,
    /// Crack tips: ends of cracks that stop inside the cloth, ascending (see [`criterion`]).
    tips: Vec<u32>,
    /// The strain field of the last tear check ([`field`]), which chooses the split planes.
    field: StrainField,
    /// Edges torn by strain or cut so far.
    pub torn_edges: usize,
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

    /// Whether triangle `tri` lies in front of the plane in the `rest` shape (by its
    /// centroid; on the plane counts as in front).
    fn in_front(&self, tri: [u32; 3], rest: &[Vec3]) -> bool {
        let height = |i: u32| (rest[i as usize] - self.point).dot(self.normal);
        tri.map(height).iter().sum::<f32>() >= 0.0
    }
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

/// Compliance `c` doubled: each of the two boundary edges a crack makes of a shared edge
/// carries half its stiffness.
fn doubled(c: Compliance) -> Compliance {
    match c {
        Compliance::Material(coef) => Compliance::Material(2.0 * coef),
        Compliance::Fixed(alpha) => Compliance::Fixed(2.0 * alpha),
    }
}

/// The panic message of a split before the adjacency is built (every entry point builds it
/// first).
const UNBUILT: &str = "topology is built before any split";

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

impl TearEditor<'_> {
    /// Ids of the live distance constraints, ascending.
    fn live_distance_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.constraints.distances().live_ids()
    }

    /// End-of-frame tear check (see [`criterion`]): measures the strain field averaged over
    /// the tear length ([`field`]), folds each live stretch edge's strain from it into its
    /// running average and fails the edges whose average exceeds `tear_strain` (lowered by
    /// debilitation), worst first, until `params.max_splits_per_step` have torn. Returns the
    /// number of edges that tore.
    pub fn tear_overstrained(&mut self, params: &SolverParams) -> usize {
        let tear_lengths = self.materials.iter().filter(|m| m.tear_strain.is_some()).map(|m| m.tear_length);
        let Some(tear_length) = tear_lengths.reduce(f32::max) else {
            self.tearing.history.forget_averages();
            return 0;
        };
        self.measure_field(tear_length);
        let criteria: Vec<Option<Criterion>> = self.materials.iter().map(|m| Criterion::of(m, params.dt)).collect();
        let failing = self.failing_edges(&criteria);
        let torn = self.tear_worst_first(&failing, params.max_splits_per_step as usize);
        if torn > 0 {
            self.finish_topology_change();
        }
        torn
    }

    /// Measures the strain field averaged over `tear_length` (m) on the cloth as it is.
    fn measure_field(&mut self, tear_length: f32) {
        let passes = field::smoothing_passes(tear_length, self.mean_stretch_spacing());
        let particles = &*self.particles;
        self.tearing
            .field
            .measure(&self.model.triangles, &self.model.positions, |i| particles.position(i), passes);
    }

    /// The mean rest length of the live stretch edges (m; 0 without any).
    fn mean_stretch_spacing(&self) -> f32 {
        let (mut total, mut count) = (0.0f64, 0u32);
        for batch in self.constraints.distances().iter_batches() {
            for (slot, kind) in batch.kind.iter().enumerate() {
                if *kind == EdgeKind::Stretch {
                    total += f64::from(batch.rest[slot]);
                    count += 1;
                }
            }
        }
        if count == 0 {
            0.0
        } else {
            (total / f64::from(count)) as f32
        }
    }

    /// Folds this frame's strain into every live stretch edge's running average and returns
    /// the edges that fail, as (average / threshold, id), in the order they tear (see
    /// [`criterion::worst_first`]). An edge's strain is the averaged field's along its rest
    /// direction ([`StrainField::edge_strain`]), its own for an edge no triangle uses (a rope).
    /// `criteria` holds each material slot's criterion, `None` for a material that does not
    /// tear, whose edges are skipped. Edges that already failed once are not checked again.
    fn failing_edges(&mut self, criteria: &[Option<Criterion>]) -> Vec<(f32, u32)> {
        let (history, field) = (&mut self.tearing.history, &self.tearing.field);
        let mut failing = Vec::new();
        for batch in self.constraints.distances().iter_batches() {
            for (slot, &id) in batch.id.iter().enumerate() {
                if batch.kind[slot] != EdgeKind::Stretch || history.is_spent(id) {
                    continue;
                }
                let (a, b) = (batch.a[slot], batch.b[slot]);
                let Some(criterion) = criteria[self.model.material[a as usize] as usize] else {
                    continue;
                };
                let rest = &self.model.positions;
                let direction = (rest[b as usize] - rest[a as usize]).normalize_or_zero();
                let strain = field.edge_strain(a, b, direction).unwrap_or_else(|| {
                    let length = self.particles.position(a as usize).distance(self.particles.position(b as usize));
                    distance::strain(length, batch.rest[slot])
                });
                if let Some(excess) = history.fold(id, strain, criterion) {
                    failing.push((excess, id));
                }
            }
        }
        let (distances, tips) = (&self.model.distances, &self.tearing.tips);
        criterion::worst_first(&mut failing, |id| {
            let c = &distances[id as usize];
            [c.a, c.b].iter().any(|v| tips.binary_search(v).is_ok())
        });
        failing
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

    /// Breaks the stitches of seams with a strength whose force in the last substep of `h` s,
    /// |λ| / h², exceeds the strength times the length of seam they hold
    /// ([`crate::sim::sewing`]), in seam and stitch order. Returns how many broke.
    pub fn break_seams(&mut self, h: f32) -> usize {
        let inv_h2 = 1.0 / (h * h);
        let mut broken = Vec::new();
        for seam in &self.model.seams {
            let Some(strength) = seam.strength else { continue };
            for (&id, &share) in seam.stitches.iter().zip(&seam.shares) {
                let force = self.constraints.distance_lambda(id).map(|lambda| lambda.abs() * inv_h2);
                if force.is_some_and(|f| f > strength * share) {
                    broken.push(id);
                }
            }
        }
        if broken.is_empty() {
            return 0;
        }
        broken.iter().for_each(|&id| self.remove_distance(id));
        self.finish_topology_change();
        broken.len()
    }

    /// Cuts the cloth along the surface swept between two world-space rays (a mouse stroke
    /// from the camera): every stretch edge crossing it is cut. The seam is first snapped onto
    /// the stroke ([`snapping`]); then the vertices on the seam are split between the
    /// triangles in front of the surface and the others ([`cut`]). Returns the number of edges
    /// the cut opened (each now a boundary edge on either side) or cut through (ropes).
    pub fn cut(&mut self, from: &Ray, to: &Ray) -> usize {
        let Some(surface) = CutSurface::between(from, to) else {
            return 0;
        };
        let crossing_at = |a: u32, b: u32| surface.crossing(self.particles.position(a as usize), self.particles.position(b as usize));
        let crossed: Vec<u32> = self
            .live_distance_ids()
            .filter(|&id| {
                let c = self.model.distances[id as usize];
                matches!(c.kind, EdgeKind::Stretch | EdgeKind::Seam) && crossing_at(c.a, c.b).is_some()
            })
            .collect();
        let crossings = cut::crossings(&self.model.triangles, crossing_at);
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
            .map(|i| surface.height(self.particles.position(i)))
            .collect();
        let on_seam = self.snap_to_stroke(&crossings);
        let in_front = cut::sides_of_seam(self.mesh(), &on_seam, &height);
        // Every edge the seam opens becomes one boundary edge per side: a new record each.
        let records = self.model.distances.len();
        for v in cut::seam_vertices(&vertices, &crossings, &on_seam) {
            let groups = self.mesh().fan_groups_by(v, |t| in_front[t as usize]);
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

    /// Snaps the seam of a cut crossing the edges `crossings` onto the stroke ([`snapping`]),
    /// in the rest shape, the current one and the texture alike, and settles the rest shape
    /// around the moved vertices; returns which particles moved onto the stroke (indexed by
    /// particle).
    fn snap_to_stroke(&mut self, crossings: &[Crossing]) -> Vec<bool> {
        let topology = self.tearing.topology.as_ref().expect(UNBUILT);
        let mesh = topology.mesh(&self.model.triangles);
        let (particles, grab) = (&*self.particles, self.grab);
        let fixed = |v: u32| particles.inverse_mass(v as usize) == 0.0 || snapping::is_held(grab, mesh.triangles, v);
        let snaps = snapping::snap_rest_shape(crossings, mesh, &mut self.model.positions, fixed);
        let mut on_stroke = vec![false; self.particles.len()];
        for snap in &snaps {
            snap.move_particle(self.particles);
            snap.move_texture_coordinates(&mut self.model.corner_uvs, mesh);
            on_stroke[snap.vertex as usize] = true;
        }
        if !snaps.is_empty() {
            let moved: Vec<u32> = snaps.iter().map(|s| s.vertex).collect();
            self.settle_rest_shape(&moved);
        }
        on_stroke
    }

    /// After snapping `moved` in the rest shape: the constraints at the moved vertices take
    /// their new rest lengths and angles, and the areas around them are lumped anew.
    fn settle_rest_shape(&mut self, moved: &[u32]) {
        let (distance_ids, hinge_ids) = self.topology().constraints_at(moved);
        for id in distance_ids {
            let mut c = self.model.distances[id as usize];
            c.rest = self.model.positions[c.a as usize].distance(self.model.positions[c.b as usize]);
            self.constraints.replace_distance(self.model, id, c, self.materials);
        }
        for id in hinge_ids {
            if let Some(new) = snapping::rested_hinge(&self.model.hinges[id as usize], &self.model.positions) {
                self.constraints.replace_hinge(self.model, id, new, self.materials);
            }
        }
        let areas = snapping::relumped_areas(moved, self.mesh(), &self.model.positions, &self.model.lumped_area);
        for (v, area) in areas {
            self.model.lumped_area[v as usize] = area;
            self.particles.area[v as usize] = area;
        }
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
        self.tearing.topology.as_ref().expect(UNBUILT)
    }

    fn topology_mut(&mut self) -> &mut Topology {
        self.tearing.topology.as_mut().expect(UNBUILT)
    }

    /// The model's triangles with the fans around its vertices.
    fn mesh(&self) -> Mesh<'_> {
        self.topology().mesh(&self.model.triangles)
    }

    /// Tells the cloth to bring what depends on the topology up to date, and the strain field
    /// to rebuild its rest shape.
    fn finish_topology_change(&mut self) {
        self.tearing.field.forget_rest_shape();
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
        let along = criterion::rest_direction(&c, &self.model.positions);
        let mut sheds = false;
        for v in self.split_order(c.a, c.b) {
            match self.tear_split_at(v, along) {
                TearSplit::Made => {
                    self.tearing.history.mark_spent(id);
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

    /// Splits vertex `v` for a tear into two, by the first of its candidate splits
    /// ([`Self::tear_splits`]) that makes exactly two groups and sheds no fragment
    /// ([`fragments`]).
    fn tear_split_at(&mut self, v: u32, along: Vec3) -> TearSplit {
        let mut outcome = TearSplit::Impossible;
        for groups in self.tear_splits(v, along) {
            if groups.len() != 2 {
                continue;
            }
            let scraps = FragmentCheck {
                mesh: self.mesh(),
                pinned: &self.particles.pinned,
                grab: self.grab,
            };
            if scraps.sheds_fragment(v, &groups) {
                outcome = TearSplit::WouldShed;
                continue;
            }
            self.apply_split(v, groups);
            return TearSplit::Made;
        }
        outcome
    }

    /// The ways a tear may split vertex `v`, most likely first (see [`criterion`]). Where the
    /// fan is open (a crack tip, a border), the crack first tries to extend along one of its
    /// inner yarns, the one the field opens most ([`Self::crack_extensions`]). Then, the only
    /// candidates at an interior vertex: the planes normal to its yarns, most loaded first,
    /// and normal to the failing edge (`along`, in the rest shape) last. A split that divides
    /// the fan in three would branch the crack and is passed over by the caller.
    fn tear_splits(&self, v: u32, along: Vec3) -> Vec<Vec<Vec<u32>>> {
        let point = self.model.positions[v as usize];
        let mut splits = Vec::new();
        if self.mesh().on_boundary(v) {
            splits.extend(self.crack_extensions(v).into_iter().map(|u| self.mesh().fan_groups_cut_at(v, u)));
        }
        let mut normals = self.loaded_yarns(v);
        normals.push(along);
        splits.extend(normals.into_iter().map(|normal| self.fan_groups(v, SplitPlane { point, normal })));
        splits
    }

    /// The far ends of the inner stretch edges at `v` (edges with a triangle on both sides)
    /// across which the strain field at `v` pulls apart, most opened first
    /// ([`StrainField::opening_at`]), ties by the opening at the far end, then by index: a
    /// crack at `v` runs on across the largest principal strain there, snapped to the weave,
    /// so it turns as the load turns (mode I). The field at the tip itself decides, not the
    /// field ahead: beside a crack's free faces the cloth is stretched along them, and read
    /// there every step looked like a turn (the crack spiralled round the grab).
    fn crack_extensions(&self, v: u32) -> Vec<u32> {
        let (mesh, field) = (self.mesh(), &self.tearing.field);
        let fan = mesh.fan(v);
        let mut ends: Vec<(f32, f32, u32)> = Vec::new();
        for &id in &self.topology().vertex_distances[v as usize] {
            let c = &self.model.distances[id as usize];
            if c.kind != EdgeKind::Stretch || self.constraints.distances().slot(id).is_none() {
                continue;
            }
            let u = if c.a == v { c.b } else { c.a };
            let inner = fan.iter().filter(|&&t| mesh.triangles[t as usize].contains(&u)).count() == 2;
            if !inner {
                continue;
            }
            let direction = criterion::rest_direction(c, &self.model.positions);
            if let (Some(opening), Some(ahead)) = (field.opening_at(v, direction), field.opening_at(u, direction)) {
                if opening > 0.0 {
                    ends.push((opening, ahead, u));
                }
            }
        }
        ends.sort_by(|x, y| y.0.total_cmp(&x.0).then(y.1.total_cmp(&x.1)).then(x.2.cmp(&y.2)));
        ends.into_iter().map(|(_, _, u)| u).collect()
    }

    /// The yarns at vertex `v` a tear may split across, most loaded first, as rest-shape
    /// directions ([`criterion::loaded_yarns`], under the strain field of this check).
    fn loaded_yarns(&self, v: u32) -> Vec<Vec3> {
        let Some(strain) = self.tearing.field.at(v) else {
            return Vec::new();
        };
        criterion::loaded_yarns(
            &self.topology().vertex_distances[v as usize],
            &self.model.distances,
            &self.model.positions,
            strain,
        )
    }

    /// The endpoints of a failing edge in the order a tear tries them: free before pinned or
    /// held; a crack tip or an edge of the cloth (a vertex whose fan is open) before an interior
    /// vertex, so an existing crack runs on instead of a new slit opening beside it; then the
    /// one with more triangles, then the lower index.
    fn split_order(&self, a: u32, b: u32) -> [u32; 2] {
        let mesh = self.mesh();
        let mut order = [a, b];
        order.sort_by_key(|&v| {
            (
                self.particles.inverse_mass(v as usize) == 0.0,
                self.tearing.tips.binary_search(&v).is_err(),
                !mesh.on_boundary(v),
                usize::MAX - mesh.fan(v).len(),
                v,
            )
        });
        order
    }

    /// Splits vertex `v` by `plane`; returns whether any copy was made.
    fn split_vertex(&mut self, v: u32, plane: SplitPlane) -> bool {
        let groups = self.fan_groups(v, plane);
        if groups.len() < 2 {
            return false;
        }
        self.apply_split(v, groups);
        true
    }

    /// The triangles around `v` grouped by side of `plane` in the rest shape (by their
    /// centroids), each side further split into edge-connected fans; see
    /// [`Mesh::fan_groups_by`].
    fn fan_groups(&self, v: u32, plane: SplitPlane) -> Vec<Vec<u32>> {
        let (triangles, rest) = (&self.model.triangles, &self.model.positions);
        self.mesh().fan_groups_by(v, |t| plane.in_front(triangles[t as usize], rest))
    }

    /// Gives every fan group of `v` after the first its own copy of `v`, then re-lumps the
    /// masses, re-attaches the constraints, weakens the edges around it and separates bow ties.
    fn apply_split(&mut self, v: u32, groups: Vec<Vec<u32>>) {
        let ends = self.mesh().crack_ends(v, &groups);
        let tips: Vec<u32> = ends.iter().copied().filter(|&u| !self.mesh().on_boundary(u)).collect();
        let mut family = Family { members: vec![v] };
        for group in &groups[1..] {
            let copy = self.copy_particle(v);
            family.members.push(copy);
            for &t in group {
                let tri = &mut self.model.triangles[t as usize];
                tri.iter_mut().filter(|x| **x == v).for_each(|x| *x = copy);
                self.topology_mut().move_triangle(t, v, copy);
            }
        }
        self.relump(&family);
        self.constraints.resize_particles(self.particles.len());
        // Constraints of the split vertex change ends; constraints of its neighbours (e.g. a
        // quad diagonal whose quad the crack just ran through) may now span the crack.
        let ring = self.mesh().ring(&family.members);
        let (distance_ids, hinge_ids) = self.topology().constraints_at(family.members.iter().chain(&ring));
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
        self.topology_mut().grow(copy as usize + 1);
        copy
    }

    /// Re-lumps area (from rest triangle areas) and point mass over the members of a split.
    fn relump(&mut self, family: &Family) {
        let mesh = self.mesh();
        let areas: Vec<f32> = family
            .members
            .iter()
            .map(|&m| {
                mesh.fan(m)
                    .iter()
                    .map(|&t| super::model::triangle_area(&self.model.positions, mesh.triangles[t as usize]) / 3.0)
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
        let stitch = self.model.distances[id as usize];
        if stitch.kind == EdgeKind::Seam {
            // The seam opens where the cloth parts (crate::sim::sewing).
            if [stitch.a, stitch.b].iter().any(|end| family.members.contains(end)) {
                self.remove_distance(id);
            }
            return;
        }
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
        self.tearing.history.inherit(id, twin);
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
        let corners = |h: &Hinge| [h.wings[0], h.wings[1], h.edge[0], h.edge[1]];
        if !shares_edge(tri1, tri2) {
            self.constraints.remove_hinge(id);
            self.topology_mut().unlink_hinge(id, &corners(&old));
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
            let topology = self.topology_mut();
            topology.unlink_hinge(id, &corners(&old));
            topology.link_hinge(id, &corners(&new));
            self.constraints.replace_hinge(self.model, id, new, self.materials);
        }
    }

    /// Re-points distance constraint `id` to `c` with `support` (its slot is rebuilt, λ = 0).
    fn set_distance(&mut self, id: u32, c: DistanceConstraint, support: [u32; 2]) {
        let old = self.model.distances[id as usize];
        let topology = self.topology_mut();
        topology.unlink_distance(id, [old.a, old.b]);
        topology.link_distance(id, [c.a, c.b]);
        topology.distance_support[id as usize] = support;
        self.constraints.replace_distance(self.model, id, c, self.materials);
    }

    /// Adds distance constraint `c` with `support`; returns its id.
    fn add_distance(&mut self, c: DistanceConstraint, support: [u32; 2]) -> u32 {
        let id = self.constraints.add_distance(self.model, c, self.materials);
        let topology = self.topology_mut();
        topology.link_distance(id, [c.a, c.b]);
        topology.distance_support.push(support);
        id
    }

    /// Takes distance constraint `id` out of the solve and the adjacency (its record stays,
    /// as a torn edge).
    fn remove_distance(&mut self, id: u32) {
        self.constraints.remove_distance(id);
        let c = self.model.distances[id as usize];
        if let Some(topology) = self.tearing.topology.as_mut() {
            topology.unlink_distance(id, [c.a, c.b]);
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
            self.tearing.history.weaken(id, factor);
        }
    }
}

#[cfg(test)]
mod tests;
