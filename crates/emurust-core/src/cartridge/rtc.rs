//! MBC3 real-time clock, running on EMULATED time.
//!
//! Registers (Pan Docs, "MBC3"): 08 seconds, 09 minutes, 0A hours, 0B day counter low 8 bits,
//! 0C bit 0 day counter bit 8, bit 6 halt, bit 7 day-counter carry.
//!
//! Behaviour reproduced from PyBoy 2.8.1 (observable by the CPU):
//! * The clock advances by whole seconds out of a sub-second cycle accumulator
//!   (4 194 304 T-cycles per second). It is only brought up to date ("caught up") when the
//!   bus touches it: a read or write of A000-BFFF while an RTC register is selected, or any
//!   write to 6000-7FFF. Between catch-ups cycles simply accumulate, so where the catch-ups
//!   happen only matters around halt changes and register writes, exactly as in PyBoy.
//! * While halted, elapsed cycles are discarded (not accumulated).
//! * Writing the seconds register clears the sub-second accumulator.
//! * Latching: writing 0x00 then 0x01 to 6000-7FFF copies the live seconds/minutes/hours/day
//!   into the latch; writing 0x01 again without an intervening 0x00 does not re-latch. Reads
//!   of 08-0B return latched values; 0C returns the latched day bit 8 but the LIVE halt and
//!   carry bits. Register writes go to the live counters only.
//! * Out-of-range values (seconds/minutes 60-63, hours 24-31) count up to the register's
//!   maximum and wrap to 0 WITHOUT carrying into the next unit; only a transition from 59/59/23
//!   carries. The day counter wraps 511 -> 0 and sets the carry bit, which stays set until
//!   written.
//!
//! Deliberate divergences from PyBoy (which uses the host's wall clock in three places):
//! * PyBoy, when two catch-ups happen at the same CPU cycle count, advances the clock by the
//!   host time elapsed between them; we advance by 0 (emulated time only, deterministic).
//! * PyBoy, when loading a save state or an .rtc file, adds the host time elapsed since it was
//!   written; we add nothing.
//! * PyBoy does not save `last_cycles` nor the latch in save states (after loading, its next
//!   catch-up counts every cycle since power-on again, and the latch keeps whatever the
//!   instance had). We save and restore both, so save -> load -> run equals running on.

use crate::state::{StateReader, StateWriter};
use crate::CoreError;

pub mod pyboy_state;

/// T-cycles per RTC second (the DMG clock; PyBoy's CLOCK_RATE).
pub const RTC_CYCLES_PER_SECOND: u64 = 4_194_304;

/// Size of the RTC block appended to battery RAM, see [`Rtc::battery_bytes`].
pub const RTC_BATTERY_BYTES: usize = 16;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rtc {
    // Live counters.
    seconds: u8,
    minutes: u8,
    hours: u8,
    day_low: u8,
    /// Day counter bit 8 (0 or 1).
    day_high: u8,
    halt: bool,
    day_carry: bool,
    /// Cycles counted towards the next second, always < RTC_CYCLES_PER_SECOND.
    sub_second: u64,
    /// Cycle count of the last catch-up.
    last_now: u64,
    /// Last latch command written was 0x01 (a further 0x01 does not re-latch).
    latch_armed: bool,
    /// Latched seconds, minutes, hours, day low, day bit 8.
    latched: [u8; 5],
    /// PyBoy's `rtc_lock_experimental`: the clock stands still, register writes are ignored
    /// and a latch reads all zeros. A setting of the running emulator, not saved in states.
    locked: bool,
}

impl Rtc {
    pub fn new() -> Rtc {
        Rtc::default()
    }

    /// Bring the clock up to T-cycle `now`.
    #[inline]
    pub fn catch_up(&mut self, now: u64) {
        // A cycle counter that went backwards (cannot happen with a consistent system state)
        // only re-anchors, as PyBoy does.
        let Some(elapsed) = now.checked_sub(self.last_now) else {
            self.last_now = now;
            return;
        };
        self.last_now = now;
        if self.halt || self.locked {
            return;
        }
        self.sub_second += elapsed;
        let seconds = self.sub_second / RTC_CYCLES_PER_SECOND;
        self.sub_second %= RTC_CYCLES_PER_SECOND;
        if seconds != 0 {
            self.advance_seconds(seconds);
        }
    }

    fn counters_valid(&self) -> bool {
        self.seconds < 60 && self.minutes < 60 && self.hours < 24
    }

    /// Advance the live counters by `n` seconds.
    ///
    /// PyBoy steps second by second unless `n` > 3600 and all counters are in range, in which
    /// case it uses a closed form whose day arithmetic is 16-bit. Both give the same result for
    /// in-range counters (the 16-bit day sum only differs after ~179 years in one step). We
    /// step only while some counter is out of range (at most ~8 hours of steps), then use the
    /// closed form, keeping PyBoy's 16-bit day sum exactly where PyBoy would use it.
    fn advance_seconds(&mut self, n: u64) {
        let pyboy_closed_form = n > 3600 && self.counters_valid();
        let mut left = n;
        while left != 0 && !self.counters_valid() {
            self.step_one_second();
            left -= 1;
        }
        if left == 0 {
            return;
        }
        let total =
            self.hours as u64 * 3600 + self.minutes as u64 * 60 + self.seconds as u64 + left;
        let days = total / 86_400;
        let in_day = total % 86_400;
        self.hours = (in_day / 3600) as u8;
        self.minutes = (in_day / 60 % 60) as u8;
        self.seconds = (in_day % 60) as u8;
        let day = self.day() as u64;
        let sum = if pyboy_closed_form {
            (day + days) & 0xFFFF // PyBoy keeps this sum in a uint16_t
        } else {
            day + days
        };
        if sum > 0x1FF {
            self.day_carry = true;
        }
        self.set_day((sum & 0x1FF) as u16);
    }

    /// One second of the counter chain, out-of-range values included.
    pub(super) fn step_one_second(&mut self) {
        let (old_s, old_m, old_h) = (self.seconds, self.minutes, self.hours);
        // Each register counts to its bit-width maximum and wraps; a carry only leaves a
        // register that passes from its nominal last value (59, 59, 23).
        self.seconds = if old_s == 59 || old_s == 0x3F {
            0
        } else {
            old_s + 1
        };
        if old_s != 59 {
            return;
        }
        self.minutes = if old_m == 59 || old_m == 0x3F {
            0
        } else {
            old_m + 1
        };
        if old_m != 59 {
            return;
        }
        self.hours = if old_h == 23 || old_h == 0x1F {
            0
        } else {
            old_h + 1
        };
        if old_h != 23 {
            return;
        }
        let day = self.day() + 1;
        if day > 0x1FF {
            self.day_carry = true;
            self.set_day(0);
        } else {
            self.set_day(day);
        }
    }

    #[inline]
    fn day(&self) -> u16 {
        ((self.day_high as u16 & 1) << 8) | self.day_low as u16
    }

    #[inline]
    fn set_day(&mut self, day: u16) {
        self.day_low = day as u8;
        self.day_high = ((day >> 8) & 1) as u8;
    }

    /// A write to 6000-7FFF (latch clock data).
    pub fn write_latch(&mut self, value: u8) {
        match value {
            0x00 => self.latch_armed = false,
            0x01 => {
                if !self.latch_armed && self.locked {
                    self.latched = [0; 5];
                } else if !self.latch_armed {
                    self.latched = [
                        self.seconds & 0x3F,
                        self.minutes & 0x3F,
                        self.hours & 0x1F,
                        self.day_low,
                        self.day_high & 1,
                    ];
                }
                self.latch_armed = true;
            }
            _ => {}
        }
    }

    /// Lock or unlock the clock (PyBoy's `rtc_lock_experimental`).
    pub fn set_locked(&mut self, locked: bool) {
        self.locked = locked;
    }

    /// Read RTC register 0x08-0x0C (other numbers read 0).
    #[inline]
    pub fn read_register(&self, reg: u16) -> u8 {
        match reg {
            0x08..=0x0B => self.latched[(reg - 0x08) as usize],
            0x0C => {
                (self.latched[4] & 1) | ((self.halt as u8) << 6) | ((self.day_carry as u8) << 7)
            }
            _ => 0,
        }
    }

    /// Write RTC register 0x08-0x0C (live counters).
    pub fn write_register(&mut self, reg: u16, value: u8) {
        if self.locked {
            return;
        }
        match reg {
            0x08 => {
                self.seconds = value & 0x3F;
                self.sub_second = 0;
            }
            0x09 => self.minutes = value & 0x3F,
            0x0A => self.hours = value & 0x1F,
            0x0B => self.day_low = value,
            0x0C => {
                self.day_high = value & 1;
                self.halt = value & 0x40 != 0;
                self.day_carry = value & 0x80 != 0;
            }
            _ => {}
        }
    }

    /// Live counters as register values: [08, 09, 0A, 0B, 0C] (0C with halt and carry bits).
    pub fn live_registers(&self) -> [u8; 5] {
        [
            self.seconds,
            self.minutes,
            self.hours,
            self.day_low,
            self.day_high | ((self.halt as u8) << 6) | ((self.day_carry as u8) << 7),
        ]
    }

    /// Latched register values [08, 09, 0A, 0B, day bit 8].
    pub fn latched_registers(&self) -> [u8; 5] {
        self.latched
    }

    /// The 16-byte block a battery keeps, appended after the cartridge RAM in
    /// [`super::Cartridge::battery_ram`]:
    ///
    /// | offset | content                                                        |
    /// |--------|----------------------------------------------------------------|
    /// | 0..5   | live 08 seconds, 09 minutes, 0A hours, 0B day low, 0C (day bit 8 \| halt<<6 \| carry<<7) |
    /// | 5..10  | latched seconds, minutes, hours, day low, day bit 8            |
    /// | 10     | latch armed (1 if the last latch write was 0x01, else 0)       |
    /// | 11     | reserved, 0                                                    |
    /// | 12..16 | sub-second T-cycle count, u32 little-endian (< 4 194 304)      |
    ///
    /// No wall-clock timestamp is stored: the clock runs on emulated time only, so it does not
    /// advance while the emulator is not running.
    pub fn battery_bytes(&self) -> [u8; RTC_BATTERY_BYTES] {
        let mut b = [0u8; RTC_BATTERY_BYTES];
        b[0..5].copy_from_slice(&self.live_registers());
        b[5..10].copy_from_slice(&self.latched);
        b[10] = self.latch_armed as u8;
        b[12..16].copy_from_slice(&(self.sub_second as u32).to_le_bytes());
        b
    }

    /// Inverse of [`Rtc::battery_bytes`]. Register values are masked to their widths (as PyBoy
    /// masks an .rtc file); the emulated-time anchor (`last_now`) is kept.
    pub fn load_battery_bytes(&mut self, b: &[u8]) -> Result<(), CoreError> {
        if b.len() != RTC_BATTERY_BYTES {
            return Err(CoreError::CartridgeRam(format!(
                "RTC block must be {RTC_BATTERY_BYTES} bytes, got {}",
                b.len()
            )));
        }
        let sub = u32::from_le_bytes([b[12], b[13], b[14], b[15]]) as u64;
        if sub >= RTC_CYCLES_PER_SECOND || b[10] > 1 {
            return Err(CoreError::CartridgeRam(format!(
                "RTC block is corrupt (sub-second count {sub}, latch flag {})",
                b[10]
            )));
        }
        self.seconds = b[0] & 0x3F;
        self.minutes = b[1] & 0x3F;
        self.hours = b[2] & 0x1F;
        self.day_low = b[3];
        self.day_high = b[4] & 1;
        self.halt = b[4] & 0x40 != 0;
        self.day_carry = b[4] & 0x80 != 0;
        self.latched = [b[5] & 0x3F, b[6] & 0x3F, b[7] & 0x1F, b[8], b[9] & 1];
        self.latch_armed = b[10] == 1;
        self.sub_second = sub;
        Ok(())
    }

    pub fn save_state(&self, w: &mut StateWriter) {
        for v in self.live_registers() {
            w.u8(v);
        }
        for v in self.latched {
            w.u8(v);
        }
        w.bool(self.latch_armed);
        w.u64(self.sub_second);
        w.u64(self.last_now);
    }

    pub fn load_state(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        let mut live = [0u8; 5];
        for v in &mut live {
            *v = r.u8()?;
        }
        let mut latched = [0u8; 5];
        for v in &mut latched {
            *v = r.u8()?;
        }
        let latch_armed = r.bool()?;
        let sub_second = r.u64()?;
        let last_now = r.u64()?;
        let bad = live[0] > 0x3F
            || live[1] > 0x3F
            || live[2] > 0x1F
            || live[4] & 0x3E != 0
            || latched[0] > 0x3F
            || latched[1] > 0x3F
            || latched[2] > 0x1F
            || latched[4] > 1
            || sub_second >= RTC_CYCLES_PER_SECOND;
        if bad {
            return Err(CoreError::State(
                "cartridge RTC registers out of range".into(),
            ));
        }
        self.seconds = live[0];
        self.minutes = live[1];
        self.hours = live[2];
        self.day_low = live[3];
        self.day_high = live[4] & 1;
        self.halt = live[4] & 0x40 != 0;
        self.day_carry = live[4] & 0x80 != 0;
        self.latched = latched;
        self.latch_armed = latch_armed;
        self.sub_second = sub_second;
        self.last_now = last_now;
        Ok(())
    }
}
