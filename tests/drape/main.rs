//! The Drape integration test suite: one binary, so the library is linked once.
//!
//! - [`validation`]: the validation scenarios of docs/physics.md §10 (V1–V6, V8) and the bending
//!   and material formulas, each compared against its closed form;
//! - [`robustness`]: V9 (degenerate geometry, invalid input rejected before any state
//!   change, huge steps) and the interaction API (pick, grab, release, pin);
//! - [`presets`]: every shipped preset loads, builds and runs; round trips; broken files;
//! - [`realism`]: issue 15's acceptance figures (resting strain, damping, pins under tension,
//!   stiffness jumps, free fall and pendulum at many substeps, grazing contacts);
//! - [`reliability`]: the hostile inputs of issue 20, each refused or run finite;
//! - [`files`]: checked, crash-safe writes (full and read-only filesystems, killed writers);
//! - [`fuzz`]: the fuzz target's property on proptest-mutated presets;
//! - [`grab`]: issue 31's grab (a patch pulled beyond the reach stays taut and unspiked, radius
//!   0 holds the hit point, a grab still tears the tearable sheet);
//! - [`moving_colliders`]: issue 18 item 4 (friction with a moving surface, pushes, ray picks
//!   of colliders, scripted paths, static results unchanged);
//! - [`tearing`]: issue 16's tearing scenarios on the shipped presets (no tear at rest, a pull
//!   rips, no scraps, nothing flung far, a torn run repeats bit for bit);
//! - [`self_collision`]: issue 17's scenes (the falling strip, a folded sheet) end with no
//!   intersecting triangles, at rest, bit-identical on every thread count; issue 38's default
//!   (on, in every shipped preset, which all end without crossings);
//! - [`sewing`]: seams pulled shut in their set time and holding a hanging panel, cut across,
//!   beside and through their open stitches, torn at their strength (tethers on or off), sewn
//!   to pins, refused at file:line:col, the dress form sewn round its form, on 1 to 3 threads;
//! - [`pressure`]: issue 18's pressure bodies: the icosphere's volume against its closed
//!   forms, a balloon resting at its target volume, inflated, cut open, on one to three threads;
//! - [`threads`]: a torn cloth of more than 4 096 particles, bit-identical on one to eight
//!   threads (more than the cores, assumed), and asked-for threads capped at the cores;
//! - [`scenes`]: issue 18's OBJ meshes (loading, errors at file:line, pins, any vertex order
//!   giving the same physics), version-1 presets unchanged, two-object presets round-tripping
//!   and two cloths on a ball resting without intersecting;
//! - [`mesh_colliders`]: issue 36's mesh colliders (a sheet on a mesh ball as on the analytic
//!   one, no tunnelling through thin mesh walls at top speed, picks and drags, the reported
//!   penetration, bad files refused where they are wrong);
//! - [`materials`]: issue 18's per-object materials (two sheets at their own closed-form
//!   stretch, masses from their own densities, only the tearable one tearing, the shared
//!   material bit for bit, round trips and errors at file:line:col);
//! - [`obj_export`]: issue 32's OBJ export (every vertex's rest-shape texture coordinates,
//!   kept by torn and cut vertices; the file loads back);
//! - [`hostile_inputs`]: issue 34's bounded inputs (devices, FIFOs and huge files refused
//!   within 1 s in under 100 MB, short messages for enormous broken lines, non-UTF-8 text
//!   placed, colliders and pin lists capped, a missing mesh placed in its preset);
//! - [`cli`]: the `drape simulate`, `drape bench` and `drape soak` commands (and the window
//!   run's `--out`, refused without `--frames`);
//! - [`param_table`]: issue 35's one table of parameters against the validation and
//!   docs/presets.md (ranges, defaults, rails, the reference's rows);
//! - [`usd_export`]: issue 33's USD file (a cut sheet, a whole one and moving colliders,
//!   read back by OpenUSD where Python has it);
//! - [`architecture`]: issue 30's layout rules (file length, imports inside the engine).

mod architecture;
mod calibrate;
mod calibrate_bending;
mod calibrate_tensile;
mod cli;
mod common;
mod docs;
mod files;
mod fuzz;
mod grab;
mod hostile_inputs;
mod materials;
mod mesh_colliders;
mod moving_colliders;
mod obj_export;
mod param_table;
mod presets;
mod pressure;
mod realism;
mod recordings;
mod reliability;
mod robustness;
mod scenes;
mod self_collision;
mod sewing;
mod tearing;
mod threads;
mod usd_export;
mod validation;
