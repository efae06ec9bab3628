//! Run a ROM for N frames (for profilers: perf, callgrind; and quick speed checks).
//! `cargo run --release -p emurust-core --example run_frames -- ROM FRAMES [render] [sound-off|sample|rate=HZ|start]...`
//!
//! By default frames are neither drawn nor sampled, with sound emulated at 48000 Hz.
//! `render` draws every frame, `sample` samples audio in every frame, `sound-off` creates the
//! emulator without sound emulation (PyBoy's `sound_emulated=False`), `rate=HZ` sets the
//! sample rate, `start` presses START in frames 60-69 (to get past a title screen),
//! `state=PATH` starts from a save state of the ROM, PyBoy 2.8.1's or emurust's (gameplay, for
//! profiles),
//! `digest` prints a hash of every frame's screen (when drawn), samples and machine state
//! (with `start`-style buttons pressed pseudo-randomly), to check that an optimisation
//! changed nothing (compare the line before and after); `idle-off`, `defer-off`, `lines-off`
//! and `wait-off` turn off the idle-loop fast-forward, the LCD deferral, its deferral across
//! lines and every wait-loop fast path (to compare digests with them on); `v2-play` presses
//! buttons as PokemonRedExperiments v2's agents do (from its `init.state`, a profile of v2's
//! play without Python): every 24 frames one of v2's seven actions (down, left, right, up, A,
//! B, START), drawn pseudo-randomly, held for the first 8 (with `digest`, these buttons instead
//! of its own). `v2-ticks` draws and samples the frames v2's step on PyBoy's defaults does
//! (sound sampled in frames 8, 23 and 24 of each 24, the last drawn): with `v2-play`, the
//! emulator's whole part of v2's steps.

use std::time::Instant;

use emurust_core::apu::SoundOptions;
use emurust_core::gameboy::Options;

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: run_frames ROM FRAMES [render] [sound-off|sample|rate=HZ|start|state=PATH|digest|idle-off|defer-off|lines-off|wait-off|v2-play|v2-ticks]...";
    let rom = args.next().expect(usage);
    let frames: u32 = args
        .next()
        .map_or(600, |f| f.parse().expect("FRAMES must be a number"));
    let (mut render, mut sample, mut start, mut v2_play) = (false, false, false, false);
    let mut v2_ticks = false;
    let mut state: Option<String> = None;
    let mut idle_off = false;
    let mut defer_off = false;
    let mut lines_off = false;
    let mut wait_off = false;
    let mut digest: Option<u64> = None;
    let mut sound = SoundOptions::default();
    for a in args {
        match a.as_str() {
            "render" => render = true,
            "sample" => sample = true,
            "sound-off" => sound.emulated = false,
            "start" => start = true,
            "digest" => digest = Some(0xcbf2_9ce4_8422_2325),
            "idle-off" => idle_off = true,
            "defer-off" => defer_off = true,
            "lines-off" => lines_off = true,
            "wait-off" => wait_off = true,
            "v2-play" => v2_play = true,
            "v2-ticks" => v2_ticks = true,
            _ if a.starts_with("rate=") => sound.sample_rate = a[5..].parse().expect(usage),
            _ if a.starts_with("state=") => state = Some(a[6..].to_string()),
            _ => panic!("{usage}"),
        }
    }
    let data = std::fs::read(&rom).unwrap_or_else(|e| panic!("{rom}: {e}"));
    let options = Options {
        sound,
        ..Options::default()
    };
    let mut gb = match &state {
        None => emurust_core::GameBoy::with_options(data.into(), None, options),
        Some(path) => {
            let saved = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            // A PyBoy state, else an emurust one (e.g. from `RedV2Batch.save_state`).
            let rom: std::sync::Arc<[u8]> = data.into();
            emurust_core::GameBoy::from_pyboy_state(rom.clone(), options, &saved).or_else(|_| {
                let mut gb = emurust_core::GameBoy::with_options(rom, None, options)?;
                gb.load_state(&saved).map(|()| gb)
            })
        }
    }
    .unwrap_or_else(|e| panic!("{e}"));
    gb.idle_loop_fast_forward = !idle_off;
    gb.lcd_deferral = !defer_off;
    gb.multi_line_deferral = !lines_off;
    gb.wait_loop_fast_paths = !wait_off;
    let t = Instant::now();
    for i in 0..frames {
        if start {
            let pressed = if (60..70).contains(&i) {
                emurust_core::joypad::button::START
            } else {
                0
            };
            gb.set_buttons(pressed);
        }
        if let Some(h) = digest.as_mut() {
            // Buttons change every 8 frames, as an agent's would.
            gb.set_buttons(if v2_play {
                v2_buttons(i)
            } else {
                scramble(i / 8) as u8
            });
            let (render, sample) = frame_modes(i, render, sample, v2_ticks);
            gb.run_frame(render, sample && sound.emulated);
            let fold = |h: &mut u64, bytes: &[u8]| {
                for &b in bytes {
                    *h = (*h ^ b as u64).wrapping_mul(0x100_0000_01b3);
                }
            };
            if render {
                fold(h, gb.bus.lcd.screen_grey());
            }
            let samples: Vec<u8> = gb.bus.apu.samples().iter().map(|&v| v as u8).collect();
            fold(h, &samples);
            fold(h, &gb.instructions().to_le_bytes());
            if i % 64 == 63 || i + 1 == frames {
                fold(h, &gb.save_state());
            }
            continue;
        }
        if v2_play {
            gb.set_buttons(v2_buttons(i));
        }
        let (render, sample) = frame_modes(i, render, sample, v2_ticks);
        gb.run_frame(render, sample && sound.emulated);
    }
    if let Some(h) = digest {
        println!("digest {h:016x}");
    }
    let dt = t.elapsed().as_secs_f64();
    println!("sm83 instructions {}", gb.instructions());
    let w = gb.wait_loop_stats;
    println!(
        "skipped: idle loops {}, busy loops {} ({} skips, {} of counter loops, {} proofs, {} looks)",
        w.idle_skipped_instructions,
        w.busy_skipped_instructions,
        w.busy_skips,
        w.busy_counter_skips,
        w.busy_proofs,
        w.idle_looks
    );
    println!(
        "short loops: {} ({} instructions)",
        w.short_loops, w.short_loop_instructions
    );
    println!(
        "{frames} frames in {dt:.3} s: {:.0} frames/s, {:.1} M instructions/s",
        frames as f64 / dt,
        gb.instructions() as f64 / dt / 1e6
    );
}

/// Whether frame `i` is drawn and samples sound: as asked, or with `v2_ticks` as
/// PokemonRedExperiments v2's step of 24 frames on PyBoy's defaults runs them (`tick(8)`,
/// `tick(15)`, `tick(1, True)`: each tick samples sound in its last frame; the last is drawn).
fn frame_modes(i: u32, render: bool, sample: bool, v2_ticks: bool) -> (bool, bool) {
    if !v2_ticks {
        return (render, sample);
    }
    let k = i % 24;
    (k == 23, matches!(k, 7 | 22 | 23))
}

/// The buttons of frame `i` as v2's agents press them (see the module docs): its action for the
/// 24-frame step `i / 24` (drawn by [`scramble`]), held for the step's first 8 frames.
fn v2_buttons(i: u32) -> u8 {
    use emurust_core::joypad::button;
    const ACTIONS: [u8; 7] = [
        button::DOWN,
        button::LEFT,
        button::RIGHT,
        button::UP,
        button::A,
        button::B,
        button::START,
    ];
    if i % 24 >= 8 {
        return 0;
    }
    ACTIONS[(scramble(i / 24) % 7) as usize]
}

/// A pseudo-random number for `n` (xorshift of `n` with a fixed key): the same buttons every run.
fn scramble(n: u32) -> u64 {
    let mut x = n as u64 ^ 0x9E37_79B9_7F4A_7C15;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}
