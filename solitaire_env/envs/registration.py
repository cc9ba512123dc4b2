"""Registers the envs with Gymnasium (called from ``solitaire_env/__init__.py``)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from solitaire_env.engine.games import FREECELL, KLONDIKE, NUMBER_TEN, RAINBOW, RANK_AND_FILE

ENV_IDS = {
    "RankAndFile-v0": ("RankAndFile", RANK_AND_FILE),
    "NumberTen-v0": ("NumberTen", NUMBER_TEN),
    "Rainbow-v0": ("Rainbow", RAINBOW),
    "FreeCell-v0": ("FreeCell", FREECELL),
    "Klondike-v0": ("Klondike", KLONDIKE),
}


def _make(name: str, kwargs: dict[str, Any]) -> gym.Env:
    """The env ``gym.make`` builds, with ``render_mode`` checked by the env itself.

    ``gym.make`` reads the render modes off a class entry point and answers ``render_mode="human"`` with
    its ``HumanRendering`` wrapper (a pygame window, failing only at the first render). A function has
    no ``metadata``, so the env's own check refuses an unknown mode at once, naming the supported ones;
    ``"rgb_array_list"``/``"ansi_list"`` keep Gymnasium's ``RenderCollection``.
    """
    from solitaire_env import envs

    cls = getattr(envs, f"{name}Env")
    mode = kwargs.get("render_mode")
    if isinstance(mode, str) and mode.endswith("_list") and mode.removesuffix("_list") in cls.metadata["render_modes"]:
        from gymnasium.wrappers import RenderCollection

        return RenderCollection(cls(**{**kwargs, "render_mode": mode.removesuffix("_list")}))
    return cls(**kwargs)


def make_rank_and_file(**kwargs: Any) -> gym.Env:
    return _make("RankAndFile", kwargs)


def make_number_ten(**kwargs: Any) -> gym.Env:
    return _make("NumberTen", kwargs)


def make_rainbow(**kwargs: Any) -> gym.Env:
    return _make("Rainbow", kwargs)


def make_freecell(**kwargs: Any) -> gym.Env:
    return _make("FreeCell", kwargs)


def make_klondike(**kwargs: Any) -> gym.Env:
    return _make("Klondike", kwargs)


_ENTRY_POINTS = {"RankAndFile": "make_rank_and_file", "NumberTen": "make_number_ten", "Rainbow": "make_rainbow",
                 "FreeCell": "make_freecell", "Klondike": "make_klondike"}


def register_envs() -> None:
    for env_id, (name, variant) in ENV_IDS.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=f"solitaire_env.envs.registration:{_ENTRY_POINTS[name]}",
            vector_entry_point=f"solitaire_env.envs.vector:{name}VectorEnv",
            max_episode_steps=variant.max_episode_steps,
            kwargs={},
        )
