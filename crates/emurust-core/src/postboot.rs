//! The state PyBoy's DMG boot ROM leaves behind, for starting without a boot ROM.
//! (First version: CPU registers only; device state at boot exit still to be captured.)

use crate::gameboy::GameBoy;

pub fn apply(gb: &mut GameBoy) {
    let r = &mut gb.cpu.r;
    r.a = 0x01;
    r.f = 0xB0;
    r.b = 0x00;
    r.c = 0x13;
    r.d = 0x00;
    r.e = 0xD8;
    r.h = 0x01;
    r.l = 0x4D;
    r.sp = 0xFFFE;
    r.pc = 0x0100;
}
