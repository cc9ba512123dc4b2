"""3. ``vector_env``: ``gym.make_vec("RankAndFile-v0", num_envs=N)`` (the natively batched env).

Actions: uniform among the legal ones for all N envs in one compiled call (the mask is all the pick
reads; a policy's cost is the caller's). Reported with and without that selection; the cost of an
autoreset (one ``deal()`` per sub-env, measured with ``max_episode_steps=1``); and the compiled kernel
``batched.step_batch`` alone (in the full run also its serial and threaded kernels, where the engine has
both: the data for ``batched.PARALLEL_MIN_BATCH``).
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.common import ENV_ID, median, summary

VECTOR_NS_FULL = (1, 64, 1024, 4096)
VECTOR_NS_QUICK = (1, 64)


def bench_vector_env(ns: tuple[int, ...], reps: int, duration: float, split_kernels: bool) -> dict:
    import gymnasium as gym
    import numpy as np

    import solitaire_env  # noqa: F401
    from benchmarks.kernels import pick_uniform
    from solitaire_env.engine import batched

    out: dict[str, Any] = {
        "action_selection": "numba: per row, a uniform pick among the legal actions (xorshift64)",
        "max_episode_steps": None,
        "by_num_envs": {},
    }
    for n in ns:
        env = gym.make_vec(ENV_ID, num_envs=n)
        u = env.unwrapped if hasattr(env, "unwrapped") else env
        out["env_class"] = type(u).__name__
        out["max_episode_steps"] = int(u.max_episode_steps)
        seeds = np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        picked = np.empty(n, dtype=np.int64)

        def pick(mask: np.ndarray, seeds=seeds, picked=picked) -> np.ndarray:
            return pick_uniform(mask, seeds, picked)

        obs, info = env.reset(seed=0)
        for _ in range(3):  # warm up
            obs, reward, terminated, truncated, info = env.step(pick(info["action_mask"]))

        total_rates, step_rates, select_ns, episodes, illegal = [], [], [], 0, 0
        for _ in range(reps):
            steps, step_time, select_time = 0, 0.0, 0.0
            t = time.perf_counter()
            while steps < 3 or time.perf_counter() - t < duration:
                t0 = time.perf_counter()
                actions = pick(info["action_mask"])
                t1 = time.perf_counter()
                obs, reward, terminated, truncated, info = env.step(actions)
                t2 = time.perf_counter()
                select_time += t1 - t0
                step_time += t2 - t1
                steps += 1
                episodes += int(np.count_nonzero(terminated | truncated))
                illegal += int(np.count_nonzero(info["illegal_action"]))
            dt = time.perf_counter() - t
            total_rates.append(steps * n / dt)
            step_rates.append(steps * n / step_time)
            select_ns.append(select_time / (steps * n) * 1e9)

        # The compiled kernel alone on copies of the env's arrays (no Python around it): batched.step_batch
        # as the env calls it and its serial and threaded kernels (the data for batched.PARALLEL_MIN_BATCH).
        # Repetitions alternate between the kernels.
        v = u.variant
        kernels = {"step_batch": batched.step_batch}
        if split_kernels:
            kernels.update(serial=batched.step_batch_serial, parallel=batched.step_batch_parallel)
        arrays = {name: batched.new_batch(u.states.copy(), u.masks.copy(), u.codes.copy()) for name in kernels}
        kernel_rates: dict[str, list[float]] = {name: [] for name in kernels}
        for name, kernel in kernels.items():  # warm up (compile or load)
            kernel(arrays[name], v.spec, v.actions, np.full(n, -1, dtype=np.int64))
        for _ in range(reps):
            for name, kernel in kernels.items():
                b = arrays[name]
                steps, kt = 0, 0.0
                t = time.perf_counter()
                while steps < 3 or time.perf_counter() - t < duration / (1 + len(kernels)):
                    acts = pick(b.masks).astype(np.int64)
                    acts[b.n_legal == 0] = -1
                    t0 = time.perf_counter()
                    kernel(b, v.spec, v.actions, acts)
                    kt += time.perf_counter() - t0
                    steps += 1
                kernel_rates[name].append(steps * n / kt)

        # Autoreset: with max_episode_steps=1 every sub-env truncates on one step and is dealt anew on the
        # next (one deal() per sub-env, in Python); the difference between the two is the reset cost.
        short = gym.make_vec(ENV_ID, num_envs=n, max_episode_steps=1)
        _, short_info = short.reset(seed=0)
        reset_us = []
        for _ in range(max(reps, 3)):
            t0 = time.perf_counter()
            _, _, _, truncated, short_info = short.step(pick(short_info["action_mask"]))
            t1 = time.perf_counter()
            _, _, _, _, short_info = short.step(pick(short_info["action_mask"]))
            t2 = time.perf_counter()
            reset_us.append(max(0.0, (t2 - t1) - (t1 - t0)) / n * 1e6)
        short.close()
        reset_per_env_us = median(reset_us)

        out["by_num_envs"][str(n)] = {
            "num_envs": n,
            "autoreset_us_per_sub_env": summary(reset_us),
            "autoreset_amortized_ns_per_env_step": reset_per_env_us * 1e3 / int(u.max_episode_steps),
            "autoreset_step_s": reset_per_env_us * n / 1e6,
            "env_steps_per_s": summary(total_rates),
            "step_only_env_steps_per_s": summary(step_rates),
            "action_select_ns_per_env_step": summary(select_ns),
            "kernel_only_env_steps_per_s": summary(kernel_rates["step_batch"]),
            **{f"kernel_{name}_env_steps_per_s": summary(rates) for name, rates in kernel_rates.items()
               if name != "step_batch"},
            "episodes_ended": episodes,
            "illegal_actions_picked": illegal,
        }
        env.close()
    import numba

    try:
        out["numba_threading_layer"] = numba.threading_layer()
    except ValueError:  # not reported when the threaded kernel came from numba's cache
        out["numba_threading_layer"] = None
    out["numba_threading_layer_config"] = str(numba.config.THREADING_LAYER)
    out["parallel_min_batch"] = batched.PARALLEL_MIN_BATCH
    return out

