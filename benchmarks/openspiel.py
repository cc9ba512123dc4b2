"""4. ``openspiel``: OpenSpiel's ``solitaire`` (Klondike; an optional dependency, skipped when ``pyspiel``
cannot be imported), random legal play from Python in this process, each decision step calling
``legal_actions_mask()`` and ``observation_tensor()``; chance nodes are sampled from
``chance_outcomes()`` and are not counted as steps.
"""

from __future__ import annotations

import time

from benchmarks.common import median, summary


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

