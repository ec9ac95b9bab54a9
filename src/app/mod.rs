//! The desktop sandbox (macroquad window + egui panels). Placeholder until the app lands.

use crate::AppArgs;

/// Opens the sandbox window.
pub fn run(_args: AppArgs) -> anyhow::Result<()> {
    anyhow::bail!("the desktop window is not built yet; use `drape simulate` or `drape bench`")
}
