"""Behaviour cloning from a Minari dataset: a Rainbow policy cloned from the heuristic's games, then evaluated.

Run (a few minutes on 2 cores):
    solitaire-env dataset rainbow --agent heuristic --episodes 1000    # writes solitaire/rainbow-heuristic-v0
    python examples/bc_from_minari.py                                  # clones it, saves bc_rainbow.zip, evaluates
The policy is a MaskablePPO ``CardCodesPolicy`` (card embeddings, then an MLP) trained by cross-entropy on
the teacher's actions, with each step's action mask applied to its logits; saved as a MaskablePPO
checkpoint, ``solitaire-env evaluate`` plays it on validation deals beside the heuristic itself.
BC_DATASET, BC_EPISODES, BC_EPOCHS and BC_EVAL_EPISODES override the defaults (the tests' smoke run).
"""

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass

import minari
import numpy as np
import torch
from sb3_contrib import MaskablePPO

from solitaire_env.agents.policies import CardCodesPolicy


@dataclass
class Args:
    dataset_id: str = os.environ.get("BC_DATASET", "solitaire/rainbow-heuristic-v0")
    """the Minari dataset to clone (solitaire-env dataset; MINARI_DATASETS_PATH says where datasets live)"""
    episodes: int = int(os.environ.get("BC_EPISODES", "0"))
    """episodes of the dataset to use, 0 for all; the last tenth of them is held out to measure agreement"""
    epochs: int = int(os.environ.get("BC_EPOCHS", "8"))
    """passes over the training examples"""
    batch_size: int = 512
    learning_rate: float = 1e-3
    net_arch: tuple[int, ...] = (256, 256)
    """the MLP after the card embeddings, for the policy and the value head alike"""
    seed: int = 0
    model_path: str = "bc_rainbow.zip"
    eval_episodes: int = int(os.environ.get("BC_EVAL_EPISODES", "200"))
    """validation deals for solitaire-env evaluate (10000, 10001, ...)"""


args = Args()
torch.set_num_threads(1)  # small networks: one thread is fastest (docs/design.md)
torch.manual_seed(args.seed)
rng = np.random.default_rng(args.seed)

# 1. The dataset: each episode's observations (the last, after the final step, has no action), masks, actions.
dataset = minari.load_dataset(args.dataset_id)
episodes = list(dataset.iterate_episodes())[:args.episodes or None]
held_out = max(1, len(episodes) // 10)


def examples(eps):
    obs = np.concatenate([e.observations[:-1] for e in eps])
    masks = np.concatenate([e.infos["action_mask"][:-1] for e in eps]).astype(bool)
    actions = np.concatenate([e.actions for e in eps]).astype(np.int64)
    return obs, masks, actions


train_obs, train_masks, train_actions = examples(episodes[:-held_out])
test_obs, test_masks, test_actions = examples(episodes[-held_out:])
print(f"{args.dataset_id}: {len(episodes) - held_out} episodes ({len(train_actions)} steps) to train on, "
      f"{held_out} ({len(test_actions)} steps) held out; agent {dataset.storage.metadata['agent']}")

# 2. The policy: MaskablePPO's, on the env the dataset was recorded in (its spec is in the dataset).
env = dataset.recover_environment()
model = MaskablePPO(CardCodesPolicy, env, policy_kwargs={"net_arch": list(args.net_arch)}, seed=args.seed,
                    device="cpu")
policy = model.policy
optimizer = torch.optim.Adam(policy.parameters(), lr=args.learning_rate)


def masked_log_probs(obs, masks, actions):
    """log pi(action | obs) with the illegal actions' logits masked out (sb3-contrib's MaskableCategorical)."""
    features = policy.obs_to_tensor(obs)[0]
    _, log_prob, _ = policy.evaluate_actions(features, torch.as_tensor(actions), action_masks=masks)
    return log_prob


def agreement(obs, masks, actions):
    """How often the policy's most likely legal action is the teacher's, on steps with a choice."""
    choice = masks.sum(axis=1) > 1
    with torch.no_grad():
        dist = policy.get_distribution(policy.obs_to_tensor(obs[choice])[0], action_masks=masks[choice])
        chosen = dist.get_actions(deterministic=True).numpy()
    return float((chosen == actions[choice]).mean()), float(np.mean(1.0 / masks[choice].sum(axis=1)))


# 3. Behaviour cloning: cross-entropy of the masked policy on the teacher's actions.
start = time.perf_counter()
for epoch in range(args.epochs):
    policy.set_training_mode(True)
    order = rng.permutation(len(train_actions))
    total = 0.0
    for lo in range(0, len(order), args.batch_size):
        idx = order[lo:lo + args.batch_size]
        loss = -masked_log_probs(train_obs[idx], train_masks[idx], train_actions[idx]).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * len(idx)
    policy.set_training_mode(False)
    agree, chance = agreement(test_obs, test_masks, test_actions)
    print(f"epoch {epoch + 1}: cross-entropy {total / len(order):.3f}, held-out agreement {agree:.1%} "
          f"(chance {chance:.1%}), {time.perf_counter() - start:.0f} s")

# 4. Save a checkpoint solitaire-env evaluate loads; the sidecar JSON names the env options it was recorded in.
model.save(args.model_path)
options = {k: v for k, v in dataset.storage.metadata.get("env_kwargs", {}).items() if k != "deals"}
with open(os.path.splitext(args.model_path)[0] + ".json", "w") as f:
    json.dump({"env_kwargs": options, "dataset": args.dataset_id}, f)
print(f"saved {args.model_path}")

# 5. Evaluate on validation deals (never the test deals: those are for reported figures), beside the heuristic.
command = [sys.executable, "-m", "solitaire_env.tools.cli", "evaluate", "--env", env.spec.id, "--agent",
           args.model_path, "--agent", "heuristic", "--deals", "validation", "--episodes", str(args.eval_episodes),
           "--no-progress"]
print("$ solitaire-env", " ".join(command[3:]), flush=True)
sys.exit(subprocess.run(command).returncode)
