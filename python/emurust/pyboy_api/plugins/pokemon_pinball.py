"""Pokémon Pinball (cartridge title "POKEPINBALLVPH", a Game Boy Color cartridge): score,
balls, ball position and speed, stage, map, Pokédex, and event counters fed by ROM hooks.

RAM and ROM locations follow the pret/pokepinball disassembly, as PyBoy 2.8.1's wrapper does.
"""

from __future__ import annotations

from enum import Enum

from ..utils import PyBoyException, WindowEvent, bcd_to_dec
from .base import PyBoyGameWrapper


class Stage(Enum):
    """Values of the current-stage byte."""

    RED_TOP = 0
    RED_BOTTOM = 1
    BLUE_TOP = 4
    BLUE_BOTTOM = 5
    GENGAR = 7
    MEWTWO = 9
    MEOWTH = 11
    DIGLETT = 13
    SEEL = 15


_DEX = """
BULBASAUR IVYSAUR VENUSAUR CHARMANDER CHARMELEON CHARIZARD SQUIRTLE WARTORTLE BLASTOISE CATERPIE
METAPOD BUTTERFREE WEEDLE KAKUNA BEEDRILL PIDGEY PIDGEOTTO PIDGEOT RATTATA RATICATE SPEAROW FEAROW
EKANS ARBOK PIKACHU RAICHU SANDSHREW SANDSLASH NIDORAN_F NIDORINA NIDOQUEEN NIDORAN_M NIDORINO
NIDOKING CLEFAIRY CLEFABLE VULPIX NINETALES JIGGLYPUFF WIGGLYTUFF ZUBAT GOLBAT ODDISH GLOOM
VILEPLUME PARAS PARASECT VENONAT VENOMOTH DIGLETT DUGTRIO MEOWTH PERSIAN PSYDUCK GOLDUCK MANKEY
PRIMEAPE GROWLITHE ARCANINE POLIWAG POLIWHIRL POLIWRATH ABRA KADABRA ALAKAZAM MACHOP MACHOKE
MACHAMP BELLSPROUT WEEPINBELL VICTREEBEL TENTACOOL TENTACRUEL GEODUDE GRAVELER GOLEM PONYTA
RAPIDASH SLOWPOKE SLOWBRO MAGNEMITE MAGNETON FARFETCH_D DODUO DODRIO SEEL DEWGONG GRIMER MUK
SHELLDER CLOYSTER GASTLY HAUNTER GENGAR ONIX DROWZEE HYPNO KRABBY KINGLER VOLTORB ELECTRODE
EXEGGCUTE EXEGGUTOR CUBONE MAROWAK HITMONLEE HITMONCHAN LICKITUNG KOFFING WEEZING RHYHORN RHYDON
CHANSEY TANGELA KANGASKHAN HORSEA SEADRA GOLDEEN SEAKING STARYU STARMIE MR_MIME SCYTHER JYNX
ELECTABUZZ MAGMAR PINSIR TAUROS MAGIKARP GYARADOS LAPRAS DITTO EEVEE VAPOREON JOLTEON FLAREON
PORYGON OMANYTE OMASTAR KABUTO KABUTOPS AERODACTYL SNORLAX ARTICUNO ZAPDOS MOLTRES DRATINI
DRAGONAIR DRAGONITE MEWTWO MEW
"""

#: The 151 Pokémon in Pokédex order (value = national number - 1).
Pokemon = Enum("Pokemon", [(name, i) for i, name in enumerate(_DEX.split())], module=__name__)
Pokemon.__doc__ = "Pokémon as the game numbers them (national Pokédex number - 1)."

_MAPS = """
PALLET_TOWN VIRIDIAN_CITY VIRIDIAN_FOREST PEWTER_CITY MT_MOON CERULEAN_CITY VERMILION_SEASIDE
VERMILION_STREETS ROCK_MOUNTAIN LAVENDER_TOWN CELADON_CITY CYCLING_ROAD FUCHSIA_CITY SAFARI_ZONE
SAFFRON_CITY SEAFOAM_ISLANDS CINNABAR_ISLAND INDIGO_PLATEAU
"""
Maps = Enum("Maps", [(name, i) for i, name in enumerate(_MAPS.split())], module=__name__)
Maps.__doc__ = "Values of the current-map byte."


class SpecialMode(Enum):
    CATCH = 0
    EVOLVE = 1
    STAGE_CHANGE = 2


class BallType(Enum):
    POKEBALL = 0
    GREATBALL = 2
    ULTRABALL = 3
    MASTERBALL = 5


class BallSize(Enum):
    DEFAULT = 0
    MINI = 1
    SUPERMINI = 2


RedStages = [Stage.RED_TOP, Stage.RED_BOTTOM]
BlueStages = [Stage.BLUE_TOP, Stage.BLUE_BOTTOM]
RedBonusStages = [Stage.DIGLETT, Stage.GENGAR, Stage.MEWTWO]
BlueBonusStages = [Stage.MEOWTH, Stage.SEEL, Stage.MEWTWO]
AllBonusStageValues = RedBonusStages + BlueBonusStages

# ------------------------------------------------------------------------------ RAM

ADDR_SCORE = 0xD46A  # 6 bytes of BCD; the game shows one more (always 0) digit
SCORE_BYTE_WIDTH = 6
MAX_SCORE = 999999999999 * 10
ADDR_BALL_TYPE = 0xD47E
ADDR_MULTIPLIER = 0xD482
ADDR_BONUS_STAGE_WON = 0xD49A
ADDR_EXTRA_BALLS = 0xD49B
ADDR_BALLS_LEFT = 0xD49D  # 1 for the first ball, +1 per launch
ADDR_NUM_BALL_LIVES = 0xD49E
ADDR_BALL_SAVER_SECONDS_LEFT = 0xD4A4
ADDR_CURRENT_STAGE = 0xD4AC
ADDR_CURRENT_STAGE_BACKUP = 0xD4AD
ADDR_STAGE_COLLISION_STATE = 0xD4AF
ADDR_BALL_X = 0xD4B3
ADDR_BALL_Y = 0xD4B5
ADDR_BALL_X_VELOCITY = 0xD4BB
ADDR_BALL_Y_VELOCITY = 0xD4BD
ADDR_BALL_SIZE = 0xD4C8
ADDR_WHICH_DIGLETT = 0xD4ED
ADDR_LEFT_MAP_MOVE_COUNTER = 0xD4F0
ADDR_RIGHT_MAP_MOVE_COUNTER = 0xD4F2
ADDR_PIKACHU_SAVER_CHARGE = 0xD517
PIKACHU_SAVER_CHARGE_MAX = 15
ADDR_CURRENT_MAP = 0xD54A
ADDR_SPECIAL_MODE_ACTIVE = 0xD54B
ADDR_SPECIAL_MODE_STATE = 0xD54D  # 0 running, 1 completed, 2 failed (evolution)
ADDR_SPECIAL_MODE = 0xD550
ADDR_RARE_POKEMON_FLAG = 0xD55B
ADDR_POKEMON_TO_CATCH = 0xD579
ADDR_TIMER_SECONDS = 0xD57A
ADDR_TIMER_MINUTES = 0xD57B
ADDR_TIMER_FRAMES = 0xD57C
ADDR_TIMER_ACTIVE = 0xD57D
ADDR_TIMER_RAN_OUT = 0xD57E
ADDR_TIMER_PAUSED = 0xD57F
ADDR_D580 = 0xD580  # set with the timer when a mode starts
ADDR_TILE_ILLUMINATION = 0xD586
TILE_ILLUMINATION_BYTE_WIDTH = 48
ADDR_NUM_CATCH_TILES_FLIPPED = 0xD5B6
ADDR_NUM_MON_HITS = 0xD5C0
ADDR_D5C6 = 0xD5C6  # cleared when catch mode starts
ADDR_CURRENT_SLOT_FRAME = 0xD603
CURRENT_SLOT_FRAME_VALUE = 0x7  # the slot frame just before a bonus stage returns the ball
ADDR_GAME_OVER = 0xD616
ADDR_STAGE_COLLISION_STATE_HELPER = 0xD7AD
ADDR_POKEDEX = 0xD962  # one byte per Pokémon: 0 unknown, 1 seen, 2 caught
ADDR_MESSAGE_BUFFER = 0xC600
MESSAGE_BUFFER_BYTE_WIDTH = 100

# ------------------------------------------------------------------------------ ROM (bank, address)

# The start-of-game stage choice (11 bytes) that start_game(stage=...) replaces by "LD A,stage".
ADDR_TO_NO_OP_BANK_STAGE_OVERRIDE = 3
ADDR_TO_NO_OP_STAGE_OVERRIDE = 0x1799
NO_OP_BYTE_WIDTH_STAGE_OVERRIDE = 11

BANK_OFFSET_START_EVOLUTION = (4, 0x4AB3)
BANK_OFFSET_PAUSE_METHOD_BANK = (3, 0x5954)
BANK_OFFSET_PAUSE_METHOD_CALL = (3, 0x5956)
BANK_OFFSET_DISABLE_TIMER = (4, 0x4D64)
BANK_OFFSET_COMPLETE_EVOLUTION_MODE_RED_FIELD = (8, 0x470B)
BANK_OFFSET_COMPLETE_EVOLUTION_MODE_BLUE_FIELD = (8, 0x4D30)
BANK_OFFSET_FAIL_EVOLUTION_MODE_RED_FIELD = (8, 0x4757)
BANK_OFFSET_FAIL_EVOLUTION_MODE_BLUE_FIELD = (8, 0x4D7C)
BANK_OFFSET_ADD_CAUGHT_POKEMON_TO_PARTY = (4, 0x473D)
BANK_OFFSET_SET_POKEMON_SEEN_FLAG = (4, 0x4753)
BANK_OFFSET_INIT_GENGAR_BONUS_STAGE = (6, 0x4099)
BANK_OFFSET_INIT_MEWTWO_BONUS_STAGE = (6, 0x524F)
BANK_OFFSET_INIT_DIGLETT_BONUS_STAGE = (6, 0x59F2)
BANK_OFFSET_INIT_MEOWTH_BONUS_STAGE = (9, 0x4000)
BANK_OFFSET_INIT_SEEL_BONUS_STAGE = (9, 0x5A7C)
BANK_OFFSET_GENGAR_STAGE_COMPLETE = (6, 0x4A14)
BANK_OFFSET_MEWTWO_STAGE_COMPLETE = (6, 0x565E)
BANK_OFFSET_DIGLETT_STAGE_COMPLETE = (6, 0x6BF2)
BANK_OFFSET_MEOWTH_STAGE_COMPLETE = (9, 0x444B)
BANK_OFFSET_SEEL_STAGE_COMPLETE = (9, 0x5C5A)
BANK_OFFSET_MAP_CHANGE_ATTEMPT = (0xC, 0x41EC)
BANK_OFFSET_MAP_CHANGE_SUCCESS = (0xC, 0x55D5)
BANK_OFFSET_PIKA_SAVER_INCREMENT_RED_FIELD = (5, 0x4E8A)
BANK_OFFSET_PIKA_SAVER_INCREMENT_BLUE_FIELD = (7, 0x4AFF)
BANK_OFFSET_PIKA_SAVER_USED_RED_FIELD = (5, 0x6634)
BANK_OFFSET_PIKA_SAVER_USED_BLUE_FIELD = (7, 0x50C9)
BANK_OFFSET_BALL_UPGRADE_TRIGGER_RED_FIELD = (5, 0x53C0)
BANK_OFFSET_BALL_UPGRADE_TRIGGER_BLUE_FIELD = (7, 0x63DE)
BANK_OFFSET_ADD_EXTRA_BALL = (0xC, 0x4164)
BANK_OFFSET_SLOT_REWARD_EXTRA_BALL = (3, 0x6FA7)
BANK_OFFSET_OPENED_SLOT_BY_GETTING_4_CAVE_LIGHTS_RED = (5, 0x5284)
BANK_OFFSET_OPENED_SLOT_BY_GETTING_4_CAVE_LIGHTS_BLUE = (7, 0x667E)
BANK_OFFSET_SLOT_REWARD_ROULETTE = (3, 0x6D8E)
BANK_OFFSET_BALL_SAVED_RED = (3, 0x5D7F)
BANK_OFFSET_BALL_SAVED_BLUE = (3, 0x5E58)

# Counter hooks: (bank, address) -> the counter it adds one to (or a method taking the wrapper).
# Registered in this order (the order only shows when a user hook already holds an address).


def _upgrade(gw):
    counter = {0: "great_ball_upgrades", 2: "ultra_ball_upgrades", 3: "master_ball_upgrades"}.get(gw.ball_type)
    if counter is not None:
        setattr(gw, counter, getattr(gw, counter) + 1)


def _slot_extra_ball(gw):
    # Extra balls won on the slot are luck, not play: take back the count the ball added.
    gw.extra_balls_added -= 1


_COUNTER_HOOKS = (
    (BANK_OFFSET_COMPLETE_EVOLUTION_MODE_RED_FIELD, "evolution_success_count"),
    (BANK_OFFSET_COMPLETE_EVOLUTION_MODE_BLUE_FIELD, "evolution_success_count"),
    (BANK_OFFSET_FAIL_EVOLUTION_MODE_RED_FIELD, "evolution_failure_count"),
    (BANK_OFFSET_FAIL_EVOLUTION_MODE_BLUE_FIELD, "evolution_failure_count"),
    (BANK_OFFSET_ADD_CAUGHT_POKEMON_TO_PARTY, "pokemon_caught_in_session"),
    (BANK_OFFSET_SET_POKEMON_SEEN_FLAG, "pokemon_seen_in_session"),
    (BANK_OFFSET_INIT_MEOWTH_BONUS_STAGE, "meowth_stages_visited"),
    (BANK_OFFSET_INIT_DIGLETT_BONUS_STAGE, "diglett_stages_visited"),
    (BANK_OFFSET_INIT_GENGAR_BONUS_STAGE, "gengar_stages_visited"),
    (BANK_OFFSET_INIT_SEEL_BONUS_STAGE, "seel_stages_visited"),
    (BANK_OFFSET_INIT_MEWTWO_BONUS_STAGE, "mewtwo_stages_visited"),
    (BANK_OFFSET_MEOWTH_STAGE_COMPLETE, "meowth_stages_completed"),
    (BANK_OFFSET_DIGLETT_STAGE_COMPLETE, "diglett_stages_completed"),
    (BANK_OFFSET_GENGAR_STAGE_COMPLETE, "gengar_stages_completed"),
    (BANK_OFFSET_SEEL_STAGE_COMPLETE, "seel_stages_completed"),
    (BANK_OFFSET_MEWTWO_STAGE_COMPLETE, "mewtwo_stages_completed"),
    (BANK_OFFSET_MAP_CHANGE_ATTEMPT, "map_change_attempts"),
    (BANK_OFFSET_MAP_CHANGE_SUCCESS, "map_change_successes"),
    (BANK_OFFSET_PIKA_SAVER_INCREMENT_BLUE_FIELD, "pikachu_saver_increments"),
    (BANK_OFFSET_PIKA_SAVER_INCREMENT_RED_FIELD, "pikachu_saver_increments"),
    (BANK_OFFSET_PIKA_SAVER_USED_BLUE_FIELD, "pikachu_saver_used"),
    (BANK_OFFSET_PIKA_SAVER_USED_RED_FIELD, "pikachu_saver_used"),
    (BANK_OFFSET_BALL_UPGRADE_TRIGGER_BLUE_FIELD, _upgrade),
    (BANK_OFFSET_BALL_UPGRADE_TRIGGER_RED_FIELD, _upgrade),
    (BANK_OFFSET_ADD_EXTRA_BALL, "extra_balls_added"),
    (BANK_OFFSET_SLOT_REWARD_EXTRA_BALL, _slot_extra_ball),
    (BANK_OFFSET_OPENED_SLOT_BY_GETTING_4_CAVE_LIGHTS_BLUE, "roulette_slots_opened"),
    (BANK_OFFSET_OPENED_SLOT_BY_GETTING_4_CAVE_LIGHTS_RED, "roulette_slots_opened"),
    (BANK_OFFSET_SLOT_REWARD_ROULETTE, "roulette_slots_entered"),
    (BANK_OFFSET_BALL_SAVED_RED, "lost_ball_during_saver"),
    (BANK_OFFSET_BALL_SAVED_BLUE, "lost_ball_during_saver"),
)

#: Counters the hooks feed, all set to 0 by :meth:`GameWrapperPokemonPinball.reset_tracking`.
_TRACKED = (
    "pokemon_caught_in_session pokemon_seen_in_session evolution_failure_count evolution_success_count "
    "diglett_stages_completed diglett_stages_visited gengar_stages_completed gengar_stages_visited "
    "meowth_stages_completed meowth_stages_visited mewtwo_stages_completed mewtwo_stages_visited "
    "seel_stages_completed seel_stages_visited pikachu_saver_increments pikachu_saver_used "
    "map_change_attempts map_change_successes great_ball_upgrades ultra_ball_upgrades master_ball_upgrades "
    "extra_balls_added lost_ball_during_saver roulette_slots_opened roulette_slots_entered"
).split()


def _counter_hook(counter):
    if callable(counter):
        return counter

    def bump(gw):
        setattr(gw, counter, getattr(gw, counter) + 1)

    return bump


# ------------------------------------------------------------------------------ wild Pokémon

# Each map's encounter table has 16 slots; "NAME*k" fills k of them (k = 1 when omitted).
# The rare tables of the Indigo Plateau hold 17 slots' worth, as in PyBoy's tables.
_RED = {
    "PALLET_TOWN": "BULBASAUR CHARMANDER*6 PIDGEY*3 RATTATA*3 NIDORAN_M POLIWAG TENTACOOL",
    "VIRIDIAN_FOREST": "WEEDLE*5 PIDGEY*5 RATTATA*5 PIKACHU",
    "PEWTER_CITY": "PIDGEY*2 SPEAROW*6 EKANS JIGGLYPUFF*5 MAGIKARP*2",
    "CERULEAN_CITY": "WEEDLE*2 PIDGEY ODDISH*5 PSYDUCK MANKEY*3 ABRA*2 KRABBY GOLDEEN",
    "VERMILION_SEASIDE": "PIDGEY SPEAROW EKANS*2 ODDISH*2 MANKEY*2 SHELLDER*3 DROWZEE*2 KRABBY*3",
    "ROCK_MOUNTAIN": "RATTATA SPEAROW EKANS*3 ZUBAT DIGLETT*3 MACHOP GEODUDE SLOWPOKE ONIX VOLTORB*3",
    "LAVENDER_TOWN": "PIDGEY*2 EKANS*2 MANKEY*2 GROWLITHE*2 MAGNEMITE*2 GASTLY*5 CUBONE",
    "CYCLING_ROAD": "RATTATA*2 SPEAROW*2 TENTACOOL*2 DODUO*3 KRABBY*2 LICKITUNG GOLDEEN*2 MAGIKARP*2",
    "SAFARI_ZONE": "NIDORAN_M*4 PARAS*4 DODUO*4 RHYHORN*4",
    "SEAFOAM_ISLANDS": "ZUBAT PSYDUCK TENTACOOL SLOWPOKE SEEL SHELLDER KRABBY HORSEA*4 GOLDEEN STARYU*4",
    "CINNABAR_ISLAND": "GROWLITHE*4 PONYTA*4 GRIMER*2 KOFFING*4 TANGELA*2",
    "INDIGO_PLATEAU": "SPEAROW EKANS ZUBAT*2 MACHOP*3 GEODUDE*3 ONIX*3 DITTO*3",
}
_RED_RARE = {
    "PALLET_TOWN": "BULBASAUR*3 CHARMANDER PIDGEY RATTATA NIDORAN_M*3 POLIWAG*4 TENTACOOL*3",
    "VIRIDIAN_FOREST": "CATERPIE*2 WEEDLE*3 PIDGEY*2 RATTATA*2 PIKACHU*7",
    "PEWTER_CITY": "PIDGEY*2 SPEAROW*3 EKANS*4 JIGGLYPUFF*3 MAGIKARP*4",
    "CERULEAN_CITY": "CATERPIE NIDORAN_M ODDISH PSYDUCK*2 MANKEY*2 ABRA*3 KRABBY GOLDEEN*2 JYNX*3",
    "VERMILION_SEASIDE": "EKANS*4 ODDISH MANKEY FARFETCH_D*4 SHELLDER*2 DROWZEE*2 KRABBY*2",
    "ROCK_MOUNTAIN": "ZUBAT*2 DIGLETT MACHOP*2 GEODUDE*2 SLOWPOKE*2 ONIX*2 VOLTORB*2 MR_MIME*3",
    "LAVENDER_TOWN": "EKANS MANKEY GROWLITHE MAGNEMITE*2 GASTLY*2 CUBONE*3 ELECTABUZZ*3 ZAPDOS*3",
    "CYCLING_ROAD": "TENTACOOL DODUO*5 KRABBY LICKITUNG*4 GOLDEEN MAGIKARP SNORLAX*3",
    "SAFARI_ZONE": "NIDORAN_M*2 PARAS*2 RHYHORN*2 CHANSEY*4 SCYTHER*2 TAUROS*2 DRATINI*2",
    "SEAFOAM_ISLANDS": "SEEL*5 GOLDEEN*4 STARYU*4 ARTICUNO*3",
    "CINNABAR_ISLAND": "GROWLITHE*2 PONYTA*2 GRIMER KOFFING*2 TANGELA*3 OMANYTE*3 KABUTO*3",
    "INDIGO_PLATEAU": "SPEAROW EKANS ZUBAT MACHOP GEODUDE ONIX DITTO*4 MOLTRES*3 MEWTWO*3 MEW",
}
_BLUE = {
    "VIRIDIAN_CITY": "BULBASAUR SQUIRTLE*5 SPEAROW NIDORAN_F*3 NIDORAN_M*3 POLIWAG TENTACOOL GOLDEEN",
    "VIRIDIAN_FOREST": "CATERPIE*5 PIDGEY*5 RATTATA*5 PIKACHU",
    "MT_MOON": "RATTATA SPEAROW*2 EKANS*2 SANDSHREW*2 ZUBAT*2 PARAS*2 PSYDUCK GEODUDE*2 KRABBY GOLDEEN",
    "CERULEAN_CITY": "CATERPIE*2 PIDGEY MEOWTH*3 PSYDUCK ABRA*2 BELLSPROUT*5 KRABBY GOLDEEN",
    "VERMILION_STREETS": "PIDGEY SPEAROW SANDSHREW*2 MEOWTH*2 BELLSPROUT*2 SHELLDER*3 DROWZEE*2 KRABBY*3",
    "ROCK_MOUNTAIN": "RATTATA SPEAROW SANDSHREW*2 ZUBAT DIGLETT*4 MACHOP GEODUDE SLOWPOKE ONIX VOLTORB*3",
    "CELADON_CITY": "PIDGEY*2 VULPIX*2 ODDISH*2 MEOWTH*3 MANKEY*3 GROWLITHE*2 BELLSPROUT*2",
    "FUCHSIA_CITY": "VENONAT*2 KRABBY*3 EXEGGCUTE*2 KANGASKHAN*2 GOLDEEN*3 MAGIKARP*4",
    "SAFARI_ZONE": "NIDORAN_F*4 PARAS*4 DODUO*4 RHYHORN*4",
    "SAFFRON_CITY": "PIDGEY*2 EKANS*3 SANDSHREW*3 VULPIX ODDISH*2 MEOWTH MANKEY GROWLITHE BELLSPROUT*2",
    "CINNABAR_ISLAND": "VULPIX*3 PONYTA*5 GRIMER*2 KOFFING*4 TANGELA*2",
    "INDIGO_PLATEAU": "SPEAROW SANDSHREW ZUBAT*2 MACHOP*3 GEODUDE*3 ONIX*3 DITTO*3",
}
_BLUE_RARE = {
    "VIRIDIAN_CITY": "BULBASAUR*3 SQUIRTLE SPEAROW*2 NIDORAN_F*2 NIDORAN_M*2 POLIWAG*2 TENTACOOL*2 GOLDEEN*2",
    "VIRIDIAN_FOREST": "CATERPIE*3 WEEDLE*2 PIDGEY*2 RATTATA*2 PIKACHU*7",
    "MT_MOON": "EKANS*2 SANDSHREW*2 CLEFAIRY*6 ZUBAT*2 PARAS*2 GEODUDE*2",
    "CERULEAN_CITY": "WEEDLE NIDORAN_M MEOWTH*2 PSYDUCK*2 ABRA*3 BELLSPROUT KRABBY GOLDEEN*2 JYNX*3",
    "VERMILION_STREETS": "SANDSHREW*4 MEOWTH BELLSPROUT FARFETCH_D*4 SHELLDER*2 DROWZEE*2 KRABBY*2",
    "ROCK_MOUNTAIN": "ZUBAT*2 DIGLETT MACHOP*2 GEODUDE*2 SLOWPOKE*2 ONIX*2 VOLTORB*2 MR_MIME*3",
    "CELADON_CITY": "CLEFAIRY*2 ABRA*2 SCYTHER PINSIR EEVEE*3 PORYGON*4 DRATINI*3",
    "FUCHSIA_CITY": "VENONAT*4 KRABBY EXEGGCUTE*4 KANGASKHAN*4 GOLDEEN MAGIKARP*2",
    "SAFARI_ZONE": "NIDORAN_F*2 PARAS*2 RHYHORN*2 CHANSEY*4 PINSIR*2 TAUROS*2 DRATINI*2",
    "SAFFRON_CITY": "PIDGEY EKANS SANDSHREW VULPIX MEOWTH MANKEY GROWLITHE HITMONLEE*3 HITMONCHAN*3 LAPRAS*3",
    "CINNABAR_ISLAND": "VULPIX PONYTA*2 GRIMER*2 KOFFING*2 TANGELA*3 MAGMAR*3 AERODACTYL*3",
    "INDIGO_PLATEAU": "SPEAROW SANDSHREW ZUBAT MACHOP GEODUDE ONIX DITTO*4 MOLTRES*3 MEWTWO*3 MEW",
}


def _encounter_rates(table):
    """{Maps: {Pokemon: share}} from the slot notation above (shares are slots / 16)."""
    rates = {}
    for map_name, slots in table.items():
        per_map = {}
        for entry in slots.split():
            name, _, count = entry.partition("*")
            per_map[Pokemon[name]] = int(count or 1) / 16
        rates[Maps[map_name]] = per_map
    return rates


#: The wild Pokémon of each map of the Red stage, with their encounter rates.
RedStageMapWildMons = _encounter_rates(_RED)
RedStageMapWildMonsRare = _encounter_rates(_RED_RARE)
#: The wild Pokémon of each map of the Blue stage, with their encounter rates.
BlueStageMapWildMons = _encounter_rates(_BLUE)
BlueStageMapWildMonsRare = _encounter_rates(_BLUE_RARE)


class GameWrapperPokemonPinball(PyBoyGameWrapper):
    """Pokémon Pinball. The fields are refreshed every frame; the counters (catches,
    evolutions, bonus stages, ...) are fed by hooks on the game's routines."""

    cartridge_title = "POKEPINBALLVPH"

    def __init__(self, pyboy):
        self.score = 0
        self.balls_left = 0
        self.game_over = False
        self.ball_type = BallType.POKEBALL.value
        self.multiplier = 1
        self.current_stage = 0
        self.ball_size = 0
        self.ball_saver_seconds_left = 0
        self.pokedex = [False] * 151
        self._unlimited_saver = False
        self.ball_x = 0
        self.ball_y = 0
        self.ball_x_velocity = 0
        self.ball_y_velocity = 0
        self.special_mode = 0
        self.special_mode_active = 0
        self.pikachu_saver_charge = 0
        self.current_map = 0
        # Declared by PyBoy's compiled wrapper but never set by it.
        self.evolution_count = 0
        self.slots_entered = 0
        self.slots_opened = 0
        for counter in _TRACKED:
            setattr(self, counter, 0)
        super().__init__(pyboy, game_area_section=(0, 0, 20, 16), game_area_follow_scxy=True)
        if self.enabled():
            for (bank, addr), counter in _COUNTER_HOOKS:
                pyboy.hook_register(bank, addr, _counter_hook(counter), self)

    # ------------------------------------------------------------------ readers

    def post_tick(self):
        self._tile_cache_invalid = True
        self._sprite_cache_invalid = True
        mem = self.pyboy.memory
        self.ball_type = mem[ADDR_BALL_TYPE]
        self.balls_left = 3 - mem[ADDR_BALLS_LEFT] + mem[ADDR_EXTRA_BALLS]
        self.game_over = mem[ADDR_GAME_OVER] == 1
        self.current_map = mem[ADDR_CURRENT_MAP]
        self.current_stage = mem[ADDR_CURRENT_STAGE]
        self.special_mode = mem[ADDR_SPECIAL_MODE]
        self.special_mode_active = int(mem[ADDR_SPECIAL_MODE_ACTIVE] == 1)  # an int field in PyBoy
        score_bcd = int.from_bytes(bytes(mem[ADDR_SCORE : ADDR_SCORE + SCORE_BYTE_WIDTH]), "little")
        self.score = bcd_to_dec(score_bcd, byte_width=SCORE_BYTE_WIDTH) * 10
        self.multiplier = mem[ADDR_MULTIPLIER]
        self.ball_size = mem[ADDR_BALL_SIZE]
        self.ball_x = mem[ADDR_BALL_X]
        self.ball_y = mem[ADDR_BALL_Y]
        self.ball_x_velocity = mem[ADDR_BALL_X_VELOCITY]
        self.ball_y_velocity = mem[ADDR_BALL_Y_VELOCITY]
        self.pikachu_saver_charge = mem[ADDR_PIKACHU_SAVER_CHARGE]
        if self._unlimited_saver:
            mem[ADDR_BALL_SAVER_SECONDS_LEFT] = 30
        self.ball_saver_seconds_left = mem[ADDR_BALL_SAVER_SECONDS_LEFT]
        self.pokedex = list(mem[ADDR_POKEDEX : ADDR_POKEDEX + 151])

    def has_pokemon(self, pokemon):
        """True when the Pokédex marks ``pokemon`` (a :class:`Pokemon`) as caught."""
        return self.pokedex[pokemon.value] == 2

    def get_unique_pokemon_caught(self):
        """How many Pokémon the Pokédex marks as caught."""
        return self.pokedex.count(2)

    def current_map_completed(self):
        """True unless a Pokémon of the current map's tables (Red or Blue stage) is not caught.

        As in PyBoy 2.8.1, ``current_stage`` (an int) is looked up among :class:`Stage` members,
        which never match, so this returns True."""
        for stages, tables in ((RedStages, (RedStageMapWildMons, RedStageMapWildMonsRare)), (BlueStages, (BlueStageMapWildMons, BlueStageMapWildMonsRare))):
            if self.current_stage in stages:
                return all(self.has_pokemon(p) for table in tables for p in table[self.current_map])
        return True

    def reset_tracking(self):
        """Set every hook-fed counter back to 0."""
        for counter in _TRACKED:
            setattr(self, counter, 0)

    # ------------------------------------------------------------------ game control

    def set_unlimited_saver(self, unlimited_saver=True):
        """Keep the ball saver at 30 seconds (rewritten every frame) while on."""
        self._unlimited_saver = unlimited_saver

    def _set_stage(self, stage):
        """Patch the ROM so that a new game starts on ``stage`` (a :class:`Stage`): the
        table look-up that picks the stage becomes ``LD A,stage`` and no-ops."""
        if stage is None:
            return
        bank, addr = ADDR_TO_NO_OP_BANK_STAGE_OVERRIDE, ADDR_TO_NO_OP_STAGE_OVERRIDE
        patch = [0x3E, stage.value] + [0x00] * (NO_OP_BYTE_WIDTH_STAGE_OVERRIDE - 2)
        for i, byte in enumerate(patch):
            self.pyboy.memory[bank, addr + i] = byte

    def _init_bonus_stage(self, stage):
        """The set-up a bonus stage needs when a game starts directly on it."""
        red, blue = stage in RedBonusStages, stage in BlueBonusStages
        if not (red or blue):
            return
        mem = self.pyboy.memory
        mem[ADDR_CURRENT_STAGE_BACKUP] = (Stage.RED_BOTTOM if red else Stage.BLUE_BOTTOM).value
        mem[ADDR_CURRENT_SLOT_FRAME] = CURRENT_SLOT_FRAME_VALUE
        mem[ADDR_BALLS_LEFT] = 1
        mem[ADDR_NUM_BALL_LIVES] = 3
        mem[ADDR_STAGE_COLLISION_STATE] = 0b100
        mem[ADDR_STAGE_COLLISION_STATE_HELPER] = 0b100

    def start_catch_mode(self, pokemon=Pokemon.BULBASAUR, unlimited_time=False):
        """Start catch mode for ``pokemon`` (with the game's 2-minute timer unless
        ``unlimited_time``). Stage-specific state is left as it is."""
        mem = self.pyboy.memory
        mem[ADDR_SPECIAL_MODE] = SpecialMode.CATCH.value
        mem[ADDR_POKEMON_TO_CATCH] = pokemon.value
        mem[ADDR_SPECIAL_MODE_ACTIVE] = 1
        for addr in (ADDR_SPECIAL_MODE_STATE, ADDR_D5C6, ADDR_NUM_MON_HITS, ADDR_NUM_CATCH_TILES_FLIPPED):
            mem[addr] = 0
        mem[ADDR_TILE_ILLUMINATION : ADDR_TILE_ILLUMINATION + TILE_ILLUMINATION_BYTE_WIDTH] = 0
        if not unlimited_time:
            timer = {ADDR_TIMER_SECONDS: 0, ADDR_TIMER_MINUTES: 2, ADDR_TIMER_FRAMES: 0, ADDR_TIMER_RAN_OUT: 0, ADDR_TIMER_PAUSED: 0, ADDR_TIMER_ACTIVE: 1, ADDR_D580: 1}
            for addr, value in timer.items():
                mem[addr] = value

    def enable_evolve_hack(self, unlimited_time=False):
        """Patch the ROM so that the pause button starts evolution mode; with
        ``unlimited_time``, a hook keeps the mode's timer off."""
        bank, target = BANK_OFFSET_START_EVOLUTION
        self.pyboy.memory[BANK_OFFSET_PAUSE_METHOD_BANK] = bank
        call_bank, call_addr = BANK_OFFSET_PAUSE_METHOD_CALL
        self.pyboy.memory[call_bank, call_addr] = target & 0xFF
        self.pyboy.memory[call_bank, call_addr + 1] = target >> 8
        if unlimited_time:

            def timer_off(pyboy):
                pyboy.memory[ADDR_TIMER_ACTIVE] = 0

            try:
                self.pyboy.hook_register(*BANK_OFFSET_DISABLE_TIMER, timer_off, self.pyboy)
            except ValueError:  # registered by an earlier call
                pass

    def _press_a(self, frames):
        self.pyboy.send_input(WindowEvent.PRESS_BUTTON_A)
        self.pyboy.tick(frames, False, False)
        self.pyboy.send_input(WindowEvent.RELEASE_BUTTON_A)

    def start_game(self, timer_div=None, stage=None):
        """From power-on: wait for the title screen, press A through it, optionally start on
        ``stage`` (a :class:`Stage`), then save the start for :meth:`reset_game`."""
        if self.game_has_started:
            raise PyBoyException("Gamewrapper already started! Use 'reset' instead.")
        self._set_stage(stage)
        while self.tilemap_background[10, 10] != 269:  # the title screen is drawn
            self.pyboy.tick(1, False, False)
        # Frame counts from there to where the game reads the buttons: A on the title
        # screen, then A on the field selection.
        self.pyboy.tick(18, False, False)
        self._press_a(2)
        self.pyboy.tick(95, False, False)
        self._press_a(1)
        self.pyboy.tick(1, False, False)
        self.pyboy.tick(74, False, False)  # until the field shows
        self.pyboy.tick(4, False, False)  # until it takes input
        self._init_bonus_stage(stage)  # after the game's own set-up, which would undo it
        PyBoyGameWrapper.start_game(self, timer_div=timer_div)

    def reset_game(self, timer_div=None):
        PyBoyGameWrapper.reset_game(self, timer_div=timer_div)

    def __repr__(self):
        fields = [
            ("Score", self.score),
            ("Multiplier", self.multiplier),
            ("Balls left", self.balls_left),
            ("Ball type", BallType(self.ball_type).name),
            ("Ball X", self.ball_x),
            ("Ball Y", self.ball_y),
            ("Ball X Velocity", self.ball_x_velocity),
            ("Ball Y Velocity", self.ball_y_velocity),
            ("Current stage", Stage(self.current_stage).name),
            ("Game over", self.game_over),
            ("Ball saver seconds left", self.ball_saver_seconds_left),
            ("Pokemon caught in session", self.pokemon_caught_in_session),
            ("Pokemon seen in session", self.pokemon_seen_in_session),
            ("Ball lost during saver", self.lost_ball_during_saver),
            ("Special mode active", self.special_mode_active),
            ("Evolution failure count", self.evolution_failure_count),
            ("Evolution success count", self.evolution_success_count),
            ("Pikachu saver charge", self.pikachu_saver_charge),
            ("Pikachu saver used", self.pikachu_saver_used),
            ("Great Ball upgrades", self.great_ball_upgrades),
            ("Ultra Ball upgrades", self.ultra_ball_upgrades),
            ("Master Ball upgrades", self.master_ball_upgrades),
            ("Extra balls added", self.extra_balls_added),
            ("Roulette slots opened", self.roulette_slots_opened),
            ("Roulette slots entered", self.roulette_slots_entered),
            ("Current map", self.current_map),
        ]
        lines = [f"{name}: {value}" for name, value in fields]
        for stage in ("Diglett", "Gengar", "Meowth", "Mewtwo", "Seel"):
            key = stage.lower()
            lines.append(f"{stage} stages completed: {getattr(self, key + '_stages_completed')} / Visited: {getattr(self, key + '_stages_visited')}")
        return "PokemonPinball:\n" + "".join(line + "\n" for line in lines)
