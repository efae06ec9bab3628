//! Starting without a boot ROM: the machine as PyBoy 2.8.1's DMG boot ROM leaves it.
//!
//! PyBoy always runs a boot ROM. Its DMG boot ROM does not read the cartridge, so the state at
//! the moment it unmaps itself is the same for every cartridge: registers, I/O, the position of
//! the LCD in its frame, timer and APU phases, and the cycle count. `postboot.bin.gz` holds that
//! state, measured by running emurust (bit-exact with PyBoy) through PyBoy's boot ROM with
//! `tools/gen_postboot.py`. VRAM and the picture are blanked in it: the boot ROM's graphics are
//! not ours to ship. Programs that clear VRAM before use (virtually all) run identically; for
//! bit-exact VRAM from power-on pass the boot ROM itself.
//!
//! The snapshot is our save-state format without the magic, ROM fingerprint and cartridge
//! section (the cartridge starts powered-on). The first `run_frame` afterwards finishes the frame
//! in which the boot ROM exited, i.e. it ends where PyBoy's 65th frame ends.

use std::io::Read;

use crate::gameboy::GameBoy;
use crate::CoreError;

static SNAPSHOT_GZ: &[u8] = include_bytes!("postboot.bin.gz");

/// The machine part of the snapshot (between the ROM fingerprint and the cartridge section).
pub fn snapshot() -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(SNAPSHOT_GZ)
        .read_to_end(&mut out)
        .expect("the embedded post-boot snapshot is valid gzip");
    out
}

pub fn apply(gb: &mut GameBoy) -> Result<(), CoreError> {
    gb.load_machine_state(&snapshot())
}
