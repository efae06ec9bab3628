//! Per-controller behaviour of writes to 0000-7FFF and accesses to A000-BFFF.
//!
//! Register maps are Pan Docs' ("MBC1", "MBC2", "MBC3", "MBC5"); the exact reductions (modulo
//! the bank count rather than masking, which banks are writable, what disabled or missing RAM
//! reads) follow PyBoy 2.8.1. See the list on [`super::Cartridge`].

use super::header::RAM_BANK_SIZE;
use super::{Cartridge, Mapper};

/// RAM bank select values that address an RTC register on MBC3 carts.
pub(super) const RTC_SELECT: std::ops::RangeInclusive<u16> = 0x08..=0x0C;

/// `bank % count` (PyBoy's reduction), as a mask for the usual power-of-two counts: games switch
/// ROM banks hundreds of times a frame (Pokemon Red), and a division costs tens of cycles.
#[inline(always)]
fn wrap(bank: usize, count: usize) -> usize {
    if count.is_power_of_two() {
        bank & (count - 1)
    } else {
        bank % count
    }
}

impl Cartridge {
    /// A write to the MBC's control area 0000-7FFF.
    #[inline]
    pub(super) fn mbc_control_write(&mut self, addr: u16, value: u8) {
        match self.mapper {
            Mapper::RomOnly => {
                // No MBC, but PyBoy still treats 2000-3FFF as a 1-bit bank select.
                if (0x2000..0x4000).contains(&addr) {
                    self.rom_bank = (value.max(1) & 1) as u16;
                    self.update_rom_bases();
                }
            }
            Mapper::Mbc1 | Mapper::Mbc1Multicart => {
                match addr {
                    0x0000..=0x1FFF => self.ram_enabled = value & 0x0F == 0x0A,
                    // 5-bit register that cannot hold 0: writing 0 stores 1 (Pan Docs).
                    0x2000..=0x3FFF => self.mbc1_lower = (value & 0x1F).max(1),
                    0x4000..=0x5FFF => self.mbc1_upper = value & 0x03,
                    _ => self.mbc1_mode = value & 0x01,
                }
                self.mbc1_update_banks();
            }
            Mapper::Mbc2 => {
                // 0000-3FFF only; bit 8 of the address chooses the register.
                if addr < 0x4000 {
                    let v = value & 0x0F;
                    if addr & 0x0100 == 0 {
                        self.ram_enabled = v == 0x0A;
                    } else {
                        self.rom_bank = wrap(v.max(1) as usize, self.rom_banks) as u16;
                        self.update_rom_bases();
                    }
                }
            }
            Mapper::Mbc3 | Mapper::Mbc30 => match addr {
                0x0000..=0x1FFF => self.ram_enabled = value & 0x0F == 0x0A,
                0x2000..=0x3FFF => {
                    let v = if self.mapper == Mapper::Mbc30 {
                        value
                    } else {
                        value & 0x7F
                    };
                    self.rom_bank = wrap(v.max(1) as usize, self.rom_banks) as u16;
                    self.update_rom_bases();
                }
                0x4000..=0x5FFF => {
                    let v = value as u16;
                    self.ram_bank = if RTC_SELECT.contains(&v) {
                        v
                    } else {
                        wrap(v as usize, self.ram_banks) as u16
                    };
                }
                _ => {
                    if let Some(rtc) = &mut self.rtc {
                        rtc.write_latch(value);
                    }
                }
            },
            Mapper::Mbc5 => match addr {
                // All 8 bits matter: only exactly 0x0A enables.
                0x0000..=0x1FFF => self.ram_enabled = value == 0x0A,
                0x2000..=0x2FFF => {
                    let bank = (self.rom_bank as usize & 0x100) | value as usize;
                    self.rom_bank = wrap(bank, self.rom_banks) as u16;
                    self.update_rom_bases();
                }
                0x3000..=0x3FFF => {
                    let bank = ((value as usize & 1) << 8) | (self.rom_bank as usize & 0xFF);
                    self.rom_bank = wrap(bank, self.rom_banks) as u16;
                    self.update_rom_bases();
                }
                0x4000..=0x5FFF => {
                    self.ram_bank = wrap(value as usize & 0x0F, self.ram_banks) as u16;
                    if self.header.has_rumble {
                        self.rumble_on = value & 0x08 != 0;
                    }
                }
                _ => {}
            },
        }
    }

    /// MBC1: derive both mapped ROM banks from the three registers.
    fn mbc1_update_banks(&mut self) {
        let count = self.rom_banks;
        let upper = self.mbc1_upper as usize;
        let lower = self.mbc1_lower as usize;
        let multicart = self.mapper == Mapper::Mbc1Multicart;
        let shift = if multicart { 4 } else { 5 };
        let low = if self.mbc1_mode == 1 {
            wrap(upper << shift, count)
        } else {
            0
        };
        let high = wrap(
            if multicart {
                // Bit 4 of the lower register is not wired on multicarts: 0x10 maps the
                // sub-cartridge's bank 0.
                (upper << 4) | (lower & 0x0F)
            } else {
                (upper << 5) | lower
            },
            count,
        );
        self.rom_bank_low = low as u16;
        self.rom_bank = high as u16;
        self.update_rom_bases();
    }

    /// A read of A000-BFFF.
    #[inline]
    pub(super) fn mbc_ram_read(&mut self, addr: u16) -> u8 {
        if !self.ram_enabled {
            return 0xFF;
        }
        let offset = addr as usize & (RAM_BANK_SIZE - 1);
        match self.mapper {
            Mapper::Mbc1 | Mapper::Mbc1Multicart => {
                // The bank is re-derived from the registers on every access.
                self.ram_bank = if self.mbc1_mode == 1 {
                    wrap(self.mbc1_upper as usize, self.ram_banks) as u16
                } else {
                    0
                };
                self.ram[self.ram_bank as usize * RAM_BANK_SIZE + offset]
            }
            // 512 half-bytes, repeated across A000-BFFF; the upper nibble reads as 1s.
            Mapper::Mbc2 => self.ram[addr as usize & 0x01FF] | 0xF0,
            _ => {
                if let Some(rtc) = &self.rtc {
                    if RTC_SELECT.contains(&self.ram_bank) {
                        return rtc.read_register(self.ram_bank);
                    }
                }
                // An RTC select on a cart without a clock addresses a bank that PyBoy
                // allocates but never writes: it reads 0.
                self.ram
                    .get(self.ram_bank as usize * RAM_BANK_SIZE + offset)
                    .copied()
                    .unwrap_or(0)
            }
        }
    }

    /// A write to A000-BFFF.
    #[inline]
    pub(super) fn mbc_ram_write(&mut self, addr: u16, value: u8) {
        let offset = addr as usize & (RAM_BANK_SIZE - 1);
        match self.mapper {
            // PyBoy stores the byte even when the RAM is disabled (it then reads 0xFF).
            Mapper::RomOnly => self.store_ram(self.ram_bank as usize, offset, value),
            Mapper::Mbc1 | Mapper::Mbc1Multicart => {
                if self.ram_enabled {
                    // Unlike reads, the stored select is the raw upper register; only the
                    // access is reduced modulo the bank count.
                    self.ram_bank = if self.mbc1_mode == 1 {
                        self.mbc1_upper as u16
                    } else {
                        0
                    };
                    let bank = wrap(self.ram_bank as usize, self.ram_banks);
                    self.store_ram(bank, offset, value);
                }
            }
            Mapper::Mbc2 => {
                if self.ram_enabled {
                    self.ram[addr as usize & 0x01FF] = value | 0xF0;
                }
            }
            Mapper::Mbc3 | Mapper::Mbc30 => {
                if self.ram_enabled {
                    let last_ram_bank = if self.mapper == Mapper::Mbc30 { 7 } else { 3 };
                    if self.ram_bank <= last_ram_bank {
                        self.store_ram(self.ram_bank as usize, offset, value);
                    } else if let Some(rtc) = &mut self.rtc {
                        if RTC_SELECT.contains(&self.ram_bank) {
                            rtc.write_register(self.ram_bank, value);
                        }
                    }
                }
            }
            Mapper::Mbc5 => {
                if self.ram_enabled {
                    self.store_ram(self.ram_bank as usize, offset, value);
                }
            }
        }
    }

    #[inline]
    fn store_ram(&mut self, bank: usize, offset: usize, value: u8) {
        if let Some(b) = self.ram.get_mut(bank * RAM_BANK_SIZE + offset) {
            *b = value;
        }
    }
}
