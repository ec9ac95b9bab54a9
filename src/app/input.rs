//! One frame of user input as plain data. [`read`] is the only place that asks macroquad;
//! everything downstream ([`super::interaction`]) works on an [`InputFrame`] so it can be
//! driven by tests.

use glam::Vec2;
use macroquad::input::{self, KeyCode, MouseButton};

/// State of the three mouse buttons.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Buttons {
    /// Left button.
    pub left: bool,
    /// Middle button (wheel click).
    pub middle: bool,
    /// Right button.
    pub right: bool,
}

/// What the user did this frame.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct InputFrame {
    /// Cursor position in pixels (y down) relative to the 3D viewport.
    pub cursor: Vec2,
    /// 3D viewport size in pixels.
    pub screen: Vec2,
    /// Seconds since start (for mouse velocities).
    pub time: f64,
    /// Buttons that went down this frame.
    pub pressed: Buttons,
    /// Buttons held.
    pub down: Buttons,
    /// Buttons that went up this frame.
    pub released: Buttons,
    /// Shift held at some moment of the frame ([`held_during_frame`]).
    pub shift: bool,
    /// Ctrl held at some moment of the frame.
    pub ctrl: bool,
    /// Alt held at some moment of the frame.
    pub alt: bool,
    /// Wheel steps (positive = away from the user = zoom in).
    pub wheel: f32,
    /// The cursor is over an egui panel (or egui is dragging a widget).
    pub pointer_on_ui: bool,
}

fn buttons(test: impl Fn(MouseButton) -> bool) -> Buttons {
    Buttons {
        left: test(MouseButton::Left),
        middle: test(MouseButton::Middle),
        right: test(MouseButton::Right),
    }
}

/// Whether a key was held at some moment of the frame, from its state now (`down`) and its
/// edges since the last frame (`pressed`, `released`). A key pressed and released between two
/// frames (a quick Shift tap at 16 fps, 60 ms a frame) is up now but left both edges: it
/// counts, so a modifier tapped with the mouse release is not lost. A key released during
/// the frame also counts: it was held when the frame began.
pub fn held_during_frame(down: bool, pressed: bool, released: bool) -> bool {
    down || pressed || released
}

/// The part of the window the 3D scene is drawn in, in pixels (y down).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewport {
    /// Top-left corner.
    pub origin: Vec2,
    /// Width and height.
    pub size: Vec2,
}

/// Reads this frame's input from macroquad, with the cursor relative to `viewport`.
/// `pointer_on_ui` comes from the egui pass.
pub fn read(time: f64, viewport: Viewport, pointer_on_ui: bool) -> InputFrame {
    let (x, y) = input::mouse_position();
    let wheel = input::mouse_wheel().1;
    // macroquad collects the pressed and released sets from the key events between two
    // frames and clears them after each, so both edges of a tap survive until this read.
    let held = |keys: [KeyCode; 2]| {
        keys.into_iter()
            .any(|k| held_during_frame(input::is_key_down(k), input::is_key_pressed(k), input::is_key_released(k)))
    };
    InputFrame {
        cursor: Vec2::new(x, y) - viewport.origin,
        screen: viewport.size,
        time,
        pressed: buttons(input::is_mouse_button_pressed),
        down: buttons(input::is_mouse_button_down),
        released: buttons(input::is_mouse_button_released),
        shift: held([KeyCode::LeftShift, KeyCode::RightShift]),
        ctrl: held([KeyCode::LeftControl, KeyCode::RightControl]),
        alt: held([KeyCode::LeftAlt, KeyCode::RightAlt]),
        // X11 reports ±1 per notch, other platforms pixels: only the sign is portable.
        wheel: if wheel == 0.0 { 0.0 } else { wheel.signum() },
        pointer_on_ui,
    }
}

#[cfg(test)]
mod tests {
    use super::held_during_frame;

    #[test]
    fn a_key_counts_as_held_when_down_or_with_any_edge_this_frame() {
        // (down, pressed, released): a tap inside the frame is up now with both edges.
        assert!(held_during_frame(false, true, true), "pressed and released within the frame");
        assert!(held_during_frame(true, false, false), "held through the frame");
        assert!(held_during_frame(true, true, false), "pressed this frame, still down");
        assert!(held_during_frame(false, false, true), "released this frame");
        assert!(!held_during_frame(false, false, false), "never touched");
    }
}
