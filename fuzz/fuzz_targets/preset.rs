//! Parses arbitrary bytes as a preset, builds the cloth and steps a few frames; the property
//! is `drape::fuzzing::check_preset_bytes` (shared with the proptest twin in the tests).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| drape::fuzzing::check_preset_bytes(data));
