"""The solver (:mod:`solitaire_env.solver`): hand-built positions with a known answer, every ``won``
answer replayed through the gym env, ``lost`` never claimed for a deal the heuristic wins, bad input,
and the safe-move rule.

Every hand-built position holds all the cards of its game (most on the foundations) and is checked with
:func:`solitaire_env.engine.state.from_json`, so it is a legal position of the game, not just an array.
"""

from __future__ import annotations

import dataclasses
import re

import gymnasium as gym
import numpy as np
import pytest

from solitaire_env import Game
from solitaire_env.agents import make_agent
from solitaire_env.agents.heuristic import playout
from solitaire_env.engine import core, variant
from solitaire_env.engine.cards import RANKS, SUITS
from solitaire_env.engine.games import get_variant
from solitaire_env.engine.state import deal, from_json, to_json
from solitaire_env.engine.variant import DRAW, REDEAL, TABLEAU_TO_TABLEAU
from solitaire_env.solver import EXHAUSTED, RESTART_NODES, WON, SolveOptions, Solver, solve
from solitaire_env.solver.safe import is_safe
from solitaire_env.tools.evaluation import agent_seed

ENV_OF = {"rank_and_file": "RankAndFile-v0", "number_ten": "NumberTen-v0", "rainbow": "Rainbow-v0"}
REPLAY_STEPS = 100_000  # the registered time limit is not what is under test here


# --- building positions -----------------------------------------------------------------------------


def _suit_pile(suit: str, n: int, base: int = 0) -> list[str]:
    return [RANKS[(base + k) % 13] + suit for k in range(n)]


def rank_and_file(levels: dict[str, tuple[int, int]], tableau: list[list[str]], stock=(), waste=()) -> dict:
    """A Rank and File position: ``levels[suit]`` are the heights of that suit's two foundations."""
    assert len(tableau) == 10
    foundations = [_suit_pile(s, n) for s in SUITS for n in levels[s]]
    state = {"format": 1, "variant": "rank_and_file", "tableau": tableau, "foundations": foundations,
             "stock": list(stock), "waste": list(waste), "reserve": [], "redeals_left": 0, "base_rank": None}
    return checked(state)


def checked(state: dict) -> dict:
    """``state`` after checking it is a complete, valid position that survives a JSON round trip."""
    v, s = from_json(state)  # every card of the game exactly as often as the decks hold it, valid builds
    assert to_json(v, s) == state
    return state


def solve_state(state: dict, **limits):
    v, s = from_json(state)
    limits.setdefault("time_limit", 20)
    return solve(v.name, state_array=s, **limits)


def replay_to_win(env_id: str, moves: list[int], *, seed: int | None = None, state: dict | None = None) -> None:
    """Play ``moves`` through the gym env; every one must be legal and the last must win the game."""
    env = gym.make(env_id, max_episode_steps=REPLAY_STEPS)
    try:
        if state is not None:
            _, info = env.reset(options={"state": state})
        else:
            _, info = env.reset(seed=seed)
        n_cards = env.unwrapped.variant.n_cards
        assert moves, "a win needs at least one move from a position that is not won"
        for i, a in enumerate(moves):
            assert info["action_mask"][a], f"move {i} (action {a}) is not legal here"
            _, _, terminated, truncated, info = env.step(a)
            assert not info["illegal_action"]
            assert not truncated
            last = i == len(moves) - 1
            assert terminated == last, f"the episode ended at move {i} of {len(moves)}" if terminated else (
                "the solution's last move does not end the game")
        assert info["is_won"]
        assert info["foundation_cards"] == n_cards
        assert env.unwrapped.game.is_won()
    finally:
        env.close()


def reachable_win(state: dict, allow=lambda game, a: True, max_positions: int = 200_000) -> bool:
    """Independent brute force: is a won position reachable using only the moves ``allow`` accepts?

    Plain breadth-first search over the engine's legal moves: no safe moves, no move ordering, no
    canonical keys. Only for small hand-built positions.
    """
    start = Game.from_state(state)
    seen = {start.state.tobytes()}
    frontier = [start]
    while frontier:
        nxt = []
        for game in frontier:
            if game.is_won():
                return True
            for a in game.legal_actions():
                a = int(a)
                if not allow(game, a):
                    continue
                child = game.copy()
                child.play(a)
                key = child.state.tobytes()
                if key not in seen:
                    seen.add(key)
                    nxt.append(child)
        assert len(seen) <= max_positions, "position too big for the brute-force check"
        frontier = nxt
    return False


def split_count(game: Game, a: int) -> int | None:
    """If action ``a`` moves the top part (2 or more cards, not all) of a packed run onto another pile
    in ``game``: how many cards it moves; otherwise ``None``."""
    v = game.variant
    if v.actions[a, 0] != TABLEAU_TO_TABLEAU:
        return None
    count = int(core.resolve(game.state, v.spec, v.actions, a)[1])
    run = int(core.run_length(game.state, v.spec, int(v.actions[a, 1])))
    return count if 2 <= count < run else None


def random_positions(game: str, n_games: int, max_moves: int, seed: int = 0):
    """Positions reached by seeded random play from deals 0 .. n_games-1 (every position on the way)."""
    v = get_variant(game)
    rng = np.random.default_rng(seed)
    mask = np.zeros(v.n_actions, dtype=np.int8)
    for d in range(n_games):
        s = deal(v, d)
        for _ in range(max_moves):
            if core.legal_mask(s, v.spec, v.actions, mask) == 0:
                break
            yield s.copy()
            core.apply_action(s, v.spec, v.actions, int(rng.choice(np.flatnonzero(mask))))


# --- hand-built positions --------------------------------------------------------------------------

FULL = (13, 13)
EMPTY_TABLEAU: list[list[str]] = [[] for _ in range(10)]


def one_move_from_win() -> dict:
    """Everything on the foundations but the King of spades, alone on pile 3."""
    tableau = [list(p) for p in EMPTY_TABLEAU]
    tableau[3] = ["Ks"]
    return rank_and_file({"c": FULL, "d": FULL, "h": FULL, "s": (13, 12)}, tableau)


def test_rank_and_file_one_move_from_a_win_is_won_in_that_move():
    state = one_move_from_win()
    game = Game.from_state(state)
    assert len(game.legal_actions()) == 1
    result = solve_state(state)
    assert result.result == "won"
    assert result.moves == [int(game.legal_actions()[0])]
    replay_to_win("RankAndFile-v0", result.moves, state=state)


def test_rank_and_file_last_card_in_the_waste_is_won():
    state = rank_and_file({"c": FULL, "d": (12, 13), "h": FULL, "s": FULL}, EMPTY_TABLEAU, waste=["Kd"])
    result = solve_state(state)
    assert result.result == "won" and len(result.moves) == 1
    replay_to_win("RankAndFile-v0", result.moves, state=state)


def dead_end() -> dict:
    """Legal moves, none of them useful: a locked table and one card to shuffle around.

    Clubs and spades are on the foundations to the 9 (both decks), hearts to the 9 on one foundation
    and complete on the other, diamonds complete. The four Tens lie face down under Kings and Queens,
    and no pile can ever be emptied: black cards never build on each other, Kings move only to an empty
    pile, and the only red cards that could come up (Th, Qh, Kh) are under the locked piles. The stock
    holds one Jh: it can be drawn and shuttled between the two Qs piles, and nothing else.
    """
    tableau = [
        ["#Tc", "Kc"], ["#Tc", "Kc"], ["#Ts", "Ks"], ["#Ts", "Ks"], ["#Qc", "Jc"],
        ["#Qc", "Jc"], ["#Kh", "Js"], ["#Qh", "Js"], ["#Th", "Qs"], ["Qs"],
    ]
    return rank_and_file({"c": (9, 9), "d": FULL, "h": (9, 13), "s": (9, 9)}, tableau, stock=["Jh"])


def test_dead_end_with_legal_moves_is_lost():
    state = dead_end()
    game = Game.from_state(state)
    assert len(game.legal_actions()) > 0  # there are moves (the draw), ...
    assert not reachable_win(state)  # ... but none leads to a win (independent brute force)
    result = solve_state(state)
    assert result.result == "lost", result
    assert result.moves is None


def test_position_without_a_legal_move_is_lost():
    state = dead_end()
    state["stock"], state["tableau"][9] = [], ["#Jh", "Qs"]  # the Jh under the last Qs: nothing moves
    checked(state)
    game = Game.from_state(state)
    assert len(game.legal_actions()) == 0 and game.is_lost()
    result = solve_state(state)
    assert result.result == "lost", result


def split_position() -> dict:
    """A Rank and File position that only a run split wins.

    Pile 0 is ``#Tc Ks Qh Jc``: a packed run of three on a face-down Ten of clubs. Foundations: clubs
    to the J and to the 9, diamonds to the 9 twice, hearts to the J and to the 9, spades complete and to
    the Q. Every other pile is locked: a King (Kc Kc Kh Kh Kd Kd) or a Jack (Jh Jd Jd) on top, whose
    foundation card is face down (Qc Qc, Th Qh, Td Td, Qd Qd) or off the foundations, no Queen face up
    for a Jack, no empty pile, no stock.

    Before the split the only legal moves are Qh-Jc (2 of the 3 cards) onto a Kc. After it the Ks goes
    up, the Tc turns up and goes up, pile 0 is empty, and everything unwinds: Jc, Qh, Kh (Td under it),
    the other Kh into the empty pile (Td), the Jacks and Queens of diamonds, hearts, clubs.
    """
    tableau = [
        ["#Tc", "Ks", "Qh", "Jc"],
        ["#Qc", "Kc"], ["#Qc", "Kc"], ["#Td", "Kh"], ["#Td", "Kh"], ["#Qd", "Kd"],
        ["#Qd", "Kd"], ["#Th", "Jh"], ["#Qh", "Jd"], ["Jd"],
    ]
    return rank_and_file({"c": (11, 9), "d": (9, 9), "h": (11, 9), "s": (13, 12)}, tableau)


def test_position_won_only_by_a_run_split():
    state = split_position()
    game = Game.from_state(state)
    assert game.action_mask().any()
    # Every legal move at the start is a split, and no win exists without splitting (brute force).
    assert all(split_count(game, int(a)) for a in game.legal_actions())
    assert not reachable_win(state, allow=lambda g, a: split_count(g, a) is None)

    result = solve_state(state)
    assert result.result == "won", result
    splits = []
    for a in result.moves:  # the counts the solution's tableau moves have where they are played
        count = split_count(game, a)
        if count is not None:
            splits.append((count, int(core.run_length(game.state, game.variant.spec, int(game.variant.actions[a, 1])))))
        game.play(a)
    assert game.is_won()
    assert splits and all(2 <= count < run for count, run in splits)
    assert (2, 3) in splits
    replay_to_win("RankAndFile-v0", result.moves, state=state)


def test_split_position_without_the_split_is_lost():
    # Swap the run's Jc with pile 7's Jh: Qh-Jh is no packed run, so the split is gone (and with it
    # every legal move); the cards and foundations are those of the won position.
    state = split_position()
    state["tableau"][0][-1], state["tableau"][7][-1] = "Jh", "Jc"
    checked(state)
    assert not reachable_win(state)
    result = solve_state(state)
    assert result.result == "lost", result


def rainbow_redeal(redeals: int) -> dict:
    """Rainbow, base rank Ace: hearts and diamonds complete, clubs to the 8, spades to the J. Piles Kc,
    Qc, Jc, Tc; waste 9c Qs Ks (Ks on top); stock and reserve empty.

    Nothing plays from the waste's top (Ks needs Qs; no red Ace to wrap onto) and no pile moves (all
    black), so the only move is the redeal; after it the stock deals 9c first: 9c, then the four
    piles Tc-Kc (the emptied piles stay empty: the reserve is empty), then Qs and Ks.
    """
    state = {
        "format": 1, "variant": "rainbow",
        "tableau": [["Kc"], ["Qc"], ["Jc"], ["Tc"]],
        "foundations": [_suit_pile("h", 13), _suit_pile("d", 13), _suit_pile("c", 8), _suit_pile("s", 11)],
        "stock": [], "waste": ["9c", "Qs", "Ks"], "reserve": [], "redeals_left": redeals, "base_rank": "A",
    }
    return checked(state)


def test_rainbow_win_that_needs_the_redeal():
    state = rainbow_redeal(1)
    v = get_variant("rainbow")
    game = Game.from_state(state)
    assert [int(v.actions[a, 0]) for a in game.legal_actions()] == [REDEAL]
    result = solve_state(state)
    assert result.result == "won", result
    kinds = [int(v.actions[a, 0]) for a in result.moves]
    assert kinds[0] == REDEAL and kinds.count(REDEAL) == 1 and kinds.count(DRAW) == 3
    replay_to_win("Rainbow-v0", result.moves, state=state)


def test_rainbow_same_position_without_redeals_is_lost():
    state = rainbow_redeal(0)
    assert Game.from_state(state).is_lost()
    assert solve_state(state).result == "lost"


# --- sample deals ----------------------------------------------------------------------------------


def heuristic_wins(env_id: str, seed: int) -> bool:
    """Play the heuristic agent on deal ``seed`` as :func:`solitaire_env.tools.evaluation.evaluate` does."""
    env = gym.make(env_id)
    try:
        agent = make_agent("heuristic", env_id)
        obs, info = env.reset(seed=seed)
        agent.reset(seed=agent_seed(seed))
        terminated = truncated = False
        while not (terminated or truncated) and info["action_mask"].any():
            obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        return bool(info["is_won"])
    finally:
        env.close()


# Rank and File's deals take the solver longer: they run with the slow tests, Rainbow's in every run.
@pytest.mark.parametrize("game, seeds, seconds", [("rainbow", range(10), 3.0),
                                                  pytest.param("rank_and_file", range(6), 1.5, marks=pytest.mark.slow)])
def test_sample_deals_wins_replay_and_heuristic_wins_are_never_lost(game, seeds, seconds):
    env_id = ENV_OF[game]
    answers = {}
    for seed in seeds:
        result = solve(game, seed=seed, time_limit=seconds)
        answers[seed] = result.result
        assert result.result in ("won", "lost", "unknown")
        if result.result == "won":
            replay_to_win(env_id, result.moves, seed=seed)
        else:
            assert result.moves is None
        if heuristic_wins(env_id, seed):
            assert result.result != "lost", f"{game} deal {seed}: the heuristic agent wins it, the solver says lost"
    assert "won" in answers.values(), answers  # the replay check ran at least once


def test_solution_from_a_mid_game_position_replays():
    # A position other than a fresh deal: deal 0 after a few moves.
    game = Game("rank_and_file", seed=0)
    for _ in range(5):
        game.play(int(game.legal_actions()[0]))
    state = game.get_state()
    result = solve_state(state, time_limit=5)
    assert result.result in ("won", "unknown")
    if result.result == "won":
        replay_to_win("RankAndFile-v0", result.moves, state=state)


# --- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, message", [
    (dict(game="spider", seed=0), "unknown variant 'spider'"),
    (dict(game="rainbow", seed=-1), "seed must be a non-negative integer"),
    (dict(game="rainbow", seed=1.5), "seed must be a non-negative integer"),
    (dict(game="rainbow", seed="3"), "seed must be a non-negative integer"),
    (dict(game="rainbow", seed=True), "seed must be a non-negative integer"),
    (dict(game="rainbow", seed=0, time_limit=0), "time limit must be positive"),
    (dict(game="rainbow", seed=0, time_limit=-1.0), "time limit must be positive"),
    (dict(game="rainbow", seed=0, time_limit=float("nan")), "time limit must be positive"),
    (dict(game="rainbow", seed=0, max_nodes=0), "max_nodes must be positive"),
    (dict(game="rainbow", seed=0, max_nodes=-10), "max_nodes must be positive"),
    (dict(game="rainbow"), "exactly one of seed and state_array"),
    (dict(game="rainbow", seed=0, state_array=np.zeros(3, dtype=np.int8)), "exactly one of seed and state_array"),
    (dict(game="rainbow", state_array=np.zeros(3, dtype=np.int8)), "state_array must have shape"),
])
def test_bad_input_raises_value_error_naming_the_problem(kwargs, message):
    game = kwargs.pop("game")
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        solve(game, **kwargs)


@pytest.mark.parametrize("fields, message", [
    (dict(time_limit=0), "time limit must be positive"),
    (dict(time_limit=float("nan")), "time limit must be positive"),
    (dict(max_nodes=0), "max_nodes must be positive"),
    (dict(memory_mb=0), "memory_mb must be at least 1"),
    (dict(max_depth=0), "max_depth must be at least 1"),
    (dict(slice_nodes=0), "slice_nodes must be at least 1"),
    (dict(first_phase=1.0), "first_phase, the restart share, must be in"),
    (dict(first_phase=-0.1), "first_phase, the restart share, must be in"),
])
def test_solve_options_refuse_bad_limits(fields, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        SolveOptions(**fields)


def test_solve_options_are_frozen_with_the_games_defaults_and_overrides():
    options = SolveOptions(max_nodes=5000, time_limit=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.max_nodes = 1  # type: ignore[misc]
    assert (options.stock_macros, options.agent_guidance) == (None, None)  # the game decides
    for game, macros, guidance in [("rainbow", True, False), ("rank_and_file", False, True),
                                   ("number_ten", False, True)]:
        resolved = options.for_game(game)
        assert (resolved.stock_macros, resolved.agent_guidance, resolved.max_nodes) == (macros, guidance, 5000)
    told = SolveOptions(stock_macros=False, agent_guidance=True).for_game("rainbow")
    assert (told.stock_macros, told.agent_guidance) == (False, True)
    # Keywords replace the options' fields: the same search either way.
    by_options = solve("rainbow", seed=2, options=SolveOptions(time_limit=None, max_nodes=3000))
    by_keywords = solve("rainbow", seed=2, time_limit=None, max_nodes=3000)
    replaced = solve("rainbow", seed=2, options=SolveOptions(max_nodes=10), time_limit=None, max_nodes=3000)
    assert (by_options.result, by_options.nodes, by_options.moves) == (by_keywords.result, by_keywords.nodes,
                                                                       by_keywords.moves)
    assert (replaced.result, replaced.nodes) == (by_keywords.result, by_keywords.nodes)
    with pytest.raises(TypeError):
        solve("rainbow", seed=2, max_positions=10)


def test_a_node_limit_short_of_a_proof_gives_unknown_never_lost():
    """Rainbow deal 736 is lost; its complete search takes ``full.nodes`` positions. The same search
    stopped earlier has proved nothing, so it must answer unknown; the limit is checked between
    slices of ``slice_nodes``, so it is kept to within one slice."""
    full = solve("rainbow", seed=736, time_limit=None)
    assert full.result == "lost"
    slice_nodes = 100
    for limit in (1, full.nodes // 2, full.nodes - slice_nodes):
        result = solve("rainbow", seed=736, time_limit=None, max_nodes=limit, slice_nodes=slice_nodes)
        assert (result.result, result.reason, result.moves) == ("unknown", "nodes", None), (limit, result)
        assert limit <= result.nodes < limit + slice_nodes


def test_under_the_default_slices_every_limit_below_a_restart_searches_alike():
    """What the plan-sliced agent's N means (agents/plan.py): with the default slices a phase that runs at all
    runs one slice, so any ``max_nodes`` below ``RESTART_NODES`` searches the same positions: Rank and
    File deal 2 is undecided after its first search (one restart slice) and the complete search (one
    ``slice_nodes`` slice); Rainbow deal 2's first search leaves no move out, so it stops after its one."""
    options = SolveOptions()
    for game, most in (("rank_and_file", RESTART_NODES + options.slice_nodes), ("rainbow", RESTART_NODES)):
        small, larger = (solve(game, seed=2, time_limit=None, max_nodes=n) for n in (300, RESTART_NODES // 2))
        assert (small.result, small.reason) == ("unknown", "nodes"), (game, small)
        assert (small.result, small.nodes) == (larger.result, larger.nodes), game
        assert RESTART_NODES <= small.nodes <= most, (game, small.nodes)


# --- safe moves ------------------------------------------------------------------------------------


def _safe(levels: dict[str, tuple[int, int]], card: str) -> bool:
    """``is_safe`` for ``card``, alone on pile 0, with the other cards off the foundations in the stock."""
    v = get_variant("rank_and_file")
    on_foundations = {(s, RANKS[k]): sum(k < n for n in levels[s]) for s in SUITS for k in range(13)}
    off = [r + s for (s, r), n in on_foundations.items() for _ in range(2 - n)]
    off.remove(card)
    tableau = [[card]] + [[] for _ in range(9)]
    state = rank_and_file(levels, tableau, stock=off)
    _, arr = from_json(state)
    code = SUITS.index(card[1]) * 13 + RANKS.index(card[0])
    return bool(is_safe(arr, v.spec, code))


def test_safe_only_when_every_card_that_could_go_on_it_is_on_the_foundations():
    # 5h can go up (hearts at 4). Cards that build on it: the four black 4s (two decks).
    assert _safe({"c": (13, 4), "d": FULL, "h": (13, 4), "s": (13, 4)}, "5h")
    assert _safe({"c": (13, 13), "d": FULL, "h": (4, 13), "s": (5, 4)}, "5h")
    # One 4s still off (its second foundation at the 3): a card could still be built on the 5h.
    assert not _safe({"c": (13, 4), "d": FULL, "h": (13, 4), "s": (13, 3)}, "5h")
    assert not _safe({"c": (13, 3), "d": FULL, "h": (13, 4), "s": (13, 4)}, "5h")
    # One copy of each black 4 up is not enough: both decks count.
    assert not _safe({"c": (13, 0), "d": FULL, "h": (13, 4), "s": (13, 0)}, "5h")
    # Red cards of the rank below do not matter.
    assert _safe({"c": (13, 4), "d": (13, 3), "h": (13, 4), "s": (13, 4)}, "5h")
    # Aces are always safe; a card that cannot go up is never safe.
    assert _safe({"c": FULL, "d": (13, 0), "h": FULL, "s": FULL}, "Ad")
    assert not _safe({"c": (13, 13), "d": FULL, "h": (13, 3), "s": (13, 13)}, "5h")


# --- stock macros: "draw to a card and play it" as one move -------------------------------------------


@pytest.mark.parametrize("seed", [240, 736, 832, 953])
def test_stock_macros_prove_the_same_losses_with_fewer_positions(seed):
    full = solve("rainbow", seed=seed, time_limit=None, max_nodes=3_000_000, stock_macros=False)
    macros = solve("rainbow", seed=seed, time_limit=None, max_nodes=3_000_000, stock_macros=True)
    assert full.result == macros.result == "lost"
    assert macros.stored < full.stored


def test_stock_macros_keep_the_hand_built_answers():
    won = solve_state(rainbow_redeal(1), stock_macros=True)
    assert won.result == "won"
    kinds = [int(get_variant("rainbow").actions[a, 0]) for a in won.moves]
    assert kinds[0] == REDEAL and kinds.count(DRAW) == 3  # the macro's steps come out as single actions
    replay_to_win("Rainbow-v0", won.moves, state=rainbow_redeal(1))
    assert solve_state(rainbow_redeal(0), stock_macros=True).result == "lost"
    assert solve_state(split_position(), stock_macros=True).result == "won"
    assert solve_state(dead_end(), stock_macros=True).result == "lost"


@pytest.mark.parametrize("game, seeds", [("rainbow", [0, 4, 9, 10]), ("rank_and_file", [0, 1]), ("number_ten", [0])])
def test_stock_macros_find_wins_that_replay(game, seeds):
    for seed in seeds:
        result = solve(game, seed=seed, time_limit=None, max_nodes=3_000_000, stock_macros=True)
        assert result.result == "won", (game, seed, result)
        replay_to_win(ENV_OF[game], result.moves, seed=seed)


def engine_stock_plays(v, s: np.ndarray) -> list[tuple[int, int, np.ndarray]]:
    """(steps, action, position after) for every waste play the engine allows after stepping through the
    stock ``steps`` times (drawing, and redealing once the stock is out), each arrangement of the stock
    and waste once, by the fewest steps: stepping on until an arrangement comes back (a step from there
    goes round as before) or no step is left. The start's own waste card is in play without a step."""
    mask = np.zeros(v.n_actions, dtype=np.int8)
    waste_kinds = (variant.WASTE_TO_FOUNDATION, variant.WASTE_TO_TABLEAU, variant.WASTE_TO_EMPTY)
    o_stock, o_waste = v.spec[variant.O_STOCK], v.spec[variant.O_WASTE]

    def arrangement(t):
        n, w = int(t[v.spec[variant.O_NSTOCK]]), int(t[v.spec[variant.O_NWASTE]])
        return tuple(t[o_stock:o_stock + n]), tuple(t[o_waste:o_waste + w])

    t, plays, steps, seen = s.copy(), [], 0, {arrangement(s)}
    while True:
        core.legal_mask(t, v.spec, v.actions, mask)
        step = [a for a in np.flatnonzero(mask) if v.actions[a, 0] in (DRAW, REDEAL)]
        if not step:
            return plays
        core.apply_action(t, v.spec, v.actions, int(step[0]))
        steps += 1
        if arrangement(t) in seen:
            return plays
        seen.add(arrangement(t))
        core.legal_mask(t, v.spec, v.actions, mask)
        for a in np.flatnonzero(mask):
            if v.actions[a, 0] in waste_kinds:
                after = t.copy()
                core.apply_action(after, v.spec, v.actions, int(a))
                plays.append((steps, int(a), after))


@pytest.mark.parametrize("game", ["rainbow", "rank_and_file", "number_ten", "klondike", "klondike_draw3",
                                  "klondike_draw3_redeals1", "klondike_redeals0"])
def test_stock_macros_are_the_engines_stock_plays(game):
    """The macros' own model of the stock, kept for speed (docs/design.md, "Rules kept twice, and
    checked"): which card each step brings up, where it can go (bit sets of what the foundations and
    pile tops take), and the stepping itself, against the engine's draws, redeals and legal moves on
    positions of random play: the same plays, by the same steps, to the same positions."""
    from solitaire_env.solver.macros import apply_move, stock_macros

    v = get_variant(game)
    size = v.n_actions + v.n_cards * (v.piles + 2)
    out, scores = np.zeros(size, dtype=np.int32), np.zeros(size, dtype=np.int64)
    checked = 0
    for s in random_positions(game, n_games=5, max_moves=200):
        k, n_legal = stock_macros(s, v.spec, v.actions, out, scores, 0, -10**6, 0)
        assert k == n_legal
        got = sorted((int(m) // v.n_actions, int(m) % v.n_actions) for m in out[:k])
        expected = engine_stock_plays(v, s)
        assert got == sorted((steps, a) for steps, a, _ in expected)
        for steps, a, after in expected:
            played = s.copy()
            assert apply_move(played, v.spec, v.actions, a + v.n_actions * steps) == a
            assert np.array_equal(played, after)
        checked += len(expected)
    assert checked > 200


def test_a_stored_position_with_more_redeals_left_covers_the_same_position_with_fewer():
    from solitaire_env.solver.dominance import insert_undominated

    v = get_variant("rainbow")
    s = from_json(rainbow_redeal(2))[1]
    table = np.zeros(1 << 10, dtype=np.uint64)
    fewer = s.copy()
    fewer[v.spec[variant.O_REDEALS]] = 1
    assert insert_undominated(table, s, v.spec)  # new
    assert not insert_undominated(table, s, v.spec)  # stored already
    assert not insert_undominated(table, fewer, v.spec)  # covered by the one with 2 redeals
    table[:] = 0
    assert insert_undominated(table, fewer, v.spec)  # fewer redeals do not cover more
    assert insert_undominated(table, s, v.spec)


# --- agent guidance ---------------------------------------------------------------------------------


@pytest.mark.parametrize("game, seed", [("rank_and_file", 336), ("number_ten", 84)])
def test_a_won_playout_replays_to_a_win_and_a_lost_one_says_how_far_it_got(game, seed):
    start = deal(get_variant(game), seed)
    won = next(p for p in (playout(game, start, seed=k) for k in range(20)) if p[0] is not None)
    moves, played, reached = won
    assert played == len(moves) and reached == 104
    replay_to_win(ENV_OF[game], moves, seed=seed)
    lost, played, reached = playout(game, deal(get_variant(game), 14), seed=0)  # a deal it does not win
    assert lost is None and 0 < played and 0 < reached < 104


@pytest.fixture
def short_restarts(monkeypatch):
    """Restarts of 20 positions: too short to win a two-deck deal, which takes at least 64 positions (one
    draw a node for every stock card), so a win can only come from agent guidance."""
    from solitaire_env.solver import api

    monkeypatch.setattr(api, "RESTART_NODES", 20)


def _spy(monkeypatch, owner, name: str) -> list:
    """Record what ``owner.name`` returns, call by call."""
    real, calls = getattr(owner, name), []

    def spy(*args, **kwargs):
        calls.append(real(*args, **kwargs))
        return calls[-1]

    monkeypatch.setattr(owner, name, spy)
    return calls


def test_agent_guidance_returns_a_won_playout(monkeypatch, short_restarts):
    """Rank and File deal 336: the noisy heuristic's first playout wins it; that is the solver's answer."""
    from solitaire_env.agents import heuristic

    playouts = _spy(monkeypatch, heuristic, "playout")
    limits = dict(time_limit=None, max_nodes=20_000, playout=heuristic.playout)
    guided = solve("rank_and_file", seed=336, agent_guidance=True, **limits)
    assert guided.result == "won" and playouts and guided.moves == playouts[-1][0]
    replay_to_win("RankAndFile-v0", guided.moves, seed=336)
    n = len(playouts)
    solve("rank_and_file", seed=336, agent_guidance=False, **limits)
    assert len(playouts) == n  # no playouts without guidance
    assert solve("rank_and_file", seed=336, **limits).moves == guided.moves  # on by default in the two-deck games
    # Without a player the guidance is the solver's own (agent-ordered restarts, rollouts): no playouts.
    n = len(playouts)
    solve("rank_and_file", seed=336, agent_guidance=True, time_limit=None, max_nodes=20_000)
    assert len(playouts) == n


@pytest.mark.parametrize("state", [dead_end, split_position, lambda: rainbow_redeal(1), lambda: rainbow_redeal(0)])
def test_the_agents_move_order_gives_complete_searches_the_same_answers(state):
    v, s = from_json(state())
    answers = set()
    for agent_order in (False, True):
        solver = Solver(v, s.copy(), memory_mb=16, agent_order=agent_order)
        status = solver.run(1_000_000)
        assert status in (WON, EXHAUSTED)
        answers.add(status)
        if status == WON:
            replay_to_win(ENV_OF[v.name], solver.solution(), state=state())
    assert len(answers) == 1


@pytest.mark.parametrize("game", ["rank_and_file", "number_ten"])
def test_the_solvers_agent_order_ranks_the_agents_rules_as_the_agent_does(game):
    """One tier table (solver/guidance.py) for the agent and the solver: wherever the agent ranks one of
    rules 2-8 above another, the solver's agent order scores it higher too (rules 9-13 and the safe
    moves the solver handles its own way; Rainbow's waste rule, after the reserve, it does not follow)."""
    from solitaire_env.agents.heuristic import HeuristicAgent, Rules
    from solitaire_env.solver.guidance import T_KING_INTO_EMPTY, T_SAFE_FOUNDATION, agent_move_score

    v = get_variant(game)
    rules, agent = Rules(v), HeuristicAgent(v)
    obs, mask = np.zeros(v.obs_size, dtype=np.int16), np.zeros(v.n_actions, dtype=np.int8)
    pairs = 0
    for s in random_positions(game, n_games=6, max_moves=150):
        core.observe(s, v.spec, obs)
        core.legal_mask(s, v.spec, v.actions, mask)
        table = rules.observe(obs)
        rated = []
        for a in np.flatnonzero(mask):
            tier = agent._rule(table, int(a))[0]
            if T_KING_INTO_EMPTY <= tier < T_SAFE_FOUNDATION:
                rated.append((tier, int(agent_move_score(s, v.spec, v.actions, int(a)))))
        for tier, score in rated:
            for other_tier, other_score in rated:
                if tier > other_tier:
                    pairs += 1
                    assert score > other_score, (tier, score, other_tier, other_score)
    assert pairs > 100


# --- stock dominance: a position is as good as the same one further on in the stock -------------------


def test_stock_dominance_ranks_redeals_left_then_cards_dealt():
    from solitaire_env.solver.dominance import insert_dominant
    from solitaire_env.solver.macros import step_through_stock

    v = get_variant("rainbow")
    deal_ = deal(v, 0)

    def dealt(steps: int) -> np.ndarray:
        s = deal_.copy()
        step_through_stock(s, v.spec, steps)
        return s

    n = int(deal_[v.spec[variant.O_NSTOCK]])
    early, late, redealt = dealt(5), dealt(9), dealt(n + 1 + 2)  # the last: after the redeal, 2 dealt again
    assert int(redealt[v.spec[variant.O_REDEALS]]) == 1
    table, best = np.zeros(1 << 10, dtype=np.uint64), np.zeros(1 << 10, dtype=np.int16)
    assert insert_dominant(table, best, late, v.spec) == 1  # new
    assert insert_dominant(table, best, early, v.spec) == 2  # better: fewer cards dealt
    assert insert_dominant(table, best, late, v.spec) == 0  # early can deal on to it
    assert insert_dominant(table, best, redealt, v.spec) == 0  # a redeal fewer: early covers it
    assert insert_dominant(table, best, deal_, v.spec) == 2  # nothing dealt at all: best so far
    played = early.copy()  # a different layout: the waste's top card gone
    played[v.spec[variant.O_NWASTE]] -= 1
    played[v.spec[variant.O_WASTE] + 4] = 0
    assert insert_dominant(table, best, played, v.spec) == 1


@pytest.mark.parametrize("seed", [0, 4, 11, 240, 604, 736])
def test_stock_dominance_gives_the_same_answers(seed):
    v = get_variant("rainbow")
    runs = []
    for dominance in (False, True):
        solver = Solver(v, deal(v, seed), memory_mb=64, stock_macros=True, stock_dominance=dominance)
        runs.append((solver.run(3_000_000), solver.nodes))
        if runs[-1][0] == WON:
            replay_to_win("Rainbow-v0", solver.solution(), seed=seed)
    (plain, plain_nodes), (dominance, dominance_nodes) = runs
    assert dominance in (WON, EXHAUSTED) and plain in (dominance, 0)  # 0: still running at the node limit
    if dominance == EXHAUSTED:
        assert dominance_nodes < plain_nodes


def test_a_rollout_wins_an_easy_deal_repeats_itself_and_reports_a_loss():
    from solitaire_env.solver import rollout

    easy = deal(get_variant("rank_and_file"), 0)
    moves, positions, reached = rollout("rank_and_file", easy)
    assert moves is not None and positions > 0 and reached == 104
    replay_to_win("RankAndFile-v0", moves, seed=0)
    assert rollout("rank_and_file", easy, seed=3) == rollout("rank_and_file", easy, seed=3)
    lost = from_json(dead_end())[1]  # no win exists (brute force, above)
    for seed in (0, 3):
        moves, positions, reached = rollout("rank_and_file", lost, seed=seed)
        assert moves is None and positions > 0 and 0 < reached < 104


def test_solve_returns_a_rollouts_win(monkeypatch, short_restarts):
    """With playouts that never win and restarts too short to, Rank and File deal 0 is won by a rollout
    (one after every restart here), and that is the solver's answer."""
    from solitaire_env.solver import api

    monkeypatch.setattr(api, "ROLLOUT_UNITS", 1)
    rollouts = _spy(monkeypatch, api, "rollout")
    result = solve("rank_and_file", seed=0, agent_guidance=True, time_limit=None, max_nodes=20_000,
                   playout=lambda *args, **kwargs: (None, 0, 0))
    assert result.result == "won" and rollouts and result.moves == rollouts[-1][0]
    replay_to_win("RankAndFile-v0", result.moves, seed=0)
