"""8. ``options``: what the env options cost, the batched env at one N and the single env, each against
the default env, measured two ways.

**Own games** (``vector_env``, ``single_env``): every option's env and a default env each play their
own random game (uniform legal picks, as in section 3, the pick's time not counted) in alternating
slices of each repetition, so a change in the machine's load hits both alike; the figure is the
median over repetitions of each repetition's ratio. The batched envs first play ``WARM_UP`` steps
untimed: every game is dealt at the same step, and the first few hundred steps of a game are not
the mix of early, long and ended games that the env steps through afterwards. The options change the games played: with
``no_revisit`` random play avoids going back and forth, reaches later positions, where the default
step itself is slower, and ends stuck instead of at the time limit. So this ratio holds both the
option's cost and the cost of other positions.

**Same games** (``same_games``, batched env): the default env plays the very moves the option's env
picks, from the same deals: both deal the sub-envs whose episode ended their next game at once
(``reset_envs``, as the SB3 adapter does; timed, as autoreset is), so the two step through identical
positions (checked at the end) and the ratio is the option's own cost. The two envs' steps
alternate, which of them goes first changing each step.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.common import ENV_ID, median, summary

WARM_UP = 300  # batched steps before the first timed slice: the repetitions time the steady state
OPTIONS: dict[str, dict[str, Any]] = {
    "track_revisits": {"track_revisits": True},
    "no_revisit": {"no_revisit": True},
    "obs_mode=piles": {"obs_mode": "piles"},
    "action_features": {"action_features": True},
}


def bench_options(num_envs: int, reps: int, duration: float) -> dict:
    import gymnasium as gym
    import numpy as np

    import solitaire_env  # noqa: F401
    from benchmarks.common import pick_uniform

    out: dict[str, Any] = {"num_envs": num_envs, "options": {name: dict(kw) for name, kw in OPTIONS.items()},
                           "vector_env": {}, "single_env": {}}
    seeds = np.arange(1, num_envs + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    picked = np.empty(num_envs, dtype=np.int64)

    def vector_runner(kwargs: dict) -> Any:
        env = gym.make_vec(ENV_ID, num_envs=num_envs, **kwargs)
        _, info = env.reset(seed=0)
        state = {"info": info, "seeds": seeds.copy()}

        def run(seconds: float) -> float:
            steps, spent, t = 0, 0.0, time.perf_counter()
            while steps < 3 or time.perf_counter() - t < seconds:
                actions = pick_uniform(state["info"]["action_mask"], state["seeds"], picked)
                t0 = time.perf_counter()
                _, _, _, _, state["info"] = env.step(actions)
                spent += time.perf_counter() - t0
                steps += 1
            return steps * num_envs / spent

        for _ in range(WARM_UP):  # compile or load, and past the first steps of games all dealt at once
            actions = pick_uniform(state["info"]["action_mask"], state["seeds"], picked)
            _, _, _, _, state["info"] = env.step(actions)
        return run

    def single_runner(kwargs: dict) -> Any:
        env = gym.make(ENV_ID, **kwargs)
        rng = np.random.default_rng(0)
        state = {"info": env.reset(seed=0)[1]}

        def run(seconds: float) -> float:
            steps, spent, t = 0, 0.0, time.perf_counter()
            while steps < 3 or time.perf_counter() - t < seconds:
                legal = np.flatnonzero(state["info"]["action_mask"])
                t0 = time.perf_counter()
                if legal.size:
                    _, _, terminated, truncated, state["info"] = env.step(int(legal[rng.integers(legal.size)]))
                else:
                    terminated = truncated = True
                if terminated or truncated:
                    state["info"] = env.reset()[1]
                spent += time.perf_counter() - t0
                steps += 1
            return steps / spent

        run(0.0)
        return run

    for kind, make in (("vector_env", vector_runner), ("single_env", single_runner)):
        base = make({})
        for name, kwargs in OPTIONS.items():
            run = make(kwargs)
            base_rates, rates, ratios = [], [], []
            for _ in range(reps):
                b = base(duration / 2)
                r = run(duration / 2)
                base_rates.append(b)
                rates.append(r)
                ratios.append(r / b)
            out[kind][name] = {"steps_per_s": summary(rates), "default_steps_per_s": summary(base_rates),
                               "ratio_to_default": summary(ratios)}
    out["no_revisit_ratio_at_num_envs"] = median([x for x in out["vector_env"]["no_revisit"]["ratio_to_default"]
                                                  ["samples"]])
    out["same_games"] = {}
    for name, kwargs in OPTIONS.items():
        ratios = same_games_ratios(num_envs, kwargs, reps, duration)
        out["same_games"][name] = {"ratio_to_default": summary(ratios)}
    out["no_revisit_same_games_ratio_at_num_envs"] = out["same_games"]["no_revisit"]["ratio_to_default"]["median"]
    return out


def same_games_ratios(num_envs: int, kwargs: dict, reps: int, duration: float) -> list[float]:
    """Per repetition, the default batched env's time over the option's env's for the same moves from
    the same deals (module doc), each repetition about ``duration`` seconds of stepping."""
    import gymnasium as gym
    import numpy as np

    import solitaire_env  # noqa: F401
    from benchmarks.common import pick_uniform

    option, default = gym.make_vec(ENV_ID, num_envs=num_envs, **kwargs), gym.make_vec(ENV_ID, num_envs=num_envs)
    option.reset(seed=0)
    default.reset(seed=0)
    seeds = np.arange(1, num_envs + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    picked = np.empty(num_envs, dtype=np.int64)
    ended = np.zeros(num_envs, dtype=bool)
    ratios = []
    for rep in range(reps + 1):  # the first one warms up (compile or load)
        spent = {"option": 0.0, "default": 0.0}
        steps = 0
        while steps < 3 or spent["option"] + spent["default"] < duration:
            order = (option, default) if steps % 2 else (default, option)
            if ended.any():
                for env in order:
                    t0 = time.perf_counter()
                    env.reset_envs(np.flatnonzero(ended))
                    spent["option" if env is option else "default"] += time.perf_counter() - t0
            actions = pick_uniform(option.masks, seeds, picked).copy()
            for env in order:
                t0 = time.perf_counter()
                result = env.step(actions)
                spent["option" if env is option else "default"] += time.perf_counter() - t0
                if env is option:
                    ended = result[2] | result[3]
            steps += 1
        if rep > 0:
            ratios.append(spent["default"] / spent["option"])
    if not np.array_equal(option.states, default.states):
        raise RuntimeError("the option's env and the default env reached different positions")
    option.close()
    default.close()
    return ratios
