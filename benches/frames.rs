//! Frames per second of the core on our CPU-bound ROM, with and without drawing.
//! `cargo bench -p emurust-core` (PyBoy's figure on the same ROM: `python benches/compare.py`).

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use emurust_core::GameBoy;

fn bench_rom() -> Arc<[u8]> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/bench.gb");
    std::fs::read(path)
        .unwrap_or_else(|e| panic!("{path}: {e} (build it with bash roms/build.sh)"))
        .into()
}

fn frames(c: &mut Criterion) {
    let rom = bench_rom();
    let mut group = c.benchmark_group("frames");
    group.throughput(Throughput::Elements(60));
    for render in [false, true] {
        let name = if render {
            "render_every_frame"
        } else {
            "no_render"
        };
        let mut gb = GameBoy::new(rom.clone(), None).unwrap();
        gb.tick(120, false, false); // past start-up
        group.bench_function(name, |b| {
            b.iter(|| {
                for _ in 0..60 {
                    gb.run_frame(render, false);
                }
            })
        });
    }
    group.finish();
}

/// The same on our games (Dodge: MBC1, sprites; Runner: MBC5, scrolling), as played after
/// START: what an RL environment runs. Separate group, so `frames/*` baselines stay comparable.
fn frames_games(c: &mut Criterion) {
    let mut group = c.benchmark_group("frames_games");
    group.throughput(Throughput::Elements(60));
    for game in ["dodge", "runner"] {
        let path = format!("{}/../../games/{game}.gb", env!("CARGO_MANIFEST_DIR"));
        let rom: Arc<[u8]> = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{path}: {e}"))
            .into();
        for render in [false, true] {
            let mut gb = GameBoy::new(rom.clone(), None).unwrap();
            gb.tick(10, false, false);
            gb.set_buttons(emurust_core::joypad::button::START);
            gb.tick(2, false, false);
            gb.set_buttons(0);
            gb.tick(60, false, false);
            let name = format!(
                "{game}/{}",
                if render {
                    "render_every_frame"
                } else {
                    "no_render"
                }
            );
            group.bench_function(name, |b| {
                b.iter(|| {
                    for _ in 0..60 {
                        gb.run_frame(render, false);
                    }
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, frames, frames_games);
criterion_main!(benches);
