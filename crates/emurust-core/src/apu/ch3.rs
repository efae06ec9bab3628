//! CH3: the wave channel (NR30-NR34) and its wave RAM (FF30-FF3F).

use super::common::{load_count, load_period, run_timer, Length};
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// CH3, the wave channel, with its 32 four-bit samples of wave RAM.
#[derive(Clone, Debug)]
pub(super) struct Wave {
    pub ram: [u8; 16],
    pub dac: bool,
    pub length_load: u8,
    pub level: u8,
    /// Right shift applied to samples, latched when NR32 is written (0 = mute is a shift
    /// by 4). Kept apart from `level` because before the first NR32 write it is 0.
    pub level_shift: u8,
    pub freq: u16,
    pub length: Length,
    pub on: bool,
    pub countdown: i64,
    /// T-cycles per sample: 2 * (2048 - freq).
    pub step_cycles: i64,
    /// Position 0-31 in wave RAM (two samples per byte, high nibble first).
    pub pos: u8,
    /// On DMG the CPU can reach wave RAM while CH3 plays only right when CH3 fetched a
    /// sample: true for the cycle of the fetch and the one after.
    pub fetch_window: bool,
    /// Game Boy Color hardware: wave RAM always reachable (at the current byte), no
    /// retrigger corruption, and the fields below.
    pub cgb: bool,
    /// CGB: silent until the first fetch after a fresh trigger.
    pub suppressed: bool,
    /// CGB: an active retrigger restarts at position 1 at the next fetch and keeps playing
    /// the old sample (`sample_pos`) until then.
    pub restart_pending: bool,
    pub sample_pos: u8,
}

impl Wave {
    pub fn new() -> Self {
        Wave {
            ram: [0xFF; 16],
            dac: false,
            length_load: 0,
            level: 0,
            level_shift: 0,
            freq: 0,
            length: Length {
                enabled: false,
                remaining: 256,
            },
            on: false,
            countdown: 0,
            step_cycles: 4,
            pos: 0,
            fetch_window: false,
            cgb: false,
            suppressed: false,
            restart_pending: false,
            sample_pos: 0,
        }
    }

    pub fn read(&self, reg: u8) -> u8 {
        match reg {
            0 => (self.dac as u8) << 7 | 0x7F,
            2 => self.level << 5 | 0x9F,
            4 => (self.length.enabled as u8) << 6 | 0xBF,
            _ => 0xFF,
        }
    }

    fn set_freq(&mut self, freq: u16) {
        self.freq = freq;
        self.step_cycles = 2 * (0x800 - freq as i64);
    }

    /// Register write (reg 0-4). Returns true when NR34's trigger bit asks for a restart.
    pub fn write(&mut self, reg: u8, v: u8) -> bool {
        match reg {
            0 => {
                self.dac = v & 0x80 != 0;
                if !self.dac {
                    self.on = false;
                    self.restart_pending = false;
                }
            }
            1 => {
                self.length_load = v;
                self.length.remaining = 256 - v as i64;
            }
            2 => {
                self.level = v >> 5 & 3;
                // Output level: 0 = mute, 1 = 100 %, 2 = 50 %, 3 = 25 %.
                self.level_shift = if self.level == 0 { 4 } else { self.level - 1 };
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
        if self.cgb {
            let was_on = self.on;
            self.on = self.dac;
            if self.length.remaining == 0 {
                self.length.remaining = 256;
            }
            self.countdown = self.step_cycles + 5;
            if was_on {
                self.sample_pos = self.pos;
                self.pos = 0;
                self.restart_pending = true;
            } else {
                self.pos = 0;
                self.sample_pos = 0;
                self.suppressed = true;
                self.restart_pending = false;
            }
            self.fetch_window = false;
            return;
        }
        if self.on && self.countdown == 1 {
            // DMG quirk: retriggering just as CH3 is about to fetch corrupts the first
            // bytes of wave RAM with the block being fetched.
            let next_byte = (self.pos as usize).div_ceil(2) & 0x0F;
            if next_byte < 4 {
                self.ram[0] = self.ram[next_byte];
            } else {
                let block = next_byte & 0x0C;
                for n in 0..4 {
                    self.ram[n] = self.ram[block + n];
                }
            }
        }
        self.on = self.dac;
        if self.length.remaining == 0 {
            self.length.remaining = 256;
        }
        // The first fetch comes three M-cycles plus the period later (here: 5 T-cycles).
        self.countdown = self.step_cycles + 5;
        self.pos = 0;
        self.fetch_window = false;
    }

    #[inline]
    pub fn advance(&mut self, cycles: u64) {
        if !self.on {
            return;
        }
        let (countdown, edges) = run_timer(self.countdown, cycles as i64, self.step_cycles);
        self.countdown = countdown;
        if edges > 0 {
            self.pos = ((self.pos as i64 + edges) & 31) as u8;
            // A fetch happened in this stretch; the CPU sees it only if it was at most one
            // cycle ago.
            self.fetch_window = self.countdown >= self.step_cycles - 1;
        } else {
            self.fetch_window = false;
        }
    }

    /// CGB: [`Wave::advance`] with the retrigger and silence rules.
    pub fn advance_cgb(&mut self, cycles: u64) {
        if !self.on {
            return;
        }
        let (countdown, edges) = run_timer(self.countdown, cycles as i64, self.step_cycles);
        self.countdown = countdown;
        if edges > 0 {
            self.suppressed = false;
            if self.restart_pending {
                self.restart_pending = false;
                self.pos = (edges & 31) as u8;
            } else {
                self.pos = ((self.pos as i64 + edges) & 31) as u8;
            }
            self.sample_pos = self.pos;
        }
    }

    pub fn ram_read(&self, index: usize) -> u8 {
        if self.on && self.cgb {
            return self.ram[self.pos as usize / 2];
        }
        if !self.on {
            self.ram[index]
        } else if self.fetch_window {
            self.ram[self.pos as usize / 2]
        } else {
            0xFF
        }
    }

    pub fn ram_write(&mut self, index: usize, v: u8) {
        if self.on && self.cgb {
            self.ram[self.pos as usize / 2] = v;
            return;
        }
        if !self.on {
            self.ram[index] = v;
        } else if self.fetch_window {
            self.ram[self.pos as usize / 2] = v;
        }
    }

    pub fn sample(&self) -> i64 {
        if !(self.on && self.dac) || self.suppressed {
            return 0;
        }
        let pos = if self.cgb { self.sample_pos } else { self.pos };
        let byte = self.ram[pos as usize / 2];
        let nibble = if pos & 1 == 0 { byte >> 4 } else { byte & 0x0F };
        (nibble >> self.level_shift) as i64
    }

    pub fn save(&self, w: &mut StateWriter) {
        w.bytes(&self.ram);
        w.bool(self.dac);
        w.u8(self.length_load);
        w.u8(self.level);
        w.u8(self.level_shift);
        w.u16(self.freq);
        w.i64(self.step_cycles);
        self.length.save(w);
        w.bool(self.on);
        w.i64(self.countdown);
        w.u8(self.pos);
        w.bool(self.fetch_window);
    }

    pub fn load(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.ram.copy_from_slice(r.bytes_exact(16)?);
        self.dac = r.bool()?;
        self.length_load = r.u8()?;
        self.level = r.u8()? & 3;
        self.level_shift = r.u8()?.min(4);
        self.freq = r.u16()? & 0x7FF;
        self.step_cycles = load_period(r)?;
        self.length.load(r)?;
        self.on = r.bool()?;
        self.countdown = load_count(r, "timer countdown")?;
        self.pos = r.u8()? & 31;
        self.fetch_window = r.bool()?;
        Ok(())
    }
}
