"""Random and heuristic rollouts on every game, with the action mask.

Run: python examples/quickstart.py
"""

import gymnasium as gym

import solitaire_env  # noqa: F401  (registers the envs)
from solitaire_env.agents import HeuristicAgent, RandomAgent

for env_id in ("RankAndFile-v0", "NumberTen-v0", "Rainbow-v0"):
    env = gym.make(env_id)
    variant = env.unwrapped.variant
    for agent in (RandomAgent(seed=0), HeuristicAgent(variant, seed=0)):
        obs, info = env.reset(seed=42)  # deal number 42, the same for both agents
        agent.reset(seed=0)
        steps, done = 0, False
        while not done:
            action = agent.act(obs, info)  # always one of the legal actions in info["action_mask"]
            obs, reward, terminated, truncated, info = env.step(action)
            steps, done = steps + 1, terminated or truncated
        print(f"{env_id:15} {type(agent).__name__:15} {info['foundation_cards']:3}/{variant.n_cards} cards "
              f"in {steps} steps{' (won)' if info['is_won'] else ''}")
    print(env.unwrapped.game.render_text())  # the last table, as text
