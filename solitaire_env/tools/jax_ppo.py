"""Masked PPO on the JAX backend, PureJaxRL style: one compiled ``update`` plays, learns and returns.

``make_update(env, net, tx, settings)`` builds a ``jax.jit``-ted function ``Runner -> (Runner, stats)``:
it plays ``n_steps`` steps of ``n_envs`` games (``lax.scan`` over ``jax.vmap(env.step)``; a game that
ends is replaced by a fresh deal inside the scan), computes GAE with a reverse scan, and runs PPO's epochs
and minibatches as nested scans. No Python runs per step or per minibatch; a caller loops over updates
(:mod:`solitaire_env.tools.jax_training` does, with evaluations and checkpoints; ``examples/jax_ppo.py``
is the same loop in a few lines).

The network is :class:`~solitaire_env.agents.jax_policy.CardCodesNet` on the default ``codes``
observation; the loss is SB3's MaskablePPO's (clipped ratio, value loss, entropy over the legal moves),
with advantages normalised per minibatch over the transitions of running games.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from solitaire_env import jax as sj
from solitaire_env.jax import rules
from solitaire_env.jax.layout import unpack

if TYPE_CHECKING:  # the network is the caller's (the tools load the agents only where they use them)
    from solitaire_env.agents.jax_policy import CardCodesNet


@dataclass(frozen=True)
class PPOSettings:
    """PPO's hyperparameters, by SB3's names and with MaskablePPO's defaults, so that a training config's
    ``n_envs`` and ``hyperparams`` mean the same on both backends (``tests/test_jax_training.py`` holds the
    defaults to MaskablePPO's signature)."""

    n_envs: int = 16  # games stepped together (the config's top-level n_envs)
    n_steps: int = 2048  # steps per game in each rollout
    batch_size: int = 64  # transitions per minibatch: n_envs * n_steps / batch_size minibatches an epoch
    n_epochs: int = 10  # passes over each rollout
    learning_rate: float = 3e-4  # Adam's
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2  # PPO's clipping of the probability ratio
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5

    def __post_init__(self) -> None:
        for name in ("n_envs", "n_steps", "batch_size", "n_epochs"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.batch % self.batch_size:
            raise ValueError(f"n_envs * n_steps ({self.batch}) must be a multiple of batch_size ({self.batch_size}): "
                             "every epoch is whole minibatches")

    @property
    def batch(self) -> int:
        """Transitions a rollout collects: env steps per update."""
        return self.n_envs * self.n_steps

    @property
    def minibatches(self) -> int:
        return self.batch // self.batch_size


def optimizer(settings: PPOSettings) -> optax.GradientTransformation:
    """Gradient clipping then Adam (eps 1e-5, as SB3's PPO)."""
    return optax.chain(optax.clip_by_global_norm(settings.max_grad_norm),
                       optax.adam(settings.learning_rate, eps=1e-5))


def foundation_cards(env: sj.Env, state: sj.State) -> jax.Array:
    """Cards on the foundations of each game of a batch (the backend's own count, from the flat state)."""
    return jax.vmap(lambda board: rules.foundation_cards(unpack(env.layout, board)))(state.board)


class Transition(NamedTuple):
    obs: jax.Array
    mask: jax.Array
    action: jax.Array
    logp: jax.Array
    value: jax.Array
    reward: jax.Array  # the step's reward, plus gamma * V(last observation) where the game was truncated
    done: jax.Array  # the game ended at this step (terminated or truncated): the return is cut here
    valid: jax.Array  # the game was still running: a real transition (a deal can start finished)
    cards: jax.Array  # foundation cards of the game that ended here (0 elsewhere)


class Runner(NamedTuple):
    """Everything a training run carries from one update to the next (what a checkpoint saves)."""

    params: Any
    opt_state: Any
    env_state: sj.State
    key: jax.Array


def start(env: sj.Env, net: CardCodesNet, settings: PPOSettings, params: Any, key: jax.Array) -> Runner:
    """The runner before the first update: fresh games (random deals from ``key``) and the optimiser's state."""
    k_deal, k_run = jax.random.split(key)
    games = jax.jit(jax.vmap(env.init))(jax.random.split(k_deal, settings.n_envs))  # one program, not op by op
    return Runner(params, optimizer(settings).init(params), games, k_run)


def make_rollout(env: sj.Env, net: CardCodesNet, settings: PPOSettings) -> Callable:
    """``rollout(params, env_state, key)``: ``n_steps`` masked-sampled steps of the batch, scanned."""
    step, init = jax.vmap(env.step), jax.vmap(env.init)

    def one_step(carry: tuple, _: None) -> tuple[tuple, Transition]:
        params, state, key = carry
        key, k_act, k_deal = jax.random.split(key, 3)
        logits, value = net.apply(params, state.observation, state.legal_action_mask)
        action = jax.random.categorical(k_act, logits)
        logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], axis=1)[:, 0]
        after = step(state, action)
        done = after.terminated | after.truncated
        # A truncated game would have gone on: its return continues past the cut with the value of its last
        # observation, added to the reward here (done still cuts GAE); a terminated one is worth 0 after.
        cut = after.truncated & ~after.terminated
        last_value = jax.lax.cond(cut.any(), lambda: net.apply(params, after.observation, after.legal_action_mask)[1],
                                  lambda: jnp.zeros_like(value))  # the second forward pass only when needed
        reward = after.reward + settings.gamma * jnp.where(cut, last_value, 0.0)
        valid = ~(state.terminated | state.truncated)
        cards = jnp.where(done & valid, foundation_cards(env, after), 0).astype(jnp.float32)
        # Autoreset in the scan: a game that ended is replaced by a fresh deal, whose first observation is
        # the next step's input; this transition keeps the ending step's reward and done.
        fresh = jax.lax.cond(done.any(), lambda: init(jax.random.split(k_deal, settings.n_envs)), lambda: after)
        nxt = jax.tree.map(lambda new, old: jnp.where(done.reshape(done.shape + (1,) * (old.ndim - 1)), new, old),
                           fresh, after)
        t = Transition(state.observation, state.legal_action_mask, action, logp, value, reward, done, valid, cards)
        return (params, nxt, key), t

    def rollout(params: Any, state: sj.State, key: jax.Array) -> tuple[sj.State, jax.Array, Transition]:
        (_, state, key), traj = jax.lax.scan(one_step, (params, state, key), None, settings.n_steps)
        return state, key, traj

    return rollout


def gae(traj: Transition, last_value: jax.Array, gamma: float, lam: float) -> tuple[jax.Array, jax.Array]:
    """Advantages and returns by a reverse scan over time (axis 0); ``done`` cuts the sums."""
    def back(carry: tuple[jax.Array, jax.Array], t: Transition) -> tuple[tuple[jax.Array, jax.Array], jax.Array]:
        next_adv, next_value = carry
        keep = 1.0 - t.done.astype(jnp.float32)
        delta = t.reward + gamma * next_value * keep - t.value
        adv = delta + gamma * lam * keep * next_adv
        return (adv, t.value), adv

    _, adv = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), traj, reverse=True)
    return adv, adv + traj.value


def ppo_loss(net: CardCodesNet, settings: PPOSettings, params: Any, mb: Transition, adv: jax.Array,
             ret: jax.Array) -> jax.Array:
    """PPO's clipped objective, value loss and entropy bonus, averaged over the real transitions only."""
    logits, value = net.apply(params, mb.obs, mb.mask)
    logp_all = jax.nn.log_softmax(logits)
    logp = jnp.take_along_axis(logp_all, mb.action[:, None], axis=1)[:, 0]
    w = mb.valid.astype(jnp.float32)
    n = jnp.maximum(w.sum(), 1.0)
    mean = (w * adv).sum() / n
    adv = (adv - mean) / (jnp.sqrt((w * (adv - mean) ** 2).sum() / n) + 1e-8)
    ratio = jnp.exp(logp - mb.logp)
    clipped = jnp.clip(ratio, 1 - settings.clip_range, 1 + settings.clip_range)
    pg_loss = (w * jnp.maximum(-adv * ratio, -adv * clipped)).sum() / n
    v_loss = 0.5 * (w * (value - ret) ** 2).sum() / n
    entropy = (w * -jnp.where(mb.mask, jnp.exp(logp_all) * logp_all, 0.0).sum(-1)).sum() / n  # over legal moves
    return pg_loss - settings.ent_coef * entropy + settings.vf_coef * v_loss


def make_update(env: sj.Env, net: CardCodesNet, settings: PPOSettings) -> Callable:
    """The whole PPO update, one compiled function: rollout, GAE, epochs x minibatches. Returns the new
    runner and (sum, count) of foundation cards of the games that ended in the rollout."""
    rollout, tx, batch = make_rollout(env, net, settings), optimizer(settings), settings.batch
    grad = jax.grad(lambda p, mb, adv, ret: ppo_loss(net, settings, p, mb, adv, ret))

    def update(runner: Runner) -> tuple[Runner, tuple[jax.Array, jax.Array]]:
        params, opt_state, state, key = runner
        state, key, traj = rollout(params, state, key)
        last_value = net.apply(params, state.observation, state.legal_action_mask)[1]
        adv, ret = gae(traj, last_value, settings.gamma, settings.gae_lambda)
        flat = jax.tree.map(lambda x: x.reshape((batch,) + x.shape[2:]), (traj, adv, ret))

        def epoch(carry: tuple, _: None) -> tuple[tuple, None]:
            params, opt_state, key = carry
            key, k_perm = jax.random.split(key)
            order = jax.random.permutation(k_perm, batch)
            mbs = jax.tree.map(lambda x: x[order].reshape((settings.minibatches, -1) + x.shape[1:]), flat)

            def minibatch(carry: tuple, mb: tuple) -> tuple[tuple, None]:
                params, opt_state = carry
                updates, opt_state = tx.update(grad(params, *mb), opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), None

            (params, opt_state), _ = jax.lax.scan(minibatch, (params, opt_state), mbs)
            return (params, opt_state, key), None

        (params, opt_state, key), _ = jax.lax.scan(epoch, (params, opt_state, key), None, settings.n_epochs)
        ended = traj.done & traj.valid
        return Runner(params, opt_state, state, key), (traj.cards.sum(), ended.sum())

    return jax.jit(update)


def make_evaluate(env: sj.Env, net: CardCodesNet, greedy: bool = True) -> Callable:
    """``evaluate(params, states, key)``: play a batch of games to their end, each move the policy's most
    likely one (``greedy``) or sampled with ``key``; a finished game ignores actions and the env truncates
    at its limit. Returns each game's foundation cards, return and length."""
    step = jax.vmap(env.step)

    def evaluate(params: Any, state: sj.State, key: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        def play(carry: tuple[sj.State, jax.Array, jax.Array]) -> tuple[sj.State, jax.Array, jax.Array]:
            s, total, key = carry
            key, k_act = jax.random.split(key)
            logits = net.apply(params, s.observation, s.legal_action_mask)[0]
            action = jnp.argmax(logits, axis=1) if greedy else jax.random.categorical(k_act, logits)
            s = step(s, action)
            return s, total + s.reward, key

        state, total, _ = jax.lax.while_loop(lambda c: ~(c[0].terminated | c[0].truncated).all(), play,
                                             (state, jnp.zeros(state.reward.shape, jnp.float32), key))
        return foundation_cards(env, state), total, state.step_count

    return jax.jit(evaluate)


__all__ = ["PPOSettings", "Runner", "Transition", "foundation_cards", "gae", "make_evaluate", "make_rollout",
           "make_update", "optimizer", "ppo_loss", "start"]
