//! How a cloth is drawn: the colours of its two sides and an optional fabric pattern. A
//! preset has one for the scene and each object may carry its own; only the app reads them.
//! It lives beside [`super::grid::GridSpec`], which carries a grid object's own, so the scene
//! description does not reach out of the engine for it.

use std::path::PathBuf;

use glam::Vec3;
use serde::{Deserialize, Serialize};

use super::error::{check_components, check_range, SimError};

/// How the cloth is drawn: the colours of its two sides and an optional fabric pattern. Only
/// the app reads it; the simulation does not depend on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Appearance {
    /// Colour of the front side, RGB in [0, 1]. Default (0.86, 0.42, 0.26), terracotta.
    pub colour: Vec3,
    /// Colour of the back side, RGB in [0, 1]. Default (0.30, 0.48, 0.78), blue.
    pub back_colour: Vec3,
    /// Fabric pattern: a PNG whose brightness is multiplied into both colours, e.g.
    /// `"assets/textures/twill.png"`; a relative path is looked up like a mesh file's
    /// ([`crate::scene::resolve_path`]). Default none (plain colours).
    pub texture: Option<PathBuf>,
    /// How many times the pattern repeats across the cloth's texture coordinates (a grid's
    /// width and height, a mesh's UV square). Default 8; range [0.1, 1000].
    pub texture_repeat: f32,
}

impl Default for Appearance {
    fn default() -> Self {
        Self {
            colour: Vec3::new(0.86, 0.42, 0.26),
            back_colour: Vec3::new(0.30, 0.48, 0.78),
            texture: None,
            texture_repeat: 8.0,
        }
    }
}

impl Appearance {
    /// Whether every field has its default (then saved files leave it out).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// Checks the colours and the repeat count (the texture file is read by the app, which
    /// reports a missing or broken one and draws plain colours).
    pub fn validate(&self) -> Result<(), SimError> {
        check_components("colour", self.colour, 0.0, 1.0, "RGB components in [0, 1]")?;
        check_components("back_colour", self.back_colour, 0.0, 1.0, "RGB components in [0, 1]")?;
        check_range("texture_repeat", self.texture_repeat, 0.1, 1000.0, "a count in [0.1, 1000]")
    }
}
