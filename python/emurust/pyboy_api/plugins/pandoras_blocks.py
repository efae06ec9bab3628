"""Pandora's Blocks (title "DMGTRIS"): score, level, lines, the 10x18 playfield."""

from __future__ import annotations

import numpy as np

from ..constants import TILES
from .base import PyBoyGameWrapper

PIECE_NAMES = ("I", "Z", "S", "J", "L", "O", "T")
FIELD_EMPTY_TILE = 108
GAME_OVER_TILES = (145, 147, 167, 187)
TITLE_SCREEN_TILES = [171, 177, 179, 185, 187, 193, 195, 201, 203, 209, 211, 217, 219, 225]
GAME_STATE_ADDR, GAMEPLAY_STATE = 0xFFFD, 3
MODE_ADDR, MODE_GAME_OVER, MODE_PRE_GAME_OVER = 0xFFDB, 21, 24
NEXT_BLOCK_ADDR, LEVEL_ADDR, SCORE_ADDR = 0xFFD2, 0xFF90, 0xFFB8

mapping_compressed = np.zeros(TILES, dtype=np.uint8)
mapping_compressed[48:105] = 1  # piece tiles
mapping_compressed[[106, 107]] = 1  # clearing line, ghost piece
mapping_compressed[list(GAME_OVER_TILES)] = 2
mapping_minimal = np.ones(TILES, dtype=np.uint8)
mapping_minimal[[1, FIELD_EMPTY_TILE]] = 0
mapping_minimal[list(GAME_OVER_TILES)] = 2


class GameWrapperPandorasBlocks(PyBoyGameWrapper):
    cartridge_title = "DMGTRIS"
    mapping_compressed = mapping_compressed
    mapping_minimal = mapping_minimal

    def __init__(self, pyboy):
        self.score = 0
        self.level = 0
        self.lines = 0
        super().__init__(pyboy, game_area_section=(2, 0, 10, 18), game_area_follow_scxy=False)

    def _game_area_tiles(self):
        if self._tile_cache_invalid:
            self._cached_game_area_tiles = np.asarray(self.tilemap_background[2:12, :18], dtype=np.uint32)
            self._tile_cache_invalid = False
        return self._cached_game_area_tiles

    @staticmethod
    def _digits(values):
        n = 0
        for d in values:
            n = n * 10 + d
        return n

    def post_tick(self):
        self._tile_cache_invalid = True
        self._sprite_cache_invalid = True
        self.score = self._digits(self.pyboy.memory[SCORE_ADDR : SCORE_ADDR + 8])
        self.level = self._digits(self.pyboy.memory[LEVEL_ADDR : LEVEL_ADDR + 4])
        self.lines = self.level

    def _enter_gameplay(self):
        while self.pyboy.memory[GAME_STATE_ADDR] != GAMEPLAY_STATE:
            self.pyboy.button("start")
            for _ in range(8):
                self.pyboy.tick(1, False, False)
                if self.pyboy.memory[GAME_STATE_ADDR] == GAMEPLAY_STATE:
                    return

    def start_game(self, timer_div=None):
        while self.tilemap_background[3:17, 2] != TITLE_SCREEN_TILES:
            self.pyboy.tick(1, False, False)
        PyBoyGameWrapper.start_game(self, timer_div=timer_div)
        self._enter_gameplay()

    def reset_game(self, timer_div=None):
        PyBoyGameWrapper.reset_game(self, timer_div=timer_div)
        self._enter_gameplay()

    def game_area(self):
        return PyBoyGameWrapper.game_area(self)

    def next_block(self):
        return PIECE_NAMES[self.pyboy.memory[NEXT_BLOCK_ADDR]]

    def set_block(self, shape):
        if shape not in PIECE_NAMES:
            raise KeyError("Invalid block shape!")
        self.pyboy.memory[NEXT_BLOCK_ADDR] = PIECE_NAMES.index(shape)

    def game_over(self):
        return self.pyboy.memory[MODE_ADDR] in (MODE_GAME_OVER, MODE_PRE_GAME_OVER)

    def __repr__(self):
        return (
            f"Pandora's Blocks:\nScore: {self.score}\nLevel: {self.level}\nLines: {self.lines}\n" + super().__repr__()
        )
