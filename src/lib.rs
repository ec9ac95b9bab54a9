//! Drape: an XPBD cloth engine ([`sim`]) and its scene file format ([`preset`]).
//!
//! The library is headless: no window or UI code is linked, so tests, benchmarks and the
//! command-line tools run anywhere. The desktop sandbox in the binary is a thin client.
//!
//! The engine's module docs explain its private machinery too (sweep order, kernels, the
//! thread plan) and link to it; build them with `cargo doc --document-private-items`, as
//! `.ci/run` does, where those links resolve.
#![allow(rustdoc::private_intra_doc_links)]
// An `unsafe fn`'s body is not an unsafe block: each unsafe operation sits in its own block.
#![deny(unsafe_op_in_unsafe_fn)]
// Every unsafe block states the contract it relies on in a `// SAFETY:` comment.
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod calibrate;
pub mod fuzzing;
pub mod headless;
pub mod input_file;
pub mod mesh_file;
pub mod preset;
pub mod replay;
pub mod safe_write;
pub mod scene;
pub mod sim;
pub mod soak;
pub mod usd_export;
