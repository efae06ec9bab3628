//! The sound unit (APU): registers NR10-NR52 (FF10-FF26), FF27-FF2F, wave RAM (FF30-FF3F),
//! its frame sequencer (DIV-APU) and the audio samples, behaving exactly like PyBoy 2.8.1's
//! (DMG) in both of its sound modes (see [`SoundOptions`]): emulated at any sample rate
//! (PyBoy's default: 48000 Hz), or not emulated at all (`PyBoy(sound_emulated=False)`).
//!
//! The APU catches up lazily: `tick(now)` runs it to the absolute T-cycle `now`. It runs in
//! chunks that end at every audio-sample time and every frame-sequencer time (the targets
//! are `f64`s, as in PyBoy, so the rounding of the accumulated sample period is reproduced),
//! whether or not samples are being taken. The chunk boundaries matter to the CPU: on DMG,
//! wave RAM is reachable while CH3 plays only in the cycle right after a sample fetch, and
//! that is decided per chunk.
//!
//! `cycles_to_interrupt()` is PyBoy's scheduling hint: the ceiling of the nearest of the two
//! targets, an ABSOLUTE cycle count (PyBoy's Motherboard nevertheless uses it as the length
//! of the next CPU slice, so it only wins the `min` early on). It is recomputed only at the
//! end of `tick`, never by register writes, exactly as in PyBoy.
//!
//! Who calls what (the system bus, at the moments PyBoy's Motherboard does):
//! - `tick(cpu_cycles)` at the end of every CPU slice;
//! - `read`/`write` for FF10-FF3F: both catch up to `now` themselves first, exactly once, as
//!   PyBoy does before every such access; the bus must NOT call `tick(now)` right before them
//!   as well: an extra (even empty) catch-up closes CH3's wave-RAM access window, so the
//!   number of catch-ups is observable;
//! - `on_div_write` for an FF04 write, after the timer caught up to `now` and before it is
//!   reset (it also catches up itself);
//! - `set_sampling`/`clear_samples` at the start of each frame (PyBoy's `_tick`).
//!
//! Not emulated (PyBoy's `sound_emulated=False`), the unit does nothing but what PyBoy's
//! Motherboard still does around it: reads of FF10-FF3F return 0, writes are ignored, no
//! samples are taken, the scheduling hint stays at PyBoy's `MAX_CYCLES`, and a catch-up only
//! records the time. What PyBoy's Motherboard does for FF04 and FF26 writes outside its
//! sound object (the DIV-write bookkeeping, the frame-sequencer realignment) still happens:
//! it is saved in PyBoy's states. That costs nothing per instruction and one branch per CPU
//! slice.

mod ch1;
mod ch2;
mod ch3;
mod ch4;
mod common;
pub mod pyboy_state;
#[cfg(test)]
mod tests;

use crate::state::{StateReader, StateWriter};
use crate::CoreError;
// The channels, one module each (CH1 square with sweep, CH2 square, CH3 wave, CH4 noise),
// and what they share; re-exported here for the rest of the APU.
use ch1::{check_shadow, Sweep};
use ch2::Pulse;
use ch3::Wave;
use ch4::Noise;
use common::{check_count, Envelope, Length};

/// T-cycles per second.
const CLOCK_HZ: u64 = 4_194_304;
/// PyBoy's default audio sample rate.
pub const DEFAULT_SAMPLE_RATE: u32 = 48_000;
/// The highest sample rate we accept: one sample per T-cycle. (PyBoy accepts any positive
/// rate; above this its buffer drops most samples of every frame.)
pub const MAX_SAMPLE_RATE: u32 = CLOCK_HZ as u32;
/// T-cycles between frame-sequencer events (512 Hz).
const SEQ_PERIOD: u64 = 8192;
const FRAME_CYCLES: u64 = 70_224;
/// PyBoy's `MAX_CYCLES`: the targets and scheduling hint of a sound unit that is not emulated.
pub const MAX_CYCLES: u64 = 1 << 31;

/// PyBoy's two sound settings that change emulation: `PyBoy(sound_emulated=...,
/// sound_sample_rate=...)`.
///
/// The sample rate is not only about the samples: the APU catches up in chunks that end at
/// every sample time, and PyBoy lets those chunk ends decide when CH3's wave RAM is reachable
/// (and its scheduling hint, early after power-on), so programs can observe the rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoundOptions {
    /// Emulate the sound unit (PyBoy's default). Off: FF10-FF3F read 0 and ignore writes.
    pub emulated: bool,
    /// Samples per second, 1 to [`MAX_SAMPLE_RATE`] (PyBoy's default: 48000).
    pub sample_rate: u32,
}

impl Default for SoundOptions {
    fn default() -> Self {
        SoundOptions {
            emulated: true,
            sample_rate: DEFAULT_SAMPLE_RATE,
        }
    }
}

impl SoundOptions {
    pub fn validate(&self) -> Result<(), CoreError> {
        if !(1..=MAX_SAMPLE_RATE).contains(&self.sample_rate) {
            return Err(CoreError::InvalidArgument(format!(
                "sound sample rate must be between 1 and {MAX_SAMPLE_RATE} Hz, got {}",
                self.sample_rate
            )));
        }
        Ok(())
    }

    /// T-cycles between samples, as PyBoy computes it (`float(CLOCK_RATE) / sample_rate`).
    pub fn cycles_per_sample(&self) -> f64 {
        CLOCK_HZ as f64 / self.sample_rate as f64
    }

    /// PyBoy's `samples_per_frame`: samples in a full frame, rounded up.
    pub fn samples_per_frame(&self) -> usize {
        (self.sample_rate as u64 * FRAME_CYCLES).div_ceil(CLOCK_HZ) as usize
    }

    /// Length of PyBoy's stereo sample buffer in bytes (one spare sample pair).
    pub fn sample_buffer_len(&self) -> usize {
        (self.samples_per_frame() + 1) * 2
    }

    /// "sound emulated at 48000 Hz" / "sound not emulated (44100 Hz)".
    pub fn describe(&self) -> String {
        if self.emulated {
            format!("sound emulated at {} Hz", self.sample_rate)
        } else {
            format!("sound not emulated (sample rate {} Hz)", self.sample_rate)
        }
    }
}

/// Round a (non-negative, finite) target time up to a whole cycle: `t.ceil() as u64`
/// (saturating), without the libm call `f64::ceil` is on baseline x86-64. The cast
/// truncates, which for t >= 0 is the floor; add one when that lost a fraction.
///
/// Targets below 2^62 cycles (all a valid state holds, see `GameBoy::load_state`) take
/// signed conversions, single instructions on x86-64 where the unsigned ones are branchy
/// sequences; the results are the same (truncation of a non-negative value, and the same
/// integer converted back to the nearest `f64`).
#[inline(always)]
fn ceil_cycles(t: f64) -> u64 {
    if t >= 0.0 && t < (1u64 << 62) as f64 {
        // SAFETY: `t` is in [0, 2^62) (so not NaN): its truncation fits an i64. (`as` would
        // add the saturating conversion's range and NaN checks, which `t` passed already.)
        let floor = unsafe { t.to_int_unchecked::<i64>() };
        return floor as u64 + ((floor as f64) < t) as u64;
    }
    let floor = t as u64;
    floor.saturating_add(((floor as f64) < t) as u64)
}

/// Add channel `n`'s output `v` to the sides NR51 (`routes`) sends it to (branch-free).
#[inline(always)]
fn mix(left: &mut i64, right: &mut i64, routes: u8, n: u32, v: i64) {
    *left += v & -(((routes >> (4 + n)) & 1) as i64);
    *right += v & -(((routes >> n) & 1) as i64);
}

/// Step PyBoy's sample targets, the running `f64` sum `t`, `t + c`, `(t + c) + c`, ..., past
/// every one at or below `limit`: how many were passed, the last of them (`t` if none) and the
/// first above `limit`. Exactly what adding `c` one target at a time gives, in a few steps: while
/// the sum stays in one binade, [2^e, 2^(e+1)), every addition rounds to the same multiple of
/// that binade's spacing (the sum's exact value moves by `c`, always the same distance from the
/// grid of multiples, and rounding to the nearest multiple commutes with moving by a whole number
/// of them), so `j` additions add `j` times that multiple. Where `c` lies exactly halfway between
/// two multiples the rounding goes to the even one, which depends on the sum: those binades (and
/// sums at or above 2^53, or anything not finite and positive) take one addition at a time, as
/// do short stretches (a few targets: the loop is cheaper than the division).
#[inline(always)]
pub(crate) fn pass_targets(mut t: f64, c: f64, limit: f64) -> (u64, f64, f64) {
    let (mut passed, mut last) = (0u64, t);
    while t <= limit {
        if limit - t >= 32.0 * c {
            let (more, run_last, after) = pass_targets_closed(t, c, limit);
            return (passed + more, run_last, after);
        }
        last = t;
        passed += 1;
        t += c;
    }
    (passed, last, t)
}

/// [`pass_targets`] over a long stretch (at least one target: `t <= limit`).
#[inline(never)]
fn pass_targets_closed(mut t: f64, c: f64, limit: f64) -> (u64, f64, f64) {
    const TWO_53: f64 = (1u64 << 53) as f64;
    let (mut passed, mut last) = (0u64, t);
    while t <= limit {
        let bits = t.to_bits();
        let exponent = ((bits >> 52) & 0x7FF) as i32;
        // The binade's spacing (2^(e - 52)), for normal positive sums below 2^53.
        let spacing = f64::from_bits(((exponent - 52).max(1) as u64) << 52);
        let units = c / spacing;
        // (A step under half the spacing rounds to nothing: the additions would leave the sum
        // where it is, and so do the single ones here.)
        let closed = t > 0.0
            && exponent > 52
            && t < TWO_53
            && (0.5..TWO_53).contains(&units)
            && units.fract() != 0.5;
        if !closed {
            last = t;
            passed += 1;
            t += c;
            continue;
        }
        // In units of the spacing: the sum m (2^52 <= m < 2^53) and the step d (at least 1).
        let d = units.round() as u64;
        let m = (t / spacing) as u64;
        // The last j with m + j d still in the binade and (if `limit` is) at most `limit`.
        let mut j = ((1u64 << 53) - 1 - m) / d;
        let top = f64::from_bits(((exponent + 1) as u64) << 52);
        if limit < top {
            j = j.min(((limit / spacing) as u64 - m) / d);
        }
        last = (m + j * d) as f64 * spacing;
        passed += j + 1;
        t = last + c;
    }
    (passed, last, t)
}

/// PyBoy's sample targets from power-on (`cycles_per_sample` added up in `f64`) once caught
/// up to cycle `now`: the next target, and how many targets fell in (`since`, `now`].
pub(crate) fn sample_targets(cycles_per_sample: f64, since: u64, now: u64) -> (f64, usize) {
    let c = cycles_per_sample;
    // The same running sum, passed up to `since`, then counted up to `now`.
    let (_, _, after_since) = pass_targets(c, c, since.min(now) as f64);
    let (taken, _, next) = pass_targets(after_since, c, now as f64);
    (next, taken as usize)
}

/// Game Boy Color: what the turn-end catch-ups deferred since the last catch-up would have
/// done that the catch-up that makes them up does not do by itself (see
/// [`Apu::defer_turn_end_cgb`]).
#[derive(Clone, Copy, Debug, Default)]
struct Lag {
    /// The APU cycles they would have run (`caught_up_to` is the last one's turn end); 0:
    /// none, and the fields below are stale.
    cycles: u64,
    /// Where the make-up's chunk that holds the last one's end starts (APU time): `clock`, or
    /// the last sample target they passed.
    chunk_start: u64,
    /// The sum of `chunk >> 1` over their chunks since `chunk_start`.
    chunk_halves: u64,
    /// What their chunks add to CH4's alignment beyond what the make-up's chunks up to
    /// `chunk_start` add (mod 4).
    alignment: u64,
    /// The first sample target after the last one's end, stepped as the APU steps them
    /// (`next_sample`), and its ceiling (`u64::MAX` while not sampling: no chunk ends there).
    next_sample: f64,
    sample_at: u64,
    /// The nearer of `sample_at` and the next frame-sequencer event (`seq_at`).
    limit: u64,
}

/// What the next frame-sequencer event does to the step counter, after NR52 powered the APU
/// on while DIV's APU bit was high right after an FF04 write.
const SEQ_NORMAL: u8 = 0;
/// The next event is swallowed (then `SEQ_HOLD`).
const SEQ_SKIP: u8 = 2;
/// The next event does its work without advancing the step (then `SEQ_RESUMED`).
const SEQ_HOLD: u8 = 1;
/// Back to normal, but NR52 power-on writes re-align the sequencer (any non-zero value).
const SEQ_RESUMED: u8 = 3;

#[derive(Clone)]
pub struct Apu {
    options: SoundOptions,
    /// `options.emulated`, kept at hand for the per-slice catch-up.
    emulated: bool,
    /// T-cycles between samples (`options.cycles_per_sample()`).
    cycles_per_sample: f64,
    /// The APU's own time; equal to the CPU's T-cycles once caught up. (Not emulated: it
    /// stays where it was, as PyBoy's `sound.cycles` does.)
    clock: u64,
    /// `now` of the previous catch-up (PyBoy's `last_cycles`).
    caught_up_to: u64,
    /// The last scheduler turn end whose catch-up was skipped ([`Apu::skip_turn_catch_up`];
    /// `u64::MAX`: none since the last make-up). Host state, not saved.
    skipped_turn_end: u64,
    /// Game Boy Color: the turn-end catch-ups deferred since the last catch-up
    /// ([`Apu::defer_turn_end_cgb`]). Host state, not saved: none between frames.
    lag: Lag,
    /// Absolute time of the next audio sample (accumulates `cycles_per_sample` per sample).
    next_sample: f64,
    /// Absolute time of the next frame-sequencer event.
    next_seq: f64,
    /// `ceil(next_sample)` and `ceil(next_seq)`, kept in step with them by
    /// [`Apu::refresh_targets`]: the catch-up loop compares whole cycles, and `f64::ceil` is a
    /// libm call on baseline x86-64. For a whole cycle count `c`, `c as f64 >= t` exactly when
    /// `c >= ceil(t)`, so the integer comparisons decide exactly as the `f64` ones would.
    sample_at: u64,
    seq_at: u64,
    /// Scheduling hint (see module docs).
    hint: u64,
    sampling: bool,

    powered: bool,
    /// Frame-sequencer step counter (only its low three bits select what is clocked).
    seq_step: u64,
    seq_mode: u8,
    /// An FF04 write hit DIV's APU bit while it was set (cleared by NR14 writes and power-on).
    div_edge_written: bool,
    last_div_edge_clock: u64,
    last_power_off_clock: u64,

    nr50: u8,
    nr51: u8,
    /// Game Boy Color hardware (PyBoy's `sound.cgb`).
    pub cgb: bool,
    /// 1 in CGB double speed: the APU sees half the CPU's cycles.
    pub speed_shift: u8,
    ch1: Pulse,
    sweep: Sweep,
    ch2: Pulse,
    ch3: Wave,
    ch4: Noise,

    /// PyBoy's sample buffer (`options.sample_buffer_len()` bytes as signed samples).
    samples: Box<[i8]>,
    samples_len: usize,
    /// Tests: settle the lazy channel timers after every chunk (the reference that the
    /// lazy ones must match).
    #[cfg(test)]
    eager_timers: bool,
}

impl Default for Apu {
    fn default() -> Self {
        Self::new(SoundOptions::default())
    }
}

impl Apu {
    /// The APU at power-on (before the boot ROM runs). `options` must be valid
    /// ([`SoundOptions::validate`]).
    pub fn new(options: SoundOptions) -> Apu {
        let cycles_per_sample = options.cycles_per_sample();
        let (next_sample, next_seq, hint) = if options.emulated {
            let (a, b) = (cycles_per_sample, SEQ_PERIOD as f64);
            (a, b, ceil_cycles(a.min(b)))
        } else {
            (MAX_CYCLES as f64, MAX_CYCLES as f64, MAX_CYCLES)
        };
        Apu {
            options,
            emulated: options.emulated,
            cycles_per_sample,
            clock: 0,
            caught_up_to: 0,
            skipped_turn_end: u64::MAX,
            lag: Lag::default(),
            next_sample,
            next_seq,
            sample_at: ceil_cycles(next_sample),
            seq_at: ceil_cycles(next_seq),
            hint,
            sampling: true,
            powered: false,
            seq_step: 3,
            seq_mode: SEQ_NORMAL,
            div_edge_written: false,
            last_div_edge_clock: 0,
            last_power_off_clock: 0,
            nr50: 0,
            nr51: 0,
            cgb: false,
            speed_shift: 0,
            ch1: Pulse::new(),
            sweep: Sweep::default(),
            ch2: Pulse::new(),
            ch3: Wave::new(),
            ch4: Noise::new(),
            samples: vec![0; options.sample_buffer_len()].into_boxed_slice(),
            samples_len: 0,
            #[cfg(test)]
            eager_timers: false,
        }
    }

    pub fn options(&self) -> SoundOptions {
        self.options
    }

    /// The APU of the post-boot state for `options`, from `self`, the APU of the embedded
    /// post-boot snapshot (sound emulated at the default rate, caught up to the cycle the boot
    /// ROM unmapped itself at). `frame_start` is the cycle at which that frame began (where
    /// PyBoy cleared its sample buffer).
    ///
    /// The sound registers, channels and frame sequencer do not depend on the sample rate;
    /// only the sample targets, the samples and the scheduling hint do. In the boot ROM's last
    /// frame every channel is silent (the snapshot's samples are all zero, checked here), so
    /// at another rate that frame's samples so far are zeros too, one per sample target
    /// passed since `frame_start`. The targets are PyBoy's: the sample period added up from
    /// power-on, in `f64`. Without sound emulation PyBoy's sound unit never left its
    /// power-on state (it only recorded the time of the last catch-up), and the boot ROM
    /// writes neither DIV nor anything else its Motherboard tracks outside the sound unit.
    /// tests/test_gameboy_api.py compares the result with running PyBoy's boot ROM.
    pub(crate) fn for_postboot(&self, options: SoundOptions, frame_start: u64) -> Apu {
        debug_assert_eq!(self.options, SoundOptions::default());
        if options == self.options {
            return self.clone();
        }
        if !options.emulated {
            let mut a = Apu::new(options);
            if self.cgb {
                a.set_cgb();
                a.speed_shift = self.speed_shift;
            }
            a.caught_up_to = self.caught_up_to;
            a.sampling = self.sampling;
            return a;
        }
        assert!(
            self.samples().iter().all(|&v| v == 0),
            "the post-boot snapshot's last frame is not silent"
        );
        let mut a = self.clone();
        a.options = options;
        a.cycles_per_sample = options.cycles_per_sample();
        a.samples = vec![0; options.sample_buffer_len()].into_boxed_slice();
        let (next, taken) = sample_targets(a.cycles_per_sample, frame_start, self.clock);
        a.next_sample = next;
        a.refresh_targets();
        a.hint = a.sample_at.min(a.seq_at);
        a.samples_len = (2 * taken).min(a.samples.len());
        a
    }

    /// PyBoy's `sound._cycles_to_interrupt`: ceil of the nearest sample / frame-sequencer
    /// target as of the last catch-up. An absolute cycle count.
    #[inline]
    pub fn cycles_to_interrupt(&self) -> u64 {
        self.hint
    }

    /// Sampling on/off (PyBoy's `disable_sampling = not on`). Besides filling the buffer,
    /// it changes where catch-up chunks end, which PyBoy lets leak into wave RAM access.
    pub fn set_sampling(&mut self, on: bool) {
        // (Sampling decides where deferred catch-ups stop: none are under way here.)
        debug_assert_eq!(self.lag.cycles, 0);
        self.sampling = on;
    }

    /// The stereo samples taken since the last `clear_samples` (left, right, left, ...),
    /// the bytes of PyBoy's `sound.ndarray` (which PyBoy clears at the start of each frame).
    pub fn samples(&self) -> &[i8] {
        &self.samples[..self.samples_len]
    }

    /// The whole sample buffer (PyBoy's `sound.raw_buffer`): [`Apu::samples`] followed by
    /// whatever earlier frames left behind.
    pub fn sample_buffer(&self) -> &[i8] {
        &self.samples
    }

    pub fn clear_samples(&mut self) {
        self.samples_len = 0;
    }

    /// The cycle of the last catch-up (checked against the machine's clock when a state loads).
    pub(crate) fn caught_up_to(&self) -> u64 {
        self.caught_up_to
    }

    /// The APU's own clock and its targets must lie close together (`max_distance`) and far
    /// from overflowing (`max_count`); a state where they do not is corrupt. (The APU's clock
    /// may lag the machine's: PyBoy's stops while its sound emulation is off.)
    pub(crate) fn check_times(&self, max_count: u64, max_distance: u64) -> Result<(), CoreError> {
        if self.clock > max_count || self.seq_step > max_count {
            return Err(CoreError::State(format!(
                "APU: clock {} or sequencer step {} out of range",
                self.clock, self.seq_step
            )));
        }
        let near = |t: f64| (t - self.clock as f64).abs() <= max_distance as f64;
        // Without sound emulation (PyBoy's `sound_emulated=False`) the clock stays put and the
        // targets stay at MAX_CYCLES (or where an NR52 power-on put the sequencer's).
        // A state saved in that mode may also be loaded with sound emulated (PyBoy allows it):
        // targets ahead of the clock up to MAX_CYCLES are then accepted too.
        let far_ok = |t: f64| t.is_finite() && t >= self.clock as f64 && t <= MAX_CYCLES as f64;
        if !(near(self.next_sample) || far_ok(self.next_sample))
            || !(near(self.next_seq) || far_ok(self.next_seq))
        {
            return Err(CoreError::State(format!(
                "APU: targets {} and {} lie far from its clock {}",
                self.next_sample, self.next_seq, self.clock
            )));
        }
        Ok(())
    }

    /// Whether the scheduler's end-of-turn catch-ups may be skipped (the CPU's accesses to
    /// the APU catch it up anyway) and made up later with the same result. On the DMG a
    /// catch-up's chunks compose: the channels count whole cycles and the frame sequencer and
    /// sample targets split chunks anyway. Only CH3's wave-RAM window depends on the last
    /// chunk, and only on whether CH3 fetched in its last two cycles, which a make-up ending
    /// at the same time sees alike (the scheduler's turns are at least 4 cycles long). On Game
    /// Boy Color hardware two things do not compose (each catch-up drops its odd CPU cycle in
    /// double speed, and CH4's alignment each chunk's odd APU cycle): there the skipped
    /// catch-ups are deferred, keeping what they would have done that does not compose (see
    /// `Apu::defer_turn_end_cgb`). Not while sound is off (a catch-up only records the
    /// time), or while CH1's sweep waits to check or (CGB) to calculate its frequency (both
    /// land at a chunk's end).
    #[inline]
    pub fn catch_up_can_wait(&self) -> bool {
        self.emulated && self.sweep.check_delay | self.sweep.calc_delay == 0
    }

    /// The scheduler's catch-up at a turn's end (`now`) is skipped ([`Apu::catch_up_can_wait`]).
    #[inline]
    pub fn skip_turn_catch_up(&mut self, now: u64) {
        if self.cgb {
            return self.defer_turn_end_cgb(now);
        }
        self.skipped_turn_end = now;
    }

    /// A turn's end at `now` while the scheduler lets the APU lag (`GameBoy::apu_may_lag`):
    /// its catch-up skipped if it can wait, run otherwise.
    #[inline(always)]
    pub fn lagging_turn_end(&mut self, now: u64) {
        if self.catch_up_can_wait() {
            self.skip_turn_catch_up(now);
        } else {
            self.tick(now);
        }
    }

    /// Game Boy Color: the scheduler's catch-up at a turn's end `now`, deferred until the next
    /// catch-up. What such a catch-up does, while it ends before the next frame-sequencer event
    /// (else it runs at once, deferred ones included), is advance the channels by `cycles =
    /// (now - caught_up_to) >> speed_shift` APU cycles (double speed drops the odd CPU cycle),
    /// in chunks that end at the sample targets while sampling (a sample is taken there), and
    /// add `chunk >> 1` to CH4's alignment per chunk. Advancing composes (the pulse timers and
    /// CH4's counter are lazy, CH3's timer counts fetches that add up, the sweep's restart
    /// hold counts down to 0; while the sweep waits to check or calculate nothing is
    /// deferred), so the APU keeps the cycles it owes, and the next catch-up runs them first
    /// ([`Apu::make_up_cgb`]): its chunks end at the same sample targets but not at these turn
    /// ends. So the APU also keeps, in `lag`, what that changes in CH4's alignment, chunk by
    /// chunk of the make-up. As with the DMG's skipped catch-ups, the scheduling hint is not
    /// refreshed meanwhile: that is the caller's business (`GameBoy::turn_budget`).
    #[inline]
    fn defer_turn_end_cgb(&mut self, now: u64) {
        // The eager catch-up would close CH3's wave-RAM window (a DMG matter, but saved).
        self.ch3.fetch_window = false;
        if now <= self.caught_up_to {
            return;
        }
        let cycles = (now - self.caught_up_to) >> self.speed_shift;
        let last = self.clock + self.lag.cycles;
        let end = last + cycles;
        if self.lag.cycles == 0 {
            self.start_lag();
        }
        if end >= self.lag.limit {
            if end >= self.seq_at {
                return self.tick_cgb(now);
            }
            self.lag_past_samples(last, end);
        } else {
            self.lag.chunk_halves += cycles >> 1;
        }
        self.lag.cycles += cycles;
        self.caught_up_to = now;
    }

    /// The first deferred turn end since the last catch-up (see `defer_turn_end_cgb`).
    #[inline(never)]
    fn start_lag(&mut self) {
        let sample_at = if self.sampling {
            self.sample_at
        } else {
            u64::MAX
        };
        self.lag = Lag {
            cycles: 0,
            chunk_start: self.clock,
            chunk_halves: 0,
            alignment: 0,
            next_sample: self.next_sample,
            sample_at,
            limit: sample_at.min(self.seq_at),
        };
    }

    /// A deferred catch-up from APU time `last` to `end` that passes sample targets (and no
    /// frame-sequencer event): the make-up's chunk from `lag.chunk_start` ends at the first,
    /// where this catch-up's first chunk (from `last`) ends too; the chunks between further
    /// targets are the same in both.
    #[inline(never)]
    fn lag_past_samples(&mut self, last: u64, end: u64) {
        let lag = &mut self.lag;
        let at = lag.sample_at;
        let eager = lag.chunk_halves + ((at - last) >> 1);
        let made = (at - lag.chunk_start) >> 1;
        lag.alignment = lag.alignment.wrapping_add(eager).wrapping_sub(made);
        let mut chunk_start = at;
        let mut next_sample = lag.next_sample + self.cycles_per_sample;
        let mut sample_at = ceil_cycles(next_sample);
        while end >= sample_at {
            chunk_start = sample_at;
            next_sample += self.cycles_per_sample;
            sample_at = ceil_cycles(next_sample);
        }
        lag.chunk_start = chunk_start;
        lag.chunk_halves = (end - chunk_start) >> 1;
        lag.next_sample = next_sample;
        lag.sample_at = sample_at;
        lag.limit = sample_at.min(self.seq_at);
    }

    /// The make-up for skipped turn-end catch-ups, at the last turn's end `now` (the frame's
    /// end): catch up if behind (an empty catch-up is not a no-op: see `catch_up`).
    pub fn catch_up_if_behind(&mut self, now: u64) {
        if self.caught_up_to < now || self.lag.cycles != 0 {
            self.catch_up(now);
        }
        self.skipped_turn_end = u64::MAX;
    }

    /// Whether a skipped turn end's record ([`Apu::skip_turn_catch_up`]) can change what a
    /// later catch-up does: sound emulated and the unit powered. The record only closes CH3's
    /// wave-RAM window at a catch-up at that very cycle, and with the unit off CH3 is off, so
    /// every catch-up leaves the window closed anyway.
    #[inline]
    pub fn turn_end_records_matter(&self) -> bool {
        self.emulated && self.powered
    }

    /// An FF04 write hit DIV's APU bit since the last NR14 write: a power-on then reads the
    /// timer's counter as of its last sync (see [`Apu::write`]), which every turn's end moves.
    #[inline]
    pub fn div_edge_written(&self) -> bool {
        self.div_edge_written
    }

    /// Whether the unit is on (NR52 bit 7).
    #[inline]
    pub fn powered(&self) -> bool {
        self.powered
    }

    /// Whether sound is emulated (PyBoy's `sound_emulated`).
    #[inline]
    pub fn emulated(&self) -> bool {
        self.emulated
    }

    /// Catch up to absolute cycle `now`.
    #[inline]
    pub fn tick(&mut self, now: u64) {
        if !self.emulated {
            // PyBoy records the time, even backwards, and does nothing else.
            self.caught_up_to = now;
            return;
        }
        self.catch_up(now);
        if now == self.skipped_turn_end {
            // An access at the very cycle a turn ended: the skipped catch-up would have left
            // nothing to do here but close CH3's wave-RAM window.
            self.ch3.fetch_window = false;
        }
    }

    fn catch_up(&mut self, now: u64) {
        // Every catch-up, even an empty one, closes CH3's wave-RAM window (PyBoy does so).
        self.ch3.fetch_window = false;
        if now <= self.caught_up_to {
            // Nothing to do (and never run backwards), but what deferred turn ends owe.
            if self.lag.cycles != 0 {
                self.make_up_cgb(self.caught_up_to);
            }
            return;
        }
        if self.cgb {
            return self.tick_cgb(now);
        }
        self.run_until::<false>(now, 0);
    }

    /// [`tick`](Self::tick) on Game Boy Color hardware (out of line: the DMG's is unchanged).
    #[inline(never)]
    fn tick_cgb(&mut self, now: u64) {
        if self.lag.cycles != 0 {
            return self.make_up_cgb(now);
        }
        self.run_until::<true>(now, 0);
    }

    /// Game Boy Color: the catch-up to `now` (>= `caught_up_to`) with the deferred turn-end
    /// catch-ups before it ([`Apu::defer_turn_end_cgb`]), as one catch-up. The channels end
    /// as the eager catch-ups would leave them; CH4's alignment (`+= chunk >> 1` per chunk,
    /// while powered) gets what `lag` kept of their chunks up to `lag.chunk_start`, and the
    /// difference over the chunk from there: the eager ones' pieces up to the last turn end
    /// and this one's first chunk after it against this one's chunk (to the next sample
    /// target, frame-sequencer event or its end). The chunks after that are the same.
    #[cold]
    #[inline(never)]
    fn make_up_cgb(&mut self, now: u64) {
        let lag = std::mem::take(&mut self.lag);
        let last = self.clock + lag.cycles;
        let end = last + ((now - self.caught_up_to) >> self.speed_shift);
        let chunk_end = lag.sample_at.min(self.seq_at).min(end);
        let eager = lag.chunk_halves + ((chunk_end - last) >> 1);
        let made = (chunk_end - lag.chunk_start) >> 1;
        self.run_until::<true>(now, lag.cycles);
        if self.powered {
            let a = lag.alignment.wrapping_add(eager).wrapping_sub(made);
            self.ch4.alignment = ((self.ch4.alignment as u64).wrapping_add(a) & 3) as u8;
        }
    }

    /// The catch-up loop; `CGB` selects the Game Boy Color's channel timing and its double
    /// speed (the APU sees `elapsed >> speed_shift` cycles, odd cycles lost as in PyBoy) and
    /// `owed` APU cycles to run first (deferred turn ends, see `make_up_cgb`; 0 on the DMG).
    #[inline(always)]
    fn run_until<const CGB: bool>(&mut self, now: u64, owed: u64) {
        let mut left = now - self.caught_up_to;
        if CGB {
            left = (left >> self.speed_shift) + owed;
        }
        self.caught_up_to = now;
        while left > 0 {
            if self.sampling {
                left -= self.sample_span::<CGB>(left);
                if left == 0 {
                    break;
                }
            }
            let mut chunk = left;
            if self.sampling {
                chunk = chunk.min(self.sample_at.wrapping_sub(self.clock));
            }
            chunk = chunk.min(self.seq_at.wrapping_sub(self.clock));
            if chunk == 0 {
                // A target that is due but not yet handled; handle it, advance nothing.
                // (Unreachable with the targets the APU sets; guarded against a hang.)
                if !self.run_due_events() {
                    break;
                }
                continue;
            }
            if self.powered {
                if CGB {
                    self.advance_cgb(chunk);
                } else {
                    self.ch1.advance(chunk);
                    self.sweep.advance(chunk, &mut self.ch1);
                    self.ch2.advance(chunk);
                    self.ch3.advance(chunk);
                    self.ch4.advance(chunk);
                }
                #[cfg(test)]
                self.settle_if_eager();
            }
            self.clock += chunk;
            left -= chunk;
            // run_due_events, split: the rare sequencer event out of line, the sample
            // targets (passed every ~87 cycles, sampled or not) inline.
            if self.clock >= self.seq_at {
                self.run_seq_events();
            }
            while self.clock >= self.sample_at {
                if !self.sampling && self.clock < 1 << 53 {
                    // Not sampling, chunks do not end at the targets: step past all of them.
                    self.pass_sample_targets();
                    break;
                }
                self.sample_event();
            }
        }
        // ceil is monotonic: ceil(min(a, b)) == min(ceil(a), ceil(b)).
        self.hint = self.sample_at.min(self.seq_at);
        if CGB {
            self.hint <<= self.speed_shift;
        }
    }

    /// The catch-up loop's chunks that end at sample targets before the next frame-sequencer
    /// event, within the next `left` cycles, run in one go (sampling; powered with no sweep
    /// timer running, or powered off: then only time passes, see [`Apu::silent_span`]).
    /// Between sequencer events nothing changes which channels are audible (playing, volume
    /// above 0, routed by NR51), so that is decided once: silent pulse and noise channels'
    /// lazy timers take the whole stretch at the end (it composes), audible ones settle at
    /// each sample, and what depends on where chunks end (CH3's wave-RAM window; on the CGB,
    /// CH3 and CH4's alignment and counter) runs chunk by chunk as before. With nothing
    /// audible and CH3 off, [`Apu::silent_span`] takes the stretch. Returns the cycles run (0:
    /// no such target).
    #[inline(never)]
    fn sample_span<const CGB: bool>(&mut self, left: u64) -> u64 {
        let start = self.clock;
        let end = (start + left).min(self.seq_at.saturating_sub(1));
        if self.sample_at > end || self.sample_at <= start {
            return 0;
        }
        #[cfg(test)]
        let eager = self.eager_timers;
        #[cfg(not(test))]
        let eager = false;
        if !self.powered {
            // Powered off, nothing runs but time, and every sample is silent.
            return if eager {
                0
            } else {
                self.silent_span::<CGB, false>(start, end)
            };
        }
        let sweep = &self.sweep;
        if sweep.check_delay != 0 || (CGB && (sweep.calc_delay != 0 || sweep.restart_hold != 0)) {
            return 0;
        }
        let routes = self.nr51;
        let audible =
            |on: bool, volume: i64, n: u32| on && volume != 0 && routes & (0x11 << n) != 0;
        let pulse1 = audible(self.ch1.on, self.ch1.env.volume, 0);
        let pulse2 = audible(self.ch2.on, self.ch2.env.volume, 1);
        let wave = self.ch3.on && routes & 0x44 != 0;
        let noise = audible(self.ch4.on, self.ch4.env.volume, 3);
        // Silence (no channel audible, CH3 off): no channel runs chunk by chunk on the DMG.
        if !(pulse1 || pulse2 || noise || self.ch3.on || eager) {
            return self.silent_span::<CGB, true>(start, end);
        }
        if pulse1 {
            self.ch1.settle();
        }
        if pulse2 {
            self.ch2.settle();
        }
        let mut clock = start;
        while self.sample_at <= end {
            let dt = self.sample_at - clock;
            clock = self.sample_at;
            let (mut left, mut right) = (0i64, 0i64);
            if pulse1 {
                mix(&mut left, &mut right, routes, 0, self.ch1.run_to_sample(dt));
            }
            if pulse2 {
                mix(&mut left, &mut right, routes, 1, self.ch2.run_to_sample(dt));
            }
            if CGB {
                self.ch3.advance_cgb(dt);
                self.ch4.advance_cgb(dt);
            } else {
                self.ch3.advance(dt);
            }
            if wave {
                mix(&mut left, &mut right, routes, 2, self.ch3.sample());
            }
            if noise {
                if !CGB {
                    self.ch4.advance(dt);
                }
                mix(&mut left, &mut right, routes, 3, self.ch4.sample());
            }
            #[cfg(test)]
            self.settle_if_eager();
            self.push_sample(left, right);
            self.next_sample += self.cycles_per_sample;
            self.sample_at = ceil_cycles(self.next_sample);
        }
        let ran = clock - start;
        // The CGB's pulse timers run only while playing (see `advance_cgb`).
        if !pulse1 && (!CGB || self.ch1.on) {
            self.ch1.advance(ran);
        }
        if !pulse2 && (!CGB || self.ch2.on) {
            self.ch2.advance(ran);
        }
        if !noise && !CGB {
            self.ch4.advance(ran);
        }
        self.clock = clock;
        ran
    }

    /// [`Apu::sample_span`] while no channel is audible and CH3 is off, or (`POWERED` false)
    /// while the sound unit is off: the targets up to `end` (at least one, the first at
    /// `sample_at`) each give a silent sample, and the lazy pulse and noise timers take the
    /// stretch at its end (powered off, nothing runs). Only the targets' times (PyBoy's `f64`
    /// sum) are stepped through, and, powered on the CGB, CH4's alignment, which moves by half
    /// of each chunk (rounded down).
    #[inline(never)]
    fn silent_span<const CGB: bool, const POWERED: bool>(&mut self, start: u64, end: u64) -> u64 {
        let mut samples = 0usize;
        let mut clock = start;
        let mut next = self.next_sample;
        let mut at = self.sample_at;
        if (!CGB || !POWERED) && at <= end && end < 1 << 52 {
            // The first target, then the sum alone: ceil(t) <= end exactly when t <= end, as
            // `end` is an integer that f64 holds exactly.
            clock = at;
            let (passed, last, after) = pass_targets(
                next + self.cycles_per_sample,
                self.cycles_per_sample,
                end as f64,
            );
            samples = 1 + passed as usize;
            if passed > 0 {
                clock = ceil_cycles(last);
            }
            next = after;
            at = ceil_cycles(next);
        }
        while at <= end {
            if CGB && POWERED {
                self.ch4.advance_cgb(at - clock);
            }
            clock = at;
            samples += 1;
            next += self.cycles_per_sample;
            at = ceil_cycles(next);
        }
        self.next_sample = next;
        self.sample_at = at;
        // As `push_sample` each time: what fits (the buffer holds whole pairs), the rest dropped.
        debug_assert!(self.samples.len().is_multiple_of(2));
        let fit = samples.min((self.samples.len() - self.samples_len) / 2);
        self.samples[self.samples_len..self.samples_len + 2 * fit].fill(0);
        self.samples_len += 2 * fit;
        let ran = clock - start;
        // (The CGB's pulse timers run only while playing, see `advance_cgb`.)
        if POWERED && (!CGB || self.ch1.on) {
            self.ch1.advance(ran);
        }
        if POWERED && (!CGB || self.ch2.on) {
            self.ch2.advance(ran);
        }
        if POWERED && !CGB {
            self.ch4.advance(ran);
        }
        self.clock = clock;
        ran
    }

    #[cfg(test)]
    fn settle_if_eager(&mut self) {
        if self.eager_timers {
            self.ch1.settle();
            self.ch2.settle();
            self.ch4.settle();
        }
    }

    /// Game Boy Color hardware: the pulse channels run only while playing, and CH3/CH4 have
    /// their CGB timing.
    #[inline(never)]
    fn advance_cgb(&mut self, chunk: u64) {
        if self.ch1.on {
            self.ch1.advance(chunk);
            self.sweep.advance_cgb(chunk, &mut self.ch1);
        }
        if self.ch2.on {
            self.ch2.advance(chunk);
        }
        self.ch3.advance_cgb(chunk);
        self.ch4.advance_cgb(chunk);
    }

    /// Make this the APU of Game Boy Color hardware.
    pub fn set_cgb(&mut self) {
        self.cgb = true;
        self.sweep.cgb = true;
        self.ch3.cgb = true;
        self.ch4.cgb = true;
    }

    /// Recompute the whole-cycle targets after `next_sample` or `next_seq` changed.
    #[inline]
    fn refresh_targets(&mut self) {
        self.sample_at = ceil_cycles(self.next_sample);
        self.seq_at = ceil_cycles(self.next_seq);
    }

    #[inline]
    fn set_next_seq(&mut self, t: f64) {
        self.next_seq = t;
        self.seq_at = ceil_cycles(t);
    }

    /// Frame-sequencer events first, then samples, for everything due at `clock`.
    fn run_due_events(&mut self) -> bool {
        // `clock >= *_at` is `clock as f64 >= next_*` (see `sample_at`).
        let mut any = self.run_seq_events();
        while self.clock >= self.sample_at {
            self.sample_event();
            any = true;
        }
        any
    }

    /// The frame-sequencer events due at `clock`; true if there were any.
    #[inline(never)]
    fn run_seq_events(&mut self) -> bool {
        let mut any = false;
        while self.clock >= self.seq_at {
            self.frame_sequencer_event();
            self.set_next_seq(self.next_seq + SEQ_PERIOD as f64);
            any = true;
        }
        any
    }

    /// Not sampling: set the next sample target after `clock`, stepping the targets as
    /// `sample_event` does (the same `f64` additions, in closed form: [`pass_targets`]) but
    /// comparing in `f64`, without the ceiling per target: `clock >= ceil(t)` is
    /// `clock as f64 >= t` (see `sample_at`) while `clock` converts exactly (below 2^53; the
    /// caller checks).
    #[inline(never)]
    fn pass_sample_targets(&mut self) {
        let (_, _, t) = pass_targets(self.next_sample, self.cycles_per_sample, self.clock as f64);
        self.next_sample = t;
        self.sample_at = ceil_cycles(t);
    }

    /// The sample target at or before `clock`: take it (if sampling) and set the next one.
    #[inline(always)]
    fn sample_event(&mut self) {
        if self.sampling {
            self.take_sample();
        }
        self.next_sample += self.cycles_per_sample;
        self.sample_at = ceil_cycles(self.next_sample);
    }

    /// One DIV-APU event (512 Hz): lengths on odd steps, sweep on steps 3 and 7 (mod 8),
    /// envelopes on step 7. The step counter runs on while the APU is off.
    fn frame_sequencer_event(&mut self) {
        match self.seq_mode {
            SEQ_SKIP | 5 => {
                self.seq_mode = SEQ_HOLD;
                return;
            }
            SEQ_HOLD => self.seq_mode = SEQ_RESUMED,
            _ => self.seq_step += 1,
        }
        if !self.powered {
            return;
        }
        if self.cgb && self.seq_step & 1 == 0 {
            self.ch1.env.clock_extra();
            self.ch2.env.clock_extra();
            self.ch4.env.clock_extra();
        }
        if self.seq_step & 1 == 1 {
            for ch in 0..4 {
                self.clock_length(ch);
            }
        }
        if self.seq_step & 3 == 3 {
            self.sweep.clock(&mut self.ch1);
        }
        // Envelopes: step 7 on the DMG, step 0 on the CGB.
        if self.seq_step & 7 == if self.cgb { 0 } else { 7 } {
            self.ch1.env.clock();
            self.ch2.env.clock();
            self.ch4.env.clock();
        }
    }

    /// PCM12 (FF76, CGB): the current outputs of channels 1 and 2, a nibble each.
    pub fn pcm12(&mut self) -> u8 {
        ((self.ch1.sample() & 0xF) | ((self.ch2.sample() & 0xF) << 4)) as u8
    }

    /// PCM34 (FF77, CGB): the current outputs of channels 3 and 4, a nibble each.
    pub fn pcm34(&mut self) -> u8 {
        ((self.ch3.sample() & 0xF) | ((self.ch4.sample() & 0xF) << 4)) as u8
    }

    /// PCM12 or PCM34 (`addr` FF76 or FF77) without side effects.
    pub fn peek_pcm(&self, addr: u16) -> u8 {
        let (mut a, mut b) = (self.ch1.clone(), self.ch2.clone());
        if addr == 0xFF76 {
            return ((a.sample() & 0xF) | ((b.sample() & 0xF) << 4)) as u8;
        }
        let (c, mut d) = (self.ch3.clone(), self.ch4.clone());
        ((c.sample() & 0xF) | ((d.sample() & 0xF) << 4)) as u8
    }

    fn take_sample(&mut self) {
        let (mut left, mut right) = (0i64, 0i64);
        if self.powered {
            // A channel routed to neither output is not asked: its lazy timer stays unsettled
            // (see `Pulse::advance`), which saves most of a sample's cost in games that leave
            // channels unrouted.
            let (routes, l, r) = (self.nr51, &mut left, &mut right);
            if routes & 0x11 != 0 {
                mix(l, r, routes, 0, self.ch1.sample());
            }
            if routes & 0x22 != 0 {
                mix(l, r, routes, 1, self.ch2.sample());
            }
            if routes & 0x44 != 0 {
                mix(l, r, routes, 2, self.ch3.sample());
            }
            if routes & 0x88 != 0 {
                mix(l, r, routes, 3, self.ch4.sample());
            }
        }
        self.push_sample(left, right);
    }

    #[inline(always)]
    fn push_sample(&mut self, left: i64, right: i64) {
        if self.samples_len >= self.samples.len() {
            return; // overrun: PyBoy drops the sample
        }
        self.samples[self.samples_len] = left.clamp(0, 127) as i8;
        self.samples[self.samples_len + 1] = right.clamp(0, 127) as i8;
        self.samples_len += 2;
    }

    fn length_mut(&mut self, ch: usize) -> &mut Length {
        match ch {
            0 => &mut self.ch1.length,
            1 => &mut self.ch2.length,
            2 => &mut self.ch3.length,
            _ => &mut self.ch4.length,
        }
    }

    fn clock_length(&mut self, ch: usize) {
        if self.length_mut(ch).clock() {
            match ch {
                0 => self.ch1.on = false,
                1 => self.ch2.on = false,
                2 => self.ch3.on = false,
                _ => {
                    // The CGB's LFSR shifts only while the channel plays.
                    self.ch4.settle();
                    self.ch4.on = false;
                }
            }
        }
    }

    /// Read FF10-FF3F (catches up to `now` first).
    pub fn read(&mut self, addr: u16, now: u64) -> u8 {
        self.tick(now);
        self.peek(addr)
    }

    /// What the debugger view of memory (emurust's `GameBoy.read`, the system bus's `peek`)
    /// shows at FF10-FF3F when the CPU's clock is at `now`: exactly what PyBoy's own memory
    /// view (`pyboy.memory[addr]`, `Motherboard.getitem`) returns there, without changing
    /// anything.
    ///
    /// PyBoy's getitem catches the sound unit up to the CPU (`sound.tick(cpu.cycles)`) before
    /// reading, like a CPU read. Between frames (where Python reads) the APU is already caught
    /// up, so that catch-up is empty, and an empty catch-up does only one thing: it closes
    /// CH3's wave-RAM window. While CH3 plays on the DMG, PyBoy's memory view therefore always
    /// shows 0xFF at FF30-FF3F. Its read leaves two traces, neither of which the emulated
    /// program can see, which is why ours may (and does) leave none:
    /// - the closed window: every CPU access to FF10-FF3F catches up first, and every
    ///   catch-up closes the window before it runs, so the window's state before an access
    ///   never decides what the access sees (only PyBoy's save-state byte records it);
    /// - a non-empty catch-up (if the APU lagged): the APU runs lazily and a catch-up at any
    ///   moment ends in the same channel state as one later; only where catch-up chunks end
    ///   is changed, and that only decides the window again, which the next access reopens
    ///   or closes from its own chunks.
    ///
    /// So we compute the result of that catch-up on a copy (rare: only when lagging) or,
    /// when it is empty, just read with the window closed.
    pub fn debug_read(&self, addr: u16, now: u64) -> u8 {
        if now > self.caught_up_to || self.lag.cycles != 0 {
            return self.clone().read(addr, now);
        }
        if (0xFF30..=0xFF3F).contains(&addr) && self.ch3.on && self.emulated && !self.ch3.cgb {
            // ram_read with the window closed (DMG only: on Game Boy Color hardware the
            // current byte is always reachable, in PyBoy's memory view too)
            return 0xFF;
        }
        self.peek(addr)
    }

    /// What a CPU read of FF10-FF3F returns now, without catching up (the window as the
    /// last catch-up left it).
    pub fn peek(&self, addr: u16) -> u8 {
        if !self.emulated {
            return 0; // PyBoy's `Sound.get` without sound emulation, FF27-FF3F included
        }
        match addr {
            0xFF10 => self.sweep.reg(),
            0xFF11..=0xFF14 => self.ch1.read((addr - 0xFF10) as u8),
            0xFF15..=0xFF19 => self.ch2.read((addr - 0xFF15) as u8),
            0xFF1A..=0xFF1E => self.ch3.read((addr - 0xFF1A) as u8),
            0xFF1F..=0xFF23 => self.ch4.read((addr - 0xFF1F) as u8),
            0xFF24 => self.nr50,
            0xFF25 => self.nr51,
            0xFF26 => {
                0x70 | (self.powered as u8) << 7
                    | (self.ch4.on as u8) << 3
                    | (self.ch3.on as u8) << 2
                    | (self.ch2.on as u8) << 1
                    | self.ch1.on as u8
            }
            0xFF30..=0xFF3F => self.ch3.ram_read((addr - 0xFF30) as usize),
            _ => 0xFF,
        }
    }

    /// Write FF10-FF3F (catches up to `now` first). `div_counter` is the timer's 16-bit
    /// internal counter as PyBoy's Motherboard sees it at this moment: PyBoy does NOT catch
    /// the timer up before an FF26 write, so this must be the value as of the timer's last
    /// catch-up (end of the previous CPU slice or the last FF04-FF07 access). Only FF26 writes
    /// use it.
    pub fn write(&mut self, addr: u16, value: u8, now: u64, div_counter: u16) {
        self.tick(now);
        let power_on = addr == 0xFF26 && value & 0x80 != 0;
        let div_bit = 0x1000u16 << self.speed_shift;
        if power_on && !self.powered {
            // Powering on right after an FF04 write that hit DIV's APU bit, while that bit is
            // set again, makes the frame sequencer swallow its next event. On CGB hardware
            // "right after" is within 8192 APU cycles, and a recent power-off counts too.
            let mut recent = self.div_edge_written;
            if self.cgb {
                recent = self.clock - self.last_div_edge_clock < 8192;
                self.div_edge_written = recent;
                recent |= self.clock - self.last_power_off_clock < 8192;
            }
            self.seq_mode = if recent && div_counter & div_bit != 0 {
                SEQ_SKIP
            } else {
                SEQ_NORMAL
            };
        }
        if self.emulated {
            self.register_write(addr, value);
        }
        if addr == 0xFF14 {
            self.div_edge_written = false;
        }
        if power_on && self.seq_mode != SEQ_NORMAL {
            // Re-align the frame sequencer with DIV's next falling APU-bit edge.
            self.seq_step = 1;
            let period = 0x2000u64 << self.speed_shift;
            let to_edge = period - (div_counter as u64 & (period - 1));
            self.set_next_seq((self.clock + (to_edge >> self.speed_shift)) as f64);
        }
    }

    /// The register write proper, without the bus's power-on bookkeeping.
    fn register_write(&mut self, addr: u16, value: u8) {
        match addr {
            0xFF10..=0xFF23 => {
                let off = addr - 0xFF10;
                let (ch, reg) = ((off / 5) as usize, (off % 5) as u8);
                // Pan Docs: while the APU is off its registers are read-only, except the
                // length timers (NRx1) on monochrome models.
                if self.powered || (reg == 1 && !self.cgb) {
                    self.channel_write(ch, reg, value, !self.powered);
                }
            }
            0xFF24 if self.powered => self.nr50 = value,
            0xFF25 if self.powered => self.nr51 = value,
            0xFF26 => {
                if value & 0x80 == 0 {
                    self.power_off();
                } else if !self.powered {
                    self.powered = true;
                    self.seq_step = 0;
                    self.set_next_seq((self.clock + SEQ_PERIOD) as f64);
                }
            }
            0xFF30..=0xFF3F => self.ch3.ram_write((addr - 0xFF30) as usize, value),
            _ => {}
        }
    }

    fn power_off(&mut self) {
        // Clearing every register goes through the normal write path (while still powered);
        // the length timers survive on DMG.
        let kept = [
            self.ch1.length.remaining,
            self.ch2.length.remaining,
            self.ch3.length.remaining,
            self.ch4.length.remaining,
        ];
        for addr in 0xFF10..0xFF26 {
            self.register_write(addr, 0);
        }
        if self.cgb {
            // The CGB loses the length timers and resets the pulse channels' duty state.
            self.ch1.settle();
            self.ch2.settle();
            for ch in [&mut self.ch1, &mut self.ch2] {
                ch.step = 0;
                ch.duty = 0;
                ch.duty_pending = false;
                ch.suppressed = false;
            }
            self.sweep.restart_hold = 0;
        } else {
            self.ch1.length.remaining = kept[0];
            self.ch2.length.remaining = kept[1];
            self.ch3.length.remaining = kept[2];
            self.ch4.length.remaining = kept[3];
        }
        self.ch4.counter = 0;
        self.ch4.counter_countdown = 0;
        self.ch4.alignment = 0;
        self.ch4.counter_running = false;
        self.sweep.check_delay = 0;
        self.powered = false;
        self.seq_mode = SEQ_NORMAL;
        self.last_power_off_clock = self.clock;
    }

    /// Write register `reg` (0-4) of channel `ch` (0-3), with the extra length clocking
    /// that an NRx4 write causes in the first half of a length period (Pan Docs,
    /// "Obscure behavior").
    fn channel_write(&mut self, ch: usize, reg: u8, v: u8, length_only: bool) {
        let first_half = self.seq_step & 1 == 1;
        let before = self.length_mut(ch).clone();
        let mut clocked_early = false;
        if reg == 4 && first_half && v & 0xC0 == 0xC0 && !before.enabled && before.remaining > 0 {
            // Enabling length together with a trigger: clock it once before the trigger.
            self.length_mut(ch).enabled = true;
            self.clock_length(ch);
            self.length_mut(ch).enabled = before.enabled;
            clocked_early = true;
        }
        if self.cgb {
            self.channel_write_cgb(ch, reg, v, length_only);
        } else {
            self.channel_write_dmg(ch, reg, v, length_only);
        }
        if reg == 4 && first_half {
            if v & 0x40 != 0 && !clocked_early && (!before.enabled || before.remaining == 0) {
                self.clock_length(ch);
            } else if clocked_early && before.remaining == 1 && v & 0x80 != 0 {
                // The early clock expired the timer; the trigger reloaded it: clock again.
                self.clock_length(ch);
            }
        }
        if self.cgb && ch == 0 && reg == 4 && v & 0x80 != 0 {
            // CGB: CH1's first duty step lands on the 1 MHz grid of the frame sequencer.
            let epoch = ceil_cycles(self.next_seq - SEQ_PERIOD as f64) as i64;
            let phase = (self.clock as i64 + self.ch1.countdown - epoch).rem_euclid(4);
            self.ch1.countdown += (4 - phase) % 4;
        }
    }

    /// The channel part of a register write on DMG hardware.
    fn channel_write_dmg(&mut self, ch: usize, reg: u8, v: u8, length_only: bool) {
        match ch {
            0 => {
                if reg == 0 {
                    self.sweep.write(v, &mut self.ch1);
                } else if self.ch1.write(reg, v, length_only) {
                    let was_on = self.ch1.on;
                    self.ch1.trigger();
                    self.sweep.trigger(&mut self.ch1, was_on);
                }
            }
            1 => {
                if self.ch2.write(reg, v, length_only) {
                    self.ch2.trigger();
                }
            }
            2 => {
                if self.ch3.write(reg, v) {
                    self.ch3.trigger();
                }
            }
            _ => {
                if self.ch4.write(reg, v) {
                    self.ch4.trigger();
                }
            }
        }
    }

    /// The channel part of a register write on Game Boy Color hardware, with PyBoy's CGB
    /// trigger delays, NRx2 "zombie" volume changes and delayed duty changes.
    fn channel_write_cgb(&mut self, ch: usize, reg: u8, v: u8, length_only: bool) {
        let trigger = reg == 4 && v & 0x80 != 0;
        match ch {
            0 | 1 => {
                let (pulse, sweep) = if ch == 0 {
                    (&mut self.ch1, Some(&mut self.sweep))
                } else {
                    (&mut self.ch2, None)
                };
                if ch == 0 && reg == 0 {
                    if let Some(sweep) = sweep {
                        sweep.write(v, pulse);
                    }
                    return;
                }
                // The duty timer's pending steps ran with the old duty.
                pulse.settle();
                let was_on = pulse.on;
                let old_duty = pulse.duty;
                let check_pending = sweep.as_ref().is_some_and(|s| s.check_delay != 0);
                if reg == 2 {
                    pulse.env.nrx2_glitch(v, was_on);
                }
                if pulse.write(reg, v, length_only) {
                    pulse.trigger();
                    if let Some(sweep) = sweep {
                        sweep.trigger(pulse, was_on);
                        if was_on {
                            pulse.countdown += if !sweep.active || check_pending { 2 } else { 6 };
                        } else {
                            pulse.suppressed = true;
                            pulse.countdown += 8;
                        }
                    }
                }
                if reg == 1 {
                    if was_on {
                        pulse.pending_duty = pulse.duty;
                        pulse.duty_pending = true;
                        pulse.duty = old_duty;
                    } else {
                        pulse.duty_pending = false;
                    }
                }
                if ch == 1 && trigger {
                    let pulse = &mut self.ch2;
                    if !was_on {
                        pulse.suppressed = true;
                    }
                    let delay = 6 + if self.speed_shift != 0 { 3 } else { 0 };
                    pulse.countdown += if was_on { 2 } else { delay };
                    if !was_on && self.speed_shift != 0 && pulse.step_cycles == 4 {
                        // The shortest period's first step follows the 1 MHz divider phase.
                        let epoch = ceil_cycles(self.next_seq - SEQ_PERIOD as f64) as i64;
                        let phase = (self.clock as i64 - epoch).rem_euclid(4);
                        pulse.countdown += phase - 2;
                    }
                }
            }
            2 => {
                if self.ch3.write(reg, v) {
                    self.ch3.trigger();
                }
            }
            _ => {
                // The counter's pending shifts ran with the old settings and status.
                self.ch4.settle();
                let was_on = self.ch4.on;
                let was_short = self.ch4.short_mode;
                if reg == 2 {
                    self.ch4.env.nrx2_glitch(v, was_on);
                }
                if self.ch4.write(reg, v) {
                    self.ch4.trigger();
                }
                // PyBoy also moves the (unused on the CGB) period timer here.
                if trigger && was_on {
                    self.ch4.countdown += self.ch4.step_cycles;
                }
                if reg == 3 && self.ch4.on && was_short && !self.ch4.short_mode {
                    self.ch4.countdown += 2;
                }
            }
        }
    }

    /// FF04 write. `div_counter_before` is the timer's 16-bit counter caught up to `now`,
    /// before the write resets it. Resetting DIV restarts the 512 Hz period, and if DIV's
    /// APU bit (bit 4 of DIV) was set, the reset is a falling edge: a sequencer event now.
    pub fn on_div_write(&mut self, now: u64, div_counter_before: u16) {
        let falling_edge = div_counter_before & (0x1000 << self.speed_shift) != 0;
        self.tick(now);
        if falling_edge {
            self.div_edge_written = true;
            self.last_div_edge_clock = self.clock;
            if self.emulated {
                self.frame_sequencer_event();
            }
        }
        if self.emulated {
            self.set_next_seq((self.clock + SEQ_PERIOD) as f64);
        } else {
            self.set_next_seq(MAX_CYCLES as f64);
        }
    }

    pub fn save_state(&self, w: &mut StateWriter) {
        debug_assert_eq!(self.lag.cycles, 0, "saved between frames, caught up");
        w.u64(self.clock);
        w.u64(self.caught_up_to);
        w.f64(self.next_sample);
        w.f64(self.next_seq);
        w.u64(self.hint);
        w.bool(self.sampling);
        w.bool(self.powered);
        w.u64(self.seq_step);
        w.u8(self.seq_mode);
        w.bool(self.div_edge_written);
        w.u64(self.last_div_edge_clock);
        w.u64(self.last_power_off_clock);
        w.u8(self.nr50);
        w.u8(self.nr51);
        self.ch1.save(w);
        self.sweep.save(w);
        self.ch2.save(w);
        self.ch3.save(w);
        self.ch4.save(w);
        let bytes: Vec<u8> = self.samples[..self.samples_len]
            .iter()
            .map(|&s| s as u8)
            .collect();
        w.bytes(&bytes);
    }

    /// The Game Boy Color part of the APU state (after [`save_state`](Self::save_state)).
    pub fn save_cgb_state(&self, w: &mut StateWriter) {
        for ch in [&self.ch1, &self.ch2] {
            let c = ch.settled();
            w.u8(c.duty);
            w.bool(c.suppressed);
            w.u8(c.pending_duty);
            w.bool(c.duty_pending);
        }
        w.i64(self.sweep.restart_hold);
        w.i64(self.sweep.calc_delay);
        w.bool(self.ch3.suppressed);
        w.bool(self.ch3.restart_pending);
        w.u8(self.ch3.sample_pos);
        let noise = self.ch4.settled();
        w.u16(noise.counter);
        w.i64(noise.counter_countdown);
        w.u8(self.ch4.alignment);
        w.bool(self.ch4.counter_running);
        w.u8(self.speed_shift);
    }

    pub fn load_cgb_state(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.set_cgb();
        for ch in [&mut self.ch1, &mut self.ch2] {
            ch.duty = r.u8()? & 3;
            ch.suppressed = r.bool()?;
            ch.pending_duty = r.u8()? & 3;
            ch.duty_pending = r.bool()?;
        }
        self.sweep.restart_hold = check_count(r.i64()?, "sweep restart hold")?;
        self.sweep.calc_delay = check_count(r.i64()?, "sweep calculation delay")?;
        self.ch3.suppressed = r.bool()?;
        self.ch3.restart_pending = r.bool()?;
        self.ch3.sample_pos = r.u8()? & 31;
        self.ch4.counter = r.u16()? & 0x3FFF;
        self.ch4.counter_countdown = check_count(r.i64()?, "CH4 divider countdown")?;
        self.ch4.alignment = r.u8()? & 3;
        self.ch4.counter_running = r.bool()?;
        self.speed_shift = r.u8()?;
        if self.speed_shift > 1 {
            return Err(CoreError::State("APU: bad speed shift".into()));
        }
        Ok(())
    }

    /// Load a state made by [`Apu::save_state`] with the same options (the caller checks them).
    pub fn load_state(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        let mut a = Apu::new(self.options);
        a.clock = r.u64()?;
        a.caught_up_to = r.u64()?;
        a.next_sample = r.f64()?;
        a.next_seq = r.f64()?;
        for t in [a.next_sample, a.next_seq] {
            if !(t.is_finite() && t >= 0.0) {
                return Err(CoreError::State(format!("APU: bad target time {t}")));
            }
        }
        a.refresh_targets();
        a.hint = r.u64()?;
        a.sampling = r.bool()?;
        a.powered = r.bool()?;
        a.seq_step = r.u64()?;
        a.seq_mode = r.u8()?;
        if !matches!(a.seq_mode, 0..=3 | 5) {
            return Err(CoreError::State(format!(
                "APU: bad sequencer mode {}",
                a.seq_mode
            )));
        }
        a.div_edge_written = r.bool()?;
        a.last_div_edge_clock = r.u64()?;
        a.last_power_off_clock = r.u64()?;
        a.nr50 = r.u8()?;
        a.nr51 = r.u8()?;
        a.ch1.load(r)?;
        a.sweep.load(r)?;
        a.ch2.load(r)?;
        a.ch3.load(r)?;
        a.ch4.load(r)?;
        let data = r.bytes_max(a.samples.len())?;
        let n = data.len();
        if n % 2 != 0 {
            return Err(CoreError::State(format!("APU: odd sample count {n}")));
        }
        for (dst, src) in a.samples.iter_mut().zip(data) {
            *dst = *src as i8;
        }
        a.samples_len = n;
        *self = a;
        Ok(())
    }
}
