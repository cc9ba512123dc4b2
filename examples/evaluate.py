"""Compare agents on the same deals, with 95% Wilson intervals, and save every episode.

Run: python examples/evaluate.py [CHECKPOINT.zip]   (CHECKPOINT: e.g. rainbow_ppo.zip from train_maskable_ppo.py)
The same as: solitaire-env evaluate --env Rainbow-v0 --agent random --agent heuristic --episodes 200 --seed 0
"""

import sys

from solitaire_env.agents import make_agent
from solitaire_env.tools.evaluation import evaluate

env_id = "Rainbow-v0"
names = ["random", "heuristic"] + sys.argv[1:]
agents = {name: make_agent(name, env_id, seed=0) for name in names}
result = evaluate(env_id, agents, episodes=200, seed=0, progress=True)
print(result.table())
result.write_csv("rainbow_episodes.csv")  # one row per episode, for your own analysis
