"""FreeCell in the engine: Microsoft's deals, the free cells, and the run limit checked by a search."""

from __future__ import annotations

import numpy as np
import pytest

from solitaire_env import Game, Move, get_variant
from solitaire_env.engine import core
from solitaire_env.engine.cards import card_from_str, card_to_str
from solitaire_env.engine.ms_deals import DEAL_LIMIT, microsoft_columns
from solitaire_env.engine.state import build, from_json
from solitaire_env.engine.variant import NO_CELL, TABLEAU_TO_EMPTY, TABLEAU_TO_TABLEAU, observation_fields

FREECELL = get_variant("freecell")


@pytest.mark.parametrize("number", [1, 617, 11982, *np.random.default_rng(37).integers(DEAL_LIMIT, size=12)])
def test_the_deal_of_a_number_is_microsofts(number):
    state = Game("freecell", int(number)).get_state()
    assert state["tableau"] == [[card_to_str(c) for c in column] for column in microsoft_columns(int(number))]
    assert state["cells"] == [None] * 4 and state["stock"] == [] and state["waste"] == []
    assert all(not card.startswith("#") for pile in state["tableau"] for card in pile)


def test_deal_1_begins_as_published():
    # The first row, one card per column, as every FreeCell program shows deal #1.
    assert [pile[0] for pile in Game("freecell", 1).get_state()["tableau"]] == \
        ["Jd", "2d", "9h", "Jc", "5d", "7h", "7c", "5h"]


@pytest.mark.parametrize("seed", [DEAL_LIMIT, 2**40])
def test_deal_numbers_past_microsofts_are_refused(seed):
    with pytest.raises(ValueError, match="FreeCell deals are numbered 0 .. 2147483647"):
        Game("freecell", seed)


def test_no_stock_or_waste_moves_and_the_cell_actions():
    kinds = set(FREECELL.actions[:, 0].tolist())
    assert kinds == {7, 8, 9, 10, 11, 12, 13}  # tableau and cell moves only
    assert FREECELL.n_actions == 8 + 56 + 8 * 13 + 4 + 32 + 4 + 8
    assert "stock_size" not in observation_fields(FREECELL) and "cells" in observation_fields(FREECELL)


def _position(piles: list[list[str]], cells: list[str | None], variant=FREECELL) -> np.ndarray:
    """A FreeCell state array from piles and cells (not checked: only the moves asked about matter)."""
    tableau = [([card_from_str(c) for c in pile], 0) for pile in piles] + [([], 0)] * (8 - len(piles))
    return build(variant, tableau, [[] for _ in range(4)], [], [], ([], 0), 0, 0,
                 [NO_CELL if c is None else card_from_str(c) for c in cells])


def test_a_card_goes_to_the_lowest_free_cell_and_back():
    game = Game("freecell", 1)
    game.play(Move("tableau", 0, "cell", 0, 1))
    game.play(Move("tableau", 0, "cell", 1, 1))
    state = game.get_state()
    assert state["cells"] == ["6s", "6d", None, None] and state["tableau"][0][-1] == "3s"
    with pytest.raises(ValueError):  # a cell's card cannot go back onto a pile it does not build on
        game.play(Move("cell", 0, "tableau", 0, 1))
    _, rebuilt = from_json(state)
    np.testing.assert_array_equal(rebuilt, game.state)
    obs = np.zeros(FREECELL.obs_size, dtype=np.int16)
    core.observe(game.state, FREECELL.spec, obs)
    cells = obs[observation_fields(FREECELL)["cells"][0]]
    assert cells.tolist() == [card_from_str("6s") + 1, card_from_str("6d") + 1, 0, 0]


def test_cell_cards_play_to_foundations_piles_and_empty_piles():
    s = _position([["Kc", "5h"], ["6s"], ["Ad"]], ["Ah", "4c", None, None])
    game = Game("freecell", 0)
    game.state = s
    legal = {str(m) for m in game.legal_moves()}
    assert "cell 0 -> foundation 0" in legal  # the Ace of hearts
    assert "cell 1 -> tableau 0" in legal  # 4c on 5h
    assert {"cell 0 -> tableau 3", "cell 1 -> tableau 3"} <= legal  # into the lowest empty pile
    assert "cell 0 -> tableau 0" not in legal
    assert not any(m.source == "cell" and m.source_index in (2, 3) for m in game.legal_moves())


def _reachable(length: int, cells: int, empties: int, to_empty: bool) -> bool:
    """Whether single-card moves through ``cells`` free cells and ``empties`` empty piles carry a run of
    ``length`` cards (``length - 1`` at the bottom down to 0) onto a target: a pile accepting the
    bottom card, or an empty pile (one of ``empties``) when ``to_empty``. Breadth-first over positions;
    card ``i`` goes onto card ``i + 1``, into a free cell, or into an empty pile."""
    n_piles = 2 + empties - (1 if to_empty else 0)  # source, target, the other empty piles
    start = (tuple(range(length - 1, -1, -1)), ()) + ((),) * (n_piles - 2), 0
    seen, frontier = {start}, [start]
    while frontier:
        nxt = []
        for piles, used in frontier:
            if len(piles[1]) == length:
                return True
            moves = []
            for p, pile in enumerate(piles):
                if pile:
                    moves.append(("pile", p, pile[-1]))
            # A cell's cards are interchangeable: `used` is a bit set of the cards held there.
            moves += [("cell", None, c) for c in range(length) if used >> c & 1]
            for where, p, card in moves:
                for q, onto in enumerate(piles):
                    if q == p:
                        continue
                    if onto:
                        fits = onto[-1] == card + 1
                    elif q == 0:  # the source: its card under the run takes none of the run's cards
                        fits = False
                    elif q == 1:  # the target takes the run's bottom card first, unless it is an empty pile
                        fits = to_empty or card == length - 1
                    else:
                        fits = True
                    if not fits:
                        continue
                    new = list(piles)
                    if where == "pile":
                        new[p] = piles[p][:-1]
                    new[q] = piles[q] + (card,)
                    state = (tuple(new), used & ~(1 << card) if where == "cell" else used)
                    if state not in seen:
                        seen.add(state)
                        nxt.append(state)
                if where == "pile" and bin(used).count("1") < cells:
                    new = list(piles)
                    new[p] = piles[p][:-1]
                    state = (tuple(new), used | 1 << card)
                    if state not in seen:
                        seen.add(state)
                        nxt.append(state)
        frontier = nxt
    return False


def _run(length: int) -> list[str]:
    """A packed run of ``length`` cards from the Jack down, alternating colours, the Jack black."""
    return [("JT98765432"[k]) + ("c" if k % 2 == 0 else "h") for k in range(length)]


@pytest.mark.parametrize("cells,empties", [(0, 0), (1, 0), (3, 0), (4, 0), (0, 1), (1, 1), (3, 1), (0, 2), (1, 2)])
def test_the_run_limit_is_what_single_card_moves_achieve(cells, empties):
    # The engine decides by the formula; a search that only moves one card at a time must agree.
    for to_empty in ([False, True] if empties else [False]):
        for length in range(1, 10):
            piles = [["Kd"] + _run(length), ["Qh"]]  # the Jack of clubs builds on the Queen of hearts
            piles += [["Ad"]] * (6 - empties)  # filler piles: an Ace, onto which nothing of the run builds
            filled = ["2d", "3d", "4d", "5d"][: 4 - cells]
            s = _position(piles, filled + [None] * cells)
            target = 2 + 6 - empties  # the first empty pile
            if to_empty:
                kind, src, count = TABLEAU_TO_EMPTY, 0, length
                a = next(a for a, row in enumerate(FREECELL.actions) if row[0] == kind and row[1] == src
                         and row[3] == count)
            else:
                a = next(a for a, row in enumerate(FREECELL.actions) if row[0] == TABLEAU_TO_TABLEAU
                         and row[1] == 0 and row[2] == 1)
            got_target, moved = core.resolve(s, FREECELL.spec, FREECELL.actions, a)
            expect = _reachable(length, cells, empties, to_empty)
            assert (moved == length) == expect, f"{length} cards, {cells} cells, {empties} empty, {to_empty}"
            if expect and to_empty:
                assert got_target == target
            mask = np.zeros(FREECELL.n_actions, dtype=np.int8)
            core.legal_mask(s, FREECELL.spec, FREECELL.actions, mask)
            assert bool(mask[a]) == expect


def test_cells_in_json_are_checked():
    state = Game("freecell", 1).get_state()
    for cells, message in [
        (None, "cells must be a list of 4 entries"),
        ([None] * 3, "got 3 entries"),
        (["Zz", None, None, None], r"cells\[0\]"),
        ([5, None, None, None], r"cells\[0\] must be a card string"),
        (["Jd", None, None, None], "Jd appears 2 time"),
    ]:
        with pytest.raises(ValueError, match=message):
            from_json({**state, "cells": cells})
    seed_game = Game("rank_and_file", 1).get_state()
    with pytest.raises(ValueError, match="Rank and File has no free cells"):
        from_json({**seed_game, "cells": ["As"]})
    assert "cells" not in seed_game  # the seed games' states read and write as before


# --- the env ---------------------------------------------------------------------------------------


def test_freecell_env_passes_gymnasiums_checker():
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env

    env = gym.make("FreeCell-v0")
    check_env(env.unwrapped, skip_render_check=True)
    assert env.action_space.n == FREECELL.n_actions and env.spec.max_episode_steps == 1000


def test_reset_seed_deals_the_microsoft_deal_and_a_bad_seed_changes_nothing():
    import gymnasium as gym

    env = gym.make("FreeCell-v0")
    _, info = env.reset(seed=617)
    assert info["deal_seed"] == 617
    before = env.unwrapped.game.get_state()
    assert before["tableau"] == [[card_to_str(c) for c in col] for col in microsoft_columns(617)]
    with pytest.raises(ValueError, match="numbered 0 .. 2147483647"):
        env.reset(seed=DEAL_LIMIT)
    assert env.unwrapped.game.get_state() == before and env.unwrapped.deal_seed == 617


def test_splits_are_microsoft_numbers_and_train_ends_at_microsofts_last_deal():
    import gymnasium as gym

    env = gym.make("FreeCell-v0", deals="test")
    _, info = env.reset(seed=0)
    assert info["deal_seed"] == 0
    train = gym.make("FreeCell-v0", deals="train").unwrapped.deals
    assert train.deals == range(20_000, DEAL_LIMIT)
    with pytest.raises(ValueError, match="0 .. 2147483647"):
        gym.make("FreeCell-v0", deals=[DEAL_LIMIT])
    seeds = {gym.make("FreeCell-v0").reset()[1]["deal_seed"] for _ in range(20)}
    assert all(0 <= s < DEAL_LIMIT for s in seeds) and len(seeds) > 15


@pytest.mark.parametrize("cells", [4, 2])
def test_vector_env_plays_as_the_single_env(cells):
    import gymnasium as gym

    vec = gym.make_vec("FreeCell-v0", num_envs=3, vectorization_mode="vector_entry_point", cells=cells)
    obs, info = vec.reset(seed=[1, 617, 11982])
    rng = np.random.default_rng(5)
    singles = [gym.make("FreeCell-v0", cells=cells) for _ in range(3)]
    single_obs = [e.reset(seed=s)[0] for e, s in zip(singles, [1, 617, 11982], strict=True)]
    for _ in range(60):
        np.testing.assert_array_equal(obs, np.stack(single_obs))
        actions = np.array([int(rng.choice(np.flatnonzero(m))) for m in info["action_mask"]])
        obs, _, term, _, info = vec.step(actions)
        single_obs = [e.step(int(a))[0] for e, a in zip(singles, actions, strict=True)]
        if term.any():
            break
    with pytest.raises(ValueError, match="numbered 0 .. 2147483647"):
        vec.reset(seed=[1, 2, DEAL_LIMIT])


def test_text_shows_the_cells_and_no_stock():
    game = Game("freecell", 1)
    game.play(Move("tableau", 0, "cell", 0, 1))
    lines = str(game).splitlines()
    assert lines[1] == "cells: 6s -- -- --" and not any(line.startswith("stock") for line in lines)


@pytest.mark.parametrize("agent", ["heuristic", "search"])
def test_the_heuristic_and_search_agents_play_freecell_through_the_engine(agent):
    """They play Microsoft deals 1-5 to the end with legal moves only, win some (deal 3 with either),
    and play the same game again from the same seed."""
    import gymnasium as gym

    from solitaire_env.agents import make_agent

    def play(seed: int) -> tuple[list[int], bool]:
        env, player = gym.make("FreeCell-v0"), make_agent(agent, "FreeCell-v0", seed=0)
        obs, info = env.reset(seed=seed)
        player.reset(seed=0)
        moves, done = [], False
        while not done:
            a = player.act(obs, info)
            assert info["action_mask"][a]
            moves.append(a)
            obs, _, terminated, truncated, info = env.step(a)
            done = terminated or truncated
        return moves, bool(info["is_won"])

    games = {seed: play(seed) for seed in range(1, 6)}
    assert games[3][1] and all(len(moves) > 10 for moves, _ in games.values())
    assert play(3) == games[3]


def test_the_random_agent_plays_freecell_on_named_deals():
    from solitaire_env.agents import make_agent
    from solitaire_env.tools.evaluation import evaluate

    result = evaluate("FreeCell-v0", {"random": make_agent("random", "FreeCell-v0", seed=0)}, episodes=3, seed=0,
                      max_episode_steps=100, progress=False)
    assert [r.deal_seed for r in result.records] == [0, 1, 2]
    again = evaluate("FreeCell-v0", {"random": make_agent("random", "FreeCell-v0", seed=0)}, episodes=3, seed=0,
                     max_episode_steps=100, progress=False)
    assert [r.foundation_cards for r in result.records] == [r.foundation_cards for r in again.records]


def test_cell_notation_reads_back_and_bad_cell_notation_says_why():
    from solitaire_env.engine.notation import describe, notation, parse_move

    game = Game("freecell", 1)
    move = parse_move("t0 c", game)
    assert move == Move("tableau", 0, "cell", 0, 1) and notation(move, game) == "t0 c"
    assert describe(move, game) == "6s from t0 -> free cell c0"
    game.play(move)
    for text, message in [("c5 t0", "there is no free cell c5"), ("c1 t0", "free cell c1 is empty"),
                          ("w f", "FreeCell has no stock or waste"), ("d", "FreeCell has no stock or waste")]:
        with pytest.raises(ValueError, match=message):
            parse_move(text, game)
    for m in game.legal_moves():  # every legal move's notation names that move
        assert parse_move(notation(m, game), game) == m
    with pytest.raises(ValueError, match="Rainbow has no free cells"):
        parse_move("t0 c", Game("rainbow", 1))


def test_maskable_ppo_learns_on_the_sb3_adapter_without_error():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from solitaire_env.envs.sb3 import make_sb3_vec_env

    venv = make_sb3_vec_env("FreeCell-v0", n_envs=4, seed=0, deals="train")
    venv.reset()
    masks = venv.env_method("action_masks")  # what MaskablePPO reads
    assert len(masks) == 4 and all(m.shape == (FREECELL.n_actions,) and m.any() for m in masks)
    model = sb3_contrib.MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0)
    model.learn(128)
    assert model.num_timesteps >= 128


def test_no_revisit_masks_a_card_going_back_from_a_free_cell():
    """A pile's top card that builds on the card under it goes into a cell: the move putting it back is
    legal by the rules, masked with ``no_revisit``, flagged with ``track_revisits``, and reported as a
    revisit when played."""
    import gymnasium as gym

    from solitaire_env.engine.variant import A_FIRST, CELL_TO_TABLEAU, TABLEAU_TO_CELL

    masked = gym.make("FreeCell-v0", no_revisit=True)
    flagged = gym.make("FreeCell-v0", track_revisits=True, action_features=True, obs_mode="dict")
    to_cell, from_cell = int(FREECELL.spec[A_FIRST + TABLEAU_TO_CELL]), int(FREECELL.spec[A_FIRST + CELL_TO_TABLEAU])
    found = 0
    for seed in range(1, 40):
        masked.reset(seed=seed)
        for p in range(FREECELL.piles):
            game = Game("freecell", seed)
            if not game.action_mask()[to_cell + p]:
                continue
            game.play(to_cell + p)
            back = from_cell + p  # cell 0 -> pile p
            if not game.action_mask()[back]:
                continue  # the card does not build on the one it lay on
            found += 1
            masked.reset(seed=seed)
            _, _, _, _, info = masked.step(to_cell + p)
            assert not info["action_mask"][back]
            obs, info = flagged.reset(seed=seed)
            obs, _, _, _, info = flagged.step(to_cell + p)
            assert info["action_mask"][back] and obs["action_features"][back][-1] == 1
            _, _, _, _, info = flagged.step(back)
            assert info["revisit"]
    assert found > 0


# --- other cell counts -----------------------------------------------------------------------------


@pytest.mark.parametrize("cells", [1, 2, 6])
def test_the_cells_option_gives_that_many_cells_and_the_run_limit_counts_them(cells):
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env

    from solitaire_env.engine.variant import A_FIRST, TABLEAU_TO_CELL

    env = gym.make("FreeCell-v0", cells=cells)
    check_env(env.unwrapped, skip_render_check=True)
    v = env.unwrapped.variant
    assert v.cells == cells and env.action_space.n == 10 * cells + 176 and v is get_variant(f"freecell_{cells}cells")
    _, info = env.reset(seed=617)
    state = env.unwrapped.get_state()
    assert state["variant"] == f"freecell_{cells}cells" and state["cells"] == [None] * cells
    assert state["tableau"] == Game("freecell", 617).get_state()["tableau"]  # the same Microsoft deal
    # Cards go into the cells until they are full.
    to_cell = int(v.spec[A_FIRST + TABLEAU_TO_CELL])
    for k in range(cells):
        assert info["action_mask"][to_cell + k]
        _, _, _, _, info = env.step(to_cell + k)
    assert not info["action_mask"][to_cell : to_cell + 8].any()
    assert None not in env.unwrapped.get_state()["cells"]
    variant, rebuilt = from_json(env.unwrapped.get_state())
    assert variant is v
    np.testing.assert_array_equal(rebuilt, env.unwrapped.game.state)
    # The run limit, with these cells free, against moving one card at a time.
    for empties in (0, 1):
        for length in range(1, 10):
            piles = [["Kd"] + _run(length), ["Qh"]] + [["Ad"]] * (6 - empties)
            s = _position(piles, [None] * cells, v)
            a = next(a for a, row in enumerate(v.actions) if row[0] == TABLEAU_TO_TABLEAU and row[1] == 0
                     and row[2] == 1)
            _, moved = core.resolve(s, v.spec, v.actions, a)
            assert (moved == length) == _reachable(length, cells, empties, False)


def test_a_position_of_another_cell_count_and_bad_cell_counts_are_refused():
    import gymnasium as gym

    env = gym.make("FreeCell-v0", cells=3)
    env.reset(seed=1)
    before = env.unwrapped.get_state()
    with pytest.raises(ValueError, match=r"FreeCell position, but this env plays FreeCell \(3 cells\)"):
        env.reset(options={"state": Game("freecell", 1).get_state()})
    assert env.unwrapped.get_state() == before
    for bad in (0, 9, 2.0, True, "4", None):
        with pytest.raises(ValueError, match="cells must be an integer from 1 to 8"):
            gym.make("FreeCell-v0", cells=bad)
        with pytest.raises(ValueError, match="cells must be an integer from 1 to 8"):
            gym.make_vec("FreeCell-v0", num_envs=2, cells=bad, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match="unknown variant 'freecell_9cells'"):
        get_variant("freecell_9cells")


def test_a_recording_of_another_cell_count_replays(tmp_path):
    from solitaire_env.tools.recording import load_recording, make_env, record_episode, replay_states, save_recording

    data = record_episode("FreeCell-v0", seed=5, env_kwargs={"cells": 2}, max_steps=40)
    assert data["start_state"]["variant"] == "freecell_2cells" and "cells" not in data.get("env_kwargs", {})
    save_recording(data, tmp_path / "two_cells.json")
    loaded = load_recording(tmp_path / "two_cells.json")
    states = replay_states(loaded)
    assert len(states) == len(data["actions"]) + 1 and all(len(s["cells"]) == 2 for s in states)
    assert make_env(loaded).variant.cells == 2


def test_the_cells_option_reaches_the_sb3_adapter_and_the_library_wrappers():
    pytest.importorskip("stable_baselines3")
    from solitaire_env.envs.sb3 import make_sb3_vec_env
    from solitaire_env.envs.wrappers import for_tianshou

    venv = make_sb3_vec_env("FreeCell-v0", n_envs=2, seed=0, cells=2)
    assert venv.reset().shape == (2, 166) and venv.action_space.n == 196
    assert for_tianshou("FreeCell-v0", cells=3).action_space.n == 206
