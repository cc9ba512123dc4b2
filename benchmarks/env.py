"""Sections 1-3 of the benchmark: the engine alone, one env, and the batched vector env.

1. ``engine``: random legal play on one ``int8`` state array, ``core.legal_mask`` + ``core.apply_action``
   in a numba loop (xorshift64 generator inside numba, ``random_play`` in :mod:`benchmarks.common`).
   Random play in Rank and File almost never gets stuck (it shuffles runs back and forth forever), so a
   "game" ends when no move is legal or after ``MOVE_CAP`` moves. Deals are made beforehand (``deal()``
   is timed on its own). Also: the same loop with ``core.observe`` every move, and the same play driven
   from Python through :class:`solitaire_env.Game`, for reference.

2. ``single_env``: ``gym.make("RankAndFile-v0")`` with its default wrappers, observation and mask every
   step, reset on termination or truncation. Actions are picked cheaply (a precomputed numpy uniform
   over ``np.flatnonzero(info["action_mask"])``); ``env.action_space.sample(mask=...)`` is timed on its
   own because it costs more than the env step.

3. ``vector_env``: ``gym.make_vec("RankAndFile-v0", num_envs=N)`` (the natively batched env). Actions:
   uniform among the legal ones for all N envs in one compiled call (``pick_uniform`` in
   :mod:`benchmarks.common`; the mask is all the pick reads; a policy's cost is the caller's). Reported
   with and without that selection; the cost of an autoreset (one ``deal()`` per sub-env, measured with
   ``max_episode_steps=1``); and the compiled kernel ``batched.step_batch`` alone (in the full run also
   its serial and threaded kernels, where the engine has both: the data for
   ``batched.PARALLEL_MIN_BATCH``).
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.common import ENV_ID, MOVE_CAP, median, summary

VECTOR_NS_FULL = (1, 64, 1024, 4096)
VECTOR_NS_QUICK = (1, 64)


# --- 1. engine ------------------------------------------------------------------------------------

def bench_engine(reps: int, duration: float) -> dict:
    import numpy as np

    from solitaire_env import Game
    from solitaire_env.engine.games import RANK_AND_FILE as V
    from solitaire_env.engine.state import deal

    t0 = time.perf_counter()
    from benchmarks.common import random_play
    deals = np.stack([deal(V, seed) for seed in range(64)])
    random_play(deals, V.spec, V.actions, 1, 10, 0, False, V.obs_size)  # compile or load from cache
    random_play(deals, V.spec, V.actions, 1, 10, 0, True, V.obs_size)
    setup_s = time.perf_counter() - t0

    def kernel(with_obs: bool) -> dict:
        # Size each repetition to about `duration`: one calibration game first.
        t = time.perf_counter()
        random_play(deals, V.spec, V.actions, 2, MOVE_CAP, 12345, with_obs, V.obs_size)
        per_game = (time.perf_counter() - t) / 2
        n_games = max(2, int(duration / max(per_game, 1e-9)))
        moves_s, games_s, moves_per_game, capped_frac, won = [], [], [], [], 0
        for rep in range(reps):
            t = time.perf_counter()
            moves, capped, w = random_play(deals, V.spec, V.actions, n_games, MOVE_CAP, rep, with_obs, V.obs_size)
            dt = time.perf_counter() - t
            moves_s.append(moves / dt)
            games_s.append(n_games / dt)
            moves_per_game.append(moves / n_games)
            capped_frac.append(capped / n_games)
            won += w
        return {
            "moves_per_s": summary(moves_s),
            "games_per_s": summary(games_s),
            "moves_per_game": median(moves_per_game),
            "games_at_cap_fraction": median(capped_frac),
            "games_won": int(won),
            "games_per_rep": n_games,
        }

    out = {"move_cap": MOVE_CAP, "setup_s": setup_s, "numba": kernel(False), "numba_with_observe": kernel(True)}

    # deal() itself (Python + numpy): what every env reset pays.
    rates = []
    for _ in range(reps):
        n, t = 0, time.perf_counter()
        while time.perf_counter() - t < duration / 2 or n < 3:
            deal(V, n)
            n += 1
        rates.append(n / (time.perf_counter() - t))
    out["deals_per_s"] = summary(rates)

    # The same random play driven from Python through Game (reference; includes Game() and its deal).
    rng = np.random.default_rng(0)
    moves_s, games_s = [], []
    for rep in range(reps):
        moves = games = 0
        t = time.perf_counter()
        while time.perf_counter() - t < duration or games == 0:
            game = Game(V, seed=rep * 1_000_000 + games)
            for _ in range(MOVE_CAP):
                legal = game.legal_actions()
                if len(legal) == 0:
                    break
                game.play(int(legal[rng.integers(len(legal))]))
                moves += 1
            games += 1
            if time.perf_counter() - t >= duration:
                break
        dt = time.perf_counter() - t
        moves_s.append(moves / dt)
        games_s.append(games / dt)
    out["python_game"] = {"moves_per_s": summary(moves_s), "games_per_s": summary(games_s)}
    return out


# --- 2. single_env --------------------------------------------------------------------------------

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


# --- 3. vector_env --------------------------------------------------------------------------------

def bench_vector_env(ns: tuple[int, ...], reps: int, duration: float, split_kernels: bool) -> dict:
    import gymnasium as gym
    import numpy as np

    import solitaire_env  # noqa: F401
    from benchmarks.common import pick_uniform
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

