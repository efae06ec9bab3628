//! CH1: the square channel with a frequency sweep (NR10-NR14). The square wave itself is
//! CH2's generator ([`Pulse`]); this module adds the sweep unit that acts on it.

use super::ch2::Pulse;
use super::common::load_count;
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// CH1's sweep shadow register: an 11-bit period (a negative or wider one would make the
/// next period computed from it meaningless).
pub(super) fn check_shadow(v: i64) -> Result<i64, CoreError> {
    if (0..=0x7FF).contains(&v) {
        Ok(v)
    } else {
        Err(CoreError::State(format!(
            "APU: sweep shadow period {v} out of range"
        )))
    }
}

/// CH1's frequency sweep unit (NR10). It acts on the `Pulse` of CH1, which the caller passes.
#[derive(Clone, Debug, Default)]
pub(super) struct Sweep {
    pub pace: u8,
    pub negate: bool,
    pub shift: u8,
    /// Frame-sequencer clocks until the next sweep iteration.
    pub countdown: i64,
    /// Internal enable flag, latched at trigger.
    pub active: bool,
    pub shadow: i64,
    /// T-cycles until the delayed second overflow check after reaching period 0x7FF.
    pub check_delay: i64,
    /// A calculation in negate mode happened since the last trigger (clearing NR10 bit 3
    /// afterwards disables the channel).
    pub negated: bool,
    /// CGB: T-cycles during which sweep clocks are ignored after an active retrigger.
    pub restart_hold: i64,
    /// CGB: T-cycles until a sweep calculation that follows a frame-sequencer clock.
    pub calc_delay: i64,
    /// Game Boy Color hardware.
    pub cgb: bool,
}

impl Sweep {
    pub fn reg(&self) -> u8 {
        0x80 | self.pace << 4 | (self.negate as u8) << 3 | self.shift
    }

    pub fn write(&mut self, v: u8, ch: &mut Pulse) {
        let was_negate = self.negate;
        self.pace = v >> 4 & 7;
        self.negate = v & 0x08 != 0;
        self.shift = v & 7;
        if was_negate && !self.negate && self.negated {
            ch.on = false;
        }
    }

    /// Compute the next period from the shadow register. An overflow (> 0x7FF) switches the
    /// channel off. With `commit` (and a non-zero shift) the new period is written back.
    /// Returns whether it was written back.
    pub fn calculate(&mut self, commit: bool, ch: &mut Pulse) -> bool {
        if self.negate {
            self.negated = true;
        }
        let delta = self.shadow >> self.shift;
        let next = if self.negate {
            self.shadow - delta
        } else {
            self.shadow + delta
        };
        if next >= 0x800 {
            ch.on = false;
            return false;
        }
        if !commit || self.shift == 0 {
            return false;
        }
        self.shadow = next;
        ch.set_freq(next as u16);
        if next == 0x7FF {
            // The follow-up overflow check comes eight M-cycles later.
            self.check_delay = 32;
        }
        true
    }

    /// Called after `Pulse::trigger` on CH1 (`was_on`: CH1 was playing before).
    pub fn trigger(&mut self, ch: &mut Pulse, was_on: bool) {
        let pending = self.check_delay;
        self.calc_delay = 0;
        self.restart_hold = if self.cgb && was_on && self.shift == 0 {
            9
        } else {
            0
        };
        if pending != 0 {
            self.check_delay = pending + 8;
        }
        self.shadow = ch.freq as i64;
        self.countdown = self.period();
        self.negated = false;
        self.active = self.pace != 0 || self.shift != 0;
        if self.shift != 0 && pending == 0 {
            self.calculate(false, ch);
        }
    }

    fn period(&self) -> i64 {
        if self.pace == 0 {
            8
        } else {
            self.pace as i64
        }
    }

    /// Frame sequencer steps 2 and 6.
    pub fn clock(&mut self, ch: &mut Pulse) {
        if self.restart_hold != 0 || !(self.active && ch.on) {
            return;
        }
        self.countdown -= 1;
        if self.countdown > 0 {
            return;
        }
        self.countdown = self.period();
        if self.pace != 0 {
            if self.cgb && self.shift == 0 {
                // CGB: the calculation follows the sequencer clock by one 1 MHz tick.
                self.calc_delay = 4;
            } else if self.calculate(true, ch) && self.check_delay == 0 {
                self.calculate(false, ch);
            }
        }
    }

    /// Runs the delayed overflow check's timer for `cycles` T-cycles.
    #[inline]
    pub fn advance(&mut self, cycles: u64, ch: &mut Pulse) {
        if self.check_delay == 0 {
            return;
        }
        self.check_delay -= cycles as i64;
        if self.check_delay <= 0 {
            self.check_delay = 0;
            if self.shift != 0 {
                self.calculate(false, ch);
            }
        }
    }

    /// CGB: [`Sweep::advance`] with the retrigger hold and the delayed calculation.
    pub fn advance_cgb(&mut self, cycles: u64, ch: &mut Pulse) {
        if self.restart_hold != 0 {
            self.restart_hold = (self.restart_hold - cycles as i64).max(0);
        }
        if self.calc_delay != 0 {
            self.calc_delay -= cycles as i64;
            if self.calc_delay <= 0 {
                self.calc_delay = 0;
                if self.pace != 0 && self.calculate(true, ch) && self.check_delay == 0 {
                    self.calculate(false, ch);
                }
            }
            return;
        }
        self.advance(cycles, ch);
    }

    pub fn save(&self, w: &mut StateWriter) {
        w.u8(self.pace);
        w.bool(self.negate);
        w.u8(self.shift);
        w.i64(self.countdown);
        w.bool(self.active);
        w.i64(self.shadow);
        w.i64(self.check_delay);
        w.bool(self.negated);
    }

    pub fn load(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.pace = r.u8()? & 7;
        self.negate = r.bool()?;
        self.shift = r.u8()? & 7;
        self.countdown = load_count(r, "sweep countdown")?;
        self.active = r.bool()?;
        self.shadow = check_shadow(r.i64()?)?;
        self.check_delay = load_count(r, "sweep check delay")?;
        self.negated = r.bool()?;
        Ok(())
    }
}
