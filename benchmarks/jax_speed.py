"""The JAX backend's speed beside the numba batched env, and its PPO beside the SB3 recipe, in one run (docs/jax.md).

    python benchmarks/jax_speed.py [--ns 1024,16384,131072] [--env-steps 2000000] [--reps 3]
                                   [--ppo 16x128,256x128] [--ppo-updates 5] [--sb3-steps 50000]
                                   [--sb3-device cpu] [--json FILE]
    python benchmarks/jax_speed.py --quick [--json FILE]   # for CI: every row at a few games (a check, not a measure)

For each N, Rank and File:

* JAX: ``jax.jit`` of a ``lax.scan`` over ``jax.vmap(env.step)``, so no Python runs per step. Each
  step picks a uniformly random legal action per game (one random ``uint32`` a game: the k-th legal id),
  plays it, and restarts a game that ended from its own deal. The games are ``jax.vmap(env.init)`` deals.
* numba: ``gym.make_vec("RankAndFile-v0", num_envs=N)`` (autoreset NEXT_STEP) stepping uniform legal
  picks made by a compiled loop (``benchmarks.common.pick_uniform``); pick and step are timed.

Both play about ``--env-steps`` env steps a repetition (at least 8 steps of N games), after a warm-up
that also compiles; the figure is the median of ``--reps`` repetitions, in env steps per second. JAX
runs on its default backend (the CPU unless a GPU build of jaxlib finds a GPU): the table says which.

PPO end to end, Rainbow, ``configs/quick.yaml``'s network and hyperparameters (4 epochs of 4
minibatches, a 256-wide card embedding, 128-wide heads) with each ``--ppo`` row's games x steps a
rollout:

* JAX: ``solitaire_env.tools.jax_ppo.make_update`` (rollout, GAE and the epochs in one compiled call):
  the first update (compiling it included) timed alone, then ``--ppo-updates`` updates;
* SB3: sb3-contrib's MaskablePPO on the numba batched env, ``configs/quick.yaml`` as it is (16 envs x 128
  steps), ``--sb3-steps`` steps, the learner on ``--sb3-device`` (``cuda`` on a GPU machine), one torch
  thread; ``--sb3-steps 0`` leaves it out.

``--quick`` runs the same code at sizes that say nothing about speed (the defaults it changes are in
``QUICK``; the SB3 run takes 4-step rollouts); most of its time is JAX compiling.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import gymnasium as gym  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import solitaire_env  # noqa: F401, E402  (registers the ids)
from benchmarks.common import machine_info, pick_uniform  # noqa: E402
from solitaire_env import jax as sj  # noqa: E402

ENV_ID = "RankAndFile-v0"


def jax_rollout(env: sj.Env, n: int, steps: int):
    """A compiled function ``(state, first, key) -> state`` playing ``steps`` random legal steps of ``n`` games."""
    step = jax.vmap(env.step)

    def one(carry, key):
        state, first = carry
        mask = state.legal_action_mask
        n_legal = jnp.maximum(mask.sum(axis=1), 1).astype(jnp.uint32)
        k = (jax.random.bits(key, (n,), jnp.uint32) % n_legal).astype(jnp.int32)
        action = jnp.argmax(jnp.cumsum(mask, axis=1) > k[:, None], axis=1).astype(jnp.int32)
        state = step(state, action)
        done = state.terminated | state.truncated
        state = jax.tree.map(lambda f, s: jnp.where(done.reshape((n,) + (1,) * (s.ndim - 1)), f, s), first, state)
        return (state, first), None

    def run(state, first, key):
        (state, _), _ = jax.lax.scan(one, (state, first), jax.random.split(key, steps))
        return state

    return jax.jit(run)


def bench_jax(n: int, steps: int, reps: int) -> float:
    env = sj.make(ENV_ID)
    first = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(0), n))
    run = jax_rollout(env, n, steps)
    state = run(first, first, jax.random.key(1))  # compiles, and warms up
    jax.block_until_ready(state)
    rates = []
    for rep in range(reps):
        t = time.perf_counter()
        state = jax.block_until_ready(run(state, first, jax.random.key(2 + rep)))
        rates.append(n * steps / (time.perf_counter() - t))
    return statistics.median(rates)


def bench_numba(n: int, steps: int, reps: int) -> float:
    env = gym.make_vec(ENV_ID, num_envs=n)
    seeds = np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    picked = np.empty(n, dtype=np.int64)
    _, info = env.reset(seed=0)
    for _ in range(3):  # warm up
        _, _, _, _, info = env.step(pick_uniform(info["action_mask"], seeds, picked))
    rates = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(steps):
            _, _, _, _, info = env.step(pick_uniform(info["action_mask"], seeds, picked))
        rates.append(n * steps / (time.perf_counter() - t))
    env.close()
    return statistics.median(rates)


def peak_memory_gib() -> float | None:
    """The JAX device's peak memory in use so far, in GiB (GPUs report it; the CPU does not: None)."""
    stats = jax.devices()[0].memory_stats() or {}
    return round(stats["peak_bytes_in_use"] / 2**30, 2) if "peak_bytes_in_use" in stats else None


def bench_jax_ppo(n_envs: int, n_steps: int, updates: int) -> dict:
    """Env steps per second of the JAX PPO at ``n_envs`` x ``n_steps`` a rollout (quick.yaml's other settings)."""
    from solitaire_env.agents.jax_policy import init_params
    from solitaire_env.tools.config import load_config
    from solitaire_env.tools.jax_ppo import make_update, start
    from solitaire_env.tools.jax_training import network_of, settings_of

    config = load_config(REPO / "configs" / "quick.yaml", ["backend=jax", f"n_envs={n_envs}",
                                                           f"hyperparams.n_steps={n_steps}",
                                                           f"hyperparams.batch_size={n_envs * n_steps // 4}"])
    env, net, settings = sj.make(config.env_id, **config.env_kwargs), network_of(config), settings_of(config)
    k_init, k_run = jax.random.split(jax.random.key(0))
    runner = start(env, net, settings, init_params(net, k_init), k_run)
    update = make_update(env, net, settings)
    t = time.perf_counter()
    runner = jax.block_until_ready(update(runner)[0])
    first = time.perf_counter() - t
    t = time.perf_counter()
    for _ in range(updates):
        runner = update(runner)[0]
    jax.block_until_ready(runner)
    return {"n_envs": n_envs, "n_steps": n_steps, "updates": updates, "first_update_s": round(first, 2),
            "steps_per_s": updates * settings.batch / (time.perf_counter() - t)}


# The defaults, and --quick's: the same code on a few games (the SB3 run with 4-step rollouts)
FULL = {"ns": "1024,16384,131072", "env_steps": 2_000_000, "reps": 3, "ppo": "16x128,256x128", "ppo_updates": 5,
        "sb3_steps": 50_000}
QUICK = {"ns": "8", "env_steps": 64, "reps": 1, "ppo": "4x8", "ppo_updates": 1, "sb3_steps": 64}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ns", help="comma-separated batch sizes (default 1024,16384,131072)")
    parser.add_argument("--env-steps", type=int, help="env steps a repetition, about (default 2,000,000)")
    parser.add_argument("--reps", type=int, help="repetitions (default 3)")
    parser.add_argument("--ppo", help="PPO rows, games x steps a rollout; empty: none (default 16x128,256x128)")
    parser.add_argument("--ppo-updates", type=int, help="timed updates a PPO row, after the first (default 5)")
    parser.add_argument("--sb3-steps", type=int, help="steps of the SB3 recipe; 0: not run (default 50,000)")
    parser.add_argument("--sb3-device", default="cpu", help="where SB3's learner runs: cpu or cuda")
    parser.add_argument("--quick", action="store_true",
                        help="every row on a few games, for CI: a check, not a measure (the sizes: QUICK)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    for key, value in (QUICK if args.quick else FULL).items():  # what the command line leaves unsaid
        if getattr(args, key) is None:
            setattr(args, key, value)
    ns = [int(x) for x in args.ns.split(",")]
    device = jax.devices()[0]
    out = {"env_id": ENV_ID, "machine": machine_info(), "jax": jax.__version__, "jax_backend": jax.default_backend(),
           "jax_device": str(device.device_kind), "rows": []}
    print(f"{ENV_ID}: env steps/s, median of {args.reps}; JAX {jax.__version__} on {jax.default_backend()} "
          f"({device.device_kind}); CPU {out['machine']['cpu']}, {out['machine']['usable_cores']} usable cores")
    print(f"{'N':>8} {'steps':>6} {'JAX jit(vmap(step))':>20} {'numba make_vec':>15} {'JAX / numba':>12}")
    for n in ns:
        steps = max(8, args.env_steps // n)
        j = bench_jax(n, steps, args.reps)
        b = bench_numba(n, steps, args.reps)
        peak = peak_memory_gib()
        out["rows"].append({"num_envs": n, "steps": steps, "jax_steps_per_s": j, "numba_steps_per_s": b,
                            "jax_peak_memory_gib": peak})
        memory = f"  (JAX peak memory so far {peak} GiB)" if peak is not None else ""
        print(f"{n:>8,} {steps:>6} {j:>20,.0f} {b:>15,.0f} {j / b:>12.2f}{memory}", flush=True)
    out["ppo"] = []
    if args.ppo or args.sb3_steps:
        print("\nPPO on Rainbow-v0, configs/quick.yaml's network and hyperparameters: env steps/s end to end")
    for row in filter(None, args.ppo.split(",")):
        n_envs, n_steps = (int(x) for x in row.split("x"))
        r = bench_jax_ppo(n_envs, n_steps, args.ppo_updates)
        peak = peak_memory_gib()
        out["ppo"].append({"learner": "jax", **r, "jax_peak_memory_gib": peak})
        memory = f"; JAX peak memory so far {peak} GiB" if peak is not None else ""
        print(f"JAX PPO, {n_envs} games x {n_steps} steps: {r['steps_per_s']:,.0f} steps/s "
              f"(first update, compiling included: {r['first_update_s']} s{memory})", flush=True)
    if args.sb3_steps:
        from benchmarks.ppo_throughput import QUICK_STEPS, sb3_steps_per_second

        rate = sb3_steps_per_second(args.sb3_steps, device=args.sb3_device, quick=args.quick)
        n_steps = QUICK_STEPS if args.quick else 128
        out["ppo"].append({"learner": f"sb3 ({args.sb3_device})", "n_envs": 16, "n_steps": n_steps,
                           "steps": args.sb3_steps, "steps_per_s": rate})
        print(f"SB3 MaskablePPO (learner on {args.sb3_device}, numba env on the CPU), 16 games x {n_steps} steps: "
              f"{rate:,.0f} steps/s", flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return out


if __name__ == "__main__":
    main()
