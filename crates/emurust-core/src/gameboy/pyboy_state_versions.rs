//! Older PyBoy save-state format versions (0 to 28), as PyBoy 2.8.1 still loads them.
//!
//! PyBoy's format grew one field at a time; its loader reads each version's fields and leaves
//! whatever a version does not contain as it was in the running emulator it loads into. We do
//! the same in one pass over the old state: [`GameBoy::upgrade_pyboy_state`] reads the old
//! layout, version by version, and writes the current (version 29) layout, taking every field
//! the old version lacks from this running machine (its own version 29 state), or, where
//! PyBoy's loader sets a field to a fixed or derived value instead, that value. The result
//! then goes through the version 29 reader.
//!
//! What each version adds (PyBoy keeps the running value where a version lacks a field,
//! except where a value is given):
//!
//! | from | fields |
//! |------|--------|
//! | 2    | the version byte (0-1: the first byte is the boot ROM flag); renderer: per-line parameters (ignored: 4 bytes a line, 5 from 4) |
//! | 3    | MBC1 bank registers (else derived from the ROM bank; the RAM bank is set to the upper register) |
//! | 5    | STAT, LY, LYC; IE in the CPU (before: one byte after the RAM section); the timer |
//! | 6    | the screen (RGBA per pixel) |
//! | 7    | the joypad (else all buttons released) |
//! | 8    | KEY1, double speed, CGB flag, HDMA (CGB); CPU "interrupt queued" and IF; LCD: CGB flag, speed shift, clocks, next mode, transition, colour-mode block |
//! | 10   | the screen's per-pixel attributes |
//! | 11   | per-line parameters in the LCD section (before: discarded from the renderer's) |
//! | 12   | CPU cycle count; LCD and timer "last cycles" |
//! | 13   | LCD frame-done, first-frame, reset flags; timer interrupt distance; sound: its two clocks and the channels |
//! | 14   | the full sound unit (sample buffer, frame sequencer, panning, NR50) |
//! | 15   | the serial port |
//! | 16   | KEY0; the LCD's object priority mode (before: the FF6C byte of 0x34 bytes after the RAM section, whose FF70 byte is the WRAM bank) |
//! | 17   | LCD "downgraded to DMG" flag |
//! | 18   | the renderer's window flag |
//! | 19   | CPU EI delay (else 0); OAM DMA (else idle) |
//! | 20   | timer reload phase (else 0) |
//! | 21   | the full clock (RTC) block; older ones need the wall clock: refused here |
//! | 22   | sound "power on after DIV write" (else off) |
//! | 23   | pulse sample suppression and pending duty (else none); Super Game Boy block |
//! | 24   | CH3 pending restart (else none) |
//! | 25   | CH3 sample position (else the fetch position) |
//! | 26   | CH4 divider counter (else 0, countdown half the divisor, running if on) |
//! | 27   | CH1 delayed sweep calculation (else 0) |
//! | 28   | CH1 sweep restart hold (else 0) |
//!
//! Stored beside what they derive from, and shown as stored: PyBoy keeps a few values twice,
//! and older releases wrote them differently. The timer's DIV byte (from version 5) is read
//! back as stored, not as the counter's upper byte (old releases kept DIV apart from a
//! sub-counter): PyBoy shows it until the timer next advances or DIV is written. The object
//! priority mode (the FF6C byte before version 16, 0 in old DMG states) is kept on a DMG too,
//! unused, and saved again. The core holds both as loaded (`Timer::div_shown`, `cgb.opri`).
//!
//! The version 29 readers take the version too, for what a byte-level rewrite cannot say:
//! fields PyBoy leaves as its running instance has them *after* an earlier part of the load
//! changed them (the LCDC write switching the LCD on or off) are not assigned; sound before
//! version 13 is not read at all (versions 8 to 12 contain none either), the machine keeps its
//! sound unit as it is; the serial port before version 15 is kept and catches up from its own
//! last cycle.
//!
//! Kept and loaded fields can disagree, and PyBoy runs on from what it has. Versions 5 to 7
//! hold STAT and LY but not the LCD's clocks and next mode: over a machine at the end of its
//! frame (line 0, mode 3 next) an old state saved in VBlank (PokemonRedExperiments': LY 145)
//! makes the LCD enter mode 3, then mode 0, on that line. PyBoy records a mode-0 line in a
//! 144-line table without a check, so line 144 and on land on the LCD fields after it: its
//! last-tick cycle (lines 144-145), distances, colour flags and speed shift, then VRAM bank 1
//! (from line 151). The core follows that (`Lcd::record_line_past_table`, the colour flags and
//! speed shift aside) and the scheduler's turns that come of it (`GameBoy::turn_budget`).

use super::GameBoy;
use crate::apu::pyboy_state::pyboy_sound_section_len;
use crate::lcd::{PYBOY_LCD_CGB_EXTRA_LEN, SCREEN_H, SCREEN_W};
use crate::CoreError;

use super::pyboy_state::PYBOY_STATE_VERSION;

fn err(msg: String) -> CoreError {
    CoreError::State(msg)
}

/// Reads the old state while walking the running machine's current state alongside.
struct Upgrade<'a> {
    version: u8,
    old: &'a [u8],
    o: usize,
    cur: &'a [u8],
    c: usize,
    out: Vec<u8>,
}

impl<'a> Upgrade<'a> {
    fn old_bytes(&mut self, n: usize) -> Result<&'a [u8], CoreError> {
        let Some(b) = self.old.get(self.o..self.o + n) else {
            return Err(err(format!(
                "truncated PyBoy state (format version {}): {} bytes, more expected; saved with \
                 another ROM or another PyBoy version?",
                self.version,
                self.old.len()
            )));
        };
        self.o += n;
        Ok(b)
    }
    fn old_u8(&mut self) -> Result<u8, CoreError> {
        Ok(self.old_bytes(1)?[0])
    }
    fn cur_at(&self, n: usize) -> &'a [u8] {
        &self.cur[self.c..self.c + n]
    }
    /// `n` bytes from the old state.
    fn take(&mut self, n: usize) -> Result<(), CoreError> {
        let b = self.old_bytes(n)?;
        self.out.extend_from_slice(b);
        self.c += n;
        Ok(())
    }
    /// `n` bytes from the running machine.
    fn keep(&mut self, n: usize) {
        self.out.extend_from_slice(&self.cur[self.c..self.c + n]);
        self.c += n;
    }
    /// A given value for a field of the running machine's length.
    fn put(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
        self.c += b.len();
    }
    fn skip_old(&mut self, n: usize) -> Result<(), CoreError> {
        self.old_bytes(n).map(|_| ())
    }
    /// Whether the state has the fields added in version `v`.
    fn has(&self, v: u8) -> bool {
        self.version >= v
    }
    /// Fields added in version `v`: taken from the state if it has them, else kept.
    fn take_or_keep(&mut self, v: u8, n: usize) -> Result<(), CoreError> {
        if self.has(v) {
            self.take(n)
        } else {
            self.keep(n);
            Ok(())
        }
    }
    /// Fields added in version `v`: taken from the state if it has them, else `default`.
    fn take_or(&mut self, v: u8, default: &[u8]) -> Result<(), CoreError> {
        if self.has(v) {
            self.take(default.len())
        } else {
            self.put(default);
            Ok(())
        }
    }
}

const PULSE_BASE_LEN: usize = 57;

impl GameBoy {
    /// Rewrite a PyBoy state of format version 0 to 28 in version 29's layout, as PyBoy 2.8.1
    /// loads it into this running machine.
    pub(super) fn upgrade_pyboy_state(&self, data: &[u8]) -> Result<Vec<u8>, CoreError> {
        let version = data[0].min(PYBOY_STATE_VERSION);
        debug_assert!(version < PYBOY_STATE_VERSION);
        let cur = self.save_pyboy_state();
        let mut u = Upgrade {
            version,
            old: data,
            o: 0,
            cur: &cur,
            c: 0,
            out: Vec::with_capacity(cur.len()),
        };
        let cgb_hw = self.bus.cgb;

        // Header: version (none before 2: the first byte is the boot ROM flag), boot ROM.
        u.put(&[PYBOY_STATE_VERSION]);
        if u.has(2) {
            u.skip_old(1)?;
        }
        u.take(1)?;
        u.take_or_keep(16, 1)?; // KEY0
        u.take_or_keep(8, 3)?; // KEY1, double speed, CGB hardware
        if cgb_hw {
            u.take_or_keep(8, 10)?; // HDMA
        }

        // CPU.
        u.take(12 + 1)?; // registers, IME
        u.take_or(19, &[0])?; // EI delay
        u.take(2)?; // halted, stopped
        let ie_at = u.out.len();
        if u.has(5) {
            u.take(1)?;
        } else {
            u.put(&[0]); // IE: after the RAM section
        }
        u.take_or_keep(8, 2)?; // interrupt queued, IF
        u.take_or_keep(12, 8)?; // cycles
        u.take_or(19, &[0; 12])?; // OAM DMA: idle

        // LCD.
        u.take(0x2000 + 0xA0 + 4)?; // VRAM, OAM, LCDC, BGP, OBP0, OBP1
        u.take_or_keep(5, 3)?; // STAT, LY, LYC
        u.take(4)?; // SCY, SCX, WY, WX
        let opri_at = u.out.len();
        u.take_or_keep(16, 1)?; // object priority mode (before 16: patched below)
        u.take_or_keep(11, SCREEN_H * 5)?; // per-line parameters
        let cur_colour = u.cur_at(1)[0] != 0;
        let colour = if u.has(8) {
            let cgb = u.old_u8()?;
            u.put(&[cgb]);
            u.take_or_keep(17, 1)?; // downgraded to DMG
            u.take(1)?; // speed shift
            u.take_or_keep(13, 3)?; // frame done, first frame, reset
            u.take_or_keep(12, 8)?; // last cycles
            u.take(8 + 8 + 1 + 1)?; // clock, target, next mode, transition
            cgb != 0
        } else {
            u.keep(3 + 3 + 8 + 8 + 8 + 1 + 1);
            cur_colour
        };
        if colour != cur_colour {
            return Err(err(format!(
                "this PyBoy state (format version {version}) is {} mode, this emulator runs {} \
                 mode",
                if colour { "in colour" } else { "not in colour" },
                if cur_colour { "colour" } else { "DMG" }
            )));
        }
        if colour {
            u.take_or_keep(8, PYBOY_LCD_CGB_EXTRA_LEN)?;
        }

        // Sound.
        let sound_len = pyboy_sound_section_len(self.bus.apu.options());
        if !u.has(13) {
            u.keep(sound_len);
        } else {
            let buffer = self.bus.apu.options().sample_buffer_len();
            if version == 13 {
                u.keep(8 + 8 + 8 + buffer + 1 + 8 + 8 + 8);
                let last = u.old_bytes(8)?;
                let cycles = u.old_bytes(8)?;
                u.put(cycles);
                u.put(last);
                u.keep(8 + 8 + 1 + 1 + 1 + 8 + 1);
            } else {
                u.take(8)?; // buffer head
                let saved = u.old_bytes(8)?;
                if saved != u.cur_at(8) {
                    return Err(err(format!(
                        "the PyBoy state was saved at another sound sample rate ({} samples per \
                         frame; this emulator makes {} per frame): create the emulator with \
                         the PyBoy's sound_sample_rate",
                        u64::from_le_bytes(saved.try_into().unwrap()),
                        u64::from_le_bytes(u.cur_at(8).try_into().unwrap())
                    )));
                }
                u.put(saved);
                u.take(8 + buffer + 1 + 8 * 7)?;
                u.take_or(22, &[0])?; // power on after DIV write
                u.take(1 + 1 + 8 + 1)?;
            }
            // CH1 and CH2.
            for sweep in [true, false] {
                let duty = u.old.get(u.o).copied().unwrap_or(0);
                u.take(PULSE_BASE_LEN)?;
                u.take_or(23, &[0, duty, 0])?;
                if sweep {
                    u.take(3 + 8 + 8)?;
                    u.take_or(27, &[0; 8])?;
                    u.take_or(28, &[0; 8])?;
                    u.take(1 + 1 + 8)?;
                }
            }
            // CH3.
            let base = u.o;
            u.take(16 + 1 + 1 + 1 + 2 + 1 + 1 + 8 * 4 + 1 + 8 + 1)?;
            let position = &data[base + 47..base + 55];
            u.take_or(24, &[0])?;
            if version == 24 && u.out[u.out.len() - 1] != 0 {
                return Err(err(
                    "PyBoy state format version 24 with CH3 restarting: PyBoy 2.8.1 cannot load \
                     it either"
                        .into(),
                ));
            }
            u.take_or(25, position)?;
            // CH4.
            let base = u.o;
            u.take(8 + 1 + 8 * 7)?;
            let (divisor, on) = (data[base + 6] as usize, data[base + 8] != 0);
            const DIVISORS: [i64; 8] = [8, 16, 32, 48, 64, 80, 96, 112];
            let mut counter = [0u8; 25];
            counter[8..16].copy_from_slice(&(DIVISORS[divisor & 7] >> 1).to_le_bytes());
            counter[24] = on as u8;
            u.take_or(26, &counter)?;
        }

        // Renderer.
        if (2..11).contains(&version) {
            u.skip_old(SCREEN_H * if version > 3 { 5 } else { 4 })?;
        }
        if u.has(10) {
            u.take(SCREEN_W * SCREEN_H * 5)?;
        } else if u.has(6) {
            for _ in 0..SCREEN_W * SCREEN_H {
                u.take(4)?;
                u.keep(1); // attributes
            }
        } else {
            u.keep(SCREEN_W * SCREEN_H * 5);
        }
        u.take_or_keep(18, 1)?; // window flag

        // RAM: WRAM, FEA0-FEFF, FF00-FF4B, HRAM; then the WRAM bank.
        u.take(if cgb_hw { 0x8000 } else { 0x2000 } + 0x60 + 0x4C + 0x7F)?;
        if u.has(16) {
            u.take(1)?;
        } else {
            // FF4C-FF7F: FF6C is the object priority mode, FF70 the WRAM bank.
            let block = u.old_bytes(0x34)?;
            u.out[opri_at] = block[0x20];
            u.put(&[block[0x24]]);
        }
        if !u.has(5) {
            u.out[ie_at] = u.old_u8()?;
        }

        // Timer.
        if u.has(5) {
            u.take(8)?;
            u.take_or(20, &[0])?; // reload phase
            u.take_or_keep(12, 8)?; // last cycles
            u.take_or_keep(13, 8)?; // interrupt distance
        } else {
            u.keep(crate::timer::pyboy_state::PYBOY_TIMER_SECTION_LEN);
        }

        // Cartridge.
        let cart = &self.bus.cart;
        let (base_len, has_rtc, mbc1) = cart.pyboy_common_layout();
        if has_rtc && !u.has(21) {
            return Err(err(format!(
                "PyBoy state format version {version} of a cartridge with a clock: its clock \
                 block (before version 21) depends on the wall-clock time; not supported"
            )));
        }
        let cart_at = u.out.len();
        u.take(base_len)?;
        let extra = cart.pyboy_section_len() - base_len;
        if mbc1 && !u.has(3) {
            // MBC1 registers from the ROM bank; the RAM bank follows the upper register.
            let bank = u.out[cart_at];
            let upper = (bank & 0x60) >> 5;
            u.put(&[bank & 0x1F, upper]);
            u.out[cart_at + 1] = upper;
        } else {
            u.take(extra)?;
        }

        u.take_or(7, &[0x0F, 0x0F])?; // joypad: released
        u.take_or_keep(15, crate::serial::pyboy_state::PYBOY_SERIAL_SECTION_LEN)?;
        u.take_or_keep(23, cur.len() - u.c)?; // Super Game Boy
        debug_assert_eq!(u.c, cur.len());
        if u.o != data.len() {
            return Err(err(format!(
                "{} unexpected bytes at the end of the PyBoy state (format version {version}): \
                 saved with another ROM, or another PyBoy version?",
                data.len() - u.o
            )));
        }
        Ok(u.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    // The DMG program that changes everything a state holds (sound, timer, OAM DMA, WRAM and
    // cartridge RAM), shared with pyboy_state.rs's tests.
    use crate::gameboy::pyboy_state::tests::test_rom;
    use crate::lcd::{PYBOY_LCD_SECTION_LEN, PYBOY_RENDERER_SECTION_LEN};

    /// A version 29 DMG state of `gb` in version 7's layout (what PyBoy 2.8.1 reads for 7).
    fn to_version_7(gb: &GameBoy, s: &[u8]) -> Vec<u8> {
        let sound = pyboy_sound_section_len(gb.bus.apu.options());
        let lcd = 45;
        let renderer = lcd + PYBOY_LCD_SECTION_LEN + sound;
        let ram = renderer + PYBOY_RENDERER_SECTION_LEN;
        let ram_len = 0x2000 + 0x60 + 0x4C + 0x7F;
        let timer = ram + ram_len + 1;
        let cart = timer + 25;
        let joypad = s.len() - 36 - (7 + 4 + 0x2000 + 0x800 + 0x80) - 2;
        let mut o = vec![7, s[1]];
        o.extend_from_slice(&s[6..6 + 13]); // registers, IME
        o.extend_from_slice(&s[20..23]); // halted, stopped, IE
        o.extend_from_slice(&s[lcd..lcd + 0x2000 + 0xA0 + 4 + 3 + 4]);
        let params = lcd + 0x2000 + 0xA0 + 4 + 3 + 4 + 1;
        o.extend_from_slice(&s[params..params + SCREEN_H * 5]); // the renderer's, discarded
        for i in 0..SCREEN_W * SCREEN_H {
            o.extend_from_slice(&s[renderer + i * 5..renderer + i * 5 + 4]);
        }
        o.extend_from_slice(&s[ram..ram + ram_len]);
        let mut block = [0u8; 0x34];
        block[0x24] = s[ram + ram_len];
        o.extend_from_slice(&block);
        o.extend_from_slice(&s[timer..timer + 8]);
        o.extend_from_slice(&s[cart..joypad + 2]); // cartridge, joypad
        o
    }

    #[test]
    fn version_7_keeps_what_it_lacks_from_the_running_machine() {
        let mut src = GameBoy::new(test_rom(), None).unwrap();
        src.tick(30, true, true);
        let s29 = src.save_pyboy_state();
        let old = to_version_7(&src, &s29);
        let mut gb = GameBoy::new(test_rom(), None).unwrap();
        gb.tick(12, true, true);
        let before = gb.save_pyboy_state();
        gb.load_pyboy_state(&old).unwrap();
        let after = gb.save_pyboy_state();
        let sound = pyboy_sound_section_len(gb.bus.apu.options());
        let renderer = 45 + PYBOY_LCD_SECTION_LEN + sound;
        let ram = renderer + PYBOY_RENDERER_SECTION_LEN;
        let serial = s29.len() - (7 + 4 + 0x2000 + 0x800 + 0x80) - 36;
        let lcd_clocks = 45 + 0x2000 + 0xA0 + 4 + 3 + 4 + 1 + SCREEN_H * 5 + 3 + 3;
        // From the state: registers, VRAM/OAM/video registers, the screen, memory, timer and
        // cartridge (up to the joypad).
        assert_eq!(after[6..6 + 13], s29[6..6 + 13]);
        assert_eq!(
            after[45..45 + 0x2000 + 0xA0 + 11],
            s29[45..45 + 0x2000 + 0xA0 + 11]
        );
        for i in 0..SCREEN_W * SCREEN_H {
            let p = renderer + i * 5;
            assert_eq!(after[p..p + 4], s29[p..p + 4]);
        }
        let timer = ram + 0x2000 + 0x60 + 0x4C + 0x7F + 1;
        assert_eq!(after[ram..timer + 8], s29[ram..timer + 8]);
        assert_eq!(after[timer + 25..serial - 2], s29[timer + 25..serial - 2]);
        // The timer's catch-up bookkeeping (before version 12 and 13) is the running one's.
        assert_eq!(after[timer + 9..timer + 25], before[timer + 9..timer + 25]);
        // Kept from the running machine: the cycle count (before version 12), the LCD clocks
        // (before 8), the sound unit (before 13), the serial port (before 15).
        assert_ne!(before[25..33], s29[25..33]);
        assert_eq!(after[25..33], before[25..33]);
        assert_eq!(
            after[lcd_clocks..lcd_clocks + 24],
            before[lcd_clocks..lcd_clocks + 24]
        );
        let snd = 45 + PYBOY_LCD_SECTION_LEN;
        assert_eq!(after[snd..snd + sound], before[snd..snd + sound]);
        assert_eq!(after[serial..serial + 36], before[serial..serial + 36]);
        // Given by the version: EI delay 0, OAM DMA idle (the program runs one).
        assert_eq!(after[19], 0);
        assert_eq!(after[33..45], [0; 12]);
        // Then it runs on, and saves as version 29.
        gb.tick(30, true, true);
        assert_eq!(gb.save_pyboy_state()[0], PYBOY_STATE_VERSION);
    }

    /// A version 7 state whose line (LY 144-200, in VBlank) disagrees with the running
    /// machine's LCD sequencing (line 0, mode 3 next), as PokemonRedExperiments' are: the
    /// machine runs on through the record past line 143 (in a debug build: no overflow, the
    /// scheduler's checks hold), with and without sound.
    #[test]
    fn version_7_in_vblank_over_a_running_machine_runs_on() {
        let mut src = GameBoy::new(test_rom(), None).unwrap();
        src.tick(30, true, true);
        let mut old = to_version_7(&src, &src.save_pyboy_state());
        let stat_at = 2 + 16 + 0x2000 + 0xA0 + 4;
        for ly in [144, 145, 147, 151, 200] {
            for sound in [true, false] {
                old[stat_at] = (old[stat_at] & 0xF8) | 1;
                old[stat_at + 1] = ly;
                let mut gb = GameBoy::new(test_rom(), None).unwrap();
                gb.tick(12, true, sound);
                gb.load_pyboy_state(&old).unwrap();
                gb.tick(1, false, sound);
                gb.tick(8, true, sound);
                assert_eq!(gb.bus.lcd.ly(), 0);
            }
        }
    }

    #[test]
    fn bad_versions_and_lengths_are_refused_unchanged() {
        let mut src = GameBoy::new(test_rom(), None).unwrap();
        src.tick(10, true, true);
        let s29 = src.save_pyboy_state();
        let old = to_version_7(&src, &s29);
        let mut gb = GameBoy::new(test_rom(), None).unwrap();
        gb.tick(3, true, true);
        let before = gb.save_state();
        let mut newer = s29.clone();
        newer[0] = 30;
        let cases = [
            (newer, "newer PyBoy"),
            (old[..old.len() - 1].to_vec(), "truncated"),
            ([old.as_slice(), &[0]].concat(), "unexpected bytes"),
            (s29[..100].iter().map(|_| 7).collect(), "truncated"),
        ];
        for (bad, what) in cases {
            let e = gb.load_pyboy_state(&bad).unwrap_err().to_string();
            assert!(e.contains(what), "{e}");
            assert_eq!(gb.save_state(), before);
        }
        gb.load_pyboy_state(&old).unwrap();
    }

    /// Versions 0 and 1 have no version byte: the first byte is the boot ROM flag.
    #[test]
    fn versions_0_and_1_start_with_the_boot_flag() {
        let mut src = GameBoy::new(test_rom(), None).unwrap();
        src.tick(10, true, true);
        let s29 = src.save_pyboy_state();
        let v7 = to_version_7(&src, &s29);
        // Version 0: no version byte; before 2 the renderer has no line parameters, before 5
        // no STAT/LY/LYC or timer (IE after the RAM), before 6 no screen, before 7 no joypad.
        let mut v0 = vec![v7[1]];
        v0.extend_from_slice(&v7[2..2 + 15]); // registers, IME, halted, stopped
        let ie = v7[2 + 15];
        let lcd = 2 + 16;
        v0.extend_from_slice(&v7[lcd..lcd + 0x2000 + 0xA0 + 4]);
        v0.extend_from_slice(&v7[lcd + 0x2000 + 0xA0 + 4 + 3..lcd + 0x2000 + 0xA0 + 4 + 7]);
        let ram = lcd + 0x2000 + 0xA0 + 4 + 7 + SCREEN_H * 5 + SCREEN_W * SCREEN_H * 4;
        let ram_len = 0x2000 + 0x60 + 0x4C + 0x7F + 0x34;
        v0.extend_from_slice(&v7[ram..ram + ram_len]);
        v0.push(ie);
        let cart = ram + ram_len + 8;
        v0.extend_from_slice(&v7[cart..v7.len() - 4]); // no joypad; MBC1 registers from 3
        let mut gb = GameBoy::new(test_rom(), None).unwrap();
        gb.tick(10, true, true);
        gb.load_pyboy_state(&v0).unwrap();
        assert_eq!(gb.cpu.r.pc, src.cpu.r.pc);
        assert_eq!(gb.bus.ie_reg, src.bus.ie_reg);
        assert_eq!(gb.bus.joypad.pressed(), 0); // released
    }
}
