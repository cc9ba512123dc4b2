"""MoveScorerPolicy (agents/move_scorer.py): it plugs into MaskablePPO, reads only the observation, and
scores exactly the allowed moves."""

import random

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

import solitaire_env  # noqa: E402,F401
from solitaire_env.agents.move_scorer import MoveScorerPolicy  # noqa: E402
from solitaire_env.envs.registration import ENV_IDS  # noqa: E402
from solitaire_env.envs.sb3 import make_sb3_vec_env  # noqa: E402
from tests.test_agents import _shuffle_hidden  # noqa: E402

torch.set_num_threads(1)  # small networks: threads only add contention on a shared machine
KWARGS = {"obs_mode": "piles", "action_features": True, "no_revisit": True}


def _model(env_id: str, draw_card: bool = False, **kwargs):
    venv = make_sb3_vec_env(env_id, n_envs=2, seed=0, **KWARGS)
    return MaskablePPO(MoveScorerPolicy, venv, n_steps=32, batch_size=32, n_epochs=1, device="cpu", seed=0,
                       policy_kwargs={"dim": 16, "hidden": 32, "draw_card": draw_card}, **kwargs)


def _logits(policy, obs) -> np.ndarray:
    with torch.no_grad():
        tensor = policy.obs_to_tensor(obs)[0]
        return policy.get_distribution(tensor).distribution.logits.numpy()


@pytest.mark.parametrize("env_id,draw_card", [(e, False) for e in ENV_IDS if e != "FreeCell-v0"]  # none hidden
                         + [("Klondike-v0", True), ("Rainbow-v0", True)])
def test_hidden_cards_never_change_the_policy(env_id, draw_card):
    """Twin positions (the face-down cards and the unseen stock dealt differently) give the same
    observation and the same action logits, at every step of a game."""
    policy = _model(env_id, draw_card).policy
    env, twin_env, here = gym.make(env_id, **KWARGS), gym.make(env_id, **KWARGS), gym.make(env_id, **KWARGS)
    rng = random.Random(0)
    obs, info = env.reset(seed=3)
    compared = differed = 0
    for _ in range(30):
        state = env.unwrapped.get_state()
        twin = _shuffle_hidden(state, rng)
        differed += twin != state
        a_obs, _ = here.reset(options={"state": state})  # both from a fresh history
        b_obs, _ = twin_env.reset(options={"state": twin})
        for key in a_obs:
            assert np.array_equal(a_obs[key], b_obs[key]), key
        np.testing.assert_array_equal(_logits(policy, a_obs), _logits(policy, b_obs))
        compared += 1
        legal = np.flatnonzero(info["action_mask"])
        obs, _, terminated, truncated, info = env.step(int(rng.choice(list(legal))))
        if terminated or truncated:
            break
    assert compared >= 20 and differed >= 10


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_pooling_over_occupied_slots_equals_pooling_over_every_slot(env_id):
    """pool_slots skips the empty slots; computed densely (every slot a vector, the empty ones zeroed,
    summed per place by a matrix product) the sums are the same."""
    from solitaire_env.engine import features as F

    extractor = _model(env_id).policy.features_extractor
    venv = gym.make_vec(env_id, num_envs=8, **KWARGS)
    obs, info = venv.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(40):
        # (a sub-env that just ended has no legal move: any id, its next step resets it)
        obs, _, _, _, info = venv.step(np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0
                                                 for m in info["action_mask"]]))
    cards = torch.as_tensor(obs["cards"], dtype=torch.float32)
    state, rank, suit = (cards[..., c].long() for c in (F.F_STATE, F.F_RANK, F.F_SUIT))
    token = torch.where(rank > 0, (suit - 1) * 13 + rank, 53 + state)
    cols = torch.stack((cards[..., F.F_MOVABLE], cards[..., F.F_UP], cards[..., F.F_HEIGHT].clamp(max=13) / 13), -1)
    present = (state > 0).unsqueeze(-1).float()
    with torch.no_grad():
        slot = torch.relu(extractor.token(token) + extractor.slot(cols)) * present
        area, pile = cards[0, :, F.F_AREA].long(), cards[0, :, F.F_PILE].long()
        area[area == F.AREA_CELL] = F.AREA_RESERVE  # free cells pool in the reserve's place
        group = torch.where(area == F.AREA_TABLEAU, pile, extractor.n_piles + area)
        member = torch.nn.functional.one_hot(group, extractor.n_piles + 4).float().T
        pooled, counts = extractor.pool_slots(cards)
    torch.testing.assert_close(pooled, member @ slot)
    torch.testing.assert_close(counts, member @ present)
    assert 0 < present.mean() < 0.6 and (counts[:, 1:] > 0).any()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_only_allowed_moves_get_a_score(env_id):
    policy = _model(env_id).policy
    env = gym.make(env_id, **KWARGS)
    obs, info = env.reset(seed=1)
    for _ in range(30):
        logits = _logits(policy, obs)[0]
        allowed = info["action_mask"].astype(bool)
        assert (logits[~allowed] <= -1e7).all() and (logits[allowed] > -1e7).all()
        obs, _, terminated, truncated, info = env.step(int(np.flatnonzero(allowed)[0]))
        if terminated or truncated:
            break


def test_it_trains_saves_and_loads(tmp_path):
    model = _model("Rainbow-v0")
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(64)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True))
    model.save(tmp_path / "m.zip")
    loaded = MaskablePPO.load(tmp_path / "m.zip", device="cpu")
    assert isinstance(loaded.policy, MoveScorerPolicy)
    obs, _ = gym.make("Rainbow-v0", **KWARGS).reset(seed=5)
    np.testing.assert_allclose(_logits(loaded.policy, obs), _logits(model.policy, obs))


@pytest.mark.parametrize("env_id,kwargs", [("Klondike-v0", {"draw": 1}), ("Klondike-v0", {"draw": 3}),
                                           ("Rainbow-v0", {})])
def test_draw_card_is_the_card_the_draw_turns_up(env_id, kwargs):
    """With draw_card a draw's card token is the waste's top card after the draw once the stock's order
    is shown, and the unseen card's token before; every other move keeps its card column."""
    from solitaire_env.agents.move_scorer import MoveScorer
    from solitaire_env.engine import features as F

    env = gym.make(env_id, **KWARGS, **kwargs)
    obs, info = env.reset(seed=5)
    rng = np.random.default_rng(0)
    known = unseen = 0
    for _ in range(600):
        acts = obs["action_features"]
        allowed = np.flatnonzero(acts[:, F.ACTION_FEATURES.index("allowed")])
        if not len(allowed):  # stuck (no_revisit): a new game
            obs, info = env.reset()
            continue
        tensors = {k: torch.as_tensor(v[None]) for k, v in obs.items()}
        rows = torch.zeros(len(allowed), dtype=torch.long)
        tokens = MoveScorer.drawn_cards(tensors["cards"], tensors["summary"], rows,
                                        tensors["action_features"][0, allowed]).numpy()
        draws = acts[allowed, F.ACTION_FEATURES.index("from")] == F.FROM_STOCK
        card = F.ACTION_FEATURES.index("card")
        assert np.array_equal(tokens[~draws], acts[allowed[~draws], card])
        if draws.any() and rng.random() < 0.7:
            obs, _, terminated, truncated, info = env.step(int(allowed[draws][0]))
            waste = np.flatnonzero(obs["cards"][:, F.F_AREA] == F.AREA_WASTE)
            top = obs["cards"][waste[obs["summary"][1] - 1]]
            if tokens[draws][0] == 53 + 3:  # an unseen stock card (state 3)
                unseen += 1
            else:
                assert tokens[draws][0] == (top[F.F_SUIT] - 1) * 13 + top[F.F_RANK]
                known += 1
        else:
            obs, _, terminated, truncated, info = env.step(int(rng.choice(allowed)))
        if terminated or truncated:
            obs, info = env.reset()
    assert known >= 20 and unseen >= 3


def test_draw_card_is_kept_by_a_saved_policy_and_changes_only_draw_scores(tmp_path):
    model = _model("Klondike-v0", draw_card=True)
    model.save(tmp_path / "m.zip")
    loaded = MaskablePPO.load(tmp_path / "m.zip", device="cpu")
    assert loaded.policy.features_extractor.draw_card
    plain = _model("Klondike-v0")
    plain.policy.load_state_dict(model.policy.state_dict())  # the same weights, without the option
    env = gym.make("Klondike-v0", **KWARGS)
    obs, info = env.reset(seed=2)
    differ = 0
    for _ in range(200):
        a, b = _logits(loaded.policy, obs)[0], _logits(plain.policy, obs)[0]
        draw = 0  # Klondike's action 0 is the draw
        others = np.flatnonzero(info["action_mask"])
        rest = others[others != draw]  # (the logits are normalised: compare them to the first move's)
        np.testing.assert_allclose(a[rest] - a[rest[:1]], b[rest] - b[rest[:1]], atol=1e-5)
        differ += info["action_mask"][draw] and a[draw] != b[draw]
        obs, _, terminated, truncated, info = env.step(int(others[0] if others[0] != draw or len(others) == 1
                                                           else others[1]))
        if terminated or truncated:
            obs, info = env.reset()
    assert differ > 0


def test_it_refuses_an_observation_without_action_features():
    venv = make_sb3_vec_env("Rainbow-v0", n_envs=1, obs_mode="piles")
    with pytest.raises(TypeError, match="action_features=True"):
        MaskablePPO(MoveScorerPolicy, venv, device="cpu")


def test_batched_evaluation_plays_the_single_env_episodes(tmp_path):
    """evaluate plays a greedy policy agent in the batched env; the episodes are those of single play."""
    import json

    from solitaire_env.agents.ppo import MaskablePPOAgent
    from solitaire_env.tools.evaluation import evaluate

    model = _model("Rainbow-v0")
    model.learn(64)
    model.save(tmp_path / "policy.zip")
    (tmp_path / "policy.json").write_text(json.dumps({"env_kwargs": KWARGS}))
    agent = MaskablePPOAgent.load(tmp_path / "policy.zip", "Rainbow-v0")
    assert agent.batched and agent.env_kwargs == KWARGS

    class OneAtATime(MaskablePPOAgent):
        batched = False

    single = OneAtATime.load(tmp_path / "policy.zip", "Rainbow-v0")
    batched = evaluate("Rainbow-v0", {"p": agent}, episodes=6, seed=0, max_episode_steps=200)
    one = evaluate("Rainbow-v0", {"p": single}, episodes=6, seed=0, max_episode_steps=200)
    assert batched.records == one.records
    assert {r.deal_seed for r in batched.records} == set(range(6))
