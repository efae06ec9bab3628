//! STUB of the LCD interface (the LCD helper replaces this file).
use crate::state::{StateReader, StateWriter};
use crate::CoreError;

pub struct Lcd {
    pub vram: [u8; 0x2000],
    pub oam: [u8; 0xA0],
    pub irq: u8,
    frame_done: bool,
    next_frame: u64,
    screen: Vec<u8>,
    shades: Vec<u8>,
}

impl Default for Lcd {
    fn default() -> Self {
        Self::new()
    }
}

impl Lcd {
    pub fn new() -> Lcd {
        Lcd {
            vram: [0; 0x2000],
            oam: [0; 0xA0],
            irq: 0,
            frame_done: false,
            next_frame: 70224,
            screen: vec![0xFF; 144 * 160 * 4],
            shades: vec![0; 144 * 160],
        }
    }
    pub fn take_irq(&mut self) -> u8 {
        std::mem::take(&mut self.irq)
    }
    pub fn tick(&mut self, now: u64) {
        if now >= self.next_frame {
            self.frame_done = true;
            self.irq |= 1;
            self.next_frame += 70224;
        }
    }
    pub fn cycles_to_interrupt(&self) -> u64 {
        70224
    }
    pub fn cycles_to_frame(&self) -> u64 {
        70224
    }
    pub fn frame_done(&self) -> bool {
        self.frame_done
    }
    pub fn set_frame_done(&mut self, v: bool) {
        self.frame_done = v;
    }
    pub fn set_render(&mut self, _render: bool) {}
    pub fn read_register(&mut self, _addr: u16, now: u64, offset: u64) -> u8 {
        self.tick(now + offset);
        0xFF
    }
    pub fn peek_register(&self, _addr: u16) -> u8 {
        0xFF
    }
    pub fn write_register(&mut self, _addr: u16, _value: u8, now: u64) {
        self.tick(now);
    }
    pub fn read_vram(&mut self, addr: u16, _now: u64, _offset: u64) -> u8 {
        self.vram[(addr & 0x1FFF) as usize]
    }
    pub fn write_vram(&mut self, addr: u16, value: u8, _now: u64, _offset: u64) {
        self.vram[(addr & 0x1FFF) as usize] = value;
    }
    pub fn oam_read_locked(&mut self, _now: u64, _offset: u64) -> bool {
        false
    }
    pub fn oam_write_locked(&mut self, _now: u64, _offset: u64) -> bool {
        false
    }
    pub fn screen_rgba(&self) -> &[u8] {
        &self.screen
    }
    pub fn screen_shades(&self) -> &[u8] {
        &self.shades
    }
    pub fn save_state(&self, w: &mut StateWriter) {
        w.u64(self.next_frame);
    }
    pub fn load_state(&mut self, r: &mut StateReader) -> Result<(), CoreError> {
        self.next_frame = r.u64()?;
        Ok(())
    }
}
