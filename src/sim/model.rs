//! The general model builder: particles, distance constraints, triangles and dihedral bending
//! hinges. Grids ([`crate::sim::grid`]), ropes and arbitrary triangle meshes are all built with
//! it, so the solver never special-cases a mesh shape.
//!
//! Compliance is stored per constraint as a *geometric coefficient* (docs/physics.md §2)
//! and turned into m/N by the material at step time, so the material can change
//! live without a rebuild:
//! - stretch / shear edges: α = coef · scale / (multiplier · E t);
//! - bending hinges: α = coef · scale / (multiplier · D), coef = (A1 + A2)/|e|²;
//! - [`Compliance::Fixed`]: α given directly in m/N (or 1/(N·m)), only the scale and the
//!   multiplier apply. Used by hand-built models and the tmp15 benchmark.
//!
//! Closed surfaces can be held at a multiple of their rest volume ([`PressureBody`],
//! [`ModelBuilder::add_pressure_body`], [`crate::sim::pressure`]).

use glam::{Vec2, Vec3};

use super::error::{check_len, SimError, MAX_PARTICLES};
pub use super::pressure::PressureBody;
use super::pressure::{enclosed_volume, surface_defect};
pub use super::sewing::Seam;

/// What a distance constraint models; selects the stiffness multiplier and the statistics it
/// contributes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    /// Structural edge: resists stretching along the weave. Counted in strain statistics.
    Stretch,
    /// Diagonal edge: resists in-plane shear.
    Shear,
    /// Distance to a second neighbour: a cheap bending resistance.
    Bend,
    /// A stitch of a seam between two vertices, pulled shut and then held rigid
    /// ([`crate::sim::sewing`]). Not scaled by the material's stiffness multipliers.
    Seam,
}

/// How a constraint's compliance is obtained.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Compliance {
    /// Geometric coefficient, divided by the material modulus (E t, or D for hinges).
    Material(f32),
    /// Compliance given directly (m/N for distances, 1/(N·m) for hinges).
    Fixed(f32),
}

/// A distance constraint C = |x_a − x_b| − rest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DistanceConstraint {
    /// First particle.
    pub a: u32,
    /// Second particle.
    pub b: u32,
    /// Rest length in m.
    pub rest: f32,
    /// What the edge resists.
    pub kind: EdgeKind,
    /// Where its compliance comes from.
    pub compliance: Compliance,
}

/// A dihedral bending hinge: the shared edge `edge[0]`–`edge[1]` and the two wing vertices.
/// The constraint is C = θ − θ0 with θ the signed dihedral angle (docs/physics.md §2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hinge {
    /// Wing vertices p0 (of the first triangle) and p1 (of the second).
    pub wings: [u32; 2],
    /// Shared edge p2 → p3, in the winding order of the first triangle.
    pub edge: [u32; 2],
    /// Rest angle θ0 in radians.
    pub rest_angle: f32,
    /// Where its compliance comes from.
    pub compliance: Compliance,
}

/// A complete simulation model: what [`crate::sim::Cloth::new`] consumes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Model {
    /// Initial positions in m.
    pub positions: Vec<Vec3>,
    /// Area lumped to each particle in m² (mass = area · ρ_A + point mass).
    pub lumped_area: Vec<f32>,
    /// Extra mass attached to each particle in kg (hand-built models, loads).
    pub point_mass: Vec<f32>,
    /// Pinned particles do not move (inverse mass 0) until unpinned.
    pub pinned: Vec<bool>,
    /// Material slot of each particle: an index into the cloth's materials
    /// ([`crate::sim::Cloth::materials`]); 0 for every particle of a one-material model. A
    /// distance constraint takes its first particle's material, a hinge its edge's first
    /// particle's, so the constraints of one object (a scene's objects are not joined) take
    /// the object's. Default 0 ([`ModelBuilder::add_particle`]).
    pub material: Vec<u16>,
    /// Render / collision triangles, counter-clockwise seen from the front.
    pub triangles: Vec<[u32; 3]>,
    /// Distance constraints.
    pub distances: Vec<DistanceConstraint>,
    /// Bending hinges.
    pub hinges: Vec<Hinge>,
    /// Texture coordinates of each triangle's corners (one entry per triangle), or empty
    /// when the model has none. Only drawing uses them.
    pub corner_uvs: Vec<[Vec2; 3]>,
    /// Closed surfaces held at a multiple of their rest volume (none by default). A body
    /// whose surface a tear has opened stays listed and has no pressure.
    pub pressure_bodies: Vec<PressureBody>,
    /// Seams sewing vertices together (none by default; [`Model::add_seam`]).
    pub seams: Vec<Seam>,
}

/// Incremental builder for a [`Model`]. Indices are returned as `u32` particle ids.
#[derive(Debug, Clone, Default)]
pub struct ModelBuilder {
    model: Model,
}

impl ModelBuilder {
    /// An empty model.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a particle at `position` (m) carrying `point_mass` (kg) and returns its index.
    pub fn add_particle(&mut self, position: Vec3, point_mass: f32) -> u32 {
        let m = &mut self.model;
        m.positions.push(position);
        m.lumped_area.push(0.0);
        m.point_mass.push(point_mass);
        m.pinned.push(false);
        m.material.push(0);
        (m.positions.len() - 1) as u32
    }

    /// Number of particles added so far.
    pub fn particle_count(&self) -> usize {
        self.model.positions.len()
    }

    /// Pins (or unpins) particle `i`.
    pub fn set_pinned(&mut self, i: u32, pinned: bool) {
        self.model.pinned[i as usize] = pinned;
    }

    /// Adds a distance constraint whose rest length is the current distance of `a` and `b`.
    pub fn add_distance(&mut self, a: u32, b: u32, kind: EdgeKind, compliance: Compliance) {
        let rest = self.model.positions[a as usize].distance(self.model.positions[b as usize]);
        self.model.distances.push(DistanceConstraint {
            a,
            b,
            rest,
            kind,
            compliance,
        });
    }

    /// Adds a triangle (counter-clockwise seen from the front) and lumps a third of its area to
    /// each corner.
    pub fn add_triangle(&mut self, tri: [u32; 3]) {
        let area = triangle_area(&self.model.positions, tri);
        for &i in &tri {
            self.model.lumped_area[i as usize] += area / 3.0;
        }
        self.model.triangles.push(tri);
    }

    /// Adds one stretch constraint per unique triangle edge, with the per-edge stiffness
    /// k_e = E t · Σ A_t / |e|² summed over the edge's triangles. For equilateral meshes this
    /// is the α = 2/(√3 E t) of docs/physics.md §2 (isotropic, ν = 1/3); for other meshes it is the
    /// usual lumped approximation.
    pub fn add_triangle_edges(&mut self) {
        let mut edges: Vec<((u32, u32), f32)> = Vec::new();
        for &tri in &self.model.triangles {
            let area = triangle_area(&self.model.positions, tri);
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                edges.push(((a.min(b), a.max(b)), area));
            }
        }
        edges.sort_by_key(|e| e.0);
        let mut i = 0;
        while i < edges.len() {
            let key = edges[i].0;
            let mut area_sum = 0.0;
            while i < edges.len() && edges[i].0 == key {
                area_sum += edges[i].1;
                i += 1;
            }
            let len2 = self.model.positions[key.0 as usize].distance_squared(self.model.positions[key.1 as usize]);
            if area_sum > 0.0 && len2 > 0.0 {
                // stiffness k = E t · ΣA/|e|², so the coefficient of 1/(E t) is |e|²/ΣA.
                self.add_distance(key.0, key.1, EdgeKind::Stretch, Compliance::Material(len2 / area_sum));
            }
        }
    }

    /// Adds a dihedral bending hinge for every interior edge shared by exactly two triangles,
    /// with the coefficient (A1 + A2)/|e|² of docs/physics.md §2 and the current angle as rest angle.
    pub fn add_hinges_from_triangles(&mut self) {
        for hinge in hinges_of(&self.model.positions, &self.model.triangles) {
            self.model.hinges.push(hinge);
        }
    }

    /// The triangles added so far.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.model.triangles
    }

    /// Sets the texture coordinates of every triangle's corners, in the order the triangles
    /// were added (checked by [`ModelBuilder::build`]).
    pub fn set_corner_uvs(&mut self, corner_uvs: Vec<[Vec2; 3]>) {
        self.model.corner_uvs = corner_uvs;
    }

    /// Number of triangles added so far.
    pub fn triangle_count(&self) -> usize {
        self.model.triangles.len()
    }

    /// Makes the triangles `triangles` (indices of triangles added so far) a pressure body with
    /// pressure factor `pressure` (k, in [0, 10]) and volume compliance `compliance` (m³/Pa,
    /// in [0, 1]; 0 = incompressible), and returns its index. The triangles must bound a
    /// closed surface wound counter-clockwise seen from outside: every edge in exactly two of
    /// them, run in opposite directions, enclosing a positive volume. Otherwise nothing is
    /// added and the error says what is wrong.
    pub fn add_pressure_body(&mut self, triangles: Vec<u32>, pressure: f32, compliance: f32) -> Result<u32, SimError> {
        let body = PressureBody {
            triangles,
            pressure,
            compliance,
        };
        let m = &self.model;
        body.validate(m.triangles.len())?;
        if let Some(defect) = surface_defect(body.corners(&m.triangles)) {
            return Err(SimError::InvalidGeometry(format!(
                "a pressure body must be a closed surface, but {defect}"
            )));
        }
        let corners: Vec<[u32; 3]> = body.corners(&m.triangles).collect();
        let volume = enclosed_volume(&m.positions, &corners);
        if volume <= 0.0 || !volume.is_finite() {
            return Err(SimError::InvalidGeometry(format!(
                "a pressure body must enclose a positive volume, but it encloses {volume} m³ \
                 (its triangles must run counter-clockwise seen from outside)"
            )));
        }
        self.model.pressure_bodies.push(body);
        Ok((self.model.pressure_bodies.len() - 1) as u32)
    }

    /// Finishes the model after checking every index and value.
    pub fn build(self) -> Result<Model, SimError> {
        self.model.validate()?;
        Ok(self.model)
    }
}

/// For each of `n` particles, the smallest particle joined to it through `edges` (its
/// connected piece, by union–find).
pub(crate) fn joined_pieces(n: usize, edges: impl Iterator<Item = (u32, u32)>) -> Vec<u32> {
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn root(parent: &mut [u32], mut i: u32) -> u32 {
        while parent[i as usize] != i {
            parent[i as usize] = parent[parent[i as usize] as usize];
            i = parent[i as usize];
        }
        i
    }
    for (a, b) in edges {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        parent[ra.max(rb) as usize] = ra.min(rb);
    }
    (0..n as u32).map(|i| root(&mut parent, i)).collect()
}

/// Area of triangle `tri` in m².
pub fn triangle_area(positions: &[Vec3], tri: [u32; 3]) -> f32 {
    let [a, b, c] = tri.map(|i| positions[i as usize]);
    0.5 * (b - a).cross(c - a).length()
}

/// Bending hinges of a triangle mesh: one per edge shared by exactly two triangles.
pub fn hinges_of(positions: &[Vec3], triangles: &[[u32; 3]]) -> Vec<Hinge> {
    let half_edges = half_edges_by_edge(positions.len(), triangles);
    let mut hinges = Vec::new();
    for pair in half_edges.chunk_by(|x, y| x.0 == y.0) {
        if pair.len() != 2 {
            continue; // boundary or non-manifold edge: no hinge
        }
        let (first, second) = (pair[0], pair[1]);
        let (p2, p3) = if first.2 == first.0 .0 {
            (first.0 .0, first.0 .1)
        } else {
            (first.0 .1, first.0 .0)
        };
        if let Some(hinge) = hinge_at_rest(positions, [first.3, second.3], [p2, p3]) {
            hinges.push(hinge);
        }
    }
    hinges
}

/// Every triangle's three half-edges as ((min, max) edge, triangle index, directed edge
/// start, wing), ordered by edge and then triangle, so the two halves of an inner edge are
/// neighbours. A counting sort by the edge's lower vertex (of `particles`), then a sort of
/// each vertex's few edges: linear in the triangles, where one comparison sort of them all
/// took a fifth of building a 1024² grid.
fn half_edges_by_edge(particles: usize, triangles: &[[u32; 3]]) -> Vec<((u32, u32), usize, u32, u32)> {
    let half_edges = triangles.iter().enumerate().flat_map(|(t, tri)| {
        (0..3).map(move |k| {
            let (a, b, wing) = (tri[k], tri[(k + 1) % 3], tri[(k + 2) % 3]);
            ((a.min(b), a.max(b)), t, a, wing)
        })
    });
    let mut start = vec![0usize; particles + 1];
    for h in half_edges.clone() {
        start[h.0 .0 as usize + 1] += 1;
    }
    for v in 0..particles {
        start[v + 1] += start[v];
    }
    let mut fill = start.clone();
    let mut sorted = vec![((0, 0), 0, 0, 0); 3 * triangles.len()];
    for h in half_edges {
        let slot = &mut fill[h.0 .0 as usize];
        sorted[*slot] = h;
        *slot += 1;
    }
    for bucket in start.windows(2) {
        sorted[bucket[0]..bucket[1]].sort_unstable_by_key(|h| (h.0 .1, h.1));
    }
    sorted
}

/// The hinge with wings `wings` on edge `edge` as `positions` make it: their dihedral angle
/// as rest angle and the coefficient (A1 + A2)/|e|² of docs/physics.md §2; `None` when a
/// triangle or the edge is degenerate (never divided by).
pub(crate) fn hinge_at_rest(positions: &[Vec3], wings: [u32; 2], edge: [u32; 2]) -> Option<Hinge> {
    let [x0, x1, x2, x3] = [wings[0], wings[1], edge[0], edge[1]].map(|i| positions[i as usize]);
    let e2 = (x3 - x2).length_squared();
    let area_sum = 0.5 * ((x2 - x0).cross(x3 - x0).length() + (x3 - x1).cross(x2 - x1).length());
    if e2 <= 0.0 || area_sum <= 0.0 {
        return None;
    }
    Some(Hinge {
        wings,
        edge,
        rest_angle: crate::sim::constraints::bend::dihedral_angle(x0, x1, x2, x3).unwrap_or(0.0),
        compliance: Compliance::Material(area_sum / e2),
    })
}

impl Model {
    /// Number of particles.
    pub fn particle_count(&self) -> usize {
        self.positions.len()
    }

    /// Whether the model holds nothing: no particles, triangles, constraints, hinges or
    /// pressure bodies.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
            && self.triangles.is_empty()
            && self.distances.is_empty()
            && self.hinges.is_empty()
            && self.pressure_bodies.is_empty()
            && self.seams.is_empty()
    }

    /// Appends `other` as a further, unconnected part: its particle numbers are shifted past
    /// this model's, its triangles, constraints, hinges, pressure bodies and seams follow this
    /// model's. A model with
    /// texture coordinates joined to one without gives the latter's corners (0, 0).
    pub fn append(&mut self, other: Model) {
        if self.is_empty() {
            // The first object of a scene: moved, not copied (a 1024² grid is 0.5 GB).
            *self = other;
            return;
        }
        let offset = self.particle_count() as u32;
        let triangle_offset = self.triangles.len() as u32;
        self.pressure_bodies
            .extend(other.pressure_bodies.into_iter().map(|body| PressureBody {
                triangles: body.triangles.iter().map(|t| t + triangle_offset).collect(),
                ..body
            }));
        let distance_offset = self.distances.len() as u32;
        self.seams.extend(other.seams.into_iter().map(|seam| Seam {
            stitches: seam.stitches.iter().map(|id| id + distance_offset).collect(),
            ..seam
        }));
        let shift = |i: u32| i + offset;
        if !self.corner_uvs.is_empty() || !other.corner_uvs.is_empty() {
            let mut other_uvs = other.corner_uvs;
            other_uvs.resize(other.triangles.len(), [Vec2::ZERO; 3]);
            self.corner_uvs.resize(self.triangles.len(), [Vec2::ZERO; 3]);
            self.corner_uvs.extend(other_uvs);
        }
        self.positions.extend(other.positions);
        self.lumped_area.extend(other.lumped_area);
        self.point_mass.extend(other.point_mass);
        self.pinned.extend(other.pinned);
        self.material.extend(other.material);
        self.triangles.extend(other.triangles.into_iter().map(|t| t.map(shift)));
        self.distances.extend(other.distances.into_iter().map(|c| DistanceConstraint {
            a: shift(c.a),
            b: shift(c.b),
            ..c
        }));
        self.hinges.extend(other.hinges.into_iter().map(|h| Hinge {
            wings: h.wings.map(shift),
            edge: h.edge.map(shift),
            ..h
        }));
    }

    /// The same model with particle `i` renumbered to `new_index[i]` (a permutation of
    /// 0..n), in every per-particle array and every triangle, constraint and hinge; the
    /// constraints keep their order and ids (pressure bodies list triangles, which keep
    /// theirs, so they are unchanged). The solver's sweep order follows the numbering
    /// (see [`crate::sim::constraints`]): a grid numbered row by row is solved in the order of
    /// the straightforward loop, any other numbering in greedy colours.
    pub fn renumbered(&self, new_index: &[u32]) -> Result<Model, SimError> {
        let n = self.particle_count();
        let mut seen = vec![false; n];
        let mut fresh = |k: u32| (k as usize) < n && !std::mem::replace(&mut seen[k as usize], true);
        if new_index.len() != n || !new_index.iter().all(|&k| fresh(k)) {
            return Err(SimError::InvalidGeometry(
                "renumbering is not a permutation of the particles".into(),
            ));
        }
        let map = |i: u32| new_index[i as usize];
        let mut out = self.clone();
        for (i, &k) in new_index.iter().enumerate() {
            let k = k as usize;
            out.positions[k] = self.positions[i];
            out.lumped_area[k] = self.lumped_area[i];
            out.point_mass[k] = self.point_mass[i];
            out.pinned[k] = self.pinned[i];
            out.material[k] = self.material[i];
        }
        out.triangles.iter_mut().for_each(|t| *t = t.map(map));
        out.distances.iter_mut().for_each(|c| (c.a, c.b) = (map(c.a), map(c.b)));
        out.hinges
            .iter_mut()
            .for_each(|h| (h.wings, h.edge) = (h.wings.map(map), h.edge.map(map)));
        Ok(out)
    }

    /// The same model with its particles numbered in a random order drawn from `seed`, as a
    /// mesh from a file may be (benchmarks and tests of the solver's sweep order). Returns the
    /// model and each particle's new number (`new_index[i]` for old particle i).
    pub fn shuffled(&self, seed: u64) -> (Model, Vec<u32>) {
        let mut new_index: Vec<u32> = (0..self.particle_count() as u32).collect();
        let mut state = seed;
        for i in (1..new_index.len()).rev() {
            // Fisher–Yates with Knuth's MMIX LCG: reproducible everywhere, no dependency.
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            new_index.swap(i, (state >> 33) as usize % (i + 1));
        }
        let model = self.renumbered(&new_index).expect("a shuffle is a permutation");
        (model, new_index)
    }

    /// The same model with its particles numbered along a space-filling (Morton, Z-order) curve
    /// through its bounding cube, and each particle's new number (`new_index[i]` for old
    /// particle i). Particles close in space get close numbers, so the solver's batches touch
    /// few cache lines: a mesh from a file, numbered however its author's tool left it, runs
    /// near the speed of a grid built row by row (a shuffled 128² grid: docs/performance.md).
    /// Ties (coincident particles) keep their old order; the result depends only on the
    /// positions, so any numbering of the same mesh gives the same model.
    pub fn in_locality_order(&self) -> (Model, Vec<u32>) {
        let new_index = locality_order(&self.positions);
        let model = self.renumbered(&new_index).expect("a sort is a permutation");
        (model, new_index)
    }

    /// Gives every particle material slot `slot` (one object of a scene, before it is joined
    /// to the others with [`Self::append`]).
    pub fn set_material_slot(&mut self, slot: u16) {
        self.material.fill(slot);
    }

    /// Number of material slots the particles use (the largest slot + 1; 1 when empty).
    pub fn material_slots(&self) -> usize {
        self.material.iter().max().map_or(1, |&m| m as usize + 1)
    }

    /// Material slot of distance constraint `c` (its first particle's).
    pub fn distance_material(&self, c: &DistanceConstraint) -> usize {
        self.material[c.a as usize] as usize
    }

    /// Material slot of hinge `h` (its edge's first particle's).
    pub fn hinge_material(&self, h: &Hinge) -> usize {
        self.material[h.edge[0] as usize] as usize
    }

    /// Checks array lengths, indices and values, and each pressure body's parameters and
    /// triangle indices. Whether a body is closed is checked by
    /// [`ModelBuilder::add_pressure_body`], not here: a torn cloth's model holds its opened
    /// bodies, which have no pressure.
    pub fn validate(&self) -> Result<(), SimError> {
        let n = self.positions.len();
        let lengths = [
            self.lumped_area.len(),
            self.point_mass.len(),
            self.pinned.len(),
            self.material.len(),
        ];
        if lengths.iter().any(|&len| len != n) {
            return Err(SimError::InvalidGeometry("per-particle arrays differ in length".into()));
        }
        check_len("particles", n, MAX_PARTICLES, "at most 4194304 particles in one cloth")?;
        for p in &self.positions {
            let w = super::error::WORLD_EXTENT;
            super::error::check_components("position", *p, -w, w, "components in [-1e4, 1e4] m")?;
        }
        for (&area, &mass) in self.lumped_area.iter().zip(&self.point_mass) {
            super::error::check_non_negative("lumped_area", area)?;
            super::error::check_non_negative("mass", mass)?;
        }
        let check = |what: &'static str, i: u32| {
            if (i as usize) < n {
                Ok(())
            } else {
                Err(SimError::IndexOutOfRange {
                    what,
                    index: i as usize,
                    count: n,
                })
            }
        };
        for tri in &self.triangles {
            tri.iter().try_for_each(|&i| check("triangle", i))?;
        }
        if !self.corner_uvs.is_empty() && self.corner_uvs.len() != self.triangles.len() {
            return Err(SimError::InvalidGeometry(format!(
                "{} texture coordinate triples for {} triangles",
                self.corner_uvs.len(),
                self.triangles.len()
            )));
        }
        if self.corner_uvs.iter().flatten().any(|uv| !uv.is_finite()) {
            return Err(SimError::InvalidGeometry("texture coordinates must be finite".into()));
        }
        for d in &self.distances {
            check("distance constraint", d.a)?;
            check("distance constraint", d.b)?;
            super::error::check_non_negative("rest length", d.rest)?;
            check_compliance(d.compliance)?;
        }
        for h in &self.hinges {
            h.wings.iter().chain(&h.edge).try_for_each(|&i| check("hinge", i))?;
            super::error::check_range(
                "rest angle",
                h.rest_angle,
                -std::f32::consts::PI,
                std::f32::consts::PI,
                "an angle in [-π, π]",
            )?;
            check_compliance(h.compliance)?;
        }
        self.pressure_bodies.iter().try_for_each(|b| b.validate(self.triangles.len()))?;
        self.seams.iter().try_for_each(|seam| seam.validate(&self.distances))
    }
}

/// Each point's number along a Morton (Z-order) curve through the points' bounding cube
/// (`new_index[i]` for point i): see [`Model::in_locality_order`]. Ties keep their order.
pub fn locality_order(positions: &[Vec3]) -> Vec<u32> {
    let codes = morton_codes(positions);
    let mut by_code: Vec<u32> = (0..positions.len() as u32).collect();
    by_code.sort_by_key(|&i| (codes[i as usize], i));
    let mut new_index = vec![0; by_code.len()];
    for (rank, &old) in by_code.iter().enumerate() {
        new_index[old as usize] = rank as u32;
    }
    new_index
}

/// Bits per axis of a Morton code (30 bits in all).
const MORTON_BITS: u32 = 10;

/// Each position's Morton code: its cell in a 2¹⁰-per-axis lattice over the bounding cube
/// (one scale for every axis, so a flat sheet keeps all its resolution in its plane), with the
/// bits of x, y and z interleaved.
fn morton_codes(positions: &[Vec3]) -> Vec<u32> {
    let lo = positions.iter().fold(Vec3::splat(f32::INFINITY), |m, p| m.min(*p));
    let hi = positions.iter().fold(Vec3::splat(f32::NEG_INFINITY), |m, p| m.max(*p));
    let extent = (hi - lo).max_element();
    let cells = ((1u32 << MORTON_BITS) - 1) as f32;
    // A single particle (or all coincident) has no extent: every code is 0.
    let scale = if extent > 0.0 { cells / extent } else { 0.0 };
    let cell = |v: f32| ((v * scale) as u32).min(cells as u32);
    positions
        .iter()
        .map(|&p| {
            let q = p - lo;
            spread_bits(cell(q.x)) | spread_bits(cell(q.y)) << 1 | spread_bits(cell(q.z)) << 2
        })
        .collect()
}

/// Spreads the low 10 bits of `v` two apart (bit k moves to bit 3k).
fn spread_bits(v: u32) -> u32 {
    let mut x = v & 0x3ff;
    x = (x | x << 16) & 0x0300_00ff;
    x = (x | x << 8) & 0x0300_f00f;
    x = (x | x << 4) & 0x030c_30c3;
    (x | x << 2) & 0x0924_9249
}

fn check_compliance(c: Compliance) -> Result<(), SimError> {
    match c {
        Compliance::Material(coef) => super::error::check_non_negative("compliance coefficient", coef),
        Compliance::Fixed(alpha) => super::error::check_non_negative("compliance", alpha),
    }
}
