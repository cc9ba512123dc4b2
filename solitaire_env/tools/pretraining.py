"""The warm start of a training run and the choice of the policy it reports.

Warm start (the config's optional ``pretrain`` section; :mod:`solitaire_env.tools.imitation` does the work):
before PPO starts, the policy is fitted to the moves of the rule-based
:class:`~solitaire_env.agents.heuristic.HeuristicAgent`. Round 0 is behaviour cloning: the heuristic plays
``pretrain.episodes`` deals (``pretrain.seed``, ``seed + 1``, ...; train deals) in the batched env
the config trains on (same ``env_kwargs``: rewards, time limit, ``no_revisit``), reading each
position's default ``codes`` observation while the policy gets the config's observation. Every
move it makes, except the aimless moves of a heuristic that is ``stuck``, becomes a training
example: the policy's masked action distribution is fitted by cross-entropy for ``pretrain.epochs``
passes, and with ``pretrain.value: true`` the value head by squared error on the discounted returns
(``hyperparams.gamma``) of those games. Each further round (``pretrain.rounds``) is a DAgger round on
the next ``episodes`` deals: the policy plays (greedily; the teacher's move with probability
``pretrain.beta``), the heuristic labels every position it reaches, and the policy is fitted again
on all rounds' examples. With ``pretrain.eval_episodes`` each round ends with the policy playing
the first validation deals of ``eval`` greedily, and PPO starts from the round with the best win
rate. A finished round is saved (``pretrain/round_<r>.zip`` and ``.npz``, ``pretrain.json``), so
``--resume`` goes on after the last one. PPO then goes on from that policy; a lower
``hyperparams.learning_rate`` keeps more of the warm start. ``summary.json`` gets a ``pretrain``
entry (examples, agreement with the heuristic, wall time, each round)::

    pretrain:
      agent: heuristic      # the teacher: heuristic, search (search:WxN) or plan (plan:WxN, plan:WxNxK, plan-sliced)
      episodes: 1000        # games per round
      seed: 1000000         # their deals: seed, seed + 1, ... (round r: seed + r * episodes, ...)
      epochs: 5             # passes over the examples, each round
      batch_size: 1024
      learning_rate: 0.001  # Adam, for the pretraining only
      value: true           # also fit the value head
      value_coef: 0.5
      rounds: 1             # 1: cloning only; more: DAgger rounds after it
      beta: 0.0             # DAgger rounds: the share of moves the teacher plays
      eval_episodes: 0      # validation deals played after each round (at most eval.episodes)
      select_epoch: false   # true: fit one epoch at a time, score each on those deals, keep the best
      lr_decay: false       # true: the rate falls linearly to zero over each round's epochs (one Adam)
      accept_student: false # DAgger rounds: the student's move is its label where the teacher finds it
                            # keeps as short a win (FreeCell's planner, plan:1xN, judges; see OpenPlanAgent.label)

Fine-tuning (optional ``init_model``): a saved model (``.zip``; e.g. ``agents/pretrained/rainbow.zip``
or another run's ``selected_model.zip``) whose policy weights the run starts from, before any
pretraining and PPO. Its policy class and sizes must be the config's (a mismatch is a
``ConfigError``). The run then ends, as a pretraining run does, by scoring the starting policy,
``best_model.zip`` and ``final_model.zip`` on the first ``eval.episodes`` validation deals and copying
the best to ``selected_model.zip``, so fine-tuning never reports a policy worse than its start
without saying so.
"""

from __future__ import annotations

import copy
import json
import shutil
import time
from pathlib import Path
from typing import Any

from solitaire_env.engine.deals import describe
from solitaire_env.tools.config import PretrainConfig, TrainConfig, _ppo_hyperparams


def pretrain_deals(config: TrainConfig, round_: int) -> range:
    """The teacher deals of pretraining round ``round_`` (0: the cloning round)."""
    pre = config.pretrain or PretrainConfig()
    return range(pre.seed + round_ * pre.episodes, pre.seed + (round_ + 1) * pre.episodes)


def pretrain_policy(model: Any, config: TrainConfig, out: Path | None = None, verbose: int = 0,
                    progress: bool = False) -> dict[str, Any]:
    """Warm start: fit ``model.policy`` to the teacher's moves, over ``pretrain.rounds`` rounds (see the
    module docstring).

    With ``out``, each finished round leaves ``pretrain/round_<r>.zip`` (the model) and
    ``pretrain/round_<r>.npz`` (its examples) there, and ``pretrain.json`` its statistics, so a run cut
    short goes on after its last finished round; the model of the round with the best validation win
    rate (the last round when there is no validation) is loaded into ``model`` at the end. Returns the
    statistics that go into ``summary.json``.
    """
    from solitaire_env.tools import imitation

    pre = config.pretrain or PretrainConfig()
    gamma = float(config.hyperparams.get("gamma", _ppo_hyperparams()["gamma"].default))
    folder = out / "pretrain" if out is not None else None
    rounds: list[dict[str, Any]] = []
    parts: list[imitation.Games] = []
    if folder is not None and (out / "pretrain.json").is_file():  # resume after the last finished round
        done = json.loads((out / "pretrain.json").read_text()).get("rounds", [])
        for r, stats in enumerate(done):
            if not ((folder / f"round_{r}.zip").is_file() and (folder / f"round_{r}.npz").is_file()):
                break
            rounds.append(stats)
            parts.append(imitation.Games.load(str(folder / f"round_{r}.npz")))
        if rounds:
            model.set_parameters(str(folder / f"round_{len(rounds) - 1}.zip"), device="cpu")
            print(f"pretrain: resuming after round {len(rounds)} of {pre.rounds}")
    evals = range(config.eval.seed, config.eval.seed + min(pre.eval_episodes, config.eval.episodes))
    for r in range(len(rounds), pre.rounds):
        t0 = time.perf_counter()
        teacher_plays = r == 0  # round 0 is cloning of the teacher's own games; then DAgger
        data = imitation.play(config.env_id, pretrain_deals(config, r), config.env_kwargs, n_envs=config.n_envs,
                              teacher=pre.agent, policy=None if teacher_plays else model.policy,
                              beta=1.0 if teacher_plays else pre.beta, seed=pre.seed + r, gamma=gamma,
                              progress=progress, accept_student=pre.accept_student and not teacher_plays)
        collect_s = time.perf_counter() - t0
        parts.append(data)
        everything = imitation.Games.concat(parts) if len(parts) > 1 else data
        before = imitation.agreement(model.policy, data)
        fit_args = {"batch_size": pre.batch_size, "learning_rate": pre.learning_rate, "value": pre.value,
                    "value_coef": pre.value_coef, "max_grad_norm": model.max_grad_norm, "progress": progress}
        epoch_rates: list[float] = []
        best: dict[str, Any] = {}

        def score_epoch(_epoch: int, rates: list[float] = epoch_rates, kept: dict[str, Any] = best) -> None:
            """Score the policy on the validation deals; keep the best epoch's (the latest of equals)."""
            val = validation_games(config, model.policy, len(evals))
            rates.append(val.stats["win_rate"])
            if val.stats["win_rate"] == max(rates):
                kept.update(state=copy.deepcopy(model.policy.state_dict()), val=val)

        selecting = pre.select_epoch and pre.eval_episodes
        if selecting and not pre.lr_decay:
            # One epoch at a time, a fresh Adam each (as the recipes that ship were trained), each scored.
            for e in range(pre.epochs):
                losses = imitation.fit(model.policy, everything, 1, seed=pre.seed + 1000 * r + e, **fit_args)
                score_epoch(e)
        else:  # one Adam over the epochs, so that the decay spans them all
            losses = imitation.fit(model.policy, everything, pre.epochs, seed=pre.seed + r, lr_decay=pre.lr_decay,
                                   on_epoch=score_epoch if selecting else None, **fit_args)
        if selecting:
            model.policy.load_state_dict(best["state"])
            best_val = best["val"]
        fit_s = time.perf_counter() - t0 - collect_s
        stats = {"round": r, "deals": describe(pretrain_deals(config, r).start, pretrain_deals(config, r)[-1]),
                 "player": "teacher" if teacher_plays else f"student, teacher's move with probability {pre.beta}",
                 "games": data.stats["games"], "player_wins": data.stats["wins"],
                 "player_mean_foundation_cards": data.stats["mean_foundation_cards"],
                 "steps_played": data.stats["steps"],
                 **({"student_labels": data.stats["student_labels"]} if "student_labels" in data.stats else {}),
                 "examples": len(data), "examples_total": len(everything), "agreement_before": round(before, 4),
                 "agreement": round(imitation.agreement(model.policy, data), 4),
                 "chance_agreement": round(imitation.chance_agreement(data), 4), **losses,
                 "collect_s": round(collect_s, 1), "collect_steps_per_s": data.stats["steps_per_s"],
                 "fit_s": round(fit_s, 1),
                 "fit_examples_per_s": round(pre.epochs * len(everything) / max(fit_s, 1e-9), 1)}
        if epoch_rates:
            stats["epoch_validation_win_rates"] = epoch_rates  # the best epoch's policy is kept
        if pre.eval_episodes:
            val = best_val if epoch_rates else validation_games(config, model.policy, len(evals))
            stats["validation"] = {"deals": describe(evals.start, evals[-1]), "win_rate": val.stats["win_rate"],
                                   "mean_foundation_cards": val.stats["mean_foundation_cards"]}
        rounds.append(stats)
        line = (f"pretrain round {r + 1}/{pre.rounds}: {stats['examples']} examples ({len(everything)} in all), "
                f"agreement {stats['agreement']:.3f} (chance {stats['chance_agreement']:.3f}), "
                f"collect {collect_s:.0f} s ({data.stats['steps_per_s']:.0f} steps/s), fit {fit_s:.0f} s "
                f"({stats['fit_examples_per_s']:.0f} examples/s)")
        if "validation" in stats:
            line += f", validation win rate {stats['validation']['win_rate']:.3f}"
        print(line, flush=True)
        if folder is not None:
            folder.mkdir(exist_ok=True)
            model.save(folder / f"round_{r}.zip")
            data.save(str(folder / f"round_{r}.npz"))
            (out / "pretrain.json").write_text(json.dumps(_pretrain_summary(pre, rounds), indent=2))
    summary = _pretrain_summary(pre, rounds)
    if folder is not None and summary["best_round"] != len(rounds) - 1:
        model.set_parameters(str(folder / f"round_{summary['best_round']}.zip"), device="cpu")
    if verbose:
        print(f"pretrain: {summary}")
    return summary


def _pretrain_summary(pre: PretrainConfig, rounds: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [r["validation"]["win_rate"] if "validation" in r else -1.0 for r in rounds]
    # The best validation round (the first of equals); the last round when none was validated.
    best = len(rounds) - 1 if max(scored, default=-1.0) < 0 else scored.index(max(scored))
    last = rounds[-1] if rounds else {}
    # The first round's keys at the top, as a one-round run wrote them before rounds existed.
    first = rounds[0] if rounds else {}
    return {"agent": pre.agent, "episodes": pre.episodes, "epochs": pre.epochs,
            "teacher_wins": first.get("player_wins"), "examples": last.get("examples_total", 0),
            "agreement_before": first.get("agreement_before"), "agreement": last.get("agreement"),
            "chance_agreement": first.get("chance_agreement"), "cross_entropy": last.get("cross_entropy"),
            "value_mse": last.get("value_mse"), "best_round": best, "rounds": rounds,
            "wall_time_s": round(sum(r["collect_s"] + r["fit_s"] for r in rounds), 1)}


def select_model(config: TrainConfig, out: Path, pretrain: dict | None) -> dict[str, Any]:
    """Which of the run's policies wins most of the validation deals (the pretraining's
    ``eval_episodes``, or ``eval.episodes`` for a fine-tuning run without pretraining), played greedily
    (or as ``eval.deterministic`` says): the pretrained one (its round's figure) or the ``init_model``
    one, ``best_model.zip`` (the best PPO evaluation by return) and ``final_model.zip``. The winner is
    copied to ``selected_model.zip``: the policy to report and ship. Ties go to the earlier in that order."""
    from solitaire_env.agents.ppo import load_model

    pre = config.pretrain
    episodes = pre.eval_episodes if pre is not None and pre.eval_episodes else config.eval.episodes
    evals = range(config.eval.seed, config.eval.seed + episodes)
    rates: dict[str, float] = {}
    names = ["best_model.zip", "final_model.zip"]
    if pretrain and pretrain.get("rounds"):
        best = pretrain["rounds"][pretrain["best_round"]]
        if "validation" in best:
            rates["pretrained_model.zip"] = best["validation"]["win_rate"]
    elif config.init_model is not None:
        names.insert(0, "initial_model.zip")
    for name in names:
        if (out / name).is_file():
            model = load_model(out / name, device="cpu")
            rates[name] = validation_games(config, model.policy, episodes).stats["win_rate"]
    chosen = max(rates, key=lambda k: rates[k])  # the first of equals
    shutil.copyfile(out / chosen, out / "selected_model.zip")
    print(f"validation win rates ({describe(evals.start, evals[-1])}): "
          + ", ".join(f"{k} {v:.3f}" for k, v in rates.items()) + f"; selected {chosen}", flush=True)
    return {"deals": describe(evals.start, evals[-1]), "win_rates": rates, "selected": chosen}


def validation_games(config: TrainConfig, policy: Any, episodes: int) -> Any:
    """``policy`` plays the first ``episodes`` validation deals of ``config.eval`` (greedily, or as
    ``eval.deterministic`` says) in the config's batched env: the :class:`~solitaire_env.tools.imitation.Games`
    (no examples) whose ``stats`` score it."""
    from solitaire_env.tools import imitation

    evals = range(config.eval.seed, config.eval.seed + episodes)
    return imitation.play(config.env_id, evals, config.env_kwargs, n_envs=config.n_envs, policy=policy,
                          deterministic=config.eval.deterministic, seed=config.eval.seed)


__all__ = ["pretrain_deals", "pretrain_policy", "select_model", "validation_games"]
