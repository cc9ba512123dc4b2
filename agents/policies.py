"""MaskablePPO policies and training helpers for the batched env (:mod:`solitaire_env.envs.sb3`).

>>> from solitaire_env.agents.policies import CardCodesPolicy
>>> model = MaskablePPO(CardCodesPolicy, make_sb3_vec_env("Rainbow-v0", n_envs=16), n_steps=128)

:class:`FastMaskablePolicy` is sb3-contrib's ``MaskableActorCriticPolicy`` with a masked log-softmax
in place of ``torch.distributions`` (the same numbers, faster on the CPU); :class:`CardCodesPolicy`
embeds the card codes instead of one-hot-encoding them (:class:`CardEmbedding`); :class:`UpdateThreads`
gives PPO's update more torch threads than its rollouts. Needs the ``train`` extra.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn


class UpdateThreads(BaseCallback):
    """Torch runs PPO's update on ``update_threads`` threads and the rollouts on ``rollout_threads``.

    The rollouts' forward passes are on a few dozen positions, where extra threads only add
    hand-over costs; the update's minibatches of about a thousand positions split well over two
    cores (docs/benchmarks.md, "Training throughput"). sb3 calls ``on_rollout_end`` just before the
    update and ``on_rollout_start`` just after it, so those two hooks switch the count. At the end
    of training the rollouts' count is set back.
    """

    def __init__(self, update_threads: int, rollout_threads: int = 1) -> None:
        super().__init__()
        if update_threads < 1 or rollout_threads < 1:
            raise ValueError(f"thread counts must be positive, got {update_threads} and {rollout_threads}")
        self.update_threads, self.rollout_threads = update_threads, rollout_threads

    def _on_rollout_start(self) -> None:
        torch.set_num_threads(self.rollout_threads)

    def _on_rollout_end(self) -> None:
        torch.set_num_threads(self.update_threads)

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        torch.set_num_threads(self.rollout_threads)


# Logits (positions x actions) from which the masked normalization uses _LegalLogSumExp: its few extra
# ops cost more than the exps they save on a rollout's 32 positions, and less on a minibatch of a
# two-deck game's (1,024 x 243); both ways give the same bits.
LEGAL_LOGSUMEXP_MIN = 32_768


class _LegalLogSumExp(torch.autograd.Function):
    """``x.logsumexp(-1, keepdim=True)`` and its gradient, bit for bit, when ``x`` is ``-1e8`` wherever
    ``legal`` is false: torch's own steps (max, ``exp`` of the difference, sum, log, max added back),
    with the ``exp`` of those entries taken as the 0 it is in float32 (``exp(-1e8 - max)`` underflows)
    instead of computed. On the CPU torch's ``exp`` of an argument that underflows is about ten times
    slower than of an ordinary one, and 90-95% of a two-deck game's 243 actions are masked: the
    masked log-softmax was a sixth of a minibatch's time there (docs/benchmarks.md, "Training throughput")."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
        top = x.amax(dim=-1, keepdim=True)
        top = top.masked_fill(top.abs() == float("inf"), 0.0)
        terms = torch.where(legal, x - top, 0.0).exp_().masked_fill_(~legal, 0.0)
        out = terms.sum(dim=-1, keepdim=True).log_().add_(top)
        ctx.save_for_backward(x, out, legal)
        return out

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        x, out, legal = ctx.saved_tensors
        return grad * torch.where(legal, x - out, 0.0).exp_().masked_fill_(~legal, 0.0), None


class FastMaskablePolicy(MaskableActorCriticPolicy):
    """sb3-contrib's ``MaskableActorCriticPolicy`` with ``forward`` and ``evaluate_actions`` done on plain
    tensors instead of ``torch.distributions`` objects.

    The rollouts call ``forward`` once a step on a batch of a few dozen positions, where building three
    validated ``Categorical`` objects a step cost about a third of the policy's time. These two methods
    do sb3-contrib's arithmetic op for op (normalize the logits, mask with -1e8, normalize again, there
    without computing the masked moves' zero terms: :class:`_LegalLogSumExp`; sample with
    ``torch.multinomial``; entropy zero on masked moves), so actions, log-probabilities,
    entropies and gradients are bit-identical to the parent's (``tests/test_training.py``) and the
    same seed trains the same model. ``get_distribution`` and ``predict`` are the parent's.
    """

    def _latents(self, obs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.extract_features(obs)
        if self.share_features_extractor:
            return self.mlp_extractor(features)
        pi_features, vf_features = features
        return self.mlp_extractor.forward_actor(pi_features), self.mlp_extractor.forward_critic(vf_features)

    def _log_probs(self, latent_pi: torch.Tensor, action_masks: Any) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The normalized logits sb3-contrib's ``MaskableCategorical`` ends up holding, and the mask."""
        if not isinstance(self.action_space, gym.spaces.Discrete):
            raise TypeError(f"{type(self).__name__} supports Discrete action spaces, got {self.action_space}")
        raw = self.action_net(latent_pi).view(-1, int(self.action_space.n))
        logits = raw - raw.logsumexp(dim=-1, keepdim=True)
        if action_masks is None:  # MaskableCategorical normalizes twice when there is no mask
            return logits - logits.logsumexp(dim=-1, keepdim=True), None
        masks = torch.as_tensor(action_masks, dtype=torch.bool, device=logits.device).reshape(logits.shape)
        logits = torch.where(masks, logits, torch.tensor(-1e8, dtype=logits.dtype, device=logits.device))
        if logits.numel() < LEGAL_LOGSUMEXP_MIN:  # a rollout's batch: fewer ops beat fewer exps
            return logits - logits.logsumexp(dim=-1, keepdim=True), masks
        legal = masks | ~masks.any(dim=-1, keepdim=True)  # a row with no legal move: every entry counts
        return logits - _LegalLogSumExp.apply(logits, legal), masks

    def forward(self, obs: torch.Tensor, deterministic: bool = False,
                action_masks: np.ndarray | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        latent_pi, latent_vf = self._latents(obs)
        values = self.value_net(latent_vf)
        logits, _ = self._log_probs(latent_pi, action_masks)
        probs = torch.softmax(logits, dim=-1)
        actions = probs.argmax(dim=1) if deterministic else torch.multinomial(probs, 1, True).T.reshape(-1)
        log_prob = logits.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)
        return actions.reshape((-1, *self.action_space.shape)), values, log_prob

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor,
                         action_masks: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        latent_pi, latent_vf = self._latents(obs)
        logits, masks = self._log_probs(latent_pi, action_masks)
        index, log_pmf = torch.broadcast_tensors(actions.long().unsqueeze(-1), logits)
        log_prob = log_pmf.gather(-1, index[..., :1]).squeeze(-1)
        values = self.value_net(latent_vf)
        probs = torch.softmax(logits, dim=-1)
        if masks is None:
            p_log_p = torch.clamp(logits, min=torch.finfo(logits.dtype).min) * probs
        else:
            p_log_p = torch.where(masks, logits * probs, torch.tensor(0.0, device=logits.device))
        return values, log_prob, -p_log_p.sum(-1)


class CardEmbedding(BaseFeaturesExtractor):
    """One-hot of every observation entry times a weight matrix, done as an embedding-bag lookup.

    The first linear layer over SB3's one-hot encoding of a ``MultiDiscrete`` observation, but it
    touches only the rows of the cards present: on these 233-296-entry observations (12-16 thousand
    one-hot values) training runs many times faster.

    With ``skip_empty`` (the default for new policies) an entry whose code is 0 (an empty slot: 70-80%
    of the entries in play) adds nothing, so only the occupied slots are looked up: 3-5 times less work
    in the forward and backward passes. This is the same function class, not an approximation:
    one-hot groups sum to one per entry, so code 0's row of each entry can be taken as its reference
    level and folded into the bias (the row stays in the table, unused, so saved shapes do not change).
    Models saved before ``skip_empty`` existed load with it off and compute exactly what they did.
    """

    def __init__(self, observation_space: gym.spaces.Box, nvec: list[int], features_dim: int = 256,
                 skip_empty: bool = True) -> None:
        super().__init__(observation_space, features_dim)
        offsets = np.concatenate(([0], np.cumsum(nvec)[:-1]))
        self.register_buffer("offsets", torch.as_tensor(offsets, dtype=torch.long), persistent=False)
        self.embed = nn.EmbeddingBag(int(np.sum(nvec)), features_dim, mode="sum")
        self.bias = nn.Parameter(torch.zeros(features_dim))
        # Saved with the weights, so a model knows which forward pass it was trained with.
        self.register_buffer("skip_empty", torch.tensor(bool(skip_empty)))

    def _load_from_state_dict(self, state_dict: dict, prefix: str, *args: Any) -> None:
        state_dict.setdefault(prefix + "skip_empty", torch.tensor(False))  # saved before the option: off
        super()._load_from_state_dict(state_dict, prefix, *args)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        codes = observations.long()
        if not bool(self.skip_empty):
            return torch.relu(self.embed(codes + self.offsets) + self.bias)
        present = codes != 0
        index = (codes + self.offsets)[present]  # the occupied entries, row by row
        starts = torch.zeros(codes.shape[0], dtype=torch.long)
        torch.cumsum(present.sum(dim=1)[:-1], dim=0, out=starts[1:])
        return torch.relu(self.embed(index, starts) + self.bias)


class CardCodesPolicy(FastMaskablePolicy):
    """MaskablePPO policy for the default ``codes`` observation, with :class:`CardEmbedding` first.

    The policy sees the observation as a plain ``Box`` of codes so SB3 does not one-hot it;
    :class:`CardEmbedding` does the equivalent far more cheaply. Use ``MaskablePPO(CardCodesPolicy, env)``.
    """

    def __init__(self, observation_space: gym.spaces.Space, action_space: gym.spaces.Space, lr_schedule: Any,
                 **kwargs: Any) -> None:
        if not isinstance(observation_space, gym.spaces.MultiDiscrete):
            raise TypeError(f"CardCodesPolicy needs the MultiDiscrete 'codes' observation, got {observation_space}")
        nvec = np.asarray(observation_space.nvec, dtype=np.int64)
        codes = gym.spaces.Box(low=0.0, high=(nvec - 1).astype(np.float32), dtype=np.float32)
        kwargs.setdefault("features_extractor_class", CardEmbedding)
        extractor_kwargs = dict(kwargs.get("features_extractor_kwargs") or {})
        extractor_kwargs["nvec"] = nvec.tolist()
        kwargs["features_extractor_kwargs"] = extractor_kwargs
        if kwargs.get("optimizer_class", torch.optim.Adam) is torch.optim.Adam:
            # Adam's fused CPU kernel: one pass over the 4M embedding weights instead of several
            # (45 -> 5 ms a minibatch, docs/benchmarks.md, "Training throughput").
            kwargs["optimizer_kwargs"] = {"fused": True, **(kwargs.get("optimizer_kwargs") or {})}
        super().__init__(codes, action_space, lr_schedule, **kwargs)
