//! The cartridge's section of a PyBoy 2.8.1 save state.
//!
//! Layout: ROM bank at 4000-7FFF (1), RAM bank / RTC select (1), RAM enabled (1), MBC1 mode
//! (1, 0 for other controllers), every external RAM bank (8 KiB each, as many as the header
//! declares, at least one), the clock block for MBC3+TIMER carts, then per controller: MBC1
//! its two bank registers (2); MBC5 "rumble supported" (1) and, if so, the motor state (1).
//!
//! PyBoy stores no ROM identity. A state from another ROM is caught where its layout or
//! values cannot belong to this cartridge: the section's size (RAM banks, clock, controller
//! extras), a ROM bank beyond this ROM's, MBC1 bank registers that do not produce the stored
//! bank with this ROM's bank count, a rumble flag this cartridge does not have.
//!
//! PyBoy does not restore the bank mapped at 0000-3FFF: a freshly created PyBoy has bank 0
//! there until the next MBC1 register write, and so do we after loading.

use super::rtc::pyboy_state::PYBOY_RTC_LEN;
use super::rtc::Rtc;
use super::{Cartridge, Mapper};
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

impl Cartridge {
    /// Byte length of this cartridge's section in a PyBoy state.
    pub fn pyboy_section_len(&self) -> usize {
        4 + self.ram.len()
            + if self.rtc.is_some() { PYBOY_RTC_LEN } else { 0 }
            + match self.mapper {
                Mapper::Mbc1 | Mapper::Mbc1Multicart => 2,
                Mapper::Mbc5 => 1 + self.header.has_rumble as usize,
                _ => 0,
            }
    }

    fn is_mbc1(&self) -> bool {
        matches!(self.mapper, Mapper::Mbc1 | Mapper::Mbc1Multicart)
    }

    /// For older PyBoy state versions: the byte length of the section's common part (banks,
    /// mode, RAM, clock), whether it has a clock, whether the controller is an MBC1.
    pub(crate) fn pyboy_common_layout(&self) -> (usize, bool, bool) {
        let rtc = self.rtc.is_some();
        (
            4 + self.ram.len() + if rtc { PYBOY_RTC_LEN } else { 0 },
            rtc,
            self.is_mbc1(),
        )
    }

    pub fn save_pyboy(&self, w: &mut StateWriter) {
        // PyBoy stores the bank numbers in one byte each.
        w.u8(self.rom_bank as u8);
        w.u8(self.ram_bank as u8);
        w.bool(self.ram_enabled);
        w.u8(if self.is_mbc1() { self.mbc1_mode } else { 0 });
        w.buf.extend_from_slice(&self.ram);
        if let Some(rtc) = &self.rtc {
            rtc.save_pyboy(w);
        }
        match self.mapper {
            Mapper::Mbc1 | Mapper::Mbc1Multicart => {
                w.u8(self.mbc1_lower);
                w.u8(self.mbc1_upper);
            }
            Mapper::Mbc5 => {
                w.bool(self.header.has_rumble);
                if self.header.has_rumble {
                    w.bool(self.rumble_on);
                }
            }
            _ => {}
        }
    }

    /// Decode PyBoy's cartridge section into a copy of this cartridge (same ROM).
    pub fn load_pyboy(&self, r: &mut StateReader) -> Result<Cartridge, CoreError> {
        let foreign = |what: String| {
            CoreError::State(format!(
                "the PyBoy state does not fit this cartridge (\"{}\", type 0x{:02X}, {} ROM \
                 banks, {} RAM banks): {what}; was it saved with another ROM?",
                self.header.title, self.header.cartridge_type, self.rom_banks, self.ram_banks
            ))
        };
        let rom_bank = r.u8()? as u16;
        let ram_bank = r.u8()? as u16;
        let ram_enabled = r.u8()? != 0;
        let mode = r.u8()?;
        if rom_bank as usize >= self.mapped_banks() {
            return Err(foreign(format!("ROM bank {rom_bank} selected")));
        }
        if mode > 1 || (mode != 0 && !self.is_mbc1()) {
            return Err(foreign(format!("banking mode {mode}")));
        }
        let mut c = self.clone();
        for b in c.ram.iter_mut() {
            *b = r.u8()?;
        }
        if self.rtc.is_some() {
            c.rtc = Some(Rtc::load_pyboy(r)?);
        }
        c.rom_bank = rom_bank;
        c.rom_bank_low = 0;
        c.ram_bank = ram_bank;
        c.ram_enabled = ram_enabled;
        c.mbc1_mode = 0;
        c.mbc1_lower = 1;
        c.mbc1_upper = 0;
        c.rumble_on = false;
        match self.mapper {
            Mapper::Mbc1 | Mapper::Mbc1Multicart => {
                let (lower, upper) = (r.u8()?, r.u8()?);
                if !(1..=0x1F).contains(&lower) || upper > 3 {
                    return Err(foreign(format!("MBC1 registers {lower:#x}/{upper:#x}")));
                }
                c.mbc1_lower = lower;
                c.mbc1_upper = upper;
                c.mbc1_mode = mode;
                // The stored bank must be what the registers select on this ROM.
                let selected = if self.mapper == Mapper::Mbc1Multicart {
                    ((upper as usize) << 4) | (lower as usize & 0x0F)
                } else {
                    ((upper as usize) << 5) | lower as usize
                } % self.rom_banks;
                if selected != rom_bank as usize {
                    return Err(foreign(format!(
                        "MBC1 registers select bank {selected} but the state has bank {rom_bank}"
                    )));
                }
            }
            Mapper::Mbc5 => {
                let rumble = r.u8()? != 0;
                if rumble != self.header.has_rumble {
                    return Err(foreign("rumble support differs".into()));
                }
                if rumble {
                    c.rumble_on = r.u8()? != 0;
                }
            }
            Mapper::Mbc3 | Mapper::Mbc30
                if ram_bank as usize >= self.ram_banks && !(0x08..=0x0C).contains(&ram_bank) =>
            {
                return Err(foreign(format!("RAM bank {ram_bank} selected")));
            }
            _ => {}
        }
        if self.mapper == Mapper::Mbc5 && ram_bank as usize >= self.ram_banks {
            return Err(foreign(format!("RAM bank {ram_bank} selected")));
        }
        c.update_rom_bases();
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn rom(cart_type: u8, rom_code: u8, ram_code: u8) -> Arc<[u8]> {
        let banks = 2usize << rom_code;
        let mut rom = vec![0u8; banks * 0x4000];
        rom[0x147] = cart_type;
        rom[0x148] = rom_code;
        rom[0x149] = ram_code;
        rom[0x14D] = crate::cartridge::header::compute_header_checksum(&rom);
        rom.into()
    }

    #[test]
    fn round_trip_every_controller() {
        for (t, rc, ramc) in [
            (0x00, 0, 0),
            (0x03, 5, 3),
            (0x06, 3, 0),
            (0x10, 4, 3),
            (0x13, 1, 2),
            (0x1B, 4, 3),
            (0x1E, 4, 3),
        ] {
            let mut c = Cartridge::from_rom(rom(t, rc, ramc)).unwrap();
            c.write_rom_area(0x0000, 0x0A, 10);
            c.write_rom_area(0x2100, 0x03, 20);
            c.write_rom_area(0x4000, 0x09, 30);
            c.write_ram(0xA123, 0x5A, 40);
            let mut w = StateWriter::new();
            c.save_pyboy(&mut w);
            assert_eq!(w.buf.len(), c.pyboy_section_len(), "type {t:#x}");
            let d = c.load_pyboy(&mut StateReader::new(&w.buf)).unwrap();
            let mut w2 = StateWriter::new();
            d.save_pyboy(&mut w2);
            assert_eq!(w.buf, w2.buf, "type {t:#x}");
            assert_eq!(d.ram(), c.ram());
            assert_eq!(d.rom_bank_high(), c.rom_bank_high());
            assert_eq!(d.ram_enabled(), c.ram_enabled());
        }
    }

    #[test]
    fn mbc1_state_of_another_rom_is_refused() {
        let mut small = Cartridge::from_rom(rom(0x01, 2, 0)).unwrap(); // 8 banks
        small.write_rom_area(0x2000, 0x05, 0);
        let big = Cartridge::from_rom(rom(0x01, 4, 0)).unwrap(); // 32 banks
        small.write_rom_area(0x2000, 0x0D, 0); // 13 % 8 = 5 on the small ROM
        let mut w = StateWriter::new();
        small.save_pyboy(&mut w);
        assert!(big.load_pyboy(&mut StateReader::new(&w.buf)).is_err());
    }
}
