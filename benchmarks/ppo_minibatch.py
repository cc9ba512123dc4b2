"""One PPO minibatch update and one rollout forward pass, timed, with the masked log-softmax as it is
and as it was (``torch.logsumexp`` over every action) alternating in one process (docs/benchmarks.md,
"Training throughput").

    python benchmarks/ppo_minibatch.py configs/ablations/rank_and_file_ppo.yaml [ROUNDS]

Builds the config's model as ``solitaire-env train`` does (one torch thread), learns 4,096 steps, then
times ``ROUNDS`` (default 8) rounds of 5 updates on a minibatch of 1,024 positions (``evaluate_actions``,
backward, clipping, Adam) and 50 forward passes on 32 of them, each way, and prints the median and
the best in milliseconds.
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

import torch

import solitaire_env  # noqa: F401  (registers the ids)
from solitaire_env.agents.policies import FastMaskablePolicy
from solitaire_env.envs.sb3 import make_sb3_vec_env
from solitaire_env.tools.training import build_model, load_config


def log_probs_before(policy: FastMaskablePolicy, latent_pi: torch.Tensor, action_masks: Any) -> tuple:
    """``FastMaskablePolicy._log_probs`` before 7f895f3: ``torch.logsumexp`` over the masked logits too."""
    raw = policy.action_net(latent_pi).view(-1, int(policy.action_space.n))
    logits = raw - raw.logsumexp(dim=-1, keepdim=True)
    masks = torch.as_tensor(action_masks, dtype=torch.bool).reshape(logits.shape)
    logits = torch.where(masks, logits, torch.tensor(-1e8, dtype=logits.dtype))
    return logits - logits.logsumexp(dim=-1, keepdim=True), masks


def main() -> None:
    config = load_config(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    torch.set_num_threads(1)
    venv = make_sb3_vec_env(config.env_id, n_envs=config.n_envs, seed=0, deals=config.deals, **config.env_kwargs)
    model = build_model(config, venv)
    model.learn(4096)
    batch = next(model.rollout_buffer.get(1024))
    policy = model.policy
    obs, masks = batch.observations[:32], batch.action_masks[:32].numpy()

    def update() -> None:
        values, log_prob, entropy = policy.evaluate_actions(batch.observations, batch.actions.long().flatten(),
                                                            action_masks=batch.action_masks)
        loss = -log_prob.mean() + values.mean() - 0.01 * entropy.mean()
        policy.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
        policy.optimizer.step()

    def forward() -> None:
        with torch.no_grad():
            policy(obs, action_masks=masks)

    ways = {"now": FastMaskablePolicy._log_probs, "before": log_probs_before}
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in ways}
    try:
        for _ in range(rounds):
            for name, way in ways.items():
                FastMaskablePolicy._log_probs = way  # type: ignore[method-assign]
                for work, reps, out in ((update, 5, times[name][0]), (forward, 50, times[name][1])):
                    start = time.perf_counter()
                    for _ in range(reps):
                        work()
                    out.append((time.perf_counter() - start) / reps * 1e3)
    finally:
        FastMaskablePolicy._log_probs = ways["now"]  # type: ignore[method-assign]
        venv.close()
    for name, (updates, forwards) in times.items():
        print(f"{config.env_id} {name}: minibatch {statistics.median(updates):.1f} ms (best {min(updates):.1f}), "
              f"forward at batch 32 {statistics.median(forwards):.2f} ms (best {min(forwards):.2f})")


if __name__ == "__main__":
    main()
