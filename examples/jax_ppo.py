"""Masked PPO in one file on the JAX backend (solitaire_env.jax): the whole update compiled, PureJaxRL style.

Run: python examples/jax_ppo.py                        (Rainbow, 300k steps: about 2 minutes on 2 CPU cores)
     python examples/jax_ppo.py --num-envs 64          (4x the games a rollout, a quarter of the updates)
     python examples/jax_ppo.py --env-id NumberTen-v0 --total-timesteps 100000 --save params.msgpack
     SOLITAIRE_ENV_STEPS=2048 python examples/jax_ppo.py --num-envs 8 --num-steps 32   (a smoke test)

One ``jax.jit``-ted ``update`` plays ``num_steps`` steps of ``num_envs`` games (``lax.scan`` over
``jax.vmap(env.step)``, finished games replaced by fresh ones inside the scan), computes GAE with a
reverse scan and runs PPO's epochs and minibatches as nested scans; Python only loops over updates to log.

Training games are ``env.init(key)``'s random shuffles, not the project's numbered deals: a random deck
is one of 52! (Rainbow) orders, so it coincides with a test or validation deal with negligible
probability. The greedy policy is evaluated before and after training on validation deals 10,000 ..
10,000 + eval_episodes - 1 (``env.init_deal`` deals deal ``s`` as ``reset(seed=s)`` does), as
examples/cleanrl_ppo.py does with the torch loop on the numba vector env (the same network).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import time
from dataclasses import dataclass
from typing import Any, NamedTuple

import flax.linen as nn
import flax.serialization
import jax
import jax.numpy as jnp
import numpy as np
import optax

from solitaire_env import jax as sj
from solitaire_env.envs.base import observation_nvec
from solitaire_env.jax import rules
from solitaire_env.jax.layout import unpack


@dataclass
class Args:
    env_id: str = "Rainbow-v0"
    """the game: Rainbow-v0, NumberTen-v0 or RankAndFile-v0"""
    seed: int = 0
    """seed of the network's initialisation, the sampling and the training deals"""
    total_timesteps: int = 300_000
    """env steps in all games together, rounded up to whole updates (the SOLITAIRE_ENV_STEPS env var overrides it)"""
    num_envs: int = 16
    """games stepped together (vmap); 16, as examples/cleanrl_ppo.py: more would mean fewer updates in a budget"""
    num_steps: int = 128
    """steps per game in each rollout"""
    learning_rate: float = 3e-4
    """Adam's learning rate"""
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
    """width of the card embedding"""
    hidden_dim: int = 128
    """hidden layer of the policy and value heads"""
    eval_episodes: int = 200
    """greedy episodes on validation deals (10,000, 10,001, ...) before and after training; 0: none"""
    save: str = ""
    """write the trained params here (flax.serialization.to_bytes); empty: not saved"""


TYPES = {"int": int, "float": float, "str": str, "bool": lambda s: s.lower() in ("1", "true", "yes")}


def parse_args(argv: list[str] | None = None) -> Args:
    """Command-line flags from the fields of Args (``--total-timesteps 50000``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    docs = _field_docs()
    for f in dataclasses.fields(Args):
        kind = TYPES[f.type if isinstance(f.type, str) else f.type.__name__]
        parser.add_argument("--" + f.name.replace("_", "-"), type=kind, default=f.default, help=docs.get(f.name))
    args = Args(**vars(parser.parse_args(argv)))
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
    """Card embedding of the int codes, then a policy head and a value head (examples/cleanrl_ppo.py's net)."""

    nvec: tuple[int, ...]  # values each observation entry takes
    n_actions: int
    embed_dim: int
    hidden_dim: int
    max_present: int  # at most this many entries of an observation are non-zero

    @nn.compact
    def __call__(self, codes: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array]:
        # Entry j with code c is row offsets[j] + c of one table: a linear layer over the one-hot of every
        # entry, without the one-hot. Code 0 (an empty slot, most entries) adds nothing (its constant is
        # the bias's), so only the non-zero entries are gathered: a fixed max_present of them, not obs_size.
        offsets = jnp.asarray(np.concatenate(([0], np.cumsum(self.nvec)[:-1])), dtype=jnp.int32)
        table = self.param("embed", nn.initializers.normal(1.0), (sum(self.nvec), self.embed_dim))
        bias = self.param("bias", nn.initializers.zeros, (self.embed_dim,))

        def embed(c: jax.Array) -> jax.Array:
            at = jnp.nonzero(c, size=self.max_present, fill_value=0)[0]
            used = jnp.arange(self.max_present) < jnp.count_nonzero(c)
            return jnp.sum(table[offsets[at] + c[at]] * used[:, None], axis=0)

        hidden = nn.relu(jax.vmap(embed)(codes.astype(jnp.int32)) + bias)
        logits = nn.Dense(self.n_actions)(nn.tanh(nn.Dense(self.hidden_dim)(hidden)))
        value = nn.Dense(1)(nn.tanh(nn.Dense(self.hidden_dim)(hidden)))[:, 0]
        # Illegal moves: probability 0. A row with no legal move (a finished game) is uniform, out of the loss.
        return jnp.where(mask, logits, -1e9), value


def make_agent(env: sj.Env, args: Args) -> Agent:
    slices = env.layout.observation_slices()
    # Each card lies in at most one entry of the lists; every other field's entries may all be non-zero.
    lists = ("tableau", "waste", "stock", "reserve")
    max_present = env.layout.n_cards + sum(s.stop - s.start for name, s in slices.items() if name not in lists)
    nvec = tuple(int(n) for n in observation_nvec(env.variant))
    return Agent(nvec, env.num_actions, args.embed_dim, args.hidden_dim, min(max_present, len(nvec)))


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
    params: Any
    opt_state: Any
    env_state: sj.State
    key: jax.Array


def make_rollout(env: sj.Env, agent: Agent, args: Args):
    """``rollout(params, env_state, key)``: ``num_steps`` masked-sampled steps of the batch, scanned."""
    step, init = jax.vmap(env.step), jax.vmap(env.init)

    def one_step(carry: tuple, _: None) -> tuple[tuple, Transition]:
        params, state, key = carry
        key, k_act, k_deal = jax.random.split(key, 3)
        logits, value = agent.apply(params, state.observation, state.legal_action_mask)
        action = jax.random.categorical(k_act, logits)
        logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], axis=1)[:, 0]
        after = step(state, action)
        done = after.terminated | after.truncated
        # A truncated game would have gone on: its return continues past the cut with the value of its last
        # observation, added to the reward here (done still cuts GAE); a terminated one is worth 0 after.
        cut = after.truncated & ~after.terminated
        last_value = jax.lax.cond(cut.any(), lambda: agent.apply(params, after.observation, after.legal_action_mask)[1],
                                  lambda: jnp.zeros_like(value))  # the second forward pass only when needed
        reward = after.reward + args.gamma * jnp.where(cut, last_value, 0.0)
        valid = ~(state.terminated | state.truncated)
        cards = jnp.where(done & valid, foundation_cards(env, after), 0).astype(jnp.float32)
        # Autoreset in the scan: a game that ended is replaced by a fresh deal, whose first observation is
        # the next step's input; this transition keeps the ending step's reward and done.
        fresh = jax.lax.cond(done.any(), lambda: init(jax.random.split(k_deal, args.num_envs)), lambda: after)
        nxt = jax.tree.map(lambda new, old: jnp.where(done.reshape(done.shape + (1,) * (old.ndim - 1)), new, old),
                           fresh, after)
        t = Transition(state.observation, state.legal_action_mask, action, logp, value, reward, done, valid, cards)
        return (params, nxt, key), t

    def rollout(params: Any, state: sj.State, key: jax.Array) -> tuple[sj.State, jax.Array, Transition]:
        (_, state, key), traj = jax.lax.scan(one_step, (params, state, key), None, args.num_steps)
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


def ppo_loss(agent: Agent, args: Args, params: Any, mb: Transition, adv: jax.Array, ret: jax.Array) -> jax.Array:
    """PPO's clipped objective, value loss and entropy bonus, averaged over the real transitions only."""
    logits, value = agent.apply(params, mb.obs, mb.mask)
    logp_all = jax.nn.log_softmax(logits)
    logp = jnp.take_along_axis(logp_all, mb.action[:, None], axis=1)[:, 0]
    w = mb.valid.astype(jnp.float32)
    n = jnp.maximum(w.sum(), 1.0)
    mean = (w * adv).sum() / n
    adv = (adv - mean) / (jnp.sqrt((w * (adv - mean) ** 2).sum() / n) + 1e-8)
    ratio = jnp.exp(logp - mb.logp)
    clipped = jnp.clip(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
    pg_loss = (w * jnp.maximum(-adv * ratio, -adv * clipped)).sum() / n
    v_loss = 0.5 * (w * (value - ret) ** 2).sum() / n
    entropy = (w * -jnp.where(mb.mask, jnp.exp(logp_all) * logp_all, 0.0).sum(-1)).sum() / n  # over legal moves
    return pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss


def make_update(env: sj.Env, agent: Agent, tx: optax.GradientTransformation, args: Args):
    """The whole PPO update, one compiled function: rollout, GAE, epochs x minibatches. Returns the new
    runner state and (sum, count) of foundation cards of the games that ended in the rollout."""
    rollout = make_rollout(env, agent, args)
    batch = args.num_envs * args.num_steps
    grad = jax.grad(lambda p, mb, adv, ret: ppo_loss(agent, args, p, mb, adv, ret))

    def update(runner: Runner) -> tuple[Runner, tuple[jax.Array, jax.Array]]:
        params, opt_state, state, key = runner
        state, key, traj = rollout(params, state, key)
        last_value = agent.apply(params, state.observation, state.legal_action_mask)[1]
        adv, ret = gae(traj, last_value, args.gamma, args.gae_lambda)
        flat = jax.tree.map(lambda x: x.reshape((batch,) + x.shape[2:]), (traj, adv, ret))

        def epoch(carry: tuple, _: None) -> tuple[tuple, None]:
            params, opt_state, key = carry
            key, k_perm = jax.random.split(key)
            order = jax.random.permutation(k_perm, batch)
            mbs = jax.tree.map(lambda x: x[order].reshape((args.num_minibatches, -1) + x.shape[1:]), flat)

            def minibatch(carry: tuple, mb: tuple) -> tuple[tuple, None]:
                params, opt_state = carry
                updates, opt_state = tx.update(grad(params, *mb), opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), None

            (params, opt_state), _ = jax.lax.scan(minibatch, (params, opt_state), mbs)
            return (params, opt_state, key), None

        (params, opt_state, key), _ = jax.lax.scan(epoch, (params, opt_state, key), None, args.update_epochs)
        ended = traj.done & traj.valid
        return Runner(params, opt_state, state, key), (traj.cards.sum(), ended.sum())

    return jax.jit(update)


def make_evaluate(env: sj.Env, agent: Agent):
    """``evaluate(params, states)``: greedy play of a batch until every game has ended (the env truncates at
    its limit; a finished game ignores actions); mean foundation cards and win rate."""
    step = jax.vmap(env.step)

    def evaluate(params: Any, state: sj.State) -> tuple[jax.Array, jax.Array]:
        def play(s: sj.State) -> sj.State:
            return step(s, jnp.argmax(agent.apply(params, s.observation, s.legal_action_mask)[0], axis=1))

        state = jax.lax.while_loop(lambda s: ~(s.terminated | s.truncated).all(), play, state)
        cards = foundation_cards(env, state)
        return cards.mean(), (cards == env.layout.n_cards).mean()

    return jax.jit(evaluate)


def report(when: str, evaluate: Any, params: Any, env: sj.Env, episodes: int) -> None:
    deals = env.init_deal(np.arange(10_000, 10_000 + episodes))  # validation deals (solitaire_env.engine.deals)
    cards, wins = (float(x) for x in evaluate(params, deals))
    print(f"{when}: validation mean foundation cards {cards:.2f}, win rate {wins:.3f} ({episodes} deals)", flush=True)


def main(args: Args) -> None:
    env = sj.make(args.env_id)
    agent = make_agent(env, args)
    batch = args.num_envs * args.num_steps
    num_updates = max(1, math.ceil(args.total_timesteps / batch))
    _, k_init, k_deal, k_run = jax.random.split(jax.random.key(args.seed), 4)
    first = jax.vmap(env.init)(jax.random.split(k_deal, args.num_envs))
    params = agent.init(k_init, first.observation, first.legal_action_mask)
    tx = optax.chain(optax.clip_by_global_norm(args.max_grad_norm), optax.adam(args.learning_rate, eps=1e-5))
    runner = Runner(params, tx.init(params), first, k_run)
    update, evaluate = make_update(env, agent, tx, args), make_evaluate(env, agent)
    if args.eval_episodes:
        report("before training", evaluate, params, env, args.eval_episodes)

    # The clock includes compiling the update (the first call): the steps/s are what a run costs.
    start, cards, episodes = time.time(), 0.0, 0
    for i in range(1, num_updates + 1):
        runner, (card_sum, ended) = update(runner)
        if i == 1:
            jax.block_until_ready(runner)
            print(f"first update (compiling it included) in {time.time() - start:.1f} s", flush=True)
        cards, episodes = cards + float(card_sum), episodes + int(ended)  # a host sync per update: cheap
        if i % 10 == 0 or i == num_updates:
            mean = f"{cards / episodes:.2f}" if episodes else "-"
            print(f"step {i * batch:>8}  steps/s {i * batch / (time.time() - start):>6.0f}  "
                  f"mean foundation cards (train episodes) {mean}  ({episodes} episodes)", flush=True)
            cards, episodes = 0.0, 0
    seconds = time.time() - start
    print(f"trained {num_updates * batch} steps in {seconds:.0f} s: {num_updates * batch / seconds:.0f} steps/s")
    if args.eval_episodes:
        report("after training", evaluate, runner.params, env, args.eval_episodes)
    if args.save:
        with open(args.save, "wb") as f:
            f.write(flax.serialization.to_bytes(runner.params))
        print(f"saved the params to {args.save}")


if __name__ == "__main__":
    main(parse_args())
