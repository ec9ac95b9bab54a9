//! The particles sorted by cell, where the pairs are listed from (the parent module's docs,
//! "Detection"). Space is cut into cubic cells of an edge at least the largest reach, so a
//! pair within reach lies in the same or neighbouring cells; each particle looks at its own
//! cell (the particles after it) and the 13 neighbours ahead of it (a half stencil, so each
//! pair is met once).
//!
//! The entries are sorted by cell, cells ordered by (z, y, x): the cells of one row (the same
//! y and z) follow each other in memory, so a particle's half stencil is five runs of
//! consecutive entries — its own cell after it and the next cell along x, then three cells
//! (x − 1 to x + 1) of each of the rows (y + 1, z), (y − 1, z + 1), (y, z + 1) and
//! (y + 1, z + 1) — rather than 14 buckets of a hash, and the runs hold no entries of other
//! cells. Runs are tens of entries long, stored as separate x, y and z arrays, so their
//! distance tests run in SIMD lanes. The particles are sorted by a counting sort over the
//! cells of their bounding grid (a cloth's grid has a few cells a particle), and each cell's
//! runs are found once per filling by one walk of the sorted cells per run end (the cells'
//! keys and their targets rise together).
//!
//! Cells are counted from the points' bounding box and clamped to [`AXIS_CELLS`] per axis:
//! the clamp keeps neighbouring cells neighbouring (it moves no two cells more than one apart),
//! so a far-flung point only shares a cell with more points, whose distances are tested.

use std::ops::Range;

use glam::Vec3;

use super::slabs::sort_into_runs;

/// Cells per axis before the clamp (2²⁰: 24 km at a 2.3 cm cell).
const AXIS_CELLS: i64 = 1 << 20;

/// Bits of each coordinate in a cell's key.
const AXIS_BITS: u32 = 21;

/// The (Δy, Δz) of the four rows ahead of a cell's own row in its half stencil; each row is
/// looked at from x − 1 to x + 1.
const ROWS: [(i64, i64); 4] = [(1, 0), (-1, 1), (0, 1), (1, 1)];

/// The particles sorted by cell, with each cell's runs of its half stencil.
#[derive(Debug, Clone, Default)]
pub(super) struct SortedCells {
    /// Cell edge in m.
    edge: f32,
    /// Scratch: (cell key, particle) of each particle, sorted, and the counting sort's counts.
    order: Vec<(u64, u32)>,
    counts: Vec<u32>,
    /// The entries in cell order: particle index, coordinates and rest coordinates (m), and
    /// piece.
    index: Vec<u32>,
    xs: Vec<f32>,
    ys: Vec<f32>,
    zs: Vec<f32>,
    rest_xs: Vec<f32>,
    rest_ys: Vec<f32>,
    rest_zs: Vec<f32>,
    piece: Vec<u32>,
    /// Each particle's entry, and its cell's number among the distinct cells.
    slot: Vec<u32>,
    cell_of: Vec<u32>,
    /// The distinct cells' keys, ascending, and each one's first entry (then the end of all
    /// entries).
    cell_keys: Vec<u64>,
    cell_start: Vec<u32>,
    /// Per distinct cell: where its own run ends (after the next cell along x), then where
    /// each row of [`ROWS`] starts and ends.
    runs: Vec<[u32; 9]>,
}

impl SortedCells {
    /// Sorts `points` into cells of edge `edge` (m), each with its rest position in `rest`
    /// and its piece in `piece`.
    pub(super) fn fill(&mut self, points: &[Vec3], rest: &[Vec3], piece: &[u32], edge: f32) {
        self.edge = edge;
        let low = points.iter().fold(Vec3::INFINITY, |l, &p| l.min(p));
        self.order.clear();
        self.order
            .extend(points.iter().enumerate().map(|(i, &p)| (cell_key(p - low, edge), i as u32)));
        sort_by_cell(&mut self.order, &mut self.counts);
        self.index.clear();
        self.index.extend(self.order.iter().map(|e| e.1));
        // Each column in entry order, padded by a chunk so every chunk reads whole.
        let columns = [
            &mut self.xs,
            &mut self.ys,
            &mut self.zs,
            &mut self.rest_xs,
            &mut self.rest_ys,
            &mut self.rest_zs,
        ];
        for (k, column) in columns.into_iter().enumerate() {
            let source = if k < 3 { points } else { rest };
            column.clear();
            column.extend(self.order.iter().map(|e| source[e.1 as usize][k % 3]));
            column.resize(column.len() + CHUNK, 0.0);
        }
        self.piece.clear();
        self.piece.extend(self.order.iter().map(|e| piece[e.1 as usize]));
        self.piece.resize(self.piece.len() + CHUNK, 0);
        self.index.resize(self.index.len() + CHUNK, 0);
        self.number_cells(points.len());
        self.find_runs();
    }

    /// Fills [`Self::slot`], [`Self::cell_of`] and the distinct cells' keys and starts.
    fn number_cells(&mut self, n: usize) {
        self.slot.resize(n, 0);
        self.cell_of.resize(n, 0);
        self.cell_keys.clear();
        self.cell_start.clear();
        for (slot, &(key, i)) in self.order.iter().enumerate() {
            if self.cell_keys.last() != Some(&key) {
                self.cell_keys.push(key);
                self.cell_start.push(slot as u32);
            }
            self.slot[i as usize] = slot as u32;
            self.cell_of[i as usize] = (self.cell_keys.len() - 1) as u32;
        }
        self.cell_start.push(n as u32);
    }

    /// Each cell's run ends: one walk of the cells per end, since a cell's key plus a fixed
    /// offset rises with the key (no coordinate leaves its field, [`cell_key`]).
    fn find_runs(&mut self) {
        self.runs.resize(self.cell_keys.len(), [0; 9]);
        // Field 0: the own run's end (two cells along x); fields 1 + 2r and 2 + 2r: row r's
        // start (x − 1) and end (x + 2).
        let ends: [(i64, usize); 9] = std::array::from_fn(|field| match field {
            0 => (offset(2, 0, 0), 0),
            _ => {
                let (dy, dz) = ROWS[(field - 1) / 2];
                (offset(if field % 2 == 1 { -1 } else { 2 }, dy, dz), field)
            }
        });
        for (delta, field) in ends {
            let mut next = 0;
            for (cell, &key) in self.cell_keys.iter().enumerate() {
                let target = key.wrapping_add_signed(delta);
                while next < self.cell_keys.len() && self.cell_keys[next] < target {
                    next += 1;
                }
                self.runs[cell][field] = self.cell_start[next];
            }
        }
    }

    /// The cell edge in m.
    pub(super) fn edge(&self) -> f32 {
        self.edge
    }

    /// The entries particle `i` looks at for its pairs (the module docs): the particles after
    /// it in its own cell and the next cell along x, then the four rows ahead.
    pub(super) fn half_stencil(&self, i: usize) -> [Range<usize>; 5] {
        let runs = &self.runs[self.cell_of[i] as usize];
        let run = |start: u32, end: u32| start as usize..end as usize;
        [
            run(self.slot[i] + 1, runs[0]),
            run(runs[1], runs[2]),
            run(runs[3], runs[4]),
            run(runs[5], runs[6]),
            run(runs[7], runs[8]),
        ]
    }

    /// Appends to `pairs` every entry j of `run` that the particle `probe` is closer to than
    /// their reach d_min + 2M, as (j, d_min): d_min = min(thickness, the rest distance) within
    /// a piece, the thickness across pieces (the rule of `SelfContacts::contact_distance`,
    /// here in lanes), and 2M the reach's `twice_margin` (m). The tests
    /// of a chunk of entries run in SIMD lanes, then the pairs are kept by a branch-free
    /// append, so the many near misses cost no mispredicted branches.
    #[inline(always)]
    pub(super) fn near(&self, run: Range<usize>, probe: Probe, reach: Reach, pairs: &mut Vec<(u32, f32)>) {
        pairs.reserve(run.len() + CHUNK);
        let (start, spare) = (pairs.len(), pairs.spare_capacity_mut());
        let mut kept = 0;
        let (mut min_distance, mut keep) = ([0.0f32; CHUNK], [false; CHUNK]);
        for first in run.clone().step_by(CHUNK) {
            // Whole chunks (the columns are padded), the entries past the run masked.
            let lanes = run.end - first;
            let chunk = first..first + CHUNK;
            let (xs, ys, zs) = (&self.xs[chunk.clone()], &self.ys[chunk.clone()], &self.zs[chunk.clone()]);
            let (rest_xs, rest_ys) = (&self.rest_xs[chunk.clone()], &self.rest_ys[chunk.clone()]);
            let (rest_zs, pieces) = (&self.rest_zs[chunk.clone()], &self.piece[chunk.clone()]);
            for k in 0..CHUNK {
                let (dx, dy, dz) = (probe.p.x - xs[k], probe.p.y - ys[k], probe.p.z - zs[k]);
                let distance2 = dx * dx + dy * dy + dz * dz;
                let (rx, ry, rz) = (probe.rest.x - rest_xs[k], probe.rest.y - rest_ys[k], probe.rest.z - rest_zs[k]);
                let at_rest = (rx * rx + ry * ry + rz * rz).sqrt();
                let d = if pieces[k] == probe.piece {
                    reach.thickness.min(at_rest)
                } else {
                    reach.thickness
                };
                let within = d + reach.twice_margin;
                min_distance[k] = d;
                keep[k] = (d > 0.0) & (distance2 < within * within) & (k < lanes);
            }
            for ((&j, &d), &keep) in self.index[chunk].iter().zip(&min_distance).zip(&keep) {
                spare[kept].write((j, d));
                kept += usize::from(keep);
            }
        }
        // SAFETY: the first `kept` spare elements were written above (each write lands at
        // `kept`, which only grows past written elements), within the reserved capacity.
        unsafe { pairs.set_len(start + kept) };
    }
}

/// Entries whose contact tests run together ([`SortedCells::near`]); the columns are padded
/// by as many, so every chunk reads whole.
const CHUNK: usize = 16;

/// What a pair's reach d_min + 2M is made of ([`SortedCells::near`]), in m: the thickness and
/// twice the list's margin.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reach {
    pub thickness: f32,
    pub twice_margin: f32,
}

/// A particle looking for its pairs: its position and rest position (m) and its piece.
#[derive(Debug, Clone, Copy)]
pub(super) struct Probe {
    pub p: Vec3,
    pub rest: Vec3,
    pub piece: u32,
}

/// The key of the cell of `p` (m from the points' low corner) for cell edge `edge`: the
/// coordinates ⌊p / edge⌋ clamped to 0..[`AXIS_CELLS`] (a float-to-int `as` saturates, NaN to
/// 0), plus one, packed z, y, x into [`AXIS_BITS`] each — so a neighbour's coordinate (one
/// below to two above) stays within its field and keys order cells by (z, y, x).
fn cell_key(p: Vec3, edge: f32) -> u64 {
    let coordinate = |x: f32| ((x / edge) as i64).clamp(0, AXIS_CELLS - 1) as u64 + 1;
    coordinate(p.z) << (2 * AXIS_BITS) | coordinate(p.y) << AXIS_BITS | coordinate(p.x)
}

/// Sorts `entries` (cell key, particle; each particle once, in particle order) by key: a
/// counting sort over the cells of the entries' bounding grid (`counts` its scratch) when that
/// grid has at most [`COUNTED_CELLS_PER_ENTRY`] cells an entry, as a cloth's has (the slabs'
/// [`sort_into_runs`], its runs left in `counts`); a comparison
/// sort for a far-flung one. Keys order cells by (z, y, x) and the grid's cell numbers do too,
/// and the counting sort keeps particle order within a cell: the same order either way.
fn sort_by_cell(entries: &mut [(u64, u32)], counts: &mut Vec<u32>) {
    const FIELD: u64 = (1 << AXIS_BITS) - 1;
    let coordinates = |key: u64| [key & FIELD, key >> AXIS_BITS & FIELD, key >> (2 * AXIS_BITS)];
    let highest = entries
        .iter()
        .fold([0; 3], |h, e| std::array::from_fn(|k| h[k].max(coordinates(e.0)[k])));
    let (columns, rows) = (highest[0] + 1, highest[1] + 1);
    let cells = columns * rows * (highest[2] + 1);
    if cells > COUNTED_CELLS_PER_ENTRY * entries.len() as u64 + 1024 {
        return entries.sort_unstable();
    }
    let number = |e: &(u64, u32)| {
        let [x, y, z] = coordinates(e.0);
        ((z * rows + y) * columns + x) as u32
    };
    sort_into_runs(entries, counts, cells as u32, number);
}

/// Most cells of the entries' bounding grid per entry for which [`sort_by_cell`] counts.
const COUNTED_CELLS_PER_ENTRY: u64 = 8;

/// What adding (Δx, Δy, Δz) cells does to a key.
fn offset(dx: i64, dy: i64, dz: i64) -> i64 {
    (dz << (2 * AXIS_BITS)) + (dy << AXIS_BITS) + dx
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::self_contact::tests::random_points as points;

    /// The counting sort (a cloth's compact grid) and the comparison sort (a far-flung point
    /// makes the grid too large to count) order the entries as sorting the keys does.
    #[test]
    fn sorting_by_cell_orders_entries_by_key_whether_counted_or_compared() {
        for far_flung in [false, true] {
            let mut points = points(3000);
            if far_flung {
                points.push(Vec3::new(3e6, 0.5, 0.5));
            }
            let low = points.iter().fold(Vec3::INFINITY, |l, &p| l.min(p));
            let entries: Vec<(u64, u32)> = points
                .iter()
                .enumerate()
                .map(|(i, &p)| (cell_key(p - low, 0.05), i as u32))
                .collect();
            let (mut sorted, mut counts) = (entries.clone(), Vec::new());
            sort_by_cell(&mut sorted, &mut counts);
            assert_eq!(counts.is_empty(), far_flung, "counted only the compact grid");
            let mut expected = entries;
            expected.sort_unstable();
            assert_eq!(sorted, expected);
        }
    }

    /// Every pair closer than its reach is met exactly once (from one of its two points), with
    /// its contact distance: min(thickness, rest distance) within a piece, the thickness
    /// across pieces; also across the clamp and on cell boundaries.
    #[test]
    fn the_half_stencils_meet_every_pair_within_reach_once() {
        let mut points = points(2000);
        // A far-flung point and one beyond the clamp, and a cluster on cell boundaries.
        points.push(Vec3::new(3e6, 0.5, 0.5));
        points.push(Vec3::new(3e6 + 0.01, 0.5, 0.5));
        points.extend([0.0, 0.1, 0.2].map(|x| Vec3::new(x, 0.1, 0.2)));
        let rest: Vec<Vec3> = points.iter().map(|&p| p * 3.0).collect();
        let piece: Vec<u32> = (0..points.len() as u32).map(|i| i % 2).collect();
        let (thickness, twice_margin) = (0.08, 0.02);
        let reach = Reach { thickness, twice_margin };
        let mut cells = SortedCells::default();
        cells.fill(&points, &rest, &piece, thickness + twice_margin);
        let mut met = Vec::new();
        for (i, &p) in points.iter().enumerate() {
            let mut near = vec![(u32::MAX, -1.0)];
            let probe = Probe {
                p,
                rest: rest[i],
                piece: piece[i],
            };
            for run in cells.half_stencil(i) {
                cells.near(run, probe, reach, &mut near);
            }
            assert_eq!(near[0], (u32::MAX, -1.0), "what was in the buffer stays");
            met.extend(near[1..].iter().map(|&(j, d)| (i.min(j as usize), i.max(j as usize), d)));
        }
        let mut expected = Vec::new();
        for i in 0..points.len() {
            for j in i + 1..points.len() {
                let min = if piece[i] == piece[j] {
                    thickness.min(rest[i].distance(rest[j]))
                } else {
                    thickness
                };
                if min > 0.0 && points[i].distance_squared(points[j]) < (min + twice_margin).powi(2) {
                    expected.push((i, j, min));
                }
            }
        }
        met.sort_unstable_by_key(|m| (m.0, m.1));
        let capped = expected.iter().filter(|e| e.2 < thickness).count();
        assert!(expected.len() > 1000 && capped > 50, "{} pairs, {capped} capped", expected.len());
        assert!(expected.iter().any(|e| (e.0, e.1) == (2000, 2001)));
        assert_eq!(met, expected);
    }
}
