//! The sweep order of a constraint set: which constraints form a phase (keyed runs or greedy
//! colours), where a phase is cut into parts, and how a part is batched — levels, strips of
//! eight rows, skewed levels, chunks of a colour. Every function here keeps the order of
//! constraints that share a particle; see the [module docs](super) for why each batching is
//! the same sweep.

use super::{Batch, Group, MAX_COLOURS};

/// Most phases a keyed sweep order may have. A grid numbered row by row has one phase per edge
/// kind and direction (at most eight); a mesh numbered any other way has about as many keys
/// as constraints, each phase a handful of constraints in levels of one, which no kernel
/// batches (a shuffled 128² grid: 32 000 phases, 25–30× slower). Such a mesh is coloured
/// instead, class by class.
pub(super) const MAX_KEYED_PHASES: usize = 64;

/// The sweep's phases as lists of ids in order: runs of equal [`Batch::phase_key`] in key
/// order (stable) when they are few (at most [`MAX_KEYED_PHASES`]), otherwise greedy colours
/// of each class (the keys' upper half) in class order, then colour order; and whether they
/// are keyed.
pub(super) fn phases<B: Batch>(items: &[B::Item], particle_count: usize) -> (Vec<Vec<u32>>, bool) {
    let mut order: Vec<u32> = (0..items.len() as u32).collect();
    if let Some(keys) = items.iter().map(B::phase_key).collect::<Option<Vec<u64>>>() {
        order.sort_by_key(|&id| keys[id as usize]);
        let keyed: Vec<Vec<u32>> = order
            .chunk_by(|&x, &y| keys[x as usize] == keys[y as usize])
            .map(<[u32]>::to_vec)
            .collect();
        if keyed.len() <= MAX_KEYED_PHASES {
            return (keyed, true);
        }
    }
    let class = |id: u32| B::phase_key(&items[id as usize]).map_or(0, |key| key >> 32);
    order.sort_by_key(|&id| (class(id), id));
    let coloured = order
        .chunk_by(|&x, &y| class(x) == class(y))
        .flat_map(|ids| greedy_colours::<B>(items, ids, particle_count))
        .collect();
    (coloured, false)
}

/// Greedy colouring of `ids` in their order; constraints finding all colours taken form a last
/// phase (level scheduling then orders them).
pub(super) fn greedy_colours<B: Batch>(items: &[B::Item], ids: &[u32], particle_count: usize) -> Vec<Vec<u32>> {
    let mut used = vec![0u64; particle_count];
    let mut colours: Vec<Vec<u32>> = vec![Vec::new(); MAX_COLOURS as usize + 1];
    for &id in ids {
        let particles = B::particles(&items[id as usize]);
        let colour = (!particles.iter().fold(0u64, |m, &p| m | used[p as usize])).trailing_zeros();
        if colour < MAX_COLOURS {
            particles.iter().for_each(|&p| used[p as usize] |= 1 << colour);
        }
        colours[colour.min(MAX_COLOURS) as usize].push(id);
    }
    colours.retain(|c| !c.is_empty());
    colours
}

/// Root of `p` in the union–find held in `scratch` (`scratch[p]` = 1 + parent, 0 for a root),
/// compressing the path.
pub(super) fn find(scratch: &mut [u32], p: u32) -> u32 {
    let mut root = p;
    while scratch[root as usize] != 0 {
        root = scratch[root as usize] - 1;
    }
    let mut q = p;
    while scratch[q as usize] != 0 {
        let next = scratch[q as usize] - 1;
        scratch[q as usize] = if q == root { 0 } else { root + 1 };
        q = next;
    }
    root
}

/// Connected component (constraints linked through shared particles) of every constraint in
/// `ids`, numbered in order of first appearance. `scratch` (one entry per particle, all zero)
/// holds the union–find and is left zeroed.
pub(super) fn components<B: Batch>(items: &[B::Item], ids: &[u32], scratch: &mut [u32]) -> Vec<u32> {
    let particles = |id: u32| B::particles(&items[id as usize]);
    for &id in ids {
        let ends = particles(id);
        let root = find(scratch, ends[0]);
        for &p in &ends[1..] {
            let other = find(scratch, p);
            if other != root {
                scratch[other as usize] = root + 1;
            }
        }
    }
    let mut number = std::collections::HashMap::new();
    let ordinals = ids
        .iter()
        .map(|&id| {
            let root = find(scratch, particles(id)[0]);
            let next = number.len() as u32;
            *number.entry(root).or_insert(next)
        })
        .collect();
    ids.iter().flat_map(|&id| particles(id)).for_each(|&p| scratch[p as usize] = 0);
    ordinals
}

/// Where `phase` (ids in sweep order) is cut into parts: `bounds.len()` offsets from 0 to
/// its length, part k being the constraints from offset k to offset k + 1. Offset k counts
/// the constraints whose lowest particle lies below `bounds[k]`. On a grid built row by row
/// they are a prefix of the phase, so part k holds the constraints of the k-th band of rows
/// and the per-particle passes' split (at the same bounds) keeps each thread on the same
/// particles; no part's constraints then reach into the bands above it. Any consecutive cut
/// keeps the sweep order; another mesh order only balances worse.
pub(super) fn part_cuts<B: Batch>(items: &[B::Item], phase: &[u32], bounds: &[u32]) -> Vec<usize> {
    let below = |bound: u32| phase.iter().filter(|&&id| lowest_particle::<B>(items, id) < bound).count();
    let inner = bounds[1..bounds.len() - 1].iter().map(|&b| below(b));
    std::iter::once(0).chain(inner).chain(std::iter::once(phase.len())).collect()
}

/// A colour's constraints `ids` (independent, so any order is the same sweep) ordered by the
/// band of `bounds` their lowest particle lies in, in their order within a band: so
/// [`part_cuts`] gives each part exactly its band's constraints, none reaching into a band
/// above (in model order a hinge's wing may lie a row above its edge, and the parts would
/// meet instead of trailing).
pub(super) fn by_band<B: Batch>(items: &[B::Item], ids: &[u32], bounds: &[u32]) -> Vec<u32> {
    let mut ordered = ids.to_vec();
    ordered.sort_by_cached_key(|&id| bounds[1..].partition_point(|&b| b <= lowest_particle::<B>(items, id)));
    ordered
}

/// The lowest particle constraint `id` touches, which decides its part.
fn lowest_particle<B: Batch>(items: &[B::Item], id: u32) -> u32 {
    B::particles(&items[id as usize]).iter().copied().min().unwrap_or(0)
}

/// Whether the constraints `ids` share no particle (a colour). `scratch` (one entry per
/// particle, all zero) is left zeroed.
pub(super) fn independent<B: Batch>(items: &[B::Item], ids: &[u32], scratch: &mut [u32]) -> bool {
    let particles = || ids.iter().flat_map(|&id| B::particles(&items[id as usize]));
    let shared = particles().any(|&p| std::mem::replace(&mut scratch[p as usize], 1) == 1);
    particles().for_each(|&p| scratch[p as usize] = 0);
    !shared
}

/// Constraints per unit of a colour (a phase of one level): a multiple of the widest vector,
/// small enough that a neighbouring part, waiting only for the chunk at the seam between the
/// parts, waits briefly, and large enough that the threads rarely publish progress (each
/// publication moves a cache line between cores). Measured on the default curtain at 128²
/// with two threads (docs/performance.md): 1 024 is as fast as the two-thread build before
/// any-number-of-threads; 256 and 512 were 1–2 % slower, whole colour parts 2 % slower.
pub(super) const CHUNK: usize = 1024;

/// Constraints per batch of a colour in a set too small ever to be cut into parts: there the
/// chunks are no units of waiting, only where the batches end, which decides which hinges
/// the scalar code runs (the rests); kept as it always was, so such a cloth's results are
/// those of every earlier build.
pub(super) const UNSPLIT_CHUNK: usize = 256;

/// A colour's part (one level of independent constraints, in order) as consecutive batches of
/// `chunk` constraints, each a unit of the sweep on several threads; other groups as they are.
pub(super) fn chunked<B: Batch>(group: Group<B>, chunk: usize) -> Group<B> {
    if group.chained || group.batches.len() != 1 || group.batches[0].len() <= chunk {
        return group;
    }
    let level = &group.batches[0];
    let mut batches: Vec<B> = Vec::new();
    for i in 0..level.len() {
        if i % chunk == 0 {
            batches.push(B::default());
        }
        batches.last_mut().unwrap().push(level.id(i), level.get(i));
    }
    Group { batches, ..group }
}

/// Lanes of a SIMD batch.
pub(super) const LANES: u32 = 8;
/// Levels by which each further eight components of a strided part start later.
pub(super) const SKEW: u32 = 8;
/// Index distance from which neighbours in a level count as strided (not a run).
pub(super) const STRIDED: u32 = 2;

/// Level-schedules one part. When its levels are strided (one edge per row of a large grid:
/// particles a row apart, which on a power-of-two grid all fall in one L1 cache set and evict
/// each other), every further eight components start [`SKEW`] levels later: eight lanes still
/// share a level, but the groups of eight sit at different columns, hence different cache
/// sets. Components are independent, so this is the same sweep.
pub(super) fn schedule_part<B: Batch>(items: &[B::Item], ids: &[u32], scratch: &mut [u32]) -> Group<B> {
    let part: Vec<B::Item> = ids.iter().map(|&id| items[id as usize]).collect();
    let plain = level_schedule::<B>(&part, ids, scratch, |_| 0);
    // A single level has no runs to follow (a colour of hinges).
    if plain.batches.len() <= 1 || !is_strided(&plain) {
        return plain;
    }
    if let Some(strips) = strips::<B>(items, ids) {
        return strips;
    }
    let ordinals = components::<B>(items, ids, scratch);
    level_schedule::<B>(&part, ids, scratch, |k| ordinals[k] / LANES * SKEW)
}

/// The part as strips, when its constraints (in order) form runs along disjoint rows: each
/// run continues the previous constraint one particle further (an edge along a row, or a
/// second-neighbour edge), all runs are equally long with the same index offset between the
/// ends, no two runs share a particle, and they come in whole eights. Each run is then one SIMD
/// lane solved in order, with its particles loaded a row segment at a time and transposed,
/// instead of gathered one particle per lane and level; the runs share nothing, so running
/// them side by side is the same sweep.
pub(super) fn strips<B: Batch>(items: &[B::Item], ids: &[u32]) -> Option<Group<B>> {
    let ends = |id: u32| B::particles(&items[id as usize]);
    let continues = |x: u32, y: u32| ends(x).iter().zip(ends(y)).all(|(p, q)| p + 1 == *q);
    let runs: Vec<&[u32]> = ids.chunk_by(|&x, &y| continues(x, y)).collect();
    let length = runs.first()?.len();
    let offset = |id: u32| ends(id)[1].checked_sub(ends(id)[0]);
    let d = offset(ids[0])?;
    let span = |run: &[u32]| ends(run[0])[0]..ends(run[0])[0] + (length as u32 - 1) + d + 1;
    let regular = runs
        .iter()
        .all(|run| run.len() == length && ends(run[0]).len() == 2 && offset(run[0]) == Some(d));
    let disjoint = runs.windows(2).all(|w| span(w[0]).end <= span(w[1]).start);
    if !(regular && disjoint && runs.len().is_multiple_of(LANES as usize) && (1..=LANES).contains(&d) && length >= LANES as usize) {
        return None;
    }
    let batches = runs
        .chunks(LANES as usize)
        .map(|lanes| {
            let mut strip = B::default();
            for step in 0..length {
                lanes.iter().for_each(|run| strip.push(run[step], items[run[step] as usize]));
            }
            strip
        })
        .collect();
    Some(Group {
        batches,
        chained: true,
        ..Group::default()
    })
}

/// Whether more than a third of the neighbours in a level lie at least [`STRIDED`] particles
/// apart (a third: second-neighbour edges along rows come in adjacent pairs, one per chain).
pub(super) fn is_strided<B: Batch>(group: &Group<B>) -> bool {
    let (mut strided, mut pairs) = (0usize, 0usize);
    for batch in &group.batches {
        let first = |i: usize| B::particles(&batch.get(i))[0];
        for i in 1..batch.len() {
            pairs += 1;
            strided += (first(i).abs_diff(first(i - 1)) >= STRIDED) as usize;
        }
    }
    strided * 3 > pairs
}

/// Level-schedules the constraints `items` (model ids `ids`) in order into one group, a run at
/// a time (see [`run_end`]: consecutive constraints each one particle further, such as the
/// edges along a row). A run goes to the lowest level not below `earliest` of its members and
/// after every earlier constraint sharing a particle with any of them. Placing whole runs keeps
/// a row of edges in one level even where its later edges would be free earlier (the diagonals
/// of a sheet's lower half each start at a different row), so levels stay contiguous runs; any
/// level assignment that respects shared particles is the same sweep.
/// `scratch` (one entry per particle, all zero) holds 1 + the last level on each particle and
/// is left zeroed.
pub(super) fn level_schedule<B: Batch>(items: &[B::Item], ids: &[u32], scratch: &mut [u32], earliest: impl Fn(usize) -> u32) -> Group<B> {
    let mut group = Group::default();
    let mut start = 0;
    while start < items.len() {
        let run = start..run_end::<B>(items, start);
        let touched = || run.clone().flat_map(|k| B::particles(&items[k]));
        let floor = run.clone().map(&earliest).max().unwrap_or(0);
        let level = touched().map(|&p| scratch[p as usize]).fold(floor, u32::max);
        touched().for_each(|&p| scratch[p as usize] = level + 1);
        if group.batches.len() <= level as usize {
            group.batches.resize_with(level as usize + 1, B::default);
        }
        run.clone().for_each(|k| group.batches[level as usize].push(ids[k], items[k]));
        start = run.end;
    }
    items.iter().flat_map(B::particles).for_each(|&p| scratch[p as usize] = 0);
    group
}

/// End (exclusive) of the run of constraints starting at `start`: each next constraint touches
/// the previous one's particles one further. Member i then touches first + i, so two members
/// would share a particle once the run is as long as two of the first's particles are apart;
/// the run stops before that.
pub(super) fn run_end<B: Batch>(items: &[B::Item], start: usize) -> usize {
    let first = B::particles(&items[start]);
    let closest = first
        .iter()
        .flat_map(|&p| first.iter().filter(move |&&q| q > p).map(move |&q| (q - p) as usize))
        .min()
        .unwrap_or(usize::MAX);
    let continues = |k: usize| {
        let (before, next) = (B::particles(&items[k - 1]), B::particles(&items[k]));
        before.len() == next.len() && before.iter().zip(next).all(|(p, q)| p + 1 == *q)
    };
    let mut end = start + 1;
    while end < items.len() && end - start < closest && continues(end) {
        end += 1;
    }
    end
}
