"""Learning from a teacher: batched play with a teacher and a student, behaviour cloning, DAgger.

:func:`play` runs the batched env over an ordered list of deals, each played exactly once (the episode
runner of :mod:`solitaire_env.tools.episodes`), with one teacher agent per sub-env and optionally a
student policy. The teacher (the rule-based :class:`~solitaire_env.agents.heuristic.HeuristicAgent`, or the
determinized :class:`~solitaire_env.agents.search.SearchAgent`) reads each sub-env's default ``codes`` observation,
whatever the observation the student gets, and is seeded by its game's place in the deal list. Each
move is the teacher's with probability ``beta``, else the student's; every move the teacher would
make (when it is not stuck) is recorded with the student's observation as a training example.
``beta = 1`` is behaviour cloning of the teacher's own games; ``beta < 1`` is DAgger (Ross et al.,
2011): the teacher labels the positions the student reaches. :func:`fit` fits the policy's masked
action distribution to the labels by cross-entropy (and the value head to the discounted returns of
the games played).

Rows come back ordered by deal, then by step, so the data does not depend on the number of sub-envs.
Needs the ``train`` extra (torch).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from solitaire_env.envs.registration import ENV_IDS
from solitaire_env.tools.episodes import EpisodeRunner, Turn


@dataclass
class Games:
    """What :func:`play` returns: the examples (``obs`` rows, ``masks``, teacher ``actions``,
    discounted ``returns``) and the games' statistics."""

    obs: Any  # an array, or a dict of arrays (Dict observations), one row per example
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    stats: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.actions)

    def rows(self, idx: np.ndarray) -> Any:
        return {k: v[idx] for k, v in self.obs.items()} if isinstance(self.obs, dict) else self.obs[idx]

    @staticmethod
    def concat(parts: list[Games]) -> Games:
        obs = ({k: np.concatenate([p.obs[k] for p in parts]) for k in parts[0].obs}
               if isinstance(parts[0].obs, dict) else np.concatenate([p.obs for p in parts]))
        return Games(obs, np.concatenate([p.masks for p in parts]), np.concatenate([p.actions for p in parts]),
                     np.concatenate([p.returns for p in parts]), {"parts": [p.stats for p in parts]})

    def save(self, path: str) -> None:
        obs = self.obs if isinstance(self.obs, dict) else {"obs": self.obs}
        np.savez(path, **{f"obs.{k}": v for k, v in obs.items()}, masks=self.masks, actions=self.actions,
                 returns=self.returns)

    @staticmethod
    def load(path: str, stats: dict | None = None) -> Games:
        with np.load(path) as f:
            obs = {k.removeprefix("obs."): f[k] for k in f.files if k.startswith("obs.")}
            masks, actions, returns = f["masks"], f["actions"], f["returns"]
        return Games(obs["obs"] if set(obs) == {"obs"} else obs, masks, actions, returns, stats or {})


def _rows(obs: Any, idx: np.ndarray) -> Any:
    return {k: v[idx].copy() for k, v in obs.items()} if isinstance(obs, dict) else obs[idx].copy()


def play(env_id: str, deals: range, env_kwargs: dict | None = None, n_envs: int = 16, teacher: str | None = None,
         policy: Any = None, beta: float = 1.0, deterministic: bool = True, seed: int = 0, gamma: float = 0.995,
         record: bool = True, progress: bool = False, accept_student: bool = False) -> Games:
    """Play every deal of ``deals`` once (the module docstring says who moves and what is recorded).

    ``policy``: an SB3 policy (``model.policy``) for the student's moves, greedy when
    ``deterministic``; ``seed`` seeds the choice between teacher and student and the sampling.
    ``record=False`` (or no teacher) keeps no examples: an evaluation of whoever plays. ``stats``:
    games, wins, win rate, mean foundation cards, steps, truncated games, wall time and steps/s.
    ``accept_student`` (with a policy, and a teacher that has a ``label`` method): the student's move is
    proposed to the teacher at every position, and the teacher's label, the proposal or its own move, is
    recorded (``stats["student_labels"]`` counts the proposals taken where the teacher's move differed).
    """
    import torch

    import solitaire_env  # noqa: F401  (registers the ids)
    from solitaire_env.agents import make_agent  # the tools load the agents only where they use them
    from solitaire_env.agents.ppo import policy_actions

    if env_id not in ENV_IDS:
        raise ValueError(f"unknown env id {env_id!r}; known: {', '.join(ENV_IDS)}")
    if teacher is None and policy is None:
        raise ValueError("play needs a teacher, a policy or both")
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    runner = EpisodeRunner(env_id, deals, env_kwargs, n_envs=n_envs)
    n_envs = runner.n_envs
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    # The teacher looks ahead with the rules the env plays (Klondike's draw 3 is an env option).
    teachers = ([make_agent(teacher, env_id, seed=seed, env_kwargs=env_kwargs) for _ in range(n_envs)]
                if teacher else None)
    record = record and teachers is not None
    if accept_student and (policy is None or not teachers or not hasattr(teachers[0], "label")):
        raise ValueError(f"accept_student needs a student policy and a teacher that judges its moves (FreeCell's "
                         f"plan:1xN), got teacher {teacher!r}")
    student_labels = 0
    chunks: list[tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []  # obs, masks, actions, game, step

    def start(i: int, g: int) -> None:  # each game's teacher seeded by its deal's place: n_envs never changes a label
        if teachers:
            teachers[i].reset(seed=seed + g)

    def choose(turn: Turn) -> np.ndarray:
        nonlocal student_labels
        active, masks, obs = turn.active, turn.masks, turn.obs
        acts = np.zeros(n_envs, np.int64)
        moves = np.full(n_envs, -1, np.int64)  # the teacher's move
        taught = np.full(n_envs, -1, np.int64)  # its label: none while it is stuck (its moves are aimless)
        use_teacher = np.zeros(n_envs, bool)
        student = policy_actions(policy, obs, masks, deterministic) if accept_student else None
        if teachers:
            codes = turn.venv.codes
            for i in active:
                info = {"action_mask": masks[i]}
                if student is not None:
                    moves[i], taught[i] = teachers[i].label(codes[i], info, int(student[i]))
                    student_labels += int(taught[i] != moves[i])
                else:
                    moves[i] = taught[i] = teachers[i].act(codes[i], info)
                if teachers[i].stuck:
                    taught[i] = -1
            use_teacher[active] = rng.random(len(active)) < beta if policy is not None else True
        if policy is not None and not use_teacher[active].all():
            acts[:] = student if student is not None else policy_actions(policy, obs, masks, deterministic)
        acts[use_teacher] = moves[use_teacher]
        if record:
            keep = active[taught[active] >= 0]
            if len(keep):
                chunks.append((_rows(obs, keep), masks[keep], taught[keep], turn.game[keep].copy(),
                               turn.step[keep].copy()))
        return acts

    start_time = time.perf_counter()
    rewards: list[list[float]] = [[] for _ in deals]
    won = np.zeros(len(deals), bool)
    cards = np.zeros(len(deals), np.int64)
    truncated_games = steps = 0
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(deals), unit="game", leave=False)
    for episode in runner.run(choose, on_start=start, keep_rewards=True):
        rewards[episode.index] = episode.rewards
        won[episode.index], cards[episode.index] = episode.won, episode.foundation_cards
        truncated_games += episode.truncated
        steps += episode.length
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    wall = time.perf_counter() - start_time
    # Discounted returns of each game, then the examples in (deal, step) order.
    to_go = []
    for r in rewards:
        g = np.zeros(len(r) + 1)
        for t in range(len(r) - 1, -1, -1):
            g[t] = r[t] + gamma * g[t + 1]
        to_go.append(g)
    n_games = len(deals)
    stats = {"games": n_games, "wins": int(won.sum()), "win_rate": round(float(won.mean()), 4),
             "mean_foundation_cards": round(float(cards.mean()), 2), "steps": steps,
             "truncated": truncated_games, "wall_time_s": round(wall, 1),
             **({"student_labels": student_labels} if accept_student else {}),
             "steps_per_s": round(steps / wall, 1) if wall > 0 else None}
    if not chunks:
        return Games(np.zeros((0,)), np.zeros((0, runner.n_actions), bool), np.zeros(0, np.int64),
                     np.zeros(0, np.float32), {**stats, "examples": 0})
    games = np.concatenate([c[3] for c in chunks])
    step_of = np.concatenate([c[4] for c in chunks])
    order = np.lexsort((step_of, games))
    first = chunks[0][0]
    obs_all = ({k: np.concatenate([c[0][k] for c in chunks])[order] for k in first}
               if isinstance(first, dict) else np.concatenate([c[0] for c in chunks])[order])
    returns = np.array([to_go[g][s] for g, s in zip(games[order], step_of[order], strict=True)], dtype=np.float32)
    return Games(obs_all, np.concatenate([c[1] for c in chunks])[order],
                 np.concatenate([c[2] for c in chunks])[order], returns, {**stats, "examples": int(len(order))})


def fit(policy: Any, data: Games, epochs: int, batch_size: int = 512, learning_rate: float = 1e-3,
        value: bool = True, value_coef: float = 0.5, max_grad_norm: float = 0.5, seed: int = 0,
        progress: bool = False, lr_decay: bool = False,
        on_epoch: Callable[[int], None] | None = None) -> dict[str, float]:
    """Fit ``policy`` (an SB3 maskable policy) to ``data``'s labels: cross-entropy of its masked action
    distribution, plus ``value_coef`` times the squared error of its value on the returns when
    ``value``. Adam over ``epochs`` shuffled passes (``seed``), at ``learning_rate`` throughout or, with
    ``lr_decay``, falling linearly from it to zero over the passes' batches. ``on_epoch(e)`` is called
    after pass ``e`` (0-based), the policy in evaluation mode while it runs. Returns the last epoch's mean
    losses."""
    import torch

    n = len(data)
    rng = np.random.default_rng(seed)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    steps = epochs * ((n + batch_size - 1) // batch_size)
    schedule = (torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: 1.0 - k / steps)
                if lr_decay and steps else None)
    actions = torch.as_tensor(data.actions)
    returns = torch.as_tensor(data.returns)
    policy.set_training_mode(True)
    totals = np.zeros(2)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=steps, unit="batch", leave=False)
    for epoch in range(epochs):
        order = rng.permutation(n)
        totals = np.zeros(2)
        for lo in range(0, n, batch_size):
            idx = order[lo:lo + batch_size]
            obs = policy.obs_to_tensor(data.rows(idx))[0]
            values, log_prob, _ = policy.evaluate_actions(obs, actions[idx], action_masks=data.masks[idx])
            pol = -log_prob.mean()
            val = torch.nn.functional.mse_loss(values.flatten(), returns[idx])
            loss = pol + value_coef * val if value else pol
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
            optimizer.step()
            if schedule is not None:
                schedule.step()
            totals += (pol.item() * len(idx), val.item() * len(idx))
            if bar is not None:
                bar.update(1)
        if on_epoch is not None:
            policy.set_training_mode(False)
            on_epoch(epoch)
            policy.set_training_mode(True)
    if bar is not None:
        bar.close()
    policy.set_training_mode(False)
    ce, mse = totals / max(n, 1)
    return {"cross_entropy": round(float(ce), 4), "value_mse": round(float(mse), 6)}


def agreement(policy: Any, data: Games, batch_size: int = 4096) -> float:
    """How often the policy's most likely legal action is the teacher's, over ``data``'s examples with a
    choice (two legal actions or more; 0.0 if there are none)."""
    from solitaire_env.agents.ppo import policy_actions

    choice = np.flatnonzero(data.masks.sum(axis=1) > 1)
    hits = 0
    for lo in range(0, len(choice), batch_size):
        idx = choice[lo:lo + batch_size]
        chosen = policy_actions(policy, data.rows(idx), data.masks[idx], deterministic=True)
        hits += int((chosen == data.actions[idx]).sum())
    return hits / max(len(choice), 1)


def chance_agreement(data: Games) -> float:
    """What a uniformly random legal choice would agree on, over the same examples as :func:`agreement`."""
    legal = data.masks.sum(axis=1)
    legal = legal[legal > 1]
    return float(np.mean(1.0 / legal)) if len(legal) else 0.0


__all__ = ["Games", "agreement", "chance_agreement", "fit", "play"]
