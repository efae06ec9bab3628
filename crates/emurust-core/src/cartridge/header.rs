//! Cartridge header (0x0100-0x014F of bank 0) parsing and validation.
//!
//! Field meanings follow Pan Docs, "The Cartridge Header". Where PyBoy 2.8.1 derives a value
//! differently from Pan Docs (title length, number of RAM banks allocated, ROM size taken from
//! the file rather than byte 0x0148), we follow PyBoy, because what the emulated CPU sees must
//! match it, and we load exactly the files PyBoy 2.8.1 loads (see [`Header::parse`]).

use crate::CoreError;

/// Size of one switchable ROM bank (Pan Docs: "ROM Bank 01-NN", 16 KiB).
pub const ROM_BANK_SIZE: usize = 0x4000;
/// Size of one external RAM bank (Pan Docs: "A000-BFFF  8 KiB External RAM").
pub const RAM_BANK_SIZE: usize = 0x2000;
/// The header ends at 0x014F; a file shorter than this has no header at all.
pub const HEADER_END: usize = 0x0150;

/// Memory bank controller family of a cartridge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MbcKind {
    /// No MBC (32 KiB ROM, optionally 8 KiB RAM).
    RomOnly,
    Mbc1,
    Mbc2,
    /// MBC3, including the MBC30 variant (see [`Header::mbc30`]).
    Mbc3,
    Mbc5,
}

/// Parsed cartridge header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Title as PyBoy reports it: bytes 0x134..0x143 (0x134..0x142 when the CGB flag's bit 7 is
    /// set), each byte taken as a Latin-1 character, cut at the first NUL.
    pub title: String,
    /// Byte 0x0147.
    pub cartridge_type: u8,
    /// Pan Docs name of the cartridge type, e.g. "MBC3+TIMER+RAM+BATTERY".
    pub cartridge_type_name: &'static str,
    pub mbc: MbcKind,
    /// The cartridge type says it has RAM (for MBC2: its built-in 512x4-bit RAM).
    pub has_ram: bool,
    pub has_battery: bool,
    /// MBC3 with the real-time clock (types 0x0F and 0x10).
    pub has_rtc: bool,
    /// MBC5 rumble variant (types 0x1C-0x1E): bit 3 of writes to 4000-5FFF drives the motor.
    pub has_rumble: bool,
    /// MBC3 cartridge that is really an MBC30 (more than 4 RAM banks or more than 128 ROM
    /// banks declared): 8-bit ROM bank register, RAM banks 0-7 writable. PyBoy tells the two
    /// apart the same way; there is no separate cartridge type code.
    pub mbc30: bool,
    /// Byte 0x0148.
    pub rom_size_code: u8,
    /// Number of 16 KiB ROM banks: the file's size / 16 KiB, as in PyBoy (which never reads
    /// byte 0x0148). Every bank number wraps modulo this count.
    pub rom_banks: usize,
    /// What byte 0x0148 declares (`None` for a code Pan Docs does not list); informative only.
    pub declared_rom_banks: Option<usize>,
    /// Byte 0x0149.
    pub ram_size_code: u8,
    /// Number of 8 KiB RAM banks allocated and visible to the CPU. As in PyBoy this is at least 1
    /// even when the header declares no RAM (code 0x00) or 2 KiB (code 0x01), and it is taken
    /// from the RAM size byte for MBC2 too.
    pub ram_banks: usize,
    /// `ram_banks * 8 KiB`: the size of [`super::Cartridge::ram`].
    pub ram_bytes: usize,
    /// Byte 0x0143.
    pub cgb_flag: u8,
    /// Byte 0x0146.
    pub sgb_flag: u8,
    /// Byte 0x014B.
    pub old_licensee: u8,
    /// Byte 0x014D.
    pub header_checksum: u8,
    /// Always true for a header that parsed (a mismatch is an error, as in PyBoy).
    pub header_checksum_ok: bool,
    /// Bytes 0x014E-0x014F (big-endian).
    pub global_checksum: u16,
    /// Sum of all ROM bytes except 0x014E/0x014F equals `global_checksum` (informative only:
    /// real hardware and PyBoy ignore it).
    pub global_checksum_ok: bool,
}

/// What a cartridge type byte means to us.
struct TypeInfo {
    name: &'static str,
    /// `None`: not supported by PyBoy 2.8.1 (and so not by us).
    mbc: Option<MbcKind>,
    ram: bool,
    battery: bool,
    rtc: bool,
    rumble: bool,
}

const fn ty(
    name: &'static str,
    mbc: Option<MbcKind>,
    ram: bool,
    battery: bool,
    rtc: bool,
    rumble: bool,
) -> TypeInfo {
    TypeInfo {
        name,
        mbc,
        ram,
        battery,
        rtc,
        rumble,
    }
}

/// Pan Docs cartridge type table (0x0147).
fn type_info(code: u8) -> TypeInfo {
    use MbcKind::*;
    match code {
        0x00 => ty("ROM ONLY", Some(RomOnly), false, false, false, false),
        0x01 => ty("MBC1", Some(Mbc1), false, false, false, false),
        0x02 => ty("MBC1+RAM", Some(Mbc1), true, false, false, false),
        0x03 => ty("MBC1+RAM+BATTERY", Some(Mbc1), true, true, false, false),
        0x05 => ty("MBC2", Some(Mbc2), true, false, false, false),
        0x06 => ty("MBC2+BATTERY", Some(Mbc2), true, true, false, false),
        0x08 => ty("ROM+RAM", Some(RomOnly), true, false, false, false),
        0x09 => ty("ROM+RAM+BATTERY", Some(RomOnly), true, true, false, false),
        0x0B => ty("MMM01", None, false, false, false, false),
        0x0C => ty("MMM01+RAM", None, true, false, false, false),
        0x0D => ty("MMM01+RAM+BATTERY", None, true, true, false, false),
        0x0F => ty("MBC3+TIMER+BATTERY", Some(Mbc3), false, true, true, false),
        0x10 => ty(
            "MBC3+TIMER+RAM+BATTERY",
            Some(Mbc3),
            true,
            true,
            true,
            false,
        ),
        0x11 => ty("MBC3", Some(Mbc3), false, false, false, false),
        0x12 => ty("MBC3+RAM", Some(Mbc3), true, false, false, false),
        0x13 => ty("MBC3+RAM+BATTERY", Some(Mbc3), true, true, false, false),
        0x19 => ty("MBC5", Some(Mbc5), false, false, false, false),
        0x1A => ty("MBC5+RAM", Some(Mbc5), true, false, false, false),
        0x1B => ty("MBC5+RAM+BATTERY", Some(Mbc5), true, true, false, false),
        0x1C => ty("MBC5+RUMBLE", Some(Mbc5), false, false, false, true),
        0x1D => ty("MBC5+RUMBLE+RAM", Some(Mbc5), true, false, false, true),
        0x1E => ty(
            "MBC5+RUMBLE+RAM+BATTERY",
            Some(Mbc5),
            true,
            true,
            false,
            true,
        ),
        0x20 => ty("MBC6", None, true, true, false, false),
        0x22 => ty(
            "MBC7+SENSOR+RUMBLE+RAM+BATTERY",
            None,
            true,
            true,
            false,
            true,
        ),
        0xFC => ty("POCKET CAMERA", None, true, true, false, false),
        0xFD => ty("BANDAI TAMA5", None, true, true, false, false),
        0xFE => ty("HuC3", None, true, true, true, false),
        0xFF => ty("HuC1+RAM+BATTERY", None, true, true, false, false),
        _ => ty("unknown cartridge type", None, false, false, false, false),
    }
}

/// ROM size byte (0x0148) to the number of 16 KiB banks it declares (Pan Docs, incl. the three
/// unofficial 1.1/1.2/1.5 MiB codes). Informative only: PyBoy sizes the ROM by the file.
pub fn declared_rom_banks(code: u8) -> Option<usize> {
    match code {
        0x00..=0x08 => Some(2usize << code),
        0x52 => Some(72),
        0x53 => Some(80),
        0x54 => Some(96),
        _ => None,
    }
}

/// RAM size byte (0x0149) to number of 8 KiB banks *allocated*. Pan Docs says code 0 is "no
/// RAM" and code 1 is an unused 2 KiB size; PyBoy allocates and exposes one full 8 KiB bank
/// for both, so reads/writes at A000-BFFF behave as if 8 KiB were present.
fn ram_banks_for(code: u8) -> Option<usize> {
    match code {
        0x00..=0x02 => Some(1),
        0x03 => Some(4),
        0x04 => Some(16),
        0x05 => Some(8),
        _ => None,
    }
}

/// Pan Docs 0x014D: `x = 0; for each byte in 0x134..=0x14C { x = x - byte - 1 }`.
pub fn compute_header_checksum(rom: &[u8]) -> u8 {
    rom[0x0134..=0x014C]
        .iter()
        .fold(0u8, |x, &b| x.wrapping_sub(b).wrapping_sub(1))
}

/// Pan Docs 0x014E-0x014F: 16-bit sum of every ROM byte except the two checksum bytes.
pub fn compute_global_checksum(rom: &[u8]) -> u16 {
    let all = rom.iter().fold(0u16, |s, &b| s.wrapping_add(b as u16));
    all.wrapping_sub(rom[0x014E] as u16)
        .wrapping_sub(rom[0x014F] as u16)
}

fn rom_err(msg: String) -> CoreError {
    CoreError::Rom(msg)
}

impl Header {
    /// Parse and validate a whole ROM image exactly as PyBoy 2.8.1's cartridge loader does.
    ///
    /// Refused, in PyBoy's order (the first reason found is the one reported): an empty file; a
    /// file whose size is not a whole number of 16 KiB banks (this includes any file too small
    /// to hold a header); a header checksum mismatch; an unknown RAM size code (0x0149 outside
    /// 0x00-0x05, checked before the cartridge type, as PyBoy does); a cartridge type PyBoy has
    /// no controller for.
    ///
    /// Accepted as PyBoy accepts them: any ROM size code at 0x0148 (PyBoy never reads it: the
    /// bank count is the file's size / 16 KiB, and all bank numbers wrap by that count), files
    /// larger or smaller than the size the header declares, a wrong global checksum.
    pub fn parse(rom: &[u8]) -> Result<Header, CoreError> {
        if rom.is_empty() {
            return Err(rom_err(
                "the ROM file is empty (0 bytes); PyBoy 2.8.1 refuses it too (\"Empty ROM file\")"
                    .into(),
            ));
        }
        if !rom.len().is_multiple_of(ROM_BANK_SIZE) {
            let banks = rom.len() / ROM_BANK_SIZE;
            let hint = if rom.len() < ROM_BANK_SIZE {
                " (too small: less than one bank; the cartridge header alone ends at 0x014F)"
                    .to_string()
            } else {
                format!(
                    "; it has {} trailing bytes after {banks} whole bank(s): a bad dump, a header \
                     or trailer added by a copier or tool, or not a Game Boy ROM",
                    rom.len() % ROM_BANK_SIZE
                )
            };
            return Err(rom_err(format!(
                "the ROM file size {} bytes is not a multiple of the 16 KiB ({ROM_BANK_SIZE} \
                 bytes) ROM bank size{hint}; PyBoy 2.8.1 refuses it too (\"Unexpected ROM file \
                 length\")",
                rom.len()
            )));
        }

        let header_checksum = rom[0x014D];
        let computed = compute_header_checksum(rom);
        if computed != header_checksum {
            return Err(rom_err(format!(
                "cartridge header checksum mismatch: byte 0x014D is 0x{header_checksum:02X} but \
                 bytes 0x0134-0x014C give 0x{computed:02X}; the file is corrupt or not a Game \
                 Boy ROM (PyBoy 2.8.1 refuses it too: \"Cartridge header checksum mismatch!\")"
            )));
        }

        // PyBoy looks the RAM size up before it looks at the cartridge type.
        let ram_size_code = rom[0x0149];
        let ram_banks = ram_banks_for(ram_size_code).ok_or_else(|| {
            rom_err(format!(
                "unknown RAM size code 0x{ram_size_code:02X} at header byte 0x0149 (known: \
                 0x00-0x05); PyBoy 2.8.1 refuses it too (KeyError: {ram_size_code})"
            ))
        })?;

        let cartridge_type = rom[0x0147];
        let info = type_info(cartridge_type);
        let Some(mbc) = info.mbc else {
            return Err(rom_err(format!(
                "cartridge type 0x{cartridge_type:02X} {} is not supported (supported, as in \
                 PyBoy 2.8.1: ROM ONLY, ROM+RAM, MBC1, MBC2, MBC3 with or without TIMER, MBC5 \
                 with or without RUMBLE); PyBoy refuses it too (\"Catridge type invalid: \
                 {cartridge_type}\")",
                info.name
            )));
        };

        let rom_size_code = rom[0x0148];
        let rom_banks = rom.len() / ROM_BANK_SIZE;

        let cgb_flag = rom[0x0143];
        // PyBoy: when bit 7 of 0x0143 is set, the title stops before 0x0142 (0x0142 and 0x0143
        // are then the manufacturer code's end and the CGB flag); else it runs to 0x0142.
        let title_end = if cgb_flag & 0x80 != 0 { 0x0142 } else { 0x0143 };
        let title: String = rom[0x0134..title_end]
            .iter()
            .take_while(|&&b| b != 0)
            .map(|&b| b as char)
            .collect();

        let global_checksum = u16::from_be_bytes([rom[0x014E], rom[0x014F]]);
        let mbc30 = mbc == MbcKind::Mbc3 && (ram_banks > 4 || rom_banks > 128);

        Ok(Header {
            title,
            cartridge_type,
            cartridge_type_name: info.name,
            mbc,
            has_ram: info.ram,
            has_battery: info.battery,
            has_rtc: info.rtc,
            has_rumble: info.rumble,
            mbc30,
            rom_size_code,
            rom_banks,
            declared_rom_banks: declared_rom_banks(rom_size_code),
            ram_size_code,
            ram_banks,
            ram_bytes: ram_banks * RAM_BANK_SIZE,
            cgb_flag,
            sgb_flag: rom[0x0146],
            old_licensee: rom[0x014B],
            header_checksum,
            header_checksum_ok: true,
            global_checksum,
            global_checksum_ok: compute_global_checksum(rom) == global_checksum,
        })
    }

    /// The file holds as many banks as its header declares (informative: PyBoy does not check).
    pub fn size_matches_declared(&self) -> bool {
        self.declared_rom_banks == Some(self.rom_banks)
    }
}
