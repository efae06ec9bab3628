//! Game Boy cartridges: header, memory bank controllers (none, MBC1, MBC2, MBC3/MBC30 with
//! real-time clock, MBC5 with rumble) and battery-backed RAM.
//!
//! The specification is Pan Docs ("The Cartridge Header", "MBCs"); where PyBoy 2.8.1 behaves
//! differently, we do what PyBoy does, because every byte the CPU reads must match it. The
//! PyBoy behaviours reproduced on purpose are listed on [`Cartridge`]; the RTC's are in
//! [`rtc`].
//!
//! Submodules: [`header`] (parsing/validation), `mbc` (register writes and RAM access per
//! controller), [`rtc`] (MBC3 clock on emulated time).
//!
//! The bus calls [`Cartridge::read_rom`] for 0000-7FFF, [`Cartridge::write_rom_area`] for
//! writes to 0000-7FFF, and [`Cartridge::read_ram`]/[`Cartridge::write_ram`] for A000-BFFF.
//! `now` must be the same T-cycle count PyBoy passes to `rtc_tick`: the CPU's cycle counter
//! at the start of the instruction (PyBoy's `cpu.cycles`, without `memory_access_offset`).

pub mod header;
mod mbc;
pub mod pyboy_state;
pub mod rtc;

use std::sync::Arc;

pub use header::{Header, MbcKind, RAM_BANK_SIZE, ROM_BANK_SIZE};
use rtc::{Rtc, RTC_BATTERY_BYTES};

use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// Controller variant, resolved once from the header so the hot paths are a plain `match`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mapper {
    RomOnly,
    Mbc1,
    /// MBC1 multicart ("MBC1M"): 1 MiB ROM in which every bank repeats bank 0's Nintendo
    /// logo; the upper bank register is shifted by 4 instead of 5.
    Mbc1Multicart,
    Mbc2,
    Mbc3,
    /// MBC3 with 8-bit ROM bank register and 8 writable RAM banks.
    Mbc30,
    Mbc5,
}

impl Mapper {
    fn code(self) -> u8 {
        match self {
            Mapper::RomOnly => 0,
            Mapper::Mbc1 => 1,
            Mapper::Mbc1Multicart => 2,
            Mapper::Mbc2 => 3,
            Mapper::Mbc3 => 4,
            Mapper::Mbc30 => 5,
            Mapper::Mbc5 => 6,
        }
    }
}

/// What the MBC's register writes (0000-5FFF) can change: taken before a busy loop's proof
/// (`gameboy::busy_loop`) makes its bank switches on the cartridge, and put back after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BankState {
    rom_bank: u16,
    rom_bank_low: u16,
    bases: [usize; 2],
    ram_bank: u16,
    ram_enabled: bool,
    mbc1: [u8; 3],
    rumble_on: bool,
}

/// A cartridge: shared ROM, banking registers, external RAM and (MBC3) clock.
///
/// PyBoy 2.8.1 quirks reproduced (all visible to the CPU):
/// * RAM: one 8 KiB bank is present even when the header declares none (code 0x00) or 2 KiB
///   (0x01); 4, 16 and 8 banks for codes 0x03, 0x04, 0x05. The cartridge type's "RAM" flag
///   only matters for ROM-only carts. Disabled RAM reads 0xFF.
/// * ROM only: RAM at A000-BFFF is enabled permanently for types 0x08/0x09 and disabled for
///   0x00 (reads 0xFF, but writes are still stored). A write to 2000-3FFF selects bank
///   `max(v, 1) & 1` for 4000-7FFF, so an even non-zero value maps bank 0 there.
/// * MBC1: 5-bit lower register with 0 -> 1 (so 0x20/0x40/0x60 give 0x21/0x41/0x61), 2-bit
///   upper register, mode bit; bank numbers wrap modulo the ROM's bank count. Mode 1 maps bank
///   `upper << 5` at 0000-3FFF and RAM bank `upper` (modulo the RAM bank count). The RAM
///   enable is `(v & 0x0F) == 0x0A`. 1 MiB multicarts (logo repeated in every bank) use a
///   4-bit shift.
/// * MBC2: address bit 8 picks RAM enable / ROM bank (4 bits, 0 -> 1); 512 half-bytes echoed
///   across A000-BFFF, stored with and read back with the upper nibble set (0xF0 | v).
/// * MBC3: 7-bit ROM bank (8-bit for MBC30), 0 -> 1; RAM bank select keeps 0x08-0x0C as RTC
///   selects even on carts without a clock, where those then read 0x00 (an empty bank) and
///   ignore writes; other values wrap modulo the RAM bank count.
/// * MBC5: 9-bit ROM bank where bank 0 is allowed, held as one number already reduced modulo
///   the bank count (so a write to one half re-uses the reduced other half); RAM enable only
///   for exactly 0x0A; RAM bank = `(v & 0x0F) % banks` (bit 3 included even on rumble carts,
///   where it also sets the motor).
#[derive(Clone)]
pub struct Cartridge {
    rom: Arc<[u8]>,
    header: Header,
    mapper: Mapper,
    rom_banks: usize,
    ram_banks: usize,
    /// All external RAM banks, `ram_banks * 8 KiB`.
    ram: Vec<u8>,

    /// Bank mapped at 4000-7FFF (PyBoy `rombank_selected`).
    rom_bank: u16,
    /// Bank mapped at 0000-3FFF (PyBoy `rombank_selected_low`).
    rom_bank_low: u16,
    /// Byte offsets of those banks in `rom`, kept in step with the two numbers above.
    /// (0000-3FFF first, 4000-7FFF second: indexed by address bit 14.)
    bases: [usize; 2],
    /// Selected RAM bank or RTC register (PyBoy `rambank_selected`).
    ram_bank: u16,
    ram_enabled: bool,

    // MBC1 registers.
    mbc1_lower: u8,
    mbc1_upper: u8,
    mbc1_mode: u8,

    /// MBC5 rumble motor on (last write to 4000-5FFF had bit 3 set, rumble carts only).
    rumble_on: bool,

    rtc: Option<Rtc>,

    /// Identifies the ROM image in save states (FNV-1a over all bytes).
    fingerprint: u64,
}

fn fnv1a64(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Cartridge {
    /// Parse and validate `rom` (see [`Header::parse`] for the checks) and power the cartridge
    /// on: ROM bank 1 at 4000-7FFF, bank 0 at 0000-3FFF, RAM disabled (except ROM+RAM carts)
    /// and zero-filled, clock at 00:00:00 day 0.
    ///
    /// A file of a single 16 KiB bank is accepted, as PyBoy accepts it. PyBoy then reads past
    /// the end of its ROM buffer whenever bank 1 is mapped at 4000-7FFF (ROM-only carts, or
    /// any cart before its first bank write): whatever its heap holds there, mostly zeros. We
    /// read zeros: the image is padded with one zero bank, while bank numbers still wrap by
    /// the file's single bank.
    pub fn from_rom(rom: Arc<[u8]>) -> Result<Cartridge, CoreError> {
        let header = Header::parse(&rom)?;
        let fingerprint = fnv1a64(&rom);
        let rom: Arc<[u8]> = if rom.len() < 2 * ROM_BANK_SIZE {
            let mut padded = rom.to_vec();
            padded.resize(2 * ROM_BANK_SIZE, 0);
            padded.into()
        } else {
            rom
        };
        let mapper = match header.mbc {
            MbcKind::RomOnly => Mapper::RomOnly,
            MbcKind::Mbc1 if is_mbc1_multicart(&rom, header.rom_banks) => Mapper::Mbc1Multicart,
            MbcKind::Mbc1 => Mapper::Mbc1,
            MbcKind::Mbc2 => Mapper::Mbc2,
            MbcKind::Mbc3 if header.mbc30 => Mapper::Mbc30,
            MbcKind::Mbc3 => Mapper::Mbc3,
            MbcKind::Mbc5 => Mapper::Mbc5,
        };
        let mut cart = Cartridge {
            rom_banks: header.rom_banks,
            ram_banks: header.ram_banks,
            ram: vec![0; header.ram_bytes],
            rom_bank: 1,
            rom_bank_low: 0,
            bases: [0, ROM_BANK_SIZE],
            ram_bank: 0,
            ram_enabled: mapper == Mapper::RomOnly && header.has_ram,
            mbc1_lower: 1,
            mbc1_upper: 0,
            mbc1_mode: 0,
            rumble_on: false,
            rtc: if header.has_rtc {
                Some(Rtc::new())
            } else {
                None
            },
            mapper,
            header,
            fingerprint,
            rom,
        };
        cart.update_rom_bases();
        Ok(cart)
    }

    /// A 64-bit hash of the ROM image, to tell states of different ROMs apart.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// What the CPU would read at A000-BFFF, without catching the clock up or changing state.
    pub fn peek_ram(&self, addr: u16) -> u8 {
        if !self.ram_enabled {
            return 0xFF;
        }
        let offset = addr as usize & (RAM_BANK_SIZE - 1);
        match self.mapper {
            Mapper::Mbc1 | Mapper::Mbc1Multicart => {
                let bank = if self.mbc1_mode == 1 {
                    self.mbc1_upper as usize % self.ram_banks
                } else {
                    0
                };
                self.ram[bank * RAM_BANK_SIZE + offset]
            }
            Mapper::Mbc2 => self.ram[addr as usize & 0x01FF] | 0xF0,
            _ => {
                if let Some(rtc) = &self.rtc {
                    if mbc::RTC_SELECT.contains(&self.ram_bank) {
                        return rtc.read_register(self.ram_bank);
                    }
                }
                self.ram
                    .get(self.ram_bank as usize * RAM_BANK_SIZE + offset)
                    .copied()
                    .unwrap_or(0)
            }
        }
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The whole ROM image (shared); a single-bank file comes with its zero padding bank.
    pub fn rom(&self) -> &Arc<[u8]> {
        &self.rom
    }

    /// Read 0000-7FFF through the current banking.
    #[inline]
    pub fn read_rom(&self, addr: u16) -> u8 {
        let base = self.bases[(addr as usize >> 14) & 1];
        self.rom[base + (addr as usize & 0x3FFF)]
    }

    /// A CPU write to 0000-7FFF (MBC control registers). `now`: see the module doc (only writes
    /// to 6000-7FFF read it).
    #[inline]
    pub fn write_rom_area(&mut self, addr: u16, value: u8, now: u64) {
        // PyBoy brings the clock up to date before every write to 6000-7FFF (latch).
        if addr >= 0x6000 {
            if let Some(rtc) = &mut self.rtc {
                rtc.catch_up(now);
            }
        }
        self.mbc_control_write(addr, value);
    }

    /// A CPU write to the ROM bank register area 2000-3FFF, which needs no clock (a busy
    /// loop's proof runs it on the real cartridge, then puts back [`Cartridge::bank_state`]).
    pub(crate) fn write_rom_bank_register(&mut self, addr: u16, value: u8) {
        debug_assert!((0x2000..0x4000).contains(&addr));
        // (Through `write_rom_area`, whose one inlined copy of the MBC's write the CPU's bank
        // switches use: no clock below 6000.)
        self.write_rom_area(addr, value, 0);
    }

    /// What the MBC's register writes (0000-5FFF) can change.
    pub(crate) fn bank_state(&self) -> BankState {
        BankState {
            rom_bank: self.rom_bank,
            rom_bank_low: self.rom_bank_low,
            bases: self.bases,
            ram_bank: self.ram_bank,
            ram_enabled: self.ram_enabled,
            mbc1: [self.mbc1_lower, self.mbc1_upper, self.mbc1_mode],
            rumble_on: self.rumble_on,
        }
    }

    /// Put back a [`Cartridge::bank_state`].
    pub(crate) fn set_bank_state(&mut self, s: BankState) {
        self.rom_bank = s.rom_bank;
        self.rom_bank_low = s.rom_bank_low;
        self.bases = s.bases;
        self.ram_bank = s.ram_bank;
        self.ram_enabled = s.ram_enabled;
        [self.mbc1_lower, self.mbc1_upper, self.mbc1_mode] = s.mbc1;
        self.rumble_on = s.rumble_on;
    }

    /// A CPU read of A000-BFFF (RAM or RTC register).
    #[inline]
    pub fn read_ram(&mut self, addr: u16, now: u64) -> u8 {
        self.catch_up_if_rtc_selected(now);
        self.mbc_ram_read(addr)
    }

    /// A CPU write to A000-BFFF (RAM or RTC register).
    #[inline]
    pub fn write_ram(&mut self, addr: u16, value: u8, now: u64) {
        self.catch_up_if_rtc_selected(now);
        self.mbc_ram_write(addr, value);
    }

    #[inline]
    fn catch_up_if_rtc_selected(&mut self, now: u64) {
        if let Some(rtc) = &mut self.rtc {
            if (0x08..=0x0C).contains(&self.ram_bank) {
                rtc.catch_up(now);
            }
        }
    }

    /// Bank mapped at 0000-3FFF.
    #[inline]
    pub fn rom_bank_low(&self) -> usize {
        self.rom_bank_low as usize
    }

    /// Bank mapped at 4000-7FFF.
    #[inline]
    pub fn rom_bank_high(&self) -> usize {
        self.rom_bank as usize
    }

    /// Selected RAM bank, or RTC register 0x08-0x0C (PyBoy `rambank_selected`).
    #[inline]
    pub fn ram_bank(&self) -> usize {
        self.ram_bank as usize
    }

    /// Whether A000-BFFF is enabled.
    pub fn ram_enabled(&self) -> bool {
        self.ram_enabled
    }

    /// MBC5 rumble carts: whether the motor is on.
    pub fn rumble_active(&self) -> bool {
        self.rumble_on
    }

    /// Any ROM byte: `addr` is 0000-7FFF and only its low 14 bits are used (like PyBoy's
    /// `memory[bank, addr]`). `None` for a bank the ROM does not have or `addr` >= 0x8000.
    /// The ROM image and the byte offsets of the banks mapped at 0000-3FFF and 4000-7FFF
    /// (for the system bus's direct opcode fetches).
    #[inline]
    pub(crate) fn rom_and_bases(&self) -> (&[u8], [usize; 2]) {
        (&self.rom, self.bases)
    }

    pub fn read_rom_banked(&self, bank: usize, addr: u16) -> Option<u8> {
        if bank >= self.rom_banks || addr >= 0x8000 {
            return None;
        }
        Some(self.rom[bank * ROM_BANK_SIZE + (addr as usize & 0x3FFF)])
    }

    /// Number of 16 KiB ROM banks (PyBoy's `external_rom_count`).
    pub fn rom_bank_count(&self) -> usize {
        self.rom_banks
    }

    /// Number of 8 KiB RAM banks allocated (PyBoy's `external_ram_count`).
    pub fn ram_bank_count(&self) -> usize {
        self.ram_banks
    }

    /// Overwrite ROM byte `offset` (0-0x3FFF) of `bank`, as PyBoy's `memory[bank, addr] = v`
    /// does. The ROM is copied on the first override (it is shared between emulators);
    /// the fingerprint stays that of the original image. Returns false if out of range.
    pub fn override_rom(&mut self, bank: usize, offset: usize, value: u8) -> bool {
        if bank >= self.rom_banks || offset >= ROM_BANK_SIZE {
            return false;
        }
        Arc::make_mut(&mut self.rom)[bank * ROM_BANK_SIZE + offset] = value;
        true
    }

    /// All external RAM banks, bank `n` at `n * 8 KiB`.
    pub fn ram(&self) -> &[u8] {
        &self.ram
    }

    pub fn ram_mut(&mut self) -> &mut [u8] {
        &mut self.ram
    }

    /// The MBC3 clock, if the cartridge has one.
    pub fn rtc(&self) -> Option<&Rtc> {
        self.rtc.as_ref()
    }

    pub fn rtc_mut(&mut self) -> Option<&mut Rtc> {
        self.rtc.as_mut()
    }

    /// Size of [`Cartridge::battery_ram`]'s result, `None` without a battery.
    pub fn battery_ram_len(&self) -> Option<usize> {
        if !self.header.has_battery {
            return None;
        }
        Some(
            self.ram.len()
                + if self.rtc.is_some() {
                    RTC_BATTERY_BYTES
                } else {
                    0
                },
        )
    }

    /// What the battery keeps, `None` for cartridges without a battery. Layout: all RAM banks
    /// (`header().ram_bytes` bytes, as PyBoy's .ram file), then for MBC3+TIMER carts the
    /// 16-byte clock block described at [`Rtc::battery_bytes`].
    pub fn battery_ram(&self) -> Option<Vec<u8>> {
        let len = self.battery_ram_len()?;
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(&self.ram);
        if let Some(rtc) = &self.rtc {
            out.extend_from_slice(&rtc.battery_bytes());
        }
        Some(out)
    }

    /// Restore what [`Cartridge::battery_ram`] returned. The size must match exactly.
    pub fn load_battery_ram(&mut self, data: &[u8]) -> Result<(), CoreError> {
        let Some(len) = self.battery_ram_len() else {
            return Err(CoreError::CartridgeRam(format!(
                "cartridge type 0x{:02X} {} has no battery, so it has no RAM to load",
                self.header.cartridge_type, self.header.cartridge_type_name
            )));
        };
        if data.len() != len {
            let rtc_note = if self.rtc.is_some() {
                format!(
                    " ({} bytes of RAM + {RTC_BATTERY_BYTES} bytes of clock)",
                    self.ram.len()
                )
            } else {
                String::new()
            };
            return Err(CoreError::CartridgeRam(format!(
                "battery RAM for this cartridge ({} {}, RAM size code 0x{:02X}) must be {len} \
                 bytes{rtc_note}, got {} bytes",
                self.header.cartridge_type_name,
                self.header.title,
                self.header.ram_size_code,
                data.len()
            )));
        }
        let (ram, clock) = data.split_at(self.ram.len());
        if let Some(rtc) = &mut self.rtc {
            rtc.load_battery_bytes(clock)?;
        }
        self.ram.copy_from_slice(ram);
        Ok(())
    }

    pub fn save_state(&self, w: &mut StateWriter) {
        // Identity of the cartridge, checked on load.
        w.u8(self.mapper.code());
        w.u8(self.header.cartridge_type);
        w.u32(self.rom.len() as u32);
        w.u16(self.header.global_checksum);
        w.u8(self.header.header_checksum);
        // Registers.
        w.u16(self.rom_bank);
        w.u16(self.rom_bank_low);
        w.u16(self.ram_bank);
        w.bool(self.ram_enabled);
        w.u8(self.mbc1_lower);
        w.u8(self.mbc1_upper);
        w.u8(self.mbc1_mode);
        w.bool(self.rumble_on);
        w.bytes(&self.ram);
        w.bool(self.rtc.is_some());
        if let Some(rtc) = &self.rtc {
            rtc.save_state(w);
        }
    }

    pub fn load_state(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        let mapper = r.u8()?;
        let cart_type = r.u8()?;
        let rom_len = r.u32()? as usize;
        let global = r.u16()?;
        let hsum = r.u8()?;
        if mapper != self.mapper.code()
            || cart_type != self.header.cartridge_type
            || rom_len != self.rom.len()
            || global != self.header.global_checksum
            || hsum != self.header.header_checksum
        {
            return Err(CoreError::State(format!(
                "the state was saved with another cartridge (type 0x{cart_type:02X}, {rom_len} \
                 bytes, checksums {hsum:02X}/{global:04X}); this one is \"{}\" (type 0x{:02X}, \
                 {} bytes, checksums {:02X}/{:04X})",
                self.header.title,
                self.header.cartridge_type,
                self.rom.len(),
                self.header.header_checksum,
                self.header.global_checksum
            )));
        }
        let rom_bank = r.u16()?;
        let rom_bank_low = r.u16()?;
        let ram_bank = r.u16()?;
        let ram_enabled = r.bool()?;
        let mbc1_lower = r.u8()?;
        let mbc1_upper = r.u8()?;
        let mbc1_mode = r.u8()?;
        let rumble_on = r.bool()?;
        let ram = r.bytes_exact(self.ram.len())?;
        let has_rtc = r.bool()?;
        if has_rtc != self.rtc.is_some() {
            return Err(CoreError::State("cartridge clock presence differs".into()));
        }
        if rom_bank as usize >= self.mapped_banks()
            || rom_bank_low as usize >= self.mapped_banks()
            || ram_bank > 0xFF
            || !(1..=0x1F).contains(&mbc1_lower)
            || mbc1_upper > 3
            || mbc1_mode > 1
        {
            return Err(CoreError::State(
                "cartridge bank registers out of range".into(),
            ));
        }
        if let Some(rtc) = &mut self.rtc {
            let mut fresh = Rtc::new();
            fresh.load_state(r)?;
            *rtc = fresh;
        }
        self.rom_bank = rom_bank;
        self.rom_bank_low = rom_bank_low;
        self.ram_bank = ram_bank;
        self.ram_enabled = ram_enabled;
        self.mbc1_lower = mbc1_lower;
        self.mbc1_upper = mbc1_upper;
        self.mbc1_mode = mbc1_mode;
        self.rumble_on = rumble_on;
        self.ram.copy_from_slice(ram);
        self.update_rom_bases();
        Ok(())
    }

    /// Banks that may be mapped: the file's, or two for a single-bank file (see
    /// [`Cartridge::from_rom`]).
    fn mapped_banks(&self) -> usize {
        self.rom.len() / ROM_BANK_SIZE
    }

    #[inline]
    fn update_rom_bases(&mut self) {
        self.bases = [
            self.rom_bank_low as usize * ROM_BANK_SIZE,
            self.rom_bank as usize * ROM_BANK_SIZE,
        ];
    }
}

/// PyBoy's MBC1 multicart test: exactly 64 banks (1 MiB) and bytes 0x0104-0x0133 (the Nintendo
/// logo area) of every bank equal to bank 0's.
fn is_mbc1_multicart(rom: &[u8], rom_banks: usize) -> bool {
    if rom_banks != 64 {
        return false;
    }
    let logo = &rom[0x0104..0x0134];
    (1..rom_banks).all(|bank| {
        let start = bank * ROM_BANK_SIZE;
        &rom[start + 0x0104..start + 0x0134] == logo
    })
}

#[cfg(test)]
mod tests;
