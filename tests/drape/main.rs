//! The Drape integration test suite: one binary, so the library is linked once.
//!
//! - [`validation`]: the physics reference's validation scenarios V1–V6, V8 and the bending
//!   and material formulas, each compared against its closed form;
//! - [`robustness`]: V9 (degenerate geometry, invalid input rejected before any state
//!   change, huge steps) and the interaction API (pick, grab, release, pin);
//! - [`presets`]: every shipped preset loads, builds and runs; round trips; broken files;
//! - [`realism`]: issue 15's acceptance figures (resting strain, damping, pins under tension,
//!   stiffness jumps, free fall and pendulum at many substeps, grazing contacts);
//! - [`cli`]: the `drape simulate` and `drape bench` commands.

mod cli;
mod common;
mod presets;
mod realism;
mod reliability;
mod robustness;
mod validation;
