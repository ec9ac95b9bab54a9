//! Keyboard shortcuts as data: which key does what ([`SHORTCUTS`]), and when keys reach them
//! at all ([`KeyRoute`]).
//!
//! Keys belong to a text field while one is being edited, and also in the frame where editing
//! starts or ends: egui reports focus after it has processed the frame's events, so a click
//! that focuses a field and the first keys typed into it can arrive together, and the Enter or
//! Tab that ends an edit is still a keystroke for the field. Shortcuts therefore fire only
//! when no widget had keyboard focus at the start of the frame and none wants it at the end.

use macroquad::input::KeyCode;

/// What a shortcut does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortcut {
    /// Space: run / pause.
    RunPause,
    /// N or →: one frame.
    Step,
    /// R: reset the scene.
    Reset,
    /// Shift+R: reset, keeping the pins as they are now.
    ResetKeepingPins,
    /// F: frame the scene.
    FrameView,
    /// H or F1: help overlay.
    ToggleHelp,
    /// Esc: close the help.
    CloseHelp,
    /// F12: screenshot.
    Screenshot,
    /// F9: start / stop recording PNG frames.
    ToggleRecording,
    /// F8: start / stop recording the session (a replayable `.drec`).
    ToggleSessionRecording,
    /// F7: save the last 60 s of the session as a recording.
    SaveLastMinute,
    /// + : time scale ×2.
    Faster,
    /// − : time scale ÷2.
    Slower,
    /// W: wireframe.
    Wireframe,
    /// P: particles.
    Particles,
    /// M: heat map mode.
    HeatMap,
    /// S: Stats panel open / collapsed.
    Stats,
    /// C: the side panel of controls open / collapsed to a strip.
    Controls,
}

/// Every binding: key, whether Shift must be held (None = either), what it does.
pub const SHORTCUTS: &[(KeyCode, Option<bool>, Shortcut)] = &[
    (KeyCode::Space, None, Shortcut::RunPause),
    (KeyCode::N, None, Shortcut::Step),
    (KeyCode::Right, None, Shortcut::Step),
    (KeyCode::R, Some(false), Shortcut::Reset),
    (KeyCode::R, Some(true), Shortcut::ResetKeepingPins),
    (KeyCode::F, None, Shortcut::FrameView),
    (KeyCode::H, None, Shortcut::ToggleHelp),
    (KeyCode::F1, None, Shortcut::ToggleHelp),
    (KeyCode::Escape, None, Shortcut::CloseHelp),
    (KeyCode::F12, None, Shortcut::Screenshot),
    (KeyCode::F9, None, Shortcut::ToggleRecording),
    (KeyCode::F8, None, Shortcut::ToggleSessionRecording),
    (KeyCode::F7, None, Shortcut::SaveLastMinute),
    (KeyCode::Equal, None, Shortcut::Faster),
    (KeyCode::KpAdd, None, Shortcut::Faster),
    (KeyCode::Minus, None, Shortcut::Slower),
    (KeyCode::KpSubtract, None, Shortcut::Slower),
    (KeyCode::W, None, Shortcut::Wireframe),
    (KeyCode::P, None, Shortcut::Particles),
    (KeyCode::M, None, Shortcut::HeatMap),
    (KeyCode::S, None, Shortcut::Stats),
    (KeyCode::C, None, Shortcut::Controls),
];

/// Who owns the keyboard this frame, from egui's focus before and after its pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KeyRoute {
    /// A widget had keyboard focus when the frame began.
    pub focused_before: bool,
    /// A widget wants keyboard input after the pass (a text field is being edited).
    pub wants_keyboard_after: bool,
}

impl KeyRoute {
    /// Whether this frame's keys may fire shortcuts.
    pub fn to_shortcuts(self) -> bool {
        !self.focused_before && !self.wants_keyboard_after
    }
}

/// Runs one egui pass `show` and returns who owned the keyboard around it.
pub fn route_around(ctx: &egui_macroquad::egui::Context, show: impl FnOnce(&egui_macroquad::egui::Context)) -> KeyRoute {
    let focused_before = ctx.memory(|m| m.focused().is_some());
    show(ctx);
    KeyRoute {
        focused_before,
        wants_keyboard_after: ctx.wants_keyboard_input(),
    }
}

/// The shortcuts fired by the keys `pressed` this frame (with Shift as given), or none when
/// the keyboard belongs to a text field.
pub fn fired(route: KeyRoute, pressed: impl Fn(KeyCode) -> bool, shift: bool) -> Vec<Shortcut> {
    if !route.to_shortcuts() {
        return Vec::new();
    }
    let mut out: Vec<Shortcut> = SHORTCUTS
        .iter()
        .filter(|(key, needs_shift, _)| pressed(*key) && needs_shift.is_none_or(|s| s == shift))
        .map(|&(_, _, shortcut)| shortcut)
        .collect();
    out.dedup();
    out
}

/// Ctrl+Z undoes, Ctrl+Shift+Z and Ctrl+Y redo: read from egui's key events, which carry the
/// modifiers held at the key press (the window's key state may already show Ctrl released when
/// a quick chord arrives within one frame).
pub fn undo_request(ctx: &egui_macroquad::egui::Context) -> Option<super::state::Action> {
    use super::state::Action;
    use egui_macroquad::egui::{Key, Modifiers};
    ctx.input_mut(|input| {
        if input.consume_key(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z) || input.consume_key(Modifiers::COMMAND, Key::Y) {
            Some(Action::Redo)
        } else if input.consume_key(Modifiers::COMMAND, Key::Z) {
            Some(Action::Undo)
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of typing `text` on a US keyboard (letters, digits, space, '.').
    fn keys_of(text: &str) -> Vec<KeyCode> {
        text.chars()
            .filter_map(|c| match c.to_ascii_uppercase() {
                ' ' => Some(KeyCode::Space),
                '.' => Some(KeyCode::Period),
                'M' => Some(KeyCode::M),
                'P' => Some(KeyCode::P),
                'A' => Some(KeyCode::A),
                '5' => Some(KeyCode::Key5),
                _ => None,
            })
            .collect()
    }

    fn fired_by(route: KeyRoute, text: &str) -> Vec<Shortcut> {
        keys_of(text)
            .into_iter()
            .flat_map(|key| fired(route, |k| k == key, false))
            .collect()
    }

    /// Issue 19: typing "5 MPa" into E while the pointer was over the view toggled the
    /// particles, the heat map and ran/paused the simulation.
    #[test]
    fn typing_5_mpa_into_a_field_fires_no_shortcut() {
        let editing = KeyRoute {
            focused_before: true,
            wants_keyboard_after: true,
        };
        assert_eq!(fired_by(editing, "5 MPa"), []);
        // The click that focuses the field arrives with the first keys: focus only after.
        let starting = KeyRoute {
            focused_before: false,
            wants_keyboard_after: true,
        };
        assert_eq!(fired_by(starting, "5 M"), []);
        // Enter or Tab ends the edit: focus only before.
        let ending = KeyRoute {
            focused_before: true,
            wants_keyboard_after: false,
        };
        assert_eq!(fired_by(ending, "Pa"), []);
    }

    #[test]
    fn the_same_keys_over_the_view_fire_their_shortcuts() {
        let free = KeyRoute::default();
        assert_eq!(
            fired_by(free, "5 MPa"),
            [Shortcut::RunPause, Shortcut::HeatMap, Shortcut::Particles]
        );
    }

    /// The same scenario through a real egui context, as the app runs it: a click on a
    /// number field (with no hover before it, as xdotool sends it), a key in the click's
    /// frame, then the keys of "5 MPa" and Enter. No frame with a key may route
    /// it to the shortcuts, and the typed value must land.
    #[test]
    fn in_egui_a_click_then_typing_5_mpa_keeps_every_key_in_the_field() {
        use egui_macroquad::egui::{self, Event, Key, Modifiers, PointerButton, Pos2, RawInput, Rect};
        let ctx = egui::Context::default();
        let mut modulus = 1.0e6f64;
        let frame = |events: Vec<Event>, modulus: &mut f64| {
            let input = RawInput {
                screen_rect: Some(Rect::from_min_size(Pos2::ZERO, egui::vec2(400.0, 300.0))),
                events,
                ..RawInput::default()
            };
            let (mut route, mut field) = (KeyRoute::default(), Rect::NOTHING);
            let _ = ctx.run(input, |ctx| {
                route = route_around(ctx, |ctx| {
                    egui::CentralPanel::default().show(ctx, |ui| {
                        let value = egui::DragValue::new(modulus)
                            .update_while_editing(false)
                            .custom_formatter(|v, _| crate::app::widgets::si(v, "Pa"))
                            .custom_parser(crate::app::widgets::parse_si);
                        field = ui.add(value).rect;
                    });
                });
            });
            (route, field)
        };
        let key = |key: Key, pressed: bool| Event::Key {
            key,
            physical_key: None,
            pressed,
            repeat: false,
            modifiers: Modifiers::NONE,
        };
        let typed = |c: &str, k: Key| vec![key(k, true), Event::Text(c.into()), key(k, false)];
        let at = frame(Vec::new(), &mut modulus).1.center(); // lay out
        let button = |pressed| Event::PointerButton {
            pos: at,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        };
        // The field opens for editing only in the frame after the click, so a key typed with
        // the click is lost (but must not fire a shortcut either); then select all, type.
        let mut frames = vec![
            vec![button(true)],
            [vec![button(false)], typed("p", Key::P)].concat(),
            typed("5", Key::Num5),
            typed(" ", Key::Space),
            typed("M", Key::M),
            typed("P", Key::P),
            typed("a", Key::A),
            vec![key(Key::Enter, true), key(Key::Enter, false)],
        ];
        // Select the shown text first so the typed value replaces it.
        let select_all = |pressed| Event::Key {
            key: Key::A,
            physical_key: None,
            pressed,
            repeat: false,
            modifiers: Modifiers::COMMAND,
        };
        frames.insert(2, vec![select_all(true), select_all(false)]);
        for (n, events) in frames.into_iter().enumerate() {
            let has_keys = events.iter().any(|e| matches!(e, Event::Key { .. }));
            let (route, _) = frame(events, &mut modulus);
            assert!(
                !(has_keys && route.to_shortcuts()),
                "frame {n}: keys reached the shortcuts ({route:?})"
            );
        }
        frame(Vec::new(), &mut modulus);
        assert_eq!(modulus, 5.0e6, "the typed value was applied");
        let (free, _) = frame(typed("p", Key::P), &mut modulus);
        assert!(free.to_shortcuts(), "with no field in edit, keys are shortcuts again");
    }

    #[test]
    fn shift_r_keeps_pins_and_plain_r_resets() {
        let free = KeyRoute::default();
        assert_eq!(fired(free, |k| k == KeyCode::R, false), [Shortcut::Reset]);
        assert_eq!(fired(free, |k| k == KeyCode::R, true), [Shortcut::ResetKeepingPins]);
        assert_eq!(fired(free, |k| k == KeyCode::N || k == KeyCode::Right, false), [Shortcut::Step]);
    }
}
