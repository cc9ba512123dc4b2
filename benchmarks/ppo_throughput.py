"""MaskablePPO's environment steps per second, with and without the speed-ups (docs/benchmarks.md,
"Training throughput").

    python benchmarks/ppo_throughput.py [REPS] [PATTERN]

``CardCodesPolicy`` on ``configs/ablations/rainbow_ppo.yaml`` (16,384 steps after 4,096 to warm up) in eight
variants: as it first was (the embedding's ``skip_empty`` off, Adam's foreach kernel, sb3-contrib's
``forward`` and ``evaluate_actions``), with the update's speed-ups but sb3-contrib's passes, and
today's passes on one torch thread and with PPO's update on two threads (``update_threads: 2``), each
of these two with 4, 3 and 2 epochs per update. Then ``configs/ablations/rank_and_file_ppo.yaml`` and
``configs/ablations/number_ten_ppo.yaml`` as they are (16,384 after 4,096), on one thread and with two update
threads, and ``MoveScorerPolicy`` on ``configs/ablations/rainbow_no_teacher.yaml`` (8,192 after
4,096), the same two ways. ``REPS`` rounds (default 2), the variants alternating within a round;
``PATTERN``, a regular expression, keeps the variants whose full name matches. Run it on a quiet
machine: other work on the cores changes these figures far more than the variants do.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

import solitaire_env  # noqa: F401  (registers the ids)
from solitaire_env.agents.policies import FastMaskablePolicy, UpdateThreads
from solitaire_env.envs.sb3 import make_sb3_vec_env
from solitaire_env.tools.training import build_model, load_config

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


def steps_per_second(path: str, steps: int, extractor: dict | None = None, optimizer: dict | None = None,
                     parent_passes: bool = False, update_threads: int = 1, epochs: int | None = None) -> float:
    config = load_config(path)
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
        model.learn(4096, callback=UpdateThreads(update_threads))
        start = time.perf_counter()
        model.learn(steps, reset_num_timesteps=False, callback=UpdateThreads(update_threads))
        rate = steps / (time.perf_counter() - start)
    finally:
        FastMaskablePolicy.forward, FastMaskablePolicy.evaluate_actions = saved  # type: ignore[method-assign]
        venv.close()
    return rate


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    wanted = re.compile(sys.argv[2] if len(sys.argv) > 2 else "")
    out: dict[str, list[int]] = {}
    for _ in range(reps):
        for name, (extractor, optimizer, parent, threads, epochs) in CARD_CODES.items():
            if wanted.search(f"CardCodesPolicy, {name}"):
                rate = steps_per_second("configs/ablations/rainbow_ppo.yaml", 16_384, extractor, optimizer, parent,
                                        threads, epochs)
                out.setdefault(f"CardCodesPolicy, {name}", []).append(round(rate))
        for name, (path, threads) in TWO_DECK.items():
            if wanted.search(f"CardCodesPolicy, {name}"):
                rate = steps_per_second(path, 16_384, update_threads=threads)
                out.setdefault(f"CardCodesPolicy, {name}", []).append(round(rate))
        for name, threads in SCORER.items():
            if wanted.search(f"MoveScorerPolicy, {name}"):
                rate = steps_per_second("configs/ablations/rainbow_no_teacher.yaml", 8192, update_threads=threads)
                out.setdefault(f"MoveScorerPolicy, {name}", []).append(round(rate))
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
