//! Run a ROM for N frames (for profilers: perf, callgrind).
//! `cargo run --release -p emurust-core --example run_frames -- ROM FRAMES [render]`

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let rom = args.next().expect("usage: run_frames ROM FRAMES [render]");
    let frames: u32 = args.next().map_or(600, |f| f.parse().expect("FRAMES must be a number"));
    let render = args.next().is_some_and(|r| r == "render");
    let data = std::fs::read(&rom).unwrap_or_else(|e| panic!("{rom}: {e}"));
    let mut gb = emurust_core::GameBoy::new(data.into(), None).unwrap_or_else(|e| panic!("{e}"));
    let t = Instant::now();
    for _ in 0..frames {
        gb.run_frame(render, false);
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "{frames} frames in {dt:.3} s: {:.0} frames/s, {:.1} M instructions/s",
        frames as f64 / dt,
        gb.instructions as f64 / dt / 1e6
    );
}
