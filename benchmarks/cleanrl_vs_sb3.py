"""``examples/cleanrl_ppo.py`` beside sb3-contrib's MaskablePPO at the same hyperparameters, in one run
(docs/libraries.md, "Beside the SB3 recipe").

    python benchmarks/cleanrl_vs_sb3.py [ROUNDS] [STEPS]      # default 3 rounds of 100,000 steps each

Both train ``configs/quick.yaml``'s set-up on Rainbow's train deals: 16 envs of the native batched env, 128
steps a rollout, minibatches of 512, 4 epochs, learning rate 3e-4, entropy 0.01, a 256-wide card embedding
and 128-wide heads, one torch thread. Each run is a fresh process; the two alternate within a round, so a
change in the host's speed touches both. Steps per second count the whole training (rollouts and updates,
no evaluation). Run it on a quiet machine.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLEANRL = [sys.executable, str(REPO / "examples" / "cleanrl_ppo.py"), "--eval-episodes", "0"]


def sb3_steps_per_second(steps: int, device: str = "cpu") -> float:
    """MaskablePPO on configs/quick.yaml (its policy and hyperparameters), ``steps`` steps, no callbacks;
    the learner on ``device`` (the env on the CPU)."""
    import torch

    from solitaire_env.envs.sb3 import make_sb3_vec_env
    from solitaire_env.tools.training import build_model, load_config

    config = load_config(REPO / "configs" / "quick.yaml")
    torch.set_num_threads(1)
    venv = make_sb3_vec_env(config.env_id, n_envs=config.n_envs, seed=0, deals=config.deals, **config.env_kwargs)
    model = build_model(config, venv, device=device)
    start = time.perf_counter()
    model.learn(steps)
    rate = steps / (time.perf_counter() - start)
    venv.close()
    return rate


def cleanrl_steps_per_second(steps: int) -> float:
    """The example's own figure: its last line says ``trained N steps in S s: R steps/s``."""
    out = subprocess.run([*CLEANRL, "--total-timesteps", str(steps)], capture_output=True, text=True, check=True,
                         cwd=REPO).stdout
    match = re.search(r"trained (\d+) steps in \S+ s: (\d+) steps/s", out)
    if match is None:
        raise RuntimeError(f"no steps/s line in the example's output:\n{out[-2000:]}")
    return float(match.group(2))


def main() -> None:
    if sys.argv[1:2] == ["--sb3"]:  # one SB3 run in this process (the parent starts a fresh one per run)
        print(sb3_steps_per_second(int(sys.argv[2])))
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    out: dict[str, list[int]] = {"examples/cleanrl_ppo.py": [], "sb3-contrib MaskablePPO": []}
    for _ in range(rounds):
        out["examples/cleanrl_ppo.py"].append(round(cleanrl_steps_per_second(steps)))
        sb3 = subprocess.run([sys.executable, __file__, "--sb3", str(steps)], capture_output=True, text=True,
                             check=True, cwd=REPO).stdout
        out["sb3-contrib MaskablePPO"].append(round(float(sb3.strip().splitlines()[-1])))
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
