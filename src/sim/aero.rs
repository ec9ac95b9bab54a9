//! Wind and aerodynamic drag on the cloth's triangles.
//!
//! Each triangle with unit normal n and area A moving at the mean velocity v of its corners
//! feels the pressure drag of a flat plate in the relative wind u = w − v:
//! F = ½ ρ C_d A (u·n)|u·n| n, shared equally by its three corners (v_i += h F/3 · w_i).
//! Only the normal component acts, so cloth sliding edge-on through air feels nothing, while a
//! sheet facing the wind billows. The force is applied once per frame as an explicit impulse,
//! triangle after triangle (each seeing the velocities the ones before it left; on several
//! threads, part by part in turn, see [`drag_parts`]),
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

/// What the drag reads and writes of the particles: the particles themselves between
/// frames, or the solver's view of them inside a frame.
pub(crate) trait DragTarget {
    /// Position of particle `i` in m.
    fn position(&self, i: usize) -> Vec3;
    /// Inverse mass of particle `i` in 1/kg (0 when pinned).
    fn inverse_mass(&self, i: usize) -> f32;
    /// Velocity of particle `i` in m/s.
    fn velocity(&self, i: usize) -> Vec3;
    /// Sets the velocity of particle `i` in m/s.
    fn set_velocity(&mut self, i: usize, v: Vec3);
}

impl DragTarget for Particles {
    fn position(&self, i: usize) -> Vec3 {
        Particles::position(self, i)
    }

    fn inverse_mass(&self, i: usize) -> f32 {
        Particles::inverse_mass(self, i)
    }

    fn velocity(&self, i: usize) -> Vec3 {
        self.vel.get(i)
    }

    fn set_velocity(&mut self, i: usize, v: Vec3) {
        self.vel.set(i, v);
    }
}

/// One frame's drag: `h` seconds of it in `wind`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Drag {
    /// ½ ρ C_d h / 3 in kg·s/m³.
    scale: f32,
    /// Wind velocity in m/s.
    wind: Vec3,
}

impl Drag {
    /// `h` seconds of the drag of coefficient C_d = `drag_coefficient` in `wind` (m/s); `None`
    /// without drag (C_d ≤ 0).
    pub fn new(h: f32, wind: Vec3, drag_coefficient: f32) -> Option<Self> {
        (drag_coefficient > 0.0).then(|| Self {
            scale: 0.5 * AIR_DENSITY * drag_coefficient * h / 3.0,
            wind,
        })
    }

    /// Adds the drag of `triangles`, one after another, to the free particles' velocities.
    pub fn apply(&self, p: &mut impl DragTarget, triangles: &[[u32; 3]]) {
        for tri in triangles {
            let [a, b, c] = tri.map(|i| i as usize);
            let [xa, xb, xc] = [a, b, c].map(|i| p.position(i));
            let cross = (xb - xa).cross(xc - xa);
            let twice_area = cross.length();
            if twice_area <= 1e-12 {
                continue; // degenerate triangle: no area, no force
            }
            let n = cross / twice_area;
            let relative = self.wind - (p.velocity(a) + p.velocity(b) + p.velocity(c)) / 3.0;
            let normal_speed = relative.dot(n);
            // ½ρ C_d A (u·n)|u·n| n · h / 3 with A = |cross| / 2.
            let impulse = n * (self.scale * 0.5 * twice_area * normal_speed * normal_speed.abs());
            for i in [a, b, c] {
                let gain = (impulse * p.inverse_mass(i)).clamp_length_max(normal_speed.abs());
                p.set_velocity(i, p.velocity(i) + gain);
            }
        }
    }
}

/// Triangle index where the triangles of each particle range of `bounds` (as
/// [`crate::sim::constraints::ConstraintSet::bounds`]) begin, and the end, when `triangles`
/// are ordered by their lowest corner and every lowest corner lies below the last bound (a
/// grid built row by row): the drag then runs part by part in the triangles' own order, each
/// part touching only its own particles and the first ones of the next. `None` otherwise.
pub(crate) fn drag_parts(triangles: &[[u32; 3]], bounds: &[u32]) -> Option<Vec<usize>> {
    let lowest = |t: &[u32; 3]| t[0].min(t[1]).min(t[2]);
    let end = *bounds.last()?;
    let ordered = triangles.windows(2).all(|w| lowest(&w[0]) <= lowest(&w[1]));
    if !ordered || triangles.last().is_some_and(|t| lowest(t) >= end) {
        return None;
    }
    Some(bounds.iter().map(|&b| triangles.partition_point(|t| lowest(t) < b)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{Cloth, GridSpec, Material, ModelBuilder, Orientation, PinMode};

    /// Particles as plain arrays, for applying the drag by hand.
    struct Plain {
        positions: Vec<Vec3>,
        velocities: Vec<Vec3>,
        inverse_masses: Vec<f32>,
    }

    impl DragTarget for Plain {
        fn position(&self, i: usize) -> Vec3 {
            self.positions[i]
        }

        fn inverse_mass(&self, i: usize) -> f32 {
            self.inverse_masses[i]
        }

        fn velocity(&self, i: usize) -> Vec3 {
            self.velocities[i]
        }

        fn set_velocity(&mut self, i: usize, v: Vec3) {
            self.velocities[i] = v;
        }
    }

    /// On one, two and three threads the drag runs inside the frame, part by part in turn;
    /// the frame is bit for bit the drag applied over all triangles in order first and the
    /// frame run without drag after it. (One frame from rest: `set_state` clears the
    /// positions' compensation, which a later frame would carry.)
    #[test]
    fn the_drag_run_part_by_part_in_the_frame_is_the_drag_over_all_triangles_in_order() {
        let spec = GridSpec {
            columns: 72,
            rows: 64,
            orientation: Orientation::Vertical,
            pins: PinMode::TopEdge,
            ..GridSpec::default()
        };
        let params = |drag: f32, threads: u32| SolverParams {
            wind: Vec3::new(1.0, 0.5, 6.0),
            aerodynamic_drag: drag,
            threads,
            ..SolverParams::default()
        };
        let material = Material::default();
        for threads in [1, 2, 3] {
            let mut in_frame = Cloth::new(spec.build().unwrap(), &material, Vec::new()).unwrap();
            let mut by_hand = in_frame.clone();
            in_frame.step(&params(1.2, threads), &material).unwrap();
            assert_eq!(in_frame.stats().threads, threads);
            let p = by_hand.particles();
            let mut plain = Plain {
                positions: p.positions().collect(),
                velocities: (0..p.len()).map(|i| p.velocity(i)).collect(),
                inverse_masses: (0..p.len()).map(|i| p.inverse_mass(i)).collect(),
            };
            let before = plain.velocities.clone();
            Drag::new(params(1.2, threads).dt, params(1.2, threads).wind, 1.2)
                .unwrap()
                .apply(&mut plain, by_hand.triangles());
            assert!(plain.velocities != before, "the wind acts");
            for (i, (&x, &v)) in plain.positions.iter().zip(&plain.velocities).enumerate() {
                by_hand.set_state(i as u32, x, v).unwrap();
            }
            by_hand.step(&params(0.0, threads), &material).unwrap();
            let bits = |c: &Cloth| {
                c.particles()
                    .positions()
                    .flat_map(|x| x.to_array().map(f32::to_bits))
                    .collect::<Vec<_>>()
            };
            assert!(bits(&in_frame) == bits(&by_hand), "{threads} threads: the frames differ");
        }
    }

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
