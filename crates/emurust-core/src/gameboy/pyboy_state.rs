//! Exchanging save states with PyBoy 2.8.1 (its format version 29, DMG, non-CGB cartridges).
//!
//! A PyBoy state is the concatenation of its components' sections, in its Motherboard's order:
//!
//! | section      | bytes          | here                                                  |
//! |--------------|----------------|-------------------------------------------------------|
//! | header       | 6              | version 29, boot ROM mapped, KEY0, KEY1, double speed, CGB (all CGB fields 0) |
//! | CPU          | 27             | A F B C D E, HL SP PC (16-bit), IME, EI delay, halted, stopped, IE, "interrupt queued", IF, cycles (64-bit) |
//! | OAM DMA      | 12             | active, reading, source page, bytes copied, start cycle |
//! | LCD          | [`PYBOY_LCD_SECTION_LEN`] | [`Lcd::load_pyboy_lcd`]                    |
//! | sound        | [`pyboy_sound_section_len`] | [`Apu::load_pyboy`]                      |
//! | renderer     | [`PYBOY_RENDERER_SECTION_LEN`] | the screen, [`Lcd::load_pyboy_renderer`] |
//! | RAM          | 8491           | WRAM, FEA0-FEFF, FF00-FF4B (P1 and unused registers), HRAM |
//! | WRAM bank    | 1              | CGB only, 0                                           |
//! | timer        | [`PYBOY_TIMER_SECTION_LEN`] | [`Timer::load_pyboy`]                    |
//! | cartridge    | per cartridge  | [`Cartridge::load_pyboy`](crate::cartridge::Cartridge::load_pyboy) |
//! | joypad       | 2              | [`Joypad::load_pyboy`]                                |
//! | serial       | [`PYBOY_SERIAL_SECTION_LEN`] | [`Serial::load_pyboy`]                  |
//! | Super GB     | 10379          | not emulated: skipped on load, PyBoy's defaults on save |
//!
//! Integers are little-endian, as PyBoy's `write_16bit`/`write_64bit` write them; its doubles
//! are the machine's (little-endian on every platform PyBoy ships for).
//!
//! Loading makes this machine continue exactly as a freshly created PyBoy does after
//! `load_state`. What PyBoy does not save takes the value such a PyBoy has: the "halted right
//! after EI" flag is clear, nothing is locked, the clock's latch is empty, the bank mapped at
//! 0000-3FFF is bank 0 (see the cartridge section), the LCD's unsaved fields are those of a
//! powered-on LCD. The frame counter and the serial output log are ours and are kept.
//! On any error the machine is unchanged.

use super::{Decoded, GameBoy, SystemBus};
use crate::apu::pyboy_state::pyboy_sound_section_len;
use crate::apu::Apu;
use crate::cpu::{Cpu, Registers};
use crate::joypad::pyboy_state::PYBOY_JOYPAD_SECTION_LEN;
use crate::joypad::Joypad;
use crate::lcd::Lcd;
use crate::lcd::{PYBOY_LCD_SECTION_LEN, PYBOY_RENDERER_SECTION_LEN};
use crate::serial::pyboy_state::PYBOY_SERIAL_SECTION_LEN;
use crate::serial::Serial;
use crate::state::{StateReader, StateWriter};
use crate::timer::pyboy_state::PYBOY_TIMER_SECTION_LEN;
use crate::timer::Timer;
use crate::CoreError;

/// The PyBoy save-state format version we read and write (PyBoy 2.8.x).
pub const PYBOY_STATE_VERSION: u8 = 29;

const HEADER_LEN: usize = 6;
const CPU_LEN: usize = 27;
const DMA_LEN: usize = 12;
const WRAM_LEN: usize = 0x2000;
const UNUSABLE_LEN: usize = 0x60;
const IO_LEN: usize = 0x4C;
const HRAM_LEN: usize = 0x7F;
const RAM_LEN: usize = WRAM_LEN + UNUSABLE_LEN + IO_LEN + HRAM_LEN;
/// Super Game Boy: 7 flags and counters, 4 joypad bytes, border tiles, map and palettes.
const SGB_LEN: usize = 7 + 4 + 0x2000 + 0x800 + 0x80;

fn state_err(msg: impl Into<String>) -> CoreError {
    CoreError::State(msg.into())
}

fn flag(r: &mut StateReader) -> Result<bool, CoreError> {
    Ok(r.u8()? != 0)
}

fn read_into(r: &mut StateReader, dst: &mut [u8]) -> Result<(), CoreError> {
    for b in dst.iter_mut() {
        *b = r.u8()?;
    }
    Ok(())
}

impl GameBoy {
    /// Byte length of a PyBoy 2.8.1 state of this cartridge.
    pub fn pyboy_state_len(&self) -> usize {
        HEADER_LEN
            + CPU_LEN
            + DMA_LEN
            + PYBOY_LCD_SECTION_LEN
            + pyboy_sound_section_len(self.bus.apu.options())
            + PYBOY_RENDERER_SECTION_LEN
            + RAM_LEN
            + 1
            + PYBOY_TIMER_SECTION_LEN
            + self.bus.cart.pyboy_section_len()
            + PYBOY_JOYPAD_SECTION_LEN
            + PYBOY_SERIAL_SECTION_LEN
            + SGB_LEN
    }

    /// The machine as a PyBoy 2.8.1 save state (what `PyBoy.save_state` writes), which
    /// `PyBoy.load_state` accepts for the same ROM.
    pub fn save_pyboy_state(&self) -> Vec<u8> {
        let mut w = StateWriter::new();
        w.buf.reserve(self.pyboy_state_len());
        let b = &self.bus;
        w.u8(PYBOY_STATE_VERSION);
        w.bool(b.boot_rom_mapped);
        for _ in 0..4 {
            w.u8(0); // KEY0, KEY1, double speed, CGB
        }
        let r = &self.cpu.r;
        for v in [r.a, r.f, r.b, r.c, r.d, r.e] {
            w.u8(v);
        }
        w.u16(u16::from_be_bytes([r.h, r.l]));
        w.u16(r.sp);
        w.u16(r.pc);
        w.bool(self.cpu.ime);
        w.u8(self.cpu.ei_delay);
        w.bool(self.cpu.halted);
        w.bool(self.cpu.stopped);
        w.u8(b.ie_reg);
        w.u8(0); // interrupt queued: only ever set inside PyBoy's CPU slice
        w.u8(b.if_reg);
        w.u64(b.cycles);
        w.bool(b.dma.active);
        w.bool(false); // DMA reading: only inside a copy
        w.u8(b.dma.source);
        w.u8(b.dma.index);
        w.u64(b.dma.start);
        b.lcd.save_pyboy_lcd(&mut w);
        b.apu.save_pyboy(&mut w);
        b.lcd.save_pyboy_renderer(&mut w);
        w.buf.extend_from_slice(&b.wram);
        w.buf.extend_from_slice(&b.unusable);
        let mut io = b.io_scratch;
        io[0] = b.joypad.pyboy_p1();
        w.buf.extend_from_slice(&io);
        w.buf.extend_from_slice(&b.hram);
        w.u8(0); // WRAM bank select (CGB)
        b.timer.save_pyboy(&mut w);
        b.cart.save_pyboy(&mut w);
        b.joypad.save_pyboy(&mut w);
        b.serial.save_pyboy(&mut w);
        // Super Game Boy defaults: not detected, no multiplayer (1 player), no mask, no
        // border, no command, joypad 0; joypads released; empty border.
        w.buf
            .extend_from_slice(&[0, 0, 1, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]);
        w.buf.resize(w.buf.len() + SGB_LEN - 11, 0);
        debug_assert_eq!(w.buf.len(), self.pyboy_state_len());
        w.buf
    }

    /// Load a PyBoy 2.8.1 save state (what `PyBoy.save_state` writes) of this ROM. The
    /// machine then continues exactly as PyBoy does after loading it. On error the machine is
    /// unchanged.
    pub fn load_pyboy_state(&mut self, data: &[u8]) -> Result<(), CoreError> {
        let d = self.decode_pyboy_state(data)?;
        self.commit(d);
        Ok(())
    }

    fn decode_pyboy_state(&self, data: &[u8]) -> Result<Decoded, CoreError> {
        let Some(&version) = data.first() else {
            return Err(state_err("empty PyBoy state"));
        };
        if version != PYBOY_STATE_VERSION {
            let age = if version < PYBOY_STATE_VERSION {
                "an older"
            } else {
                "a newer"
            };
            return Err(state_err(format!(
                "PyBoy state format version {version} (from {age} PyBoy) is not supported; \
                 only version {PYBOY_STATE_VERSION} (PyBoy 2.8.x) is"
            )));
        }
        if data.len() >= HEADER_LEN && data[2..HEADER_LEN].iter().any(|&v| v != 0) {
            return Err(state_err(
                "this PyBoy state is of a Game Boy Color; only DMG states are supported",
            ));
        }
        // The sample buffer's length depends on the sample rate: name a mismatch as such.
        let spf_at = HEADER_LEN + CPU_LEN + DMA_LEN + PYBOY_LCD_SECTION_LEN + 8;
        if let Some(b) = data.get(spf_at..spf_at + 8) {
            let saved = u64::from_le_bytes(b.try_into().unwrap());
            let sound = self.bus.apu.options();
            if saved != sound.samples_per_frame() as u64 {
                return Err(state_err(format!(
                    "the PyBoy state was saved at another sound sample rate ({saved} samples per \
                     frame; this emulator samples at {} Hz, {} per frame): create the emulator \
                     with the PyBoy's sound_sample_rate",
                    sound.sample_rate,
                    sound.samples_per_frame()
                )));
            }
        }
        let expected = self.pyboy_state_len();
        if data.len() != expected {
            let what = if data.len() < expected {
                "truncated, or saved with another ROM"
            } else {
                "trailing bytes, or saved with another ROM"
            };
            return Err(state_err(format!(
                "a PyBoy 2.8.1 DMG state of this cartridge (\"{}\") is {expected} bytes, this \
                 one is {} ({what}: its cartridge RAM, clock or controller differ)",
                self.bus.cart.header().title,
                data.len()
            )));
        }
        let mut r = StateReader::new(data);
        r.u8()?; // version
        let boot_rom_mapped = flag(&mut r)?;
        for _ in 0..4 {
            r.u8()?; // checked above
        }

        // CPU.
        let mut cpu = Cpu::new();
        let mut regs = [0u8; 6];
        read_into(&mut r, &mut regs)?;
        let [a, f, b, c, d, e] = regs;
        let [h, l] = r.u16()?.to_be_bytes();
        let (sp, pc) = (r.u16()?, r.u16()?);
        cpu.r = Registers {
            a,
            f: f & 0xF0,
            b,
            c,
            d,
            e,
            h,
            l,
            sp,
            pc,
        };
        cpu.ime = flag(&mut r)?;
        cpu.ei_delay = r.u8()?;
        if cpu.ei_delay > 2 {
            return Err(state_err(format!(
                "PyBoy CPU: EI delay {} out of range",
                cpu.ei_delay
            )));
        }
        cpu.halted = flag(&mut r)?;
        cpu.stopped = flag(&mut r)?;
        cpu.locked = false;
        let ie = r.u8()?;
        if r.u8()? != 0 {
            return Err(state_err(
                "PyBoy CPU: the state was saved with an interrupt queued (inside a CPU slice, \
                 e.g. from a debugger hook); not supported",
            ));
        }
        let if_reg = r.u8()?;
        let cycles = r.u64()?;
        if cycles > i64::MAX as u64 {
            return Err(state_err("PyBoy CPU: negative cycle count"));
        }

        let mut bus = SystemBus::new(
            self.bus.cart.clone(),
            self.bus.boot_rom.clone(),
            self.bus.apu.options(),
        );
        bus.cycles = cycles;
        bus.ie_reg = ie;
        bus.if_reg = if_reg & 0x1F;
        bus.boot_rom_mapped = boot_rom_mapped;
        if boot_rom_mapped && bus.boot_rom.is_none() {
            return Err(state_err(
                "the PyBoy state was saved while the boot ROM was still mapped; create the \
                 emulator with a boot ROM to load it",
            ));
        }

        // OAM DMA.
        bus.dma.active = flag(&mut r)?;
        if flag(&mut r)? {
            return Err(state_err(
                "PyBoy OAM DMA: saved in the middle of a DMA read; not supported",
            ));
        }
        bus.dma.reading = false;
        bus.dma.source = r.u8()?;
        bus.dma.index = r.u8()?;
        if bus.dma.index > 0xA0 {
            return Err(state_err(format!(
                "PyBoy OAM DMA: {} bytes copied, at most 160",
                bus.dma.index
            )));
        }
        bus.dma.start = r.u64()?;

        let mut lcd = Lcd::new();
        lcd.load_pyboy_lcd(&mut r)?;
        let apu = Apu::load_pyboy(&mut r, self.bus.apu.options())?;
        lcd.load_pyboy_renderer(&mut r)?;
        bus.lcd = lcd;
        bus.apu = apu;

        read_into(&mut r, &mut bus.wram)?;
        read_into(&mut r, &mut bus.unusable)?;
        let mut io = [0u8; IO_LEN];
        read_into(&mut r, &mut io)?;
        read_into(&mut r, &mut bus.hram)?;
        let p1 = io[0];
        io[0] = 0;
        bus.io_scratch = io;
        if r.u8()? != 0 {
            return Err(state_err(
                "PyBoy state with a WRAM bank selected (Game Boy Color only)",
            ));
        }
        bus.timer = Timer::load_pyboy(&mut r)?;
        bus.cart = self.bus.cart.load_pyboy(&mut r)?;
        bus.joypad = Joypad::load_pyboy(&mut r, p1)?;
        bus.serial = Serial::load_pyboy(&mut r)?;
        // Super Game Boy state: PyBoy only acts on it with its SGB border mode, which a DMG
        // machine does not have.
        for _ in 0..SGB_LEN {
            r.u8()?;
        }
        if r.remaining() != 0 {
            return Err(state_err(format!(
                "{} unexpected bytes at the end of the PyBoy state",
                r.remaining()
            )));
        }
        Ok(Decoded {
            cpu,
            halted_after_ei: false,
            // PyBoy saves between ticks, at a frame boundary.
            resume_frame: false,
            frames: self.frames,
            bus,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A small MBC1 ROM that keeps the machine busy: sound on, timer on, OAM DMA, a loop
    /// writing WRAM and cartridge RAM.
    fn test_rom() -> Arc<[u8]> {
        let mut rom = vec![0u8; 0x8000];
        rom[0x147] = 0x03;
        rom[0x149] = 0x02;
        #[rustfmt::skip]
        let prog: &[u8] = &[
            0x3E, 0x80, 0xE0, 0x26, // NR52 on
            0x3E, 0x77, 0xE0, 0x24, 0x3E, 0xFF, 0xE0, 0x25,
            0x3E, 0xF3, 0xE0, 0x12, 0x3E, 0x87, 0xE0, 0x14, // CH1 trigger
            0x3E, 0x05, 0xE0, 0x07, // timer on
            0x3E, 0x0A, 0xEA, 0x00, 0x00, // cart RAM on
            0x21, 0x00, 0xC0, // HL = C000
            // loop:
            0x34, // INC (HL)
            0x7E, 0xEA, 0x00, 0xA0, // LD A,(HL); LD (A000),A
            0xF0, 0x04, 0xE0, 0x13, // DIV -> NR13
            0x3E, 0xC0, 0xE0, 0x46, // OAM DMA from C000
            0x18, 0xF1, // JR loop
        ];
        rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]);
        rom[0x150..0x150 + prog.len()].copy_from_slice(prog);
        let mut x: u8 = 0;
        for b in &rom[0x134..0x14D] {
            x = x.wrapping_sub(*b).wrapping_sub(1);
        }
        rom[0x14D] = x;
        rom.into()
    }

    #[test]
    fn round_trip_continues_identically() {
        let rom = test_rom();
        let mut a = GameBoy::new(rom.clone(), None).unwrap();
        a.tick(30, true, true);
        let s = a.save_pyboy_state();
        assert_eq!(s.len(), a.pyboy_state_len());
        let mut b = GameBoy::new(rom, None).unwrap();
        b.load_pyboy_state(&s).unwrap();
        assert_eq!(
            b.save_pyboy_state(),
            s,
            "save -> load -> save is the identity"
        );
        for _ in 0..60 {
            a.tick(1, true, true);
            b.tick(1, true, true);
            assert_eq!(a.save_pyboy_state(), b.save_pyboy_state());
            assert_eq!(a.bus.apu.samples(), b.bus.apu.samples());
        }
    }

    #[test]
    fn bad_states_leave_the_machine_unchanged() {
        let rom = test_rom();
        let mut a = GameBoy::new(rom.clone(), None).unwrap();
        a.tick(5, false, false);
        let good = a.save_pyboy_state();
        let mut b = GameBoy::new(rom, None).unwrap();
        b.tick(3, false, false);
        let before = b.save_state();
        let mut cases: Vec<Vec<u8>> = vec![
            Vec::new(),
            good[..good.len() - 1].to_vec(),
            [good.as_slice(), &[0]].concat(),
        ];
        for (offset, value) in [
            (0, 28u8),
            (0, 30),
            (5, 1),
            (2, 1),
            (19, 3),
            (34, 1),
            (36, 0xA1),
        ] {
            let mut bad = good.clone();
            bad[offset] = value;
            cases.push(bad);
        }
        for bad in cases {
            let e = b.load_pyboy_state(&bad).unwrap_err();
            assert!(matches!(e, CoreError::State(_)), "{e}");
            assert_eq!(b.save_state(), before);
        }
    }
}
