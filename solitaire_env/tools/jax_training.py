"""Training on the JAX backend: ``solitaire-env train CONFIG`` with ``backend: jax`` (the ``jax`` extra).

The same YAML config as MaskablePPO's (:mod:`solitaire_env.tools.config`), read the same way: ``n_envs``
and ``hyperparams`` by SB3's names (:class:`~solitaire_env.tools.jax_ppo.PPOSettings`, MaskablePPO's
defaults), ``policy: CardCodesPolicy`` with its ``features_dim`` and ``net_arch``
(:class:`~solitaire_env.agents.jax_policy.CardCodesNet`), ``env_kwargs`` the reward's coefficients. The
run loops over :func:`~solitaire_env.tools.jax_ppo.make_update`'s compiled updates and writes a run
directory of the same shape as an SB3 run:

==========================================  ====================================================================
file                                        what
==========================================  ====================================================================
``config.yaml``                             the config as used
``checkpoints/ppo_<steps>_steps.msgpack``   every ``checkpoint_freq`` steps: everything the run carries (weights,
                                            Adam's state, the games in play, the random key, the evaluations)
``evaluations.npz``                         every ``eval.freq`` steps: ``timesteps``, ``results`` (returns),
                                            ``ep_lengths``, ``foundation_cards``, ``wins`` of each validation deal
``best_model.msgpack``                      the policy of the best evaluation (mean return), as SB3's callback
``final_model.msgpack``                     the policy at the end
``summary.json``, ``learning_curve.png``    steps, wall time, steps/s, device, deals; the evaluations plotted
==========================================  ====================================================================

``--resume`` goes on from the last checkpoint and trains exactly as the uninterrupted run would (the
checkpoint holds the whole state; ``tests/test_jax_training.py`` compares the weights). The policy files
play in ``solitaire-env evaluate --agent RUN/best_model.msgpack``
(:class:`~solitaire_env.agents.jax_policy.JaxPolicyAgent`).

Deals: training games are ``env.init(key)``'s random shuffles (``jax.random``, from the config's seed),
not numbered deals, so the run deals them on the device; a shuffle equals one of the 20,000 test and
validation deals with probability below 20,000 / 52! (about 3e-64). Evaluations play validation deals
``eval.seed ..`` (``env.init_deal``: exactly the deals ``reset(seed=s)`` deals), greedily or, with
``eval.deterministic: false``, sampled.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING

import flax.serialization
import jax
import jax.numpy as jnp
import numpy as np

from solitaire_env import jax as sj
from solitaire_env.engine.deals import describe
from solitaire_env.tools.config import TrainConfig, save_config
from solitaire_env.tools.jax_ppo import PPOSettings, Runner, make_evaluate, make_update, start
from solitaire_env.tools.run_dir import plot_learning_curve, prepare_run_dir

if TYPE_CHECKING:
    from solitaire_env.agents.jax_policy import CardCodesNet

# CardEmbedding's width and SB3's PPO heads: a config that sets neither trains what MaskablePPO would.
DEFAULT_FEATURES_DIM, DEFAULT_NET_ARCH = 256, (64, 64)
LOG_KEYS = ("timesteps", "results", "ep_lengths", "foundation_cards", "wins")  # evaluations.npz


def settings_of(config: TrainConfig) -> PPOSettings:
    """The PPO settings a config's ``n_envs`` and ``hyperparams`` name."""
    return PPOSettings(n_envs=config.n_envs, **config.hyperparams)


def network_of(config: TrainConfig) -> CardCodesNet:
    """The network a config's ``policy_kwargs`` name (CardCodesPolicy's ``features_dim`` and ``net_arch``)."""
    from solitaire_env.agents.jax_policy import make_network

    kwargs = config.policy_kwargs
    return make_network(config.env_id, kwargs.get("features_dim", DEFAULT_FEATURES_DIM),
                        kwargs.get("net_arch", DEFAULT_NET_ARCH))


def describe_deals(config: TrainConfig) -> dict[str, str]:
    """Which deals each phase of a JAX run plays, in words (the run's first lines and its summary)."""
    last = config.eval.seed + config.eval.episodes - 1
    return {"train": f"random shuffles (jax.random, seed {config.seed}), not numbered deals",
            "validation": f"{describe(config.eval.seed, last)}, every round"}


def _to_saved(runner: Runner, timesteps: int, log: dict[str, list], best: float) -> bytes:
    state = {"timesteps": timesteps, "best": best, "log": {k: np.asarray(v) for k, v in log.items()},
             "runner": flax.serialization.to_state_dict(runner._replace(key=jax.random.key_data(runner.key)))}
    return flax.serialization.msgpack_serialize(jax.device_get(state))


def _from_saved(blob: bytes, template: Runner) -> tuple[Runner, int, dict[str, list], float]:
    raw = flax.serialization.msgpack_restore(blob)
    plain = template._replace(key=jax.random.key_data(template.key))
    runner = flax.serialization.from_state_dict(plain, raw["runner"])
    runner = jax.tree.map(jnp.asarray, runner)._replace(key=jax.random.wrap_key_data(jnp.asarray(runner.key)))
    log = {k: list(np.asarray(raw["log"][k])) for k in LOG_KEYS}
    return runner, int(raw["timesteps"]), log, float(raw["best"])


def save_checkpoint(path: Path, runner: Runner, timesteps: int, log: dict[str, list], best: float) -> None:
    """Everything the run carries, written whole then renamed (a stop mid-write leaves the last one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(_to_saved(runner, timesteps, log, best))
    partial.replace(path)


def train_jax(config: TrainConfig, output_dir: str | Path | None = None, progress: bool = True,
              resume: bool = False, overwrite: bool = False) -> Path:
    """Train as the config says on the JAX backend; return the run directory (see the module's table)."""
    from solitaire_env.agents.jax_policy import init_params, save_policy

    out = Path(output_dir or config.output_dir)
    checkpoint = prepare_run_dir(out, config, resume=resume, overwrite=overwrite)
    save_config(config, out / "config.yaml")
    deals = describe_deals(config)
    for phase, words in deals.items():
        print(f"{phase} deals: {words}")
    env = sj.make(config.env_id, **config.env_kwargs)
    net, settings = network_of(config), settings_of(config)
    k_init, k_run, k_eval = jax.random.split(jax.random.key(config.seed), 3)
    runner = start(env, net, settings, init_params(net, k_init), k_run)
    timesteps, best, log = 0, -math.inf, {k: [] for k in LOG_KEYS}
    if checkpoint is not None:
        runner, timesteps, log, best = _from_saved(checkpoint.read_bytes(), runner)
        print(f"resuming {out} from {checkpoint.name} ({timesteps} timesteps)")
    update = make_update(env, net, settings)
    evaluate = make_evaluate(env, net, greedy=config.eval.deterministic)
    eval_deals = env.init_deal(np.arange(config.eval.seed, config.eval.seed + config.eval.episodes))

    def evaluation() -> None:
        nonlocal best
        cards, returns, lengths = (np.asarray(x) for x in evaluate(runner.params, eval_deals,
                                                                   jax.random.fold_in(k_eval, timesteps)))
        for name, value in zip(LOG_KEYS, (timesteps, returns, lengths, cards, cards == env.layout.n_cards),
                               strict=True):
            log[name].append(value)
        np.savez(out / "evaluations.npz", **{k: np.asarray(v) for k, v in log.items()})
        mean = float(returns.mean())
        line = (f"eval at {timesteps}: mean return {mean:.3f}, foundation cards {cards.mean():.2f}, "
                f"win rate {(cards == env.layout.n_cards).mean():.3f} ({len(cards)} validation deals)")
        if mean > best:
            best = mean
            save_policy(out / "best_model.msgpack", runner.params, config.env_id, net, config.env_kwargs)
            line += ", new best"
        print(line, flush=True)

    first, wall_start, report_at = timesteps, time.perf_counter(), time.perf_counter() + 10
    cards_sum, ended = 0.0, 0
    while timesteps < config.total_timesteps:
        runner, (card_sum, n_ended) = update(runner)
        before, timesteps = timesteps, timesteps + settings.batch
        cards_sum, ended = cards_sum + float(card_sum), ended + int(n_ended)  # a host sync per update: cheap
        if timesteps // config.eval.freq > before // config.eval.freq:
            evaluation()
        if timesteps // config.checkpoint_freq > before // config.checkpoint_freq:
            save_checkpoint(out / "checkpoints" / f"ppo_{timesteps}_steps.msgpack", runner, timesteps, log, best)
        if progress and (time.perf_counter() >= report_at or timesteps >= config.total_timesteps):
            mean = f"{cards_sum / ended:.2f}" if ended else "-"
            rate = (timesteps - first) / (time.perf_counter() - wall_start)
            print(f"step {timesteps:>9}  {rate:>8.0f} steps/s  mean foundation cards of training games {mean} "
                  f"({ended} games)", flush=True)
            report_at, cards_sum, ended = time.perf_counter() + 10, 0.0, 0
    wall = time.perf_counter() - wall_start  # compiling the update included: what a run costs
    save_policy(out / "final_model.msgpack", runner.params, config.env_id, net, config.env_kwargs)
    steps = timesteps - first
    print(f"ppo (jax): {steps} steps in {wall:.0f} s ({steps / max(wall, 1e-9):.0f} env steps/s)", flush=True)
    device = jax.devices()[0]
    summary = {"env_id": config.env_id, "backend": "jax", "timesteps": int(timesteps), "wall_time_s": round(wall, 1),
               "steps_per_s": round(steps / wall, 1) if wall > 0 else None,
               "device": f"{device.platform}: {device.device_kind}", "deals": deals}
    if checkpoint is not None:
        summary["resumed_from_timesteps"] = int(first)  # wall time and steps/s are this piece's
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    try:
        plot_learning_curve(out)
    except ValueError:
        pass  # too short a run for an evaluation point
    return out


__all__ = ["describe_deals", "network_of", "save_checkpoint", "settings_of", "train_jax"]
