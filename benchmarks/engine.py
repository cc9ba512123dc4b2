"""1. ``engine``: random legal play on one ``int8`` state array, ``core.legal_mask`` + ``core.apply_action``
in a numba loop (xorshift64 generator inside numba, :mod:`benchmarks.kernels`). Random play in Rank and
File almost never gets stuck (it shuffles runs back and forth forever), so a "game" ends when no move is
legal or after ``MOVE_CAP`` moves. Deals are made beforehand (``deal()`` is timed on its own). Also: the
same loop with ``core.observe`` every move, and the same play driven from Python through
:class:`solitaire_env.Game`, for reference.
"""

from __future__ import annotations

import time

from benchmarks.common import MOVE_CAP, median, summary


def bench_engine(reps: int, duration: float) -> dict:
    import numpy as np

    from solitaire_env import Game
    from solitaire_env.engine.games import RANK_AND_FILE as V
    from solitaire_env.engine.state import deal

    t0 = time.perf_counter()
    from benchmarks.kernels import random_play
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

