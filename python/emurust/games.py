"""Ready-made RL tasks for emurust's own homebrew games (``games/``: Dodge, Snake, Runner).

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
from dataclasses import dataclass, field
from typing import Any

from .rewards import Condition, Term

__all__ = ["GAMES", "GameTask", "rom_path", "task_kwargs"]

SCORE, LIVES, GAME_OVER, STATE = 0xC000, 0xC002, 0xC003, 0xC008

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
    extra: dict = field(default_factory=dict)

    def reward(self, life_penalty: float | None = None) -> list[Term]:
        p = self.life_penalty if life_penalty is None else life_penalty
        terms = [Term(SCORE, "u16le", 1.0, True)]
        if p:
            # lives 3 -> 2 is a delta of -1: weight p gives -p per life lost.
            terms.append(Term(LIVES, "u8", float(p), True))
        return terms


GAMES: dict[str, GameTask] = {
    # Move left/right (up/down a little), A fires one shot: +10 per rock shot, +1 per 0.5 s alive.
    "dodge": GameTask(
        "dodge",
        "dodge.gb",
        actions=("noop", "left", "right", "up", "down", "a", "a+left", "a+right"),
        frame_skip=8,
        press_frames=8,
        max_episode_steps=3000,
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
    """Constructor arguments of the environments for ``game``; ``overrides`` win."""
    task = GAMES.get(game.lower())
    if task is None:
        raise ValueError(f"unknown game {game!r}; expected one of {sorted(GAMES)}")
    life_penalty = overrides.pop("life_penalty", None)
    kw: dict[str, Any] = dict(
        actions=list(task.actions),
        frame_skip=task.frame_skip,
        press_frames=task.press_frames,
        reward=task.reward(life_penalty),
        terminate=[Condition(GAME_OVER, "u8", "==", 1)],
        reset_script=list(_START),
        noop_max=30,
        max_episode_steps=task.max_episode_steps,
        obs="grey_half",
    )
    kw.update(task.extra)
    kw.update(overrides)
    if kw.get("rom") is None:
        kw["rom"] = rom_path(game)
    return kw
