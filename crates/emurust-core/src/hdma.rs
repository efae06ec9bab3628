//! Game Boy Color VRAM DMA (HDMA1-HDMA5, FF51-FF55): the register state, as PyBoy 2.8.1
//! models it. The copying itself goes through the system bus (`gameboy/cgb.rs`).
//!
//! Spec: Pan Docs, "CGB Registers: VRAM DMA Transfers". PyBoy's model, which we reproduce:
//! * HDMA1-4 writes update the current source/destination at once (source low nibble and
//!   destination bits 13-15 dropped, destination forced into 8000-9FFF); reads of HDMA1-4
//!   give 0xFF.
//! * A general-purpose transfer (HDMA5 bit 7 clear) copies `(n + 1) * 16` bytes at once,
//!   inside the writing instruction, through ordinary CPU reads and writes at that
//!   instruction's access time, and takes no CPU time. HDMA5 then reads 0xFF.
//! * An H-blank transfer (bit 7 set) copies 16 bytes each time the scheduler finds the LCD in
//!   mode 0 with the CPU not halted; each block takes 206 cycles during which the CPU does
//!   not run. With the LCD off, one block is copied when the transfer starts. Writing HDMA5
//!   with bit 7 clear during a transfer stops it (HDMA5 reads 0x80); with bit 7 set it only
//!   replaces the remaining length.

use crate::state::{StateReader, StateWriter};
use crate::CoreError;

/// Cycles an H-blank block takes.
pub const HBLANK_BLOCK_CYCLES: u64 = 206;

#[derive(Clone, Debug)]
pub struct Hdma {
    pub hdma1: u8,
    pub hdma2: u8,
    pub hdma3: u8,
    pub hdma4: u8,
    pub hdma5: u8,
    pub active: bool,
    pub src: u16,
    pub dst: u16,
}

impl Default for Hdma {
    fn default() -> Self {
        Self::new()
    }
}

impl Hdma {
    pub fn new() -> Hdma {
        Hdma {
            hdma1: 0,
            hdma2: 0,
            hdma3: 0,
            hdma4: 0,
            hdma5: 0xFF,
            active: false,
            src: 0,
            dst: 0,
        }
    }

    /// HDMA1-HDMA4 writes (`reg` 1-4).
    pub fn write_addr(&mut self, reg: u8, value: u8) {
        match reg {
            1 => {
                self.hdma1 = value;
                self.src = (value as u16) << 8 | (self.src & 0x00FF);
            }
            2 => {
                self.hdma2 = value;
                self.src = (self.src & 0xFF00) | (value & 0xF0) as u16;
            }
            3 => {
                self.hdma3 = value;
                self.dst = ((value & 0x1F) as u16) << 8 | (self.dst & 0x00FF) | 0x8000;
            }
            _ => {
                self.hdma4 = value;
                self.dst = (self.dst & 0xFF00) | (value & 0xF0) as u16;
            }
        }
    }

    /// The block an H-blank step copies: (source, destination), 16 bytes each.
    pub fn block(&self) -> (u16, u16) {
        (self.src & 0xFFF0, (self.dst & 0x1FF0) | 0x8000)
    }

    /// After an H-blank block: advance the addresses, count down, stop after the last block.
    pub fn block_done(&mut self) {
        self.dst = self.dst.wrapping_add(0x10);
        self.src = self.src.wrapping_add(0x10);
        if self.dst == 0xA000 {
            self.dst = 0x8000;
        }
        if self.src == 0x8000 {
            self.src = 0xA000;
        }
        self.hdma1 = (self.src >> 8) as u8;
        self.hdma2 = self.src as u8;
        self.hdma3 = (self.dst >> 8) as u8;
        self.hdma4 = self.dst as u8;
        if self.hdma5 == 0 {
            self.active = false;
            self.hdma5 = 0xFF;
        } else {
            self.hdma5 -= 1;
        }
    }

    pub fn save_state(&self, w: &mut StateWriter) {
        for v in [self.hdma1, self.hdma2, self.hdma3, self.hdma4, self.hdma5] {
            w.u8(v);
        }
        w.bool(self.active);
        w.u16(self.src);
        w.u16(self.dst);
    }

    pub fn load_state(r: &mut StateReader) -> Result<Hdma, CoreError> {
        Ok(Hdma {
            hdma1: r.u8()?,
            hdma2: r.u8()?,
            hdma3: r.u8()?,
            hdma4: r.u8()?,
            hdma5: r.u8()?,
            active: r.bool()?,
            src: r.u16()?,
            dst: r.u16()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_registers_and_blocks() {
        let mut h = Hdma::new();
        h.write_addr(1, 0xD1);
        h.write_addr(2, 0x2F);
        h.write_addr(3, 0xFF);
        h.write_addr(4, 0xF7);
        assert_eq!(h.src, 0xD120);
        assert_eq!(h.dst, 0x9FF0);
        h.hdma5 = 1;
        h.active = true;
        assert_eq!(h.block(), (0xD120, 0x9FF0));
        h.block_done();
        assert_eq!((h.src, h.dst, h.hdma5, h.active), (0xD130, 0x8000, 0, true));
        h.block_done();
        assert_eq!((h.hdma5, h.active), (0xFF, false));
    }
}
