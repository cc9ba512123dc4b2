"""Speed and memory of solitaire-env's Rank and File, measured (never asserted).

Run from the repository root::

    python benchmarks/bench.py                  # the full run: a few minutes
    python benchmarks/bench.py --quick          # a few seconds (once numba's caches are warm), for CI
    python benchmarks/bench.py --json out.json  # also write every figure as JSON

Sections (each figure is the median of several repetitions; the JSON keeps every repetition):

1. ``engine``: random legal play on one ``int8`` state array, ``core.legal_mask`` +
   ``core.apply_action`` in a numba loop (xorshift64 generator inside numba). Random play in Rank and
   File almost never gets stuck (it shuffles runs back and forth forever), so a "game" ends when no
   move is legal or after ``MOVE_CAP`` moves. Deals are made beforehand (``deal()`` is timed on its
   own). Also: the same loop with ``core.observe`` every move, and the same play driven from Python
   through :class:`solitaire_env.Game`, for reference.
2. ``single_env``: ``gym.make("RankAndFile-v0")`` with its default wrappers, observation and mask
   every step, reset on termination or truncation. Actions are picked cheaply (a precomputed numpy
   uniform over ``np.flatnonzero(info["action_mask"])``); ``env.action_space.sample(mask=...)`` is
   timed on its own because it costs more than the env step.
3. ``vector_env``: ``gym.make_vec("RankAndFile-v0", num_envs=N)`` (the natively batched env).
   Actions: uniform among the legal ones for all N envs in one compiled call (the mask is all the
   pick reads; a policy's cost is the caller's). Reported with and without that selection; the cost of an autoreset (one
   ``deal()`` per sub-env, measured with ``max_episode_steps=1``); and the compiled kernel
   ``core.step_batch`` alone (in the full run also its serial and threaded kernels, where the core
   has both: the data for ``core.PARALLEL_MIN_BATCH``).
4. ``openspiel``: OpenSpiel's ``solitaire`` (Klondike; an optional dependency, skipped when
   ``pyspiel`` cannot be imported), random legal play from Python in this process, each decision
   step calling ``legal_actions_mask()`` and ``observation_tensor()``; chance nodes are sampled from
   ``chance_outcomes()`` and are not counted as steps.
5. ``memory``: bytes per game in the batched env (the state array; every per-env array it holds;
   tracemalloc; and, in the full run, RSS growth in a fresh process creating N=4096).
6. ``first_use``: a fresh ``python`` timing ``import solitaire_env; gym.make; reset; step`` with an
   empty numba cache directory (cold) and again with the filled one (warm). Full run only.
7. ``solver``: positions per second of :mod:`solitaire_env.solver` with a fixed node budget (1M, quick
   20k) on deals it cannot settle within it, Rank and File and Rainbow: a fixed, repeatable workload.

Other processes skew everything (the two vCPUs of a small VM most of all): the report states how many
cores other processes kept busy during each section, from ``/proc/stat``, and warns when it was not
quiet. ``nice -n -10 python benchmarks/bench.py`` helps somewhat on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # benchmark the checked-out package, installed or not

ENV_ID = "RankAndFile-v0"
MOVE_CAP = 1000  # engine "game" length cap: random play in Rank and File loops
VECTOR_NS_FULL = (1, 64, 1024, 4096)
VECTOR_NS_QUICK = (1, 64)
RSS_N = 4096


# --- helpers ---------------------------------------------------------------------------------------


def median(xs: list[float]) -> float:
    return float(statistics.median(xs))


def summary(samples: list[float]) -> dict:
    return {"median": median(samples), "min": float(min(samples)), "max": float(max(samples)), "samples": samples}


def cpu_snapshot() -> dict | None:
    """Machine-wide busy CPU time (/proc/stat) and this process's own (children included), in seconds."""
    import resource

    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    own = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        own += r.ru_utime + r.ru_stime
    return {"busy_s": (sum(fields[:8]) - idle) / tick, "own_s": own, "wall": time.perf_counter()}


def other_load(start: dict | None, end: dict | None, cores: int) -> float | None:
    """Average number of cores that other processes kept busy between two snapshots."""
    if start is None or end is None:
        return None
    wall = end["wall"] - start["wall"]
    other = (end["busy_s"] - start["busy_s"]) - (end["own_s"] - start["own_s"])
    return max(0.0, min(float(cores), other / wall)) if wall > 0 else None


def machine_info() -> dict:
    import gymnasium
    import numba
    import numpy

    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    try:
        from importlib.metadata import version

        spiel = version("open_spiel")
    except Exception:
        spiel = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "numba_threads": numba.get_num_threads(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "gymnasium": gymnasium.__version__,
        "open_spiel": spiel,
        "nice": os.nice(0) if hasattr(os, "nice") else None,
        "load_average_at_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "env": {k: os.environ[k] for k in sorted(os.environ) if k.startswith(("NUMBA_", "OMP_", "GOMP_"))},
    }


# --- 1. the engine alone ---------------------------------------------------------------------------


KERNEL_SOURCE = '''"""Generated by benchmarks/bench.py: its numba random-play loop (see _compile_kernels)."""
import numpy as np
from numba import njit

from solitaire_env import core
from solitaire_env.variant import SP_NCARDS


@njit(cache=True, nogil=True)
def xorshift(x):
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    return x


@njit(cache=True, nogil=True)
def random_play(deals, sp, actions, n_games, cap, seed, with_obs, obs_size):
    """Play n_games random legal games (deal g % len(deals)); return (moves, games at the cap, games won)."""
    mask = np.zeros(actions.shape[0], dtype=np.int8)
    obs = np.zeros(obs_size, dtype=np.int16)
    s = deals[0].copy()
    x = (np.uint64(seed) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
    if x == np.uint64(0):
        x = np.uint64(1)
    moves = 0
    capped = 0
    won = 0
    for g in range(n_games):
        s[:] = deals[g % deals.shape[0]]
        m = 0
        while m < cap:
            n = core.legal_mask(s, sp, actions, mask)
            if with_obs:
                core.observe(s, sp, obs)
            if n == 0:
                break
            x = xorshift(x)
            k = np.int64((x >> np.uint64(33)) % np.uint64(n))
            a = 0
            while mask[a] == 0 or k > 0:  # the k-th legal action
                if mask[a] != 0:
                    k -= 1
                a += 1
            core.apply_action(s, sp, actions, a)
            m += 1
        moves += m
        if m >= cap:
            capped += 1
        if core.foundation_cards(s, sp) == sp[SP_NCARDS]:
            won += 1
    return moves, capped, won


@njit(cache=True, nogil=True)
def pick_uniform(masks, seeds, out):
    """For every row, a uniformly random legal action (0 where none is legal); seeds advance in place."""
    for i in range(masks.shape[0]):
        row = masks[i]
        n = 0
        for a in range(row.shape[0]):
            n += row[a]
        x = xorshift(seeds[i])
        seeds[i] = x
        out[i] = 0
        if n == 0:
            continue
        k = np.int64((x >> np.uint64(33)) % np.uint64(n))
        for a in range(row.shape[0]):
            if row[a] != 0:
                if k == 0:
                    out[i] = a
                    break
                k -= 1
    return out
'''


def _compile_kernels():
    """The numba random-play loop, from a generated module named after the rules core's source.

    numba's on-disk cache of a function is invalidated only when that function's own file changes,
    yet the compiled loop contains the core's code; naming the module after a hash of the core (and
    of this loop) makes a changed core compile afresh instead of running stale cached code.
    """
    import hashlib
    import importlib.util

    from solitaire_env import core, variant

    digest = hashlib.sha1(KERNEL_SOURCE.encode())
    for module in (core, variant):
        digest.update(Path(module.__file__).read_bytes())
    name = f"bench_kernels_{digest.hexdigest()[:16]}"
    folder = Path(__file__).resolve().parent / "__pycache__"
    path = folder / f"{name}.py"
    try:
        folder.mkdir(exist_ok=True)
        if not path.exists():
            # Modules generated for an older core, and numba's cache of them.
            for old in [*folder.glob("bench_kernels_*"), *folder.glob("__pycache__/bench_kernels_*")]:
                old.unlink(missing_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(KERNEL_SOURCE)
            os.replace(tmp, path)
    except OSError:  # read-only checkout: compile in a temporary folder every run
        path = Path(tempfile.mkdtemp(prefix="solitaire-bench-")) / f"{name}.py"
        path.write_text(KERNEL_SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # numba's cache looks the module up by name when it loads
    spec.loader.exec_module(module)
    return module.random_play, module.pick_uniform


def bench_engine(reps: int, duration: float) -> dict:
    import numpy as np

    from solitaire_env import Game
    from solitaire_env.games import RANK_AND_FILE as V
    from solitaire_env.state import deal

    t0 = time.perf_counter()
    random_play, _ = _compile_kernels()
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


# --- 2. one env through gym.make -------------------------------------------------------------------


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


# --- 3. the batched vector env ---------------------------------------------------------------------


def bench_vector_env(ns: tuple[int, ...], reps: int, duration: float, split_kernels: bool) -> dict:
    import gymnasium as gym
    import numpy as np

    import solitaire_env  # noqa: F401
    from solitaire_env import core

    _, pick_uniform = _compile_kernels()
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

        # The compiled kernel alone on copies of the env's arrays (no Python around it): core.step_batch
        # as the env calls it and, where the core has both, its serial and threaded kernels (the data
        # for core.PARALLEL_MIN_BATCH). Repetitions alternate between the kernels.
        v = u.variant
        kernels = {"step_batch": core.step_batch}
        if split_kernels and hasattr(core, "step_batch_serial") and hasattr(core, "step_batch_parallel"):
            kernels.update(serial=core.step_batch_serial, parallel=core.step_batch_parallel)
        arrays = {
            name: (u.states.copy(), u.masks.copy(), u.codes.copy(), *(np.zeros(n, dtype=np.int64) for _ in range(4)))
            for name in kernels
        }
        kernel_rates: dict[str, list[float]] = {name: [] for name in kernels}
        for name, kernel in kernels.items():  # warm up (compile or load)
            states, masks, codes, gained, revealed, n_legal, found = arrays[name]
            kernel(states, v.spec, v.actions, np.full(n, -1, dtype=np.int64), masks, codes, gained, revealed,
                   n_legal, found)
        for _ in range(reps):
            for name, kernel in kernels.items():
                states, masks, codes, gained, revealed, n_legal, found = arrays[name]
                steps, kt = 0, 0.0
                t = time.perf_counter()
                while steps < 3 or time.perf_counter() - t < duration / (1 + len(kernels)):
                    acts = pick(masks).astype(np.int64)
                    acts[n_legal == 0] = -1
                    t0 = time.perf_counter()
                    kernel(states, v.spec, v.actions, acts, masks, codes, gained, revealed, n_legal, found)
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
    out["parallel_min_batch"] = getattr(core, "PARALLEL_MIN_BATCH", None)
    return out


# --- 4. OpenSpiel ----------------------------------------------------------------------------------


def bench_openspiel(reps: int, duration: float) -> dict:
    try:
        import pyspiel
    except Exception as err:  # optional dependency
        return {"available": False, "reason": f"open_spiel is not importable ({type(err).__name__}: {err})"}
    import numpy as np

    game = pyspiel.load_game("solitaire")
    uniforms = np.random.default_rng(0).random(1 << 20)
    size = len(uniforms) - 1

    def play(seconds: float) -> dict:
        k = steps = chance = games = 0
        step_time = 0.0
        state = game.new_initial_state()
        t = time.perf_counter()
        while True:
            if state.is_terminal():
                games += 1
                state = game.new_initial_state()
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                r, acc = uniforms[k], 0.0
                k = (k + 1) & size
                action = outcomes[-1][0]
                for a, p in outcomes:
                    acc += p
                    if r < acc:
                        action = a
                        break
                state.apply_action(action)
                chance += 1
                continue
            t0 = time.perf_counter()
            mask = state.legal_actions_mask()
            state.observation_tensor()
            t1 = time.perf_counter()
            legal = np.flatnonzero(mask)
            a = int(legal[int(uniforms[k] * len(legal))])
            k = (k + 1) & size
            t2 = time.perf_counter()
            state.apply_action(a)
            step_time += (t1 - t0) + (time.perf_counter() - t2)
            steps += 1
            if (steps & 63) == 0 and time.perf_counter() - t >= seconds:
                break
        dt = time.perf_counter() - t
        return {"steps_per_s": steps / dt, "step_only_steps_per_s": steps / step_time, "games": games,
                "steps": steps, "chance": chance}

    play(min(duration, 0.1))
    runs = [play(duration) for _ in range(reps)]
    steps = sum(r["steps"] for r in runs)
    return {
        "available": True,
        "game": str(game),
        "parameters": {k: str(v) for k, v in game.get_parameters().items()},
        "num_distinct_actions": game.num_distinct_actions(),
        "observation_tensor_size": game.observation_tensor_size(),
        "action_selection": "precomputed numpy uniforms over np.flatnonzero(legal_actions_mask())",
        "steps_per_s": summary([r["steps_per_s"] for r in runs]),
        "step_only_steps_per_s": summary([r["step_only_steps_per_s"] for r in runs]),
        "games_per_s": median([r["games"] / (r["steps"] / r["steps_per_s"]) for r in runs]),
        "steps_per_game": steps / max(1, sum(r["games"] for r in runs)),
        "chance_events_per_step": sum(r["chance"] for r in runs) / max(1, steps),
    }


# --- 5. memory -------------------------------------------------------------------------------------


def _per_env_arrays(u, n: int) -> dict[str, int]:
    import numpy as np

    return {k: int(v.nbytes) for k, v in vars(u).items()
            if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == n}


def bench_memory(n: int, rss: bool) -> dict:
    import gc
    import tracemalloc

    import gymnasium as gym

    import solitaire_env  # noqa: F401

    warm = gym.make_vec(ENV_ID, num_envs=1)  # compile / load everything first
    _, info = warm.reset(seed=0)
    warm.step(info["action_mask"].argmax(axis=1))
    warm.close()
    gc.collect()
    tracemalloc.start()
    env = gym.make_vec(ENV_ID, num_envs=n)
    _, info = env.reset(seed=0)
    env.step(info["action_mask"].argmax(axis=1))
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    top = tracemalloc.take_snapshot().statistics("lineno")[:6]
    tracemalloc.stop()
    u = env.unwrapped if hasattr(env, "unwrapped") else env
    arrays = _per_env_arrays(u, n)
    out: dict[str, Any] = {
        "num_envs": n,
        "state_bytes_per_game": u.states.nbytes / n,
        "state_shape": list(u.states.shape),
        "state_dtype": str(u.states.dtype),
        "per_env_arrays_bytes_per_game": sum(arrays.values()) / n,
        "per_env_arrays": {k: v / n for k, v in arrays.items()},
        "tracemalloc_bytes_per_game": current / n,
        "tracemalloc_peak_bytes_per_game": peak / n,
        "tracemalloc_top": [{"where": f"{Path(st.traceback[0].filename).name}:{st.traceback[0].lineno}",
                             "bytes_per_game": st.size / n} for st in top],
        "tracemalloc_note": "everything allocated by make_vec + reset + one step and still alive, incl. the "
        "last step's returned obs/info copies and one numpy Generator per sub-env",
    }
    env.close()
    # One numpy Generator per sub-env (the vector env keeps them for later deals): their share.
    from gymnasium.utils import seeding

    gc.collect()
    tracemalloc.start()
    rngs = [seeding.np_random(i)[0] for i in range(256)]
    out["numpy_generator_bytes_per_game"] = tracemalloc.get_traced_memory()[0] / len(rngs)
    tracemalloc.stop()
    del rngs
    if rss:
        probe = _run_probe(["--_probe-rss", str(RSS_N)], env_extra={})
        out["rss"] = probe
    else:
        out["rss"] = {"skipped": "quick mode"}
    return out


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def probe_rss(n: int) -> dict:
    """In a fresh process: RSS before and after creating, resetting and stepping an N-env batch."""
    import gc

    import gymnasium as gym

    import solitaire_env  # noqa: F401

    warm = gym.make_vec(ENV_ID, num_envs=1)
    _, info = warm.reset(seed=0)
    warm.step(info["action_mask"].argmax(axis=1))
    warm.close()
    del warm
    gc.collect()
    before = _rss_bytes()
    env = gym.make_vec(ENV_ID, num_envs=n)
    _, info = env.reset(seed=0)
    env.step(info["action_mask"].argmax(axis=1))
    gc.collect()
    after = _rss_bytes()
    return {"num_envs": n, "rss_before_bytes": before, "rss_after_bytes": after,
            "rss_growth_bytes_per_game": (after - before) / n}


# --- 6. first use ----------------------------------------------------------------------------------


def probe_first_use() -> dict:
    """Timed in a fresh process: import, make, reset, step."""
    t0 = time.perf_counter()
    import gymnasium as gym

    import solitaire_env  # noqa: F401

    t1 = time.perf_counter()
    env = gym.make(ENV_ID)
    t2 = time.perf_counter()
    _, info = env.reset(seed=0)
    t3 = time.perf_counter()
    env.step(int(info["action_mask"].argmax()))
    t4 = time.perf_counter()
    return {"import_s": t1 - t0, "make_s": t2 - t1, "reset_s": t3 - t2, "step_s": t4 - t3, "total_s": t4 - t0}


def _run_probe(args: list[str], env_extra: dict[str, str]) -> dict:
    env = dict(os.environ, **env_extra)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), *args], capture_output=True, text=True,
                          env=env, cwd=str(REPO), timeout=600)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"probe {args} failed:\n{proc.stderr[-2000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_wall_s"] = wall
    return result


def bench_first_use(reps: int) -> dict:
    root = Path(tempfile.mkdtemp(prefix="solitaire-bench-numba-"))
    cold, warm = [], []
    try:
        for rep in range(reps):
            cache = root / f"cache{rep}"
            cache.mkdir()
            cold.append(_run_probe(["--_probe-first-use"], {"NUMBA_CACHE_DIR": str(cache)}))
            if rep == 0:
                for _ in range(reps):
                    warm.append(_run_probe(["--_probe-first-use"], {"NUMBA_CACHE_DIR": str(cache)}))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    def agg(runs: list[dict]) -> dict:
        keys = ("import_s", "make_s", "reset_s", "step_s", "total_s", "process_wall_s")
        return {k: summary([r[k] for r in runs]) for k in keys}

    return {
        "what": "fresh python: import gymnasium + solitaire_env, gym.make, reset(seed=0), one step",
        "cold": agg(cold),
        "warm": agg(warm),
        "note": "total_s is timed inside the process (from before the imports); process_wall_s adds interpreter "
        "start-up and exit",
    }


# --- report ----------------------------------------------------------------------------------------


# --- 7. the solver ----------------------------------------------------------------------------------


def bench_solver(reps: int, nodes: int) -> dict:
    """Positions searched per second, on deals the solver cannot settle within ``nodes`` (a fixed workload).

    The search alone: without the two-deck games' agent guidance, whose playouts are not search positions.
    """
    from solitaire_env.solver import solve

    out: dict[str, Any] = {"nodes_per_solve": nodes}
    for game, seeds in (("rank_and_file", (14, 84)), ("rainbow", (5, 13))):  # not settled by the search in 60 s
        solve(game, seed=seeds[0], time_limit=None, max_nodes=1000, agent_guidance=False)  # compile or load
        rates = []
        for rep in range(reps):
            seed = seeds[rep % len(seeds)]
            r = solve(game, seed=seed, time_limit=None, max_nodes=nodes, agent_guidance=False)
            rates.append(r.nodes / r.seconds)
        out[game] = {"nodes_per_s": summary(rates), "seeds": list(seeds)}
    return out


def _fmt(x: float) -> str:
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 1:
        return f"{x:,.2f}"
    return f"{x:.3g}"


def targets(results: dict) -> dict:
    out: dict[str, Any] = {}
    spiel = results.get("openspiel", {})
    single = results["single_env"]["gym_make"]["steps_per_s"]["median"]
    if spiel.get("available"):
        ratio = single / spiel["steps_per_s"]["median"]
        out["single_env_vs_openspiel"] = {"what": "one gym.make env's steps/s over OpenSpiel solitaire's",
                                          "target": ">= 2x", "measured": ratio, "met": ratio >= 2.0}
    big = [v for k, v in results["vector_env"]["by_num_envs"].items() if int(k) >= 1024]
    if big:
        best = max(v["env_steps_per_s"]["median"] for v in big)
        out["vector_env_steps_per_s_at_1024_plus"] = {
            "what": "best batched-env env-steps/s at N >= 1024, obs and masks, a compiled uniform pick included",
            "target": ">= 1M/s",
            "measured": best, "met": best >= 1_000_000,
            "step_only_measured": max(v["step_only_env_steps_per_s"]["median"] for v in big),
        }
    state = results["memory"]["state_bytes_per_game"]
    out["state_bytes_per_game"] = {"what": "bytes of one game's state array", "target": "<= 1 KiB",
                                   "measured": state, "met": state <= 1024}
    first = results.get("first_use", {})
    if "cold" in first:
        cold = first["cold"]["total_s"]["median"]
        warm = first["warm"]["total_s"]["median"]
        out["first_use_cold_s"] = {"what": "import + gym.make + reset + step, empty numba cache (in process)",
                                   "target": "<= 10 s", "measured": cold, "met": cold <= 10,
                                   "process_wall_s": first["cold"]["process_wall_s"]["median"]}
        out["first_use_warm_s"] = {"what": "import + gym.make + reset + step, filled numba cache (in process)",
                                   "target": "<= 1 s", "measured": warm, "met": warm <= 1,
                                   "process_wall_s": first["warm"]["process_wall_s"]["median"]}
    return out


def table(results: dict) -> str:
    rows: list[tuple[str, str, str]] = []

    def add(label: str, value: float | str, unit: str = "") -> None:
        rows.append((label, value if isinstance(value, str) else _fmt(value), unit))

    def med(d: dict) -> float:
        return d["median"]

    def busy(sec: dict) -> str:
        x = sec.get("other_processes_cores")
        return f"  [other processes busy: {x:.2f} cores]" if x is not None and x > 0.05 else ""

    m = results["machine"]
    s = results["settings"]
    lines = [
        f"solitaire-env benchmark ({'quick' if s['quick'] else 'full'} run): {ENV_ID}",
        f"machine: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable, numba threads {m['numba_threads']}); "
        f"python {m['python']}, numpy {m['numpy']}, numba {m['numba']}, gymnasium {m['gymnasium']}, "
        f"open_spiel {m['open_spiel'] or 'not installed'}",
        f"each figure: median of {s['reps']} repetitions of ~{s['duration_s']} s; "
        f"load average at start {', '.join(f'{x:.2f}' for x in m['load_average_at_start'] or [])}",
    ]
    if m.get("nice"):
        lines.append(f"run at nice {m['nice']}")
    if m["env"]:
        lines.append("environment: " + ", ".join(f"{k}={v}" for k, v in m["env"].items()))
    other = m.get("other_processes_cores")
    if other is not None:
        lines.append(f"other processes kept {other:.2f} of {m['cores']} cores busy on average during the run")
        if other > 0.1:
            lines.append("WARNING: the machine was not quiet, so figures are low "
                         "(the batched env's numba threads suffer most)")
    lines.append("")
    e = results["engine"]
    rows.append((f"1. engine alone (numba random play; game = until stuck or {e['move_cap']} moves){busy(e)}", "", ""))
    add("  legal_mask + apply_action", med(e["numba"]["moves_per_s"]), "moves/s")
    add("  games", med(e["numba"]["games_per_s"]), f"games/s ({e['numba']['games_at_cap_fraction']:.1%} hit the cap)")
    add("  + observe every move", med(e["numba_with_observe"]["moves_per_s"]), "moves/s")
    add("  deal() (Python, every reset)", med(e["deals_per_s"]), "deals/s")
    add("  Python-driven via Game", med(e["python_game"]["moves_per_s"]), "moves/s")
    add("  Python-driven via Game", med(e["python_game"]["games_per_s"]), "games/s")
    se = results["single_env"]
    rows.append((f"2. one env, gym.make (default wrappers), obs + mask{busy(se)}", "", ""))
    add("  steps, cheap action pick + resets", med(se["gym_make"]["steps_per_s"]), "steps/s")
    add("  env.step alone", med(se["gym_make"]["step_only_steps_per_s"]), "steps/s")
    add("  unwrapped env, same loop", med(se["unwrapped"]["steps_per_s"]), "steps/s")
    add("  action_space.sample(mask=...) alone", med(se["action_space_sample_per_s"]), "calls/s")
    ve = results["vector_env"]
    rows.append((f"3. batched vector env, gym.make_vec (truncation at {ve['max_episode_steps']}){busy(ve)}", "", ""))
    for k, r in ve["by_num_envs"].items():
        add(f"  N={k:>5}: with action pick", med(r["env_steps_per_s"]), "env-steps/s")
        add(f"  N={k:>5}: env.step alone", med(r["step_only_env_steps_per_s"]), "env-steps/s")
        add(f"  N={k:>5}: action pick", med(r["action_select_ns_per_env_step"]), "ns/env-step")
        add(f"  N={k:>5}: autoreset, per sub-env", med(r["autoreset_us_per_sub_env"]),
            f"us (the step resetting all N: {r['autoreset_step_s'] * 1e3:,.1f} ms)")
        add(f"  N={k:>5}: core.step_batch alone", med(r["kernel_only_env_steps_per_s"]), "env-steps/s")
        for name in ("serial", "parallel"):
            if f"kernel_{name}_env_steps_per_s" in r:
                add(f"  N={k:>5}: core.step_batch_{name} alone", med(r[f"kernel_{name}_env_steps_per_s"]),
                    "env-steps/s")
    sp = results["openspiel"]
    if sp.get("available"):
        rows.append((f"4. OpenSpiel {sp['game']} from Python (mask + observation_tensor each step){busy(sp)}", "", ""))
        add("  steps, cheap action pick", med(sp["steps_per_s"]), "steps/s")
        add("  step alone (mask + obs + apply)", med(sp["step_only_steps_per_s"]), "steps/s")
        single = med(se["gym_make"]["steps_per_s"])
        add("  ratio: one gym.make env / OpenSpiel", single / med(sp["steps_per_s"]), "x")
        for k, r in ve["by_num_envs"].items():
            add(f"  ratio: vector env N={k} / OpenSpiel", med(r["env_steps_per_s"]) / med(sp["steps_per_s"]), "x")
    else:
        rows.append((f"4. OpenSpiel: skipped ({sp.get('reason', '')})", "", ""))
    mem = results["memory"]
    rows.append((f"5. memory per game, batched env (N={mem['num_envs']})", "", ""))
    add("  state array", mem["state_bytes_per_game"], f"bytes ({mem['state_dtype']} {mem['state_shape'][1]})")
    add("  all per-env arrays", mem["per_env_arrays_bytes_per_game"], "bytes")
    add("  tracemalloc (make_vec + reset + step)", mem["tracemalloc_bytes_per_game"], "bytes")
    add("    of which one numpy Generator per env", mem["numpy_generator_bytes_per_game"], "bytes")
    if "rss_growth_bytes_per_game" in mem["rss"]:
        rss = mem["rss"]
        add(f"  RSS growth, fresh process, N={rss['num_envs']}", rss["rss_growth_bytes_per_game"], "bytes")
    fu = results["first_use"]
    if "cold" in fu:
        rows.append(("6. first use: import + gym.make + reset + step, fresh process", "", ""))
        add("  cold numba cache (in process)", med(fu["cold"]["total_s"]), "s")
        add("  cold numba cache (process wall)", med(fu["cold"]["process_wall_s"]), "s")
        add("  warm numba cache (in process)", med(fu["warm"]["total_s"]), "s")
        add("  warm numba cache (process wall)", med(fu["warm"]["process_wall_s"]), "s")
    else:
        rows.append((f"6. first use: skipped ({fu.get('skipped', '')})", "", ""))
    so = results.get("solver")
    if so:
        rows.append((f"7. solver, {so['nodes_per_solve']:,} positions per solve (deals it cannot settle){busy(so)}",
                     "", ""))
        for game in ("rank_and_file", "rainbow"):
            add(f"  {game} (deals {', '.join(map(str, so[game]['seeds']))})", med(so[game]["nodes_per_s"]),
                "positions/s")
    t = results["targets"]
    if t:
        rows.append(("targets (measured, not asserted)", "", ""))
        for k, v in t.items():
            rows.append((f"  {k} {v['target']}", _fmt(v["measured"]), "met" if v["met"] else "NOT met"))
    w0 = max(len(r[0]) for r in rows if r[1] or r[2])
    w1 = max(len(r[1]) for r in rows)
    for label, value, unit in rows:
        if not value and not unit:
            lines.append(label)
        else:
            lines.append(f"{label:<{w0}}  {value:>{w1}}  {unit}".rstrip())
    lines.append(f"total run time {results['settings']['total_s']:.1f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny durations, N up to 64, no cold start (for CI)")
    parser.add_argument("--json", metavar="OUT.json", help="also write the results as JSON here")
    parser.add_argument("--reps", type=int, help="repetitions per figure (default 5, quick 3)")
    parser.add_argument("--duration", type=float, help="seconds per repetition (default 1.0, quick 0.05)")
    parser.add_argument("--_probe-first-use", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--_probe-rss", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args._probe_first_use:
        print(json.dumps(probe_first_use()))
        return 0
    if args._probe_rss:
        print(json.dumps(probe_rss(args._probe_rss)))
        return 0

    start = time.perf_counter()
    cpu_start = cpu_snapshot()
    reps = args.reps or (3 if args.quick else 5)
    duration = args.duration or (0.05 if args.quick else 1.0)
    ns = VECTOR_NS_QUICK if args.quick else VECTOR_NS_FULL
    results: dict[str, Any] = {
        "machine": machine_info(),
        "settings": {"quick": bool(args.quick), "reps": reps, "duration_s": duration, "env_id": ENV_ID,
                     "move_cap": MOVE_CAP, "vector_num_envs": list(ns)},
    }
    cores = os.cpu_count() or 1

    def section(fn, *a) -> dict:
        before = cpu_snapshot()
        out = fn(*a)
        out["other_processes_cores"] = other_load(before, cpu_snapshot(), cores)
        return out

    results["engine"] = section(bench_engine, reps, duration)
    results["single_env"] = section(bench_single_env, reps, duration)
    results["vector_env"] = section(bench_vector_env, ns, reps, duration, not args.quick)
    results["openspiel"] = section(bench_openspiel, reps, duration)
    spiel = results["openspiel"]
    if spiel.get("available"):
        base = spiel["steps_per_s"]["median"]
        spiel["ratio_single_env"] = results["single_env"]["gym_make"]["steps_per_s"]["median"] / base
        single_step = results["single_env"]["gym_make"]["step_only_steps_per_s"]["median"]
        spiel["ratio_single_env_step_only"] = single_step / spiel["step_only_steps_per_s"]["median"]
        spiel["ratio_vector_env"] = {
            k: v["env_steps_per_s"]["median"] / base for k, v in results["vector_env"]["by_num_envs"].items()
        }
    results["memory"] = section(bench_memory, max(ns), not args.quick)
    results["solver"] = section(bench_solver, reps, 20_000 if args.quick else 1_000_000)
    results["first_use"] = {"skipped": "quick mode"} if args.quick else bench_first_use(3)
    results["targets"] = targets(results)
    results["machine"]["load_average_at_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    results["machine"]["other_processes_cores"] = other_load(cpu_start, cpu_snapshot(), cores)
    results["settings"]["total_s"] = time.perf_counter() - start

    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
