"""Gymnasium registration of emurust's environments, done on ``import emurust`` when Gymnasium
is installed. Entry points are strings, so nothing heavy is imported here."""

# Any ROM (rom= required), then emurust's own homebrew games (ROMs embedded).
ENV_IDS = {
    "emurust/GameBoy-v0": None,
    "emurust/Dodge-v0": "dodge",
    "emurust/Snake-v0": "snake",
    "emurust/Runner-v0": "runner",
}
# Commercial games: the user brings the ROM (rom= required; see emurust.user_rom_games).
USER_ROM_ENV_IDS = {
    "emurust/Tetris-v0": "tetris",
    "emurust/SuperMarioLand-v0": "super_mario_land",
    "emurust/Kirby-v0": "kirby",
    "emurust/2048-v0": "2048",
    "emurust/PokemonRed-v0": "pokemon_red",
}


# PokemonRedExperiments v2's environment, batched (vector env only; config=v2's env_config).
V2_ENV_ID = "emurust/PokemonRedV2-v0"


def register_envs() -> None:
    """Register emurust/GameBoy-v0, the game tasks and emurust/Pong-v0 with Gymnasium (idempotent)."""
    from gymnasium.envs.registration import register, registry

    for env_id, game in {**ENV_IDS, **USER_ROM_ENV_IDS}.items():
        if env_id in registry:
            continue
        register(
            id=env_id,
            entry_point="emurust.envs:GameBoyEnv",
            vector_entry_point="emurust.envs:GameBoyVectorEnv",
            kwargs={} if game is None else {"game": game},
            disable_env_checker=False,
        )
    # PufferLib's Pong (emurust.pong), not a Game Boy game.
    if "emurust/Pong-v0" not in registry:
        register(id="emurust/Pong-v0", entry_point="emurust.pong:PongEnv",
                 vector_entry_point="emurust.pong:PongVectorEnv", disable_env_checker=False)
    if V2_ENV_ID not in registry:
        register(id=V2_ENV_ID, entry_point=None, vector_entry_point="emurust.pokered_v2:RedV2VectorEnv")
