//! Where a program spends its executed time in short loops, and how much of it the wait-loop
//! fast paths skip: runs a ROM (from power-on or a PyBoy 2.8.1 state) with buttons pressed
//! pseudo-randomly, then prints the fast paths' counters and a sampled PC histogram (the PC at
//! each look for an idle loop: every slice start and every 512 cycles of a running slice).
//! Also runs the same frames with the fast paths off and checks that the instruction count,
//! the PC trace and the save state are the same.
//!
//! `cargo run --release -p emurust-core --example idle_census -- ROM FRAMES [state=PATH] [top=N] [still]`
//! (`still`: no buttons pressed, as `emurust bench` runs a state)

use std::collections::HashMap;
use std::time::Instant;

use emurust_core::gameboy::{GameBoy, LoopVerdict, Options};

fn run(
    rom: &[u8],
    state: Option<&[u8]>,
    frames: u32,
    fast: bool,
    census: bool,
    still: bool,
    trace: bool,
) -> (GameBoy, f64) {
    let options = Options::default();
    let mut gb = match state {
        None => GameBoy::with_options(rom.into(), None, options),
        Some(s) => GameBoy::from_pyboy_state(rom.into(), options, s),
    }
    .unwrap_or_else(|e| panic!("{e}"));
    gb.wait_loop_fast_paths = fast;
    gb.set_pc_trace(trace);
    if census {
        gb.loop_census = Some(Box::default());
    }
    let t = Instant::now();
    for i in 0..frames {
        // Buttons change every 8 frames (xorshift), as an agent's would.
        let mut x = (i / 8) as u64 ^ 0x9E37_79B9_7F4A_7C15;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        gb.set_buttons(if still { 0 } else { x as u8 });
        gb.run_frame(false, false);
    }
    (gb, t.elapsed().as_secs_f64())
}

fn main() {
    let usage = "usage: idle_census ROM FRAMES [state=PATH] [top=N] [still]";
    let mut args = std::env::args().skip(1);
    let rom_path = args.next().expect(usage);
    let frames: u32 = args.next().map_or(600, |f| f.parse().expect(usage));
    let (mut state, mut top, mut still) = (None, 12usize, false);
    for a in args {
        if let Some(p) = a.strip_prefix("state=") {
            state = Some(std::fs::read(p).unwrap_or_else(|e| panic!("{p}: {e}")));
        } else if let Some(n) = a.strip_prefix("top=") {
            top = n.parse().expect(usage);
        } else if a == "still" {
            still = true;
        } else {
            panic!("{usage}");
        }
    }
    let rom = std::fs::read(&rom_path).unwrap_or_else(|e| panic!("{rom_path}: {e}"));
    // Timings: the fast paths on and off, census off, taking turns (best of 3).
    let (mut t_on, mut t_off) = (f64::MAX, f64::MAX);
    for _ in 0..3 {
        t_on = t_on.min(run(&rom, state.as_deref(), frames, true, false, still, false).1);
        t_off = t_off.min(run(&rom, state.as_deref(), frames, false, false, still, false).1);
    }
    let (on, _) = run(&rom, state.as_deref(), frames, true, true, still, true);
    let (off, _) = run(&rom, state.as_deref(), frames, false, false, still, true);
    assert_eq!(
        on.instructions(),
        off.instructions(),
        "instruction counts differ"
    );
    assert_eq!(on.pc_trace(), off.pc_trace(), "PC traces differ");
    assert!(on.save_state() == off.save_state(), "save states differ");
    let s = on.wait_loop_stats;
    let n = on.instructions();
    println!(
        "{rom_path}: {frames} frames, {:.0} instructions/frame, fast paths on {:.3}s off {:.3}s",
        n as f64 / frames as f64,
        t_on,
        t_off
    );
    println!(
        "  looks {}, idle skips {} (resumed {}, DIV {}, joypad {}), skipped instructions {} ({:.1}% of all), LY/STAT poll loops {}, DMA wait loops {}",
        s.idle_looks,
        s.idle_skips,
        s.idle_resumes,
        s.idle_div_skips,
        s.idle_joypad_skips,
        s.idle_skipped_instructions,
        100.0 * s.idle_skipped_instructions as f64 / n.max(1) as f64,
        s.poll_loops,
        s.dma_wait_loops
    );
    let census = on.loop_census.as_deref().cloned().unwrap_or_default();
    let total: u64 = census.values().sum();
    let mut by_verdict: HashMap<LoopVerdict, u64> = HashMap::new();
    for (&(_, v), &c) in &census {
        *by_verdict.entry(v).or_insert(0) += c;
    }
    let mut verdicts: Vec<_> = by_verdict.into_iter().collect();
    verdicts.sort();
    let share = |c: u64| 100.0 * c as f64 / total.max(1) as f64;
    let line: Vec<String> = verdicts
        .iter()
        .map(|(v, c)| format!("{v:?} {:.1}%", share(*c)))
        .collect();
    println!("  {total} PC samples: {}", line.join(", "));
    let mut rows: Vec<_> = census.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for ((pc, v), c) in rows.into_iter().take(top) {
        let code: Vec<String> = (0..6)
            .map(|k| format!("{:02X}", on.bus.peek(pc.wrapping_add(k))))
            .collect();
        println!(
            "    {pc:04X} {:>5.1}% {v:?}  [{}]",
            share(c),
            code.join(" ")
        );
    }
}
