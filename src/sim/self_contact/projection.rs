//! The projection of the candidate lists (the parent module's docs, "Response" and
//! "Vertex–triangle contacts", carry the theory): particle pairs and vertex–triangle contacts
//! pushed apart to their contact distance, with positional Coulomb friction.

use glam::Vec3;

use super::geometry::{closest_barycentric, point_at};
use super::lists::{Face, Pair};
use crate::sim::particles::{xyz, PosPtr, VecPtr};

/// Projects every pair once (see [`super`]); returns how many were in contact.
///
/// # Safety
/// Every pair's particles are in bounds of `pos` and `prev`, and no other thread touches the
/// particles during the call.
pub(super) unsafe fn project_pairs(pairs: &[Pair], mu: f32, pos: PosPtr, prev: VecPtr) -> u32 {
    let mut active = 0;
    for pair in pairs {
        let (ia, ib) = (pair.a as usize, pair.b as usize);
        // SAFETY: the caller guarantees the pair in bounds and unshared (see # Safety).
        unsafe {
            let (a, b) = (pos.get(ia), pos.get(ib));
            let weights = a[3] + b[3];
            let d = xyz(a) - xyz(b);
            let distance2 = d.length_squared();
            if distance2 >= pair.min_distance * pair.min_distance || distance2 == 0.0 || weights <= 0.0 {
                continue;
            }
            active += 1;
            let distance = distance2.sqrt();
            let n = d / distance;
            let depth = pair.min_distance - distance;
            let (ka, kb) = (a[3] / weights, b[3] / weights);
            let (xa, xb) = (xyz(a) + n * (depth * ka), xyz(b) - n * (depth * kb));
            let relative = (xa - prev.get(ia)) - (xb - prev.get(ib));
            let tangential = relative - n * relative.dot(n);
            let slip = tangential.length();
            let cancel = if slip > 0.0 {
                tangential * (mu * depth / slip).min(1.0)
            } else {
                Vec3::ZERO
            };
            pos.shift(ia, a, (xa - cancel * ka - xyz(a)).to_array());
            pos.shift(ib, b, (xb + cancel * kb - xyz(b)).to_array());
        }
    }
    active
}

/// The correction of a contact with unit `normal`, penetration `depth` (m) and slip `slide`
/// (m) of its two sides since the substep's start, per unit of inverse mass over the
/// contact's generalized inverse mass `weight`: (depth n − f Δx_t) / W, with Δx_t the slip's
/// tangential part and f = min(1, μ depth / |Δx_t|) (positional Coulomb friction, μ = `mu`).
pub(super) fn contact_push(normal: Vec3, depth: f32, slide: Vec3, mu: f32, weight: f32) -> Vec3 {
    let tangential = slide - normal * slide.dot(normal);
    let length = tangential.length();
    let cancel = if length > 0.0 {
        tangential * (mu * depth / length).min(1.0)
    } else {
        Vec3::ZERO
    };
    (normal * depth - cancel) / weight
}

/// The contact normal and depth d_min − distance (m; `min_distance` is d_min) of particle `p`
/// against the triangle whose point closest to it is q (`gap` = p − q; `over` when q lies
/// inside the face), with `n` the triangle's unit normal turned to the side `p` started the
/// substep on. Over the face: the normal `n` and the height of `p` over the
/// plane along `n` as the distance, so a particle that crossed the face is put back. Beside
/// the face and on its side: q on an edge or corner, the normal from q to `p` and the distance
/// |p − q| — so a particle on a fold's ridge, over neither face of it, is held by their edges
/// rather than sinking into the gap between them and popping back once over a face. `None`
/// beside the face on the far side of its plane (crossed elsewhere, not through this face).
fn face_contact(gap: Vec3, over: bool, n: Vec3, min_distance: f32) -> Option<(Vec3, f32)> {
    let height = gap.dot(n);
    if over {
        return Some((n, min_distance - height));
    }
    if height < 0.0 {
        return None;
    }
    let distance = gap.length();
    (distance > 0.0).then(|| (gap / distance, min_distance - distance))
}

/// Projects every vertex–triangle candidate once (see [`super`]); returns how many were in
/// contact.
///
/// # Safety
/// Every face's particles are in bounds of `pos` and `prev`, and no other thread touches the
/// particles during the call.
pub(super) unsafe fn project_faces(faces: &[Face], mu: f32, pos: PosPtr, prev: VecPtr) -> u32 {
    let mut active = 0;
    for face in faces {
        let (ip, corners) = (face.particle as usize, face.triangle.map(|v| v as usize));
        // SAFETY: the caller guarantees the face in bounds and unshared (see # Safety).
        unsafe {
            let (p, v) = (pos.get(ip), corners.map(|i| pos.get(i)));
            let x = v.map(xyz);
            // Beside the face and farther than d_min from it: no contact, known before the
            // normal and the side are computed (over the face, a particle may have crossed it
            // by more than d_min and is put back whatever its distance).
            let b = closest_barycentric(xyz(p), x);
            let gap = xyz(p) - point_at(x, b);
            let over = b.iter().all(|&c| c > 0.0);
            if !over && gap.length_squared() >= face.min_distance * face.min_distance {
                continue;
            }
            let Some(n) = (x[1] - x[0]).cross(x[2] - x[0]).try_normalize() else {
                continue;
            };
            let (p_start, x_start) = (prev.get(ip), corners.map(|i| prev.get(i)));
            let before = (p_start - x_start[0]).dot((x_start[1] - x_start[0]).cross(x_start[2] - x_start[0]));
            let now = gap.dot(n);
            let n = if before > 0.0 || (before == 0.0 && now >= 0.0) { n } else { -n };
            let Some((n, depth)) = face_contact(gap, over, n, face.min_distance) else {
                continue;
            };
            let weight = p[3] + (0..3).map(|k| b[k] * b[k] * v[k][3]).sum::<f32>();
            if depth <= 0.0 || weight <= 0.0 {
                continue;
            }
            active += 1;
            let slide = (xyz(p) - p_start) - (0..3).map(|k| (x[k] - x_start[k]) * b[k]).sum::<Vec3>();
            let push = contact_push(n, depth, slide, mu, weight);
            pos.shift(ip, p, (push * p[3]).to_array());
            for k in 0..3 {
                pos.shift(corners[k], v[k], (push * -(b[k] * v[k][3])).to_array());
            }
        }
    }
    active
}
