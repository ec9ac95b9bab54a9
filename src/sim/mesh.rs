//! Cloth from an arbitrary triangle mesh (a tablecloth, a skirt, a closed sphere).
//!
//! A mesh becomes a [`Model`] the way a grid does: one particle per vertex, masses lumped from
//! the triangle areas (m_i = Σ ρ_A A_t / 3), one stretch constraint per unique edge with the
//! area-weighted stiffness of [`ModelBuilder::add_triangle_edges`] (k_e = E t ΣA_t / |e|²,
//! docs/physics.md §2) and, optionally, a dihedral bending hinge on every interior edge.
//! Triangle meshes need no shear diagonals: a triangle's three edges already resist shear.
//!
//! The mesh is checked first, since cloth needs a 2-manifold with a consistent winding:
//! indices in range, no degenerate (zero-area or repeated-vertex) triangle, no edge shared by
//! more than two triangles, neighbouring triangles wound alike (each shared edge traversed in
//! opposite directions), and every vertex used by some triangle (a loose vertex would be a
//! particle without mass). A defect names the triangle or vertex so a file loader can point
//! at its line.
//!
//! The particles are numbered along a space-filling curve first
//! ([`Model::in_locality_order`]): a file's vertex order says nothing about space, and the
//! solver's batches are fastest when neighbouring particles have neighbouring numbers.

use glam::{Vec2, Vec3};
use serde::{Deserialize, Serialize};

use super::error::{check_range, SimError};
use super::model::{locality_order, triangle_area, Model, ModelBuilder};

/// A triangle mesh: positions in m, triangles counter-clockwise seen from the front, and
/// optionally one texture coordinate per triangle corner.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TriangleMesh {
    /// Vertex positions in m.
    pub positions: Vec<Vec3>,
    /// Vertex indices of each triangle.
    pub triangles: Vec<[u32; 3]>,
    /// Texture coordinates of each triangle's corners; empty when the mesh has none.
    pub corner_uvs: Vec<[Vec2; 3]>,
}

/// Which vertices of a mesh start pinned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub enum MeshPins {
    /// Nothing pinned.
    #[default]
    None,
    /// These vertices, numbered from 0 in the file's order.
    Vertices(Vec<u32>),
    /// Every vertex inside the axis-aligned box `min`–`max` (m, after placement).
    Box {
        /// Lowest corner in m.
        min: Vec3,
        /// Highest corner in m.
        max: Vec3,
    },
    /// The highest `k` percent of the vertices by height (at least one), k in (0, 100].
    Highest(f32),
    /// The lowest `k` percent of the vertices by height (at least one), k in (0, 100].
    Lowest(f32),
}

/// Largest vertex coordinate a mesh file may use, in its own units (before `scale`): room
/// for a model in millimetres of a 10 km scene, far below where f32 areas overflow.
pub const MAX_MESH_COORDINATE: f32 = 1.0e7;

/// What is wrong with a mesh, and where.
#[derive(Debug, Clone, PartialEq)]
pub enum MeshDefect {
    /// A problem with triangle `triangle` (index into [`TriangleMesh::triangles`]).
    Triangle {
        /// The triangle.
        triangle: usize,
        /// What is wrong.
        message: String,
    },
    /// A problem with vertex `vertex`.
    Vertex {
        /// The vertex.
        vertex: usize,
        /// What is wrong.
        message: String,
    },
    /// A problem with the mesh as a whole (empty, a bad pin specification).
    Mesh(String),
}

impl std::fmt::Display for MeshDefect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MeshDefect::Triangle { triangle, message } => write!(f, "triangle {triangle}: {message}"),
            MeshDefect::Vertex { vertex, message } => write!(f, "vertex {vertex}: {message}"),
            MeshDefect::Mesh(message) => f.write_str(message),
        }
    }
}

impl From<MeshDefect> for SimError {
    fn from(defect: MeshDefect) -> Self {
        SimError::InvalidGeometry(defect.to_string())
    }
}

impl MeshPins {
    /// Checks the percentages.
    pub fn validate(&self) -> Result<(), SimError> {
        match self {
            MeshPins::Highest(k) | MeshPins::Lowest(k) => check_range("pins", *k, 1e-3, 100.0, "a percentage in (0, 100]"),
            MeshPins::Box { min, max } if !(min.cmple(*max).all() && min.is_finite() && max.is_finite()) => {
                Err(SimError::InvalidGeometry(format!("pin box min {min} must not exceed max {max}")))
            }
            _ => Ok(()),
        }
    }

    /// Whether each vertex of `positions` starts pinned.
    pub fn select(&self, positions: &[Vec3]) -> Result<Vec<bool>, MeshDefect> {
        let n = positions.len();
        let mut pinned = vec![false; n];
        match self {
            MeshPins::None => {}
            MeshPins::Vertices(list) => {
                for &v in list {
                    let slot = pinned
                        .get_mut(v as usize)
                        .ok_or_else(|| MeshDefect::Mesh(format!("pinned vertex {v} does not exist (the mesh has {n})")))?;
                    *slot = true;
                }
            }
            MeshPins::Box { min, max } => {
                for (slot, p) in pinned.iter_mut().zip(positions) {
                    *slot = p.cmpge(*min).all() && p.cmple(*max).all();
                }
            }
            MeshPins::Highest(k) => select_by_height(positions, *k, true, &mut pinned),
            MeshPins::Lowest(k) => select_by_height(positions, *k, false, &mut pinned),
        }
        Ok(pinned)
    }
}

/// Marks the `k` percent highest (or lowest) vertices, at least one; ties broken by index.
fn select_by_height(positions: &[Vec3], k: f32, highest: bool, pinned: &mut [bool]) {
    let mut order: Vec<usize> = (0..positions.len()).collect();
    order.sort_by(|&a, &b| {
        let (ya, yb) = (positions[a].y, positions[b].y);
        let by_height = if highest { yb.total_cmp(&ya) } else { ya.total_cmp(&yb) };
        by_height.then(a.cmp(&b))
    });
    let count = ((positions.len() as f32 * k / 100.0).round() as usize).clamp(1, positions.len());
    order.iter().take(count).for_each(|&i| pinned[i] = true);
}

impl TriangleMesh {
    /// Checks indices, degeneracy, manifoldness, winding and loose vertices (see the module
    /// docs); the first defect found is returned.
    pub fn check(&self) -> Result<(), MeshDefect> {
        if self.triangles.is_empty() {
            return Err(MeshDefect::Mesh("the mesh has no faces".into()));
        }
        if !self.corner_uvs.is_empty() && self.corner_uvs.len() != self.triangles.len() {
            return Err(MeshDefect::Mesh("texture coordinates for only some triangles".into()));
        }
        self.check_coordinates()?;
        let mut used = vec![false; self.positions.len()];
        for (t, tri) in self.triangles.iter().enumerate() {
            self.check_triangle(t, *tri)?;
            tri.iter().for_each(|&v| used[v as usize] = true);
        }
        if let Some(vertex) = used.iter().position(|&u| !u) {
            return Err(MeshDefect::Vertex {
                vertex,
                message: "is used by no face (a particle without mass)".into(),
            });
        }
        self.check_edges()
    }

    /// The checks a collider's mesh needs: faces, and every vertex finite and within
    /// ±[`MAX_MESH_COORDINATE`] (unused vertices, edges of three faces and mixed winding only make
    /// it an open shell, see [`crate::sim::collision::mesh`]).
    pub fn check_as_collider(&self) -> Result<(), MeshDefect> {
        if self.triangles.is_empty() {
            return Err(MeshDefect::Mesh("the mesh has no faces".into()));
        }
        self.check_coordinates()
    }

    /// Every vertex finite and within ±[`MAX_MESH_COORDINATE`], so areas and lengths are
    /// finite (coordinates of 3e38 overflowed them and read as "no area").
    fn check_coordinates(&self) -> Result<(), MeshDefect> {
        let outside = |p: &Vec3| !(p.is_finite() && p.abs().max_element() <= MAX_MESH_COORDINATE);
        match self.positions.iter().position(outside) {
            Some(vertex) => {
                let p = self.positions[vertex];
                Err(MeshDefect::Vertex {
                    vertex,
                    message: format!(
                        "coordinates ({:?}, {:?}, {:?}) are not finite or beyond ±{MAX_MESH_COORDINATE:e} (scale the mesh into metres)",
                        p.x, p.y, p.z
                    ),
                })
            }
            None => Ok(()),
        }
    }

    fn check_triangle(&self, t: usize, tri: [u32; 3]) -> Result<(), MeshDefect> {
        let defect = |message: String| MeshDefect::Triangle { triangle: t, message };
        let n = self.positions.len();
        if let Some(&v) = tri.iter().find(|&&v| v as usize >= n) {
            return Err(defect(format!("vertex {v} does not exist (the mesh has {n})")));
        }
        if tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] {
            return Err(defect("repeats a vertex".into()));
        }
        let area = triangle_area(&self.positions, tri);
        let longest = (0..3)
            .map(|k| self.positions[tri[k] as usize].distance(self.positions[tri[(k + 1) % 3] as usize]))
            .fold(0.0f32, f32::max);
        // Degenerate when its area is below a millionth of a square on its longest edge (or
        // not a number at all).
        let has_area = area > 1e-6 * longest * longest;
        if !has_area {
            return Err(defect("has no area (collinear or coincident corners)".into()));
        }
        Ok(())
    }

    /// Every undirected edge in at most two triangles, traversed in opposite directions.
    fn check_edges(&self) -> Result<(), MeshDefect> {
        let mut half_edges: Vec<((u32, u32), usize, bool)> = Vec::with_capacity(3 * self.triangles.len());
        for (t, tri) in self.triangles.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                half_edges.push(((a.min(b), a.max(b)), t, a < b));
            }
        }
        half_edges.sort_unstable();
        for shared in half_edges.chunk_by(|x, y| x.0 == y.0) {
            let ((a, b), last, forward) = shared[shared.len() - 1];
            let message = match shared {
                [_] => continue,
                [first, _] if first.2 != forward => continue,
                [_, _] => format!("winds edge {a}–{b} the same way as triangle {} (flip one of them)", shared[0].1),
                _ => format!("is the third face on edge {a}–{b} (the mesh is not a surface)"),
            };
            return Err(MeshDefect::Triangle { triangle: last, message });
        }
        Ok(())
    }

    /// The cloth model of this mesh (see the module docs) and each vertex's particle number
    /// (`particle_of[v]`), after the checks of [`TriangleMesh::check`]. The particles are
    /// numbered before any constraint is made, so two files listing the same vertices in
    /// different orders give the same model, constraint order included.
    ///
    /// With `pressure` = (k, α) the whole mesh becomes a pressure body held at k times its
    /// rest volume with volume compliance α (m³/Pa; see [`crate::sim::pressure`]); it must then
    /// be closed.
    pub fn build_model(&self, pins: &MeshPins, bending: bool, pressure: Option<(f32, f32)>) -> Result<(Model, Vec<u32>), MeshDefect> {
        self.check()?;
        let pinned = pins.select(&self.positions)?;
        let particle_of = locality_order(&self.positions);
        let mut positions = vec![Vec3::ZERO; self.positions.len()];
        let mut pinned_particles = vec![false; self.positions.len()];
        for (v, &i) in particle_of.iter().enumerate() {
            positions[i as usize] = self.positions[v];
            pinned_particles[i as usize] = pinned[v];
        }
        let mut builder = ModelBuilder::new();
        for (&p, &pin) in positions.iter().zip(&pinned_particles) {
            let i = builder.add_particle(p, 0.0);
            builder.set_pinned(i, pin);
        }
        for tri in &self.triangles {
            builder.add_triangle(tri.map(|v| particle_of[v as usize]));
        }
        builder.set_corner_uvs(self.corner_uvs.clone());
        if let Some((factor, compliance)) = pressure {
            let all = (0..self.triangles.len() as u32).collect();
            builder
                .add_pressure_body(all, factor, compliance)
                .map_err(|e| MeshDefect::Mesh(e.to_string()))?;
        }
        builder.add_triangle_edges();
        if bending {
            builder.add_hinges_from_triangles();
        }
        let model = builder.build().map_err(|e| MeshDefect::Mesh(e.to_string()))?;
        Ok((model, particle_of))
    }
}
