//! Stretch viscosity: the internal damping of a fabric's stretch, applied once a frame.
//!
//! **Why.** A real fabric's stretch is strongly damped, and its stretch vibrations are far
//! faster than a frame (a 5 MPa cotton sheet carries stretch waves at √(E t/ρ_A) ≈ 130 m/s,
//! across a 1.6 m curtain in 12 ms). The solve has no such damping: with one Gauss–Seidel
//! sweep per substep a fine cloth (128 × 128) that has been disturbed rings with mesh-scale
//! stretch vibrations that nothing dissipates — measured: a curtain dragged out of its plane
//! and released kept 10 mJ of kinetic energy and 9–19 % strain near a pin for 15 s. XPBD's own
//! damping β (eq. 26) cannot be used for it: it scales every correction inside the
//! projection by 1/(1 + γ), so under one sweep per substep the cloth holds more strain against
//! its pins (a curtain with a third pin below its rest position: 42 % at β = 1, 13 % without).
//!
//! **The model.** Every stretch and shear edge (a, b) is a Kelvin–Voigt element: a dashpot of
//! coefficient b_e = τ k_e = τ/α_e in parallel with its spring (α_e the edge's compliance in
//! m/N, τ the material's `stretch_damping_time`). The dashpot is split from the XPBD solve and
//! integrated by backward Euler over the whole frame Δt, after the substeps: with n the edge's
//! direction, u_n = (v_b − v_a)·n its stretching speed and s = τ Δt (w_a + w_b),
//! ```text
//! u_n' = u_n / (1 + Δt b_e (w_a + w_b)) = u_n α_e / (α_e + s)
//! p = (u_n − u_n') / (w_a + w_b),   v_a += w_a p n,   v_b −= w_b p n
//! ```
//! (the second form never divides by α_e: a rigid edge, α_e = 0, loses its whole stretching
//! speed). The edges are taken one after another in model order (Gauss–Seidel, each seeing the
//! previous one's result) by one thread, so every thread count gives the same result.
//!
//! **What it leaves alone.** The impulses are equal, opposite and along the edge, so linear
//! and angular momentum are kept; each removes ½ m_ab (u_n² − u_n'²) of kinetic energy and
//! adds none. A cloth moving rigidly (falling, spinning) stretches no edge, u_n = 0, and is
//! untouched; motion across an edge (a flat sheet bending out of its plane, to first order)
//! is untouched. A mode of angular frequency ω is damped with ratio ζ = ω τ/2: the default
//! τ = 2·10⁻⁵ s gives ζ ≈ 1.3·10⁻⁴ at 2 Hz (a swing, a flag's flutter, a rubber sheet's bounce
//! stay as they are). On a 128 × 128 cotton curtain the frame's factor α_e/(α_e + s) is about
//! 1/50: the stretching speeds one sweep leaves are nearly all taken (3·10⁻⁶ s was the least
//! that stopped its ringing). One sweep a frame acts as a smoother: it removes a stretching
//! pattern that alternates from edge to edge at once and one as wide as the cloth only slowly.
//! More is not better: at τ = 10⁻⁴ s the default curtain with a third pin pulled 8 cm below
//! its rest position settled in a creased state at 52 % strain (13 % undamped, 18 % at 2·10⁻⁵).

use glam::Vec3;

use super::model::{EdgeKind, Model};
use super::params::Material;
use super::particles::Particles;

/// One end of an edge: position `x` (m), velocity `v` (m/s), inverse mass `w` (1/kg).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgeEnd {
    pub x: Vec3,
    pub v: Vec3,
    pub w: f32,
}

/// The velocities of an edge's ends `a`, `b` after its dashpot acted for a frame (see the
/// module docs): compliance `compliance` (m/N), `tau_dt` = τ Δt (s²). Unchanged when neither
/// end moves, τ is 0 or the ends coincide.
#[inline]
pub fn damp_edge(a: EdgeEnd, b: EdgeEnd, compliance: f32, tau_dt: f32) -> (Vec3, Vec3) {
    let w = a.w + b.w;
    let s = tau_dt * w;
    let d = b.x - a.x;
    let length_squared = d.length_squared();
    if s <= 0.0 || length_squared == 0.0 {
        return (a.v, b.v);
    }
    // With n = d/|d|: p n = u_n s/((α + s) w) n = ((v_b − v_a)·d) s/((α + s) w |d|²) d, no
    // square root needed.
    let impulse_per_length = (b.v - a.v).dot(d) * (s / ((compliance + s) * w * length_squared));
    (a.v + d * (impulse_per_length * a.w), b.v - d * (impulse_per_length * b.w))
}

/// Whether an edge of `kind` is damped: the in-plane ones (a `Bend` distance constraint
/// stands for bending, which the stretch viscosity must not slow).
pub fn is_damped(kind: EdgeKind) -> bool {
    matches!(kind, EdgeKind::Stretch | EdgeKind::Shear)
}

/// An edge the stretch viscosity acts on: its ends, compliance α (m/N) and τ (s).
#[derive(Debug, Clone, Copy)]
struct ViscousEdge {
    a: u32,
    b: u32,
    compliance: f32,
    tau: f32,
}

/// The engine's stretch viscosity: the damped edges, listed once and kept until the topology
/// or a material changes (a stiffness ramp changes the materials every frame it runs).
#[derive(Debug, Clone, Default)]
pub(crate) struct StretchViscosity {
    /// The topology version and materials `edges` were listed for.
    listed_for: Option<(u64, Vec<Material>)>,
    /// Every live in-plane distance constraint with τ > 0, in ascending id.
    edges: Vec<ViscousEdge>,
    /// Scratch: the particles' velocities (m/s) during the pass.
    velocities: Vec<Vec3>,
}

impl StretchViscosity {
    /// The frame's stretch viscosity on `particles` over the frame `dt` (s): the live distance
    /// constraints `live` (ascending ids of `model.distances`) of a cloth at `topology`
    /// with its materials `materials` (relisted only when either changed).
    pub fn damp(
        &mut self,
        particles: &mut Particles,
        model: &Model,
        live: impl Iterator<Item = u32>,
        materials: &[Material],
        topology: u64,
        dt: f32,
    ) {
        let listed = self.listed_for.as_ref().is_some_and(|(t, m)| *t == topology && m == materials);
        if !listed {
            self.edges = Self::list(model, live, materials);
            self.listed_for = Some((topology, materials.to_vec()));
        }
        if self.edges.is_empty() {
            return;
        }
        // The velocities as one array of vectors while the edges run (the particles keep three
        // arrays, and every access there is checked three times over).
        self.velocities.clear();
        self.velocities.extend((0..particles.len()).map(|i| particles.vel.get(i)));
        let [x, y, z, w] = particles.pos.arrays();
        let v = &mut self.velocities;
        for edge in &self.edges {
            let (a, b) = (edge.a as usize, edge.b as usize);
            let end = |i: usize, v: Vec3| EdgeEnd {
                x: Vec3::new(x[i], y[i], z[i]),
                v,
                w: w[i],
            };
            (v[a], v[b]) = damp_edge(end(a, v[a]), end(b, v[b]), edge.compliance, edge.tau * dt);
        }
        for (i, &v) in self.velocities.iter().enumerate() {
            particles.vel.set(i, v);
        }
    }

    /// The live in-plane edges whose material has τ > 0, with their compliances.
    fn list(model: &Model, live: impl Iterator<Item = u32>, materials: &[Material]) -> Vec<ViscousEdge> {
        live.filter_map(|id| {
            let c = &model.distances[id as usize];
            let material = &materials[model.distance_material(c)];
            (is_damped(c.kind) && material.stretch_damping_time > 0.0).then(|| ViscousEdge {
                a: c.a,
                b: c.b,
                compliance: material.distance_compliance(c),
                tau: material.stretch_damping_time,
            })
        })
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPS: f32 = 1e-6;

    #[test]
    fn the_stretching_speed_drops_by_alpha_over_alpha_plus_s_and_nothing_else_changes() {
        let (x_a, x_b) = (Vec3::ZERO, Vec3::new(0.3, 0.4, 0.0));
        let n = x_b.normalize();
        let across = Vec3::new(-0.4, 0.3, 0.0);
        let (v_a, v_b) = (Vec3::new(0.1, -0.2, 0.5), Vec3::new(0.1, -0.2, 0.5) + n * 2.0 + across * 3.0);
        let (w_a, w_b, alpha, tau_dt) = (2.0, 0.5, 1e-3, 4e-4);
        let (a, b) = damp_edge(
            EdgeEnd { x: x_a, v: v_a, w: w_a },
            EdgeEnd { x: x_b, v: v_b, w: w_b },
            alpha,
            tau_dt,
        );
        let s = tau_dt * (w_a + w_b);
        let expected = 2.0 * alpha / (alpha + s);
        assert!(
            ((b - a).dot(n) - expected).abs() < EPS,
            "stretching speed {} ≠ {expected}",
            (b - a).dot(n)
        );
        assert!(
            ((b - a).dot(across) - (v_b - v_a).dot(across)).abs() < EPS,
            "the motion across the edge changed"
        );
        assert!(
            ((b - a).z - (v_b - v_a).z).abs() < EPS,
            "the motion out of the edge's plane changed"
        );
        // Momentum (masses 1/w) and angular momentum about the origin are kept.
        let momentum = |a: Vec3, b: Vec3| a / w_a + b / w_b;
        let spin = |a: Vec3, b: Vec3| x_a.cross(a) / w_a + x_b.cross(b) / w_b;
        assert!((momentum(a, b) - momentum(v_a, v_b)).length() < EPS);
        assert!((spin(a, b) - spin(v_a, v_b)).length() < EPS);
        let energy = |a: Vec3, b: Vec3| 0.5 * (a.length_squared() / w_a + b.length_squared() / w_b);
        assert!(energy(a, b) < energy(v_a, v_b));
    }

    #[test]
    fn a_rigid_edge_loses_its_whole_stretching_speed_and_tau_zero_changes_nothing() {
        let (x_a, x_b) = (Vec3::ZERO, Vec3::X);
        let (v_a, v_b) = (Vec3::new(-1.0, 0.0, 0.0), Vec3::new(1.0, 2.0, 0.0));
        let (end_a, end_b) = (EdgeEnd { x: x_a, v: v_a, w: 1.0 }, EdgeEnd { x: x_b, v: v_b, w: 1.0 });
        let (a, b) = damp_edge(end_a, end_b, 0.0, 1e-6);
        assert_eq!((b - a).x, 0.0);
        assert_eq!((a.y, b.y), (0.0, 2.0));
        assert_eq!(damp_edge(end_a, end_b, 0.0, 0.0), (v_a, v_b));
        // A pinned end (w = 0) does not move; the free one takes the whole impulse.
        let pinned = EdgeEnd {
            x: x_a,
            v: Vec3::ZERO,
            w: 0.0,
        };
        let (a, b) = damp_edge(pinned, end_b, 0.0, 1.0);
        assert_eq!(a, Vec3::ZERO);
        assert_eq!(b, Vec3::new(0.0, 2.0, 0.0));
    }

    #[test]
    fn only_in_plane_edges_are_damped() {
        assert!(is_damped(EdgeKind::Stretch) && is_damped(EdgeKind::Shear) && !is_damped(EdgeKind::Bend));
    }
}
