//! The LCD's deferred transitions (`GameBoy::lcd_deferral`: a line's OAM, mode 3 and HBlank
//! transitions run late, at the next access that could see them, instead of each ending a
//! scheduler turn; with `multi_line_deferral` the LY steps of the lines after it too, where
//! none raises an interrupt) change nothing but speed: every ROM of ours, on DMG and CGB
//! hardware (which never defers), with sound off and on, run with the deferral on and off,
//! gives the same screen, instruction count and save state at every frame, with buttons
//! pressed and frames drawn and not; so does the deferral a line at a time; and the deferral
//! does run where it may, across LY steps too, with sound off and on (a path that never fires
//! fails the test). Real games: Pokémon Red from its gameplay states when
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

/// What the run with the deferral on deferred: lines, those of them deferred from an overdue
/// OAM step (the LY step's instruction passed it too, so PyBoy runs it one instruction
/// later), LY steps deferred, and the replays that ran whole lines at once.
#[derive(Clone, Copy, Debug, Default)]
struct Deferred {
    lines: u64,
    overdue: u64,
    ly_steps: u64,
    quiet_runs: u64,
}

/// How the run with the deferral on defers.
#[derive(Clone, Copy, PartialEq)]
enum Deferral {
    /// Across lines where it may (the default).
    Lines,
    /// A line at a time (`multi_line_deferral` off).
    OneLine,
}

/// Run `rom` (from `state`, a PyBoy state, if given) with the deferral on and off for
/// `frames` frames, comparing everything at every frame; returns what the run with the
/// deferral on deferred.
fn compare(
    what: &str,
    rom: Arc<[u8]>,
    state: Option<&[u8]>,
    frames: u32,
    options: Options,
) -> Deferred {
    compare_with(what, rom, state, frames, options, true, Deferral::Lines)
}

/// [`compare`], with the idle-loop and busy-loop fast-forwards on or off in both runs (they
/// take whole stretches of frames, whose lines then need no deferral), and the deferral
/// across lines or a line at a time.
fn compare_with(
    what: &str,
    rom: Arc<[u8]>,
    state: Option<&[u8]>,
    frames: u32,
    options: Options,
    fast_forwards: bool,
    deferral: Deferral,
) -> Deferred {
    let make = |defer: bool| {
        let mut gb = common::machine(&rom, state, options);
        gb.lcd_deferral = defer;
        gb.multi_line_deferral = deferral == Deferral::Lines;
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
    assert!(on.lcd_deferred_ly_steps <= on.lcd_deferred_lines);
    if deferral == Deferral::OneLine {
        assert_eq!(on.lcd_deferred_ly_steps, 0, "{what}: LY steps deferred");
        assert_eq!(
            on.bus.lcd.replayed_quiet_runs, 0,
            "{what}: lines replayed whole"
        );
    }
    Deferred {
        lines: on.lcd_deferred_lines,
        overdue: on.lcd_deferred_overdue_oam,
        ly_steps: on.lcd_deferred_ly_steps,
        quiet_runs: on.bus.lcd.replayed_quiet_runs,
    }
}

fn our_rom(name: &str) -> Arc<[u8]> {
    std::fs::read(repo().join("roms").join(format!("{name}.gb")))
        .unwrap()
        .into()
}

/// Assert that each run `NAME sound=SOUND` of `names` and `sounds` is among `runs`, the runs in
/// which a path of the deferral ran (`what` it did, for the message).
fn assert_ran_in(runs: &[String], names: &[&str], sounds: &[bool], what: &str) {
    for name in names {
        for emulated in sounds {
            let run = format!("{name} sound={emulated}");
            assert!(runs.contains(&run), "{run} never {what}: {runs:?}");
        }
    }
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
    let mut ly_steps_in = Vec::new();
    let mut quiet_runs_in = Vec::new();
    for name in &names {
        for cgb in [Some(false), Some(true)] {
            for emulated in [false, true] {
                let options = options(cgb, emulated);
                let what = format!("{name} cgb={cgb:?} sound={emulated}");
                let d = compare(&what, our_rom(name), None, frames(200), options);
                // Only DMG timing defers (CGB hardware has its own transitions and sound unit).
                if cgb == Some(true) {
                    assert_eq!(d.lines, 0, "{what}: deferred");
                } else if d.lines > 0 {
                    deferred_in.push(format!("{name} sound={emulated}"));
                }
                if d.overdue > 0 {
                    overdue_in.push(format!("{name} sound={emulated}"));
                }
                if d.ly_steps > 0 {
                    ly_steps_in.push(format!("{name} sound={emulated}"));
                }
                if d.quiet_runs > 0 {
                    quiet_runs_in.push(format!("{name} sound={emulated}"));
                }
            }
        }
    }
    // LY steps deferred in the games' kind of program and around LY polls and STAT's LY=LYC
    // flag (`lcd_timing`, `idle_ly`), with sound off; with sound on, only while the unit is
    // off (the APU's records of turn ends then change nothing): `apu_power` switches it.
    assert_ran_in(
        &ly_steps_in,
        &[
            "music",
            "scenes",
            "bench",
            "idle_vblank",
            "lcd_timing",
            "idle_ly",
        ],
        &[false],
        "deferred an LY step",
    );
    assert_ran_in(&ly_steps_in, &["apu_power"], &[true], "deferred an LY step");
    // Replays that ran whole lines at once (their LY steps a line or more before the replay's
    // end), in the games' kind of program and beside STAT's LY=LYC flag.
    assert_ran_in(
        &quiet_runs_in,
        &["music", "scenes", "bench", "lcd_timing"],
        &[false],
        "replayed whole lines",
    );
    // Most of our ROMs run lines with no mode STAT source; the ones that defer must include
    // the games' kind of program (music, scenes, banking, busy-waits) and the LCD race, with
    // sound off and on.
    assert_ran_in(
        &deferred_in,
        &[
            "music",
            "scenes",
            "mbc1",
            "idle_vblank",
            "idle_joypad",
            "bench",
            "vram_race",
        ],
        &[false, true],
        "deferred",
    );
    // Lines deferred from an overdue OAM step, with sound off and on, in busy code (not only
    // where an instruction of a polling loop happens to pass the LY step).
    assert_ran_in(
        &overdue_in,
        &["music", "bench"],
        &[false, true],
        "deferred from an overdue OAM step",
    );
    // With sound, the deferral must also meet CH3 fetching while wave RAM is read and written
    // (an access at the very cycle a deferred turn ended sees that turn's record in the APU).
    assert_ran_in(&deferred_in, &["wave_cgb"], &[true], "deferred");
}

/// The deferral a line at a time (as before LY steps were deferred) stays exact too.
#[test]
fn our_roms_the_same_deferring_a_line_at_a_time() {
    for name in ["music", "scenes", "bench", "lcd_timing", "wave_cgb"] {
        for emulated in [false, true] {
            let what = format!("{name} sound={emulated} one line");
            let d = compare_with(
                &what,
                our_rom(name),
                None,
                frames(200),
                options(Some(false), emulated),
                true,
                Deferral::OneLine,
            );
            assert!(d.lines > 0, "{what}: never deferred");
        }
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
        for emulated in [false, true] {
            let options = options(None, emulated);
            // As users run it: the busy-loop fast-forward takes Pokemon Red's menus (the battle
            // menu among them), whose lines the deferral then never sees.
            let what = format!("{name} sound={emulated}");
            let d = compare(&what, data.clone(), Some(&state), frames(300), options);
            assert!(d.lines > 0 && d.ly_steps > 0, "{what}: {d:?}");
            if !emulated {
                assert!(d.quiet_runs > 0, "{what}: no lines replayed whole: {d:?}");
            }
            // The deferral alone: it runs wherever it may, across lines and a line at a time.
            for deferral in [Deferral::Lines, Deferral::OneLine] {
                let what = format!("{name} sound={emulated} fast-forwards off");
                let d = compare_with(
                    &what,
                    data.clone(),
                    Some(&state),
                    frames(300),
                    options,
                    false,
                    deferral,
                );
                // The walk halts most of each frame (halted turns skip quiet lines their own
                // way).
                assert!(d.lines > 20 * frames(300) as u64, "{what}: {d:?}");
                // (Across lines, most LY steps are deferred too, and few deferrals start at
                // one: the overdue OAM step is a one-line deferral's case.)
                if deferral == Deferral::OneLine {
                    assert!(d.overdue > 0, "{what}: none from an overdue OAM step");
                }
            }
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

/// A program that waits 512 to 1,008 cycles in a delay loop (run without the interpreter,
/// `short_loop`; nothing it does ends the deferral), then reads STAT and LY right after a
/// `PUSH`/`POP` pair, with no interrupt on and no STAT source: the wait drifts against the
/// line's 456 dots, so the reads come at every phase after LY steps the deferral ran late,
/// among them a read in the instruction that starts just after the one the LY step's dot fell
/// in. LYC is 64, so STAT's LY=LYC flag changes at two of the deferred LY steps. Each STAT
/// value also goes to VRAM (a write that keeps the deferral).
fn stat_after_ly_steps_rom() -> Arc<[u8]> {
    let mut rom = vec![0u8; 0x8000];
    rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]);
    #[rustfmt::skip]
    let program: &[u8] = &[
        0x21, 0x00, 0xC0, // 0150 LD HL,C000
        0x11, 0x00, 0x98, // 0153 LD DE,9800
        0x3E, 0x40,       // 0156 LD A,64
        0xE0, 0x45,       // 0158 LDH (45),A  LYC (its STAT flag only: no source on)
        0x06, 0x28,       // 015A LD B,40
        0x48,             // 015C loop: LD C,B
        0x0D,             // 015D delay: DEC C
        0x20, 0xFD,       // 015E JR NZ,delay
        0xC5,             // 0160 PUSH BC
        0xC1,             // 0161 POP BC
        0xF0, 0x41,       // 0162 LDH A,(41)  STAT
        0x22,             // 0164 LD (HL+),A
        0x12,             // 0165 LD (DE),A   VRAM
        0x13,             // 0166 INC DE
        0xF0, 0x44,       // 0167 LDH A,(44)  LY
        0x22,             // 0169 LD (HL+),A
        0x7C,             // 016A LD A,H
        0xFE, 0xD0,       // 016B CP D0
        0x20, 0x02,       // 016D JR NZ,+2
        0x26, 0xC0,       // 016F LD H,C0
        0x7A,             // 0171 LD A,D
        0xE6, 0x03,       // 0172 AND 3
        0xF6, 0x98,       // 0174 OR 98
        0x57,             // 0176 LD D,A
        0x04,             // 0177 INC B
        0x78,             // 0178 LD A,B
        0xE6, 0x3F,       // 0179 AND 3F
        0xF6, 0x20,       // 017B OR 20       B in 32..=63
        0x47,             // 017D LD B,A
        0x18, 0xDC,       // 017E JR loop
    ];
    rom[0x150..0x150 + program.len()].copy_from_slice(program);
    rom[0x14D] = emurust_core::cartridge::header::compute_header_checksum(&rom);
    rom.into()
}

#[test]
fn stat_read_right_after_a_deferred_ly_step() {
    let rom = stat_after_ly_steps_rom();
    for emulated in [false, true] {
        let what = format!("STAT after LY steps sound={emulated}");
        let d = compare(
            &what,
            rom.clone(),
            None,
            frames(120),
            options(Some(false), emulated),
        );
        // With sound on the unit is on (as the boot ROM leaves it): a line at a time.
        assert!(d.lines > 0 && (d.ly_steps > 0) != emulated, "{what}: {d:?}");
    }
}
