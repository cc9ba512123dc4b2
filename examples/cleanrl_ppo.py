"""Masked PPO in one file, CleanRL style, on the native vector env (no RL library: torch and this package).

Run: python examples/cleanrl_ppo.py                       (Rainbow, 300k steps: a few minutes on 2 CPU cores)
     python examples/cleanrl_ppo.py --total-timesteps 50000 --env-id NumberTen-v0
     SOLITAIRE_ENV_STEPS=4096 python examples/cleanrl_ppo.py   (a smoke test: the env var overrides the budget)

It trains on the train deals, logs steps per second and the mean foundation cards of the episodes
that ended, and plays the policy greedily on validation deals before and after training (mean
foundation cards and win rate). Measured figures: docs/libraries.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
from torch import nn

import solitaire_env  # noqa: F401  (registers the env ids)


@dataclass
class Args:
    env_id: str = "Rainbow-v0"
    """the game: Rainbow-v0, NumberTen-v0 or RankAndFile-v0"""
    seed: int = 0
    """seed of torch, numpy and the training deals"""
    total_timesteps: int = 300_000
    """env steps in all sub-envs together (the SOLITAIRE_ENV_STEPS env var overrides it)"""
    num_envs: int = 16
    """games stepped together in one compiled call"""
    num_steps: int = 128
    """steps per sub-env in each rollout"""
    learning_rate: float = 3e-4
    """Adam's learning rate"""
    anneal_lr: bool = False
    """anneal the learning rate linearly to 0"""
    gamma: float = 0.99
    """discount factor"""
    gae_lambda: float = 0.95
    """lambda of generalized advantage estimation"""
    num_minibatches: int = 4
    """minibatches per epoch (num_envs * num_steps / num_minibatches positions each)"""
    update_epochs: int = 4
    """passes over each rollout"""
    clip_coef: float = 0.2
    """PPO's clipping of the probability ratio"""
    ent_coef: float = 0.01
    """weight of the entropy bonus"""
    vf_coef: float = 0.5
    """weight of the value loss"""
    max_grad_norm: float = 0.5
    """gradient norm clipping"""
    embed_dim: int = 256
    """width of the card embedding (the SB3 recipe's features_dim)"""
    hidden_dim: int = 128
    """hidden layer of the policy and value heads (the SB3 recipe's net_arch)"""
    update_threads: int = 1
    """torch threads for the update (the rollouts always use one: fastest for a net this small)"""
    eval_episodes: int = 200
    """greedy episodes on validation deals (10,000, 10,001, ...) before and after training; 0: none"""


TYPES = {"int": int, "float": float, "str": str, "bool": lambda s: s.lower() in ("1", "true", "yes")}


def parse_args() -> Args:
    """Command-line flags from the fields of Args (``--total-timesteps 50000``, ``--anneal-lr true``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    docs = _field_docs()
    for f in dataclasses.fields(Args):
        kind = TYPES[f.type if isinstance(f.type, str) else f.type.__name__]
        parser.add_argument("--" + f.name.replace("_", "-"), type=kind, default=f.default, help=docs.get(f.name))
    args = Args(**vars(parser.parse_args()))
    if os.environ.get("SOLITAIRE_ENV_STEPS"):
        args.total_timesteps = int(os.environ["SOLITAIRE_ENV_STEPS"])
    if args.num_envs * args.num_steps % args.num_minibatches:
        parser.error("num_envs * num_steps must be a multiple of num_minibatches")
    return args


def _field_docs() -> dict[str, str]:
    """Each field's docstring (the string line under it), for --help."""
    import inspect

    lines, docs = inspect.getsource(Args).splitlines(), {}
    for line, below in zip(lines, lines[1:], strict=False):
        name = line.strip().split(":")[0]
        if name in Args.__dataclass_fields__ and below.strip().startswith('"""'):
            docs[name] = below.strip().strip('"')
    return docs


class Agent(nn.Module):
    """Card embedding of the int codes, then a policy head and a value head (SB3's CardCodesPolicy shape)."""

    def __init__(self, nvec: np.ndarray, n_actions: int, embed_dim: int, hidden_dim: int) -> None:
        super().__init__()
        # Entry j with code c looks up row offsets[j] + c: the first linear layer over a one-hot of every
        # entry, without building the one-hot.
        self.register_buffer("offsets", torch.as_tensor(np.concatenate(([0], np.cumsum(nvec)[:-1]))))
        self.embed = nn.EmbeddingBag(int(nvec.sum()), embed_dim, mode="sum")
        self.bias = nn.Parameter(torch.zeros(embed_dim))
        self.actor = nn.Sequential(nn.Linear(embed_dim, hidden_dim), nn.Tanh(), nn.Linear(hidden_dim, n_actions))
        self.critic = nn.Sequential(nn.Linear(embed_dim, hidden_dim), nn.Tanh(), nn.Linear(hidden_dim, 1))

    def features(self, codes: torch.Tensor) -> torch.Tensor:
        # Code 0 is an empty slot (most entries): its rows are left out, their constant absorbed by the
        # bias, so only the occupied slots are looked up (several times less work, the same function class).
        present = codes != 0
        starts = torch.zeros(len(codes), dtype=torch.long)
        torch.cumsum(present.sum(dim=1)[:-1], dim=0, out=starts[1:])
        return torch.relu(self.embed((codes + self.offsets)[present], starts) + self.bias)

    def get_value(self, codes: torch.Tensor) -> torch.Tensor:
        return self.critic(self.features(codes)).squeeze(-1)

    def act(self, codes: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """A rollout step: a sampled legal move, its log-probability and the position's value (no entropy)."""
        hidden = self.features(codes)
        logp = self.actor(hidden).masked_fill(~mask, -1e8).log_softmax(-1)
        action = torch.multinomial(logp.exp(), 1)
        return action.squeeze(-1), logp.gather(-1, action).squeeze(-1), self.critic(hidden).squeeze(-1)

    def get_action_and_value(self, codes: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None,
                             greedy: bool = False) -> tuple[torch.Tensor, ...]:
        hidden = self.features(codes)
        # Illegal moves get a large negative logit: probability 0, entropy 0. A row with no legal move
        # (a finished game's last observation) stays uniform; its step is left out of the loss.
        logits = self.actor(hidden).masked_fill(~mask, -1e8)
        # The categorical distribution on plain tensors: a torch.distributions object a step costs more
        # than the network on a batch of 16 positions.
        logp = logits.log_softmax(-1)
        if action is None:
            action = logits.argmax(-1) if greedy else torch.multinomial(logp.exp(), 1).squeeze(-1)
        entropy = -(logp.exp() * logp).masked_fill(~mask, 0.0).sum(-1)  # over the legal moves
        return action, logp.gather(-1, action.unsqueeze(-1)).squeeze(-1), entropy, self.critic(hidden).squeeze(-1)


def evaluate(agent: Agent, env_id: str, episodes: int) -> tuple[float, float]:
    """Mean foundation cards and win rate of the greedy policy on validation deals 10,000 .. 10,000 + episodes - 1."""
    envs = gym.make_vec(env_id, num_envs=episodes, deals="validation")
    obs, info = envs.reset(seed=0)  # sub-env i plays validation deal i
    found, won = np.zeros(episodes), np.zeros(episodes, dtype=bool)
    running = np.ones(episodes, dtype=bool)
    with torch.no_grad():
        while running.any():
            mask = torch.as_tensor(info["action_mask"], dtype=torch.bool)
            action = agent.get_action_and_value(torch.as_tensor(obs, dtype=torch.long), mask, greedy=True)[0]
            obs, _, terminated, truncated, info = envs.step(action.numpy())
            ended = running & (terminated | truncated)
            found[ended], won[ended] = info["foundation_cards"][ended], info["is_won"][ended]
            running &= ~ended  # a finished sub-env starts another deal next step: not counted
    envs.close()
    return float(found.mean()), float(won.mean())


if __name__ == "__main__":
    args = parse_args()
    batch_size = args.num_envs * args.num_steps
    minibatch_size = batch_size // args.num_minibatches
    num_iterations = max(1, args.total_timesteps // batch_size)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # rollouts: forward passes on 16 positions, where extra threads only cost

    # The native vector env: N games in one array, masks in info["action_mask"], NEXT_STEP autoreset.
    envs = gym.make_vec(args.env_id, num_envs=args.num_envs, deals="train")
    nvec = np.asarray(envs.single_observation_space.nvec, dtype=np.int64)
    n_actions = int(envs.single_action_space.n)
    agent = Agent(nvec, n_actions, args.embed_dim, args.hidden_dim)
    # The fused kernel: one pass over the embedding's millions of weights instead of several.
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5, fused=True)
    if args.eval_episodes:
        cards, wins = evaluate(agent, args.env_id, args.eval_episodes)
        print(f"before training: validation mean foundation cards {cards:.2f}, win rate {wins:.3f} "
              f"({args.eval_episodes} deals)")

    obs_buf = torch.zeros((args.num_steps, args.num_envs, len(nvec)), dtype=torch.long)
    mask_buf = torch.zeros((args.num_steps, args.num_envs, n_actions), dtype=torch.bool)
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long)
    logprobs, values = torch.zeros((args.num_steps, args.num_envs)), torch.zeros((args.num_steps, args.num_envs))
    # What the env returns stays in numpy during the rollout, and becomes tensors once after it.
    rewards_np = np.zeros((args.num_steps, args.num_envs), dtype=np.float32)
    terminals_np, dones_np, valid_np = (np.zeros((args.num_steps, args.num_envs), dtype=bool) for _ in range(3))

    global_step, start = 0, time.time()
    obs, info = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(obs, dtype=torch.long)
    next_mask = torch.as_tensor(info["action_mask"], dtype=torch.bool)
    autoreset = np.zeros(args.num_envs, dtype=bool)  # sub-envs whose game ended last step
    recent_cards: list[int] = []
    for iteration in range(1, num_iterations + 1):
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / num_iterations) * args.learning_rate
        torch.set_num_threads(1)
        for step in range(args.num_steps):
            global_step += args.num_envs
            obs_buf[step], mask_buf[step] = next_obs, next_mask
            # NEXT_STEP autoreset: a sub-env whose game ended last step ignores this action and returns
            # its next deal's first observation; that step is no transition (left out of the loss), but
            # its value, of the finished game's last observation, bootstraps a truncated episode.
            valid_np[step] = ~autoreset
            with torch.inference_mode():
                action, logprob, value = agent.act(next_obs, next_mask)
            actions[step], logprobs[step], values[step] = action, logprob, value
            obs, reward, terminated, truncated, info = envs.step(action.numpy())
            autoreset = terminated | truncated
            rewards_np[step], terminals_np[step], dones_np[step] = reward, terminated, autoreset
            next_obs = torch.as_tensor(obs, dtype=torch.long)
            next_mask = torch.as_tensor(info["action_mask"], dtype=torch.bool)
            recent_cards.extend(info["foundation_cards"][autoreset].tolist())

        rewards, terminals, dones = (torch.as_tensor(a, dtype=torch.float32)
                                     for a in (rewards_np, terminals_np, dones_np))
        valid = torch.as_tensor(valid_np)

        # GAE. values[t + 1] of a sub-env that ended at t is its last observation's value (the skipped
        # step's): counted for a truncation, zeroed for a termination; the sum is cut at every end.
        with torch.no_grad():
            next_value = agent.get_value(next_obs)
        advantages = torch.zeros_like(rewards)
        last = torch.zeros(args.num_envs)
        for t in reversed(range(args.num_steps)):
            following = next_value if t == args.num_steps - 1 else values[t + 1]
            delta = rewards[t] + args.gamma * following * (1.0 - terminals[t]) - values[t]
            last = delta + args.gamma * args.gae_lambda * (1.0 - dones[t]) * last
            advantages[t] = last
        returns = advantages + values

        # PPO's update, on the real transitions only.
        keep = valid.reshape(-1)
        b_obs, b_mask = obs_buf.reshape(-1, len(nvec))[keep], mask_buf.reshape(-1, n_actions)[keep]
        b_actions, b_logprobs = actions.reshape(-1)[keep], logprobs.reshape(-1)[keep]
        b_advantages, b_returns = advantages.reshape(-1)[keep], returns.reshape(-1)[keep]
        n = len(b_actions)
        size = max(1, n // args.num_minibatches)
        torch.set_num_threads(args.update_threads)
        for _ in range(args.update_epochs):
            order = torch.randperm(n)
            for lo in range(0, n - size + 1, size):
                mb = order[lo:lo + size]
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb], b_mask[mb], b_actions[mb])
                ratio = (newlogprob - b_logprobs[mb]).exp()
                adv = b_advantages[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        if iteration % 10 == 0 or iteration == num_iterations:
            cards = f"{np.mean(recent_cards):.2f}" if recent_cards else "-"
            print(f"step {global_step:>8}  steps/s {global_step / (time.time() - start):>6.0f}  "
                  f"mean foundation cards (train episodes) {cards}  ({len(recent_cards)} episodes)", flush=True)
            recent_cards = []

    train_seconds = time.time() - start
    envs.close()
    print(f"trained {global_step} steps in {train_seconds:.0f} s: {global_step / train_seconds:.0f} steps/s")
    if args.eval_episodes:
        cards, wins = evaluate(agent, args.env_id, args.eval_episodes)
        print(f"after training: validation mean foundation cards {cards:.2f}, win rate {wins:.3f} "
              f"({args.eval_episodes} deals)")
