"""emurust.pokered_v2 against PokemonRedExperiments v2's own RedGymEnv on PyBoy.

The oracle is v2's Python env, imported at test time from its folder (never copied):
EMURUST_POKERED_V2_DIR (default ../shared/data/clients/PokemonRedExperiments-v2 beside the checkout), with the
ROM from EMURUST_POKERED_ROM. Both envs start from the same init state and get the same
actions; every observation key (dtype and values), reward and truncation must be equal at every
step, across resets. Without the ROM or v2's folder these tests skip with the reason; the
encoders and reward arithmetic are also covered without them (the Rust unit tests in
crates/emurust-py/src/batch/pokered_v2.rs on hand-built RAM, and the tests at the end here).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from emurust import pokered_v2

V2_DIR = Path(os.environ.get("EMURUST_POKERED_V2_DIR") or Path(__file__).resolve().parents[2] / "shared" / "data" / "clients" / "PokemonRedExperiments-v2")
ROM = os.environ.get("EMURUST_POKERED_ROM", "")


def _need_v2() -> None:
    if not ROM or not Path(ROM).is_file():
        pytest.skip("EMURUST_POKERED_ROM is unset or not a file: Pokémon Red is not distributed; build it from pret/pokered")
    if not (V2_DIR / "red_gym_env_v2.py").is_file():
        pytest.skip(f"PokemonRedExperiments v2 not found in {V2_DIR} (set EMURUST_POKERED_V2_DIR)")
    for mod in ("skimage", "mediapy", "einops", "pyboy"):
        pytest.importorskip(mod, reason=f"v2's env needs {mod} (pip install 'emurust[test]')")


def _config(tmp_path: Path, **over):
    cfg = {
        "headless": True, "save_final_state": False, "early_stop": False, "action_freq": 24,
        "init_state": str(V2_DIR / "init.state"), "max_steps": 2048 * 80, "print_rewards": False,
        "save_video": False, "fast_video": True, "session_path": tmp_path / "session", "gb_path": ROM,
        "debug": False, "reward_scale": 0.5, "explore_weight": 0.25,
        "map_data_path": str(V2_DIR / "map_data.json"), "events_path": str(V2_DIR / "events.json"),
    }  # fmt: skip
    cfg.update(over)
    return cfg


@pytest.fixture
def v2_env_class(monkeypatch):
    _need_v2()
    # v2 opens events.json from the working directory and imports global_map from its folder.
    monkeypatch.chdir(V2_DIR)
    monkeypatch.syspath_prepend(str(V2_DIR))
    for m in ("red_gym_env_v2", "global_map"):
        sys.modules.pop(m, None)
    mod = importlib.import_module("red_gym_env_v2")
    yield mod.RedGymEnv
    for m in ("red_gym_env_v2", "global_map"):
        sys.modules.pop(m, None)


def _assert_obs_equal(ours: dict, i: int, theirs: dict, where: str) -> None:
    assert set(theirs) == set(ours), where
    for k, v in theirs.items():
        v = np.asarray(v)
        o = ours[k][i]
        assert o.dtype == v.dtype, f"{where}: {k} dtype {o.dtype} != v2's {v.dtype}"
        if not np.array_equal(o, v):
            bad = np.argwhere(o != v)[:5]
            raise AssertionError(f"{where}: {k} differs at {bad.tolist()}: ours {o[tuple(bad[0])]} v2 {v[tuple(bad[0])]}")


@pytest.mark.parametrize(
    "state,backend",
    [
        ("init.state", "pyboy"),
        ("has_pokedex.state", "pyboy"),
        ("has_pokedex.state", "emurust"),
    ],
)
def test_step_by_step_equal_to_v2(v2_env_class, tmp_path, state, backend):
    """3 environments, 300 steps of seeded random actions (biased to walking) and a max_steps of
    120, so each runs through two truncations and resets: obs, rewards and truncations equal.
    backend: the emulator under v2's env (PyBoy 2.8.1, or emurust.PyBoy)."""
    n, steps = 3, 300
    cfg = _config(tmp_path, init_state=str(V2_DIR / state), max_steps=120)
    if backend == "emurust":
        import emurust

        sys.modules[v2_env_class.__module__].PyBoy = emurust.PyBoy
    theirs = [v2_env_class(dict(cfg, instance_id=f"t{i}")) for i in range(n)]
    ours = pokered_v2.RedV2Batch(cfg, n, num_threads=2)
    obs = ours.reset()
    for i, env in enumerate(theirs):
        o, _ = env.reset(seed=i)
        _assert_obs_equal(obs, i, o, f"reset env {i}")
    rng = np.random.default_rng(7)
    p = np.array([0.2, 0.2, 0.2, 0.2, 0.12, 0.05, 0.03])
    resets: dict = {}
    for t in range(steps):
        actions = rng.choice(7, size=n, p=p)
        obs, rew, trunc = ours.step(actions)
        for i, env in enumerate(theirs):
            o, r, term, tr, _ = env.step(int(actions[i]))
            where = f"step {t} env {i}"
            _assert_obs_equal(obs, i, o, where)
            assert rew[i] == r, f"{where}: reward {rew[i]!r} != v2's {r!r}"
            assert not term
            assert bool(trunc[i]) == tr, where
            if tr:
                resets[i], _ = env.reset()
        if trunc.any():
            obs = ours.reset(mask=trunc, into=obs)
            for i in np.flatnonzero(trunc):
                _assert_obs_equal(obs, i, resets.pop(i), f"reset after step {t} env {i}")
        for i, env in enumerate(theirs):
            if t % 50 == 49:
                assert ours.attr("seen_coords", i) == env.seen_coords, f"step {t} env {i}"
                assert np.array_equal(ours.explore_map(i), env.explore_map)
                assert ours.attr("total_reward", i) == env.total_reward
                assert ours.check_if_done(i) == env.check_if_done()
                if env.agent_stats:
                    assert ours.agent_stats(i)[-1] == env.agent_stats[-1], f"step {t} env {i}"
                assert ours.current_event_flags_set(i) == env.current_event_flags_set
    for env in theirs:
        env.pyboy.stop(save=False)


def test_sb3_vecenv_matches_v2_in_dummy_loop(v2_env_class, tmp_path):
    """The SB3 VecEnv's same-step reset: terminal observation, TimeLimit.truncated, reset obs."""
    cfg = _config(tmp_path, max_steps=20)
    venv = pokered_v2.RedV2VecEnv(cfg, num_envs=2, num_threads=1)
    env = v2_env_class(dict(cfg))
    obs = venv.reset()
    o, _ = env.reset()
    _assert_obs_equal(obs, 0, o, "reset")
    for t in range(45):
        a = np.array([t % 4, (t + 1) % 7])
        venv.step_async(a)
        obs, rew, dones, infos = venv.step_wait()
        o, r, _, tr, _ = env.step(int(a[0]))
        assert rew[0] == r and bool(dones[0]) == tr, t
        if tr:
            assert infos[0]["TimeLimit.truncated"]
            _assert_obs_equal({k: v[None] for k, v in infos[0]["terminal_observation"].items()}, 0, o, f"terminal {t}")
            o, _ = env.reset()
        _assert_obs_equal(obs, 0, o, f"step {t}")
    assert venv.env_method("check_if_done", indices=[0])[0] == env.check_if_done()
    assert np.array_equal(venv.get_attr("explore_map")[0], env.explore_map)
    env.pyboy.stop(save=False)


def test_gymnasium_vector_env_next_step_autoreset(tmp_path):
    _need_v2()
    import gymnasium

    cfg = _config(tmp_path, max_steps=3)
    env = gymnasium.make_vec("emurust/PokemonRedV2-v0", num_envs=2, config=cfg)
    obs, _ = env.reset(seed=0)
    assert env.single_observation_space.contains({k: v[0].astype(env.single_observation_space[k].dtype) for k, v in obs.items()})
    first = {k: v.copy() for k, v in obs.items()}
    for t in range(3):
        obs, rew, term, trunc, _ = env.step(np.array([1, 2]))
        assert not term.any()
        assert trunc.all() == (t == 2)
    obs, rew, term, trunc, _ = env.step(np.array([1, 2]))  # the autoreset step
    assert not trunc.any() and (rew == 0).all()
    for k in first:
        assert np.array_equal(obs[k], first[k]), k


def test_level_table_is_v2s_fourier_encoding():
    """Without the ROM: the level observation table is v2's np.sin(val * 2 ** arange(8))."""
    table = pokered_v2.level_table().reshape(-1, 8)
    for k in (0, 1, 7, 30, 600, 1530):
        val = 0.02 * k
        assert np.array_equal(table[k], np.sin(val * 2 ** np.arange(8)))


def test_map_offsets_and_missing_files(tmp_path):
    p = tmp_path / "map_data.json"
    p.write_text('{"regions": [{"id": "-1", "coordinates": [0, 0]}, {"id": "3", "coordinates": [5, 9]}]}')
    assert pokered_v2.map_offsets(p) == [(-1, 0, 0), (3, 5, 9)]
    with pytest.raises(FileNotFoundError, match="events.json"):
        pokered_v2.RedV2Batch({"gb_path": "x.gb", "init_state": "x.state", "events_path": str(tmp_path / "events.json")}, 1)


def _scheduled_runs(cfg, plan, setups):
    """``RedV2Batch`` stepped through ``plan`` (steps x envs actions) once per (threads,
    scheduler) of ``setups``, truncated environments reset by mask: each run's records (the
    reset observations, then each step's observations with "reward" and "truncated")."""
    n = plan.shape[1]
    runs = []
    for threads, scheduler in setups:
        b = pokered_v2.RedV2Batch(cfg, n, num_threads=threads, scheduler=scheduler)
        assert b.core.scheduler == scheduler
        obs = b.reset()
        out = [{k: v.copy() for k, v in obs.items()}]
        for actions in plan:
            obs, rew, trunc = b.step(actions)
            out.append({**{k: v.copy() for k, v in obs.items()}, "reward": rew.copy(), "truncated": trunc.copy()})
            if trunc.any():
                obs = b.reset(mask=trunc, into=obs)
                out.append({k: v.copy() for k, v in obs.items()})
        runs.append(out)
    assert any("truncated" in x and x["truncated"].any() for x in runs[0])  # episodes ended and reset
    return runs


def _assert_runs_equal(runs):
    for other in runs[1:]:
        assert len(other) == len(runs[0])
        for x, y in zip(runs[0], other):
            assert x.keys() == y.keys()
            for k in x:
                np.testing.assert_array_equal(x[k], y[k], err_msg=k)


def test_batch_results_do_not_depend_on_threads_or_scheduler(tmp_path):
    """The gang (blocks of several environments, claims stolen across blocks) and Rayon's own
    scheduling give the serial batch's observations and rewards, across truncations."""
    _need_v2()
    n, steps = 5, 30
    cfg = _config(tmp_path, max_steps=12)
    plan = np.random.default_rng(11).integers(0, 7, size=(steps, n))
    _assert_runs_equal(_scheduled_runs(cfg, plan, ((1, "gang"), (2, "gang"), (3, "gang"), (2, "rayon"), (3, "longest_first"))))


@pytest.mark.parametrize("n, k, threads", [(4, 2, 2), (7, 1, 3), (6, 5, 4)])
def test_async_pool_equals_batch_per_environment(tmp_path, n, k, threads):
    """The async pool's results, followed per environment id, equal the synchronous batch's for
    the same per-environment action sequences (recv order does not matter), across auto-resets;
    with several environments per thread and batches of one to all but one."""
    _need_v2()
    steps = 40
    cfg = _config(tmp_path, max_steps=15)
    sync = pokered_v2.RedV2Batch(cfg, n, num_threads=2)
    pool = pokered_v2.RedV2AsyncPool(cfg, n, batch_size=k, num_threads=threads)
    rng = np.random.default_rng(3)
    plan = rng.integers(0, 7, size=(steps, n))
    # Synchronous reference, with EnvPool's next-send auto-reset.
    ref = {i: [] for i in range(n)}
    obs = sync.reset()
    for i in range(n):
        ref[i].append(({kk: v[i].copy() for kk, v in obs.items()}, 0.0, False))
    ended = np.zeros(n, bool)
    for t in range(steps - 1):
        obs, rew, trunc = sync.step(plan[t])
        if ended.any():
            obs = sync.reset(mask=ended.tolist(), into=obs)
            rew[ended], trunc[ended] = 0.0, False
        for i in range(n):
            ref[i].append(({kk: v[i].copy() for kk, v in obs.items()}, rew[i], bool(trunc[i])))
        ended = trunc.copy()
    got = {i: [] for i in range(n)}
    sent = np.zeros(n, int)
    pool.async_reset()
    in_flight = n
    while in_flight:
        o, r, tr, ids = pool.recv(min(k, in_flight))
        in_flight -= len(ids)
        for j, i in enumerate(ids):
            got[i].append(({kk: v[j].copy() for kk, v in o.items()}, r[j], bool(tr[j])))
        todo = [i for i in ids if sent[i] < steps - 1]
        if todo:
            pool.send(np.array([plan[sent[i], i] for i in todo]), todo)
            in_flight += len(todo)
            for i in todo:
                sent[i] += 1
    for i in range(n):
        assert len(got[i]) == len(ref[i]) == steps
        for t, ((o1, r1, t1), (o2, r2, t2)) in enumerate(zip(ref[i], got[i])):
            assert r1 == r2 and t1 == t2, (i, t)
            for kk in o1:
                assert np.array_equal(o1[kk], o2[kk]), (i, t, kk)


def test_async_pool_leaves_a_cpu_to_its_caller(tmp_path, monkeypatch):
    """The pool's default threads: one fewer than the CPUs (the caller runs the policy between
    recv and send), unless the user set a count."""
    _need_v2()
    cfg = _config(tmp_path)
    monkeypatch.delenv("EMURUST_NUM_THREADS", raising=False)
    # (Rust's available_parallelism, as the pool counts CPUs, follows the affinity mask.)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    assert pokered_v2.RedV2AsyncPool(cfg, 2).core.num_threads == max(1, cpus - 1)
    monkeypatch.setenv("EMURUST_NUM_THREADS", "3")
    assert pokered_v2.RedV2AsyncPool(cfg, 2).core.num_threads == 3
    assert pokered_v2.RedV2AsyncPool(cfg, 2, num_threads=2).core.num_threads == 2


#: The one line a user changes in v2's baseline_fast_v2.py.
V2_CONSTRUCTOR = "    env = SubprocVecEnv([make_env(i, env_config) for i in range(num_cpu)])"
EMURUST_CONSTRUCTOR = "    from emurust.pokered_v2 import RedV2VecEnv; env = RedV2VecEnv(env_config, num_envs=num_cpu)"


def test_baseline_fast_v2_runs_with_one_changed_line(tmp_path):
    """v2's own training script, its env constructor line replaced; for the test only, its sizes
    shrunk (episode 128 steps, 2 envs, 1 episode each) so PPO runs in seconds. Its
    TensorboardCallback (get_attr agent_stats / explore_map / current_event_flags_set,
    env_method check_if_done) and CheckpointCallback run on the batch."""
    import subprocess

    _need_v2()
    pytest.importorskip("websockets", reason="v2's stream_agent_wrapper imports websockets")
    pytest.importorskip("tensorboard", reason="v2's TensorboardCallback needs tensorboard")
    src = (V2_DIR / "baseline_fast_v2.py").read_text()
    assert src.count(V2_CONSTRUCTOR) == 1, "v2's constructor line changed upstream"
    script = src.replace(V2_CONSTRUCTOR, EMURUST_CONSTRUCTOR)
    shrink = {
        "    ep_length = 2048 * 80": "    ep_length = 128",
        "    num_cpu = 64 #": "    num_cpu = 2 #",
        "total_timesteps=(ep_length)*num_cpu*10000": "total_timesteps=(ep_length)*num_cpu*1",
    }
    for old, new in shrink.items():
        assert script.count(old) == 1, old
        script = script.replace(old, new)
    # v2's layout: the script in v2/, the ROM and init state one level up.
    run_dir = tmp_path / "v2"
    run_dir.mkdir()
    for f in V2_DIR.iterdir():
        if f.suffix in (".py", ".json"):
            (run_dir / f.name).symlink_to(f)
    (tmp_path / "init.state").symlink_to(V2_DIR / "init.state")
    (tmp_path / "PokemonRed.gb").symlink_to(Path(ROM).resolve())
    (run_dir / "baseline_emurust.py").write_text(script)
    r = subprocess.run(
        [sys.executable, "baseline_emurust.py"], cwd=run_dir, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=600, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    assert "total_timesteps" in r.stdout, r.stdout[-2000:]
    assert list((run_dir / "runs").glob("poke_*_steps.zip")), "v2's CheckpointCallback wrote nothing"
    assert list((run_dir / "runs").rglob("events.out.tfevents.*")), "no TensorBoard logs"


def test_emurust_train_pokered_v2(tmp_path):
    """`emurust train --game pokered_v2`: v2's PPO settings on the batch, a few steps."""
    _need_v2()
    from emurust import cli

    rc = cli.main(["train", "--game", "pokered_v2", "--rom", ROM, "--v2-dir", str(V2_DIR), "--envs", "2",
                   "--max-steps", "64", "--steps", "128", "--logdir", str(tmp_path), "--no-progress"])  # fmt: skip
    assert rc == 0
    (run,) = tmp_path.glob("pokered_v2_*")
    assert (run / "model.zip").is_file()
    assert list(run.glob("poke_*_steps.zip"))


def test_bench_downscale_stand_in_equals_skimage():
    """benches/pokered_v2_batch.py's --v2-shims stand-in gives skimage's values (v2's render)."""
    skimage_transform = pytest.importorskip("skimage.transform", reason="needs scikit-image (the test extra)")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))
    try:
        import pokered_v2_batch
    finally:
        sys.path.pop(0)
    rng = np.random.default_rng(0)
    for _ in range(5):
        img = rng.integers(0, 256, (144, 160, 1), dtype=np.uint8)
        ours = pokered_v2_batch.shim_downscale_local_mean(img, (2, 2, 1))
        theirs = skimage_transform.downscale_local_mean(img, (2, 2, 1))
        assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
        assert np.array_equal(ours.astype(np.uint8), theirs.astype(np.uint8))


def test_schedulers_give_the_serial_batch_results_on_our_own_rom(tmp_path):
    """Without Pokémon Red: the batch's machinery (frame skip, screens, RAM-read encoders,
    rewards, truncation and masked resets) on our Dodge from a state of its gameplay, stepped
    serially and by every scheduler, longest-first among them (its order changes every call
    with the environments' step times), gives the same arrays. Dodge's RAM is not Pokémon
    Red's, so the values are arbitrary but deterministic: any difference is the scheduling's."""
    import emurust

    root = Path(__file__).resolve().parent.parent
    state = tmp_path / "dodge.state"
    with emurust.PyBoy(str(root / "games" / "dodge.gb"), window="null") as pb:
        pb.tick(300, False)
        with open(state, "wb") as f:
            pb.save_state(f)
    (tmp_path / "events.json").write_text("{}")
    (tmp_path / "map_data.json").write_text(json.dumps({"regions": [{"id": 0, "coordinates": [0, 0]}]}))
    cfg = {
        "gb_path": str(root / "games" / "dodge.gb"), "init_state": str(state), "max_steps": 9,
        "events_path": str(tmp_path / "events.json"), "map_data_path": str(tmp_path / "map_data.json"),
        "action_freq": 12,
    }  # fmt: skip
    n, steps = 6, 24
    if "EMURUST_SCHEDULER" not in os.environ:
        assert pokered_v2.RedV2Batch(cfg, 2).core.scheduler == "longest_first"  # the default
    plan = np.random.default_rng(5).integers(0, 7, size=(steps, n))
    runs = _scheduled_runs(cfg, plan, ((1, "rayon"), (2, "rayon"), (2, "gang"), (2, "longest_first"), (3, "longest_first")))
    assert any(x["screens"].any() for x in runs[0])
    _assert_runs_equal(runs)


def test_scheduler_names_are_checked():
    from emurust import _core

    with pytest.raises(ValueError, match="scheduler must be one of 'gang', 'rayon' here"):
        _core.PongBatch(2, scheduler="longest_first")


def test_v2_scaling_bench_runs(tmp_path):
    """benches/v2_scaling.py (independent processes stepping v2 on emurust, and on PyBoy) runs and
    reports one row per process count, each aggregate the sum of its processes' rates."""
    _need_v2()
    out = tmp_path / "scaling.json"
    bench = Path(__file__).resolve().parents[1] / "benches" / "v2_scaling.py"
    subprocess.run(
        [sys.executable, str(bench), "--rom", ROM, "--v2-dir", str(V2_DIR), "--procs", "1,2", "--seconds", "0.3",
         "--skip-pyboy", "--out", str(out)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    rows = json.loads(out.read_text())["rows"]
    assert [(r["engine"], r["procs"]) for r in rows] == [("emurust", 1), ("emurust", 2)]
    assert all(r["steps_per_s"] > 0 for r in rows) and rows[0]["per_proc_vs_one"] == 1.0
