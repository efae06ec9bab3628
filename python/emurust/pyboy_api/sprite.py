"""Sprites: the 40 object slots of OAM, decoded as ``pyboy.api.sprite.Sprite``."""

from __future__ import annotations

from .constants import SPRITES, TILES
from .tile import Tile
from .utils import PyBoyOutOfBoundsException


class Sprite:
    """One OAM entry as it is when created (reads go through the bus, as in PyBoy).

    The five bytes are read when the sprite is made; the attributes derived from them (flags,
    shape, tiles, on_screen) are computed when first read, from those bytes, so they are the
    values of creation time, as PyBoy's, without the cost of building them for every sprite
    an RL step asks for."""

    # Fixed attributes, as PyBoy's compiled class: no instance dict to build per sprite.
    __slots__ = ("_pyboy", "_offset", "_sprite_index", "_attr", "_height", "_tiles", "y", "x", "tile_identifier")

    def __init__(self, pyboy, sprite_index, _raw=None):
        if not (0 <= sprite_index < SPRITES):
            raise PyBoyOutOfBoundsException(f"Sprite index of {sprite_index} is out of range (0-{SPRITES})")
        if _raw is None:  # PyBoy's five bus reads, in one core call
            _raw = pyboy._host.oam_entry(sprite_index)
        oam_y, oam_x, tile, attr, lcdc = _raw
        self._pyboy = pyboy
        self._offset = sprite_index * 4
        self._sprite_index = sprite_index
        self._attr = attr
        self._height = 16 if lcdc & 0x04 else 8
        self._tiles = None
        self.y = oam_y - 16
        self.x = oam_x - 8
        # Bank 1 tiles (CGB attribute bit 3) are numbered after bank 0's.
        self.tile_identifier = tile + TILES if pyboy._cgb and attr & 0x08 else tile

    @property
    def attr_obj_bg_priority(self):
        return self._attr & 0x80 != 0

    @property
    def attr_y_flip(self):
        return self._attr & 0x40 != 0

    @property
    def attr_x_flip(self):
        return self._attr & 0x20 != 0

    @property
    def attr_palette_number(self):
        return self._attr & 0b111 if self._pyboy._cgb else (self._attr >> 4) & 1

    @property
    def attr_cgb_bank_number(self):
        return bool(self._pyboy._cgb and self._attr & 0x08)

    @property
    def shape(self):
        return (8, self._height)

    @property
    def tiles(self):
        if self._tiles is None:
            tiles = [Tile(self._pyboy, self.tile_identifier)]
            if self._height == 16:
                tiles.append(Tile(self._pyboy, self.tile_identifier + 1))
            self._tiles = tiles
        return self._tiles

    @property
    def on_screen(self):
        return -self._height < self.y < 144 and -8 < self.x < 160

    @property
    def sprite_index(self):
        # PyBoy 2.8.1 declares this attribute (readonly) but never assigns it: it reads 0 for
        # every sprite. The index itself is in repr() and `_sprite_index`, as there.
        return 0

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
