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
    // turns, the blink counter's seldom (a counter loop, provable only from two of its
    // instructions), the frame-counter copy's once settled after a VBlank, the text
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

/// Run `rom` on DMG hardware for `frames` frames, no button pressed, with the fast-forwards on
/// and with the idle-loop fast-forward off (sound emulated and sampled if `sound`; every third
/// frame drawn), comparing instruction counts, samples, screens where drawn and save states
/// every frame; returns the stats of the run with them on.
fn on_and_off(what: &str, rom: &Arc<[u8]>, frames: u32, sound: bool) -> WaitLoopStats {
    let options = Options {
        cgb: Some(false),
        sound: SoundOptions {
            emulated: sound,
            ..SoundOptions::default()
        },
    };
    let mut on = common::machine(rom, None, options);
    let mut off = common::machine(rom, None, options);
    off.idle_loop_fast_forward = false;
    for frame in 0..frames {
        let render = frame % 3 == 0;
        for gb in [&mut on, &mut off] {
            gb.run_frame(render, sound);
        }
        let at = format!("{what} frame {frame}");
        assert_eq!(on.instructions(), off.instructions(), "{at}");
        assert_eq!(on.bus.apu.samples(), off.bus.apu.samples(), "{at}");
        if render {
            assert!(
                on.bus.lcd.screen_rgba() == off.bus.lcd.screen_rgba(),
                "{at}"
            );
        }
        common::assert_same_state(&at, &on, &off);
    }
    on.wait_loop_stats
}

/// The counter loop (`counter_loop`) of idle_menu's text-box wait, with no button pressed (a
/// press ends the wait): skipped, and the same machine every frame as with the fast-forwards
/// off (screens, state, instruction counts), sound off and on.
#[test]
fn text_box_counter_loop() {
    let rom = our_rom("idle_menu");
    for sound in [false, true] {
        let s = on_and_off(&format!("sound {sound}"), &rom, frames(600), sound);
        assert!(
            s.busy_counter_skips > 0,
            "sound {sound}: no counter loop skipped: {s:?}"
        );
    }
}

/// A 32 KiB cartridge: VBlank interrupt on (its handler a RETI), HL = C100, then `program` at
/// 0x158 (addresses in it are absolute).
fn loop_rom(program: &[u8]) -> Arc<[u8]> {
    let mut rom = vec![0u8; 0x8000];
    rom[0x40] = 0xD9;
    rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]);
    // LD A,1 ; LDH (FF),A ; EI ; LD HL,C100
    rom[0x150..0x158].copy_from_slice(&[0x3E, 0x01, 0xE0, 0xFF, 0xFB, 0x21, 0x00, 0xC1]);
    rom[0x158..0x158 + program.len()].copy_from_slice(program);
    rom[0x14D] = rom[0x134..0x14D]
        .iter()
        .fold(0u8, |x, &b| x.wrapping_sub(b).wrapping_sub(1));
    rom.into()
}

/// Counter loops the proof must refuse or may skip, run with the fast-forwards on and off and
/// compared every frame; the proof's second pass can stop at any instruction (the first one
/// included) depending on where a look lands.
#[test]
fn counter_loop_proofs() {
    // The counter read by CP (HL) (not followed): never skipped.
    let refused = [
        0xBE, 0x35, 0xFA, 0x01, 0xC1, 0xEA, 0x01, 0xC1, 0xA7, 0x18, 0xF5,
    ];
    // DEC (HL) ; JR NZ,+2 ; LD (HL),50 ; a variable rewritten ; AND A ; JR back.
    let dec_memory = [
        0x35, 0x20, 0x02, 0x36, 0x50, 0xFA, 0x01, 0xC1, 0xEA, 0x01, 0xC1, 0xA7, 0x18, 0xF2,
    ];
    // Pokemon Red's arrow: CALL a routine that loads an HRAM timer, DEC A, stores it, RET NZ
    // (reload when it runs out); CALL one that pushes the flags it left and pops them back.
    let mut arrow = vec![
        0xCD, 0x70, 0x01, 0xCD, 0x80, 0x01, 0xFA, 0x01, 0xC1, 0xEA, 0x01, 0xC1, 0xA7, 0x18, 0xF1,
    ];
    arrow.resize(0x18, 0);
    arrow.extend_from_slice(&[
        0xF0, 0x80, 0x3D, 0xE0, 0x80, 0xC0, 0x3E, 0x40, 0xE0, 0x80, 0xC9,
    ]);
    arrow.resize(0x28, 0);
    arrow.extend_from_slice(&[0xFA, 0x02, 0xC1, 0xF5, 0xFA, 0x02, 0xC1, 0xF1, 0xC9]);
    for (name, program, skips) in [
        ("refused", &refused[..], false),
        ("dec_memory", &dec_memory[..], true),
        ("arrow", &arrow[..], true),
    ] {
        let s = on_and_off(name, &loop_rom(program), frames(300), false);
        assert_eq!(s.busy_counter_skips > 0, skips, "{name}: {s:?}");
    }
}

/// Random counter loops (a differential test of the counter-loop proof): loop bodies drawn
/// from instructions that load, count, test, branch on, push, pop, copy and compute with an
/// HRAM and a work RAM counter, and a routine that counts one down as Pokemon Red's arrow
/// does; each run with the fast-forwards on and off, the same machine every frame.
#[test]
fn random_counter_loops() {
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    // Items: instructions (or a branch with the item it skips, or PUSH AF ... POP AF).
    const SIMPLE: &[&[u8]] = &[
        &[0xF0, 0x80],                         // LDH A,(80)
        &[0xE0, 0x80],                         // LDH (80),A
        &[0x3D],                               // DEC A
        &[0x3C],                               // INC A
        &[0x35],                               // DEC (HL)
        &[0x34],                               // INC (HL)
        &[0xA7],                               // AND A
        &[0xB7],                               // OR A
        &[0xFE, 0x03],                         // CP 3
        &[0xFE, 0xFE],                         // CP FE
        &[0xAF],                               // XOR A
        &[0x47],                               // LD B,A
        &[0x78],                               // LD A,B
        &[0x3E, 0x07],                         // LD A,7
        &[0xC6, 0x01],                         // ADD A,1
        &[0xCE, 0x00],                         // ADC A,0
        &[0x17],                               // RLA
        &[0x27],                               // DAA
        &[0x37],                               // SCF
        &[0x3F],                               // CCF
        &[0x2F],                               // CPL
        &[0x7E],                               // LD A,(HL)
        &[0x77],                               // LD (HL),A
        &[0xBE],                               // CP (HL)
        &[0xCD, 0x00, 0x03],                   // CALL the arrow routine
        &[0xFA, 0x01, 0xC1, 0xEA, 0x01, 0xC1], // a variable rewritten
    ];
    const BRANCHES: &[u8] = &[0x20, 0x28, 0x30, 0x38];
    let (mut proofs, mut counter_skips) = (0, 0);
    for program in 0..if cfg!(debug_assertions) { 40 } else { 300 } {
        let mut body: Vec<u8> = Vec::new();
        let mut pushed = false;
        for _ in 0..4 + next(14) {
            let item = SIMPLE[next(SIMPLE.len() as u64) as usize];
            match next(8) {
                0 => {
                    body.extend_from_slice(&[BRANCHES[next(4) as usize], item.len() as u8]);
                    body.extend_from_slice(item);
                }
                1 if !pushed => {
                    body.push(0xF5);
                    pushed = true;
                }
                1 => {
                    body.push(0xF1);
                    pushed = false;
                }
                _ => body.extend_from_slice(item),
            }
        }
        if pushed {
            body.push(0xF1);
        }
        // A variable rewritten (a write every iteration), then A and (half the time) the
        // flags made constant; back to the start.
        body.extend_from_slice(&[0xFA, 0x01, 0xC1, 0xEA, 0x01, 0xC1]);
        if next(2) == 0 {
            body.push(0xA7);
        }
        body.push(0x18);
        let back = -(body.len() as i32 + 1);
        body.push(back as i8 as u8);
        let mut full = body.clone();
        full.resize(0x300 - 0x158, 0);
        // The arrow routine at 0x300.
        full.extend_from_slice(&[
            0xF0, 0x80, 0x3D, 0xE0, 0x80, 0xC0, 0x3E, 0x30, 0xE0, 0x80, 0xC9,
        ]);
        let what = format!("program {program} {body:02X?}");
        let s = on_and_off(&what, &loop_rom(&full), frames(40), false);
        proofs += s.busy_proofs;
        counter_skips += s.busy_counter_skips;
    }
    // The programs do give the proof work, and some are counter loops it skips.
    assert!(
        proofs > 100 && counter_skips > 10,
        "{proofs} proofs, {counter_skips} counter skips"
    );
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
