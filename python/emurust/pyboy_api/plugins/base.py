"""The generic game wrapper (PyBoy's ``PyBoyGameWrapper``): a tile-level "game area" and
start/reset through a saved state. Game-specific wrappers derive from it."""

from __future__ import annotations

import io
import random

import numpy as np

from ..constants import TILES_CGB
from ..sprite import sprites_from_oam
from ..utils import PyBoyException


class PyBoyGameWrapper:
    """Base of all game wrappers; also the wrapper for games PyBoy has none for."""

    cartridge_title = None
    mapping_one_to_one = np.arange(TILES_CGB, dtype=np.uint8)

    def __init__(self, pyboy, game_area_section=(0, 0, 32, 32), game_area_follow_scxy=False):
        self.pyboy = pyboy
        self.cgb = pyboy._cgb
        self.tilemap_use_background = True
        self.mapping = np.arange(TILES_CGB, dtype=np.uint32)
        self.sprite_offset = 0
        self.game_has_started = False
        self._tile_cache_invalid = True
        self._sprite_cache_invalid = True
        self.shape = None
        self._set_dimensions(*game_area_section, game_area_follow_scxy)
        self.saved_state = io.BytesIO()
        self.tilemap_background = pyboy.tilemap_background
        self.tilemap_window = pyboy.tilemap_window
        self._cached_game_area_tiles = None
        # The cached tiles as a native-int index (numpy casts a uint32 index on every use)
        # and the tiles array it was made from.
        self._game_area_index = None
        self._game_area_index_of = None
        self._cached_sprites_on_screen = []

    def enabled(self):
        return self.cartridge_title is None or self.pyboy.cartridge_title == self.cartridge_title

    def post_tick(self):
        self._tile_cache_invalid = True
        self._sprite_cache_invalid = True

    def stop(self):
        pass

    def _set_timer_div(self, timer_div):
        timer_div = random.getrandbits(8) if timer_div is None else timer_div & 0xFF
        self.pyboy._host.set_div(timer_div)

    def start_game(self, timer_div=None):
        """Remember the current state as the game's start (for :meth:`reset_game`) and set
        DIV to ``timer_div`` (random when None)."""
        self.game_has_started = True
        self.saved_state.seek(0)
        self.pyboy.save_state(self.saved_state)
        self._set_timer_div(timer_div)

    def reset_game(self, timer_div=None):
        """Go back to the state saved by :meth:`start_game`."""
        if not self.game_has_started:
            raise PyBoyException("Tried to reset game, but it hasn't been started yet!")
        self.saved_state.seek(0)
        self.pyboy.load_state(self.saved_state)
        self._set_timer_div(timer_div)
        self.post_tick()

    def game_over(self):
        raise NotImplementedError("game_over not implemented in game wrapper")

    def _sprites_on_screen(self):
        if self._sprite_cache_invalid:
            self._cached_sprites_on_screen = sprites_from_oam(self.pyboy, on_screen_only=True)
            self._sprite_cache_invalid = False
        return self._cached_sprites_on_screen

    def _tilemap_in_use(self):
        return self.tilemap_background if self.tilemap_use_background else self.tilemap_window

    def _game_area_tiles(self):
        if self._tile_cache_invalid:
            xx, yy, width, height = self.game_area_section
            tilemap = self._tilemap_in_use()
            if self.game_area_follow_scxy:
                lines = self.pyboy.screen.tilemap_position_list
                tiles = np.ndarray(shape=(height, width), dtype=np.uint32)
                for y in range(height):
                    scx = lines[(yy + y) * 8][0] // 8
                    scy = lines[(yy + y) * 8][1] // 8
                    # One core call per row: the same bus reads, in order, as a
                    # tile_identifier call per tile.
                    xs = [(xx + x + scx) % 32 for x in range(width)]
                    tiles[y, :] = tilemap._identifiers(xs, [(yy + y + scy) % 32])[0]
                self._cached_game_area_tiles = tiles
            else:
                self._cached_game_area_tiles = np.asarray(tilemap[xx : xx + width, yy : yy + height], dtype=np.uint32)
            self._tile_cache_invalid = False
        return self._cached_game_area_tiles

    def use_background(self, value):
        self.tilemap_use_background = value

    def game_area(self):
        """The game area as a (height, width) uint32 array of mapped tile identifiers, with
        the sprites on screen drawn over it (mapped, plus ``sprite_offset``)."""
        # The caches checked here, not through their methods: a per-step call.
        tiles = self._game_area_tiles() if self._tile_cache_invalid else self._cached_game_area_tiles
        if tiles is not self._game_area_index_of:
            self._game_area_index = tiles.astype(np.intp)
            self._game_area_index_of = tiles
        tiles = self.mapping[self._game_area_index]
        sprites = self._sprites_on_screen() if self._sprite_cache_invalid else self._cached_sprites_on_screen
        if not sprites:
            return tiles
        xx, yy, width, height = self.game_area_section
        for s in sprites:
            x = (s.x // 8) - xx
            y = (s.y // 8) - yy
            if 0 <= x < width:
                if 0 <= y < height:
                    tiles[y][x] = self.mapping[s.tile_identifier] + self.sprite_offset
                if len(s.tiles) == 2 and 0 <= y + 1 < height:
                    tiles[y + 1][x] = self.mapping[s.tile_identifier + 1] + self.sprite_offset
        return tiles

    def game_area_mapping(self, mapping, sprite_offset):
        self.mapping = np.asarray(mapping, dtype=np.uint32)
        self.sprite_offset = sprite_offset & 0xFFFF  # a uint16 in PyBoy

    def game_area_annotations(self):
        return []

    def _set_dimensions(self, x, y, width, height, follow_scrolling=True):
        self.shape = (width, height)
        self.game_area_section = (x, y, width, height)
        self.game_area_follow_scxy = follow_scrolling

    def _sum_number_on_screen(self, x, y, length, blank_tile_identifier, tile_identifier_offset):
        """The decimal number drawn with digit tiles on row ``y`` from column ``x``."""
        number = 0
        for i, tile in enumerate(self.tilemap_background[x : x + length, y]):
            if tile != blank_tile_identifier:
                number += (tile + tile_identifier_offset) * 10 ** (length - 1 - i)
        return number

    def __repr__(self):
        sprites = "\n".join(str(s) for s in self._sprites_on_screen())
        header = " " * 4 + "".join(f"{i: >4}" for i in range(self.shape[0])) + "\n" + "_" * (4 * self.shape[0] + 4)
        rows = "\n".join(
            (f"{i: <3}|" + "".join(str(t).rjust(4) for t in line)).strip() for i, line in enumerate(self.game_area())
        )
        return "Sprites on screen:\n" + sprites + "\n" + "Tiles on screen:\n" + header + "\n" + rows
