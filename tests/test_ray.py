"""emurust.ray on a local Ray (2 CPUs, started once for this module): identical results across
actor counts (SB3 and Gymnasium), killed actors restored (from checkpoints or by reset),
deadlines instead of hangs, and one RLlib PPO iteration on emurust batches."""

import pathlib
import time

import numpy as np
import pytest

import ray  # the test extra installs ray[default,rllib]

from emurust.envs import GameBoyVectorEnv
from emurust.ray import (
    REPLAYED,
    RESTARTED,
    RESTORED_FROM,
    RayEnvError,
    RayEnvTimeoutError,
    RayVecEnv,
    RayVectorEnv,
    register_rllib_env,
    rllib_ppo_config,
)
from emurust.rewards import Condition, Term
from emurust.sb3 import EmurustVecEnv

# Ray workers keep PyTorch from loading Triton, as the test process does (see emurust._triton).
WORKER_ENV = {"worker_process_setup_hook": "emurust._triton.keep_triton_unloaded"}

ROOT = pathlib.Path(__file__).resolve().parent.parent
DODGE = str(ROOT / "games" / "dodge.gb")
START = [("noop", 10), ("start", 2), ("noop", 12)]
# Short episodes that end both ways (terminated when the ship's x <= 70, i.e. it went left;
# truncated after 7 steps), and
# seeded idle frames at every reset: every step of a comparison exercises resets and seeds.
KW = dict(rom=DODGE, obs="grey_half", frame_skip=8, press_frames=6, noop_max=40, reset_script=START,
          reward=[Term(0xC000, "u16le", 1.0, True)], terminate=[Condition(0xC006, "u8", "<=", 70)],
          max_episode_steps=7)


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False, runtime_env=WORKER_ENV)
    yield
    ray.shutdown()


def _actions(steps, n, seed=0):
    return np.random.default_rng(seed).integers(0, 8, size=(steps, n))


def _sb3_run(venv, actions):
    venv.seed(11)
    out = [(venv.reset(), None, None, None)]
    for a in actions:
        out.append(venv.step(a))
    return out


def test_sb3_identical_to_local_batch_across_actor_counts():
    acts = _actions(24, 4)
    local = _sb3_run(EmurustVecEnv(4, **KW), acts)
    runs = []
    for make in (lambda: RayVecEnv(1, 4, 1, **KW), lambda: RayVecEnv(2, 2, 1, **KW),
                 lambda: RayVecEnv(envs_per_actor=[1, 3], **KW)):
        venv = make()  # one at a time: the test Ray has 2 CPUs, each actor takes one
        try:
            runs.append(_sb3_run(venv, acts))
        finally:
            venv.close()
    ends = {"terminated": 0, "truncated": 0}
    for t, ref in enumerate(local):
        for run in runs:
            got = run[t]
            assert np.array_equal(got[0], ref[0]), f"obs differ at step {t}"
            if t == 0:
                continue
            assert got[1].dtype == np.float32 and np.array_equal(got[1], ref[1]), t
            assert np.array_equal(got[2], ref[2]), t
            for gi, ri in zip(got[3], ref[3]):
                assert gi.keys() == ri.keys()
                if "terminal_observation" in ri:
                    assert np.array_equal(gi["terminal_observation"], ri["terminal_observation"])
                    assert gi["TimeLimit.truncated"] == ri["TimeLimit.truncated"]
        if t:
            for ri in ref[3]:
                if "terminal_observation" in ri:
                    ends["truncated" if ri["TimeLimit.truncated"] else "terminated"] += 1
    assert ends["terminated"] > 0 and ends["truncated"] > 0, ends  # both kinds of episode end compared


def _eq(x, y):
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x)
    return np.array_equal(x, y)


@pytest.mark.parametrize("mode,obs", [("NextStep", "grey_half"), ("SameStep", ["grey_half", "ram"])])
def test_gymnasium_identical_to_local_batch(mode, obs):
    acts = _actions(20, 4, seed=1)
    kw = dict(KW, obs=obs, ram=[(0xC000, 8)])
    local = GameBoyVectorEnv(4, autoreset_mode=mode, **kw)
    remote = RayVectorEnv(envs_per_actor=[3, 1], autoreset_mode=mode, **kw)
    try:
        assert remote.single_observation_space == local.single_observation_space
        o1, _ = local.reset(seed=5)
        o2, _ = remote.reset(seed=5)
        assert _eq(o1, o2)
        dones = 0
        for a in acts:
            r1 = local.step(a)
            r2 = remote.step(a)
            for x, y in zip(r1[:4], r2[:4]):
                assert _eq(x, y)
            assert r1[4].keys() == r2[4].keys()
            if "final_obs" in r1[4]:
                assert np.array_equal(r1[4]["_final_obs"], r2[4]["_final_obs"])
                for i in np.flatnonzero(r1[4]["_final_obs"]):
                    assert _eq(r1[4]["final_obs"][i], r2[4]["final_obs"][i])
            dones += int((r1[2] | r1[3]).sum())
        assert dones > 0
        # Bad reset options are refused alike (one shared check, envs.reset_mask_option).
        for bad, exc in (({"reset_mask": np.zeros(4, bool)}, ValueError), ({"reset_mask": [True] * 4}, TypeError),
                         ({"reset_mask": np.ones(3, bool)}, ValueError), ({"mask": None}, ValueError)):
            errors = []
            for env in (local, remote):
                with pytest.raises(exc) as e:
                    env.reset(options=bad)
                errors.append(str(e.value))
            assert errors[0] == errors[1]
        # A masked reset with a seed reseeds only the masked environments.
        mask = np.array([False, True, True, True])
        o1, _ = local.reset(seed=9, options={"reset_mask": mask})
        o2, _ = remote.reset(seed=9, options={"reset_mask": mask})
        assert _eq(o1, o2)
        for a in acts[:6]:
            assert _eq(local.step(a)[0], remote.step(a)[0])
    finally:
        remote.close()


def _kill(venv, k):
    """Kill actor k and wait until Ray reports it dead (ray.kill itself does not wait)."""
    actor = venv.group.actors[k]
    ray.kill(actor, no_restart=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            ray.get(actor.describe.remote(), timeout=5)
        except ray.exceptions.RayActorError:
            return
        time.sleep(0.05)
    raise AssertionError(f"actor {k} still answers after ray.kill")


def test_killed_actor_is_restored_from_checkpoint_and_replayed():
    # No idle frames and no step limit: a save state plus the replayed actions give back
    # exactly the environments that were lost, so the run matches the local batch. Environment
    # 3's episode ends at step 5 (t=4): the replay includes a same-step reset.
    kw = dict(KW, noop_max=0, max_episode_steps=None)
    acts = _actions(12, 4, seed=2)
    local = EmurustVecEnv(4, **kw)
    remote = RayVecEnv(2, 2, 1, checkpoint_every=3, **kw)
    try:
        local.seed(1)
        remote.seed(1)
        assert np.array_equal(local.reset(), remote.reset())
        for t, a in enumerate(acts):
            if t == 5:  # steps 1-5 done, checkpoint after step 3: steps 4 and 5 are replayed
                _kill(remote, 1)
            o1, r1, d1, i1 = local.step(a)
            o2, r2, d2, i2 = remote.step(a)
            assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2), t
            if t == 4:
                assert d1[3]
            if t == 5:
                assert [i.get(RESTARTED, False) for i in i2] == [False, False, True, True]
                assert i2[2][RESTORED_FROM] == "checkpoint" and i2[3][REPLAYED] == 2
            else:
                assert not any(RESTARTED in i for i in i2)
        assert remote.actor_restarts == [0, 1]
    finally:
        remote.close()


def test_killed_actor_without_checkpoint_ends_its_episodes_as_truncated():
    acts = _actions(8, 4, seed=3)
    kw = dict(KW, max_episode_steps=None, terminate=[])
    remote = RayVecEnv(2, 2, 1, checkpoint_every=0, **kw)
    local = EmurustVecEnv(4, **kw)  # actor 0's environments are not disturbed
    try:
        remote.seed(4)
        local.seed(4)
        remote.reset()
        local.reset()
        last = None
        for t, a in enumerate(acts):
            if t == 3:
                _kill(remote, 0)
            o2, r2, d2, i2 = remote.step(a)
            o1, r1, d1, _ = local.step(a)
            if t == 3:
                assert d2.tolist() == [True, True, False, False]
                for i in (0, 1):
                    assert i2[i]["TimeLimit.truncated"] is True and i2[i][RESTORED_FROM] == "reset"
                    assert np.array_equal(i2[i]["terminal_observation"], last[i])  # the last obs seen
                    assert r2[i] == 0
                assert np.array_equal(o2[2:], o1[2:]) and np.array_equal(r2[2:], r1[2:])
            else:
                assert not d2.any()
                assert np.array_equal(o2[2:], o1[2:])
            last = o2
    finally:
        remote.close()


def test_gymnasium_killed_actor_next_step_reset():
    kw = dict(KW, max_episode_steps=None, terminate=[])
    remote = RayVectorEnv(2, 2, 1, checkpoint_every=0, **kw)
    try:
        obs, _ = remote.reset(seed=0)
        a = np.zeros(4, dtype=np.int64)
        obs, *_ = remote.step(a)
        _kill(remote, 1)
        o, r, term, trunc, info = remote.step(a)
        assert trunc.tolist() == [False, False, True, True] and not term.any()
        assert info[RESTARTED].tolist() == [False, False, True, True]
        assert np.array_equal(o[2:], obs[2:])  # NEXT_STEP: the final obs is the last one seen
        o, r, term, trunc, info = remote.step(a)  # ... and this step resets them
        assert not trunc.any() and RESTARTED not in info and (r[2:] == 0).all()
    finally:
        remote.close()


def test_restarts_are_bounded():
    remote = RayVecEnv(1, 1, 1, max_restarts=0, **KW)
    try:
        remote.reset()
        _kill(remote, 0)
        with pytest.raises(RayEnvError, match="already restarted 0 time"):
            remote.step(np.zeros(1, dtype=np.int64))
    finally:
        remote.close()


def test_bad_arguments_raise_on_the_driver():
    with pytest.raises(ValueError, match="obs"):
        RayVecEnv(1, 1, rom=DODGE, obs="no-such-observation")
    with pytest.raises(ValueError, match="at least one environment"):
        RayVecEnv(envs_per_actor=[2, 0], rom=DODGE)


def test_busy_or_unschedulable_actor_raises_timeout_not_hang():
    t = time.monotonic()
    with pytest.raises(RayEnvTimeoutError, match="did not answer start within 3 s.*3 CPU"):
        RayVecEnv(1, 1, threads_per_actor=3, start_timeout=3, **KW)  # 3 CPUs on a 2-CPU Ray
    remote = RayVecEnv(1, 1, 1, step_timeout=0.5, **KW)
    try:
        remote.reset()
        # Keep the actor busy (its calls run one at a time), as a lost node would: far more steps
        # than any machine runs in the timeout (3,000 took under 0.5 s once the core got faster),
        # so the test does not depend on the emulator's speed; close() kills the actor mid-replay.
        # One tuple repeated: pickled once, so the call's payload stays small.
        busy = [(np.zeros(1, np.int64), None, True)] * 1_000_000
        remote.group.actors[0].replay.remote(busy)
        with pytest.raises(RayEnvTimeoutError, match=r"actor 0 \(environments 0-0, node \w+\) did not answer step within 0.5 s"):
            remote.step(np.zeros(1, dtype=np.int64))
    finally:
        remote.close()
    assert time.monotonic() - t < 30


def test_rllib_ppo_trains_one_iteration_on_emurust_batches():
    name = register_rllib_env("emurust-test-dodge", game="dodge", obs="ram", ram=[(0xC000, 64)], max_episode_steps=8)
    config = (
        rllib_ppo_config(name, num_env_runners=1, envs_per_runner=4, threads_per_runner=1)
        .training(train_batch_size_per_learner=64, minibatch_size=32, num_epochs=1)
        .rl_module(model_config={"fcnet_hiddens": [16]})
        .env_runners(sample_timeout_s=60)
    )
    algo = config.build_algo()
    try:
        kinds = algo.env_runner_group.foreach_env_runner(
            lambda r: (type(r.env.unwrapped).__name__, r.env.unwrapped.num_envs, r.env.unwrapped.batch.num_threads),
            local_env_runner=False,
        )
        assert kinds == [("GameBoyVectorEnv", 4, 1)]
        result = algo.train()
        runners = result["env_runners"]
        assert runners["num_env_steps_sampled"] >= 64
        assert runners["num_episodes"] > 0  # 8-step episodes: several ended and were reported
        assert "learners" in result and result["training_iteration"] == 1
    finally:
        algo.stop()


def test_rllib_creator_gives_one_batch_with_float_channel_last_images():
    from emurust.ray import _rllib_creator

    kw = dict(KW, obs="grey_half")
    create = _rllib_creator(kw)
    venv = create({"num_envs": 3, "num_threads": 1})  # what RLlib's vector_entry_point asks for
    assert type(venv.unwrapped).__name__ == "GameBoyVectorEnv" and venv.unwrapped.num_envs == 3
    assert venv.single_observation_space.shape == (72, 80, 1)
    assert venv.single_observation_space.dtype == np.float32
    plain = GameBoyVectorEnv(3, **kw)
    o, _ = venv.reset(seed=2)
    p, _ = plain.reset(seed=2)
    assert o.dtype == np.float32 and o.shape == (3, 72, 80, 1) and o.max() <= 1.0
    assert np.array_equal(o, np.moveaxis(p, 1, -1).astype(np.float32) * np.float32(1 / 255))
    single = create({})  # RLlib's SYNC/ASYNC vectorisation asks for single environments
    assert single.observation_space.shape == (72, 80, 1)
    raw = create({"num_envs": 2, "scale_obs": False})
    assert raw.single_observation_space.shape == (1, 72, 80) and raw.single_observation_space.dtype == np.uint8


def test_workers_keep_triton_unloaded():
    """The setup hook ran in the workers: Triton is marked absent there before any task runs."""

    @ray.remote
    def triton_marked_absent():
        import sys

        return sys.modules.get("triton", "unset") is None

    assert ray.get(triton_marked_absent.remote(), timeout=60)


def test_rllib_benchmark_grey_half_for_pyboy_equals_emurusts():
    """benches/rllib_throughput.py gives PyBoy's environments emurust's ``grey_half`` observation,
    computed from the grey screen: byte for byte what emurust returns for the same screen."""
    import sys

    sys.path.insert(0, str(ROOT / "benches"))
    import rllib_throughput as rb

    venv = GameBoyVectorEnv(2, **dict(KW, obs=["grey", "grey_half"], max_episode_steps=100))
    obs, _ = venv.reset(seed=3)
    for a in ([2, 5], [7, 1], [0, 6], [3, 4], [6, 2]):
        obs, *_ = venv.step(np.array(a))
    for i in range(2):
        assert len(np.unique(obs["grey"][i])) >= 3  # a screen with several shades, not a blank one
        half = rb.grey_half(obs["grey"][i])
        assert half.shape == (1, 72, 80) and half.dtype == np.uint8
        assert np.array_equal(half, obs["grey_half"][i])
    venv.close()
