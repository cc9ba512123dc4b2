"""Rows written as deals finish: an interrupted solve or evaluate loses nothing and ``--resume`` finishes it;
a deal that fails is reported while the run goes on; ``--ray`` without Ray says how to install it.

These run in this process (``--jobs 1``), where the solver and the episodes can be patched; the Ray
backend is tested in ``test_ray.py``.
"""

from __future__ import annotations

import csv
import json
import re
import sys

import pytest

from solitaire_env.solver import winnability
from solitaire_env.tools import evaluation
from solitaire_env.tools.cli import main

SOLVE = ["solve", "rainbow", "--seeds", "0:10", "--max-nodes", "20000", "--time-limit", "600", "--memory", "16",
         "--jobs", "1", "--no-progress"]
EVALUATE = ["evaluate", "--env", "Rainbow-v0", "--agent", "random", "--agent", "heuristic", "--episodes", "5",
            "--no-progress"]


def _rows(path, drop=("seconds",)):
    return [{k: v for k, v in row.items() if k not in drop} for row in csv.DictReader(open(path))]


def _without_seconds(table):
    """The table less its last column, s/game: the one figure the clock sets."""
    return "\n".join(re.sub(r"[^|]*\|$", "", line) if line.startswith("|") else line for line in table.splitlines())


def _patch(monkeypatch, module, name, fail_on):
    """Replace ``module.name`` with a spy that counts calls and calls ``fail_on(call_number, args)`` first."""
    real, calls = getattr(module, name), []

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        fail_on(len(calls), args, kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls


def _interrupt_at(n):
    def fail(call, args, kwargs):
        if call == n:
            raise KeyboardInterrupt

    return fail


def test_an_interrupted_solve_keeps_its_rows_and_resume_finishes_it(tmp_path, monkeypatch):
    whole, part = tmp_path / "whole.csv", tmp_path / "part.csv"
    assert main([*SOLVE, "--csv", str(whole)]) == 0
    with monkeypatch.context() as m:
        _patch(m, winnability, "solve", _interrupt_at(5))
        with pytest.raises(KeyboardInterrupt):
            main([*SOLVE, "--csv", str(part)])
    assert [int(r["seed"]) for r in _rows(part)] == [0, 1, 2, 3]  # every deal that finished
    calls = _patch(monkeypatch, winnability, "solve", lambda *a: None)
    assert main([*SOLVE, "--csv", str(part), "--resume"]) == 0
    assert [kwargs["seed"] for _, kwargs in calls] == [4, 5, 6, 7, 8, 9]  # only the deals not in the CSV
    assert _rows(part) == _rows(whole)


def test_a_deal_that_fails_is_reported_the_run_finishes_and_retry_decides_it(tmp_path, monkeypatch, capsys):
    out, again, summary = tmp_path / "r.csv", tmp_path / "again.csv", tmp_path / "r.json"

    def fail(call, args, kwargs):
        if kwargs["seed"] == 3:
            raise MemoryError("no room for the table")

    with monkeypatch.context() as m:
        _patch(m, winnability, "solve", fail)
        assert main([*SOLVE, "--csv", str(out), "--json", str(summary)]) == 1
    err = capsys.readouterr().err
    assert "failed: deal 3: MemoryError: no room for the table" in err and "--retry" in err
    rows = _rows(out)
    assert [int(r["seed"]) for r in rows] == list(range(10))
    assert (rows[3]["result"], rows[3]["reason"]) == ("unknown", "error: MemoryError: no room for the table")
    assert json.loads(summary.read_text())["failed"] == 1
    assert main(["solve", "rainbow", "--retry", str(out), "--max-nodes", "20000", "--time-limit", "600",
                 "--memory", "16", "--jobs", "1", "--no-progress", "--csv", str(again)]) == 0
    assert _rows(again)[3]["reason"] != rows[3]["reason"]


def test_an_interrupted_evaluation_keeps_its_rows_and_resume_finishes_it(tmp_path, monkeypatch, capsys):
    whole, part = tmp_path / "whole.csv", tmp_path / "part.csv"
    assert main([*EVALUATE, "--csv", str(whole), "--json", str(tmp_path / "whole.json")]) == 0
    table = capsys.readouterr().out.split("wrote")[0]
    with monkeypatch.context() as m:
        _patch(m, evaluation, "_play_episode", _interrupt_at(7))
        with pytest.raises(KeyboardInterrupt):
            main([*EVALUATE, "--csv", str(part)])
    assert len(_rows(part)) == 6
    calls = _patch(monkeypatch, evaluation, "_play_episode", lambda *a: None)
    assert main([*EVALUATE, "--csv", str(part), "--json", str(tmp_path / "part.json"), "--resume"]) == 0
    assert [(args[1], args[3]) for args, _ in calls] == [("heuristic", d) for d in range(1, 5)]
    resumed = capsys.readouterr().out.split("wrote")[0]
    assert _without_seconds(resumed) == _without_seconds(table)
    # s/game is over the games played in this run: none of random's, four of heuristic's.
    assert re.search(r"^\| random .*\| +- \|$", resumed, flags=re.M)
    assert re.search(r"^\| heuristic .*\| +[0-9.]+ \|$", resumed, flags=re.M)
    assert part.read_text() == whole.read_text()
    assert (tmp_path / "part.json").read_text() == (tmp_path / "whole.json").read_text()


def test_an_episode_that_fails_is_reported_after_the_others(tmp_path, monkeypatch, capsys):
    def fail(call, args, kwargs):
        if args[1:4:2] == ("random", 2):
            raise RuntimeError("agent 'random' played illegal action 3 on deal 2, step 0")

    _patch(monkeypatch, evaluation, "_play_episode", fail)
    out = tmp_path / "e.csv"
    assert main([*EVALUATE, "--csv", str(out)]) == 1
    err = capsys.readouterr().err
    assert "failed: agent random on deal 2: RuntimeError: agent 'random' played illegal action 3" in err
    assert "1 of 10 episodes failed" in err and "--resume" in err
    assert len(_rows(out)) == 9


@pytest.mark.parametrize("command", [SOLVE, EVALUATE])
def test_ray_missing_is_a_clear_error(command, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as where it is not installed
    args = [a for a in command if a not in ("--jobs", "1")]
    with pytest.raises(SystemExit) as stop:
        main([*args, "--ray"])
    assert stop.value.code == 2 and "pip install 'solitaire-env[ray]'" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    ([*SOLVE, "--resume"], "--resume goes on from the rows of --csv FILE"),
    ([*EVALUATE, "--resume"], "--resume goes on from the rows of --csv FILE"),
    ([*SOLVE, "--ray", "auto"], "give one of them"),
])
def test_bad_resume_and_ray_options(args, message, capsys):
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_a_gzip_csv_streams_its_rows_to_its_plain_name_until_done(tmp_path, monkeypatch):
    """A gzip stream cut short cannot be read back: rows go to x.csv while the run lasts, x.csv.gz at the end."""
    from solitaire_env.solver.winnability import read_results

    whole, target = tmp_path / "whole.csv", tmp_path / "x.csv.gz"
    assert main([*SOLVE, "--csv", str(whole)]) == 0
    with monkeypatch.context() as m:
        _patch(m, winnability, "solve", _interrupt_at(3))
        with pytest.raises(KeyboardInterrupt):
            main([*SOLVE, "--csv", str(target)])
    assert not target.exists() and len(_rows(tmp_path / "x.csv")) == 2
    assert main([*SOLVE, "--csv", str(target), "--resume"]) == 0
    assert not (tmp_path / "x.csv").exists()
    strip = [(r.seed, r.result, r.nodes, r.line) for r in read_results(target)]
    assert strip == [(r.seed, r.result, r.nodes, r.line) for r in read_results(whole)]
