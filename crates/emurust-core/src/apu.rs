//! STUB of the APU interface (the APU helper replaces this file).
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

pub struct Apu {
    regs: [u8; 0x30],
}

impl Apu {
    pub fn new() -> Apu {
        Apu { regs: [0; 0x30] }
    }
    pub fn tick(&mut self, _now: u64) {}
    pub fn cycles_to_interrupt(&self) -> u64 {
        1 << 31
    }
    pub fn read(&mut self, addr: u16, _now: u64) -> u8 {
        self.regs[(addr - 0xFF10) as usize]
    }
    pub fn write(&mut self, addr: u16, value: u8, _now: u64, _div_counter: u16) {
        self.regs[(addr - 0xFF10) as usize] = value;
    }
    pub fn peek(&self, addr: u16) -> u8 {
        self.regs[(addr - 0xFF10) as usize]
    }
    pub fn on_div_write(&mut self, _now: u64, _div_counter_before: u16) {}
    pub fn set_sampling(&mut self, _on: bool) {}
    pub fn save_state(&self, w: &mut StateWriter) {
        w.bytes(&self.regs);
    }
    pub fn load_state(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.regs.copy_from_slice(r.bytes_exact(0x30)?);
        Ok(())
    }
}
