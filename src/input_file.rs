//! Reading the files a user names (presets, meshes, textures, the app's settings) without
//! trusting them: a named file may be anything the filesystem holds.
//!
//! - Only regular files are read. A FIFO, a socket, a device (`/dev/zero`, a terminal) or a
//!   directory is refused by its metadata before it is opened, and the file is opened
//!   non-blocking, so a FIFO swapped in between is refused too instead of waiting for a writer
//!   forever.
//! - At most a limit of bytes is read ([`PRESET_LIMIT`], [`MESH_LIMIT`], [`TEXTURE_LIMIT`]):
//!   a larger file is refused from its size before reading, and a file growing while it is read
//!   stops at the limit, so memory stays bounded whatever the file.
//! - Text is UTF-8; where it is not, [`decode_text`] says the line and column of the first
//!   byte that is not.
//!
//! Error messages quote input through [`excerpt`], never whole: a broken preset of one 50 MB
//! line gets a message of at most [`MESSAGE_CHARS`] characters.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// Largest preset file read (bytes): 64 MiB, a thousand times the largest shipped preset and
/// room for a pin list of every cell of a 1024² grid.
pub const PRESET_LIMIT: u64 = 64 << 20;
/// Largest OBJ mesh file read (bytes): 512 MiB, about ten million triangles.
pub const MESH_LIMIT: u64 = 512 << 20;
/// Largest texture image file read (bytes): 128 MiB (an 8192² PNG is well under).
pub const TEXTURE_LIMIT: u64 = 128 << 20;
/// Most characters of input an error message quotes.
pub const EXCERPT_CHARS: usize = 120;
/// Most characters of a whole error message (room for a list of every known field).
pub const MESSAGE_CHARS: usize = 1000;

/// Reads the regular file at `path`, refusing anything else and anything over `limit` bytes
/// (module docs). The errors are `io::Error`s whose message says what the file is and what
/// the limit is.
pub fn read_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    check_regular(&std::fs::metadata(path)?, limit)?;
    let file = open_nonblocking(path)?;
    // The path may have been swapped for something else since the check.
    check_regular(&file.metadata()?, limit)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

/// The file's bytes as UTF-8 text, or the 1-based (line, column) of the first byte that is
/// not UTF-8 (the column counts characters).
pub fn decode_text(bytes: Vec<u8>) -> Result<String, (usize, usize)> {
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        // Valid by construction: the prefix before the first invalid byte.
        let prefix = std::str::from_utf8(valid).unwrap_or_default();
        let line = 1 + prefix.matches('\n').count();
        let col = 1 + prefix.rsplit('\n').next().map_or(0, |last| last.chars().count());
        (line, col)
    })
}

/// `text` cut to at most `chars` characters ([`EXCERPT_CHARS`] for a quote of the input,
/// [`MESSAGE_CHARS`] for a message), with how much was left out.
pub fn excerpt(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}… ({} more bytes)", &text[..cut], text.len() - cut),
    }
}

/// Refuses what is not a regular file of at most `limit` bytes.
fn check_regular(meta: &std::fs::Metadata, limit: u64) -> io::Result<()> {
    if !meta.is_file() {
        let kind = kind_of(&meta.file_type());
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {kind}, not a regular file: only files are read"),
        ));
    }
    if meta.len() > limit {
        return Err(too_large(limit));
    }
    Ok(())
}

fn too_large(limit: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("is larger than the {} MiB this kind of file may have", limit >> 20),
    )
}

/// What a file that is not a regular file is, in words.
#[cfg(unix)]
fn kind_of(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a file"
    }
}

/// What a file that is not a regular file is, in words.
#[cfg(not(unix))]
fn kind_of(kind: &std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// Opens `path` for reading without waiting for a FIFO's writer (O_NONBLOCK has no effect on
/// reads of regular files).
#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
}

/// Opens `path` for reading (no FIFOs to wait on where there is no O_NONBLOCK).
#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_fifo_a_device_and_a_directory_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.ron");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        for (path, kind) in [
            (fifo.as_path(), "a FIFO"),
            (Path::new("/dev/zero"), "a device"),
            (dir.path(), "a directory"),
        ] {
            let error = read_limited(path, PRESET_LIMIT).unwrap_err().to_string();
            assert!(error.contains(kind), "{}: {error}", path.display());
        }
    }

    #[test]
    fn a_file_over_the_limit_is_refused_and_one_at_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.ron");
        std::fs::write(&path, vec![b'x'; 1000]).unwrap();
        assert_eq!(read_limited(&path, 1000).unwrap().len(), 1000);
        let error = read_limited(&path, 999).unwrap_err();
        assert!(error.to_string().contains("larger than"), "{error}");
    }

    #[test]
    fn text_that_is_not_utf8_is_placed_by_line_and_character_column() {
        assert_eq!(decode_text(b"ab\n\xc3\xa9\xff".to_vec()), Err((2, 2)));
        assert_eq!(decode_text(b"\xff".to_vec()), Err((1, 1)));
        assert_eq!(decode_text("é\n".as_bytes().to_vec()).as_deref(), Ok("é\n"));
    }

    #[test]
    fn an_excerpt_keeps_short_text_and_cuts_long_text_on_a_character() {
        assert_eq!(excerpt("short", EXCERPT_CHARS), "short");
        let long = "é".repeat(1000);
        let cut = excerpt(&long, EXCERPT_CHARS);
        assert!(cut.starts_with(&"é".repeat(EXCERPT_CHARS)), "{cut}");
        assert!(cut.ends_with(&format!("({} more bytes)", 2 * (1000 - EXCERPT_CHARS))), "{cut}");
    }
}
