//! The contacts projected on every thread (the parent module's docs, "Threads and
//! determinism"): when the lists are made, space is cut into slabs across the longest side of
//! the particles' bounding box, each particle belongs to the slab it lay in, and each contact
//! gets a key, the lower slab of its particles when they lie in at most two neighbouring slabs
//! (else the remainder key). Two contacts whose keys are three or more slabs apart share no
//! particle, so the slabs are projected in three colours (key mod 3): within a colour every
//! slab is independent of the others, whichever thread projects it, and within a slab the
//! contacts keep their list order. Each thread sorts its own share of the lists by key (a
//! stable counting sort); a slab's contacts are its run in share 0, then share 1, and so on,
//! which is the one-thread list's order whatever the number of shares. The remainder (contacts
//! spanning more slabs: long edges, large triangles) is projected last by thread 0.

use std::ops::Range;

use glam::Vec3;

/// Most slabs the particles are cut into: a cloth spread wider than this many slab widths
/// gets wider slabs.
pub const MAX_SLABS: usize = 4096;

/// How the particles were cut into slabs when the lists were last made.
#[derive(Debug, Clone, Default)]
pub(super) struct Slabs {
    /// Each particle's slab.
    of_particle: Vec<u32>,
    /// The number of slabs; key `count` is the remainder.
    count: u32,
    /// How many contacts each slab holds once the shares are sorted (set with
    /// [`Self::set_sizes`], so the projection need not count them every sweep).
    sizes: Vec<u32>,
}

impl Slabs {
    /// Cuts `points` into slabs at least `width` (m) wide across the longest side of their
    /// bounding box.
    pub(super) fn cut(&mut self, points: &[Vec3], width: f32) {
        let (low, high) = points
            .iter()
            .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(l, h), &p| (l.min(p), h.max(p)));
        let extent = (high - low).max(Vec3::ZERO);
        let axis = if extent.x >= extent.y && extent.x >= extent.z {
            0
        } else if extent.y >= extent.z {
            1
        } else {
            2
        };
        let width = width.max(extent[axis] / (MAX_SLABS - 1) as f32);
        let last = (MAX_SLABS - 1) as u32;
        self.of_particle.clear();
        // A float-to-int `as` saturates (NaN to 0), so a slab is always in range.
        self.of_particle
            .extend(points.iter().map(|p| (((p[axis] - low[axis]) / width) as u32).min(last)));
        self.count = self.of_particle.iter().max().map_or(0, |&m| m + 1);
    }

    /// How many contacts each slab holds (not the remainder).
    pub(super) fn sizes(&self) -> &[u32] {
        &self.sizes
    }

    /// Sets how many contacts slab `s` holds to `size(s)` for every slab.
    pub(super) fn set_sizes(&mut self, size: impl Fn(u32) -> u32) {
        self.sizes.clear();
        self.sizes.extend((0..self.count).map(size));
    }

    /// The number of slabs; [`Self::key`] returns it for the remainder.
    pub(super) fn count(&self) -> u32 {
        self.count
    }

    /// The key of a contact between `particles`: the lower of their slabs when they lie in at
    /// most two neighbouring slabs, else the remainder key [`Self::count`].
    pub(super) fn key(&self, particles: &[u32]) -> u32 {
        let slab = |&p: &u32| self.of_particle[p as usize];
        let low = particles.iter().map(slab).min().unwrap_or(0);
        let high = particles.iter().map(slab).max().unwrap_or(0);
        if high - low <= 1 {
            low
        } else {
            self.count
        }
    }
}

/// Sorts `items` stably by `key` (below `keys`, a counting sort) and writes into `runs` where
/// each key's run starts (`keys + 1` entries).
pub(super) fn sort_into_runs<T: Copy>(items: &mut [T], runs: &mut Vec<u32>, keys: u32, key: impl Fn(&T) -> u32) {
    // Each key once (it looks up the slabs of several particles), read by both passes.
    let item_keys: Vec<u32> = items.iter().map(key).collect();
    runs.clear();
    runs.resize(keys as usize + 1, 0);
    for &k in &item_keys {
        runs[k as usize + 1] += 1;
    }
    for k in 0..keys as usize {
        runs[k + 1] += runs[k];
    }
    let mut fill = runs.clone();
    // A copy to read from while the items are placed.
    let source = items.to_vec();
    for (item, k) in source.into_iter().zip(item_keys) {
        items[fill[k as usize] as usize] = item;
        fill[k as usize] += 1;
    }
}

/// The run of `key` in a list sorted by [`sort_into_runs`] (empty when the list has not been
/// sorted into that many keys).
pub(super) fn run_of(runs: &[u32], key: u32) -> Range<usize> {
    match (runs.get(key as usize), runs.get(key as usize + 1)) {
        (Some(&start), Some(&end)) => start as usize..end as usize,
        _ => 0..0,
    }
}

/// The slabs of colour `colour` (0, 1 or 2) that thread `t` of `threads` projects, among
/// slabs whose contacts number `sizes` ([`Slabs::sizes`]): the colour's slabs in order, cut
/// into `threads` runs of about equal numbers of contacts. The cut only balances the work: any
/// cut gives the same result, since the colour's slabs are independent.
pub(super) fn slabs_of_thread(colour: u32, sizes: &[u32], (t, threads): (usize, usize)) -> impl Iterator<Item = u32> + '_ {
    let of_colour = move || (colour as usize..sizes.len()).step_by(3);
    let total: usize = of_colour().map(|s| sizes[s] as usize).sum();
    let (from, to) = (total * t / threads, total * (t + 1) / threads);
    let mut before = 0;
    of_colour()
        .filter(move |&s| {
            // A slab belongs to the thread whose share of the contacts holds its first contact
            // (empty slabs to the thread where they fall), so every slab has one thread.
            let starts_mine = (from..to).contains(&before) || (before == total && t + 1 == threads);
            before += sizes[s] as usize;
            starts_mine
        })
        .map(|s| s as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stable counting sort: every item once, by key, equal keys in their first order.
    #[test]
    fn sorting_into_runs_is_stable_and_runs_hold_each_key() {
        let mut items: Vec<(u32, u32)> = [(2, 0), (0, 1), (2, 2), (1, 3), (0, 4), (3, 5)].to_vec();
        let mut runs = Vec::new();
        sort_into_runs(&mut items, &mut runs, 4, |i| i.0);
        assert_eq!(items, [(0, 1), (0, 4), (1, 3), (2, 0), (2, 2), (3, 5)]);
        assert_eq!(runs, [0, 2, 3, 5, 6]);
        assert_eq!(run_of(&runs, 2), 3..5);
        assert_eq!(run_of(&runs, 9), 0..0);
    }

    /// Every slab of a colour goes to exactly one thread, whatever the thread count, and each
    /// thread's share of the contacts is within the largest slab of an even share.
    #[test]
    fn each_slab_of_a_colour_has_one_thread() {
        let sizes = [5u32, 0, 3, 9, 1, 0, 4, 7, 2, 0, 6, 8];
        let size = |s: u32| sizes[s as usize] as usize;
        for threads in 1..=5 {
            for colour in 0..3 {
                let mut seen: Vec<u32> = (0..threads).flat_map(|t| slabs_of_thread(colour, &sizes, (t, threads))).collect();
                seen.sort_unstable();
                assert_eq!(seen, (colour..12).step_by(3).collect::<Vec<_>>(), "{threads} threads");
                let loads: Vec<usize> = (0..threads)
                    .map(|t| slabs_of_thread(colour, &sizes, (t, threads)).map(size).sum())
                    .collect();
                let total: usize = loads.iter().sum();
                let even = |t: usize| total * (t + 1) / threads - total * t / threads;
                assert!(loads.iter().enumerate().all(|(t, &l)| l.abs_diff(even(t)) <= 9), "{loads:?}");
            }
        }
    }

    /// Particles are cut across the longest side; a contact within two neighbouring slabs is
    /// keyed by the lower one, one spanning three slabs is the remainder.
    #[test]
    fn contacts_are_keyed_by_their_lower_slab_or_the_remainder() {
        let points: Vec<Vec3> = (0..10).map(|i| Vec3::new(0.0, i as f32 + 0.5, 0.1 * (i % 2) as f32)).collect();
        let mut slabs = Slabs::default();
        slabs.cut(&points, 1.0);
        assert_eq!(slabs.count(), 10);
        assert_eq!(slabs.key(&[3, 4]), 3);
        assert_eq!(slabs.key(&[5, 4, 5]), 4);
        assert_eq!(slabs.key(&[3, 5]), 10);
    }
}
