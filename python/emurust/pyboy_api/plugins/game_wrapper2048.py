"""2048 (title "2048", the homebrew PyBoy tests with; needs its symbol file)."""

from __future__ import annotations

from ..utils import PyBoyException
from .base import PyBoyGameWrapper

STATE_TITLE, STATE_PLAYING, STATE_WINNER, STATE_GAMEOVER = 0, 1, 2, 3
TITLE_PRESS_START_TILES = [294, 309, 296, 292, 311, 296, 295, 291, 293]
# The game's variables, found through its symbol file (.sym beside the ROM).
SYMBOL_BOARD, SYMBOL_SCORE, SYMBOL_WINNER, SYMBOL_STATE = "_board", "_score", "_winner", "_state"
VALID_TILE_VALUES = frozenset({0, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048})


class GameWrapper2048(PyBoyGameWrapper):
    cartridge_title = "2048"

    def __init__(self, pyboy):
        self.score = 0
        self.winner = False
        self._game_over = False
        self.board = [[0] * 5 for _ in range(5)]
        self._addrs_loaded = False
        super().__init__(pyboy, game_area_section=(0, 0, 20, 18))

    def _load_addresses(self):
        look = self.pyboy.symbol_lookup
        self._addr_board_start = look(SYMBOL_BOARD)[1]
        self._addr_score = look(SYMBOL_SCORE)[1]
        self._addr_winner = look(SYMBOL_WINNER)[1]
        self._addr_state = look(SYMBOL_STATE)[1]
        self._addrs_loaded = True

    def start_game(self, timer_div=None):
        if self.game_has_started:
            raise PyBoyException("Gamewrapper already started! Use 'reset_game' instead.")
        if not self._addrs_loaded:
            self._load_addresses()
        while list(self.tilemap_window[5:14, 5]) != TITLE_PRESS_START_TILES:
            self.pyboy.tick(1, False)
        self.pyboy.button("start")
        while self.pyboy.memory[self._addr_state] != STATE_PLAYING:
            self.pyboy.tick(1, False)
        while self._non_zero_tile_count() < 2:
            self.pyboy.tick(1, False)
        for _ in range(30):
            self.pyboy.tick(1, False)
        PyBoyGameWrapper.start_game(self, timer_div=timer_div)

    def post_tick(self):
        if not self._addrs_loaded:
            self._load_addresses()
        self._tile_cache_invalid = True
        self._sprite_cache_invalid = True
        mem = self.pyboy.memory
        self.score = mem[self._addr_score] + 256 * mem[self._addr_score + 1]
        self.winner = mem[self._addr_winner] == 1
        self._game_over = mem[self._addr_state] == STATE_GAMEOVER
        for i in range(25):
            addr = self._addr_board_start + 2 * i
            value = mem[addr] + 256 * mem[addr + 1]
            self.board[i // 5][i % 5] = value if value in VALID_TILE_VALUES else 0

    def game_over(self):
        return self._game_over

    def _non_zero_tile_count(self):
        return sum(1 for row in self.board for tile in row if tile != 0)

    def __repr__(self):
        board = "".join("\t" + str(row) + "\n" for row in self.board)
        return (
            f"2048:\nScore: {self.score}\nWinner: {self.winner}\nGame Over: {self._game_over}\nBoard:\n{board}"
            + super().__repr__()
        )
