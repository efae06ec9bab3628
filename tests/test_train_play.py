"""`emurust train` (tiny runs: exit status, outputs, seeds, evaluation statistics) and
`emurust play` (returns per episode, a GIF a viewer can open)."""

import io
import json
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from conftest import default_sigint
from emurust import cli
from emurust.games import GAMES, RAM_BLOCK, dodge_features, score_of
from emurust.gif import encode_gif, read_gif_frames, write_gif
from emurust.train import _raster_curve, main as train_main, mean_ci, train, write_curve_png

ROOT = pathlib.Path(__file__).resolve().parent.parent
TINY = ["--steps", "128", "--envs", "4", "--n-steps", "32", "--batch-size", "64", "--epochs", "1",
        "--no-progress", "--eval-episodes", "3", "--threads", "1"]
GREYS = {0, 85, 153, 255}  # PyBoy's default palette, as emurust's grey observations


def _args(tmp, *extra):
    import argparse

    from emurust.train import _add_arguments

    p = argparse.ArgumentParser()
    _add_arguments(p)
    return p.parse_args(TINY + ["--logdir", str(tmp), "--eval-episodes", "2"] + list(extra))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One tiny `emurust train` in a child process, as a user runs it."""
    tmp = tmp_path_factory.mktemp("train")
    env = dict(os.environ, PYTHONWARNINGS="default")
    proc = subprocess.run([sys.executable, "-m", "emurust", "train", *TINY, "--logdir", str(tmp), "--seed", "5"],
                          capture_output=True, text=True, env=env, cwd=tmp, timeout=300)
    runs = list(tmp.iterdir())
    return proc, runs


def test_train_exits_0_silently_and_writes_model_curve_eval(trained):
    proc, runs = trained
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert len(runs) == 1 and runs[0].name.startswith("dodge_ppo_seed5_")
    run = runs[0]
    assert ", 1 PyTorch thread)" in proc.stdout  # the thread count in use is reported (default 1)
    for name in ("model.zip", "task.json", "curve.json", "curve.png", "eval.json"):
        assert (run / name).is_file(), name
        assert str(run / name) in proc.stdout, f"{name} not reported"
    assert list(run.glob("events.out.tfevents.*")), "no TensorBoard log"
    assert (run / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ev = json.loads((run / "eval.json").read_text())
    for who in ("agent", "random"):
        e = ev["eval"][who]
        assert len(e["score"]) == len(e["shaped_return"]) == len(e["length"]) == 3
        m, h = mean_ci(e["score"])
        assert e["score_mean"] == pytest.approx(m, abs=0.01) and e["score_ci95"] == pytest.approx(h, abs=0.01)
        assert f"{e['score_mean']:.1f} \u00b1 {e['score_ci95']:.1f}" in " ".join(proc.stdout.split())
    assert ev["steps"] == 128 and ev["eval"]["env_seeds"] == [1_000_000_000, 1_000_000_002]
    task = json.loads((run / "task.json").read_text())
    assert task["game"] == "dodge" and task["obs"] == "features" and task["frame_skip"] == GAMES["dodge"].frame_skip


def test_main_returns_int_zero(tmp_path, capsys):
    assert train_main(["--steps", "64", "--envs", "2", "--n-steps", "32", "--batch-size", "32", "--epochs", "1",
                       "--no-progress", "--eval-episodes", "2", "--logdir", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "random policy" in out.out and "PPO agent" in out.out and out.err == ""


def test_different_seeds_give_different_runs_same_seed_the_same(tmp_path):
    a = train(_args(tmp_path / "a", "--seed", "1"))
    b = train(_args(tmp_path / "b", "--seed", "2"))
    a2 = train(_args(tmp_path / "a2", "--seed", "1"))

    def params(r):
        from stable_baselines3 import PPO

        return np.concatenate([p.detach().numpy().ravel() for p in PPO.load(r["model"], device="cpu").policy.parameters()])

    assert not np.array_equal(params(a), params(b))
    np.testing.assert_array_equal(params(a), params(a2))
    assert a["eval"]["agent"]["score"] == a2["eval"]["agent"]["score"]
    assert [c["mean_score"] for c in a["curve"]] == [c["mean_score"] for c in a2["curve"]]
    # The random baseline is the same held-out evaluation whatever the training seed.
    assert a["eval"]["random"]["score"] == b["eval"]["random"]["score"]


def test_mean_ci_is_student_t():
    m, h = mean_ci([1, 2, 3, 4, 5])
    assert m == 3.0
    assert h == pytest.approx(2.7764 * math.sqrt(2.5) / math.sqrt(5), rel=1e-4)  # t(0.975, 4) = 2.7764
    x = np.arange(32.0)
    m, h = mean_ci(x)
    assert h == pytest.approx(2.0395 * x.std(ddof=1) / math.sqrt(32), rel=1e-4)  # t(0.975, 31) = 2.0395
    assert mean_ci(x, 0.90)[1] == pytest.approx(1.6955 * x.std(ddof=1) / math.sqrt(32), rel=1e-4)
    assert mean_ci([4, 4, 4]) == (4.0, 0.0)
    with pytest.raises(ValueError):
        mean_ci([1.0])


def _check_gif(path, episodes_steps, scale=2):
    data = pathlib.Path(path).read_bytes()
    assert data[:6] == b"GIF89a" and data[-1:] == b"\x3b"
    frames, delays = read_gif_frames(data)
    step = round(100 * GAMES["dodge"].frame_skip / 60)  # hundredths of a second per step
    # The reset frame, then one per step (a writer may merge repeated frames into a longer one).
    assert sum(delays) == step * sum(s + 1 for s in episodes_steps)
    assert all(d % step == 0 for d in delays) and len(frames) > sum(episodes_steps) // 2
    assert frames[0].shape == (144 * scale, 160 * scale, 3)
    assert set(np.unique(np.concatenate(frames[:: max(1, len(frames) // 8)]))) <= GREYS
    assert len({f.tobytes() for f in frames}) > len(frames) // 2  # it moves
    from PIL import Image

    im = Image.open(io.BytesIO(data))
    assert im.n_frames == len(frames) and im.size == (160 * scale, 144 * scale)


def test_play_model_and_random_write_gifs(trained, tmp_path, capsys):
    run = trained[1][0]
    assert cli.main(["play", str(run / "model.zip"), "--episodes", "2", "--seed", "3", "--max-steps", "40"]) == 0
    out = capsys.readouterr().out
    lines = [l.split() for l in out.splitlines() if l.strip()[:1].isdigit()]
    assert [int(l[0]) for l in lines] == [1, 2]
    _check_gif(run / "play.gif", [int(l[3]) for l in lines])
    assert f"GIF: {run / 'play.gif'}" in out

    gif = tmp_path / "random.gif"
    assert cli.main(["play", "--random", "--episodes", "1", "--gif", str(gif), "--scale", "1"]) == 0
    out = capsys.readouterr().out
    steps = [int(l.split()[3]) for l in out.splitlines() if l.strip()[:1].isdigit()]
    assert len(steps) == 1 and steps[0] > 20  # random play loses its 3 lives after a while
    _check_gif(gif, steps, scale=1)
    assert cli.main(["play"]) == 2  # neither a model nor --random: one line of error
    assert "give a MODEL or --random" in capsys.readouterr().err


def test_our_gif_encoder_round_trips_and_pillow_reads_it(tmp_path):
    rng = np.random.default_rng(0)
    for colours in (1, 2, 4, 5, 256):
        frames = [rng.integers(0, colours, (9, 13)).astype(np.uint8) for _ in range(3)]
        decoded, delays = read_gif_frames(encode_gif(frames, fps=7.5))
        assert [np.array_equal(d[..., 0], f) for d, f in zip(decoded, frames)] == [True] * 3
        assert delays == [13, 13, 13]
    # long runs of one colour overflow the 4096-entry LZW table
    frames = [np.repeat(np.array([0, 85, 153, 255], np.uint8), 160 * 36).reshape(144, 160)] * 2
    frames += [rng.choice(np.array([0, 85, 153, 255], np.uint8), (144, 160))]
    path = tmp_path / "ours.gif"
    assert write_gif(str(path), frames, fps=10, use_pillow=False) == "emurust"
    decoded, _ = read_gif_frames(path.read_bytes())
    assert all(np.array_equal(d[..., 0], f) for d, f in zip(decoded, frames))
    from PIL import Image, ImageSequence

    pil = [np.array(f.convert("RGB")) for f in ImageSequence.Iterator(Image.open(path))]
    assert all(np.array_equal(p[..., 0], f) for p, f in zip(pil, frames)) and len(pil) == 3
    assert write_gif(str(tmp_path / "pil.gif"), frames, fps=10, use_pillow=True) == "pillow"
    decoded, delays = read_gif_frames((tmp_path / "pil.gif").read_bytes())
    shown = [d for d, n in zip(decoded, delays) for _ in range(n // 10)]  # Pillow merges the repeated frame
    assert len(shown) == 3 and all(np.array_equal(d[..., 0], f) for d, f in zip(shown, frames))


def test_curve_png_without_matplotlib(tmp_path, monkeypatch):
    curve = [{"timesteps": 2048 * (i + 1), "mean_score": 50.0 + 10 * i} for i in range(5)]
    agent = {"score_mean": 120.0, "score_ci95": 15.0}
    random = {"score_mean": 55.0, "score_ci95": 8.0}
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    path = tmp_path / "c.png"
    assert write_curve_png(str(path), curve, agent, random, "t") == "emurust"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = _raster_curve([c["timesteps"] for c in curve], [c["mean_score"] for c in curve], agent, random)
    assert img.shape == (360, 640, 3)
    assert (np.all(img == (30, 90, 200), axis=-1)).sum() > 100  # the training curve is drawn


def test_render_fps_is_a_step(tmp_path):
    import gymnasium as gym

    import emurust.envs  # noqa: F401  (registers the ids)

    env = gym.make("emurust/Dodge-v0")
    assert env.unwrapped.metadata["render_fps"] == 60 / GAMES["dodge"].frame_skip == 7.5
    venv = gym.make_vec("emurust/Dodge-v0", num_envs=2)
    assert venv.metadata["render_fps"] == 7.5
    from emurust.sb3 import EmurustVecEnv

    assert EmurustVecEnv(1, game="dodge", frame_skip=4).metadata["render_fps"] == 15


def test_dodge_features_and_score():
    ram = np.zeros((2, RAM_BLOCK[1]), np.uint8)
    ram[:, 0:2] = (0x34, 0x12)
    ram[:, 6], ram[:, 7] = 72, 128  # ship x, y
    ram[0, 0x10:0x14] = (71, 100, 73, 0)  # rock x
    ys = np.array([40, 120, 80, 100], "<u2") << 4
    ram[0, 0x18:0x20] = ys.view(np.uint8)
    ram[0, 0x28:0x2C] = (16, 32, 24, 0)  # speed; the fourth slot is empty
    f = dodge_features(ram)
    assert f.shape == (2, 45) and f.dtype == np.float32
    assert list(score_of(ram)) == [0x1234, 0x1234]
    near, speed = f[0, 5:25], f[0, 25:45]
    # x 71 and 73 are both in the firing column (bin 10): the lower rock (y 80) wins
    assert near[10] == pytest.approx(1 - (128 - 80) / 144) and speed[10] == pytest.approx(24 / 32)
    # x 100: 28 px right of the ship, bin 10 + (28 + 6) // 8 = 14
    assert near[14] == pytest.approx(1 - (128 - 120) / 144) and speed[14] == 1.0
    assert np.count_nonzero(near) == 2 and np.count_nonzero(speed) == 2
    assert not f[1, 5:].any()  # no rocks
    np.testing.assert_allclose(f[:, :5], [[-0.1, 1.0, 0, 0, 0]] * 2)


def test_ctrl_c_while_training_exits_fast_with_one_line_and_no_half_files(tmp_path):
    """SIGINT inside PPO's learning loop: exit status 130 within 2 s, one line on stderr, no
    traceback, and no model (or any other output) half-written in the run directory."""
    import signal
    import time

    args = ["--steps", "1000000", "--envs", "4", "--n-steps", "64", "--batch-size", "64", "--epochs", "1",
            "--eval-episodes", "2", "--threads", "1", "--logdir", str(tmp_path / "runs"),
            "--save", str(tmp_path / "out" / "model.zip")]
    proc = subprocess.Popen([sys.executable, "-u", "-m", "emurust", "train", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path, preexec_fn=default_sigint)
    try:
        first = proc.stdout.readline()  # printed once the model is built, right before learn()
        assert first.startswith("training PPO"), first + proc.stderr.read()
        time.sleep(3)  # well inside the learning loop (1M steps take far longer)
        assert proc.poll() is None, proc.stderr.read()
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        elapsed = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (proc.returncode, err)
    assert elapsed < 2.0, f"took {elapsed:.2f} s to exit after SIGINT"
    assert err.strip() == "emurust train: interrupted", err
    assert "Traceback" not in out + err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    (run,) = (tmp_path / "runs").iterdir()
    left = sorted(p.name for p in run.iterdir())
    assert all(name.startswith("events.out.tfevents.") for name in left), left  # only the TensorBoard log


def test_interrupted_save_leaves_no_file(tmp_path):
    """The atomic write behind model.zip/task.json/eval.json: a KeyboardInterrupt in the middle
    of writing leaves neither the target nor the temporary file; a finished one replaces it."""
    from emurust._atomic import atomic_write as _atomic_write

    target = tmp_path / "model.zip"

    def half(tmp):
        pathlib.Path(tmp).write_bytes(b"PK\x03\x04 half a zip")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _atomic_write(target, half, suffix=".zip")
    assert list(tmp_path.iterdir()) == []
    target.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        _atomic_write(target, half, suffix=".zip")
    assert [p.name for p in tmp_path.iterdir()] == ["model.zip"] and target.read_bytes() == b"old"
    _atomic_write(target, lambda tmp: pathlib.Path(tmp).write_bytes(b"new"), suffix=".zip")
    assert [p.name for p in tmp_path.iterdir()] == ["model.zip"] and target.read_bytes() == b"new"
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def test_train_uses_the_environments_public_features_option():
    """`emurust train`'s Dodge policy input is the environments' own obs="features" (what users
    get from gymnasium.make("emurust/Dodge-v0", obs="features")), not a private copy."""
    import argparse

    from emurust.sb3 import EmurustVecEnv
    from emurust.train import make_venv, task_config

    cfg = task_config(argparse.Namespace(game="dodge", obs=None, frame_stack=None, frame_skip=None, life_penalty=None))
    assert cfg["obs"] == "features"
    env = make_venv(cfg, 2, num_threads=1)
    inner = env
    while not isinstance(inner, EmurustVecEnv):
        inner = inner.venv
    assert inner.driver.obs_names[0] == "features"
    obs = env.reset()
    assert obs.shape == (2, 45) and obs.dtype == np.float32
    env.close()
