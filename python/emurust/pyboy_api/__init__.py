"""PyBoy 2.8.1's API on the emurust core: ``from emurust import PyBoy``.

User surface: :class:`PyBoy` and what it hands out (``screen``, ``sound``, ``memory``,
``register_file``, tile maps, sprites, tiles, ``memory_scanner``, ``game_wrapper``) and
:mod:`emurust.pyboy_api.utils` (``WindowEvent``, exceptions). Tooling lives in
``_bridge`` (core creation: the one place where options needing core support are wired).
"""

from .memory import PyBoyMemoryView, PyBoyRegisterFile
from .pyboy import PyBoy
from .utils import WindowEvent

__all__ = ["PyBoy", "PyBoyMemoryView", "PyBoyRegisterFile", "WindowEvent"]
