"""MaskablePPO's environment steps per second, with and without the speed-ups (docs/benchmarks.md,
"Training throughput"), and ``examples/cleanrl_ppo.py`` beside it (docs/libraries.md, "Beside the SB3
recipe").

    python benchmarks/ppo_throughput.py [REPS] [PATTERN]            # the variants: default 2 rounds
    python benchmarks/ppo_throughput.py --cleanrl [ROUNDS] [STEPS]  # default 3 rounds of 100,000 steps each
    python benchmarks/ppo_throughput.py --quick                     # seconds, for CI (a check, not a measure)
    python benchmarks/ppo_throughput.py --quick --cleanrl

**The variants.** ``CardCodesPolicy`` on ``configs/ablations/rainbow_ppo.yaml`` (16,384 steps after 4,096 to
warm up) in eight variants: as it first was (the embedding's ``skip_empty`` off, Adam's foreach kernel,
sb3-contrib's ``forward`` and ``evaluate_actions``), with the update's speed-ups but sb3-contrib's passes, and
today's passes on one torch thread and with PPO's update on two threads (``update_threads: 2``), each
of these two with 4, 3 and 2 epochs per update. Then ``configs/ablations/rank_and_file_ppo.yaml`` and
``configs/ablations/number_ten_ppo.yaml`` as they are (16,384 after 4,096), on one thread and with two update
threads, and ``MoveScorerPolicy`` on ``configs/ablations/rainbow_no_teacher.yaml`` (8,192 after
4,096), the same two ways. ``REPS`` rounds (default 2), the variants alternating within a round;
``PATTERN``, a regular expression, keeps the variants whose full name matches. Each round prints the
steps per second so far as one JSON line. Run it on a quiet machine: other work on the cores changes
these figures far more than the variants do.

**``--cleanrl``**: ``examples/cleanrl_ppo.py`` beside sb3-contrib's MaskablePPO at the same
hyperparameters, in one run. Both train ``configs/quick.yaml``'s set-up on Rainbow's train deals: 16 envs
of the native batched env, 128 steps a rollout, minibatches of 512, 4 epochs, learning rate 3e-4,
entropy 0.01, a 256-wide card embedding and 128-wide heads, one torch thread. Each run is a fresh
process; the two alternate within a round, so a change in the host's speed touches both. Steps per
second count the whole training (rollouts and updates, no evaluation). ``STEPS`` each run. Each round
prints the figures so far as one JSON line.

**``--quick``** runs the same code at sizes that say nothing about speed, one round (unless ``REPS``
says) of 4-step rollouts: each variant one rollout to warm up and one timed, and with ``--cleanrl``
each run one rollout. Its variants, unless ``PATTERN`` says: the first of each kind, on one thread
(on a busy machine, a CI runner's, two update threads make even a tiny update take seconds).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# name: (features_extractor_kwargs, optimizer_kwargs, sb3-contrib's passes, update threads, epochs per
# update); None: defaults
CARD_CODES: dict[str, tuple[dict | None, dict | None, bool, int, int]] = {
    "as first built, 4 epochs": ({"skip_empty": False}, {"fused": False}, True, 1, 4),
    "update speed-ups, sb3-contrib passes, 4 epochs": (None, None, True, 1, 4),
    "defaults, 1 thread, 4 epochs": (None, None, False, 1, 4),
    "defaults, 2 update threads, 4 epochs": (None, None, False, 2, 4),
    "defaults, 1 thread, 3 epochs": (None, None, False, 1, 3),
    "defaults, 2 update threads, 3 epochs": (None, None, False, 2, 3),
    "defaults, 1 thread, 2 epochs": (None, None, False, 1, 2),
    "defaults, 2 update threads, 2 epochs": (None, None, False, 2, 2),
}
SCORER = {"defaults, 1 thread": 1, "defaults, 2 update threads": 2}
# the two-deck games' from-scratch configs, as they are: name: (config, update threads)
TWO_DECK = {f"{path}, {label}": (path, threads)
            for path in ("configs/ablations/rank_and_file_ppo.yaml", "configs/ablations/number_ten_ppo.yaml")
            for label, threads in (("1 thread", 1), ("2 update threads", 2))}
# --quick (module doc): rollouts of 4 steps (minibatches a quarter of one), for the configs and the example
# alike; its variants unless a PATTERN says
QUICK_STEPS = 4
QUICK_PATTERN = "as first built|rank_and_file_ppo.yaml, 1 thread|MoveScorerPolicy, defaults, 1 thread"


def quick_overrides(n_envs: int) -> list[str]:
    """A config's ``--set`` overrides for ``--quick``."""
    return [f"hyperparams.n_steps={QUICK_STEPS}", f"hyperparams.batch_size={n_envs * QUICK_STEPS // 4}"]


def steps_per_second(path: str, steps: int, extractor: dict | None = None, optimizer: dict | None = None,
                     parent_passes: bool = False, update_threads: int = 1, epochs: int | None = None,
                     quick: bool = False) -> float:
    """Steps per second of ``steps`` steps of training after 4,096 to warm up (``quick``: one tiny rollout each)."""
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from solitaire_env.agents.policies import FastMaskablePolicy, UpdateThreads
    from solitaire_env.envs.sb3 import make_sb3_vec_env
    from solitaire_env.tools.training import build_model, load_config

    config, warm_up = load_config(path), 4096
    if quick:
        config = load_config(path, quick_overrides(config.n_envs))
        steps = warm_up = config.n_envs * QUICK_STEPS
    if epochs is not None:
        config.hyperparams["n_epochs"] = epochs
    torch.set_num_threads(1)
    kwargs: dict[str, Any] = config.policy_kwargs
    if extractor is not None:
        kwargs["features_extractor_kwargs"] = {"features_dim": kwargs.pop("features_dim", 256), **extractor}
    if optimizer is not None:
        kwargs["optimizer_kwargs"] = optimizer
    venv = make_sb3_vec_env(config.env_id, n_envs=config.n_envs, seed=0, deals=config.deals, **config.env_kwargs)
    saved = FastMaskablePolicy.forward, FastMaskablePolicy.evaluate_actions
    if parent_passes:  # sb3-contrib's forward and evaluate_actions, through torch.distributions
        FastMaskablePolicy.forward = MaskableActorCriticPolicy.forward  # type: ignore[method-assign]
        FastMaskablePolicy.evaluate_actions = MaskableActorCriticPolicy.evaluate_actions  # type: ignore[method-assign]
    try:
        model = build_model(config, venv)
        model.learn(warm_up, callback=UpdateThreads(update_threads))
        start = time.perf_counter()
        model.learn(steps, reset_num_timesteps=False, callback=UpdateThreads(update_threads))
        rate = steps / (time.perf_counter() - start)
    finally:
        FastMaskablePolicy.forward, FastMaskablePolicy.evaluate_actions = saved  # type: ignore[method-assign]
        venv.close()
    return rate


def variants(reps: int, pattern: str, quick: bool = False) -> dict[str, list[int]]:
    """The variants' steps per second, ``reps`` rounds (module doc); prints the figures after each round."""
    wanted = re.compile(pattern)
    out: dict[str, list[int]] = {}
    for _ in range(reps):
        for name, (extractor, optimizer, parent, threads, epochs) in CARD_CODES.items():
            if wanted.search(f"CardCodesPolicy, {name}"):
                rate = steps_per_second("configs/ablations/rainbow_ppo.yaml", 16_384, extractor, optimizer, parent,
                                        threads, epochs, quick=quick)
                out.setdefault(f"CardCodesPolicy, {name}", []).append(round(rate))
        for name, (path, threads) in TWO_DECK.items():
            if wanted.search(f"CardCodesPolicy, {name}"):
                rate = steps_per_second(path, 16_384, update_threads=threads, quick=quick)
                out.setdefault(f"CardCodesPolicy, {name}", []).append(round(rate))
        for name, threads in SCORER.items():
            if wanted.search(f"MoveScorerPolicy, {name}"):
                rate = steps_per_second("configs/ablations/rainbow_no_teacher.yaml", 8192, update_threads=threads,
                                        quick=quick)
                out.setdefault(f"MoveScorerPolicy, {name}", []).append(round(rate))
        print(json.dumps(out), flush=True)
    return out


# --- --cleanrl: the CleanRL-style example beside the SB3 recipe ------------------------------------

CLEANRL = [sys.executable, str(REPO / "examples" / "cleanrl_ppo.py"), "--eval-episodes", "0"]


def sb3_steps_per_second(steps: int, device: str = "cpu", quick: bool = False) -> float:
    """MaskablePPO on configs/quick.yaml (its policy and hyperparameters; ``quick``: 4-step rollouts), ``steps``
    steps, no callbacks; the learner on ``device`` (the env on the CPU). ``benchmarks/jax_speed.py`` runs it too."""
    import torch

    from solitaire_env.envs.sb3 import make_sb3_vec_env
    from solitaire_env.tools.training import build_model, load_config

    config = load_config(REPO / "configs" / "quick.yaml")
    if quick:
        config = load_config(REPO / "configs" / "quick.yaml", quick_overrides(config.n_envs))
    torch.set_num_threads(1)
    venv = make_sb3_vec_env(config.env_id, n_envs=config.n_envs, seed=0, deals=config.deals, **config.env_kwargs)
    model = build_model(config, venv, device=device)
    start = time.perf_counter()
    model.learn(steps)
    rate = steps / (time.perf_counter() - start)
    venv.close()
    return rate


def cleanrl_steps_per_second(steps: int, extra: list[str] | tuple[str, ...] = ()) -> float:
    """The example's own figure: its last line says ``trained N steps in S s: R steps/s``."""
    out = subprocess.run([*CLEANRL, "--total-timesteps", str(steps), *extra], capture_output=True, text=True,
                         check=True, cwd=REPO).stdout
    match = re.search(r"trained (\d+) steps in \S+ s: (\d+) steps/s", out)
    if match is None:
        raise RuntimeError(f"no steps/s line in the example's output:\n{out[-2000:]}")
    return float(match.group(2))


def cleanrl_beside_sb3(rounds: int, steps: int, quick: bool = False) -> dict[str, list[int]]:
    """Both runs, each a fresh process, alternating, ``rounds`` rounds; prints the figures after each round."""
    out: dict[str, list[int]] = {"examples/cleanrl_ppo.py": [], "sb3-contrib MaskablePPO": []}
    extra, sb3_extra = (["--num-steps", str(QUICK_STEPS)], ["--quick"]) if quick else ([], [])
    for _ in range(rounds):
        out["examples/cleanrl_ppo.py"].append(round(cleanrl_steps_per_second(steps, extra)))
        sb3 = subprocess.run([sys.executable, __file__, "--_sb3", str(steps), *sb3_extra],
                             capture_output=True, text=True, check=True, cwd=REPO).stdout
        out["sb3-contrib MaskablePPO"].append(round(float(sb3.strip().splitlines()[-1])))
        print(json.dumps(out), flush=True)
    return out


def main(argv: list[str] | None = None) -> dict[str, list[int]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds", nargs="?", type=int, help="rounds (default 2; --cleanrl: 3; --quick: 1)")
    parser.add_argument("arg", nargs="?", metavar="PATTERN | STEPS",
                        help="the variants whose name matches this regular expression (default all); --cleanrl: "
                        "steps each run (default 100,000)")
    parser.add_argument("--cleanrl", action="store_true", help="examples/cleanrl_ppo.py beside the SB3 recipe")
    parser.add_argument("--quick", action="store_true", help="tiny rollouts, one round: a check, not a measure")
    parser.add_argument("--_sb3", type=int, metavar="STEPS", help=argparse.SUPPRESS)  # one SB3 run, in this process
    args = parser.parse_args(argv)
    if args._sb3:
        print(sb3_steps_per_second(args._sb3, quick=args.quick))
        return {}
    rounds = args.rounds or (1 if args.quick else 3 if args.cleanrl else 2)
    if args.cleanrl:
        # (--quick: one rollout of the 16 envs of the example and of configs/quick.yaml)
        steps = int(args.arg) if args.arg else 16 * QUICK_STEPS if args.quick else 100_000
        return cleanrl_beside_sb3(rounds, steps, args.quick)
    return variants(rounds, args.arg or (QUICK_PATTERN if args.quick else ""), args.quick)


if __name__ == "__main__":
    main()
