"""The shipped policies (agents/pretrained/<game>.zip): each loads, plays a deal in its own env options,
and is small."""

import json
import os

import pytest

pytest.importorskip("sb3_contrib")
import torch  # noqa: E402

from solitaire_env.agents import make_agent, pretrained_path  # noqa: E402
from solitaire_env.agents.move_scorer import MoveScorerPolicy  # noqa: E402
from solitaire_env.envs.registration import ENV_IDS  # noqa: E402
from solitaire_env.tools.evaluation import evaluate  # noqa: E402

torch.set_num_threads(1)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_each_shipped_policy_loads_and_plays_a_deal(env_id):
    path = pretrained_path(env_id)
    assert os.path.getsize(path) < 5 * 2**20
    with open(path.removesuffix(".zip") + ".json") as f:
        meta = json.load(f)
    assert meta["env_kwargs"] == {"obs_mode": "piles", "action_features": True, "no_revisit": True}
    assert os.path.isfile(os.path.join(os.path.dirname(__file__), "..", meta["config"]))
    agent = make_agent("pretrained", env_id, seed=0)
    assert isinstance(agent.model.policy, MoveScorerPolicy)
    assert agent.env_kwargs == meta["env_kwargs"]
    result = evaluate(env_id, {"pretrained": agent}, episodes=1, seed=0, max_episode_steps=300)
    assert result.agent_env_kwargs == {"pretrained": meta["env_kwargs"]}
    summary = result.summaries["pretrained"]
    assert summary.episodes == 1 and summary.mean_length > 10 and summary.mean_foundation_cards > 0
    assert "pretrained plays with the env options" in result.table()


def test_an_agent_option_that_contradicts_the_env_options_is_refused():
    agent = make_agent("pretrained", "Rainbow-v0")
    with pytest.raises(ValueError, match="plays with no_revisit=True, but env_kwargs set no_revisit=False"):
        evaluate("Rainbow-v0", {"pretrained": agent}, episodes=1, env_kwargs={"no_revisit": False})
