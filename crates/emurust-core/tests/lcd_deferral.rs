//! The LCD's deferred transitions (`GameBoy::lcd_deferral`: a line's OAM, mode 3 and HBlank
//! transitions run late, at the next access that could see them, instead of each ending a
//! scheduler turn) change nothing but speed: every ROM of ours, on DMG and CGB hardware (which
//! never defers), with sound off and on, run with the deferral on and off, gives the same
//! screen, instruction count and save state at every frame, with buttons pressed and frames
//! drawn and not; and the deferral does run where it may, with sound off and on (a path that
//! never fires fails the test). Real games: Pokémon Red from its gameplay states when
//! `EMURUST_POKERED_ROM` is set, the community corpus's games when `EMURUST_TEST_ROMS` is set.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use emurust_core::apu::SoundOptions;
use emurust_core::gameboy::Options;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Fewer frames in debug builds (overflow checks on), which run ~15x slower.
fn frames(release: u32) -> u32 {
    if cfg!(debug_assertions) {
        release / 5
    } else {
        release
    }
}

/// The hardware (`None`: from the cartridge) and whether sound is emulated.
fn options(cgb: Option<bool>, emulated: bool) -> Options {
    Options {
        cgb,
        sound: SoundOptions {
            emulated,
            ..SoundOptions::default()
        },
    }
}

/// Run `rom` (from `state`, a PyBoy state, if given) with the deferral on and off for
/// `frames` frames, comparing everything at every frame; returns how many lines the run
/// with the deferral on deferred, and how many of those from an overdue OAM step (the LY
/// step's instruction passed it too, so PyBoy runs it one instruction later).
fn compare(
    what: &str,
    rom: Arc<[u8]>,
    state: Option<&[u8]>,
    frames: u32,
    options: Options,
) -> (u64, u64) {
    compare_with_fast_forwards(what, rom, state, frames, options, true)
}

/// [`compare`], with the idle-loop and busy-loop fast-forwards on or off in both runs (they
/// take whole stretches of frames, whose lines then need no deferral).
fn compare_with_fast_forwards(
    what: &str,
    rom: Arc<[u8]>,
    state: Option<&[u8]>,
    frames: u32,
    options: Options,
    fast_forwards: bool,
) -> (u64, u64) {
    let make = |defer: bool| {
        let mut gb = common::machine(&rom, state, options);
        gb.lcd_deferral = defer;
        gb.idle_loop_fast_forward = fast_forwards;
        gb
    };
    let (mut on, mut off) = (make(true), make(false));
    for frame in 0..frames {
        let buttons = (frame / 10)
            .wrapping_mul(0x9E37_79B9)
            .rotate_left(frame % 7) as u8;
        // Drawn, not drawn, and drawn every third frame in runs of several (as frame skips do).
        let render = frame % 3 == 0 || (frame / 50) % 2 == 1;
        for gb in [&mut on, &mut off] {
            gb.set_buttons(if frame % 30 < 20 { buttons } else { 0 });
            gb.run_frame(render, frame % 5 == 0);
        }
        let at = format!("{what}: frame {frame}");
        assert_eq!(
            on.instructions(),
            off.instructions(),
            "{at}: instruction counts"
        );
        if render {
            assert!(
                on.bus.lcd.screen_rgba() == off.bus.lcd.screen_rgba(),
                "{at}: screens differ"
            );
        }
        common::assert_same_state(&at, &on, &off);
    }
    assert_eq!(
        off.lcd_deferred_lines, 0,
        "{what}: deferred with the deferral off"
    );
    assert!(on.lcd_deferred_overdue_oam <= on.lcd_deferred_lines);
    (on.lcd_deferred_lines, on.lcd_deferred_overdue_oam)
}

fn our_rom(name: &str) -> Arc<[u8]> {
    std::fs::read(repo().join("roms").join(format!("{name}.gb")))
        .unwrap()
        .into()
}

#[test]
fn our_roms_the_same_with_and_without_the_deferral() {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("roms"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".gb").map(str::to_string)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 20, "{names:?}");
    let mut deferred_in = Vec::new();
    let mut overdue_in = Vec::new();
    for name in &names {
        for cgb in [Some(false), Some(true)] {
            for emulated in [false, true] {
                let options = options(cgb, emulated);
                let what = format!("{name} cgb={cgb:?} sound={emulated}");
                let (lines, overdue) = compare(&what, our_rom(name), None, frames(200), options);
                // Only DMG timing defers (CGB hardware has its own transitions and sound unit).
                if cgb == Some(true) {
                    assert_eq!(lines, 0, "{what}: deferred");
                } else if lines > 0 {
                    deferred_in.push(format!("{name} sound={emulated}"));
                }
                if overdue > 0 {
                    overdue_in.push(format!("{name} sound={emulated}"));
                }
            }
        }
    }
    // Most of our ROMs run lines with no mode STAT source; the ones that defer must include
    // the games' kind of program (music, scenes, banking, busy-waits) and the LCD race, with
    // sound off and on.
    for name in [
        "music",
        "scenes",
        "mbc1",
        "idle_vblank",
        "idle_joypad",
        "bench",
        "vram_race",
    ] {
        for emulated in [false, true] {
            let run = format!("{name} sound={emulated}");
            assert!(
                deferred_in.contains(&run),
                "{run} never deferred: {deferred_in:?}"
            );
        }
    }
    // Lines deferred from an overdue OAM step, with sound off and on, in busy code (not only
    // where an instruction of a polling loop happens to pass the LY step).
    for name in ["music", "bench"] {
        for emulated in [false, true] {
            let run = format!("{name} sound={emulated}");
            assert!(
                overdue_in.contains(&run),
                "{run} never deferred from an overdue OAM step: {overdue_in:?}"
            );
        }
    }
    // With sound, the deferral must also meet CH3 fetching while wave RAM is read and written
    // (an access at the very cycle a deferred turn ended sees that turn's record in the APU).
    assert!(
        deferred_in.iter().any(|n| n == "wave_cgb sound=true"),
        "{deferred_in:?}"
    );
}

#[test]
fn pokemon_red_from_gameplay_states() {
    let Some(rom) = std::env::var_os("EMURUST_POKERED_ROM").map(PathBuf::from) else {
        eprintln!("skipped: EMURUST_POKERED_ROM (path of a Pokémon Red ROM) is not set");
        return;
    };
    let data: Arc<[u8]> = std::fs::read(&rom).unwrap().into();
    let states = rom.parent().unwrap().join("states");
    for name in ["overworld_walk", "battle", "menu"] {
        let state = std::fs::read(states.join(format!("{name}.state"))).unwrap();
        for emulated in [false, true] {
            let options = options(None, emulated);
            // As users run it: the busy-loop fast-forward takes Pokemon Red's menus (the battle
            // menu among them), whose lines the deferral then never sees.
            let what = format!("{name} sound={emulated}");
            let (lines, _) = compare(&what, data.clone(), Some(&state), frames(300), options);
            assert!(lines > 0, "{what}: no line deferred");
            // The deferral alone: it runs wherever it may.
            let what = format!("{name} sound={emulated} fast-forwards off");
            let (lines, overdue) = compare_with_fast_forwards(
                &what,
                data.clone(),
                Some(&state),
                frames(300),
                options,
                false,
            );
            // The walk halts most of each frame (halted turns skip quiet lines their own way).
            assert!(
                lines > 20 * frames(300) as u64,
                "{what}: {lines} lines deferred"
            );
            assert!(overdue > 0, "{what}: none from an overdue OAM step");
        }
    }
}

#[test]
fn corpus_games() {
    let Some(dir) = std::env::var_os("EMURUST_TEST_ROMS").map(PathBuf::from) else {
        eprintln!("skipped: EMURUST_TEST_ROMS (the community ROM corpus) is not set");
        return;
    };
    for name in ["libbet", "shock-lobster"] {
        let path = dir.join("games").join(format!("{name}.gb"));
        let data: Arc<[u8]> = std::fs::read(&path).unwrap().into();
        for emulated in [false, true] {
            let options = options(None, emulated);
            compare(
                &format!("{name} sound={emulated}"),
                data.clone(),
                None,
                frames(600),
                options,
            );
        }
    }
}
