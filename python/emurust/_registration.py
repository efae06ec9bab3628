"""Gymnasium registration of emurust's environments, done on ``import emurust`` when Gymnasium
is installed. Entry points are strings, so nothing heavy is imported here."""

ENV_IDS = {
    "emurust/GameBoy-v0": None,
    "emurust/Dodge-v0": "dodge",
    "emurust/Snake-v0": "snake",
    "emurust/Runner-v0": "runner",
}


def register_envs() -> None:
    """Register emurust/GameBoy-v0 and the game tasks with Gymnasium (idempotent)."""
    from gymnasium.envs.registration import register, registry

    for env_id, game in ENV_IDS.items():
        if env_id in registry:
            continue
        register(
            id=env_id,
            entry_point="emurust.envs:GameBoyEnv",
            vector_entry_point="emurust.envs:GameBoyVectorEnv",
            kwargs={} if game is None else {"game": game},
            disable_env_checker=False,
        )
