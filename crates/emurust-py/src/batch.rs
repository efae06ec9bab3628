//! `emurust._core.Batch`: N emulators of one ROM stepped together for reinforcement learning.
//!
//! One Python call (`step`) steps every emulator: the GIL is released and a dedicated Rayon
//! pool runs the environments in parallel (serially when that is faster: one environment or
//! one thread). Results land directly in NumPy arrays the batch allocated once; Python sees
//! read-only views of them, overwritten by every `step`/`reset`. Each environment owns its
//! emulator, its random generator and its reward memory, so the results do not depend on the
//! number of threads or on the scheduling.
//!
//! Per step and environment: press the action's buttons, run `frame_skip` frames (releasing
//! them after `press_frames`), render only the last frame and only when an observation needs
//! pixels, then write the observations, evaluate the reward terms and end conditions.
//!
//! Reset: load the start state (power-on, i.e. the post-boot state, or a save state), run a
//! seeded number of idle frames in `[0, noop_max]`, then the reset script (button masks held
//! for some frames, e.g. START to leave a title screen). At least one frame is run, so the
//! reset observation is a freshly drawn picture.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use emurust_core::gameboy::Options;
use emurust_core::joypad::{button, BUTTON_NAMES};
use emurust_core::{CoreError, GameBoy};
use numpy::ndarray::{ArrayD, IxDyn};
use numpy::{PyArray, PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

mod pokered_v2;
mod spec;

use spec::{
    visited_table_bytes, Cond, ObsKind, Op, Term, TermMemory, TermSpec, ValueType,
    VISITED_MAX_TOTAL_BYTES,
};

use crate::gang::{self, Gang, SharedMut};
use crate::{busy, load_bytes, options_from_py, to_py, StateError, SIGNAL_SLICE};

/// The default discrete action set: no-op, each button, and the usual jump/fire + move combos.
const DEFAULT_ACTIONS: [u8; 13] = [
    0,
    button::A,
    button::B,
    button::UP,
    button::DOWN,
    button::LEFT,
    button::RIGHT,
    button::START,
    button::SELECT,
    button::A | button::RIGHT,
    button::A | button::LEFT,
    button::B | button::RIGHT,
    button::B | button::LEFT,
];

/// splitmix64: a tiny, well-mixed generator; one per environment (reset randomisation only).
#[inline]
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Everything fixed at construction that the workers read.
struct Config {
    action_masks: Vec<u8>,
    frame_skip: u32,
    press_frames: u32,
    render: bool,
    obs_kinds: Vec<ObsKind>,
    ram: Vec<(u16, u16)>,
    ram_len: usize,
    terms: Vec<Term>,
    /// End conditions, grouped: the episode ends when all conditions of one group hold.
    conds: Vec<Cond>,
    cond_groups: Vec<(usize, usize)>,
    max_episode_steps: u64,
    noop_max: u32,
    reset_script: Vec<(u8, u32)>,
    /// Frames of the reset script after each of its entries (the last entry with frames draws).
    script_left: Vec<u32>,
    script_frames: u32,
    /// An environment whose step ends its episode is reset in the same pass; its terminal
    /// observation goes to the `final_*` buffers (Gymnasium's same-step autoreset, SB3's
    /// `terminal_observation`).
    same_step_reset: bool,
}

/// One environment: its emulator and episode bookkeeping.
struct Env {
    gb: Box<GameBoy>,
    /// State loaded at every reset.
    start: Arc<[u8]>,
    rng: u64,
    /// Previous values, episode highs and visited sets of the reward terms; allocated once.
    memory: TermMemory,
    steps: u64,
    /// A reset failed (only possible with a start state the emulator rejects).
    error: Option<CoreError>,
    /// Progress through the current job (see `Env::advance`).
    cursor: Cursor,
}

/// Where an environment is in its current job: a job is a list of segments (buttons held for
/// some frames), run frame by frame so that it can stop at any frame boundary and go on later.
#[derive(Clone, Copy, Default)]
struct Cursor {
    /// The job still has frames (or its end) to run.
    pending: bool,
    /// The job's start (state load, idle-frame draw) is done.
    started: bool,
    /// Segment index, frames done in it, and whether its buttons are set.
    seg: usize,
    done: u32,
    entered: bool,
    /// Idle frames of the current reset.
    idle: u32,
    /// The step is done and the same-step reset that follows it runs (see `same_step_reset`).
    resetting: bool,
}

impl Env {
    /// Segment `k` of `job`: (buttons, frames, draw its last frame); None past the end.
    /// A step is PyBoy's `button_press(..); tick(press_frames, False); button_release(..);
    /// tick(rest, render)`; a reset is idle frames then the reset script. As PyBoy's
    /// `tick(frames, render_last)`: only the last frame of a segment is drawn (if asked) and has
    /// its audio sampled (PyBoy's default `sound=True`), which keeps the APU's catch-up points
    /// identical to a PyBoy loop making the same calls.
    #[inline]
    fn segment(&self, cfg: &Config, job: Job, action: usize, k: usize) -> Option<(u8, u32, bool)> {
        match job {
            Job::Skip => None,
            Job::Step => {
                let pressed = cfg.press_frames.min(cfg.frame_skip);
                match k {
                    0 => Some((
                        cfg.action_masks[action],
                        pressed,
                        cfg.render && pressed == cfg.frame_skip,
                    )),
                    1 => Some((0, cfg.frame_skip - pressed, cfg.render)),
                    _ => None,
                }
            }
            Job::Reset => {
                if k == 0 {
                    Some((0, self.cursor.idle, cfg.render && cfg.script_frames == 0))
                } else {
                    let (mask, frames) = *cfg.reset_script.get(k - 1)?;
                    Some((mask, frames, cfg.render && cfg.script_left[k - 1] == 0))
                }
            }
        }
    }

    /// Start `job`: a reset loads the start state and draws its number of idle frames.
    /// Returns false if the job cannot run (the start state was refused).
    fn begin(&mut self, cfg: &Config, job: Job) -> bool {
        self.cursor.started = true;
        if job == Job::Reset {
            if let Err(e) = self.gb.load_state(&self.start) {
                self.error = Some(e);
                return false;
            }
            self.gb.set_buttons(0);
            let idle = if cfg.noop_max > 0 {
                (splitmix64(&mut self.rng) % (cfg.noop_max as u64 + 1)) as u32
            } else {
                0
            };
            self.cursor.idle = if idle + cfg.script_frames == 0 {
                1
            } else {
                idle
            };
        }
        true
    }

    /// Run the job's frames until it is done (true) or `deadline` passes (false; it goes on
    /// at the next call). With `force` the first frame runs whatever the time. `ran` tells
    /// whether any frame ran.
    fn advance(
        &mut self,
        cfg: &Config,
        job: Job,
        action: usize,
        deadline: Instant,
        mut force: bool,
        ran: &mut bool,
    ) -> bool {
        loop {
            let Some((mask, frames, draw)) = self.segment(cfg, job, action, self.cursor.seg) else {
                return true;
            };
            if !self.cursor.entered {
                self.gb.set_buttons(mask);
                self.cursor.entered = true;
            }
            while self.cursor.done < frames {
                if !force && Instant::now() >= deadline {
                    return false;
                }
                force = false;
                let last = self.cursor.done + 1 == frames;
                self.gb.tick(1, draw && last, last);
                self.cursor.done += 1;
                *ran = true;
            }
            self.cursor.seg += 1;
            self.cursor.done = 0;
            self.cursor.entered = false;
        }
    }

    /// End `job` once its frames ran. Returns (reward, terminated, truncated).
    fn finish(&mut self, cfg: &Config, job: Job) -> (f64, bool, bool) {
        self.gb.set_buttons(0);
        if job == Job::Reset {
            self.steps = 0;
            self.memory.reset(&cfg.terms, &*self.gb);
            return (0.0, false, false);
        }
        self.steps += 1;
        let reward = self.memory.step(&cfg.terms, &*self.gb);
        let terminated = spec::any_group_holds(&cfg.conds, &cfg.cond_groups, &*self.gb);
        let truncated = cfg.max_episode_steps > 0 && self.steps >= cfg.max_episode_steps;
        (reward, terminated, truncated)
    }
}

/// Element types of the output arrays: plain `Copy` values without drop glue or interior
/// references, so writing one through a raw pointer from a worker thread is a plain store.
trait OutElem: Copy + Send + Sync + 'static {}
impl OutElem for u8 {}
impl OutElem for f64 {}
impl OutElem for bool {}

/// Raw pointers to the output arrays (owned by the batch, never exposed writable, never
/// resized). Workers write disjoint rows: row `i` belongs to environment `i` only.
#[derive(Clone, Copy)]
struct OutPtr<T: OutElem>(*mut T);
// SAFETY: the pointee is an array of `OutElem` values (Copy, Send, Sync, no drop glue) that
// the batch keeps alive and never reallocates for as long as it exists; workers only write
// disjoint rows (one environment per row) inside `run_jobs`, while `&mut Batch` is held, and
// Python only ever gets read-only arrays whose writeable flag cannot be set again.
unsafe impl<T: OutElem> Send for OutPtr<T> {}
// SAFETY: as for Send: shared `&OutPtr` are only used to write disjoint rows.
unsafe impl<T: OutElem> Sync for OutPtr<T> {}

struct Outputs {
    /// (kind, base pointer, bytes per environment) for every pixel observation.
    pixels: Vec<(ObsKind, OutPtr<u8>, usize)>,
    ram: OutPtr<u8>,
    rewards: OutPtr<f64>,
    terminated: OutPtr<bool>,
    truncated: OutPtr<bool>,
    /// The terminal observations of same-step resets: `pixels` and `ram` again (empty when the
    /// batch does not reset in the step).
    final_pixels: Vec<(ObsKind, OutPtr<u8>, usize)>,
    final_ram: OutPtr<u8>,
}

impl Outputs {
    /// Write environment `i`'s results. Safety: `i < N` and no one else writes row `i`.
    unsafe fn write(&self, cfg: &Config, i: usize, env: &Env, r: (f64, bool, bool)) {
        Self::write_obs(&self.pixels, self.ram, cfg, i, env);
        *self.rewards.0.add(i) = r.0;
        *self.terminated.0.add(i) = r.1;
        *self.truncated.0.add(i) = r.2;
    }

    /// Write environment `i`'s observations into `pixels` and `ram` (the current buffers or
    /// the `final_*` ones). Safety: as [`Outputs::write`].
    unsafe fn write_obs(
        pixels: &[(ObsKind, OutPtr<u8>, usize)],
        ram: OutPtr<u8>,
        cfg: &Config,
        i: usize,
        env: &Env,
    ) {
        for &(kind, ptr, size) in pixels {
            let row = std::slice::from_raw_parts_mut(ptr.0.add(i * size), size);
            spec::write_obs(kind, &env.gb, &cfg.ram, row);
        }
        if cfg.ram_len > 0 {
            let row = std::slice::from_raw_parts_mut(ram.0.add(i * cfg.ram_len), cfg.ram_len);
            spec::write_obs(ObsKind::Ram, &env.gb, &cfg.ram, row);
        }
    }
}

/// What to do with each environment in one parallel pass.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Job {
    Skip,
    Step,
    Reset,
}

/// A batch of N Game Boys running the same ROM. See `emurust.envs` for the documented API.
#[pyclass(module = "emurust._core", name = "Batch")]
pub struct Batch {
    rom: Arc<[u8]>,
    /// Every environment's emulator options (hardware choice `cgb`, as PyBoy's argument: None
    /// chooses from the cartridge header; sound mode and sample rate).
    options: Options,
    envs: Vec<Env>,
    cfg: Config,
    out: Outputs,
    /// The process's shared pool, or this batch's own when it asked for another size.
    pool: Arc<Gang>,
    threads: usize,
    scheduler: Scheduler,
    /// One claim cursor per pool thread (see `run_home_blocks`), allocated once.
    blocks: Vec<BlockCursor>,
    /// Per-step scratch (allocated once).
    jobs: Vec<Job>,
    actions: Vec<u32>,
    // Owned arrays (never handed out) and their read-only views (handed out).
    _owned: Vec<PyObject>,
    views: Py<PyDict>,
    poisoned: bool,
}

fn mask_from_py(item: &Bound<'_, PyAny>, what: &str) -> PyResult<u8> {
    fn name_mask(name: &str, what: &str) -> PyResult<u8> {
        let mut mask = 0u8;
        for part in name.split('+') {
            let p = part.trim().to_ascii_lowercase();
            if p.is_empty() || p == "noop" || p == "none" {
                continue;
            }
            let bit = BUTTON_NAMES.iter().position(|n| *n == p).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "{what}: unknown button {part:?}; expected names from {BUTTON_NAMES:?} joined by '+', or 'noop'"
                ))
            })?;
            mask |= 1 << bit;
        }
        Ok(mask)
    }
    if let Ok(s) = item.downcast::<PyString>() {
        return name_mask(&s.to_cow()?, what);
    }
    if item.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{what}: expected a button name, a list of names or a mask, got a bool"
        )));
    }
    if let Ok(v) = item.extract::<i64>() {
        return u8::try_from(v).map_err(|_| {
            PyValueError::new_err(format!("{what}: a button mask is 0-255, got {v}"))
        });
    }
    if let Ok(names) = item.extract::<Vec<String>>() {
        let mut mask = 0;
        for n in names {
            mask |= name_mask(&n, what)?;
        }
        return Ok(mask);
    }
    Err(PyTypeError::new_err(format!(
        "{what}: expected a button name ('a', 'a+right', 'noop'), a list of names or an int mask, got {}",
        item.get_type().name()?
    )))
}

fn addr_u16(v: i64, what: &str) -> PyResult<u16> {
    u16::try_from(v)
        .map_err(|_| PyValueError::new_err(format!("{what}: address {v} is outside 0x0000-0xFFFF")))
}

fn value_type(name: &str, what: &str) -> PyResult<ValueType> {
    ValueType::parse(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{what}: unknown value type {name:?}; expected u8, i8, u16le, u16be, i16le, i16be, u24le/be, u32le/be, i32le/be, bcd1..bcd4 (big endian) or bcd1le..bcd4le"
        ))
    })
}

/// A reward term from Python: `(addr, type, weight, delta)` (a value term) or a dict with
/// `kind` and the fields of `spec::TermSpec` (as `emurust.rewards.parse_reward` writes them).
fn term_spec_from_py(item: &Bound<'_, PyAny>, what: &str) -> PyResult<TermSpec> {
    if let Ok((addr, ty, weight, delta)) = item.extract::<(i64, String, f64, bool)>() {
        return Ok(TermSpec {
            kind: "value".into(),
            addrs: vec![addr],
            ty,
            weight,
            delta: if delta { "change" } else { "none" }.into(),
            ..TermSpec::default()
        });
    }
    let d = item.downcast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what}: expected (addr, type, weight, delta) or a dict with 'kind'"
        ))
    })?;
    const KEYS: [&str; 11] = [
        "kind", "addrs", "den", "scales", "lines", "type", "weight", "delta", "length", "blank",
        "capacity",
    ];
    let mut spec = TermSpec {
        ty: "u8".into(),
        weight: 1.0,
        delta: "none".into(),
        ..TermSpec::default()
    };
    for (k, v) in d.iter() {
        let key: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("{what}: keys must be strings")))?;
        let bad = |e: PyErr| PyTypeError::new_err(format!("{what}: {key}: {e}"));
        match key.as_str() {
            "kind" => spec.kind = v.extract().map_err(bad)?,
            "addrs" => spec.addrs = v.extract().map_err(bad)?,
            "den" => spec.den = v.extract().map_err(bad)?,
            "scales" => spec.scales = v.extract().map_err(bad)?,
            "lines" => spec.lines = v.extract().map_err(bad)?,
            "type" => spec.ty = v.extract().map_err(bad)?,
            "weight" => spec.weight = v.extract().map_err(bad)?,
            "delta" => {
                spec.delta = if let Ok(b) = v.downcast::<pyo3::types::PyBool>() {
                    if b.is_true() { "change" } else { "none" }.into()
                } else {
                    v.extract().map_err(bad)?
                }
            }
            "length" => spec.length = v.extract().map_err(bad)?,
            "blank" => spec.blank = v.extract().map_err(bad)?,
            "capacity" => spec.capacity = v.extract().map_err(bad)?,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "{what}: unknown key {key:?}; expected {KEYS:?}"
                )))
            }
        }
    }
    if spec.kind.is_empty() {
        return Err(PyValueError::new_err(format!("{what}: 'kind' is required")));
    }
    Ok(spec)
}

fn check_span(addr: u16, len: u8, what: &str) -> PyResult<()> {
    if addr as u32 + len as u32 > 0x10000 {
        return Err(PyValueError::new_err(format!(
            "{what}: {len} bytes at {addr:#06x} leave the address space"
        )));
    }
    Ok(())
}

/// Read an integer action array of shape (N,) into `out`, validating dtype, shape and range.
fn read_actions(
    actions: &Bound<'_, PyAny>,
    n: usize,
    num_actions: usize,
    out: &mut [u32],
) -> PyResult<()> {
    let arr = actions.downcast::<PyUntypedArray>().map_err(|_| {
        PyTypeError::new_err(format!(
            "actions must be a NumPy integer array of shape ({n},), got {}",
            actions
                .get_type()
                .name()
                .map(|s| s.to_string())
                .unwrap_or_default()
        ))
    })?;
    if arr.shape() != [n] {
        return Err(PyValueError::new_err(format!(
            "actions must have shape ({n},), got {:?}",
            arr.shape()
        )));
    }
    macro_rules! take {
        ($($t:ty),*) => {
            $(
                if let Ok(a) = actions.downcast::<PyArray<$t, numpy::Ix1>>() {
                    let ro = a.try_readonly().map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
                    for (i, (o, &v)) in out.iter_mut().zip(ro.as_array().iter()).enumerate() {
                        #[allow(unused_comparisons)]
                        let bad = v < (0 as $t) || (v as u64) >= num_actions as u64;
                        if bad {
                            return Err(PyValueError::new_err(format!(
                                "action {} of environment {i} is out of range: there are {num_actions} actions (0-{})",
                                v, num_actions - 1
                            )));
                        }
                        *o = v as u32;
                    }
                    return Ok(());
                }
            )*
        };
    }
    take!(i64, i32, u8, u32, u16, i16, i8, u64);
    Err(PyTypeError::new_err(format!(
        "actions must have an integer dtype, got {}",
        arr.dtype()
    )))
}

/// Fill `jobs` from a boolean mask of shape (N,): `yes` where true, `no` where false.
/// A NumPy bool array is read in place (no allocation); a list of bools is accepted too.
fn read_mask(
    mask: &Bound<'_, PyAny>,
    jobs: &mut [Job],
    yes: Job,
    no: Job,
    what: &str,
) -> PyResult<()> {
    let n = jobs.len();
    let bad_len =
        |len: usize| PyValueError::new_err(format!("{what} must have shape ({n},), got ({len},)"));
    if let Ok(a) = mask.downcast::<PyArray<bool, numpy::Ix1>>() {
        let ro = a
            .try_readonly()
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let v = ro.as_array();
        if v.len() != n {
            return Err(bad_len(v.len()));
        }
        for (j, &m) in jobs.iter_mut().zip(v.iter()) {
            *j = if m { yes } else { no };
        }
        return Ok(());
    }
    let v: Vec<bool> = mask.extract().map_err(|_| {
        PyTypeError::new_err(format!("{what} must be a boolean array of shape ({n},)"))
    })?;
    if v.len() != n {
        return Err(bad_len(v.len()));
    }
    for (j, m) in jobs.iter_mut().zip(v) {
        *j = if m { yes } else { no };
    }
    Ok(())
}

impl Batch {
    fn check_usable(&self) -> PyResult<()> {
        if self.poisoned {
            return Err(PyRuntimeError::new_err(
                "this batch hit an internal error earlier and can no longer be used",
            ));
        }
        Ok(())
    }

    fn env_index(&self, i: i64) -> PyResult<usize> {
        let n = self.envs.len() as i64;
        if i < 0 || i >= n {
            return Err(PyIndexError::new_err(format!(
                "environment {i} out of range (0-{})",
                n - 1
            )));
        }
        Ok(i as usize)
    }

    /// Run `self.jobs` over every environment (GIL released) and write the outputs.
    ///
    /// Frames run in rounds of about `SIGNAL_SLICE`; between rounds pending signals are handled,
    /// so Ctrl-C raises KeyboardInterrupt within a round. Interrupted, every emulator stops at a
    /// frame boundary; environments whose job had finished have their outputs written, the
    /// others keep their previous outputs and episode step count (call `reset` to start clean).
    fn run_jobs(&mut self, py: Python<'_>) -> PyResult<()> {
        self.check_usable()?;
        for (env, &job) in self.envs.iter_mut().zip(&self.jobs) {
            env.cursor = Cursor {
                pending: job != Job::Skip,
                ..Cursor::default()
            };
        }
        let cfg = &self.cfg;
        let out = &self.out;
        let jobs = &self.jobs;
        let actions = &self.actions;
        let pool = &self.pool;
        let parallel = self.threads > 1 && self.envs.len() > 1;
        let mut force = false;
        loop {
            let deadline = Instant::now() + SIGNAL_SLICE;
            let progressed = AtomicBool::new(false);
            let left = AtomicBool::new(false);
            let work = |(i, env): (usize, &mut Env)| {
                if !env.cursor.pending {
                    return;
                }
                let mut force = force;
                loop {
                    let job = if env.cursor.resetting {
                        Job::Reset
                    } else {
                        jobs[i]
                    };
                    if !env.cursor.started && !env.begin(cfg, job) {
                        env.cursor.pending = false;
                        return;
                    }
                    let mut ran = false;
                    let done =
                        env.advance(cfg, job, actions[i] as usize, deadline, force, &mut ran);
                    if ran {
                        progressed.store(true, Ordering::Relaxed);
                    }
                    if !done {
                        left.store(true, Ordering::Relaxed);
                        return;
                    }
                    let r = env.finish(cfg, job);
                    // Safety (all writes below): row i is written by this closure only (one
                    // environment per index).
                    if env.cursor.resetting {
                        // The same-step reset is done: new observations; the step's reward
                        // and end flags stay.
                        unsafe { Outputs::write_obs(&out.pixels, out.ram, cfg, i, env) };
                        env.cursor.pending = false;
                        return;
                    }
                    unsafe { out.write(cfg, i, env, r) };
                    if !(cfg.same_step_reset && job == Job::Step && (r.1 || r.2)) {
                        env.cursor.pending = false;
                        return;
                    }
                    unsafe { Outputs::write_obs(&out.final_pixels, out.final_ram, cfg, i, env) };
                    env.cursor = Cursor {
                        pending: true,
                        resetting: true,
                        ..Cursor::default()
                    };
                    force = false;
                }
            };
            let envs = &mut self.envs;
            let (scheduler, blocks) = (self.scheduler, &self.blocks);
            let result = py.allow_threads(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    if parallel && scheduler == Scheduler::Gang {
                        let n = envs.len();
                        let shared = SharedMut::new(envs);
                        pool.run(n, 1, |r| {
                            let first = r.start;
                            // SAFETY: the gang hands out each index once.
                            for (j, env) in unsafe { shared.range(r) }.iter_mut().enumerate() {
                                work((first + j, env));
                            }
                        });
                    } else if parallel {
                        run_home_blocks(pool.pool(), blocks, envs, work);
                    } else {
                        envs.iter_mut().enumerate().for_each(work);
                    }
                }))
            });
            if result.is_err() {
                self.poisoned = true;
                return Err(PyRuntimeError::new_err(
                    "emurust internal error while stepping the batch; the batch can no longer be used. Please report this with the ROM.",
                ));
            }
            if !left.into_inner() {
                break;
            }
            py.check_signals()?;
            // A round in which no frame ran (the threads started late) runs a frame regardless.
            force = !progressed.into_inner();
        }
        for (i, env) in self.envs.iter_mut().enumerate() {
            if let Some(e) = env.error.take() {
                return Err(StateError::new_err(format!(
                    "environment {i} could not load its start state: {e}"
                )));
            }
        }
        Ok(())
    }
}

/// A claim cursor: the next unclaimed environment of one thread's home block, alone in its
/// cache line (each thread advances its own most of the time).
#[derive(Default)]
#[repr(align(64))]
struct BlockCursor(AtomicUsize);

/// The environments as a raw pointer, for `run_home_blocks`' workers.
#[derive(Clone, Copy)]
struct EnvsPtr(*mut Env);
// SAFETY: `run_home_blocks` hands out `&mut` to an environment only to the worker that claimed
// its index, and every index is claimed once (an atomic fetch_add per block), while the
// caller's `&mut [Env]` keeps the slice alive and otherwise untouched.
unsafe impl Send for EnvsPtr {}
unsafe impl Sync for EnvsPtr {}

impl EnvsPtr {
    /// # Safety
    /// `i` is in bounds and claimed by the caller alone (see above).
    unsafe fn env<'a>(self, i: usize) -> &'a mut Env {
        &mut *self.0.add(i)
    }
}

/// Run `work` on every environment across `pool`, each thread first through its home block
/// (the same contiguous block at every call, so an emulator's memory stays in one core's
/// caches, as in separate processes), then helping with what is left of the others' blocks.
/// Measured against Rayon's work stealing over the whole slice, which moves environments
/// between threads from call to call (device, 256 Dodge envs on 16 threads, 5 paired runs):
/// 6,644 against 6,312 steps/s (medians), a quarter of the voluntary context switches.
fn run_home_blocks<F>(pool: &rayon::ThreadPool, blocks: &[BlockCursor], envs: &mut [Env], work: F)
where
    F: Fn((usize, &mut Env)) + Sync,
{
    let n = envs.len();
    let t = blocks.len().min(n);
    let start = |k: usize| k * n / t;
    for (k, b) in blocks[..t].iter().enumerate() {
        b.0.store(start(k), Ordering::Relaxed);
    }
    let base = EnvsPtr(envs.as_mut_ptr());
    pool.broadcast(|ctx| {
        let me = ctx.index();
        if me >= t {
            return;
        }
        for k in (0..t).map(|j| (me + j) % t) {
            let end = start(k + 1);
            loop {
                let i = blocks[k].0.fetch_add(1, Ordering::Relaxed);
                if i >= end {
                    break;
                }
                // SAFETY: index i was claimed by this thread alone (see `EnvsPtr`); i < n.
                work((i, unsafe { base.env(i) }));
            }
        }
    });
}

/// A start state as emurust's own: `data` itself if it is one (checked), else a PyBoy 2.8.1
/// state of any format version PyBoy loads, as `PyBoy(rom)` + `load_state` has it.
fn own_start_state(rom: &Arc<[u8]>, options: Options, data: Vec<u8>) -> PyResult<Vec<u8>> {
    let mut probe = GameBoy::with_options(rom.clone(), None, options).map_err(to_py)?;
    if data.starts_with(b"EMURUST") {
        probe.load_state(&data).map_err(to_py)?;
        return Ok(data);
    }
    let gb = GameBoy::from_pyboy_state(rom.clone(), options, &data).map_err(to_py)?;
    Ok(gb.save_state())
}

#[pymethods]
impl Batch {
    #[new]
    #[pyo3(signature = (rom, num_envs, *, actions=None, frame_skip=24, press_frames=8,
        obs=None, ram=None, reward=None, terminate=None, max_episode_steps=0, noop_max=0,
        reset_script=None, start_state=None, num_threads=None, cgb=None, sound_emulated=true,
        sound_sample_rate=None, same_step_reset=false, scheduler=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        rom: &Bound<'_, PyAny>,
        num_envs: i64,
        actions: Option<Vec<Bound<'_, PyAny>>>,
        frame_skip: i64,
        press_frames: i64,
        obs: Option<&Bound<'_, PyAny>>,
        ram: Option<Vec<(i64, i64)>>,
        reward: Option<Vec<Bound<'_, PyAny>>>,
        terminate: Option<Vec<Bound<'_, PyAny>>>,
        max_episode_steps: i64,
        noop_max: i64,
        reset_script: Option<Vec<(Bound<'_, PyAny>, i64)>>,
        start_state: Option<&Bound<'_, PyAny>>,
        num_threads: Option<i64>,
        cgb: Option<bool>,
        sound_emulated: bool,
        sound_sample_rate: Option<i64>,
        same_step_reset: bool,
        scheduler: Option<&str>,
    ) -> PyResult<Self> {
        let scheduler = Scheduler::from_py(
            scheduler,
            Scheduler::Rayon,
            &[Scheduler::Gang, Scheduler::Rayon],
        )?;
        let options = options_from_py(cgb, sound_emulated, sound_sample_rate)?;
        if !(1..=65536).contains(&num_envs) {
            return Err(PyValueError::new_err(format!(
                "num_envs must be between 1 and 65536, got {num_envs}"
            )));
        }
        let n = num_envs as usize;
        if !(1..=100_000).contains(&frame_skip) {
            return Err(PyValueError::new_err(format!(
                "frame_skip must be between 1 and 100000, got {frame_skip}"
            )));
        }
        if press_frames < 0 {
            return Err(PyValueError::new_err(format!(
                "press_frames must be >= 0, got {press_frames}"
            )));
        }
        if max_episode_steps < 0 || !(0..=1_000_000).contains(&noop_max) {
            return Err(PyValueError::new_err(
                "max_episode_steps must be >= 0 and noop_max between 0 and 1000000",
            ));
        }

        // Actions.
        let action_masks: Vec<u8> = match actions {
            None => DEFAULT_ACTIONS.to_vec(),
            Some(list) => list
                .iter()
                .enumerate()
                .map(|(i, a)| mask_from_py(a, &format!("actions[{i}]")))
                .collect::<PyResult<_>>()?,
        };
        if action_masks.is_empty() {
            return Err(PyValueError::new_err("actions must not be empty"));
        }

        // Observations.
        let obs_names: Vec<String> = match obs {
            None => vec!["grey".into()],
            Some(o) => {
                if let Ok(s) = o.downcast::<PyString>() {
                    vec![s.to_cow()?.into_owned()]
                } else {
                    o.extract::<Vec<String>>().map_err(|_| {
                        PyTypeError::new_err("obs must be a name or a list of names")
                    })?
                }
            }
        };
        let mut kinds: Vec<ObsKind> = Vec::new();
        for name in &obs_names {
            let k = ObsKind::parse(name).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "unknown observation {name:?}; expected one of {:?}",
                    ObsKind::ALL.iter().map(|x| x.0).collect::<Vec<_>>()
                ))
            })?;
            if kinds.contains(&k) {
                return Err(PyValueError::new_err(format!(
                    "observation {name:?} given twice"
                )));
            }
            kinds.push(k);
        }
        if kinds.is_empty() {
            return Err(PyValueError::new_err(
                "obs must name at least one observation",
            ));
        }

        // RAM ranges.
        let mut ram_ranges = Vec::new();
        for (addr, len) in ram.unwrap_or_default() {
            let a = addr_u16(addr, "ram")?;
            if len < 1 || len > 0x10000 - a as i64 {
                return Err(PyValueError::new_err(format!(
                    "ram: range ({addr:#06x}, {len}) must have length >= 1 and stay below 0x10000"
                )));
            }
            ram_ranges.push((a, len as u16));
        }
        let ram_len: usize = ram_ranges.iter().map(|r| r.1 as usize).sum();
        if kinds.contains(&ObsKind::Ram) && ram_len == 0 {
            return Err(PyValueError::new_err(
                "the 'ram' observation needs ram=[(address, length), ...]",
            ));
        }

        // Rewards and ends.
        let mut terms = Vec::new();
        let mut visited_capacities = Vec::new();
        for (i, item) in reward.unwrap_or_default().iter().enumerate() {
            let what = format!("reward[{i}]");
            let spec = term_spec_from_py(item, &what)?;
            terms.push(
                spec.build(&what, &mut visited_capacities)
                    .map_err(PyValueError::new_err)?,
            );
        }
        let table_bytes: u64 = visited_capacities
            .iter()
            .map(|&c| visited_table_bytes(c))
            .sum::<u64>()
            .saturating_mul(n as u64);
        if table_bytes > VISITED_MAX_TOTAL_BYTES {
            return Err(PyValueError::new_err(format!(
                "reward: the Visited tables of {n} environments would take {} MiB (16 bytes a key of capacity, per environment); at most {} MiB: lower capacity or num_envs",
                table_bytes >> 20,
                VISITED_MAX_TOTAL_BYTES >> 20
            )));
        }
        // (group, condition): a 4-tuple is a group of its own, a 5th item names a group.
        let mut grouped: Vec<(i64, usize, Cond)> = Vec::new();
        for (i, item) in terminate.unwrap_or_default().iter().enumerate() {
            let what = format!("terminate[{i}]");
            let (addr, ty, op, value, group): (i64, String, String, f64, Option<i64>) = if let Ok(
                t,
            ) =
                item.extract::<(i64, String, String, f64)>()
            {
                (t.0, t.1, t.2, t.3, None)
            } else {
                let t = item.extract::<(i64, String, String, f64, i64)>().map_err(|_| {
                        PyTypeError::new_err(format!(
                            "{what}: expected (addr, type, op, value) or (addr, type, op, value, group)"
                        ))
                    })?;
                (t.0, t.1, t.2, t.3, Some(t.4))
            };
            if value.is_nan() {
                return Err(PyValueError::new_err(format!(
                    "{what}: value must be a number, got NaN (no comparison with it ever holds)"
                )));
            }
            let a = addr_u16(addr, &what)?;
            let ty = value_type(&ty, &what)?;
            check_span(a, ty.len(), &what)?;
            let op = Op::parse(&op).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "{what}: unknown comparison {op:?}; expected ==, !=, <, <=, >, >="
                ))
            })?;
            let group = match group {
                Some(g) if g < 0 => {
                    return Err(PyValueError::new_err(format!(
                        "{what}: group must be >= 0, got {g}"
                    )))
                }
                Some(g) => g,
                None => -1 - i as i64,
            };
            grouped.push((
                group,
                i,
                Cond {
                    addr: a,
                    ty,
                    op,
                    value,
                },
            ));
        }
        grouped.sort_by_key(|g| (g.0, g.1));
        let mut conds = Vec::with_capacity(grouped.len());
        let mut cond_groups: Vec<(usize, usize)> = Vec::new();
        for (k, (g, _, c)) in grouped.iter().enumerate() {
            if k == 0 || grouped[k - 1].0 != *g {
                cond_groups.push((k, k + 1));
            } else {
                cond_groups.last_mut().unwrap().1 = k + 1;
            }
            conds.push(*c);
        }

        let mut script = Vec::new();
        for (i, (buttons, frames)) in reset_script.unwrap_or_default().iter().enumerate() {
            let what = format!("reset_script[{i}]");
            let mask = mask_from_py(buttons, &what)?;
            if !(0..=1_000_000).contains(frames) {
                return Err(PyValueError::new_err(format!(
                    "{what}: frames must be 0-1000000, got {frames}"
                )));
            }
            script.push((mask, *frames as u32));
        }

        let script_frames: u32 = script
            .iter()
            .try_fold(0u32, |t, s| {
                t.checked_add(s.1).filter(|&t| t <= 100_000_000)
            })
            .ok_or_else(|| {
                PyValueError::new_err("reset_script: more than 100000000 frames in all")
            })?;
        let script_left: Vec<u32> = script
            .iter()
            .scan(script_frames, |left, s| {
                *left -= s.1;
                Some(*left)
            })
            .collect();

        let (pool, threads) = pool_for(num_threads)?;

        // Emulators: the ROM is loaded once and shared.
        let rom: Arc<[u8]> = load_bytes(rom, "ROM")?.into();
        let first = GameBoy::with_options(rom.clone(), None, options).map_err(to_py)?;
        let start: Arc<[u8]> = match start_state {
            None => first.save_state().into(),
            Some(s) => own_start_state(&rom, options, load_bytes(s, "start state")?)?.into(),
        };
        reserve_or_refuse(n, &start, &kinds, ram_len, same_step_reset)?;
        let mut envs = Vec::with_capacity(n);
        for i in 0..n {
            let gb = Box::new(GameBoy::with_options(rom.clone(), None, options).map_err(to_py)?);
            let mut rng = i as u64;
            splitmix64(&mut rng);
            envs.push(Env {
                gb,
                start: start.clone(),
                rng,
                memory: TermMemory::new(&terms, &visited_capacities),
                steps: 0,
                error: None,
                cursor: Cursor::default(),
            });
        }
        drop(first);

        // Output arrays: their memory is a Rust allocation that NumPy does not own (the
        // array's base is numpy's Rust container, which has no buffer protocol), so once
        // marked read-only neither they nor any view of them can be made writeable again.
        // Python gets these arrays; only the workers write them, through raw pointers.
        let views = PyDict::new(py);
        let mut owned: Vec<PyObject> = Vec::new();
        let mut publish = |name: &str, arr: Bound<'_, PyAny>| -> PyResult<()> {
            arr.getattr("flags")?.setattr("writeable", false)?;
            views.set_item(name, &arr)?;
            owned.push(arr.unbind());
            Ok(())
        };
        fn zeros<'py, T: numpy::Element + Default + Clone>(
            py: Python<'py>,
            shape: &[usize],
        ) -> Bound<'py, PyArrayDyn<T>> {
            PyArrayDyn::from_owned_array(py, ArrayD::<T>::from_elem(IxDyn(shape), T::default()))
        }
        let mut pixels = Vec::new();
        for &k in kinds.iter().filter(|k| k.needs_pixels()) {
            let mut shape = vec![n];
            shape.extend(k.shape(ram_len));
            let size: usize = shape[1..].iter().product();
            let arr = zeros::<u8>(py, &shape);
            pixels.push((k, OutPtr(arr.data()), size));
            publish(k.name(), arr.into_any())?;
        }
        let ram_arr = zeros::<u8>(py, &[n, ram_len]);
        let ram_ptr = OutPtr(ram_arr.data());
        publish("ram", ram_arr.into_any())?;
        let rewards = zeros::<f64>(py, &[n]);
        let rewards_ptr = OutPtr(rewards.data());
        publish("rewards", rewards.into_any())?;
        let term = zeros::<bool>(py, &[n]);
        let term_ptr = OutPtr(term.data());
        publish("terminated", term.into_any())?;
        let trunc = zeros::<bool>(py, &[n]);
        let trunc_ptr = OutPtr(trunc.data());
        publish("truncated", trunc.into_any())?;
        let mut final_pixels = Vec::new();
        let mut final_ram = OutPtr(std::ptr::null_mut());
        if same_step_reset {
            for &(k, _, size) in &pixels {
                let mut shape = vec![n];
                shape.extend(k.shape(ram_len));
                let arr = zeros::<u8>(py, &shape);
                final_pixels.push((k, OutPtr(arr.data()), size));
                publish(&format!("final_{}", k.name()), arr.into_any())?;
            }
            let arr = zeros::<u8>(py, &[n, ram_len]);
            final_ram = OutPtr(arr.data());
            publish("final_ram", arr.into_any())?;
        }

        let render = kinds.iter().any(|k| k.needs_pixels());
        let press = (press_frames as u64).min(frame_skip as u64) as u32;
        Ok(Batch {
            rom,
            options,
            envs,
            cfg: Config {
                action_masks,
                frame_skip: frame_skip as u32,
                press_frames: press,
                render,
                obs_kinds: kinds.clone(),
                ram: ram_ranges,
                ram_len,
                terms,
                conds,
                cond_groups,
                max_episode_steps: max_episode_steps as u64,
                noop_max: noop_max as u32,
                script_left,
                script_frames,
                reset_script: script,
                same_step_reset,
            },
            out: Outputs {
                pixels,
                ram: ram_ptr,
                rewards: rewards_ptr,
                terminated: term_ptr,
                truncated: trunc_ptr,
                final_pixels,
                final_ram,
            },
            pool,
            threads,
            scheduler,
            blocks: (0..threads).map(|_| BlockCursor::default()).collect(),
            jobs: vec![Job::Skip; n],
            actions: vec![0; n],
            _owned: owned,
            views: views.unbind(),
            poisoned: false,
        })
    }
    #[getter]
    fn num_envs(slf: &Bound<'_, Self>) -> PyResult<usize> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Ok(Self::impl_num_envs(&this))
    }

    #[getter]
    fn num_actions(slf: &Bound<'_, Self>) -> PyResult<usize> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Ok(Self::impl_num_actions(&this))
    }

    /// Button mask of each action (bit 0 right, 1 left, 2 up, 3 down, 4 a, 5 b, 6 select, 7 start).
    #[getter]
    fn action_masks(slf: &Bound<'_, Self>) -> PyResult<Vec<u16>> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Ok(Self::impl_action_masks(&this))
    }

    #[getter]
    fn num_threads(slf: &Bound<'_, Self>) -> PyResult<usize> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Ok(Self::impl_num_threads(&this))
    }

    /// How steps are spread over the threads: "gang" or "rayon" (the `scheduler` argument).
    #[getter]
    fn scheduler(slf: &Bound<'_, Self>) -> PyResult<&'static str> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Ok(this.scheduler.name())
    }

    #[getter]
    fn frame_skip(slf: &Bound<'_, Self>) -> PyResult<u32> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Ok(Self::impl_frame_skip(&this))
    }

    #[getter]
    fn press_frames(slf: &Bound<'_, Self>) -> PyResult<u32> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Ok(Self::impl_press_frames(&this))
    }

    #[getter]
    fn max_episode_steps(slf: &Bound<'_, Self>) -> PyResult<u64> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Ok(Self::impl_max_episode_steps(&this))
    }

    /// Observation names in the order given.
    #[getter]
    fn obs_names(slf: &Bound<'_, Self>) -> PyResult<Vec<&'static str>> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Ok(Self::impl_obs_names(&this))
    }

    /// {name: per-environment shape} of the observations.
    #[getter]
    fn obs_shapes<'py>(slf: &Bound<'_, Self>, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Self::impl_obs_shapes(&this, py)
    }

    /// Read-only views of the output arrays, overwritten by every step/reset:
    /// one per observation name, plus "ram" (N, K), "rewards" (N,) float64,
    /// "terminated" and "truncated" (N,) bool; with `same_step_reset`, also "final_<name>"
    /// and "final_ram": the terminal observations of the environments the last step ended
    /// (their rows are meaningful only where terminated or truncated is true).
    #[getter]
    fn buffers<'py>(slf: &Bound<'_, Self>, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Self::impl_buffers(&this, py)
    }

    /// Steps taken in each environment's current episode.
    #[getter]
    fn episode_steps(slf: &Bound<'_, Self>) -> PyResult<Vec<u64>> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Ok(Self::impl_episode_steps(&this))
    }

    /// Frames each emulator has run since it was created or since the state it loaded was saved.
    #[getter]
    fn frame_counts(slf: &Bound<'_, Self>) -> PyResult<Vec<u64>> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Ok(Self::impl_frame_counts(&this))
    }

    /// Seed the reset randomisation: an int seeds environment i with `seed + i`; a list gives
    /// one seed per environment (None leaves that environment's generator as it is).
    fn seed(slf: &Bound<'_, Self>, seed: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("Batch"))?;
        Self::impl_seed(&mut this, seed)
    }

    /// Reset all environments, or those where `mask` is true. Their rows of every output are
    /// rewritten (reward 0, not terminated/truncated); other rows are left as they were.
    #[pyo3(signature = (mask=None))]
    fn reset(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        mask: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("Batch"))?;
        Self::impl_reset(&mut this, py, mask)
    }

    /// Step every environment with `actions` (integer array of shape (N,)); environments where
    /// `reset_mask` is true are reset instead (their action is ignored, but still validated).
    /// With `same_step_reset`, an environment whose episode this step ends is reset in the
    /// same pass: its observation rows are the new episode's, the "final_*" rows the terminal
    /// observation, its reward and end flags the step's.
    /// Ctrl-C during a long step raises KeyboardInterrupt within ~50 ms: every emulator stops
    /// at a frame boundary, environments that had not finished keep their previous outputs and
    /// step counts (call `reset` to start clean episodes).
    #[pyo3(signature = (actions, reset_mask=None))]
    fn step(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        actions: &Bound<'_, PyAny>,
        reset_mask: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("Batch"))?;
        Self::impl_step(&mut this, py, actions, reset_mask)
    }

    /// Set the state every later reset of environment `env` (or of all, when None) starts
    /// from: save-state bytes or a path; None for power-on. Checked before anything changes.
    #[pyo3(signature = (state, env=None))]
    fn set_start_state(
        slf: &Bound<'_, Self>,
        state: Option<&Bound<'_, PyAny>>,
        env: Option<i64>,
    ) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("Batch"))?;
        Self::impl_set_start_state(&mut this, state, env)
    }

    /// The start state of environment `env`.
    fn start_state<'py>(
        slf: &Bound<'_, Self>,
        py: Python<'py>,
        env: i64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Self::impl_start_state(&this, py, env)
    }

    /// Save environment `env` now (an emurust save state; its episode bookkeeping is not in it).
    fn save_state<'py>(
        slf: &Bound<'_, Self>,
        py: Python<'py>,
        env: i64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Self::impl_save_state(&this, py, env)
    }

    /// Load a state into environment `env` (its episode goes on: step count kept, reward deltas
    /// measured from the loaded values). A foreign or corrupt state raises StateError and
    /// changes nothing. The observation buffers are updated at the next step.
    fn load_state(slf: &Bound<'_, Self>, env: i64, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("Batch"))?;
        Self::impl_load_state(&mut this, env, data)
    }

    /// Read `length` bytes of environment `env`'s memory without side effects.
    #[pyo3(signature = (env, addr, length=1))]
    fn read<'py>(
        slf: &Bound<'_, Self>,
        py: Python<'py>,
        env: i64,
        addr: i64,
        length: i64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Self::impl_read(&this, py, env, addr, length)
    }

    /// Environment `env`'s last drawn screen as a new (144, 160, 3) uint8 RGB array.
    fn screen_rgb<'py>(
        slf: &Bound<'_, Self>,
        py: Python<'py>,
        env: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Self::impl_screen_rgb(&this, py, env)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let this = slf.try_borrow().map_err(|_| busy("Batch"))?;
        Ok(Self::impl_repr(&this))
    }
}

impl Batch {
    #[allow(clippy::too_many_arguments)]
    fn impl_num_envs(&self) -> usize {
        self.envs.len()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_num_actions(&self) -> usize {
        self.cfg.action_masks.len()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_action_masks(&self) -> Vec<u16> {
        self.cfg.action_masks.iter().map(|&m| m as u16).collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_num_threads(&self) -> usize {
        self.threads
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_frame_skip(&self) -> u32 {
        self.cfg.frame_skip
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_press_frames(&self) -> u32 {
        self.cfg.press_frames
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_max_episode_steps(&self) -> u64 {
        self.cfg.max_episode_steps
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_obs_names(&self) -> Vec<&'static str> {
        self.cfg.obs_kinds.iter().map(|k| k.name()).collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_obs_shapes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for k in &self.cfg.obs_kinds {
            d.set_item(k.name(), PyTuple::new(py, k.shape(self.cfg.ram_len))?)?;
        }
        Ok(d)
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_buffers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        // A new dict each time: the batch's own cannot be changed from Python.
        self.views.bind(py).copy()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_episode_steps(&self) -> Vec<u64> {
        self.envs.iter().map(|e| e.steps).collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_frame_counts(&self) -> Vec<u64> {
        self.envs.iter().map(|e| e.gb.frames).collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_seed(&mut self, seed: &Bound<'_, PyAny>) -> PyResult<()> {
        let n = self.envs.len();
        let seeds: Vec<Option<u64>> = if let Ok(s) = seed.extract::<u64>() {
            (0..n as u64).map(|i| Some(s.wrapping_add(i))).collect()
        } else if let Ok(v) = seed.extract::<Vec<Option<u64>>>() {
            if v.len() != n {
                return Err(PyValueError::new_err(format!(
                    "seed: expected {n} seeds, got {}",
                    v.len()
                )));
            }
            v
        } else {
            return Err(PyTypeError::new_err(
                "seed must be a non-negative int or a list of them (or None)",
            ));
        };
        for (e, s) in self.envs.iter_mut().zip(seeds) {
            if let Some(s) = s {
                e.rng = s;
                splitmix64(&mut e.rng);
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_reset(&mut self, py: Python<'_>, mask: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        match mask {
            None => self.jobs.fill(Job::Reset),
            Some(m) => read_mask(m, &mut self.jobs, Job::Reset, Job::Skip, "reset mask")?,
        }
        self.run_jobs(py)
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_step(
        &mut self,
        py: Python<'_>,
        actions: &Bound<'_, PyAny>,
        reset_mask: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        self.check_usable()?;
        let n = self.envs.len();
        read_actions(actions, n, self.cfg.action_masks.len(), &mut self.actions)?;
        match reset_mask {
            None => self.jobs.fill(Job::Step),
            Some(m) => read_mask(m, &mut self.jobs, Job::Reset, Job::Step, "reset_mask")?,
        }
        self.run_jobs(py)
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_set_start_state(
        &mut self,
        state: Option<&Bound<'_, PyAny>>,
        env: Option<i64>,
    ) -> PyResult<()> {
        let data: Arc<[u8]> = match state {
            None => GameBoy::with_options(self.rom.clone(), None, self.options)
                .map_err(to_py)?
                .save_state()
                .into(),
            Some(s) => {
                own_start_state(&self.rom, self.options, load_bytes(s, "start state")?)?.into()
            }
        };
        match env {
            None => self.envs.iter_mut().for_each(|e| e.start = data.clone()),
            Some(i) => {
                let i = self.env_index(i)?;
                self.envs[i].start = data;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_start_state<'py>(&self, py: Python<'py>, env: i64) -> PyResult<Bound<'py, PyBytes>> {
        let i = self.env_index(env)?;
        Ok(PyBytes::new(py, &self.envs[i].start))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_save_state<'py>(&self, py: Python<'py>, env: i64) -> PyResult<Bound<'py, PyBytes>> {
        let i = self.env_index(env)?;
        Ok(PyBytes::new(py, &self.envs[i].gb.save_state()))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_load_state(&mut self, env: i64, data: &Bound<'_, PyAny>) -> PyResult<()> {
        self.check_usable()?;
        let i = self.env_index(env)?;
        let d = load_bytes(data, "state")?;
        let e = &mut self.envs[i];
        catch_unwind(AssertUnwindSafe(|| e.gb.load_state(&d)))
            .map_err(|_| PyRuntimeError::new_err("emurust internal error in load_state"))?
            .map_err(to_py)?;
        e.memory.rebase(&self.cfg.terms, &*e.gb);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_read<'py>(
        &self,
        py: Python<'py>,
        env: i64,
        addr: i64,
        length: i64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let i = self.env_index(env)?;
        if !(0..=0xFFFF).contains(&addr) || length < 0 || length > 0x10000 - addr {
            return Err(PyValueError::new_err(format!(
                "range {addr:#06x}+{length} leaves the 64 KiB address space"
            )));
        }
        let gb = &self.envs[i].gb;
        let v: Vec<u8> = (addr..addr + length)
            .map(|a| gb.bus.peek(a as u16))
            .collect();
        Ok(PyBytes::new(py, &v))
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_screen_rgb<'py>(&self, py: Python<'py>, env: i64) -> PyResult<Bound<'py, PyAny>> {
        let i = self.env_index(env)?;
        let mut v = vec![0u8; 144 * 160 * 3];
        spec::write_obs(ObsKind::Rgb, &self.envs[i].gb, &[], &mut v);
        let arr = numpy::PyArray1::from_vec(py, v);
        Ok(arr.reshape([144, 160, 3])?.into_any())
    }

    #[allow(clippy::too_many_arguments)]
    fn impl_repr(&self) -> String {
        format!(
            "Batch(num_envs={}, num_actions={}, obs={:?}, frame_skip={}, num_threads={})",
            self.envs.len(),
            self.cfg.action_masks.len(),
            self.impl_obs_names(),
            self.cfg.frame_skip,
            self.threads
        )
    }
}

/// The thread count set by `set_num_threads` (0: not set).
static CONFIGURED_THREADS: AtomicUsize = AtomicUsize::new(0);
/// The process-wide pool that batches share, with its fork-join (built on first use, rebuilt
/// when resized).
static SHARED_POOL: Mutex<Option<Arc<Gang>>> = Mutex::new(None);

fn check_threads(t: i64, what: &str) -> PyResult<usize> {
    if !(1..=1024).contains(&t) {
        return Err(PyValueError::new_err(format!(
            "{what} must be between 1 and 1024, got {t}"
        )));
    }
    Ok(t as usize)
}

/// Threads of the shared pool: `set_num_threads`, else EMURUST_NUM_THREADS, else the CPUs.
fn shared_threads() -> PyResult<usize> {
    let t = CONFIGURED_THREADS.load(Ordering::Relaxed);
    if t > 0 {
        return Ok(t);
    }
    if let Ok(v) = std::env::var("EMURUST_NUM_THREADS") {
        let t: i64 = v.trim().parse().map_err(|_| {
            PyValueError::new_err(format!(
                "EMURUST_NUM_THREADS must be an integer between 1 and 1024, got {v:?}"
            ))
        })?;
        return check_threads(t, "EMURUST_NUM_THREADS");
    }
    Ok(std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The default threads of a pool whose caller keeps working while its environments run
/// (`RedV2AsyncPool`: the policy between `recv` and `send`): one CPU fewer than the machine
/// has, so that the caller's thread does not take time from a busy worker. None (the shared
/// pool's count) where the user set a count (`set_num_threads`, EMURUST_NUM_THREADS). On the
/// device, 16 envs in batches of 1 / 2 / 4: 15 threads 13,165-13,659 / 12,609-13,443 /
/// 11,948-12,276 steps/s against 16 threads' 10,015-11,944 / 11,170-12,105 / 11,256-11,610
/// (two runs each, alternating); 64 envs, batches of 16: 15,341 against 15,202.
pub(crate) fn threads_beside_a_busy_caller() -> Option<i64> {
    if CONFIGURED_THREADS.load(Ordering::Relaxed) > 0
        || std::env::var_os("EMURUST_NUM_THREADS").is_some()
    {
        return None;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    Some(cpus.saturating_sub(1).max(1) as i64)
}

fn build_pool(threads: usize) -> PyResult<Arc<Gang>> {
    let mut b = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("emurust-batch-{i}"));
    if gang::pin_threads() {
        b = b.start_handler(gang::pin_to_cpu);
    }
    b.build()
        .map(|p| Arc::new(Gang::new(Arc::new(p))))
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the thread pool: {e}")))
}

/// The pool (and its fork-join) for a batch asking for `num_threads` (None: the shared size):
/// the shared pool when the size is the shared one, else a pool of its own.
pub(crate) fn pool_for(num_threads: Option<i64>) -> PyResult<(Arc<Gang>, usize)> {
    let shared = shared_threads()?;
    let threads = match num_threads {
        None => shared,
        Some(t) => check_threads(t, "num_threads")?,
    };
    if threads != shared {
        return Ok((build_pool(threads)?, threads));
    }
    let mut slot = SHARED_POOL.lock().unwrap_or_else(|e| e.into_inner());
    match &*slot {
        Some(p) if p.threads() == threads => Ok((p.clone(), threads)),
        _ => {
            let p = build_pool(threads)?;
            *slot = Some(p.clone());
            Ok((p, threads))
        }
    }
}

/// How a batch's step is spread over its threads (the `scheduler` argument of `Batch`,
/// `RedV2Batch` and `PongBatch`; default: EMURUST_SCHEDULER, else each env's measured best:
/// the gang for Pong's per-step calls, Rayon for the generic Game Boy batch, longest first for
/// `RedV2Batch`; docs/scheduling.md).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Scheduler {
    /// `gang::Gang`: per-thread home blocks, threads spinning briefly between calls.
    Gang,
    /// Each call handed to Rayon (work stealing; its threads park between calls). Better than
    /// the gang for steps of Game Boy envs on the device (Dodge at 16 envs: 49% of 16x one
    /// thread against 25%; at 64: 71% against 44%).
    Rayon,
    /// Longest first: every call hands out the environments one at a time from a shared
    /// cursor, in the order of their last step's duration, longest first (greedy list
    /// scheduling of the longest tasks first), so that a long step starts at once and the
    /// short ones fill the threads' ends. For steps whose cost differs between environments
    /// and persists from one call to the next (Pokémon Red: battles, menus, walks).
    LongestFirst,
}

impl Scheduler {
    /// The scheduler named by `name` (or EMURUST_SCHEDULER; `default` if neither), which must
    /// be one of `allowed` (the ones the batch kind implements).
    pub(crate) fn from_py(
        name: Option<&str>,
        default: Scheduler,
        allowed: &[Scheduler],
    ) -> PyResult<Scheduler> {
        let env = std::env::var("EMURUST_SCHEDULER").ok();
        let (name, what) = match name {
            Some(n) => (n.to_string(), "scheduler"),
            None => match env {
                Some(e) => (e, "EMURUST_SCHEDULER"),
                None => return Ok(default),
            },
        };
        let found = match name.trim() {
            "gang" => Some(Scheduler::Gang),
            "rayon" => Some(Scheduler::Rayon),
            "longest_first" => Some(Scheduler::LongestFirst),
            _ => None,
        };
        match found {
            Some(s) if allowed.contains(&s) => Ok(s),
            _ => {
                let names: Vec<String> =
                    allowed.iter().map(|s| format!("'{}'", s.name())).collect();
                Err(PyValueError::new_err(format!(
                    "{what} must be one of {} here, got {:?}",
                    names.join(", "),
                    name.trim()
                )))
            }
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Scheduler::Gang => "gang",
            Scheduler::Rayon => "rayon",
            Scheduler::LongestFirst => "longest_first",
        }
    }
}

/// Set the size of the thread pool that batches share (those created later; a batch keeps
/// the pool it was created with). Overrides EMURUST_NUM_THREADS.
#[pyfunction]
fn set_num_threads(n: i64) -> PyResult<()> {
    let t = check_threads(n, "num_threads")?;
    CONFIGURED_THREADS.store(t, Ordering::Relaxed);
    Ok(())
}

/// Threads of the shared pool that new batches use by default.
#[pyfunction]
fn get_num_threads() -> PyResult<usize> {
    shared_threads()
}

/// The default action set as lists of button names.
#[pyfunction]
fn default_actions<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let l = PyList::empty(py);
    for &m in DEFAULT_ACTIONS.iter() {
        let names: Vec<&str> = (0..8)
            .filter(|b| m & (1 << b) != 0)
            .map(|b| BUTTON_NAMES[b])
            .collect();
        l.append(names)?;
    }
    Ok(l)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Batch>()?;
    m.add_class::<pokered_v2::RedV2Batch>()?;
    m.add_class::<pokered_v2::RedV2AsyncPool>()?;
    m.add_function(wrap_pyfunction!(default_actions, m)?)?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    Ok(())
}

/// Heap an emulator owns besides its struct and what its start state holds (the cartridge RAM
/// is in both): the sound and picture buffers, rounded up. With it the estimate of a Dodge
/// environment is 332 KiB; measured, 308 KiB after a reset (RSS of 2,000 environments).
const EMULATOR_HEAP_BYTES: usize = 128 << 10;

/// Refuses, with MemoryError, a batch whose emulators and output arrays cannot be allocated,
/// before any is: an allocation that fails midway would abort the process (Rust cannot unwind
/// from it), so the whole estimate is reserved once and given back first.
fn reserve_or_refuse(
    n: usize,
    start: &[u8],
    kinds: &[ObsKind],
    ram_len: usize,
    same_step_reset: bool,
) -> PyResult<()> {
    let obs_bytes: usize = kinds
        .iter()
        .filter(|k| k.needs_pixels())
        .map(|k| k.shape(ram_len).iter().product::<usize>())
        .sum::<usize>()
        + ram_len;
    let per_env = std::mem::size_of::<GameBoy>()
        + EMULATOR_HEAP_BYTES
        + start.len()
        + obs_bytes * if same_step_reset { 2 } else { 1 };
    let total = per_env.checked_mul(n);
    let fits = total.is_some_and(|total| {
        let mut probe: Vec<u8> = Vec::new();
        probe.try_reserve_exact(total).is_ok()
    });
    if fits {
        Ok(())
    } else {
        Err(pyo3::exceptions::PyMemoryError::new_err(format!(
            "a batch of {n} environments needs about {} MiB ({} KiB each), which cannot be allocated here; use fewer environments",
            per_env.saturating_mul(n) >> 20,
            per_env >> 10
        )))
    }
}
