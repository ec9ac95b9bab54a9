//! A persistent thread pool for the solver (the caller plus up to [`MAX_PARTS`] − 1 workers,
//! started as first needed), and what its jobs synchronise with: a spin barrier, and progress
//! counters a thread can wait on without the others waiting back.
//!
//! A step's work is handed to the pool once per frame; inside it each thread waits before a
//! unit of work only until the others have finished the units it depends on ([`Progress`]),
//! and they meet at the barrier only around work one thread does alone (the tail group). Waking
//! a sleeping OS thread costs 0.1–1 ms on a small VM, far more than a substep, so the workers
//! spin for a while after each job and only park when the solver has gone quiet (the app
//! between frames); every wait spins, then yields so an oversubscribed machine (more threads
//! than cores) still makes progress.
//!
//! A panic in any thread of a job must not leave the others spinning forever on a count that
//! will never come: the panicking thread raises [`ABORTED`], every wait checks it and panics
//! in turn, and [`run`] waits for every thread and re-raises on the caller. The pool stays
//! usable afterwards; its lock's poison is cleared with a note on stderr.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use super::constraints::MAX_PARTS;

/// Spin iterations before a waiting thread starts yielding its time slice.
const SPINS_BEFORE_YIELD: u32 = 1 << 11;
/// How long an idle worker keeps polling for the next job before it parks.
const WORKER_POLL: Duration = Duration::from_millis(5);

/// A job run by every thread: called with the thread's index (0 = the caller, k = worker k).
type Job<'a> = &'a (dyn Fn(usize) + Sync);

/// Set when a thread of the current job panicked, so the others stop waiting for it. There is
/// one pool and it runs one job at a time, so one flag serves; cleared when a job starts.
static ABORTED: AtomicBool = AtomicBool::new(false);

/// Waits for `ready` with a spin, then yield, loop. Panics if another thread of the job
/// panicked (it might never make `ready` true).
fn wait_until(mut ready: impl FnMut() -> bool) {
    let mut spins = 0u32;
    while !ready() {
        if ABORTED.load(Ordering::Acquire) {
            panic!("another solver thread panicked");
        }
        if spins < SPINS_BEFORE_YIELD {
            spins += 1;
            std::hint::spin_loop();
        } else {
            thread::yield_now();
        }
    }
}

/// A reusable barrier for the threads of a job.
#[derive(Debug, Default)]
pub(crate) struct SpinBarrier {
    arrived: AtomicU32,
    generation: AtomicU32,
}

impl SpinBarrier {
    /// Blocks until `parties` threads have called `wait` for this generation.
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

/// A counter on a cache line of its own, so the threads' counters do not share one.
#[derive(Debug, Default)]
#[repr(align(128))]
struct PaddedCounter(AtomicU32);

/// How many units of work of each part of the sweep have finished in the current job: the
/// thread running a part publishes its count, and others wait for it to reach what they
/// depend on.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    counts: [PaddedCounter; MAX_PARTS],
}

impl Progress {
    /// Part `part` has finished `done` units (counts only grow within a job).
    pub fn publish(&self, part: usize, done: u32) {
        self.counts[part].0.store(done, Ordering::Release);
    }

    /// Blocks until part `part` has published at least `count`; returns the count seen, and
    /// makes the writes before that publication visible.
    pub fn wait_for(&self, part: usize, count: u32) -> u32 {
        let mut seen = 0;
        wait_until(|| {
            seen = self.counts[part].0.load(Ordering::Acquire);
            seen >= count
        });
        seen
    }
}

/// State shared between the caller and one worker.
struct Shared {
    /// The job index this worker runs (1 for the first worker).
    index: usize,
    /// Incremented once per job the worker takes part in.
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

/// A worker thread and what it shares with the caller.
struct Worker {
    shared: Arc<Shared>,
    thread: Thread,
}

impl Worker {
    /// Starts the worker that runs `job(index)`; `None` if the OS refuses a thread.
    fn start(index: usize) -> Option<Self> {
        let shared = Arc::new(Shared {
            index,
            epoch: AtomicU64::new(0),
            done: AtomicU64::new(0),
            sleeping: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
            job: UnsafeCell::new(None),
        });
        let for_worker = Arc::clone(&shared);
        let handle = thread::Builder::new()
            .name(format!("drape-solver-{index}"))
            .spawn(move || worker_loop(&for_worker))
            .ok()?;
        Some(Self {
            shared,
            thread: handle.thread().clone(),
        })
    }

    /// Hands `job` to the idle worker; returns the epoch to wait for.
    ///
    /// # Safety
    /// The worker must be idle, and `job` must stay alive until [`Self::wait`] for the
    /// returned epoch has returned.
    unsafe fn hand(&self, job: Job<'_>) -> u64 {
        let s = &*self.shared;
        // SAFETY: the worker is idle (the caller's contract), so nothing reads `job` now; the
        // caller keeps the job alive until the worker finished it, which makes the 'static
        // lifetime sound.
        unsafe { *s.job.get() = Some(std::mem::transmute::<Job<'_>, Job<'static>>(job)) };
        let epoch = s.epoch.fetch_add(1, Ordering::SeqCst) + 1;
        if s.sleeping.swap(false, Ordering::SeqCst) {
            self.thread.unpark();
        }
        epoch
    }

    /// Waits until the worker finished job `epoch` (not giving up on [`ABORTED`]: an aborted
    /// worker stops at its next wait); returns whether its part panicked.
    fn wait(&self, epoch: u64) -> bool {
        let s = &*self.shared;
        let mut spins = 0u32;
        while s.done.load(Ordering::Acquire) != epoch {
            spins += 1;
            if spins < SPINS_BEFORE_YIELD {
                std::hint::spin_loop();
            } else {
                thread::yield_now();
            }
        }
        s.panicked.swap(false, Ordering::AcqRel)
    }
}

/// The workers started so far (worker k − 1 runs `job(k)`).
#[derive(Default)]
struct Pool {
    workers: Vec<Worker>,
}

impl Pool {
    /// Starts workers until there are `count`; returns how many there are.
    fn grow(&mut self, count: usize) -> usize {
        while self.workers.len() < count {
            match Worker::start(self.workers.len() + 1) {
                Some(worker) => self.workers.push(worker),
                None => break,
            }
        }
        self.workers.len()
    }

    /// Runs `job(0)` here and `job(1..threads)` on the first `threads − 1` workers, returning
    /// when all are done; panics (after all are done) if any thread panicked.
    fn run(&self, job: Job<'_>, threads: usize) {
        ABORTED.store(false, Ordering::Release);
        let workers = &self.workers[..threads - 1];
        // SAFETY: the workers are idle (every earlier job was awaited below), and this function
        // does not return before each has finished the job.
        let epochs: Vec<u64> = workers.iter().map(|w| unsafe { w.hand(job) }).collect();
        let ours = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(0)));
        if ours.is_err() {
            ABORTED.store(true, Ordering::Release);
        }
        // Wait for every worker even if our part panicked, so none runs a dangling job.
        let worker_panicked = workers.iter().zip(epochs).fold(false, |any, (w, epoch)| w.wait(epoch) | any);
        if let Err(payload) = ours {
            std::panic::resume_unwind(payload);
        }
        if worker_panicked {
            panic!("a solver worker thread panicked");
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
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(s.index))).is_err() {
                ABORTED.store(true, Ordering::Release);
                s.panicked.store(true, Ordering::Release);
            }
        }
        s.done.store(seen, Ordering::Release);
    }
}

/// The process-wide pool, workers started on first use.
fn pool() -> &'static Mutex<Pool> {
    static POOL: OnceLock<Mutex<Pool>> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(Pool::default()))
}

/// Threads this machine runs at once (its logical cores; 1 if unknown).
pub(crate) fn available() -> usize {
    thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `job(0)`, …, `job(threads − 1)` concurrently on `threads` threads (at most
/// [`MAX_PARTS`]) and returns `true`, or returns `false` without running anything when the OS
/// refuses the threads (said on stderr); the caller then runs the work serially. While another
/// cloth's step holds the pool (stepped on another thread), this waits for it.
pub(crate) fn run(job: Job<'_>, threads: usize) -> bool {
    assert!((2..=MAX_PARTS).contains(&threads), "{threads} threads");
    let mut guard = match pool().lock() {
        Ok(guard) => guard,
        // A job panicked while the lock was held: every thread had finished (see `Pool::run`),
        // so the pool itself is sound and is used again.
        Err(poisoned) => {
            eprintln!("drape: the solver pool recovers from a panicked step");
            pool().clear_poison();
            poisoned.into_inner()
        }
    };
    if guard.grow(threads - 1) < threads - 1 {
        eprintln!("drape: could not start {threads} solver threads; this step runs on one");
        return false;
    }
    guard.run(job, threads);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_thread_runs_and_the_barrier_orders_them() {
        let log = Mutex::new(Vec::new());
        let barrier = SpinBarrier::default();
        for threads in [2, 3, 5] {
            for _ in 0..50 {
                log.lock().unwrap().clear();
                let ran = run(
                    &|t| {
                        if t > 0 {
                            log.lock().unwrap().push(t);
                        }
                        barrier.wait(threads as u32);
                        if t == 0 {
                            log.lock().unwrap().push(0);
                        }
                    },
                    threads,
                );
                if ran {
                    let mut log = log.lock().unwrap().clone();
                    assert_eq!(log.pop(), Some(0), "the caller's part after the barrier");
                    log.sort_unstable();
                    assert_eq!(log, (1..threads).collect::<Vec<_>>(), "each worker once, before it");
                }
            }
        }
    }

    /// Runs `job` through the pool on a fresh thread, returning whether it panicked there and
    /// how long that took; fails the test if it hangs for 5 s.
    fn run_panicking(threads: usize, job: impl Fn(usize) + Sync + Send + 'static) -> (bool, Duration) {
        let (sender, receiver) = std::sync::mpsc::channel();
        thread::spawn(move || {
            let started = Instant::now();
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&job, threads)));
            assert!(!matches!(outcome, Ok(false)), "the pool could not start its threads");
            sender.send((outcome.is_err(), started.elapsed()))
        });
        receiver.recv_timeout(Duration::from_secs(5)).expect("the job hung")
    }

    #[test]
    fn a_panicking_worker_ends_the_job_with_a_panic_on_the_caller() {
        for threads in [2, 4] {
            // The caller and the other workers wait for a count the last worker, panicking,
            // never publishes.
            let progress = Progress::default();
            let (panicked, took) = run_panicking(threads, move |t| {
                if t == threads - 1 {
                    panic!("injected worker panic");
                }
                progress.wait_for(threads - 1, 1);
            });
            assert!(
                panicked && took < Duration::from_secs(1),
                "{threads} threads: panicked {panicked} after {took:?}"
            );
            // The workers wait at the barrier for a caller that panicked.
            let barrier = SpinBarrier::default();
            let (panicked, took) = run_panicking(threads, move |t| {
                if t == 0 {
                    panic!("injected caller panic");
                }
                barrier.wait(threads as u32);
            });
            assert!(
                panicked && took < Duration::from_secs(1),
                "{threads} threads: panicked {panicked} after {took:?}"
            );
            // The pool still runs jobs on every thread.
            let ran = Arc::new(Mutex::new(vec![false; threads]));
            let seen = Arc::clone(&ran);
            let (panicked, _) = run_panicking(threads, move |t| seen.lock().unwrap()[t] = true);
            assert!(!panicked);
            assert!(ran.lock().unwrap().iter().all(|&r| r), "{threads} threads");
        }
    }
}
