//! Mouse gestures: grab / drag / throw / pin on the cloth, and orbit / pan / zoom of the
//! camera. A gesture starts on a button press outside the egui panels and lasts until that
//! button is released, so a slider drag never reaches the cloth and a cloth drag that wanders
//! over a panel keeps going. A left press on the cloth grabs, on the background it orbits (pans
//! with Shift); between gestures the particle a press would grab is reported for a highlight,
//! and the wheel zooms toward the point under the cursor. A Ctrl+click pins or unpins: a pin
//! whose marker is within [`PIN_SNAP_PIXELS`] of the cursor first, else the particle under it.
//!
//! A press on a triangle grabs the cloth softly at the hit point ([`drape::sim::Cloth::grab_pick`]:
//! the point is pulled toward the cursor through a stiff spring spread over the triangle's
//! corners); a press near a particle that hits no triangle (a rope) holds that particle. The
//! held point follows the cursor on the camera-facing plane through the point where it was
//! grabbed: the target is where the cursor ray meets that plane. On release it is thrown with
//! the cursor's velocity over the last [`THROW_WINDOW`] seconds.
//!
//! A right-drag cuts: each frame the stroke from where the last segment ended to the cursor
//! becomes two camera rays, and the engine cuts every edge crossing the surface between them
//! ([`drape::sim::Cloth::cut`]), so what the user sees crossed on screen is what is cut. The
//! segment starts where the point of the cloth that was under the cursor at its end is now
//! (on screen), not at the old cursor pixel: the stroke is a blade, and cloth that swings
//! under a cursor held still is cut along the path the blade took through it.
//! The stroke stays visible as a fading trail for [`TRAIL_SECONDS`].
//!
//! A left press on a collider where no cloth is under the cursor moves the collider
//! ([`drape::sim::Cloth::move_collider`]): its centre follows the cursor on the camera-facing
//! plane through the centre, keeping the offset between the centre and the point pressed, and
//! the engine sweeps it there over the substeps so the cloth it meets is pushed and, through
//! friction, carried. Between gestures the collider a press would move is reported for a
//! highlight.

use std::collections::VecDeque;

use glam::Vec3;

use drape::sim::{Pick, Ray, TriangleHit};

use super::camera::OrbitCamera;
use super::input::InputFrame;
use super::state::{apply, Action, AppState};

/// Seconds of cursor motion averaged into the throw velocity.
pub const THROW_WINDOW: f64 = 0.1;
/// Seconds a cut trail stays visible.
pub const TRAIL_SECONDS: f64 = 0.6;
/// Cursor travel in pixels before a cut stroke segment is applied.
const CUT_STEP_PIXELS: f32 = 2.0;
/// Pick tolerance as a fraction of the camera distance (ray-to-particle, for ropes and edges).
const PICK_RADIUS_PER_DISTANCE: f32 = 0.015;
/// How near the cursor, in pixels, a pin's projection must be for Ctrl+click to take that pin
/// before the particle under the cursor: about the red marker's size (1.2 % of the camera
/// distance, some 12 px across) plus as much again of slack. A ray through the marker hits a
/// triangle whose nearest corner, once the curtain has swung, is often a neighbour of the pin.
const PIN_SNAP_PIXELS: f32 = 12.0;

/// Which mouse button started a gesture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Button {
    Left,
    Middle,
}

/// A point of the cloth being dragged.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    /// The picked particle (for a soft grab, the hit triangle's corner nearest the hit).
    pub particle: u32,
    /// Where the cursor wants the held point, in m.
    pub target: Vec3,
    plane_normal: Vec3,
    plane_point: Vec3,
    scene_version: u64,
    samples: VecDeque<(f64, Vec3)>,
}

impl Held {
    /// Cursor velocity in m/s over the last [`THROW_WINDOW`] seconds (zero if it rested).
    fn velocity(&self) -> Vec3 {
        let (Some(&(t1, p1)), Some(&(t0, p0))) = (self.samples.back(), self.samples.front()) else {
            return Vec3::ZERO;
        };
        if t1 - t0 < 1e-3 {
            return Vec3::ZERO;
        }
        (p1 - p0) / (t1 - t0) as f32
    }

    fn record(&mut self, time: f64) {
        self.samples.push_back((time, self.target));
        while self.samples.front().is_some_and(|&(t, _)| time - t > THROW_WINDOW) {
            self.samples.pop_front();
        }
    }
}

/// A collider being moved.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ColliderDrag {
    /// Index of the collider.
    index: usize,
    /// The camera-facing plane it moves in: through its centre at the press.
    plane_normal: Vec3,
    plane_point: Vec3,
    /// Centre minus the point of the plane under the cursor at the press (m), so the collider
    /// does not jump to put its centre under the cursor.
    offset: Vec3,
    scene_version: u64,
}

/// The gesture in progress.
#[derive(Debug, Clone, PartialEq)]
enum Gesture {
    Idle,
    Grab(Held),
    MoveCollider(ColliderDrag),
    Orbit(Button),
    Pan(Button),
    /// A cutting stroke.
    Cut(Stroke),
}

/// A cutting stroke in progress.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stroke {
    /// The cursor pixel where the last segment ended.
    end: glam::Vec2,
    /// The point of the cloth under the cursor there (a triangle and barycentrics), if any:
    /// where it is now is where the next segment starts.
    under: Option<TriangleHit>,
    /// Edges the stroke has cut so far.
    cut: usize,
}

impl Stroke {
    /// A segment ending at the cursor of `input`, over the cloth as it is now.
    fn ending_at(input: &InputFrame, camera: &OrbitCamera, state: &AppState, cut: usize) -> Self {
        Stroke {
            end: input.cursor,
            under: pick_under_cursor(input, camera, state).and_then(|p| p.hit),
            cut,
        }
    }

    /// Where the next segment starts on screen: where the cloth point that was under the
    /// cursor is now, or the pixel where the last segment ended when there was none.
    fn start(&self, input: &InputFrame, camera: &OrbitCamera, state: &AppState) -> glam::Vec2 {
        self.under
            .filter(|hit| (hit.triangle as usize) < state.cloth.triangles().len())
            .and_then(|hit| camera.project(state.cloth.point_on(hit), input.screen))
            .unwrap_or(self.end)
    }
}

/// The mouse controller: turns [`InputFrame`]s into camera moves and cloth interaction.
#[derive(Debug, Clone)]
pub struct Mouse {
    gesture: Gesture,
    /// The particle a left press would grab now (None over a panel, during a gesture or when
    /// nothing is under the cursor).
    hovered: Option<u32>,
    /// The point of the cloth a left press would grab now (not while Ctrl is held), for the
    /// grab radius's circle.
    hovered_point: Option<TriangleHit>,
    /// The collider a left press would move now (only when no particle is hovered).
    hovered_collider: Option<usize>,
    last_cursor: glam::Vec2,
    /// Recent cut stroke points: (time in s, cursor pixel); a `None` breaks the line.
    trail: VecDeque<(f64, Option<glam::Vec2>)>,
}

impl Default for Mouse {
    fn default() -> Self {
        Self {
            gesture: Gesture::Idle,
            hovered: None,
            hovered_point: None,
            hovered_collider: None,
            last_cursor: glam::Vec2::ZERO,
            trail: VecDeque::new(),
        }
    }
}

/// Where `ray` meets the plane through `point` with normal `normal` (None if parallel or
/// behind the ray's origin).
pub fn ray_plane(ray: &Ray, point: Vec3, normal: Vec3) -> Option<Vec3> {
    let denom = ray.direction.dot(normal);
    if denom.abs() < 1e-9 {
        return None;
    }
    let t = (point - ray.origin).dot(normal) / denom;
    (t >= 0.0).then(|| ray.at(t))
}

impl Mouse {
    /// The held particle and its target, for the grab line.
    pub fn held(&self) -> Option<&Held> {
        match &self.gesture {
            Gesture::Grab(held) => Some(held),
            _ => None,
        }
    }

    /// The particle under the cursor that a left press would grab, for the highlight.
    pub fn hovered(&self) -> Option<u32> {
        self.hovered
    }

    /// The point of the cloth a left press would grab, for the grab radius's circle.
    pub fn hovered_point(&self) -> Option<TriangleHit> {
        self.hovered_point
    }

    /// The collider to highlight: the one being moved, or the one a left press would move.
    pub fn highlighted_collider(&self) -> Option<usize> {
        match self.gesture {
            Gesture::MoveCollider(drag) => Some(drag.index),
            _ => self.hovered_collider,
        }
    }

    /// The visible cut trail: line strips of (age in s, pixel), oldest first.
    pub fn cut_trail(&self, now: f64) -> Vec<Vec<(f64, glam::Vec2)>> {
        let mut strips = vec![Vec::new()];
        for &(time, point) in &self.trail {
            match point {
                Some(p) => strips.last_mut().expect("starts non-empty").push((now - time, p)),
                None => strips.push(Vec::new()),
            }
        }
        strips.retain(|s| s.len() > 1);
        strips
    }

    /// Handles one frame of input.
    pub fn update(&mut self, input: &InputFrame, camera: &mut OrbitCamera, state: &mut AppState) {
        let delta = input.cursor - self.last_cursor;
        self.last_cursor = input.cursor;
        if input.wheel != 0.0 && !input.pointer_on_ui {
            camera.zoom_toward(input.wheel, input.cursor, input.screen);
        }
        self.gesture = match std::mem::replace(&mut self.gesture, Gesture::Idle) {
            Gesture::Idle => self.start(input, camera, state),
            Gesture::Orbit(button) => {
                camera.orbit(delta);
                keep_while_down(Gesture::Orbit(button), button, input)
            }
            Gesture::Pan(button) => {
                camera.pan(delta, input.screen.y);
                keep_while_down(Gesture::Pan(button), button, input)
            }
            Gesture::Grab(held) => drag(held, input, camera, state),
            Gesture::MoveCollider(moving) => move_collider(moving, input, camera, state),
            Gesture::Cut(stroke) => self.cut(stroke, input, camera, state),
        };
        while self.trail.front().is_some_and(|&(t, _)| input.time - t > TRAIL_SECONDS) {
            self.trail.pop_front();
        }
        // The player shows a recording: nothing under the cursor can be grabbed.
        let idle = matches!(self.gesture, Gesture::Idle) && !input.pointer_on_ui && !input.alt && state.playback.is_none();
        let pick = (idle && !input.ctrl).then(|| pick_under_cursor(input, camera, state)).flatten();
        self.hovered_point = pick.and_then(|p| p.hit);
        self.hovered = if idle && input.ctrl {
            particle_to_toggle(input, camera, state)
        } else {
            pick.map(|p| p.particle)
        };
        self.hovered_collider = match self.hovered {
            None if idle && !input.ctrl => collider_under_cursor(input, camera, state).map(|(k, _)| k),
            _ => None,
        };
    }

    /// Continues a cutting stroke: cuts from where the cloth under the end of its last segment
    /// is now to the cursor ([`Stroke::start`]), so both the cursor's motion and the cloth's
    /// motion under it cut. The status line gives the stroke's total and the cloth's torn
    /// edges in all, the figure the Stats panel shows (cuts and the tears they set off).
    fn cut(&mut self, mut stroke: Stroke, input: &InputFrame, camera: &OrbitCamera, state: &mut AppState) -> Gesture {
        let (from, to) = (stroke.start(input, camera, state), input.cursor);
        if from.distance(to) >= CUT_STEP_PIXELS {
            let cut = state.cut(&camera.ray(from, input.screen), &camera.ray(to, input.screen));
            if cut > 0 {
                state.report(cut_report(stroke.cut + cut, state.cloth.torn_edges(), state.pieces()));
            }
            if to != stroke.end {
                self.trail.push_back((input.time, Some(to)));
            }
            stroke = Stroke::ending_at(input, camera, state, stroke.cut + cut);
        }
        if input.down.right {
            Gesture::Cut(stroke)
        } else {
            self.trail.push_back((input.time, None));
            state.end_stroke();
            Gesture::Idle
        }
    }

    fn start(&mut self, input: &InputFrame, camera: &OrbitCamera, state: &mut AppState) -> Gesture {
        if input.pointer_on_ui {
            return Gesture::Idle;
        }
        let camera_move = |button| {
            if input.shift {
                Gesture::Pan(button)
            } else {
                Gesture::Orbit(button)
            }
        };
        if state.playback.is_some() {
            // A recording plays: the mouse only moves the camera.
            return if input.pressed.left || input.pressed.middle {
                camera_move(if input.pressed.left { Button::Left } else { Button::Middle })
            } else {
                Gesture::Idle
            };
        }
        if input.pressed.right {
            self.trail.push_back((input.time, Some(input.cursor)));
            state.begin_stroke();
            Gesture::Cut(Stroke::ending_at(input, camera, state, 0))
        } else if input.pressed.middle {
            camera_move(Button::Middle)
        } else if input.pressed.left && input.alt {
            camera_move(Button::Left)
        } else if input.pressed.left && input.ctrl {
            if let Some(i) = particle_to_toggle(input, camera, state) {
                apply(state, Action::TogglePin(i));
            }
            Gesture::Idle
        } else if input.pressed.left {
            // On the cloth a press grabs, on a collider it moves the collider; on the
            // background it turns the camera, as in most 3D viewers.
            let Some(pick) = pick_under_cursor(input, camera, state) else {
                return match collider_under_cursor(input, camera, state) {
                    Some((index, t)) => {
                        state.checkpoint("collider drag");
                        start_collider_move(index, t, input, camera, state)
                    }
                    None => camera_move(Button::Left),
                };
            };
            grab(&pick, camera, state, input.time)
        } else {
            Gesture::Idle
        }
    }
}

/// What is under the cursor, if anything.
fn pick_under_cursor(input: &InputFrame, camera: &OrbitCamera, state: &AppState) -> Option<Pick> {
    let ray = camera.ray(input.cursor, input.screen);
    state.cloth.pick(&ray, PICK_RADIUS_PER_DISTANCE * camera.distance)
}

/// The particle a Ctrl+click pins or unpins: a pin near the cursor ([`pin_near_cursor`]), so a
/// click on a red marker unpins it whatever the pose, else the particle under the cursor.
fn particle_to_toggle(input: &InputFrame, camera: &OrbitCamera, state: &AppState) -> Option<u32> {
    pin_near_cursor(input, camera, state).or_else(|| pick_under_cursor(input, camera, state).map(|p| p.particle))
}

/// The pinned particle whose projection lies within [`PIN_SNAP_PIXELS`] of the cursor, the
/// nearest when several do.
fn pin_near_cursor(input: &InputFrame, camera: &OrbitCamera, state: &AppState) -> Option<u32> {
    let particles = state.cloth.particles();
    (0..particles.len())
        .filter(|&i| particles.is_pinned(i))
        .filter_map(|i| Some((i, camera.project(particles.position(i), input.screen)?.distance(input.cursor))))
        .filter(|&(_, pixels)| pixels <= PIN_SNAP_PIXELS)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i as u32)
}

/// The collider under the cursor (the ground left out) and the ray parameter where the
/// cursor's ray enters it.
fn collider_under_cursor(input: &InputFrame, camera: &OrbitCamera, state: &AppState) -> Option<(usize, f32)> {
    state.cloth.pick_collider(&camera.ray(input.cursor, input.screen))
}

/// Starts moving collider `index`, entered by the cursor's ray at parameter `t`.
fn start_collider_move(index: usize, t: f32, input: &InputFrame, camera: &OrbitCamera, state: &AppState) -> Gesture {
    let ray = camera.ray(input.cursor, input.screen);
    let center = state.cloth.colliders()[index].position();
    let normal = camera.forward();
    let under_cursor = ray_plane(&ray, center, normal).unwrap_or(ray.at(t));
    Gesture::MoveCollider(ColliderDrag {
        index,
        plane_normal: normal,
        plane_point: center,
        offset: center - under_cursor,
        scene_version: state.scene_version,
    })
}

/// Continues moving a collider: its centre goes where the cursor's ray meets its plane, plus
/// the offset taken at the press; a target the engine refuses (outside the world) is skipped.
fn move_collider(moving: ColliderDrag, input: &InputFrame, camera: &OrbitCamera, state: &mut AppState) -> Gesture {
    if moving.scene_version != state.scene_version || moving.index >= state.cloth.colliders().len() {
        return Gesture::Idle; // the scene was replaced under the cursor
    }
    let ray = camera.ray(input.cursor, input.screen);
    if let Some(on_plane) = ray_plane(&ray, moving.plane_point, moving.plane_normal) {
        state.move_collider(moving.index, on_plane + moving.offset);
    }
    if input.down.left {
        Gesture::MoveCollider(moving)
    } else {
        Gesture::Idle
    }
}

fn keep_while_down(gesture: Gesture, button: Button, input: &InputFrame) -> Gesture {
    let down = match button {
        Button::Left => input.down.left,
        Button::Middle => input.down.middle,
    };
    if down {
        gesture
    } else {
        Gesture::Idle
    }
}

fn grab(pick: &Pick, camera: &OrbitCamera, state: &mut AppState, time: f64) -> Gesture {
    if !state.grab(pick) {
        return Gesture::Idle;
    }
    let Some(at) = state.cloth.grabbed_point() else {
        return Gesture::Idle;
    };
    let mut held = Held {
        particle: pick.particle,
        target: at,
        plane_normal: camera.forward(),
        plane_point: at,
        scene_version: state.scene_version,
        samples: VecDeque::new(),
    };
    held.record(time);
    Gesture::Grab(held)
}

fn drag(mut held: Held, input: &InputFrame, camera: &OrbitCamera, state: &mut AppState) -> Gesture {
    if held.scene_version != state.scene_version {
        return Gesture::Idle; // the cloth was replaced under the cursor
    }
    let ray = camera.ray(input.cursor, input.screen);
    if let Some(target) = ray_plane(&ray, held.plane_point, held.plane_normal) {
        held.target = target;
    }
    held.record(input.time);
    state.drag_to(held.target);
    if input.down.left {
        return Gesture::Grab(held);
    }
    if input.shift {
        state.release_pinned();
    } else {
        state.release(Some(held.velocity()));
    }
    Gesture::Idle
}

/// The status line after a cut: the stroke's cut edges, the cloth's torn edges in all (the
/// Stats panel's count) and its pieces.
fn cut_report(stroke: usize, torn: usize, pieces: usize) -> String {
    format!("cut {stroke} edge(s) this stroke · {torn} torn in all · {pieces} piece(s)")
}

#[cfg(test)]
mod tests {
    use glam::Vec2;

    use super::super::camera::Bounds;
    use super::super::input::{held_during_frame, Buttons};
    use super::*;
    use drape::preset::Preset;

    const SCREEN: Vec2 = Vec2::new(1280.0, 800.0);
    const LEFT: Buttons = Buttons {
        left: true,
        middle: false,
        right: false,
    };
    const NONE: Buttons = Buttons {
        left: false,
        middle: false,
        right: false,
    };
    const RIGHT: Buttons = Buttons {
        left: false,
        middle: false,
        right: true,
    };

    fn scene() -> (AppState, OrbitCamera) {
        let mut preset = Preset::default();
        let grid = preset.single_grid_mut().expect("the default scene is one grid");
        (grid.columns, grid.rows) = (11, 11);
        let state = AppState::new(preset, None, std::env::temp_dir().join("drape-no-presets")).unwrap();
        let bounds = Bounds::of(state.cloth.particles().positions()).unwrap();
        (state, OrbitCamera::framing(bounds, SCREEN.x / SCREEN.y))
    }

    fn frame(cursor: Vec2, time: f64, pressed: Buttons, down: Buttons) -> InputFrame {
        InputFrame {
            cursor,
            screen: SCREEN,
            time,
            pressed,
            down,
            released: NONE,
            ..InputFrame::default()
        }
    }

    fn pixel_of(state: &AppState, camera: &OrbitCamera, i: u32) -> Vec2 {
        camera.project(state.cloth.particles().position(i as usize), SCREEN).unwrap()
    }

    #[test]
    fn right_drag_across_the_curtain_cuts_it_in_two_and_leaves_a_trail() {
        let (mut state, mut camera) = scene();
        let mut mouse = Mouse::default();
        // Halfway between rows 5 and 6, from beyond the left edge to beyond the right edge.
        let y = 0.5 * (pixel_of(&state, &camera, 55).y + pixel_of(&state, &camera, 66).y);
        let (left, right) = (pixel_of(&state, &camera, 55).x - 40.0, pixel_of(&state, &camera, 65).x + 40.0);
        mouse.update(&frame(Vec2::new(left, y), 0.0, RIGHT, RIGHT), &mut camera, &mut state);
        for k in 1..=10 {
            let x = left + (right - left) * k as f32 / 10.0;
            mouse.update(&frame(Vec2::new(x, y), 0.01 * k as f64, NONE, RIGHT), &mut camera, &mut state);
        }
        mouse.update(&frame(Vec2::new(right, y), 0.11, NONE, NONE), &mut camera, &mut state);
        // The seam runs along the stroke across all 11 columns: 10 edges opened.
        assert_eq!(state.cloth.torn_edges(), 10, "{}", state.status.text);
        assert_eq!(state.pieces(), 2);
        // The status line gives the Stats panel's count of torn edges.
        let torn_in_all = format!("{} torn in all", state.cloth.torn_edges());
        assert!(state.status.text.contains(&torn_in_all), "{:?}", state.status.text);
        assert!(state.cloth.grab_state().is_none(), "a right-drag never grabs");
        let trail = mouse.cut_trail(0.2);
        assert_eq!(trail.len(), 1, "one stroke");
        assert!(trail[0].len() >= 10);
        let later = 0.11 + TRAIL_SECONDS + 0.01;
        mouse.update(&frame(Vec2::new(right, y), later, NONE, NONE), &mut camera, &mut state);
        assert!(mouse.cut_trail(later).is_empty(), "the trail fades out");
        // The stroke is one undo step: undo gives the whole cloth back.
        assert_eq!((state.history.len(), state.history.undo_label()), (1, Some("cut")));
        apply(&mut state, Action::Undo);
        assert_eq!((state.cloth.torn_edges(), state.pieces()), (0, 1));
    }

    /// A right-drag that cuts nothing (over the background) leaves no undo step.
    #[test]
    fn a_stroke_that_cuts_nothing_is_no_undo_step() {
        let (mut state, mut camera) = scene();
        let mut mouse = Mouse::default();
        let (from, to) = (Vec2::new(20.0, 20.0), Vec2::new(200.0, 30.0));
        mouse.update(&frame(from, 0.0, RIGHT, RIGHT), &mut camera, &mut state);
        mouse.update(&frame(to, 0.05, NONE, RIGHT), &mut camera, &mut state);
        mouse.update(&frame(to, 0.1, NONE, NONE), &mut camera, &mut state);
        assert_eq!(state.cloth.torn_edges(), 0);
        assert_eq!(state.history.len(), 0);
    }

    /// Issue 16 item 5: a right button held still over the cloth while the cloth moves under
    /// it (here slid sideways by three columns over twelve frames) cuts what passed under the
    /// cursor; nothing was cut when the segment ran from the old cursor pixel.
    #[test]
    fn a_cut_held_still_cuts_the_cloth_that_swings_under_it() {
        let (mut state, mut camera) = scene();
        let mut mouse = Mouse::default();
        // The middle of the quad between rows 5 and 6 and columns 5 and 6.
        let cursor = 0.25 * [60, 61, 71, 72].map(|i| pixel_of(&state, &camera, i)).iter().sum::<Vec2>();
        mouse.update(&frame(cursor, 0.0, RIGHT, RIGHT), &mut camera, &mut state);
        let width = state.cloth.particles().position(10).x - state.cloth.particles().position(0).x;
        for k in 1..=12 {
            for i in 0..state.cloth.particles().len() as u32 {
                let x = state.cloth.particles().position(i as usize);
                state.cloth.set_state(i, x + Vec3::X * width / 40.0, Vec3::ZERO).unwrap();
            }
            mouse.update(&frame(cursor, 0.01 * k as f64, NONE, RIGHT), &mut camera, &mut state);
        }
        // The blade ran between rows 5 and 6 from column 5.5 to column 2.5, across the
        // vertical edges of columns 5, 4 and 3, whose nearer ends moved onto it: the seam
        // opens the two edges between them, and its end vertices, split across their whole
        // fans, the next edge on either side (to columns 6 and 2).
        assert_eq!(state.cloth.torn_edges(), 4, "{}", state.status.text);
        assert_eq!(state.pieces(), 1, "a slit, not a cut through");
        mouse.update(&frame(cursor, 0.2, NONE, NONE), &mut camera, &mut state);
        let before = state.cloth.torn_edges();
        mouse.update(&frame(cursor, 0.3, RIGHT, RIGHT), &mut camera, &mut state);
        mouse.update(&frame(cursor, 0.4, NONE, RIGHT), &mut camera, &mut state);
        assert_eq!(state.cloth.torn_edges(), before, "a still blade over still cloth cuts nothing");
    }

    #[test]
    fn picking_through_the_camera_finds_the_particle_under_the_cursor() {
        let (state, camera) = scene();
        for i in [0, 5, 60, 64, 120] {
            let ray = camera.ray(pixel_of(&state, &camera, i), SCREEN);
            let pick = state.cloth.pick(&ray, 0.01).expect("hit");
            assert_eq!(pick.particle, i);
        }
        let sky = camera.ray(Vec2::new(5.0, 5.0), SCREEN);
        assert_eq!(state.cloth.pick(&sky, 0.01), None);
    }

    #[test]
    fn left_drag_moves_the_grabbed_point_to_the_cursor_plane() {
        let (mut state, mut camera) = scene();
        let mut mouse = Mouse::default();
        let start = pixel_of(&state, &camera, 60);
        mouse.update(&frame(start, 0.0, LEFT, LEFT), &mut camera, &mut state);
        let grab = state.cloth.grab_state().unwrap();
        assert_eq!(grab.particle, 60);
        assert!(grab.point.is_some(), "a press on a triangle grabs softly");
        let to = start + Vec2::new(120.0, -40.0);
        mouse.update(&frame(to, 0.05, NONE, LEFT), &mut camera, &mut state);
        let target = mouse.held().unwrap().target;
        // The target lies under the cursor and at the grabbed particle's depth plane.
        assert!((camera.project(target, SCREEN).unwrap() - to).length() < 0.5);
        let grabbed_at = state.cloth.particles().position(60); // not stepped yet: where it was grabbed
        assert!((target - grabbed_at).dot(camera.forward()).abs() < 1e-4);
        let jump = target.distance(grabbed_at);
        for _ in 0..30 {
            state.step();
        }
        // The hand pulls the held point toward the target, as far as the tethered curtain
        // reaches, and no harder than the grip holds: the cloth stays within the slip strain.
        let gap = state.cloth.grabbed_point().unwrap().distance(target);
        let strain = state.cloth.stats().max_strain;
        assert!(
            gap < 0.8 * jump,
            "held, the grabbed point is {gap} m from the target ({jump} m away)"
        );
        let slip = state.step_params().grab_slip_strain;
        assert!(strain < 1.2 * slip, "max strain {strain} past the grip's slip strain {slip}");
    }

    #[test]
    fn release_throws_with_cursor_velocity_and_shift_release_pins() {
        let (mut state, mut camera) = scene();
        let mut mouse = Mouse::default();
        let start = pixel_of(&state, &camera, 60);
        mouse.update(&frame(start, 0.0, LEFT, LEFT), &mut camera, &mut state);
        mouse.update(&frame(start + Vec2::new(50.0, 0.0), 0.05, NONE, LEFT), &mut camera, &mut state);
        let moved = mouse.held().unwrap().target - state.cloth.particles().position(60);
        let mut up = frame(start + Vec2::new(50.0, 0.0), 0.05, NONE, NONE);
        up.released = LEFT;
        mouse.update(&up, &mut camera, &mut state);
        assert_eq!(state.cloth.grab_state(), None);
        let v = state.cloth.particles().velocity(60);
        assert!((v - moved / 0.05).length() < 1e-3 * v.length().max(1.0), "{v} vs {}", moved / 0.05);

        let pinned = state.cloth.pinned_count();
        mouse.update(&frame(start, 1.0, LEFT, LEFT), &mut camera, &mut state);
        up.shift = true;
        mouse.update(&up, &mut camera, &mut state);
        assert_eq!(state.cloth.pinned_count(), pinned + 1);
    }

    /// Issue 31: a Shift tapped between two frames (down and up again before the frame of
    /// the release reads the keys) still pins; it was read as up and the particle thrown.
    #[test]
    fn a_shift_tapped_within_the_frame_of_the_release_pins() {
        let (mut state, mut camera) = scene();
        let mut mouse = Mouse::default();
        let start = pixel_of(&state, &camera, 60);
        mouse.update(&frame(start, 0.0, LEFT, LEFT), &mut camera, &mut state);
        mouse.update(&frame(start + Vec2::new(30.0, 0.0), 0.06, NONE, LEFT), &mut camera, &mut state);
        let pinned = state.cloth.pinned_count();
        let mut up = frame(start + Vec2::new(30.0, 0.0), 0.12, NONE, NONE);
        up.released = LEFT;
        // Up now, but pressed and released since the last frame.
        up.shift = held_during_frame(false, true, true);
        mouse.update(&up, &mut camera, &mut state);
        assert_eq!(state.cloth.grab_state(), None);
        assert_eq!(state.cloth.pinned_count(), pinned + 1, "the tap pinned the released particle");
    }

    /// Issue 31: a press a few pixels off the cloth's silhouette grabs the nearest cloth point
    /// (softly, at that corner, so the patch grab applies) instead of orbiting the camera.
    #[test]
    fn a_press_just_off_the_cloth_grabs_its_nearest_particle_instead_of_orbiting() {
        let (mut state, mut camera) = scene();
        let mut mouse = Mouse::default();
        let before = camera;
        let corner = pixel_of(&state, &camera, 120); // the bottom-right corner
        let off = corner + Vec2::new(6.0, 6.0);
        let exact = state.cloth.pick(&camera.ray(off, SCREEN), 0.0);
        assert_eq!(exact, None, "the press misses every triangle");
        mouse.update(&frame(off, 0.0, NONE, NONE), &mut camera, &mut state);
        assert_eq!(mouse.hovered(), Some(120), "the ring shows the particle the press takes");
        assert!(mouse.hovered_point().is_some(), "and where the grab radius's circle goes");
        mouse.update(&frame(off, 0.1, LEFT, LEFT), &mut camera, &mut state);
        let grab = state.cloth.grab_state().expect("the press grabs the cloth");
        assert_eq!(grab.particle, 120);
        assert!(grab.point.is_some(), "softly, at the corner");
        mouse.update(&frame(off + Vec2::new(30.0, 0.0), 0.2, NONE, LEFT), &mut camera, &mut state);
        assert_eq!(camera, before, "the camera did not orbit");
    }

    #[test]
    fn ctrl_click_toggles_a_pin_without_grabbing() {
        let (mut state, mut camera) = scene();
        let mut mouse = Mouse::default();
        let mut click = frame(pixel_of(&state, &camera, 0), 0.0, LEFT, LEFT);
        click.ctrl = true;
        assert!(state.cloth.particles().is_pinned(0));
        mouse.update(&click, &mut camera, &mut state);
        assert!(!state.cloth.particles().is_pinned(0));
        assert_eq!(mouse.held(), None);
        assert_eq!(state.cloth.grab_state(), None);
    }

    /// Issue 31: on a hanging curtain a Ctrl+click on a red pin marker pinned a neighbour (the
    /// hit triangle's nearest corner) instead of unpinning the pin. Here the free particles
    /// are moved forward and sideways so that, in front of each pin, lies a quad of
    /// neighbours: a click at the pin's pixel hits it.
    #[test]
    fn ctrl_click_on_a_pin_of_a_swung_curtain_unpins_it() {
        let (mut state, mut camera) = scene();
        let mut mouse = Mouse::default();
        let pins: Vec<u32> = (0..121).filter(|&i| state.cloth.particles().is_pinned(i as usize)).collect();
        assert_eq!(pins, [0, 10]);
        for i in (0..121).filter(|i| !pins.contains(i)) {
            let sideways = if i % 11 < 5 { -0.15 } else { 0.15 };
            let x = state.cloth.particles().position(i as usize) + Vec3::new(sideways, 0.05, 0.1);
            state.cloth.set_state(i, x, Vec3::ZERO).unwrap();
        }
        for (k, &pin) in pins.iter().enumerate() {
            let at = pixel_of(&state, &camera, pin);
            let under = pick_under_cursor(&frame(at, 0.0, NONE, NONE), &camera, &state).map(|p| p.particle);
            assert!(under.is_some_and(|i| i != pin), "a neighbour lies over pin {pin}: {under:?}");
            let mut hover = frame(at, k as f64, NONE, NONE);
            hover.ctrl = true;
            mouse.update(&hover, &mut camera, &mut state);
            assert_eq!(mouse.hovered(), Some(pin), "the ring shows the pin a Ctrl+click takes");
            let mut click = frame(at, k as f64 + 0.1, LEFT, LEFT);
            click.ctrl = true;
            mouse.update(&click, &mut camera, &mut state);
            assert!(!state.cloth.particles().is_pinned(pin as usize), "pin {pin} unpinned");
            mouse.update(&frame(at, k as f64 + 0.2, NONE, NONE), &mut camera, &mut state);
        }
        assert_eq!(state.cloth.pinned_count(), 0, "no neighbour was pinned instead");
    }

    #[test]
    fn presses_over_panels_never_reach_the_cloth() {
        let (mut state, mut camera) = scene();
        let mut mouse = Mouse::default();
        let before = camera;
        let mut press = frame(pixel_of(&state, &camera, 60), 0.0, LEFT, LEFT);
        press.pointer_on_ui = true;
        press.wheel = 1.0;
        mouse.update(&press, &mut camera, &mut state);
        assert_eq!(state.cloth.grab_state(), None);
        assert_eq!(camera, before);
    }

    /// The small curtain with a ball beside it, framed together.
    fn scene_with_ball() -> (AppState, OrbitCamera, Vec3) {
        let center = Vec3::new(0.9, 1.5, 0.0);
        let mut preset = Preset::default();
        let grid = preset.single_grid_mut().expect("the default scene is one grid");
        (grid.columns, grid.rows) = (11, 11);
        preset.colliders = vec![drape::sim::Collider::Sphere {
            center,
            radius: 0.2,
            motion: None,
        }];
        let state = AppState::new(preset, None, std::env::temp_dir().join("drape-no-presets")).unwrap();
        let ball = [center - Vec3::splat(0.2), center + Vec3::splat(0.2)];
        let bounds = Bounds::of(state.cloth.particles().positions().chain(ball)).unwrap();
        (state, OrbitCamera::framing(bounds, SCREEN.x / SCREEN.y), center)
    }

    /// Issue 18 item 4: hovering the ball lights it; a left-drag on it moves its centre along
    /// with the cursor on the camera-facing plane through it, and grabs no cloth.
    #[test]
    fn left_drag_on_a_collider_moves_it_with_the_cursor() {
        let (mut state, mut camera, center) = scene_with_ball();
        let mut mouse = Mouse::default();
        // A little off the centre, so the offset to the pressed point is kept.
        let press = camera.project(center + Vec3::new(0.05, 0.05, 0.0), SCREEN).unwrap();
        mouse.update(&frame(press, 0.0, NONE, NONE), &mut camera, &mut state);
        assert_eq!((mouse.hovered(), mouse.highlighted_collider()), (None, Some(0)));
        mouse.update(&frame(press, 0.1, LEFT, LEFT), &mut camera, &mut state);
        let to = press + Vec2::new(-60.0, 30.0);
        mouse.update(&frame(to, 0.2, NONE, LEFT), &mut camera, &mut state);
        assert_eq!(mouse.highlighted_collider(), Some(0), "lit while moved");
        state.step();
        let moved = state.cloth.colliders()[0].position();
        assert!((moved - center).dot(camera.forward()).abs() < 1e-4, "stays on its plane");
        // The point of the plane pressed keeps its offset from the centre.
        let pressed = ray_plane(&camera.ray(press, SCREEN), center, camera.forward()).unwrap();
        let pressed_now = camera.project(moved - (center - pressed), SCREEN).unwrap();
        assert!((pressed_now - to).length() < 0.5, "the pressed point is under the cursor");
        assert!(moved.distance(center) > 0.05);
        let mut up = frame(to, 0.3, NONE, NONE);
        up.released = LEFT;
        mouse.update(&up, &mut camera, &mut state);
        assert_eq!(state.cloth.grab_state(), None, "no cloth was grabbed");
        assert_eq!(mouse.highlighted_collider(), Some(0), "still under the cursor");
        mouse.update(&frame(Vec2::new(5.0, 5.0), 0.4, NONE, NONE), &mut camera, &mut state);
        assert_eq!(mouse.highlighted_collider(), None);
        // The drag is one undo step, taken at the press: undo puts the ball back.
        assert_eq!((state.history.len(), state.history.undo_label()), (1, Some("collider drag")));
        apply(&mut state, Action::Undo);
        assert_eq!(state.cloth.colliders()[0].position(), center);
    }

    /// Issue 19: a left-drag on the empty background did nothing.
    #[test]
    fn left_drag_on_the_background_orbits_and_hovering_the_cloth_highlights() {
        let (mut state, mut camera) = scene();
        let mut mouse = Mouse::default();
        let before = camera;
        mouse.update(&frame(Vec2::new(5.0, 5.0), 0.0, NONE, NONE), &mut camera, &mut state);
        assert_eq!(mouse.hovered(), None, "nothing under the cursor in the sky");
        mouse.update(&frame(Vec2::new(5.0, 5.0), 0.0, LEFT, LEFT), &mut camera, &mut state);
        mouse.update(&frame(Vec2::new(65.0, 25.0), 0.1, NONE, LEFT), &mut camera, &mut state);
        assert_ne!(camera.yaw, before.yaw);
        assert_ne!(camera.pitch, before.pitch);
        assert_eq!(state.cloth.grab_state(), None);
        mouse.update(&frame(Vec2::new(65.0, 25.0), 0.2, NONE, NONE), &mut camera, &mut state);

        let over = pixel_of(&state, &camera, 60);
        mouse.update(&frame(over, 0.3, NONE, NONE), &mut camera, &mut state);
        assert_eq!(mouse.hovered(), Some(60), "the particle a press would grab is highlighted");
        mouse.update(&frame(over, 0.4, LEFT, LEFT), &mut camera, &mut state);
        assert_eq!(mouse.hovered(), None, "no highlight while holding");
        assert_eq!(state.cloth.grab_state().map(|g| g.particle), Some(60));
    }

    #[test]
    fn alt_left_drag_orbits_and_shift_pans() {
        let (mut state, mut camera) = scene();
        let mut mouse = Mouse::default();
        let before = camera;
        let mut press = frame(Vec2::new(100.0, 100.0), 0.0, LEFT, LEFT);
        press.alt = true;
        mouse.update(&press, &mut camera, &mut state);
        mouse.update(&frame(Vec2::new(150.0, 100.0), 0.1, NONE, LEFT), &mut camera, &mut state);
        assert_ne!(camera.yaw, before.yaw);
        assert_eq!(camera.target, before.target);
        assert_eq!(state.cloth.grab_state(), None);
        mouse.update(&frame(Vec2::new(150.0, 100.0), 0.2, NONE, NONE), &mut camera, &mut state);

        let mut pan = frame(
            Vec2::new(150.0, 100.0),
            0.3,
            Buttons { middle: true, ..NONE },
            Buttons { middle: true, ..NONE },
        );
        pan.shift = true;
        mouse.update(&pan, &mut camera, &mut state);
        mouse.update(
            &frame(Vec2::new(190.0, 120.0), 0.4, NONE, Buttons { middle: true, ..NONE }),
            &mut camera,
            &mut state,
        );
        assert_ne!(camera.target, before.target);
    }
}
