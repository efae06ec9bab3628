"""The two 32x32 tile maps (background and window), as ``pyboy.api.tilemap.TileMap``."""

from __future__ import annotations

import numpy as np

from .. import _core
from .constants import HIGH_TILEMAP, LCDC_OFFSET, LOW_TILEDATA_NTILES, LOW_TILEMAP
from .tile import Tile


def _unpack_pair(obj):
    """``x, y = obj`` with the messages of PyBoy's compiled unpacking (Cython's, not CPython's)."""
    try:
        items = iter(obj)
    except TypeError:
        raise TypeError(f"'{type(obj).__name__}' object is not iterable") from None
    pair = []
    for item in items:
        pair.append(item)
        if len(pair) > 2:
            raise ValueError("too many values to unpack (expected 2)")
    if len(pair) < 2:
        raise ValueError(f"need more than {len(pair)} value{'' if len(pair) == 1 else 's'} to unpack")
    return pair[0], pair[1]


class TileMap(_core.TileMapBase):
    """Indexable as ``tilemap[x, y]`` with ints or slices; values are tile identifiers
    (or :class:`Tile` objects after ``use_tile_objects(True)``).

    ``tilemap[x, y]`` with two ints 0-31 is answered by the native base class's mapping slot
    (``emurust/_core``, pyboy_tilemap.rs: PyBoy's two bus reads), which also keeps
    ``map_offset``, ``signed_tile_data`` and ``_use_tile_objects``; every other form (and frame
    0, and tile objects) comes to :meth:`_getitem_py`."""

    def __init__(self, pyboy, select):
        self._pyboy = pyboy
        self._select = select
        self._use_tile_objects = False
        self._lcdc_bit = 0x40 if select == "WINDOW" else 0x08
        self._attach(pyboy._gb, pyboy, self._lcdc_bit)
        # PyBoy compares the frame counter with this never-updated value: the LCDC is re-read
        # on every access except during frame 0.
        self._frame_count_update = 0
        self.__refresh_lcdc()
        self.shape = (32, 32)

    def _refresh_lcdc(self):
        if self._frame_count_update == self._pyboy.frame_count:
            return 0
        self.__refresh_lcdc()
        return 0

    def __refresh_lcdc(self):
        lcdc = self._pyboy._host.read_cpu(LCDC_OFFSET)
        if self._select == "WINDOW":
            self.map_offset = HIGH_TILEMAP if lcdc & 0x40 else LOW_TILEMAP
        elif self._select == "BACKGROUND":
            self.map_offset = HIGH_TILEMAP if lcdc & 0x08 else LOW_TILEMAP
        else:
            raise KeyError(f"Invalid tilemap selected: {self._select}")
        self.signed_tile_data = not (lcdc & 0x10)

    def search_for_identifiers(self, identifiers):
        ids = np.asarray(self[:, :], dtype=np.uint32)
        return [[[int(v) for v in hit] for hit in np.argwhere(ids == i)] for i in identifiers]

    def _tile_address(self, column, row):
        if not 0 <= column < 32:
            raise IndexError("column is out of bounds. Value of 0 to 31 is allowed")
        if not 0 <= row < 32:
            raise IndexError("row is out of bounds. Value of 0 to 31 is allowed")
        return self.map_offset + 32 * row + column

    def tile(self, column, row):
        return Tile(self._pyboy, self.tile_identifier(column, row))

    def tile_identifier(self, column, row):
        self._refresh_lcdc()
        value = self._pyboy._host.read_cpu(self._tile_address(column, row))
        if self.signed_tile_data:
            return ((value ^ 0x80) - 128) + LOW_TILEDATA_NTILES
        return value

    def use_tile_objects(self, switch):
        self._use_tile_objects = switch

    @staticmethod
    def _fix_slice(s):
        step = 1 if s.step is None else s.step
        start = 0 if s.start is None else s.start
        stop = 32 if s.stop is None else s.stop
        if step < 0:
            raise ValueError("Reversed ranges are unsupported")
        if start > stop:
            raise ValueError("Invalid range")
        return start, stop, step

    def _getitem_py(self, xy):
        """``tilemap[xy]`` for every form the native slot does not answer."""
        if isinstance(xy, (int, slice)):
            x, y = xy, slice(None)
        else:
            x, y = _unpack_pair(xy)
        x_slice = isinstance(x, slice)
        y_slice = isinstance(y, slice)
        if x_slice:
            x = self._fix_slice(x)
        else:
            assert isinstance(x, int)
        if y_slice:
            y = self._fix_slice(y)
        else:
            assert isinstance(y, int)
        xs = list(range(*x)) if x_slice else [x]
        ys = list(range(*y)) if y_slice else [y]
        if self._use_tile_objects:
            rows = [[self.tile(i, j) for i in xs] for j in ys]
        else:
            rows = self._identifiers(xs, ys)
        if x_slice and y_slice:
            return rows
        if x_slice:
            return rows[0] if rows else []
        if y_slice:
            return [r[0] for r in rows] if xs else []
        return rows[0][0]

    def _identifiers(self, xs, ys):
        """``tile_identifier`` for rows ``ys`` x columns ``xs``, read in one core call (the same
        bus reads, in the same order, as one call per tile)."""
        for j in ys:
            for i in xs:
                self._tile_address(i, j)  # PyBoy's IndexError for the first bad coordinate
            if not xs:
                break
        if not xs or not ys:
            return [[] for _ in ys]
        refresh = self._frame_count_update != self._pyboy.frame_count
        rows, self.map_offset, self.signed_tile_data = self._pyboy._host.tilemap_read(
            0x40 if self._select == "WINDOW" else 0x08, xs, ys, refresh, self.map_offset, self.signed_tile_data
        )
        return rows

    def __repr__(self):
        self._refresh_lcdc()
        objects = self._use_tile_objects
        self.use_tile_objects(False)
        rows = self[:, :]
        self.use_tile_objects(objects)
        head = (
            f"Tile Map Address: {self.map_offset:#0{6}x}, Signed Tile Data: {'Yes' if self.signed_tile_data else 'No'}\n"
            + " " * 5
            + "".join(f"{i: <4}" for i in range(32))
            + "\n"
            + "_" * (4 * 32 + 2)
            + "\n"
        )
        return head + "\n".join(f"{i: <3}| " + "".join(str(t).ljust(4) for t in line) for i, line in enumerate(rows))
