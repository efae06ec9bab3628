"""emurust.envs: Gymnasium Env / VectorEnv (registration, spaces, autoreset modes, errors)."""

import pathlib

import numpy as np
import pytest

import gymnasium as gym  # the test extra installs it
from gymnasium.utils.env_checker import check_env  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402

import emurust.envs  # noqa: E402,F401  (registers the ids)
from emurust.envs import GameBoyEnv, GameBoyVectorEnv  # noqa: E402
from emurust.rewards import Condition, Term  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
DODGE = str(ROOT / "games" / "dodge.gb")
SNAKE = str(ROOT / "games" / "snake.gb")
START = [("noop", 10), ("start", 2), ("noop", 12)]
# Episodes that end at different steps per environment: the frame counter (0xC004) passes a
# threshold, and the seeded idle frames make environments reach it at different steps.
ENDS = dict(rom=DODGE, obs="grey_half", frame_skip=8, noop_max=60, reset_script=START,
            reward=[Term(0xC000, "u16le", 1.0, True)], terminate=[Condition(0xC004, "u16le", ">=", 120)],
            max_episode_steps=9)


def test_registered_ids_and_env_checker():
    env = gym.make("emurust/Dodge-v0")
    assert env.observation_space.shape == (1, 72, 80)
    check_env(env.unwrapped)
    env.close()
    env = GameBoyEnv(rom=SNAKE, obs=["grey_half", "ram"], ram=[(0xC000, 16)], frame_skip=4,
                     render_mode="rgb_array")
    check_env(env)
    assert env.render().shape == (144, 160, 3)
    env = gym.make("emurust/GameBoy-v0", rom=DODGE, obs="rgb")
    assert env.observation_space.shape == (144, 160, 3)
    obs, _ = env.reset(seed=1)
    assert obs.shape == (144, 160, 3) and obs.dtype == np.uint8


def test_make_vec_spaces_and_determinism():
    venv = gym.make_vec("emurust/Dodge-v0", num_envs=4)
    assert isinstance(venv.unwrapped, GameBoyVectorEnv)
    assert venv.observation_space.shape == (4, 1, 72, 80)
    assert venv.single_observation_space.shape == (1, 72, 80)
    assert venv.action_space.shape == (4,)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP

    def roll(seed):
        obs, _ = venv.reset(seed=seed)
        seq = [obs]
        rng = np.random.default_rng(0)
        for _ in range(15):
            obs, r, te, tr, info = venv.step(rng.integers(0, 8, 4))
            seq.append(obs)
        return np.array(seq)

    a, b, c = roll(7), roll(7), roll(8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    np.testing.assert_array_equal(roll([7, 8, 9, 10]), a)  # a list gives one seed per environment
    generic = gym.make_vec("emurust/GameBoy-v0", num_envs=2, rom=DODGE, obs="ram", ram=[(0xC000, 8)])
    assert generic.observation_space.shape == (2, 8)
    venv.close()


def _rollout(mode, steps=40, seed=11):
    env = GameBoyVectorEnv(4, autoreset_mode=mode, **ENDS)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(1)
    out = [(obs, None, None, None, {})]
    for _ in range(steps):
        obs, r, te, tr, info = env.step(rng.integers(0, env.single_action_space.n, 4))
        out.append((obs, r, te, tr, info))
        if mode == AutoresetMode.DISABLED and (te | tr).any():
            obs, _ = env.reset(options={"reset_mask": te | tr})
            out.append((obs, "reset", te | tr, None, {}))
    return env, out


def test_next_step_autoreset():
    env, out = _rollout(AutoresetMode.NEXT_STEP)
    ends = 0
    for t in range(1, len(out) - 1):
        obs, r, te, tr, _ = out[t]
        done = te | tr
        nobs, nr, nte, ntr, _ = out[t + 1]
        for i in np.flatnonzero(done):
            ends += 1
            # The step after an end is the reset: reward 0, not done, a fresh first observation.
            assert nr[i] == 0 and not nte[i] and not ntr[i]
            assert not np.array_equal(nobs[i], obs[i])
    assert ends >= 4
    # Both kinds of ends happened.
    assert any(o[2] is not None and o[2].any() for o in out[1:])
    assert any(o[3] is not None and o[3].any() for o in out[1:])


def test_same_step_matches_next_step():
    """Gymnasium's convention: SAME_STEP returns at the end step what NEXT_STEP returns one step
    later (the reset observation), with the terminal observation in info["final_obs"]."""
    _, nxt = _rollout(AutoresetMode.NEXT_STEP)
    env, same = _rollout(AutoresetMode.SAME_STEP)
    # Compare the first end of every environment (after it the step counts drift by one).
    for i in range(4):
        t_n = next(t for t in range(1, len(nxt)) if (nxt[t][2] | nxt[t][3])[i])
        t_s = next(t for t in range(1, len(same)) if (same[t][2] | same[t][3])[i])
        assert t_n == t_s
        obs_s, r_s, te_s, tr_s, info = same[t_s]
        assert info["_final_obs"][i] and info["_final_info"][i]
        np.testing.assert_array_equal(info["final_obs"][i], nxt[t_n][0][i])
        np.testing.assert_array_equal(obs_s[i], nxt[t_n + 1][0][i])
        assert r_s[i] == nxt[t_n][1][i] and te_s[i] == nxt[t_n][2][i] and tr_s[i] == nxt[t_n][3][i]
        for j in range(4):
            if not (te_s | tr_s)[j]:
                assert info["final_obs"][j] is None and not info["_final_obs"][j]
    # Steps without an end carry no final_obs.
    assert any("final_obs" not in s[4] for s in same[1:])


def test_disabled_autoreset_with_reset_mask():
    _, nxt = _rollout(AutoresetMode.NEXT_STEP)
    env, dis = _rollout(AutoresetMode.DISABLED)
    assert env.metadata["autoreset_mode"] == AutoresetMode.DISABLED
    resets = [k for k, s in enumerate(dis) if isinstance(s[1], str)]
    assert resets
    k = resets[0]
    mask = dis[k][2]
    before = dis[k - 1][0]
    after = dis[k][0]
    for i in range(4):
        if mask[i]:
            # The reset observation is the one NEXT_STEP produces after the same end.
            t_n = next(t for t in range(1, len(nxt)) if (nxt[t][2] | nxt[t][3])[i])
            np.testing.assert_array_equal(after[i], nxt[t_n + 1][0][i])
        else:
            np.testing.assert_array_equal(after[i], before[i])
    with pytest.raises(ValueError):
        env.reset(options={"reset_mask": np.zeros(4, dtype=bool)})
    with pytest.raises(TypeError):
        env.reset(options={"reset_mask": [True, False, False, False]})


def test_reward_fn_is_called_once_per_step_with_ram_views():
    calls = []

    def score_delta(ram, prev):
        calls.append(ram.shape)
        s = ram[:, 0].astype(np.int64) | (ram[:, 1].astype(np.int64) << 8)
        p = prev[:, 0].astype(np.int64) | (prev[:, 1].astype(np.int64) << 8)
        return (s - p).astype(float), ram[:, 3] == 1

    kw = dict(rom=DODGE, obs="grey_half", ram=[(0xC000, 4)], frame_skip=24, reset_script=START, noop_max=20)
    fn_env = GameBoyVectorEnv(3, reward_fn=score_delta, **kw)
    spec_env = GameBoyVectorEnv(3, reward=[Term(0xC000, "u16le", 1.0, True)],
                                terminate=[Condition(0xC003, "u8", "==", 1)], **kw)
    fn_env.reset(seed=4)
    spec_env.reset(seed=4)
    total = 0.0
    for _ in range(30):
        a = np.full(3, 1)
        _, r1, t1, _, _ = fn_env.step(a)
        _, r2, t2, _, _ = spec_env.step(a)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(t1, t2)
        total += r1.sum()
    assert total > 0
    assert calls == [(3, 4)] * 30


def test_dict_observations_and_state_api():
    env = GameBoyVectorEnv(2, rom=DODGE, obs=["grey", "ram"], ram=[(0xC000, 16)], frame_skip=8,
                           reset_script=START)
    assert isinstance(env.single_observation_space, gym.spaces.Dict)
    obs, _ = env.reset(seed=0)
    assert obs["grey"].shape == (2, 1, 144, 160) and obs["ram"].shape == (2, 16)
    assert env.observation_space.contains(obs)
    for _ in range(3):
        obs, *_ = env.step(np.array([1, 2]))
    s = env.save_state(0)
    env.load_state(1, s)
    obs, *_ = env.step(np.array([3, 3]))
    np.testing.assert_array_equal(obs["grey"][0], obs["grey"][1])


def test_returned_arrays_are_not_overwritten():
    env = GameBoyVectorEnv(2, rom=DODGE, obs="grey_half", frame_skip=24, reset_script=START)
    obs, _ = env.reset(seed=0)
    kept = [obs]
    for _ in range(5):
        o, r, te, tr, _ = env.step(np.array([5, 6]))
        kept.append(o)
    copies = [k.copy() for k in kept]
    env.step(np.array([0, 0]))
    for k, c in zip(kept, copies):
        np.testing.assert_array_equal(k, c)
    assert not np.array_equal(kept[0], kept[-1])


def test_errors():
    env = GameBoyVectorEnv(2, rom=DODGE, obs="grey_half")
    with pytest.raises(RuntimeError):
        env.step(np.zeros(2, dtype=np.int64))
    env.reset(seed=0)
    with pytest.raises(TypeError):
        env.step(np.zeros(2, dtype=np.float64))
    with pytest.raises(ValueError):
        env.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError):
        env.step(np.array([0, 99]))
    with pytest.raises(ValueError):
        GameBoyVectorEnv(2, rom=DODGE, obs="hsv")
    with pytest.raises(ValueError):
        GameBoyVectorEnv(2, rom=DODGE, reward=[{"addr": 0xC000, "type": "u16", "delta": True}])
    with pytest.raises(ValueError):
        GameBoyVectorEnv(2, rom=DODGE, reward=[{"addr": 0xC000, "kind": "u8"}])
    with pytest.raises(ValueError):
        GameBoyVectorEnv(2, rom=DODGE, terminate=[(0xC003, "u8", "is", 1)])
    with pytest.raises(ValueError):
        GameBoyVectorEnv(2, rom=DODGE, reward_fn=lambda r, p: r[:, 0])  # needs ram=
    with pytest.raises(ValueError):
        GameBoyVectorEnv(2, rom=DODGE, autoreset_mode="sometimes")
    with pytest.raises(ValueError):
        gym.make("emurust/Dodge-v0", obs="nope")
    single = GameBoyEnv(rom=DODGE)
    single.reset(seed=0)
    with pytest.raises(TypeError):
        single.step(1.0)
    with pytest.raises(ValueError):
        single.step(200)


def test_close_frees_the_batch_and_later_calls_raise():
    import sys

    from emurust.envs import GameBoyEnv, GameBoyVectorEnv

    for env in (GameBoyVectorEnv(2, rom=DODGE, frame_skip=2), GameBoyEnv(rom=DODGE, frame_skip=2)):
        env.reset(seed=0)
        b = env.batch
        env.close()
        assert sys.getrefcount(b) == 2  # nothing but `b` refers to the batch any more
        with pytest.raises(RuntimeError, match="closed"):
            env.reset(seed=0)
        env.close()


def test_reset_mask_option_checks():
    from emurust.envs import reset_mask_option

    assert reset_mask_option(None, 3, True) is None
    assert reset_mask_option({}, 3, False) is None
    m = np.array([True, False, True])
    assert reset_mask_option({"reset_mask": m}, 3, False) is m
    with pytest.raises(ValueError, match="unknown reset options"):
        reset_mask_option({"reset_mask": m, "seed": 1}, 3, False)
    with pytest.raises(TypeError, match="numpy array, got list"):
        reset_mask_option({"reset_mask": [True, False, True]}, 3, False)
    with pytest.raises(ValueError, match=r"shape \(3,\), got int64 \(3,\)"):
        reset_mask_option({"reset_mask": np.ones(3, np.int64)}, 3, False)
    with pytest.raises(ValueError, match="shape"):
        reset_mask_option({"reset_mask": np.ones(4, bool)}, 3, False)
    with pytest.raises(ValueError, match="at least one True"):
        reset_mask_option({"reset_mask": np.zeros(3, bool)}, 3, False)
    with pytest.raises(RuntimeError, match="without a mask first"):
        reset_mask_option({"reset_mask": m}, 3, True)


def _fused_and_two_call(make, steps=60):
    """Run the same seeded rollout on a wrapper with the same-step reset fused into the step
    (the default) and with it done by a second call; yield both results step by step."""
    fused, split = make(True), make(False)
    assert fused.driver.same_step_reset and not split.driver.same_step_reset
    rng = np.random.default_rng(5)
    for t in range(steps):
        acts = rng.integers(0, fused.driver.batch.num_actions, fused.num_envs)
        yield t, fused.step(acts), split.step(acts)


def _assert_obs_equal(a, b, what):
    if isinstance(a, dict):
        assert a.keys() == b.keys(), what
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=f"{what} [{k}]")
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


@pytest.mark.parametrize("obs", ["grey_half", ["grey", "ram"]])
def test_same_step_reset_in_one_pass_equals_step_then_reset(obs):
    """GameBoyVectorEnv's same-step autoreset resets ended environments in the step's own
    parallel pass: observations, rewards, end flags and final observations are those of a step
    followed by a reset of the ended environments."""
    kw = dict(ENDS, obs=obs, ram=[(0xC000, 16)] if "ram" in obs else ())

    def make(fused):
        env = GameBoyVectorEnv(4, autoreset_mode=AutoresetMode.SAME_STEP, same_step_reset=fused, num_threads=2,
                               **kw)
        env.reset(seed=3)
        return env

    ends = 0
    for t, (o1, r1, te1, tr1, i1), (o2, r2, te2, tr2, i2) in _fused_and_two_call(make):
        _assert_obs_equal(o1, o2, f"step {t}")
        for a, b in ((r1, r2), (te1, te2), (tr1, tr2)):
            np.testing.assert_array_equal(a, b)
        assert i1.keys() == i2.keys()
        if "final_obs" in i1:
            np.testing.assert_array_equal(i1["_final_obs"], i2["_final_obs"])
            for i in np.flatnonzero(i1["_final_obs"]):
                ends += 1
                _assert_obs_equal(i1["final_obs"][i], i2["final_obs"][i], f"step {t} env {i}")
    assert ends >= 8


def test_sb3_vec_env_same_step_reset_in_one_pass():
    """EmurustVecEnv (SB3) gets its ended environments reset in the step's pass; the terminal
    observations and TimeLimit.truncated flags are those of the two-call path. The batch has
    final_* buffers only in that mode. A Python reward_fn (which reads each step's RAM) keeps
    the two-call path."""
    from emurust.sb3 import EmurustVecEnv

    def make(fused):
        venv = EmurustVecEnv(4, same_step_reset=fused, num_threads=2, **ENDS)
        venv.seed(9)
        venv.reset()
        return venv

    ends = 0
    for t, (o1, r1, d1, i1), (o2, r2, d2, i2) in _fused_and_two_call(make):
        np.testing.assert_array_equal(o1, o2, err_msg=f"step {t}")
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(d1, d2)
        for i in range(4):
            assert i1[i].keys() == i2[i].keys()
            if "terminal_observation" in i1[i]:
                ends += 1
                np.testing.assert_array_equal(i1[i]["terminal_observation"], i2[i]["terminal_observation"])
                assert i1[i]["TimeLimit.truncated"] == i2[i]["TimeLimit.truncated"]
    assert ends >= 8
    assert "final_grey_half" in make(True).batch.buffers and "final_ram" in make(True).batch.buffers
    assert not any(k.startswith("final_") for k in make(False).batch.buffers)
    with_fn = EmurustVecEnv(2, reward_fn=lambda ram, prev: ram[:, 0] * 0.0, ram=[(0xC000, 4)], **ENDS)
    assert not with_fn.driver.same_step_reset


def test_features_observation_of_dodge():
    """obs="features": Dodge's 45 RAM features (emurust.games.dodge_features), as `emurust
    train` trains on, from every environment class; with other observations, with a user's own
    RAM ranges, at the end of episodes; refused for games without features."""
    from emurust.games import RAM_BLOCK, dodge_features
    from emurust.sb3 import EmurustVecEnv

    env = gym.make("emurust/Dodge-v0", obs="features")
    assert env.observation_space == gym.spaces.Box(-np.inf, np.inf, (45,), np.float32)
    check_env(env.unwrapped)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (45,) and obs.dtype == np.float32

    # The features beside a user's own RAM range (and a reward_fn that sees only that range),
    # against a twin that observes the raw block and computes them itself.
    seen = []

    def reward_fn(ram, prev):
        seen.append(ram.shape)
        return np.zeros(len(ram))

    kw = dict(num_envs=3, max_episode_steps=40, noop_max=30)
    both = gym.make_vec("emurust/Dodge-v0", obs=["features", "ram"], ram=[(0xC002, 1)], reward_fn=reward_fn, **kw)
    raw = gym.make_vec("emurust/Dodge-v0", obs="ram", ram=[RAM_BLOCK], **kw)
    assert both.single_observation_space["ram"].shape == (1,)
    o1, _ = both.reset(seed=4)
    o2, _ = raw.reset(seed=4)
    rng = np.random.default_rng(1)
    for _ in range(60):
        np.testing.assert_array_equal(o1["features"], dodge_features(o2))
        np.testing.assert_array_equal(o1["ram"][:, 0], o2[:, 2])  # lives
        a = rng.integers(0, 8, 3)
        o1, *_ = both.step(a)
        o2, *_ = raw.step(a)
    assert set(seen) == {(3, 1)}

    # SB3: the terminal observations are the features of the last RAM of each episode.
    feats = EmurustVecEnv(2, game="dodge", obs="features", max_episode_steps=25)
    block = EmurustVecEnv(2, game="dodge", obs="ram", ram=[RAM_BLOCK], max_episode_steps=25)
    for v in (feats, block):
        v.seed(7)
    f, b = feats.reset(), block.reset()
    ends = 0
    for _ in range(60):
        np.testing.assert_array_equal(f, dodge_features(b))
        a = rng.integers(0, 8, 2)
        f, _, done, fi = feats.step(a)
        b, _, _, bi = block.step(a)
        for i in np.flatnonzero(done):
            ends += 1
            np.testing.assert_array_equal(fi[i]["terminal_observation"],
                                          dodge_features(bi[i]["terminal_observation"][None])[0])
    assert ends >= 4

    with pytest.raises(ValueError, match="obs='features' is defined for the games \\['dodge'\\] only, not 'snake'"):
        gym.make("emurust/Snake-v0", obs="features")
    with pytest.raises(ValueError, match="pass game="):
        GameBoyEnv(rom=DODGE, obs="features")
