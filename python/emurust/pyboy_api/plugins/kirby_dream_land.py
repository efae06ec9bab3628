"""Kirby's Dream Land (title "KIRBY DREAM LAN"): score, health, lives, game over."""

from __future__ import annotations

from ..utils import PyBoyException
from .base import PyBoyGameWrapper

ADDR_SCORE_DIGITS = 0xD070  # 4 bytes, one decimal digit each, worth 10000 down to 10
SCORE_DIGITS = 4
ADDR_HEALTH = 0xD086
ADDR_LIVES = 0xD089  # lives left + 1


class GameWrapperKirbyDreamLand(PyBoyGameWrapper):
    cartridge_title = "KIRBY DREAM LAN"

    def __init__(self, pyboy):
        self.score = 0
        self.health = 0
        self.lives_left = 0
        self._game_over = 0  # an int in PyBoy (game_over() returns 0 or 1)
        super().__init__(pyboy, game_area_section=(0, 0, 20, 16), game_area_follow_scxy=True)

    def post_tick(self):
        self._tile_cache_invalid = True
        self._sprite_cache_invalid = True
        mem = self.pyboy.memory
        # Four decimal digits, one per byte, worth 10000 down to 10 (the last digit is 0).
        self.score = sum(mem[ADDR_SCORE_DIGITS + n] * 10 ** (SCORE_DIGITS - n) for n in range(SCORE_DIGITS))
        previous = self.health
        self.health = mem[ADDR_HEALTH]
        if self.lives_left == 0 and previous > 0 and self.health == 0:
            self._game_over = 1
        self.lives_left = mem[ADDR_LIVES] - 1

    def start_game(self, timer_div=None):
        if self.game_has_started:
            raise PyBoyException("Gamewrapper already started! Use 'reset' instead.")
        while True:
            self.pyboy.tick(1, False)
            if self.tilemap_background[0:3, 16] == [231, 224, 235]:  # "HAL"
                break
        self.pyboy.tick(25, False)
        for _ in range(2):
            self.pyboy.button("start")
            self.pyboy.tick()
            self.pyboy.tick(60, False)
        PyBoyGameWrapper.start_game(self, timer_div=timer_div)

    def reset_game(self, timer_div=None):
        self._game_over = 0
        PyBoyGameWrapper.reset_game(self, timer_div=timer_div)

    def game_area(self):
        return PyBoyGameWrapper.game_area(self)

    def game_over(self):
        return self._game_over

    def __repr__(self):
        return (
            f"Kirby Dream Land:\nScore: {self.score}\nHealth: {self.health}\nLives left: {self.lives_left}\n"
            + super().__repr__()
        )
