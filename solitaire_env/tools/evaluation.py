"""Play agents over the same fixed deals and summarise how they did: :func:`evaluate`.

Episode ``e`` of every agent is deal number ``seed + e`` (``env.reset(seed=seed + e)``), under the
env's registered time limit, so agents are compared on exactly the same games and a run repeats to
the digit. Each agent is reset at the start of every episode with a seed derived from the deal
number (:func:`agent_seed`), a stream independent of the deal's own. The table and the JSON name the
split the deals belong to (:mod:`solitaire_env.engine.deals`): figures to report come from test deals.

The table also gives each agent's seconds a game (``s/game``: wall-clock, from the env's reset to the
game's end, the agent's thinking included, timed where the game is played: this process or a worker), in
:attr:`AgentSummary.seconds_per_game` and :attr:`EpisodeRecord.seconds` too. The clock is the one figure
that differs from run to run, so the CSV and the JSON leave it out: they stay byte for byte the same for
the same deals, wherever and in however many sittings they were played; equality of records and summaries
ignores it as well. With ``resume``, it is the mean over the games played in this run only.

>>> from solitaire_env.agents import make_agent
>>> result = evaluate("Rainbow-v0", {"random": make_agent("random", "Rainbow-v0")}, episodes=100, seed=0)
>>> print(result.table())
>>> result.write_csv("episodes.csv"); result.write_json("evaluation.json")
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np

from solitaire_env.engine.deals import describe, split_of
from solitaire_env.engine.variant import Variant
from solitaire_env.envs.registration import ENV_IDS
from solitaire_env.parallel import Backend, TaskError, run_tasks
from solitaire_env.tools.episodes import EpisodeRunner

if TYPE_CHECKING:
    from solitaire_env.agents.base import Agent

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
    """One episode of one agent. ``episode_return`` is the sum of the env's rewards (CSV/JSON: ``return``).

    ``seconds``: the wall-clock time of its play (for a batched greedy policy, its batch's time over its games),
    None for an episode not played in this run (read back from a CSV). Not in the CSV or JSON, and not compared.
    """

    agent: str
    deal_seed: int
    won: bool
    foundation_cards: int
    length: int
    truncated: bool
    episode_return: float
    seconds: float | None = field(default=None, compare=False)

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
    # Among the deals played that the shipped data proves winnable (docs/winnability.md): how many there
    # were, and the share of them this agent won. None when no deal played has shipped data (0-999 only).
    winnable_deals: int | None = None
    win_rate_of_winnable: float | None = None
    # Mean wall-clock seconds of the episodes played in this run (None: none were, all resumed). Left out of
    # to_dict and of equality: the clock is not reproducible, the other figures are.
    seconds_per_game: float | None = field(default=None, compare=False)

    @classmethod
    def of(cls, agent: str, records: list[EpisodeRecord], winnable: set[int] | None = None) -> AgentSummary:
        """``winnable``: the proved-winnable deals among those with shipped data (None: leave the column out)."""
        n = len(records)
        wins = sum(r.won for r in records)
        cards = [r.foundation_cards for r in records]
        on_winnable = [r for r in records if winnable is not None and r.deal_seed in winnable]
        timed = [r.seconds for r in records if r.seconds is not None]
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
            winnable_deals=len(on_winnable) if winnable is not None else None,
            win_rate_of_winnable=(sum(r.won for r in on_winnable) / len(on_winnable)
                                  if on_winnable else None),
            seconds_per_game=float(np.mean(timed)) if timed else None,
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
    winnable_only: bool = False  # the deals are the first proved-winnable ones from ``seed`` on
    deals: list[int] = field(default_factory=list)  # the deals played, in order
    agent_env_kwargs: dict = field(default_factory=dict)  # agent -> the env options it plays with (Agent.env_kwargs)

    @property
    def span(self) -> tuple[int, int]:
        """The first and last deal played."""
        return (self.deals[0], self.deals[-1]) if self.deals else (self.seed, self.seed + self.episodes - 1)

    def table(self) -> str:
        """The summaries as a Markdown table, with a heading line naming the game and the deals."""
        title = ENV_IDS[self.env_id][1].title
        limit = f"time limit {self.max_episode_steps} steps" if self.max_episode_steps else "no time limit"
        deals = describe(*self.span)
        if self.winnable_only:
            deals = f"the proved-winnable ones among {deals}"
        head = ("agent", "deals", "wins", "win rate", "95% CI (Wilson)", "foundation cards mean",
                "foundation cards median", "mean length", "truncated")
        labelled = any(s.winnable_deals is not None for s in self.summaries.values())
        if labelled:
            head += ("wins of winnable",)
        head += ("s/game",)  # last, so that a comparison of two runs' tables can drop the clock's one column
        rows = [head]
        for s in self.summaries.values():
            low, high = s.win_rate_ci95
            row = (s.agent, str(s.episodes), str(s.wins), f"{100 * s.win_rate:.1f}%",
                   f"{100 * low:.1f}% - {100 * high:.1f}%", f"{s.mean_foundation_cards:.2f}",
                   f"{s.median_foundation_cards:g}", f"{s.mean_length:.1f}", f"{100 * s.truncation_rate:.1f}%")
            if labelled:
                row += (f"{100 * s.win_rate_of_winnable:.1f}% of {s.winnable_deals}"
                        if s.win_rate_of_winnable is not None else "-",)
            row += (_seconds(s.seconds_per_game) if s.seconds_per_game is not None else "-",)
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        right = [False] + [True] * (len(head) - 1)

        def line(cells: tuple[str, ...]) -> str:
            padded = (c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True))
            return "| " + " | ".join(padded) + " |"

        rule = "|" + "|".join("-" * (w + 1) + ":" if r else "-" * (w + 2) for w, r in zip(widths, right, strict=True))
        options = f", {json.dumps(self.env_kwargs, sort_keys=True)}" if self.env_kwargs else ""
        notes = ["", "wins of winnable: wins on the deals played that the shipped solver data proves winnable "
                     "(docs/winnability.md), as a share of them"] if labelled else []
        notes += ["", "s/game: wall-clock seconds a game played in this run, the agent's thinking included "
                      "(not in the CSV or JSON)"]
        for name, kwargs in self.agent_env_kwargs.items():
            notes += ["", f"{name} plays with the env options {json.dumps(kwargs, sort_keys=True)} (the agent's own)"]
        return "\n".join([f"{title} ({self.env_id}{options}), {self.episodes} deals ({deals}), {limit}", "",
                          line(rows[0]), rule + "|", *(line(r) for r in rows[1:]), *notes])

    def to_dict(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "episodes": self.episodes,
            "seed": self.seed,
            "deal_seeds": list(self.span),
            "split": split_of(*self.span),
            "winnable_only": self.winnable_only,
            "deals": self.deals,
            "max_episode_steps": self.max_episode_steps,
            "env_kwargs": self.env_kwargs,
            "agent_env_kwargs": self.agent_env_kwargs,
            # Without seconds_per_game: the file of a run is the same as any other run's of the same deals.
            "summaries": {name: {**{k: v for k, v in asdict(s).items() if k != "seconds_per_game"},
                                 "win_rate_ci95": list(s.win_rate_ci95)}
                          for name, s in self.summaries.items()},
            "records": [r.row() for r in self.records],
        }

    def write_csv(self, path: str | os.PathLike) -> None:
        """One row per episode: ``agent, deal_seed, won, foundation_cards, length, truncated, return``."""
        _write_rows(path, self.records)

    def write_json(self, path: str | os.PathLike) -> None:
        with open(path, "w") as f:
            json.dump(self.to_dict(), f, indent=1)
            f.write("\n")


class EpisodeErrors(RuntimeError):
    """Episodes that failed (an agent's illegal action, a worker that kept dying); every other episode was played.

    ``failures`` lists ``(agent, deal_seed, error)``; ``records`` holds the episodes that finished
    (already in the CSV when :func:`evaluate` was given one, so ``resume=True`` plays only the
    failed ones again).
    """

    def __init__(self, failures: list[tuple[str, int, str]], records: list[EpisodeRecord]) -> None:
        agent, deal, error = failures[0]
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        super().__init__(f"{len(failures)} episode(s) failed: agent {agent!r} on deal {deal}: {error}{more}")
        self.failures = failures
        self.records = records


def read_records(path: str | os.PathLike) -> list[EpisodeRecord]:
    """The episodes of an evaluation CSV (:meth:`EvaluationResult.write_csv`, or one being written)."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if not reader.fieldnames or not set(CSV_COLUMNS) <= set(reader.fieldnames):
            raise ValueError(f"{path} is not an evaluation CSV (needs the columns {', '.join(CSV_COLUMNS)})")
        records = []
        for line, row in enumerate(reader, start=2):
            try:
                records.append(EpisodeRecord(row["agent"], int(row["deal_seed"]), bool(int(row["won"])),
                                             int(row["foundation_cards"]), int(row["length"]),
                                             bool(int(row["truncated"])), float(row["return"])))
            except (TypeError, ValueError):
                raise ValueError(f"{path}, line {line}: not an evaluation CSV row: {row}") from None
    return records


def _csv_row(r: EpisodeRecord) -> dict[str, Any]:
    # repr of a float reads back to the same float: a resumed run's figures equal an uninterrupted run's.
    return {**r.row(), "won": int(r.won), "truncated": int(r.truncated)}


def evaluate(env_id: str, agents: dict[str, Agent], episodes: int, seed: int = 0, progress: bool = False,
             max_episode_steps: int | None = None, record_dir: str | os.PathLike | None = None,
             env_kwargs: dict | None = None, backend: Backend | None = None,
             csv_path: str | os.PathLike | None = None, resume: bool = False,
             winnable_only: bool = False, torch_threads: int | None = 1) -> EvaluationResult:
    """Play each agent on deals ``seed .. seed + episodes - 1`` of ``env_id`` and summarise.

    ``winnable_only``: play instead the first ``episodes`` deals from ``seed`` on that the shipped solver
    data proves winnable (:func:`solitaire_env.solver.winnability.winnable_seeds`, for the rule set the env
    plays: ``{"draw": 3}`` takes ``klondike_draw3``'s; deals 0-999 only, so a ``ValueError`` if there are too
    few, or none shipped for the rule set). Whenever some deal played has shipped data, each summary also
    gives the win rate on the proved-winnable deals among those played.

    ``max_episode_steps``: ``None`` keeps the env's registered time limit. ``env_kwargs``: arguments
    for the env (e.g. ``{"no_revisit": True}``; not ``deals``: the deals are the ones above), kept in
    the result. ``record_dir``: write each
    episode there as a recording (``docs/recordings.md``), named ``AGENT-deal-SEED.json`` (the folder is
    made if missing). ``progress`` shows a tqdm
    bar of finished episodes on stderr.

    ``backend`` (:class:`~solitaire_env.parallel.Backend`): where the episodes run, one task per
    agent and deal (default: this process, one after another). Every episode is independent (the
    env is reset to its deal, the agent with :func:`agent_seed`), so the figures are the same
    wherever it runs; the records come back in the order a one-process run plays them.
    ``csv_path``: one row per episode, appended as each finishes, then rewritten in order at the
    end (:meth:`EvaluationResult.write_csv`); ``resume``: the episodes already in ``csv_path`` are
    kept, not played again (the run must be the same: env, arguments, agents).

    ``torch_threads``: the torch threads policies play on here (:func:`torch_threads`; ``None``: as
    the caller set them). One by default: two are about a fifth faster on an idle 2-core machine,
    but far slower on a busy one.

    Raises ``ValueError`` on bad arguments; :class:`EpisodeErrors` (a ``RuntimeError``) after the
    run if any episode failed, e.g. an agent played an illegal action.
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
    if torch_threads is not None and (isinstance(torch_threads, bool) or not isinstance(torch_threads, int)
                                      or torch_threads < 1):
        raise ValueError(f"torch_threads must be a positive integer or None, got {torch_threads!r}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    episodes, seed = int(episodes), int(seed)
    env_kwargs = dict(env_kwargs or {})
    if "deals" in env_kwargs:
        raise ValueError("env_kwargs cannot set 'deals': evaluate plays deals seed .. seed + episodes - 1")
    kwargs = {} if max_episode_steps is None else {"max_episode_steps": max_episode_steps}
    agent_kwargs = agent_env_kwargs(agents, env_kwargs)
    try:  # built here too, to refuse bad arguments before any work and to read the time limit
        env = gym.make(env_id, **kwargs, **env_kwargs)
        variants = {name: env.unwrapped.variant for name in agents}  # the rule set each agent plays
        for name, options in agent_kwargs.items():
            own = gym.make(env_id, **{**kwargs, **env_kwargs, **options})  # (an option set in both: one value)
            variants[name] = own.unwrapped.variant  # (a policy's own draw=3, say)
            own.close()
    except TypeError as e:  # an argument the env does not take
        raise ValueError(f"env_kwargs: {e}") from None
    limit = env.spec.max_episode_steps if env.spec is not None else None
    for name, agent in agents.items():  # a rule-based agent looks ahead with the rules it was built for
        rules = getattr(agent, "variant", None)
        if rules is not None and rules.name != env.unwrapped.variant.name:
            raise ValueError(f"agent {name!r} plays by the rules of {rules.name} but the env plays "
                             f"{env.unwrapped.variant.name}: build it with make_agent(..., env_kwargs=...)")

    labels = _shipped_labels(env.unwrapped.variant)  # the rule set played: Klondike draw 3 has labels of its own
    if winnable_only:
        other = next((name for name, v in variants.items() if v.name != env.unwrapped.variant.name), None)
        if other is not None:
            raise ValueError(f"agent {other!r} plays {variants[other].name}, not {env.unwrapped.variant.name}: "
                             "the winnable deals differ; evaluate it apart")
        if labels is None:
            raise ValueError(f"no shipped winnability data for {env_id} as played here ({env.unwrapped.variant.name}): "
                             "cannot pick the winnable deals")
        labelled, winnable = labels
        deals = sorted(d for d in winnable if d >= seed)[:episodes]
        if len(deals) < episodes:
            raise ValueError(f"only {len(deals)} deals from {seed} to {max(labelled)} are proved winnable "
                             f"(the shipped data covers deals {min(labelled)}-{max(labelled)}); asked for {episodes}")
    else:
        deals = list(range(seed, seed + episodes))
    order = {(name, deal): k for k, (name, deal) in enumerate(
        (name, deal) for name in agents for deal in deals)}
    done: dict[tuple[str, int], EpisodeRecord] = {}
    if resume and csv_path is not None and os.path.exists(csv_path):
        done = {(r.agent, r.deal_seed): r for r in read_records(csv_path) if (r.agent, r.deal_seed) in order}
    todo = [key for key in order if key not in done]
    if record_dir is not None:
        record_dir = os.path.abspath(record_dir)  # workers: other cwd
        os.makedirs(record_dir, exist_ok=True)
    context = _EpisodeContext(env_id, {**kwargs, **env_kwargs}, agents, record_dir, torch_threads)
    context._envs[()] = env  # played on here when the tasks run in this process; never sent to a worker
    out = open(csv_path, "a" if done else "w", newline="") if csv_path is not None else None  # noqa: SIM115
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS) if out else None
    if writer and not done:
        writer.writeheader()
    bar = None
    if progress:
        from tqdm import tqdm

        desc = next(iter(agents)) if len(agents) == 1 else f"evaluate {len(agents)} agents"
        bar = tqdm(total=len(order), initial=len(done), desc=desc, unit="episode")
    results = dict(done)
    failures: list[tuple[str, int, str]] = []
    # Greedy policy agents play all their deals at once in the batched env, one forward pass a step for all
    # (here, unless the episodes go elsewhere or are recorded).
    batched = {name for name, agent in agents.items() if getattr(agent, "batched", False)
               and (backend is None or (backend.ray is None and backend.jobs == 1)) and record_dir is None}
    with torch_threads_for_play(torch_threads):
        try:
            for name in batched:
                mine = [deal for agent_name, deal in todo if agent_name == name]
                if not mine:
                    continue
                # The games of a batch share every step, so one game's own time means nothing: each gets
                # the batch's wall time (the CSV rows written meanwhile included: microseconds) over its games.
                start = time.perf_counter()
                for r in play_batched(env_id, {**kwargs, **env_kwargs, **agent_kwargs.get(name, {})}, name,
                                      agents[name], mine):
                    results[name, r.deal_seed] = r
                    if writer:
                        writer.writerow(_csv_row(r))
                        out.flush()
                    if bar is not None:
                        bar.update(1)
                seconds = (time.perf_counter() - start) / len(mine)
                for deal in mine:
                    results[name, deal] = replace(results[name, deal], seconds=seconds)
            todo = [key for key in todo if key[0] not in batched]
            for i, r in run_tasks(_play_task, todo, context=context, backend=backend):
                if isinstance(r, TaskError):
                    failures.append((*todo[i], r.error))
                else:
                    results[todo[i]] = r
                    if writer:
                        writer.writerow(_csv_row(r))
                        out.flush()
                if bar is not None:
                    bar.update(1)
                    if len(agents) > 1:
                        bar.set_postfix_str(todo[i][0], refresh=False)
        finally:
            if bar is not None:
                bar.close()
            if out:
                out.close()
            context.close()
    records = [results[key] for key in order if key in results]
    if csv_path is not None:
        _write_rows(csv_path, records)  # the finished episodes in order, as a one-process run writes them
    if failures:
        failures.sort(key=lambda f: order[f[0], f[1]])
        raise EpisodeErrors(failures, records)
    # The win rate on the winnable deals is only given when some deal played has shipped data for the rule
    # set the agent played.
    played = set(deals)
    shipped = {env.unwrapped.variant.name: labels}  # rule set -> its labels, each loaded once
    winnable = {}
    for name, rules in variants.items():
        if rules.name not in shipped:
            shipped[rules.name] = _shipped_labels(rules)
        own = shipped[rules.name]
        winnable[name] = own[1] if own is not None and own[0] & played else None
    summaries = {name: AgentSummary.of(name, [r for r in records if r.agent == name], winnable[name])
                 for name in agents}
    return EvaluationResult(env_id, episodes, seed, limit, records, summaries, env_kwargs, winnable_only, deals,
                            agent_kwargs)


def agent_env_kwargs(agents: dict[str, Agent], env_kwargs: dict) -> dict[str, dict]:
    """The env options of each agent that needs some (:attr:`Agent.env_kwargs`); ``ValueError`` if one
    contradicts ``env_kwargs``."""
    out = {}
    for name, agent in agents.items():
        own = dict(getattr(agent, "env_kwargs", None) or {})
        clash = sorted(k for k in own if k in env_kwargs and env_kwargs[k] != own[k])
        if clash:
            raise ValueError(f"agent {name!r} plays with {clash[0]}={own[clash[0]]!r}, but env_kwargs set "
                             f"{clash[0]}={env_kwargs[clash[0]]!r}: evaluate it apart")
        if own:
            out[name] = own
    return out


def play_batched(env_id: str, env_kwargs: dict, name: str, agent: Agent, deals: list[int],
                 n_envs: int = 64) -> Iterator[EpisodeRecord]:
    """Agent ``name`` plays each of ``deals`` once, ``n_envs`` at a time in the batched env (the episode
    runner of :mod:`solitaire_env.tools.episodes`), choosing with ``agent.act_batch(obs, masks)``: the
    episodes of one-at-a-time play, yielded as they finish.

    The records' ``seconds`` are None: the games share the batch's steps, so :func:`evaluate` gives each the
    batch's wall time over its games.

    Only for agents whose batch play is their single play (``agent.batched``: a greedy policy). A policy's
    scores for one position can differ in the last bits between a batch and a single pass, so a move
    whose two best scores tie to about 1e-6 may go the other way; the figures agree otherwise.
    """
    runner = EpisodeRunner(env_id, list(deals), env_kwargs, n_envs=n_envs)
    for e in runner.run(lambda turn: agent.act_batch(turn.obs, turn.masks), name=name):
        yield EpisodeRecord(name, e.deal, e.won, e.foundation_cards, e.length, e.truncated, e.total_return)


def _seconds(x: float) -> str:
    """``x`` seconds to three significant digits, never in exponent form: 0.000512, 0.0213, 2.35, 123."""
    digits = min(6, max(0, 2 - math.floor(math.log10(x)))) if x > 0 else 3
    return f"{x:.{digits}f}"


def _shipped_labels(variant: Variant) -> tuple[set[int], set[int]] | None:
    """(the deals with shipped winnability data for ``variant``'s rule set, those proved winnable), or None if
    none is shipped (as for FreeCell with other than 4 cells)."""
    from solitaire_env.solver import winnability

    try:
        rows = winnability.load(variant)
    except FileNotFoundError:
        return None
    return {r.seed for r in rows}, {r.seed for r in rows if r.result == "won"}


def _write_rows(path: str | os.PathLike, records: list[EpisodeRecord]) -> None:
    # Written beside, then moved over: an interruption never leaves the file with fewer rows than it had.
    partial = f"{os.fspath(path)}.partial"
    with open(partial, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(_csv_row(r) for r in records)
    os.replace(partial, path)


class _EpisodeContext:
    """What every episode task shares: the env's arguments and the agents. Each worker builds its own env."""

    def __init__(self, env_id: str, env_kwargs: dict, agents: dict[str, Agent], record_dir: str | None,
                 torch_threads: int | None = 1) -> None:
        self.env_id, self.env_kwargs, self.agents, self.record_dir = env_id, env_kwargs, agents, record_dir
        self.torch_threads = torch_threads
        self._envs: dict[tuple, gym.Env] = {}  # by the agent's own env options

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_envs": {}}  # a live env does not travel; the worker makes its own

    def env(self, name: str) -> gym.Env:
        own = dict(getattr(self.agents[name], "env_kwargs", None) or {})
        key = tuple(sorted(own.items()))
        if key not in self._envs:
            self._envs[key] = gym.make(self.env_id, **{**self.env_kwargs, **own})
        return self._envs[key]

    def close(self) -> None:
        for env in self._envs.values():
            env.close()
        self._envs = {}


@contextlib.contextmanager
def torch_threads_for_play(threads: int | None = 1) -> Iterator[None]:
    """Play with ``threads`` torch threads (when torch is loaded; ``None``: leave them), then restore
    the count. On a busy machine torch's threads wait on each other: beside two other jobs on the 2
    cores, Number Ten's policy played 25 times slower on two threads than on one, where on the idle
    machine two were 1.27 times faster (measured when the default was set)."""
    torch = sys.modules.get("torch")
    if torch is None or threads is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _play_task(context: _EpisodeContext, task: tuple[str, int]) -> EpisodeRecord:
    name, deal = task
    with torch_threads_for_play(context.torch_threads):  # in a worker process too
        return _play_episode(context.env(name), name, context.agents[name], deal, context.record_dir)


def _play_episode(env: gym.Env, name: str, agent: Agent, deal: int, record_dir: str | None) -> EpisodeRecord:
    """Agent ``name`` plays deal ``deal`` from its start; the env and the agent are reset to it first."""
    recorder = None
    if record_dir is not None:
        from solitaire_env.tools.recording import Recorder

        recorder = Recorder()
        slug = "".join(c if c.isalnum() or c in "-_" else "_" for c in os.path.basename(name))
    start = time.perf_counter()  # timed here, in the process that plays it (a worker's too)
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
    seconds = time.perf_counter() - start  # play only: writing the recording is not the agent's time
    if recorder is not None:
        recorder.save(os.path.join(record_dir, f"{slug}-deal-{deal}.json"))
    return EpisodeRecord(name, deal, bool(info["is_won"]), int(info["foundation_cards"]), length,
                         bool(truncated and not terminated), total, seconds)


__all__ = ["AgentSummary", "EpisodeErrors", "EpisodeRecord", "EvaluationResult", "agent_seed", "evaluate",
           "read_records", "wilson_interval"]
