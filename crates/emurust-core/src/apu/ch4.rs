//! CH4: the noise channel (NR41-NR44), a linear-feedback shift register.

use super::common::{load_count, run_timer, Envelope, Length};
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// One shift of the 15-bit noise LFSR (Pan Docs "Noise channel"), in the representation
/// PyBoy keeps: bit 0 XOR bit 1 is fed back into bit 14, and also into bit 6 in 7-bit
/// (`short`) mode.
/// The reference for [`lfsr_shift`].
#[cfg(test)]
fn lfsr_shift_once(lfsr: u16, short: bool) -> u16 {
    let feedback = (lfsr ^ (lfsr >> 1)) & 1;
    let mask = if short { 0x4040 } else { 0x4000 };
    let shifted = lfsr >> 1;
    if feedback != 0 {
        shifted | mask
    } else {
        shifted & !mask
    }
}

/// `n` shifts of the noise LFSR, several at a time (the channel shifts every 8 cycles at its
/// fastest, so a catch-up of a frame is ~8800 shifts). `lfsr` must fit in 15 bits.
///
/// Long mode: bit stream s_0..s_14 is the register, and shift i appends s_(15+i) =
/// s_i ^ s_(i+1) at bit 14. For i <= 13 that only involves original bits, so up to 14 shifts
/// are `lfsr >> k` with the k feedback bits `(lfsr ^ lfsr >> 1) & (2^k - 1)` on top.
/// Short mode: bits 0-6 are a 7-bit LFSR of their own (bit 6 is overwritten by the feedback
/// after each shift), so up to 6 shifts can be done at once there; bits 7-14 are a delay
/// line fed with the same feedback bits at bit 14 (what shifts down out of bit 7 is lost).
#[inline]
fn lfsr_shift(mut lfsr: u16, short: bool, mut n: u64) -> u16 {
    if short {
        while n > 0 {
            let k = n.min(6) as u32;
            let feedback = (lfsr ^ (lfsr >> 1)) & ((1 << k) - 1);
            let low = ((lfsr & 0x7F) >> k) | (feedback << (7 - k));
            let high = ((lfsr >> k) & 0x7F80) | (feedback << (15 - k));
            lfsr = high | low;
            n -= k as u64;
        }
    } else {
        while n > 0 {
            let k = n.min(14) as u32;
            let feedback = (lfsr ^ (lfsr >> 1)) & ((1 << k) - 1);
            lfsr = (lfsr >> k) | (feedback << (15 - k));
            n -= k as u64;
        }
    }
    lfsr
}

/// How often bit `bit` of the CGB noise channel's 14-bit counter turns from 0 to 1 while the
/// counter steps `steps` times from `counter` (each such edge shifts the LFSR). Bit `bit` rises
/// on reaching a value v with v mod 2^(bit+1) == 2^bit; wrapping at 2^14 keeps that pattern
/// for bits 0-13, and bits 14-15 never rise.
#[inline]
fn counter_rising_edges(counter: u64, steps: u64, bit: u8) -> u64 {
    if bit >= 14 {
        return 0;
    }
    // Values v in 1..=x with v mod 2^(bit+1) == 2^bit.
    let rises_up_to = |x: u64| (x + (1 << bit)) >> (bit + 1);
    rises_up_to(counter + steps) - rises_up_to(counter)
}

/// Base divisors of the noise channel's clock (NR43 bits 0-2), in T-cycles.
const NOISE_DIVISORS: [i64; 8] = [8, 16, 32, 48, 64, 80, 96, 112];

/// CH4, the noise channel (a linear-feedback shift register).
#[derive(Clone, Debug)]
pub(super) struct Noise {
    pub length_load: u8,
    pub env: Envelope,
    pub clock_shift: u8,
    pub short_mode: bool,
    pub divisor: u8,
    pub length: Length,
    pub on: bool,
    pub countdown: i64,
    pub step_cycles: i64,
    pub lfsr: u16,
    /// T-cycles the LFSR's clock still has to run (lazy, as for [`Pulse::advance`](super::ch2::Pulse::advance)).
    pending: u64,
    /// Game Boy Color hardware: PyBoy clocks the LFSR from a free-running 14-bit counter
    /// (the fields below) instead of the DMG's period timer.
    pub cgb: bool,
    pub counter: u16,
    pub counter_countdown: i64,
    pub alignment: u8,
    pub counter_running: bool,
    /// CGB: T-cycles the counter still has to run (lazy: see [`Noise::advance_cgb`]).
    counter_pending: u64,
}

impl Noise {
    pub fn new() -> Self {
        Noise {
            length_load: 0,
            env: Envelope::default(),
            clock_shift: 0,
            short_mode: false,
            divisor: 0,
            length: Length {
                enabled: false,
                remaining: 64,
            },
            on: false,
            countdown: 0,
            step_cycles: 8,
            lfsr: 1,
            pending: 0,
            cgb: false,
            counter: 0,
            counter_countdown: 0,
            alignment: 0,
            counter_running: false,
            counter_pending: 0,
        }
    }

    pub fn read(&self, reg: u8) -> u8 {
        match reg {
            2 => self.env.reg(),
            3 => self.nr43(),
            4 => (self.length.enabled as u8) << 6 | 0xBF,
            _ => 0xFF,
        }
    }

    fn nr43(&self) -> u8 {
        self.clock_shift << 4 | (self.short_mode as u8) << 3 | self.divisor
    }

    fn set_nr43(&mut self, v: u8) {
        // The cycles run so far ran with the old period and width.
        self.settle();
        if self.cgb {
            return self.set_nr43_cgb(v);
        }
        self.clock_shift = v >> 4;
        self.short_mode = v & 0x08 != 0;
        self.divisor = v & 7;
        self.step_cycles = NOISE_DIVISORS[self.divisor as usize] << self.clock_shift;
    }

    /// Register write (reg 1-4). Returns true when NR44's trigger bit asks for a restart.
    pub fn write(&mut self, reg: u8, v: u8) -> bool {
        match reg {
            1 => {
                self.length_load = v & 0x3F;
                self.length.remaining = 64 - self.length_load as i64;
            }
            2 => {
                // Turning the DAC off switches the channel off.
                let dac_off = self.env.write(v);
                self.on &= !dac_off;
            }
            3 => self.set_nr43(v),
            4 => {
                self.length.enabled = v & 0x40 != 0;
                return v & 0x80 != 0;
            }
            _ => {}
        }
        false
    }

    /// NR43 on the CGB: a divisor change restarts the counter's countdown, and a shift change
    /// that makes the selected counter bit rise clocks the LFSR.
    fn set_nr43_cgb(&mut self, v: u8) {
        let old_divisor = self.divisor;
        let old_bit = self.counter >> self.clock_shift & 1;
        let old_countdown = self.counter_countdown;
        self.clock_shift = v >> 4;
        self.short_mode = v & 0x08 != 0;
        self.divisor = v & 7;
        self.step_cycles = NOISE_DIVISORS[self.divisor as usize] << self.clock_shift;
        if self.counter_running && old_divisor != self.divisor {
            self.counter_countdown = NOISE_DIVISORS[self.divisor as usize] >> 1;
            if self.divisor == 2 && self.clock_shift == 1 && self.alignment == 0 {
                if old_divisor == 0 {
                    self.counter_countdown += 2;
                } else if old_divisor == 1 {
                    self.counter_countdown = old_countdown;
                }
            }
        }
        if self.on && old_bit == 0 && (self.counter as u32) >> self.clock_shift & 1 != 0 {
            self.lfsr = lfsr_shift(self.lfsr, self.short_mode, 1);
        }
    }

    /// CGB: run the counter for `cycles` T-cycles. The alignment runs chunk by chunk, as
    /// PyBoy's does (it drops each chunk's odd cycle); the counter and the LFSR shifts it
    /// makes run lazily, when [`Noise::settle`] needs them: the counter is a timer that
    /// fires at `counter_countdown` and every period after, so running it in one go or in
    /// parts ends alike, and the rising edges it counts (shifts, while the channel is on)
    /// add up. Everything that changes what it does (the channel turning on or off, NR43,
    /// a trigger) settles first, as does everything that reads it (samples, saves).
    #[inline]
    pub fn advance_cgb(&mut self, cycles: u64) {
        self.alignment = ((self.alignment as u64 + (cycles >> 1)) & 3) as u8;
        if self.counter_running {
            self.counter_pending += cycles;
        }
    }

    /// The counter run for `cycles` T-cycles in closed form (a frame is thousands of counter
    /// steps): `steps` increments, the last `rest` cycles into the next period.
    fn run_counter(&mut self, cycles: u64) {
        let cycles = cycles as i64;
        let period = NOISE_DIVISORS[self.divisor as usize] >> 1;
        let countdown = if self.counter_countdown != 0 {
            self.counter_countdown
        } else {
            period
        };
        if cycles < countdown {
            self.counter_countdown = countdown - cycles;
            return;
        }
        let past_first = cycles - countdown;
        let steps = 1 + past_first / period;
        self.counter_countdown = period - past_first % period;
        let old = self.counter as u64;
        self.counter = ((old + steps as u64) & 0x3FFF) as u16;
        if self.on {
            let edges = counter_rising_edges(old, steps as u64, self.clock_shift);
            if edges > 0 {
                self.lfsr = lfsr_shift(self.lfsr, self.short_mode, edges);
            }
        }
    }

    pub fn trigger(&mut self) {
        if self.cgb {
            let was_on = self.on;
            self.on = !self.env.dac_off();
            if self.length.remaining == 0 {
                self.length.remaining = 64;
            }
            self.countdown = self.step_cycles;
            self.env.restart();
            self.lfsr = 0x7FFF;
            if !was_on {
                self.counter = 0;
                self.counter_running = true;
                let d = self.divisor as i64;
                let mut c = d * 4 + 6;
                if self.alignment & 1 != 0 {
                    c += if d == 0 { 1 } else { -1 };
                    if d != 0 && self.alignment & 2 != 0 {
                        c -= 2;
                    }
                } else if d != 0 {
                    c -= if self.alignment & 2 != 0 {
                        2
                    } else if d > 1 {
                        4
                    } else {
                        0
                    };
                }
                self.counter_countdown = c * 2;
            } else {
                // The divider keeps running while an active trigger restarts the LFSR.
                self.counter_countdown += (NOISE_DIVISORS[self.divisor as usize] >> 1) + 2;
            }
            return;
        }
        // Everything the pending cycles would change is reset here; drop them.
        self.pending = 0;
        self.on = !self.env.dac_off();
        if self.length.remaining == 0 {
            self.length.remaining = 64;
        }
        self.countdown = self.step_cycles;
        self.env.restart();
        self.lfsr = 0x7FFF;
    }

    /// Run the LFSR's clock for `cycles` T-cycles (one shift per `step_cycles`), lazily:
    /// exact for the same reason as [`Pulse::advance`](super::ch2::Pulse::advance); period and width changes settle first.
    #[inline]
    pub fn advance(&mut self, cycles: u64) {
        self.pending += cycles;
    }

    /// The channel with its pending cycles run (what saves write).
    pub fn settled(&self) -> Noise {
        let mut c = self.clone();
        c.settle();
        c
    }

    /// Run the pending cycles: the DMG's LFSR clock (see [`Noise::advance`]) or the CGB's
    /// counter (see [`Noise::advance_cgb`]).
    #[inline]
    pub fn settle(&mut self) {
        if self.pending != 0 {
            let (countdown, shifts) =
                run_timer(self.countdown, self.pending as i64, self.step_cycles);
            self.countdown = countdown;
            if shifts > 0 {
                self.lfsr = lfsr_shift(self.lfsr, self.short_mode, shifts as u64);
            }
            self.pending = 0;
        }
        if self.counter_pending != 0 {
            let cycles = std::mem::take(&mut self.counter_pending);
            self.run_counter(cycles);
        }
    }

    pub fn sample(&mut self) -> i64 {
        if !self.on || self.env.volume == 0 {
            // Silent whatever the LFSR holds: leave the timer lazy (settling composes).
            return 0;
        }
        self.settle();
        if self.lfsr & 1 == 0 {
            self.env.volume
        } else {
            0
        }
    }

    pub fn save(&self, w: &mut StateWriter) {
        self.settled().save_settled(w);
    }

    fn save_settled(&self, w: &mut StateWriter) {
        w.u8(self.length_load);
        self.env.save(w);
        w.u8(self.nr43());
        self.length.save(w);
        w.bool(self.on);
        w.i64(self.countdown);
        w.u16(self.lfsr);
    }

    pub fn load(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.length_load = r.u8()?;
        self.env.load(r)?;
        let nr43 = r.u8()?;
        self.set_nr43(nr43);
        self.length.load(r)?;
        self.on = r.bool()?;
        self.countdown = load_count(r, "timer countdown")?;
        self.lfsr = r.u16()? & 0x7FFF;
        self.pending = 0;
        self.counter_pending = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    /// The CGB noise counter stepped one increment at a time, as the closed form must match.
    fn noise_cgb_reference(n: &mut Noise, cycles: u64) {
        n.alignment = ((n.alignment as u64 + (cycles >> 1)) & 3) as u8;
        if !n.counter_running {
            return;
        }
        let mut cycles = cycles as i64;
        let period = NOISE_DIVISORS[n.divisor as usize] >> 1;
        let mut countdown = if n.counter_countdown != 0 {
            n.counter_countdown
        } else {
            period
        };
        let mask = 1u32 << n.clock_shift;
        while cycles >= countdown {
            cycles -= countdown;
            countdown = period;
            let old = n.counter as u32;
            n.counter = (n.counter + 1) & 0x3FFF;
            if n.on && old & mask == 0 && n.counter as u32 & mask != 0 {
                n.lfsr = lfsr_shift_once(n.lfsr, n.short_mode);
            }
        }
        n.counter_countdown = countdown - cycles;
    }

    #[test]
    fn cgb_noise_counter_in_closed_form_matches_stepping_it() {
        let mut next = crate::test_rng::xorshift(0x2545_F491_4F6C_DD1D);
        for _ in 0..20_000 {
            let mut a = Noise::new();
            a.cgb = true;
            a.counter_running = true;
            a.on = !next().is_multiple_of(4);
            a.divisor = (next() % 8) as u8;
            a.clock_shift = (next() % 16) as u8;
            a.short_mode = next().is_multiple_of(2);
            a.counter = (next() % 0x4000) as u16;
            a.lfsr = (next() % 0x8000) as u16;
            a.alignment = (next() % 4) as u8;
            let period = NOISE_DIVISORS[a.divisor as usize] >> 1;
            a.counter_countdown = (next() % (period as u64 + 1)) as i64;
            let mut b = a.clone();
            for _ in 0..4 {
                let cycles = match next() % 3 {
                    0 => next() % 8,
                    1 => next() % 200,
                    _ => next() % 70_000,
                } + 1;
                a.advance_cgb(cycles);
                noise_cgb_reference(&mut b, cycles);
                // The counter runs lazily: settled at any point (or only at the end) it
                // must be where the step-by-step reference is.
                let settled = a.settled();
                assert_eq!(
                    (settled.counter, settled.counter_countdown, settled.lfsr),
                    (b.counter, b.counter_countdown, b.lfsr),
                    "after {cycles} cycles"
                );
                assert_eq!(a.alignment, b.alignment);
                if next().is_multiple_of(2) {
                    a.settle();
                }
            }
        }
    }

    use super::*;

    #[test]
    fn bulk_lfsr_shifts_match_single_shifts() {
        let mut seed: u32 = 12345;
        for short in [false, true] {
            for start in 0..0x8000u16 {
                // A pseudo-random shift count per start value, small and large.
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let n = if start % 7 == 0 {
                    (seed >> 8) % 3000
                } else {
                    (seed >> 8) % 40
                };
                let mut reference = start;
                for _ in 0..n {
                    reference = lfsr_shift_once(reference, short);
                }
                assert_eq!(
                    lfsr_shift(start, short, n as u64),
                    reference,
                    "start {start:#06x}, {n} shifts, short {short}"
                );
            }
        }
    }

    #[test]
    fn noise_advance_matches_one_cycle_at_a_time() {
        for nr43 in [0x00u8, 0x08, 0x11, 0x1F, 0x3A, 0x57] {
            let mut a = Noise::new();
            a.set_nr43(nr43);
            a.trigger();
            let mut b = a.clone();
            for chunk in [1u64, 7, 8, 9, 100, 1000, 8192, 3, 70224] {
                a.advance(chunk);
                a.settle();
                for _ in 0..chunk {
                    b.countdown -= 1;
                    if b.countdown <= 0 {
                        b.countdown += b.step_cycles;
                        b.lfsr = lfsr_shift_once(b.lfsr, b.short_mode);
                    }
                }
                assert_eq!(
                    (a.lfsr, a.countdown),
                    (b.lfsr, b.countdown),
                    "nr43 {nr43:#x}"
                );
            }
        }
    }
}
