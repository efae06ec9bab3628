//! The wait-loop fast paths (the idle-loop fast-forward, the LY/STAT polling loop and the OAM
//! DMA wait loop) change nothing but speed: our busy-wait ROMs (roms/src/idle_*.s), run with
//! the fast paths on (with the PC trace off, the default, and on), with only the idle-loop
//! fast-forward off and with all of them off, give the same screen, sound samples, save state,
//! instruction count and (where on) PC trace at every frame;
//! and each ROM's fast path does run (a path that never fires fails the test). Real games:
//! Pokémon Red from its gameplay states when `EMURUST_POKERED_ROM` is set, the community
//! corpus's games when `EMURUST_TEST_ROMS` is set.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use emurust_core::apu::SoundOptions;
use emurust_core::gameboy::{Options, WaitLoopStats};

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

/// Run `rom` (from `state`, a PyBoy state, if given) three ways for `frames` frames, with
/// buttons pressed pseudo-randomly, comparing everything at every frame; returns the stats
/// of the run with every fast path on.
fn compare(
    what: &str,
    rom: Arc<[u8]>,
    state: Option<&[u8]>,
    frames: u32,
    options: Options,
) -> WaitLoopStats {
    let make = |idle: bool, wait: bool, trace: bool| {
        let mut gb = common::machine(&rom, state, options);
        gb.idle_loop_fast_forward = idle;
        gb.wait_loop_fast_paths = wait;
        gb.set_pc_trace(trace);
        gb
    };
    // The default (the PC traced only shortly before each look for an idle loop) first; the
    // others trace every instruction, and their traces must match.
    let mut runs = [
        make(true, true, false),
        make(true, true, true),
        make(false, true, true),
        make(false, false, true),
    ];
    for frame in 0..frames {
        let buttons = (frame / 10)
            .wrapping_mul(0x9E37_79B9)
            .rotate_left(frame % 7) as u8;
        let render = frame % 2 == 0;
        for gb in runs.iter_mut() {
            gb.set_buttons(if frame % 30 < 20 { buttons } else { 0 });
            gb.run_frame(render, true);
        }
        let (fast, rest) = runs.split_first().unwrap();
        for (k, other) in rest.iter().enumerate() {
            let at = format!("{what}: run {k} frame {frame}");
            assert_eq!(
                fast.instructions(),
                other.instructions(),
                "{at}: instruction counts"
            );
            if k > 0 {
                assert_eq!(rest[0].pc_trace(), other.pc_trace(), "{at}: PC traces");
                assert_eq!(
                    other.pc_trace().map(|t| t.len()),
                    Some(emurust_core::gameboy::PC_TRACE_REPORT_LEN),
                    "{at}"
                );
            }
            assert_eq!(
                fast.bus.apu.samples(),
                other.bus.apu.samples(),
                "{at}: samples"
            );
            if render {
                assert!(
                    fast.bus.lcd.screen_rgba() == other.bus.lcd.screen_rgba(),
                    "{at}: screens differ"
                );
            }
            common::assert_same_state(&at, fast, other);
        }
    }
    // The default traces only before each look for an idle loop; it must find the loops
    // the always-traced run finds (allowing for looks delayed until the trace is complete:
    // 5% of the skipped instructions, or two skips' worth where a run skips only a few loops,
    // as Pokemon Red's battle does, 1-2 in 300 frames).
    let (default, traced) = (runs[0].wait_loop_stats, runs[1].wait_loop_stats);
    let short = traced
        .idle_skipped_instructions
        .saturating_sub(default.idle_skipped_instructions);
    let per_skip = traced.idle_skipped_instructions / traced.idle_skips.max(1);
    assert!(
        short * 100 <= traced.idle_skipped_instructions * 5 || short <= 2 * per_skip,
        "{what}: the untraced run skipped fewer: {default:?} against {traced:?}"
    );
    default
}

fn our_rom(name: &str) -> Arc<[u8]> {
    std::fs::read(repo().join("roms").join(format!("{name}.gb")))
        .unwrap()
        .into()
}

fn both_hardware(name: &str, check: impl Fn(&WaitLoopStats) -> bool) {
    for cgb in [Some(false), Some(true)] {
        let options = Options {
            cgb,
            sound: SoundOptions::default(),
        };
        let stats = compare(
            &format!("{name} cgb={cgb:?}"),
            our_rom(name),
            None,
            frames(300),
            options,
        );
        assert!(
            check(&stats),
            "{name} cgb={cgb:?}: the fast path did not run: {stats:?}"
        );
    }
}

#[test]
fn vblank_flag_busy_wait() {
    // Proved in a slice, then resumed without interpreting in the following ones.
    both_hardware("idle_vblank", |s| {
        s.idle_skips > 100 && s.idle_resumes > 100
    });
}

#[test]
fn joypad_busy_wait() {
    both_hardware("idle_joypad", |s| s.idle_joypad_skips > 100);
}

#[test]
fn div_busy_wait() {
    // DIV loops are proved only in slices of 512 cycles or more: in this ROM, those with
    // the LCD's VBlank lines ahead and no timer event.
    both_hardware("idle_div", |s| s.idle_div_skips > 10);
}

#[test]
fn ly_busy_wait() {
    // LY and STAT change within a slice: the polling-loop path runs these, never the
    // idle-loop fast-forward. It skips the iterations whose reads would return the same
    // value (most of them: a line has 4 transitions, ~16 iterations): ~1,300 instructions a
    // frame (~78,000 in the debug build's 60 frames).
    both_hardware("idle_ly", |s| {
        s.poll_loops > 100 && s.idle_skips == 0 && s.poll_skipped_instructions > 20_000
    });
}

#[test]
fn menu_busy_wait() {
    // The busy-loop fast-forward (DMG hardware only): the fixed-point wait skipped across
    // turns, the blink counter's never (its flags are pushed while they hold what its DEC
    // (HL) set: not followed), the frame-counter copy's once settled after a VBlank, the text
    // box's arrow as a counter loop up to its timer's run-out; not past the LCD's next step in
    // the rounds with the STAT interrupt on (half of them).
    let n = frames(300);
    for cgb in [false, true] {
        let options = Options {
            cgb: Some(cgb),
            sound: SoundOptions::default(),
        };
        let what = format!("idle_menu cgb={cgb}");
        let s = compare(&what, our_rom("idle_menu"), None, n, options);
        if cgb {
            assert_eq!(s.busy_skips, 0, "{what}: {s:?}");
        } else {
            assert!(
                s.busy_skips * 8 > n as u64 && s.busy_skipped_instructions > 400 * n as u64,
                "{what}: the busy-loop fast-forward did not run: {s:?}"
            );
        }
    }
}

/// The counter loop (`counter_loop`) of idle_menu's text-box wait, with no button pressed (a
/// press ends the wait): skipped, and the same machine every frame as with the fast-forwards
/// off (screens, state, instruction counts), sound off and on.
#[test]
fn text_box_counter_loop() {
    let rom = our_rom("idle_menu");
    for emulated in [false, true] {
        let options = Options {
            cgb: Some(false),
            sound: SoundOptions {
                emulated,
                ..SoundOptions::default()
            },
        };
        let mut on = common::machine(&rom, None, options);
        let mut off = common::machine(&rom, None, options);
        off.idle_loop_fast_forward = false;
        for frame in 0..frames(600) {
            for gb in [&mut on, &mut off] {
                gb.run_frame(frame % 3 == 0, emulated);
            }
            let at = format!("sound {emulated} frame {frame}");
            assert_eq!(on.instructions(), off.instructions(), "{at}");
            assert_eq!(on.bus.apu.samples(), off.bus.apu.samples(), "{at}");
            assert!(
                on.bus.lcd.screen_rgba() == off.bus.lcd.screen_rgba(),
                "{at}"
            );
            common::assert_same_state(&at, &on, &off);
        }
        let s = on.wait_loop_stats;
        assert!(
            s.busy_counter_skips > 0,
            "sound {emulated}: no counter loop skipped: {s:?}"
        );
    }
}

#[test]
fn other_roms_unchanged_by_the_idle_loop_fast_forward() {
    for name in [
        "dma_wait",
        "timer",
        "interrupts_halt",
        "halt_wake",
        "serial",
        "mbc3",
    ] {
        compare(name, our_rom(name), None, frames(200), Options::default());
    }
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
        compare(
            name,
            data.clone(),
            Some(&state),
            frames(300),
            Options::default(),
        );
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
        compare(name, data, None, frames(600), Options::default());
    }
}
