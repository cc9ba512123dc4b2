"""MaskablePPO's environment steps per second on Rainbow, with and without the update's speed-ups
(docs/results.md, "Training throughput").

    python benchmarks/ppo_throughput.py [REPS]

``CardCodesPolicy`` on ``configs/rainbow.yaml`` four ways (the embedding's ``skip_empty`` off or on,
Adam's fused kernel off or on; 16,384 steps after 4,096 to warm up), then ``MoveScorerPolicy`` on
``configs/ablations/rainbow_no_teacher.yaml`` (8,192 after 4,096), one torch thread, ``REPS`` rounds
(default 2), the variants alternating within a round. Run it on a quiet machine: other work on the
cores changes these figures far more than the variants do.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import torch

import solitaire_env  # noqa: F401  (registers the ids)
from solitaire_env.envs.sb3 import make_sb3_vec_env
from solitaire_env.tools.training import build_model, load_config

CARD_CODES = {  # name: (features_extractor_kwargs, optimizer_kwargs); None: the policy's defaults
    "dense lookups, foreach Adam": ({"skip_empty": False}, {"fused": False}),
    "fused Adam only": ({"skip_empty": False}, None),
    "skip_empty only": ({"skip_empty": True}, {"fused": False}),
    "both (the defaults)": (None, None),
}


def steps_per_second(path: str, steps: int, extractor: dict | None = None, optimizer: dict | None = None) -> float:
    config = load_config(path)
    torch.set_num_threads(1)
    kwargs: dict[str, Any] = config.policy_kwargs
    if extractor is not None:
        kwargs["features_extractor_kwargs"] = {"features_dim": kwargs.pop("features_dim", 256), **extractor}
    if optimizer is not None:
        kwargs["optimizer_kwargs"] = optimizer
    venv = make_sb3_vec_env(config.env_id, n_envs=config.n_envs, seed=0, deals=config.deals, **config.env_kwargs)
    model = build_model(config, venv)
    model.learn(4096)
    start = time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    venv.close()
    return steps / (time.perf_counter() - start)


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    out: dict[str, list[int]] = {}
    for _ in range(reps):
        for name, (extractor, optimizer) in CARD_CODES.items():
            rate = steps_per_second("configs/rainbow.yaml", 16_384, extractor, optimizer)
            out.setdefault(f"CardCodesPolicy, {name}", []).append(round(rate))
        rate = steps_per_second("configs/ablations/rainbow_no_teacher.yaml", 8192)
        out.setdefault("MoveScorerPolicy", []).append(round(rate))
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
