//! Wind and aerodynamic drag on the cloth's triangles.
//!
//! Each triangle with unit normal n and area A moving at the mean velocity v of its corners
//! feels the pressure drag of a flat plate in the relative wind u = w − v:
//! F = ½ ρ C_d A (u·n)|u·n| n, shared equally by its three corners (v_i += h F/3 · w_i).
//! Only the normal component acts, so cloth sliding edge-on through air feels nothing, while a
//! sheet facing the wind billows. The force is applied once per frame as an explicit impulse,
//! capped so no corner gains more normal speed than the relative wind had: drag can bring the
//! cloth up to the wind's speed but never past it, which keeps the explicit update stable for
//! any frame step. The wind speed w may gust:
//! w(t) = w₀ (1 + g sin(1.3 t) sin(0.7 t + 1)), deterministic in simulated time.

use glam::Vec3;

use super::params::SolverParams;
use super::particles::Particles;

/// Density of air at sea level and 15 °C in kg/m³.
pub const AIR_DENSITY: f32 = 1.225;

/// Wind velocity at simulated time `t` (s) under `params`.
pub fn wind_at(params: &SolverParams, t: f64) -> Vec3 {
    let t = t as f32;
    params.wind * (1.0 + params.wind_gust * (1.3 * t).sin() * (0.7 * t + 1.0).sin())
}

/// Adds `h` seconds of the drag of `triangles` in `wind` (m/s) to the free particles'
/// velocities; `drag_coefficient` is C_d (no drag at 0).
pub(crate) fn apply_drag(p: &mut Particles, triangles: &[[u32; 3]], h: f32, wind: Vec3, drag_coefficient: f32) {
    if drag_coefficient <= 0.0 {
        return;
    }
    let scale = 0.5 * AIR_DENSITY * drag_coefficient * h / 3.0;
    for tri in triangles {
        let [a, b, c] = tri.map(|i| i as usize);
        let [xa, xb, xc] = [a, b, c].map(|i| p.position(i));
        let cross = (xb - xa).cross(xc - xa);
        let twice_area = cross.length();
        if twice_area <= 1e-12 {
            continue; // degenerate triangle: no area, no force
        }
        let n = cross / twice_area;
        let relative = wind - (p.vel.get(a) + p.vel.get(b) + p.vel.get(c)) / 3.0;
        let normal_speed = relative.dot(n);
        // ½ρ C_d A (u·n)|u·n| n · h / 3 with A = |cross| / 2.
        let impulse = n * (scale * 0.5 * twice_area * normal_speed * normal_speed.abs());
        for i in [a, b, c] {
            let gain = (impulse * p.inverse_mass(i)).clamp_length_max(normal_speed.abs());
            p.vel.set(i, p.vel.get(i) + gain);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::cloth::Cloth;
    use crate::sim::model::ModelBuilder;
    use crate::sim::params::Material;

    /// One free triangle of area A and corner masses m in a steady wind u along its normal:
    /// after one frame of a single substep each corner has gained h·½ρC_dAu²/(3m).
    fn triangle_speed_after_one_step(normal_facing_wind: bool) -> (f32, f32) {
        let mut b = ModelBuilder::new();
        let mass = 0.01;
        let ids = [Vec3::ZERO, Vec3::X, Vec3::Y].map(|p| b.add_particle(p, mass));
        b.add_triangle(ids);
        let cloth_model = b.build().unwrap();
        let mut cloth = Cloth::new(cloth_model, &Material::default(), Vec::new()).unwrap();
        let wind = if normal_facing_wind {
            Vec3::new(0.0, 0.0, 4.0)
        } else {
            Vec3::new(4.0, 0.0, 0.0)
        };
        let params = SolverParams {
            substeps: 1,
            gravity: Vec3::ZERO,
            air_damping: 0.0,
            wind,
            aerodynamic_drag: 1.2,
            // Its velocity clamp (0.2 · thickness / h = 0.12 m/s at one substep) would cap
            // the speed under test.
            self_collision: false,
            ..SolverParams::default()
        };
        cloth.step(&params, &Material::default()).unwrap();
        let area = 0.5;
        // Corner mass: the point mass plus a third of the triangle's area times the density.
        let corner_mass = mass + area / 3.0 * Material::default().areal_density;
        let expected = params.dt * 0.5 * AIR_DENSITY * 1.2 * area * 16.0 / (3.0 * corner_mass);
        (cloth.particles().velocity(0).z, expected)
    }

    #[test]
    fn wind_on_a_facing_triangle_matches_flat_plate_drag() {
        let (speed, expected) = triangle_speed_after_one_step(true);
        assert!((speed - expected).abs() <= 1e-5 * expected, "{speed} vs {expected}");
    }

    #[test]
    fn wind_along_the_plane_exerts_no_force() {
        let (speed, _) = triangle_speed_after_one_step(false);
        assert_eq!(speed, 0.0);
    }

    #[test]
    fn gusts_vary_around_the_mean_and_steady_wind_does_not() {
        let steady = SolverParams {
            wind: Vec3::X * 5.0,
            ..SolverParams::default()
        };
        let gusty = SolverParams {
            wind_gust: 0.5,
            ..steady.clone()
        };
        let samples: Vec<f32> = (0..200).map(|k| wind_at(&gusty, k as f64 * 0.1).x).collect();
        assert!(samples.iter().all(|&w| (2.5..=7.5).contains(&w)), "gusts stay within ±50 %");
        assert!(samples.iter().any(|&w| w > 6.0) && samples.iter().any(|&w| w < 4.0));
        assert_eq!(wind_at(&steady, 12.3), steady.wind);
    }
}
