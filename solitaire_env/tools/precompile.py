"""Compile the rules engine ahead of first use: ``python -m solitaire_env.tools.precompile``.

The engine and the solver are numba functions compiled on first call and saved to disk (``cache=True``;
:mod:`solitaire_env.engine.jit_cache` keeps those caches in step with the sources). On a fresh checkout
the first process to play a game compiles them, a few minutes on one core, and every process started
meanwhile compiles them too: a test run's workers, the command-line runs its tests start. This module
compiles them once, before: it plays a few moves of every game in each of the ways the package plays
(single and batched envs, both observations, the agents, the solver), in two processes that split the
work (:data:`PARTS`), so both cores compile and the caches are written when the tests start.
``.ci/run`` calls it; a user who wants no pause on first use can too. A second call loads the caches
and takes seconds.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

MODULE = "solitaire_env.tools.precompile"
PILES = {"obs_mode": "piles", "action_features": True, "no_revisit": True}


def _first_legal(mask) -> int:
    """The lowest legal action (0 where none is: a finished game, reset by the next step)."""
    import numpy as np

    legal = np.flatnonzero(mask)
    return int(legal[0]) if len(legal) else 0


def _play(env, steps: int, batched: bool = False) -> None:
    """A few moves of ``env``, each the lowest legal action (of every game, ``batched``)."""
    import numpy as np

    obs, info = env.reset(seed=1)
    for _ in range(steps):
        if batched:  # (a batched env resets its finished games itself)
            obs, *_, info = env.step(np.array([_first_legal(m) for m in info["action_mask"]]))
            continue
        obs, _, terminated, truncated, info = env.step(_first_legal(info["action_mask"]))
        if terminated or truncated:
            break
    env.close()


def compile_vector_envs(steps: int = 20) -> None:
    """Every game's batched env, both observations, with and without no_revisit."""
    import gymnasium as gym

    import solitaire_env  # noqa: F401  (registers the ids)
    from solitaire_env.envs.registration import ENV_IDS

    for env_id in ENV_IDS:
        for options in ({}, PILES):
            _play(gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", **options), steps,
                  batched=True)


def compile_single_envs(steps: int = 20) -> None:
    """Every game's env, both observations, with and without no_revisit, and its :class:`Game`."""
    import gymnasium as gym

    import solitaire_env  # noqa: F401
    from solitaire_env.engine.game import Game
    from solitaire_env.envs.registration import ENV_IDS

    for env_id, (_, variant) in ENV_IDS.items():
        for options in ({}, PILES):
            _play(gym.make(env_id, **options), steps)
        game = Game(variant, seed=1)
        for _ in range(steps):
            legal = game.legal_actions()
            if not len(legal) or not game.is_legal(int(legal[0])):
                break
            game.play(int(legal[0]))
        game.observation()


def compile_planners(moves: int = 3) -> None:
    """Every game's solver (a small budget, a found line replayed) and rule-based agents."""
    import gymnasium as gym

    import solitaire_env  # noqa: F401
    from solitaire_env.agents import make_agent
    from solitaire_env.envs.registration import ENV_IDS
    from solitaire_env.solver import solve

    for env_id, (_, variant) in ENV_IDS.items():
        solve(variant, seed=1, max_nodes=20_000, time_limit=None)
        for name in ("heuristic", "search:2x100", "plan:2x100x2"):
            env = gym.make(env_id)
            obs, info = env.reset(seed=1)
            agent = make_agent(name, env_id, seed=0)
            agent.reset(seed=0)
            for _ in range(moves):
                obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
                if terminated or truncated:
                    break
            env.close()


# The two halves, run side by side: each compiles what its calls reach (the core functions both need
# are compiled in both, a small overlap). The single envs with the piles observation and the position
# history compile longest (about 40 s of one core from cold), so they have a half of their own; the solver
# goes first in the other half, before the batched envs, as that order measured fastest (52 s against
# 67 s with the solver after the single envs).
PARTS = {"vector": (compile_planners, compile_vector_envs), "single": (compile_single_envs,)}


def precompile(jobs: int = 2) -> dict[str, float]:
    """Compile the engine once (see the module docstring): the halves of :data:`PARTS` in ``jobs``
    processes at a time. Returns each half's wall seconds; raises ``RuntimeError`` if one fails."""
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    seconds: dict[str, float] = {}
    pending = list(PARTS)
    while pending:
        batch, pending = pending[:jobs], pending[jobs:]
        start = time.perf_counter()
        procs = {part: subprocess.Popen([sys.executable, "-m", MODULE, "--part", part]) for part in batch}
        while procs:
            for part, proc in list(procs.items()):
                if proc.poll() is None:
                    continue
                if proc.returncode != 0:
                    for other in procs.values():
                        other.kill()
                    raise RuntimeError(f"precompile: part {part!r} failed (exit code {proc.returncode})")
                seconds[part] = round(time.perf_counter() - start, 1)
                del procs[part]
            time.sleep(0.1)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}", description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="processes compiling at once (default 2)")
    parser.add_argument("--part", choices=list(PARTS), help=argparse.SUPPRESS)  # one half, in this process
    args = parser.parse_args(argv)
    if args.part:
        for compile_part in PARTS[args.part]:
            compile_part()
        return 0
    start = time.perf_counter()
    seconds = precompile(args.jobs)
    print(f"precompiled in {time.perf_counter() - start:.1f} s ("
          + ", ".join(f"{part} {s} s" for part, s in seconds.items()) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
