//! Run a ROM for N frames (for profilers: perf, callgrind).
//! `cargo run --release -p emurust-core --example run_frames -- ROM FRAMES [render] [sound] [start]`
//! `render` draws every frame, `sound` samples audio every frame (PyBoy's default tick),
//! `start` presses START for frames 60-69 (to get past a title screen).

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: run_frames ROM FRAMES [render] [sound] [start]";
    let rom = args.next().expect(usage);
    let frames: u32 = args
        .next()
        .map_or(600, |f| f.parse().expect("FRAMES must be a number"));
    let (mut render, mut sound, mut start) = (false, false, false);
    for a in args {
        match a.as_str() {
            "render" => render = true,
            "sound" => sound = true,
            "start" => start = true,
            _ => panic!("{usage}"),
        }
    }
    let data = std::fs::read(&rom).unwrap_or_else(|e| panic!("{rom}: {e}"));
    let mut gb = emurust_core::GameBoy::new(data.into(), None).unwrap_or_else(|e| panic!("{e}"));
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
        gb.run_frame(render, sound);
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "{frames} frames in {dt:.3} s: {:.0} frames/s, {:.1} M instructions/s",
        frames as f64 / dt,
        gb.instructions as f64 / dt / 1e6
    );
}
