//! Tests of the hinge kernels: the vector widths against each other and the scalar loop, on
//! the solver's arrays and on the `[x, y, z, w]` copy, wherever a batch is cut.

use glam::Vec3;

use super::*;
use crate::sim::constraints::distance::{Kernel, SubstepConstants};
use crate::sim::constraints::Batch;
use crate::sim::particles::{AosPtr, PosW, Positions, Vectors};

/// Reproducible numbers in [0, 1) from `seed` (a 64-bit LCG's upper bits).
fn uniform_numbers(mut seed: u64) -> impl FnMut() -> f32 {
    move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// `hinges` random hinges on disjoint particles, every 7th with a degenerate wing and, when
/// `wild_rest`, every 13th with a rest angle beyond π (it takes the scalar path).
fn random_hinges(next: &mut impl FnMut() -> f32, hinges: u32, wild_rest: bool) -> (Vec<PosW>, HingeBatch) {
    let mut pos = Vec::new();
    let mut batch = HingeBatch::default();
    for j in 0..hinges {
        // Two triangles on the edge (−0.5, 0, 0)–(0.5, 0, 0), folded by a random angle.
        let fold = (next() - 0.5) * 6.0;
        let mut w = |pinned: bool| {
            let r = next();
            if pinned {
                0.0
            } else {
                0.5 + r
            }
        };
        let (w0, w1, w2, w3) = (w(j % 5 == 0), w(false), w(j % 3 == 0), w(false));
        let wing = Vec3::new(next() - 0.5, fold.cos(), fold.sin()) * (0.5 + next());
        let mut quad = [
            [next() - 0.5, -0.8, 0.05 * next(), w0],
            [wing.x, wing.y, wing.z, w1],
            [-0.5, 0.0, 0.0, w2],
            [0.5, 0.0, 0.0, w3],
        ];
        if j % 7 == 6 {
            quad[1] = [quad[2][0], quad[2][1], quad[2][2], quad[1][3]]; // degenerate wing
        }
        pos.extend(quad);
        let rest_angle = (next() - 0.5) * 6.2;
        batch.push(
            j,
            HingeItem {
                particles: [4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3],
                rest_angle: if wild_rest && j % 13 == 12 { 3.5 } else { rest_angle },
                compliance: [0.0, 1e-3, 1.0][j as usize % 3],
            },
        );
    }
    (pos, batch)
}

/// Two sweeps (the first resets λ) with `kernel` on the solver's arrays, or on the
/// `[x, y, z, w]` copy filled and read back with the copy passes.
fn two_sweeps(kernel: Kernel, on_copy: bool, pos: &[PosW], batch: &HingeBatch) -> (Vec<PosW>, Vec<f32>) {
    two_sweeps_of(kernel, on_copy, pos, std::slice::from_ref(batch))
}

/// [`two_sweeps`] of several batches of disjoint hinges, one after another in each sweep;
/// the multipliers of all, in order.
fn two_sweeps_of(kernel: Kernel, on_copy: bool, pos: &[PosW], batches: &[HingeBatch]) -> (Vec<PosW>, Vec<f32>) {
    let k = SubstepConstants {
        inv_h2: 900.0 * 900.0,
        damping_over_h: 0.0,
        bend_gamma: 0.0,
    };
    let (mut p, mut batches, prev) = (Positions::from(pos), batches.to_vec(), Vectors::from(pos));
    let mut copy = vec![[f32::NAN; 4]; pos.len()];
    let copy = AosPtr(copy.as_mut_ptr());
    // SAFETY: indices in range, single thread, kernel supported (checked by the caller),
    // hinges disjoint, the copy holds every particle.
    unsafe {
        if on_copy {
            copy_to_aos(kernel, p.raw(), copy, 0..pos.len());
        }
        for first in [true, false] {
            for b in &mut batches {
                match on_copy {
                    true => project_raw_aos(kernel, copy, prev.read_only(), b, k, first, first),
                    false => project_raw(kernel, p.raw(), prev.read_only(), b, k, first, first),
                }
            }
        }
        if on_copy {
            copy_from_aos(kernel, copy, p.raw(), 0..pos.len());
        }
    }
    (p.to_vec(), batches.into_iter().flat_map(|b| b.lambda).collect())
}

/// `batch` cut into two batches at slot `at`, each running its rest padded or not.
fn cut_at(batch: &HingeBatch, at: usize, padded: bool) -> [HingeBatch; 2] {
    let piece = |slots: std::ops::Range<usize>| {
        let mut piece = HingeBatch::default();
        slots.for_each(|i| piece.push(batch.id(i), batch.get(i)));
        if padded {
            piece.pad_rest();
        }
        piece
    };
    [piece(0..at), piece(at..batch.len())]
}

/// Hinges cut into batches anywhere, each running its rest as a padded vector, move bit for
/// bit as in one batch of whole vectors (which the threads rely on: a colour's parts end
/// where the particle bands do); run with the scalar code instead, the rests round
/// differently.
#[test]
fn a_padded_rest_rounds_like_a_whole_vector_wherever_the_batch_ends() {
    let name = "a_padded_rest_rounds_like_a_whole_vector_wherever_the_batch_ends";
    let mut next = uniform_numbers(5);
    // With rest angles beyond π: those hinges run the scalar code, whatever their vector.
    let (pos, batch) = random_hinges(&mut next, 48, true);
    for kernel in Kernel::vector_kernels_for(name) {
        for on_copy in [false, true] {
            let whole = two_sweeps(kernel, on_copy, &pos, &batch);
            let mut scalar_rests_differ = false;
            for at in 1..batch.len() {
                let padded = two_sweeps_of(kernel, on_copy, &pos, &cut_at(&batch, at, true));
                assert!(padded == whole, "{kernel:?}, copy {on_copy}: cut at {at}");
                scalar_rests_differ |= two_sweeps_of(kernel, on_copy, &pos, &cut_at(&batch, at, false)) != whole;
            }
            assert!(scalar_rests_differ, "{kernel:?}: the scalar code rounds like the vectors here");
        }
    }
}

#[test]
fn simd_hinges_match_scalar_hinges_on_random_batches() {
    let vector_kernels = Kernel::vector_kernels_for("simd_hinges_match_scalar_hinges_on_random_batches");
    if vector_kernels.is_empty() {
        return;
    }
    let mut next = uniform_numbers(11);
    // 21: a partial block and a scalar remainder at both widths; 40: a full AVX2 block and
    // one more vector, two AVX-512 vectors and an AVX2 one; 64: whole blocks of eight lanes;
    // 100: a whole AVX-512 block, two more vectors and a scalar rest; 84 particles for 21
    // hinges give the copy passes a scalar rest.
    for hinges in [3u32, 8, 21, 40, 64, 100] {
        for wild_rest in [true, false] {
            let (pos, batch) = random_hinges(&mut next, hinges, wild_rest);
            let scalar = two_sweeps(Kernel::Scalar, false, &pos, &batch);
            let simd = vector_kernels
                .iter()
                .map(|&kernel| two_sweeps(kernel, false, &pos, &batch))
                .collect::<Vec<_>>();
            for (&kernel, result) in vector_kernels.iter().zip(&simd) {
                assert!(
                    two_sweeps(kernel, true, &pos, &batch) == *result,
                    "{hinges} hinges, {kernel:?}: the copy's result differs"
                );
                for (s, v) in scalar.0.iter().zip(&result.0) {
                    for c in 0..4 {
                        assert!(v[c].is_finite() && (s[c] - v[c]).abs() <= 2e-5, "{s:?} vs {v:?}");
                    }
                }
                for (s, v) in scalar.1.iter().zip(&result.1) {
                    assert!(v.is_finite() && (s - v).abs() <= 1e-3 * s.abs() + 1e-9, "λ {s} vs {v}");
                }
            }
            // The widths agree bit for bit (a hinge with a rest angle beyond π runs the
            // scalar code whatever its vector holds).
            if simd.len() == 2 {
                assert!(simd[0] == simd[1], "{hinges} hinges: AVX-512 differs from AVX2");
            }
        }
    }
}

#[test]
fn wrap_difference_matches_wrap_angle() {
    for i in -700..=700 {
        let a = i as f32 * 0.0137;
        assert!((wrap_difference(a) - wrap_angle(a)).abs() < 1e-5, "{a}");
    }
}

/// One step of a rigid hinge (α̃ = 0) takes the angle most of the way to its rest angle and
/// keeps the centre of mass (Σ Δpᵢ / wᵢ = Δλ Σ ∇ᵢθ = 0); a compliant one moves less, and a
/// degenerate one not at all.
#[test]
fn a_hinge_step_closes_the_angle_and_keeps_the_centre_of_mass() {
    let fold = 0.6f32;
    let p = [
        Vec3::new(0.1, -0.8, 0.05),
        Vec3::new(-0.2, fold.cos(), fold.sin()) * 0.7,
        Vec3::new(-0.5, 0.0, 0.0),
        Vec3::new(0.5, 0.0, 0.0),
    ];
    let w = [1.0, 2.0, 0.5, 1.5];
    let angle = |p: [Vec3; 4]| crate::sim::constraints::bend::dihedral_angle(p[0], p[1], p[2], p[3]).unwrap();
    let rest_angle = angle(p) - 0.3;
    let rigid = correction(p, w, rest_angle, 0.0, 0.0).unwrap();
    let moved = std::array::from_fn(|i| p[i] + rigid.moves[i]);
    assert!((angle(moved) - rest_angle).abs() < 0.01, "{} against {rest_angle}", angle(moved));
    let momentum: Vec3 = (0..4).map(|i| rigid.moves[i] / w[i]).sum();
    assert!(momentum.length() < 1e-6, "{momentum}");
    let soft = correction(p, w, rest_angle, 1.0, 0.0).unwrap();
    assert!(soft.delta_lambda.abs() < rigid.delta_lambda.abs() && soft.delta_lambda * rigid.delta_lambda > 0.0);
    let flat_wing = [p[0], p[2], p[2], p[3]];
    assert!(correction(flat_wing, w, rest_angle, 0.0, 0.0).is_none());
}
