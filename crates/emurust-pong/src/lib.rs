//! PufferLib's Pong (`ocean/pong/pong.h`, MIT) in Rust, bit-identical with the C reference.
//!
//! The agent moves the right paddle (action 0 still, 1 up, 2 down: `y` grows upwards); a
//! scripted opponent moves the left one towards the ball, at most `paddle_speed` per frame. A
//! step is `frameskip` frames. Reward: 1 when the agent returns the ball, 10 when it wins a
//! point (nothing when it loses one); the episode ends when either side reaches `max_score`,
//! and the game then resets itself (the observation returned is the new game's first).
//!
//! Everything is `f32` in the reference's operation order, so that a trajectory is the same
//! bit for bit (checked against the compiled reference by `tests/test_pong.py` and
//! `emurust verify pong-rollout`). Quirks of the reference kept on purpose:
//!
//! - After a point that does not end the game, the observation is *not* recomputed: the step
//!   returns the previous frame's observation (the reference returns before computing it).
//! - The score observations divide unsigned integers (`score / max_score`), so they are 0
//!   except at `max_score`, which a reset immediately clears: they always read 0.
//! - Only a bounce off the agent's paddle clips the ball back inside the court; a bounce off
//!   the opponent's leaves it where it was (x < 0) for one frame.
//! - With `frameskip > 1` the reward of a step is the last event's, not a sum.
//! - An action other than 0, 1, 2 leaves the paddle still (the reference reads it as unsigned).
//!
//! ## `rand()`
//!
//! Each round reset draws `rand() % 2` to serve the ball level or downwards. Each game here
//! owns glibc's generator ([`GlibcRand`], the `random_r` TYPE_3 stream `srand` seeds), rather
//! than receiving injected draws: the hot path then has no hook, a seeded game equals the
//! reference game run after `srand(seed)` (the oracle gives every reference game its own
//! `random_r` stream seeded the same way), and the generator's own equality with glibc is a
//! direct test (`srand`/`rand` through libc). The reference's vectorised wrapper shares one
//! process-wide `rand()` among all its games; per-game streams make a game independent of how
//! many others run beside it and of the thread that steps it.

mod glibc_rand;

pub use glibc_rand::GlibcRand;

use std::fmt;

/// A configuration the reference cannot run (it would divide by zero or never move).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PongError(pub String);

impl fmt::Display for PongError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PongError {}

/// The reference's parameters; `Default` is `pong.py`'s defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PongConfig {
    pub width: f32,
    pub height: f32,
    pub paddle_width: f32,
    pub paddle_height: f32,
    pub ball_width: f32,
    pub ball_height: f32,
    pub paddle_speed: f32,
    pub ball_initial_speed_x: f32,
    pub ball_initial_speed_y: f32,
    pub ball_max_speed_y: f32,
    pub ball_speed_y_increment: f32,
    pub max_score: u32,
    pub frameskip: u32,
}

impl Default for PongConfig {
    fn default() -> Self {
        PongConfig {
            width: 500.0,
            height: 640.0,
            paddle_width: 20.0,
            paddle_height: 70.0,
            ball_width: 32.0,
            ball_height: 32.0,
            paddle_speed: 8.0,
            ball_initial_speed_x: 10.0,
            ball_initial_speed_y: 1.0,
            ball_max_speed_y: 13.0,
            ball_speed_y_increment: 3.0,
            max_score: 21,
            frameskip: 1,
        }
    }
}

impl PongConfig {
    /// Reject what the reference would divide by zero on, or values that are not finite.
    pub fn validate(&self) -> Result<(), PongError> {
        let floats = [
            ("width", self.width),
            ("height", self.height),
            ("paddle_width", self.paddle_width),
            ("paddle_height", self.paddle_height),
            ("ball_width", self.ball_width),
            ("ball_height", self.ball_height),
            ("paddle_speed", self.paddle_speed),
            ("ball_initial_speed_x", self.ball_initial_speed_x),
            ("ball_initial_speed_y", self.ball_initial_speed_y),
            ("ball_max_speed_y", self.ball_max_speed_y),
            ("ball_speed_y_increment", self.ball_speed_y_increment),
        ];
        for (name, v) in floats {
            if !v.is_finite() {
                return Err(PongError(format!("{name} must be finite, got {v}")));
            }
        }
        for (name, v) in [
            ("width", self.width),
            ("height", self.height),
            ("ball_initial_speed_x", self.ball_initial_speed_x),
            ("ball_max_speed_y", self.ball_max_speed_y),
        ] {
            if v <= 0.0 {
                return Err(PongError(format!("{name} must be > 0, got {v}")));
            }
        }
        if self.max_score == 0 {
            return Err(PongError("max_score must be >= 1".into()));
        }
        if self.frameskip == 0 {
            return Err(PongError("frameskip must be >= 1".into()));
        }
        Ok(())
    }
}

/// The reference's episode log (its `Log`): accumulated as `f32`, cleared at every reset.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EpisodeLog {
    pub episode_return: f32,
    pub episode_length: f32,
    pub score: f32,
}

/// What one step returns besides the observation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub reward: f32,
    /// The game ended (and has already reset itself).
    pub terminal: bool,
}

/// Number of observations: both paddles, ball position and velocity, both scores.
pub const OBS_SIZE: usize = 8;

/// One game. Fields are public so tests can put it in any state (as the oracle can).
/// Cache-line aligned: a batch's games sit side by side and threads step neighbouring blocks,
/// so two games must never share a line (its writes would bounce between cores every step).
#[derive(Clone, Debug, PartialEq)]
#[repr(align(64))]
pub struct Pong {
    pub config: PongConfig,
    /// Left (opponent) and right (agent) paddle bottoms.
    pub paddle_yl: f32,
    pub paddle_yr: f32,
    pub ball_x: f32,
    pub ball_y: f32,
    pub ball_vx: f32,
    pub ball_vy: f32,
    pub score_l: u32,
    pub score_r: u32,
    /// Derived from the config at construction (`init` in the reference).
    pub min_paddle_y: f32,
    pub max_paddle_y: f32,
    /// The agent's last direction (+1 up, -1 down, 0): a return adds it to the ball's spin.
    pub paddle_dir: f32,
    pub tick: i32,
    pub n_bounces: i32,
    pub win: i32,
    pub log: EpisodeLog,
    /// The log of the last finished game (the reference's `add_log`).
    pub last_episode: EpisodeLog,
    /// The observation buffer as the last finished game left it, before its reset.
    pub final_observations: [f32; OBS_SIZE],
    pub observations: [f32; OBS_SIZE],
    pub rng: GlibcRand,
}

impl Pong {
    /// A game before its first `reset` (as after the reference's `allocate`), its `rand()`
    /// stream seeded as `srand(seed)`.
    pub fn new(config: PongConfig, seed: u32) -> Result<Self, PongError> {
        config.validate()?;
        Ok(Pong {
            config,
            paddle_yl: 0.0,
            paddle_yr: 0.0,
            ball_x: 0.0,
            ball_y: 0.0,
            ball_vx: 0.0,
            ball_vy: 0.0,
            score_l: 0,
            score_r: 0,
            min_paddle_y: -config.paddle_height / 2.0,
            max_paddle_y: config.height - config.paddle_height / 2.0,
            paddle_dir: 0.0,
            tick: 0,
            n_bounces: 0,
            win: 0,
            log: EpisodeLog::default(),
            last_episode: EpisodeLog::default(),
            final_observations: [0.0; OBS_SIZE],
            observations: [0.0; OBS_SIZE],
            rng: GlibcRand::new(seed),
        })
    }

    /// Restart the `rand()` stream as `srand(seed)` (the game itself is unchanged).
    pub fn seed(&mut self, seed: u32) {
        self.rng = GlibcRand::new(seed);
    }

    pub fn observations(&self) -> &[f32; OBS_SIZE] {
        &self.observations
    }

    fn compute_observations(&mut self) {
        let c = &self.config;
        let paddle_range = self.max_paddle_y - self.min_paddle_y;
        self.observations = [
            (self.paddle_yl - self.min_paddle_y) / paddle_range,
            (self.paddle_yr - self.min_paddle_y) / paddle_range,
            self.ball_x / c.width,
            self.ball_y / c.height,
            (self.ball_vx + c.ball_initial_speed_x) / (2.0 * c.ball_initial_speed_x),
            (self.ball_vy + c.ball_max_speed_y) / (2.0 * c.ball_max_speed_y),
            // Unsigned integer division in the reference.
            (self.score_l / c.max_score) as f32,
            (self.score_r / c.max_score) as f32,
        ];
    }

    /// Serve: paddles centred, ball at a fifth of the width moving right, level or downwards.
    fn reset_round(&mut self) {
        let c = self.config;
        self.paddle_yl = c.height / 2.0 - c.paddle_height / 2.0;
        self.paddle_yr = c.height / 2.0 - c.paddle_height / 2.0;
        self.ball_x = c.width / 5.0;
        self.ball_y = c.height / 2.0 - c.ball_height / 2.0;
        self.ball_vx = c.ball_initial_speed_x;
        // (rand() % 2 - 1) as an int, then converted to float: -1 or 0.
        let serve = (self.rng.next_u31() % 2) as i32 - 1;
        self.ball_vy = serve as f32 * c.ball_initial_speed_y;
        self.tick = 0;
        self.n_bounces = 0;
    }

    /// A new game: log and scores cleared, a round served, observations computed.
    pub fn reset(&mut self) {
        self.log = EpisodeLog::default();
        self.reset_round();
        self.score_l = 0;
        self.score_r = 0;
        self.compute_observations();
    }

    /// One agent step of `frameskip` frames.
    pub fn step(&mut self, action: i32) -> Step {
        let c = self.config;
        self.tick += 1;
        self.log.episode_length += 1.0;
        let mut reward = 0.0f32;
        self.paddle_dir = match action {
            1 => 1.0,
            2 => -1.0,
            _ => 0.0,
        };
        for _ in 0..c.frameskip {
            self.paddle_yr += c.paddle_speed * self.paddle_dir;
            let opponent_delta = (self.ball_y - (self.paddle_yl + c.paddle_height / 2.0))
                .max(-c.paddle_speed)
                .min(c.paddle_speed);
            self.paddle_yl += opponent_delta;
            self.paddle_yr = self.paddle_yr.max(self.min_paddle_y).min(self.max_paddle_y);
            self.paddle_yl = self.paddle_yl.max(self.min_paddle_y).min(self.max_paddle_y);

            self.ball_x += self.ball_vx;
            self.ball_y += self.ball_vy;
            if self.ball_y < 0.0 || self.ball_y + c.ball_height > c.height {
                self.ball_vy = -self.ball_vy;
            }

            if self.ball_x < 0.0 {
                if self.ball_y + c.ball_height > self.paddle_yl
                    && self.ball_y < self.paddle_yl + c.paddle_height
                {
                    self.ball_vx = -self.ball_vx;
                    self.n_bounces += 1;
                } else {
                    self.win = 1;
                    self.score_r += 1;
                    reward = 10.0;
                    self.log.episode_return += 10.0;
                    self.log.score += 1.0;
                    return self.end_round(reward, self.score_r);
                }
            }

            if self.ball_x + c.ball_width > c.width {
                if self.ball_y + c.ball_height > self.paddle_yr
                    && self.ball_y < self.paddle_yr + c.paddle_height
                {
                    self.ball_vx = -self.ball_vx;
                    self.n_bounces += 1;
                    reward = 1.0;
                    self.log.episode_return += 1.0;
                    self.ball_vy += c.ball_speed_y_increment * self.paddle_dir;
                    self.ball_vy = self
                        .ball_vy
                        .max(-c.ball_max_speed_y)
                        .min(c.ball_max_speed_y);
                    // C compares the float with the double 0.01.
                    if (self.ball_vy.abs() as f64) < 0.01 {
                        self.ball_vy = c.ball_speed_y_increment;
                    }
                } else {
                    self.win = 0;
                    self.score_l += 1;
                    return self.end_round(reward, self.score_l);
                }
                self.ball_x = self.ball_x.max(0.0).min(c.width - c.ball_width);
                self.ball_y = self.ball_y.max(0.0).min(c.height - c.ball_height);
            }
            self.compute_observations();
        }
        Step {
            reward,
            terminal: false,
        }
    }

    /// A point was scored, bringing the scorer to `score`: a new game at `max_score`, else a
    /// new round (observations left as they were, as in the reference).
    fn end_round(&mut self, reward: f32, score: u32) -> Step {
        if score == self.config.max_score {
            self.last_episode = self.log;
            self.final_observations = self.observations;
            self.reset();
            Step {
                reward,
                terminal: true,
            }
        } else {
            self.reset_round();
            Step {
                reward,
                terminal: false,
            }
        }
    }
}

/// Step every game with its action, writing `OBS_SIZE` observations per game into `obs`, and
/// the rewards and terminals (0/1). Slices must have matching lengths (checked).
pub fn step_all(
    games: &mut [Pong],
    actions: &[i32],
    obs: &mut [f32],
    rewards: &mut [f32],
    terminals: &mut [u8],
) {
    assert_eq!(games.len(), actions.len());
    assert_eq!(games.len() * OBS_SIZE, obs.len());
    assert_eq!(games.len(), rewards.len());
    assert_eq!(games.len(), terminals.len());
    for (((game, &action), o), (r, t)) in games
        .iter_mut()
        .zip(actions)
        .zip(obs.chunks_exact_mut(OBS_SIZE))
        .zip(rewards.iter_mut().zip(terminals.iter_mut()))
    {
        let s = game.step(action);
        o.copy_from_slice(&game.observations);
        *r = s.reward;
        *t = s.terminal as u8;
    }
}

#[cfg(test)]
mod tests {
    //! L1 properties. Expected values are worked out by hand from pong.h with the default
    //! config (paddles 70 high, ball 32x32, court 500x640, paddle speed 8).
    use super::*;

    const STILL: i32 = 0;
    const UP: i32 = 1;
    const DOWN: i32 = 2;

    fn game() -> Pong {
        let mut g = Pong::new(PongConfig::default(), 1).unwrap();
        g.reset();
        g
    }

    /// The ball far from both sides, level, so only what a test sets up happens.
    fn mid_court() -> Pong {
        let mut g = game();
        g.ball_x = 250.0;
        g.ball_y = 300.0;
        g.ball_vx = 10.0;
        g.ball_vy = 0.0;
        g
    }

    #[test]
    fn reset_serves_from_a_fifth_of_the_court() {
        let g = game();
        // srand(1): the first rand() is 1804289383, odd -> (1 - 1) * 1 = 0: a level serve.
        assert_eq!((g.paddle_yl, g.paddle_yr), (285.0, 285.0));
        assert_eq!(
            (g.ball_x, g.ball_y, g.ball_vx, g.ball_vy),
            (100.0, 304.0, 10.0, 0.0)
        );
        assert_eq!(g.observations, [0.5, 0.5, 0.2, 0.475, 1.0, 0.5, 0.0, 0.0]);
        // srand(42): 71876166 is even -> -1: served downwards.
        let mut g = Pong::new(PongConfig::default(), 42).unwrap();
        g.reset();
        assert_eq!(g.ball_vy, -1.0);
    }

    #[test]
    fn agent_paddle_moves_and_is_clipped_at_both_ends() {
        let mut g = mid_court();
        g.paddle_yr = 100.0;
        g.step(UP);
        assert_eq!(g.paddle_yr, 108.0);
        g.step(DOWN);
        g.step(DOWN);
        assert_eq!(g.paddle_yr, 92.0);
        g.paddle_yr = 600.0;
        g.step(UP);
        assert_eq!(g.paddle_yr, 605.0, "max_paddle_y = 640 - 35");
        g.paddle_yr = -30.0;
        g.step(DOWN);
        assert_eq!(g.paddle_yr, -35.0, "min_paddle_y = -35");
        // Anything but 1 and 2 keeps the paddle still (the reference reads an unsigned int).
        for a in [STILL, 3, -1, i32::MAX] {
            g.paddle_yr = 200.0;
            g.step(a);
            assert_eq!(g.paddle_yr, 200.0, "action {a}");
            assert_eq!(g.paddle_dir, 0.0);
        }
    }

    #[test]
    fn opponent_tracks_the_ball_at_most_paddle_speed() {
        let mut g = mid_court();
        g.paddle_yl = 100.0; // centre 135, ball at 300: far below the ball -> +8
        g.step(STILL);
        assert_eq!(g.paddle_yl, 108.0);
        g.paddle_yl = 262.0; // centre 297, ball 300 -> +3 exactly
        g.step(STILL);
        assert_eq!(g.paddle_yl, 265.0);
        g.paddle_yl = 600.0; // far above -> -8
        g.step(STILL);
        assert_eq!(g.paddle_yl, 592.0);
    }

    #[test]
    fn walls_reverse_the_vertical_speed_without_moving_the_ball_back() {
        let mut g = mid_court();
        g.ball_y = 2.0;
        g.ball_vy = -5.0;
        g.step(STILL);
        assert_eq!((g.ball_y, g.ball_vy), (-3.0, 5.0));
        g.ball_y = 605.0; // 610 + 32 > 640
        g.ball_vy = 5.0;
        g.step(STILL);
        assert_eq!((g.ball_y, g.ball_vy), (610.0, -5.0));
        g.ball_y = 603.0; // 608 + 32 = 640: not beyond the wall
        g.ball_vy = 5.0;
        g.step(STILL);
        assert_eq!(g.ball_vy, 5.0);
    }

    #[test]
    fn opponent_paddle_returns_the_ball_without_clipping_it() {
        let mut g = mid_court();
        g.ball_x = 5.0;
        g.ball_vx = -10.0;
        g.paddle_yl = 300.0; // moves to 292 (ball at 300, centre 335)
        let s = g.step(STILL);
        assert_eq!((g.ball_x, g.ball_vx, g.n_bounces), (-5.0, 10.0, 1));
        assert_eq!(
            s,
            Step {
                reward: 0.0,
                terminal: false
            }
        );
        // Edge: the ball's top (y + 32) must be strictly above the paddle's bottom.
        let mut g = mid_court();
        g.ball_x = 5.0;
        g.ball_vx = -10.0;
        g.ball_y = 100.0;
        g.paddle_yl = 140.0; // centre 175 -> moves -8 to 132 = ball top: a miss
        let s = g.step(STILL);
        assert_eq!(s.reward, 10.0);
        assert_eq!(g.score_r, 1);
    }

    #[test]
    fn agent_paddle_returns_spin_and_clips_the_ball() {
        let mut g = mid_court();
        g.ball_x = 460.0;
        g.ball_y = 300.0;
        g.ball_vy = 2.0;
        g.paddle_yr = 290.0;
        let s = g.step(UP); // paddle 298; ball (470, 302): 502 > 500, on the paddle
        assert_eq!(s.reward, 1.0);
        assert_eq!((g.ball_vx, g.ball_vy), (-10.0, 5.0));
        assert_eq!(
            (g.ball_x, g.ball_y),
            (468.0, 302.0),
            "clipped to width - ball_width"
        );
        assert_eq!(g.log.episode_return, 1.0);
    }

    #[test]
    fn vertical_speed_is_capped_and_never_level_after_a_return() {
        let mut g = mid_court();
        g.ball_x = 460.0;
        g.ball_vy = 12.0; // 12 + 3 -> capped at 13
        g.ball_y = 300.0;
        g.paddle_yr = 290.0;
        g.step(UP);
        assert_eq!(g.ball_vy, 13.0);
        let mut g = mid_court();
        g.ball_x = 460.0;
        g.ball_vy = -12.0;
        g.ball_y = 300.0;
        g.paddle_yr = 320.0;
        g.step(DOWN); // -15 -> -13
        assert_eq!(g.ball_vy, -13.0);
        let mut g = mid_court();
        g.ball_x = 460.0;
        g.ball_vy = 3.0;
        g.ball_y = 300.0;
        g.paddle_yr = 290.0;
        g.step(DOWN); // 3 - 3 = 0: a level ball is replaced by the increment
        assert_eq!(g.ball_vy, 3.0);
    }

    #[test]
    fn a_point_resets_the_round_but_not_the_observation() {
        let mut g = mid_court();
        g.step(STILL);
        let before = g.observations;
        g.ball_x = 465.0; // 475 + 32 > 500 and the paddle far away: the agent loses the point
        g.ball_y = 600.0;
        g.paddle_yr = -35.0;
        let s = g.step(STILL);
        assert_eq!(
            s,
            Step {
                reward: 0.0,
                terminal: false
            }
        );
        assert_eq!(g.score_l, 1);
        assert_eq!((g.ball_x, g.ball_y, g.ball_vx), (100.0, 304.0, 10.0));
        assert_eq!(
            g.observations, before,
            "the reference does not recompute them"
        );
    }

    #[test]
    fn the_game_ends_at_max_score_and_resets_itself() {
        let mut g = mid_court();
        g.score_r = 20;
        g.log.score = 20.0;
        g.ball_x = 5.0;
        g.ball_vx = -10.0;
        g.ball_y = 600.0;
        g.paddle_yl = -35.0;
        let s = g.step(STILL);
        assert_eq!(
            s,
            Step {
                reward: 10.0,
                terminal: true
            }
        );
        assert_eq!((g.score_l, g.score_r), (0, 0));
        assert_eq!(g.last_episode.score, 21.0);
        assert_eq!(g.log, EpisodeLog::default());
        // Recomputed by the reset: a fresh serve.
        assert_eq!(&g.observations[2..4], &[0.2, 0.475]);
        // Scores observe as unsigned integer divisions: 20 / 21 = 0.
        let mut g = mid_court();
        g.score_l = 20;
        g.step(STILL);
        assert_eq!(g.observations[6], 0.0);
    }

    #[test]
    fn frame_skip_keeps_the_last_reward_not_the_sum() {
        let cfg = PongConfig {
            frameskip: 4,
            ..PongConfig::default()
        };
        let mut g = Pong::new(cfg, 1).unwrap();
        g.reset();
        g.ball_x = 450.0;
        g.ball_y = 300.0;
        g.paddle_yr = 290.0;
        // Frame 1: 460; frame 2: 470 -> return (reward 1), clipped to 468; frames 3-4 fly left.
        let s = g.step(STILL);
        assert_eq!(s.reward, 1.0);
        assert_eq!(g.ball_x, 448.0);
        assert_eq!(g.tick, 1);
        assert_eq!(g.paddle_yr, 290.0);
    }

    #[test]
    fn a_saved_game_continues_identically() {
        let mut g = game();
        let mut actions = 12345u32;
        for _ in 0..500 {
            actions = actions.wrapping_mul(1103515245).wrapping_add(12345);
            g.step(((actions >> 16) % 3) as i32);
        }
        let mut copy = g.clone();
        for i in 0..3000 {
            let a = i * 7 % 3;
            assert_eq!(g.step(a), copy.step(a));
        }
        assert_eq!(g, copy);
    }

    #[test]
    fn configurations_the_reference_cannot_run_are_errors() {
        let bad = [
            PongConfig {
                max_score: 0,
                ..Default::default()
            },
            PongConfig {
                frameskip: 0,
                ..Default::default()
            },
            PongConfig {
                width: f32::NAN,
                ..Default::default()
            },
            PongConfig {
                ball_initial_speed_x: 0.0,
                ..Default::default()
            },
        ];
        for c in bad {
            assert!(Pong::new(c, 1).is_err(), "{c:?}");
        }
    }

    #[test]
    fn step_all_writes_every_game() {
        let mut games = vec![game(), game()];
        games[1].paddle_yr = 100.0;
        let mut obs = [0f32; 16];
        let (mut r, mut t) = ([0f32; 2], [0u8; 2]);
        step_all(&mut games, &[UP, DOWN], &mut obs, &mut r, &mut t);
        assert_eq!(obs[1], (293.0 + 35.0) / 640.0);
        assert_eq!(obs[9], (92.0 + 35.0) / 640.0);
    }
}
