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


def _model(env_id: str, **kwargs):
    venv = make_sb3_vec_env(env_id, n_envs=2, seed=0, **KWARGS)
    return MaskablePPO(MoveScorerPolicy, venv, n_steps=32, batch_size=32, n_epochs=1, device="cpu", seed=0,
                       policy_kwargs={"dim": 16, "hidden": 32}, **kwargs)


def _logits(policy, obs) -> np.ndarray:
    with torch.no_grad():
        tensor = policy.obs_to_tensor(obs)[0]
        return policy.get_distribution(tensor).distribution.logits.numpy()


@pytest.mark.parametrize("env_id", [e for e in ENV_IDS if e != "FreeCell-v0"])  # FreeCell hides no card
def test_hidden_cards_never_change_the_policy(env_id):
    """Twin positions (the face-down cards and the unseen stock dealt differently) give the same
    observation and the same action logits, at every step of a game."""
    policy = _model(env_id).policy
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
