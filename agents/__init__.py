"""Baseline agents for the three games, behind one interface (:class:`~solitaire_env.agents.base.Agent`).

>>> from solitaire_env.agents import make_agent
>>> agent = make_agent("heuristic", "RankAndFile-v0", seed=0)   # or "random", or "runs/x/model.zip"
>>> agent.reset(seed=0); action = agent.act(obs, info)

``random``: uniform over the legal actions; ``heuristic``: the rule-based player of
:mod:`solitaire_env.agents.heuristic`; ``search`` (or ``search:WxN``): the determinized search agent of
:mod:`solitaire_env.agents.search`; ``plan`` (or ``plan:WxN``, ``plan:WxNxK``): the planning agent of
:mod:`solitaire_env.agents.plan`, which keeps its guesses' winning lines between moves (``plan-sliced``,
``plan-sliced:WxNxK``: the same with the solver's own slices, its N checked only every 20,000 and 50,000
positions); in a game that hides nothing (FreeCell) ``plan:1xN`` is the agent of
:mod:`solitaire_env.agents.open_plan` instead, N positions a move; a path to a
``.zip``: a trained sb3-contrib MaskablePPO checkpoint
(:mod:`agents.ppo`, needs the ``train`` extra), or to a training run directory: its
``best_model.zip``, else its ``final_model.zip``; a ``.msgpack`` file (or a run directory holding
``best_model.msgpack``): a policy trained on the JAX backend (:mod:`agents.jax_policy`, needs the ``jax``
extra); ``sample:PATH``: that checkpoint's policy sampled
instead of played greedily; ``pretrained``: the game's shipped policy (``agents/pretrained/<game>.zip``,
a :class:`~solitaire_env.agents.move_scorer.MoveScorerPolicy` trained by ``configs/<game>.yaml`` (the recipe); needs the
``train`` extra), which plays in the env options it was trained with (:attr:`Agent.env_kwargs`).
"""

from __future__ import annotations

import os

from solitaire_env.agents.base import Agent
from solitaire_env.agents.heuristic import HeuristicAgent
from solitaire_env.agents.random_agent import RandomAgent
from solitaire_env.engine.variant import Variant
from solitaire_env.envs.registration import ENV_IDS

AGENT_NAMES = ("random", "heuristic", "search", "plan", "plan-sliced", "pretrained")
PRETRAINED_DIR = os.path.join(os.path.dirname(__file__), "pretrained")


def pretrained_path(env_id: str, env_kwargs: dict | None = None) -> str:
    """The shipped policy file of ``env_id``'s game played with ``env_kwargs``: ``<game>.zip``, and for
    Klondike's draw 3 ``klondike_draw3.zip`` (``FileNotFoundError`` if none is shipped)."""
    draw = (env_kwargs or {}).get("draw", 1)
    suffix, rules = (f"_draw{draw}", f" with draw={draw}") if draw != 1 else ("", "")
    path = os.path.join(PRETRAINED_DIR, f"{ENV_IDS[env_id][1].name}{suffix}.zip")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no pretrained policy is shipped for {env_id}{rules} (looked for {path})")
    return path


def _budget(name: str, kind: str) -> tuple[int, ...]:
    """The budget a ``search`` or ``plan`` (``plan-sliced``) agent's name gives: (guesses, solver positions),
    and for the plan agents optionally the moves its hindsight check compares (``plan:WxNxK``). ``kind``
    alone is 8 x 1,000."""
    spec = name.removeprefix(kind).removeprefix(":")
    parts = spec.split("x") if spec else ["8", "1000"]
    planner = kind != "search"
    forms = f"{kind}:WxN" + (f" or {kind}:WxNxK" if planner else "")
    if len(parts) not in ((2, 3) if planner else (2,)) or not all(p.isdigit() for p in parts):
        raise ValueError(f"bad {kind} agent {name!r}: write {kind} or {forms}, e.g. {kind}:8x1000")
    return tuple(int(p) for p in parts)


def rules_played(env_id: str, env_kwargs: dict | None = None) -> Variant:
    """The rule set ``env_id`` plays with the env options ``env_kwargs`` (Klondike's ``draw`` and ``redeals``
    choose among its rule sets), read off the env itself so that it never differs from the env's."""
    if not env_kwargs:
        return ENV_IDS[env_id][1]
    import gymnasium as gym

    env = gym.make(env_id, **env_kwargs)
    try:
        return env.unwrapped.variant
    finally:
        env.close()


def make_agent(name_or_path: str, env_id: str, seed: int | None = None, env_kwargs: dict | None = None) -> Agent:
    """The agent ``name_or_path`` names, for ``env_id`` played with the env options ``env_kwargs``.

    The rule-based agents (heuristic, search, plan) look ahead with the rules the env plays: pass the
    options that change them (Klondike's ``draw=3``), or they plan for the default game. Raises
    ``ValueError`` for an unknown env id or agent name (or an unreadable checkpoint) and
    ``FileNotFoundError`` for a checkpoint path that does not exist (or a directory without a model);
    a checkpoint agent's ``checkpoint`` is the file it loaded.
    """
    if env_id not in ENV_IDS:
        raise ValueError(f"unknown env id {env_id!r}; known: {', '.join(ENV_IDS)}")
    if name_or_path == "random":
        return RandomAgent(seed)
    if name_or_path == "heuristic":
        return HeuristicAgent(rules_played(env_id, env_kwargs), seed)
    for kind in ("search", "plan", "plan-sliced"):
        if name_or_path == kind or name_or_path.startswith(kind + ":"):
            # "search:WxN" / "plan:WxN": W guesses of the hidden cards, N solver positions per guess;
            # "plan:WxNxK": the plan agent's hindsight check compares at most K moves.
            worlds, nodes, *candidates = _budget(name_or_path, kind)
            variant = rules_played(env_id, env_kwargs)
            from solitaire_env.agents.search import hides_nothing

            if kind != "search" and hides_nothing(variant):
                # Nothing to guess (FreeCell): a budget a move, not one whole-game solve (agents/open_plan.py).
                if kind == "plan-sliced":
                    raise ValueError(f"{name_or_path!r}: plan-sliced plans over guesses of hidden cards, and "
                                     f"{env_id} hides none; use plan:1xN (N positions a move)")
                from solitaire_env.agents.open_plan import OpenPlanAgent

                agent = OpenPlanAgent(variant, seed, nodes=nodes)
                agent.name = name_or_path
                return agent
            if kind == "search":
                from solitaire_env.agents.search import SearchAgent as Planner
            else:
                from solitaire_env.agents.plan import PlanAgent as Planner
            extra = {"candidates": candidates[0]} if candidates else {}
            if kind == "plan-sliced":
                extra["sliced"] = True
            agent = Planner(variant, seed, worlds=worlds, nodes=nodes, **extra)
            agent.name = name_or_path
            return agent
    if name_or_path in ("pretrained", "sample:pretrained"):
        from solitaire_env.agents.ppo import MaskablePPOAgent  # imports torch: only when asked for

        return MaskablePPOAgent.load(pretrained_path(env_id, env_kwargs), env_id, name=name_or_path,
                                     deterministic=name_or_path == "pretrained")
    # "sample:PATH" plays the checkpoint's policy by sampling instead of greedily.
    sample = name_or_path.startswith("sample:")
    path = name_or_path.removeprefix("sample:")
    if _is_jax_policy(path):
        from solitaire_env.agents.jax_policy import JaxPolicyAgent  # imports JAX: only when asked for

        return JaxPolicyAgent.load(path, env_id, name=name_or_path, deterministic=not sample)
    looks_like_path = path.endswith(".zip") or os.sep in path or "/" in path
    if looks_like_path or os.path.exists(path):
        from solitaire_env.agents.ppo import MaskablePPOAgent  # imports torch: only when asked for

        return MaskablePPOAgent.load(path, env_id, name=name_or_path, deterministic=not sample)
    raise ValueError(f"unknown agent {name_or_path!r}: use random, heuristic, search, search:WxN, plan, plan:WxNxK, "
                     "plan-sliced, pretrained, "
                     "the path of a MaskablePPO .zip or JAX .msgpack checkpoint or of a run directory, or sample:PATH")


def _is_jax_policy(path: str) -> bool:
    """A JAX backend's policy file (``.msgpack``), or a run directory holding one and no SB3 model."""
    if path.endswith(".msgpack"):
        return True
    models = ("best_model", "final_model")
    return os.path.isdir(path) and any(os.path.isfile(os.path.join(path, m + ".msgpack")) for m in models) \
        and not any(os.path.isfile(os.path.join(path, m + ".zip")) for m in models)


__all__ = ["AGENT_NAMES", "Agent", "HeuristicAgent", "RandomAgent", "make_agent", "pretrained_path", "rules_played"]
