//! Run a ROM for N frames (for profilers: perf, callgrind; and quick speed checks).
//! `cargo run --release -p emurust-core --example run_frames -- ROM FRAMES [render] [sound-off|sample|rate=HZ|start]...`
//!
//! By default frames are neither drawn nor sampled, with sound emulated at 48000 Hz.
//! `render` draws every frame, `sample` samples audio in every frame, `sound-off` creates the
//! emulator without sound emulation (PyBoy's `sound_emulated=False`), `rate=HZ` sets the
//! sample rate, `start` presses START in frames 60-69 (to get past a title screen).

use std::time::Instant;

use emurust_core::apu::SoundOptions;
use emurust_core::gameboy::Options;

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: run_frames ROM FRAMES [render] [sound-off|sample|rate=HZ|start]...";
    let rom = args.next().expect(usage);
    let frames: u32 = args
        .next()
        .map_or(600, |f| f.parse().expect("FRAMES must be a number"));
    let (mut render, mut sample, mut start) = (false, false, false);
    let mut sound = SoundOptions::default();
    for a in args {
        match a.as_str() {
            "render" => render = true,
            "sample" => sample = true,
            "sound-off" => sound.emulated = false,
            "start" => start = true,
            _ if a.starts_with("rate=") => sound.sample_rate = a[5..].parse().expect(usage),
            _ => panic!("{usage}"),
        }
    }
    let data = std::fs::read(&rom).unwrap_or_else(|e| panic!("{rom}: {e}"));
    let mut gb = emurust_core::GameBoy::with_options(
        data.into(),
        None,
        Options {
            sound,
            ..Options::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
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
        gb.run_frame(render, sample && sound.emulated);
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "{frames} frames in {dt:.3} s: {:.0} frames/s, {:.1} M instructions/s",
        frames as f64 / dt,
        gb.instructions as f64 / dt / 1e6
    );
}
