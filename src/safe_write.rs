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
    let (tmp, file) = create_temp(dir, &file_name.to_string_lossy()).map_err(|e| {
        // The OS error alone ("No such file or directory" for `/proc/version`) names neither
        // the directory nor that a new file was being made there.
        io::Error::new(e.kind(), format!("cannot create a new file in {}: {e}", dir.display()))
    })?;
    let result = fill(file, existing, write).and_then(|()| fs::rename(&tmp, path));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    remove_stale_temps(dir, &file_name.to_string_lossy());
    sync_dir(dir)
}

/// Removes the temporary files a killed writer of target `name` left in `dir`: files named as
/// [`create_temp`] names them for this target whose writer process is gone (no `/proc/PID`)
/// or, where processes cannot be looked up, that are a day old. Another live process's or this
/// process's own temporary files (a save running on another thread) are never touched.
/// Best effort: a file that cannot be removed stays.
fn remove_stale_temps(dir: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.tmp-");
    for entry in entries.filter_map(Result::ok) {
        let file_name = entry.file_name();
        let Some(writer) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)).and_then(temp_writer) else {
            continue;
        };
        if writer != std::process::id() && writer_is_gone(writer, &entry) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The writer's process id of a temporary file name's tail `PID-N-NANOS` (all decimal).
fn temp_writer(tail: &str) -> Option<u32> {
    let mut parts = tail.split('-');
    let pid = parts.next()?.parse().ok()?;
    let rest: Vec<&str> = parts.collect();
    let decimal = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    (rest.len() == 2 && rest.iter().all(decimal)).then_some(pid)
}

/// Whether the process that wrote a temporary file is gone: no `/proc/PID` where `/proc` is
/// mounted, else the file is a day old.
fn writer_is_gone(pid: u32, entry: &fs::DirEntry) -> bool {
    const STALE_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
    if Path::new("/proc/self").exists() {
        return !Path::new(&format!("/proc/{pid}")).exists();
    }
    let age = entry.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
    age.is_some_and(|age| age > STALE_AGE)
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
    fn a_save_removes_the_temp_files_of_dead_writers_of_its_target_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.ron");
        // pid_max is at most 2^22 on Linux: this writer cannot be running; pid 1 always is.
        let dead = dir.path().join(".a.ron.tmp-4000000000-3-123");
        let alive = dir.path().join(".a.ron.tmp-1-3-123");
        let own = dir.path().join(format!(".a.ron.tmp-{}-9-1", std::process::id()));
        let other_target = dir.path().join(".b.ron.tmp-4000000000-3-123");
        let not_ours = dir.path().join(".a.ron.tmp-4000000000-x");
        for file in [&dead, &alive, &own, &other_target, &not_ours] {
            fs::write(file, "left").unwrap();
        }
        write_atomically(&path, |out: &mut dyn Write| out.write_all(b"new")).unwrap();
        assert!(!dead.exists(), "a dead writer's temp file of the target is removed");
        for kept in [&alive, &own, &other_target, &not_ours] {
            assert!(kept.exists(), "{} is kept", kept.display());
        }
    }

    #[test]
    fn a_directory_that_takes_no_new_files_is_named_in_the_error() {
        let error = write_atomically(Path::new("/proc/version"), |out: &mut dyn Write| out.write_all(b"x")).unwrap_err();
        assert!(error.to_string().starts_with("cannot create a new file in /proc: "), "{error}");
        assert_eq!(fs::read_to_string("/proc/version").map(|t| t.is_empty()).ok(), Some(false));
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
