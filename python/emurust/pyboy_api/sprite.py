"""Sprites: the 40 object slots of OAM, decoded as ``pyboy.api.sprite.Sprite``."""

from __future__ import annotations

from .constants import SPRITES, TILES
from .tile import Tile
from .utils import PyBoyOutOfBoundsException


class Sprite:
    """One OAM entry as it is when created (reads go through the bus, as in PyBoy)."""

    def __init__(self, pyboy, sprite_index, _raw=None):
        if not (0 <= sprite_index < SPRITES):
            raise PyBoyOutOfBoundsException(f"Sprite index of {sprite_index} is out of range (0-{SPRITES})")
        self._offset = sprite_index * 4
        self._sprite_index = sprite_index
        if _raw is None:  # PyBoy's five bus reads, in one core call
            _raw = pyboy._host.oam_entry(sprite_index)
        oam_y, oam_x, tile, attr, lcdc = _raw
        self.y = oam_y - 16
        self.x = oam_x - 8
        self.tile_identifier = tile
        self.attr_obj_bg_priority = bool(attr & 0x80)
        self.attr_y_flip = bool(attr & 0x40)
        self.attr_x_flip = bool(attr & 0x20)
        if pyboy._cgb:
            self.attr_palette_number = attr & 0b111
            self.attr_cgb_bank_number = bool(attr & 0x08)
        else:
            self.attr_palette_number = (attr >> 4) & 1
            self.attr_cgb_bank_number = False
        if self.attr_cgb_bank_number:
            self.tile_identifier += TILES
        height = 16 if lcdc & 0x04 else 8
        self.shape = (8, height)
        self.tiles = [Tile(pyboy, self.tile_identifier)]
        if height == 16:
            self.tiles.append(Tile(pyboy, self.tile_identifier + 1))
        self.on_screen = -height < self.y < 144 and -8 < self.x < 160

    @property
    def sprite_index(self):
        return self._sprite_index

    def __eq__(self, other):
        return self._offset == other._offset

    def __repr__(self):
        tiles = ", ".join(str(t) for t in self.tiles)
        return (
            f"Sprite [{self._sprite_index}]: Position: ({self.x}, {self.y}), Shape: {self.shape}, "
            f"Tiles: ({tiles}), On screen: {self.on_screen}"
        )


def sprites_from_oam(pyboy, on_screen_only):
    """All 40 sprites (or those on screen) from one read of OAM and LCDC: the same bus reads
    PyBoy makes per sprite, which give the same values between ticks."""
    oam, lcdc = pyboy._host.oam_read()
    height = 16 if lcdc & 0x04 else 8
    out = []
    for i in range(SPRITES):
        y, x = oam[4 * i] - 16, oam[4 * i + 1] - 8
        if on_screen_only and not (-height < y < 144 and -8 < x < 160):
            continue
        out.append(Sprite(pyboy, i, (oam[4 * i], oam[4 * i + 1], oam[4 * i + 2], oam[4 * i + 3], lcdc)))
    return out
