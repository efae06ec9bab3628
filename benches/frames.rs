//! Frames per second of the core on our CPU-bound ROM, our games and the community corpus's
//! games (real programs by others), with and without drawing.
//! `cargo bench -p emurust-core` (PyBoy's figure on the same ROM: `python benches/compare.py`).

use std::sync::Arc;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use emurust_core::apu::SoundOptions;
use emurust_core::gameboy::Options;
use emurust_core::GameBoy;

fn bench_rom() -> Arc<[u8]> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/bench.gb");
    std::fs::read(path)
        .unwrap_or_else(|e| panic!("{path}: {e} (build it with bash roms/build.sh)"))
        .into()
}

/// Benchmark `gb` at 60 frames per iteration (Criterion's `thrpt` is then frames/s), drawing
/// every frame or none, sampling audio if `sound`; named `{prefix}render_every_frame` or
/// `{prefix}no_render`.
fn bench_60_frames(
    group: &mut BenchmarkGroup<'_, WallTime>,
    prefix: &str,
    mut gb: GameBoy,
    render: bool,
    sound: bool,
) {
    let draw = if render {
        "render_every_frame"
    } else {
        "no_render"
    };
    group.bench_function(format!("{prefix}{draw}"), |b| {
        b.iter(|| {
            for _ in 0..60 {
                gb.run_frame(render, sound);
            }
        })
    });
}

/// Into a game as a player gets there: `before` frames, START held for 2, `after` frames.
fn press_start(gb: &mut GameBoy, before: u32, after: u32, sound: bool) {
    gb.tick(before, false, sound);
    gb.set_buttons(emurust_core::joypad::button::START);
    gb.tick(2, false, sound);
    gb.set_buttons(0);
    gb.tick(after, false, sound);
}

fn frames(c: &mut Criterion) {
    let rom = bench_rom();
    let mut group = c.benchmark_group("frames");
    group.throughput(Throughput::Elements(60));
    for render in [false, true] {
        let mut gb = GameBoy::new(rom.clone(), None).unwrap();
        gb.tick(120, false, false); // past start-up
        bench_60_frames(&mut group, "", gb, render, false);
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
            press_start(&mut gb, 10, 60, false);
            bench_60_frames(&mut group, &format!("{game}/"), gb, render, false);
        }
    }
    group.finish();
}

/// Real games by others: the community corpus's games (`$EMURUST_TEST_ROMS/games`, default
/// `../shared/data/roms-dev/games` beside the repository; Libbet is a Game Boy Color game),
/// from power-on with START pressed, on the hardware their header asks for, sound emulated
/// (PyBoy's default) and off. Skipped, with a note, where the corpus is not present.
fn frames_corpus(c: &mut Criterion) {
    let root = std::env::var("EMURUST_TEST_ROMS").unwrap_or_else(|_| {
        format!(
            "{}/../../../shared/data/roms-dev",
            env!("CARGO_MANIFEST_DIR")
        )
    });
    let dir = std::path::Path::new(&root).join("games");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!(
            "frames_corpus: no corpus at {} (set EMURUST_TEST_ROMS)",
            dir.display()
        );
        return;
    };
    let mut roms: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|x| x.to_str()), Some("gb" | "gbc")))
        .collect();
    roms.sort();
    let mut group = c.benchmark_group("frames_corpus");
    group.throughput(Throughput::Elements(60));
    for path in roms {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let rom: Arc<[u8]> = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .into();
        for (sound, sound_name) in [(true, "sound"), (false, "sound_off")] {
            let options = Options {
                cgb: None,
                sound: SoundOptions {
                    emulated: sound,
                    ..SoundOptions::default()
                },
            };
            for render in [false, true] {
                let mut gb = GameBoy::with_options(rom.clone(), None, options).unwrap();
                press_start(&mut gb, 60, 120, sound);
                bench_60_frames(
                    &mut group,
                    &format!("{name}/{sound_name}/"),
                    gb,
                    render,
                    sound,
                );
            }
        }
    }
    group.finish();
}

criterion_group!(benches, frames, frames_games, frames_corpus);
criterion_main!(benches);
