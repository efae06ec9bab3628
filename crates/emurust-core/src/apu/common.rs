//! What the four sound channels share: the timer arithmetic, the length counter, the volume
//! envelope (CH1, CH2, CH4) and the checks on counters read from save states. Pan Docs,
//! "Audio Details", is the spec; the counters use signed 64-bit arithmetic because that is
//! what PyBoy, our behavioural oracle, keeps.
//!
//! Only what the CPU can observe (register reads, NR52 status, wave RAM) and the audio
//! samples depend on the channels; the system never reads them directly.

use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// How many times a timer with `countdown <= 0` (after subtracting the elapsed cycles) has
/// fired, each firing adding `period` (> 0), until the countdown is positive again. With
/// sampling on the APU catches up every ~87 cycles, so this is usually a single firing:
/// skip the division then.
#[inline(always)]
fn firings(countdown: i64, period: i64) -> i64 {
    if countdown > -period {
        1
    } else {
        (-countdown) / period + 1
    }
}

/// Run a channel timer for `elapsed` cycles: returns the new countdown and how many times the
/// timer fired (each firing reloads it with `period`). Shared by the pulse, wave and noise
/// channels, which differ only in what a firing advances.
#[inline(always)]
pub(super) fn run_timer(countdown: i64, elapsed: i64, period: i64) -> (i64, i64) {
    let countdown = countdown - elapsed;
    if countdown > 0 {
        (countdown, 0)
    } else {
        let fired = firings(countdown, period);
        (countdown + fired * period, fired)
    }
}

/// The largest magnitude of a counter read from a save state. The channels' counters hold
/// T-cycles of one timer period, or a few length, envelope or sweep steps; 2^40 leaves room
/// for anything a real state holds, and keeps the arithmetic on them (catch-ups by up to
/// 2^62 cycles, see `GameBoy::load_state`) from overflowing. Larger values only come from a
/// corrupt state.
pub(super) const COUNT_LIMIT: i64 = 1 << 40;

/// `v` if it is a plausible counter value (see [`COUNT_LIMIT`]).
pub(super) fn check_count(v: i64, what: &str) -> Result<i64, CoreError> {
    if (-COUNT_LIMIT..=COUNT_LIMIT).contains(&v) {
        Ok(v)
    } else {
        Err(CoreError::State(format!("APU: {what} {v} out of range")))
    }
}

/// A counter from a save state (see [`check_count`]).
pub(super) fn load_count(r: &mut StateReader, what: &str) -> Result<i64, CoreError> {
    check_count(r.i64()?, what)
}

/// A channel's timer period from a save state (must be positive: the timers divide by it).
/// The bound is the PyBoy importer's (the noise channel's longest, 112 << 15), so that every
/// state the importer accepts saves and reloads in our format.
pub(super) fn load_period(r: &mut StateReader) -> Result<i64, CoreError> {
    let p = r.i64()?;
    if !(1..=(112i64 << 15)).contains(&p) {
        return Err(CoreError::State(format!("APU: bad channel period {p}")));
    }
    Ok(p)
}

/// Length timer (NRx1 load, NRx4 bit 6 enable). It counts down on the frame sequencer's
/// odd steps; reaching zero switches the channel off.
#[derive(Clone, Debug, Default)]
pub(super) struct Length {
    pub enabled: bool,
    pub remaining: i64,
}

impl Length {
    /// One length clock. Returns true when the timer has just expired.
    #[inline]
    pub fn clock(&mut self) -> bool {
        if self.enabled && self.remaining > 0 {
            self.remaining -= 1;
            return self.remaining == 0;
        }
        false
    }

    pub(super) fn save(&self, w: &mut StateWriter) {
        w.bool(self.enabled);
        w.i64(self.remaining);
    }

    pub(super) fn load(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.enabled = r.bool()?;
        self.remaining = load_count(r, "length counter")?;
        Ok(())
    }
}

/// Volume envelope (NRx2), used by both pulse channels and the noise channel.
#[derive(Clone, Debug, Default)]
pub(super) struct Envelope {
    pub initial: u8,
    pub rising: bool,
    pub pace: u8,
    /// Countdown to the next volume step; 0 means the envelope has stopped.
    pub countdown: i64,
    pub volume: i64,
}

impl Envelope {
    pub fn reg(&self) -> u8 {
        self.initial << 4 | (self.rising as u8) << 3 | self.pace
    }

    /// Writes NRx2; returns true when the write turns the channel's DAC off (upper five
    /// bits zero), which disables the channel at once.
    pub fn write(&mut self, v: u8) -> bool {
        self.initial = v >> 4;
        self.rising = v & 0x08 != 0;
        self.pace = v & 0x07;
        self.dac_off()
    }

    pub fn dac_off(&self) -> bool {
        self.initial == 0 && !self.rising
    }

    pub fn restart(&mut self) {
        self.countdown = self.pace as i64;
        self.volume = self.initial as i64;
    }

    /// One envelope clock (frame sequencer step 7).
    pub fn clock(&mut self) {
        if self.countdown == 0 {
            return;
        }
        self.countdown -= 1;
        if self.countdown != 0 {
            return;
        }
        let next = self.volume + if self.rising { 1 } else { -1 };
        if (0..=15).contains(&next) {
            self.volume = next;
            self.countdown = self.pace as i64;
        } else {
            // Out of range: the envelope stops for good (until the next trigger).
            self.countdown = 0;
        }
    }

    /// CGB: the extra envelope step an NRx2 write armed (bit 3 of the countdown, set by
    /// [`Envelope::nrx2_glitch`]); the frame sequencer calls this on every even step.
    pub fn clock_extra(&mut self) {
        if self.countdown & ENVELOPE_EXTRA_TICK != 0 {
            self.countdown &= 7;
            let next = self.volume + if self.rising { 1 } else { -1 };
            if (0..=15).contains(&next) {
                self.volume = next;
            }
        }
    }

    /// CGB "zombie mode": what an NRx2 write does to the volume of a playing channel, as
    /// PyBoy models it. Call before [`Envelope::write`]; `playing` is the channel's state.
    pub fn nrx2_glitch(&mut self, value: u8, playing: bool) {
        if !playing || value & 0xF8 == 0 {
            return;
        }
        let old = self.reg();
        let mut tick = value & 7 != 0 && old & 7 == 0;
        let invert = (value & 8) ^ (old & 8) != 0;
        if value & 0xF == 8 && old & 0xF == 8 {
            tick = true;
        }
        if invert {
            if value & 8 != 0 {
                if old & 7 == 0 {
                    self.volume ^= 0xF;
                } else {
                    self.volume = (0xE - self.volume) & 0xF;
                }
                tick = false;
            } else {
                self.volume = (0x10 - self.volume) & 0xF;
            }
        }
        if tick {
            self.volume += if value & 8 != 0 { 1 } else { -1 };
            self.volume &= 0xF;
        }
        if value & 7 == 0 {
            self.countdown = 0;
        } else if old & 7 == 0 {
            self.countdown = (value & 7) as i64 | ENVELOPE_EXTRA_TICK;
        }
    }

    pub(super) fn save(&self, w: &mut StateWriter) {
        w.u8(self.initial);
        w.bool(self.rising);
        w.u8(self.pace);
        w.i64(self.countdown);
        w.i64(self.volume);
    }

    pub(super) fn load(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.initial = r.u8()? & 0x0F;
        self.rising = r.bool()?;
        self.pace = r.u8()? & 0x07;
        self.countdown = load_count(r, "envelope countdown")?;
        self.volume = load_count(r, "envelope volume")?;
        Ok(())
    }
}

/// Bit of an envelope countdown that marks a pending CGB extra step (PyBoy's value).
const ENVELOPE_EXTRA_TICK: i64 = 0x08;
