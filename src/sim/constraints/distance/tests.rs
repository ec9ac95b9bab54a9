//! The kernels against each other (bit for bit) and against closed forms.

use super::{project_group, project_with, solve, DistanceBatch, DistanceItem, Kernel, PosW, SubstepConstants};
use crate::sim::constraints::Batch;
use crate::sim::particles::{Positions, Vectors};

/// A small deterministic generator (tests only need spread, not quality).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// [`project_with`] on particles given as `[x, y, z, w]`.
fn project_aos(kernel: Kernel, pos: &mut Vec<PosW>, prev: &[PosW], batch: &mut DistanceBatch, k: SubstepConstants, first: bool) {
    let mut soa = Positions::from(pos.as_slice());
    project_with(kernel, &mut soa, &Vectors::from(prev), batch, k, first);
    *pos = soa.to_vec();
}

const K: SubstepConstants = SubstepConstants {
    inv_h2: 900.0 * 900.0,
    damping_over_h: 0.0,
    bend_gamma: 0.0,
};

fn item(a: u32, b: u32, rest: f32, compliance: f32) -> DistanceItem {
    DistanceItem::stretch(a, b, rest, compliance)
}

/// 2·`pairs` random particles (some pinned) and one constraint per pair, so no particle is
/// shared; includes coincident ends, pinned–pinned pairs and zero rest lengths.
fn random_batch(rng: &mut Lcg, pairs: u32) -> (Vec<PosW>, DistanceBatch) {
    let mut pos: Vec<PosW> = (0..2 * pairs)
        .map(|_| {
            let w = if rng.next() < 0.2 { 0.0 } else { 0.1 + 2.0 * rng.next() };
            [rng.next() * 2.0 - 1.0, rng.next() * 3.0, rng.next() - 0.5, w]
        })
        .collect();
    let mut batch = DistanceBatch::default();
    for j in 0..pairs {
        let (a, b) = (2 * j, 2 * j + 1);
        match j % 7 {
            0 => pos[b as usize] = [pos[a as usize][0], pos[a as usize][1], pos[a as usize][2], pos[b as usize][3]],
            1 => (pos[a as usize][3], pos[b as usize][3]) = (0.0, 0.0),
            _ => {}
        }
        let rest = if j % 5 == 0 { 0.0 } else { rng.next() };
        let compliance = [0.0, 1e-4, 1.0][j as usize % 3];
        batch.push(j, item(a, b, rest, compliance));
    }
    (pos, batch)
}

#[test]
fn simd_kernel_matches_scalar_kernel_bit_for_bit_on_random_batches() {
    if Kernel::detect() == Kernel::Scalar {
        return; // nothing to compare on this CPU
    }
    let mut rng = Lcg(7);
    for pairs in [1, 7, 8, 9, 64, 203] {
        let (pos, batch) = random_batch(&mut rng, pairs);
        let [scalar, simd] = [Kernel::Scalar, Kernel::Avx2].map(|kernel| {
            let (mut p, mut b) = (pos.clone(), batch.clone());
            project_aos(kernel, &mut p, &pos, &mut b, K, true);
            project_aos(kernel, &mut p, &pos, &mut b, K, false);
            (p, b)
        });
        // Same operations in the same order: the lanes round exactly as the scalar loop.
        assert!(simd.0.iter().flatten().all(|v| v.is_finite()));
        assert_eq!(scalar.0, simd.0, "positions");
        assert_eq!(scalar.1.lambda, simd.1.lambda, "λ");
    }
}

/// Contiguous levels (slot j joins particles j and n + j) through the level loop of every
/// kernel: AVX2 vectors with a masked remainder, AVX-512 vectors with the end masked off;
/// both round exactly as the scalar loop. Sizes around eight and sixteen lanes.
#[test]
fn contiguous_levels_match_the_scalar_loop_bit_for_bit_at_every_width() {
    let mut rng = Lcg(5);
    for n in [1u32, 7, 8, 9, 15, 16, 17, 40, 203] {
        let (pairs, random) = random_batch(&mut rng, n);
        let mut pos = pairs.clone();
        let mut level = DistanceBatch::default();
        for j in 0..n {
            // The random batch's pair j, renumbered to particles j and n + j.
            (pos[j as usize], pos[(n + j) as usize]) = (pairs[2 * j as usize], pairs[2 * j as usize + 1]);
            let DistanceItem { rest, compliance, .. } = random.get(j as usize);
            level.push(j, item(j, n + j, rest, compliance));
        }
        assert!(level.is_contiguous());
        let run = |kernel: Kernel| {
            let (mut p, prev, mut batches) = (Positions::from(pos.as_slice()), Vectors::from(pos.as_slice()), [level.clone()]);
            for first in [true, false] {
                let start = super::SubstepStart {
                    prev: prev.read_only(),
                    comp: None,
                };
                // SAFETY: indices in range, single thread, kernel supported.
                unsafe { project_group(kernel, p.raw(), start, &mut batches, false, K, first) };
            }
            (p.to_vec(), batches[0].lambda.clone())
        };
        let scalar = run(Kernel::Scalar);
        // (The one constraint of n = 1 is degenerate: zero length.)
        assert!(n == 1 || scalar.0 != pos, "the level moved its particles");
        for kernel in Kernel::vector_kernels_for("contiguous_levels_match_the_scalar_loop_bit_for_bit_at_every_width") {
            assert!(run(kernel) == scalar, "{n} constraints: {kernel:?} differs from the scalar loop");
        }
    }
}

#[test]
fn every_kernel_solves_a_rigid_constraint_exactly_and_skips_degenerate_ones() {
    for kernel in [Kernel::Scalar, Kernel::detect()] {
        // Eight copies so the SIMD lanes run, plus one in the scalar remainder.
        let mut pos = Vec::new();
        let mut batch = DistanceBatch::default();
        for j in 0..9u32 {
            pos.push([0.0, j as f32, 0.0, 1.0]);
            pos.push([2.0, j as f32, 0.0, 3.0]);
            batch.push(j, item(2 * j, 2 * j + 1, 1.0, 0.0));
        }
        // Degenerate: the last pair coincides.
        pos[17] = pos[16];
        let prev = pos.clone();
        project_aos(kernel, &mut pos, &prev, &mut batch, K, true);
        for j in 0..8 {
            let (a, b) = (pos[2 * j], pos[2 * j + 1]);
            // C = 1 m shared 1 : 3 by inverse mass: a moves 0.25 m, b 0.75 m.
            assert!((a[0] - 0.25).abs() < 1e-6 && (b[0] - 1.25).abs() < 1e-6, "{kernel:?} {a:?} {b:?}");
            assert!((batch.lambda[j] + 0.25).abs() < 1e-6, "λ = −C/(w_a + w_b)");
        }
        assert_eq!(pos[16], prev[16]);
        assert_eq!(pos[17], prev[17]);
        assert_eq!(batch.lambda[8], 0.0);
    }
}

#[test]
fn first_sweep_overwrites_stale_lambda_and_later_sweeps_keep_the_compliance_term() {
    for kernel in [Kernel::Scalar, Kernel::detect()] {
        let mut pos = vec![[0.0, 0.0, 0.0, 1.0], [2.0, 0.0, 0.0, 1.0]];
        let prev = pos.clone();
        let mut batch = DistanceBatch::default();
        batch.push(0, item(0, 1, 1.0, 1e-6));
        batch.lambda[0] = 123.0;
        project_aos(kernel, &mut pos, &prev, &mut batch, K, true);
        let alpha_tilde = 1e-6 * K.inv_h2;
        let first = -1.0 / (2.0 + alpha_tilde);
        assert!((batch.lambda[0] - first).abs() < 1e-6 * first.abs());
        // Second sweep: Δλ = (−C − α̃λ)/(w + α̃) with the remaining C.
        let c = (pos[1][0] - pos[0][0]) - 1.0;
        project_aos(kernel, &mut pos, &prev, &mut batch, K, false);
        let expected = first + (-c - alpha_tilde * first) / (2.0 + alpha_tilde);
        assert!(
            (batch.lambda[0] - expected).abs() < 1e-5 * expected.abs(),
            "{} vs {expected}",
            batch.lambda[0]
        );
    }
}

/// |x_a − x_b| in f64.
fn length(x_a: [f32; 3], x_b: [f32; 3]) -> f64 {
    (0..3).map(|i| (x_a[i] as f64 - x_b[i] as f64).powi(2)).sum::<f64>().sqrt()
}

/// The update of one constraint in closed form: it moves the ends along ∇C (checked by central
/// differences) in inverse proportion to their masses, so momentum is kept; a rigid constraint
/// is met in one projection; Δλ = (−C − α̃λ)/(w_a + w_b + α̃); a constraint without a direction
/// or with nothing free to move changes nothing.
#[test]
fn solve_moves_the_ends_along_the_gradient_and_meets_a_rigid_constraint() {
    let (x_a, x_b) = ([0.3, -0.2, 0.5], [1.1, 0.4, -0.1]);
    let (w_a, w_b, rest) = (2.0, 0.5, 0.6);
    let c = length(x_a, x_b) - rest as f64;
    for (alpha_tilde, lambda) in [(0.0, 0.0), (0.8, -0.05)] {
        let update = solve(x_a, w_a, x_b, w_b, rest, alpha_tilde, lambda).unwrap();
        let expected = (-c - (alpha_tilde * lambda) as f64) / (w_a + w_b + alpha_tilde) as f64;
        assert!((update.delta_lambda as f64 - expected).abs() < 1e-6, "{update:?}");
        for i in 0..3 {
            let step = 1e-3;
            let nudged = |by: f32| std::array::from_fn(|k| if k == i { x_a[k] + by } else { x_a[k] });
            let gradient = (length(nudged(step), x_b) - length(nudged(-step), x_b)) / (2.0 * step as f64);
            let along = (w_a * update.delta_lambda) as f64 * gradient;
            assert!((update.delta_a[i] as f64 - along).abs() < 1e-5, "Δx_a[{i}] {update:?}");
            assert!((update.delta_a[i] / w_a + update.delta_b[i] / w_b).abs() < 1e-6, "momentum");
        }
        if alpha_tilde == 0.0 {
            let moved = |x: [f32; 3], d: [f32; 3]| std::array::from_fn(|k| x[k] + d[k]);
            assert!((length(moved(x_a, update.delta_a), moved(x_b, update.delta_b)) - rest as f64).abs() < 1e-6);
        }
    }
    assert_eq!(solve(x_a, w_a, x_a, w_b, rest, 0.0, 0.0), None, "coincident ends");
    assert_eq!(solve(x_a, 0.0, x_b, 0.0, rest, 0.0, 0.0), None, "both ends pinned, rigid");
}
