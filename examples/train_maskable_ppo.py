"""Train MaskablePPO on the batched Rainbow env, then watch it play one deal.

Run: python examples/train_maskable_ppo.py   (about a minute on a laptop CPU)
For configs, checkpoints and evaluation callbacks use `solitaire-env train configs/quick.yaml`.
"""

import gymnasium as gym
import torch
from sb3_contrib import MaskablePPO

from solitaire_env.agents.policies import CardCodesPolicy
from solitaire_env.envs.sb3 import make_sb3_vec_env

torch.set_num_threads(1)  # small networks: one thread is fastest (docs/design.md)
venv = make_sb3_vec_env("Rainbow-v0", n_envs=16, seed=0)  # 16 games stepped in one compiled call
model = MaskablePPO(CardCodesPolicy, venv, n_steps=128, batch_size=512, ent_coef=0.01, seed=0, verbose=1)
model.learn(total_timesteps=50_000)
model.save("rainbow_ppo.zip")

env = gym.make("Rainbow-v0")
obs, info = env.reset(seed=7)
done = False
while not done:
    action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks(), deterministic=True)
    obs, reward, terminated, truncated, info = env.step(action)
    done = terminated or truncated
print(f"deal 7: {info['foundation_cards']}/52 cards on the foundations{' (won)' if info['is_won'] else ''}")
