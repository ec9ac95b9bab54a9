//! Decodes arbitrary bytes as a session recording and replays a few frames of what decodes;
//! the property is `drape::fuzzing::check_recording_bytes` (shared with the proptest twin).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| drape::fuzzing::check_recording_bytes(data));
