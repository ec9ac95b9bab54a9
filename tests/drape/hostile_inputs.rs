//! Hostile inputs are bounded (issue 34): whatever a user names as a preset or mesh — a device,
//! a FIFO, a huge file, a broken file of one enormous line, a scene asking for millions of
//! colliders — `drape simulate` refuses it with exit code 2, quickly, in little memory, with
//! a short message.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use drape::preset::Preset;

/// What one `drape` run took: its exit code, stderr, wall time and peak resident memory.
struct Run {
    code: Option<i32>,
    stderr: String,
    elapsed: Duration,
    peak_rss_bytes: u64,
}

/// Environment variables telling [`measured_simulate_child`] what to run and where to report.
const MEASURE_PRESET: &str = "DRAPE_TEST_MEASURE_PRESET";
const MEASURE_REPORT: &str = "DRAPE_TEST_MEASURE_REPORT";

/// Runs `drape simulate --preset <preset> --frames 1` from a freshly started launcher (this
/// test binary running [`measured_simulate_child`]) and reads the launcher's report.
///
/// Why a launcher: Linux counts a process's resident peak from the memory of the process it
/// was forked from (an `exec` keeps the forking process's high-water mark), so `drape` spawned
/// straight from this test process — holding the meshes and models of the tests running beside
/// it — was measured at that process's size (101 MB on CI), not its own. The launcher is small.
fn simulate(preset: &Path) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report");
    let launcher = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "hostile_inputs::measured_simulate_child", "--ignored"])
        .args(["--test-threads", "1", "--nocapture"])
        .env(MEASURE_PRESET, preset)
        .env(MEASURE_REPORT, &report)
        .output()
        .unwrap();
    assert!(launcher.status.success(), "the launcher failed: {launcher:?}");
    let text = std::fs::read_to_string(&report).unwrap();
    let (numbers, stderr) = text.split_once("\n\n").unwrap();
    let numbers: Vec<i64> = numbers.lines().map(|n| n.parse().unwrap()).collect();
    Run {
        code: (numbers[0] >= 0).then_some(numbers[0] as i32),
        stderr: stderr.to_string(),
        elapsed: Duration::from_nanos(numbers[1] as u64),
        peak_rss_bytes: numbers[2] as u64,
    }
}

/// Not a test on its own: the launcher of [`simulate`]. Spawns `drape`, waits for it with
/// `wait4` (whose resource usage is that child's alone) and writes the exit code (−1 for a
/// signal), the nanoseconds it took, its peak resident bytes, a blank line and its stderr.
#[test]
#[ignore = "launcher process of the hostile-input tests"]
fn measured_simulate_child() {
    let (Some(preset), Some(report)) = (std::env::var_os(MEASURE_PRESET), std::env::var_os(MEASURE_REPORT)) else {
        return;
    };
    let started = Instant::now();
    // Reaped by `wait4` below, which `Child::wait` cannot replace (it returns no usage).
    #[allow(clippy::zombie_processes)]
    let child = Command::new(env!("CARGO_BIN_EXE_drape"))
        .args(["simulate", "--frames", "1", "--preset"])
        .arg(preset)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.unwrap(), &mut stderr).unwrap();
    let (mut status, mut usage) = (0, unsafe_zeroed_rusage());
    // SAFETY: a child of this process, waited for once; `status` and `usage` are valid
    // out-pointers.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    let elapsed = started.elapsed();
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -1 };
    // ru_maxrss is in KiB on Linux.
    let peak_rss_bytes = usage.ru_maxrss as u64 * 1024;
    let numbers = format!("{code}\n{}\n{peak_rss_bytes}", elapsed.as_nanos());
    std::fs::write(report, format!("{numbers}\n\n{stderr}")).unwrap();
}

fn unsafe_zeroed_rusage() -> libc::rusage {
    // SAFETY: rusage is plain integers and timevals, for which all-zero bytes are valid.
    unsafe { std::mem::zeroed() }
}

/// Exit 2 within 1 s, under 100 MB resident, with a message of at most `max_message` bytes
/// that names the file and contains `why`.
fn assert_refused(preset: &Path, why: &str) {
    let run = simulate(preset);
    let what = format!(
        "{}: {:?} in {:?}, {} MB: {}",
        preset.display(),
        run.code,
        run.elapsed,
        run.peak_rss_bytes >> 20,
        run.stderr
    );
    assert_eq!(run.code, Some(2), "{what}");
    assert!(run.elapsed < Duration::from_secs(1), "{what}");
    assert!(run.peak_rss_bytes < 100 << 20, "{what}");
    assert!(
        run.stderr.contains(&preset.display().to_string()) && run.stderr.contains(why),
        "{what}"
    );
    assert!(run.stderr.len() <= 2000, "a short message: {} bytes", run.stderr.len());
}

#[test]
fn a_device_is_refused_at_once_without_reading_it() {
    assert_refused(Path::new("/dev/zero"), "a device, not a regular file");
}

#[test]
fn a_fifo_is_refused_without_waiting_for_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("scene.ron");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    assert_refused(&fifo, "a FIFO (named pipe), not a regular file");
}

#[test]
fn a_file_over_the_preset_size_limit_is_refused_from_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.ron");
    // A sparse 200 MB file: its size is what is checked, nothing of it is read.
    std::fs::File::create(&huge).unwrap().set_len(200 << 20).unwrap();
    assert_refused(&huge, "larger than the 64 MiB");
}

#[test]
fn a_broken_preset_of_one_long_line_gets_a_short_message() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("long.ron");
    let name = "x".repeat(5 << 20);
    std::fs::write(&broken, format!("(cloth: ({name}: 1))")).unwrap();
    let run = simulate(&broken);
    assert_eq!(run.code, Some(2), "{}", &run.stderr[..run.stderr.len().min(500)]);
    assert!(
        run.stderr.contains("unknown field `xxxx"),
        "{}",
        &run.stderr[..run.stderr.len().min(500)]
    );
    assert!(run.stderr.contains("more bytes)"), "the name is cut and says so");
    assert!(run.stderr.len() <= 2000, "{} bytes of message", run.stderr.len());
}

/// The error of `Preset::load` on a file `name` holding `contents`, in a fresh directory.
fn load_error(name: &str, contents: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, contents).unwrap();
    Preset::load(&path).unwrap_err().to_string()
}

#[test]
fn a_preset_that_is_not_utf8_is_placed_by_line_and_column() {
    let error = load_error("latin1.ron", b"(\n    name: \"caf\xe9\",\n)\n");
    assert!(
        error.ends_with("latin1.ron:2:15: not UTF-8 text (a preset is RON text in UTF-8)"),
        "{error}"
    );
}

#[test]
fn more_colliders_than_the_cap_are_refused_at_the_colliders_key() {
    let grounds = |n: usize| vec!["Ground(height: 0.0)"; n].join(", ");
    let scene = |n: usize| format!("(\n    colliders: [{}],\n)\n", grounds(n));
    let cap = drape::sim::MAX_COLLIDERS;
    assert!(
        Preset::parse(&scene(cap), Path::new("cap.ron")).is_ok(),
        "the cap itself is allowed"
    );
    let error = Preset::parse(&scene(cap + 1), Path::new("over.ron")).unwrap_err().to_string();
    assert!(
        error.starts_with("over.ron:2:5: invalid colliders = 257: at most 256 colliders"),
        "{error}"
    );
}

#[test]
fn a_pin_list_longer_than_the_grid_is_refused() {
    let pins = ["(0, 0)"; 5].join(", ");
    let text = format!("(\n    cloth: (columns: 2, rows: 2, pins: List([{pins}])),\n)\n");
    let error = Preset::parse(&text, Path::new("pins.ron")).unwrap_err().to_string();
    assert!(
        error.contains("invalid pins = 5: a pin list no longer than the grid has cells"),
        "{error}"
    );
}

#[test]
fn a_missing_mesh_is_reported_at_its_file_key_in_the_preset() {
    let text = "(\n    version: 2,\n    objects: [\n        Mesh(\n            file: \"nowhere.obj\",\n        ),\n    ],\n)\n";
    let error = load_error("scene.ron", text.as_bytes());
    // No candidate exists, so the path is named as written (crate::scene::resolve_path).
    assert!(
        error.contains("scene.ron:5:13: objects[0]: mesh file nowhere.obj: No such file"),
        "{error}"
    );
}

#[test]
fn mesh_file_errors_are_said_once_and_at_a_line_only_when_there_is_one() {
    let dir = tempfile::tempdir().unwrap();
    let chain = |path: &Path| format!("{:#}", anyhow::Error::new(drape::mesh_file::load_obj(path).unwrap_err()));
    let refused = chain(dir.path());
    assert_eq!(refused.matches("a directory, not a regular file").count(), 1, "{refused}");
    let empty = dir.path().join("empty.obj");
    std::fs::write(&empty, "").unwrap();
    assert_eq!(chain(&empty), format!("{}: the mesh has no faces", empty.display()));
    let huge = dir.path().join("huge.obj");
    std::fs::write(&huge, "v 0 0 0\nv 1 0 0\nv 0 3e38 0\nf 1 2 3\n").unwrap();
    let error = chain(&huge);
    assert!(
        error.starts_with(&format!(
            "{}:3: vertex 2: coordinates (0.0, 3e38, 0.0) are not finite or beyond ±1e7",
            huge.display()
        )),
        "{error}"
    );
}
