//! The fork-join that every batched environment steps with (Game Boy `Batch`, `RedV2Batch`,
//! `PongBatch`): N environments split into one contiguous home block per participant, run on a
//! Rayon pool's threads and the calling thread.
//!
//! Why not plain Rayon (`install` + `par_iter`, or `broadcast`) per call: a Pong batch step is
//! ~126 us of work on one core, ~8 us per thread on 16, and Rayon's threads fall asleep after
//! ~32 rounds of `sched_yield` without work; every call then pays the caller's futex wake of
//! each thread, the threads' wake-up (a halted vCPU on a virtual machine) and the caller's own
//! wake at the join, and work stealing moves environments between threads (so between caches)
//! from call to call.
//! Here:
//!
//! * **Cache-affine blocks.** Participant k (pool thread k, the caller the last block) claims
//!   its own block first, so an environment is stepped by the same thread every call. Claims
//!   are `grain` environments at a time from a per-block atomic cursor; a participant whose
//!   block is done takes what is left of the others' blocks (a late thread, a slow environment),
//!   so the call never waits on a thread that was not woken in time.
//! * **Lingering workers.** A pool thread that finished its block stays in the job and spins
//!   (`pause`, then `sched_yield` after 10 us) waiting for the next call; a call finds it there
//!   and starts it with one atomic store, no system call. The wait is bounded: until the call
//!   ends at most `EMURUST_SPIN_US` (default 100 us; 0: never spin), then twice the gap the
//!   caller left between its last two calls plus 5 us, at most `EMURUST_SPIN_US`, and none
//!   when calls come further apart than that (then waking costs little against the gap).
//!   After it, the thread returns to Rayon (which parks it); the next call relaunches the
//!   threads with `spawn_broadcast` (one allocation per relaunch, none per call while they
//!   linger; no relaunch while one is still on its way, so jobs never pile up behind a thread
//!   the OS keeps waiting).
//! * **The caller works.** The caller steps the last block, then spins for the others at most
//!   the same bound and parks (woken by the thread that completes the last environment).
//! * **Nothing per call is allocated**; results never depend on which thread ran what (each
//!   environment owns its state and output rows).
//!
//! One call runs at a time per pool (a mutex): batches that share the pool take turns, as they
//! would on Rayon's queue. Other Rayon work on the pool (`RedV2AsyncPool`'s tasks) waits at
//! most one spin bound behind lingering threads.
//!
//! `EMURUST_PIN_THREADS=1` pins pool thread i to the i-th CPU the process may use
//! (`sched_setaffinity`, set when the pool starts); off by default (on a shared or virtual
//! machine a pinned thread cannot move away from a busy CPU).

use std::cell::UnsafeCell;
use std::ops::Range;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// A value alone in its cache lines (two, for the adjacent-line prefetcher).
#[repr(align(128))]
struct Padded<T>(T);

/// The work of one call: run on every claimed range of environment indices.
type Work<'a> = dyn Fn(Range<usize>) + Sync + 'a;

/// The current call, as the participants read it after a successful claim.
#[derive(Clone, Copy)]
struct Job {
    /// The caller's closure, its lifetime erased: valid until every index is done (`run`
    /// does not return before).
    work: *const Work<'static>,
    n: usize,
}

/// The job before the first call.
static NOOP: fn(Range<usize>) = |_| {};

/// Default and environment variable of the spin bound (microseconds).
const DEFAULT_SPIN_US: u64 = 100;

struct Inner {
    /// Participants: the caller and `threads - 1` pool threads.
    threads: usize,
    /// Bumped by the caller once a call is published.
    epoch: Padded<AtomicU64>,
    /// Block k's claim cursor: `(end << 32) | next` (one atomic word, so a claim can never
    /// pair one call's position with another call's end).
    cursors: Box<[Padded<AtomicU64>]>,
    /// Environments whose work is done in the current call, and their number in the call
    /// (lingering threads compare the two to see the call end).
    done: Padded<AtomicUsize>,
    call_n: AtomicUsize,
    /// Pool threads inside the gang's job (working or spinning for the next call).
    lingering: Padded<AtomicUsize>,
    /// Gang jobs spawned on pool threads and not started yet. No new launch while one is on
    /// its way: a thread the OS keeps waiting would otherwise get a job queued per call.
    unstarted: AtomicUsize,
    /// How long a pool thread spins for the next call (nanoseconds; set by the caller).
    spin_ns: AtomicU64,
    /// The most the threads and the caller spin (EMURUST_SPIN_US).
    max_spin: Duration,
    job: UnsafeCell<Job>,
    /// A participant's work panicked in the current call.
    panicked: AtomicBool,
    /// The caller is parked waiting for the join, and its handle.
    caller_parked: AtomicBool,
    caller: Mutex<Option<Thread>>,
}

// SAFETY: `job` is written only by the caller holding `Gang::call`, while no participant can
// read it (every index of the previous call is done and no new one is published yet); it is
// read only after a successful claim, which orders it after the write (the cursor's
// Release/Acquire). Everything else is atomic or locked.
unsafe impl Sync for Inner {}
unsafe impl Send for Inner {}

impl Inner {
    /// Claim and run ranges: first from block `home`, then from the others in turn. Returns
    /// after finding every block exhausted.
    fn claim_and_run(&self, home: usize, grain: usize) {
        let t = self.threads;
        for k in (0..t).map(|j| (home + j) % t) {
            loop {
                let v = self.cursors[k].0.fetch_add(grain as u64, Ordering::AcqRel);
                let (next, end) = ((v & 0xFFFF_FFFF) as usize, (v >> 32) as usize);
                if next >= end {
                    break;
                }
                let stop = (next + grain).min(end);
                // SAFETY: a successful claim: the call is not done, so `job` and its closure
                // are alive (see `Job`), and the claim's Acquire orders the read after the
                // caller's write.
                let job = unsafe { *self.job.get() };
                let r = catch_unwind(AssertUnwindSafe(|| unsafe { (*job.work)(next..stop) }));
                if r.is_err() {
                    self.panicked.store(true, Ordering::Relaxed);
                }
                let d = self.done.0.fetch_add(stop - next, Ordering::SeqCst) + (stop - next);
                if d == job.n && self.caller_parked.load(Ordering::SeqCst) {
                    if let Some(c) = &*self.caller.lock().unwrap_or_else(|e| e.into_inner()) {
                        c.unpark();
                    }
                }
            }
        }
    }

    /// A pool thread's life in the gang: run the current call's claims, then wait for the next
    /// call (bounded spin) and run it, until a wait times out.
    fn linger(&self, me: usize, grain_of: impl Fn() -> usize) {
        self.lingering.0.fetch_add(1, Ordering::SeqCst);
        let mut seen = self.epoch.0.load(Ordering::SeqCst);
        loop {
            self.claim_and_run(me, grain_of());
            // Wait for the call to end (the others' blocks; at most the spin bound), then for
            // the next call: `spin` from the end of this one.
            let spin = Duration::from_nanos(self.spin_ns.load(Ordering::Relaxed));
            let mut wait = Backoff::new();
            let mut call_ended = false;
            loop {
                let e = self.epoch.0.load(Ordering::SeqCst);
                if e != seen {
                    seen = e;
                    break;
                }
                let waited = wait.snooze();
                if !call_ended
                    && self.done.0.load(Ordering::Relaxed) >= self.call_n.load(Ordering::Relaxed)
                {
                    call_ended = true;
                    wait = Backoff::new();
                    continue;
                }
                let limit = if call_ended { spin } else { self.max_spin };
                if waited >= limit {
                    // Leave, then look once more: the caller bumps the epoch before it counts
                    // the lingering threads, so either it sees this thread gone (and
                    // relaunches) or this thread sees its call.
                    self.lingering.0.fetch_sub(1, Ordering::SeqCst);
                    let e = self.epoch.0.load(Ordering::SeqCst);
                    if e == seen {
                        return;
                    }
                    self.lingering.0.fetch_add(1, Ordering::SeqCst);
                    seen = e;
                    break;
                }
            }
        }
    }
}

/// A Rayon pool and the fork-join over it (see the module docs). Shared by the batches that
/// share the pool.
pub(crate) struct Gang {
    pool: Arc<rayon::ThreadPool>,
    inner: Arc<Inner>,
    /// One call at a time; holds the end of the last call (for the gap) and its grain.
    call: Mutex<CallState>,
    /// The grain of the call in progress, for threads launched during it.
    grain: Arc<AtomicUsize>,
}

struct CallState {
    last_end: Option<Instant>,
}

impl Gang {
    pub(crate) fn new(pool: Arc<rayon::ThreadPool>) -> Gang {
        let threads = pool.current_num_threads().max(1);
        let max_spin = Duration::from_micros(
            std::env::var("EMURUST_SPIN_US")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(DEFAULT_SPIN_US)
                .min(100_000),
        );
        Gang {
            pool,
            inner: Arc::new(Inner {
                threads,
                epoch: Padded(AtomicU64::new(0)),
                cursors: (0..threads).map(|_| Padded(AtomicU64::new(0))).collect(),
                done: Padded(AtomicUsize::new(0)),
                call_n: AtomicUsize::new(0),
                lingering: Padded(AtomicUsize::new(0)),
                unstarted: AtomicUsize::new(0),
                spin_ns: AtomicU64::new(max_spin.as_nanos() as u64),
                max_spin,
                job: UnsafeCell::new(Job {
                    work: &NOOP as &Work<'static>,
                    n: 0,
                }),
                panicked: AtomicBool::new(false),
                caller_parked: AtomicBool::new(false),
                caller: Mutex::new(None),
            }),
            call: Mutex::new(CallState { last_end: None }),
            grain: Arc::new(AtomicUsize::new(1)),
        }
    }

    /// The Rayon pool (for work that is not a fork-join over environments).
    pub(crate) fn pool(&self) -> &rayon::ThreadPool {
        &self.pool
    }

    pub(crate) fn threads(&self) -> usize {
        self.inner.threads
    }

    /// Run `work` over `0..n` in ranges of at most `grain` indices, each index exactly once,
    /// across the pool's threads and the caller (see the module docs); returns when all are
    /// done. A panic in `work` is re-raised here once every index is done.
    pub(crate) fn run<F>(&self, n: usize, grain: usize, work: F)
    where
        F: Fn(Range<usize>) + Sync,
    {
        let grain = grain.max(1);
        let t = self.inner.threads;
        if n == 0 {
            return;
        }
        if t == 1 || n <= grain {
            work(0..n);
            return;
        }
        assert!(n < u32::MAX as usize, "gang: too many environments");
        let mut state = self.call.lock().unwrap_or_else(|e| e.into_inner());
        let inner = &*self.inner;
        let now = Instant::now();
        // The threads spin about twice the gap between calls; not at all when calls come
        // further apart than the bound (waking them then costs little against the gap).
        let spin = match state.last_end {
            Some(end) => {
                let gap = now.saturating_duration_since(end);
                if gap > inner.max_spin {
                    Duration::ZERO
                } else {
                    (gap * 2 + Duration::from_micros(5)).min(inner.max_spin)
                }
            }
            None => inner.max_spin,
        };
        inner
            .spin_ns
            .store(spin.as_nanos() as u64, Ordering::Relaxed);
        self.grain.store(grain, Ordering::Relaxed);
        {
            let mut c = inner.caller.lock().unwrap_or_else(|e| e.into_inner());
            if c.as_ref().map(|c| c.id()) != Some(std::thread::current().id()) {
                *c = Some(std::thread::current());
            }
        }
        let work_ref: &Work<'_> = &work;
        // SAFETY: only the lifetime is erased; `run` returns after every index is done, and no
        // participant touches the closure after its last claim is counted (see `Job`).
        let work_static: *const Work<'static> = unsafe { std::mem::transmute(work_ref) };
        // SAFETY: no participant reads `job` now: the previous call's indices are all done.
        unsafe {
            *inner.job.get() = Job {
                work: work_static,
                n,
            };
        }
        inner.panicked.store(false, Ordering::Relaxed);
        inner.done.0.store(0, Ordering::Relaxed);
        inner.call_n.store(n, Ordering::Relaxed);
        for k in 0..t {
            let (start, end) = (k * n / t, (k + 1) * n / t);
            inner.cursors[k]
                .0
                .store(((end as u64) << 32) | start as u64, Ordering::Release);
        }
        inner.epoch.0.fetch_add(1, Ordering::SeqCst);
        if inner.lingering.0.load(Ordering::SeqCst) < t - 1
            && inner.unstarted.load(Ordering::SeqCst) == 0
        {
            let (shared, grain_of) = (self.inner.clone(), self.grain.clone());
            inner.unstarted.fetch_add(t, Ordering::SeqCst);
            self.pool.spawn_broadcast(move |ctx| {
                shared.unstarted.fetch_sub(1, Ordering::SeqCst);
                let me = ctx.index();
                if me + 1 < shared.threads {
                    let r = catch_unwind(AssertUnwindSafe(|| {
                        shared.linger(me, || grain_of.load(Ordering::Relaxed))
                    }));
                    // `claim_and_run` catches the work's panics; nothing else can panic, but a
                    // Rayon job must never unwind (it aborts the process).
                    drop(r);
                }
            });
        }
        inner.claim_and_run(t - 1, grain);
        // The join: spin, then park until the thread that completes the last index wakes us.
        let mut wait = Backoff::new();
        while inner.done.0.load(Ordering::SeqCst) < n {
            if wait.snooze() >= inner.max_spin {
                inner.caller_parked.store(true, Ordering::SeqCst);
                while inner.done.0.load(Ordering::SeqCst) < n {
                    std::thread::park_timeout(Duration::from_millis(10));
                }
                inner.caller_parked.store(false, Ordering::SeqCst);
                break;
            }
        }
        state.last_end = Some(Instant::now());
        drop(state);
        if inner.panicked.load(Ordering::Relaxed) {
            resume_unwind(Box::new("emurust: a batch worker panicked"));
        }
    }
}

/// A bounded wait: `pause` for the first `PAUSE_FOR` (the next call or the last block is
/// usually that close), then `sched_yield` between looks, so that a thread the OS wants to run
/// on this CPU (a preempted participant, the caller, another process) gets it.
struct Backoff {
    start: Instant,
    looks: u32,
    elapsed: Duration,
}

const PAUSE_FOR: Duration = Duration::from_micros(10);

impl Backoff {
    fn new() -> Backoff {
        Backoff {
            start: Instant::now(),
            looks: 0,
            elapsed: Duration::ZERO,
        }
    }

    /// Wait a little; returns the time waited so far (read from the clock every 32 looks).
    fn snooze(&mut self) -> Duration {
        self.looks = self.looks.wrapping_add(1);
        if self.elapsed < PAUSE_FOR {
            std::hint::spin_loop();
            if self.looks.is_multiple_of(32) {
                self.elapsed = self.start.elapsed();
            }
        } else {
            std::thread::yield_now();
            self.elapsed = self.start.elapsed();
        }
        self.elapsed
    }
}

/// A raw pointer to a slice whose disjoint ranges the gang's participants write.
pub(crate) struct SharedMut<T>(*mut T, usize);

// SAFETY: used only to hand disjoint ranges to `Gang::run`'s participants (each index is
// claimed once), while the owner's `&mut [T]` is held and otherwise unused.
unsafe impl<T: Send> Send for SharedMut<T> {}
unsafe impl<T: Send> Sync for SharedMut<T> {}

impl<T> SharedMut<T> {
    pub(crate) fn new(s: &mut [T]) -> Self {
        SharedMut(s.as_mut_ptr(), s.len())
    }

    /// # Safety
    /// `r` is within the slice and no other live reference covers any of it.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn range(&self, r: Range<usize>) -> &mut [T] {
        debug_assert!(r.start <= r.end && r.end <= self.1);
        std::slice::from_raw_parts_mut(self.0.add(r.start), r.end - r.start)
    }
}

/// Pin the calling pool thread `index` to the `index`-th CPU the process may use (Linux).
pub(crate) fn pin_to_cpu(index: usize) {
    #[cfg(target_os = "linux")]
    // SAFETY: plain libc calls on a zeroed cpu_set_t for the calling thread (pid 0).
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut allowed) != 0 {
            return;
        }
        let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &allowed))
            .collect();
        if cpus.is_empty() {
            return;
        }
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpus[index % cpus.len()], &mut one);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = index;
}

/// Whether pool threads are pinned (EMURUST_PIN_THREADS=1).
pub(crate) fn pin_threads() -> bool {
    std::env::var("EMURUST_PIN_THREADS").is_ok_and(|v| v.trim() == "1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gang(threads: usize) -> Gang {
        Gang::new(Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap(),
        ))
    }

    #[test]
    fn every_index_runs_exactly_once_over_many_calls() {
        for threads in [1, 2, 3, 5] {
            let g = gang(threads);
            for (call, n) in [1usize, 2, 7, 64, 1000, 3, 4096]
                .iter()
                .cycle()
                .take(60)
                .enumerate()
            {
                let mut hits = vec![0u32; *n];
                let out = SharedMut::new(&mut hits);
                g.run(*n, 1 + call % 9, |r| {
                    for h in unsafe { out.range(r) } {
                        *h += 1;
                    }
                });
                assert!(hits.iter().all(|&h| h == 1), "threads {threads} n {n}");
            }
        }
    }

    #[test]
    fn spaced_calls_relaunch_the_threads() {
        let g = gang(3);
        for _ in 0..5 {
            let mut v = vec![0u8; 100];
            let out = SharedMut::new(&mut v);
            g.run(100, 1, |r| unsafe { out.range(r) }.fill(1));
            assert!(v.iter().all(|&x| x == 1));
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn threads_stop_spinning_after_the_bound_and_launches_do_not_pile_up() {
        let g = gang(4);
        let mut v = vec![0u32; 400];
        for _ in 0..3000 {
            let out = SharedMut::new(&mut v);
            g.run(400, 8, |r| {
                unsafe { out.range(r) }.iter_mut().for_each(|x| *x += 1)
            });
        }
        assert!(v.iter().all(|&x| x == 3000));
        assert!(g.inner.lingering.0.load(Ordering::SeqCst) <= 3);
        // The spin bound is 100 us at most: well within 2 s every thread has left the job,
        // and every launched job has started.
        let t0 = Instant::now();
        while (g.inner.lingering.0.load(Ordering::SeqCst) > 0
            || g.inner.unstarted.load(Ordering::SeqCst) > 0)
            && t0.elapsed() < Duration::from_secs(2)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(g.inner.lingering.0.load(Ordering::SeqCst), 0);
        assert_eq!(g.inner.unstarted.load(Ordering::SeqCst), 0);
    }

    /// The fork-join's own cost: median nanoseconds of one call of 64 items per thread, each
    /// ~40 ns of work (a dependent multiply chain), serially on the caller, on the gang, and
    /// with Rayon's `install` + `par_chunks` (the old Pong path) and `broadcast` (the old Game
    /// Boy path), back to back (EMURUST_GANG_ITEM_ROUNDS: multiplies per item, default 30). Run with
    /// `cargo test -p emurust-py --release gang_overhead -- --ignored --nocapture`
    /// (EMURUST_GANG_THREADS: the thread counts, default 2,4).
    #[test]
    #[ignore]
    fn gang_overhead() {
        use rayon::prelude::*;
        let counts: Vec<usize> = std::env::var("EMURUST_GANG_THREADS")
            .unwrap_or_else(|_| "2,4".into())
            .split(',')
            .map(|t| t.trim().parse().unwrap())
            .collect();
        let median = |mut v: Vec<u128>| {
            v.sort_unstable();
            v[v.len() / 2]
        };
        let rounds: usize =
            std::env::var("EMURUST_GANG_ITEM_ROUNDS").map_or(30, |v| v.trim().parse().unwrap());
        let item = |x: &mut u64| {
            let mut v = *x | 1;
            for _ in 0..rounds {
                v = std::hint::black_box(v.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            }
            *x = v;
        };
        for threads in counts {
            let g = gang(threads);
            let n = 64 * threads;
            let mut data = vec![1u64; n];
            let calls = 20_000;
            let time = |f: &mut dyn FnMut()| {
                for _ in 0..1000 {
                    f();
                }
                median(
                    (0..calls)
                        .map(|_| {
                            let t = Instant::now();
                            f();
                            t.elapsed().as_nanos()
                        })
                        .collect(),
                )
            };
            let serial_ns = time(&mut || data.iter_mut().for_each(item));
            let out = SharedMut::new(&mut data);
            let by_caller = AtomicUsize::new(0);
            let gang_ns = time(&mut || {
                g.run(n, 16, |r| {
                    if rayon::current_thread_index().is_none() {
                        by_caller.fetch_add(r.len(), Ordering::Relaxed);
                    }
                    unsafe { out.range(r) }.iter_mut().for_each(item)
                })
            });
            let caller_share = by_caller.into_inner() as f64 / ((calls + 1000) * n) as f64;
            let pool = g.pool();
            let install_ns = time(&mut || {
                pool.install(|| {
                    data.par_chunks_mut(64)
                        .for_each(|c| c.iter_mut().for_each(item))
                })
            });
            let out = SharedMut::new(&mut data);
            let bcast_ns = time(&mut || {
                pool.broadcast(|ctx| {
                    let r = ctx.index() * 64..(ctx.index() + 1) * 64;
                    unsafe { out.range(r) }.iter_mut().for_each(item)
                });
            });
            println!(
                "{threads} threads, {n} items: serial {serial_ns} ns/call (work per thread {}), gang {gang_ns} ns (the caller ran {:.0}% of the items), rayon install+par_chunks {install_ns} ns, rayon broadcast {bcast_ns} ns (medians of {calls} calls)",
                serial_ns / threads as u128,
                caller_share * 100.0
            );
        }
    }

    #[test]
    fn a_panic_reaches_the_caller_after_the_join() {
        let g = gang(3);
        let r = catch_unwind(AssertUnwindSafe(|| {
            g.run(50, 1, |r| {
                if r.start == 7 {
                    panic!("boom");
                }
            })
        }));
        assert!(r.is_err());
        // The gang still works.
        let mut v = vec![0u8; 50];
        let out = SharedMut::new(&mut v);
        g.run(50, 2, |r| unsafe { out.range(r) }.fill(3));
        assert!(v.iter().all(|&x| x == 3));
    }
}
