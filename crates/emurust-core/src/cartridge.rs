//! STUB of the cartridge interface (the cartridge helper replaces this file).
use crate::state::{StateReader, StateWriter};
use crate::CoreError;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub struct Header {
    pub title: String,
    pub cartridge_type: u8,
}

#[derive(Clone)]
pub struct Cartridge {
    rom: Arc<[u8]>,
    header: Header,
    ram: Vec<u8>,
}

impl Cartridge {
    pub fn from_rom(rom: Arc<[u8]>) -> Result<Cartridge, CoreError> {
        if rom.len() < 0x150 {
            return Err(CoreError::Rom("too small".into()));
        }
        let header = Header {
            title: String::new(),
            cartridge_type: rom[0x147],
        };
        Ok(Cartridge {
            rom,
            header,
            ram: vec![0; 0x2000],
        })
    }
    pub fn fingerprint(&self) -> u64 {
        self.rom.len() as u64
    }
    pub fn peek_ram(&self, addr: u16) -> u8 {
        self.ram[(addr - 0xA000) as usize]
    }
    pub fn header(&self) -> &Header {
        &self.header
    }
    pub fn read_rom(&self, addr: u16) -> u8 {
        self.rom[addr as usize]
    }
    pub fn write_rom_area(&mut self, _addr: u16, _value: u8, _now: u64) {}
    pub fn read_ram(&mut self, addr: u16, _now: u64) -> u8 {
        self.ram[(addr - 0xA000) as usize]
    }
    pub fn write_ram(&mut self, addr: u16, value: u8, _now: u64) {
        self.ram[(addr - 0xA000) as usize] = value;
    }
    pub fn rom_bank_low(&self) -> usize {
        0
    }
    pub fn rom_bank_high(&self) -> usize {
        1
    }
    pub fn ram_bank(&self) -> usize {
        0
    }
    pub fn read_rom_banked(&self, bank: usize, addr: u16) -> Option<u8> {
        self.rom
            .get(bank * 0x4000 + (addr as usize & 0x3FFF))
            .copied()
    }
    pub fn ram(&self) -> &[u8] {
        &self.ram
    }
    pub fn ram_mut(&mut self) -> &mut [u8] {
        &mut self.ram
    }
    pub fn battery_ram(&self) -> Option<Vec<u8>> {
        None
    }
    pub fn load_battery_ram(&mut self, _data: &[u8]) -> Result<(), CoreError> {
        Err(CoreError::CartridgeRam("no battery".into()))
    }
    pub fn save_state(&self, w: &mut StateWriter) {
        w.bytes(&self.ram);
    }
    pub fn load_state(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        let n = self.ram.len();
        self.ram.copy_from_slice(r.bytes_exact(n)?);
        Ok(())
    }
}
