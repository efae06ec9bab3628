"""emurust.sb3: the Stable-Baselines3 VecEnv, and a tiny PPO run end to end."""

import json
import pathlib

import numpy as np
import pytest

from stable_baselines3.common.vec_env import VecFrameStack, VecMonitor  # the test extra installs SB3

from emurust.rewards import Condition, Term
from emurust.sb3 import EmurustVecEnv

ROOT = pathlib.Path(__file__).resolve().parent.parent
DODGE = str(ROOT / "games" / "dodge.gb")
START = [("noop", 10), ("start", 2), ("noop", 12)]


def make(n=3, **kw):
    args = dict(rom=DODGE, obs="grey_half", frame_skip=8, noop_max=60, reset_script=START,
                reward=[Term(0xC000, "u16le", 1.0, True)], terminate=[Condition(0xC004, "u16le", ">=", 120)],
                max_episode_steps=9)
    args.update(kw)
    return EmurustVecEnv(n, **args)


def test_same_step_reset_terminal_observation_and_truncation_flags():
    venv = make()
    venv.seed(3)
    obs = venv.reset()
    assert obs.shape == (3, 1, 72, 80) and obs.dtype == np.uint8
    seen_term = seen_trunc = False
    prev = obs
    for _ in range(30):
        obs, rew, done, infos = venv.step(np.array([1, 2, 5]))
        assert rew.dtype == np.float32 and done.dtype == bool and len(infos) == 3
        for i in range(3):
            if done[i]:
                term = infos[i]["terminal_observation"]
                assert term.shape == (1, 72, 80)
                assert not np.array_equal(term, obs[i])  # obs[i] is already the next episode's
                if infos[i]["TimeLimit.truncated"]:
                    seen_trunc = True
                else:
                    seen_term = True
            else:
                assert "terminal_observation" not in infos[i]
        prev = obs
    assert seen_term and seen_trunc
    assert prev is obs


def test_returned_arrays_are_never_overwritten_later():
    venv = make(2)
    venv.seed(0)
    kept = [venv.reset()]
    terms = []
    for _ in range(20):
        obs, rew, done, infos = venv.step(np.array([3, 4]))
        kept.append(obs)
        terms += [info["terminal_observation"] for info in infos if "terminal_observation" in info]
    snap = [k.copy() for k in kept] + [t.copy() for t in terms]
    for _ in range(5):
        venv.step(np.array([0, 0]))
    for k, c in zip(kept + terms, snap):
        np.testing.assert_array_equal(k, c)


def test_under_vecmonitor_and_vecframestack():
    venv = VecFrameStack(VecMonitor(make(4)), 4)
    venv.seed(1)
    obs = venv.reset()
    assert obs.shape == (4, 4, 72, 80)
    episodes = []
    for _ in range(40):
        obs, rew, done, infos = venv.step(np.random.default_rng(0).integers(0, 8, 4))
        assert obs.shape == (4, 4, 72, 80)
        for i, info in enumerate(infos):
            if "episode" in info:
                episodes.append(info["episode"])
                assert info["terminal_observation"].shape == (4, 72, 80)
                # The stack restarts at a reset: only the newest frame is non-zero.
                assert not obs[i, :3].any()
    assert len(episodes) >= 4
    assert all(e["l"] <= 9 for e in episodes)


def test_seeding_is_reproducible():
    def run(seed):
        venv = make(3)
        venv.seed(seed)
        out = [venv.reset()]
        for _ in range(12):
            out.append(venv.step(np.array([1, 1, 1]))[0])
        return np.array(out)

    np.testing.assert_array_equal(run(5), run(5))
    assert not np.array_equal(run(5), run(6))


def test_tiny_ppo_end_to_end(tmp_path):
    from emurust.train import main

    assert main(["--steps", "256", "--envs", "4", "--n-steps", "32", "--batch-size", "64", "--epochs", "1",
                 "--no-progress", "--logdir", str(tmp_path), "--seed", "0", "--eval-episodes", "2"]) == 0
    (logdir,) = tmp_path.iterdir()
    assert list(logdir.glob("events.out.tfevents.*")), "no TensorBoard log"
    saved = json.loads((logdir / "curve.json").read_text())
    assert saved["steps"] == 256 and saved["game"] == "dodge"
    assert saved["seconds"] > 0


def test_get_attr_set_attr_env_method_honour_indices():
    venv = make(3)
    venv.seed(0)
    venv.reset()
    venv.set_attr("tag", "x", indices=[0, 2])
    venv.set_attr("tag", "y", indices=1)
    assert venv.get_attr("tag") == ["x", "y", "x"]
    assert venv.get_attr("tag", indices=[2, 1]) == ["x", "y"]
    assert not hasattr(venv, "tag")  # set on the environments, not on the VecEnv
    assert venv.get_attr("render_mode", indices=[1]) == [None]
    assert venv.get_attr("action_space", indices=0) == [venv.action_space]
    with pytest.raises(AttributeError):
        venv.get_attr("no_such_attribute")
    with pytest.raises(IndexError):
        venv.get_attr("tag", indices=[3])
    with pytest.raises(AttributeError):
        venv.set_attr("save_state", None)

    for _ in range(3):
        venv.step(np.array([1, 2, 3]))
    s0, s2 = venv.env_method("save_state", indices=[0, 2])
    assert s0 == venv.batch.save_state(0) and s2 == venv.batch.save_state(2) and s0 != s2
    # load env 0's state into env 1 only
    venv.env_method("load_state", s0, indices=[1])
    assert venv.batch.save_state(1) == s0 and venv.batch.save_state(2) == s2
    # start states per index
    venv.env_method("set_start_state", s2, indices=1)
    assert venv.env_method("start_state", indices=[1]) == [s2]
    assert venv.env_method("start_state", indices=[0])[0] != s2
    with pytest.raises(AttributeError):
        venv.env_method("no_such_method")


def test_set_options_is_used_at_the_next_reset_only():
    venv = make(2, noop_max=0, reset_script=[("noop", 1)])
    venv.seed(0)
    plain = venv.reset()
    for _ in range(6):
        venv.step(np.array([7, 7]))
    state = venv.env_method("save_state", indices=[1])[0]
    obs_then = venv.driver.obs_of(1)
    venv.set_options([{}, {"start_state": state}])
    obs = venv.reset()
    np.testing.assert_array_equal(obs[0], plain[0])  # env 0: its usual start
    assert not np.array_equal(obs[1], plain[1])  # env 1: from the given state, one frame later
    assert venv.env_method("start_state", indices=[1])[0] != state  # kept for that reset only
    obs = venv.reset()  # options were consumed
    np.testing.assert_array_equal(obs, plain)
    assert obs_then.shape == plain[1].shape
    with pytest.raises(ValueError):
        venv.set_options({"no_such_option": 1})


def test_close_frees_the_batch():
    import sys

    venv = make(2)
    venv.reset()
    b = venv.batch
    venv.close()
    assert sys.getrefcount(b) == 2  # only `b` (and the call's argument) refer to the batch now
    for call in (venv.reset, lambda: venv.step(np.array([0, 0])), venv.get_images,
                 lambda: venv.env_method("save_state")):
        with pytest.raises(RuntimeError, match="closed"):
            call()
    venv.close()  # twice is fine
