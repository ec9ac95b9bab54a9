//! The app's own preferences — window size, which panel sections are open, the Stats panel,
//! the last preset — kept in `settings.ron` in the platform's config directory (the
//! `directories` crate: `~/.config/drape` on Linux). Written atomically (a temporary file in
//! the same directory, then a rename), so a crash mid-write leaves the old file whole; a
//! missing or unreadable file means defaults, never a failure to start.

use std::path::{Path, PathBuf};

use drape::input_file::{excerpt, read_limited, MESSAGE_CHARS};
use serde::{Deserialize, Serialize};

/// Largest settings file read (bytes): the app writes a few hundred.
const SETTINGS_LIMIT: u64 = 1 << 20;

/// Which collapsible sections of the side panel are open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sections {
    /// Solver: time step, substeps, damping, gravity.
    pub solver: bool,
    /// Wind, air drag and limits.
    pub air: bool,
    /// Material.
    pub material: bool,
    /// Scene: presets, save, size.
    pub scene: bool,
    /// View switches.
    pub view: bool,
}

impl Default for Sections {
    fn default() -> Self {
        // Wind & limits are advanced: closed until asked for.
        Self {
            solver: true,
            air: false,
            material: true,
            scene: true,
            view: true,
        }
    }
}

/// Everything remembered between runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Window width in pixels. Default 1280.
    pub window_width: u32,
    /// Window height in pixels. Default 800.
    pub window_height: u32,
    /// Side-panel sections.
    pub sections: Sections,
    /// The Stats panel is open (false = one compact line). Default true.
    pub stats_open: bool,
    /// The side panel of controls is open (false = a narrow strip). Default true.
    pub panel_open: bool,
    /// The preset open when the app last ran (opened again when no `--preset` is given).
    pub last_preset: Option<PathBuf>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            window_width: 1280,
            window_height: 800,
            sections: Sections::default(),
            stats_open: true,
            panel_open: true,
            last_preset: None,
        }
    }
}

impl Settings {
    /// `settings.ron` in the platform's config directory (None where there is no home).
    pub fn default_path() -> Option<PathBuf> {
        directories::ProjectDirs::from("", "", "drape").map(|dirs| dirs.config_dir().join("settings.ron"))
    }

    /// Reads `path`: defaults when it does not exist, defaults and the reason when it cannot
    /// be read or parsed.
    pub fn load(path: &Path) -> (Self, Option<String>) {
        let refused = |why: &dyn std::fmt::Display| {
            let why = excerpt(&why.to_string(), MESSAGE_CHARS);
            (Self::default(), Some(format!("{}: {why}; using default settings", path.display())))
        };
        match read_limited(path, SETTINGS_LIMIT).map(String::from_utf8) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Self::default(), None),
            Err(e) => refused(&e),
            Ok(Err(e)) => refused(&e),
            Ok(Ok(text)) => match ron::from_str::<Settings>(&text) {
                Ok(settings) => (settings.sanitised(), None),
                Err(e) => refused(&e),
            },
        }
    }

    /// A window size the screen can show (a corrupt file could say 0 × 0 or 10⁶ pixels).
    fn sanitised(mut self) -> Self {
        self.window_width = self.window_width.clamp(640, 7680);
        self.window_height = self.window_height.clamp(480, 4320);
        self
    }

    /// Writes `path` crash-safely ([`drape::safe_write`]), creating its directory.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let text = ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::new()).map_err(std::io::Error::other)?;
        drape::safe_write::write_atomically(path, |out| writeln!(out, "{text}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/settings.ron");
        let settings = Settings {
            window_width: 1000,
            window_height: 620,
            sections: Sections {
                material: false,
                ..Sections::default()
            },
            stats_open: false,
            panel_open: false,
            last_preset: Some(PathBuf::from("presets/hammock.ron")),
        };
        settings.save(&path).unwrap();
        assert_eq!(Settings::load(&path), (settings, None));
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left behind");
    }

    #[test]
    fn a_missing_file_is_defaults_and_a_broken_one_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.ron");
        assert_eq!(Settings::load(&path), (Settings::default(), None));
        std::fs::write(&path, "(window_width: \"wide\")").unwrap();
        let (settings, why) = Settings::load(&path);
        assert_eq!(settings, Settings::default());
        assert!(why.unwrap().contains("settings.ron"));
        std::fs::write(&path, "(window_width: 0, window_height: 100000)").unwrap();
        let (settings, _) = Settings::load(&path);
        assert_eq!((settings.window_width, settings.window_height), (640, 4320));
    }

    #[test]
    fn a_leftover_temporary_file_does_not_block_a_save() {
        // Failed and killed saves are covered by drape::safe_write's tests; here: what a killed
        // writer of an older build left at its temporary name is no obstacle.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.ron");
        Settings::default().save(&path).unwrap();
        std::fs::create_dir(dir.path().join(format!(".settings.ron.tmp-{}", std::process::id()))).unwrap();
        let changed = Settings {
            stats_open: false,
            ..Settings::default()
        };
        changed.save(&path).unwrap();
        assert_eq!(Settings::load(&path).0, changed);
    }
}
