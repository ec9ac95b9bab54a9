//! A persistent thread pool for the solver (the caller plus up to [`MAX_PARTS`] − 1 workers,
//! started as first needed), and what its jobs synchronise with: a barrier, and progress
//! counters a thread can wait on without the others waiting back.
//!
//! A step's work is handed to the pool once per frame; inside it each thread waits before a
//! unit of work only until the others have finished the units it depends on ([`Progress`]),
//! and they meet at the barrier only around work one thread does alone (the tail group). Waking
//! a sleeping OS thread costs 15–20 µs on the development VM (and up to milliseconds once its
//! core has gone idle), more than many waits last, so every wait first spins (about 45 µs),
//! then yields its time slice for a while, and only then sleeps until the thread it waits for
//! signals the change ([`Sleepers`]). A wait that outlasts the spin and the yields is mostly
//! one whose partner is not running: more threads than cores ([`with_assumed_cores`]), or a
//! core taken by another program. Sleeping then gives the core to the thread that has the
//! work, where spinning or yielding forever took it from it (16 threads on 2 cores ran a step
//! 10 times slower than one thread, most of it in `sched_yield`; sleeping, about as fast as
//! one: docs/performance.md). Between jobs the idle workers spin, then yield
//! for a few milliseconds (the caller's serial work between frames), then park.
//!
//! The solver never asks for more threads than the machine has cores
//! ([`crate::sim::Cloth::threads_used`] caps it at [`available_cores`]); [`with_assumed_cores`]
//! lets a thread (a test) assume a bigger machine, so the determinism tests run 8 or 16
//! threads on 2 cores, oversubscribed and slow but exact.
//!
//! A panic in any thread of a job must not leave the others waiting forever on a count that
//! will never come: the panicking thread raises [`ABORTED`], every wait checks it (a sleeping
//! one at least every [`SLEEP_AT_MOST`]) and panics in turn, and [`run`] waits for every
//! thread and re-raises on the caller. The pool stays usable afterwards; its lock's poison is
//! cleared with a note on stderr.

use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use super::constraints::MAX_PARTS;

/// Spin iterations before a waiting thread starts yielding its time slice (about 45 µs on the
/// development VM's Xeon, 2 048 `pause`s).
const SPINS_BEFORE_YIELD: u32 = 1 << 11;
/// Spin iterations before a waiting thread of a job with more threads than the machine has
/// cores starts yielding: the thread it waits for is then likely not running, and spinning
/// would keep it from a core.
const SPINS_OVERSUBSCRIBED: u32 = 1 << 5;
/// How long a wait yields its time slice, after the spin, before it sleeps. On an idle core a
/// yield returns at once, so this is more spinning that lets another runnable thread in; a
/// wait this long costs the 15–20 µs of a wake-up at most a tenth more.
const YIELD_BEFORE_SLEEP: Duration = Duration::from_micros(200);
/// Longest a waiter sleeps before it looks again: the change it waits for wakes it at once;
/// this bounds how late it sees [`ABORTED`], which nobody signals.
const SLEEP_AT_MOST: Duration = Duration::from_millis(10);
/// How long an idle worker keeps polling for the next job before it parks.
const WORKER_POLL: Duration = Duration::from_millis(5);

/// A job run by every thread: called with the thread's index (0 = the caller, k = worker k).
type Job<'a> = &'a (dyn Fn(usize) + Sync);

/// Set when a thread of the current job panicked, so the others stop waiting for it. There is
/// one pool and it runs one job at a time, so one flag serves; cleared when a job starts.
static ABORTED: AtomicBool = AtomicBool::new(false);

/// Spin iterations of the current job's waits: [`SPINS_BEFORE_YIELD`], or
/// [`SPINS_OVERSUBSCRIBED`] when it has more threads than the machine has cores. Set when a job
/// starts (one job at a time, as [`ABORTED`]).
static SPINS: AtomicU32 = AtomicU32::new(SPINS_BEFORE_YIELD);

/// Where the threads waiting on one value sleep once their spin has run out, until the thread
/// that changes the value calls [`Self::wake`]. While nobody sleeps, a wake costs a fence and
/// one load.
#[derive(Debug, Default)]
struct Sleepers {
    /// Threads asleep (or about to be) on `wake_up`.
    count: AtomicU32,
    lock: Mutex<()>,
    wake_up: Condvar,
}

impl Sleepers {
    /// Wakes the sleepers; called after storing the change they wait for.
    fn wake(&self) {
        // With the fence in `sleep_until` (store, fence, load on both sides): either this load
        // sees the sleeper counted, or the sleeper's check sees the change, so no wake-up is
        // lost.
        fence(Ordering::SeqCst);
        if self.count.load(Ordering::Relaxed) > 0 {
            // A counted sleeper holds the lock until it waits on `wake_up`, so once we have
            // taken the lock it is waiting and the notification reaches it.
            drop(self.lock.lock().unwrap_or_else(PoisonError::into_inner));
            self.wake_up.notify_all();
        }
    }

    /// Sleeps until `ready()`, checked on every wake-up and at least every `at_most`.
    fn sleep_until(&self, ready: &mut impl FnMut() -> bool, at_most: Duration) {
        let mut guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.count.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        while !ready() {
            guard = self.wake_up.wait_timeout(guard, at_most).unwrap_or_else(PoisonError::into_inner).0;
        }
        self.count.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Waits for `ready`: spins, then yields, then sleeps in `sleepers` (which whoever makes
/// `ready` true wakes).
fn block_until(sleepers: &Sleepers, ready: &mut impl FnMut() -> bool) {
    for _ in 0..SPINS.load(Ordering::Relaxed) {
        if ready() {
            return;
        }
        std::hint::spin_loop();
    }
    let yielding = Instant::now();
    while yielding.elapsed() < YIELD_BEFORE_SLEEP {
        if ready() {
            return;
        }
        thread::yield_now();
    }
    sleepers.sleep_until(ready, SLEEP_AT_MOST);
}

/// [`block_until`], for a wait inside a job: panics if another thread of the job panicked (it
/// might never make `ready` true).
fn wait_until(sleepers: &Sleepers, mut ready: impl FnMut() -> bool) {
    let mut is_ready = false;
    block_until(sleepers, &mut || {
        is_ready = ready();
        is_ready || ABORTED.load(Ordering::Acquire)
    });
    if !is_ready {
        panic!("another solver thread panicked");
    }
}

/// A reusable barrier for the threads of a job.
#[derive(Debug, Default)]
pub(crate) struct SpinBarrier {
    arrived: AtomicU32,
    generation: AtomicU32,
    sleepers: Sleepers,
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
            self.sleepers.wake();
        } else {
            wait_until(&self.sleepers, || self.generation.load(Ordering::Acquire) != generation);
        }
    }
}

/// A part's count, and the threads sleeping on it, on a cache line of their own so the
/// threads' counters do not share one.
#[derive(Debug, Default)]
#[repr(align(128))]
struct PaddedCounter {
    count: AtomicU32,
    sleepers: Sleepers,
}

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
        let counter = &self.counts[part];
        counter.count.store(done, Ordering::Release);
        counter.sleepers.wake();
    }

    /// Blocks until part `part` has published at least `count`; returns the count seen, and
    /// makes the writes before that publication visible.
    pub fn wait_for(&self, part: usize, count: u32) -> u32 {
        let counter = &self.counts[part];
        let mut seen = 0;
        wait_until(&counter.sleepers, || {
            seen = counter.count.load(Ordering::Acquire);
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
    /// The caller, when waiting for `done` has outlasted its spin.
    finishing: Sleepers,
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
            finishing: Sleepers::default(),
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
        block_until(&s.finishing, &mut || s.done.load(Ordering::Acquire) == epoch);
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
        let spins = if threads <= machine_cores() {
            SPINS_BEFORE_YIELD
        } else {
            SPINS_OVERSUBSCRIBED
        };
        SPINS.store(spins, Ordering::Relaxed);
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
        s.finishing.wake();
    }
}

/// The process-wide pool, workers started on first use.
fn pool() -> &'static Mutex<Pool> {
    static POOL: OnceLock<Mutex<Pool>> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(Pool::default()))
}

thread_local! {
    /// The cores [`available_cores`] reports on this thread instead of the machine's
    /// ([`with_assumed_cores`]).
    static ASSUMED_CORES: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Runs `f` with the steps this thread makes sized for a machine of `cores` cores (at least
/// 1): [`crate::sim::Cloth::threads_used`] caps asked-for threads, and picks automatic ones,
/// by it instead of the machine's cores. Tests use it to run the solver on more OS threads
/// than the machine has cores (slow, but bit-identical to one thread) or to check the cap on
/// a machine of any size. Other threads are not affected; the previous setting comes back
/// when `f` returns or panics.
pub fn with_assumed_cores<R>(cores: usize, f: impl FnOnce() -> R) -> R {
    /// Puts the setting found on entry back.
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ASSUMED_CORES.set(self.0);
        }
    }
    let _restore = Restore(ASSUMED_CORES.replace(Some(cores.max(1))));
    f()
}

/// Threads this machine runs at once: its logical cores as the OS offers them to this process
/// (1 if unknown), or what [`with_assumed_cores`] set on this thread.
pub fn available_cores() -> usize {
    ASSUMED_CORES.get().unwrap_or_else(machine_cores)
}

/// The machine's logical cores as the OS offers them to this process (1 if unknown), read once.
fn machine_cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| thread::available_parallelism().map_or(1, |n| n.get()))
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
        // The waits are still spinning (no delay), or asleep (the panic comes after the spin
        // and the yields have run out, so only the sleepers' timeout shows them `ABORTED`).
        let asleep = SLEEP_AT_MOST / 2;
        for (threads, delay) in [(2, Duration::ZERO), (4, Duration::ZERO), (2, asleep), (4, asleep)] {
            // The caller and the other workers wait for a count the last worker, panicking,
            // never publishes.
            let progress = Progress::default();
            let (panicked, took) = run_panicking(threads, move |t| {
                if t == threads - 1 {
                    thread::sleep(delay);
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
                    thread::sleep(delay);
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

    /// A sleeper returns when the value it waits on changes and [`Sleepers::wake`] is
    /// called, long before its timeout (an hour here: a lost wake-up fails the test).
    #[test]
    fn a_sleeper_is_woken_by_the_change_not_by_its_timeout() {
        for _ in 0..20 {
            let shared = Arc::new((Sleepers::default(), AtomicBool::new(false)));
            let for_sleeper = Arc::clone(&shared);
            let (sender, receiver) = std::sync::mpsc::channel();
            thread::spawn(move || {
                let (sleepers, changed) = &*for_sleeper;
                sleepers.sleep_until(&mut || changed.load(Ordering::Acquire), Duration::from_secs(3600));
                sender.send(())
            });
            let (sleepers, changed) = &*shared;
            while sleepers.count.load(Ordering::Relaxed) == 0 {
                thread::yield_now();
            }
            changed.store(true, Ordering::Release);
            sleepers.wake();
            receiver.recv_timeout(Duration::from_secs(5)).expect("the sleeper was not woken");
        }
    }
}
