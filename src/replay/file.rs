//! The recording file (`.drec`), version 1. Layout, all integers little-endian:
//!
//! | bytes | what |
//! |---|---|
//! | 8 | magic `DRAPEREC` |
//! | 4 | format version (u32) |
//! | … | header, [postcard](https://docs.rs/postcard)-encoded [`Header`]: the build that wrote it, kernel, threads, frames, open-at frame, final state hash, the presets' RON texts, the embedded mesh files, the event count |
//! | … | the events, one postcard-encoded (frame − previous frame, [`SimInput`]) each |
//! | 4 | CRC-32 of every byte before it |
//!
//! Postcard writes integers as varints and f32 as its four bytes, so a drag target (the
//! commonest event) takes 14 bytes: a 10-minute session of dragging at 60 frames a second is
//! about 0.5 MB. Reading checks everything before anything is replayed: the magic, the version,
//! each section (a truncated or garbled file is refused with the byte offset and the part of
//! the file where reading stopped), the checksum (a flipped bit that still decodes), then the
//! content: every preset parses (errors at line:col of that embedded preset), the first event
//! is the starting scene, frames never go back or past the end, indices name presets that
//! exist, and every float of a mouse input is finite.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Event, Recording, SimInput};
use crate::input_file::{excerpt, read_limited, MESSAGE_CHARS};
use crate::preset::Preset;
use crate::sim::constraints::distance::Kernel;
use crate::sim::Ray;

/// The first bytes of every recording.
pub const MAGIC: &[u8; 8] = b"DRAPEREC";
/// The newest format this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;
/// Largest recording read (bytes): 1 GiB, some 20 hours of dragging.
pub const RECORDING_LIMIT: u64 = 1 << 30;

/// Everything before the events.
#[derive(Serialize, Deserialize)]
struct Header {
    /// `drape` version that wrote the file (for the reader's messages).
    written_by: String,
    kernel: Kernel,
    threads: u32,
    frames: u32,
    open_at: u32,
    final_hash: Option<u64>,
    presets: Vec<String>,
    meshes: Vec<(PathBuf, String)>,
    events: u32,
}

/// Why a recording could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a valid recording.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Where and what is wrong.
        message: String,
    },
}

impl Recording {
    /// The file's bytes (module docs).
    pub fn to_bytes(&self) -> Vec<u8> {
        let header = Header {
            written_by: env!("CARGO_PKG_VERSION").into(),
            kernel: self.kernel,
            threads: self.threads,
            frames: self.frames,
            open_at: self.open_at,
            final_hash: self.final_hash,
            presets: self.presets.clone(),
            meshes: self.meshes.iter().map(|(p, t)| (p.clone(), t.clone())).collect(),
            events: self.events.len() as u32,
        };
        let mut out = MAGIC.to_vec();
        out.extend(FORMAT_VERSION.to_le_bytes());
        out = postcard::to_extend(&header, out).expect("a header always encodes");
        let mut previous = 0;
        for event in &self.events {
            out = postcard::to_extend(&(event.frame - previous, &event.input), out).expect("an event always encodes");
            previous = event.frame;
        }
        let crc = crc32fast::hash(&out);
        out.extend(crc.to_le_bytes());
        out
    }

    /// Writes the file crash-safely ([`crate::safe_write`]).
    pub fn save(&self, path: &Path) -> Result<(), RecordingError> {
        let bytes = self.to_bytes();
        crate::safe_write::write_atomically(path, |out| out.write_all(&bytes))
            .map_err(|source| RecordingError::Io { path: path.into(), source })
    }

    /// Reads and checks a recording file (module docs).
    pub fn load(path: &Path) -> Result<Self, RecordingError> {
        let bytes = read_limited(path, RECORDING_LIMIT).map_err(|source| RecordingError::Io { path: path.into(), source })?;
        Self::from_bytes(&bytes).map_err(|message| RecordingError::Invalid {
            path: path.into(),
            message: excerpt(&message, MESSAGE_CHARS),
        })
    }

    /// Decodes and checks a recording's bytes; the error says where and why.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        let mut reader = Reader { bytes, at: 0 };
        reader.expect_magic()?;
        let header: Header = reader.take("the header")?;
        let mut events = Vec::with_capacity((header.events as usize).min(bytes.len()));
        let mut frame = 0u32;
        for k in 0..header.events {
            let part = format!("event {} of {}", k + 1, header.events);
            let (delta, input): (u32, SimInput) = reader.take(&part)?;
            frame = frame.checked_add(delta).filter(|&f| f <= header.frames).ok_or_else(|| {
                format!(
                    "byte {}: {part}: frame {} is past the recording's {} frames",
                    reader.at,
                    frame as u64 + delta as u64,
                    header.frames
                )
            })?;
            events.push(Event { frame, input });
        }
        reader.check_crc()?;
        let recording = Recording {
            kernel: header.kernel,
            threads: header.threads,
            presets: header.presets,
            meshes: header.meshes.into_iter().collect(),
            events,
            frames: header.frames,
            open_at: header.open_at,
            final_hash: header.final_hash,
        };
        recording.check()?;
        Ok(recording)
    }

    /// The content checks of [`Self::from_bytes`] (module docs).
    fn check(&self) -> Result<(), String> {
        if self.open_at > self.frames {
            return Err(format!("opens at frame {} of {} frames", self.open_at, self.frames));
        }
        for (k, text) in self.presets.iter().enumerate() {
            Preset::parse(text, Path::new(&format!("preset {k} of the recording"))).map_err(|e| e.to_string())?;
        }
        match self.events.first() {
            Some(Event {
                frame: 0,
                input: SimInput::Scene { .. },
            }) => {}
            _ => return Err("the first event is not the starting scene".into()),
        }
        for (k, event) in self.events.iter().enumerate() {
            check_input(&event.input, self.presets.len()).map_err(|why| format!("event {} (frame {}): {why}", k + 1, event.frame))?;
        }
        Ok(())
    }
}

/// What a single input must satisfy to be replayed.
fn check_input(input: &SimInput, presets: usize) -> Result<(), String> {
    let finite = |values: &[f32]| values.iter().all(|v| v.is_finite());
    let ray = |r: &Ray| finite(&r.origin.to_array()) && finite(&r.direction.to_array());
    let ok = match input {
        SimInput::Scene { preset, .. } => (*preset as usize) < presets,
        SimInput::Grab(pick) => finite(&[pick.t]) && pick.hit.is_none_or(|hit| finite(&hit.barycentric)),
        SimInput::DragTo(v) | SimInput::MoveCollider { to: v, .. } => finite(&v.to_array()),
        SimInput::Release(throw) => throw.is_none_or(|v| finite(&v.to_array())),
        SimInput::Cut { from, to } => ray(from) && ray(to),
        SimInput::Pressure { factor, .. } => factor.is_finite(),
        SimInput::Playback { time_scale, .. } => time_scale.is_finite(),
        SimInput::Solver(_)
        | SimInput::Material(_)
        | SimInput::ObjectMaterial { .. }
        | SimInput::ReleasePinned
        | SimInput::TogglePin(_) => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{input:?} is not replayable (a preset index out of range or a value not finite)"
        ))
    }
}

/// A cursor over the file's bytes that says where it stopped.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn expect_magic(&mut self) -> Result<(), String> {
        if self.bytes.len() < MAGIC.len() + 4 || &self.bytes[..MAGIC.len()] != MAGIC {
            return Err("not a Drape recording (it does not start with DRAPEREC)".into());
        }
        let version = u32::from_le_bytes(self.bytes[8..12].try_into().expect("four bytes"));
        if version == 0 || version > FORMAT_VERSION {
            return Err(format!(
                "byte 8: recording format {version}; this build reads 1 to {FORMAT_VERSION}"
            ));
        }
        self.at = 12;
        Ok(())
    }

    /// Decodes the next `part` of the file.
    fn take<T: serde::de::DeserializeOwned>(&mut self, part: &str) -> Result<T, String> {
        let body = self.body();
        let rest = &body[self.at.min(body.len())..];
        match postcard::take_from_bytes::<T>(rest) {
            Ok((value, left)) => {
                self.at = body.len() - left.len();
                Ok(value)
            }
            Err(postcard::Error::DeserializeUnexpectedEnd) => Err(format!("byte {}: {part}: the file ends early (truncated?)", self.at)),
            Err(e) => Err(format!("byte {}: {part}: {e} (corrupted?)", self.at)),
        }
    }

    /// The bytes before the checksum (all of them when the file is too short to have one).
    fn body(&self) -> &[u8] {
        &self.bytes[..self.bytes.len().saturating_sub(4).max(12)]
    }

    fn check_crc(&self) -> Result<(), String> {
        let body = self.body();
        if self.at != body.len() {
            return Err(format!(
                "byte {}: {} bytes after the last event (corrupted?)",
                self.at,
                body.len() - self.at
            ));
        }
        let stored = self
            .bytes
            .get(body.len()..)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes);
        let computed = crc32fast::hash(body);
        match stored {
            Some(stored) if stored == computed => Ok(()),
            Some(stored) => Err(format!(
                "byte {}: checksum {stored:08x} stored, {computed:08x} computed: the file is corrupted",
                body.len()
            )),
            None => Err(format!("byte {}: the file ends before its checksum (truncated?)", self.at)),
        }
    }
}
