"""Tetris (cartridge title "TETRIS"): score, level, lines, the 10x18 playfield."""

from __future__ import annotations

import numpy as np

from ..constants import TILES
from .base import PyBoyGameWrapper
from ..log import get_logger

_TETROMINOES = {"L": 0, "J": 4, "I": 8, "O": 12, "Z": 16, "S": 20, "T": 24}
_TETROMINO_NAMES = {v: k for k, v in _TETROMINOES.items()}
NEXT_TETROMINO_ADDR = 0xC213
# Tetris draws its game screen on the background map at 0x9800 (LCDC bit 3 clear). Numbers are
# digit tiles 0-9, the blank tile 47 where a number has no digit yet.
BACKGROUND_MAP_ADDR = 0x9800
SCORE_DIGITS = (13, 3, 6)  # (column, row, digits) on the background map
LEVEL_DIGITS = (14, 7, 4)
LINES_DIGITS = (14, 10, 4)
_BLANK = BLANK_TILE = 47
GAME_OVER_CELL = (2, 0)  # (column, row) that shows GAME_OVER_TILE once the game is over
GAME_OVER_TILE = 135

# Tile classes: 0 blank, 1-6 the single-colour pieces, 7 the I piece's tiles, 8 the fill
# shown at game over.
mapping_compressed = np.zeros(TILES, dtype=np.uint8)
for _cls, _tiles in enumerate(([47], [129], [130], [131], [132], [133], [134], [128, 136, 137, 138, 139, 143], [135])):
    mapping_compressed[_tiles] = _cls
mapping_minimal = np.ones(TILES, dtype=np.uint8)
mapping_minimal[47] = 0
mapping_minimal[135] = 2


class GameWrapperTetris(PyBoyGameWrapper):
    cartridge_title = "TETRIS"
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

    def post_tick(self):
        self._tile_cache_invalid = True
        self._sprite_cache_invalid = True
        self.score = self._sum_number_on_screen(*SCORE_DIGITS, _BLANK, 0)
        self.level = self._sum_number_on_screen(*LEVEL_DIGITS, _BLANK, 0)
        self.lines = self._sum_number_on_screen(*LINES_DIGITS, _BLANK, 0)

    def start_game(self, timer_div=None):
        """From power-on: wait for the title screen, press START twice, save the start."""
        while True:
            self.pyboy.tick(1, False)
            if self.tilemap_background[2:9, 14] == [89, 25, 21, 10, 34, 14, 27]:  # "1PLAYER"
                break
        self.pyboy.tick(5, False)
        for _ in range(2):
            self.pyboy.button("start")
            self.pyboy.tick(7, False)
        PyBoyGameWrapper.start_game(self)
        self.reset_game(timer_div=timer_div)

    def reset_game(self, timer_div=None):
        PyBoyGameWrapper.reset_game(self, timer_div=timer_div)
        self.pyboy.button("start")
        self.pyboy.tick(7, False)

    def game_area(self):
        return PyBoyGameWrapper.game_area(self)

    def next_tetromino(self):
        """The next piece: "L", "J", "I", "O", "Z", "S" or "T"."""
        return _TETROMINO_NAMES[self.pyboy.memory[NEXT_TETROMINO_ADDR] & 0b11111100]

    def set_tetromino(self, shape):
        """Patch the ROM's piece generator to always produce ``shape`` (not saved in states)."""
        if shape not in _TETROMINOES:
            # PyBoy's compiled wrapper reports and swallows this error.
            
            get_logger("pyboy.plugins.game_wrapper_tetris").error("KeyError: 'Invalid Tetromino shape!'")
            return
        n = _TETROMINOES[shape]
        for i, byte in enumerate((0x3E, n, 0x00)):  # LD A,n ; NOP
            self.pyboy.memory[0, 0x206E + i] = byte
        for i, byte in enumerate((0x3E, n)):  # LD A,n
            self.pyboy.memory[0, 0x20B0 + i] = byte

    def game_over(self):
        return self.tilemap_background[GAME_OVER_CELL] == GAME_OVER_TILE

    def __repr__(self):
        return f"Tetris:\nScore: {self.score}\nLevel: {self.level}\nLines: {self.lines}\n" + super().__repr__()
