"""Registers the three envs with Gymnasium (called from ``solitaire_env/__init__.py``)."""

from __future__ import annotations

import gymnasium as gym

from solitaire_env.engine.games import NUMBER_TEN, RAINBOW, RANK_AND_FILE

ENV_IDS = {
    "RankAndFile-v0": ("RankAndFile", RANK_AND_FILE),
    "NumberTen-v0": ("NumberTen", NUMBER_TEN),
    "Rainbow-v0": ("Rainbow", RAINBOW),
}


def register_envs() -> None:
    for env_id, (name, variant) in ENV_IDS.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=f"solitaire_env.envs:{name}Env",
            vector_entry_point=f"solitaire_env.envs.vector:{name}VectorEnv",
            max_episode_steps=variant.max_episode_steps,
            kwargs={},
        )
