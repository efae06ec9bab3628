"""Where emurust.PyBoy and PyBoy 2.8.1 part, if they do, after v2's reset reloads a v7 state over
a running machine (docs/pokered_v2.md, "Old-state reloads"; it found the LCD record of line 145).

    python tools/pokered_v2_reload_probe.py --rom pokered.gb --v2-dir PokemonRedExperiments-v2 \
        [--state has_pokedex.state] [--steps 15]

Runs v2's RedGymEnv on both emulators with the test's seeded actions for one episode of 120
steps, lets v2 reset (load_state over the running machine), then steps both with v2's tick
pattern (8 frames pressed, 15 released, 1 drawn) and prints, after every tick call, the offsets
of the PyBoy-format (v29) save states that differ (offset 8408, a line-0 LCD register record that
differs before the reset too, is left out).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from pathlib import Path

import numpy as np


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rom", type=Path, required=True)
    p.add_argument("--v2-dir", type=Path, required=True)
    p.add_argument("--state", default="has_pokedex.state")
    p.add_argument("--steps", type=int, default=15)
    args = p.parse_args()
    v2 = args.v2_dir.resolve()
    rom = args.rom.resolve()
    os.chdir(v2)
    sys.path.insert(0, str(v2))
    import pyboy
    import red_gym_env_v2

    import emurust

    cfg = {
        "headless": True, "save_final_state": False, "early_stop": False, "action_freq": 24,
        "init_state": str(v2 / args.state), "max_steps": 120, "print_rewards": False, "save_video": False,
        "fast_video": True, "session_path": Path("/tmp/pokered_v2_probe"), "gb_path": str(rom), "debug": False,
        "reward_scale": 0.5, "explore_weight": 0.25,
    }  # fmt: skip
    rng = np.random.default_rng(7)
    prob = np.array([0.2, 0.2, 0.2, 0.2, 0.12, 0.05, 0.03])
    actions = [int(rng.choice(7, size=3, p=prob)[1]) for _ in range(120 + args.steps)]

    def after_reset(cls):
        red_gym_env_v2.PyBoy = cls
        env = red_gym_env_v2.RedGymEnv(dict(cfg))
        env.reset()
        for t in range(120):
            truncated = env.step(actions[t])[3]
        assert truncated
        env.reset()
        return env

    def state(env) -> np.ndarray:
        f = io.BytesIO()
        env.pyboy.save_state(f)
        return np.frombuffer(f.getvalue(), np.uint8)

    a, b = after_reset(pyboy.PyBoy), after_reset(emurust.PyBoy)
    d0 = [int(i) for i in np.flatnonzero(state(a) != state(b)) if i != 8408]
    print(f"right after the reset: {len(d0)} differing bytes {d0[:20]}")
    for t in range(120, 120 + args.steps):
        for seg, (frames, render) in enumerate(((8, False), (15, False), (1, True))):
            for env in (a, b):
                if seg == 0:
                    env.pyboy.send_input(env.valid_actions[actions[t]])
                if seg == 1:
                    env.pyboy.send_input(env.release_actions[actions[t]])
                env.pyboy.tick(frames, render)
            x, y = state(a), state(b)
            d = [int(i) for i in np.flatnonzero(x != y) if i != 8408]
            if d:
                pairs = [(int(x[i]), int(y[i])) for i in d[:8]]
                print(f"step {t} tick {seg}: {len(d)} bytes differ, first {d[:12]} (PyBoy, emurust) {pairs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
