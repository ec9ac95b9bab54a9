//! Pressure: a volume constraint on closed triangle meshes, so a sphere of cloth becomes a
//! balloon (docs/physics.md §1, "Pressure bodies").
//!
//! # The constraint
//! A closed, consistently oriented triangle mesh (every edge in exactly two of its triangles,
//! run in opposite directions; counter-clockwise seen from outside) encloses the volume
//!
//! ```text
//! V = (1/6) Σ_t (x_a − r) · ((x_b − r) × (x_c − r))       (t = (a, b, c), any fixed point r)
//! ```
//!
//! the sum of the signed tetrahedra from r over the triangles (the divergence theorem applied
//! to the field (x − r)/3). For a closed surface every r gives the same V; the code takes r at
//! the first corner of the body's first triangle, which keeps the terms small (the mesh may be
//! kilometres from the origin) and makes a degenerate tetrahedron of every triangle at that
//! vertex. A body is held
//! at k times its rest volume V0 (the volume as built, in the rest positions):
//!
//! ```text
//! C = V − k V0,        k the pressure factor ≥ 0 (1 = as built, 2 = twice as much gas)
//! ∇_i V = (1/6) Σ_{t ∋ i} (x_j − r) × (x_k − r)
//! ```
//!
//! with (i, j, k) the triangle's corners in winding order starting at i: the derivative of
//! each triple product by one corner is the cross product of the other two. On a closed
//! surface the triangles around i form a closed fan, the r terms cancel, and r = x_i gives
//!
//! ```text
//! ∇_i V = (1/6) Σ_{t ∋ i} (x_j − x_i) × (x_k − x_i) = (1/6) Σ_{t ∋ i} N_t,   N_t = (x_b − x_a) × (x_c − x_a)
//! V     = (1/6) Σ_t (x_a − r) · N_t
//! ```
//!
//! (a'·(b'×c') = a'·((b' − a')×(c' − a')) for a' = x_a − r and so on): one cross product per
//! triangle, its normal N_t (twice its area), serves the volume and all three corners'
//! gradients. Moving every vertex along ∇_i V, a third of its area-weighted normal, grows the
//! volume fastest.
//!
//! # The XPBD update
//! One constraint over all the body's vertices (docs/physics.md §1):
//!
//! ```text
//! α̃ = α / h²,    λ = 0 at the first sweep of every substep
//! Δλ = (−C − α̃ λ) / (Σ_i w_i |∇_i V|² + α̃),    λ += Δλ,    x_i += w_i ∇_i V Δλ
//! ```
//!
//! The units: C in m³ and ∇V in m², so Δλ is in kg/m and α̃ in m⁴/kg; the compliance
//! α = α̃ h² is then in m⁴·s²/kg = m³/Pa, a volume change per pressure change, and λ/h² is the
//! gauge pressure inside in Pa (the force on vertex i is ∇_i V · λ/h², in N). α = 0 (the
//! default) is an incompressible gas at k V0; an ideal gas at atmospheric pressure p₀,
//! compressed slowly (isothermally), has α = V/p₀: 1.1e-6 m³/Pa for a 0.3 m balloon. The
//! projection is skipped when the denominator is not above 1e-30 or anything is not finite
//! (every vertex pinned, a collapsed body), so valid input never gives a NaN. One projection is
//! a Newton step on the cubic V: from a sphere scaled by s it lands within O((s − 1)²) of the
//! target, and the next ones converge quadratically.
//!
//! # A reduction, in a fixed order
//! V is a sum over the whole body, so a body is one constraint over all its vertices, solved
//! in the serial step of every sweep (after the tail group and the soft grab, before the
//! self-contacts; see [`super::solver`]) by all the threads between barriers
//! ([`PressurePass::run`]): each makes the normals and the partial volume sums of its chunks of
//! [`CHUNK`] triangles, then the gradients (each vertex adds the normals of its triangles in
//! triangle order) and the partial sums Σ w_i |∇_i V|² of its chunks of vertices; thread 0
//! adds the chunks' sums in chunk order and takes the step; each thread moves its vertices.
//! The chunks do not depend on the thread count, so every thread count gives bit-identical
//! frames. Bodies of fewer than [`PARALLEL_FROM_TRIANGLES`] triangles are projected by thread
//! 0 alone, over the same chunks.
//!
//! # Punctures
//! Tearing and cutting split vertices and never delete triangles, so a body keeps its
//! triangles through any edit, but a split opens the surface: an edge on the crack then lies in
//! one triangle of the body. After every topology edit the cloth checks each body again; a body
//! that is no longer closed loses its pressure for good (a punctured balloon deflates) and its
//! volume is then only a measurement ([`enclosed_volume`], relative to the first corner of its
//! first triangle).

use glam::Vec3;

use super::error::{check_range, SimError};
use super::particles::{xyz, PosPtr};

/// Largest pressure factor k a body accepts (ten times its rest volume).
pub const MAX_PRESSURE_FACTOR: f32 = 10.0;

/// Largest volume compliance α a body accepts, in m³/Pa (a balloon of air has about 1e-6).
pub const MAX_VOLUME_COMPLIANCE: f32 = 1.0;

/// Denominators Σ w_i |∇_i V|² + α̃ at or below this (m⁴/kg) skip the projection.
const MIN_DENOMINATOR: f32 = 1e-30;

/// A closed surface of the model held at a multiple of its rest volume (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct PressureBody {
    /// Indices into [`super::Model::triangles`] of the surface's triangles, each
    /// counter-clockwise seen from outside.
    pub triangles: Vec<u32>,
    /// Pressure factor k (dimensionless, [0, [`MAX_PRESSURE_FACTOR`]]): the body is held at k
    /// times its rest volume. 1 keeps it as built; 0 sucks it flat.
    pub pressure: f32,
    /// Volume compliance α in m³/Pa ([0, [`MAX_VOLUME_COMPLIANCE`]]); 0 is an incompressible
    /// gas.
    pub compliance: f32,
}

impl PressureBody {
    /// Checks the pressure factor, the compliance and that every triangle index is below
    /// `triangle_count`. Whether the surface is closed is [`surface_defect`]'s question.
    pub fn validate(&self, triangle_count: usize) -> Result<(), SimError> {
        check_pressure_factor(self.pressure)?;
        check_range(
            "volume compliance",
            self.compliance,
            0.0,
            MAX_VOLUME_COMPLIANCE,
            "a compliance in [0, 1] m³/Pa",
        )?;
        if self.triangles.is_empty() {
            return Err(SimError::InvalidGeometry("a pressure body needs triangles".into()));
        }
        match self.triangles.iter().find(|&&t| t as usize >= triangle_count) {
            Some(t) => Err(SimError::InvalidGeometry(format!(
                "a pressure body refers to triangle {t}, but there are only {triangle_count} triangles"
            ))),
            None => Ok(()),
        }
    }

    /// The body's triangles as corner triples, in the body's order.
    pub fn corners<'a>(&'a self, triangles: &'a [[u32; 3]]) -> impl Iterator<Item = [u32; 3]> + 'a {
        self.triangles.iter().map(|&t| triangles[t as usize])
    }
}

/// Checks a pressure factor: finite and in [0, [`MAX_PRESSURE_FACTOR`]].
pub fn check_pressure_factor(pressure: f32) -> Result<(), SimError> {
    check_range("pressure", pressure, 0.0, MAX_PRESSURE_FACTOR, "a pressure factor in [0, 10]")
}

/// Why `triangles` (corner triples) do not bound a closed, consistently oriented surface, or
/// `None` when they do: every edge must lie in exactly two of them, run in opposite directions,
/// and no triangle may repeat a corner.
pub fn surface_defect(triangles: impl Iterator<Item = [u32; 3]>) -> Option<String> {
    // (lower end, higher end, runs from lower to higher) for each triangle edge.
    let mut half_edges: Vec<(u32, u32, bool)> = Vec::new();
    for (t, tri) in triangles.enumerate() {
        if tri[0] == tri[1] || tri[1] == tri[2] || tri[2] == tri[0] {
            return Some(format!("its triangle {t} repeats a corner ({tri:?})"));
        }
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            half_edges.push((a.min(b), a.max(b), a < b));
        }
    }
    if half_edges.is_empty() {
        return Some("it has no triangles".into());
    }
    half_edges.sort_unstable();
    for pair in half_edges.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)) {
        let (a, b) = (pair[0].0, pair[0].1);
        if pair.len() != 2 {
            return Some(format!(
                "its edge {a}–{b} lies in {} of its triangles (a closed surface has 2 on every edge)",
                pair.len()
            ));
        }
        if pair[0].2 == pair[1].2 {
            return Some(format!(
                "its edge {a}–{b} runs the same way in both its triangles (they are not wound consistently)"
            ));
        }
    }
    None
}

/// The volume enclosed by `triangles` (corners indexing `points`), in m³ for points in m,
/// relative to the first triangle's first corner (module docs); 0 without triangles. For a
/// closed surface wound counter-clockwise seen from outside it is the enclosed volume.
pub fn enclosed_volume(points: &[Vec3], triangles: &[[u32; 3]]) -> f32 {
    let Some(first) = triangles.first() else { return 0.0 };
    let r = points[first[0] as usize];
    let six_v: f32 = triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| points[i as usize] - r);
            a.dot(b.cross(c))
        })
        .sum();
    six_v / 6.0
}

/// [`enclosed_volume`] and, for a closed surface, its gradient: `gradient[i]` becomes ∇_i V
/// (m²) for every point (0 for points on no triangle). `gradient` must have one entry per
/// point. One cross product per triangle (module docs): its normal N_t = (x_b − x_a) × (x_c −
/// x_a) gives both the triple product (x_a − r)·N_t and each corner's share N_t/6 of the
/// gradient.
pub fn enclosed_volume_and_gradient(points: &[Vec3], triangles: &[[u32; 3]], gradient: &mut [Vec3]) -> f32 {
    gradient.fill(Vec3::ZERO);
    let Some(first) = triangles.first() else { return 0.0 };
    let r = points[first[0] as usize];
    let mut six_v = 0.0;
    for t in triangles {
        let [a, b, c] = t.map(|i| points[i as usize]);
        let normal = (b - a).cross(c - a);
        six_v += (a - r).dot(normal);
        t.iter().for_each(|&i| gradient[i as usize] += normal);
    }
    gradient.iter_mut().for_each(|g| *g /= 6.0);
    six_v / 6.0
}

/// One body as the solver sees it: its particles and its triangles numbered locally.
#[derive(Debug, Clone, Default)]
struct Surface {
    /// The body's particles, ascending.
    vertices: Vec<u32>,
    /// The body's triangles, corners as indices into `vertices`, in the body's order.
    triangles: Vec<[u32; 3]>,
    /// The triangles around each vertex, ascending: those of vertex v are
    /// `ring[ring_start[v]..ring_start[v + 1]]`.
    ring_start: Vec<u32>,
    ring: Vec<u32>,
    /// The surface is closed and consistently oriented (else the body has no pressure).
    closed: bool,
    /// V0: the volume in the rest positions, m³.
    rest_volume: f32,
}

impl Surface {
    fn of(body: &PressureBody, triangles: &[[u32; 3]], rest_positions: &[Vec3]) -> Self {
        let mut vertices: Vec<u32> = body.corners(triangles).flatten().collect();
        vertices.sort_unstable();
        vertices.dedup();
        let local = |i: u32| vertices.binary_search(&i).expect("a corner of the body") as u32;
        let local_triangles: Vec<[u32; 3]> = body.corners(triangles).map(|t| t.map(local)).collect();
        let rest: Vec<Vec3> = vertices.iter().map(|&i| rest_positions[i as usize]).collect();
        let (ring_start, ring) = rings(vertices.len(), &local_triangles);
        Surface {
            rest_volume: enclosed_volume(&rest, &local_triangles),
            closed: surface_defect(body.corners(triangles)).is_none(),
            vertices,
            triangles: local_triangles,
            ring_start,
            ring,
        }
    }
}

/// The triangles around each of `vertices` vertices, ascending, as (start of each vertex's
/// list, the lists one after another).
fn rings(vertices: usize, triangles: &[[u32; 3]]) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; vertices + 1];
    triangles.iter().flatten().for_each(|&v| start[v as usize + 1] += 1);
    for v in 0..vertices {
        start[v + 1] += start[v];
    }
    let mut fill = start.clone();
    let mut ring = vec![0u32; start[vertices] as usize];
    for (t, tri) in triangles.iter().enumerate() {
        for &v in tri {
            ring[fill[v as usize] as usize] = t as u32;
            fill[v as usize] += 1;
        }
    }
    (start, ring)
}

/// What a body holds now ([`crate::sim::Cloth::pressure_volumes`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PressureVolume {
    /// The volume its triangles enclose now, m³ (for a punctured body: relative to its first
    /// vertex, see [`enclosed_volume`]).
    pub volume: f32,
    /// The volume it is held at, k V0, m³.
    pub target: f32,
    /// Whether it is still closed; a punctured body has no pressure.
    pub closed: bool,
    /// The gauge pressure inside during the last substep, λ/h² in Pa (0 before the first step
    /// and once punctured); the force on vertex i is ∇_i V times it.
    pub gauge_pressure: f32,
}

/// The pressure bodies of a cloth: their surfaces, multipliers and the reduction's buffers.
#[derive(Debug, Clone, Default)]
pub(crate) struct PressureState {
    surfaces: Vec<Surface>,
    /// λ of each body, accumulated over the sweeps of the current substep (kg/m).
    lambda: Vec<f32>,
    /// 1/h² of the last substep projected (1/s²), to read λ as a pressure.
    inv_h2: f32,
    /// Per triangle of the body being solved: its normal N_t (m²).
    normals: Vec<Vec3>,
    /// Per vertex of the body being solved: ∇_i V (m²).
    gradient: Vec<Vec3>,
    /// Per chunk of [`CHUNK`] triangles: Σ (x_a − r)·N_t (6 V's share, m³).
    volume_sums: Vec<f32>,
    /// Per chunk of [`CHUNK`] vertices: Σ w_i |∇_i V|² (m⁴/kg).
    weight_sums: Vec<f32>,
    /// Δλ of the body being solved this sweep (0: skipped).
    delta: f32,
}

/// Triangles or vertices per chunk of the reduction: each chunk's sum is made by one thread
/// and the chunks' sums are added in chunk order, so the result does not depend on which
/// thread made which chunk.
const CHUNK: usize = 512;

/// Bodies with fewer triangles are projected by thread 0 alone, saving three barriers a
/// sweep (a guess at where splitting starts to pay: not measured, the development machine's
/// two cores being shared; a 10 242-particle balloon, 20 480 triangles, is split).
const PARALLEL_FROM_TRIANGLES: usize = 4096;

impl PressureState {
    /// The state of `bodies` on a model with `triangles` and rest positions `rest_positions`:
    /// rest volumes are measured in the rest positions, closedness on the triangles as they are.
    pub fn new(bodies: &[PressureBody], triangles: &[[u32; 3]], rest_positions: &[Vec3]) -> Self {
        let mut state = Self {
            surfaces: bodies.iter().map(|b| Surface::of(b, triangles, rest_positions)).collect(),
            lambda: vec![0.0; bodies.len()],
            ..Self::default()
        };
        state.size_buffers();
        state
    }

    /// Sizes the reduction's buffers for the largest body.
    fn size_buffers(&mut self) {
        let triangles = self.surfaces.iter().map(|s| s.triangles.len()).max().unwrap_or(0);
        let vertices = self.surfaces.iter().map(|s| s.vertices.len()).max().unwrap_or(0);
        self.normals.resize(triangles, Vec3::ZERO);
        self.gradient.resize(vertices, Vec3::ZERO);
        self.volume_sums.resize(triangles.div_ceil(CHUNK), 0.0);
        self.weight_sums.resize(vertices.div_ceil(CHUNK), 0.0);
    }

    /// After a topology edit: renumbers each body's vertices from the edited triangles and
    /// checks it is still closed. A body once open stays open; rest volumes are kept.
    pub fn refresh(&mut self, bodies: &[PressureBody], triangles: &[[u32; 3]], rest_positions: &[Vec3]) {
        for (surface, body) in self.surfaces.iter_mut().zip(bodies) {
            let edited = Surface::of(body, triangles, rest_positions);
            *surface = Surface {
                closed: surface.closed && edited.closed,
                rest_volume: surface.rest_volume,
                ..edited
            };
        }
        for (lambda, surface) in self.lambda.iter_mut().zip(&self.surfaces) {
            if !surface.closed {
                *lambda = 0.0;
            }
        }
        self.size_buffers();
    }

    /// Whether any body is closed (and so has pressure to solve).
    pub fn any_closed(&self) -> bool {
        self.surfaces.iter().any(|s| s.closed)
    }

    /// Number of projections one sweep performs (one per triangle of every closed body).
    pub fn work_per_sweep(&self) -> usize {
        self.surfaces.iter().filter(|s| s.closed).map(|s| s.triangles.len()).sum()
    }

    /// Each body's volume now, its target k V0, whether it is closed and its last gauge
    /// pressure.
    pub fn volumes(&self, bodies: &[PressureBody], position: impl Fn(usize) -> Vec3) -> Vec<PressureVolume> {
        self.surfaces
            .iter()
            .zip(bodies)
            .zip(&self.lambda)
            .map(|((s, body), &lambda)| {
                let points: Vec<Vec3> = s.vertices.iter().map(|&i| position(i as usize)).collect();
                PressureVolume {
                    volume: enclosed_volume(&points, &s.triangles),
                    target: body.pressure * s.rest_volume,
                    closed: s.closed,
                    gauge_pressure: lambda * self.inv_h2,
                }
            })
            .collect()
    }

    /// This state lent to one frame's threads, for bodies `bodies` at 1/h² = `inv_h2` (1/s²).
    pub fn pass<'a>(&'a mut self, bodies: &'a [PressureBody], inv_h2: f32) -> PressurePass<'a> {
        self.inv_h2 = inv_h2;
        PressurePass {
            surfaces: &self.surfaces,
            bodies,
            inv_h2,
            lambda: self.lambda.as_mut_ptr(),
            normals: self.normals.as_mut_ptr(),
            gradient: self.gradient.as_mut_ptr(),
            volume_sums: self.volume_sums.as_mut_ptr(),
            weight_sums: self.weight_sums.as_mut_ptr(),
            delta: &mut self.delta,
        }
    }
}

/// The pressure pass of one frame: the bodies' surfaces and the reduction's buffers, shared
/// by the threads, which write disjoint chunks of them between barriers ([`Self::run`]).
#[derive(Debug)]
pub(crate) struct PressurePass<'a> {
    surfaces: &'a [Surface],
    /// The bodies' pressure factors and compliances.
    bodies: &'a [PressureBody],
    /// 1/h² for the substep h, 1/s².
    inv_h2: f32,
    lambda: *mut f32,
    normals: *mut Vec3,
    gradient: *mut Vec3,
    volume_sums: *mut f32,
    weight_sums: *mut f32,
    delta: *mut f32,
}

// SAFETY: the threads of a frame write disjoint chunks of the buffers between barriers, and
// only thread 0 writes λ and Δλ, while the others wait (see `PressurePass::run`); the buffers
// outlive the frame (`Cloth::step` waits for every thread).
unsafe impl Sync for PressurePass<'_> {}

impl PressurePass<'_> {
    /// One sweep's projection of every closed body, as thread `t` of `threads`, body after
    /// body; `first` on a substep's first sweep (λ restarts), `sync` a barrier of all the
    /// threads. For each body: sync; each thread the normals and volume sums of its chunks
    /// of triangles; sync; the gradients and weight sums of its chunks of vertices; sync;
    /// thread 0 adds the sums in chunk order and takes the step Δλ; sync; each thread moves
    /// its chunks of vertices. A body of fewer than [`PARALLEL_FROM_TRIANGLES`] triangles is
    /// projected by thread 0 alone after one sync (the same chunks, so the same result). A
    /// last sync ends the pass.
    ///
    /// # Safety
    /// Every thread of the frame calls this with the same `first` and a barrier of them all;
    /// every body's vertices are in bounds of `pos`, and nothing else touches the particles
    /// during the call.
    pub unsafe fn run(&self, pos: PosPtr, t: usize, threads: usize, first: bool, sync: &dyn Fn()) {
        for (k, surface) in self.surfaces.iter().enumerate() {
            if !surface.closed {
                continue;
            }
            if surface.triangles.len() < PARALLEL_FROM_TRIANGLES {
                sync();
                if t == 0 {
                    // SAFETY: the caller's contract (# Safety); the others wait at the barrier.
                    unsafe { self.project_alone(pos, k, surface, first) };
                }
                continue;
            }
            // SAFETY: the caller's contract (# Safety); the steps are separated by barriers.
            unsafe {
                sync();
                self.sum_volume(pos, surface, t, threads);
                sync();
                self.sum_gradients(pos, surface, t, threads);
                sync();
                if t == 0 {
                    self.take_step(k, surface, first);
                }
                sync();
                self.move_vertices(pos, surface, t, threads);
            }
        }
        sync();
    }

    /// Body `k` projected by this thread alone: the steps of [`Self::run`] as one thread.
    ///
    /// # Safety
    /// As [`Self::run`], with no other thread running.
    unsafe fn project_alone(&self, pos: PosPtr, k: usize, surface: &Surface, first: bool) {
        // SAFETY: the caller's contract (# Safety).
        unsafe {
            self.sum_volume(pos, surface, 0, 1);
            self.sum_gradients(pos, surface, 0, 1);
            self.take_step(k, surface, first);
            self.move_vertices(pos, surface, 0, 1);
        }
    }

    /// Chunks of `count` items (triangles or vertices) that thread `t` of `threads` makes.
    fn chunks_of(count: usize, t: usize, threads: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
        let chunks = count.div_ceil(CHUNK);
        (chunks * t / threads..chunks * (t + 1) / threads).map(move |c| c * CHUNK..((c + 1) * CHUNK).min(count))
    }

    /// Thread `t`'s chunks of triangles: each normal N_t, and each chunk's Σ (x_a − r)·N_t
    /// with r the first corner of the body's first triangle.
    ///
    /// # Safety
    /// As [`Self::run`], between barriers.
    unsafe fn sum_volume(&self, pos: PosPtr, surface: &Surface, t: usize, threads: usize) {
        // SAFETY: vertices in bounds and read by every thread, written by none (# Safety);
        // each chunk's normals and sum are this thread's alone.
        unsafe {
            let point = |local: u32| xyz(pos.get(surface.vertices[local as usize] as usize));
            let r = point(surface.triangles[0][0]);
            for chunk in Self::chunks_of(surface.triangles.len(), t, threads) {
                let mut six_v = 0.0;
                for tri in chunk.clone() {
                    let [a, b, c] = surface.triangles[tri].map(point);
                    let normal = (b - a).cross(c - a);
                    six_v += (a - r).dot(normal);
                    *self.normals.add(tri) = normal;
                }
                *self.volume_sums.add(chunk.start / CHUNK) = six_v;
            }
        }
    }

    /// Thread `t`'s chunks of vertices: ∇_i V = Σ N_t/6 over the vertex's triangles (in
    /// triangle order), and each chunk's Σ w_i |∇_i V|².
    ///
    /// # Safety
    /// As [`Self::run`], between barriers, after [`Self::sum_volume`].
    unsafe fn sum_gradients(&self, pos: PosPtr, surface: &Surface, t: usize, threads: usize) {
        // SAFETY: the normals are complete (a barrier since they were written); each chunk's
        // gradients and sum are this thread's alone (# Safety).
        unsafe {
            for chunk in Self::chunks_of(surface.vertices.len(), t, threads) {
                let mut weight = 0.0;
                for v in chunk.clone() {
                    let ring = surface.ring_start[v] as usize..surface.ring_start[v + 1] as usize;
                    let sum: Vec3 = surface.ring[ring].iter().map(|&tri| *self.normals.add(tri as usize)).sum();
                    let g = sum / 6.0;
                    *self.gradient.add(v) = g;
                    weight += pos.get(surface.vertices[v] as usize)[3] * g.length_squared();
                }
                *self.weight_sums.add(chunk.start / CHUNK) = weight;
            }
        }
    }

    /// Thread 0: V and Σ w_i |∇_i V|² from the chunks' sums in chunk order, then body `k`'s
    /// Δλ (module docs; 0 when the denominator is not above [`MIN_DENOMINATOR`] or anything is
    /// not finite), added to its λ (restarted on a substep's `first` sweep).
    ///
    /// # Safety
    /// As [`Self::run`], between barriers, after [`Self::sum_gradients`], on thread 0 alone.
    unsafe fn take_step(&self, k: usize, surface: &Surface, first: bool) {
        // SAFETY: every chunk's sums are complete, and only this thread runs (# Safety).
        unsafe {
            let lambda = &mut *self.lambda.add(k);
            if first {
                *lambda = 0.0;
            }
            let sum = |sums: *mut f32, count: usize| (0..count.div_ceil(CHUNK)).map(|c| *sums.add(c)).sum::<f32>();
            let volume = sum(self.volume_sums, surface.triangles.len()) / 6.0;
            let body = &self.bodies[k];
            let alpha_tilde = body.compliance * self.inv_h2;
            let denominator = sum(self.weight_sums, surface.vertices.len()) + alpha_tilde;
            let constraint = volume - body.pressure * surface.rest_volume;
            let delta = (-constraint - alpha_tilde * *lambda) / denominator;
            let valid = denominator > MIN_DENOMINATOR && denominator.is_finite() && delta.is_finite();
            *self.delta = if valid { delta } else { 0.0 };
            *lambda += *self.delta;
        }
    }

    /// Thread `t`'s chunks of vertices: x_i += w_i ∇_i V Δλ.
    ///
    /// # Safety
    /// As [`Self::run`], between barriers, after [`Self::take_step`].
    unsafe fn move_vertices(&self, pos: PosPtr, surface: &Surface, t: usize, threads: usize) {
        // SAFETY: Δλ and the gradients are complete; each chunk's vertices are this thread's
        // alone (# Safety).
        unsafe {
            let delta = *self.delta;
            if delta == 0.0 {
                return;
            }
            for chunk in Self::chunks_of(surface.vertices.len(), t, threads) {
                for v in chunk {
                    let i = surface.vertices[v] as usize;
                    let corner = pos.get(i);
                    pos.shift(i, corner, (*self.gradient.add(v) * (corner[3] * delta)).to_array());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::particles::Particles;
    use crate::sim::shapes::icosphere;

    /// The icosahedron (no subdivision) of circumradius `radius` at `centre`, all of it one
    /// body with pressure factor `pressure` and compliance `compliance`.
    fn icosahedron(centre: Vec3, radius: f32, pressure: f32, compliance: f32) -> (crate::sim::model::Model, PressureBody) {
        let mut builder = icosphere(centre, radius, 0);
        let all = (0..builder.triangle_count() as u32).collect();
        builder.add_pressure_body(all, pressure, compliance).unwrap();
        let model = builder.build().unwrap();
        let body = model.pressure_bodies[0].clone();
        (model, body)
    }

    /// Particles at `positions`, each of inverse mass `w`.
    fn particles(positions: &[Vec3], w: f32) -> Particles {
        let mut p = Particles::default();
        for &x in positions {
            p.push(x, w, Vec3::ZERO, 0.0, 1.0, w == 0.0);
        }
        p
    }

    /// ∇_i V matches central differences of V (in f64) on a lopsided icosphere, and the
    /// gradients sum to zero (V does not change when the body moves).
    #[test]
    fn volume_gradient_matches_central_differences() {
        let model = icosphere(Vec3::new(3.0, -2.0, 1.0), 0.7, 1).build().unwrap();
        let points: Vec<Vec3> = model
            .positions
            .iter()
            .enumerate()
            .map(|(i, &p)| p + Vec3::new((i % 3) as f32, (i % 5) as f32, (i % 7) as f32) * 0.01)
            .collect();
        let mut gradient = vec![Vec3::ZERO; points.len()];
        enclosed_volume_and_gradient(&points, &model.triangles, &mut gradient);
        let volume64 = |p: &[glam::DVec3]| -> f64 {
            model
                .triangles
                .iter()
                .map(|t| t.map(|i| p[i as usize]))
                .map(|[a, b, c]| a.dot(b.cross(c)))
                .sum::<f64>()
                / 6.0
        };
        let base: Vec<glam::DVec3> = points.iter().map(|p| p.as_dvec3()).collect();
        let epsilon = 1e-6;
        for i in 0..points.len() {
            for axis in 0..3 {
                let (mut plus, mut minus) = (base.clone(), base.clone());
                plus[i][axis] += epsilon;
                minus[i][axis] -= epsilon;
                let numeric = (volume64(&plus) - volume64(&minus)) / (2.0 * epsilon);
                let analytic = gradient[i][axis] as f64;
                assert!(
                    (numeric - analytic).abs() < 1e-6,
                    "vertex {i}, axis {axis}: {analytic} vs {numeric}"
                );
            }
        }
        let net: Vec3 = gradient.iter().sum();
        assert!(net.length() < 1e-6, "Σ ∇V = {net}");
    }

    /// The regular icosahedron of circumradius R encloses (5/12)(3 + √5) a³ with
    /// a = R / sin(2π/5); every vertex's gradient points away from the centre with length
    /// dV/dR / 12.
    #[test]
    fn icosahedron_volume_and_gradient_follow_the_closed_form() {
        let (radius, centre) = (0.8f64, Vec3::new(-1.0, 2.0, 0.5));
        let (model, _) = icosahedron(centre, radius as f32, 1.0, 0.0);
        let edge = radius / (2.0 * std::f64::consts::PI / 5.0).sin();
        let exact = 5.0 / 12.0 * (3.0 + 5f64.sqrt()) * edge.powi(3);
        let mut gradient = vec![Vec3::ZERO; 12];
        let volume = enclosed_volume_and_gradient(&model.positions, &model.triangles, &mut gradient) as f64;
        assert!((volume / exact - 1.0).abs() < 1e-6, "{volume} vs {exact}");
        let radial = 3.0 * exact / radius / 12.0;
        for (p, g) in model.positions.iter().zip(&gradient) {
            let outward = (*p - centre).normalize();
            assert!((g.dot(outward) as f64 / radial - 1.0).abs() < 1e-5 && g.cross(outward).length() < 1e-6);
        }
    }

    /// Projects `body` of `model` (at `positions`, inverse mass `w` each) `times` times with
    /// α̃ from `inv_h2`, as separate sweeps of one substep; returns the volume after each.
    fn project_times(model: &crate::sim::model::Model, positions: &[Vec3], w: f32, inv_h2: f32, times: usize) -> Vec<f32> {
        let mut state = PressureState::new(&model.pressure_bodies, &model.triangles, &model.positions);
        let mut p = particles(positions, w);
        (0..times)
            .map(|sweep| {
                // SAFETY: the body's vertices are the particles; one thread.
                unsafe {
                    state
                        .pass(&model.pressure_bodies, inv_h2)
                        .run(p.pos.raw(), 0, 1, sweep == 0, &|| {})
                };
                state.volumes(&model.pressure_bodies, |i| p.position(i))[0].volume
            })
            .collect()
    }

    /// On an icosahedron scaled by s (all vertices equally heavy), ∇V is radial and equal at
    /// every vertex, so one projection with α = 0 moves every vertex out by the Newton step
    /// δ = (k V0 − V)/(dV/dR) and leaves V(R + δ) = κ (R + δ)³ exactly (κ = V/R³); the next
    /// sweeps converge quadratically to k V0 within float precision.
    #[test]
    fn one_projection_is_the_newton_step_and_a_few_restore_the_target_volume() {
        let (radius, centre) = (0.5f64, Vec3::new(0.3, 1.0, -0.2));
        for (scale, pressure) in [(0.8f64, 1.0f32), (1.0, 2.0), (1.1, 0.5)] {
            let (model, _) = icosahedron(centre, radius as f32, pressure, 0.0);
            let rest = enclosed_volume(&model.positions, &model.triangles) as f64;
            let kappa = rest / radius.powi(3);
            let scaled: Vec<Vec3> = model.positions.iter().map(|&p| centre + (p - centre) * scale as f32).collect();
            let r = radius * scale;
            let newton = r + (pressure as f64 * rest - kappa * r.powi(3)) / (3.0 * kappa * r * r);
            let volumes = project_times(&model, &scaled, 2.0, 3600.0, 4);
            let after_one = volumes[0] as f64;
            assert!(
                (after_one / (kappa * newton.powi(3)) - 1.0).abs() < 2e-6,
                "s = {scale}: {after_one}"
            );
            let target = pressure as f64 * rest;
            let last = *volumes.last().unwrap() as f64;
            assert!(
                (last / target - 1.0).abs() < 4.0 * f32::EPSILON as f64,
                "s = {scale}, k = {pressure}: {last} vs {target}"
            );
        }
    }

    /// With compliance α the first projection is Δλ = −C/(Σ w |∇V|² + α̃): on the icosahedron
    /// a fraction Σw|∇V|²/(Σw|∇V|² + α̃) of the Newton step.
    #[test]
    fn a_compliant_body_takes_the_xpbd_fraction_of_the_step() {
        let (radius, centre, w, inv_h2) = (0.5f64, Vec3::ZERO, 2.0f64, 900.0f64);
        let (rigid, _) = icosahedron(centre, radius as f32, 1.0, 0.0);
        let rest = enclosed_volume(&rigid.positions, &rigid.triangles) as f64;
        let kappa = rest / radius.powi(3);
        let r = radius * 0.9;
        let gradient = 3.0 * kappa * r * r / 12.0;
        let stiffness = 12.0 * w * gradient * gradient;
        let alpha = stiffness / inv_h2; // α̃ equal to Σ w |∇V|²: half the Newton step
        let (model, _) = icosahedron(centre, radius as f32, 1.0, alpha as f32);
        let scaled: Vec<Vec3> = model.positions.iter().map(|&p| p * 0.9).collect();
        let step = (rest - kappa * r.powi(3)) / (3.0 * kappa * r * r) * stiffness / (stiffness + alpha * inv_h2);
        let volume = project_times(&model, &scaled, w as f32, inv_h2 as f32, 1)[0] as f64;
        assert!((volume / (kappa * (r + step).powi(3)) - 1.0).abs() < 2e-6, "{volume}");
    }

    /// The chunked reduction made by any number of threads (here its steps played one thread
    /// after another) gives each vertex the reference gradient [`enclosed_volume_and_gradient`]
    /// bit for bit (both add N_t/6 in triangle order), and the same positions after a step.
    #[test]
    fn the_chunked_reduction_matches_the_reference_for_any_thread_count() {
        let mut builder = icosphere(Vec3::new(0.2, 0.5, -0.1), 0.4, 3);
        let all = (0..builder.triangle_count() as u32).collect();
        builder.add_pressure_body(all, 1.3, 0.0).unwrap();
        let model = builder.build().unwrap();
        let mut reference = vec![Vec3::ZERO; model.positions.len()];
        enclosed_volume_and_gradient(&model.positions, &model.triangles, &mut reference);
        let run = |threads: usize| {
            let mut state = PressureState::new(&model.pressure_bodies, &model.triangles, &model.positions);
            let mut p = particles(&model.positions, 3.0);
            let pos = p.pos.raw();
            let pass = state.pass(&model.pressure_bodies, 3600.0);
            let surface = &pass.surfaces[0];
            // SAFETY: the body's vertices are the particles; the steps run one after another.
            let gradient = unsafe {
                (0..threads).for_each(|t| pass.sum_volume(pos, surface, t, threads));
                (0..threads).for_each(|t| pass.sum_gradients(pos, surface, t, threads));
                pass.take_step(0, surface, true);
                (0..threads).for_each(|t| pass.move_vertices(pos, surface, t, threads));
                (0..surface.vertices.len()).map(|v| *pass.gradient.add(v)).collect::<Vec<_>>()
            };
            (gradient, p.positions().collect::<Vec<_>>())
        };
        let one = run(1);
        assert!(one.0 == reference, "the gradients differ from the reference");
        assert!(one.1 != model.positions, "the step moved the vertices");
        for threads in [2, 3, 7] {
            assert!(run(threads) == one, "{threads} threads differ from one");
        }
    }

    /// A body whose vertices are all pinned (w = 0) has a zero denominator: it is left alone,
    /// with no NaN.
    #[test]
    fn a_fully_pinned_body_is_left_alone() {
        let (model, _) = icosahedron(Vec3::ZERO, 0.5, 2.0, 0.0);
        let volumes = project_times(&model, &model.positions, 0.0, 3600.0, 2);
        let rest = enclosed_volume(&model.positions, &model.triangles);
        assert!(volumes.iter().all(|&v| v == rest));
    }

    /// Open, inconsistently wound and corner-repeating surfaces are named as such.
    #[test]
    fn surface_defects_are_found_and_named() {
        let model = icosphere(Vec3::ZERO, 1.0, 0).build().unwrap();
        let all = || model.triangles.iter().copied();
        assert_eq!(surface_defect(all()), None);
        assert!(surface_defect(all().skip(1)).unwrap().contains("lies in 1 of its triangles"));
        let flipped = all().enumerate().map(|(t, [a, b, c])| if t == 3 { [a, c, b] } else { [a, b, c] });
        assert!(surface_defect(flipped).unwrap().contains("runs the same way"));
        assert!(surface_defect([[0, 0, 1]].into_iter()).unwrap().contains("repeats a corner"));
        assert!(surface_defect(std::iter::empty()).unwrap().contains("no triangles"));
    }
}
