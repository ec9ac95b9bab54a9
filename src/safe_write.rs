//! Crash-safe file writes: the one way Drape writes a file (preset save, OBJ export).
//!
//! The content goes to a temporary file next to the target (same directory, so the rename
//! cannot cross filesystems), named uniquely per writer (process id, a per-process counter
//! and a clock reading: two threads or processes saving the same file never share one), and
//! created exclusively. It is flushed and `fsync`ed, given the target's permission bits,
//! then renamed over the target, and the directory is synced so the rename itself is
//! durable. A reader or a crash at any moment therefore sees the old file or the new one,
//! complete. Every error propagates (a full disk reports "No space left on device" at the
//! write, flush or sync that hit it) and removes the temporary file. A target that exists but
//! is not a regular file (a symbolic link, FIFO, device or directory) is refused, never
//! replaced.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Writes `path` through `write`, atomically (see the module docs).
pub fn write_atomically(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let existing = match fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_file() => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file (a link, FIFO, device or directory is never replaced)",
            ));
        }
        Ok(meta) => Some(meta.permissions()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let file_name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let (tmp, file) = create_temp(dir, &file_name.to_string_lossy())?;
    let result = fill(file, existing, write).and_then(|()| fs::rename(&tmp, path));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    sync_dir(dir)
}

/// Creates a fresh temporary file in `dir` for target `name`; retries on the (unlikely)
/// collision with a leftover of a killed writer.
fn create_temp(dir: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let tmp = dir.join(format!(".{name}.tmp-{}-{n}-{nanos}", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Writes, flushes and syncs the temporary file, with the target's permissions if it had any.
fn fill(file: File, permissions: Option<fs::Permissions>, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let mut out = BufWriter::new(file);
    write(&mut out)?;
    let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions)?;
    }
    file.sync_all()
}

/// Makes a rename in `dir` durable (a no-op where directories cannot be opened).
fn sync_dir(dir: &Path) -> io::Result<()> {
    match File::open(dir) {
        Ok(handle) => handle.sync_all().or_else(|e| match e.kind() {
            // Some filesystems do not sync directories; the rename has happened regardless.
            io::ErrorKind::InvalidInput | io::ErrorKind::Unsupported => Ok(()),
            _ => Err(e),
        }),
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_files(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp-"))
            .collect()
    }

    #[test]
    fn replaces_the_content_and_keeps_the_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomically(&path, |out: &mut dyn Write| out.write_all(b"new")).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o640);
        assert!(temp_files(dir.path()).is_empty());
    }

    #[test]
    fn a_failing_writer_leaves_the_target_and_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        fs::write(&path, "old").unwrap();
        let error = write_atomically(&path, |out: &mut dyn Write| {
            out.write_all(b"half")?;
            Err(io::Error::other("disk on fire"))
        })
        .unwrap_err();
        assert_eq!(error.to_string(), "disk on fire");
        assert_eq!(fs::read_to_string(&path).unwrap(), "old");
        assert!(temp_files(dir.path()).is_empty());
    }

    #[test]
    fn links_fifos_and_directories_are_refused_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        fs::write(&real, "kept").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        for target in [&link, &fifo, &dir.path().to_path_buf()] {
            let error = write_atomically(target, |out: &mut dyn Write| out.write_all(b"x")).unwrap_err();
            assert!(error.to_string().contains("not a regular file"), "{}: {error}", target.display());
        }
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert!(!fs::symlink_metadata(&fifo).unwrap().file_type().is_file());
        assert_eq!(fs::read_to_string(&real).unwrap(), "kept");
        assert!(temp_files(dir.path()).is_empty());
    }

    #[test]
    fn concurrent_writers_of_one_file_do_not_collide() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shared.txt");
        std::thread::scope(|scope| {
            for writer in 0..4u8 {
                let path = &path;
                scope.spawn(move || {
                    for _ in 0..50 {
                        let line = [b'a' + writer; 4096];
                        write_atomically(path, |out: &mut dyn Write| out.write_all(&line)).unwrap();
                    }
                });
            }
        });
        let content = fs::read(&path).unwrap();
        assert_eq!(content.len(), 4096);
        assert!(content.iter().all(|&b| b == content[0]), "a mix of two writers");
        assert!(temp_files(dir.path()).is_empty());
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = write_atomically(&dir.path().join("no/such/dir/a.txt"), |out: &mut dyn Write| out.write_all(b"x")).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
    }
}
