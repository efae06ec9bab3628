"""``PyBoy.gameshark``: GameShark codes (type 01: write a byte every frame)."""

from __future__ import annotations

from .utils import PyBoyInvalidInputException


class GameShark:
    def __init__(self, memory):
        self.memory = memory
        self.cheats = {}
        self.enabled = False

    @staticmethod
    def _convert_cheat(code):
        """(type, value, address) of an 8-digit code ``TTVVLLHH`` (address little-endian)."""
        if len(code) != 8:
            raise ValueError("Invalid cheat code length. Cheat code must be 8 characters long.")
        kind = int(code[0:2], 16)
        value = int(code[2:4], 16)
        address = int(code[6:8] + code[4:6], 16)
        if address < 0x8000:
            raise ValueError("Invalid GameShark code provided. Address not in the RAM range")
        return kind, value, address

    def _get_value(self, kind, address):
        if kind != 0x01:
            raise ValueError("Invalid GameShark type", kind)
        return self.memory[address]

    def _set_value(self, kind, value, address):
        if kind != 0x01:
            raise ValueError("Invalid GameShark type", kind)
        self.memory[address] = value

    def add(self, code):
        self.enabled = True
        kind, value, address = self._convert_cheat(code)
        if code in self.cheats:
            raise PyBoyInvalidInputException("GameShark code already applied!")
        self.cheats[code] = (self._get_value(kind, address), (kind, value, address))
        return 0

    def remove(self, code, restore_value=True):
        if code not in self.cheats:
            raise ValueError("GameShark code cannot be removed. Hasn't been applied.")
        original, (kind, _, address) = self.cheats.pop(code)
        if restore_value:
            self._set_value(kind, original, address)
        if not self.cheats:
            self.enabled = False
        return 0

    def clear_all(self, restore_value=True):
        for code in list(self.cheats):
            self.remove(code, restore_value)
        return 0

    def tick(self):
        if not self.enabled:
            return 0
        for _, (kind, value, address) in self.cheats.values():
            self._set_value(kind, value, address)
        return 0
