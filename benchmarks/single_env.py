"""2. ``single_env``: ``gym.make("RankAndFile-v0")`` with its default wrappers, observation and mask every
step, reset on termination or truncation. Actions are picked cheaply (a precomputed numpy uniform over
``np.flatnonzero(info["action_mask"])``); ``env.action_space.sample(mask=...)`` is timed on its own
because it costs more than the env step.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.common import ENV_ID, summary


def bench_single_env(reps: int, duration: float) -> dict:
    import gymnasium as gym
    import numpy as np

    import solitaire_env  # noqa: F401  (registers the envs)

    env = gym.make(ENV_ID)
    wrappers = repr(env)
    uniforms = np.random.default_rng(0).random(1 << 20)

    def play(target, seed: int, limit: int | None = None) -> dict:
        """Random legal play for ``duration``; ``limit`` truncates episodes where no TimeLimit wrapper does."""
        obs, info = target.reset(seed=seed)
        mask = info["action_mask"]
        k = steps = episodes = episode_steps = 0
        step_time = 0.0
        t = time.perf_counter()
        while True:
            legal = np.flatnonzero(mask)
            a = int(legal[int(uniforms[k] * len(legal))])
            k = (k + 1) & ((1 << 20) - 1)
            t0 = time.perf_counter()
            obs, reward, terminated, truncated, info = target.step(a)
            step_time += time.perf_counter() - t0
            mask = info["action_mask"]
            steps += 1
            episode_steps += 1
            if limit is not None and episode_steps >= limit:
                truncated = True  # (episodes of the unwrapped env never end in random play otherwise)
            if terminated or truncated:
                obs, info = target.reset()
                mask = info["action_mask"]
                episodes += 1
                episode_steps = 0
            if (steps & 255) == 0 and time.perf_counter() - t >= duration:
                break
        dt = time.perf_counter() - t
        return {"steps_per_s": steps / dt, "step_only_steps_per_s": steps / step_time, "episodes": episodes,
                "steps": steps}

    play(env, 0)  # warm up (numba cache load or compile)
    out: dict[str, Any] = {"wrappers": wrappers,
                           "action_selection": "precomputed numpy uniforms over np.flatnonzero(mask)"}
    limit = env.spec.max_episode_steps if env.spec is not None else None
    for name, target, lim in (("gym_make", env, None), ("unwrapped", env.unwrapped, limit)):
        runs = [play(target, rep, lim) for rep in range(reps)]
        out[name] = {
            "steps_per_s": summary([r["steps_per_s"] for r in runs]),
            "step_only_steps_per_s": summary([r["step_only_steps_per_s"] for r in runs]),
            "episodes_ended": int(sum(r["episodes"] for r in runs)),
            "steps": int(sum(r["steps"] for r in runs)),
        }

    # The Gymnasium way of picking a legal action, timed alone.
    _, info = env.reset(seed=0)
    mask = info["action_mask"]
    rates = []
    for _ in range(reps):
        n, t = 0, time.perf_counter()
        while n < 64 or time.perf_counter() - t < duration / 4:
            for _ in range(64):
                env.action_space.sample(mask=mask)
            n += 64
        rates.append(n / (time.perf_counter() - t))
    out["action_space_sample_per_s"] = summary(rates)
    env.close()
    return out

