//! `emurust._core.PongBatch`: N games of PufferLib's Pong (crates/emurust-pong) stepped by one
//! call, the GIL released, on the batch's threads (`crate::gang`: each thread the same
//! contiguous block of games every call), the results written into NumPy arrays the caller
//! passes. Games are independent (each owns its `rand()` stream), so results do not depend on
//! the thread count or the scheduler.

use std::sync::Arc;

use emurust_pong::{Pong, PongConfig, OBS_SIZE};
use numpy::{
    PyReadonlyArray1, PyReadonlyArray2, PyReadwriteArray1, PyReadwriteArray2, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyIndexError, PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

use crate::batch::{pool_for, Scheduler};
use crate::gang::{Gang, SharedMut};

/// Games per Rayon task at least (scheduler "rayon"): below this the dispatch costs more than
/// the games.
const MIN_CHUNK: usize = 64;
/// Games per claim at least (scheduler "gang"; a game step is ~25 ns, so ~1.5 us): a batch of
/// this many games or fewer runs on the caller alone.
const MIN_GRAIN: usize = 64;
/// Games per Rayon task of `run_steps` at least (a task runs them through a whole round, so
/// its dispatch is paid once per ~2 ms, not per step).
const RUN_MIN_CHUNK: usize = 4;
/// Rayon tasks per thread and round of `run_steps`: many small ones, so that a thread slowed
/// by the machine takes fewer and the round ends at most one small task after the others.
const RUN_CHUNKS_PER_THREAD: usize = 64;
/// Game steps per round of `run_steps` and thread (~120 ms on one core): signals are checked
/// between rounds, and every round ends with a join.
const RUN_ROUND_GAME_STEPS: usize = 1 << 22;

/// N Pong games (see the module docs of `emurust.pong`).
#[pyclass(module = "emurust._core")]
pub struct PongBatch {
    games: Vec<Pong>,
    /// Steps since each game's reset (for `max_episode_steps`).
    episode_steps: Vec<u32>,
    max_episode_steps: u32,
    actions: Vec<i32>,
    pool: Arc<Gang>,
    threads: usize,
    scheduler: Scheduler,
}

fn value_err(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

fn check_len(name: &str, got: usize, want: usize) -> PyResult<()> {
    if got != want {
        return Err(value_err(format!(
            "{name} has {got} values, expected {want}"
        )));
    }
    Ok(())
}

/// The outputs of one block of games.
struct Block<'a> {
    games: &'a mut [Pong],
    steps: &'a mut [u32],
    actions: &'a [i32],
    obs: &'a mut [f32],
    rewards: &'a mut [f32],
    terminated: &'a mut [bool],
    truncated: &'a mut [bool],
    final_obs: &'a mut [f32],
}

/// The output arrays as raw slices, for the gang's participants (each writes its own rows).
struct SharedBlock {
    games: SharedMut<Pong>,
    steps: SharedMut<u32>,
    obs: SharedMut<f32>,
    rewards: SharedMut<f32>,
    terminated: SharedMut<bool>,
    truncated: SharedMut<bool>,
    final_obs: SharedMut<f32>,
}

impl SharedBlock {
    /// # Safety
    /// `r` is within the batch and claimed by the caller alone (the gang's claims).
    unsafe fn block<'a>(&'a self, r: std::ops::Range<usize>, actions: &'a [i32]) -> Block<'a> {
        let rows = r.start * OBS_SIZE..r.end * OBS_SIZE;
        Block {
            games: self.games.range(r.clone()),
            steps: self.steps.range(r.clone()),
            actions: &actions[r.clone()],
            obs: self.obs.range(rows.clone()),
            rewards: self.rewards.range(r.clone()),
            terminated: self.terminated.range(r.clone()),
            truncated: self.truncated.range(r),
            final_obs: self.final_obs.range(rows),
        }
    }
}

fn step_block(b: Block<'_>, max_steps: u32) {
    for (i, game) in b.games.iter_mut().enumerate() {
        let s = game.step(b.actions[i]);
        let row = i * OBS_SIZE..(i + 1) * OBS_SIZE;
        b.steps[i] += 1;
        let truncated = !s.terminal && max_steps > 0 && b.steps[i] >= max_steps;
        if s.terminal {
            b.final_obs[row.clone()].copy_from_slice(&game.final_observations);
            b.steps[i] = 0;
        } else if truncated {
            b.final_obs[row.clone()].copy_from_slice(&game.observations);
            game.reset();
            b.steps[i] = 0;
        }
        b.obs[row].copy_from_slice(&game.observations);
        b.rewards[i] = s.reward;
        b.terminated[i] = s.terminal;
        b.truncated[i] = truncated;
    }
}

impl PongBatch {
    fn chunk(&self) -> usize {
        self.games.len().div_ceil(self.threads).max(MIN_CHUNK)
    }

    /// Games per claim of the gang: a quarter of a thread's block (a late thread's games are
    /// taken in a few pieces), at least `MIN_GRAIN`.
    fn grain(&self) -> usize {
        (self.games.len() / (4 * self.threads)).max(MIN_GRAIN)
    }

    fn game(&self, i: i64) -> PyResult<&Pong> {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.games.get(i))
            .ok_or_else(|| {
                PyIndexError::new_err(format!(
                    "game {i} out of range (0-{})",
                    self.games.len() - 1
                ))
            })
    }
}

#[pymethods]
impl PongBatch {
    #[new]
    #[pyo3(signature = (num_envs, *, width=500.0, height=640.0, paddle_width=20.0, paddle_height=70.0,
        ball_width=32.0, ball_height=32.0, paddle_speed=8.0, ball_initial_speed_x=10.0,
        ball_initial_speed_y=1.0, ball_max_speed_y=13.0, ball_speed_y_increment=3.0,
        max_score=21, frameskip=1, max_episode_steps=0, num_threads=None, scheduler=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        num_envs: i64,
        width: f32,
        height: f32,
        paddle_width: f32,
        paddle_height: f32,
        ball_width: f32,
        ball_height: f32,
        paddle_speed: f32,
        ball_initial_speed_x: f32,
        ball_initial_speed_y: f32,
        ball_max_speed_y: f32,
        ball_speed_y_increment: f32,
        max_score: i64,
        frameskip: i64,
        max_episode_steps: i64,
        num_threads: Option<i64>,
        scheduler: Option<&str>,
    ) -> PyResult<Self> {
        let scheduler = Scheduler::from_py(
            scheduler,
            Scheduler::Gang,
            &[Scheduler::Gang, Scheduler::Rayon],
        )?;
        if !(1..=1 << 24).contains(&num_envs) {
            return Err(value_err(format!(
                "num_envs must be between 1 and 16777216, got {num_envs}"
            )));
        }
        let as_u32 = |name: &str, v: i64| {
            u32::try_from(v)
                .map_err(|_| value_err(format!("{name} must be between 0 and 4294967295, got {v}")))
        };
        let config = PongConfig {
            width,
            height,
            paddle_width,
            paddle_height,
            ball_width,
            ball_height,
            paddle_speed,
            ball_initial_speed_x,
            ball_initial_speed_y,
            ball_max_speed_y,
            ball_speed_y_increment,
            max_score: as_u32("max_score", max_score)?,
            frameskip: as_u32("frameskip", frameskip)?,
        };
        let max_episode_steps = as_u32("max_episode_steps", max_episode_steps)?;
        let game = Pong::new(config, 1).map_err(|e| value_err(e.0))?;
        let (pool, threads) = pool_for(num_threads)?;
        let n = num_envs as usize;
        Ok(PongBatch {
            games: vec![game; n],
            episode_steps: vec![0; n],
            max_episode_steps,
            actions: vec![0; n],
            pool,
            threads,
            scheduler,
        })
    }

    #[getter]
    fn num_envs(&self) -> usize {
        self.games.len()
    }

    #[getter]
    fn num_threads(&self) -> usize {
        self.threads
    }

    /// How steps are spread over the threads: "gang" or "rayon" (the `scheduler` argument).
    #[getter]
    fn scheduler(&self) -> &'static str {
        self.scheduler.name()
    }

    #[getter]
    fn frameskip(&self) -> u32 {
        self.games[0].config.frameskip
    }

    /// Restart game i's `rand()` stream as `srand(seeds[i])` (None: leave it).
    fn seed(&mut self, seeds: Vec<Option<i64>>) -> PyResult<()> {
        check_len("seeds", seeds.len(), self.games.len())?;
        for (game, s) in self.games.iter_mut().zip(seeds) {
            if let Some(s) = s {
                let s = u32::try_from(s).map_err(|_| {
                    value_err(format!("seeds must be between 0 and 4294967295, got {s}"))
                })?;
                game.seed(s);
            }
        }
        Ok(())
    }

    /// Reset the games (those where `mask` is True) and write their observations into `obs`.
    #[pyo3(signature = (obs, mask=None))]
    fn reset(
        &mut self,
        mut obs: PyReadwriteArray2<'_, f32>,
        mask: Option<PyReadonlyArray1<'_, bool>>,
    ) -> PyResult<()> {
        let n = self.games.len();
        let obs = obs
            .as_slice_mut()
            .map_err(|_| value_err("obs must be a C-contiguous float32 array"))?;
        check_len("obs", obs.len(), n * OBS_SIZE)?;
        let mask = match &mask {
            Some(m) => {
                let m = m
                    .as_slice()
                    .map_err(|_| value_err("mask must be a contiguous bool array"))?;
                check_len("mask", m.len(), n)?;
                Some(m)
            }
            None => None,
        };
        for (i, game) in self.games.iter_mut().enumerate() {
            if mask.is_none_or(|m| m[i]) {
                game.reset();
                self.episode_steps[i] = 0;
                obs[i * OBS_SIZE..(i + 1) * OBS_SIZE].copy_from_slice(&game.observations);
            }
        }
        Ok(())
    }

    /// Step every game with its action (0 still, 1 up, 2 down). Writes the observations, the
    /// rewards, terminated/truncated, and for games whose episode ended the last observation
    /// before their automatic reset into `final_obs` (other rows are left as they were).
    #[allow(clippy::too_many_arguments)]
    fn step(
        &mut self,
        py: Python<'_>,
        actions: PyReadonlyArray1<'_, i64>,
        mut obs: PyReadwriteArray2<'_, f32>,
        mut rewards: PyReadwriteArray1<'_, f32>,
        mut terminated: PyReadwriteArray1<'_, bool>,
        mut truncated: PyReadwriteArray1<'_, bool>,
        mut final_obs: PyReadwriteArray2<'_, f32>,
    ) -> PyResult<()> {
        let n = self.games.len();
        let contiguous = |name: &str| value_err(format!("{name} must be a C-contiguous array"));
        let acts = actions.as_slice().map_err(|_| contiguous("actions"))?;
        check_len("actions", acts.len(), n)?;
        for (dst, &a) in self.actions.iter_mut().zip(acts) {
            if !(0..=2).contains(&a) {
                return Err(value_err(format!(
                    "actions must be 0 (still), 1 (up) or 2 (down), got {a}"
                )));
            }
            *dst = a as i32;
        }
        let obs = obs.as_slice_mut().map_err(|_| contiguous("obs"))?;
        let rewards = rewards.as_slice_mut().map_err(|_| contiguous("rewards"))?;
        let terminated = terminated
            .as_slice_mut()
            .map_err(|_| contiguous("terminated"))?;
        let truncated = truncated
            .as_slice_mut()
            .map_err(|_| contiguous("truncated"))?;
        let final_obs = final_obs
            .as_slice_mut()
            .map_err(|_| contiguous("final_obs"))?;
        check_len("obs", obs.len(), n * OBS_SIZE)?;
        check_len("final_obs", final_obs.len(), n * OBS_SIZE)?;
        check_len("rewards", rewards.len(), n)?;
        check_len("terminated", terminated.len(), n)?;
        check_len("truncated", truncated.len(), n)?;
        let max_steps = self.max_episode_steps;
        if self.scheduler == Scheduler::Gang {
            let grain = self.grain();
            let shared = SharedBlock {
                games: SharedMut::new(&mut self.games),
                steps: SharedMut::new(&mut self.episode_steps),
                obs: SharedMut::new(obs),
                rewards: SharedMut::new(rewards),
                terminated: SharedMut::new(terminated),
                truncated: SharedMut::new(truncated),
                final_obs: SharedMut::new(final_obs),
            };
            let (actions, pool) = (&self.actions, &self.pool);
            py.allow_threads(|| {
                // SAFETY: the gang hands out each game index once.
                pool.run(n, grain, |r| {
                    step_block(unsafe { shared.block(r, actions) }, max_steps)
                })
            });
            return Ok(());
        }
        let chunk = self.chunk();
        let (games, steps, actions) = (&mut self.games, &mut self.episode_steps, &self.actions);
        let pool = self.pool.pool();
        py.allow_threads(|| {
            if n <= chunk {
                step_block(
                    Block {
                        games,
                        steps,
                        actions,
                        obs,
                        rewards,
                        terminated,
                        truncated,
                        final_obs,
                    },
                    max_steps,
                );
                return;
            }
            pool.install(|| {
                games
                    .par_chunks_mut(chunk)
                    .zip(steps.par_chunks_mut(chunk))
                    .zip(actions.par_chunks(chunk))
                    .zip(obs.par_chunks_mut(chunk * OBS_SIZE))
                    .zip(rewards.par_chunks_mut(chunk))
                    .zip(terminated.par_chunks_mut(chunk))
                    .zip(truncated.par_chunks_mut(chunk))
                    .zip(final_obs.par_chunks_mut(chunk * OBS_SIZE))
                    .for_each(
                        |(
                            ((((((games, steps), actions), obs), rewards), terminated), truncated),
                            final_obs,
                        )| {
                            step_block(
                                Block {
                                    games,
                                    steps,
                                    actions,
                                    obs,
                                    rewards,
                                    terminated,
                                    truncated,
                                    final_obs,
                                },
                                max_steps,
                            )
                        },
                    );
            });
        });
        Ok(())
    }

    /// Run `steps` steps with the action rows of `actions` (shape (K, num_envs), row t % K at
    /// step t) inside Rust, without a Python call per step; returns the sum of the rewards.
    /// For benchmarks. Games are independent and the actions fixed, so the threads run small
    /// chunks of games through rounds of steps, joining only between rounds (no per-step
    /// synchronisation: the engine's own throughput; `step` is the per-step, RL-loop path).
    /// Ctrl-C stops every game after the same step (the end of a round).
    fn run_steps(
        &mut self,
        py: Python<'_>,
        actions: PyReadonlyArray2<'_, i32>,
        steps: u64,
    ) -> PyResult<f64> {
        let n = self.games.len();
        let shape = actions.shape();
        if shape[1] != n || shape[0] == 0 {
            return Err(value_err(format!(
                "actions must have shape (K, {n}) with K >= 1, got {shape:?}"
            )));
        }
        let table = actions
            .as_slice()
            .map_err(|_| value_err("actions must be a C-contiguous int32 array"))?;
        if let Some(a) = table.iter().find(|a| !(0..=2).contains(*a)) {
            return Err(value_err(format!("actions must be 0, 1 or 2, got {a}")));
        }
        let rows = shape[0];
        // RUN_CHUNKS_PER_THREAD chunks per thread (at least RUN_MIN_CHUNK games): a round ends
        // when its last chunk does, so a thread slowed by the machine (a busy or descheduled
        // core) takes fewer and the others wait at most one small chunk. On the device (4,096
        // games, 16 threads, two calls, medians of 5 rounds in one process): 16 chunks per
        // thread in rounds of 1<<20 game steps 493-513 M steps/s; 64 per thread (4 games) in
        // rounds of 1<<22 551 M; one chunk per thread 415 M; 16 independent processes 530-576 M.
        // (Pieces of a chunk's steps claimed from a queue, no join but the call's end, were
        // slower there: ~300 M against ~460 M, the cause not found.)
        let chunk = n
            .div_ceil(RUN_CHUNKS_PER_THREAD * self.threads)
            .max(RUN_MIN_CHUNK);
        // The actions chunk by chunk (chunk k's rows one after another, a byte each), so that a
        // chunk reads its actions as one sequential stream. In the caller's (K, N) layout each
        // step of a chunk read one cache line K*N*4 bytes from the last (4 MiB for 256 rows of
        // 4,096 games), which the prefetchers do not follow. On the device, same call, 4,096
        // games on 16 threads: 574-579 M steps/s against 554-557 M (16 independent processes:
        // 597 M).
        let by_chunk: Vec<u8> = (0..n)
            .step_by(chunk)
            .flat_map(|first| {
                let len = chunk.min(n - first);
                (0..rows).flat_map(move |r| table[r * n + first..][..len].iter().map(|&a| a as u8))
            })
            .collect();
        let run_block = |first: usize, block: &mut [Pong], steps: std::ops::Range<usize>| {
            let len = block.len();
            let actions = &by_chunk[first * rows..(first + len) * rows];
            let mut total = 0f64;
            for t in steps {
                let row = &actions[(t % rows) * len..][..len];
                for (g, &a) in block.iter_mut().zip(row) {
                    total += g.step(i32::from(a)).reward as f64;
                }
            }
            total
        };
        // Rounds of ~120 ms of wall time whatever the thread count, signals handled between
        // them (Ctrl-C), a join paid once per round. Within a round each Rayon task runs its
        // chunk of games through all the round's steps, no per-step join. Rayon's work
        // stealing, not the gang, on the device's 16 cores: 14.1x one thread against the
        // gang's 9.4x (docs/scheduling.md).
        let per_round = (RUN_ROUND_GAME_STEPS * self.threads / n).max(1);
        let steps = steps as usize;
        let mut total = 0f64;
        let mut done = 0usize;
        while done < steps {
            let round = done..(done + per_round).min(steps);
            let (games, pool) = (&mut self.games, self.pool.pool());
            // Rewards are whole numbers, so the f64 sum is exact in any order.
            total += py.allow_threads(|| {
                if n <= chunk {
                    return run_block(0, games, round.clone());
                }
                pool.install(|| {
                    games
                        .par_chunks_mut(chunk)
                        .enumerate()
                        .map(|(k, block)| run_block(k * chunk, block, round.clone()))
                        .sum::<f64>()
                })
            });
            done = round.end;
            if done < steps {
                py.check_signals()?;
            }
        }
        Ok(total)
    }

    /// Game i's state as a dict (the reference's fields; for tests and debugging).
    fn get_state<'py>(&self, py: Python<'py>, i: i64) -> PyResult<Bound<'py, PyDict>> {
        let g = self.game(i)?;
        let d = PyDict::new(py);
        d.set_item("paddle_yl", g.paddle_yl)?;
        d.set_item("paddle_yr", g.paddle_yr)?;
        d.set_item("ball_x", g.ball_x)?;
        d.set_item("ball_y", g.ball_y)?;
        d.set_item("ball_vx", g.ball_vx)?;
        d.set_item("ball_vy", g.ball_vy)?;
        d.set_item("score_l", g.score_l)?;
        d.set_item("score_r", g.score_r)?;
        d.set_item("paddle_dir", g.paddle_dir)?;
        d.set_item("tick", g.tick)?;
        d.set_item("n_bounces", g.n_bounces)?;
        d.set_item("win", g.win)?;
        d.set_item("episode_return", g.log.episode_return)?;
        d.set_item("episode_length", g.log.episode_length)?;
        d.set_item("score", g.log.score)?;
        d.set_item("observations", g.observations.to_vec())?;
        Ok(d)
    }

    /// Set fields of game i (keys as `get_state` returns; others are a KeyError).
    fn set_state(&mut self, i: i64, state: &Bound<'_, PyDict>) -> PyResult<()> {
        self.game(i)?;
        let g = &mut self.games[i as usize];
        for (k, v) in state.iter() {
            let key: String = k.extract()?;
            match key.as_str() {
                "paddle_yl" => g.paddle_yl = v.extract()?,
                "paddle_yr" => g.paddle_yr = v.extract()?,
                "ball_x" => g.ball_x = v.extract()?,
                "ball_y" => g.ball_y = v.extract()?,
                "ball_vx" => g.ball_vx = v.extract()?,
                "ball_vy" => g.ball_vy = v.extract()?,
                "score_l" => g.score_l = v.extract()?,
                "score_r" => g.score_r = v.extract()?,
                "paddle_dir" => g.paddle_dir = v.extract()?,
                "tick" => g.tick = v.extract()?,
                "n_bounces" => g.n_bounces = v.extract()?,
                "win" => g.win = v.extract()?,
                "episode_return" => g.log.episode_return = v.extract()?,
                "episode_length" => g.log.episode_length = v.extract()?,
                "score" => g.log.score = v.extract()?,
                "observations" => g.observations = v.extract()?,
                _ => {
                    return Err(PyKeyError::new_err(format!(
                        "unknown Pong state field {key:?}"
                    )))
                }
            }
        }
        Ok(())
    }

    /// Game i's scores (opponent, agent).
    fn scores(&self, i: i64) -> PyResult<(u32, u32)> {
        let g = self.game(i)?;
        Ok((g.score_l, g.score_r))
    }

    /// The log (return, length, score) of game i's last finished episode.
    fn last_episode(&self, i: i64) -> PyResult<(f32, f32, f32)> {
        let l = self.game(i)?.last_episode;
        Ok((l.episode_return, l.episode_length, l.score))
    }

    fn __repr__(&self) -> String {
        format!(
            "PongBatch(num_envs={}, frameskip={}, threads={}, scheduler={:?})",
            self.games.len(),
            self.frameskip(),
            self.threads,
            self.scheduler.name()
        )
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PongBatch>()?;
    Ok(())
}
