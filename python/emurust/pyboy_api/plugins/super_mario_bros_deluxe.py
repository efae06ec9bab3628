"""Super Mario Bros. Deluxe (cartridge title "MARIO DELUXAHY", a Game Boy Color game): world,
coins, lives, score, time, progress, a stuck detector, the game's objects, and a game area
built from the level's metatile map (interaction types) with the sprites drawn over it.

RAM and ROM locations follow the game's disassembly, as PyBoy 2.8.1's wrapper does.
"""

from __future__ import annotations


import numpy as np

from ..constants import TILES_CGB
from ..utils import PyBoyException, PyBoyInvalidInputException, bcd_to_dec
from .base import PyBoyGameWrapper
from ..log import get_logger

logger = get_logger("pyboy.plugins.game_wrapper_super_mario_bros_deluxe")

ADDR_LEVEL_SET = 0xC160  # 0 the original game, 1 "For Super Players"
ADDR_SUBLEVEL = 0xC162
ADDR_LEVEL = 0xC163
ADDR_SCORE = 0xC17A  # 3 bytes of BCD
ADDR_TIME_LEFT = 0xC17D  # 16-bit binary, little-endian
ADDR_LIVES_LEFT = 0xC17F
ADDR_CHALLENGE_UNLOCK = 0xC18E
ADDR_MENU_SELECTION = 0xC1A8
ADDR_PLAYER_STATE = 0xC1C1  # 3: dying
ADDR_PLAYER_X = 0xC1CA  # 16-bit, screen-relative part of the progress
ADDR_COINS = 0xC1F2
ADDR_LEVEL_X = 0xFFA7
ADDR_PLAYER_Y = 0xFFA9
ADDR_MODE = 0xFFB5  # the game's main state
ADDR_CAMERA_X_LOW = 0xFFB8
ADDR_CAMERA_X_HIGH = 0xFFB9
ADDR_CAMERA_Y = 0xFFBA

# The game's objects: 15 slots in WRAM bank 1, each field an array of 15 bytes from D000 on.
SPRITE_SLOT_COUNT = 0x0F
SPRITE_WRAM_BANK = 1
ADDR_SPRITE_STATUS = 0xD000
ADDR_SPRITE_ID = 0xD00F
ADDR_SPRITE_X_LOW = 0xD01E
ADDR_SPRITE_X_HIGH = 0xD02D
ADDR_SPRITE_Y_LOW = 0xD03C
ADDR_SPRITE_Y_HIGH = 0xD04B
ADDR_SPRITE_X_SPEED = 0xD05A
ADDR_SPRITE_Y_SPEED = 0xD069
ADDR_SPRITE_SUBSTATE = 0xD186
_NAMED_FIELDS = {0: "status", 1: "id", 2: "x_low", 3: "x_high", 4: "y_low", 5: "y_high", 6: "x_speed_raw", 7: "y_speed_raw", 26: "substate"}
#: (name, address of slot 0) of each of the 49 per-object fields; unnamed ones go by address.
SPRITE_SLOT_FIELDS = tuple(
    (_NAMED_FIELDS.get(i, f"{ADDR_SPRITE_STATUS + i * SPRITE_SLOT_COUNT:04x}"), ADDR_SPRITE_STATUS + i * SPRITE_SLOT_COUNT) for i in range(49)
)

MARIO_FIREBALL_ID = 0x0D
FIREBAR_ID_MIN = 0x0F
FIREBAR_ID_MAX = 0x16

MODE_TITLE_SCREEN = 0x03
MODE_OVERWORLD_INIT = 0x04
MODE_WORLD_MAP = 0x05
MODE_LEVEL = 0x0B
MODE_FILE_SELECT = 0x17
MODE_MAIN_MENU = 0x19
MODE_CHALLENGE_SELECT = 0x1E
MODE_DEBUG_INIT = 0x31
MODE_DEBUG_MENU = 0x32
_GAME_OVER_MODES = (0x0E, 0x10, 0x11, 0x14, 0x1B)
STUCK_TIMEOUT_FRAMES = 600
MAX_PROGRESS_DELTA_PER_FRAME = 32

# The level: a map of 16x16-pixel metatiles, 16 rows by 16-column screens, 16 screens per
# WRAM bank from bank 6 on; each metatile's interaction type is in a 256-byte ROM table.
INTERACTION_TABLE_BANK = 3
INTERACTION_TABLE_ADDRESS = 0x6D16
METATILE_MAP_BANK = 6
METATILE_MAP_ADDRESS = 0xD000
METATILE_MAP_WIDTH = 256
METATILE_MAP_HEIGHT = 16
METATILE_SCREEN_WIDTH = 16
METATILE_SCREEN_SIZE = 0x100
DEFAULT_SPRITE_OFFSET = 0


def _ids(*parts):
    out = []
    for p in parts:
        out.extend(range(p[0], p[1]) if isinstance(p, tuple) else [p])
    return out


# Sprite tile classes (tile identifiers, VRAM bank 1 from 384 on). Tiles not listed keep their
# own identifier.
_SPRITE_CLASSES = (
    (0, _ids(38, 39, (68, 74), (84, 92), (96, 100), 138, 139, (176, 184), (186, 190))),  # scenery
    (0, _ids(132, 133, (168, 172))),  # castle
    (0, _ids((28, 34))),  # Mario's fireball bursting
    (1, _ids((0, 8), (16, 24), (384, 392))),  # Mario
    (7, _ids((52, 56))),  # Goomba
    (8, _ids(128, 129, 130, 131, 136, 137)),  # brick
    (9, _ids(42, 43, 44, 45)),  # mushroom
    (10, _ids(34, 35, (124, 128))),  # piranha plant
    (11, _ids(46, 47, (114, 118))),  # fire flower
    (12, _ids((92, 96))),  # Mario's fireball (and fire bars: see _fireball_class)
    (14, _ids(100, 101)),  # star
    (15, _ids(48, 49, (80, 84))),  # flag
    (16, _ids((414, 420), 482, 483)),  # trampoline
    (17, _ids((474, 482))),  # Paratroopa
    (18, _ids((194, 198))),  # fire bar
    (19, _ids((56, 68))),  # Koopa
    (20, _ids((108, 114))),  # Bowser's fire
    (21, _ids(428, 429)),  # platform
    (22, _ids((496, 512), (400, 410))),  # Bowser
    (23, _ids((422, 428))),  # Blooper
    (24, _ids((74, 80))),  # Cheep Cheep
    (25, _ids(26, 27)),  # Podoboo
    (26, _ids((144, 156), (160, 168))),  # Hammer Bro
    (27, _ids((102, 108))),  # hammer
    (28, _ids((438, 446), (456, 464))),  # Buzzy Beetle, Spiny
    (29, _ids((464, 468))),  # Spiny egg
    (30, _ids((448, 456))),  # Lakitu
    (31, _ids((470, 474))),  # Bullet Bill
)

mapping_minimal = np.arange(TILES_CGB, dtype=np.uint32)
for _value, _tiles in _SPRITE_CLASSES:
    mapping_minimal[_tiles] = _value
mapping_compressed = mapping_minimal

# Object id -> the class of mapping_minimal (0: not worth telling apart).
object_id_mapping = np.zeros(0x65, dtype=np.uint32)
for _value, _object_ids in (
    (19, _ids(0x02, 0x03, 0x31)),
    (7, _ids(0x04)),
    (24, _ids((0x05, 0x09))),
    (15, _ids(0x09)),
    (12, _ids(0x0D)),
    (8, _ids(0x0E)),
    (18, _ids((0x0F, 0x17))),
    (26, _ids(0x17)),
    (27, _ids(0x18)),
    (10, _ids(0x19, 0x47)),
    (22, _ids(0x1A)),
    (20, _ids(0x1B)),
    (25, _ids(0x1F)),
    (31, _ids(0x25)),
    (17, _ids((0x26, 0x2C))),
    (23, _ids(0x2C)),
    (16, _ids(0x2D, 0x4D)),
    (30, _ids(0x2E)),
    (28, _ids(0x2F, 0x30)),
    (21, _ids((0x56, 0x65))),
):
    object_id_mapping[_object_ids] = _value

# Interaction type (0x00-0x16) -> background class: 0 air, 2, 4, 5, 6 as grouped, 3 the rest.
background_mapping_minimal = np.full(0x17, 3, dtype=np.uint32)
for _value, _types in ((0, [0]), (2, [2]), (4, [5, 9, 10]), (5, [4, 11, 19]), (6, [6, 20, 22])):
    background_mapping_minimal[_types] = _value


def _signed8(v):
    return v - 0x100 if v & 0x80 else v


def _signed16(v):
    return v - 0x10000 if v & 0x8000 else v


class GameWrapperSuperMarioBrosDeluxe(PyBoyGameWrapper):
    """Super Mario Bros. Deluxe. ``start_game(level=...)`` uses the game's unused level
    selector: levels 0-31 are World 1-1 to 8-4 (``super_player_levels=True`` for the
    "For Super Players" set)."""

    cartridge_title = "MARIO DELUXAHY"
    mapping_minimal = mapping_minimal
    mapping_compressed = mapping_compressed
    object_id_mapping = object_id_mapping

    def __init__(self, pyboy):
        self.world = (0, 0)
        self.level = 0
        self.coins = 0
        self.lives_left = 0
        self.score = 0
        self.time_left = 0
        self.level_progress = 0
        self.stuck = False
        self.stuck_frames = 0
        self._stuck_last_progress = 0
        self._stuck_in_level = False
        self._selected_level = 0
        self._selected_super_player_levels = False
        self._level_selected = False
        self._level_sequence = None  # custom (world, level) order
        self._sequence_index = -1
        self._next_level_prepared = False
        self._interaction_types = None  # read from ROM on first use
        super().__init__(pyboy, game_area_section=(0, 6, 20, 26), game_area_follow_scxy=False)
        self.mapping = mapping_minimal

    # ------------------------------------------------------------------ per frame

    def post_tick(self):
        self._tile_cache_invalid = True
        self._sprite_cache_invalid = True
        mem = self.pyboy.memory
        if self._level_sequence is not None and mem[ADDR_MODE] == MODE_OVERWORLD_INIT and not self._next_level_prepared:
            self._prepare_next_level_of_sequence()
        self.level = mem[ADDR_LEVEL]
        self.world = (self.level // 4 + 1, self.level % 4 + 1) if self.level < 0x20 else (0, self.level)
        self.mapping = mapping_minimal
        self.coins = mem[ADDR_COINS]
        self.lives_left = mem[ADDR_LIVES_LEFT]
        self.score = bcd_to_dec(int.from_bytes(bytes(mem[ADDR_SCORE : ADDR_SCORE + 3]), "little"), byte_width=3)
        self.time_left = mem[ADDR_TIME_LEFT] | mem[ADDR_TIME_LEFT + 1] << 8
        self.level_progress = mem[ADDR_LEVEL_X] + (mem[ADDR_PLAYER_X] | mem[ADDR_PLAYER_X + 1] << 8)
        self._update_stuck(mem[ADDR_MODE] == MODE_LEVEL)
        if mem[ADDR_MODE] == MODE_LEVEL:
            self._next_level_prepared = False

    def _prepare_next_level_of_sequence(self):
        if not 0 <= self._sequence_index < len(self._level_sequence) - 1:
            return
        world, level = self._level_sequence[self._sequence_index + 1]
        level_id = (world - 1) * 4 + level - 1
        mem = self.pyboy.memory
        mem[ADDR_LEVEL_SET] = 0
        mem[ADDR_SUBLEVEL] = level_id
        mem[ADDR_LEVEL] = level_id
        self._sequence_index += 1
        self._next_level_prepared = True

    def _update_stuck(self, in_level):
        """``stuck`` once the progress has not moved for STUCK_TIMEOUT_FRAMES frames of a level
        (a jump larger than MAX_PROGRESS_DELTA_PER_FRAME is the camera wrapping: ignored)."""
        if not in_level:
            self._stuck_in_level = False
            self.stuck_frames = 0
            self.stuck = False
            return
        if not self._stuck_in_level:
            self._stuck_in_level = True
            moved = True
        else:
            delta = abs(self.level_progress - self._stuck_last_progress)
            if delta > MAX_PROGRESS_DELTA_PER_FRAME:
                return
            moved = delta != 0
        if moved:
            self._stuck_last_progress = self.level_progress
            self.stuck_frames = 0
            self.stuck = False
        else:
            self.stuck_frames += 1
            self.stuck = self.stuck_frames >= STUCK_TIMEOUT_FRAMES

    def reset_game(self, timer_div=None):
        PyBoyGameWrapper.reset_game(self, timer_div=timer_div)
        self.stuck = False
        self.stuck_frames = 0
        self._stuck_last_progress = self.level_progress
        self._stuck_in_level = self.pyboy.memory[ADDR_MODE] == MODE_LEVEL

    # ------------------------------------------------------------------ objects and game area

    def _camera_x(self):
        return self.pyboy.memory[ADDR_CAMERA_X_LOW] | self.pyboy.memory[ADDR_CAMERA_X_HIGH] << 8

    def _camera_y(self):
        return self.pyboy.memory[ADDR_CAMERA_Y]

    def _wram_banks(self):
        """All eight CGB work RAM banks, one read: ``memory[bank, 0xD000 + i]`` is
        ``[bank * 0x1000 + i]``."""
        if not self.cgb:
            self.pyboy.memory[SPRITE_WRAM_BANK, 0xD000]  # raises as PyBoy's banked read does
        return self.pyboy._gb.wram_banks()

    def object_slots(self):
        """The active objects: a dict per slot with its WRAM fields and its position in the
        world, on screen and in the game area."""
        wram = self._wram_banks()
        base = SPRITE_WRAM_BANK * 0x1000 - 0xD000
        section_x, section_y = self.game_area_section[:2]
        camera_x, camera_y = self._camera_x(), self._camera_y()
        objects = []
        for slot in range(SPRITE_SLOT_COUNT):
            obj = {name: wram[base + addr + slot] for name, addr in SPRITE_SLOT_FIELDS}
            if obj["status"] == 0:
                continue
            x = obj["x_low"] | obj["x_high"] << 8
            y = obj["y_low"] | obj["y_high"] << 8
            obj["slot"] = slot
            obj["mapped_id"] = int(object_id_mapping[obj["id"]])
            obj["x"], obj["y"] = x, y
            obj["game_area_x"] = (x - camera_x + 4) // 8 - section_x
            obj["game_area_y"] = (y + 4) // 8 - section_y
            obj["screen_x"], obj["screen_y"] = x - camera_x, y - camera_y
            obj["x_signed"], obj["y_signed"] = _signed16(x), _signed16(y)
            obj["x_speed"], obj["y_speed"] = _signed8(obj["x_speed_raw"]), _signed8(obj["y_speed_raw"])
            objects.append(obj)
        return objects

    def game_area_annotations(self):
        """(screen x, screen y, label) for each object and for Mario."""
        notes = [(o["screen_x"], o["screen_y"], f"s{o['slot']} i{o['id']:02X} m{o['mapped_id']}") for o in self.object_slots()]
        mem = self.pyboy.memory
        player_x = mem[ADDR_PLAYER_X] | mem[ADDR_PLAYER_X + 1] << 8
        notes.append((player_x - self._camera_x(), mem[ADDR_PLAYER_Y] - self._camera_y(), "MARIO m1"))
        return notes

    def _fireball_class(self, sprite, objects):
        """Tiles 92-95 are shared by Mario's fireballs and fire bars: 12 for a sprite near a
        fireball object, 18 when a fire bar exists, else 0 (use the tile's class)."""
        if not 92 <= sprite.tile_identifier < 96:
            return 0
        world_x = sprite.x + self._camera_x()
        world_y = sprite.y + self._camera_y()
        if any(o["id"] == MARIO_FIREBALL_ID and abs(world_x - o["x"]) <= 8 and abs(world_y - o["y"]) <= 8 for o in objects):
            return 12
        if any(FIREBAR_ID_MIN <= o["id"] <= FIREBAR_ID_MAX for o in objects):
            return 18
        return 0

    def _game_area_tiles(self):
        """The interaction type of the metatile under each cell of the camera's view."""
        if self._tile_cache_invalid:
            mem = self.pyboy.memory
            if self._interaction_types is None:
                start = INTERACTION_TABLE_ADDRESS
                self._interaction_types = np.asarray(mem[INTERACTION_TABLE_BANK, start : start + 0x100], dtype=np.uint32)
            xx, yy, width, height = self.game_area_section
            camera_x = self._camera_x()
            wram = None  # read on the first metatile in the map
            columns = [(camera_x + (xx + x) * 8) // 16 for x in range(width)]
            rows = [(yy + y) * 8 // 16 for y in range(height)]
            metatiles = {}
            tiles = np.zeros((height, width), dtype=np.uint32)
            for y, my in enumerate(rows):
                if not 0 <= my < METATILE_MAP_HEIGHT:
                    continue
                for x, mx in enumerate(columns):
                    if not 0 <= mx < METATILE_MAP_WIDTH * 2:
                        continue
                    if (mx, my) not in metatiles:
                        if wram is None:
                            wram = self._wram_banks()
                        screen = mx // METATILE_SCREEN_WIDTH
                        bank = METATILE_MAP_BANK + screen // 16
                        offset = (screen % 16) * METATILE_SCREEN_SIZE + my * METATILE_SCREEN_WIDTH + mx % METATILE_SCREEN_WIDTH
                        metatiles[mx, my] = wram[bank * 0x1000 + (METATILE_MAP_ADDRESS - 0xD000) + offset]
                    tiles[y, x] = self._interaction_types[metatiles[mx, my]]
            self._cached_game_area_tiles = tiles
            self._tile_cache_invalid = False
        return self._cached_game_area_tiles

    def game_area_background(self):
        """The camera's view as background classes, without sprites."""
        return background_mapping_minimal[np.asarray(self._game_area_tiles(), dtype=np.uint32)]

    def game_area(self):
        """The background classes with the sprites' classes (plus ``sprite_offset``) over them;
        sprites whose class is 0 leave the background visible."""
        area = self.game_area_background()
        sprites = self._sprites_on_screen()
        objects = self.object_slots() if any(92 <= s.tile_identifier < 96 for s in sprites) else ()
        xx, yy, width, height = self.game_area_section
        camera_y = self._camera_y()
        for s in sprites:
            x = (s.x + 4) // 8 - xx
            y = (s.y + camera_y + 4) // 8 - yy
            fireball = self._fireball_class(s, objects)
            if 0 <= x < width and 0 <= y < height and self.mapping[s.tile_identifier] != 0:
                area[y, x] = (fireball or self.mapping[s.tile_identifier]) + self.sprite_offset
            if len(s.tiles) == 2 and 0 <= x < width and 0 <= y + 1 < height:
                lower = fireball or self.mapping[s.tile_identifier + 1]
                if lower != 0:
                    area[y + 1, x] = lower + self.sprite_offset
        return area

    # ------------------------------------------------------------------ writers

    def set_lives_left(self, amount):
        """Set Mario's lives (0-99)."""
        if not 0 <= amount <= 99:
            # PyBoy's compiled wrapper reports and swallows this error.
            logger.error("PyBoyInvalidInputException: %s is out of bounds. Only values between 0 and 99 allowed.", amount)
            return
        self.pyboy.memory[ADDR_LIVES_LEFT] = amount

    def set_time_left(self, time):
        """Set the level timer (0-999)."""
        if not 0 <= time <= 999:
            raise PyBoyInvalidInputException(f"{time} is out of bounds. Only values between 0 and 999 allowed.")
        self.pyboy.memory[ADDR_TIME_LEFT] = time & 0xFF
        self.pyboy.memory[ADDR_TIME_LEFT + 1] = time >> 8

    def _set_level(self, level, super_player_levels=False):
        """Choose the level (a raw level id, 0-99) the game's level selector starts."""
        if not 0 <= level <= 0x63:
            raise PyBoyInvalidInputException(f"{level} is out of bounds. Only values between 0 and 99 allowed.")
        if not isinstance(super_player_levels, bool):
            raise PyBoyInvalidInputException("super_player_levels must be a boolean.")
        self.pyboy.memory[ADDR_LEVEL_SET] = int(super_player_levels)
        self.pyboy.memory[ADDR_SUBLEVEL] = level
        self.pyboy.memory[ADDR_LEVEL] = level
        self._selected_level = level
        self._selected_super_player_levels = super_player_levels
        self._level_selected = True

    @staticmethod
    def _check_world_level(world, level, super_player_levels):
        if not 1 <= world <= 13:
            raise PyBoyInvalidInputException(f"{world} is out of bounds. Only worlds 1 through 13 are allowed.")
        if not 1 <= level <= 4:
            raise PyBoyInvalidInputException(f"{level} is out of bounds. Only levels 1 through 4 are allowed.")
        if not super_player_levels and world > 8:
            raise PyBoyInvalidInputException("Worlds 9 through 13 are only available in the For Super Players set.")

    def set_world_level(self, world, level, super_player_levels=False):
        """Start from ``world``-``level`` (one-based, as the game shows them; worlds 9-13 only
        in the "For Super Players" set)."""
        self._check_world_level(world, level, super_player_levels)
        self._set_level((world - 1) * 4 + level - 1, super_player_levels)

    # ------------------------------------------------------------------ game control

    def _press(self, button):
        self.pyboy.button_press(button)
        for _ in range(20):
            self.pyboy.tick(1, False)
        self.pyboy.button_release(button)

    def _wait_for_mode(self, *modes, spam_start=False, settle_frames=20):
        while self.pyboy.memory[ADDR_MODE] not in modes:
            if spam_start:
                self.pyboy.button("start")
            self.pyboy.tick(4, False)
        if settle_frames:
            self.pyboy.tick(settle_frames, False)

    def start_game(self, timer_div=None, world_level=None, level=None, super_player_levels=False, challenge=False, unlock_level_select=False, custom_level_sequence=None):
        """From power-on to the first frame of a level, then save the start for
        :meth:`reset_game`.

        ``world_level``: a one-based (world, level); ``level``: a raw level id (not both).
        ``challenge=True`` goes through the Challenge selector (``unlock_level_select=True``
        stops there without starting a level). ``custom_level_sequence``: (world, level)
        pairs to play in that order instead of the game's."""
        if self.game_has_started:
            raise PyBoyException("Gamewrapper already started! Use 'reset' instead.")
        if world_level is not None and level is not None:
            raise PyBoyInvalidInputException("Specify either world_level or level, not both.")
        if custom_level_sequence is not None:
            custom_level_sequence = tuple(tuple(entry) for entry in custom_level_sequence)
            if not custom_level_sequence:
                raise PyBoyInvalidInputException("custom_level_sequence must not be empty.")
            for entry in custom_level_sequence:
                if len(entry) != 2:
                    raise PyBoyInvalidInputException("custom_level_sequence entries must be (world, level) tuples.")
                self._check_world_level(*entry, super_player_levels)
        self._level_sequence = custom_level_sequence
        challenge = challenge or unlock_level_select
        if world_level is not None:
            self.set_world_level(*world_level, super_player_levels=super_player_levels)
        elif level is not None:
            self._set_level(level, super_player_levels)

        self._wait_for_mode(MODE_TITLE_SCREEN, spam_start=True)
        self._wait_for_mode(MODE_MAIN_MENU, spam_start=True)
        mem = self.pyboy.memory
        if challenge:
            mem[ADDR_MENU_SELECTION] = 1
            self._press("a")
            self._wait_for_mode(MODE_CHALLENGE_SELECT)
            mem[ADDR_CHALLENGE_UNLOCK] = 1
            if self._level_selected and not unlock_level_select:
                self._set_level(self._selected_level, self._selected_super_player_levels)
                self._press("a")
                self._wait_for_mode(MODE_WORLD_MAP)
                self._press("start")
                self._wait_for_mode(MODE_LEVEL)
        else:
            if self._level_selected:
                mem[ADDR_MODE] = MODE_DEBUG_INIT
                self._wait_for_mode(MODE_DEBUG_MENU)
                mem[ADDR_LEVEL_SET] = int(self._selected_super_player_levels)
                mem[ADDR_SUBLEVEL] = self._selected_level
                self._press("a")
            else:
                self._press("a")
                self._wait_for_mode(MODE_FILE_SELECT)
                self._press("a")
                self._wait_for_mode(MODE_WORLD_MAP)
                self._press("start")
            self._wait_for_mode(MODE_LEVEL)

        PyBoyGameWrapper.start_game(self, timer_div=timer_div)
        self._sequence_index = -1
        if self._level_sequence is not None and not challenge and not super_player_levels:
            level_id = mem[ADDR_LEVEL]
            current = (level_id // 4 + 1, level_id % 4 + 1)
            if current in self._level_sequence:
                self._sequence_index = self._level_sequence.index(current)
        self._next_level_prepared = False

    def game_over(self):
        return self.pyboy.memory[ADDR_PLAYER_STATE] == 3 or self.pyboy.memory[ADDR_MODE] in _GAME_OVER_MODES

    def __repr__(self):
        return (
            f"Super Mario Bros. Deluxe: World {'-'.join(str(i) for i in self.world)}\n"
            f"Coins: {self.coins}\n"
            f"Lives left: {self.lives_left}\n"
            f"Score: {self.score}\n"
            f"Time left: {self.time_left}\n"
            f"Level progress: {self.level_progress}\n" + super().__repr__()
        )
