//! Interrupt flag bits (IF at FF0F, IE at FFFF), in priority order.

pub const VBLANK: u8 = 1 << 0;
pub const STAT: u8 = 1 << 1;
pub const TIMER: u8 = 1 << 2;
pub const SERIAL: u8 = 1 << 3;
pub const JOYPAD: u8 = 1 << 4;

/// Handler address of each interrupt bit, highest priority first.
pub const VECTORS: [(u8, u16); 5] = [
    (VBLANK, 0x0040),
    (STAT, 0x0048),
    (TIMER, 0x0050),
    (SERIAL, 0x0058),
    (JOYPAD, 0x0060),
];
