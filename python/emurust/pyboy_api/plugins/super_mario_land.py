"""Super Mario Land (title "SUPER MARIOLAND"): world, coins, lives, score, time, progress."""

from __future__ import annotations


import numpy as np

from ..constants import TILES
from ..utils import PyBoyException, PyBoyInvalidInputException, _bcd_to_dec, bcd_to_dec, dec_to_bcd
from .base import PyBoyGameWrapper
from ..log import get_logger

logger = get_logger("pyboy.plugins.game_wrapper_super_mario_land")

ADDR_TIME_LEFT = 0xDA01
ADDR_LIVES_LEFT = 0xDA15
ADDR_LIVES_LEFT_DISPLAY = 0x9806
ADDR_WORLD_LEVEL = 0xFFB4
ADDR_WIN_COUNT = 0xFF9A
ADDR_GAME_OVER = 0xC0A4  # holds GAME_OVER_VALUE on the game-over screen
GAME_OVER_VALUE = 0x39
ADDR_LEVEL_BLOCK = 0xC0AB  # level progress in 16-pixel blocks
ADDR_MARIO_X = 0xC202  # Mario's x on screen
SCROLL_LINE = 16  # the first play-field line: its SCX is the level's fine scroll (0-15 px with the block)
# The status bar is on the background map at 0x9800. Its digit tiles are 256-265 and the blank
# is tile 300 in PyBoy's numbering (signed tile addressing): bytes 0-9 and 44 in the map.
BACKGROUND_MAP_ADDR = 0x9800
SCORE_DIGITS = (0, 1, 6)  # (column, row, digits)
COIN_DIGITS = (9, 1, 2)
TILE_OFFSET = -256
_BLANK = BLANK_TILE = 300


def _r(a, b):
    return list(range(a, b))


# Tile groups of the game's graphics (identifiers as PyBoy's game area reports them).
_GROUPS = {
    "mario": _r(0, 81),
    "plane": _r(99, 110),
    "submarine": _r(112, 122),
    "shoots": [96, 110, 122],
    "coin": [244],
    "mushroom": [131],
    "heart": [132],
    "star": [134],
    "flower": [224, 229],
    "lever": [255],
    "neutral": [142, 143, 221, 222, 231, 232, 233, 234, 235, 236, 301, 302, 303, 304, 319, 340, 352, 353, 355, 356]
    + [357, 358, 359, 360, 361, 362, 381, 382, 383],
    "moving": [230, 238, 239],
    "pushable": [128, 130, 354],
    "question": [129],
    "pipes": _r(368, 381),
    "goomba": [144],
    "koopa": [150, 151, 152, 153],
    "plant": [146, 147, 148, 149],
    "moth": [160, 161, 162, 163, 176, 177, 178, 179],
    "flying_moth": [192, 193, 194, 195, 208, 209, 210, 211],
    "sphinx": [164, 165, 166, 167, 180, 181, 182, 183],
    "big_sphinx": [198, 199, 201, 202, 203, 204, 205, 214, 215, 217, 218, 219],
    "fist": [240, 241, 242, 243],
    "bill": [249],
    "projectiles": [172, 188, 196, 197, 212, 213, 226, 227],
    "shell": [154, 155],
    "explosion": [157, 158],
    "spike": [237],
}


def _build(classes):
    m = np.zeros(TILES, dtype=np.uint8)
    for value, names in enumerate(classes, start=1):
        for name in names:
            m[_GROUPS[name]] = value
    return m


_ENEMIES = ["goomba", "koopa", "plant", "moth", "flying_moth", "sphinx", "big_sphinx", "fist", "bill", "projectiles", "shell", "explosion", "spike"]
mapping_minimal = _build(
    [
        ["mario", "plane", "submarine"],
        ["coin", "mushroom", "heart", "star", "lever"],
        ["neutral", "moving", "pushable", "question", "pipes"],
        _ENEMIES,
    ]
)
mapping_compressed = _build(
    [[n] for n in ["mario", "plane", "submarine", "shoots", "coin", "mushroom", "heart", "star", "lever", "neutral", "moving", "pushable", "question", "pipes"] + _ENEMIES]
)


class GameWrapperSuperMarioLand(PyBoyGameWrapper):
    cartridge_title = "SUPER MARIOLAND"
    mapping_compressed = mapping_compressed
    mapping_minimal = mapping_minimal

    def __init__(self, pyboy):
        self.world = (0, 0)
        self.coins = 0
        self.lives_left = 0
        self.score = 0
        self.time_left = 0
        self.level_progress = 0
        super().__init__(pyboy, game_area_section=(0, 2, 20, 16), game_area_follow_scxy=True)

    def post_tick(self):
        self._tile_cache_invalid = True
        self._sprite_cache_invalid = True
        mem = self.pyboy.memory
        world_level = mem[ADDR_WORLD_LEVEL]
        self.world = (world_level >> 4, world_level & 0x0F)
        self.coins = self._sum_number_on_screen(*COIN_DIGITS, _BLANK, TILE_OFFSET)
        self.lives_left = bcd_to_dec(mem[ADDR_LIVES_LEFT])
        self.score = self._sum_number_on_screen(*SCORE_DIGITS, _BLANK, TILE_OFFSET)
        low, high = _bcd_to_dec(mem[ADDR_TIME_LEFT : ADDR_TIME_LEFT + 2])
        self.time_left = low + high * 100
        scx = self.pyboy.screen.tilemap_position_list[SCROLL_LINE][0]
        self.level_progress = mem[ADDR_LEVEL_BLOCK] * 16 + (scx - 7) % 16 + mem[ADDR_MARIO_X]

    def set_time_left(self, time):
        if not self.game_has_started:
            logger.warning("Please call set_lives_left after starting the game")
        if not 0 <= time <= 999:
            raise PyBoyInvalidInputException(f"{time} is out of bounds. Only values between 0 and 999 allowed.")
        self.pyboy.memory[ADDR_TIME_LEFT] = dec_to_bcd(time % 100)
        self.pyboy.memory[ADDR_TIME_LEFT + 1] = time // 100

    def set_lives_left(self, amount):
        if not self.game_has_started:
            logger.warning("Please call set_lives_left after starting the game")
        if not 0 <= amount <= 99:
            # PyBoy's compiled wrapper reports and swallows this error.
            logger.error("PyBoyInvalidInputException: %s is out of bounds. Only values between 0 and 99 allowed.", amount)
            return
        v = dec_to_bcd(amount)
        self.pyboy.memory[ADDR_LIVES_LEFT] = v
        self.pyboy.memory[ADDR_LIVES_LEFT_DISPLAY] = (v >> 4) & 0xF
        self.pyboy.memory[ADDR_LIVES_LEFT_DISPLAY + 1] = v & 0xF

    def set_world_level(self, world, level):
        """Patch the ROM so that a new game starts in ``world``-``level`` (not saved in states)."""
        for i in range(0x450, 0x461):
            self.pyboy.memory[0, i] = 0x00
        for i, byte in enumerate((0x3E, (world << 4) | (level & 0x0F))):  # LD A,d8
            self.pyboy.memory[0, 0x451 + i] = byte

    def start_game(self, timer_div=None, world_level=None, unlock_level_select=False):
        if self.game_has_started:
            raise PyBoyException("Gamewrapper already started! Use 'reset' instead.")
        if world_level is not None:
            self.set_world_level(*world_level)
        while True:
            self.pyboy.tick(1, False)
            if self.tilemap_background[6:11, 13] == [284, 285, 266, 283, 285]:  # "START"
                break
        self.pyboy.tick(3, False)
        self.pyboy.button("start")
        self.pyboy.tick(1, False)
        while True:
            if unlock_level_select and self.pyboy.frame_count == 71:
                self.pyboy.memory[ADDR_WIN_COUNT] = 2 if unlock_level_select else 0
                break
            self.pyboy.tick(1, False)
            if self.tilemap_background[0:5, 0] == [278, 266, 283, 274, 280] and self.tilemap_background[5, 1] == 256:
                break
        PyBoyGameWrapper.start_game(self, timer_div=timer_div)

    def reset_game(self, timer_div=None):
        PyBoyGameWrapper.reset_game(self, timer_div=timer_div)

    def game_area(self):
        return PyBoyGameWrapper.game_area(self)

    def game_over(self):
        return self.pyboy.memory[ADDR_GAME_OVER] == GAME_OVER_VALUE

    def __repr__(self):
        return (
            f"Super Mario Land: World {'-'.join(str(i) for i in self.world)}\n"
            f"Coins: {self.coins}\n"
            f"lives_left: {self.lives_left}\n"
            f"Score: {self.score}\n"
            f"Time left: {self.time_left}\n"
            f"Level progress: {self.level_progress}\n" + super().__repr__()
        )
