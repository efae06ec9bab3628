//! CH2: the square channel (NR21-NR24). Its generator, [`Pulse`], is also CH1's, which adds
//! a sweep unit (see `ch1`).

use super::common::{load_count, load_period, run_timer, Envelope, Length};
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// Duty waveforms; bit `n` is the output at duty step `n` (12.5 %, 25 %, 50 %, 75 %).
const DUTY_BITS: [u8; 4] = [0b1000_0000, 0b1000_0001, 0b1110_0001, 0b0111_1110];

/// A pulse channel (CH1 without its sweep unit, or CH2).
#[derive(Clone, Debug)]
pub(super) struct Pulse {
    pub duty: u8,
    pub length_load: u8,
    pub env: Envelope,
    /// 11-bit period value from NRx3/NRx4.
    pub freq: u16,
    pub length: Length,
    pub on: bool,
    /// Countdown to the next duty step, in T-cycles.
    pub countdown: i64,
    /// T-cycles per duty step: 4 * (2048 - freq), but 4 at power-on (as in PyBoy).
    pub step_cycles: i64,
    pub step: u8,
    /// T-cycles the duty timer still has to run (see [`Pulse::advance`]). `countdown` and
    /// `step` are only meaningful after [`Pulse::settle`] (or through [`Pulse::settled`]).
    pending: u64,
    /// CGB: silent until the first duty step after a fresh trigger.
    pub suppressed: bool,
    /// CGB: an NRx1 duty written while playing takes effect at the next duty step.
    pub pending_duty: u8,
    pub duty_pending: bool,
}

impl Pulse {
    pub fn new() -> Self {
        Pulse {
            duty: 0,
            length_load: 0,
            env: Envelope::default(),
            freq: 0,
            length: Length {
                enabled: false,
                remaining: 64,
            },
            on: false,
            countdown: 0,
            step_cycles: 4,
            step: 0,
            pending: 0,
            suppressed: false,
            pending_duty: 0,
            duty_pending: false,
        }
    }

    pub fn read(&self, reg: u8) -> u8 {
        match reg {
            1 => {
                (if self.duty_pending {
                    self.pending_duty
                } else {
                    self.duty
                }) << 6
                    | 0x3F
            }
            2 => self.env.reg(),
            4 => (self.length.enabled as u8) << 6 | 0xBF,
            _ => 0xFF,
        }
    }

    pub(super) fn set_freq(&mut self, freq: u16) {
        // The cycles run so far ran at the old period.
        self.settle();
        self.freq = freq;
        self.step_cycles = 4 * (0x800 - freq as i64);
    }

    /// Register write (reg 1-4). Returns true when NRx4's trigger bit asks for a restart;
    /// the caller triggers (CH1 also has its sweep unit to restart). While the APU is off
    /// only NRx1 reaches here, and then the duty bits are not written (`length_only`).
    pub fn write(&mut self, reg: u8, v: u8, length_only: bool) -> bool {
        match reg {
            1 => {
                if !length_only {
                    self.duty = v >> 6;
                }
                self.length_load = v & 0x3F;
                self.length.remaining = 64 - self.length_load as i64;
            }
            2 => {
                // Turning the DAC off switches the channel off.
                let dac_off = self.env.write(v);
                self.on &= !dac_off;
            }
            3 => self.set_freq(self.freq & 0x700 | v as u16),
            4 => {
                self.length.enabled = v & 0x40 != 0;
                self.set_freq((v as u16) << 8 & 0x700 | self.freq & 0xFF);
                return v & 0x80 != 0;
            }
            _ => {}
        }
        false
    }

    pub fn trigger(&mut self) {
        // The step position survives a trigger: bring it up to date first.
        self.settle();
        self.on = !self.env.dac_off();
        if self.length.remaining == 0 {
            self.length.remaining = 64;
        }
        self.countdown = self.step_cycles;
        self.env.restart();
    }

    /// Run the duty timer for `cycles` T-cycles, lazily: the cycles are only added up here
    /// and run by [`Pulse::settle`] when the timer's state is needed (a sample, a trigger,
    /// a period change, a save). That is exact: the timer counts down and reloads with the
    /// period, so running a then b cycles ends in the same countdown and step as running
    /// a + b at once, provided the period does not change in between — and every period
    /// change settles first. With sampling off this saves a catch-up per CPU slice.
    #[inline]
    pub fn advance(&mut self, cycles: u64) {
        self.pending += cycles;
    }

    /// Run the pending cycles (see [`Pulse::advance`]).
    #[inline]
    pub fn settle(&mut self) {
        if self.pending != 0 {
            let cycles = std::mem::take(&mut self.pending);
            self.run_duty_timer(cycles);
        }
    }

    /// The duty timer run for `cycles` T-cycles. A duty step also ends the CGB's trigger
    /// silence and applies a pending duty.
    #[inline(always)]
    fn run_duty_timer(&mut self, cycles: u64) {
        let (countdown, edges) = run_timer(self.countdown, cycles as i64, self.step_cycles);
        self.countdown = countdown;
        if edges > 0 {
            self.step = ((self.step as i64 + edges) & 7) as u8;
            if self.duty_pending {
                self.duty = self.pending_duty;
                self.duty_pending = false;
            }
            self.suppressed = false;
        }
    }

    /// A sampling span's step (see `Apu::sample_span`): run the timer to the next sample,
    /// `cycles` on, and return the output there. Only for a playing channel with nothing
    /// pending (settled before the span).
    #[inline(always)]
    pub fn run_to_sample(&mut self, cycles: u64) -> i64 {
        debug_assert!(self.on && self.pending == 0);
        self.run_duty_timer(cycles);
        self.output()
    }

    #[inline(always)]
    fn output(&self) -> i64 {
        if !self.suppressed && DUTY_BITS[self.duty as usize] >> self.step & 1 != 0 {
            self.env.volume
        } else {
            0
        }
    }

    pub fn sample(&mut self) -> i64 {
        if !self.on || self.env.volume == 0 {
            // Silent whatever the duty step: leave the timer lazy (settling composes).
            return 0;
        }
        self.settle();
        self.output()
    }

    /// The channel with its pending cycles run: what saves write, so that a state does not
    /// depend on when the timer last settled (a settle can also apply a pending duty).
    pub fn settled(&self) -> Pulse {
        let mut c = self.clone();
        c.settle();
        c
    }

    pub fn save(&self, w: &mut StateWriter) {
        self.settled().save_settled(w);
    }

    fn save_settled(&self, w: &mut StateWriter) {
        debug_assert_eq!(self.pending, 0);
        w.u8(self.duty);
        w.u8(self.length_load);
        self.env.save(w);
        w.u16(self.freq);
        w.i64(self.step_cycles);
        self.length.save(w);
        w.bool(self.on);
        w.i64(self.countdown);
        w.u8(self.step);
    }

    pub fn load(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.duty = r.u8()? & 3;
        self.length_load = r.u8()?;
        self.env.load(r)?;
        self.freq = r.u16()? & 0x7FF;
        // Saved, not derived: until NRx3/NRx4 are first written it is 4, not 4 * 2048.
        self.step_cycles = load_period(r)?;
        self.length.load(r)?;
        self.on = r.bool()?;
        self.countdown = load_count(r, "timer countdown")?;
        self.step = r.u8()? & 7;
        self.pending = 0;
        Ok(())
    }
}
