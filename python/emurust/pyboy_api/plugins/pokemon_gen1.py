"""Pokémon Red/Blue (titles "POKEMON RED", "POKEMON BLUE"): the screen's game area, its
walkability ("collision") map, and RAM-level access to party, money, bag, badges and events.

Numeric IDs work everywhere. Names ("PIKACHU", "POTION", map and event names) and text
written as ``str`` need pokered's name tables, which emurust does not carry: those calls raise
NotImplementedError naming the call.
"""

from __future__ import annotations

import numpy as np

from ..utils import bcd_to_dec, dec_to_bcd
from .base import PyBoyGameWrapper

CARTRIDGE_TITLES = ("POKEMON RED", "POKEMON BLUE")
PARTY_COUNT_ADDRESS = 0xD163
PARTY_SPECIES_ADDRESS = 0xD164
PARTY_MONS_ADDRESS = 0xD16B
PARTY_MON_SIZE = 0x2C
PARTY_LENGTH = 6
PARTY_SPECIES_SENTINEL = 0xFF
PLAYER_MONEY_ADDRESS = 0xD347
BAG_ITEM_COUNT_ADDRESS = 0xD31D
BAG_ITEMS_ADDRESS = 0xD31E
BAG_ITEM_CAPACITY = 20
ITEM_QUANTITY_MAX = 99
MAX_MONEY = 999999
NAME_LENGTH = 11
TEXT_TERMINATOR = 0x50
PLAYER_NAME_ADDRESS = 0xD158
PARTY_MON_OT_ADDRESS = 0xD273
PARTY_MON_NICKNAME_ADDRESS = 0xD2B5
DESTINATION_WARP_ID_ADDRESS = 0xD42F
STATUS_FLAGS3_ADDRESS = 0xD72D
WARP_DESTINATION_MAP_ADDRESS = 0xFF8B
BIT_WARP_FROM_CURRENT_SCRIPT = 3
CURRENT_OPPONENT_ADDRESS = 0xD059
BATTLE_TYPE_ADDRESS = 0xD05A
TRAINER_NUMBER_ADDRESS = 0xD05D
CURRENT_ENEMY_LEVEL_ADDRESS = 0xD127
OPPONENT_ID_OFFSET = 200
TRAINER_CLASS_COUNT = 0x2F
EVENT_FLAGS_ADDRESS = 0xD747
EVENT_FLAGS_END_ADDRESS = 0xD886  # last byte of wEventFlags (pokered)
OBTAINED_BADGES_ADDRESS = 0xD356
CURRENT_MAP_ADDRESS = 0xD35E  # wCurMap
PLAYER_Y_ADDRESS = 0xD361  # wYCoord
PLAYER_X_ADDRESS = 0xD362  # wXCoord
PARTY_MON_HP_OFFSET = 1  # u16 big endian
PARTY_MON_LEVEL_OFFSET = 0x21
PARTY_MON_MAX_HP_OFFSET = 0x22  # u16 big endian
BADGES = {"boulder": 0, "cascade": 1, "thunder": 2, "rainbow": 3, "soul": 4, "marsh": 5, "volcano": 6, "earth": 7}

# Offsets in a 44-byte party record (pokered's party_struct).
_U16_FIELDS = (
    ("hp", PARTY_MON_HP_OFFSET),
    ("ot_id", 12),
    ("hp_exp", 17),
    ("attack_exp", 19),
    ("defense_exp", 21),
    ("speed_exp", 23),
    ("special_exp", 25),
    ("dvs", 27),
    ("max_hp", PARTY_MON_MAX_HP_OFFSET),
    ("attack", 0x24),
    ("defense", 0x26),
    ("speed", 0x28),
    ("special", 0x2A),
)


def _needs_tables(call):
    return NotImplementedError(
        f"emurust.PyBoy: {call} with a name needs pokered's name tables, which emurust does not "
        "carry; pass the numeric ID instead"
    )


class GameWrapperPokemonGen1(PyBoyGameWrapper):
    cartridge_title = None

    def __init__(self, pyboy):
        super().__init__(pyboy, game_area_section=(0, 0, 20, 18), game_area_follow_scxy=True)
        self.sprite_offset = 0

    def enabled(self):
        return self.pyboy.cartridge_title in CARTRIDGE_TITLES

    # ------------------------------------------------------------------ start

    def _skip_dialogue(self, verbose):
        while self.pyboy.tilemap_window[18, 16] != 238:  # the dialogue's "more" arrow
            self.pyboy.tick(10, verbose, False)
        self.pyboy.button("a")
        self.pyboy.tick(60, verbose, False)

    def start_game(self, timer_div=None):
        """From power-on through the intro, Oak's speech and the naming screens to the
        first playable moment; that state is what :meth:`reset_game` returns to."""
        verbose = False
        self.pyboy.tick(120, verbose, False)
        for _ in range(8000):
            if self.pyboy.tilemap_window[2, 2] == 141:  # "NEW GAME"
                break
            if self.pyboy.tilemap_window[2, 2] == 130:  # "CONTINUE"
                raise Exception("Continue game")
            self.pyboy.button("start")
            self.pyboy.tick(10, verbose, False)
        else:
            raise Exception("Didn't find menu")
        self.pyboy.button("start")
        self.pyboy.tick(100, verbose, False)
        for _ in range(15):
            self._skip_dialogue(verbose)
        for expected, dialogues in ((129, 6), (145, 8)):  # "B" of BLUE, then "R" of RED
            if self.pyboy.tilemap_window[2, 4] != expected:
                raise Exception("Not name screen?")
            self.pyboy.button("down")
            self.pyboy.tick(10, verbose, False)
            self.pyboy.button("a")
            self.pyboy.tick(10, verbose, False)
            for _ in range(dialogues):
                self._skip_dialogue(verbose)
        self.pyboy.tick(240, verbose, False)
        PyBoyGameWrapper.start_game(self, timer_div=timer_div)

    # ------------------------------------------------------------------ RAM helpers

    def _read_u16(self, address):
        return (self.pyboy.memory[address] << 8) | self.pyboy.memory[address + 1]

    def _write_u16(self, address, value):
        self.pyboy.memory[address] = (value >> 8) & 0xFF
        self.pyboy.memory[address + 1] = value & 0xFF

    def _encode_text(self, text, terminate=False):
        if isinstance(text, str):
            raise _needs_tables("text given as str")
        encoded = list(text)
        if any(not 0 <= v <= 0xFF or v == TEXT_TERMINATOR for v in encoded):
            raise ValueError("Text bytes must be valid pokered text characters")
        return encoded + ([TEXT_TERMINATOR] if terminate else [])

    def _read_name(self, address):
        name = []
        for offset in range(NAME_LENGTH - 1):
            v = self.pyboy.memory[address + offset]
            if v == TEXT_TERMINATOR:
                break
            name.append(v)
        return tuple(name)

    def _write_name(self, address, name):
        encoded = self._encode_text(name) if isinstance(name, str) else list(name)
        if len(encoded) > NAME_LENGTH:
            raise ValueError(f"Names must contain at most {NAME_LENGTH - 1} characters")
        encoded += [TEXT_TERMINATOR] * (NAME_LENGTH - len(encoded))
        for offset, v in enumerate(encoded):
            self.pyboy.memory[address + offset] = v

    # ------------------------------------------------------------------ party

    def _read_party_mon(self, index):
        mem = self.pyboy.memory
        a = PARTY_MONS_ADDRESS + index * PARTY_MON_SIZE
        u16 = {k: self._read_u16(a + off) for k, off in _U16_FIELDS}
        return {
            "species": mem[a],
            "ot_name": self._read_name(PARTY_MON_OT_ADDRESS + index * NAME_LENGTH),
            "nickname": self._read_name(PARTY_MON_NICKNAME_ADDRESS + index * NAME_LENGTH),
            "hp": u16["hp"],
            "level": mem[a + PARTY_MON_LEVEL_OFFSET],
            "status": mem[a + 4],
            "type1": mem[a + 5],
            "type2": mem[a + 6],
            "catch_rate": mem[a + 7],
            "moves": tuple(mem[a + 8 + i] for i in range(4)),
            "ot_id": u16["ot_id"],
            "exp": mem[a + 14] << 16 | mem[a + 15] << 8 | mem[a + 16],
            "hp_exp": u16["hp_exp"],
            "attack_exp": u16["attack_exp"],
            "defense_exp": u16["defense_exp"],
            "speed_exp": u16["speed_exp"],
            "special_exp": u16["special_exp"],
            "dvs": u16["dvs"],
            "pp": tuple(mem[a + 29 + i] for i in range(4)),
            "max_hp": u16["max_hp"],
            "attack": u16["attack"],
            "defense": u16["defense"],
            "speed": u16["speed"],
            "special": u16["special"],
        }

    def _write_party_mon(self, index, pokemon):
        mem = self.pyboy.memory
        a = PARTY_MONS_ADDRESS + index * PARTY_MON_SIZE
        moves = tuple(pokemon.get("moves", (0x21, 0, 0, 0)))
        pp = tuple(pokemon.get("pp", tuple(35 if m else 0 for m in moves)))
        if len(moves) != 4 or len(pp) != 4:
            raise ValueError("moves and pp must contain exactly four values")
        if "nickname" not in pokemon:
            raise _needs_tables("set_party/add_pokemon without a 'nickname' (the default is the species name)")
        level = pokemon["level"]
        mem[a] = pokemon["species"]
        self._write_u16(a + 1, pokemon["hp"])
        mem[a + 3] = level
        mem[a + 4] = pokemon.get("status", 0)
        mem[a + 5] = pokemon.get("type1", 0)
        mem[a + 6] = pokemon.get("type2", 0)
        mem[a + 7] = pokemon.get("catch_rate", 45)
        for i, m in enumerate(moves):
            mem[a + 8 + i] = m
        self._write_u16(a + 12, pokemon.get("ot_id", 0))
        exp = pokemon.get("exp", level**3)
        mem[a + 14] = (exp >> 16) & 0xFF
        mem[a + 15] = (exp >> 8) & 0xFF
        mem[a + 16] = exp & 0xFF
        for key, off in (("hp_exp", 17), ("attack_exp", 19), ("defense_exp", 21), ("speed_exp", 23), ("special_exp", 25)):
            self._write_u16(a + off, pokemon.get(key, 0))
        self._write_u16(a + 27, pokemon.get("dvs", 0xFFFF))
        for i, v in enumerate(pp):
            mem[a + 29 + i] = v
        mem[a + PARTY_MON_LEVEL_OFFSET] = level
        for key, off in (("max_hp", 0x22), ("attack", 0x24), ("defense", 0x26), ("speed", 0x28), ("special", 0x2A)):
            self._write_u16(a + off, pokemon[key])
        self._write_name(PARTY_MON_OT_ADDRESS + index * NAME_LENGTH, pokemon.get("ot_name", self._read_name(PLAYER_NAME_ADDRESS)))
        self._write_name(PARTY_MON_NICKNAME_ADDRESS + index * NAME_LENGTH, pokemon["nickname"])

    @property
    def party(self):
        """The party, one dict per Pokémon (raw values: species ID, level, HP, stats, ...)."""
        count = self.pyboy.memory[PARTY_COUNT_ADDRESS]
        if count > PARTY_LENGTH:
            raise ValueError(f"Invalid party count: {count}")
        return [self._read_party_mon(i) for i in range(count)]

    @party.setter
    def party(self, party):
        self.set_party(party)

    def set_party(self, party):
        party = list(party)
        if len(party) > PARTY_LENGTH:
            raise ValueError("A Pokemon party can contain at most six Pokemon")
        for pokemon in party:
            species, level = pokemon["species"], pokemon["level"]
            if not 1 <= species <= 0xBE:
                raise ValueError(f"Invalid Pokemon species ID: {species:#x}")
            if not 1 <= level <= 100:
                raise ValueError(f"Invalid Pokemon level: {level}")
        mem = self.pyboy.memory
        mem[PARTY_COUNT_ADDRESS] = len(party)
        for i in range(PARTY_LENGTH + 1):
            mem[PARTY_SPECIES_ADDRESS + i] = party[i]["species"] if i < len(party) else PARTY_SPECIES_SENTINEL
        for i, pokemon in enumerate(party):
            self._write_party_mon(i, pokemon)
        for i in range(len(party), PARTY_LENGTH):
            a = PARTY_MONS_ADDRESS + i * PARTY_MON_SIZE
            for off in range(PARTY_MON_SIZE):
                mem[a + off] = 0
            self._write_name(PARTY_MON_OT_ADDRESS + i * NAME_LENGTH, ())
            self._write_name(PARTY_MON_NICKNAME_ADDRESS + i * NAME_LENGTH, ())

    def add_pokemon(self, species, level=2, moves=None, **kwargs):
        if len(self.party) == PARTY_LENGTH:
            raise ValueError("The party is full")
        if isinstance(species, str):
            raise _needs_tables("add_pokemon")
        if any(isinstance(m, str) for m in (moves or ())):
            raise _needs_tables("add_pokemon (moves)")
        moves = tuple(moves or ())
        if len(moves) > 4:
            raise ValueError("moves must contain at most four move IDs")
        moves += (0,) * (4 - len(moves))
        max_hp = kwargs.pop("max_hp", level * 2 + 10)
        stats = {"attack": level + 5, "defense": level + 5, "speed": level + 5, "special": level + 5}
        stats.update(kwargs.pop("stats", {}))
        pokemon = {
            "species": species,
            "level": level,
            "hp": kwargs.pop("hp", max_hp),
            "max_hp": max_hp,
            "moves": moves,
            "pp": kwargs.pop("pp", tuple(35 if m else 0 for m in moves)),
            **stats,
            **kwargs,
        }
        self.set_party(self.party + [pokemon])

    def remove_pokemon(self, index):
        party = self.party
        if not 0 <= index < len(party):
            raise IndexError(f"Invalid party index: {index} of {len(party)-1}")
        del party[index]
        self.set_party(party)

    # ------------------------------------------------------------------ money and bag

    @property
    def money(self):
        value = int.from_bytes(bytes(self.pyboy.memory[PLAYER_MONEY_ADDRESS : PLAYER_MONEY_ADDRESS + 3]), "big")
        return bcd_to_dec(value, byte_width=3, byteorder="big")

    def set_money(self, amount):
        if not isinstance(amount, int) or not 0 <= amount <= MAX_MONEY:
            raise ValueError(f"Money must be an integer from 0 to {MAX_MONEY}")
        value = dec_to_bcd(amount, byte_width=3, byteorder="big")
        self.pyboy.memory[PLAYER_MONEY_ADDRESS : PLAYER_MONEY_ADDRESS + 3] = value.to_bytes(3, "big")

    def _item_id(self, item):
        if isinstance(item, str):
            raise _needs_tables("item")
        if not isinstance(item, int) or not 1 <= item <= 0xFE:
            raise ValueError(f"Invalid item ID: {item}")
        return item

    @property
    def inventory(self):
        mem = self.pyboy.memory
        count = mem[BAG_ITEM_COUNT_ADDRESS]
        if count > BAG_ITEM_CAPACITY:
            raise ValueError(f"Invalid bag item count: {count}")
        return [
            {"item": mem[BAG_ITEMS_ADDRESS + 2 * i], "quantity": mem[BAG_ITEMS_ADDRESS + 2 * i + 1]} for i in range(count)
        ]

    def set_inventory(self, inventory, force=False):
        if isinstance(inventory, dict):
            inventory = inventory.items()
        entries, seen = [], set()
        for item, quantity in inventory:
            item = self._item_id(item)
            if item in seen:
                raise ValueError(f"Duplicate item: {item:#x}")
            if not isinstance(quantity, int) or (not force and not 0 <= quantity <= ITEM_QUANTITY_MAX):
                raise ValueError(f"Item quantity must be an integer from 1 to {ITEM_QUANTITY_MAX}")
            seen.add(item)
            entries.append((item, quantity))
        if len(entries) > BAG_ITEM_CAPACITY:
            raise ValueError(f"The bag can contain at most {BAG_ITEM_CAPACITY} item types")
        mem = self.pyboy.memory
        mem[BAG_ITEM_COUNT_ADDRESS] = len(entries)
        for i in range(BAG_ITEM_CAPACITY):
            a = BAG_ITEMS_ADDRESS + 2 * i
            item, quantity = entries[i] if i < len(entries) else (0xFF, 0)
            mem[a] = item
            mem[a + 1] = quantity

    def set_item(self, item, quantity, force=False):
        item = self._item_id(item)
        if not isinstance(quantity, int) or (not force and not 0 <= quantity <= ITEM_QUANTITY_MAX):
            raise ValueError(f"Item quantity must be an integer from 0 to {ITEM_QUANTITY_MAX}")
        inventory = {e["item"]: e["quantity"] for e in self.inventory}
        if quantity:
            inventory[item] = quantity
        else:
            inventory.pop(item, None)
        keep_forced = any(q == 0 or q > ITEM_QUANTITY_MAX for q in inventory.values())
        self.set_inventory(inventory, force=force or keep_forced)

    def remove_item(self, item, quantity=1):
        item = self._item_id(item)
        inventory = {e["item"]: e["quantity"] for e in self.inventory}
        if item not in inventory or not isinstance(quantity, int) or not 1 <= quantity <= inventory[item]:
            raise ValueError(f"Cannot remove quantity {quantity} of item {item:#x}")
        self.set_item(item, inventory[item] - quantity, force=inventory[item] > ITEM_QUANTITY_MAX)

    # ------------------------------------------------------------------ battles, warps, flags

    def start_wild_battle(self, species, level, force=False):
        if isinstance(species, str):
            raise _needs_tables("start_wild_battle")
        if not force:
            if not isinstance(species, int) or not 1 <= species <= 0xBE:
                raise ValueError(f"Invalid Pokemon species ID: {species}")
            if not isinstance(level, int) or not 1 <= level <= 100:
                raise ValueError(f"Invalid Pokemon level: {level}")
        mem = self.pyboy.memory
        mem[CURRENT_OPPONENT_ADDRESS] = species
        mem[CURRENT_ENEMY_LEVEL_ADDRESS] = level
        mem[BATTLE_TYPE_ADDRESS] = 0

    def start_trainer_battle(self, trainer_class, trainer_set=1, force=False):
        if isinstance(trainer_class, str) or not force:
            # Validating a set number needs pokered's table of parties per trainer class.
            raise _needs_tables("start_trainer_battle (without force=True)")
        mem = self.pyboy.memory
        mem[CURRENT_OPPONENT_ADDRESS] = OPPONENT_ID_OFFSET + trainer_class
        mem[TRAINER_NUMBER_ADDRESS] = trainer_set
        mem[BATTLE_TYPE_ADDRESS] = 0

    def warp(self, destination):
        if isinstance(destination, str):
            raise _needs_tables("warp")
        if not 0 <= destination <= 0xFF:
            raise ValueError(f"Invalid map ID: {destination:#x}")
        mem = self.pyboy.memory
        mem[WARP_DESTINATION_MAP_ADDRESS] = destination
        mem[DESTINATION_WARP_ID_ADDRESS] = 0
        mem[STATUS_FLAGS3_ADDRESS] |= 1 << BIT_WARP_FROM_CURRENT_SCRIPT

    def _event_address(self, event, call):
        if isinstance(event, str):
            raise _needs_tables(call)
        if not isinstance(event, int):
            raise ValueError(f"Invalid event flag: {event}")
        return EVENT_FLAGS_ADDRESS + event // 8, 1 << (event % 8)

    def set_event_flag(self, event):
        address, bit = self._event_address(event, "set_event_flag")
        self.pyboy.memory[address] |= bit

    def reset_event_flag(self, event):
        address, bit = self._event_address(event, "reset_event_flag")
        self.pyboy.memory[address] &= ~bit

    def _badge_bit(self, badge):
        badge = BADGES.get(badge, badge)
        if not isinstance(badge, int) or not 0 <= badge < len(BADGES):
            raise ValueError(f"Invalid badge: {badge}")
        return 1 << badge

    def set_badge(self, badge):
        self.pyboy.memory[OBTAINED_BADGES_ADDRESS] |= self._badge_bit(badge)

    def reset_badge(self, badge):
        self.pyboy.memory[OBTAINED_BADGES_ADDRESS] &= ~self._badge_bit(badge)

    # ------------------------------------------------------------------ game area

    def post_tick(self):
        self._tile_cache_invalid = True
        self._sprite_cache_invalid = True
        wy = self.pyboy.screen.tilemap_position_list[0][3]
        self.use_background(wy != 0)

    def _get_screen_background_tilemap(self):
        (scx, scy), _ = self.pyboy.screen.get_tilemap_position()
        tilemap = np.array(self.pyboy.tilemap_background[:, :])
        return np.roll(np.roll(tilemap, -scy // 8, axis=0), -scx // 8, axis=1)[:18, :20]

    def _get_screen_walkable_matrix(self):
        mem = self.pyboy.memory
        walkable = []
        collision_ptr = mem[0xD530] + (mem[0xD531] << 8)
        if mem[0xFFD7] > 0:  # tileset type: outdoor tilesets have walkable grass
            grass = mem[0xD535]
            if grass != 0xFF:
                walkable.append(grass + 0x100)
        for i in range(0x180):
            tile = mem[collision_ptr + i]
            if tile == 0xFF:
                break
            walkable.append(tile + 0x100)
        screen = self._get_screen_background_tilemap()
        # One walkability value per 16x16 block: its bottom-left tile.
        return np.isin(screen[1::2, ::2], walkable).astype(np.uint8)

    def game_area_collision(self):
        width, height = self.game_area_section[2], self.game_area_section[3]
        area = np.ndarray(shape=(height, width), dtype=np.uint32)
        blocks = self._get_screen_walkable_matrix()
        for i in range(height // 2):
            for j in range(width // 2):
                area[i * 2 : i * 2 + 2, j * 2 : j * 2 + 2] = blocks[i][j]
        return area

    def __repr__(self):
        return "Pokemon Gen 1:\n" + super().__repr__()
