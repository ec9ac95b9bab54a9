//! The per-particle passes eight particles at a time, in the scalar passes' operations.

use std::arch::x86_64::*;
use std::ops::Range;

use glam::Vec3;

use super::Frame;
use crate::sim::collision::{Collider, PosedCollider};

/// x, y, z of eight particles.
type Xyz = [__m256; 3];

/// Loads three arrays at `i`. (Plain statements throughout this module: a closure would
/// not inherit AVX2 and its intrinsics would become calls.)
///
/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions); the frame's pointers must be valid, the particles read or written in bounds, and
/// no other thread may touch them during the call.
#[inline(always)]
unsafe fn load([x, y, z]: [*mut f32; 3], i: usize) -> Xyz {
    // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
    // and unshared (see # Safety).
    unsafe { [_mm256_loadu_ps(x.add(i)), _mm256_loadu_ps(y.add(i)), _mm256_loadu_ps(z.add(i))] }
}

/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions); the frame's pointers must be valid, the particles read or written in bounds, and
/// no other thread may touch them during the call.
#[inline(always)]
unsafe fn store(arrays: [*mut f32; 3], i: usize, v: Xyz) {
    // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
    // and unshared (see # Safety).
    unsafe {
        for (p, v) in arrays.into_iter().zip(v) {
            _mm256_storeu_ps(p.add(i), v);
        }
    }
}

/// [`Frame::velocity`] of particles i..i + 8.
///
/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions); the frame's pointers must be valid, the particles read or written in bounds, and
/// no other thread may touch them during the call.
#[inline(always)]
unsafe fn velocity(frame: &Frame, i: usize) -> Xyz {
    // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
    // and unshared (see # Safety).
    unsafe {
        let pos = [frame.pos.x, frame.pos.y, frame.pos.z];
        let prev = [frame.prev.x, frame.prev.y, frame.prev.z];
        let (x, start, h) = (load(pos, i), load(prev, i), _mm256_set1_ps(frame.settings.h));
        let comp = load([frame.comp.x, frame.comp.y, frame.comp.z], i);
        let comp_prev = load([frame.comp_prev.x, frame.comp_prev.y, frame.comp_prev.z], i);
        let mut v = [_mm256_setzero_ps(); 3];
        for c in 0..3 {
            let moved = _mm256_add_ps(_mm256_sub_ps(x[c], start[c]), _mm256_sub_ps(comp[c], comp_prev[c]));
            v[c] = _mm256_div_ps(moved, h);
        }
        let max_speed = frame.settings.max_speed;
        if max_speed <= 0.0 {
            return v;
        }
        // glam's clamp_length_max: max · (v / |v|) where |v|² > max².
        let length_sq = length_squared(v);
        let max = _mm256_set1_ps(max_speed);
        let over = _mm256_cmp_ps::<_CMP_GT_OQ>(length_sq, _mm256_mul_ps(max, max));
        let length = _mm256_sqrt_ps(length_sq);
        for c in &mut v {
            *c = _mm256_blendv_ps(*c, _mm256_mul_ps(max, _mm256_div_ps(*c, length)), over);
        }
        v
    }
}

/// [`Frame::advance_one`] for the whole vectors of `range`; returns where the scalar rest
/// starts.
///
/// # Safety
/// The CPU must support AVX2; the frame's pointers must be valid, the particles read or written
/// in bounds, and no other thread may touch them during the call.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn advance(frame: &Frame, range: Range<usize>, finish: bool) -> usize {
    // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
    // and unshared (see # Safety).
    unsafe {
        let s = &frame.settings;
        let (air, h) = (_mm256_set1_ps(s.air), _mm256_set1_ps(s.h));
        let g = s.gravity * s.h;
        let gravity_h = [_mm256_set1_ps(g.x), _mm256_set1_ps(g.y), _mm256_set1_ps(g.z)];
        let (pos, prev, vel) = (
            [frame.pos.x, frame.pos.y, frame.pos.z],
            [frame.prev.x, frame.prev.y, frame.prev.z],
            [frame.vel.x, frame.vel.y, frame.vel.z],
        );
        let (comp, comp_prev) = (
            [frame.comp.x, frame.comp.y, frame.comp.z],
            [frame.comp_prev.x, frame.comp_prev.y, frame.comp_prev.z],
        );
        // As the scalar pass, the velocity is read (first substep) but not stored.
        let end = range.start + range.len() / 8 * 8;
        for i in (range.start..end).step_by(8) {
            let mut v = if finish { velocity(frame, i) } else { load(vel, i) };
            let mut x = load(pos, i);
            store(prev, i, x);
            let mut error = load(comp, i);
            store(comp_prev, i, error);
            let free = _mm256_cmp_ps::<_CMP_GT_OQ>(_mm256_loadu_ps(frame.pos.w.add(i)), _mm256_setzero_ps());
            for c in 0..3 {
                v[c] = _mm256_blendv_ps(v[c], _mm256_add_ps(_mm256_mul_ps(v[c], air), gravity_h[c]), free);
                // TwoSum of x + (comp + v h), as the scalar pass; pinned particles keep theirs.
                let step = _mm256_add_ps(error[c], _mm256_mul_ps(v[c], h));
                let sum = _mm256_add_ps(x[c], step);
                let virtual_step = _mm256_sub_ps(sum, x[c]);
                let lost = _mm256_add_ps(
                    _mm256_sub_ps(x[c], _mm256_sub_ps(sum, virtual_step)),
                    _mm256_sub_ps(step, virtual_step),
                );
                x[c] = _mm256_blendv_ps(x[c], sum, free);
                error[c] = _mm256_blendv_ps(error[c], lost, free);
            }
            store(pos, i, x);
            store(comp, i, error);
        }
        end
    }
}

/// |v|² as glam evaluates it: (x² + y²) + z².
///
/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions).
#[inline(always)]
unsafe fn length_squared(v: Xyz) -> __m256 {
    // SAFETY: the caller guarantees support for AVX2 (see # Safety).
    unsafe {
        _mm256_add_ps(
            _mm256_add_ps(_mm256_mul_ps(v[0], v[0]), _mm256_mul_ps(v[1], v[1])),
            _mm256_mul_ps(v[2], v[2]),
        )
    }
}

/// |v| as glam evaluates it.
///
/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions).
#[inline(always)]
unsafe fn length(v: Xyz) -> __m256 {
    // SAFETY: the caller guarantees support for AVX2 (see # Safety).
    unsafe { _mm256_sqrt_ps(length_squared(v)) }
}

/// Whether all of particles i..i + 8 pass the scalar contact's early out for every
/// collider (outside by more than the substep's travel: untouched), evaluated with the same
/// operations (a mesh: outside its box by more than the thickness and the travel); false
/// when a collider has no vector form here (capsules, boxes) or moves.
///
/// # Safety
/// The CPU must support AVX2 (this is only inlined into the module's `#[target_feature]`
/// functions); the frame's pointers must be valid, the particles read or written in bounds, and
/// no other thread may touch them during the call.
#[inline(always)]
unsafe fn clear_of_colliders(frame: &Frame, colliders: &[PosedCollider], i: usize) -> bool {
    // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
    // and unshared (see # Safety).
    unsafe {
        let x = load([frame.pos.x, frame.pos.y, frame.pos.z], i);
        let start = load([frame.prev.x, frame.prev.y, frame.prev.z], i);
        let travel = length([
            _mm256_sub_ps(start[0], x[0]),
            _mm256_sub_ps(start[1], x[1]),
            _mm256_sub_ps(start[2], x[2]),
        ]);
        let thickness = _mm256_set1_ps(frame.settings.thickness);
        let mut clear = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
        for posed in colliders {
            if posed.shift != Vec3::ZERO {
                return false;
            }
            if let Some((low, high)) = posed.mesh_bounds() {
                // Outside the mesh's box by more than the thickness and the travel on some
                // axis: no point of the path comes within the thickness of a triangle.
                let reach = _mm256_add_ps(thickness, travel);
                let mut outside = _mm256_setzero_ps();
                for axis in 0..3 {
                    let below = _mm256_cmp_ps::<_CMP_LT_OQ>(_mm256_add_ps(x[axis], reach), _mm256_set1_ps(low[axis]));
                    let above = _mm256_cmp_ps::<_CMP_GT_OQ>(_mm256_sub_ps(x[axis], reach), _mm256_set1_ps(high[axis]));
                    outside = _mm256_or_ps(outside, _mm256_or_ps(below, above));
                }
                clear = _mm256_and_ps(clear, outside);
                continue;
            }
            let surface = match posed.collider {
                Collider::Ground { height, .. } => _mm256_sub_ps(x[1], _mm256_set1_ps(height)),
                Collider::Sphere { center, radius, .. } => {
                    let c = [_mm256_set1_ps(center.x), _mm256_set1_ps(center.y), _mm256_set1_ps(center.z)];
                    let d = [_mm256_sub_ps(x[0], c[0]), _mm256_sub_ps(x[1], c[1]), _mm256_sub_ps(x[2], c[2])];
                    _mm256_sub_ps(length(d), _mm256_set1_ps(radius))
                }
                _ => return false,
            };
            let gap = _mm256_sub_ps(surface, thickness);
            let untouched = _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_GE_OQ>(gap, _mm256_setzero_ps()),
                _mm256_cmp_ps::<_CMP_LT_OQ>(travel, gap),
            );
            clear = _mm256_and_ps(clear, untouched);
        }
        _mm256_movemask_ps(clear) == 0xFF
    }
}

/// [`Frame::project_contacts`] for the whole vectors of `range`: eight particles clear of
/// every collider are skipped together (the scalar pass would leave them unchanged), the
/// others go one by one; returns where the scalar rest starts.
///
/// # Safety
/// The CPU must support AVX2; the frame's pointers must be valid, the particles read or written
/// in bounds, and no other thread may touch them during the call.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn project_contacts(frame: &Frame, colliders: &[PosedCollider], range: Range<usize>) -> usize {
    // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
    // and unshared (see # Safety).
    unsafe {
        let end = range.start + range.len() / 8 * 8;
        for i in (range.start..end).step_by(8) {
            if !clear_of_colliders(frame, colliders, i) {
                (i..i + 8).for_each(|p| frame.project_contact(colliders, p));
            }
        }
        end
    }
}

/// [`Frame::update_velocities`] for the whole vectors of `range`; returns where the scalar
/// rest starts.
///
/// # Safety
/// The CPU must support AVX2; the frame's pointers must be valid, the particles read or written
/// in bounds, and no other thread may touch them during the call.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn update_velocities(frame: &Frame, range: Range<usize>) -> usize {
    // SAFETY: the caller guarantees support for AVX2, every particle and slot touched in bounds
    // and unshared (see # Safety).
    unsafe {
        let vel = [frame.vel.x, frame.vel.y, frame.vel.z];
        let end = range.start + range.len() / 8 * 8;
        for i in (range.start..end).step_by(8) {
            store(vel, i, velocity(frame, i));
        }
        end
    }
}
