"""emurust's Pong (crates/emurust-pong) against PufferLib's C reference, and its Python surface.

The reference is compiled from EMURUST_REFERENCES/puffer-pong (default ../shared/data/references
beside the checkout): without it these oracle tests skip with the reason on a user's machine,
and fail in CI (CI set) or when EMURUST_REFERENCES is set. L1 properties are the cargo tests of
emurust-pong; the 10,000-game rollout runs with EMURUST_LONG=1 (and `emurust verify pong-rollout`).
"""

import ctypes
import ctypes.util

import gymnasium as gym
import numpy as np
import pytest

import emurust  # noqa: F401  (registers emurust/Pong-v0)
from emurust import _core
from emurust.pong import PongVectorEnv
from emurust.verify import references

from conftest import LONG


def _reference_missing():
    p = references.references_dir() / "puffer-pong" / "pong.h"
    return None if p.is_file() else p


@pytest.fixture(scope="module")
def vp():
    missing = _reference_missing()
    if missing is not None:
        msg = f"PufferLib's pong.h not found at {missing}: set EMURUST_REFERENCES to the folder holding puffer-pong/"
        if references.reference_required():
            pytest.fail(msg)
        pytest.skip(msg)
    from emurust.verify import pong

    return pong


def _outputs(n):
    return (np.zeros((n, 8), np.float32), np.zeros(n, np.float32), np.zeros(n, bool), np.zeros(n, bool),
            np.zeros((n, 8), np.float32))


# ---------------------------------------------------------------- the oracle and rand()


def test_serves_follow_glibc_rand():
    """Game i's serves are glibc's rand() after srand(seed): checked against libc itself."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    for seed in (1, 2, 12345, 2**31 + 5, 2**32 - 1):
        libc.srand(ctypes.c_uint(seed))
        expected = [-1.0 if libc.rand() % 2 == 0 else 0.0 for _ in range(30)]
        b = _core.PongBatch(1, max_score=30)
        b.seed([seed])
        obs, rew, term, trunc, fin = _outputs(1)
        b.reset(obs)
        serves = [b.get_state(0)["ball_vy"]]
        while len(serves) < 30:  # an idle agent loses every point; each round reset serves again
            before = b.get_state(0)["score_l"]
            b.step(np.zeros(1, np.int64), obs, rew, term, trunc, fin)
            if b.get_state(0)["score_l"] != before:
                serves.append(b.get_state(0)["ball_vy"])
        assert serves == expected, seed


def test_oracle_struct_mirror_matches(vp):
    from emurust.verify import pong_oracle

    lib = pong_oracle.load()
    assert lib.oracle_sizeof_pong() == ctypes.sizeof(pong_oracle.PongStruct)


# ---------------------------------------------------------------- L2


def test_l2_interactions_identical(vp):
    results = vp.interactions()
    assert len(results) >= 9
    failed = [f"{r.name}: {r.detail}" for r in results if not r.passed]
    assert not failed, failed


@pytest.mark.parametrize("plant", ["paddle_speed", "swap_actions"])
def test_l2_catches_a_planted_divergence(vp, plant):
    results = vp.interactions(plant=plant)
    assert any(not r.passed for r in results)


# ---------------------------------------------------------------- L3


def test_l3_rollouts_identical(vp):
    res = vp.rollout(300 if not LONG else 10_000, seed=0)
    assert res.divergence is None, res.divergence
    assert res.unfinished == 0
    assert res.episodes == (300 if not LONG else 10_000)
    # The policy mix reaches returns and points won, not only idle losses.
    assert res.returns > 1000 and res.wins > 100


@pytest.mark.parametrize("plant", ["paddle_speed", "swap_actions"])
def test_l3_catches_a_planted_divergence(vp, plant, tmp_path):
    res = vp.rollout(8, seed=3, plant=plant)
    d = res.divergence
    assert d is not None and d.step >= 1
    assert d.state_ours != d.state_reference
    from emurust.prompts import render

    text = render("repair", vp.repair_values(res, "emurust verify pong-rollout --episodes 8 --seed 3"))
    assert d.component in text and "crates/emurust-pong/src/lib.rs" in text


def test_l3_config_other_than_default(vp):
    """Frame skip, a short game and other sizes: still identical."""
    res = vp.rollout(40, seed=11, frameskip=4, max_score=5, paddle_speed=6.0, ball_max_speed_y=9.0, width=300.0)
    assert res.divergence is None and res.unfinished == 0


# ---------------------------------------------------------------- L4


def test_l4_transfer_equivalent_and_fails_on_a_plant(vp):
    ok = vp.transfer(20_000, seeds=(1,), episodes=12, margin=5.0, max_steps=1500, trainer="imitation")
    assert ok.equivalent, ok.tost
    # The policy learned something: it returns the ball more than a random policy does.
    assert np.mean(ok.evaluations["1/emurust"].returns) > 25
    bad = vp.transfer(20_000, seeds=(1,), episodes=12, margin=5.0, max_steps=1500, trainer="imitation",
                      plant="swap_actions")
    assert not bad.equivalent, bad.tost


def test_l4_ppo_trained_on_either_backend_is_bit_identical(vp):
    """Same seed, same hyperparameters: PPO on emurust and PPO on the reference end with the
    same weights (truncations included); a planted divergence makes them differ."""
    assert vp.training_identical(2048, seed=3)
    assert not vp.training_identical(2048, seed=3, plant="paddle_speed")


@pytest.mark.skipif(not LONG, reason="PPO training takes minutes (EMURUST_LONG=1)")
def test_l4_transfer_ppo(vp):
    ok = vp.transfer(100_000, seeds=(1,), episodes=16, margin=5.0)
    assert ok.equivalent, ok.tost
    bad = vp.transfer(100_000, seeds=(1,), episodes=16, margin=5.0, plant="swap_actions")
    assert not bad.equivalent, bad.tost


# ---------------------------------------------------------------- the Python surface


def test_vector_env_matches_the_reference_and_reports_final_obs(vp):
    from emurust.verify.pong_oracle import OracleBatch

    n = 6
    env = gym.make_vec("emurust/Pong-v0", num_envs=n, max_score=2)
    assert isinstance(env, PongVectorEnv)
    obs, _ = env.reset(seed=40)
    ref = OracleBatch([40 + i for i in range(n)], max_score=2)
    assert np.array_equal(obs, ref.reset())
    rng = np.random.default_rng(0)
    finals = 0
    for _ in range(600):
        a = rng.integers(0, 3, n)
        obs, rew, term, trunc, info = env.step(a)
        r_obs, r_rew, r_term = ref.step(a)
        assert np.array_equal(obs, r_obs) and np.array_equal(rew, r_rew) and np.array_equal(term, r_term.astype(bool))
        if term.any():
            finals += int(term.sum())
            assert info["_final_obs"].tolist() == term.tolist()
            for i in np.flatnonzero(term):
                assert info["final_obs"][i].shape == (8,)
    assert finals > 0
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    env.close()


def test_results_do_not_depend_on_threads():
    n = 700
    outs = []
    # The gang (default) at 1-5 threads (more threads than this machine's CPUs, blocks of
    # different sizes, claims stolen across blocks), and Rayon's scheduling.
    for threads, scheduler in ((1, "gang"), (2, "gang"), (3, "gang"), (5, "gang"), (2, "rayon"), (3, "rayon")):
        b = _core.PongBatch(n, num_threads=threads, max_score=3, scheduler=scheduler)
        assert b.scheduler == scheduler
        b.seed(list(range(n)))
        obs, rew, term, trunc, fin = _outputs(n)
        b.reset(obs)
        rng = np.random.default_rng(5)
        acc = []
        for _ in range(300):
            b.step(rng.integers(0, 3, n), obs, rew, term, trunc, fin)
            acc.append((obs.copy(), rew.copy(), term.copy()))
        outs.append(acc)
    for other in outs[1:]:
        for x, y in zip(outs[0], other):
            for a, b_ in zip(x, y):
                assert np.array_equal(a, b_)
    assert any(r.any() for _, r, _ in outs[0]) and any(t.any() for _, _, t in outs[0])


def test_single_env_and_truncation():
    env = gym.make("emurust/Pong-v0", max_episode_steps=50)
    obs, _ = env.reset(seed=3)
    assert obs.shape == (8,)
    for t in range(50):
        obs, r, term, trunc, _ = env.step(t % 3)
    assert trunc and not term
    with pytest.raises(RuntimeError):
        gym.make("emurust/Pong-v0").unwrapped.step(0)


def test_sb3_vecenv_same_step_reset():
    from emurust.sb3 import PongVecEnv

    venv = PongVecEnv(4, max_score=1)
    venv.seed(9)
    obs = venv.reset()
    assert obs.shape == (4, 8)
    seen = False
    for _ in range(400):
        obs, rew, done, infos = venv.step(np.zeros(4, np.int64))
        for i in np.flatnonzero(done):
            assert infos[i]["terminal_observation"].shape == (8,)
            assert infos[i]["TimeLimit.truncated"] is False
            seen = True
    assert seen
    assert rew.dtype == np.float32


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="max_score"):
        _core.PongBatch(2, max_score=0)
    with pytest.raises(ValueError, match="num_envs"):
        _core.PongBatch(0)
    with pytest.raises(ValueError, match="finite"):
        _core.PongBatch(1, width=float("nan"))
    env = PongVectorEnv(3)
    env.reset(seed=1)
    with pytest.raises(ValueError, match="actions"):
        env.step(np.array([0, 1, 3]))
    with pytest.raises(ValueError, match="expected 3 actions"):
        env.step(np.array([0, 1]))
    with pytest.raises(ValueError, match="seeds"):
        env.reset(seed=2**32 - 2)  # game 2 would get 2**32
    with pytest.raises(ValueError, match="SAME_STEP"):
        PongVectorEnv(2, autoreset_mode="NextStep")
    with pytest.raises(ValueError, match="scheduler must be one of 'gang', 'rayon' here"):
        _core.PongBatch(2, scheduler="fast")
    b = _core.PongBatch(2)
    with pytest.raises(ValueError, match="obs"):
        b.reset(np.zeros((3, 8), np.float32))
    with pytest.raises(KeyError):
        b.set_state(0, {"nonsense": 1})
    with pytest.raises(IndexError):
        b.get_state(2)


def test_run_steps_equals_stepping_one_call_per_step():
    """The benchmark path (each thread its block through all steps) plays the same games."""
    n, steps = 300, 400
    acts = np.random.default_rng(2).integers(0, 3, (7, n)).astype(np.int32)
    totals, states = [], []
    for threads, scheduler in ((1, "gang"), (2, "gang"), (3, "gang"), (2, "rayon")):
        b = _core.PongBatch(n, num_threads=threads, scheduler=scheduler)
        b.seed(list(range(n)))
        b.reset(np.zeros((n, 8), np.float32))
        totals.append(b.run_steps(acts, steps))
        states.append([b.get_state(i) for i in range(n)])
    ref = _core.PongBatch(n, num_threads=1)
    ref.seed(list(range(n)))
    obs, rew, term, trunc, fin = _outputs(n)
    ref.reset(obs)
    total = 0.0
    for t in range(steps):
        ref.step(acts[t % 7].astype(np.int64), obs, rew, term, trunc, fin)
        total += float(rew.astype(np.float64).sum())
    assert all(t == total for t in totals)
    assert all(s == [ref.get_state(i) for i in range(n)] for s in states)
    with pytest.raises(ValueError, match="shape"):
        ref.run_steps(np.zeros((2, n + 1), np.int32), 1)


def test_run_steps_over_several_rounds_equals_single_round_calls():
    """A call long enough for several rounds (a join and a signal check between them) plays
    the same games as calls of one round each, the action rows continuing across rounds."""
    n, rows, calls, per_call = 64, 7, 20, 7 * 1000
    acts = np.random.default_rng(3).integers(0, 3, (rows, n)).astype(np.int32)
    totals, states = [], []
    for threads, split in ((1, False), (2, False), (2, True)):
        b = _core.PongBatch(n, num_threads=threads, scheduler="rayon")
        b.seed(list(range(n)))
        b.reset(np.zeros((n, 8), np.float32))
        if split:
            totals.append(sum(b.run_steps(acts, per_call) for _ in range(calls)))
        else:
            # 140,000 steps of 64 games: 3 rounds of 1<<22 game steps on one thread (2 on two).
            totals.append(b.run_steps(acts, per_call * calls))
        states.append([b.get_state(i) for i in range(n)])
    assert totals[0] == totals[1] == totals[2] and totals[0] > 0
    assert states[0] == states[1] == states[2]
