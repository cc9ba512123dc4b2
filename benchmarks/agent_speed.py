"""The heuristic agent's time a move (docs/design.md, "Rules kept twice, and checked").

    python benchmarks/agent_speed.py [EPISODES]

Plays ``EPISODES`` (default 12) seeded deals (0, 1, ...) of each seed game with the heuristic agent,
after one warm-up episode that compiles what it calls, and prints milliseconds a move (the env's step
included). The agent looks ahead through the engine on the visible table, so this is the cost of that
look-ahead.
"""

from __future__ import annotations

import sys
import time


def main(episodes: int = 12) -> None:
    import gymnasium as gym

    import solitaire_env  # noqa: F401  (registers the envs)
    from solitaire_env.agents import make_agent

    for env_id in ("RankAndFile-v0", "NumberTen-v0", "Rainbow-v0"):
        env, agent = gym.make(env_id), make_agent("heuristic", env_id)
        moves, start = 0, 0.0
        for seed in range(-1, episodes):  # deal -1 (i.e. 10**6): the warm-up, not timed
            obs, info = env.reset(seed=seed if seed >= 0 else 10**6)
            agent.reset(seed=0)
            if seed == 0:
                moves, start = 0, time.perf_counter()
            done = False
            while not done:
                obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
                moves += 1
                done = terminated or truncated
        elapsed = time.perf_counter() - start
        print(f"{env_id}: heuristic, deals 0-{episodes - 1}, {moves} moves, {1e3 * elapsed / moves:.2f} ms a move")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 12)
