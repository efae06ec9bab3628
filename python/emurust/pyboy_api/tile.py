"""Tiles: 8x8 pixel graphics in VRAM, addressed by PyBoy's unified tile identifier."""

from __future__ import annotations

import numpy as np

from . import utils
from .constants import LOW_TILEDATA, TILES, TILES_CGB, VRAM_OFFSET
from .utils import PyBoyOutOfBoundsException

try:
    from PIL import Image
except ImportError:
    Image = None

# Bit 7 of a tile row's bytes is its leftmost pixel.
_BIT_OF_COLUMN = np.arange(7, -1, -1, dtype=np.uint8)


class Tile:
    """As ``pyboy.api.tile.Tile``: identifier 0-383 (DMG); 0-255 are at 0x8000, 256-383 at
    0x9000 (the signed tile data area)."""

    # Fixed attributes, as PyBoy's compiled class: no instance dict to build per tile.
    __slots__ = ("_pyboy", "data_address", "vram_bank", "tile_identifier", "shape", "raw_buffer_format")

    def __init__(self, pyboy, identifier):
        self._pyboy = pyboy
        limit = TILES_CGB if pyboy._cgb else TILES
        if not (0 <= identifier < limit):
            raise PyBoyOutOfBoundsException("Identifier out of range")
        self.data_address = LOW_TILEDATA + 16 * (identifier % TILES)
        self.vram_bank = 0 if identifier < TILES else 1
        self.tile_identifier = identifier
        self.shape = (8, 8)
        self.raw_buffer_format = "RGBA"

    def _image_data(self):
        """(8, 8, 4) uint8: the tile's pixels through BGP and the colour palette."""
        if self.vram_bank != 0:
            raise NotImplementedError("emurust.PyBoy: tiles in CGB VRAM bank 1 (Tile.ndarray/image)")
        gb = self._pyboy._gb
        host = self._pyboy._host
        start = self.data_address - VRAM_OFFSET
        raw = np.frombuffer(bytes(host.vram_byte(start + k) for k in range(16)), dtype=np.uint8)
        lo = (raw[0::2, None] >> _BIT_OF_COLUMN) & 1
        hi = (raw[1::2, None] >> _BIT_OF_COLUMN) & 1
        colour = lo | (hi << 1)
        bgp = gb.read(0xFF47)
        shade = (bgp >> (2 * colour.astype(np.uint16))) & 3
        return self._pyboy._palette_rgba[shade]

    def image(self):
        """The tile as a PIL image, exactly as PyBoy 2.8.1's compiled wheel makes it (needs
        Pillow): PIL reads the packed 32-bit pixels as signed integers and converts those to
        RGBA, which is not the tile's colours; use :meth:`ndarray` for those."""
        if Image is None:
            utils.PillowImportError()._raise_import_error()
        packed = self._image_data().view(np.uint32).reshape(8, 8)
        return Image.fromarray(packed).convert(self.raw_buffer_format)

    def ndarray(self):
        """The tile as an (8, 8, 4) uint8 RGBA array."""
        return self._image_data()

    def __eq__(self, other):
        return self.data_address == other.data_address and self.vram_bank == other.vram_bank

    def __repr__(self):
        return f"Tile: {self.tile_identifier}"
