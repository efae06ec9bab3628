//! The Game Boy Color's system-side registers and devices, as PyBoy 2.8.1 models them:
//! mode selection, KEY0/KEY1 (speed switch), SVBK (work RAM banks), VBK, the palette
//! registers' bus side, HDMA (see [`crate::hdma`]), and the undocumented FF72-FF75.
//!
//! PyBoy distinguishes CGB *hardware* (`mb.cgb`) from CGB *mode* (`cgb_mode` = hardware and
//! a cartridge whose header byte 0x143 has bit 7 set). Hardware alone gives VBK, BCPS, OCPS,
//! FF56, FF72, FF73, FF75 and PCM12/PCM34, 32 KiB of work RAM (bank 1 fixed at D000), CGB
//! LCD timing and the CGB boot; CGB mode adds KEY0/KEY1 reads, BCPD/OCPD, HDMA, FF6C, SVBK
//! and FF74.
//!
//! Work RAM banking costs the DMG nothing: `SystemBus::wram` stays the 8 KiB the CPU sees
//! (bank 0 and the selected bank), and a switch swaps 4 KiB with the bank store.

use super::SystemBus;
use crate::hdma::{Hdma, HBLANK_BLOCK_CYCLES};
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// How a Game Boy is chosen to run a cartridge: PyBoy 2.8.1's rules.
///
/// * `cgb = None`: CGB hardware when the header's CGB flag (0x143) has bit 7 set; with a user
///   boot ROM, the boot ROM decides instead: CGB when it is longer than 256 bytes.
/// * `cgb = Some(x)`: that hardware; a user boot ROM must then be of the same kind (PyBoy
///   raises otherwise). One exception: emurust accepts a 256-byte boot ROM with
///   `cgb = Some(true)` and runs it as a CGB boot ROM, which is how PyBoy runs its own
///   built-in CGB boot ROM (`bootrom_cgb.bin`, 256 bytes) when no boot ROM is given.
pub fn select_hardware(
    header_cgb_flag: u8,
    boot_rom_len: Option<usize>,
    cgb: Option<bool>,
) -> Result<bool, CoreError> {
    let boot_is_cgb = boot_rom_len.map(|n| n > 0x100);
    match (cgb, boot_is_cgb) {
        (None, None) => Ok(header_cgb_flag & 0x80 != 0),
        (None, Some(b)) => Ok(b),
        (Some(c), None) => Ok(c),
        (Some(true), Some(_)) => Ok(true),
        (Some(false), Some(true)) => Err(CoreError::BootRom(
            "a CGB boot ROM (longer than 256 bytes) cannot run in DMG mode (cgb=False)".into(),
        )),
        (Some(false), Some(false)) => Ok(false),
    }
}

/// CGB state kept by the system (the LCD keeps VRAM bank 1 and the palettes).
#[derive(Clone)]
pub struct CgbSystem {
    /// CGB mode: hardware and a CGB cartridge (gates most CGB registers).
    pub mode: bool,
    pub key0: u8,
    pub key1: u8,
    pub double_speed: bool,
    /// SVBK as written (3 bits; 0 selects bank 1).
    pub wram_select: u8,
    /// The bank now visible at D000 (1-7).
    wram_bank: u8,
    /// Banks 1-7 at `bank * 0x1000` (bank 0 and the visible bank live in `SystemBus::wram`).
    wram_store: Box<[u8; 0x8000]>,
    pub undocumented: [u8; 4],
    pub hdma: Hdma,
}

impl CgbSystem {
    pub fn new(mode: bool) -> CgbSystem {
        CgbSystem {
            mode,
            key0: 0,
            key1: 0,
            double_speed: false,
            wram_select: 0,
            wram_bank: 1,
            wram_store: Box::new([0; 0x8000]),
            undocumented: [0; 4],
            hdma: Hdma::new(),
        }
    }
}

impl SystemBus {
    /// Make work RAM bank `select` (SVBK value) visible at D000-DFFF.
    fn select_wram_bank(&mut self, select: u8) {
        let c = &mut *self.cgbx;
        c.wram_select = select & 7;
        let bank = c.wram_select.max(1);
        if bank == c.wram_bank {
            return;
        }
        let old = c.wram_bank as usize * 0x1000;
        c.wram_store[old..old + 0x1000].copy_from_slice(&self.wram[0x1000..]);
        let new = bank as usize * 0x1000;
        self.wram[0x1000..].copy_from_slice(&c.wram_store[new..new + 0x1000]);
        c.wram_bank = bank;
    }

    /// All 32 KiB of CGB work RAM in bank order (bank 0 first).
    pub fn wram_all(&self) -> Vec<u8> {
        let mut out = self.cgbx.wram_store.to_vec();
        out[..0x1000].copy_from_slice(&self.wram[..0x1000]);
        let b = self.cgbx.wram_bank as usize * 0x1000;
        out[b..b + 0x1000].copy_from_slice(&self.wram[0x1000..]);
        out
    }

    /// Write byte `offset` (0-0xFFF) of CGB work RAM bank `bank` (0-7, bank 0 is C000's),
    /// whichever bank SVBK shows the CPU (also in DMG compatibility mode, where SVBK is fixed).
    pub fn set_wram_banked(&mut self, bank: usize, offset: usize, value: u8) {
        let offset = offset & 0xFFF;
        match bank & 7 {
            0 => self.wram[offset] = value,
            b if b == self.cgbx.wram_bank as usize => self.wram[0x1000 + offset] = value,
            b => self.cgbx.wram_store[b * 0x1000 + offset] = value,
        }
    }

    /// Replace all 32 KiB of CGB work RAM (bank order) and the SVBK value.
    pub fn set_wram_all(&mut self, data: &[u8], select: u8) {
        self.cgbx.wram_store.copy_from_slice(&data[..0x8000]);
        self.cgbx.wram_select = select & 7;
        let bank = self.cgbx.wram_select.max(1);
        self.cgbx.wram_bank = bank;
        let b = bank as usize * 0x1000;
        self.wram[..0x1000].copy_from_slice(&data[..0x1000]);
        self.wram[0x1000..].copy_from_slice(&data[b..b + 0x1000]);
    }

    /// Reads of FF4C-FF7F on CGB hardware.
    pub(super) fn read_cgb_io(&mut self, addr: u16, now: u64) -> u8 {
        match addr {
            0xFF76 => {
                self.apu.tick(now);
                self.apu.pcm12()
            }
            0xFF77 => {
                self.apu.tick(now);
                self.apu.pcm34()
            }
            _ => self.cgb_register(addr),
        }
    }

    /// CGB registers in FF4C-FF7F other than PCM12/PCM34.
    fn cgb_register(&self, addr: u16) -> u8 {
        let mode = self.cgbx.mode;
        match addr {
            0xFF4C if mode => self.cgbx.key0 | 0xFB,
            0xFF4D if mode => self.cgbx.key1,
            0xFF4F => self.lcd.vbk | 0xFE,
            0xFF68 => self.lcd.cgb.bg.read_index(),
            0xFF69 if mode => self.lcd.cgb.bg.read_data(),
            0xFF6A => self.lcd.cgb.obj.read_index(),
            0xFF6B if mode => self.lcd.cgb.obj.read_data(),
            0xFF55 if mode => self.cgbx.hdma.hdma5,
            0xFF6C if mode => self.lcd.cgb.opri | 0xFE,
            0xFF70 if mode => self.cgbx.wram_select | 0xF8,
            0xFF72 | 0xFF73 => self.cgbx.undocumented[(addr - 0xFF72) as usize],
            0xFF74 if mode => self.cgbx.undocumented[2],
            0xFF75 => self.cgbx.undocumented[3],
            _ => 0xFF,
        }
    }

    /// [`read_cgb_io`](Self::read_cgb_io) without side effects.
    pub(super) fn peek_cgb_io(&self, addr: u16) -> u8 {
        match addr {
            0xFF76 | 0xFF77 => self.apu.peek_pcm(addr),
            // Every other CGB register read is free of side effects.
            _ => self.cgb_register(addr),
        }
    }

    /// Writes of FF4C-FF7F on CGB hardware, other than the boot ROM's FF50.
    // One arm per register, its conditions inside: a guard would fall through to other arms.
    #[allow(clippy::collapsible_match)]
    pub(super) fn write_cgb_io(&mut self, addr: u16, value: u8, now: u64, offset: u64) {
        let mode = self.cgbx.mode;
        match addr {
            0xFF4C => {
                // Only the boot ROM may write KEY0; bit 2 switches the LCD to DMG mode.
                if self.boot_rom_mapped {
                    self.cgbx.key0 = value & 0x04;
                    if self.cgbx.key0 != 0 && self.lcd.is_colour() {
                        self.lcd.downgrade_to_dmg();
                    }
                }
            }
            0xFF4D => {
                self.cgbx.key1 = value;
                self.bail |= super::BAIL_END;
            }
            0xFF4F => self.lcd.vbk = value & 1,
            0xFF51..=0xFF54 if mode => self.cgbx.hdma.write_addr((addr - 0xFF50) as u8, value),
            0xFF55 if mode => {
                self.write_hdma5(value, now, offset);
                self.bail |= super::BAIL_END;
            }
            0xFF68 => self.lcd.cgb.bg.write_index(value),
            0xFF69 => self.lcd.cgb.bg.write_data(value),
            0xFF6A => self.lcd.cgb.obj.write_index(value),
            0xFF6B if mode => self.lcd.cgb.obj.write_data(value),
            0xFF6C if mode => self.lcd.cgb.opri = value & 1,
            0xFF70 if mode => self.select_wram_bank(value),
            0xFF72 | 0xFF73 => self.cgbx.undocumented[(addr - 0xFF72) as usize] = value,
            0xFF74 if mode => self.cgbx.undocumented[2] = value,
            0xFF75 => self.cgbx.undocumented[3] = value | 0x8F,
            _ => {}
        }
    }

    fn write_hdma5(&mut self, value: u8, now: u64, offset: u64) {
        let h = &mut self.cgbx.hdma;
        if h.active {
            if value & 0x80 == 0 {
                h.active = false;
                h.hdma5 = 0x80;
            } else {
                h.hdma5 = value & 0x7F;
            }
            return;
        }
        h.hdma5 = value;
        if value & 0x80 == 0 {
            // General purpose: everything at once, as reads and writes of this instruction.
            let n = (value as u16 & 0x7F) * 16 + 16;
            let (src, dst) = (h.src, h.dst);
            for i in 0..n {
                let v = self.read_at(src.wrapping_add(i), now, offset);
                self.write_at(dst.wrapping_add(i), v, now, offset);
            }
            let h = &mut self.cgbx.hdma;
            h.src = src.wrapping_add(n);
            h.dst = dst.wrapping_add(n);
            h.hdma5 = 0xFF;
        } else {
            h.hdma5 &= 0x7F;
            h.active = true;
            if !self.lcd.is_enabled() {
                self.hdma_block(now, offset);
            }
        }
    }

    /// Copy one 16-byte H-blank block with CPU accesses at (`now`, `offset`).
    fn hdma_block(&mut self, now: u64, offset: u64) {
        let (src, dst) = self.cgbx.hdma.block();
        for i in 0..16 {
            let v = self.read_at(src.wrapping_add(i), now, offset);
            self.write_at(dst.wrapping_add(i), v, now, offset);
        }
        self.cgbx.hdma.block_done();
    }

    /// The scheduler's H-blank DMA step: one block, and the CPU loses its time.
    pub(super) fn hdma_hblank_step(&mut self) {
        let now = self.cycles;
        self.hdma_block(now, 0);
        self.cycles += HBLANK_BLOCK_CYCLES;
    }

    /// Whether the scheduler transfers an H-blank block now instead of running the CPU.
    #[inline]
    pub(super) fn hdma_due(&self, halted: bool) -> bool {
        self.cgbx.mode
            && !halted
            && self.cgbx.hdma.active
            && self.lcd.is_enabled()
            && self.lcd.mode() == 0
    }

    /// STOP on CGB hardware: the speed switch if KEY1 armed it, then DIV is reset (an FF04
    /// write at the instruction's start).
    pub(super) fn stop_cgb(&mut self, now: u64) {
        if self.cgbx.key1 & 1 != 0 {
            self.cgbx.double_speed = !self.cgbx.double_speed;
            let shift = self.cgbx.double_speed as u8;
            // PyBoy catches the LCD up here and drops the interrupt this catch-up raises.
            self.lcd.tick(now);
            self.lcd.take_irq();
            self.lcd.speed_shift = shift;
            self.apu.tick(now);
            self.apu.speed_shift = shift;
            self.cgbx.key1 ^= 0x81;
        }
        self.write_io(0xFF04, 0, now, 0);
    }

    pub(super) fn save_cgb_state(&self, w: &mut StateWriter) {
        let c = &*self.cgbx;
        w.u8(c.key0);
        w.u8(c.key1);
        w.bool(c.double_speed);
        w.bytes(&self.wram_all());
        w.u8(c.wram_select);
        w.bytes(&c.undocumented);
        c.hdma.save_state(w);
        self.apu.save_cgb_state(w);
        self.lcd.save_cgb_state(w);
    }

    pub(super) fn load_cgb_state(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.cgbx.key0 = r.u8()?;
        self.cgbx.key1 = r.u8()?;
        self.cgbx.double_speed = r.bool()?;
        let wram = r.bytes_exact(0x8000)?.to_vec();
        let select = r.u8()?;
        self.set_wram_all(&wram, select);
        self.cgbx.undocumented.copy_from_slice(r.bytes_exact(4)?);
        self.cgbx.hdma = Hdma::load_state(r)?;
        self.apu.load_cgb_state(r)?;
        self.lcd.load_cgb_state(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hardware_selection_follows_pyboy() {
        assert!(select_hardware(0x80, None, None).unwrap());
        assert!(select_hardware(0xC0, None, None).unwrap());
        assert!(!select_hardware(0x00, None, None).unwrap());
        assert!(!select_hardware(0x40, None, None).unwrap());
        // A user boot ROM decides by its size.
        assert!(!select_hardware(0xC0, Some(0x100), None).unwrap());
        assert!(select_hardware(0x00, Some(0x900), None).unwrap());
        assert!(select_hardware(0x00, None, Some(true)).unwrap());
        assert!(!select_hardware(0xC0, None, Some(false)).unwrap());
        assert!(select_hardware(0x00, Some(0x100), Some(true)).unwrap());
        assert!(select_hardware(0x00, Some(0x900), Some(false)).is_err());
    }
}
