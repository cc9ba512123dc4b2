"""Minari datasets of the project's players, for offline RL and imitation: ``solitaire-env dataset``.

``solitaire-env dataset GAME --agent AGENT --episodes N [--deals train|validation|test|A:B] [--seed S]
[--out DIR] [--id ID]`` plays N episodes of GAME and writes them as a local Minari dataset
(:func:`make_dataset`); ``minari.load_dataset(ID)`` reads it back (with ``MINARI_DATASETS_PATH=DIR``
when ``--out`` was given). No remote hub is involved.

Agents: ``random``, ``heuristic``, ``search``, ``search:WxN`` and ``pretrained``
(:func:`solitaire_env.agents.make_agent`), and ``solver``: the shipped winning lines of the
perfect-information solver (docs/winnability.md), replayed move by move. The solver saw every card,
face-down ones included, so its dataset is perfect-information play (``perfect_information: true`` in
the metadata); its lines cover test deals 0-999 only, so it needs ``--deals test`` or a range inside
``0:1000``, and plays only the deals it won.

Every episode is recorded in the default ``codes`` observation. An agent that plays another
observation (the pretrained policies read ``obs_mode="piles"``) plays an env of its own in lockstep
with the recorded one, on the same deal and with the same moves; the options that change the game
(``no_revisit``) are the recorded env's too, and Minari stores that env's spec, so
``dataset.recover_environment()`` makes the env the data came from. What a dataset holds:

| field | per episode of T steps |
|---|---|
| ``observations`` | ``(T + 1, obs_size)`` int16 codes, the reset's first |
| ``actions`` | ``(T,)`` action ids |
| ``rewards``, ``terminations``, ``truncations`` | ``(T,)`` as the env returned them |
| ``infos["action_mask"]`` | ``(T + 1, n_actions)`` int8: the legal actions in each observation |
| ``infos["foundation_cards"]``, ``infos["is_won"]`` | ``(T + 1,)`` |
| ``infos["move_id"]`` | ``(T + 1,)``: the id of the move the step played (-1 at the reset) |
| ``infos["stuck"]`` | with ``no_revisit`` only, as the env's info |

Minari needs the same info keys, with the same types, on every step (the env's info has them), and
each step's info is kept to the keys above: what a learner needs, without the per-episode
``deal_seed``. Each episode's metadata gives its ``deal`` number; the dataset's metadata the
agent, the deals, the env id and options, ``perfect_information`` and the versions.

Written with Minari's parquet storage (or ``arrow``: 14 times the size), from episode buffers built
here: Minari's ``DataCollector`` wrapper needs jax to build its own. Needs ``pip install 'solitaire-env[datasets]'``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
import warnings
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from solitaire_env.engine.deals import DealSet, deal_set, split_of
from solitaire_env.envs.registration import ENV_IDS

# Minari's storages that need only pyarrow; parquet is compressed: 6 KB a Rainbow episode where arrow takes 84.
DATA_FORMATS = ("parquet", "arrow")
NAMESPACE = "solitaire"
DATASET_AGENTS = ("random", "heuristic", "search", "pretrained", "solver")  # and search:WxN
# The env's info keys that hold on every step, resets included (the env adds "stuck" with no_revisit and
# "revisit" with track_revisits to both).
INFO_KEYS = ("action_mask", "foundation_cards", "is_won", "stuck", "revisit")
OBSERVATION_OPTIONS = ("obs_mode", "action_features")  # what the agent's env may change, the recorded one not
SHIPPED_LINES = range(0, 1000)  # the deals of the solver's shipped winning lines (docs/winnability.md)
CHUNK = 100  # episodes held in memory before they are written


def env_id_of(game: str) -> str:
    """The env id of ``game`` (``rainbow``, ``rank_and_file``, ``number_ten``, or an env id itself)."""
    if game in ENV_IDS:
        return game
    for env_id, (_, variant) in ENV_IDS.items():
        if variant.name == game:
            return env_id
    names = ", ".join(v.name for _, v in ENV_IDS.values())
    raise ValueError(f"unknown game {game!r}; known: {names} (or an env id: {', '.join(ENV_IDS)})")


def default_dataset_id(game: str, agent: str, deals: str = "train") -> str:
    """``solitaire/<game>-<agent>-v0`` for train deals; other deals are named in it, e.g.
    ``solitaire/rainbow-solver-test-v0`` or ``solitaire/rainbow-heuristic-deals-0-99-v0``."""
    name = ENV_IDS[env_id_of(game)][1].name
    slug = agent.replace(":", "-")
    if deals == "train":
        return f"{NAMESPACE}/{name}-{slug}-v0"
    if deals in ("validation", "test"):
        return f"{NAMESPACE}/{name}-{slug}-{deals}-v0"
    chosen = deal_set(deals)
    return f"{NAMESPACE}/{name}-{slug}-deals-{chosen.deals[0]}-{chosen.deals[-1]}-v0"


def check_agent(agent: str) -> None:
    """``ValueError`` unless ``agent`` is one of :data:`DATASET_AGENTS` or ``search:WxN``."""
    if agent in DATASET_AGENTS or agent.startswith("search:"):
        return
    raise ValueError(f"unknown dataset agent {agent!r}: use {', '.join(DATASET_AGENTS)} or search:WxN "
                     "(e.g. search:8x1000)")


class LineAgent:
    """Plays the solver's shipped winning line of each deal (perfect information: it knew every card);
    :meth:`play_deal` before each episode says which. The interface of ``solitaire_env.agents.Agent``, not
    its subclass: importing the tools loads no agents (tests/test_layers.py)."""

    name = "solver"
    env_kwargs: dict = {}

    def __init__(self, game: str, deals: DealSet) -> None:
        from solitaire_env.solver.winnability import load

        first = None if deals.sampled else deals.deals[0] if isinstance(deals.deals, range) else min(deals.deals)
        if first is None or first >= SHIPPED_LINES.stop:
            which = "train deals are not among them" if deals.sampled else f"none of {deals.name}"
            raise ValueError(f"the solver plays its shipped winning lines, which cover test deals 0-999 only "
                             f"({which}): use --deals test or a range inside 0:1000")
        self.game = game
        self.lines: dict[int, list[str]] = {r.seed: r.moves for r in load(game) if r.result == "won"}
        self._line: list[int] = []
        self._next = 0

    def play_deal(self, deal: int) -> None:
        """Get ready to play ``deal``'s line: its moves' action ids, by the engine's own parser."""
        from solitaire_env.engine.game import Game
        from solitaire_env.engine.notation import parse_move

        g = Game(self.game, deal)
        self._line, self._next = [], 0
        for text in self.lines[deal]:
            move = parse_move(text, g)
            # Its id among the legal ones: Game.encode searches the whole action table (1 ms a move of 243).
            action = next(int(a) for a in g.legal_actions() if g.decode(int(a)) == move)
            self._line.append(action)
            g.play(action)

    def reset(self, seed: int | None = None) -> None:
        """Nothing to seed: the line is fixed."""

    def act(self, observation: Any, info: dict) -> int:
        action = self._line[self._next]
        self._next += 1
        return action


def _plan(deals: DealSet, episodes: int, seed: int, only: dict | None = None) -> list[tuple[int, int | None]]:
    """Each episode's reset seed and, in an ordered deal set, its deal (``None``: drawn by the reset); with
    ``only``, the first ``episodes`` deals of the set that are keys of it."""
    if deals.sampled:
        return [(seed + i, None) for i in range(episodes)]
    if only is not None:  # a range past the shipped lines' deals need not be walked to its end
        last = len(deals) if not isinstance(deals.deals, range) else min(len(deals), SHIPPED_LINES.stop)
        return [(p, deals.at(p)) for p in range(last) if deals.at(p) in only][:episodes]
    return [(p, deals.at(p)) for p in range(min(episodes, len(deals)))]


def _info_row(info: dict, keys: tuple[str, ...], move_id: int) -> dict:
    """A step's info as Minari stores it: the same keys on every step, arrays or plain Python values."""
    row = {k: info[k].copy() if isinstance(info[k], np.ndarray) else np.asarray(info[k]).item() for k in keys}
    row["move_id"] = move_id
    return row


def _record(env: Any, agent_env: Any, agent: Any, reset_seed: int, keys: tuple[str, ...]) -> tuple[Any, int, bool]:
    """One episode: its Minari buffer, its deal, whether it was won."""
    from minari.data_collector import EpisodeBuffer

    from solitaire_env.tools.evaluation import agent_seed

    obs, info = env.reset(seed=reset_seed)
    deal = int(info["deal_seed"])
    seen, seen_info = (obs, info) if agent_env is env else agent_env.reset(seed=reset_seed)
    if isinstance(agent, LineAgent):
        agent.play_deal(deal)
    agent.reset(seed=agent_seed(deal))
    observations, infos = [obs], [_info_row(info, keys, -1)]
    actions, rewards, terminations, truncations = [], [], [], []
    terminated = truncated = False
    while not (terminated or truncated):
        action = int(agent.act(seen, seen_info))
        if not info["action_mask"][action]:
            raise RuntimeError(f"agent {agent.name!r} played illegal action {action} on deal {deal}, "
                               f"step {len(actions)}")
        obs, reward, terminated, truncated, info = env.step(action)
        if agent_env is env:
            seen, seen_info = obs, info
        else:
            seen, _, done, cut, seen_info = agent_env.step(action)
            if (done, cut) != (terminated, truncated) or not np.array_equal(seen_info["action_mask"],
                                                                            info["action_mask"]):
                raise RuntimeError(f"the agent's env and the recorded env disagree on deal {deal}, "
                                   f"step {len(actions)}")
        observations.append(obs)
        infos.append(_info_row(info, keys, action))
        actions.append(action)
        rewards.append(float(reward))
        terminations.append(bool(terminated))
        truncations.append(bool(truncated))
    if isinstance(agent, LineAgent) and not info["is_won"]:
        raise RuntimeError(f"the solver's line of deal {deal} ends unwon")
    columns = {k: [row[k] for row in infos] for k in infos[0]}
    buffer = EpisodeBuffer(seed=reset_seed, observations=observations, actions=actions, rewards=rewards,
                           terminations=terminations, truncations=truncations, infos=columns)
    return buffer, deal, bool(info["is_won"])


@contextlib.contextmanager
def _datasets_root(out: str | os.PathLike | None) -> Iterator[None]:
    """Minari's local root (``MINARI_DATASETS_PATH``) set to ``out`` for the while, when given."""
    if out is None:
        yield
        return
    before = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = os.path.abspath(out)
    try:
        yield
    finally:
        if before is None:
            del os.environ["MINARI_DATASETS_PATH"]
        else:
            os.environ["MINARI_DATASETS_PATH"] = before


def make_dataset(game: str, agent: str, episodes: int, deals: str = "train", seed: int = 0,
                 out: str | os.PathLike | None = None, dataset_id: str | None = None,
                 data_format: str = "parquet", progress: bool = False) -> tuple[Any, dict]:
    """Play ``episodes`` episodes of ``game`` with ``agent`` and write them as a Minari dataset.

    ``deals``: ``train`` (each episode ``i`` draws a deal with ``reset(seed=seed + i)``),
    ``validation``, ``test`` or ``"A:B"`` (their first ``episodes`` deals in order; the solver: the first
    ``episodes`` of them it won). ``out``: Minari's local root to write under (default: Minari's own,
    ``MINARI_DATASETS_PATH`` or ``~/.minari/datasets``). Returns the dataset and a summary. ``ValueError``
    for bad arguments, before any play; a failure while playing removes the partial dataset.
    """
    import gymnasium as gym

    try:
        import minari
        from minari.storage.datasets_root_dir import get_dataset_path
    except ImportError as e:
        raise ImportError("writing a dataset needs minari and pyarrow: pip install 'solitaire-env[datasets]'") from e
    import solitaire_env
    from solitaire_env.agents import make_agent

    env_id = env_id_of(game)
    game = ENV_IDS[env_id][1].name
    check_agent(agent)
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes <= 0:
        raise ValueError(f"episodes must be a positive integer, got {episodes!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    dealing = deal_set(deals)
    if dealing is None:
        raise ValueError("deals must name the deals: 'train', 'validation', 'test' or 'A:B'")
    dataset_id = dataset_id or default_dataset_id(game, agent, deals)
    try:
        minari.dataset.minari_dataset.parse_dataset_id(dataset_id)
    except (ValueError, TypeError):  # TypeError: no version
        raise ValueError(f"bad dataset id {dataset_id!r}: write NAMESPACE/NAME-vN, e.g. "
                         f"{default_dataset_id(game, agent, deals)}") from None
    if data_format not in DATA_FORMATS:
        raise ValueError(f"data_format must be one of {', '.join(DATA_FORMATS)}, got {data_format!r}")
    if out is not None and os.path.exists(out) and not os.path.isdir(out):
        raise ValueError(f"--out {out} is a file, not a directory")
    player = LineAgent(game, dealing) if agent == "solver" else make_agent(agent, env_id, seed=seed)
    plan = _plan(dealing, episodes, seed, player.lines if agent == "solver" else None)
    if agent == "solver":
        if len(plan) < episodes:
            raise ValueError(f"the solver's shipped lines win {len(plan)} deals of {dealing.name}, fewer than "
                             f"{episodes} episodes: ask for at most {len(plan)}")
    elif len(plan) < episodes:
        raise ValueError(f"{dealing.name} hold {len(dealing)} deals, fewer than {episodes} episodes")
    own = dict(getattr(player, "env_kwargs", None) or {})
    recorded = {k: v for k, v in own.items() if k not in OBSERVATION_OPTIONS}
    with _datasets_root(out):
        path = get_dataset_path(dataset_id)
        if os.path.exists(path):
            raise ValueError(f"dataset {dataset_id} exists already ({path}): delete it "
                             f"(minari delete {dataset_id}) or give another id")
        env = gym.make(env_id, deals=deals, **recorded)
        agent_env = env if own == recorded else gym.make(env_id, deals=deals, **own)
        keys = tuple(k for k in INFO_KEYS if k in env.reset(seed=0)[1])
        start = time.perf_counter()
        try:
            dataset, summary = _write(env, agent_env, player, plan, keys, dataset_id, data_format, progress)
        except BaseException:
            shutil.rmtree(path, ignore_errors=True)
            raise
        finally:
            env.close()
            agent_env.close()
        split = split_of(plan[0][1], plan[-1][1]) if plan[0][1] is not None else "train"
        summary.update(wall_time_s=round(time.perf_counter() - start, 1), path=str(path))
        dataset.storage.update_metadata({
            "agent": agent, "perfect_information": agent == "solver", "env_id": env_id, "game": game,
            "env_kwargs": {"deals": deals, **recorded}, "agent_env_kwargs": own, "observation": "codes",
            "deals": deals, "deal_split": split, "reset_seeds": f"{plan[0][0]}-{plan[-1][0]}",
            "episodes_won": summary["wins"], "solitaire_env_version": solitaire_env.__version__,
            "info_keys": [*keys, "move_id"],
        })
    return dataset, summary


def _write_chunk(storage: Any, env: Any, agent_env: Any, player: Any, plan: list, lo: int, keys: tuple[str, ...],
                 bar: Any, wins: int, steps: int) -> tuple[int, int]:
    """Play and write episodes ``lo .. lo + CHUNK - 1`` of ``plan``; the running wins and steps."""
    buffers, metadata = [], []
    for reset_seed, _ in plan[lo:lo + CHUNK]:
        buffer, deal, won = _record(env, agent_env, player, reset_seed, keys)
        buffers.append(buffer)
        metadata.append({"deal": deal, "won": won})
        wins += won
        steps += len(buffer)
        if bar is not None:
            bar.update(1)
    storage.update_episodes(buffers)
    storage.update_episode_metadata(metadata, range(lo, lo + len(buffers)))
    return wins, steps


def _write(env: Any, agent_env: Any, player: Any, plan: list, keys: tuple[str, ...], dataset_id: str,
           data_format: str, progress: bool) -> tuple[Any, dict]:
    import minari

    import solitaire_env
    from solitaire_env.tools.evaluation import torch_threads_for_play

    description = (f"{player.name} playing {env.spec.id}; "
                   + ("the solver's winning lines, found with every card known (perfect information)"
                      if isinstance(player, LineAgent) else "the agent saw only what a player at the table sees"))
    with warnings.catch_warnings():  # Minari warns of every metadata field left out (author e-mail, code link)
        warnings.simplefilter("ignore", UserWarning)
        dataset = minari.create_dataset_from_buffers(
            dataset_id, [], env=env, eval_env=replace(env.spec, kwargs={**env.spec.kwargs, "deals": "validation"}),
            algorithm_name=player.name, author="solitaire-env", description=description,
            data_format=data_format, requirements=[f"solitaire-env>={solitaire_env.__version__}"])
    # Minari recounts the size of every file of the dataset after each episode it writes (quadratic in the
    # episodes: most of a 1,000-episode write); counted once, at the end, instead.
    storage = dataset.storage
    storage.get_size = lambda: 0.0
    bar = None
    if progress:
        with contextlib.suppress(ImportError):
            from tqdm import tqdm

            bar = tqdm(total=len(plan), unit="episode", leave=False)
    wins = steps = 0
    try:
        with torch_threads_for_play(1):  # a policy's play: one torch thread (docs/design.md, "Training threads")
            for lo in range(0, len(plan), CHUNK):
                wins, steps = _write_chunk(storage, env, agent_env, player, plan, lo, keys, bar, wins, steps)
    finally:
        if bar is not None:
            bar.close()
    del storage.get_size
    storage.update_metadata({"dataset_size": storage.get_size()})  # Minari's figure: MB, to 0.1
    dataset = minari.MinariDataset(storage.data_path)  # reread: it counts the episodes written
    size = sum(f.stat().st_size for f in storage.data_path.rglob("*") if f.is_file())
    return dataset, {"dataset_id": dataset_id, "episodes": len(plan), "steps": steps, "wins": wins, "bytes": size}


__all__ = ["DATASET_AGENTS", "DATA_FORMATS", "INFO_KEYS", "LineAgent", "check_agent", "default_dataset_id", "env_id_of",
           "make_dataset"]
