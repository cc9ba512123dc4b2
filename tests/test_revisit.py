"""Position history (``track_revisits``) and the no-revisit mask (``no_revisit``): the kept keys against a
plain Python set of every position seen (Klondike, which has no env here, through the engine's
recorder), relabelled piles, a hand-built 2-cycle, ``stuck``, hidden cards, the table's cap, and the
solver's winning lines played with repeats cut out. ``test_revisit_klondike.py`` has Klondike's own cases."""

from __future__ import annotations

import copy
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest

import solitaire_env  # noqa: F401  (registers the envs)
from solitaire_env import Game
from solitaire_env.engine import core, history, table
from solitaire_env.engine.cards import RANKS, SUITS
from solitaire_env.engine.games import RANK_AND_FILE, klondike_variant
from solitaire_env.engine.hashing import mix
from solitaire_env.engine.keys import position_key, table_key
from solitaire_env.engine.keys import progress as progress_of
from solitaire_env.engine.state import from_json
from solitaire_env.engine.variant import (
    DRAW,
    FOUNDATION_TO_EMPTY,
    FOUNDATION_TO_TABLEAU,
    REDEAL,
    TABLEAU_TO_FOUNDATION,
    TABLEAU_TO_TABLEAU,
)

ENV_IDS = ["RankAndFile-v0", "NumberTen-v0", "Rainbow-v0", "FreeCell-v0"]
WITH_HIDDEN_CARDS = ENV_IDS[:3]  # (FreeCell deals every card face up)


def key_of(game: Game) -> int:
    """The position key of what a player sees of ``game``."""
    return int(position_key(game.observation(), game.variant.spec))


def rank_and_file(heights: dict[str, tuple[int, int]], tableau: list[list[str]]) -> dict:
    """A Rank and File position with empty stock and waste; ``heights[suit]``: its two foundations."""
    foundations = [[RANKS[k] + suit for k in range(n)] for suit in SUITS for n in heights[suit]]
    state = {"format": 1, "variant": "rank_and_file", "tableau": tableau, "foundations": foundations,
             "stock": [], "waste": [], "reserve": [], "redeals_left": 0, "base_rank": None}
    from_json(state)  # a complete, valid position
    return state


def two_cycle() -> dict:
    """Qh can go from pile 0 (on Kc) to pile 1 (on Ks) and back, and nothing else can move: the cards a
    foundation needs next lie face down, no pile is empty, and no other card builds on a top."""
    tableau = [["#5d", "Kc", "Qh"], ["#Qd", "Ks"], ["#Qc", "6d"], ["#Qs", "7d"], ["#Jh", "8d"],
               ["9d"], ["Td"], ["Jd"], ["Kd"], ["Kh"]]
    return rank_and_file({"c": (11, 13), "d": (4, 13), "h": (10, 13), "s": (11, 13)}, tableau)


def relabelling(face_down: bool) -> dict:
    """Qh on one of two Kc piles: moving it to the other gives the same table with the piles swapped,
    unless the two piles have face-down cards (then which pile holds what matters)."""
    if face_down:
        tableau = [["#Qc", "Kc", "Qh"], ["#Qc", "Kc"], ["6d"], ["7d"], ["#Jh", "8d"], ["#5d", "9d"],
                   ["#Qd", "Td"], ["Jd"], ["Kd"], ["Kh"]]
    else:
        tableau = [["Kc", "Qh"], ["Kc"], ["#Qc", "6d"], ["#Qc", "7d"], ["#Jh", "8d"], ["#5d", "9d"],
                   ["#Qd", "Td"], ["Jd"], ["Kd"], ["Kh"]]
    return rank_and_file({"c": (11, 11), "d": (4, 13), "h": (10, 13), "s": (13, 13)}, tableau)


def legal_actions(env: gym.Env) -> list[int]:
    """The rules' legal actions, whatever the env's mask says."""
    return [int(a) for a in env.unwrapped.game.legal_actions()]


# --- the key ---------------------------------------------------------------------------------------


def test_relabelled_piles_and_foundation_slots_give_the_same_key_and_face_down_piles_do_not():
    state = two_cycle()
    base = key_of(Game.from_state(state))
    swapped = copy.deepcopy(state)
    swapped["tableau"][5], swapped["tableau"][8] = state["tableau"][8], state["tableau"][5]  # no face-down cards
    swapped["foundations"][0], swapped["foundations"][1] = state["foundations"][1], state["foundations"][0]
    assert key_of(Game.from_state(swapped)) == base
    other = copy.deepcopy(state)
    other["tableau"][2], other["tableau"][3] = state["tableau"][3], state["tableau"][2]  # both face down below
    assert key_of(Game.from_state(other)) != base


def test_hidden_cards_never_enter_the_key():
    for seed in range(5):
        game = Game("number_ten", seed=seed)
        twin = Game.from_state(hidden_swapped(game.get_state()))
        assert twin.get_state() != game.get_state()
        assert key_of(twin) == key_of(game)


def hidden_swapped(state: dict, stock: bool = True) -> dict:
    """The same table with the face-down cards of the tableau and the reserve shuffled among their
    places and (``stock``) the unseen stock reversed (a redeal's stock, which the player has seen, is kept)."""
    other = copy.deepcopy(state)
    places = [(p, k) for p, pile in enumerate(other["tableau"]) for k, c in enumerate(pile) if c.startswith("#")]
    places += [(-1, k) for k, c in enumerate(other.get("reserve") or []) if c.startswith("#")]

    def pile(p):
        return other["reserve"] if p < 0 else other["tableau"][p]

    cards = [pile(p)[k] for p, k in places]
    for (p, k), card in zip(places, cards[1:] + cards[:1], strict=True):
        pile(p)[k] = card
    variant = Game.from_state(state).variant
    if stock and other["redeals_left"] == variant.redeals:
        other["stock"] = list(reversed(other["stock"]))
    return other


@pytest.mark.parametrize("game", ["rank_and_file", "number_ten", "rainbow", "freecell", "klondike", "klondike_draw3",
                                  "klondike_redeals2"])
def test_child_keys_are_the_keys_of_the_moves_played(game):
    """The key of each legal move's result, as the mask computes it without playing most moves, against
    the key of the position the move gives; 0 exactly where the progress changes (in Klondike a card
    to or from a foundation, and with unlimited redeals a draw or a redeal, may keep it)."""
    rng = np.random.default_rng(3)
    checked = 0
    for seed in range(3):
        g = Game(game, seed=seed)
        v = g.variant
        out = np.zeros(v.n_actions, dtype=np.uint64)
        if v.reserve:
            # While Rainbow's reserve lasts every move between piles refills one: the heuristic plays on
            # until the reserve is out, where such moves leave the progress as it is.
            g = heuristic_until_the_reserve_is_out(seed)
        for _ in range(250):
            mask = g.action_mask()
            if not mask.any():
                break
            history.child_keys(g.state, g.observation(), v.spec, v.actions, mask, out)
            progress = progress_of(g.state, v.spec)
            for a in np.flatnonzero(mask):
                child = g.copy()
                child.play(int(a))
                changed = progress_of(child.state, v.spec) != progress
                assert (out[a] == 0) == changed
                if not changed:
                    assert out[a] == table_key(child.state, child.observation(), v.spec)
                    checked += 1
            g.play(int(rng.choice(np.flatnonzero(mask))))
    assert checked > {"rainbow": 20, "freecell": 150}.get(game, 1000)  # (random FreeCell play soon jams)


def heuristic_until_the_reserve_is_out(seed: int) -> Game:
    from solitaire_env.agents import make_agent

    env = gym.make("Rainbow-v0")
    agent = make_agent("heuristic", "Rainbow-v0")
    for deal in range(seed, seed + 100):
        obs, info = env.reset(seed=deal)
        agent.reset(seed=0)
        terminated = truncated = False
        while not (terminated or truncated):
            if not env.unwrapped.get_state()["reserve"] and info["action_mask"].any():
                return env.unwrapped.game.copy()
            obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
    raise AssertionError("the heuristic never played out the reserve")


# --- against a plain set of every position seen -----------------------------------------------------


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("no_revisit", [False, True])
def test_revisit_and_mask_agree_with_every_position_seen(env_id, no_revisit):
    """info["revisit"] and the mask, against a Python set of the keys of every position of the episode
    (no stretches, no table, no shortcuts): each move is played on a copy to see where it leads."""
    options = {"no_revisit": True} if no_revisit else {"track_revisits": True}
    env = gym.make(env_id, max_episode_steps=600, **options)
    rng = np.random.default_rng(7)
    revisits = masked = ended_stuck = 0
    for seed in range(4):
        _, info = env.reset(seed=seed)
        seen = {key_of(env.unwrapped.game)}
        assert info["revisit"] is False
        terminated = truncated = False
        while not (terminated or truncated):
            game = env.unwrapped.game
            legal = legal_actions(env)
            leads_back = {a for a in legal if key_of(_played(game, a)) in seen}
            expected = [a for a in legal if not (no_revisit and a in leads_back)]
            assert np.flatnonzero(info["action_mask"]).tolist() == expected
            masked += len(leads_back) if no_revisit else 0
            if no_revisit:
                assert info["stuck"] == (not expected and bool(legal))
                if not expected:
                    ended_stuck += bool(legal)
                    break
            # Mostly fresh moves; without the option also moves back, and now and then an illegal one.
            if not expected or rng.random() < 0.05:
                action = int(rng.integers(env.action_space.n))
            else:
                pool = expected if no_revisit or not leads_back or rng.random() < 0.5 else sorted(leads_back)
                action = int(rng.choice(pool))
            was_legal = bool(info["action_mask"][action])
            _, _, terminated, truncated, info = env.step(action)
            key = key_of(env.unwrapped.game)
            assert info["revisit"] == (key in seen or not was_legal)
            revisits += info["revisit"] and was_legal
            seen.add(key)
    # (Rainbow cannot go back: a move between piles leaves one pile fewer, for good.)
    if env_id != "Rainbow-v0":
        assert (masked if no_revisit else revisits) > 0


def _played(game: Game, action: int) -> Game:
    child = game.copy()
    child.play(action)
    return child


@pytest.mark.parametrize("draw, redeals", [(1, None), (3, None), (1, 2), (3, 0)])
@pytest.mark.parametrize("no_revisit", [False, True])
def test_klondike_revisits_and_mask_agree_with_every_position_seen(draw, redeals, no_revisit):
    """As above for Klondike, through :meth:`History.record` as the single env calls it (there is no env
    here): foundation cards come back, and with unlimited redeals the stock cycles, so cards to and
    from the foundations, draws and redeals lead back too. The ``seen`` flags, the mask and the revisit
    flag against a Python set of the keys of every position of the episode."""
    v = klondike_variant(draw, redeals)
    h = history.History(v, 1)
    mask, seen = np.zeros(v.n_actions, dtype=np.int8), np.zeros(v.n_actions, dtype=np.int8)
    rng = np.random.default_rng(draw + 7 * (redeals or 0))
    back: Counter = Counter()
    revisits = 0
    for seed in range(3):
        game, keys_seen = Game(v, seed=seed), set()
        for step in range(250):
            key = key_of(game)
            n_rules = core.legal_mask(game.state, v.spec, v.actions, mask)
            rules = mask.copy()
            revisit, left = h.record(0, game.state, game.observation(), mask, n_rules, step == 0, no_revisit, seen)
            assert revisit == (key in keys_seen)
            revisits += revisit
            keys_seen.add(key)
            legal = np.flatnonzero(rules).tolist()
            leads_back = {a for a in legal if key_of(_played(game, a)) in keys_seen}
            assert set(np.flatnonzero(seen).tolist()) == leads_back
            expected = [a for a in legal if not (no_revisit and a in leads_back)]
            assert np.flatnonzero(mask).tolist() == expected and left == len(expected)
            back.update(int(v.actions[a, 0]) for a in leads_back)
            if not expected:
                break
            # Now and then only the stock's moves for a while (round the stock and round again), else a card
            # to a foundation when one goes (so that cards come back down), else mostly fresh moves, and
            # without the option a move back half the time.
            ups = [a for a in expected if v.actions[a, 0] == TABLEAU_TO_FOUNDATION]
            stock = [a for a in expected if v.actions[a, 0] in (DRAW, REDEAL)]
            if stock and step % 120 >= 60:
                action = stock[0]
            elif ups and rng.random() < 0.3:
                action = ups[0]
            elif not no_revisit and leads_back and rng.random() < 0.5:
                action = int(rng.choice(sorted(leads_back)))
            else:
                action = int(rng.choice(expected))
            game.play(action)
    assert back[TABLEAU_TO_TABLEAU] > 0
    if (draw, redeals) != (3, 0):  # (random draw-3 games with one pass seldom reach the foundations)
        assert back[TABLEAU_TO_FOUNDATION] > 0 and back[FOUNDATION_TO_TABLEAU] + back[FOUNDATION_TO_EMPTY] > 0
    if redeals is None:  # the stock cycles: a draw or a redeal back to a position seen
        assert back[DRAW] > 0 and back[REDEAL] > 0
    else:
        assert back[DRAW] == back[REDEAL] == 0
    assert no_revisit or revisits > 0


# --- hand-built positions ---------------------------------------------------------------------------


def test_a_two_cycle_is_masked_and_stuck_ends_the_episode():
    env = gym.make("RankAndFile-v0", no_revisit=True)
    _, info = env.reset(options={"state": two_cycle()})
    there = env.unwrapped.encode_action(env.unwrapped.game.legal_moves()[0])
    assert np.flatnonzero(info["action_mask"]).tolist() == [there] and not info["stuck"]
    _, reward, terminated, truncated, info = env.step(there)
    back = legal_actions(env)
    assert len(back) == 1 and back[0] != there  # Qh back onto Kc is the only move the rules allow
    assert not info["action_mask"].any()
    assert terminated and not truncated and info["stuck"] and not info["revisit"] and not info["is_won"]

    # Without the option the move back is offered, played, and reported as a revisit.
    plain = gym.make("RankAndFile-v0", track_revisits=True)
    plain.reset(options={"state": two_cycle()})
    _, _, terminated, _, info = plain.step(there)
    assert not terminated and info["action_mask"][back[0]] and "stuck" not in info
    _, _, terminated, _, info = plain.step(back[0])
    assert info["revisit"] and not terminated and plain.unwrapped.get_state() == two_cycle()


def test_relabelled_piles_count_as_seen():
    env = gym.make("RankAndFile-v0", track_revisits=True)
    _, info = env.reset(options={"state": relabelling(face_down=False)})
    (move,) = legal_actions(env)
    assert not info["revisit"]
    _, _, _, _, info = env.step(move)
    assert info["revisit"]  # the same table with piles 0 and 1 swapped

    masked = gym.make("RankAndFile-v0", no_revisit=True)
    _, info = masked.reset(options={"state": relabelling(face_down=False)})
    assert not info["action_mask"].any() and info["stuck"]
    _, info = masked.reset(options={"state": relabelling(face_down=True)})
    assert np.flatnonzero(info["action_mask"]).tolist() == [move] and not info["stuck"]


@pytest.mark.parametrize("env_id", WITH_HIDDEN_CARDS)
def test_hidden_cards_never_change_the_mask(env_id):
    """Twin positions (the same table, other cards face down) played with the same moves give the same
    masks, revisit and stuck flags for as long as they look the same (until a face-down card turns up;
    the stock stays as it is, or the first draw would tell them apart)."""
    rng = np.random.default_rng(11)
    a, b = (gym.make(env_id, no_revisit=True) for _ in range(2))
    steps = 0
    for seed in range(8):
        a.reset(seed=seed)
        b.reset(seed=seed)
        for _ in range(5):  # a few moves in, so the twins differ in more than the deal
            a.step(int(np.flatnonzero(a.unwrapped.action_masks())[0]))
        state = a.unwrapped.get_state()
        obs_a, info_a = a.unwrapped.set_state(state)
        obs_b, info_b = b.unwrapped.set_state(hidden_swapped(state, stock=False))
        assert a.unwrapped.get_state() != b.unwrapped.get_state()
        while np.array_equal(obs_a, obs_b):
            for key in ("action_mask", "revisit", "stuck"):
                np.testing.assert_array_equal(info_a[key], info_b[key])
            if not info_a["action_mask"].any():
                break
            # Mostly moves that turn no card up, so the twins stay alike for long.
            moves = [int(m) for m in np.flatnonzero(info_a["action_mask"])]
            game = a.unwrapped.game
            quiet = [m for m in moves if _played(game, m).hidden_cards == game.hidden_cards]
            action = int(rng.choice(quiet if quiet and rng.random() < 0.9 else moves))
            obs_a, _, _, _, info_a = a.step(action)
            obs_b, _, _, _, info_b = b.step(action)
            steps += 1
    assert steps > 50


def test_defaults_keep_no_history():
    env = gym.make("RankAndFile-v0")
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert "revisit" not in info and "stuck" not in info
    assert env.unwrapped._history is None


@pytest.mark.parametrize("kwargs", [{"no_revisit": "yes"}, {"track_revisits": 1}, {"no_revisit": None}])
def test_bad_options_raise(kwargs):
    with pytest.raises(ValueError, match="must be True or False"):
        gym.make("Rainbow-v0", **kwargs)
    with pytest.raises(ValueError, match="must be True or False"):
        gym.make_vec("Rainbow-v0", num_envs=2, **kwargs)


def test_check_env_passes_with_the_options():
    from gymnasium.utils.env_checker import check_env

    for kwargs in ({"no_revisit": True}, {"track_revisits": True}):
        check_env(gym.make("NumberTen-v0", **kwargs).unwrapped, skip_render_check=True)


# --- the table --------------------------------------------------------------------------------------


def test_a_full_stretch_keeps_what_it_has_and_records_no_more():
    """A table of 16 slots (a small one of 4): it grows from 4 to 16 slots keeping every key, holds at
    most 12 (three quarters), and a new stretch empties it."""
    meta = np.zeros((2, table.META), dtype=np.int64)
    meta[:, table.M_SPREAD] = [0, 1]
    t = table.Tables(np.zeros((2, 4), dtype=np.uint64), np.zeros((2, 16), dtype=np.uint64), meta,
                     np.zeros((2, table.FILTER_WORDS), dtype=np.uint64), np.zeros((2, 2), dtype=np.uint64))
    spare = np.zeros(8, dtype=np.uint64)
    new = [int(mix(np.uint64(k))) for k in range(1, 21)]
    for i in range(2):
        table.clear(t, i)
        for n, key in enumerate(new):
            assert not table.has(t, i, np.uint64(key))
            table.insert(t, i, np.uint64(key), spare)
            kept = min(n + 1, 12)
            assert meta[i, table.M_COUNT] == kept and meta[i, table.M_FULL] == (n + 1 > 12)
            assert all(table.has(t, i, np.uint64(k)) for k in new[:kept])
        assert not any(table.has(t, i, np.uint64(k)) for k in new[12:])
        table.clear(t, i)
        assert not any(table.has(t, i, np.uint64(k)) for k in new)
    assert meta[0, table.M_GEN] == meta[1, table.M_GEN] == 2


def test_history_memory_is_bounded():
    h = history.History(RANK_AND_FILE, 1024)
    assert h.nbytes == 1024 * (8 * (table.SLOTS + table.FIRST_SIZE) + 8 * (table.META + table.FILTER_WORDS)
                               + 16 * RANK_AND_FILE.piles)
    assert h.nbytes / 1024 < 34 * 1024


# --- the solver's winning lines ---------------------------------------------------------------------


def cut_repeats(keys: list[int]) -> list[int]:
    """The keys of a line with every loop cut out: back at a position seen, continue from its first visit."""
    path: list[int] = []
    for key in keys:
        if key in path:
            del path[path.index(key) + 1 :]
        else:
            path.append(key)
    return path


def line_survives_no_revisit(game_name: str, env_id: str, seed: int, moves: list[int]) -> None:
    """Play the solver's line with its repeats cut under ``no_revisit``: at each step some unmasked move
    leads to the line's next position (by key: a cut may leave the piles relabelled), and it wins."""
    game = Game(game_name, seed=seed)
    keys = [key_of(game)]
    for a in moves:
        game.play(a)
        keys.append(key_of(game))
    assert game.is_won()
    path = cut_repeats(keys)
    env = gym.make(env_id, no_revisit=True, max_episode_steps=100_000)
    _, info = env.reset(seed=seed)
    for step, target in enumerate(path[1:]):
        current = env.unwrapped.game
        options = [int(a) for a in np.flatnonzero(info["action_mask"]) if key_of(_played(current, int(a))) == target]
        assert options, f"deal {seed}: no unmasked move leads to position {step + 1} of the cut line"
        _, _, terminated, truncated, info = env.step(options[0])
        assert not truncated and terminated == (step == len(path) - 2)
    assert info["is_won"] and not info["stuck"]


def _solver_lines(game_name: str, seeds: range, max_nodes: int) -> dict[int, list[int]]:
    from solitaire_env.solver import solve

    lines = {}
    for seed in seeds:
        result = solve(game_name, seed=seed, max_nodes=max_nodes, time_limit=10)
        if result.result == "won":
            lines[seed] = result.moves
    return lines


def test_no_revisit_keeps_the_solvers_winning_lines_of_20_deals():
    lines = _solver_lines("rainbow", range(20), 200_000)
    assert len(lines) >= 10
    for seed, moves in lines.items():
        line_survives_no_revisit("rainbow", "Rainbow-v0", seed, moves)


@pytest.mark.slow
@pytest.mark.parametrize("game_name, env_id, deals", [("rainbow", "Rainbow-v0", 200),
                                                      ("rank_and_file", "RankAndFile-v0", 20)])
def test_no_revisit_keeps_the_solvers_winning_lines_of_200_deals(game_name, env_id, deals):
    lines = _solver_lines(game_name, range(deals), 400_000)
    assert len(lines) >= deals // 2
    for seed, moves in lines.items():
        line_survives_no_revisit(game_name, env_id, seed, moves)


# --- the batched env's other ways to start an episode --------------------------------------------


def test_reset_envs_set_state_and_reset_mask_start_a_new_history():
    env = gym.make_vec("RankAndFile-v0", num_envs=3, no_revisit=True)
    u = env.unwrapped
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(30):
        _, _, _, _, info = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]]))
    single = gym.make("RankAndFile-v0", no_revisit=True)

    u.set_state(1, two_cycle())  # (resets sub-env 1 only)
    _, expected = single.reset(options={"state": two_cycle()})
    np.testing.assert_array_equal(u.masks[1], expected["action_mask"])
    there = int(np.flatnonzero(u.masks[1])[0])
    actions = np.array([np.flatnonzero(u.masks[0])[0], there, np.flatnonzero(u.masks[2])[0]])
    _, _, terminated, _, info = env.step(actions)
    assert terminated[1] and info["stuck"][1] and not info["stuck"][[0, 2]].any()

    obs = u.reset_envs(np.array([1]))  # the SB3 adapter's same-step reset
    _, expected = single.reset(seed=int(u.deal_seeds[1]))
    np.testing.assert_array_equal(u.masks[1], expected["action_mask"])
    np.testing.assert_array_equal(obs[1], single.unwrapped._codes)

    kept = u.history.tables.meta[0].copy()
    env.reset(options={"reset_mask": np.array([False, False, True])})
    np.testing.assert_array_equal(u.history.tables.meta[0], kept)  # sub-env 0 keeps its episode's history
    _, expected = single.reset(seed=int(u.deal_seeds[2]))
    np.testing.assert_array_equal(u.masks[2], expected["action_mask"])


def test_sb3_adapter_passes_the_flags_on():
    pytest.importorskip("stable_baselines3")
    from solitaire_env.envs.sb3 import make_sb3_vec_env

    venv = make_sb3_vec_env("RankAndFile-v0", n_envs=2, seed=0, monitor=False, no_revisit=True)
    venv.reset()
    venv.env.set_state(0, two_cycle())
    masks = venv.env_method("action_masks")
    venv.step_async(np.array([np.flatnonzero(masks[0])[0], np.flatnonzero(masks[1])[0]]))
    _, _, dones, infos = venv.step_wait()
    assert dones[0] and infos[0]["stuck"] and not infos[0]["revisit"] and not infos[0]["TimeLimit.truncated"]
    assert "stuck" in infos[1] and "terminal_observation" in infos[0]
    assert venv.env.action_masks()[0].any()  # sub-env 0 is dealt anew at once, with a fresh history
