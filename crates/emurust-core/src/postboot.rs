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

/// Game Boy Color hardware: what PyBoy's built-in CGB boot ROM leaves. It reads one byte of the
/// cartridge, the CGB flag (0x143): a CGB cartridge is left in colour mode, any other gets
/// KEY0 = 4 (DMG mode) written, a few cycles later. Measured the same way
/// (`tools/gen_postboot.py`), with VRAM (both banks) and the picture blanked.
static SNAPSHOT_CGB_GZ: &[u8] = include_bytes!("postboot_cgb.bin.gz");
static SNAPSHOT_CGB_DMG_GZ: &[u8] = include_bytes!("postboot_cgb_dmg.bin.gz");

fn gunzip(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(data)
        .read_to_end(&mut out)
        .expect("the embedded post-boot snapshot is valid gzip");
    out
}

/// The machine part of the DMG snapshot (between the ROM fingerprint and the cartridge section).
pub fn snapshot() -> Vec<u8> {
    gunzip(SNAPSHOT_GZ)
}

/// The machine part of the Game Boy Color snapshot for a CGB cartridge (`colour`) or not.
pub fn snapshot_cgb(colour: bool) -> Vec<u8> {
    gunzip(if colour {
        SNAPSHOT_CGB_GZ
    } else {
        SNAPSHOT_CGB_DMG_GZ
    })
}

pub fn apply(gb: &mut GameBoy) -> Result<(), CoreError> {
    if gb.is_cgb() {
        let colour = gb.is_cgb_mode();
        gb.load_machine_state(&snapshot_cgb(colour))
    } else {
        gb.load_machine_state(&snapshot())
    }
}
