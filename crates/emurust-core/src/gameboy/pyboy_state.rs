//! Exchanging save states with PyBoy 2.8.1 (its format version 29), on DMG and on Game Boy
//! Color hardware. Loading also takes every older version PyBoy 2.8.1 loads (0 to 28): they
//! are rewritten in version 29's layout with what they lack taken from this running machine,
//! as PyBoy takes it from its running instance, and the readers below take the version (see
//! `pyboy_state_versions`). Newer versions are refused.
//!
//! A PyBoy state is the concatenation of its components' sections, in its Motherboard's order:
//!
//! | section      | bytes          | here                                                  |
//! |--------------|----------------|-------------------------------------------------------|
//! | header       | 6              | version 29, boot ROM mapped, KEY0, KEY1, double speed, CGB hardware |
//! | HDMA         | 10 (CGB only)  | HDMA1-5, active, current source and destination (16-bit) |
//! | CPU          | 27             | A F B C D E, HL SP PC (16-bit), IME, EI delay, halted, stopped, IE, "interrupt queued", IF, cycles (64-bit) |
//! | OAM DMA      | 12             | active, reading, source page, bytes copied, start cycle |
//! | LCD          | [`PYBOY_LCD_SECTION_LEN`] | [`Lcd::load_pyboy_lcd`](crate::lcd::Lcd::load_pyboy_lcd)                 |
//! | sound        | [`pyboy_sound_section_len`] | [`Apu::load_pyboy`]                      |
//! | renderer     | [`PYBOY_RENDERER_SECTION_LEN`] | the screen, [`Lcd::load_pyboy_renderer`](crate::lcd::Lcd::load_pyboy_renderer) |
//! | RAM          | 8491 (CGB: 33067) | WRAM (CGB: 8 banks of 4 KiB), FEA0-FEFF, FF00-FF4B (P1 and unused registers), HRAM |
//! | WRAM bank    | 1              | SVBK (0 on the DMG)                                   |
//! | timer        | [`PYBOY_TIMER_SECTION_LEN`] | [`Timer::load_pyboy`]                    |
//! | cartridge    | per cartridge  | [`Cartridge::load_pyboy`](crate::cartridge::Cartridge::load_pyboy) |
//! | joypad       | 2              | [`Joypad::load_pyboy`]                                |
//! | serial       | [`PYBOY_SERIAL_SECTION_LEN`] | [`Serial::load_pyboy`]                  |
//! | Super GB     | 10379          | not emulated: skipped on load, PyBoy's defaults on save |
//!
//! On CGB hardware in colour mode the LCD section also holds VRAM bank 1, VBK and the palette
//! memories ([`crate::lcd::PYBOY_LCD_CGB_EXTRA_LEN`] bytes); in the CGB's DMG mode it does not.
//!
//! Integers are little-endian, as PyBoy's `write_16bit`/`write_64bit` write them; its doubles
//! are the machine's (little-endian on every platform PyBoy ships for).
//!
//! Loading makes this machine continue exactly as PyBoy does after `load_state`. The LCD's
//! unsaved fields keep this instance's values, as they do in a running PyBoy (for a machine
//! that has run as PyBoy has, e.g. through `emurust.PyBoy`, they are PyBoy's). Other things
//! PyBoy does not save take the value a freshly created PyBoy has: the "halted right
//! after EI" flag is clear, nothing is locked, the clock's latch is empty, the bank mapped at
//! 0000-3FFF is bank 0 (see the cartridge section). The frame counter and the serial output log are ours and are kept.
//! On any error the machine is unchanged.

use super::{Decoded, GameBoy, SystemBus};
use crate::apu::pyboy_state::pyboy_sound_section_len;
use crate::apu::Apu;
use crate::cpu::{Cpu, Registers};
use crate::joypad::pyboy_state::PYBOY_JOYPAD_SECTION_LEN;
use crate::joypad::Joypad;
use crate::lcd::{PYBOY_LCD_SECTION_LEN, PYBOY_RENDERER_SECTION_LEN};
use crate::serial::pyboy_state::PYBOY_SERIAL_SECTION_LEN;
use crate::serial::Serial;
use crate::state::{StateReader, StateWriter};
use crate::timer::pyboy_state::PYBOY_TIMER_SECTION_LEN;
use crate::timer::Timer;
use crate::CoreError;

/// The PyBoy save-state format version we write (PyBoy 2.8.x), and the newest we read.
pub const PYBOY_STATE_VERSION: u8 = 29;

const HEADER_LEN: usize = 6;
const HDMA_LEN: usize = 10;
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
        let cgb_extra = if self.bus.cgb {
            HDMA_LEN + 0x8000 - WRAM_LEN
                + if self.bus.lcd.is_colour() {
                    crate::lcd::PYBOY_LCD_CGB_EXTRA_LEN
                } else {
                    0
                }
        } else {
            0
        };
        cgb_extra
            + HEADER_LEN
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

    /// Byte offset of the renderer section (the screen: per pixel RGBA and a colour-0 flag)
    /// in a PyBoy 2.8.1 state.
    pub fn pyboy_renderer_offset(&self) -> usize {
        HEADER_LEN
            + CPU_LEN
            + DMA_LEN
            + PYBOY_LCD_SECTION_LEN
            + pyboy_sound_section_len(self.bus.apu.options())
    }

    /// The machine as a PyBoy 2.8.1 save state (what `PyBoy.save_state` writes), which
    /// `PyBoy.load_state` accepts for the same ROM.
    pub fn save_pyboy_state(&self) -> Vec<u8> {
        let mut w = StateWriter::new();
        w.buf.reserve(self.pyboy_state_len());
        let b = &self.bus;
        w.u8(PYBOY_STATE_VERSION);
        w.bool(b.boot_rom_mapped);
        if b.cgb {
            let c = &b.cgbx;
            for v in [c.key0, c.key1, c.double_speed as u8, 1] {
                w.u8(v);
            }
            let h = &c.hdma;
            for v in [h.hdma1, h.hdma2, h.hdma3, h.hdma4, h.hdma5, h.active as u8] {
                w.u8(v);
            }
            w.u16(h.src);
            w.u16(h.dst);
        } else {
            for _ in 0..4 {
                w.u8(0); // KEY0, KEY1, double speed, CGB
            }
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
        if b.cgb {
            w.buf.extend_from_slice(&b.wram_all());
        } else {
            w.buf.extend_from_slice(&b.wram);
        }
        w.buf.extend_from_slice(&b.unusable);
        let mut io = b.io_scratch;
        io[0] = b.joypad.pyboy_p1();
        w.buf.extend_from_slice(&io);
        w.buf.extend_from_slice(&b.hram);
        w.u8(if b.cgb { b.cgbx.wram_select } else { 0 }); // WRAM bank select (CGB)
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

    /// What `PyBoy(rom, ...)` followed by `load_state` gives: a new machine for `rom` that
    /// continues from the PyBoy state `data`. Older format versions take what they lack from
    /// PyBoy's running instance, here a freshly created PyBoy's (powered on, its boot ROM
    /// mapped and not yet run), as in that PyBoy. (The boot ROM's bytes are never read: a
    /// state saved while the boot ROM was mapped is refused; load such a state with
    /// [`GameBoy::load_pyboy_state`] into a machine created with the boot ROM.)
    pub fn from_pyboy_state(
        rom: std::sync::Arc<[u8]>,
        options: super::Options,
        data: &[u8],
    ) -> Result<GameBoy, CoreError> {
        let hardware = GameBoy::with_options(rom.clone(), None, options)?.options();
        let boot_flag = match data.first() {
            Some(&v) if v >= 2 => data.get(1),
            _ => data.first(),
        };
        if boot_flag.is_some_and(|&b| b != 0) {
            return Err(state_err(
                "the PyBoy state was saved while the boot ROM was still mapped; create the \
                 emulator with a boot ROM to load it",
            ));
        }
        let placeholder: std::sync::Arc<[u8]> = vec![0u8; 0x100].into();
        let mut gb = GameBoy::with_options(rom, Some(placeholder), hardware)?;
        gb.load_pyboy_state(data)?;
        gb.bus.boot_rom = None;
        gb.bus.refresh_fetch_span();
        Ok(gb)
    }

    fn decode_pyboy_state(&self, data: &[u8]) -> Result<Decoded, CoreError> {
        let Some(&version) = data.first() else {
            return Err(state_err("empty PyBoy state"));
        };
        if version > PYBOY_STATE_VERSION {
            return Err(state_err(format!(
                "PyBoy state format version {version} is from a newer PyBoy; PyBoy 2.8.1 and \
                 emurust load versions 0 to {PYBOY_STATE_VERSION}"
            )));
        }
        // Older versions: rewritten in the current layout, with what they lack taken from this
        // running machine (as PyBoy loads them into its running instance).
        let upgraded;
        let data = if version < PYBOY_STATE_VERSION {
            upgraded = self.upgrade_pyboy_state(data)?;
            upgraded.as_slice()
        } else {
            data
        };
        let cgb = self.bus.cgb;
        if data.len() >= HEADER_LEN {
            let state_cgb = data[5] != 0;
            if !state_cgb && data[2..5].iter().any(|&v| v != 0) {
                return Err(state_err(
                    "PyBoy state with CGB registers set on DMG hardware",
                ));
            }
            if state_cgb != cgb {
                return Err(state_err(format!(
                    "this PyBoy state is of {} hardware, this emulator runs {} (see cgb=)",
                    if state_cgb { "Game Boy Color" } else { "DMG" },
                    if cgb { "a Game Boy Color" } else { "a DMG" }
                )));
            }
        }
        // The sample buffer's length depends on the sample rate: name a mismatch as such. (On
        // Game Boy Color hardware the sound section lies further on, after sections whose
        // length depends on the state's mode; `Apu::load_pyboy` names the mismatch there.)
        let spf_at = HEADER_LEN + CPU_LEN + DMA_LEN + PYBOY_LCD_SECTION_LEN + 8;
        if let Some(b) = data.get(spf_at..spf_at + 8).filter(|_| !cgb) {
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
        // On CGB hardware the LCD part's length depends on the state's mode; the reader checks.
        if !cgb && data.len() != expected {
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
        let (key0, key1, double_speed) = (r.u8()?, r.u8()?, flag(&mut r)?);
        r.u8()?; // hardware: checked above
        let mut hdma = crate::hdma::Hdma::new();
        if cgb {
            hdma.hdma1 = r.u8()?;
            hdma.hdma2 = r.u8()?;
            hdma.hdma3 = r.u8()?;
            hdma.hdma4 = r.u8()?;
            hdma.hdma5 = r.u8()?;
            hdma.active = flag(&mut r)?;
            hdma.src = r.u16()?;
            hdma.dst = r.u16()?;
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
            self.bus.cgb,
            self.bus.apu.options(),
        );
        bus.cycles = cycles;
        bus.ie_reg = ie;
        bus.if_reg = if_reg & 0x1F;
        bus.boot_rom_mapped = boot_rom_mapped;
        bus.refresh_fetch_span();
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

        // PyBoy loads into its running LCD: what it does not save (window line counter,
        // mode 3 adjustment, STAT override, ...) keeps this instance's values, and the LCDC
        // write sees the current LCDC.
        let mut lcd = self.bus.lcd.clone();
        lcd.load_pyboy_lcd_version(&mut r, version)?;
        let mut apu = Apu::load_pyboy(&mut r, self.bus.apu.options(), cgb)?;
        if version < 13 {
            // A state without sound (before version 13): PyBoy keeps its sound unit running.
            apu = self.bus.apu.clone();
        }
        if apu.speed_shift != lcd.speed_shift {
            return Err(state_err(
                "PyBoy state: LCD and sound disagree on the double speed",
            ));
        }
        lcd.load_pyboy_renderer_version(&mut r, version)?;
        bus.lcd = lcd;
        bus.apu = apu;

        let mut wram_all = Vec::new();
        if cgb {
            wram_all = vec![0; 0x8000];
            read_into(&mut r, &mut wram_all)?;
        } else {
            read_into(&mut r, &mut bus.wram)?;
        }
        read_into(&mut r, &mut bus.unusable)?;
        let mut io = [0u8; IO_LEN];
        read_into(&mut r, &mut io)?;
        read_into(&mut r, &mut bus.hram)?;
        let p1 = io[0];
        io[0] = 0;
        bus.io_scratch = io;
        let wram_select = r.u8()?;
        if cgb {
            bus.set_wram_all(&wram_all, wram_select);
            let c = &mut bus.cgbx;
            c.key0 = key0;
            c.key1 = key1;
            c.double_speed = double_speed;
            c.hdma = hdma;
        } else if wram_select != 0 {
            return Err(state_err(
                "PyBoy state with a WRAM bank selected (Game Boy Color only)",
            ));
        }
        bus.timer = Timer::load_pyboy(&mut r)?;
        bus.cart = self.bus.cart.load_pyboy(&mut r)?;
        bus.joypad = Joypad::load_pyboy(&mut r, p1)?;
        bus.serial = Serial::load_pyboy(&mut r)?;
        if version < 15 {
            // No serial section: PyBoy keeps its port, whose next catch-up spans from its
            // own last one to the loaded cycle count (backwards too, wrapping).
            bus.serial.rebase_pyboy(bus.cycles);
        }
        if cgb {
            bus.serial.set_cgb_mode_keep_sc(bus.cgbx.mode);
        }
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
        bus.check_state_times(self.frames)
            .map_err(|e| match version {
                12 | 13 => state_err(format!(
                "PyBoy state format version {version} has no sound {}: PyBoy keeps its running \
                 sound unit's, which here lie far from the state's time ({e}); load it into an \
                 emulator that has run about as long as the one that saved it",
                if version == 12 { "unit" } else { "sampling targets" }
            )),
                _ => e,
            })?;
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
pub(crate) mod tests {
    use super::*;
    use std::sync::Arc;

    /// A small MBC1 ROM that keeps the machine busy: sound on, timer on, OAM DMA, a loop
    /// writing WRAM and cartridge RAM.
    pub(crate) fn test_rom() -> Arc<[u8]> {
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
        rom[0x14D] = crate::cartridge::header::compute_header_checksum(&rom);
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

    /// States whose clocks do not fit together (corrupt ones), in either format, are
    /// rejected and change nothing, instead of being run: counters then overflowed (debug
    /// builds panicked) or a device caught up across an enormous span (the timer walks a
    /// span in which TIMA overflows one cycle at a time: practically forever).
    #[test]
    fn states_with_clocks_far_apart_are_rejected() {
        let rom = test_rom();
        let mut good = GameBoy::new(rom.clone(), None).unwrap();
        good.tick(5, false, true);
        let state = good.save_state();
        type Corruption = (fn(&mut GameBoy), bool);
        let corruptions: [Corruption; 5] = [
            // (corruption, also expressible in a PyBoy state)
            (|g| g.bus.cycles -= 1, true), // the timer, serial port, APU synced after it
            (|g| g.bus.cycles += 1 << 30, true),
            (|g| g.bus.cycles = u64::MAX - 16, true),
            (|g| g.frames = u64::MAX, false),
            (
                |g| {
                    g.bus.dma.active = true;
                    g.bus.dma.start = 1 << 63;
                },
                true,
            ),
        ];
        let mut target = GameBoy::new(rom.clone(), None).unwrap();
        target.tick(2, false, true);
        let before = target.save_state();
        for (i, (corrupt, pyboy_too)) in corruptions.iter().enumerate() {
            let mut g = GameBoy::new(rom.clone(), None).unwrap();
            g.load_state(&state).unwrap();
            corrupt(&mut g);
            let ours = target.load_state(&g.save_state());
            assert!(matches!(ours, Err(CoreError::State(_))), "case {i}");
            assert_eq!(target.save_state(), before, "case {i}");
            if *pyboy_too {
                let theirs = target.load_pyboy_state(&g.save_pyboy_state());
                assert!(
                    matches!(theirs, Err(CoreError::State(_))),
                    "case {i} (PyBoy format)"
                );
                assert_eq!(target.save_state(), before, "case {i}");
            }
        }
        // The same states, uncorrupted, load.
        target.load_state(&state).unwrap();
        target.load_pyboy_state(&good.save_pyboy_state()).unwrap();
    }

    /// The same program with the CGB flag, on Game Boy Color hardware (colour mode), and the
    /// DMG program on CGB hardware (DMG mode).
    #[test]
    fn round_trip_on_cgb_hardware() {
        let mut rom = test_rom().to_vec();
        rom[0x143] = 0x80;
        rom[0x14D] = crate::cartridge::header::compute_header_checksum(&rom);
        let colour: Arc<[u8]> = rom.into();
        let sounds = [
            crate::apu::SoundOptions::default(),
            crate::apu::SoundOptions {
                emulated: false,
                sample_rate: 48000,
            },
            crate::apu::SoundOptions {
                emulated: true,
                sample_rate: 22050,
            },
        ];
        for sound in sounds {
            for (rom, cgb) in [(colour.clone(), None), (test_rom(), Some(true))] {
                let options = crate::gameboy::Options { cgb, sound };
                let mut a = GameBoy::with_options(rom.clone(), None, options).unwrap();
                assert!(a.is_cgb());
                a.tick(30, true, true);
                let s = a.save_pyboy_state();
                assert_eq!(s.len(), a.pyboy_state_len());
                let mut b = GameBoy::with_options(rom.clone(), None, options).unwrap();
                b.load_pyboy_state(&s).unwrap();
                let first_diff =
                    |x: &[u8], y: &[u8]| (x.len(), x.iter().zip(y).position(|(p, q)| p != q));
                assert_eq!(first_diff(&b.save_pyboy_state(), &s), (s.len(), None));
                for _ in 0..60 {
                    a.tick(1, true, true);
                    b.tick(1, true, true);
                    let (sa, sb) = (a.save_pyboy_state(), b.save_pyboy_state());
                    assert_eq!(first_diff(&sa, &sb), (sa.len(), None));
                    assert_eq!(a.bus.apu.samples(), b.bus.apu.samples());
                }
                // Not into DMG hardware.
                let mut d = GameBoy::with_options(
                    rom.clone(),
                    None,
                    crate::gameboy::Options {
                        cgb: Some(false),
                        sound,
                    },
                )
                .unwrap();
                assert!(d.load_pyboy_state(&s).is_err());
                assert!(b.load_pyboy_state(&d.save_pyboy_state()).is_err());
                // Not at another sample rate.
                if sound.sample_rate != 48000 {
                    let mut e = GameBoy::with_hardware(rom, None, cgb).unwrap();
                    assert!(e.load_pyboy_state(&s).is_err());
                }
            }
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
            (0, 27u8), // version 27's layout is 8 bytes shorter (28's is 29's)
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
