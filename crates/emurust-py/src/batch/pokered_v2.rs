//! `emurust._core.RedV2Batch`: PokemonRedExperiments v2's `RedGymEnv` (MIT, third party;
//! run as the oracle in tests/test_pokered_v2.py, never copied) for N emulators stepped in
//! one call with the GIL released.
//!
//! Per step and environment, in v2's order: press the action's button for 8 frames, release
//! it, run `action_freq - 9` more frames undrawn and one drawn frame (v2's three `tick` calls),
//! then update the visited-coordinate counts (outside battles), the exploration map, the
//! healing reward, the party size, the reward terms, the last health, the map progress and
//! the observation (the 2x2-averaged screen stack, health, Fourier-encoded level sum, badge
//! and event bits, the 48x48 window of the exploration map, the last three actions).
//! Every number is computed with the same f64 operations in the same order as v2's Python,
//! so rewards are bit-identical. docs/pokered_v2.md lists v2's odd behaviours kept here.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use emurust_core::gameboy::Options;
use emurust_core::joypad::button;
use emurust_core::{CoreError, GameBoy};
use numpy::{PyArrayDyn, PyArrayMethods, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rayon::prelude::*;

use super::{own_start_state, pool_for, Scheduler};
use crate::gang::{Gang, SharedMut};
use crate::{busy, load_bytes, options_from_py, to_py, StateError};

/// v2's `valid_actions`: down, left, right, up, A, B, start.
const ACTIONS: [u8; 7] = [
    button::DOWN,
    button::LEFT,
    button::RIGHT,
    button::UP,
    button::A,
    button::B,
    button::START,
];
/// v2's `press_step`: frames the button is held.
const PRESS_FRAMES: u32 = 8;
/// Event flags: `wEventFlags` from 0xD747 up to (not including) 0xD87E.
const EVENT_START: u16 = 0xD747;
const EVENT_END: u16 = 0xD87E;
pub const EVENT_BYTES: usize = (EVENT_END - EVENT_START) as usize;
/// The museum ticket flag (0xD754 bit 0), left out of the event reward.
const MUSEUM_TICKET: u16 = 0xD754;
const LEVEL_ADDRS: [u16; 6] = [0xD18C, 0xD1B8, 0xD1E4, 0xD210, 0xD23C, 0xD268];
const HP_ADDRS: [u16; 6] = [0xD16C, 0xD198, 0xD1C4, 0xD1F0, 0xD21C, 0xD248];
const MAX_HP_ADDRS: [u16; 6] = [0xD18D, 0xD1B9, 0xD1E5, 0xD211, 0xD23D, 0xD269];
const PARTY_COUNT: u16 = 0xD163;
const BADGES: u16 = 0xD356;
const BATTLE: u16 = 0xD057;
const X_POS: u16 = 0xD362;
const Y_POS: u16 = 0xD361;
const MAP_N: u16 = 0xD35E;
/// v2's global_map: 444x436 tiles padded by 20 on every side.
const PAD: i32 = 20;
pub const MAP_H: usize = 444 + 2 * PAD as usize;
pub const MAP_W: usize = 436 + 2 * PAD as usize;
/// v2's `coords_pad`: the observed window is 24x24 map cells around the player, doubled.
const COORDS_PAD: i32 = 12;
pub const WINDOW: usize = 4 * COORDS_PAD as usize;
pub const SCREEN_H: usize = 72;
pub const SCREEN_W: usize = 80;
pub const STACK: usize = 3;
pub const SCREENS_LEN: usize = SCREEN_H * SCREEN_W * STACK;
pub const ENC_FREQS: usize = 8;
/// Level sums range over 0..=6*255: the `level` observation is a table lookup.
pub const LEVEL_SUMS: usize = 6 * 255 + 1;
/// v2's `essential_map_locations`: map id -> progress index.
const ESSENTIAL_MAPS: [u8; 15] = [40, 0, 12, 1, 13, 51, 2, 54, 14, 59, 60, 61, 15, 3, 65];
/// v2's "stuck" penalty starts once the current coordinates were visited this many steps.
const STUCK_COUNT: u32 = 600;

/// Reads of one emulator's memory (the bus, or a plain array in the unit tests).
pub trait Ram {
    fn m(&self, addr: u16) -> u8;
}

impl Ram for GameBoy {
    #[inline]
    fn m(&self, addr: u16) -> u8 {
        self.bus.peek(addr)
    }
}

/// Fixed at construction.
pub struct Config {
    pub action_freq: u32,
    pub max_steps: i64,
    pub reward_scale: f64,
    pub explore_weight: f64,
    /// map_data.json: (x, y) offset of every map id present.
    pub map_offsets: [Option<(i32, i32)>; 256],
    /// `np.sin(0.02 * k * 2 ** np.arange(8))` for every level sum k, computed by NumPy
    /// (python/emurust/pokered_v2.py) so the values are NumPy's own.
    pub level_table: Vec<f64>,
}

/// v2's `read_hp_fraction`.
pub fn hp_fraction<M: Ram + ?Sized>(m: &M) -> f64 {
    let read = |a: u16| 256 * m.m(a) as u64 + m.m(a + 1) as u64;
    let hp: u64 = HP_ADDRS.iter().map(|&a| read(a)).sum();
    let max: u64 = MAX_HP_ADDRS.iter().map(|&a| read(a)).sum::<u64>().max(1);
    hp as f64 / max as f64
}

fn event_bit_count<M: Ram + ?Sized>(m: &M) -> i64 {
    (EVENT_START..EVENT_END)
        .map(|a| m.m(a).count_ones() as i64)
        .sum()
}

fn level_sum<M: Ram + ?Sized>(m: &M) -> usize {
    LEVEL_ADDRS.iter().map(|&a| m.m(a) as usize).sum()
}

/// v2's `local_to_global(y, x, map_n)`: (row, column) in the global map; unknown maps and
/// coordinates outside the map go to its centre (v2 prints a line there).
pub fn global_coords(cfg: &Config, x: u8, y: u8, map_n: u8) -> (usize, usize) {
    let centre = (MAP_H / 2, MAP_W / 2);
    let Some((mx, my)) = cfg.map_offsets[map_n as usize] else {
        return centre;
    };
    let gy = y as i32 + my + PAD;
    let gx = x as i32 + mx + PAD;
    if (0..MAP_H as i32).contains(&gy) && (0..MAP_W as i32).contains(&gx) {
        (gy as usize, gx as usize)
    } else {
        centre
    }
}

/// The values of v2's `agent_stats` entry that are not RAM reads: v2 records them before the
/// step updates them.
#[derive(Clone, Copy, Default)]
pub struct StatsBefore {
    pub max_map_progress: i32,
    pub coord_count: usize,
    pub deaths: u32,
    pub event: f64,
    pub healr: f64,
    pub last_action: u8,
}

/// One environment's episode bookkeeping (v2's instance attributes), without the emulator.
pub struct Episode {
    pub explore_map: Vec<u8>,
    /// `seen_coords`: visits per (x, y, map) outside battles.
    pub seen: HashMap<u32, u32>,
    pub screens: Vec<u8>,
    pub recent_actions: [u8; STACK],
    pub base_event_flags: i64,
    pub max_event_rew: i64,
    pub last_health: f64,
    pub total_healing_rew: f64,
    pub died_count: u32,
    pub party_size: u8,
    pub step_count: i64,
    pub total_reward: f64,
    pub max_map_progress: i32,
    /// `progress_reward["event"]` of the last reward evaluation.
    pub event_reward: f64,
    pub stats: StatsBefore,
    /// Event bytes OR-ed at every step whose count is a multiple of 100 (v2's
    /// `current_event_flags_set`, names looked up in Python).
    pub flags_logged: [u8; EVENT_BYTES],
}

fn coord_key(x: u8, y: u8, map_n: u8) -> u32 {
    x as u32 | (y as u32) << 8 | (map_n as u32) << 16
}

impl Episode {
    pub fn new() -> Episode {
        Episode {
            explore_map: vec![0; MAP_H * MAP_W],
            seen: HashMap::with_capacity(4096),
            screens: vec![0; SCREENS_LEN],
            recent_actions: [0; STACK],
            base_event_flags: 0,
            max_event_rew: 0,
            last_health: 1.0,
            total_healing_rew: 0.0,
            died_count: 0,
            party_size: 0,
            step_count: 0,
            total_reward: 0.0,
            max_map_progress: 0,
            event_reward: 0.0,
            stats: StatsBefore::default(),
            flags_logged: [0; EVENT_BYTES],
        }
    }

    /// v2's `reset` after the state load.
    pub fn reset<M: Ram + ?Sized>(&mut self, cfg: &Config, m: &M) {
        self.seen.clear();
        self.explore_map.fill(0);
        self.screens.fill(0);
        self.recent_actions = [0; STACK];
        self.max_event_rew = 0;
        self.last_health = 1.0;
        self.total_healing_rew = 0.0;
        self.died_count = 0;
        self.party_size = 0;
        self.step_count = 0;
        self.base_event_flags = event_bit_count(m);
        self.flags_logged = [0; EVENT_BYTES];
        self.max_map_progress = 0;
        self.stats = StatsBefore::default();
        self.total_reward = self.game_state_reward(cfg, m);
    }

    fn coords<M: Ram + ?Sized>(m: &M) -> (u8, u8, u8) {
        (m.m(X_POS), m.m(Y_POS), m.m(MAP_N))
    }

    /// v2's `get_game_state_reward` summed as v2 sums it (it also updates the event high).
    fn game_state_reward<M: Ram + ?Sized>(&mut self, cfg: &Config, m: &M) -> f64 {
        let museum = (m.m(MUSEUM_TICKET) & 1) as i64;
        let events = (event_bit_count(m) - self.base_event_flags - museum).max(0);
        self.max_event_rew = self.max_event_rew.max(events);
        let s = cfg.reward_scale;
        let event = s * self.max_event_rew as f64 * 4.0;
        let heal = s * self.total_healing_rew * 10.0;
        let badge = s * m.m(BADGES).count_ones() as f64 * 10.0;
        let explore = s * cfg.explore_weight * self.seen.len() as f64 * 0.1;
        let (x, y, map_n) = Self::coords(m);
        let count = self.seen.get(&coord_key(x, y, map_n)).copied().unwrap_or(0);
        let stuck = s * (if count < STUCK_COUNT { 0.0 } else { 1.0 }) * -0.05;
        self.event_reward = event;
        0.0 + event + heal + badge + explore + stuck
    }

    /// Everything of v2's `step` after the emulator ran the action. Returns (reward, truncated).
    pub fn after_action<M: Ram + ?Sized>(
        &mut self,
        cfg: &Config,
        m: &M,
        action: u8,
    ) -> (f64, bool) {
        self.stats = StatsBefore {
            max_map_progress: self.max_map_progress,
            coord_count: self.seen.len(),
            deaths: self.died_count,
            event: self.event_reward,
            healr: self.total_healing_rew,
            last_action: action,
        };
        self.recent_actions = [action, self.recent_actions[0], self.recent_actions[1]];
        let (x, y, map_n) = Self::coords(m);
        if m.m(BATTLE) == 0 {
            *self.seen.entry(coord_key(x, y, map_n)).or_insert(0) += 1;
        }
        let (gy, gx) = global_coords(cfg, x, y, map_n);
        self.explore_map[gy * MAP_W + gx] = 255;
        // Healing: health rose and the party did not grow (party_size is the last step's).
        let health = hp_fraction(m);
        if health > self.last_health && m.m(PARTY_COUNT) == self.party_size {
            if self.last_health > 0.0 {
                let heal = health - self.last_health;
                self.total_healing_rew += heal * heal;
            } else {
                self.died_count += 1;
            }
        }
        self.party_size = m.m(PARTY_COUNT);
        let total = self.game_state_reward(cfg, m);
        let reward = total - self.total_reward;
        self.total_reward = total;
        self.last_health = health;
        if let Some(p) = ESSENTIAL_MAPS.iter().position(|&e| e == map_n) {
            self.max_map_progress = self.max_map_progress.max(p as i32);
        } else {
            self.max_map_progress = self.max_map_progress.max(-1);
        }
        let truncated = self.step_count >= cfg.max_steps - 1;
        if self.step_count % 100 == 0 {
            for (f, a) in self.flags_logged.iter_mut().zip(EVENT_START..EVENT_END) {
                *f |= m.m(a);
            }
        }
        self.step_count += 1;
        (reward, truncated)
    }

    /// Push the current screen onto the stack: the red channel of the screen's RGBA bytes
    /// (PyBoy's `(144, 160)` values), v2's `downscale_local_mean` (the mean of each 2x2 block,
    /// truncated to uint8) and `np.roll(..., 1, axis=2)` (channel 0 newest). Row by row over
    /// slices: no division or bounds check per pixel (the step runs it once per 24 frames).
    pub fn push_screen(&mut self, rgba: &[u8]) {
        const ROW: usize = 2 * SCREEN_W * 4;
        let rgba = &rgba[..2 * SCREEN_H * ROW];
        for (out, rows) in self
            .screens
            .chunks_exact_mut(SCREEN_W * STACK)
            .zip(rgba.chunks_exact(2 * ROW))
        {
            // The row's means first: the two lines' red bytes (every 4th) summed pixel by pixel,
            // then pairs of those sums (a loop the compiler vectorises).
            let (top, bottom) = rows.split_at(ROW);
            let mut column_sums = [0u16; 2 * SCREEN_W];
            for ((sums, t), b) in column_sums
                .as_chunks_mut::<8>()
                .0
                .iter_mut()
                .zip(top.as_chunks::<32>().0)
                .zip(bottom.as_chunks::<32>().0)
            {
                *sums = red_column_sums8(t, b);
            }
            let mut means = [0u8; SCREEN_W];
            for (m, pair) in means.iter_mut().zip(column_sums.chunks_exact(2)) {
                *m = ((pair[0] + pair[1]) >> 2) as u8;
            }
            // The roll: every byte one place on (each pixel's older frames move up a channel,
            // its oldest into the next pixel's channel 0), then channel 0 the new means.
            out.copy_within(..SCREEN_W * STACK - 1, 1);
            for (px, &m) in out.chunks_exact_mut(STACK).zip(&means) {
                px[0] = m;
            }
        }
    }

    /// v2's `_get_obs` (after `push_screen`), into one environment's rows.
    pub fn write_obs<M: Ram + ?Sized>(&self, cfg: &Config, m: &M, row: &mut Row<'_>) {
        row.screens.copy_from_slice(&self.screens);
        row.health[0] = hp_fraction(m);
        let k = level_sum(m);
        row.level
            .copy_from_slice(&cfg.level_table[k * ENC_FREQS..(k + 1) * ENC_FREQS]);
        let b = m.m(BADGES);
        for (i, o) in row.badges.iter_mut().enumerate() {
            *o = ((b >> (7 - i)) & 1) as i8;
        }
        for (j, a) in (EVENT_START..EVENT_END).enumerate() {
            let v = m.m(a);
            for (i, o) in row.events[j * 8..j * 8 + 8].iter_mut().enumerate() {
                *o = ((v >> (7 - i)) & 1) as i8;
            }
        }
        let (x, y, map_n) = Self::coords(m);
        let (gy, gx) = global_coords(cfg, x, y, map_n);
        self.map_window(gy, gx, row.map);
        row.recent_actions.copy_from_slice(&self.recent_actions);
    }

    /// v2's map observation: the 24x24 cells of the exploration map around the global
    /// coordinates (`gy`, `gx`), each cell doubled into 2x2; cells past the map's edges read 0
    /// (v2's slice would come out smaller there; see the docs).
    fn map_window(&self, gy: usize, gx: usize, map: &mut [u8]) {
        let half = COORDS_PAD as usize;
        // Each of the 24 map rows fills two window rows, each cell two columns; a row's cells
        // inside the map are one slice of it, columns `col_lo..col_hi` of the window's 24.
        let cols = WINDOW / 2;
        let col_lo = half.saturating_sub(gx).min(cols);
        let col_hi = (MAP_W + half).saturating_sub(gx).clamp(col_lo, cols);
        for (r2, pair) in map.chunks_exact_mut(2 * WINDOW).enumerate() {
            let (first, second) = pair.split_at_mut(WINDOW);
            first.fill(0);
            let my = gy + r2;
            if my >= half && my - half < MAP_H && col_lo < col_hi {
                let start = (my - half) * MAP_W + gx + col_lo - half;
                let cells = &self.explore_map[start..start + (col_hi - col_lo)];
                for (out, &v) in first[2 * col_lo..2 * col_hi].chunks_exact_mut(2).zip(cells) {
                    out[0] = v;
                    out[1] = v;
                }
            }
            second.copy_from_slice(first);
        }
    }
}

impl Default for Episode {
    fn default() -> Self {
        Self::new()
    }
}

/// The sums of the red bytes of 8 RGBA pixels of two lines, pixel by pixel. SSE2 (part of every
/// x86-64): the compiler does not vectorise the stride-4 byte loads itself (5 host instructions
/// a pixel scalar, ~1 here).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn red_column_sums8(top: &[u8; 32], bottom: &[u8; 32]) -> [u16; 8] {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is this build's target feature (the cfg above); the loads read 16 bytes
    // from arrays of 32 at offsets 0 and 16, unaligned loads.
    #[allow(unused_unsafe)]
    unsafe {
        let red = _mm_set1_epi32(0xFF);
        let load = |a: &[u8; 32], at: usize| {
            _mm_and_si128(_mm_loadu_si128(a.as_ptr().add(at) as *const __m128i), red)
        };
        // Four 32-bit sums each (at most 510), then narrowed to 16 bits.
        let lo = _mm_add_epi32(load(top, 0), load(bottom, 0));
        let hi = _mm_add_epi32(load(top, 16), load(bottom, 16));
        let mut out = [0u16; 8];
        _mm_storeu_si128(out.as_mut_ptr() as *mut __m128i, _mm_packs_epi32(lo, hi));
        out
    }
}

/// The sums of the red bytes of 8 RGBA pixels of two lines, pixel by pixel (portable).
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
fn red_column_sums8(top: &[u8; 32], bottom: &[u8; 32]) -> [u16; 8] {
    red_column_sums8_portable(top, bottom)
}

/// [`red_column_sums8`] without SSE2: what other targets run, and what the SSE2 version is
/// tested against.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
fn red_column_sums8_portable(top: &[u8; 32], bottom: &[u8; 32]) -> [u16; 8] {
    std::array::from_fn(|i| top[4 * i] as u16 + bottom[4 * i] as u16)
}

/// One environment's rows of the output arrays.
pub struct Row<'a> {
    pub screens: &'a mut [u8],
    pub health: &'a mut [f64],
    pub level: &'a mut [f64],
    pub badges: &'a mut [i8],
    pub events: &'a mut [i8],
    pub map: &'a mut [u8],
    pub recent_actions: &'a mut [u8],
    pub reward: &'a mut f64,
    pub truncated: &'a mut bool,
}

struct Env {
    gb: Box<GameBoy>,
    /// No state was loaded yet (v2's PyBoy is freshly created).
    fresh: bool,
    ep: Episode,
    error: Option<CoreError>,
    /// How long its last step or reset took (ns): the gang steps the slowest of a block first.
    last_ns: u64,
}

/// The state v2's `reset` loads.
enum StartState {
    /// An emurust save state: loaded whole.
    Emurust(Arc<[u8]>),
    /// A PyBoy save state (v2's `init_state`), kept as given.
    PyBoy {
        raw: Arc<[u8]>,
        rom: Arc<[u8]>,
        options: Options,
    },
}

impl Env {
    fn push_screen(&mut self) {
        self.ep.push_screen(self.gb.bus.lcd.screen_rgba());
    }

    /// v2's `reset`: reload the start state, clear the bookkeeping, observe.
    /// A PyBoy state is loaded as PyBoy loads it into its running instance: the first time
    /// into a fresh machine, later over the running one, whose values fill what an older
    /// state version lacks (v2's v7 states have no sound or serial section, so the sound
    /// unit runs on from the last episode, in PyBoy as here).
    fn reset(&mut self, cfg: &Config, start: &StartState, row: &mut Row<'_>) {
        let loaded = match start {
            StartState::Emurust(s) => self.gb.load_state(s),
            StartState::PyBoy { raw, rom, options } if self.fresh => {
                GameBoy::from_pyboy_state(rom.clone(), *options, raw).map(|gb| *self.gb = gb)
            }
            StartState::PyBoy { raw, .. } => self.gb.load_pyboy_state(raw),
        };
        if let Err(e) = loaded {
            self.error = Some(e);
            return;
        }
        self.fresh = false;
        self.gb.set_buttons(0);
        self.ep.reset(cfg, &*self.gb);
        self.push_screen();
        self.ep.write_obs(cfg, &*self.gb, row);
        *row.reward = 0.0;
        *row.truncated = false;
    }

    /// v2's `step`.
    fn step(&mut self, cfg: &Config, action: u8, row: &mut Row<'_>) {
        // run_action_on_emulator: tick(8, False); release; tick(freq - 9, False); tick(1, True).
        // Each tick samples sound in its last frame (PyBoy's default sound=True).
        self.gb.set_buttons(ACTIONS[action as usize]);
        self.gb.tick(PRESS_FRAMES, false, true);
        self.gb.set_buttons(0);
        self.gb
            .tick(cfg.action_freq - PRESS_FRAMES - 1, false, true);
        self.gb.tick(1, true, true);
        let (reward, truncated) = self.ep.after_action(cfg, &*self.gb, action);
        self.push_screen();
        self.ep.write_obs(cfg, &*self.gb, row);
        *row.reward = reward;
        *row.truncated = truncated;
    }
}

/// PokemonRedExperiments v2's environment for N emulators. See python/emurust/pokered_v2.py.
#[pyclass(module = "emurust._core", name = "RedV2Batch")]
pub struct RedV2Batch {
    envs: Vec<Env>,
    cfg: Arc<Config>,
    start: Arc<StartState>,
    pool: Arc<Gang>,
    threads: usize,
    scheduler: Scheduler,
    /// Per-step scratch, allocated once: the actions, and which environments a call runs.
    actions: Vec<u8>,
    selected: Vec<bool>,
    /// The order the gang steps the environments in: each thread's block (the same
    /// environments every call) sorted by their last step's time, slowest first, so that a
    /// slow step starts early and the others of its block can be taken by idle threads
    /// meanwhile (EMURUST_SLOW_FIRST=0: index order).
    order: Vec<u32>,
    slow_first: bool,
}

type Arr<'py, T> = Bound<'py, PyArrayDyn<T>>;

/// The output arrays, as Python hands them in: (screens, health, level, badges, events, map,
/// recent_actions, rewards, truncated), each C-contiguous with a leading dimension N.
type OutArgs<'py> = (
    Arr<'py, u8>,
    Arr<'py, f64>,
    Arr<'py, f64>,
    Arr<'py, i8>,
    Arr<'py, i8>,
    Arr<'py, u8>,
    Arr<'py, u8>,
    Arr<'py, f64>,
    Arr<'py, bool>,
);

/// An output array as one slice of `n` rows of `per` values (C-contiguous, that size).
fn checked_rows<'a, T: numpy::Element>(
    a: &'a mut numpy::PyReadwriteArrayDyn<'_, T>,
    n: usize,
    per: usize,
    name: &str,
) -> PyResult<&'a mut [T]> {
    let s = a
        .as_slice_mut()
        .map_err(|_| PyValueError::new_err(format!("{name} must be C-contiguous")))?;
    if s.len() != n * per {
        return Err(PyValueError::new_err(format!(
            "{name} must hold {n} x {per} values, got {}",
            s.len()
        )));
    }
    Ok(s)
}

fn rows_of<'a, T: numpy::Element>(
    a: &'a mut numpy::PyReadwriteArrayDyn<'_, T>,
    n: usize,
    per: usize,
    name: &str,
) -> PyResult<std::slice::ChunksExactMut<'a, T>> {
    Ok(checked_rows(a, n, per, name)?.chunks_exact_mut(per))
}

/// The output arrays as raw slices with their row sizes, for the workers (each writes the
/// rows of the environments it claimed).
struct OutRows {
    screens: SharedMut<u8>,
    health: SharedMut<f64>,
    level: SharedMut<f64>,
    badges: SharedMut<i8>,
    events: SharedMut<i8>,
    map: SharedMut<u8>,
    recent_actions: SharedMut<u8>,
    rewards: SharedMut<f64>,
    truncated: SharedMut<bool>,
}

impl OutRows {
    /// # Safety
    /// `i` < N and no one else uses row `i` meanwhile.
    unsafe fn row(&self, i: usize) -> Row<'_> {
        let at = |per: usize| i * per..(i + 1) * per;
        Row {
            screens: self.screens.range(at(SCREENS_LEN)),
            health: self.health.range(at(1)),
            level: self.level.range(at(ENC_FREQS)),
            badges: self.badges.range(at(8)),
            events: self.events.range(at(EVENT_BYTES * 8)),
            map: self.map.range(at(WINDOW * WINDOW)),
            recent_actions: self.recent_actions.range(at(STACK)),
            reward: &mut self.rewards.range(at(1))[0],
            truncated: &mut self.truncated.range(at(1))[0],
        }
    }
}

fn whole<T: numpy::Element>(
    a: &mut numpy::PyReadwriteArrayDyn<'_, T>,
    n: usize,
    per: usize,
    name: &str,
) -> PyResult<SharedMut<T>> {
    Ok(SharedMut::new(checked_rows(a, n, per, name)?))
}

impl RedV2Batch {
    /// Run `f` on every environment selected in `self.selected` with its output rows, in
    /// parallel, GIL released.
    fn run<F>(&mut self, py: Python<'_>, out: &OutArgs<'_>, f: F) -> PyResult<()>
    where
        F: Fn(usize, &mut Env, &mut Row<'_>) + Sync,
    {
        let n = self.envs.len();
        let (mut s, mut h, mut l, mut b, mut e, mut m, mut ra, mut rw, mut tr) = (
            out.0.try_readwrite().map_err(ro)?,
            out.1.try_readwrite().map_err(ro)?,
            out.2.try_readwrite().map_err(ro)?,
            out.3.try_readwrite().map_err(ro)?,
            out.4.try_readwrite().map_err(ro)?,
            out.5.try_readwrite().map_err(ro)?,
            out.6.try_readwrite().map_err(ro)?,
            out.7.try_readwrite().map_err(ro)?,
            out.8.try_readwrite().map_err(ro)?,
        );
        let rows = OutRows {
            screens: whole(&mut s, n, SCREENS_LEN, "screens")?,
            health: whole(&mut h, n, 1, "health")?,
            level: whole(&mut l, n, ENC_FREQS, "level")?,
            badges: whole(&mut b, n, 8, "badges")?,
            events: whole(&mut e, n, EVENT_BYTES * 8, "events")?,
            map: whole(&mut m, n, WINDOW * WINDOW, "map")?,
            recent_actions: whole(&mut ra, n, STACK, "recent_actions")?,
            rewards: whole(&mut rw, n, 1, "rewards")?,
            truncated: whole(&mut tr, n, 1, "truncated")?,
        };
        let selected = &self.selected;
        let work = |i: usize, env: &mut Env| {
            if selected[i] {
                // SAFETY: environment i (and so row i) is run by one worker only.
                f(i, env, &mut unsafe { rows.row(i) })
            }
        };
        let (pool, scheduler, slow_first) = (&self.pool, self.scheduler, self.slow_first);
        let parallel = self.threads > 1 && n > 1;
        let (envs, order) = (&mut self.envs, &mut self.order);
        let result = py.allow_threads(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                if parallel && scheduler == Scheduler::Gang {
                    if slow_first {
                        // The gang's blocks (same bounds as `Gang::run`), each sorted.
                        let t = pool.threads();
                        for k in 0..t {
                            order[k * n / t..(k + 1) * n / t].sort_unstable_by_key(|&e| {
                                std::cmp::Reverse(envs[e as usize].last_ns)
                            });
                        }
                    }
                    let order = &*order;
                    let shared = SharedMut::new(envs);
                    pool.run(n, 1, |r| {
                        for &e in &order[r] {
                            let e = e as usize;
                            let start = std::time::Instant::now();
                            // SAFETY: the gang hands out each index once and `order` is a
                            // permutation, so environment e is claimed once.
                            let env = &mut unsafe { shared.range(e..e + 1) }[0];
                            work(e, env);
                            env.last_ns = start.elapsed().as_nanos() as u64;
                        }
                    });
                } else if parallel && scheduler == Scheduler::LongestFirst {
                    // Longest last step first; environments not run in this call (the async
                    // pool's) sort last and keep their time.
                    order.sort_unstable_by_key(|&e| {
                        let env = &envs[e as usize];
                        std::cmp::Reverse(if selected[e as usize] { env.last_ns } else { 0 })
                    });
                    let order = &*order;
                    let shared = SharedMut::new(envs);
                    let next = AtomicUsize::new(0);
                    pool.pool().broadcast(|_| loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&e) = order.get(k) else { break };
                        let e = e as usize;
                        if !selected[e] {
                            continue;
                        }
                        let start = std::time::Instant::now();
                        // SAFETY: each position of the cursor is taken once and `order` is a
                        // permutation, so environment e is claimed once.
                        let env = &mut unsafe { shared.range(e..e + 1) }[0];
                        work(e, env);
                        env.last_ns = start.elapsed().as_nanos() as u64;
                    });
                } else if parallel {
                    pool.pool().install(|| {
                        envs.par_iter_mut()
                            .enumerate()
                            .with_min_len(1)
                            .for_each(|(i, env)| work(i, env))
                    });
                } else {
                    envs.iter_mut()
                        .enumerate()
                        .for_each(|(i, env)| work(i, env));
                }
            }))
        });
        if result.is_err() {
            return Err(PyRuntimeError::new_err(
                "emurust internal error while stepping RedV2Batch; please report it",
            ));
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

    fn env_index(&self, i: i64) -> PyResult<usize> {
        if i < 0 || i as usize >= self.envs.len() {
            return Err(PyIndexError::new_err(format!(
                "environment {i} out of range (0-{})",
                self.envs.len() - 1
            )));
        }
        Ok(i as usize)
    }
}

fn ro(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("output arrays must be writeable and distinct: {e}"))
}

#[pymethods]
impl RedV2Batch {
    /// `map_offsets`: (map id, x, y) from map_data.json; `level_table`: (1531 * 8,) float64.
    #[new]
    #[pyo3(signature = (rom, num_envs, init_state, map_offsets, level_table, *, action_freq=24,
        max_steps=2048 * 80, reward_scale=1.0, explore_weight=1.0, num_threads=None,
        scheduler=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        rom: &Bound<'_, PyAny>,
        num_envs: i64,
        init_state: &Bound<'_, PyAny>,
        map_offsets: Vec<(i64, i64, i64)>,
        level_table: PyReadonlyArray1<'_, f64>,
        action_freq: i64,
        max_steps: i64,
        reward_scale: f64,
        explore_weight: f64,
        num_threads: Option<i64>,
        scheduler: Option<&str>,
    ) -> PyResult<Self> {
        // Longest first by default: on the device, 64 envs 11,823 steps/s against Rayon's
        // 10,908 (16 envs +3%, 256 equal; docs/scheduling.md).
        let scheduler = Scheduler::from_py(
            scheduler,
            Scheduler::LongestFirst,
            &[Scheduler::Gang, Scheduler::Rayon, Scheduler::LongestFirst],
        )?;
        if !(1..=65536).contains(&num_envs) {
            return Err(PyValueError::new_err(format!(
                "num_envs must be between 1 and 65536, got {num_envs}"
            )));
        }
        if !(PRESS_FRAMES as i64 + 1..=100_000).contains(&action_freq) {
            return Err(PyValueError::new_err(format!(
                "action_freq must be between 9 and 100000 (v2 holds the button 8 frames and draws the last), got {action_freq}"
            )));
        }
        let mut offsets = [None; 256];
        for (id, x, y) in map_offsets {
            if !(-1..=255).contains(&id) || x.abs() > 100_000 || y.abs() > 100_000 {
                return Err(PyValueError::new_err(format!(
                    "map_offsets: bad entry (id {id}, x {x}, y {y}); ids are -1..255"
                )));
            }
            if id >= 0 {
                offsets[id as usize] = Some((x as i32, y as i32));
            }
        }
        let table = level_table.as_slice()?.to_vec();
        if table.len() != LEVEL_SUMS * ENC_FREQS {
            return Err(PyValueError::new_err(format!(
                "level_table must hold {} values, got {}",
                LEVEL_SUMS * ENC_FREQS,
                table.len()
            )));
        }
        let cfg = Config {
            action_freq: action_freq as u32,
            max_steps,
            reward_scale,
            explore_weight,
            map_offsets: offsets,
            level_table: table,
        };
        let options: Options = options_from_py(None, true, None)?;
        let rom: Arc<[u8]> = load_bytes(rom, "ROM")?.into();
        let raw = load_bytes(init_state, "init_state")?;
        // Checked once here (a bad state raises before anything runs).
        own_start_state(&rom, options, raw.clone())?;
        let start = Arc::new(if raw.starts_with(b"EMURUST") {
            StartState::Emurust(raw.into())
        } else {
            StartState::PyBoy {
                raw: raw.into(),
                rom: rom.clone(),
                options,
            }
        });
        let (pool, threads) = pool_for(num_threads)?;
        let mut envs = Vec::with_capacity(num_envs as usize);
        for _ in 0..num_envs {
            let gb = Box::new(GameBoy::with_options(rom.clone(), None, options).map_err(to_py)?);
            envs.push(Env {
                gb,
                fresh: true,
                ep: Episode::new(),
                error: None,
                last_ns: 0,
            });
        }
        let n = envs.len();
        Ok(RedV2Batch {
            envs,
            cfg: Arc::new(cfg),
            start,
            pool,
            threads,
            scheduler,
            actions: vec![0; n],
            selected: vec![true; n],
            order: (0..n as u32).collect(),
            slow_first: std::env::var("EMURUST_SLOW_FIRST").map_or(true, |v| v.trim() != "0"),
        })
    }

    #[getter]
    fn num_envs(&self) -> usize {
        self.envs.len()
    }

    #[getter]
    fn num_threads(&self) -> usize {
        self.threads
    }

    /// How steps are spread over the threads: "gang" or "rayon" (the `scheduler` argument).
    #[getter]
    fn scheduler(&self) -> &'static str {
        self.scheduler.name()
    }

    /// Reset the environments where `mask` is true (all when None) into the output rows.
    #[pyo3(signature = (out, mask=None))]
    fn reset(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        out: OutArgs<'_>,
        mask: Option<Vec<bool>>,
    ) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("RedV2Batch"))?;
        let n = this.envs.len();
        match mask {
            Some(m) if m.len() != n => {
                return Err(PyValueError::new_err(format!("mask must have {n} entries")));
            }
            Some(m) => this.selected.copy_from_slice(&m),
            None => this.selected.fill(true),
        }
        let start = this.start.clone();
        let cfg = this.cfg.clone();
        this.run(py, &out, |_, env, row| env.reset(&cfg, &start, row))
    }

    /// Step every environment with `actions` (uint8 array of shape (N,), values 0-6).
    fn step(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        actions: PyReadonlyArray1<'_, u8>,
        out: OutArgs<'_>,
    ) -> PyResult<()> {
        let mut this = slf.try_borrow_mut().map_err(|_| busy("RedV2Batch"))?;
        let n = this.envs.len();
        let acts = actions.as_slice()?;
        if acts.len() != n {
            return Err(PyValueError::new_err(format!(
                "actions must have shape ({n},), got {:?}",
                actions.shape()
            )));
        }
        if let Some((i, a)) = acts
            .iter()
            .enumerate()
            .find(|(_, &a)| a as usize >= ACTIONS.len())
        {
            return Err(PyValueError::new_err(format!(
                "action {a} of environment {i} is out of range: v2 has 7 actions (0-6)"
            )));
        }
        this.selected.fill(true);
        // Taken out for the call (no allocation) so that the workers read it while `run`
        // holds the batch.
        let mut own = std::mem::take(&mut this.actions);
        own.copy_from_slice(acts);
        let cfg = this.cfg.clone();
        let r = this.run(py, &out, |i, env, row| env.step(&cfg, own[i], row));
        this.actions = own;
        r
    }

    /// Read `length` bytes of environment `env`'s memory.
    #[pyo3(signature = (env, addr, length=1))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        env: i64,
        addr: i64,
        length: i64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let i = self.env_index(env)?;
        if !(0..=0xFFFF).contains(&addr) || length < 0 || length > 0x10000 - addr {
            return Err(PyValueError::new_err(
                "range leaves the 64 KiB address space",
            ));
        }
        let gb = &self.envs[i].gb;
        let v: Vec<u8> = (addr..addr + length)
            .map(|a| gb.bus.peek(a as u16))
            .collect();
        Ok(PyBytes::new(py, &v))
    }

    /// Environment `env`'s whole exploration map, (484 * 476,) bytes.
    fn explore_map<'py>(&self, py: Python<'py>, env: i64) -> PyResult<Bound<'py, PyBytes>> {
        let i = self.env_index(env)?;
        Ok(PyBytes::new(py, &self.envs[i].ep.explore_map))
    }

    /// Environment `env`'s event bytes seen at every 100th step (v2's current_event_flags_set).
    fn flags_logged<'py>(&self, py: Python<'py>, env: i64) -> PyResult<Bound<'py, PyBytes>> {
        let i = self.env_index(env)?;
        Ok(PyBytes::new(py, &self.envs[i].ep.flags_logged))
    }

    /// Environment `env`'s bookkeeping: a dict of v2's attribute names.
    fn episode_info<'py>(
        &self,
        py: Python<'py>,
        env: i64,
    ) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let i = self.env_index(env)?;
        let ep = &self.envs[i].ep;
        let d = pyo3::types::PyDict::new(py);
        d.set_item("step_count", ep.step_count)?;
        d.set_item("seen_coords_len", ep.seen.len())?;
        d.set_item("max_event_rew", ep.max_event_rew)?;
        d.set_item("total_healing_rew", ep.total_healing_rew)?;
        d.set_item("died_count", ep.died_count)?;
        d.set_item("party_size", ep.party_size)?;
        d.set_item("last_health", ep.last_health)?;
        d.set_item("total_reward", ep.total_reward)?;
        d.set_item("base_event_flags", ep.base_event_flags)?;
        d.set_item("max_map_progress", ep.max_map_progress)?;
        d.set_item("event_reward", ep.event_reward)?;
        let s = ep.stats;
        d.set_item("stats_max_map_progress", s.max_map_progress)?;
        d.set_item("stats_coord_count", s.coord_count)?;
        d.set_item("stats_deaths", s.deaths)?;
        d.set_item("stats_event", s.event)?;
        d.set_item("stats_healr", s.healr)?;
        d.set_item("stats_last_action", s.last_action)?;
        Ok(d)
    }

    /// Environment `env`'s seen_coords as {(x, y, map): count}.
    fn seen_coords<'py>(
        &self,
        py: Python<'py>,
        env: i64,
    ) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        let i = self.env_index(env)?;
        let d = pyo3::types::PyDict::new(py);
        for (&k, &v) in &self.envs[i].ep.seen {
            d.set_item((k & 0xFF, (k >> 8) & 0xFF, k >> 16), v)?;
        }
        Ok(d)
    }

    /// Bytes the environments take (emulators and bookkeeping; the shared ROM and start state
    /// once).
    fn memory_bytes(&self) -> usize {
        let per: usize = self
            .envs
            .iter()
            .map(|e| {
                std::mem::size_of::<GameBoy>()
                    + e.ep.explore_map.capacity()
                    + e.ep.screens.capacity()
                    + e.ep.seen.capacity() * (std::mem::size_of::<(u32, u32)>() + 1)
                    + std::mem::size_of::<Env>()
            })
            .sum();
        per + match &*self.start {
            StartState::Emurust(s) => s.len(),
            StartState::PyBoy { raw, .. } => raw.len(),
        }
    }

    /// Save environment `env`'s emulator (an emurust state).
    fn save_state<'py>(&self, py: Python<'py>, env: i64) -> PyResult<Bound<'py, PyBytes>> {
        let i = self.env_index(env)?;
        Ok(PyBytes::new(py, &self.envs[i].gb.save_state()))
    }
}

/// One environment's own copy of its last results (the async pool copies them out in `recv`).
struct OwnedOut {
    screens: Vec<u8>,
    health: [f64; 1],
    level: [f64; ENC_FREQS],
    badges: [i8; 8],
    events: Vec<i8>,
    map: Vec<u8>,
    recent_actions: [u8; STACK],
    reward: f64,
    truncated: bool,
}

impl OwnedOut {
    fn new() -> OwnedOut {
        OwnedOut {
            screens: vec![0; SCREENS_LEN],
            health: [0.0],
            level: [0.0; ENC_FREQS],
            badges: [0; 8],
            events: vec![0; EVENT_BYTES * 8],
            map: vec![0; WINDOW * WINDOW],
            recent_actions: [0; STACK],
            reward: 0.0,
            truncated: false,
        }
    }

    fn row(&mut self) -> Row<'_> {
        Row {
            screens: &mut self.screens,
            health: &mut self.health,
            level: &mut self.level,
            badges: &mut self.badges,
            events: &mut self.events,
            map: &mut self.map,
            recent_actions: &mut self.recent_actions,
            reward: &mut self.reward,
            truncated: &mut self.truncated,
        }
    }

    fn copy_to(&self, to: &mut Row<'_>) {
        to.screens.copy_from_slice(&self.screens);
        to.health.copy_from_slice(&self.health);
        to.level.copy_from_slice(&self.level);
        to.badges.copy_from_slice(&self.badges);
        to.events.copy_from_slice(&self.events);
        to.map.copy_from_slice(&self.map);
        to.recent_actions.copy_from_slice(&self.recent_actions);
        *to.reward = self.reward;
        *to.truncated = self.truncated;
    }
}

struct Slot {
    env: Env,
    out: OwnedOut,
    /// The last step truncated: the next `send` resets instead (EnvPool's auto-reset).
    ended: bool,
    /// Never reset yet: the first `send` resets.
    started: bool,
}

struct Shared {
    slots: Vec<Mutex<Slot>>,
    done: Mutex<VecDeque<usize>>,
    ready: Condvar,
    cfg: Arc<Config>,
    start: Arc<StartState>,
    /// An environment panicked or could not load its state: (env, message).
    failure: Mutex<Option<(usize, String)>>,
}

/// EnvPool-style asynchronous pool: `send` starts environments (each a task on the thread
/// pool, returning at once), `recv` waits for the first `batch_size` to finish. The step
/// then lasts as long as the fastest environments, not the slowest (no join).
#[pyclass(module = "emurust._core", name = "RedV2AsyncPool")]
pub struct RedV2AsyncPool {
    shared: Arc<Shared>,
    pool: Arc<Gang>,
    threads: usize,
    in_flight: Vec<bool>,
}

#[pymethods]
impl RedV2AsyncPool {
    /// Arguments as `RedV2Batch`'s, but `num_threads` defaults to one fewer than the CPUs
    /// (`threads_beside_a_busy_caller`) unless the user set a thread count.
    #[new]
    #[pyo3(signature = (rom, num_envs, init_state, map_offsets, level_table, *, action_freq=24,
        max_steps=2048 * 80, reward_scale=1.0, explore_weight=1.0, num_threads=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        rom: &Bound<'_, PyAny>,
        num_envs: i64,
        init_state: &Bound<'_, PyAny>,
        map_offsets: Vec<(i64, i64, i64)>,
        level_table: PyReadonlyArray1<'_, f64>,
        action_freq: i64,
        max_steps: i64,
        reward_scale: f64,
        explore_weight: f64,
        num_threads: Option<i64>,
    ) -> PyResult<Self> {
        let num_threads = num_threads.or_else(super::threads_beside_a_busy_caller);
        let b = RedV2Batch::new(
            rom,
            num_envs,
            init_state,
            map_offsets,
            level_table,
            action_freq,
            max_steps,
            reward_scale,
            explore_weight,
            num_threads,
            None,
        )?;
        let n = b.envs.len();
        let slots = b
            .envs
            .into_iter()
            .map(|env| {
                Mutex::new(Slot {
                    env,
                    out: OwnedOut::new(),
                    ended: false,
                    started: false,
                })
            })
            .collect();
        Ok(RedV2AsyncPool {
            shared: Arc::new(Shared {
                slots,
                done: Mutex::new(VecDeque::with_capacity(n)),
                ready: Condvar::new(),
                cfg: b.cfg,
                start: b.start,
                failure: Mutex::new(None),
            }),
            pool: b.pool,
            threads: b.threads,
            in_flight: vec![false; n],
        })
    }

    #[getter]
    fn num_envs(&self) -> usize {
        self.in_flight.len()
    }

    #[getter]
    fn num_threads(&self) -> usize {
        self.threads
    }

    /// Start a step of each environment in `env_ids` with its action in `actions` (uint8, same
    /// length). An environment that was never reset, or whose last step truncated, resets
    /// instead (its result: the reset observation, reward 0). Returns at once.
    fn send(&mut self, env_ids: Vec<i64>, actions: PyReadonlyArray1<'_, u8>) -> PyResult<()> {
        let acts = actions.as_slice()?;
        if acts.len() != env_ids.len() {
            return Err(PyValueError::new_err(format!(
                "send: {} environments but {} actions",
                env_ids.len(),
                acts.len()
            )));
        }
        let n = self.in_flight.len();
        for (&i, &a) in env_ids.iter().zip(acts) {
            if i < 0 || i as usize >= n {
                return Err(PyIndexError::new_err(format!(
                    "environment {i} out of range (0-{})",
                    n - 1
                )));
            }
            if a as usize >= ACTIONS.len() {
                return Err(PyValueError::new_err(format!(
                    "action {a} of environment {i} is out of range: v2 has 7 actions (0-6)"
                )));
            }
            if self.in_flight[i as usize] {
                return Err(PyRuntimeError::new_err(format!(
                    "environment {i} is still running: recv its result before sending it again"
                )));
            }
        }
        for (&i, &a) in env_ids.iter().zip(acts) {
            let i = i as usize;
            self.in_flight[i] = true;
            let shared = self.shared.clone();
            self.pool.pool().spawn(move || {
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let mut guard = shared.slots[i].lock().unwrap_or_else(|e| e.into_inner());
                    let slot = &mut *guard;
                    if !slot.started || slot.ended {
                        slot.env
                            .reset(&shared.cfg, &shared.start, &mut slot.out.row());
                        slot.started = true;
                        slot.ended = false;
                    } else {
                        slot.env.step(&shared.cfg, a, &mut slot.out.row());
                        slot.ended = slot.out.truncated;
                    }
                    slot.env.error.take().map(|e| e.to_string())
                }));
                let failed = match r {
                    Ok(None) => None,
                    Ok(Some(e)) => Some(format!("could not load its start state: {e}")),
                    Err(_) => Some("emurust internal error (panic)".to_string()),
                };
                if let Some(msg) = failed {
                    let mut f = shared.failure.lock().unwrap_or_else(|e| e.into_inner());
                    f.get_or_insert((i, msg));
                }
                shared
                    .done
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push_back(i);
                shared.ready.notify_all();
            });
        }
        Ok(())
    }

    /// Wait (GIL released) until `batch_size` sent environments have finished; write the
    /// first `batch_size` to finish into the rows of `out` (arrays of `batch_size` rows) in the
    /// order they finished, and return their ids.
    fn recv(
        &mut self,
        py: Python<'_>,
        batch_size: usize,
        out: OutArgs<'_>,
    ) -> PyResult<Vec<usize>> {
        let sent = self.in_flight.iter().filter(|&&f| f).count();
        if batch_size == 0 || batch_size > sent {
            return Err(PyValueError::new_err(format!(
                "recv: batch_size must be 1..={sent} (the environments sent and not received), got {batch_size}"
            )));
        }
        let ids: Vec<usize> = loop {
            let shared = self.shared.clone();
            let got = py.allow_threads(move || {
                let q = shared.done.lock().unwrap_or_else(|e| e.into_inner());
                let (mut q, _) = shared
                    .ready
                    .wait_timeout_while(q, crate::SIGNAL_SLICE, |q| q.len() < batch_size)
                    .unwrap_or_else(|e| e.into_inner());
                if q.len() >= batch_size {
                    Some(q.drain(..batch_size).collect::<Vec<_>>())
                } else {
                    None
                }
            });
            if let Some(ids) = got {
                break ids;
            }
            py.check_signals()?;
        };
        for &i in &ids {
            self.in_flight[i] = false;
        }
        if let Some((i, msg)) = self
            .shared
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            return Err(StateError::new_err(format!("environment {i} {msg}")));
        }
        let (mut s, mut h, mut l, mut b, mut e, mut m, mut ra, mut rw, mut tr) = (
            out.0.try_readwrite().map_err(ro)?,
            out.1.try_readwrite().map_err(ro)?,
            out.2.try_readwrite().map_err(ro)?,
            out.3.try_readwrite().map_err(ro)?,
            out.4.try_readwrite().map_err(ro)?,
            out.5.try_readwrite().map_err(ro)?,
            out.6.try_readwrite().map_err(ro)?,
            out.7.try_readwrite().map_err(ro)?,
            out.8.try_readwrite().map_err(ro)?,
        );
        let k = batch_size;
        let mut it_s = rows_of(&mut s, k, SCREENS_LEN, "screens")?;
        let mut it_h = rows_of(&mut h, k, 1, "health")?;
        let mut it_l = rows_of(&mut l, k, ENC_FREQS, "level")?;
        let mut it_b = rows_of(&mut b, k, 8, "badges")?;
        let mut it_e = rows_of(&mut e, k, EVENT_BYTES * 8, "events")?;
        let mut it_m = rows_of(&mut m, k, WINDOW * WINDOW, "map")?;
        let mut it_ra = rows_of(&mut ra, k, STACK, "recent_actions")?;
        let mut it_rw = rows_of(&mut rw, k, 1, "rewards")?;
        let mut it_tr = rows_of(&mut tr, k, 1, "truncated")?;
        for &i in &ids {
            let mut row = Row {
                screens: it_s.next().unwrap(),
                health: it_h.next().unwrap(),
                level: it_l.next().unwrap(),
                badges: it_b.next().unwrap(),
                events: it_e.next().unwrap(),
                map: it_m.next().unwrap(),
                recent_actions: it_ra.next().unwrap(),
                reward: &mut it_rw.next().unwrap()[0],
                truncated: &mut it_tr.next().unwrap()[0],
            };
            let slot = self.shared.slots[i]
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            slot.out.copy_to(&mut row);
        }
        Ok(ids)
    }

    /// Environment `env`'s bookkeeping (as `RedV2Batch.episode_info`); it must not be running.
    fn episode_info<'py>(
        &self,
        py: Python<'py>,
        env: usize,
    ) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        if env >= self.in_flight.len() || self.in_flight[env] {
            return Err(PyValueError::new_err(format!(
                "environment {env} is out of range or running"
            )));
        }
        let slot = self.shared.slots[env]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let d = pyo3::types::PyDict::new(py);
        d.set_item("step_count", slot.env.ep.step_count)?;
        d.set_item("total_reward", slot.env.ep.total_reward)?;
        d.set_item("seen_coords_len", slot.env.ep.seen.len())?;
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Mem(Vec<u8>);
    impl Ram for Mem {
        fn m(&self, addr: u16) -> u8 {
            self.0[addr as usize]
        }
    }

    /// The randomised tests' bytes: xorshift64 from `seed` (the core's `test_rng`, which other
    /// crates cannot reach), its low byte.
    fn random_bytes(mut seed: u64) -> impl FnMut() -> u8 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        }
    }

    fn cfg() -> Config {
        let mut offsets = [None; 256];
        offsets[0] = Some((64, 318));
        Config {
            action_freq: 24,
            max_steps: 5,
            reward_scale: 0.5,
            explore_weight: 0.25,
            map_offsets: offsets,
            level_table: vec![0.0; LEVEL_SUMS * ENC_FREQS],
        }
    }

    #[test]
    fn hp_fraction_sums_big_endian_words() {
        let mut m = Mem(vec![0; 0x10000]);
        assert_eq!(hp_fraction(&m), 0.0);
        m.0[0xD16C] = 1; // 256 hp
        m.0[0xD16D] = 2;
        m.0[0xD18D] = 2; // 512 max
        m.0[0xD18E] = 4;
        assert_eq!(hp_fraction(&m), 258.0 / 516.0);
    }

    #[test]
    fn global_coords_offset_pad_and_centre() {
        let c = cfg();
        assert_eq!(global_coords(&c, 3, 5, 0), (5 + 318 + 20, 3 + 64 + 20));
        assert_eq!(global_coords(&c, 3, 5, 7), (MAP_H / 2, MAP_W / 2));
        assert_eq!(global_coords(&c, 255, 255, 0), (MAP_H / 2, MAP_W / 2));
    }

    #[test]
    fn rewards_follow_v2s_terms() {
        let c = cfg();
        let mut m = Mem(vec![0; 0x10000]);
        m.0[0xD747] = 0b1000_0001; // 2 event flags at reset
        m.0[BADGES as usize] = 0b11;
        let mut ep = Episode::new();
        ep.reset(&c, &m);
        assert_eq!(ep.base_event_flags, 2);
        assert_eq!(ep.total_reward, 0.0 + 0.5 * 2.0 * 10.0);
        // The museum ticket (not counted), a new tile outside battle.
        m.0[MUSEUM_TICKET as usize] = 1;
        let (r, t) = ep.after_action(&c, &m, 2);
        assert!(!t);
        let explore = 0.5 * 0.25 * 1.0 * 0.1;
        assert_eq!(r, (0.0 + 0.0 + 0.0 + 10.0 + explore) - 10.0);
        m.0[0xD748] = 1;
        let (r, _) = ep.after_action(&c, &m, 2);
        assert_eq!(
            r,
            (0.0 + 0.5 * 1.0 * 4.0 + 0.0 + 10.0 + explore) - (10.0 + explore)
        );
        assert_eq!(ep.recent_actions, [2, 2, 0]);
        assert_eq!(ep.seen.values().copied().collect::<Vec<_>>(), vec![2]);
        // max_steps 5: the step with count 4 (the 5th) truncates.
        ep.after_action(&c, &m, 0);
        let (_, t) = ep.after_action(&c, &m, 0);
        assert!(!t);
        let (_, t) = ep.after_action(&c, &m, 0);
        assert!(t);
    }

    #[test]
    fn healing_and_death_count() {
        let c = cfg();
        let mut m = Mem(vec![0; 0x10000]);
        m.0[PARTY_COUNT as usize] = 1;
        m.0[0xD18E] = 100; // max hp 100
        m.0[0xD16D] = 50;
        let mut ep = Episode::new();
        ep.reset(&c, &m);
        ep.after_action(&c, &m, 0); // party size 0 -> 1: no healing
        assert_eq!(ep.total_healing_rew, 0.0);
        m.0[0xD16D] = 80;
        ep.after_action(&c, &m, 0);
        assert_eq!(ep.total_healing_rew, (0.8 - 0.5) * (0.8 - 0.5));
        m.0[0xD16D] = 0;
        ep.after_action(&c, &m, 0);
        m.0[0xD16D] = 100;
        ep.after_action(&c, &m, 0);
        assert_eq!(ep.died_count, 1);
    }

    #[test]
    fn observation_encoders_on_hand_built_ram() {
        let mut c = cfg();
        for k in 0..LEVEL_SUMS {
            for f in 0..ENC_FREQS {
                c.level_table[k * ENC_FREQS + f] = (k * 10 + f) as f64;
            }
        }
        let mut m = Mem(vec![0; 0x10000]);
        m.0[BADGES as usize] = 0b1000_0010;
        m.0[EVENT_START as usize] = 0b0100_0001;
        m.0[EVENT_END as usize - 1] = 0x80;
        m.0[LEVEL_ADDRS[0] as usize] = 5;
        m.0[LEVEL_ADDRS[5] as usize] = 7;
        m.0[X_POS as usize] = 3;
        m.0[Y_POS as usize] = 4;
        let mut ep = Episode::new();
        ep.reset(&c, &m);
        ep.after_action(&c, &m, 6);
        // A visited cell up-left of the player: 2 rows and 3 columns away.
        let (gy, gx) = global_coords(&c, 3, 4, 0);
        ep.explore_map[(gy - 2) * MAP_W + gx - 3] = 255;
        let (mut screens, mut health, mut level) = (vec![0; SCREENS_LEN], [0.0], [0.0; ENC_FREQS]);
        let (mut badges, mut events, mut map) = (
            [0i8; 8],
            vec![0i8; EVENT_BYTES * 8],
            vec![0; WINDOW * WINDOW],
        );
        let (mut recent, mut reward, mut truncated) = ([0u8; STACK], 0.0, false);
        let mut row = Row {
            screens: &mut screens,
            health: &mut health,
            level: &mut level,
            badges: &mut badges,
            events: &mut events,
            map: &mut map,
            recent_actions: &mut recent,
            reward: &mut reward,
            truncated: &mut truncated,
        };
        ep.write_obs(&c, &m, &mut row);
        assert_eq!(badges, [1, 0, 0, 0, 0, 0, 1, 0]); // most significant bit first
        assert_eq!(events[..8], [0, 1, 0, 0, 0, 0, 0, 1]);
        assert_eq!(events[EVENT_BYTES * 8 - 8], 1);
        assert_eq!(events.iter().filter(|&&e| e == 1).count(), 3);
        assert_eq!(level, std::array::from_fn(|f| (12 * 10 + f) as f64)); // level sum 5 + 7
        assert_eq!(recent, [6, 0, 0]);
        // The player's cell is at window cell (12, 12), doubled to rows/cols 24-25.
        let at = |r: usize, col: usize| map[r * WINDOW + col];
        assert_eq!((at(24, 24), at(25, 25), at(23, 24)), (255, 255, 0));
        assert_eq!((at(20, 18), at(21, 19), at(20, 20)), (255, 255, 0));
        assert_eq!(map.iter().filter(|&&v| v == 255).count(), 8);
    }

    /// The map window, made a row slice at a time, against its definition cell by cell, at
    /// every offset from the map's edges that clips it and well inside.
    #[test]
    fn map_window_is_the_doubled_cells_around_the_coordinates() {
        let mut ep = Episode::new();
        ep.explore_map
            .fill_with(random_bytes(0x2545_f491_4f6c_dd1d));
        let half = COORDS_PAD as usize;
        let reference = |gy: usize, gx: usize| -> Vec<u8> {
            let mut map = vec![0; WINDOW * WINDOW];
            for r in 0..WINDOW {
                let my = gy + r / 2;
                for c in 0..WINDOW {
                    let mx = gx + c / 2;
                    if my >= half && my - half < MAP_H && mx >= half && mx - half < MAP_W {
                        map[r * WINDOW + c] = ep.explore_map[(my - half) * MAP_W + mx - half];
                    }
                }
            }
            map
        };
        let edges = |len: usize| {
            let mut at: Vec<usize> = (0..40).collect();
            at.extend(len - 10..len + 40);
            at.extend([len / 2, len + 1000, usize::MAX / 4]);
            at
        };
        let mut map = vec![7; WINDOW * WINDOW];
        for gy in edges(MAP_H) {
            for gx in edges(MAP_W) {
                ep.map_window(gy, gx, &mut map);
                assert!(map == reference(gy, gx), "at ({gy}, {gx})");
            }
        }
    }

    /// The red sums of 8 pixels of two lines, with SSE2 and without, on random bytes.
    #[test]
    fn red_column_sums_agree() {
        let mut byte = random_bytes(0x1234_5678_9abc_def1);
        for _ in 0..1000 {
            let top: [u8; 32] = std::array::from_fn(|_| byte());
            let bottom: [u8; 32] = std::array::from_fn(|_| byte());
            let want = super::red_column_sums8_portable(&top, &bottom);
            assert_eq!(super::red_column_sums8(&top, &bottom), want);
            assert_eq!(want[1], top[4] as u16 + bottom[4] as u16);
        }
    }

    /// The screen stack, pushed from random screens four times, against its definition pixel by
    /// pixel (the mean of each 2x2 block's red bytes, truncated; channel 0 newest).
    #[test]
    fn screen_stack_is_the_rolled_block_means() {
        let mut ep = Episode::new();
        let mut want = vec![0u8; SCREENS_LEN];
        let mut byte = random_bytes(0x9e37_79b9_7f4a_7c15);
        for _ in 0..4 {
            let rgba: Vec<u8> = (0..144 * 160 * 4).map(|_| byte()).collect();
            let red = |y: usize, x: usize| rgba[(y * 160 + x) * 4] as u32;
            for y in 0..SCREEN_H {
                for x in 0..SCREEN_W {
                    let sum = red(2 * y, 2 * x)
                        + red(2 * y, 2 * x + 1)
                        + red(2 * y + 1, 2 * x)
                        + red(2 * y + 1, 2 * x + 1);
                    let px = &mut want[(y * SCREEN_W + x) * STACK..][..STACK];
                    px.rotate_right(1);
                    px[0] = (sum / 4) as u8;
                }
            }
            ep.push_screen(&rgba);
            assert!(ep.screens == want);
        }
    }

    #[test]
    fn screen_stack_truncates_means_and_rolls() {
        let mut ep = Episode::new();
        // RGBA bytes: only the red channel (every 4th byte) counts.
        let mut rgba = vec![99u8; 144 * 160 * 4];
        for (i, px) in rgba.chunks_exact_mut(4).enumerate() {
            px[0] = 0;
            // The last block of the screen: its four pixels 10, 20, 30, 41 (mean 25.25).
            let (y, x) = (i / 160, i % 160);
            if y >= 142 && x >= 158 {
                px[0] = [10, 20, 30, 41][(y - 142) * 2 + x - 158];
            }
        }
        rgba[0] = 255; // (0, 0)
        rgba[4] = 2; // (0, 1)
        rgba[160 * 4 + 4] = 1; // (1, 1): the same block
        rgba[2 * 4] = 200; // (0, 2): the next block
        ep.push_screen(&rgba);
        assert_eq!(ep.screens[0..3], [64, 0, 0]); // (255 + 2 + 1) / 4 = 64.5
        assert_eq!(ep.screens[3..6], [50, 0, 0]);
        let last = (SCREEN_H * SCREEN_W - 1) * STACK;
        assert_eq!(ep.screens[last..last + 3], [25, 0, 0]);
        let sevens: Vec<u8> = (0..144 * 160 * 4)
            .map(|i| if i % 4 == 0 { 7 } else { 0 })
            .collect();
        ep.push_screen(&sevens);
        assert_eq!(ep.screens[0..3], [7, 64, 0]);
        assert_eq!(ep.screens[3..6], [7, 50, 0]);
        assert_eq!(ep.screens[6..9], [7, 0, 0]);
    }
}
