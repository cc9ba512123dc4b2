"""The shipped policies (agents/pretrained/<game>.zip): each loads, is small, and plays validation deals
10000-10019 greedily in its own env options to exactly the wins and foundation cards pinned below."""

import json
import os

import pytest
import yaml

pytest.importorskip("sb3_contrib")
import torch  # noqa: E402

from solitaire_env.agents import make_agent, pretrained_path  # noqa: E402
from solitaire_env.agents.move_scorer import MoveScorerPolicy  # noqa: E402
from solitaire_env.tools.evaluation import evaluate  # noqa: E402

torch.set_num_threads(1)

DEALS = (10000, 20)  # validation deals 10000-10019
MAX_STEPS = 500  # below the registered limits, to keep the test short (Rank and File loses one late win)
# env id -> (wins, foundation cards summed over the deals), measured by the test's own call (the same in
# repeated runs: greedy play, one torch thread). A change is a change in the policies or in what they see.
# (Klondike draw 3: the env option draw=3 picks klondike_draw3.zip.)
PINNED = {"RankAndFile-v0": (13, 1662), "NumberTen-v0": (14, 1631), "Rainbow-v0": (7, 553), "FreeCell-v0": (10, 572),
          "Klondike-v0": (9, 534), "Klondike-v0 draw 3": (2, 244)}


@pytest.mark.parametrize("case", list(PINNED))  # every game ships one
def test_each_shipped_policy_loads_and_wins_the_pinned_deals(case):
    env_id, options = case.split(" draw ")[0], ({"draw": 3} if case.endswith("draw 3") else {})
    path = pretrained_path(env_id, options)
    assert os.path.getsize(path) < 5 * 2**20
    with open(path.removesuffix(".zip") + ".json") as f:
        meta = json.load(f)
    with open(os.path.join(os.path.dirname(__file__), "..", meta["config"])) as f:
        recipe = yaml.safe_load(f)
    assert recipe["env_id"] == env_id and meta["env_kwargs"] == recipe["env_kwargs"]  # played as trained
    assert {"obs_mode": "piles", "action_features": True, "no_revisit": True}.items() <= meta["env_kwargs"].items()
    agent = make_agent("pretrained", env_id, seed=0, env_kwargs=options)
    assert isinstance(agent.model.policy, MoveScorerPolicy)
    assert agent.env_kwargs == meta["env_kwargs"]
    first, n = DEALS
    result = evaluate(env_id, {"pretrained": agent}, episodes=n, seed=first, max_episode_steps=MAX_STEPS,
                      progress=False)
    assert result.agent_env_kwargs == {"pretrained": meta["env_kwargs"]}
    assert "pretrained plays with the env options" in result.table()
    assert result.deals == list(range(first, first + n))
    wins = sum(r.won for r in result.records)
    cards = sum(r.foundation_cards for r in result.records)
    assert (wins, cards) == PINNED[case], [(r.deal_seed, r.won, r.foundation_cards) for r in result.records]


def test_an_agent_option_that_contradicts_the_env_options_is_refused():
    agent = make_agent("pretrained", "Rainbow-v0")
    with pytest.raises(ValueError, match="plays with no_revisit=True, but env_kwargs set no_revisit=False"):
        evaluate("Rainbow-v0", {"pretrained": agent}, episodes=1, env_kwargs={"no_revisit": False})


def test_the_klondike_policy_is_refused_the_draw_3_game_it_was_not_trained_on():
    agent = make_agent("pretrained", "Klondike-v0")
    with pytest.raises(ValueError, match="plays with draw=1, but env_kwargs set draw=3"):
        evaluate("Klondike-v0", {"pretrained": agent}, episodes=1, env_kwargs={"draw": 3})


def test_a_game_without_a_shipped_policy_says_so(tmp_path, monkeypatch):
    import solitaire_env.agents as agents

    monkeypatch.setattr(agents, "PRETRAINED_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="no pretrained policy is shipped for FreeCell-v0"):
        pretrained_path("FreeCell-v0")


def test_a_draw_3_game_gets_the_draw_3_policy_and_a_rule_set_without_one_says_so(tmp_path, monkeypatch):
    import shutil

    import solitaire_env.agents as agents

    draw3 = make_agent("pretrained", "Klondike-v0", env_kwargs={"draw": 3})
    assert draw3.env_kwargs["draw"] == 3
    assert make_agent("pretrained", "Klondike-v0").env_kwargs["draw"] == 1
    # The option it was picked by is its own too: played batched and one game at a time (recorded).
    for record_dir in (None, tmp_path / "recordings"):  # (evaluate makes the folder)
        result = evaluate("Klondike-v0", {"pretrained": draw3}, episodes=2, env_kwargs={"draw": 3},
                          record_dir=record_dir, max_episode_steps=50, progress=False)
        assert len(result.records) == 2
    assert sorted(p.name for p in (tmp_path / "recordings").iterdir()) == ["pretrained-deal-0.json",
                                                                         "pretrained-deal-1.json"]
    shutil.copy(pretrained_path("Klondike-v0"), tmp_path)  # draw 1's alone
    monkeypatch.setattr(agents, "PRETRAINED_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="no pretrained policy is shipped for Klondike-v0 with draw=3"):
        make_agent("pretrained", "Klondike-v0", env_kwargs={"draw": 3})
