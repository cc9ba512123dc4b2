"""The shipped per-deal winnability data (docs/winnability.md): format, loader, ``verify``, and agreement
with a fresh solve."""

from __future__ import annotations

import gzip
import json
import statistics

import pytest

from solitaire_env.engine.game import Game
from solitaire_env.engine.games import RAINBOW
from solitaire_env.engine.notation import parse_move
from solitaire_env.solver import solve
from solitaire_env.solver import winnability as w
from solitaire_env.tools.cli import main
from solitaire_env.tools.winnability import LABEL_PASSES, label_deals

GAMES = ("rank_and_file", "number_ten", "rainbow", "freecell", "klondike", "klondike_draw3")


@pytest.fixture(scope="module", params=GAMES)
def shipped(request):
    return request.param, w.load(request.param)


def test_every_deal_0_to_999_has_one_answer_with_its_budget(shipped):
    game, rows = shipped
    assert [r.seed for r in rows] == list(label_deals(game))  # FreeCell: Microsoft's deals 1-1000
    summary = w.load_summary(game)
    assert summary["deals"] == 1000 and summary["game"] == game
    budgets = [(o.max_nodes, o.time_limit) for o in LABEL_PASSES]
    for r in rows:
        assert r.result in ("won", "lost", "unknown")
        assert (r.max_nodes, r.time_limit) == budgets[r.attempt - 1]
        # The limit is checked between positions, and a playout or rollout counts its game's positions once
        # it is played, so a search may end a little past the limit; an unknown one got there.
        assert r.nodes <= 1.05 * r.max_nodes
        if r.reason == "nodes":
            assert r.nodes >= r.max_nodes
        assert (r.solution_length > 0) == (r.result == "won") == bool(r.line)
        assert len(r.moves) == r.solution_length
        if r.result == "unknown":
            assert r.reason
        if r.attempt == 2:  # only what the first pass left unknown is searched again
            assert r.nodes > 0
    # The summary counts what the rows say, pass by pass.
    for key in ("won", "lost", "unknown"):
        assert summary[key] == sum(r.result == key for r in rows)
    first, *second = summary["passes"]  # no second pass when the first decided every deal (FreeCell)
    assert first["searched"] == 1000
    left = 1000 - first["won"] - first["lost"]
    assert [p["searched"] for p in second] == ([left] if left else [])
    assert sum(p["won"] for p in second) == sum(r.result == "won" and r.attempt == 2 for r in rows)
    # True medians: the mean of the 500th and 501st values.
    nodes = sorted(r.nodes for r in rows)
    assert summary["median_nodes"] == (nodes[499] + nodes[500]) / 2 == statistics.median(nodes)
    assert summary["max_line"] == max(r.solution_length for r in rows)


def test_the_loader_takes_game_names_or_variants_and_lists_the_winnable_deals():
    rows = w.load("rainbow")
    assert rows == w.load(RAINBOW)
    assert w.winnable_seeds("rainbow") == {r.seed for r in rows if r.result == "won"}
    with pytest.raises(ValueError, match="unknown variant"):
        w.load("spider")


@pytest.mark.parametrize("game", GAMES)
def test_a_sample_of_shipped_lines_replays_to_a_win(game):
    rows = [r for r in w.load(game) if r.result == "won"][::40]
    assert len(rows) >= 15
    replayed, failures = w.replay_lines(game, rows)
    assert replayed == len(rows) and failures == []


def test_a_damaged_line_is_caught(tmp_path):
    rows = [r for r in w.load("rainbow") if r.result == "won"][:3]
    cut = rows[1].moves[:-1]  # one move short of the win
    rows[1].line, rows[1].solution_length = "; ".join(cut), len(cut)
    bad = rows[2].moves
    bad[0] = "t9 f"  # no pile t9 in Rainbow
    rows[2].line = "; ".join(bad)
    replayed, failures = w.replay_lines("rainbow", rows)
    assert replayed == 3
    assert [seed for seed, _ in failures] == [rows[1].seed, rows[2].seed]
    assert "cards home" in failures[0][1] and "move 1 't9 f'" in failures[1][1]


def test_verify_command_on_a_file_and_on_a_game(tmp_path, capsys):
    rows = w.load("number_ten")[:20]
    path = tmp_path / "number_ten-sample.csv.gz"
    w.write_results(path, rows)
    assert w.read_results(path) == rows
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    won = sum(r.result == "won" for r in rows)
    assert f"{won} of {won} winning lines replay to a win" in out
    # A line that no longer wins makes the command fail and name the deal.
    first = next(r for r in rows if r.result == "won")
    first.line = "; ".join(first.moves[:-1])
    first.solution_length -= 1
    w.write_results(path, rows)
    assert main(["verify", str(path)]) == 1
    assert f"deal {first.seed}:" in capsys.readouterr().out
    plain = tmp_path / "mine.csv"
    w.write_results(plain, rows)
    with pytest.raises(SystemExit):
        main(["verify", str(plain)])  # which game? the name does not say
    assert "--game" in capsys.readouterr().err
    assert main(["verify", str(plain), "--game", "number_ten"]) == 1


def test_the_compressed_file_is_the_same_bytes_for_the_same_rows(tmp_path):
    rows = w.load("rainbow")[:20]
    w.write_results(tmp_path / "a.csv.gz", rows)
    w.write_results(tmp_path / "b.csv.gz", rows)
    assert (tmp_path / "a.csv.gz").read_bytes() == (tmp_path / "b.csv.gz").read_bytes()
    with gzip.open(tmp_path / "a.csv.gz", "rt") as f:
        assert f.readline().strip() == ",".join(w.CSV_COLUMNS)


@pytest.mark.parametrize("game", GAMES)
def test_no_shipped_answer_contradicts_a_fresh_solve(game):
    """A fresh solve of a sample under a small node limit never proves the opposite of a shipped answer."""
    rows = w.load(game)
    decided = 0
    for r in rows[3::97]:
        fresh = solve(game, seed=r.seed, time_limit=None, max_nodes=50_000, memory_mb=64)
        opposite = {"won": "lost", "lost": "won"}.get(fresh.result)
        assert r.result != opposite, (r.seed, fresh.result, r)
        decided += fresh.result != "unknown"
        if fresh.result == "won":  # its own line wins too
            g = Game(game, r.seed)
            for a in fresh.moves:
                g.play(a)
            assert g.is_won()
    assert decided >= 3  # the sample checks something


def test_a_retry_row_names_its_pass_and_the_summary_keeps_the_passes_apart(tmp_path, capsys):
    first = tmp_path / "first.csv"
    assert main(["solve", "rainbow", "--seeds", "0:6", "--max-nodes", "3000", "--time-limit", "600",
                 "--jobs", "1", "--no-progress", "--csv", str(first)]) == 0
    unknown = [r.seed for r in w.read_results(first) if r.result == "unknown"]
    assert unknown, "the tiny budget leaves some deal unknown"
    second, summary = tmp_path / "second.csv", tmp_path / "second.json"
    assert main(["solve", "rainbow", "--retry", str(first), "--max-nodes", "200000", "--time-limit", "600",
                 "--jobs", "1", "--no-progress", "--csv", str(second), "--json", str(summary)]) == 0
    rows = w.read_results(second)
    assert [r.seed for r in rows] == list(range(6))
    assert {r.seed for r in rows if r.attempt == 2} == set(unknown)
    assert all(r.max_nodes == (200_000 if r.attempt == 2 else 3000) for r in rows)
    s = json.loads(summary.read_text())
    assert [(p["pass"], p["max_nodes"], p["searched"]) for p in s["passes"]] == [
        (1, 3000, 6), (2, 200_000, len(unknown))]
    assert "pass 2 (200,000 positions, 600 s per deal)" in capsys.readouterr().out
    for r in rows:
        if r.result == "won":
            g = Game("rainbow", r.seed)
            for text in r.moves:
                g.play(parse_move(text, g))
            assert g.is_won()


def test_evaluate_on_the_winnable_deals_only(capsys):
    from solitaire_env.agents import make_agent
    from solitaire_env.tools.evaluation import evaluate

    winnable = sorted(w.winnable_seeds("rainbow"))
    agents = {"heuristic": make_agent("heuristic", "Rainbow-v0"), "random": make_agent("random", "Rainbow-v0")}
    result = evaluate("Rainbow-v0", agents, 12, seed=5, winnable_only=True)
    assert result.deals == [d for d in winnable if d >= 5][:12]
    assert sorted({r.deal_seed for r in result.records}) == result.deals
    for s in result.summaries.values():
        assert s.winnable_deals == 12 and s.win_rate_of_winnable == s.win_rate
    assert "the proved-winnable ones among test deals" in result.table()
    assert result.to_dict()["winnable_only"] is True
    # Over plain deals the column counts only the winnable ones among them.
    plain = evaluate("Rainbow-v0", {"heuristic": agents["heuristic"]}, 30, seed=0)
    s = plain.summaries["heuristic"]
    mine = [r for r in plain.records if r.deal_seed in set(winnable)]
    assert s.winnable_deals == len(mine) < 30
    assert s.win_rate_of_winnable == sum(r.won for r in mine) / len(mine)
    assert "wins of winnable" in plain.table()
    # No agent wins a deal the data proves lost.
    lost = {r.seed for r in w.load("rainbow") if r.result == "lost"}
    assert not any(r.won and r.deal_seed in lost for r in plain.records)
    # Deals without shipped data: no column.
    far = evaluate("Rainbow-v0", {"heuristic": agents["heuristic"]}, 2, seed=5000)
    assert far.summaries["heuristic"].winnable_deals is None and "wins of winnable" not in far.table()
    with pytest.raises(ValueError, match="proved winnable"):
        evaluate("Rainbow-v0", {"heuristic": agents["heuristic"]}, 50, seed=990, winnable_only=True)


def test_evaluate_command_winnable_only(capsys):
    assert main(["evaluate", "--env", "NumberTen-v0", "--agent", "random", "--episodes", "3", "--winnable-only",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "proved-winnable ones among test deals" in out and "of 3" in out
    with pytest.raises(SystemExit):
        main(["evaluate", "--env", "NumberTen-v0", "--agent", "random", "--episodes", "3", "--winnable-only",
              "--deals", "validation"])
    assert "--winnable-only plays test deals" in capsys.readouterr().err


def test_winnable_only_takes_the_answers_of_the_rule_set_played():
    """Klondike draw 3 has answers of its own; FreeCell with three cells has none shipped."""
    from solitaire_env.agents import make_agent
    from solitaire_env.tools.evaluation import evaluate

    agent = {"random": make_agent("random", "Klondike-v0")}
    firsts = {}
    for draw, game in ((1, "klondike"), (3, "klondike_draw3")):
        result = evaluate("Klondike-v0", agent, 6, env_kwargs={"draw": draw}, winnable_only=True)
        firsts[game] = result.deals
        assert result.deals == sorted(w.winnable_seeds(game))[:6]
    assert firsts["klondike"] != firsts["klondike_draw3"]  # so the check tells the two apart
    with pytest.raises(ValueError, match="no shipped winnability data"):
        evaluate("FreeCell-v0", {"random": make_agent("random", "FreeCell-v0")}, 3, env_kwargs={"cells": 3},
                 winnable_only=True)


def test_the_winnable_column_counts_the_rule_set_each_agent_plays():
    """An agent with env options of its own (a draw 3 policy beside draw 1 agents) is counted against its own
    rule set's answers; winnable_only refuses to mix rule sets."""
    from solitaire_env.agents import make_agent
    from solitaire_env.tools.evaluation import evaluate

    draw3 = make_agent("random", "Klondike-v0")
    draw3.env_kwargs = {"draw": 3}  # as a policy trained on draw 3 carries
    agents = {"random": make_agent("random", "Klondike-v0"), "draw3": draw3}
    result = evaluate("Klondike-v0", agents, 40, seed=0)
    for name, game in (("random", "klondike"), ("draw3", "klondike_draw3")):
        assert result.summaries[name].winnable_deals == len(w.winnable_seeds(game) & set(range(40)))
    assert result.summaries["random"].winnable_deals != result.summaries["draw3"].winnable_deals
    with pytest.raises(ValueError, match="plays klondike_draw3, not klondike: the winnable deals differ"):
        evaluate("Klondike-v0", agents, 3, winnable_only=True)
