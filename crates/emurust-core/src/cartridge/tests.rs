//! Cartridge tests on synthetic ROMs in which every bank's bytes encode the bank number:
//! at an even offset the low 8 bits, at the following odd offset bits 8.. | 0x80.

use super::header::compute_header_checksum;
use super::rtc::{Rtc, RTC_CYCLES_PER_SECOND};
use super::*;
use crate::state::{StateReader, StateWriter};

const SEC: u64 = RTC_CYCLES_PER_SECOND;

fn banks_for_code(code: u8) -> usize {
    match code {
        0x52 => 72,
        0x53 => 80,
        0x54 => 96,
        c => 2 << c,
    }
}

/// A valid ROM image of the size its header declares.
fn make_rom(cart_type: u8, rom_code: u8, ram_code: u8) -> Vec<u8> {
    let banks = banks_for_code(rom_code);
    let mut rom = vec![0u8; banks * ROM_BANK_SIZE];
    for b in 0..banks {
        for o in (0..ROM_BANK_SIZE).step_by(2) {
            rom[b * ROM_BANK_SIZE + o] = b as u8;
            rom[b * ROM_BANK_SIZE + o + 1] = (b >> 8) as u8 | 0x80;
        }
    }
    for x in &mut rom[0x0100..0x0150] {
        *x = 0;
    }
    rom[0x0134..0x0134 + 8].copy_from_slice(b"TESTCART");
    rom[0x0147] = cart_type;
    rom[0x0148] = rom_code;
    rom[0x0149] = ram_code;
    fix_checksums(&mut rom);
    rom
}

fn fix_checksums(rom: &mut [u8]) {
    rom[0x014D] = compute_header_checksum(rom);
    let g = header::compute_global_checksum(rom);
    rom[0x014E..0x0150].copy_from_slice(&g.to_be_bytes());
}

fn cart(cart_type: u8, rom_code: u8, ram_code: u8) -> Cartridge {
    Cartridge::from_rom(make_rom(cart_type, rom_code, ram_code).into()).unwrap()
}

/// Bank number visible at `addr` (even, 0000-7FFF, away from the header).
fn bank_at(c: &Cartridge, addr: u16) -> usize {
    let lo = c.read_rom(addr) as usize;
    let hi = c.read_rom(addr + 1) as usize;
    assert!(
        hi & 0x80 != 0,
        "odd byte at {addr:04X} is not a bank marker"
    );
    lo | ((hi & 0x7F) << 8)
}

fn low(c: &Cartridge) -> usize {
    bank_at(c, 0x2000)
}
fn high(c: &Cartridge) -> usize {
    bank_at(c, 0x6000)
}

fn rom_err(data: Vec<u8>) -> String {
    match Cartridge::from_rom(data.into()) {
        Err(CoreError::Rom(m)) => m,
        Err(e) => panic!("wrong error kind {e:?}"),
        Ok(_) => panic!("ROM accepted"),
    }
}

// ---------------------------------------------------------------- header

#[test]
fn header_fields() {
    let mut rom = make_rom(0x10, 0x06, 0x03);
    rom[0x0134..0x0143].copy_from_slice(b"POKEMON CRYSTAL");
    rom[0x0146] = 0x03;
    rom[0x014B] = 0x33;
    fix_checksums(&mut rom);
    let c = Cartridge::from_rom(rom.into()).unwrap();
    let h = c.header();
    assert_eq!(h.title, "POKEMON CRYSTAL");
    assert_eq!(h.cartridge_type, 0x10);
    assert_eq!(h.cartridge_type_name, "MBC3+TIMER+RAM+BATTERY");
    assert_eq!(h.mbc, MbcKind::Mbc3);
    assert!(h.has_ram && h.has_battery && h.has_rtc && !h.has_rumble && !h.mbc30);
    assert_eq!(h.rom_banks, 128);
    assert_eq!(h.ram_banks, 4);
    assert_eq!(h.ram_bytes, 32 * 1024);
    assert_eq!(c.ram().len(), 32 * 1024);
    assert!(h.header_checksum_ok && h.global_checksum_ok);
    assert_eq!((h.sgb_flag, h.old_licensee, h.cgb_flag), (0x03, 0x33, 0x00));
}

#[test]
fn header_title_rules() {
    // CGB flag bit 7: title stops before 0x0142 (PyBoy).
    let mut rom = make_rom(0x00, 0x00, 0x00);
    rom[0x0134..0x0143].copy_from_slice(b"ABCDEFGHIJKLMNO");
    rom[0x0143] = 0x80;
    fix_checksums(&mut rom);
    let c = Cartridge::from_rom(rom.clone().into()).unwrap();
    assert_eq!(c.header().title, "ABCDEFGHIJKLMN");
    assert_eq!(c.header().cgb_flag, 0x80);
    // NUL terminates; bytes are Latin-1.
    rom[0x0143] = 0;
    rom[0x0134..0x0139].copy_from_slice(b"A\xE9B\0C");
    fix_checksums(&mut rom);
    let c = Cartridge::from_rom(rom.into()).unwrap();
    assert_eq!(c.header().title, "A\u{e9}B");
}

#[test]
fn header_ram_allocation_like_pyboy() {
    for (code, banks) in [(0u8, 1usize), (1, 1), (2, 1), (3, 4), (4, 16), (5, 8)] {
        let c = cart(0x1B, 0x04, code);
        assert_eq!(c.header().ram_banks, banks, "code {code}");
        assert_eq!(c.ram().len(), banks * 8192);
    }
    // MBC2 takes its RAM bank count from the header byte too.
    assert_eq!(cart(0x06, 0x03, 0x00).ram().len(), 8192);
}

#[test]
fn header_global_checksum_informative() {
    let mut rom = make_rom(0x01, 0x01, 0x00);
    rom[0x0150 + 0x4000] ^= 0x55;
    let c = Cartridge::from_rom(rom.into()).unwrap();
    assert!(!c.header().global_checksum_ok);
    assert!(c.header().header_checksum_ok);
}

#[test]
fn header_rom_size_codes() {
    for (code, banks) in [
        (0u8, 2usize),
        (1, 4),
        (5, 64),
        (8, 512),
        (0x52, 72),
        (0x54, 96),
    ] {
        let c = cart(0x19, code, 0);
        assert_eq!(c.header().rom_banks, banks);
    }
}

// ---------------------------------------------------------------- errors

#[test]
fn error_empty() {
    assert!(rom_err(vec![]).contains("empty"));
}

#[test]
fn error_not_whole_banks() {
    // Too small for a header, or not a whole number of 16 KiB banks: PyBoy refuses both.
    let m = rom_err(vec![0; 0x14F]);
    assert!(
        m.contains("335 bytes")
            && m.contains("not a multiple of the 16 KiB")
            && m.contains("less than one bank"),
        "{m}"
    );
    let mut rom = make_rom(0x01, 0x01, 0x00);
    rom.push(0);
    let m = rom_err(rom);
    assert!(
        m.contains("65537 bytes") && m.contains("1 trailing bytes after 4 whole bank"),
        "{m}"
    );
    let mut rom = make_rom(0x01, 0x02, 0x00);
    rom.truncate(100 * 1024);
    assert!(rom_err(rom).contains("102400 bytes is not a multiple"));
}

/// `make_rom`'s image cut or extended to `banks` banks (extra banks carry their markers).
fn resized(cart_type: u8, rom_code: u8, ram_code: u8, banks: usize) -> Cartridge {
    let mut rom = make_rom(cart_type, 0x08, ram_code);
    rom.truncate(banks * ROM_BANK_SIZE);
    rom[0x0148] = rom_code;
    fix_checksums(&mut rom);
    Cartridge::from_rom(rom.into()).unwrap()
}

#[test]
fn size_taken_from_the_file_not_the_header() {
    // Smaller than declared (64 KiB declared, 48 KiB present), larger than declared, and an
    // unknown ROM size code: all load, with the file's bank count.
    for (rom_code, banks) in [(0x01u8, 3usize), (0x00, 8), (0x77, 5), (0x01, 4)] {
        let c = resized(0x01, rom_code, 0x00, banks);
        let h = c.header();
        assert_eq!(h.rom_banks, banks);
        assert_eq!(h.rom_size_code, rom_code);
        assert_eq!(h.size_matches_declared(), rom_code == 0x01 && banks == 4);
    }
    assert_eq!(
        resized(0x01, 0x77, 0x00, 5).header().declared_rom_banks,
        None
    );
}

#[test]
fn bank_numbers_wrap_by_the_files_bank_count() {
    // 3 banks (not a power of two): every controller reduces modulo 3, as PyBoy does.
    let mut c = resized(0x01, 0x00, 0x00, 3);
    for (v, bank) in [(1u8, 1usize), (2, 2), (3, 0), (4, 1), (5, 2), (0x1F, 1)] {
        c.write_rom_area(0x2000, v, 0);
        assert_eq!(high(&c), bank, "MBC1 value {v}");
    }
    c.write_rom_area(0x6000, 1, 0);
    c.write_rom_area(0x4000, 1, 0); // bank 32 at 0000-3FFF: 32 % 3 = 2
    assert_eq!(low(&c), 2);
    let mut c = resized(0x13, 0x01, 0x03, 3);
    for (v, bank) in [(0u8, 1usize), (2, 2), (3, 0), (0x7F, 1), (0x80, 1)] {
        c.write_rom_area(0x2000, v, 0);
        assert_eq!(high(&c), bank, "MBC3 value {v:#x}");
    }
    let mut c = resized(0x19, 0x01, 0x00, 3);
    for (v, bank) in [(0u8, 0usize), (2, 2), (3, 0), (0xFF, 0)] {
        c.write_rom_area(0x2000, v, 0);
        assert_eq!(high(&c), bank, "MBC5 value {v:#x}");
    }
    c.write_rom_area(0x2000, 1, 0);
    c.write_rom_area(0x3000, 1, 0); // 0x101 % 3 = 2
    assert_eq!(high(&c), 2);
    let mut c = resized(0x05, 0x01, 0x00, 3);
    for (v, bank) in [(0u8, 1usize), (2, 2), (3, 0), (0x0F, 0)] {
        c.write_rom_area(0x2100, v, 0);
        assert_eq!(high(&c), bank, "MBC2 value {v:#x}");
    }
    // More banks than declared: banks past the declared size are reachable.
    let mut c = resized(0x19, 0x00, 0x00, 16);
    c.write_rom_area(0x2000, 9, 0);
    assert_eq!(high(&c), 9);
    // An MBC3 file of more than 128 banks is an MBC30 whatever 0x0148 says.
    let mut c = resized(0x11, 0x00, 0x00, 200);
    assert!(c.header().mbc30);
    c.write_rom_area(0x2000, 0xC7, 0);
    assert_eq!(high(&c), 0xC7);
}

#[test]
fn single_bank_file() {
    // PyBoy loads a 16 KiB file; bank 1 (mapped until the first bank write) reads past its
    // buffer. We read zeros there; bank writes wrap modulo 1.
    let mut c = resized(0x00, 0x00, 0x00, 1);
    assert_eq!(c.header().rom_banks, 1);
    assert_eq!(low(&c), 0);
    assert_eq!((c.read_rom(0x4000), c.read_rom(0x7FFF)), (0, 0));
    c.write_rom_area(0x2000, 2, 0);
    assert_eq!(high(&c), 0);
    let mut c = resized(0x01, 0x00, 0x00, 1);
    assert_eq!(c.read_rom(0x4001), 0);
    c.write_rom_area(0x2000, 5, 0);
    assert_eq!(high(&c), 0);
    assert_eq!(c.read_rom_banked(1, 0x4000), None);
    // States keep the unwritten bank-1 selection.
    let c = resized(0x19, 0x00, 0x00, 1);
    let mut w = StateWriter::new();
    c.save_state(&mut w);
    let data = w.buf;
    let mut d = resized(0x19, 0x00, 0x00, 1);
    d.load_state(&mut StateReader::new(&data)).unwrap();
    assert_eq!(d.rom_bank_high(), 1);
}

#[test]
fn error_header_checksum() {
    let mut rom = make_rom(0x00, 0x00, 0x00);
    rom[0x014D] ^= 1;
    let m = rom_err(rom);
    assert!(
        m.contains("checksum mismatch") && m.contains("0x014D"),
        "{m}"
    );
}

#[test]
fn error_unsupported_types() {
    for (t, name) in [
        (0xFCu8, "0xFC POCKET CAMERA is not supported"),
        (0x0B, "0x0B MMM01 is not supported"),
        (0x22, "0x22 MBC7+SENSOR+RUMBLE+RAM+BATTERY is not supported"),
        (0xFE, "0xFE HuC3 is not supported"),
        (0x04, "0x04 unknown cartridge type is not supported"),
    ] {
        let m = rom_err(make_rom(t, 0x00, 0x00));
        assert!(m.contains(name), "{m}");
    }
}

#[test]
fn error_bad_ram_size_code_before_type() {
    let m = rom_err(make_rom(0x01, 0x01, 0x06));
    assert!(
        m.contains("RAM size code 0x06") && m.contains("KeyError: 6"),
        "{m}"
    );
    // PyBoy looks at the RAM size before the type: an unknown type with an unknown RAM size
    // is refused for its RAM size.
    let m = rom_err(make_rom(0xFC, 0x00, 0xFF));
    assert!(m.contains("RAM size code 0xFF"), "{m}");
    // MBC2 ignores the RAM size for its RAM but PyBoy still refuses unknown codes.
    assert!(rom_err(make_rom(0x06, 0x01, 0x07)).contains("RAM size code 0x07"));
}

// ---------------------------------------------------------------- ROM only

#[test]
fn rom_only_banking_quirk() {
    let mut c = cart(0x00, 0x00, 0x00);
    assert_eq!((low(&c), high(&c)), (0, 1));
    // PyBoy maps max(v,1) & 1: even non-zero values put bank 0 at 4000-7FFF.
    for (v, bank) in [(0u8, 1usize), (1, 1), (2, 0), (3, 1), (0xFE, 0)] {
        c.write_rom_area(0x2000, v, 0);
        assert_eq!(high(&c), bank, "value {v:#x}");
        assert_eq!(c.rom_bank_high(), bank);
    }
    // Other areas do nothing.
    c.write_rom_area(0x2000, 1, 0);
    c.write_rom_area(0x0000, 0x0A, 0);
    c.write_rom_area(0x4000, 0x02, 0);
    c.write_rom_area(0x6000, 0x01, 0);
    assert_eq!((low(&c), high(&c)), (0, 1));
}

#[test]
fn rom_only_ram() {
    // Type 00: reads 0xFF, but PyBoy still stores writes.
    let mut c = cart(0x00, 0x00, 0x00);
    c.write_ram(0xA123, 0x42, 0);
    assert_eq!(c.read_ram(0xA123, 0), 0xFF);
    assert_eq!(c.ram()[0x123], 0x42);
    assert!(c.battery_ram().is_none());
    // Type 08: always enabled.
    let mut c = cart(0x08, 0x00, 0x00);
    c.write_ram(0xBFFF, 0x99, 0);
    assert_eq!(c.read_ram(0xBFFF, 0), 0x99);
    c.write_rom_area(0x0000, 0x00, 0);
    assert_eq!(c.read_ram(0xBFFF, 0), 0x99);
}

// ---------------------------------------------------------------- MBC1

#[test]
fn mbc1_lower_register() {
    let mut c = cart(0x01, 0x04, 0x00); // 512 KiB, 32 banks
    for v in 0..=0xFFu8 {
        c.write_rom_area(0x2000 + v as u16, v, 0);
        let expect = ((v & 0x1F).max(1)) as usize;
        assert_eq!(high(&c), expect, "write {v:#x}");
        assert_eq!(low(&c), 0);
    }
    // Upper bits are ignored modulo 32 banks, also in mode 1 (bank 32 % 32 = 0 at 0000).
    c.write_rom_area(0x2000, 5, 0);
    c.write_rom_area(0x4000, 1, 0);
    assert_eq!(high(&c), 5);
    c.write_rom_area(0x6000, 1, 0);
    assert_eq!((low(&c), high(&c)), (0, 5));
}

#[test]
fn mbc1_2mib_quirks_both_modes() {
    let mut c = cart(0x03, 0x06, 0x03); // 2 MiB (128 banks), 32 KiB RAM
    for upper in 0..4u8 {
        for lower in [0u8, 1, 0x1F] {
            c.write_rom_area(0x4000, upper, 0);
            c.write_rom_area(0x2000, lower, 0);
            let want = ((upper as usize) << 5) | lower.max(1) as usize;
            c.write_rom_area(0x6000, 0, 0);
            assert_eq!((low(&c), high(&c)), (0, want));
            c.write_rom_area(0x6000, 1, 0);
            assert_eq!((low(&c), high(&c)), ((upper as usize) << 5, want));
            assert_eq!(c.rom_bank_low(), (upper as usize) << 5);
        }
    }
    // Banks 0x20/0x40/0x60 are unreachable at 4000: they become 0x21/0x41/0x61.
    c.write_rom_area(0x6000, 0, 0);
    for (upper, want) in [(1u8, 0x21), (2, 0x41), (3, 0x61)] {
        c.write_rom_area(0x4000, upper, 0);
        c.write_rom_area(0x2000, 0x20, 0); // 0x20 & 0x1F = 0 -> 1
        assert_eq!(high(&c), want);
    }
}

#[test]
fn mbc1_1mib_wraps() {
    let mut c = cart(0x01, 0x05, 0x00); // 1 MiB: 64 banks, not a multicart
    c.write_rom_area(0x4000, 2, 0);
    c.write_rom_area(0x2000, 3, 0);
    assert_eq!(high(&c), 3); // (0x40|3) % 64
    c.write_rom_area(0x4000, 3, 0);
    assert_eq!(high(&c), 0x23);
    c.write_rom_area(0x6000, 1, 0);
    assert_eq!(low(&c), 0x20);
    // Small ROM: bank 4 of a 4-bank ROM is bank 0.
    let mut c = cart(0x01, 0x01, 0x00);
    c.write_rom_area(0x2000, 4, 0);
    assert_eq!(high(&c), 0);
    c.write_rom_area(0x2000, 7, 0);
    assert_eq!(high(&c), 3);
}

#[test]
fn mbc1_ram() {
    let mut c = cart(0x03, 0x05, 0x03); // 4 RAM banks
    assert_eq!(c.read_ram(0xA000, 0), 0xFF);
    c.write_ram(0xA000, 0x11, 0); // disabled: ignored
    c.write_rom_area(0x0000, 0x1A, 0); // low nibble A enables
    assert_eq!(c.read_ram(0xA000, 0), 0x00);
    // Mode 0: always bank 0.
    c.write_rom_area(0x4000, 2, 0);
    c.write_ram(0xA000, 0xA0, 0);
    assert_eq!(c.ram()[0], 0xA0);
    // Mode 1: upper register selects the bank.
    c.write_rom_area(0x6000, 1, 0);
    for b in 0..4u8 {
        c.write_rom_area(0x4000, b, 0);
        c.write_ram(0xB000, 0xB0 + b, 0);
    }
    for b in 0..4u8 {
        c.write_rom_area(0x4000, b, 0);
        assert_eq!(c.read_ram(0xB000, 0), 0xB0 + b);
        assert_eq!(c.ram()[b as usize * 8192 + 0x1000], 0xB0 + b);
    }
    c.write_rom_area(0x0000, 0x0B, 0);
    assert_eq!(c.read_ram(0xB000, 0), 0xFF);
}

#[test]
fn mbc1_ram_select_register_like_pyboy() {
    // One RAM bank (code 0, type 01 without RAM still gets 8 KiB, as in PyBoy).
    let mut c = cart(0x01, 0x02, 0x00);
    c.write_rom_area(0x0000, 0x0A, 0);
    c.write_rom_area(0x6000, 1, 0);
    c.write_rom_area(0x4000, 3, 0);
    c.write_ram(0xA010, 0x77, 0); // stored in bank 3 % 1 = 0
    assert_eq!(c.ram_bank(), 3); // the raw register after a write
    assert_eq!(c.read_ram(0xA010, 0), 0x77);
    assert_eq!(c.ram_bank(), 0); // reduced after a read
}

fn multicart_rom() -> Vec<u8> {
    let mut rom = make_rom(0x01, 0x05, 0x00);
    for b in 0..64 {
        let s = b * ROM_BANK_SIZE;
        for (i, x) in rom[s + 0x0104..s + 0x0134].iter_mut().enumerate() {
            *x = (i as u8).wrapping_mul(7);
        }
    }
    fix_checksums(&mut rom);
    rom
}

#[test]
fn mbc1_multicart() {
    let mut c = Cartridge::from_rom(multicart_rom().into()).unwrap();
    assert_eq!(c.mapper, Mapper::Mbc1Multicart);
    c.write_rom_area(0x4000, 1, 0);
    c.write_rom_area(0x2000, 0x13, 0);
    assert_eq!(high(&c), 0x13);
    c.write_rom_area(0x2000, 0x10, 0); // sub-cart bank 0
    assert_eq!(high(&c), 0x10);
    c.write_rom_area(0x2000, 0x00, 0); // 0 -> 1
    assert_eq!(high(&c), 0x11);
    c.write_rom_area(0x6000, 1, 0);
    c.write_rom_area(0x4000, 3, 0);
    assert_eq!((low(&c), high(&c)), (0x30, 0x31));
}

// ---------------------------------------------------------------- MBC2

#[test]
fn mbc2_rom_banks() {
    let mut c = cart(0x06, 0x03, 0x00); // 256 KiB, 16 banks
    for v in 0..=0xFFu8 {
        c.write_rom_area(0x2100, v, 0);
        assert_eq!(high(&c), (v & 0x0F).max(1) as usize);
    }
    // Address bit 8 clear: RAM enable, not ROM bank.
    c.write_rom_area(0x2100, 5, 0);
    c.write_rom_area(0x2000, 7, 0);
    assert_eq!(high(&c), 5);
    c.write_rom_area(0x3F00, 9, 0); // bit 8 set
    assert_eq!(high(&c), 9);
    // 4000-7FFF writes do nothing.
    c.write_rom_area(0x4100, 3, 0);
    c.write_rom_area(0x6100, 3, 0);
    assert_eq!(high(&c), 9);
    // 4-bank ROM: modulo.
    let mut c = cart(0x05, 0x01, 0x00);
    c.write_rom_area(0x2100, 6, 0);
    assert_eq!(high(&c), 2);
}

#[test]
fn mbc2_ram_nibbles_and_echo() {
    let mut c = cart(0x06, 0x02, 0x00);
    assert_eq!(c.read_ram(0xA000, 0), 0xFF);
    c.write_rom_area(0x0100, 0x0A, 0); // bit 8 set: ROM bank register, not enable
    assert_eq!(c.read_ram(0xA000, 0), 0xFF);
    c.write_rom_area(0x0000, 0xFA, 0); // low nibble 0xA enables
    assert!(c.ram_enabled());
    c.write_ram(0xA000, 0x5A, 0);
    assert_eq!(c.ram()[0], 0xFA); // stored with the upper nibble set
    for echo in (0xA000..0xC000u16).step_by(0x200) {
        assert_eq!(c.read_ram(echo, 0), 0xFA);
    }
    c.write_ram(0xBFFF, 0x03, 0);
    assert_eq!(c.read_ram(0xA1FF, 0), 0xF3);
    assert_eq!(c.read_ram(0xA000, 0), 0xFA);
    assert!(c.ram()[0x200..].iter().all(|&b| b == 0));
    c.write_rom_area(0x0000, 0x0B, 0);
    assert_eq!(c.read_ram(0xA1FF, 0), 0xFF);
    c.write_ram(0xA1FF, 0x00, 0); // ignored while disabled
    assert_eq!(c.ram()[0x1FF], 0xF3);
}

// ---------------------------------------------------------------- MBC3

#[test]
fn mbc3_rom_banks() {
    let mut c = cart(0x13, 0x06, 0x03); // 2 MiB
    for v in 0..=0xFFu8 {
        c.write_rom_area(0x2000, v, 0);
        assert_eq!(high(&c), (v & 0x7F).max(1) as usize, "write {v:#x}");
        assert_eq!(low(&c), 0);
    }
    let mut c = cart(0x11, 0x02, 0x00); // 8 banks: modulo
    c.write_rom_area(0x3FFF, 0x0A, 0);
    assert_eq!(high(&c), 2);
    c.write_rom_area(0x3FFF, 0x08, 0);
    assert_eq!(high(&c), 0);
}

#[test]
fn mbc3_ram_banks_and_enable() {
    let mut c = cart(0x13, 0x05, 0x03);
    for (v, en) in [
        (0x0Au8, true),
        (0x00, false),
        (0x1A, true),
        (0x0B, false),
        (0xEA, true),
    ] {
        c.write_rom_area(0x0000, v, 0);
        assert_eq!(c.ram_enabled(), en, "{v:#x}");
    }
    for b in 0..4u8 {
        c.write_rom_area(0x4000, b, 0);
        c.write_ram(0xA000 + b as u16, 0x30 + b, 0);
    }
    for b in 0..4u8 {
        c.write_rom_area(0x4000, b, 0);
        assert_eq!(c.read_ram(0xA000 + b as u16, 0), 0x30 + b);
    }
    c.write_rom_area(0x4000, 5, 0); // 5 % 4 = 1
    assert_eq!(c.ram_bank(), 1);
    assert_eq!(c.read_ram(0xA001, 0), 0x31);
    // RTC selects on a cart without clock: read 0, writes ignored.
    c.write_rom_area(0x4000, 0x08, 0);
    assert_eq!(c.ram_bank(), 8);
    c.write_ram(0xA000, 0x55, 0);
    assert_eq!(c.read_ram(0xA000, 0), 0x00);
    c.write_rom_area(0x6000, 0x01, 0); // latch write without clock: nothing
    c.write_rom_area(0x0000, 0x00, 0);
    assert_eq!(c.read_ram(0xA000, 0), 0xFF);
}

#[test]
fn mbc30() {
    let mut c = cart(0x10, 0x07, 0x05); // 4 MiB, 64 KiB RAM
    assert!(c.header().mbc30);
    c.write_rom_area(0x2000, 0xC3, 0);
    assert_eq!(high(&c), 0xC3);
    c.write_rom_area(0x2000, 0x00, 0);
    assert_eq!(high(&c), 1);
    c.write_rom_area(0x0000, 0x0A, 0);
    for b in 0..8u8 {
        c.write_rom_area(0x4000, b, 0);
        c.write_ram(0xA000, 0x40 + b, 0);
    }
    for b in 0..8u8 {
        c.write_rom_area(0x4000, b, 0);
        assert_eq!(c.read_ram(0xA000, 0), 0x40 + b);
    }
    // 16 RAM banks (code 4): selects 13-15 read RAM that can't be written.
    let mut c = cart(0x13, 0x05, 0x04);
    assert!(c.header().mbc30);
    c.write_rom_area(0x0000, 0x0A, 0);
    c.ram_mut()[13 * 8192] = 0x66;
    c.write_rom_area(0x4000, 13, 0);
    assert_eq!(c.read_ram(0xA000, 0), 0x66);
    c.write_ram(0xA000, 0x01, 0);
    assert_eq!(c.read_ram(0xA000, 0), 0x66);
    c.write_rom_area(0x4000, 0x09, 0); // no clock: RAM bank 9
    c.ram_mut()[9 * 8192 + 5] = 0x99;
    assert_eq!(c.read_ram(0xA005, 0), 0x99);
    // Plain MBC3 keeps 7 bits.
    let mut c = cart(0x13, 0x06, 0x03);
    assert!(!c.header().mbc30);
    c.write_rom_area(0x2000, 0x81, 0);
    assert_eq!(high(&c), 1);
}

/// Helpers for an MBC3+TIMER cart: (cart, current time).
struct Clock {
    c: Cartridge,
    now: u64,
}

impl Clock {
    fn new() -> Clock {
        let mut c = cart(0x10, 0x04, 0x03);
        c.write_rom_area(0x0000, 0x0A, 0);
        Clock { c, now: 0 }
    }
    fn wait(&mut self, cycles: u64) {
        self.now += cycles;
    }
    fn set(&mut self, reg: u8, v: u8) {
        self.c.write_rom_area(0x4000, reg, self.now);
        self.c.write_ram(0xA000, v, self.now);
    }
    fn latch(&mut self) {
        self.c.write_rom_area(0x6000, 0, self.now);
        self.c.write_rom_area(0x6000, 1, self.now);
    }
    fn get(&mut self, reg: u8) -> u8 {
        self.c.write_rom_area(0x4000, reg, self.now);
        self.c.read_ram(0xA000, self.now)
    }
    /// [sec, min, hour, day low, 0C] after a latch.
    fn read_all(&mut self) -> [u8; 5] {
        self.latch();
        [
            self.get(8),
            self.get(9),
            self.get(0xA),
            self.get(0xB),
            self.get(0xC),
        ]
    }
}

#[test]
fn rtc_counts_emulated_seconds() {
    let mut k = Clock::new();
    assert_eq!(k.read_all(), [0, 0, 0, 0, 0]);
    k.wait(SEC - 1);
    assert_eq!(k.read_all(), [0, 0, 0, 0, 0]);
    k.wait(1);
    assert_eq!(k.read_all(), [1, 0, 0, 0, 0]);
    k.wait(61 * SEC + SEC / 2);
    assert_eq!(k.read_all(), [2, 1, 0, 0, 0]);
    k.wait(SEC / 2);
    assert_eq!(k.read_all(), [3, 1, 0, 0, 0]);
    // Long jump: 3 days 4 hours 5 minutes 6 seconds (closed form).
    k.wait((3 * 86400 + 4 * 3600 + 5 * 60 + 6) * SEC);
    assert_eq!(k.read_all(), [9, 6, 4, 3, 0]);
}

#[test]
fn rtc_latch_semantics() {
    let mut k = Clock::new();
    k.wait(5 * SEC);
    k.latch();
    assert_eq!(k.get(8), 5);
    k.wait(5 * SEC);
    assert_eq!(k.get(8), 5); // still latched
    k.c.write_rom_area(0x6000, 1, k.now); // 1 again without 0: no new latch
    assert_eq!(k.get(8), 5);
    k.c.write_rom_area(0x6000, 2, k.now); // other values ignored
    k.c.write_rom_area(0x6000, 1, k.now);
    assert_eq!(k.get(8), 5);
    k.latch();
    assert_eq!(k.get(8), 10);
    // Writes go to the live counters; the latch keeps the old values until re-latched.
    k.set(9, 42);
    assert_eq!(k.get(9), 0);
    k.latch();
    assert_eq!(k.get(9), 42);
    // Register widths.
    k.set(8, 0xFF);
    k.set(9, 0xFF);
    k.set(0xA, 0xFF);
    k.set(0xB, 0xFF);
    k.set(0xC, 0xFF);
    assert_eq!(k.read_all(), [0x3F, 0x3F, 0x1F, 0xFF, 0xC1]);
    // Disabled RAM hides the clock.
    k.c.write_rom_area(0x0000, 0, k.now);
    assert_eq!(k.get(8), 0xFF);
}

#[test]
fn rtc_halt_and_live_bits() {
    let mut k = Clock::new();
    k.wait(3 * SEC);
    k.set(0xC, 0x40); // halt at 3 s
    k.wait(100 * SEC);
    assert_eq!(k.read_all(), [3, 0, 0, 0, 0x40]);
    k.set(0xC, 0x00); // resume; the halted time is lost
    k.wait(2 * SEC);
    assert_eq!(k.read_all(), [5, 0, 0, 0, 0]);
    // 0C: day bit 8 is latched, halt/carry are live.
    k.latch();
    k.set(0xC, 0xC1);
    assert_eq!(k.get(0xC), 0xC0);
    k.latch();
    assert_eq!(k.get(0xC), 0xC1);
}

#[test]
fn rtc_day_carry() {
    let mut k = Clock::new();
    k.set(0xC, 0x41); // halt while setting
    k.set(0xB, 0xFF);
    k.set(0xA, 23);
    k.set(9, 59);
    k.set(8, 59);
    k.set(0xC, 0x01); // day 0x1FF, running
    k.wait(SEC);
    assert_eq!(k.read_all(), [0, 0, 0, 0, 0x80]);
    k.wait(86400 * SEC);
    assert_eq!(k.read_all(), [0, 0, 0, 1, 0x80]); // carry sticks
    k.set(0xC, 0x00);
    assert_eq!(k.read_all(), [0, 0, 0, 1, 0x00]);
    // Day 255 -> 256 sets bit 8.
    k.set(0xB, 0xFF);
    k.wait(86400 * SEC);
    assert_eq!(k.read_all(), [0, 0, 0, 0, 0x01]);
    // Closed form across the 512-day wrap.
    k.wait(600 * 86400 * SEC);
    assert_eq!(k.read_all(), [0, 0, 0, (256 + 600 - 512) as u8, 0x81]);
}

#[test]
fn rtc_out_of_range_counters() {
    let mut k = Clock::new();
    k.set(0xC, 0x40);
    k.set(8, 62);
    k.set(9, 5);
    k.set(0xC, 0x00);
    k.wait(SEC);
    assert_eq!(k.read_all()[..2], [63, 5]);
    k.wait(SEC); // 63 -> 0 without a minute carry
    assert_eq!(k.read_all()[..2], [0, 5]);
    // Hours 31 at xx:59:59 -> 0 without a day carry.
    k.set(0xC, 0x40);
    k.set(0xA, 31);
    k.set(9, 59);
    k.set(8, 59);
    k.set(0xC, 0x00);
    k.wait(SEC);
    assert_eq!(k.read_all(), [0, 0, 0, 0, 0]);
    // Minutes 60: counts to 63, wraps, then only a 59 -> 0 carries an hour.
    k.set(9, 60);
    k.set(8, 0);
    k.wait((4 * 60 + 59 * 60 + 1) * SEC);
    assert_eq!(k.read_all(), [1, 59, 0, 0, 0]);
    k.wait(59 * SEC);
    assert_eq!(k.read_all(), [0, 0, 1, 0, 0]);
}

#[test]
fn rtc_seconds_write_clears_subsecond() {
    let mut k = Clock::new();
    k.wait(3 * SEC / 4);
    k.set(8, 0);
    k.wait(SEC / 2);
    assert_eq!(k.read_all()[0], 0);
    k.wait(SEC / 2);
    assert_eq!(k.read_all()[0], 1);
}

#[test]
fn rtc_ticks_only_on_access() {
    // PyBoy catches the clock up on A000-BFFF accesses with an RTC register selected and on
    // 6000-7FFF writes. A halt written after a long gap still counts the gap first.
    let mut k = Clock::new();
    k.c.write_rom_area(0x4000, 0x00, 0); // RAM bank selected: accesses don't tick
    k.wait(10 * SEC);
    k.c.read_ram(0xA000, k.now);
    k.set(0xC, 0x40); // the 10 s before the halt are counted
    k.wait(10 * SEC);
    assert_eq!(k.read_all(), [10, 0, 0, 0, 0x40]);
}

/// Closed-form advancing equals second-by-second stepping, for in-range and out-of-range
/// starting values.
#[test]
fn rtc_closed_form_matches_stepping() {
    let mut rnd = crate::test_rng::xorshift(0x1234_5678_9abc_def0);
    for _ in 0..300 {
        let mut a = Rtc::new();
        let regs = [
            rnd() as u8,
            rnd() as u8,
            rnd() as u8,
            rnd() as u8,
            rnd() as u8 & 0x81,
        ];
        let valid = rnd().is_multiple_of(2);
        for (i, &v) in regs.iter().enumerate() {
            let v = match (valid, i) {
                (true, 0) | (true, 1) => v % 60,
                (true, 2) => v % 24,
                _ => v,
            };
            a.write_register(8 + i as u16, v);
        }
        let mut b = a.clone();
        let n = rnd() % 200_000;
        a.catch_up(n * SEC);
        for _ in 0..n {
            b.step_one_second();
        }
        assert_eq!(
            a.live_registers(),
            b.live_registers(),
            "start {regs:?} valid {valid} n {n}"
        );
    }
}

// ---------------------------------------------------------------- MBC5

#[test]
fn mbc5_nine_bit_banks() {
    let mut c = cart(0x19, 0x08, 0x00); // 8 MiB, 512 banks
    c.write_rom_area(0x2000, 0, 0);
    assert_eq!(high(&c), 0); // bank 0 is allowed
    c.write_rom_area(0x2FFF, 0x45, 0);
    assert_eq!(high(&c), 0x45);
    c.write_rom_area(0x3000, 0xFF, 0); // only bit 0
    assert_eq!(high(&c), 0x145);
    c.write_rom_area(0x2000, 0x00, 0);
    assert_eq!(high(&c), 0x100);
    c.write_rom_area(0x3FFF, 0x02, 0);
    assert_eq!(high(&c), 0x000);
    assert_eq!(low(&c), 0);
    // 6000-7FFF ignored.
    c.write_rom_area(0x6000, 1, 0);
    assert_eq!((low(&c), high(&c)), (0, 0));
    // 4 MiB: the 9th bit is reduced away immediately and so forgotten.
    let mut c = cart(0x19, 0x07, 0x00);
    c.write_rom_area(0x2000, 0x12, 0);
    c.write_rom_area(0x3000, 1, 0);
    assert_eq!(high(&c), 0x12);
    // 64 banks: the low byte is reduced, then reused by a write to the high bit.
    let mut c = cart(0x19, 0x05, 0x00);
    c.write_rom_area(0x2000, 0x45, 0);
    assert_eq!(high(&c), 5);
    c.write_rom_area(0x3000, 0, 0);
    assert_eq!(high(&c), 5);
}

#[test]
fn mbc5_ram_and_rumble() {
    let mut c = cart(0x1B, 0x04, 0x04); // 16 RAM banks
    c.write_rom_area(0x0000, 0x1A, 0); // only exactly 0x0A enables
    assert_eq!(c.read_ram(0xA000, 0), 0xFF);
    c.write_rom_area(0x0000, 0x0A, 0);
    for b in 0..16u8 {
        c.write_rom_area(0x4000, b | 0xF0, 0);
        c.write_ram(0xA000, b + 1, 0);
    }
    for b in 0..16u8 {
        c.write_rom_area(0x5FFF, b, 0);
        assert_eq!(c.read_ram(0xA000, 0), b + 1);
    }
    assert!(!c.rumble_active());
    // Rumble cart: bit 3 drives the motor and is still part of the bank number (PyBoy).
    let mut c = cart(0x1E, 0x04, 0x03); // 4 RAM banks
    c.write_rom_area(0x0000, 0x0A, 0);
    c.write_rom_area(0x4000, 0x09, 0);
    assert!(c.rumble_active());
    assert_eq!(c.ram_bank(), 9 % 4);
    c.write_rom_area(0x4000, 0x02, 0);
    assert!(!c.rumble_active());
    assert_eq!(c.ram_bank(), 2);
}

// ---------------------------------------------------------------- banked access, battery, state

#[test]
fn read_rom_banked_any_bank() {
    let c = cart(0x19, 0x03, 0x00); // 16 banks
    assert_eq!(c.read_rom_banked(9, 0x4000), Some(9));
    assert_eq!(c.read_rom_banked(9, 0x0002), Some(9));
    assert_eq!(c.read_rom_banked(15, 0x7FFF), Some(0x80));
    assert_eq!(c.read_rom_banked(16, 0x4000), None);
    assert_eq!(c.read_rom_banked(0, 0x8000), None);
}

#[test]
fn battery_round_trip_plain() {
    let mut c = cart(0x03, 0x02, 0x03);
    c.write_rom_area(0x0000, 0x0A, 0);
    c.write_rom_area(0x6000, 1, 0);
    c.write_rom_area(0x4000, 2, 0);
    c.write_ram(0xA777, 0x5C, 0);
    let saved = c.battery_ram().unwrap();
    assert_eq!(saved.len(), 4 * 8192);
    let mut d = cart(0x03, 0x02, 0x03);
    d.load_battery_ram(&saved).unwrap();
    assert_eq!(d.ram(), c.ram());
    // Wrong sizes and no-battery carts are refused with a clear error.
    match d.load_battery_ram(&saved[1..]) {
        Err(CoreError::CartridgeRam(m)) => assert!(m.contains("32768") && m.contains("32767")),
        other => panic!("{other:?}"),
    }
    let mut e = cart(0x02, 0x02, 0x03);
    assert!(e.battery_ram().is_none());
    match e.load_battery_ram(&saved) {
        Err(CoreError::CartridgeRam(m)) => assert!(m.contains("no battery")),
        other => panic!("{other:?}"),
    }
    // MBC2: the RAM with its upper nibbles.
    let mut m2 = cart(0x06, 0x02, 0x00);
    m2.write_rom_area(0x0000, 0x0A, 0);
    m2.write_ram(0xA001, 0x07, 0);
    assert_eq!(m2.battery_ram().unwrap()[..2], [0x00, 0xF7]);
}

#[test]
fn battery_round_trip_with_clock() {
    let mut k = Clock::new();
    k.wait(3725 * SEC + 1234);
    k.set(0xB, 7);
    k.latch();
    k.set(0xC, 0x41);
    k.c.write_rom_area(0x4000, 1, k.now);
    k.c.write_ram(0xA000, 0xEE, k.now);
    let saved = k.c.battery_ram().unwrap();
    assert_eq!(saved.len(), 4 * 8192 + 16);
    let tail = &saved[4 * 8192..];
    assert_eq!(tail[..11], [5, 2, 1, 7, 0x41, 5, 2, 1, 7, 0, 1]);
    assert_eq!(u32::from_le_bytes(tail[12..16].try_into().unwrap()), 1234);
    let mut l = Clock::new();
    l.c.load_battery_ram(&saved).unwrap();
    assert_eq!(l.c.ram(), k.c.ram());
    assert_eq!(l.c.rtc().unwrap().live_registers(), [5, 2, 1, 7, 0x41]);
    assert_eq!(l.c.rtc().unwrap().latched_registers(), [5, 2, 1, 7, 0]);
    assert!(l.c.load_battery_ram(&saved[..4 * 8192]).is_err());
    let mut bad = saved.clone();
    bad[4 * 8192 + 15] = 0xFF; // sub-second count out of range
    assert!(l.c.load_battery_ram(&bad).is_err());
}

/// A deterministic mix of bus operations; returns every value read.
fn exercise(c: &mut Cartridge, seed: u64, steps: usize, now: &mut u64) -> Vec<u8> {
    let mut next = crate::test_rng::xorshift(seed | 1);
    let mut out = Vec::new();
    for _ in 0..steps {
        let s = next();
        *now += (s >> 40) % (SEC / 2);
        let addr = (s >> 8) as u16;
        let v = (s >> 32) as u8;
        match s % 5 {
            0 => c.write_rom_area(addr & 0x7FFF, if s & 0x100 != 0 { 0x0A } else { v }, *now),
            1 => c.write_ram(0xA000 | (addr & 0x1FFF), v, *now),
            2 => out.push(c.read_ram(0xA000 | (addr & 0x1FFF), *now)),
            _ => out.push(c.read_rom(addr & 0x7FFF)),
        }
    }
    out
}

#[test]
fn save_state_round_trip_all_mappers() {
    for (t, rc, ram) in [
        (0x09u8, 0x00u8, 0x02u8),
        (0x03, 0x06, 0x03),
        (0x03, 0x05, 0x00),
        (0x06, 0x03, 0x00),
        (0x10, 0x06, 0x03),
        (0x10, 0x07, 0x05),
        (0x1E, 0x08, 0x04),
    ] {
        let mut a = cart(t, rc, ram);
        let mut now = 0;
        exercise(&mut a, 7, 5000, &mut now);
        let mut w = StateWriter::new();
        a.save_state(&mut w);
        let mut b = cart(t, rc, ram);
        let mut r = StateReader::new(&w.buf);
        b.load_state(&mut r).unwrap();
        assert_eq!(r.remaining(), 0);
        let mut now_b = now;
        let ra = exercise(&mut a, 99, 5000, &mut now);
        let rb = exercise(&mut b, 99, 5000, &mut now_b);
        assert_eq!(ra, rb, "type {t:#x}");
        assert_eq!(a.ram(), b.ram());
        assert_eq!(a.battery_ram(), b.battery_ram());
        // Truncated states are refused without changing anything.
        let before = b.ram().to_vec();
        let mut r = StateReader::new(&w.buf[..w.buf.len() - 1]);
        assert!(matches!(b.load_state(&mut r), Err(CoreError::State(_))));
        assert_eq!(b.ram(), &before[..]);
    }
}

#[test]
fn save_state_from_other_cartridge_refused() {
    let a = cart(0x03, 0x04, 0x03);
    let mut w = StateWriter::new();
    a.save_state(&mut w);
    let mut b = cart(0x03, 0x05, 0x03);
    match b.load_state(&mut StateReader::new(&w.buf)) {
        Err(CoreError::State(m)) => assert!(m.contains("another cartridge"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn save_state_rejects_out_of_range_banks() {
    let a = cart(0x19, 0x02, 0x00);
    let mut w = StateWriter::new();
    a.save_state(&mut w);
    // rom_bank sits right after the 9-byte identity block.
    w.buf[9..11].copy_from_slice(&100u16.to_le_bytes());
    let mut b = cart(0x19, 0x02, 0x00);
    assert!(b.load_state(&mut StateReader::new(&w.buf)).is_err());
    assert_eq!(high(&b), 1);
}

// ---------------------------------------------------------------- differential vs PyBoy

fn fnv(h: u64, b: u8) -> u64 {
    (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3)
}

/// Same op sequence as tools/cartridge_pyboy_check.py; returns the digest of reads + RAM.
fn pyboy_sequence_digest(c: &mut Cartridge, seed: u64, steps: usize) -> u64 {
    let mut h = 0xCBF2_9CE4_8422_2325u64;
    let mut next = crate::test_rng::xorshift(seed | 1);
    for _ in 0..steps {
        let s = next();
        let addr = (s >> 8) as u16;
        let v = (s >> 32) as u8;
        match s % 6 {
            0 => c.write_rom_area(addr & 0x7FFF, if s & 0x100 != 0 { 0x0A } else { v }, 0),
            1 => c.write_rom_area(addr & 0x7FFF, v & 0x1F, 0),
            2 => c.write_ram(0xA000 | (addr & 0x1FFF), v, 0),
            3 => h = fnv(h, c.read_ram(0xA000 | (addr & 0x1FFF), 0)),
            _ => {
                let a = addr & 0x7FFF;
                h = fnv(h, c.read_rom(if a < 0x100 { a | 0x100 } else { a }));
            }
        }
    }
    c.ram().iter().fold(h, |h, &b| fnv(h, b))
}

/// Digests printed by `python tools/cartridge_pyboy_check.py 20000` (PyBoy 2.8.1 as a black
/// box, driven through `pyboy.memory`): every value read during 20000 random MBC writes, RAM
/// accesses and ROM reads, then all RAM banks.
#[test]
fn pyboy_differential() {
    let expected: [(u8, u8, u8, bool, u64); 17] = [
        (0x00, 0x00, 0x00, false, 0x42DDCE0697981D9D),
        (0x08, 0x00, 0x00, false, 0x51AF4415A8C6264F),
        (0x01, 0x06, 0x00, false, 0x097CE2856E13D55D),
        (0x03, 0x06, 0x03, false, 0xAFFC80DD54A70D88),
        (0x03, 0x05, 0x02, false, 0x6158B2F17AF86D8D),
        (0x02, 0x01, 0x03, false, 0x7D56CE554029BFB0),
        (0x01, 0x05, 0x00, true, 0x63464489EBC76E38),
        (0x05, 0x03, 0x00, false, 0x2DA889063C6D04DB),
        (0x06, 0x01, 0x00, false, 0x9CB10C8145272307),
        (0x11, 0x06, 0x00, false, 0x9B9EAC46E407AD8C),
        (0x13, 0x05, 0x03, false, 0xB2C7FC0D07B0CCAE),
        (0x12, 0x02, 0x04, false, 0x96E8D951C09D1B2D),
        (0x13, 0x07, 0x05, false, 0x16A8988EA5E23B28),
        (0x19, 0x08, 0x00, false, 0x1E6EEA411E48B443),
        (0x1B, 0x07, 0x04, false, 0x3E7995AA0E4F869E),
        (0x1E, 0x05, 0x03, false, 0x5ED306193C262568),
        (0x1C, 0x02, 0x01, false, 0x1DFC8D7E208582BC),
    ];
    let mut failed = Vec::new();
    for (t, rc, ram, multi, want) in expected {
        let rom = if multi {
            multicart_rom()
        } else {
            make_rom(t, rc, ram)
        };
        let mut c = Cartridge::from_rom(rom.into()).unwrap();
        let seed = 0x9E37_79B9_7F4A_7C15u64 ^ ((t as u64) << 16 | (rc as u64) << 8 | ram as u64);
        let got = pyboy_sequence_digest(&mut c, seed, 20000);
        if got != want {
            failed.push(format!(
                "type {t:#04x} rom {rc:#04x} ram {ram:#04x}: {got:#018X}"
            ));
        }
    }
    assert!(failed.is_empty(), "differ from PyBoy: {failed:#?}");
}

/// Replays a trace recorded from PyBoy 2.8.1 with `python tools/cartridge_pyboy_check.py --rtc
/// OUT 600` on an MBC3+TIMER+RAM+BATTERY cart (128 KiB ROM, 32 KiB RAM): register selects, latch
/// writes, register writes (near-rollover, out-of-range, halt/carry values), RAM enables, and
/// reads, each at the CPU cycle count PyBoy had, spread over ~hours of emulated time.
#[test]
fn pyboy_rtc_trace() {
    let trace = include_str!("pyboy_rtc_trace.txt");
    let mut c = cart(0x10, 0x02, 0x03);
    let mut reads = 0;
    for (n, line) in trace.lines().enumerate() {
        let f: Vec<&str> = line.split(' ').collect();
        let now: u64 = f[0].parse().unwrap();
        let addr: u16 = f[2].parse().unwrap();
        let value: u8 = f[3].parse().unwrap();
        match f[1] {
            "w" if addr < 0x8000 => c.write_rom_area(addr, value, now),
            "w" => c.write_ram(addr, value, now),
            _ => {
                let want: u8 = f[4].parse().unwrap();
                let got = c.read_ram(addr, now);
                assert_eq!(got, want, "line {}: {line}", n + 1);
                reads += 1;
            }
        }
    }
    assert!(reads > 200);
}
