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
use std::sync::OnceLock;

use crate::apu::{Apu, SoundOptions};
use crate::gameboy::GameBoy;
use crate::CoreError;

/// The cycle at which the frame the boot ROM exits in began (PyBoy's 65th frame), measured
/// together with the snapshot by `tools/gen_postboot.py`. Sound options other than the
/// default need it: the samples PyBoy takes in that frame before the boot ROM exits depend
/// on the sample rate (see `Apu::for_postboot`).
pub const BOOT_EXIT_FRAME_START: u64 = 4441132;
/// The same for Game Boy Color hardware with a CGB cartridge (PyBoy's CGB boot ROM).
pub const BOOT_EXIT_FRAME_START_CGB: u64 = 4441132;
/// The same for Game Boy Color hardware with a DMG cartridge.
pub const BOOT_EXIT_FRAME_START_CGB_DMG: u64 = 4441132;

static SNAPSHOT_GZ: &[u8] = include_bytes!("postboot.bin.gz");

/// Game Boy Color hardware: what PyBoy's built-in CGB boot ROM leaves. It reads one byte of the
/// cartridge, the CGB flag (0x143): a CGB cartridge is left in colour mode, any other gets
/// KEY0 = 4 (DMG mode) written, a few cycles later. Measured the same way
/// (`tools/gen_postboot.py`), with VRAM (both banks) and the picture blanked.
static SNAPSHOT_CGB_GZ: &[u8] = include_bytes!("postboot_cgb.bin.gz");
static SNAPSHOT_CGB_DMG_GZ: &[u8] = include_bytes!("postboot_cgb_dmg.bin.gz");

/// Unpacks an embedded snapshot once per process: every emulator of a batch starts from it, and
/// unpacking per emulator cost an allocation each (and, out of memory, a panic in a batch of
/// thousands).
fn unpacked(cache: &'static OnceLock<Vec<u8>>, data: &[u8]) -> &'static [u8] {
    cache.get_or_init(|| {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(data)
            .read_to_end(&mut out)
            .expect("the embedded post-boot snapshot is valid gzip");
        out
    })
}

static SNAPSHOT: OnceLock<Vec<u8>> = OnceLock::new();
static SNAPSHOT_CGB: OnceLock<Vec<u8>> = OnceLock::new();
static SNAPSHOT_CGB_DMG: OnceLock<Vec<u8>> = OnceLock::new();

/// The machine part of the DMG snapshot (between the ROM fingerprint and the cartridge section).
pub fn snapshot() -> &'static [u8] {
    unpacked(&SNAPSHOT, SNAPSHOT_GZ)
}

/// The machine part of the Game Boy Color snapshot for a CGB cartridge (`colour`) or not.
pub fn snapshot_cgb(colour: bool) -> &'static [u8] {
    if colour {
        unpacked(&SNAPSHOT_CGB, SNAPSHOT_CGB_GZ)
    } else {
        unpacked(&SNAPSHOT_CGB_DMG, SNAPSHOT_CGB_DMG_GZ)
    }
}

/// The snapshot and the start of the boot ROM's last frame for `gb`'s hardware.
fn snapshot_for(gb: &GameBoy) -> (&'static [u8], u64) {
    if gb.is_cgb() {
        if gb.is_cgb_mode() {
            (snapshot_cgb(true), BOOT_EXIT_FRAME_START_CGB)
        } else {
            (snapshot_cgb(false), BOOT_EXIT_FRAME_START_CGB_DMG)
        }
    } else {
        (snapshot(), BOOT_EXIT_FRAME_START)
    }
}

/// Put `gb` in the post-boot state for its hardware and sound options. The snapshots hold the
/// machine with sound emulated at the default rate; the APU is then converted (nothing else
/// depends on the sound options at that point: tests/test_gameboy_api.py compares with running
/// the boot ROM under each).
pub fn apply(gb: &mut GameBoy) -> Result<(), CoreError> {
    let sound = gb.bus.apu.options();
    let (snap, frame_start) = snapshot_for(gb);
    gb.bus.apu = Apu::new(SoundOptions::default());
    gb.load_machine_state(snap)?;
    gb.bus.apu = gb.bus.apu.for_postboot(sound, frame_start);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apu::sample_targets;

    /// On chosen hardware (`cgb`), with a CGB cartridge (`colour`) or a DMG one.
    fn postboot_on(sound: SoundOptions, cgb: Option<bool>, colour: bool) -> GameBoy {
        let mut rom = vec![0u8; 0x8000];
        if colour {
            rom[0x143] = 0x80;
        }
        rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]);
        rom[0x14D] = crate::cartridge::header::compute_header_checksum(&rom);
        GameBoy::with_options(rom.into(), None, crate::gameboy::Options { cgb, sound }).unwrap()
    }

    /// BOOT_EXIT_FRAME_START agrees with the snapshot: replaying PyBoy's sample targets at the
    /// default rate gives the snapshot's next target and its number of samples in that frame.
    /// (hardware, CGB cartridge, the start of the boot ROM's last frame) of each snapshot.
    const HARDWARE: [(Option<bool>, bool, u64); 3] = [
        (Some(false), false, BOOT_EXIT_FRAME_START),
        (Some(true), true, BOOT_EXIT_FRAME_START_CGB),
        (Some(true), false, BOOT_EXIT_FRAME_START_CGB_DMG),
    ];

    #[test]
    fn frame_start_agrees_with_the_snapshot() {
        for (cgb, colour, frame_start) in HARDWARE {
            let gb = postboot_on(SoundOptions::default(), cgb, colour);
            let apu = &gb.bus.apu;
            let now = gb.bus.cycles;
            assert!(
                frame_start < now && now - frame_start < 70224,
                "{cgb:?} {colour}"
            );
            let (next, n) = sample_targets(
                SoundOptions::default().cycles_per_sample(),
                frame_start,
                now,
            );
            let mut w = crate::state::StateWriter::new();
            apu.save_pyboy(&mut w);
            let next_saved = f64::from_le_bytes(
                w.buf[25 + SoundOptions::default().sample_buffer_len()..][..8]
                    .try_into()
                    .unwrap(),
            );
            assert_eq!(next, next_saved, "{cgb:?} {colour}");
            assert_eq!(2 * n, apu.samples().len(), "{cgb:?} {colour}");
            assert!(n > 700);
        }
    }

    #[test]
    fn other_options_convert_the_sound_unit_only() {
        for (cgb, colour, frame_start) in HARDWARE {
            let base = postboot_on(SoundOptions::default(), cgb, colour);
            for sound in [
                SoundOptions {
                    emulated: false,
                    sample_rate: 48000,
                },
                SoundOptions {
                    emulated: true,
                    sample_rate: 22050,
                },
                SoundOptions {
                    emulated: true,
                    sample_rate: 44100,
                },
                SoundOptions {
                    emulated: true,
                    sample_rate: 1,
                },
                SoundOptions {
                    emulated: true,
                    sample_rate: 4_194_304,
                },
            ] {
                let gb = postboot_on(sound, cgb, colour);
                assert_eq!(gb.is_cgb(), cgb == Some(true));
                assert_eq!(gb.bus.apu.options(), sound);
                assert_eq!(gb.bus.cycles, base.bus.cycles);
                assert_eq!(gb.registers(), base.registers());
                let s = gb.bus.apu.samples();
                assert!(s.iter().all(|&v| v == 0));
                if sound.emulated {
                    let expect =
                        ((gb.bus.cycles - frame_start) as f64 / sound.cycles_per_sample()) as usize;
                    let got = s.len() / 2;
                    assert!(
                        got.abs_diff(expect) <= 1 || got == sound.samples_per_frame() + 1,
                        "{sound:?}: {got} samples, about {expect} expected"
                    );
                    for addr in 0xFF10..0xFF40 {
                        assert_eq!(gb.bus.peek(addr), base.bus.peek(addr), "{addr:04X}");
                    }
                } else {
                    assert!(s.is_empty());
                    assert!((0xFF10..0xFF40).all(|a| gb.bus.peek(a) == 0));
                    assert_eq!(gb.bus.apu.cycles_to_interrupt(), crate::apu::MAX_CYCLES);
                }
            }
        }
    }
}
