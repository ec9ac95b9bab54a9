//! The Cusick drape test (Cusick 1968, "The measurement of fabric drape", J. Text. Inst. 59;
//! standardised as BS 5058:1973 and, for nonwovens, ISO 9073-9): a circular specimen of
//! diameter 30 cm is clamped between two concentric discs of diameter 18 cm and the free
//! annulus drapes under its own weight. A light above throws the specimen's shadow onto
//! paper; with S the shadow's area, S_d the support disc's and S_f the flat specimen's, the
//! **drape coefficient** is
//!
//! ```text
//! DC = (S − S_d) / (S_f − S_d)
//! ```
//!
//! 1 for a specimen that stays flat, near 0 for one that hangs straight down the edge of the
//! support. Woven fabrics range from about 0.3 (silk, jersey) to 0.9 (heavy, stiff fabrics);
//! DC is governed by the bending length c = (D / (ρ_A g))^(1/3) relative to the overhang
//! R − r_d = 6 cm. The folds round the edge (the **nodes**, usually 4 to 10, fewer for
//! stiffer fabrics) are counted too.
//!
//! # The scene
//! Only the annulus the fabric drapes from is meshed: rings of particles at radii from one
//! ring inside the clamp edge r_d out to the specimen's edge R, every ring at the same radial
//! step (about spacing · √3/2) and with as many particles as its circumference holds at the
//! spacing, neighbouring rings stitched into near-equilateral triangles. Every ring rotates
//! by a golden-ratio fraction of its own spacing, so no seam of the stitching lines up from
//! ring to ring, and the mesh has no preferred direction: a grid's axes (or a triangular
//! lattice's six) would favour folds along them. One ring lies exactly on the clamp edge and
//! one on the specimen's edge, so the overhang is 6 cm at every spacing. The particles with
//! r ≤ r_d are pinned, which clamps both the position and, through the bending hinges on the
//! clamp ring, the slope, as the two discs do. The clamped disc inside the innermost ring is
//! not simulated (it never moves) but is part of the shadow.
//!
//! The specimen starts flat and at rest and settles under gravity for [`CusickSetup::seconds`];
//! air damping near critical for the overhang's swing brings it to rest without changing where
//! it rests ([`CusickResult::kinetic_energy`] shows how near rest it got).
//!
//! # The measurement
//! The shadow is the union of every triangle's projection on the horizontal (x–z) plane,
//! rasterised at [`CusickSetup::pixel`] ([`Shadow`]); S_f is the same raster of the flat mesh,
//! so the mesh's polygonal edge and the raster's pixels bias S and S_f alike, and a flat
//! specimen measures DC = 1. The nodes are the prominent maxima of the shadow's outline radius
//! r(φ) round the centre ([`Shadow::outline`], [`count_nodes`]).
//!
//! # Resolution
//! XPBD's hinges are iteration-limited at fine spacing: a hinge of rigidity D on edges of
//! length h is stiffer than the m/h² a substep of h can project, so with too few sweeps per
//! frame the cloth bends too easily and DC comes out low. The defaults of [`CusickSetup`] are
//! the coarsest spacing and fewest sweeps within a few percent of the converged DC of cotton
//! (bending length 1.9 cm), about 0.68 from 1.5 cm down to 0.5 cm at 1 280 sweeps a frame: at
//! 1 cm, 15 × 1 substeps × sweeps give 0.48, 40 × 4 give 0.62, 160 × 2 give 0.67; a 2 cm mesh
//! (3.5 rings over the overhang) is not converged in space (0.53 to 0.63).

use std::f32::consts::TAU;

use glam::{Vec2, Vec3};

use crate::sim::{Cloth, Material, MeshPins, SimError, SolverParams, TriangleMesh};

/// The scene and solver settings of a Cusick test.
#[derive(Debug, Clone, PartialEq)]
pub struct CusickSetup {
    /// Diameter of the specimen in m. Default 0.30 (BS 5058).
    pub specimen_diameter: f32,
    /// Diameter of the support (clamping) discs in m. Default 0.18 (BS 5058).
    pub support_diameter: f32,
    /// Mesh spacing (edge length) in m. Default 0.01.
    pub spacing: f32,
    /// Time the specimen settles, in s. Default 0.8 (DC within 0.1 % of its value at 1.5 s).
    pub seconds: f32,
    /// Frame step in s. Default 1/60.
    pub dt: f32,
    /// Substeps per frame. Default 160 (see the module docs: fewer let the hinges bend too
    /// easily).
    pub substeps: u32,
    /// Gauss–Seidel sweeps per substep. Default 2.
    pub iterations: u32,
    /// Air damping in 1/s. Default 15: near critical for the overhang's swing (ω ≈ √(g/6 cm)
    /// ≈ 13/s), so the specimen comes to rest quickly; it does not move the resting shape.
    pub air_damping: f32,
    /// Side of a shadow pixel in m. Default 0.5 mm.
    pub pixel: f32,
}

impl Default for CusickSetup {
    fn default() -> Self {
        Self {
            specimen_diameter: 0.30,
            support_diameter: 0.18,
            spacing: 0.01,
            seconds: 0.8,
            dt: 1.0 / 60.0,
            substeps: 160,
            iterations: 2,
            air_damping: 15.0,
            pixel: 5.0e-4,
        }
    }
}

/// What a Cusick test measured.
#[derive(Debug, Clone, PartialEq)]
pub struct CusickResult {
    /// Drape coefficient DC = (S − S_d)/(S_f − S_d), dimensionless (1 = flat).
    pub drape_coefficient: f32,
    /// Number of nodes (folds) round the specimen.
    pub nodes: u32,
    /// Kinetic energy of the specimen at the end, in J (near 0 when it has come to rest).
    pub kinetic_energy: f32,
}

/// Angular bins of the outline r(φ): half a degree each.
pub const OUTLINE_BINS: usize = 720;

/// Half-width, in bins, of the moving average that smooths the outline before its maxima are
/// counted: ±1.5°, far narrower than a fold (30° to 90°) but wider than a mesh triangle's
/// notch in the outline.
const OUTLINE_SMOOTHING: usize = 3;

/// A node must rise this fraction of the overhang R − r_d above the troughs either side of it
/// (5 % = 3 mm on the standard specimen), so a ripple of the mesh's edge is not a fold.
pub const NODE_PROMINENCE: f32 = 0.05;

/// The specimen as built: its mesh (annulus), which vertices are pinned, and the innermost
/// (clamped) ring, whose inside is the part of the shadow not meshed.
#[derive(Debug, Clone)]
pub struct Specimen {
    /// The mesh in m, lying flat at y = 0 and centred on the origin.
    pub mesh: TriangleMesh,
    /// Vertices with r ≤ r_d (clamped).
    pub pinned: Vec<u32>,
    /// The vertices of the innermost ring, in order round the centre.
    pub inner_ring: Vec<u32>,
}

/// One ring of the mesh: its first vertex, vertex count and angular phase (rad).
#[derive(Debug, Clone, Copy)]
struct Ring {
    first: u32,
    count: u32,
    phase: f32,
}

impl Ring {
    fn angle(&self, k: u32) -> f32 {
        self.phase + TAU * k as f32 / self.count as f32
    }

    fn vertex(&self, k: u32) -> u32 {
        self.first + k % self.count
    }
}

/// Builds the specimen of `setup` (see the module docs).
pub fn specimen(setup: &CusickSetup) -> Specimen {
    let (r_d, r_f) = (0.5 * setup.support_diameter, 0.5 * setup.specimen_diameter);
    let steps = ((r_f - r_d) / (setup.spacing * 0.75f32.sqrt())).round().max(1.0) as u32;
    let dr = (r_f - r_d) / steps as f32;
    let mut mesh = TriangleMesh::default();
    let mut rings: Vec<Ring> = Vec::new();
    // Ring 0 is one step inside the clamp edge, so the hinges on the clamp ring hold its slope.
    for j in 0..=steps + 1 {
        let radius = r_d + (j as f32 - 1.0) * dr;
        let count = ((TAU * radius / setup.spacing).round() as u32).max(6);
        // The golden ratio's fraction of a ring spacing: stitching seams never line up.
        let phase = (j as f32 * 0.618_034).fract() * TAU / count as f32;
        let ring = Ring {
            first: mesh.positions.len() as u32,
            count,
            phase,
        };
        mesh.positions
            .extend((0..count).map(|k| Vec3::new(radius * ring.angle(k).cos(), 0.0, radius * ring.angle(k).sin())));
        if let Some(&inner) = rings.last() {
            stitch(&mesh.positions, inner, ring, &mut mesh.triangles);
        }
        rings.push(ring);
    }
    let clamped = rings[0].count + rings[1].count;
    Specimen {
        mesh,
        pinned: (0..clamped).collect(),
        inner_ring: (0..rings[0].count).collect(),
    }
}

/// Joins rings `a` (inner) and `b` (outer) with triangles facing up (+y): walking round both,
/// each triangle advances the ring whose next vertex comes first in angle.
fn stitch(positions: &[Vec3], a: Ring, b: Ring, triangles: &mut Vec<[u32; 3]>) {
    let (mut i, mut j) = (0, 0);
    while i < a.count || j < b.count {
        let advance_a = j == b.count || (i < a.count && a.angle(i + 1) <= b.angle(j + 1));
        let tri = if advance_a {
            i += 1;
            [a.vertex(i - 1), a.vertex(i), b.vertex(j)]
        } else {
            j += 1;
            [a.vertex(i), b.vertex(j), b.vertex(j - 1)]
        };
        triangles.push(facing_up(positions, tri));
    }
}

/// `tri` wound counter-clockwise seen from above.
fn facing_up(positions: &[Vec3], tri: [u32; 3]) -> [u32; 3] {
    let [a, b, c] = tri.map(|i| positions[i as usize]);
    if (b - a).cross(c - a).y >= 0.0 {
        tri
    } else {
        [tri[0], tri[2], tri[1]]
    }
}

/// The solver settings of `setup`: its substeps, sweeps and air damping, self-collision off
/// (a draped specimen does not fold onto itself).
fn solver_params(setup: &CusickSetup) -> SolverParams {
    SolverParams {
        dt: setup.dt,
        substeps: setup.substeps,
        iterations: setup.iterations,
        air_damping: setup.air_damping,
        self_collision: false,
        ..SolverParams::default()
    }
}

/// Runs the Cusick test on `material` with `setup`: builds the specimen, lets it settle and
/// measures its drape coefficient and nodes.
pub fn run_cusick(material: &Material, setup: &CusickSetup) -> Result<CusickResult, SimError> {
    let specimen = specimen(setup);
    let (model, particle_of) = specimen
        .mesh
        .build_model(&MeshPins::Vertices(specimen.pinned.clone()), true, None)?;
    let params = solver_params(setup);
    let mut cloth = Cloth::new(model, material, Vec::new())?;
    let frames = (setup.seconds / setup.dt).ceil() as u32;
    let mut kinetic_energy = 0.0;
    for _ in 0..frames {
        kinetic_energy = cloth.step(&params, material)?.kinetic_energy;
    }
    let draped: Vec<Vec3> = cloth.particles().positions().collect();
    let rest = &cloth.model().positions;
    // The mesh's vertex v is particle particle_of[v]: the shadow takes the mesh's triangles.
    let in_mesh_order = |positions: &[Vec3]| -> Vec<Vec3> { particle_of.iter().map(|&i| positions[i as usize]).collect() };
    let flat = shadow_of(&specimen, &in_mesh_order(rest), setup.pixel);
    let hung = shadow_of(&specimen, &in_mesh_order(&draped), setup.pixel);
    let (r_d, r_f) = (0.5 * setup.support_diameter, 0.5 * setup.specimen_diameter);
    let support = std::f32::consts::PI * r_d * r_d;
    let outline = smooth_circular(&hung.outline(Vec2::ZERO, OUTLINE_BINS), OUTLINE_SMOOTHING);
    Ok(CusickResult {
        drape_coefficient: (hung.area() - support) / (flat.area() - support),
        nodes: count_nodes(&outline, NODE_PROMINENCE * (r_f - r_d)),
        kinetic_energy: kinetic_energy as f32,
    })
}

/// The shadow of the specimen with its vertices at `positions` (in the mesh's order): its
/// triangles and the clamped disc inside its innermost ring, as a fan round the centre.
fn shadow_of(specimen: &Specimen, positions: &[Vec3], pixel: f32) -> Shadow {
    let mut points: Vec<Vec2> = positions.iter().map(|p| Vec2::new(p.x, p.z)).collect();
    let centre = points.len() as u32;
    points.push(Vec2::ZERO);
    let ring = &specimen.inner_ring;
    let fan = (0..ring.len()).map(|k| [centre, ring[k], ring[(k + 1) % ring.len()]]);
    let triangles: Vec<[u32; 3]> = specimen.mesh.triangles.iter().copied().chain(fan).collect();
    Shadow::of_triangles(&points, &triangles, pixel)
}

/// A union of triangles in the plane, rasterised: the pixels whose centres lie in some
/// triangle.
#[derive(Debug, Clone)]
pub struct Shadow {
    /// Lower corner of the raster in m.
    origin: Vec2,
    /// Side of a pixel in m.
    pixel: f32,
    /// Pixels across (x) and down (y).
    size: [usize; 2],
    /// Whether each pixel is covered, row by row.
    covered: Vec<bool>,
}

impl Shadow {
    /// The shadow of `triangles` (corner indices into `points`, in m; either winding) on a
    /// raster of `pixel` m square pixels covering the points' bounding box.
    pub fn of_triangles(points: &[Vec2], triangles: &[[u32; 3]], pixel: f32) -> Shadow {
        let (lo, hi) = points.iter().fold((Vec2::splat(f32::MAX), Vec2::splat(f32::MIN)), |(lo, hi), &p| {
            (lo.min(p), hi.max(p))
        });
        let origin = lo - Vec2::splat(pixel);
        let cells = ((hi - origin) / pixel).ceil() + 1.0;
        let size = [cells.x.max(1.0) as usize, cells.y.max(1.0) as usize];
        let mut shadow = Shadow {
            origin,
            pixel,
            size,
            covered: vec![false; size[0] * size[1]],
        };
        for tri in triangles {
            shadow.fill(tri.map(|i| points[i as usize]));
        }
        shadow
    }

    /// Covers the pixels whose centres lie in triangle `t` (edges included).
    fn fill(&mut self, t: [Vec2; 3]) {
        let edge = |a: Vec2, b: Vec2, p: Vec2| (b - a).perp_dot(p - a);
        let twice_area = edge(t[0], t[1], t[2]);
        if twice_area == 0.0 {
            return;
        }
        let lo = ((t[0].min(t[1]).min(t[2]) - self.origin) / self.pixel).floor().max(Vec2::ZERO);
        let hi = ((t[0].max(t[1]).max(t[2]) - self.origin) / self.pixel).ceil();
        let [x_end, y_end] = [(hi.x as usize).min(self.size[0]), (hi.y as usize).min(self.size[1])];
        for y in lo.y as usize..y_end {
            for x in lo.x as usize..x_end {
                let p = self.centre(x, y);
                // Inside when every edge function has the sign of the triangle's area.
                let inside = (0..3).all(|k| edge(t[k], t[(k + 1) % 3], p) * twice_area.signum() >= 0.0);
                if inside {
                    self.covered[y * self.size[0] + x] = true;
                }
            }
        }
    }

    fn centre(&self, x: usize, y: usize) -> Vec2 {
        self.origin + self.pixel * Vec2::new(x as f32 + 0.5, y as f32 + 0.5)
    }

    /// Area of the shadow in m².
    pub fn area(&self) -> f32 {
        self.covered.iter().filter(|&&c| c).count() as f32 * self.pixel * self.pixel
    }

    /// The outline radius r(φ) round `centre` in m: for each of `bins` equal angular bins
    /// (the first starting at φ = −π, angles counter-clockwise from +x), the largest distance
    /// of a covered pixel's centre; 0 where a bin has none.
    pub fn outline(&self, centre: Vec2, bins: usize) -> Vec<f32> {
        let mut radius = vec![0.0f32; bins];
        for y in 0..self.size[1] {
            for x in (0..self.size[0]).filter(|&x| self.covered[y * self.size[0] + x]) {
                let d = self.centre(x, y) - centre;
                let bin = (((d.y.atan2(d.x) + std::f32::consts::PI) / TAU * bins as f32) as usize).min(bins - 1);
                radius[bin] = radius[bin].max(d.length());
            }
        }
        radius
    }
}

/// Circular moving average of `values` over ±`half_width` neighbours.
pub fn smooth_circular(values: &[f32], half_width: usize) -> Vec<f32> {
    let n = values.len();
    // A window wider than the turn would count values twice.
    let half_width = half_width.min(n.saturating_sub(1) / 2);
    let window = 2 * half_width + 1;
    (0..n)
        .map(|i| (0..window).map(|k| values[(i + n + k - half_width) % n]).sum::<f32>() / window as f32)
        .collect()
}

/// Number of maxima of the circular sequence `outline` (equal angular steps round a full
/// turn) that rise at least `min_prominence` above the higher of the two troughs separating
/// them from a higher value on either side (their topographic prominence; the highest
/// maximum's troughs are the sequence's minimum).
pub fn count_nodes(outline: &[f32], min_prominence: f32) -> u32 {
    let n = outline.len();
    let at = |i: usize| outline[i % n];
    let is_peak = |i: usize| at(i + n - 1) < at(i) && at(i) >= at(i + 1);
    (0..n)
        .filter(|&i| is_peak(i))
        .filter(|&i| {
            let trough = |forward: bool| {
                let mut low = at(i);
                for step in 1..n {
                    let v = if forward { at(i + step) } else { at(i + n - step) };
                    if v > at(i) {
                        break;
                    }
                    low = low.min(v);
                }
                low
            };
            at(i) - trough(true).max(trough(false)) >= min_prominence
        })
        .count() as u32
}
