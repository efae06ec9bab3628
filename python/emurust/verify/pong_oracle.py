"""The C reference of Pong (PufferLib's ``pong.h``, MIT) built as an oracle: compiled at first
use with gcc into a small shared library (our shim ``pong_oracle_c/pong_shim.c`` includes
``pong.h``; ``pong_oracle_c/raylib.h`` stands in for raylib, so nothing renders) and loaded
with ctypes.

The reference is read from ``EMURUST_REFERENCES``/``puffer-pong`` (see
:mod:`emurust.verify.references`). Every oracle game owns a glibc ``random_r`` stream seeded as
``srand(seed)``, to which ``pong.h``'s ``rand()`` calls are routed (see the shim).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from .references import reference_path

SHIM_DIR = Path(__file__).resolve().parent / "pong_oracle_c"
#: -ffp-contract=off: never fuse a*b+c into an FMA (the reference's x86-64 build has none;
#: other targets would otherwise round differently).
CFLAGS = ["-O2", "-ffp-contract=off", "-fPIC", "-shared", "-std=gnu99", "-fvisibility=hidden", "-w"]
BENCH_CFLAGS = ["-O3", "-ffp-contract=off", "-fPIC", "-shared", "-std=gnu99", "-fvisibility=hidden", "-w"]

#: The reference's parameters, in pong.py's order, with its defaults.
DEFAULT_CONFIG = {
    "width": 500.0,
    "height": 640.0,
    "paddle_width": 20.0,
    "paddle_height": 70.0,
    "ball_width": 32.0,
    "ball_height": 32.0,
    "paddle_speed": 8.0,
    "ball_initial_speed_x": 10.0,
    "ball_initial_speed_y": 1.0,
    "ball_max_speed_y": 13.0,
    "ball_speed_y_increment": 3.0,
    "max_score": 21,
    "frameskip": 1,
}


class _Log(ctypes.Structure):
    _fields_ = [("episode_return", ctypes.c_float), ("episode_length", ctypes.c_float), ("score", ctypes.c_float)]


class PongStruct(ctypes.Structure):
    """pong.h's ``struct Pong``, field for field (its size is checked against the library's)."""

    _fields_ = [
        ("observations", ctypes.POINTER(ctypes.c_float)),
        ("actions", ctypes.POINTER(ctypes.c_int)),
        ("rewards", ctypes.POINTER(ctypes.c_float)),
        ("terminals", ctypes.POINTER(ctypes.c_ubyte)),
        ("log_buffer", ctypes.c_void_p),
        ("log", _Log),
        ("paddle_yl", ctypes.c_float),
        ("paddle_yr", ctypes.c_float),
        ("ball_x", ctypes.c_float),
        ("ball_y", ctypes.c_float),
        ("ball_vx", ctypes.c_float),
        ("ball_vy", ctypes.c_float),
        ("score_l", ctypes.c_uint),
        ("score_r", ctypes.c_uint),
        ("width", ctypes.c_float),
        ("height", ctypes.c_float),
        ("paddle_width", ctypes.c_float),
        ("paddle_height", ctypes.c_float),
        ("ball_width", ctypes.c_float),
        ("ball_height", ctypes.c_float),
        ("paddle_speed", ctypes.c_float),
        ("ball_initial_speed_x", ctypes.c_float),
        ("ball_initial_speed_y", ctypes.c_float),
        ("ball_max_speed_y", ctypes.c_float),
        ("ball_speed_y_increment", ctypes.c_float),
        ("max_score", ctypes.c_uint),
        ("min_paddle_y", ctypes.c_float),
        ("max_paddle_y", ctypes.c_float),
        ("paddle_dir", ctypes.c_float),
        ("tick", ctypes.c_int),
        ("n_bounces", ctypes.c_int),
        ("win", ctypes.c_int),
        ("frameskip", ctypes.c_int),
    ]


#: State fields shared with ``emurust._core.PongBatch.get_state``/``set_state``.
STATE_FIELDS = ("paddle_yl", "paddle_yr", "ball_x", "ball_y", "ball_vx", "ball_vy", "score_l", "score_r",
                "paddle_dir", "tick", "n_bounces", "win")
LOG_FIELDS = ("episode_return", "episode_length", "score")

_LIBS: dict[tuple, ctypes.CDLL] = {}


def reference_header() -> Path:
    return reference_path("puffer-pong") / "pong.h"


def build(cflags: Sequence[str] = CFLAGS, out_dir: Optional[str] = None) -> Path:
    """Compile the oracle library (cached by the hash of pong.h, the shim and the flags)."""
    header = reference_header()
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        raise RuntimeError("building the Pong oracle needs a C compiler (gcc or $CC)")
    h = hashlib.sha256()
    for p in (header, SHIM_DIR / "pong_shim.c", SHIM_DIR / "raylib.h"):
        h.update(p.read_bytes())
    h.update(" ".join(cflags).encode())
    out = Path(out_dir or tempfile.gettempdir()) / f"emurust-pong-oracle-{h.hexdigest()[:16]}.so"
    if out.exists():
        return out
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    cmd = [cc, *cflags, "-I", str(SHIM_DIR), "-I", str(header.parent), str(SHIM_DIR / "pong_shim.c"), "-o", str(tmp), "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"building the Pong oracle failed:\n{' '.join(cmd)}\n{r.stderr}")
    os.replace(tmp, out)
    return out


def load(cflags: Sequence[str] = CFLAGS) -> ctypes.CDLL:
    key = tuple(cflags)
    if key in _LIBS:
        return _LIBS[key]
    lib = ctypes.CDLL(str(build(cflags)))
    vp = ctypes.c_void_p
    lib.oracle_new.argtypes = [ctypes.POINTER(PongStruct), ctypes.c_uint]
    lib.oracle_new.restype = vp
    lib.oracle_free.argtypes = [vp]
    lib.oracle_pong.argtypes = [vp]
    lib.oracle_pong.restype = ctypes.POINTER(PongStruct)
    lib.oracle_reset.argtypes = [vp]
    lib.oracle_step.argtypes = [vp, ctypes.c_int]
    lib.oracle_sizeof_pong.restype = ctypes.c_size_t
    lib.oracle_step_many.argtypes = [ctypes.POINTER(vp), ctypes.c_int, vp, vp, vp, vp]
    lib.oracle_run_steps.argtypes = [ctypes.POINTER(vp), ctypes.c_int, vp, ctypes.c_int, ctypes.c_long]
    lib.oracle_run_steps.restype = ctypes.c_double
    if lib.oracle_sizeof_pong() != ctypes.sizeof(PongStruct):
        raise RuntimeError(f"pong.h's struct Pong is {lib.oracle_sizeof_pong()} bytes, the oracle's mirror "
                           f"{ctypes.sizeof(PongStruct)}: the reference changed; update PongStruct")
    _LIBS[key] = lib
    return lib


class OracleBatch:
    """N reference games, game i's ``rand()`` seeded as ``srand(seeds[i])``."""

    def __init__(self, seeds: Sequence[int], cflags: Sequence[str] = CFLAGS, **config: Any):
        unknown = set(config) - set(DEFAULT_CONFIG)
        if unknown:
            raise TypeError(f"unknown Pong parameters {sorted(unknown)}")
        self.lib = load(cflags)
        cfg = PongStruct(**{**DEFAULT_CONFIG, **config})
        self.n = len(seeds)
        self._games = (ctypes.c_void_p * self.n)()
        for i, s in enumerate(seeds):
            g = self.lib.oracle_new(ctypes.byref(cfg), int(s))
            if not g:
                raise MemoryError("oracle_new failed")
            self._games[i] = g
        self.obs = np.zeros((self.n, 8), np.float32)
        self.rewards = np.zeros(self.n, np.float32)
        self.terminals = np.zeros(self.n, np.uint8)
        self._actions = np.zeros(self.n, np.int32)

    def close(self) -> None:
        if self._games is not None:
            for g in self._games:
                self.lib.oracle_free(g)
            self._games = None  # type: ignore[assignment]

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def pong(self, i: int) -> PongStruct:
        return self.lib.oracle_pong(self._games[i]).contents

    def reset(self) -> np.ndarray:
        for i in range(self.n):
            self.lib.oracle_reset(self._games[i])
            self.obs[i] = np.ctypeslib.as_array(self.pong(i).observations, (8,))
        return self.obs

    def step(self, actions: np.ndarray):
        """Step every game; returns (obs, rewards, terminals) as the library's outputs (copied
        into arrays this object owns and overwrites at the next step)."""
        self._actions[:] = actions
        self.lib.oracle_step_many(self._games, self.n, self._actions.ctypes.data, self.obs.ctypes.data,
                                  self.rewards.ctypes.data, self.terminals.ctypes.data)
        return self.obs, self.rewards, self.terminals

    def run_steps(self, actions: np.ndarray, steps: int) -> float:
        a = np.ascontiguousarray(actions, dtype=np.int32)
        if a.ndim != 2 or a.shape[1] != self.n:
            raise ValueError(f"actions must have shape (K, {self.n})")
        return float(self.lib.oracle_run_steps(self._games, self.n, a.ctypes.data, a.shape[0], int(steps)))

    def get_state(self, i: int) -> dict:
        p = self.pong(i)
        d = {f: getattr(p, f) for f in STATE_FIELDS}
        d.update({f: getattr(p.log, f) for f in LOG_FIELDS})
        d["observations"] = [float(x) for x in np.ctypeslib.as_array(p.observations, (8,))]
        return d

    def set_state(self, i: int, state: dict) -> None:
        p = self.pong(i)
        for k, v in state.items():
            if k in STATE_FIELDS:
                setattr(p, k, v)
            elif k in LOG_FIELDS:
                setattr(p.log, k, v)
            elif k == "observations":
                np.ctypeslib.as_array(p.observations, (8,))[:] = v
            else:
                raise KeyError(f"unknown Pong state field {k!r}")


def reference_env_class():
    """``ReferencePongEnv``: the C reference as a Python ``gymnasium.Env`` around one game (the
    paper's slow baseline, for SB3's ``SubprocVecEnv``). Built on first call (needs gymnasium)."""
    import gymnasium as gym
    from gymnasium import spaces

    class ReferencePongEnv(gym.Env):
        metadata = {"render_modes": []}

        def __init__(self, seed: int = 1, **config: Any):
            self.game = OracleBatch([seed], **config)
            self.observation_space = spaces.Box(-np.inf, np.inf, (8,), np.float32)
            self.action_space = spaces.Discrete(3)
            self._action = np.zeros(1, np.int32)

        def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
            super().reset(seed=seed)
            if seed is not None:
                self.game.close()
                self.game = OracleBatch([seed])
            return self.game.reset()[0].copy(), {}

        def step(self, action: Any):
            self._action[0] = int(action)
            obs, rew, term = self.game.step(self._action)
            # The reference resets itself at the end of a game; SB3 then resets again (a new serve).
            return obs[0].copy(), float(rew[0]), bool(term[0]), False, {}

    return ReferencePongEnv
