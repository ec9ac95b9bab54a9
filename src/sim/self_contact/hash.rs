//! A spatial hash of points, after Ten Minute Physics 15's `Hash`: space is cut into cubic
//! cells of a given edge, each cell is mapped to one of a power-of-two number of buckets by a
//! hash of its integer coordinates, and the points are stored by bucket in one flat array,
//! filled by a counting sort (count the points of each bucket, prefix sums give where each
//! bucket starts, then place the points). Filling is O(n) and allocates nothing once the
//! arrays have grown. Cells far apart may share a bucket, so each entry keeps its cell and a
//! query of a cell skips the entries of the others.
//!
//! With a cell edge at least the largest distance looked for, two points that close lie in the
//! same or neighbouring cells; [`HALF_STENCIL`] visits each such pair of cells once.

use glam::{IVec3, Vec3};

/// A spatial hash of points: cells of edge `edge`, a power-of-two table of buckets filled
/// by a counting sort into two flat arrays.
#[derive(Debug, Clone, Default)]
pub(super) struct SpatialHash {
    /// Cell edge in m.
    edge: f32,
    /// First entry of each bucket (`buckets + 1` entries), and the points by bucket with
    /// their cells (so a bucket shared by two cells yields each point once).
    bucket_start: Vec<u32>,
    entries: Vec<(u32, IVec3)>,
    /// Scratch: the counting sort's fill pointers.
    fill: Vec<u32>,
}

impl SpatialHash {
    /// Hashes `points` into cells of edge `edge` (m) over 2 · points buckets, rounded up to a
    /// power of two.
    pub(super) fn fill(&mut self, points: &[Vec3], edge: f32) {
        let buckets = (2 * points.len()).max(2).next_power_of_two();
        self.edge = edge;
        self.bucket_start.clear();
        self.bucket_start.resize(buckets + 1, 0);
        for &p in points {
            self.bucket_start[bucket_of(cell_of(p, edge), buckets) + 1] += 1;
        }
        for b in 0..buckets {
            self.bucket_start[b + 1] += self.bucket_start[b];
        }
        self.fill.clone_from(&self.bucket_start);
        self.entries.resize(points.len(), (0, IVec3::ZERO));
        for (i, &p) in points.iter().enumerate() {
            let c = cell_of(p, edge);
            let b = bucket_of(c, buckets);
            self.entries[self.fill[b] as usize] = (i as u32, c);
            self.fill[b] += 1;
        }
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
        let b = bucket_of(cell, self.bucket_start.len() - 1);
        self.entries[self.bucket_start[b] as usize..self.bucket_start[b + 1] as usize]
            .iter()
            .filter(move |e| e.1 == cell)
            .map(|e| e.0)
    }
}

/// Bucket of a cell among `buckets` (a power of two): the multipliers of Ten Minute Physics
/// 15, their top bits taken by a Fibonacci multiply (a mask, not a division).
fn bucket_of(cell: IVec3, buckets: usize) -> usize {
    let h = cell.x.wrapping_mul(92_837_111) ^ cell.y.wrapping_mul(689_287_499) ^ cell.z.wrapping_mul(283_923_481);
    let mixed = (h as u32 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> (64 - buckets.trailing_zeros())) as usize & (buckets - 1)
}

/// The cell of `p` for cell edge `edge` (m).
fn cell_of(p: Vec3, edge: f32) -> IVec3 {
    (p / edge).floor().as_ivec3()
}

/// The cell itself and the 13 of its 26 neighbours with (z, y, x) lexicographically ahead of
/// it: with the mirror offsets of the other 13 they cover each neighbouring pair once.
pub(super) const HALF_STENCIL: [IVec3; 14] = [
    IVec3::new(0, 0, 0),
    IVec3::new(1, 0, 0),
    IVec3::new(-1, 1, 0),
    IVec3::new(0, 1, 0),
    IVec3::new(1, 1, 0),
    IVec3::new(-1, -1, 1),
    IVec3::new(0, -1, 1),
    IVec3::new(1, -1, 1),
    IVec3::new(-1, 0, 1),
    IVec3::new(0, 0, 1),
    IVec3::new(1, 0, 1),
    IVec3::new(-1, 1, 1),
    IVec3::new(0, 1, 1),
    IVec3::new(1, 1, 1),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Reproducible points in a 1 m cube (a 32-bit LCG's upper bits).
    fn points(count: usize) -> Vec<Vec3> {
        let mut seed = 3u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        (0..count).map(|_| Vec3::new(next(), next(), next())).collect()
    }

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

    /// The half stencil's offsets and their mirror images are the cell and its 26 neighbours,
    /// each once.
    #[test]
    fn the_half_stencil_and_its_mirror_cover_the_neighbours_once() {
        let mut covered: Vec<IVec3> = HALF_STENCIL.iter().flat_map(|&o| [o, -o]).collect();
        covered.sort_by_key(|c| c.to_array());
        covered.dedup();
        let mut neighbours: Vec<IVec3> = (-1..=1)
            .flat_map(|z| (-1..=1).flat_map(move |y| (-1..=1).map(move |x| IVec3::new(x, y, z))))
            .collect();
        neighbours.sort_by_key(|c| c.to_array());
        assert_eq!(covered, neighbours);
        assert_eq!(HALF_STENCIL.len(), 14);
    }
}
