//! Tests of the constraint storage: schedules, parts, waits and topology edits.

use super::distance::{DistanceBatch, DistanceItem};
use super::hinge::HingeBatch;
use super::*;

fn item(a: u32, b: u32) -> DistanceItem {
    DistanceItem::stretch(a, b, 1.0, 0.0)
}

/// No batch may touch a particle twice, threads following the waits keep the sweep order,
/// and every slot points back at its constraint.
fn assert_valid(set: &ConstraintSet<DistanceBatch>) {
    for group in set.groups.iter().filter(|g| g.chained) {
        for strip in &group.batches {
            // Slot 8 s + k: lane k's constraint s, one particle further each step.
            let d = strip.b[0] - strip.a[0];
            for (slot, (&a, &b)) in strip.a.iter().zip(&strip.b).enumerate() {
                assert_eq!((a, b), (strip.a[slot % 8] + (slot / 8) as u32, a + d), "strip slot {slot}");
            }
        }
    }
    for group in set.groups.iter().filter(|g| !g.chained) {
        for batch in &group.batches {
            let mut seen = std::collections::HashSet::new();
            for (&a, &b) in batch.a.iter().zip(&batch.b) {
                assert!(seen.insert(a) && seen.insert(b), "particle shared inside a batch");
            }
        }
    }
    let (mut planned, mut hinges) = (set.clone(), no_hinges_like(set));
    let plan = plan_both(&mut planned, &mut hinges);
    assert_plan_keeps_the_sweep_order(&planned, &hinges, &plan);
    for id in 0..set.slots.len() as u32 {
        if let Some(slot) = set.slot(id) {
            assert_eq!(set.batch(slot).id[slot.index as usize], id);
        }
    }
}

/// The plan of a distance set on the arrays and a hinge set on the copy, as the store
/// registers them.
fn plan_both<A: Batch, B: Batch>(distances: &mut ConstraintSet<A>, hinges: &mut ConstraintSet<B>) -> SweepPlan {
    plan_sweep(&mut [distances, hinges], &[Placement::Arrays, Placement::Copy])
}

/// Each part's units of one sweep in order: (particles, waits).
type PartUnits = Vec<Vec<(Vec<u32>, Vec<Wait>)>>;

/// An empty set of hinges cut like `set`.
fn no_hinges_like<B: Batch>(set: &ConstraintSet<B>) -> ConstraintSet<HingeBatch> {
    let split = *set.bounds.last().unwrap() as usize;
    let mut hinges = ConstraintSet::with_parts(split, std::iter::empty(), set.parts);
    hinges.resize_particles(set.particles);
    hinges
}

/// Plays three sweeps of every part's units (passes, distance units, hinge units, in the
/// order [`plan_sweep`] lists) as one thread per part would, in interleavings the waits
/// allow (each thread in turn as far ahead as it may, and random ones), and checks that the
/// units touch every particle in the one-thread order and that the threads never all wait.
fn assert_plan_keeps_the_sweep_order<A: Batch, B: Batch>(distances: &ConstraintSet<A>, hinges: &ConstraintSet<B>, plan: &SweepPlan) {
    const SWEEPS: usize = 3;
    let parts = distances.parts;
    let own = |part: usize| -> Vec<u32> { (distances.bounds[part]..distances.bounds[part + 1]).collect() };
    // One sweep of each part, in order: (particles, waits); then the one-thread order of
    // all of them.
    let mut units: PartUnits = vec![Vec::new(); parts];
    let mut one_thread = Vec::new();
    let mut append = |units: &mut PartUnits, add: &dyn Fn(&mut PartUnits)| {
        let before: Vec<usize> = units.iter().map(Vec::len).collect();
        add(units);
        // Within a step of the order, part 0's units come first, then part 1's, ...
        for part in 0..parts {
            (before[part]..units[part].len()).for_each(|k| one_thread.push((part, k)));
        }
    };
    let passes = |k: usize| move |units: &mut PartUnits| (0..parts).for_each(|p| units[p].push((own(p), plan.pass_waits[p][k].clone())));
    for &step in &plan.order {
        match step {
            SweepStep::Pass(pass) => append(&mut units, &passes(pass as usize)),
            SweepStep::Set(0) => (0..distances.phase_count()).for_each(|g| append(&mut units, &|u| push_phase(distances, g, u))),
            SweepStep::Set(1) => (0..hinges.phase_count()).for_each(|g| append(&mut units, &|u| push_phase(hinges, g, u))),
            SweepStep::Set(k) => unreachable!("two sets registered, not {k}"),
            SweepStep::Serial => {}
        }
    }
    assert_eq!(plan.units, units.iter().map(|u| u.len() as u32).collect::<Vec<_>>());
    // Position of each part's unit k in the one-thread sweep.
    let mut position: Vec<Vec<usize>> = units.iter().map(|u| vec![0; u.len()]).collect();
    one_thread.iter().enumerate().for_each(|(order, &(p, k))| position[p][k] = order);
    let sweep_len = one_thread.len();
    let mut random = 0x9E37_79B9_u32;
    for schedule in 0..parts + 10 {
        let mut next = vec![0usize; parts];
        let mut last_order = vec![None::<usize>; distances.particles];
        let ready = |next: &[usize], p: usize| {
            let (sweep, k) = (next[p] / units[p].len(), next[p] % units[p].len());
            let met = |w: &Wait| (sweep * units[w.part as usize].len()) as i64 + w.units as i64 <= next[w.part as usize] as i64;
            next[p] < SWEEPS * units[p].len() && units[p][k].1.iter().all(met)
        };
        while (0..parts).any(|p| next[p] < SWEEPS * units[p].len()) {
            let candidates: Vec<usize> = (0..parts).filter(|&p| ready(&next, p)).collect();
            assert!(!candidates.is_empty(), "every thread waits (at units {next:?})");
            let part = if schedule < parts && candidates.contains(&schedule) {
                schedule
            } else {
                random = random.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                candidates[(random >> 16) as usize % candidates.len()]
            };
            let (sweep, k) = (next[part] / units[part].len(), next[part] % units[part].len());
            let order = sweep * sweep_len + position[part][k];
            for &p in &units[part][k].0 {
                let before = last_order[p as usize].replace(order);
                assert!(before.is_none_or(|b| b <= order), "particle {p} touched out of order");
            }
            next[part] += 1;
        }
    }
}

/// Appends phase `phase`'s units of `set`, part by part.
fn push_phase<B: Batch>(set: &ConstraintSet<B>, phase: usize, units: &mut PartUnits) {
    for (part, units) in units.iter_mut().enumerate() {
        let group = &set.groups[phase * set.parts + part];
        assert_eq!(group.waits.len(), group.unit_count(), "phase {phase}: waits per unit");
        for u in 0..group.unit_count() {
            let particles = group
                .unit(u)
                .iter()
                .flat_map(|b| (0..b.len()).flat_map(move |i| B::particles(&b.get(i)).to_vec()))
                .collect();
            units.push((particles, group.waits[u].clone()));
        }
    }
}

/// An n × n grid's horizontal and vertical edges, row by row (as a grid adds them).
fn grid(n: u32) -> Vec<DistanceItem> {
    let mut items = Vec::new();
    for r in 0..n {
        for c in 0..n {
            let i = r * n + c;
            if c + 1 < n {
                items.push(item(i, i + 1));
            }
            if r + 1 < n {
                items.push(item(i, i + n));
            }
        }
    }
    items
}

/// The order the batches are solved in, as the position of each model id.
fn solve_position(set: &ConstraintSet<DistanceBatch>) -> Vec<usize> {
    let mut position = vec![usize::MAX; set.slots.len()];
    for (k, id) in set.iter_batches().flat_map(|b| b.id.iter()).enumerate() {
        position[*id as usize] = k;
    }
    position
}

#[test]
fn phases_follow_kind_then_direction_and_keep_the_order_of_constraints_sharing_a_particle() {
    let n = 64;
    let items = grid(n);
    // The straightforward loop's order: stable sort by index distance.
    let mut sequential: Vec<usize> = (0..items.len()).collect();
    sequential.sort_by_key(|&id| items[id].ends[1] - items[id].ends[0]);
    for parts in [1, 2, 7, MAX_PARTS] {
        let set = ConstraintSet::<DistanceBatch>::with_parts((n * n) as usize, items.clone(), parts);
        assert_valid(&set);
        assert_eq!(set.phase_count(), 2, "horizontal, then vertical");
        let position = solve_position(&set);
        for (k, &x) in sequential.iter().enumerate() {
            for &y in &sequential[k + 1..] {
                let shares = items[x].ends.iter().any(|p| items[y].ends.contains(p));
                assert!(
                    !shares || position[x] < position[y],
                    "{parts} parts: {:?} before {:?}",
                    items[x],
                    items[y]
                );
            }
        }
    }
    // A level of the vertical phase is one row of edges; in two parts the top half of the
    // rows is the first part.
    let set = ConstraintSet::<DistanceBatch>::with_parts((n * n) as usize, items, 2);
    assert_eq!(set.groups[2].batches.len(), n as usize / 2);
    assert_eq!(set.groups[3].batches.len(), n as usize / 2 - 1);
    assert!(set.groups[2..4].iter().flat_map(|g| &g.batches).all(|b| b.len() == n as usize));
    // The horizontal phase's levels would be strided (one edge per row): it runs as strips of
    // eight rows, each row a lane solved left to right.
    assert!(set.groups[0].chained && set.groups[1].chained);
    assert!(set.groups[..2]
        .iter()
        .flat_map(|g| &g.batches)
        .all(|b| b.len() == 8 * (n as usize - 1)));
}

#[test]
fn parts_are_the_top_and_bottom_rows_and_the_second_trails_the_first() {
    let n = 64;
    let mut set = ConstraintSet::<DistanceBatch>::with_parts((n * n) as usize, grid(n), 2);
    let mut hinges = no_hinges_like(&set);
    let plan = plan_both(&mut set, &mut hinges);
    let half = n * n / 2;
    for phase in 0..set.phase_count() {
        let part = |p: usize| set.groups[phase * 2 + p].batches.iter().flat_map(|b| b.a.iter().copied());
        assert!(part(0).all(|a| a < half) && part(1).all(|a| a >= half), "phase {phase}");
    }
    assert_eq!(set.bounds(), &[0, half, n * n]);
    // Per sweep each part runs its prediction pass, its horizontal strips (one unit), its
    // vertical levels, its (empty) copy passes, its contacts pass. The top rows wait for
    // nothing of the bottom's until their last level, which shares the middle row with the
    // bottom's prediction and strips; the bottom's first level waits for the top's last one.
    let (top, bottom) = (&set.groups[2].waits, &set.groups[3].waits);
    let at_most = |waits: &[Wait], most: i32| waits.iter().all(|w| w.units <= most);
    assert!(top[..top.len() - 1].iter().all(|w| at_most(w, 0)));
    let wait = |part, units| vec![Wait { part, units }];
    assert_eq!(top[top.len() - 1], wait(1, 2), "the bottom's prediction and strips");
    assert_eq!(
        bottom[0],
        wait(0, 2 + top.len() as i32),
        "the top's prediction, strips and every level"
    );
    // What the bottom's contacts need of the top (its last level, touching the middle row)
    // the bottom's first level already waited for; the top's passes need nothing of the
    // bottom's in the same sweep (the bottom never touches the top's rows).
    assert!(at_most(&plan.pass_waits[1][Pass::Contacts as usize], 0));
    assert!(plan.pass_waits[0].iter().all(|w| at_most(w, 0)));
}

#[test]
fn four_parts_are_four_bands_of_rows_each_waiting_only_for_the_band_above_or_below() {
    let n = 64;
    let mut set = ConstraintSet::<DistanceBatch>::with_parts((n * n) as usize, grid(n), 4);
    let mut hinges = no_hinges_like(&set);
    plan_both(&mut set, &mut hinges);
    let band = n * n / 4;
    assert_eq!(set.bounds(), &[0, band, 2 * band, 3 * band, n * n]);
    for (g, group) in set.groups[..set.phase_count() * 4].iter().enumerate() {
        let part = (g % 4) as u32;
        let lowest = group.batches.iter().flat_map(|b| b.a.iter().copied());
        assert!(
            lowest.clone().all(|a| a / band == part),
            "group {g}: every edge starts in band {part}"
        );
        let neighbours = |w: &Wait| w.part.abs_diff(part) == 1;
        assert!(
            group.waits.iter().flatten().all(neighbours),
            "group {g} waits only for its neighbours"
        );
    }
    // Each band's first vertical level shares the row above it with the band above.
    for part in 1..4u32 {
        let first_level = &set.groups[4 + part as usize].waits[0];
        assert!(
            first_level.iter().any(|w| w.part == part - 1 && w.units > 0),
            "band {part}: {first_level:?}"
        );
    }
}

/// A curtain's distances and hinges (colours in chunks) together, before and after edits
/// that turn strips back into levels and send constraints to the tail.
#[test]
fn the_plan_keeps_the_sweep_order_of_distances_and_hinges() {
    use crate::sim::{cloth::Cloth, grid::GridSpec, params::Material};
    let spec = GridSpec {
        columns: 72,
        rows: 64,
        ..GridSpec::default()
    };
    let cloth = Cloth::new(spec.build().unwrap(), &Material::default(), Vec::new()).unwrap();
    let material = Material::default();
    let n = cloth.particles().len();
    let model = cloth.model();
    for parts in [2, 3, MAX_PARTS] {
        let distance_items = model
            .distances
            .iter()
            .map(|c| crate::sim::constraint_store::distance_item(c, &material));
        let hinge_items = model.hinges.iter().map(|h| crate::sim::constraint_store::hinge_item(h, &material));
        let mut distances = ConstraintSet::<DistanceBatch>::with_parts(n, distance_items, parts);
        let mut hinges = ConstraintSet::<HingeBatch>::with_parts(n, hinge_items, parts);
        if parts == 2 {
            assert!(hinges.groups.iter().any(|g| g.batches.len() > 1), "colours come in chunks");
        }
        let plan = plan_both(&mut distances, &mut hinges);
        assert_plan_keeps_the_sweep_order(&distances, &hinges, &plan);
        (0..40).for_each(|k| distances.remove(k * 97));
        (0..40).for_each(|k| hinges.remove(k * 89));
        // Two parts of 32 rows hold strips, which the removals turn into levels.
        assert_eq!(distances.waits_stale(), parts == 2);
        let plan = plan_both(&mut distances, &mut hinges);
        assert_plan_keeps_the_sweep_order(&distances, &hinges, &plan);
    }
}

#[test]
fn waits_keep_the_sweep_order_in_any_model_order() {
    // A grid with both diagonals, its edges shuffled: the parts are then no longer rows, but
    // the waits still order every shared particle.
    let n = 66;
    let mut items = grid(n);
    for r in 0..n - 1 {
        for c in 0..n - 1 {
            let i = r * n + c;
            items.push(item(i, i + n + 1));
            items.push(item(i + 1, i + n));
        }
    }
    let mut random = 12345u32;
    for k in (1..items.len()).rev() {
        random = random.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        items.swap(k, (random >> 8) as usize % (k + 1));
    }
    let mut planned = ConstraintSet::<DistanceBatch>::with_parts((n * n) as usize, items.clone(), 2);
    let mut hinges = no_hinges_like(&planned);
    plan_both(&mut planned, &mut hinges);
    assert!(planned.groups.iter().any(|g| g.waits.iter().flatten().any(|w| w.units > 0)));
    let mut set = ConstraintSet::<DistanceBatch>::new((n * n) as usize, items);
    assert_valid(&set);
    (0..50).for_each(|id| set.remove(id * 7));
    assert_valid(&set);
}

#[test]
fn small_cloths_keep_one_part_and_large_ones_at_most_sixteen() {
    let mut set = ConstraintSet::<DistanceBatch>::new(16, grid(4));
    set.set_parts(2);
    assert_eq!((set.parts(), set.max_parts()), (1, 1));
    assert_eq!(set.bounds(), &[0, 16]);
    let mut large = ConstraintSet::<DistanceBatch>::new(64 * 64, grid(64));
    large.set_parts(MAX_PARTS + 5);
    assert_eq!((large.parts(), large.max_parts()), (MAX_PARTS, MAX_PARTS));
}

#[test]
fn edits_keep_batches_valid_and_slots_consistent() {
    let n = 64;
    let mut set = ConstraintSet::<DistanceBatch>::with_parts((n * n) as usize, grid(n), 2);
    let count = set.len();
    // Id 0 is a horizontal edge: its group of strips turns back into levels.
    assert!(set.groups[set.slot(0).unwrap().group as usize].chained);
    set.remove(0);
    assert!(!set.groups[0].chained);
    set.remove(10);
    set.remove(10);
    set.resize_particles((n * n) as usize + 1);
    set.replace(11, item(n * n, 12));
    let added = set.insert(item(5, 7));
    assert_valid(&set);
    assert_eq!(set.slot(10), None);
    assert_eq!(set.slot(11).unwrap().group as usize, set.tail_group());
    let slot = set.slot(added).unwrap();
    assert_eq!(set.batch(slot).get(slot.index as usize), item(5, 7));
    assert_eq!(set.len(), count - 1);
    // Cut into other parts after the edits: every constraint keeps its data, the tail its
    // members, and the sweep its order.
    for parts in [1, 3] {
        let mut cut = set.clone();
        cut.set_parts(parts);
        assert_valid(&cut);
        assert_eq!(cut.len(), set.len());
        assert_eq!(cut.slot(11).unwrap().group as usize, cut.tail_group());
        for id in 0..set.slots.len() as u32 {
            let item_of = |s: &ConstraintSet<DistanceBatch>| s.slot(id).map(|slot| s.batch(slot).get(slot.index as usize));
            assert_eq!(item_of(&cut), item_of(&set), "constraint {id}");
        }
    }
}

/// Which hinges a vector kernel runs with the scalar code (a colour's own rest) does not
/// depend on the number of parts, and each part's hinges start in its band of rows, so a
/// kernel rounding unlike the scalar code gives the same results on any number of threads.
#[test]
fn hinges_are_cut_at_the_bands_and_the_same_ones_run_scalar_for_every_number_of_parts() {
    use crate::sim::{cloth::Cloth, grid::GridSpec, params::Material};
    let spec = GridSpec {
        columns: 90,
        rows: 70,
        ..GridSpec::default()
    };
    let cloth = Cloth::new(spec.build().unwrap(), &Material::default(), Vec::new()).unwrap();
    let cut = |parts: usize| {
        let mut hinges = cloth.constraint_store().hinges().clone();
        hinges.set_parts(parts);
        hinges
    };
    let scalar = |set: &ConstraintSet<HingeBatch>| {
        let mut ids: Vec<u32> = set.iter_batches().flat_map(|b| b.scalar_ids().to_vec()).collect();
        ids.sort_unstable();
        ids
    };
    let one = cut(1);
    assert!(one.iter_batches().any(|b| b.len() == CHUNK), "colours larger than a chunk");
    assert!(!scalar(&one).is_empty(), "colours with a rest");
    for parts in [2, 3, 7, MAX_PARTS] {
        let set = cut(parts);
        assert_eq!(scalar(&set), scalar(&one), "{parts} parts");
        // (In model order a hinge's wing may lie a row above its edge; cut at multiples of
        // a chunk, the parts were up to 16 rows off.)
        let bounds = set.bounds().to_vec();
        for (g, group) in set.groups[..set.phase_count() * parts].iter().enumerate() {
            let part = g % parts;
            let band = bounds[part]..bounds[part + 1];
            // The colour's own rest (at the end of the last part) aside.
            let cut_batches = group.batches.iter().filter(|b| b.scalar_ids().is_empty());
            let mut lowest = cut_batches.flat_map(|b| (0..b.len()).map(|i| *b.get(i).particles.iter().min().unwrap()));
            assert!(
                lowest.all(|p| band.contains(&p)),
                "{parts} parts, group {g}: a hinge outside band {part}"
            );
        }
    }
}

#[test]
fn greedy_phases_are_colours_of_independent_constraints_in_chunks() {
    // A type without a phase key is coloured: here hinges on a strip of quads.
    use super::hinge::HingeItem;
    let hinge = |k: u32| HingeItem {
        particles: [k, k + 3, k + 1, k + 2],
        rest_angle: 0.0,
        compliance: 0.0,
    };
    let set = ConstraintSet::<HingeBatch>::new(9000, (0..8000).step_by(2).map(hinge));
    for group in &set.groups {
        // A part of a colour: its chunks together share no particle.
        let mut seen = std::collections::HashSet::new();
        for batch in &group.batches {
            assert!(batch.len() <= CHUNK);
            assert!(batch.particles.iter().flatten().all(|&p| seen.insert(p)));
        }
    }
    assert!(
        set.groups.iter().any(|g| g.batches.len() > 1),
        "a colour of more than CHUNK is chunked"
    );
    assert_eq!(set.len(), 4000);
}
