"""Ready-made RL tasks for emurust's own homebrew games (``games/``: Dodge, Snake, Runner), whose
ROMs ship with emurust. Tasks for commercial games whose ROM the user brings (Tetris, Super Mario
Land, Kirby's Dream Land, 2048, Pokémon Red) are in :mod:`emurust.user_rom_games`;
:func:`task_kwargs` serves both kinds.

All three share one RAM map (see ``games/README.md``): score u16 LE at 0xC000, lives at 0xC002,
game-over flag at 0xC003, game state at 0xC008 (0 title, 1 playing, 2 game over).

Each task: reward = score difference per step (optionally a penalty per life lost), the
episode terminates when the game-over flag is set, and every reset leaves the title screen by
pressing START (after the seeded idle frames, so the game's RNG, seeded from DIV when START is
pressed, differs between episodes).
"""

from __future__ import annotations

import os
import pathlib
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from .rewards import Condition, Term

__all__ = ["GAMES", "GameTask", "rom_path", "task_kwargs", "dodge_features", "features_of", "score_of"]

SCORE, LIVES, GAME_OVER, STATE = 0xC000, 0xC002, 0xC003, 0xC008
# The RAM the tasks read for their features and for the honest score: the shared block and the
# game-specific struct (see games/README.md).
RAM_BLOCK = (0xC000, 0x40)


def score_of(ram: np.ndarray) -> np.ndarray:
    """The game's own score (u16 LE at 0xC000) from rows of :data:`RAM_BLOCK` bytes."""
    ram = np.asarray(ram)
    return ram[..., 0].astype(np.int64) | ram[..., 1].astype(np.int64) << 8


RADAR_BINS, RADAR_WIDTH = 20, 8


def dodge_features(ram: np.ndarray) -> np.ndarray:
    """Dodge's state as 45 numbers of order 1, from rows of :data:`RAM_BLOCK` bytes (N, 64).

    Ship (5): x and y (centred), whether a shot is in flight, its height above the ship,
    invulnerability frames left. Rock radar (2 x 20): the rocks' x relative to the ship in bins of
    8 px (bin 10 is the firing column: a shot fired now hits a rock there); per bin, how near the
    lowest rock in it is (1 - its height above the ship / 144; 0: no rock) and its falling speed.
    Relative bins make "a rock above me" one input, whatever the ship's x: with the rocks' 8 slots
    as they are in RAM, PPO learned several times slower."""
    ram = np.asarray(ram)
    n = ram.shape[0]
    px = ram[:, 0x06].astype(np.float32)
    py = ram[:, 0x07].astype(np.float32)
    rx = ram[:, 0x10:0x18].astype(np.float32)
    ry = (np.ascontiguousarray(ram[:, 0x18:0x28]).view("<u2") >> 4).astype(np.float32)
    speed = ram[:, 0x28:0x30].astype(np.float32)
    # A shot from the ship hits rocks with x - px in [-6, 3]: bin RADAR_BINS // 2 starts at -6.
    lo = -6 - (RADAR_BINS // 2) * RADAR_WIDTH
    b = np.floor((rx - px[:, None] - lo) / RADAR_WIDTH).astype(np.int64)
    near = np.clip(1.0 - (py[:, None] - ry) / 144.0, 0.0, 1.2)
    seen = (speed > 0) & (b >= 0) & (b < RADAR_BINS)
    radar = np.zeros((n, RADAR_BINS), np.float32)
    fall = np.zeros((n, RADAR_BINS), np.float32)
    for k in range(rx.shape[1]):
        rows = np.flatnonzero(seen[:, k])
        bins = b[rows, k]
        nearer = near[rows, k] > radar[rows, bins]
        rows, bins = rows[nearer], bins[nearer]
        radar[rows, bins] = near[rows, k]
        fall[rows, bins] = speed[rows, k] / 32.0
    shot_y = ram[:, 0x39].astype(np.float32)
    shot = (shot_y > 0).astype(np.float32)
    ship = np.stack([(px - 80.0) / 80.0, (py - 96.0) / 32.0, shot, shot * (py - shot_y) / 72.0,
                     ram[:, 0x3A].astype(np.float32) / 90.0], -1)
    return np.concatenate([ship, radar, fall], 1).astype(np.float32)


# Title screen: the games read START once their title is up (~10 frames after power-on);
# after START they redraw the map with the LCD off (~10 frames).
_START = ((0, 10), ("start", 2), (0, 12))


@dataclass(frozen=True)
class GameTask:
    name: str
    rom: str
    actions: tuple = ()
    frame_skip: int = 24
    press_frames: int = 24
    max_episode_steps: int = 2000
    life_penalty: float = 0.0
    noop_max: int = 30
    # RAM bytes of RAM_BLOCK (N, 64) -> (N, F) float32 policy observations, or None (pixels only).
    features: Optional[Callable[[np.ndarray], np.ndarray]] = None

    def reward(self, life_penalty: float | None = None) -> list[Term]:
        p = self.life_penalty if life_penalty is None else life_penalty
        terms = [Term(SCORE, "u16le", 1.0, True)]
        if p:
            # lives 3 -> 2 is a delta of -1: weight p gives -p per life lost.
            terms.append(Term(LIVES, "u8", float(p), True))
        return terms


GAMES: dict[str, GameTask] = {
    # Move left/right (up/down a little), A fires one shot: +10 per rock shot, +1 per 0.5 s alive.
    # The game fires on a *new* A press: buttons are released for the last 2 frames of every step
    # so that A in two steps in a row fires twice (held through both, it would fire once).
    "dodge": GameTask(
        "dodge",
        "dodge.gb",
        actions=("noop", "left", "right", "up", "down", "a", "a+left", "a+right"),
        frame_skip=8,
        press_frames=6,
        max_episode_steps=3000,
        features=dodge_features,
    ),
    # Steer the snake (no reversing); +10 x level per apple.
    "snake": GameTask(
        "snake", "snake.gb", actions=("noop", "up", "down", "left", "right"), frame_skip=8,
        press_frames=8, max_episode_steps=3000,
    ),
    # A jumps (hold for a higher jump); +1 per 16 px, +10 per coin, +5 per bird survived.
    "runner": GameTask(
        "runner", "runner.gb", actions=("noop", "a"), frame_skip=8, press_frames=8,
        max_episode_steps=3000,
    ),
}


def features_of(game: Optional[str]) -> tuple[tuple[int, int], Callable[[np.ndarray], np.ndarray]]:
    """The ``obs="features"`` observation of `game`: (the RAM range it reads, the function
    from rows of those bytes to float32 features). ValueError for games that define none."""
    task = GAMES.get(game.lower()) if game else None
    if task is None or task.features is None:
        having = sorted(name for name, t in GAMES.items() if t.features is not None)
        raise ValueError(f"obs='features' is defined for the games {having} only"
                         + (f", not {game!r}" if game else " (pass game=...)"))
    return RAM_BLOCK, task.features


def rom_path(game: str) -> str:
    """Where the game's ROM is: ``$EMURUST_GAMES_DIR``, the package's ``roms/``, the source
    tree's ``games/`` (next to ``python/``) or ``./games``."""
    task = GAMES.get(game.lower())
    if task is None:
        raise ValueError(f"unknown game {game!r}; expected one of {sorted(GAMES)}")
    here = pathlib.Path(__file__).resolve().parent
    candidates = []
    if os.environ.get("EMURUST_GAMES_DIR"):
        candidates.append(pathlib.Path(os.environ["EMURUST_GAMES_DIR"]))
    candidates += [here / "roms", here.parent.parent / "games", pathlib.Path.cwd() / "games"]
    for d in candidates:
        p = d / task.rom
        if p.is_file():
            return str(p)
    raise FileNotFoundError(
        f"cannot find {task.rom} in {[str(c) for c in candidates]}; set EMURUST_GAMES_DIR or pass rom="
    )


def task_kwargs(game: str, **overrides: Any) -> dict[str, Any]:
    """Constructor arguments of the environments for ``game`` (an embedded homebrew game or a
    user-ROM game); ``overrides`` win."""
    from .user_rom_games import USER_ROM_GAMES, user_rom_task_kwargs

    if game.lower() in USER_ROM_GAMES:
        return user_rom_task_kwargs(game.lower(), **overrides)
    task = GAMES.get(game.lower())
    if task is None:
        raise ValueError(f"unknown game {game!r}; expected one of {sorted(GAMES) + sorted(USER_ROM_GAMES)}")
    life_penalty = overrides.pop("life_penalty", None)
    kw: dict[str, Any] = dict(
        actions=list(task.actions),
        frame_skip=task.frame_skip,
        press_frames=task.press_frames,
        reward=task.reward(life_penalty),
        terminate=[Condition(GAME_OVER, "u8", "==", 1)],
        reset_script=list(_START),
        noop_max=task.noop_max,
        max_episode_steps=task.max_episode_steps,
        obs="grey_half",
    )
    kw.update(overrides)
    if kw.get("rom") is None:
        kw["rom"] = rom_path(game)
    return kw
