//! Batch steps per second: N Game Boys of one ROM stepped together with Rayon, as
//! `emurust._core.Batch` does (one step = frame skip 24: buttons held 8 frames, released,
//! only the last frame drawn, sound sampled in the last frame of each `tick` as PyBoy's
//! default). Pure Rust, so it measures the core + Rayon without Python or observation copies.
//!
//!     cargo bench -p emurust-core --bench batch
//!     EMURUST_BENCH_SIZES=1,8,64 EMURUST_BENCH_THREADS=2 cargo bench -p emurust-core --bench batch
//!
//! Criterion reports "elements/s" = environment steps per second (N per iteration).
//! Defaults: N = 1, 8, 64, 512, 4096; threads = all CPUs (Rayon's default).

use std::sync::Arc;
use std::time::Duration;

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use emurust_core::joypad::button;
use emurust_core::GameBoy;
use rayon::prelude::*;

const FRAME_SKIP: u32 = 24;
const PRESS: u32 = 8;
/// A small fixed action cycle (Dodge's moves), one offset per environment so that the
/// emulators do not all run the same instruction stream.
const ACTIONS: [u8; 8] = [
    0,
    button::LEFT,
    button::RIGHT,
    button::UP,
    button::DOWN,
    button::A,
    button::A | button::LEFT,
    button::A | button::RIGHT,
];

fn rom(name: &str) -> Arc<[u8]> {
    let path = format!("{}/../../{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .into()
}

fn env_list(var: &str, default: &[usize]) -> Vec<usize> {
    match std::env::var(var) {
        Ok(s) if !s.trim().is_empty() => s
            .split(',')
            .map(|x| {
                x.trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("{var}: bad number {x:?}"))
            })
            .collect(),
        _ => default.to_vec(),
    }
}

struct Env {
    gb: GameBoy,
    t: usize,
}

impl Env {
    fn step(&mut self) {
        self.gb.set_buttons(ACTIONS[self.t % ACTIONS.len()]);
        self.gb.tick(PRESS, false, true);
        self.gb.set_buttons(0);
        self.gb.tick(FRAME_SKIP - PRESS, true, true);
        self.t += 1;
    }
}

fn batch(c: &mut Criterion) {
    let rom = rom("games/dodge.gb");
    let sizes = env_list("EMURUST_BENCH_SIZES", &[1, 8, 64, 512, 4096]);
    let threads = env_list("EMURUST_BENCH_THREADS", &[rayon::current_num_threads()]);
    let mut group = c.benchmark_group("batch_frame_skip_24");
    // Large batches take seconds per step on a small machine: keep the sample count minimal.
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for &t in &threads {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .expect("rayon pool");
        for &n in &sizes {
            let mut envs: Vec<Env> = (0..n)
                .map(|i| {
                    let mut gb = GameBoy::new(rom.clone(), None).expect("ROM");
                    // Leave the title screen (START), as the RL tasks do.
                    gb.tick(10, false, true);
                    gb.set_buttons(button::START);
                    gb.tick(2, false, true);
                    gb.set_buttons(0);
                    gb.tick(12, false, true);
                    Env { gb, t: i }
                })
                .collect();
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new(format!("threads_{t}"), n), |b| {
                b.iter(|| {
                    if t > 1 && n > 1 {
                        pool.install(|| envs.par_iter_mut().for_each(Env::step));
                    } else {
                        envs.iter_mut().for_each(Env::step);
                    }
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, batch);
criterion_main!(benches);
