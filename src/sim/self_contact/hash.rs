//! A spatial hash of points, after Ten Minute Physics 15's `Hash`: space is cut into cubic
//! cells of a given edge, each cell is mapped to one of a power-of-two number of buckets by a
//! hash of its integer coordinates, and the points are stored by bucket in flat arrays,
//! filled by a counting sort (count the points of each bucket, prefix sums give where each
//! bucket starts, then place the points). Filling is O(n) and allocates nothing once the
//! arrays have grown. Cells far apart may share a bucket, so each entry keeps its cell (as a
//! packed [`CellKey`]) and a query of a cell skips the entries of the others.
//!
//! It serves the vertex–triangle candidates, whose cells are as large as the largest triangle
//! plus twice the reach; the pairs are listed from [`super::cells`].

use glam::{IVec3, Vec3};

/// A spatial hash of points: cells of edge `edge`, a power-of-two table of buckets filled
/// by a counting sort into two flat arrays.
#[derive(Debug, Clone, Default)]
pub(super) struct SpatialHash {
    /// Cell edge in m.
    edge: f32,
    /// First entry of each bucket (`buckets + 1` entries), and the entries by bucket: each
    /// point's index, a copy of the point (x, y, z) and its cell's key (so a bucket shared by
    /// two cells yields each point once).
    bucket_start: Vec<u32>,
    entry_index: Vec<u32>,
    entry_keys: Vec<CellKey>,
    /// Scratch: each point's cell, and the counting sort's fill pointers.
    cells: Vec<IVec3>,
    fill: Vec<u32>,
}

/// A cell's coordinates packed into one integer, 21 bits each (wrapping): cells that differ
/// by less than 2²¹ in every coordinate — any two cells one query meets — have different keys;
/// an entry of a cell 2²¹ cells away that shares both bucket and key with the cell asked for
/// is far beyond any reach, so the callers' distance tests drop it.
pub(super) type CellKey = u64;

/// The [`CellKey`] of `cell`.
pub(super) fn cell_key(cell: IVec3) -> CellKey {
    const MASK: u64 = (1 << 21) - 1;
    (cell.x as u32 as u64 & MASK) | (cell.y as u32 as u64 & MASK) << 21 | (cell.z as u32 as u64 & MASK) << 42
}

impl SpatialHash {
    /// Hashes `points` into cells of edge `edge` (m) over 2 · points buckets, rounded up to a
    /// power of two.
    pub(super) fn fill(&mut self, points: &[Vec3], edge: f32) {
        let buckets = (2 * points.len()).max(2).next_power_of_two();
        self.edge = edge;
        self.cells.clear();
        self.cells.extend(points.iter().map(|&p| cell_of(p, edge)));
        self.bucket_start.clear();
        self.bucket_start.resize(buckets + 1, 0);
        for &c in &self.cells {
            self.bucket_start[bucket_of(c, buckets) + 1] += 1;
        }
        for b in 0..buckets {
            self.bucket_start[b + 1] += self.bucket_start[b];
        }
        self.fill.clone_from(&self.bucket_start);
        self.entry_index.resize(points.len(), 0);
        self.entry_keys.resize(points.len(), 0);
        for (i, &c) in self.cells.iter().enumerate() {
            let b = bucket_of(c, buckets);
            let slot = self.fill[b] as usize;
            self.entry_index[slot] = i as u32;
            self.entry_keys[slot] = cell_key(c);
            self.fill[b] += 1;
        }
    }

    /// The entries of `cell`'s bucket (those of other cells sharing it included).
    fn bucket(&self, cell: IVec3) -> std::ops::Range<usize> {
        let b = bucket_of(cell, self.bucket_start.len() - 1);
        self.bucket_start[b] as usize..self.bucket_start[b + 1] as usize
    }

    /// The cell edge in m.
    pub(super) fn edge(&self) -> f32 {
        self.edge
    }

    /// The cell of `p`.
    pub(super) fn cell(&self, p: Vec3) -> IVec3 {
        cell_of(p, self.edge)
    }

    /// The points in `cell`, as indices into the points last filled, ascending.
    pub(super) fn in_cell(&self, cell: IVec3) -> impl Iterator<Item = u32> + '_ {
        let (run, key) = (self.bucket(cell), cell_key(cell));
        self.entry_index[run.clone()]
            .iter()
            .zip(&self.entry_keys[run])
            .filter(move |e| *e.1 == key)
            .map(|e| *e.0)
    }
}

/// Bucket of a cell among `buckets` (a power of two): the multipliers of Ten Minute Physics
/// 15, their top bits taken by a Fibonacci multiply (a mask, not a division).
fn bucket_of(cell: IVec3, buckets: usize) -> usize {
    let h = cell.x.wrapping_mul(92_837_111) ^ cell.y.wrapping_mul(689_287_499) ^ cell.z.wrapping_mul(283_923_481);
    let mixed = (h as u32 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> (64 - buckets.trailing_zeros())) as usize & (buckets - 1)
}

/// The cell of `p` for cell edge `edge` (m): ⌊p / edge⌋, each coordinate saturated to the
/// `i32` range. The floor is taken from the truncation (a correction of one below zero), the
/// same value as `f32::floor` without its library call on targets without SSE4.1.
fn cell_of(p: Vec3, edge: f32) -> IVec3 {
    let floor = |x: f32| {
        let truncated = x as i32;
        truncated.saturating_sub(i32::from(x < truncated as f32))
    };
    let q = p / edge;
    IVec3::new(floor(q.x), floor(q.y), floor(q.z))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::self_contact::tests::random_points as points;

    /// Every cell yields exactly its points, ascending, also where cells share a bucket; a
    /// cell with no point yields none.
    #[test]
    fn a_cell_yields_exactly_its_points() {
        let points = points(300);
        let mut hash = SpatialHash::default();
        hash.fill(&points, 0.1);
        let buckets = hash.bucket_start.len() - 1;
        let cells: Vec<IVec3> = points.iter().map(|&p| hash.cell(p)).collect();
        let shared = cells
            .iter()
            .any(|&c| cells.iter().any(|&d| d != c && bucket_of(d, buckets) == bucket_of(c, buckets)));
        assert!(shared, "no two cells share a bucket: the test misses the cell check");
        for &cell in &cells {
            let expected: Vec<u32> = (0..points.len() as u32).filter(|&i| cells[i as usize] == cell).collect();
            assert_eq!(hash.in_cell(cell).collect::<Vec<_>>(), expected);
        }
        assert_eq!(hash.in_cell(IVec3::splat(-7)).count(), 0);
    }

    /// Cells are the floor of the coordinates over the edge, below zero and at its boundaries
    /// as well.
    #[test]
    fn cells_are_the_floor_of_the_coordinates() {
        for x in [-2.5, -2.0, -1.0, -0.5, -1e-9, -0.0, 0.0, 0.5, 1.0, 2.0, 3e9, -3e9] {
            let expected = (x / 0.5f32).floor() as i32;
            assert_eq!(cell_of(Vec3::splat(x), 0.5), IVec3::splat(expected), "at {x}");
        }
    }
}
