"""``obs_mode="piles"`` and ``action_features``: every column against the position's JSON, the default
observation, the legal moves, and what playing each move on a copy does. Klondike, which has no env
here, through the engine's recorder and feature arrays as the single env uses them (:class:`EngineEnv`)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import solitaire_env  # noqa: F401  (registers the envs)
from solitaire_env.engine import core, history
from solitaire_env.engine.cards import RANKS, card_from_str
from solitaire_env.engine.features import (
    ACTION_FEATURES,
    CARD_FEATURES,
    PILE_FEATURES,
    SUMMARY_FEATURES,
    FeatureArrays,
    action_highs,
    card_slots,
    highs,
)
from solitaire_env.engine.game import Game
from solitaire_env.engine.games import get_variant
from solitaire_env.engine.keys import position_key
from solitaire_env.engine.moves import Move
from solitaire_env.engine.variant import (
    A_FIRST,
    CELL_TO_EMPTY,
    CELL_TO_FOUNDATION,
    CELL_TO_TABLEAU,
    DRAW,
    FOUNDATION_TO_EMPTY,
    FOUNDATION_TO_TABLEAU,
    TABLEAU_TO_CELL,
    TABLEAU_TO_FOUNDATION,
    WASTE_TO_FOUNDATION,
)

KLONDIKE = ["klondike", "klondike_draw3"]  # no env here: see EngineEnv
ENV_IDS = ["RankAndFile-v0", "NumberTen-v0", "Rainbow-v0", *KLONDIKE]
C = {name: k for k, name in enumerate(CARD_FEATURES)}
A = {name: k for k, name in enumerate(ACTION_FEATURES)}
AREA_CODE = {"stock": 1, "waste": 2, "reserve": 3, "tableau": 4, "cell": 5, "foundation": 6}


class EngineEnv:
    """What these tests read of an env, for a game that has none here (Klondike): a :class:`Game` with
    the position history and the feature arrays, recorded and computed at each position as the single
    env does (``obs`` holds the ``piles`` arrays and the action features)."""

    def __init__(self, name: str, no_revisit: bool = False) -> None:
        self.variant = get_variant(name)
        self.unwrapped, self.no_revisit = self, no_revisit
        self.history = history.History(self.variant, 1)
        self.arrays = FeatureArrays(self.variant, 1, True, True)

    def reset(self, seed: int):
        self.game = Game(self.variant, seed=seed)
        return self._observe(True, -1)

    def step(self, action: int):
        self.game.play(int(action))
        obs, info = self._observe(False, int(action))
        return obs, 0.0, not info["action_mask"].any(), False, info

    def _observe(self, clear: bool, move: int):
        v, game = self.variant, self.game
        mask, seen = np.zeros(v.n_actions, dtype=np.int8), np.zeros(v.n_actions, dtype=np.int8)
        n = core.legal_mask(game.state, v.spec, v.actions, mask)
        self.history.record(0, game.state, game.observation(), mask, n, clear, self.no_revisit, seen)
        arrays = self.arrays.compute(game.state[None], game.observation()[None], mask[None], seen[None])
        return {key: array[0] for key, array in arrays.items()}, {"action_mask": mask, "move": move}

    def get_state(self) -> dict:
        return self.game.get_state()

    def decode_action(self, action: int) -> Move:
        return self.game.decode(action)


def positions(env_id: str, episodes: int = 3, steps: int = 150, **kwargs):
    """(env, obs, info) along random play of a few deals, with the features on."""
    if env_id.startswith("klondike"):  # a variant's name: no env here
        env = EngineEnv(env_id, **kwargs)
    else:
        env = gym.make(env_id, obs_mode="piles", action_features=True, max_episode_steps=10_000, **kwargs)
    rng = np.random.default_rng(2)
    for seed in range(episodes):
        obs, info = env.reset(seed=seed)
        for _ in range(steps):
            yield env, obs, info
            legal = np.flatnonzero(info["action_mask"])
            if not legal.size:
                break
            obs, _, terminated, truncated, info = env.step(int(rng.choice(legal)))
            if terminated or truncated:
                break


def card_code(text: str) -> int:
    return card_from_str(text.lstrip("#")) + 1


def stock_seen(v, state: dict) -> bool:
    """Whether the player has seen the stock's order: the waste has been turned over."""
    return state["stock_seen"] if v.redeals is None else state["redeals_left"] < v.redeals


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_card_rows_follow_the_position(env_id):
    checked = 0
    for env, obs, _ in positions(env_id):
        u = env.unwrapped
        v, state = u.variant, u.get_state()
        cards = obs["cards"]
        rows = [("tableau", p, k, pile) for p, pile in enumerate(state["tableau"]) for k in range(v.pile_capacity)]
        rows += [("waste", None, k, state["waste"]) for k in range(v.stock_capacity)]
        if v.can_redeal:
            rows += [("stock", None, k, state["stock"]) for k in range(v.stock_capacity)]
        rows += [("reserve", None, k, state["reserve"]) for k in range(v.reserve)]
        assert len(rows) == len(cards)
        seen_stock = stock_seen(v, state)
        for row, (area, p, k, items) in zip(cards, rows, strict=True):
            assert row[C["area"]] == ["tableau", "waste", "stock", "reserve"].index(area)
            assert row[C["pile"]] == (p + 1 if p is not None else 0) and row[C["depth"]] == k
            if k >= len(items):
                assert not row[[C["state"], C["rank"], C["suit"], C["colour"], C["height"], C["movable"],
                                C["to_foundation"]]].any()
                continue
            assert row[C["height"]] == len(items) - 1 - k
            hidden = items[k].startswith("#") or (area == "stock" and not seen_stock)
            if hidden:
                assert row[C["state"]] == (3 if area == "stock" else 2)
                assert not row[[C["rank"], C["suit"], C["colour"]]].any()
            else:
                card = card_from_str(items[k])
                assert row[C["state"]] == 1
                assert (row[C["rank"]], row[C["suit"]]) == (card % 13 + 1, card // 13 + 1)
                assert row[C["colour"]] == (2 if card // 13 in (1, 2) else 1)
            checked += 1
    assert checked > 1000


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_movable_and_to_foundation_agree_with_the_legal_moves(env_id):
    """Every card a legal move takes (the bottom one of what moves) is movable, and a card can go to a
    foundation exactly when a legal move takes it there."""
    for env, obs, info in positions(env_id):
        u = env.unwrapped
        v, s = u.variant, u.game.state
        cards = obs["cards"]
        takes = set()
        to_foundation = set()
        for a in np.flatnonzero(info["action_mask"]):
            move = u.decode_action(int(a))
            if move.source == "tableau":
                n = len(u.get_state()["tableau"][move.source_index])
                row = move.source_index * v.pile_capacity + n - move.count
                takes.add(row)
                if v.actions[a, 0] == TABLEAU_TO_FOUNDATION:
                    to_foundation.add(row)
            elif move.source == "waste":
                row = v.piles * v.pile_capacity + len(u.get_state()["waste"]) - 1
                takes.add(row)
                if v.actions[a, 0] == WASTE_TO_FOUNDATION:
                    to_foundation.add(row)
        movable = set(np.flatnonzero(cards[:, C["movable"]]).tolist())
        assert takes <= movable
        up = set(np.flatnonzero(cards[:, C["to_foundation"]]).tolist())
        reserve_up = {r for r in up if cards[r, C["area"]] == 3}
        assert up - reserve_up == to_foundation
        for p in range(v.piles):
            pile = cards[p * v.pile_capacity:(p + 1) * v.pile_capacity]
            run = core.run_length(s, v.spec, p)
            n = obs["piles"][p, 0]
            flagged = np.flatnonzero(pile[:, C["movable"]]).tolist()
            if v.whole_pile_moves:  # the top card (to a foundation), or a pile that is one run, whole
                assert flagged == sorted({n - 1} | ({0} if run == n else set())) if n else not flagged
            else:
                assert flagged == list(range(n - run, n))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_piles_foundations_and_summary_follow_the_position(env_id):
    for env, obs, _ in positions(env_id, steps=80):
        u = env.unwrapped
        v, state = u.variant, u.get_state()
        for p, pile in enumerate(state["tableau"]):
            down = sum(c.startswith("#") for c in pile)
            length, face_down, run, top_rank, top_suit = obs["piles"][p]
            assert (length, face_down) == (len(pile), down)
            assert run == core.run_length(u.game.state, v.spec, p)
            top = card_from_str(pile[-1]) if pile else None
            assert (top_rank, top_suit) == ((top % 13 + 1, top // 13 + 1) if pile else (0, 0))
        base = RANKS.index(state["base_rank"]) if state["base_rank"] else 0
        for f, cards in enumerate(state["foundations"]):
            suit, height, next_rank = obs["foundations"][f]
            assert height == len(cards)
            assert suit == (card_from_str(cards[0]) // 13 + 1 if cards else 0)
            assert next_rank == ((base + len(cards)) % 13 + 1 if len(cards) < 13 else 0)
        summary = dict(zip(SUMMARY_FEATURES, obs["summary"], strict=True))
        reserve = state["reserve"] or []
        assert summary == {
            "stock": len(state["stock"]), "waste": len(state["waste"]), "reserve": len(reserve),
            "reserve_face_down": sum(c.startswith("#") for c in reserve),
            "redeals_left": int(state["stock_seen"]) if v.redeals is None else state["redeals_left"],
            "base_rank": base + 1, "face_down": sum(c.startswith("#") for p in state["tableau"] for c in p),
            "foundation_cards": sum(map(len, state["foundations"])),
            "empty_piles": sum(not p for p in state["tableau"]),
        }
        assert obs["piles"].shape == (v.piles, len(PILE_FEATURES))


@pytest.mark.parametrize("env_id", [*ENV_IDS, "FreeCell-v0"])
@pytest.mark.parametrize("no_revisit", [False, True])
def test_action_features_say_what_each_move_does(env_id, no_revisit):
    """Each move the rules allow, played on a copy: cards moved, a card turned up, a pile taken whole,
    the card that moves and the one it lands on, its areas and indices, and whether the position it
    leads to was seen (keys of every position of the episode, kept here). Klondike's cards come back
    from the foundations, and a draw 3 turns up to three."""
    checked = masked = cell_seen = 0
    kinds: set[tuple[str, str]] = set()
    seen: set[int] = set()
    for env, obs, info in positions(env_id, no_revisit=no_revisit):
        u = env.unwrapped
        v, game, state = u.variant, u.game, u.get_state()
        if info["move"] == -1:  # a new episode (positions() plays legal moves only)
            seen = set()
        seen.add(int(position_key(game.observation(), v.spec)))
        features = obs["action_features"]
        rules = game.action_mask()
        assert not features[rules == 0].any()
        for a in np.flatnonzero(rules):
            row = dict(zip(ACTION_FEATURES, features[a].tolist(), strict=True))
            move = game.decode(int(a))
            child = game.copy()
            moved = child.play(int(a))
            key = int(position_key(child.observation(), v.spec))
            assert row["allowed"] == info["action_mask"][a]
            assert row["seen"] == (key in seen)
            masked += row["seen"] and not row["allowed"]
            cell_seen += row["seen"] and "cell" in (move.source, move.target)
            assert row["count"] == moved == move.count
            assert row["uncovers"] == (child.hidden_cards < game.hidden_cards)
            assert row["from"] == AREA_CODE[move.source]
            assert row["from_pile"] == (move.source_index + 1 if move.source == "tableau" else 0)
            kinds.add((move.source, move.target))
            if move.source in ("tableau", "cell", "foundation"):
                source = {"tableau": state["tableau"], "foundation": state["foundations"],
                          "cell": [[c] for c in state.get("cells") or []]}[move.source][move.source_index]
            else:
                source = {"stock": [], "waste": state["waste"], "reserve": state["reserve"] or []}[move.source]
            assert row["empties"] == (move.source == "tableau" and move.count == len(source))
            if move.source in ("stock",) or (move.source == "waste" and move.target == "stock"):
                assert (row["card"], row["onto"], row["to"]) == (0, 0, 2 if move.source == "stock" else 1)
                continue
            assert row["card"] == card_code(source[len(source) - move.count])
            if move.target == "cell":
                assert (row["onto"], row["to"], row["to_index"]) == (0, 6, move.target_index + 1)
            elif move.target == "foundation":
                target = state["foundations"][move.target_index]
                assert (row["to"], row["to_index"]) == (5, move.target_index + 1)
                assert row["onto"] == (card_code(target[-1]) if target else 0)
            else:
                target = state["tableau"][move.target_index]
                assert row["to"] == (3 if target else 4) and row["to_index"] == move.target_index + 1
                assert row["onto"] == (card_code(target[-1]) if target else 0)
            checked += 1
    assert checked > {"Rainbow-v0": 100, "FreeCell-v0": 200}.get(env_id, 1000)
    if no_revisit and env_id != "Rainbow-v0":
        assert masked > 0
    if env_id == "FreeCell-v0":  # a card to a free cell and back, or from a cell to a pile and back
        assert cell_seen > 0
    if env_id in KLONDIKE:
        assert ("foundation", "tableau") in kinds and ("stock", "waste") in kinds and ("waste", "stock") in kinds


def test_maskable_ppo_trains_on_the_piles_observation():
    """MultiInputPolicy reads the Dict of arrays (with the action features) through the SB3 adapter."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from solitaire_env.envs.sb3 import make_sb3_vec_env

    venv = make_sb3_vec_env("Rainbow-v0", n_envs=2, seed=0, obs_mode="piles", action_features=True, no_revisit=True)
    model = MaskablePPO("MultiInputPolicy", venv, n_steps=32, batch_size=32, n_epochs=1, seed=0)
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(64)
    assert model.num_timesteps == 64
    assert any(not (a == b.detach()).all() for a, b in zip(before, model.policy.parameters(), strict=True))


@pytest.mark.parametrize("obs_mode", ["codes", "dict"])
def test_the_batched_env_never_writes_action_features_a_caller_holds(obs_mode):
    """The batched env reuses an action-features array it handed out once nothing refers to it: arrays
    (or views of them) the caller keeps never change, and one it let go is written afresh in full."""
    env = gym.make_vec("RankAndFile-v0", num_envs=4, obs_mode=obs_mode, action_features=True)
    rng = np.random.default_rng(3)

    def features_of(obs, info):
        return obs["action_features"] if obs_mode == "dict" else info["action_features"]

    obs, info = env.reset(seed=1)
    kept = [(features_of(obs, info), features_of(obs, info).copy())]
    view = features_of(obs, info)[1:3]
    view_copy = view.copy()
    reused = 0
    seen_ids = {id(features_of(obs, info))}
    for step in range(60):
        acts = np.array([int(rng.choice(np.flatnonzero(row))) if row.any() else 0 for row in info["action_mask"]])
        obs, _, _, _, info = env.step(acts)
        current = features_of(obs, info)
        reused += id(current) in seen_ids
        seen_ids.add(id(current))
        # What a fresh computation gives for the same positions, every entry.
        fresh = env._features.compute(env.states, env.codes, env.masks, env.seen)["action_features"]
        np.testing.assert_array_equal(current, fresh)
        if step % 10 == 0:
            kept.append((current, current.copy()))
        for array, copy in kept:
            np.testing.assert_array_equal(array, copy)
        np.testing.assert_array_equal(view, view_copy)
    assert reused > 0


# --- FreeCell: the free cells in the piles observation and in the action features ---------------------

def cell_rows(v) -> slice:
    """The ``cards`` rows of the free cells: the last ``cells`` rows."""
    first = v.piles * v.pile_capacity + v.stock_capacity * (2 if v.redeals else 1) + v.reserve
    return slice(first, first + v.cells)


def test_the_piles_observation_shows_a_card_put_in_a_free_cell():
    game = Game("freecell", 1)
    v = game.variant
    top = game.get_state()["tableau"][0][-1]
    assert game.play(Move("tableau", 0, "cell", 0, 1)) == 1
    arrays = FeatureArrays(v, 1, True, True)
    obs = arrays.compute(game.state[None], game.observation()[None], game.action_mask()[None],
                           np.zeros((1, 0), dtype=np.int8))
    cards = obs["cards"][0]
    assert cards.shape == (card_slots(v), len(CARD_FEATURES)) == (v.piles * v.pile_capacity + 4, 10)
    cells = cards[cell_rows(v)]
    card = card_from_str(top)
    assert cells[0].tolist() == [1, card % 13 + 1, card // 13 + 1, 2 if card // 13 in (1, 2) else 1, 4, 0, 0, 0, 1,
                                 int(card % 13 == 0)]
    assert cells[1:].tolist() == [[0, 0, 0, 0, 4, 0, c, 0, 0, 0] for c in (1, 2, 3)]
    assert obs["piles"][0, 0, 0] == 6 and not cards[6, C["state"]]  # the pile lost its top card
    # The env shows the same after the same move.
    env = gym.make("FreeCell-v0", obs_mode="piles", action_features=True)
    env.reset(seed=1)
    stepped = env.step(env.unwrapped.game.encode(Move("tableau", 0, "cell", 0, 1)))[0]
    np.testing.assert_array_equal(stepped["cards"], cards)
    assert env.observation_space.contains(stepped)


def test_freecell_piles_observation_follows_the_cells_and_stays_in_its_space():
    checked = 0
    for env, obs, info in positions("FreeCell-v0", episodes=6):
        u = env.unwrapped
        v, state = u.variant, u.get_state()
        assert env.observation_space.contains(obs)
        accepts = {int(v.actions[a, 1]) for a in np.flatnonzero(info["action_mask"])
                   if v.actions[a, 0] == CELL_TO_FOUNDATION}
        for c, (row, text) in enumerate(zip(obs["cards"][cell_rows(v)], state["cells"], strict=True)):
            assert (row[C["area"]], row[C["pile"]], row[C["depth"]], row[C["height"]]) == (4, 0, c, 0)
            if text is None:
                assert not row[[C["state"], C["rank"], C["suit"], C["movable"], C["to_foundation"]]].any()
                continue
            card = card_from_str(text)
            assert (row[C["state"]], row[C["rank"]], row[C["suit"]]) == (1, card % 13 + 1, card // 13 + 1)
            assert row[C["movable"]] == 1 and row[C["to_foundation"]] == (c in accepts)
            checked += 1
    assert checked > 300


def test_freecell_action_features_name_the_card_and_the_places_of_each_move():
    """Every move the rules allow, cell moves above all: the card that moves, the one it lands on, the
    areas and indices, against the position's JSON and the decoded move."""
    kinds = set()
    for env, obs, _ in positions("FreeCell-v0", episodes=6):
        u = env.unwrapped
        v, game, state = u.variant, u.game, u.get_state()
        features = obs["action_features"]
        for a in np.flatnonzero(game.action_mask()):
            row = dict(zip(ACTION_FEATURES, features[a].tolist(), strict=True))
            move = game.decode(int(a))
            kinds.add(int(v.actions[a, 0]))
            if move.source == "cell":
                source = [state["cells"][move.source_index]]
            else:
                source = state["tableau"][move.source_index]
            assert row["card"] == card_code(source[len(source) - move.count])
            assert row["count"] == move.count
            assert row["from"] == AREA_CODE[move.source]
            assert row["from_pile"] == (move.source_index + 1 if move.source == "tableau" else 0)
            assert row["empties"] == (move.source == "tableau" and move.count == len(source))
            assert row["to_index"] == move.target_index + 1
            if move.target == "cell":
                assert state["cells"][move.target_index] is None
                assert (row["to"], row["onto"]) == (6, 0)
            elif move.target == "foundation":
                target = state["foundations"][move.target_index]
                assert (row["to"], row["onto"]) == (5, card_code(target[-1]) if target else 0)
            else:
                target = state["tableau"][move.target_index]
                assert row["to"] == (3 if target else 4)
                assert row["onto"] == (card_code(target[-1]) if target else 0)
    assert kinds >= {CELL_TO_FOUNDATION, CELL_TO_TABLEAU, CELL_TO_EMPTY, TABLEAU_TO_CELL}


def test_the_batched_freecell_env_writes_the_action_features_of_every_move():
    """The batched step writes the action features with the history's list of moves between piles: the
    moves into a free cell, after those, are written too (with and without an empty pile)."""
    env = gym.make_vec("FreeCell-v0", num_envs=4, obs_mode="piles", action_features=True)
    v = get_variant("freecell")
    rng = np.random.default_rng(3)
    obs, info = env.reset(seed=1)
    to_cell = 0
    for _ in range(100):
        acts = np.array([int(rng.choice(np.flatnonzero(row))) if row.any() else 0 for row in info["action_mask"]])
        obs, _, _, _, info = env.step(acts)
        assert env.observation_space.contains(obs)
        fresh = env._features.compute(env.states, env.codes, env.masks, env.seen)["action_features"]
        np.testing.assert_array_equal(obs["action_features"], fresh)
        to_cell += int(obs["action_features"][:, v.actions[:, 0] == TABLEAU_TO_CELL, 0].sum())
    assert to_cell > 100


# --- Klondike: cards back from the foundations, draw 3, unlimited redeals -------------------------------

@pytest.mark.parametrize("name", ["klondike", "klondike_draw3", "klondike_redeals2", "klondike_draw3_redeals0"])
def test_klondike_features_stay_within_their_highs(name):
    v = get_variant(name)
    top, top_actions = highs(v), action_highs(v)
    for _, obs, _ in positions(name, steps=200):
        for key, high in top.items():
            assert obs[key].shape == high.shape and (obs[key] >= 0).all() and (obs[key] <= high).all(), key
        assert (obs["action_features"] >= 0).all() and (obs["action_features"] <= top_actions).all()
    # (the stock-seen flag where redeals are unlimited; at least 1, as every high)
    assert top["summary"][SUMMARY_FEATURES.index("redeals_left")] == max(1 if v.redeals is None else v.redeals, 1)
    assert top_actions[ACTION_FEATURES.index("from")] == AREA_CODE["foundation"]


def test_klondike_action_features_of_a_card_coming_back():
    """A foundation's top card onto a pile and a King into an empty pile, and the move back up: seen, and
    masked with ``no_revisit``."""
    foundations = [[RANKS[k] + suit for k in range(n)] for suit, n in (("c", 13), ("d", 13), ("h", 5), ("s", 5))]
    tableau = [["#Kh", "6s"], ["#Ks", "6h"], ["7h"], [], ["#Qh", "8h"], ["#Qs", "8s"],
               ["#Jh", "#Js", "#Th", "#Ts", "#9h", "#7s", "9s"]]
    state = {"format": 1, "variant": "klondike", "tableau": tableau, "foundations": foundations, "stock": [],
             "waste": [], "reserve": [], "redeals_left": None, "base_rank": None, "stock_seen": False}
    for no_revisit in (False, True):
        env = EngineEnv("klondike", no_revisit)
        env.game = Game.from_state(state)
        obs, _ = env._observe(True, -1)
        game, v = env.game, env.variant
        down, king = game.encode(Move("foundation", 2, "tableau", 0, 1)), game.encode(Move("foundation", 0, "tableau",
                                                                                             3, 1))
        assert v.actions[down, 0] == FOUNDATION_TO_TABLEAU and v.actions[king, 0] == FOUNDATION_TO_EMPTY
        rows = obs["action_features"]
        assert rows[down].tolist() == [1, card_code("5h"), card_code("6s"), 1, 6, 3, 0, 1, 0, 0, 0]
        assert rows[king].tolist() == [1, card_code("Kc"), 0, 1, 6, 4, 0, 4, 0, 0, 0]
        obs, _, _, _, info = env.step(down)
        up = env.game.encode(Move("tableau", 0, "foundation", 2, 1))
        assert obs["action_features"][up].tolist() == [int(not no_revisit), card_code("5h"), card_code("4h"), 1, 4, 5,
                                                        1, 3, 0, 0, 1]
        assert info["action_mask"][up] == (not no_revisit)
        assert obs["foundations"][2].tolist() == [3, 4, 5]  # hearts, 4 cards, takes a 5 next


def test_klondike_draw_three_counts_the_cards_it_turns():
    env = EngineEnv("klondike_draw3")
    obs, _ = env.reset(seed=4)
    draw = int(env.variant.spec[A_FIRST + DRAW])
    counts = []
    while env.game.get_state()["stock"]:
        counts.append(int(obs["action_features"][draw, ACTION_FEATURES.index("count")]))
        obs, _, _, _, _ = env.step(draw)
    assert counts == [3] * 8
    assert obs["summary"][SUMMARY_FEATURES.index("redeals_left")] == 0
    obs, _, _, _, _ = env.step(draw + 1)  # the redeal: the stock is seen from now on
    assert obs["summary"][SUMMARY_FEATURES.index("redeals_left")] == 1
    stock_rows = obs["cards"][obs["cards"][:, C["area"]] == 2]
    assert (stock_rows[:24, C["state"]] == 1).all() and stock_rows[:24, C["rank"]].all()
