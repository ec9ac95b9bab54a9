//! A persistent two-thread pool for the solver, and what its jobs synchronise with: a spin
//! barrier, and progress counters one thread can wait on without the other waiting back.
//!
//! A step's work is handed to the pool once per frame; inside it each thread waits before a
//! unit of work only until the other has finished the units it depends on ([`Progress`]), and
//! the two meet at the barrier only around work one thread does alone (the tail group). Waking a
//! sleeping OS thread costs 0.1–1 ms on a small VM, far more than a substep, so the worker
//! spins for a while after each job and only parks when the solver has gone quiet (the app
//! between frames); the barrier spins, then yields so an oversubscribed machine still makes
//! progress.
//!
//! A panic in either half of a job must not leave the other spinning forever on a count that
//! will never come: the panicking side raises [`ABORTED`], every wait checks it and panics
//! in turn, and [`run`] waits for both halves and re-raises on the caller. The pool stays
//! usable afterwards (its lock's poison is cleared, with a note on stderr).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, TryLockError};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

/// Spin iterations before a waiting thread starts yielding its time slice.
const SPINS_BEFORE_YIELD: u32 = 1 << 11;
/// How long an idle worker keeps polling for the next job before it parks.
const WORKER_POLL: Duration = Duration::from_millis(5);

/// A job run by both threads: called with the thread's index (0 = caller, 1 = worker).
type Job<'a> = &'a (dyn Fn(usize) + Sync);

/// Set when a half of the current job panicked, so the other stops waiting for it. There is
/// one pool and it runs one job at a time, so one flag serves; cleared when a job starts.
static ABORTED: AtomicBool = AtomicBool::new(false);

/// Waits for `ready` with a spin, then yield, loop. Panics if the other half of the job
/// panicked (it would never make `ready` true).
fn wait_until(mut ready: impl FnMut() -> bool) {
    let mut spins = 0u32;
    while !ready() {
        if ABORTED.load(Ordering::Acquire) {
            panic!("the other solver thread panicked");
        }
        if spins < SPINS_BEFORE_YIELD {
            spins += 1;
            std::hint::spin_loop();
        } else {
            thread::yield_now();
        }
    }
}

/// A reusable barrier for the two threads of a job.
#[derive(Debug, Default)]
pub(crate) struct SpinBarrier {
    arrived: AtomicU32,
    generation: AtomicU32,
}

impl SpinBarrier {
    /// Blocks until `parties` threads (1 or 2) have called `wait` for this generation.
    pub fn wait(&self, parties: u32) {
        if parties <= 1 {
            return;
        }
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == parties {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.store(generation.wrapping_add(1), Ordering::Release);
        } else {
            wait_until(|| self.generation.load(Ordering::Acquire) != generation);
        }
    }
}

/// A counter on a cache line of its own, so the two threads' counters do not share one.
#[derive(Debug, Default)]
#[repr(align(128))]
struct PaddedCounter(AtomicU32);

/// How many units of work each of the two threads has finished in the current job: each
/// thread publishes its own count, and waits for the other's to reach what it depends on.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    counts: [PaddedCounter; 2],
}

impl Progress {
    /// Thread `t` has finished `done` units (counts only grow within a job).
    pub fn publish(&self, t: usize, done: u32) {
        self.counts[t].0.store(done, Ordering::Release);
    }

    /// Blocks until thread `t` has published at least `count`; returns the count seen, and
    /// makes the writes before that publication visible.
    pub fn wait_for(&self, t: usize, count: u32) -> u32 {
        let mut seen = 0;
        wait_until(|| {
            seen = self.counts[t].0.load(Ordering::Acquire);
            seen >= count
        });
        seen
    }
}

/// State shared between the caller and the worker.
struct Shared {
    /// Incremented once per job.
    epoch: AtomicU64,
    /// The epoch of the last job the worker finished.
    done: AtomicU64,
    /// Set while the worker is (about to be) parked.
    sleeping: AtomicBool,
    /// Set if the worker's part of a job panicked.
    panicked: AtomicBool,
    /// The current job; written before `epoch` is published, read after.
    job: UnsafeCell<Option<Job<'static>>>,
}

// SAFETY: `job` is written only by the caller while the worker is idle (before the epoch
// increment that publishes it) and read only by the worker after seeing that increment.
unsafe impl Sync for Shared {}

/// One worker thread beside the caller.
struct Pool {
    shared: Arc<Shared>,
    worker: Thread,
}

impl Pool {
    fn start() -> Option<Self> {
        let shared = Arc::new(Shared {
            epoch: AtomicU64::new(0),
            done: AtomicU64::new(0),
            sleeping: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
            job: UnsafeCell::new(None),
        });
        let for_worker = Arc::clone(&shared);
        let handle = thread::Builder::new()
            .name("drape-solver".into())
            .spawn(move || worker_loop(&for_worker))
            .ok()?;
        Some(Self {
            shared,
            worker: handle.thread().clone(),
        })
    }

    /// Runs `job(0)` here and `job(1)` on the worker, returning when both are done; panics
    /// (after both are done) if either half panicked.
    fn run(&self, job: Job<'_>) {
        let s = &*self.shared;
        ABORTED.store(false, Ordering::Release);
        // SAFETY: the worker is idle (the previous job's `done` was awaited), and the lifetime
        // is sound because this function does not return before the worker finished the job.
        unsafe { *s.job.get() = Some(std::mem::transmute::<Job<'_>, Job<'static>>(job)) };
        let epoch = s.epoch.fetch_add(1, Ordering::SeqCst) + 1;
        if s.sleeping.swap(false, Ordering::SeqCst) {
            self.worker.unpark();
        }
        let ours = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(0)));
        if ours.is_err() {
            ABORTED.store(true, Ordering::Release);
        }
        // Wait for the worker even if our half panicked, so it never runs a dangling job (an
        // aborted worker stops at its next wait). This wait does not give up on ABORTED.
        let mut spins = 0u32;
        while s.done.load(Ordering::Acquire) != epoch {
            spins += 1;
            if spins < SPINS_BEFORE_YIELD {
                std::hint::spin_loop();
            } else {
                thread::yield_now();
            }
        }
        let worker_panicked = s.panicked.swap(false, Ordering::AcqRel);
        if let Err(payload) = ours {
            std::panic::resume_unwind(payload);
        }
        if worker_panicked {
            panic!("solver worker thread panicked");
        }
    }
}

fn worker_loop(s: &Shared) {
    let mut seen = 0u64;
    loop {
        let started = Instant::now();
        let mut spins = 0u32;
        loop {
            let epoch = s.epoch.load(Ordering::Acquire);
            if epoch != seen {
                seen = epoch;
                break;
            }
            if spins < SPINS_BEFORE_YIELD {
                spins += 1;
                std::hint::spin_loop();
            } else if started.elapsed() < WORKER_POLL {
                thread::yield_now();
            } else {
                s.sleeping.store(true, Ordering::SeqCst);
                if s.epoch.load(Ordering::SeqCst) == seen {
                    thread::park();
                }
                s.sleeping.store(false, Ordering::SeqCst);
            }
        }
        // SAFETY: published by the epoch increment observed above; the caller keeps the job
        // alive until `done` reaches this epoch.
        let job = unsafe { *s.job.get() };
        if let Some(job) = job {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(1))).is_err() {
                ABORTED.store(true, Ordering::Release);
                s.panicked.store(true, Ordering::Release);
            }
        }
        s.done.store(seen, Ordering::Release);
    }
}

/// The process-wide pool, started on first use; `None` if no thread could be spawned.
fn pool() -> &'static Mutex<Option<Pool>> {
    static POOL: OnceLock<Mutex<Option<Pool>>> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(Pool::start()))
}

/// Number of threads [`run`] can use on this machine (1 or 2).
pub(crate) fn available() -> usize {
    thread::available_parallelism().map_or(1, |n| n.get().min(2))
}

/// Runs `job(0)` and `job(1)` concurrently on two threads and returns `true`, or returns
/// `false` without running anything when the pool is busy (another cloth is stepping on
/// another thread) or unavailable; the caller then runs the work serially.
pub(crate) fn run(job: Job<'_>) -> bool {
    let guard = match pool().try_lock() {
        Ok(guard) => guard,
        Err(TryLockError::WouldBlock) => return false,
        // A job panicked while the lock was held: both halves had finished (see `Pool::run`),
        // so the pool itself is sound and is used again.
        Err(TryLockError::Poisoned(poisoned)) => {
            eprintln!("drape: the solver pool recovers from a panicked step");
            pool().clear_poison();
            poisoned.into_inner()
        }
    };
    match guard.as_ref() {
        Some(pool) => {
            pool.run(job);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_halves_run_and_the_barrier_orders_them() {
        let log = Mutex::new(Vec::new());
        let barrier = SpinBarrier::default();
        for _ in 0..100 {
            log.lock().unwrap().clear();
            let ran = run(&|t| {
                if t == 1 {
                    log.lock().unwrap().push("worker before");
                }
                barrier.wait(2);
                if t == 0 {
                    log.lock().unwrap().push("caller after");
                }
            });
            if ran {
                assert_eq!(*log.lock().unwrap(), ["worker before", "caller after"]);
            }
        }
    }

    /// Runs `job` through the pool on a fresh thread, returning whether it panicked there and
    /// how long that took; fails the test if it hangs for 5 s.
    fn run_panicking(job: impl Fn(usize) + Sync + Send + 'static) -> (bool, Duration) {
        let (sender, receiver) = std::sync::mpsc::channel();
        thread::spawn(move || {
            let started = Instant::now();
            loop {
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&job))) {
                    Ok(false) => thread::yield_now(), // another test holds the pool
                    Ok(true) => break sender.send((false, started.elapsed())),
                    Err(_) => break sender.send((true, started.elapsed())),
                }
            }
        });
        receiver.recv_timeout(Duration::from_secs(5)).expect("the job hung")
    }

    #[test]
    fn a_panicking_worker_ends_the_job_with_a_panic_on_the_caller() {
        if available() < 2 {
            return;
        }
        // The caller waits for a count the panicking worker never publishes.
        let progress = Progress::default();
        let (panicked, took) = run_panicking(move |t| {
            if t == 1 {
                panic!("injected worker panic");
            }
            progress.wait_for(1, 1);
        });
        assert!(panicked && took < Duration::from_secs(1), "panicked {panicked} after {took:?}");
        // The worker waits at the barrier for a caller that panicked.
        let barrier = SpinBarrier::default();
        let (panicked, took) = run_panicking(move |t| {
            if t == 0 {
                panic!("injected caller panic");
            }
            barrier.wait(2);
        });
        assert!(panicked && took < Duration::from_secs(1), "panicked {panicked} after {took:?}");
        // The pool still runs jobs on both threads.
        let ran = Arc::new(Mutex::new([false; 2]));
        let seen = Arc::clone(&ran);
        let (panicked, _) = run_panicking(move |t| seen.lock().unwrap()[t] = true);
        assert!(!panicked);
        assert_eq!(*ran.lock().unwrap(), [true, true]);
    }
}
