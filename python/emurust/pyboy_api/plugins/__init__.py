"""PyBoy 2.8.1's game wrappers, selected by cartridge title in PyBoy's order."""

from __future__ import annotations

from .base import PyBoyGameWrapper
from .game_wrapper2048 import GameWrapper2048
from .kirby_dream_land import GameWrapperKirbyDreamLand
from .pandoras_blocks import GameWrapperPandorasBlocks
from .pokemon_gen1 import GameWrapperPokemonGen1
from .super_mario_land import GameWrapperSuperMarioLand
from .tetris import GameWrapperTetris

__all__ = [
    "PyBoyGameWrapper",
    "GameWrapperTetris",
    "GameWrapperSuperMarioLand",
    "GameWrapperKirbyDreamLand",
    "GameWrapperPokemonGen1",
    "GameWrapperPandorasBlocks",
    "GameWrapper2048",
    "select_game_wrapper",
]

#: Wrappers PyBoy ships that emurust does not provide: title -> what to say.
_MISSING = {
    "MARIO DELUXAHY": "the Super Mario Bros. Deluxe game wrapper (a Game Boy Color game)",
    "POKEPINBALLVPH": "the Pokémon Pinball game wrapper",
}

# PyBoy's order of precedence (its plugin manager's list).
_ORDER = (
    "MARIO DELUXAHY",
    GameWrapperSuperMarioLand,
    GameWrapperTetris,
    GameWrapperPandorasBlocks,
    GameWrapperKirbyDreamLand,
    GameWrapperPokemonGen1,
    "POKEPINBALLVPH",
    GameWrapper2048,
)


def select_game_wrapper(pyboy):
    """(wrapper, None) for the cartridge, or (None, message) when PyBoy would use a wrapper
    emurust lacks (``PyBoy.game_wrapper`` then raises NotImplementedError)."""
    for entry in _ORDER:
        if isinstance(entry, str):
            if pyboy.cartridge_title == entry:
                return None, f"emurust.PyBoy: {_MISSING[entry]} is not available"
            continue
        wrapper = entry(pyboy)
        if wrapper.enabled():
            return wrapper, None
    return PyBoyGameWrapper(pyboy), None
