"""PyBoy 2.8.1's game wrappers, selected by cartridge title in PyBoy's order."""

from __future__ import annotations

from .base import PyBoyGameWrapper
from .game_wrapper2048 import GameWrapper2048
from .kirby_dream_land import GameWrapperKirbyDreamLand
from .pandoras_blocks import GameWrapperPandorasBlocks
from .pokemon_gen1 import GameWrapperPokemonGen1
from .pokemon_pinball import GameWrapperPokemonPinball
from .super_mario_bros_deluxe import GameWrapperSuperMarioBrosDeluxe
from .super_mario_land import GameWrapperSuperMarioLand
from .tetris import GameWrapperTetris

__all__ = [
    "PyBoyGameWrapper",
    "GameWrapperTetris",
    "GameWrapperSuperMarioLand",
    "GameWrapperSuperMarioBrosDeluxe",
    "GameWrapperKirbyDreamLand",
    "GameWrapperPokemonGen1",
    "GameWrapperPokemonPinball",
    "GameWrapperPandorasBlocks",
    "GameWrapper2048",
    "select_game_wrapper",
]

# PyBoy's order of precedence (its plugin manager's list).
_ORDER = (
    GameWrapperSuperMarioBrosDeluxe,
    GameWrapperSuperMarioLand,
    GameWrapperTetris,
    GameWrapperPandorasBlocks,
    GameWrapperKirbyDreamLand,
    GameWrapperPokemonGen1,
    GameWrapperPokemonPinball,
    GameWrapper2048,
)


def select_game_wrapper(pyboy):
    """The wrapper for the cartridge's title, or the generic one."""
    for cls in _ORDER:
        wrapper = cls(pyboy)
        if wrapper.enabled():
            return wrapper
    return PyBoyGameWrapper(pyboy)
