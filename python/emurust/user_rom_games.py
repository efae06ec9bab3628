"""RL tasks for commercial Game Boy games whose ROM the user brings (emurust ships none).

::

    gymnasium.make_vec("emurust/Tetris-v0", num_envs=64, rom="Tetris.gb", start_state="tetris.state")
    gymnasium.make("emurust/PokemonRed-v0", rom="PokemonRed.gb", start_state="has_pokedex.state")
    emurust.sb3.EmurustVecEnv(16, game="super_mario_land", rom="SML.gb", start_state=...)

``rom=`` is required; the cartridge header's title must be the game's (as PyBoy selects its
game wrappers), else a ValueError names the expected and the found title. ``start_state`` (a
PyBoy or emurust save state, e.g. one saved after PyBoy's ``game_wrapper.start_game()``) is
where every episode starts; without it episodes start at power-on, on the title screen.

Rewards and episode ends are :mod:`emurust.rewards` specs computed in Rust from memory, with
the games' addresses taken from emurust's game wrappers (:mod:`emurust.pyboy_api.plugins`):

- **Tetris** (title ``TETRIS``): score difference + 10 x lines difference, the score and lines
  read from the digit tiles on screen as PyBoy's Tetris wrapper reads them; the episode
  terminates at the game-over screen.
- **Super Mario Land** (``SUPER MARIOLAND``): the difference of PyBoy's wrapper fitness
  ``10000 x lives + score + 10 x time left + 10 x best level progress``; level progress is
  ``16 x level block + Mario's x + (SCX of screen line 16 - 7) mod 16`` as the wrapper
  computes it (the fine scroll is kept only in the LCD register the game sets for the play
  field, read as that line was drawn). Terminates when the lives reach 0 or at the game-over
  screen.
- **Kirby's Dream Land** (``KIRBY DREAM LAN``): score difference + 10 x health difference;
  terminates at game over (no lives left and no health).
- **2048** (``2048``, the homebrew PyBoy tests with): score difference; terminates at game
  over. Its variables are found through its symbol file (``.sym`` beside the ROM, or
  ``symbols=``), as PyBoy's 2048 wrapper finds them.
- **Pokémon Red/Blue** (``POKEMON RED`` / ``POKEMON BLUE``), the rewards of the usual
  PyBoy-based Pokémon Red agents: 4 x event flags set (popcount of wEventFlags, D747-D886),
  the sum of the party's six level bytes, 10 x badges (popcount of D356), 0.1 per new
  ``(map, x, y)`` position visited this episode, and 4 x every rise of the party's HP fraction
  (sum of HP / sum of max HP: healing); all as differences. No termination (truncated after
  ``max_episode_steps``).

Any constructor argument overrides the task's (``reward=``, ``frame_skip=``, ...).
"""

from __future__ import annotations

from emurust._core import read_user_file

import os
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .pyboy_api.plugins import game_wrapper2048 as g2048
from .pyboy_api.plugins import kirby_dream_land as kirby
from .pyboy_api.plugins import pokemon_gen1 as pokemon
from .pyboy_api.plugins import super_mario_land as sml
from .pyboy_api.plugins import tetris
from .pyboy_api.symbols import symbol_table
from .rewards import All, Condition, Digits, LineRegister, Popcount, Ratio, Sum, Term, Visited
from .rom_header import cartridge_title

__all__ = ["USER_ROM_GAMES", "UserRomGame", "user_rom_task_kwargs", "check_title"]


def _map_cell(map_addr: int, column: int, row: int) -> int:
    """Address of a cell of a 32x32 tile map."""
    return map_addr + 32 * row + column


def _screen_number(map_addr: int, digits: tuple, blank: int, **kw: Any) -> Digits:
    column, row, length = digits
    return Digits(_map_cell(map_addr, column, row), length, blank=blank, **kw)


def _tetris(_: "_RomInfo") -> tuple[list, list]:
    m = tetris.BACKGROUND_MAP_ADDR
    reward = [
        _screen_number(m, tetris.SCORE_DIGITS, tetris.BLANK_TILE, weight=1.0, delta=True),
        _screen_number(m, tetris.LINES_DIGITS, tetris.BLANK_TILE, weight=10.0, delta=True),
    ]
    terminate = [Condition(_map_cell(m, *tetris.GAME_OVER_CELL), "u8", "==", tetris.GAME_OVER_TILE)]
    return reward, terminate


def _super_mario_land(_: "_RomInfo") -> tuple[list, list]:
    # Status-bar digits as map bytes: PyBoy's tile numbers plus the wrapper's offset (-256).
    blank = sml.BLANK_TILE + sml.TILE_OFFSET
    reward = [
        Term(sml.ADDR_LIVES_LEFT, "bcd1", weight=10000.0, delta=True),
        _screen_number(sml.BACKGROUND_MAP_ADDR, sml.SCORE_DIGITS, blank, weight=1.0, delta=True),
        Term(sml.ADDR_TIME_LEFT, "bcd2le", weight=10.0, delta=True),
        Sum((sml.ADDR_LEVEL_BLOCK, sml.ADDR_MARIO_X), scales=(16.0, 1.0), weight=10.0, delta="new_max",
            lines=(LineRegister(sml.SCROLL_LINE, "scx", add=-7, modulo=16),)),
    ]
    terminate = [
        Condition(sml.ADDR_LIVES_LEFT, "bcd1", "==", 0),
        Condition(sml.ADDR_GAME_OVER, "u8", "==", sml.GAME_OVER_VALUE),
    ]
    return reward, terminate


def _kirby(_: "_RomInfo") -> tuple[list, list]:
    # The score's digit bytes are worth 10000 down to 10: the digits' number times 10.
    reward = [
        Digits(kirby.ADDR_SCORE_DIGITS, kirby.SCORE_DIGITS, weight=10.0, delta=True),
        Term(kirby.ADDR_HEALTH, "u8", weight=10.0, delta=True),
    ]
    # The wrapper's game over: no lives left (the lives byte holds lives + 1) and no health.
    terminate = [All(Condition(kirby.ADDR_LIVES, "u8", "==", 1), Condition(kirby.ADDR_HEALTH, "u8", "==", 0))]
    return reward, terminate


def _2048(info: "_RomInfo") -> tuple[list, list]:
    found = symbol_table(info.path, info.symbols)
    names = (g2048.SYMBOL_SCORE, g2048.SYMBOL_STATE)
    missing = [n for n in names if n not in found]
    if missing:
        where = info.symbols or (f"beside {info.path}" if info.path else "(the ROM was given as bytes)")
        raise ValueError(
            f"emurust/2048-v0 finds the game's variables through its symbol file, as PyBoy's 2048 wrapper does: "
            f"symbols {missing} not found in a .sym/.map file {where}; pass symbols='path/to/2048.sym'"
        )
    score, state = (found[n][1] for n in names)
    return [Term(score, "u16le", 1.0, True)], [Condition(state, "u8", "==", g2048.STATE_GAMEOVER)]


def _party(offset: int) -> tuple[int, ...]:
    return tuple(pokemon.PARTY_MONS_ADDRESS + i * pokemon.PARTY_MON_SIZE + offset for i in range(pokemon.PARTY_LENGTH))


def _pokemon_red(_: "_RomInfo") -> tuple[list, list]:
    events = pokemon.EVENT_FLAGS_END_ADDRESS - pokemon.EVENT_FLAGS_ADDRESS + 1
    reward = [
        Popcount(pokemon.EVENT_FLAGS_ADDRESS, events, weight=4.0, delta=True),
        Sum(_party(pokemon.PARTY_MON_LEVEL_OFFSET), "u8", weight=1.0, delta=True),
        Popcount(pokemon.OBTAINED_BADGES_ADDRESS, 1, weight=10.0, delta=True),
        Visited((pokemon.CURRENT_MAP_ADDRESS, pokemon.PLAYER_X_ADDRESS, pokemon.PLAYER_Y_ADDRESS), weight=0.1),
        Ratio(_party(pokemon.PARTY_MON_HP_OFFSET), _party(pokemon.PARTY_MON_MAX_HP_OFFSET), "u16be",
              weight=4.0, delta="increase"),
    ]
    return reward, []


@dataclass(frozen=True)
class _RomInfo:
    path: Optional[str]
    symbols: Optional[str]


@dataclass(frozen=True)
class UserRomGame:
    """A task for a game the user brings the ROM of: which cartridge titles it accepts, its
    reward/termination spec (built from the ROM's location: 2048 needs its symbol file) and
    its stepping defaults."""

    name: str
    env_id: str
    titles: tuple
    spec: Callable[[_RomInfo], tuple[list, list]]
    actions: tuple
    frame_skip: int = 8
    press_frames: int = 8
    max_episode_steps: int = 10000


USER_ROM_GAMES: dict[str, UserRomGame] = {
    g.name: g
    for g in (
        UserRomGame("tetris", "emurust/Tetris-v0", (tetris.GameWrapperTetris.cartridge_title,), _tetris,
                    ("noop", "left", "right", "down", "a", "b"), frame_skip=8, press_frames=4),
        UserRomGame("super_mario_land", "emurust/SuperMarioLand-v0",
                    (sml.GameWrapperSuperMarioLand.cartridge_title,), _super_mario_land,
                    ("noop", "right", "left", "a", "a+right", "b+right", "a+b+right", "down"), frame_skip=4,
                    press_frames=4),
        UserRomGame("kirby", "emurust/Kirby-v0", (kirby.GameWrapperKirbyDreamLand.cartridge_title,), _kirby,
                    ("noop", "left", "right", "up", "down", "a", "b", "a+right", "a+left"), frame_skip=4,
                    press_frames=4),
        UserRomGame("2048", "emurust/2048-v0", (g2048.GameWrapper2048.cartridge_title,), _2048,
                    ("up", "down", "left", "right"), frame_skip=16, press_frames=4, max_episode_steps=5000),
        UserRomGame("pokemon_red", "emurust/PokemonRed-v0", pokemon.CARTRIDGE_TITLES, _pokemon_red,
                    ("noop", "up", "down", "left", "right", "a", "b", "start"), frame_skip=24, press_frames=8,
                    max_episode_steps=20480),
    )
}


def _rom_bytes_and_path(rom: Any) -> tuple[bytes, Optional[str]]:
    if isinstance(rom, (str, os.PathLike)):
        path = os.fspath(rom)
        return read_user_file(path, "ROM"), path
    if isinstance(rom, (bytes, bytearray, memoryview)):
        return bytes(rom), None
    raise TypeError(f"rom must be a path or the ROM's bytes, got {type(rom).__name__}")


def check_title(task: UserRomGame, rom: bytes) -> None:
    """ValueError unless the ROM's cartridge title is one the task accepts."""
    if len(rom) < 0x150:
        raise ValueError(f"{task.env_id}: the ROM is too small ({len(rom)} bytes) to hold a cartridge header")
    found = cartridge_title(rom)
    if found not in task.titles:
        expected = " or ".join(repr(t) for t in task.titles)
        raise ValueError(
            f"{task.env_id}: this ROM is not the expected game: its cartridge title is {found!r}, expected {expected}"
        )


def user_rom_task_kwargs(game: str, **overrides: Any) -> dict[str, Any]:
    """Constructor arguments of the environments for the user-ROM game ``game``; ``overrides``
    win. Needs ``rom=`` (checked against the game's cartridge title) and, for 2048 when the
    symbol file is not beside the ROM, ``symbols=``."""
    task = USER_ROM_GAMES[game]
    rom = overrides.get("rom")
    symbols = overrides.pop("symbols", None)
    if rom is None:
        raise ValueError(
            f"{task.env_id} needs rom=: the path (or bytes) of your own {' / '.join(task.titles)} ROM "
            "(emurust does not ship commercial games)"
        )
    data, path = _rom_bytes_and_path(rom)
    check_title(task, data)
    reward, terminate = task.spec(_RomInfo(path, os.fspath(symbols) if symbols is not None else None))
    kw: dict[str, Any] = dict(
        actions=list(task.actions),
        frame_skip=task.frame_skip,
        press_frames=task.press_frames,
        reward=reward,
        terminate=terminate,
        max_episode_steps=task.max_episode_steps,
        obs="grey_half",
    )
    kw.update(overrides)
    kw["rom"] = data
    return kw
