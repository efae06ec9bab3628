"""The training run of emurust's profile-guided build (tools/build_pgo_wheel.sh).

An instrumented extension counts how often each branch and call of the Rust code runs while this
script drives it; the release build then lays out and inlines the code for those counts. What
runs here is what users run, on programs that ship with this repository only (our test ROMs and
games; never a commercial game, so that the speed measured on Pokémon Red stays a measurement on
a program the profile never saw):

- the PyBoy facade (``emurust.PyBoy``) with and without sound emulation, in the three tick
  patterns RL code uses (every frame drawn, one in 24, none), with button presses, ``memory[...]``
  reads and writes, the screen array, and save/load state;
- the batched generic environment (``emurust.envs.BatchDriver``) with frame skip;
- the batched PokemonRedExperiments v2 task (``emurust.pokered_v2.RedV2Batch``) on our Dodge,
  whose RAM is not Pokémon Red's but whose frame skip, screen stack and reward code are the same;
- the batched Pong environment.

``--quick`` runs a few frames of each part (the test suite runs it, so that the workload keeps
up with the API); the build runs the full workload (a few seconds, instrumented).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BUTTONS = ("a", "b", "start", "select", "up", "down", "left", "right")


def own_roms(into: Path) -> list[Path]:
    """Copies of our test ROMs and games (committed, built from our own sources) in `into`: the
    facade, as PyBoy, saves a cartridge's RAM beside its ROM when it stops."""
    roms = sorted((ROOT / "roms").glob("*.gb")) + sorted((ROOT / "games").glob("*.gb"))
    if not roms:
        raise SystemExit(f"no ROMs under {ROOT / 'roms'} or {ROOT / 'games'}")
    copies = []
    for rom in roms:
        (into / rom.parent.name).mkdir(exist_ok=True)
        copies.append(Path(shutil.copy(rom, into / rom.parent.name / rom.name)))
    return copies


def pyboy_facade(rom: Path, frames: int, rng: np.random.Generator) -> int:
    """The PyBoy facade as an RL loop drives it: buttons, tick patterns, RAM reads, screens."""
    import emurust

    ticks = 0
    for sound in (True, False):
        with emurust.PyBoy(str(rom), window="null", sound_emulated=sound) as pb:
            pb.tick(60, False)
            done = 0
            while done < frames:
                button = BUTTONS[int(rng.integers(len(BUTTONS)))]
                pb.button_press(button)
                pb.tick(8, False)
                pb.button_release(button)
                # Every frame drawn, one in 24 drawn (sound sampled in the last), none drawn.
                for _ in range(4):
                    pb.tick(1, True)
                pb.tick(23, False)
                pb.tick(1, True, sound)
                pb.tick(24, False, False)
                done += 8 + 4 + 23 + 1 + 24
                # RAM reads as reward code makes them, and a screen copy.
                total = sum(pb.memory[a] for a in range(0xC000, 0xC100))
                total += sum(pb.memory[0xD000:0xD040])
                pb.memory[0xDFFF] = total & 0xFF
                np.asarray(pb.screen.ndarray).sum()
            state = io.BytesIO()
            pb.save_state(state)
            state.seek(0)
            pb.load_state(state)
            pb.tick(30, True)
            ticks += done + 90
    return ticks


def generic_batch(games: Path, frames: int, rng: np.random.Generator) -> int:
    """The batched environment over our games, frame skip 24, grey and RGB observations."""
    from emurust.envs import BatchDriver

    steps = max(1, frames // 24)
    for game, obs in (("dodge", "grey"), ("runner", "rgb"), ("snake", "grey")):
        driver = BatchDriver(4, games / f"{game}.gb", game=game, obs=obs, frame_skip=24)
        driver.seed(0)
        driver.reset()
        for _ in range(steps):
            driver.step(rng.integers(0, driver.batch.num_actions, size=4))
    return steps * 4 * 24 * 3


def pokered_v2_batch(games: Path, frames: int, rng: np.random.Generator) -> int:
    """v2's batched task on our Dodge (see the module docs)."""
    import emurust
    from emurust import pokered_v2

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        rom = games / "dodge.gb"
        with emurust.PyBoy(str(rom), window="null") as pb:
            pb.tick(300, False)
            with open(t / "dodge.state", "wb") as f:
                pb.save_state(f)
        (t / "events.json").write_text("{}")
        (t / "map_data.json").write_text(json.dumps({"regions": [{"id": 0, "coordinates": [0, 0]}]}))
        cfg = {
            "gb_path": str(rom), "init_state": str(t / "dodge.state"), "max_steps": 400,
            "events_path": str(t / "events.json"), "map_data_path": str(t / "map_data.json"),
        }  # fmt: skip
        batch = pokered_v2.RedV2Batch(cfg, 4, num_threads=2)
        batch.reset()
        steps = max(1, frames // 24)
        for _ in range(steps):
            batch.step(rng.integers(0, 7, size=4))
    return steps * 4 * 24


def pong_batch(frames: int, rng: np.random.Generator) -> int:
    """The batched Pong environment (the second environment's crate)."""
    from emurust.pong import ACTIONS, PongDriver

    driver = PongDriver(16)
    driver.seed(0)
    driver.reset()
    steps = max(1, frames // 4)
    for _ in range(steps):
        driver.step(rng.integers(0, len(ACTIONS), size=16).astype(np.int64))
    return steps * 16


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a few frames of each part (a smoke test of the workload)")
    args = p.parse_args(argv)
    frames = 100 if args.quick else 3000
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    parts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rom in own_roms(Path(tmp)):
            # Our test ROMs are short programs; the games get the longer runs.
            n = frames if rom.parent.name == "games" else max(100, frames // 6)
            parts[f"pyboy:{rom.name}"] = pyboy_facade(rom, n, rng)
        parts["batch"] = generic_batch(Path(tmp) / "games", frames, rng)
        parts["pokered_v2_batch"] = pokered_v2_batch(Path(tmp) / "games", frames, rng)
    parts["pong"] = pong_batch(frames, rng)
    print(json.dumps({"seconds": round(time.perf_counter() - start, 1), "parts": parts,
                      "profile": os.environ.get("LLVM_PROFILE_FILE", "")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
