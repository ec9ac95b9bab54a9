//! Rectangular cloth: a regular grid of particles turned into a [`Model`].
//!
//! Every quad gets two structural edges (right and down), optionally shear diagonals, and is
//! split into two triangles along alternating diagonals (so bending is not biased to one
//! direction). Masses are lumped from the triangles: m_i = Σ ρ_A A_t / 3.
//!
//! **Compliances from the cell's shape** (docs/physics.md §2). A cell is a wide, b high. An
//! edge of stiffness k (N/m) and rest vector L n stores ½ k L² (n·ε·n)² under a small
//! homogeneous strain ε; summed over the edges one particle owns (one across, one down, both
//! diagonals of one block A = m a wide, B = n b high, D² = A² + B²) and divided by the cell
//! area a b, the lattice's energy density is
//!
//! ```text
//! W = [k_x a² ε_xx² + k_y b² ε_yy²]/(2ab) + k_d [(A² ε_xx + B² ε_yy)² + 4 A² B² ε_xy²]/(ab D²)
//! ```
//!
//! and the isotropic membrane's is
//! W = E t/(2(1 − ν²)) [ε_xx² + ε_yy² + 2ν ε_xx ε_yy + 2(1 − ν) ε_xy²]. Springs obey the
//! Cauchy relation (the ε_xx ε_yy and ε_xy² terms come from the diagonals alone, in ratio
//! 1 : 2), which forces ν = 1/3; matching the rest,
//!
//! ```text
//! k_d = 3 E t a b D²/(16 A² B²),   k_x = E t (b/a)(9 − 3 r²)/8,   k_y = E t (a/b)(9 − 3/r²)/8,   r = A/B
//! ```
//!
//! stored as coefficients α E t: across 8a/(b(9 − 3r²)), down 8b/(a(9 − 3/r²)), diagonal
//! 16 A² B²/(3 a b D²) — 4/3, 4/3 and 8/3 on a square cell. Both structural stiffnesses are
//! positive only for 1/3 < r² < 3, so a cell's own diagonals serve only cells less than √3
//! as long as wide: on a longer cell they lie almost along its length and give shear only
//! with a stiffness along it that no structural edge can take back (the old fixed 4/3, 8/3 on
//! 1 mm × 9 cm cells made the sheet 93 times too stiff along them and 93 times too soft
//! across and in shear). So a diagonal spans the block of cells most nearly square
//! (`diagonal_span`: 1/2 ≤ r² ≤ 2), one from every particle, and every interior point
//! of the sheet is covered by the same number of blocks. Within a block's width of the sides
//! fewer blocks overlap, so that strip is softer in shear, down to half at the border (none
//! on cells up to √2 times as long as wide, where the block is the cell). Without diagonals the
//! grid is a ladder of ν = 0: k_x = E t b/a, k_y = E t a/b (coefficients a/b and b/a), no
//! shear stiffness.

use glam::{Vec2, Vec3};
use serde::{Deserialize, Serialize};

use super::appearance::Appearance;
use super::error::{check_len, SimError, WORLD_EXTENT};
use super::model::{Compliance, EdgeKind, Model, ModelBuilder};
use super::param_table;
use super::params::Material;

/// Which plane the cloth lies in when built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Orientation {
    /// In the x–y plane, facing +z, rows running down from the top edge (a curtain).
    #[default]
    Vertical,
    /// In the x–z plane, facing +y (a sheet lying flat, e.g. to drop on a collider).
    Horizontal,
}

/// Which particles start pinned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum PinMode {
    /// Nothing pinned.
    None,
    /// The two corners of the top row (row 0).
    #[default]
    TopCorners,
    /// The whole top row.
    TopEdge,
    /// The four corners.
    Corners,
    /// The whole left column (column 0): a flag on its pole.
    LeftEdge,
    /// Explicit `(column, row)` grid coordinates.
    List(Vec<(u32, u32)>),
}

/// A grid particle pinned somewhere other than its rest position (where the app's Save as
/// found a pin the user had moved or made away from rest).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinnedAt {
    /// Column of the particle, from 0.
    pub column: u32,
    /// Row of the particle, from 0 (the top edge of a vertical grid).
    pub row: u32,
    /// Where it is pinned, in m; components in [−10⁴, 10⁴] ([`WORLD_EXTENT`]).
    pub position: Vec3,
}

/// Description of a rectangular cloth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GridSpec {
    /// Width along x in m. Default 1; range [0.01, 100] (a swatch to a sail).
    pub width: f32,
    /// Height (vertical) or depth (horizontal) in m. Default 1; range [0.01, 100].
    pub height: f32,
    /// Particles along the width. Default 40; range 2 to 1024.
    pub columns: u32,
    /// Particles along the height. Default 40; range 2 to 1024.
    pub rows: u32,
    /// Centre of the top edge (vertical) or of the sheet (horizontal), in m. Default (0, 2, 0);
    /// components in [−1000, 1000].
    pub origin: Vec3,
    /// Plane the cloth lies in. Default vertical.
    pub orientation: Orientation,
    /// Pinned particles. Default the two top corners.
    pub pins: PinMode,
    /// Particles pinned away from their rest position: each starts there, at rest and pinned
    /// (whatever `pins` says), while its edges keep their rest lengths from the grid. Default
    /// none; each cell at most once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pinned_at: Vec<PinnedAt>,
    /// Add shear diagonals (both diagonals of every quad, or of every block of cells most nearly
    /// square on long cells; see the module docs). Default true.
    pub shear: bool,
    /// Add dihedral bending hinges on interior triangle edges. Default true.
    pub bending: bool,
    /// Out-of-plane jitter in m: each particle starts moved off the sheet's plane by a fixed
    /// pseudo-random amount in [−jitter, jitter] (a hash of its index, the same on every
    /// build), so a sheet that would otherwise fold exactly in its plane buckles (Ten Minute
    /// Physics 15 jitters its strip by 1e-3 of the spacing). Default 0; range [0, 0.01].
    pub jitter: f32,
    /// The grid's own material when it is one of a scene's objects (a preset's `Grid(…,
    /// material: (…))`); default none: the scene's `material`. Building the grid's model does
    /// not read it (see `crate::scene`), and a version-1 `cloth` may not have one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub material: Option<Material>,
    /// The grid's own look when it is one of a scene's objects (a preset's `Grid(…,
    /// appearance: (…))`); default none: the scene's `appearance`. Only the app reads it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub appearance: Option<Appearance>,
}

impl Default for GridSpec {
    fn default() -> Self {
        Self {
            width: 1.0,
            height: 1.0,
            columns: 40,
            rows: 40,
            origin: Vec3::new(0.0, 2.0, 0.0),
            orientation: Orientation::Vertical,
            pins: PinMode::TopCorners,
            pinned_at: Vec::new(),
            shear: true,
            bending: true,
            jitter: 0.0,
            material: None,
            appearance: None,
        }
    }
}

impl GridSpec {
    /// Index of the particle at `(column, row)`.
    pub fn index(&self, column: u32, row: u32) -> u32 {
        row * self.columns + column
    }

    /// Rest position of the particle at `(column, row)`.
    pub fn position(&self, column: u32, row: u32) -> Vec3 {
        let u = column as f32 / (self.columns - 1) as f32 - 0.5;
        let v = row as f32 / (self.rows - 1) as f32;
        let off = self.jitter * unit_noise(self.index(column, row));
        match self.orientation {
            Orientation::Vertical => self.origin + Vec3::new(u * self.width, -v * self.height, off),
            Orientation::Horizontal => self.origin + Vec3::new(u * self.width, off, (v - 0.5) * self.height),
        }
    }

    /// Checks sizes and resolution (their ranges in [`param_table::GRID`]) and the pins.
    pub fn validate(&self) -> Result<(), SimError> {
        param_table::check_all(param_table::GRID, self)?;
        let outside = |what: &str, (c, r): (u32, u32)| {
            SimError::InvalidGeometry(format!("{what} ({c}, {r}) lies outside the {} × {} grid", self.columns, self.rows))
        };
        if let PinMode::List(list) = &self.pins {
            let cells = (self.columns * self.rows) as usize;
            check_len("pins", list.len(), cells, "a pin list no longer than the grid has cells")?;
            if let Some(&cell) = list.iter().find(|&&cell| !self.contains(cell)) {
                return Err(outside("pin", cell));
            }
        }
        let mut listed = vec![false; (self.columns * self.rows) as usize];
        for pin in &self.pinned_at {
            let cell = (pin.column, pin.row);
            if !self.contains(cell) {
                return Err(outside("pinned_at", cell));
            }
            if std::mem::replace(&mut listed[self.index(pin.column, pin.row) as usize], true) {
                return Err(SimError::InvalidGeometry(format!(
                    "pinned_at lists ({}, {}) twice",
                    pin.column, pin.row
                )));
            }
            let p = pin.position;
            if !(p.is_finite() && p.abs().max_element() <= WORLD_EXTENT) {
                return Err(SimError::InvalidGeometry(format!(
                    "pinned_at ({}, {}): position ({}, {}, {}) must be finite, components in [-{WORLD_EXTENT}, {WORLD_EXTENT}] m",
                    pin.column, pin.row, p.x, p.y, p.z
                )));
            }
        }
        Ok(())
    }

    /// Whether `(column, row)` is a cell of the grid.
    fn contains(&self, (column, row): (u32, u32)) -> bool {
        column < self.columns && row < self.rows
    }

    /// Which particles start pinned, by index (`row × columns + column`): those of `pins` and
    /// every cell of `pinned_at` (cells outside the grid, which [`Self::validate`] refuses, are
    /// skipped). One pass over each list, so a `List` of every cell of a 256² grid costs 65 536
    /// steps, not 65 536² as a search of the list per cell did.
    pub fn pinned_mask(&self) -> Vec<bool> {
        let (last_c, last_r) = (self.columns - 1, self.rows - 1);
        let rule = |column: u32, row: u32| match &self.pins {
            PinMode::None | PinMode::List(_) => false,
            PinMode::TopCorners => row == 0 && (column == 0 || column == last_c),
            PinMode::TopEdge => row == 0,
            PinMode::Corners => (row == 0 || row == last_r) && (column == 0 || column == last_c),
            PinMode::LeftEdge => column == 0,
        };
        let mut mask: Vec<bool> = (0..self.rows)
            .flat_map(|row| (0..self.columns).map(move |column| rule(column, row)))
            .collect();
        let listed = match &self.pins {
            PinMode::List(list) => list.as_slice(),
            _ => &[],
        };
        let placed = self.pinned_at.iter().map(|pin| (pin.column, pin.row));
        for (c, r) in listed.iter().copied().chain(placed).filter(|&cell| self.contains(cell)) {
            mask[self.index(c, r) as usize] = true;
        }
        mask
    }

    /// The particles that start away from their rest position ([`Self::position`]): the cells
    /// of `pinned_at`, as (particle index, position in m). [`Self::build`] gives the rest
    /// geometry; whoever makes the cloth of it moves these there (see `crate::scene`).
    pub fn start_positions(&self) -> impl Iterator<Item = (u32, Vec3)> + '_ {
        self.pinned_at
            .iter()
            .filter(|pin| self.contains((pin.column, pin.row)))
            .map(|pin| (self.index(pin.column, pin.row), pin.position))
    }

    /// Builds the model: particles, triangles (lumping area), edges and hinges. Every particle
    /// is at its rest position, `pinned_at` ones too ([`Self::start_positions`]).
    pub fn build(&self) -> Result<Model, SimError> {
        self.validate()?;
        let mut builder = ModelBuilder::new();
        let pinned = self.pinned_mask();
        for row in 0..self.rows {
            for column in 0..self.columns {
                let i = builder.add_particle(self.position(column, row), 0.0);
                builder.set_pinned(i, pinned[i as usize]);
            }
        }
        self.add_triangles(&mut builder);
        builder.set_corner_uvs(self.corner_uvs(builder.triangles()));
        self.add_edges(&mut builder);
        if self.bending {
            builder.add_hinges_from_triangles();
        }
        builder.build()
    }

    fn add_triangles(&self, builder: &mut ModelBuilder) {
        for row in 0..self.rows - 1 {
            for column in 0..self.columns - 1 {
                let [tl, tr, bl, br] = self.quad(column, row);
                // Alternate the split diagonal in a checkerboard so hinges are not biased.
                if (row + column) % 2 == 0 {
                    builder.add_triangle([tl, bl, br]);
                    builder.add_triangle([tl, br, tr]);
                } else {
                    builder.add_triangle([tl, bl, tr]);
                    builder.add_triangle([tr, bl, br]);
                }
            }
        }
    }

    fn add_edges(&self, builder: &mut ModelBuilder) {
        let lattice = self.lattice();
        for row in 0..self.rows {
            for column in 0..self.columns {
                let i = self.index(column, row);
                if column + 1 < self.columns {
                    builder.add_distance(i, i + 1, EdgeKind::Stretch, Compliance::Material(lattice.across));
                }
                if row + 1 < self.rows {
                    builder.add_distance(i, i + self.columns, EdgeKind::Stretch, Compliance::Material(lattice.down));
                }
            }
        }
        if let Some(diagonals) = lattice.diagonals {
            let (span_c, span_r) = diagonals.span;
            let shear = Compliance::Material(diagonals.coefficient);
            for row in 0..self.rows - span_r {
                for column in 0..self.columns - span_c {
                    let (tl, tr) = (self.index(column, row), self.index(column + span_c, row));
                    let (bl, br) = (self.index(column, row + span_r), self.index(column + span_c, row + span_r));
                    builder.add_distance(tl, br, EdgeKind::Shear, shear);
                    builder.add_distance(tr, bl, EdgeKind::Shear, shear);
                }
            }
        }
    }

    /// The geometric coefficients of the grid's in-plane edges, from the rest shape of its
    /// cells (module docs; docs/physics.md §2).
    pub fn lattice(&self) -> GridLattice {
        let a = self.width as f64 / (self.columns - 1) as f64;
        let b = self.height as f64 / (self.rows - 1) as f64;
        if !self.shear {
            return GridLattice {
                across: (a / b) as f32,
                down: (b / a) as f32,
                diagonals: None,
            };
        }
        let (span_c, span_r) = diagonal_span(a, b);
        // A ribbon narrower than its cells are long cannot hold the block: its diagonals span
        // the whole width and are steeper than the fit allows (r² < 1/3 would make the long
        // edges' stiffness negative), so it is fitted as the nearest admissible block, stiffer
        // along its length than the membrane.
        let (span_c, span_r) = (span_c.min(self.columns - 1), span_r.min(self.rows - 1));
        let (wide, tall) = (span_c as f64 * a, span_r as f64 * b);
        let r2 = ((wide / tall).powi(2)).clamp(0.5, 2.0);
        GridLattice {
            across: (8.0 * a / (b * (9.0 - 3.0 * r2))) as f32,
            down: (8.0 * b / (a * (9.0 - 3.0 / r2))) as f32,
            diagonals: Some(Diagonals {
                coefficient: (16.0 * wide * wide * tall * tall / (3.0 * a * b * (wide * wide + tall * tall))) as f32,
                span: (span_c, span_r),
            }),
        }
    }

    /// Texture coordinates of each triangle's corners: (column, row) scaled to [0, 1].
    fn corner_uvs(&self, triangles: &[[u32; 3]]) -> Vec<[Vec2; 3]> {
        let (last_c, last_r) = ((self.columns - 1) as f32, (self.rows - 1) as f32);
        let uv = |i: u32| Vec2::new((i % self.columns) as f32 / last_c, (i / self.columns) as f32 / last_r);
        triangles.iter().map(|t| t.map(uv)).collect()
    }

    /// Corner indices of the quad whose top-left particle is `(column, row)`:
    /// top-left, top-right, bottom-left, bottom-right.
    fn quad(&self, column: u32, row: u32) -> [u32; 4] {
        let tl = self.index(column, row);
        [tl, tl + 1, tl + self.columns, tl + self.columns + 1]
    }
}

/// The geometric coefficients (α · E t, dimensionless) of a grid's in-plane edges
/// ([`GridSpec::lattice`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridLattice {
    /// Structural edges along the width (column to column): 4/3 on square cells.
    pub across: f32,
    /// Structural edges along the height (row to row): 4/3 on square cells.
    pub down: f32,
    /// The shear diagonals; `None` without `shear`.
    pub diagonals: Option<Diagonals>,
}

/// A grid's shear diagonals: both diagonals of every block of `span` cells whose top-left
/// corner is a particle of the grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Diagonals {
    /// Geometric coefficient of each diagonal: 8/3 on square cells.
    pub coefficient: f32,
    /// Cells (columns, rows) one diagonal spans: (1, 1) on cells up to √2 times as long as
    /// wide, more cells across the short side on longer ones.
    pub span: (u32, u32),
}

/// Cells (columns, rows) of the block most nearly square (1/√2 ≤ block aspect ≤ √2):
/// a cell `a` wide and `b` high spans n cells across its short side, n the integer nearest
/// the cell's aspect in ratio (n or n + 1, whichever is nearer its aspect by factor).
fn diagonal_span(a: f64, b: f64) -> (u32, u32) {
    let nearest = |aspect: f64| {
        let below = aspect.floor().max(1.0);
        let n = if aspect / below <= (below + 1.0) / aspect {
            below
        } else {
            below + 1.0
        };
        n.min(u32::MAX as f64) as u32
    };
    if a <= b {
        (nearest(b / a), 1)
    } else {
        (1, nearest(a / b))
    }
}

/// A fixed pseudo-random number in [−1, 1] for index `i` (the SplitMix64 finaliser).
fn unit_noise(i: u32) -> f32 {
    let mut z = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0
}

/// The tmp15 benchmark cloth, defined exactly so figures compare across solvers: an n × n
/// grid 1 m square hanging in the x–y plane (x ∈ [−0.5, 0.5], y ∈ [2.2, 3.2], z = 0), top
/// corners pinned, every other particle 1 kg; stretch edges (compliance 0), both shear
/// diagonals (1e-4 m/N) and second-neighbour bending distances (1.0 m/N). No triangles'
/// mass, no hinges, no collisions.
pub fn tmp15_model(n: u32) -> Result<Model, SimError> {
    if !(2..=1024).contains(&n) {
        return Err(SimError::InvalidGeometry(format!("tmp15 needs a grid of 2 to 1024, got {n}")));
    }
    let mut b = ModelBuilder::new();
    let idx = |c: u32, r: u32| r * n + c;
    for r in 0..n {
        for c in 0..n {
            let x = -0.5 + c as f32 / (n - 1) as f32;
            let y = 3.2 - r as f32 / (n - 1) as f32;
            let i = b.add_particle(Vec3::new(x, y, 0.0), 1.0);
            b.set_pinned(i, r == 0 && (c == 0 || c == n - 1));
        }
    }
    for r in 0..n {
        for c in 0..n {
            if c + 1 < n {
                b.add_distance(idx(c, r), idx(c + 1, r), EdgeKind::Stretch, Compliance::Fixed(0.0));
            }
            if r + 1 < n {
                b.add_distance(idx(c, r), idx(c, r + 1), EdgeKind::Stretch, Compliance::Fixed(0.0));
            }
            if c + 1 < n && r + 1 < n {
                b.add_distance(idx(c, r), idx(c + 1, r + 1), EdgeKind::Shear, Compliance::Fixed(1e-4));
                b.add_distance(idx(c + 1, r), idx(c, r + 1), EdgeKind::Shear, Compliance::Fixed(1e-4));
            }
            if c + 2 < n {
                b.add_distance(idx(c, r), idx(c + 2, r), EdgeKind::Bend, Compliance::Fixed(1.0));
            }
            if r + 2 < n {
                b.add_distance(idx(c, r), idx(c, r + 2), EdgeKind::Bend, Compliance::Fixed(1.0));
            }
        }
    }
    b.build()
}
