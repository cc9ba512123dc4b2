"""Play agents over the same fixed deals and summarise how they did: :func:`evaluate`.

Episode ``e`` of every agent is deal number ``seed + e`` (``env.reset(seed=seed + e)``), under the
env's registered time limit, so agents are compared on exactly the same games and a run repeats to
the digit. Each agent is reset at the start of every episode with a seed derived from the deal
number (:func:`agent_seed`), a stream independent of the deal's own. The table and the JSON name the
split the deals belong to (:mod:`solitaire_env.engine.deals`): figures to report come from test deals.

>>> from agents import make_agent
>>> result = evaluate("Rainbow-v0", {"random": make_agent("random", "Rainbow-v0")}, episodes=100, seed=0)
>>> print(result.table())
>>> result.write_csv("episodes.csv"); result.write_json("evaluation.json")
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np

from solitaire_env.engine.deals import describe, split_of
from solitaire_env.envs.registration import ENV_IDS

if TYPE_CHECKING:
    from agents.base import Agent

Z_95 = 1.959963984540054  # two-sided 95% normal quantile
_AGENT_STREAM = 0x5EED  # spawn key that separates an agent's seed from the deal's own stream
CSV_COLUMNS = ("agent", "deal_seed", "won", "foundation_cards", "length", "truncated", "return")


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for a proportion of ``successes`` out of ``n`` (95% by default)."""
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n > 0, got {successes} of {n}")
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def agent_seed(deal_seed: int) -> int:
    """The seed an agent is reset with for deal ``deal_seed`` (independent of the deal's random stream)."""
    return int(np.random.SeedSequence(deal_seed, spawn_key=(_AGENT_STREAM,)).generate_state(1)[0])


@dataclass(frozen=True)
class EpisodeRecord:
    """One episode of one agent. ``episode_return`` is the sum of the env's rewards (CSV/JSON: ``return``)."""

    agent: str
    deal_seed: int
    won: bool
    foundation_cards: int
    length: int
    truncated: bool
    episode_return: float

    def row(self) -> dict[str, Any]:
        return {"agent": self.agent, "deal_seed": self.deal_seed, "won": self.won,
                "foundation_cards": self.foundation_cards, "length": self.length, "truncated": self.truncated,
                "return": self.episode_return}


@dataclass(frozen=True)
class AgentSummary:
    """One agent's figures over all the deals."""

    agent: str
    episodes: int
    wins: int
    win_rate: float
    win_rate_ci95: tuple[float, float]  # Wilson score interval
    mean_foundation_cards: float
    median_foundation_cards: float
    mean_length: float
    truncation_rate: float
    mean_return: float

    @classmethod
    def of(cls, agent: str, records: list[EpisodeRecord]) -> AgentSummary:
        n = len(records)
        wins = sum(r.won for r in records)
        cards = [r.foundation_cards for r in records]
        return cls(
            agent=agent,
            episodes=n,
            wins=wins,
            win_rate=wins / n,
            win_rate_ci95=wilson_interval(wins, n),
            mean_foundation_cards=float(np.mean(cards)),
            median_foundation_cards=float(np.median(cards)),
            mean_length=float(np.mean([r.length for r in records])),
            truncation_rate=sum(r.truncated for r in records) / n,
            mean_return=float(np.mean([r.episode_return for r in records])),
        )


@dataclass(frozen=True)
class EvaluationResult:
    """Everything one :func:`evaluate` call measured."""

    env_id: str
    episodes: int
    seed: int
    max_episode_steps: int | None
    records: list[EpisodeRecord]
    summaries: dict[str, AgentSummary]
    env_kwargs: dict = field(default_factory=dict)

    def table(self) -> str:
        """The summaries as a Markdown table, with a heading line naming the game and the deals."""
        title = ENV_IDS[self.env_id][1].title
        limit = f"time limit {self.max_episode_steps} steps" if self.max_episode_steps else "no time limit"
        deals = describe(self.seed, self.seed + self.episodes - 1)
        head = ("agent", "deals", "wins", "win rate", "95% CI (Wilson)", "foundation cards mean",
                "foundation cards median", "mean length", "truncated")
        rows = [head]
        for s in self.summaries.values():
            low, high = s.win_rate_ci95
            rows.append((s.agent, str(s.episodes), str(s.wins), f"{100 * s.win_rate:.1f}%",
                         f"{100 * low:.1f}% - {100 * high:.1f}%", f"{s.mean_foundation_cards:.2f}",
                         f"{s.median_foundation_cards:g}", f"{s.mean_length:.1f}", f"{100 * s.truncation_rate:.1f}%"))
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        right = [False] + [True] * (len(head) - 1)

        def line(cells: tuple[str, ...]) -> str:
            padded = (c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True))
            return "| " + " | ".join(padded) + " |"

        rule = "|" + "|".join("-" * (w + 1) + ":" if r else "-" * (w + 2) for w, r in zip(widths, right, strict=True))
        options = f", {json.dumps(self.env_kwargs, sort_keys=True)}" if self.env_kwargs else ""
        return "\n".join([f"{title} ({self.env_id}{options}), {self.episodes} deals ({deals}), {limit}", "",
                          line(rows[0]), rule + "|", *(line(r) for r in rows[1:])])

    def to_dict(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "episodes": self.episodes,
            "seed": self.seed,
            "deal_seeds": [self.seed, self.seed + self.episodes - 1],
            "split": split_of(self.seed, self.seed + self.episodes - 1),
            "max_episode_steps": self.max_episode_steps,
            "env_kwargs": self.env_kwargs,
            "summaries": {name: {**asdict(s), "win_rate_ci95": list(s.win_rate_ci95)}
                          for name, s in self.summaries.items()},
            "records": [r.row() for r in self.records],
        }

    def write_csv(self, path: str | os.PathLike) -> None:
        """One row per episode: ``agent, deal_seed, won, foundation_cards, length, truncated, return``."""
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
            writer.writeheader()
            for r in self.records:
                writer.writerow({**r.row(), "won": int(r.won), "truncated": int(r.truncated)})

    def write_json(self, path: str | os.PathLike) -> None:
        with open(path, "w") as f:
            json.dump(self.to_dict(), f, indent=1)
            f.write("\n")


def evaluate(env_id: str, agents: dict[str, Agent], episodes: int, seed: int = 0, progress: bool = False,
             max_episode_steps: int | None = None, record_dir: str | os.PathLike | None = None,
             env_kwargs: dict | None = None) -> EvaluationResult:
    """Play each agent on deals ``seed .. seed + episodes - 1`` of ``env_id`` and summarise.

    ``max_episode_steps``: ``None`` keeps the env's registered time limit. ``env_kwargs``: arguments
    for the env (e.g. ``{"no_revisit": True}``; not ``deals``: the deals are the ones above), kept in
    the result. ``record_dir``: write each
    episode there as a recording (``docs/recordings.md``), named ``AGENT-deal-SEED.json``. ``progress`` shows a tqdm
    bar per agent on stderr. Raises ``ValueError`` on bad arguments, ``RuntimeError`` if an agent
    plays an illegal action.
    """
    if env_id not in ENV_IDS:
        raise ValueError(f"unknown env id {env_id!r}; known: {', '.join(ENV_IDS)}")
    if not agents:
        raise ValueError("no agents to evaluate")
    for name, value in (("episodes", episodes), ("seed", seed)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {value!r}")
    if episodes <= 0:
        raise ValueError(f"episodes must be positive, got {episodes}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    env_kwargs = dict(env_kwargs or {})
    if "deals" in env_kwargs:
        raise ValueError("env_kwargs cannot set 'deals': evaluate plays deals seed .. seed + episodes - 1")
    kwargs = {} if max_episode_steps is None else {"max_episode_steps": max_episode_steps}
    try:
        env = gym.make(env_id, **kwargs, **env_kwargs)
    except TypeError as e:  # an argument the env does not take
        raise ValueError(f"env_kwargs: {e}") from None
    limit = env.spec.max_episode_steps if env.spec is not None else None
    records: list[EpisodeRecord] = []
    try:
        for name, agent in agents.items():
            records += _play(env, name, agent, int(episodes), int(seed), progress, record_dir)
    finally:
        env.close()
    summaries = {name: AgentSummary.of(name, [r for r in records if r.agent == name]) for name in agents}
    return EvaluationResult(env_id, int(episodes), int(seed), limit, records, summaries, env_kwargs)


def _play(env: gym.Env, name: str, agent: Agent, episodes: int, seed: int, progress: bool,
          record_dir: str | os.PathLike | None = None) -> list[EpisodeRecord]:
    recorder = None
    if record_dir is not None:
        from solitaire_env.tools.recording import Recorder

        recorder = Recorder()
        slug = "".join(c if c.isalnum() or c in "-_" else "_" for c in os.path.basename(name))
    deals = range(seed, seed + episodes)
    if progress:
        from tqdm import tqdm

        deals = tqdm(deals, desc=name, unit="deal", leave=True)
    records = []
    for deal in deals:
        obs, info = env.reset(seed=deal)
        agent.reset(seed=agent_seed(deal))
        if recorder is not None:
            recorder.start(env.spec.id, env.unwrapped.get_state(), seed=deal, agent=name)
        total, length, terminated, truncated = 0.0, 0, False, False
        while not (terminated or truncated) and info["action_mask"].any():
            action = agent.act(obs, info)
            if not info["action_mask"][action]:
                raise RuntimeError(f"agent {name!r} played illegal action {action} on deal {deal}, step {length}")
            obs, reward, terminated, truncated, info = env.step(action)
            if recorder is not None:
                recorder.add(action, reward)
            total += float(reward)
            length += 1
        if recorder is not None:
            recorder.save(os.path.join(record_dir, f"{slug}-deal-{deal}.json"))
        records.append(EpisodeRecord(name, deal, bool(info["is_won"]), int(info["foundation_cards"]), length,
                                     bool(truncated and not terminated), total))
    return records


__all__ = ["AgentSummary", "EpisodeRecord", "EvaluationResult", "agent_seed", "evaluate", "wilson_interval"]
