//! An orbit camera in plain glam math: orbit, pan and zoom about a target, framing of a
//! bounding box, and the screen → world ray used for picking.
//!
//! macroquad's `Camera3D` has no screen-to-world mapping, so the camera owns its matrices:
//! clip = P·V·world with the OpenGL conventions macroquad uses (`perspective_rh_gl`,
//! `look_at_rh`). A pixel (x, y) maps to normalised device coordinates
//! (2x/w − 1, 1 − 2y/h); unprojecting it at depth −1 (near plane) and +1 (far plane) through
//! (P·V)⁻¹ gives two world points whose join is the ray under the cursor.

use glam::{Mat4, Vec2, Vec3, Vec4};

use drape::sim::Ray;

/// Vertical field of view in radians.
const FOV_Y: f32 = std::f32::consts::FRAC_PI_4; // 45°
const Z_NEAR: f32 = 0.01;
const Z_FAR: f32 = 500.0;
/// Pitch limit (radians) so the camera never flips over the pole.
const MAX_PITCH: f32 = 1.55;

/// A camera looking at `target` from `distance` metres, turned by `yaw` about the vertical and
/// raised by `pitch`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrbitCamera {
    /// The point looked at, in m.
    pub target: Vec3,
    /// Rotation about +y in radians (0 looks along −z, from the +z side).
    pub yaw: f32,
    /// Elevation in radians (positive looks down from above).
    pub pitch: f32,
    /// Distance from the target in m.
    pub distance: f32,
}

impl Default for OrbitCamera {
    fn default() -> Self {
        Self {
            target: Vec3::new(0.0, 1.0, 0.0),
            yaw: 0.0,
            pitch: 0.2,
            distance: 4.0,
        }
    }
}

/// World-space axis-aligned bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// Smallest corner.
    pub min: Vec3,
    /// Largest corner.
    pub max: Vec3,
}

impl Bounds {
    /// Bounds of the points (None for no points).
    pub fn of(points: impl IntoIterator<Item = Vec3>) -> Option<Self> {
        points.into_iter().fold(None, |b: Option<Bounds>, p| {
            Some(match b {
                Some(b) => Bounds {
                    min: b.min.min(p),
                    max: b.max.max(p),
                },
                None => Bounds { min: p, max: p },
            })
        })
    }

    /// The union with `other`.
    pub fn union(self, other: Bounds) -> Bounds {
        Bounds {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }
}

impl OrbitCamera {
    /// Eye position in m.
    pub fn eye(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        self.target + self.distance * Vec3::new(sy * cp, sp, cy * cp)
    }

    /// Unit vector from the eye toward the target.
    pub fn forward(&self) -> Vec3 {
        (self.target - self.eye()).normalize()
    }

    /// Camera right and up unit vectors in world space.
    pub fn right_up(&self) -> (Vec3, Vec3) {
        let right = self.forward().cross(Vec3::Y).normalize();
        (right, right.cross(self.forward()))
    }

    /// Vertical field of view in radians.
    pub fn fov_y(&self) -> f32 {
        FOV_Y
    }

    /// Near and far clip distances in m.
    pub fn clip_range(&self) -> (f32, f32) {
        (Z_NEAR, Z_FAR)
    }

    /// The projection × view matrix for a viewport of `aspect` = width / height.
    pub fn view_projection(&self, aspect: f32) -> Mat4 {
        Mat4::perspective_rh_gl(FOV_Y, aspect, Z_NEAR, Z_FAR) * Mat4::look_at_rh(self.eye(), self.target, Vec3::Y)
    }

    /// The world ray through pixel `cursor` of a `screen`-sized viewport (pixels, y down).
    pub fn ray(&self, cursor: Vec2, screen: Vec2) -> Ray {
        let inverse = self.view_projection(screen.x / screen.y).inverse();
        let ndc = Vec2::new(2.0 * cursor.x / screen.x - 1.0, 1.0 - 2.0 * cursor.y / screen.y);
        let unproject = |z: f32| {
            let p = inverse * Vec4::new(ndc.x, ndc.y, z, 1.0);
            p.truncate() / p.w
        };
        let near = unproject(-1.0);
        Ray {
            origin: near,
            direction: (unproject(1.0) - near).normalize(),
        }
    }

    /// Pixel position of world point `p` (None when behind the camera).
    pub fn project(&self, p: Vec3, screen: Vec2) -> Option<Vec2> {
        let clip = self.view_projection(screen.x / screen.y) * p.extend(1.0);
        (clip.w > 0.0).then(|| {
            let ndc = clip.truncate() / clip.w;
            Vec2::new((ndc.x + 1.0) * 0.5 * screen.x, (1.0 - ndc.y) * 0.5 * screen.y)
        })
    }

    /// Turns the camera by a mouse motion of `delta` pixels.
    pub fn orbit(&mut self, delta: Vec2) {
        self.yaw -= delta.x * 0.008;
        self.pitch = (self.pitch + delta.y * 0.008).clamp(-MAX_PITCH, MAX_PITCH);
    }

    /// Slides the target so the scene follows a mouse motion of `delta` pixels.
    pub fn pan(&mut self, delta: Vec2, screen_height: f32) {
        let (right, up) = self.right_up();
        let metres_per_pixel = 2.0 * self.distance * (FOV_Y * 0.5).tan() / screen_height.max(1.0);
        self.target += (-right * delta.x + up * delta.y) * metres_per_pixel;
    }

    /// Moves closer (positive `steps`) or further away, by 10 % per step.
    pub fn zoom(&mut self, steps: f32) {
        self.distance = (self.distance * 0.9f32.powf(steps)).clamp(0.05, 200.0);
    }

    /// Zooms by `steps` toward the point under `cursor` (pixels in a `screen`-sized viewport)
    /// on the plane through the target facing the camera: that point stays under the cursor,
    /// as in map and modelling tools, instead of everything moving toward the orbit centre.
    pub fn zoom_toward(&mut self, steps: f32, cursor: Vec2, screen: Vec2) {
        let ray = self.ray(cursor, screen);
        let forward = self.forward();
        let along = ray.direction.dot(forward);
        let before = self.distance;
        self.zoom(steps);
        if along.abs() < 1e-6 {
            return;
        }
        let focus = ray.origin + ray.direction * ((self.target - ray.origin).dot(forward) / along);
        // Scaling eye and target about the focus keeps the focus on the same view ray.
        self.target = focus + (self.target - focus) * (self.distance / before);
    }

    /// A camera slightly above and to the side that fits `bounds` in a viewport of `aspect`
    /// = width / height: the bounding sphere fits the narrower of the two fields of view.
    pub fn framing(bounds: Bounds, aspect: f32) -> Self {
        let center = (bounds.min + bounds.max) * 0.5;
        let radius = ((bounds.max - bounds.min).length() * 0.5).max(0.1);
        let half_fov_x = ((FOV_Y * 0.5).tan() * aspect).atan();
        let half_fov = half_fov_x.min(FOV_Y * 0.5);
        Self {
            target: center,
            yaw: 0.5,
            pitch: 0.3,
            distance: radius / half_fov.sin() * 1.05,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCREEN: Vec2 = Vec2::new(1280.0, 800.0);

    fn camera() -> OrbitCamera {
        OrbitCamera {
            target: Vec3::new(0.3, 1.2, -0.4),
            yaw: 0.7,
            pitch: 0.35,
            distance: 3.0,
        }
    }

    fn distance_to_ray(ray: &Ray, p: Vec3) -> f32 {
        let d = ray.direction.normalize();
        let t = (p - ray.origin).dot(d);
        (ray.origin + d * t).distance(p)
    }

    #[test]
    fn centre_pixel_ray_points_from_eye_to_target() {
        let cam = camera();
        let ray = cam.ray(SCREEN * 0.5, SCREEN);
        assert!(ray.direction.dot(cam.forward()) > 0.999_999);
        assert!(distance_to_ray(&ray, cam.target) < 1e-4);
        assert!(distance_to_ray(&ray, cam.eye()) < 1e-4);
    }

    #[test]
    fn unprojected_ray_passes_through_projected_point() {
        let cam = camera();
        for p in [Vec3::new(0.0, 1.0, 0.0), Vec3::new(-0.8, 0.3, 0.5), Vec3::new(1.0, 2.0, -1.0)] {
            let pixel = cam.project(p, SCREEN).expect("in front of the camera");
            let ray = cam.ray(pixel, SCREEN);
            assert!(distance_to_ray(&ray, p) < 1e-4, "{p}: {}", distance_to_ray(&ray, p));
            assert!((p - ray.origin).dot(ray.direction) > 0.0);
        }
    }

    #[test]
    fn right_of_screen_is_camera_right_and_top_is_up() {
        let cam = camera();
        let (right, up) = cam.right_up();
        let centre = cam.ray(SCREEN * 0.5, SCREEN).direction;
        let to_right = cam.ray(Vec2::new(SCREEN.x, SCREEN.y * 0.5), SCREEN).direction;
        let to_top = cam.ray(Vec2::new(SCREEN.x * 0.5, 0.0), SCREEN).direction;
        assert!((to_right - centre).dot(right) > 0.0);
        assert!((to_top - centre).dot(up) > 0.0);
        // Half the vertical field of view between the centre and the top edge.
        assert!((centre.angle_between(to_top) - FOV_Y * 0.5).abs() < 1e-4);
    }

    #[test]
    fn framing_shows_every_corner_of_the_bounds() {
        let bounds = Bounds {
            min: Vec3::new(-2.0, 0.0, -1.0),
            max: Vec3::new(2.0, 3.0, 1.0),
        };
        for screen in [SCREEN, Vec2::new(600.0, 900.0)] {
            check_corners_visible(bounds, screen);
        }
    }

    fn check_corners_visible(bounds: Bounds, screen: Vec2) {
        let cam = OrbitCamera::framing(bounds, screen.x / screen.y);
        for i in 0..8 {
            let pick = |bit: usize, lo: f32, hi: f32| if i & bit == 0 { lo } else { hi };
            let corner = Vec3::new(
                pick(1, bounds.min.x, bounds.max.x),
                pick(2, bounds.min.y, bounds.max.y),
                pick(4, bounds.min.z, bounds.max.z),
            );
            let px = cam.project(corner, screen).expect("in front");
            assert!(
                (0.0..=screen.x).contains(&px.x) && (0.0..=screen.y).contains(&px.y),
                "{corner} at {px}"
            );
        }
    }

    #[test]
    fn pan_moves_the_target_by_the_dragged_screen_distance() {
        let mut cam = camera();
        let before = cam.project(Vec3::ZERO, SCREEN).unwrap();
        cam.pan(Vec2::new(40.0, -25.0), SCREEN.y);
        let after = cam.project(Vec3::ZERO, SCREEN).unwrap();
        // Points at the target's depth follow the cursor exactly; the origin is close to it.
        assert!((after - before - Vec2::new(40.0, -25.0)).length() < 8.0, "{}", after - before);
    }

    /// Issue 19: the wheel zoomed toward the orbit centre, not the cursor.
    #[test]
    fn wheel_zoom_keeps_the_point_under_the_cursor_in_place() {
        let mut cam = camera();
        let cursor = Vec2::new(900.0, 200.0);
        let ray = cam.ray(cursor, SCREEN);
        let forward = cam.forward();
        let focus = ray.origin + ray.direction * ((cam.target - ray.origin).dot(forward) / ray.direction.dot(forward));
        cam.zoom_toward(3.0, cursor, SCREEN);
        assert!((cam.distance - 3.0 * 0.9f32.powi(3)).abs() < 1e-4);
        let after = cam.project(focus, SCREEN).unwrap();
        assert!(after.distance(cursor) < 0.5, "{after}");
        // The centre of the screen zooms straight in.
        let mut centred = camera();
        centred.zoom_toward(2.0, SCREEN * 0.5, SCREEN);
        assert!(centred.target.distance(camera().target) < 1e-4);
    }

    #[test]
    fn orbit_keeps_distance_and_clamps_pitch() {
        let mut cam = camera();
        cam.orbit(Vec2::new(100.0, 10_000.0));
        assert!((cam.eye().distance(cam.target) - 3.0).abs() < 1e-4);
        assert!(cam.pitch <= MAX_PITCH);
        cam.zoom(1.0);
        assert!((cam.distance - 2.7).abs() < 1e-5);
    }
}
