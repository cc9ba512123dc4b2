"""``--ray``: solve and evaluate as Ray tasks on a local cluster started here (2 CPUs, one for the module).

The same answers as a local run, deal for deal and file for file; a worker killed mid-deal has its
deal run again; a deal that keeps failing is reported with its error while the run finishes; an
evaluation left with failed episodes goes on with ``--resume``. Skipped where Ray is not installed
(``pip install 'solitaire-env[ray]'``; CI installs it).
"""

from __future__ import annotations

import csv
import json
import operator
import os
import re
import sys

import gymnasium as gym
import pytest

from solitaire_env.parallel import Backend, run_tasks
from solitaire_env.solver import winnability
from solitaire_env.solver.winnability import solve_deals
from solitaire_env.tools import evaluation
from solitaire_env.tools.cli import main

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray
# The workers cannot import this module: what they run from it (the faults below) travels by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


class Faults:
    """A task function with faults injected into the Ray worker running it, once the task's work is done and
    before its answer leaves: the deal was played, and its answer must still come back exactly once. The
    worker running a task of ``exit_once`` dies on the first try (a marker file in ``folder`` remembers it),
    one of ``exit`` on every try; a task of ``fail`` raises."""

    def __init__(self, fn, folder, exit_once=(), exit=(), fail=()):
        self.fn, self.folder = fn, str(folder)
        self.exit_once, self.exit, self.fail = list(exit_once), list(exit), list(fail)

    def __call__(self, context, task):
        result = self.fn(context, task)
        if task in self.exit:
            os._exit(1)
        if task in self.fail:
            raise RuntimeError(f"fault injected into task {task}")
        if task in self.exit_once:
            marker = os.path.join(self.folder, f"task-{task}")
            if not os.path.exists(marker):
                open(marker, "w").close()
                os._exit(1)
        return result

RAY = Backend(ray="")  # the cluster the fixture started (run_tasks keeps a running one)
SOLVE = ["--max-nodes", "20000", "--time-limit", "600", "--memory", "16", "--no-progress"]


@pytest.fixture(scope="module", autouse=True)
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _without_seconds(table):
    """The table less its last column, s/game: the one figure the clock sets (timed in the workers)."""
    return "\n".join(re.sub(r"[^|]*\|$", "", line) if line.startswith("|") else line for line in table.splitlines())


def _rows(path, drop=()):
    return [{k: v for k, v in row.items() if k not in drop} for row in csv.DictReader(open(path))]


def test_solve_on_ray_matches_a_local_run_deal_for_deal(tmp_path, capsys):
    """Under a node limit every deal's answer is machine-independent: CSV and summary as a local run's."""
    local, remote = tmp_path / "local", tmp_path / "ray"
    assert main(["solve", "rainbow", "--seeds", "0:16", *SOLVE, "--jobs", "1",
                 "--csv", f"{local}.csv", "--json", f"{local}.json"]) == 0
    text_local = capsys.readouterr().out
    assert main(["solve", "rainbow", "--seeds", "0:16", *SOLVE, "--ray",
                 "--csv", f"{remote}.csv", "--json", f"{remote}.json"]) == 0
    text_ray = capsys.readouterr().out
    # Everything but the clock: seconds, and the summary's times and speed.
    assert _rows(f"{remote}.csv", drop={"seconds"}) == _rows(f"{local}.csv", drop={"seconds"})
    assert [int(r["seed"]) for r in _rows(f"{remote}.csv")] == list(range(16))
    timing = {"median_seconds", "p95_seconds", "median_seconds_decided", "nodes_per_second"}
    summaries = [{k: v for k, v in json.loads(open(f"{p}.json").read()).items() if k not in timing}
                 for p in (local, remote)]
    assert summaries[0] == summaries[1]
    assert text_local.splitlines()[:3] == text_ray.splitlines()[:3]  # deals, counts, winnable fraction


def test_a_killed_worker_has_its_deal_retried_and_a_failing_deal_is_reported(tmp_path, monkeypatch):
    """Task 2's worker dies on its first try (retried, answered); task 5's on every try, task 6 raises:
    both reported with their error as unknown; every deal has exactly one row."""
    seeds = list(range(10, 20))
    expected = solve_deals("rainbow", seeds, time_limit=None, max_nodes=20_000, memory_mb=16)
    monkeypatch.setattr(winnability, "_solve_one", Faults(winnability._solve_one, tmp_path, exit_once=[seeds[2]],
                                                         exit=[seeds[5]], fail=[seeds[6]]))
    out = tmp_path / "faults.csv"
    got = solve_deals("rainbow", seeds, time_limit=None, max_nodes=20_000, memory_mb=16, csv_path=str(out),
                      backend=Backend(ray="", retries=1))
    assert (tmp_path / f"task-{seeds[2]}").exists()  # the first try did die
    rows = _rows(out)
    assert [int(r["seed"]) for r in rows] == seeds  # none lost, none twice
    assert [r.seed for r in got] == seeds
    for i, (r, e) in enumerate(zip(got, expected, strict=True)):
        if i == 5:
            assert r.result == "unknown" and r.reason.startswith("error: WorkerCrashedError"), r.reason
        elif i == 6:
            assert r.result == "unknown" and r.reason == f"error: RuntimeError: fault injected into task {seeds[6]}"
        else:
            assert (r.result, r.nodes, r.solution_length) == (e.result, e.nodes, e.solution_length)
    assert rows[5]["reason"] == got[5].reason


def test_run_tasks_yields_every_task_once_as_it_finishes():
    # fn must be importable on the workers (this test module is not): a function of the standard library.
    results = list(run_tasks(operator.mul, list(range(40)), context=3, backend=RAY))
    assert sorted(results) == [(i, 3 * i) for i in range(40)]


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    sb3_contrib = pytest.importorskip("sb3_contrib")
    model = sb3_contrib.MaskablePPO("MlpPolicy", gym.make("Rainbow-v0"), n_steps=64, batch_size=64, n_epochs=1,
                                    policy_kwargs=dict(net_arch=[16]), seed=0, device="cpu")
    model.learn(total_timesteps=128)
    path = tmp_path_factory.mktemp("ppo") / "tiny.zip"
    model.save(path)
    return str(path)


def test_evaluate_on_ray_gives_the_same_figures_and_files(tmp_path, capsys, tiny_checkpoint):
    args = ["evaluate", "--env", "Rainbow-v0", "--agent", "random", "--agent", "heuristic", "--agent",
            f"sample:{tiny_checkpoint}", "--episodes", "10", "--seed", "40", "--no-progress",
            "--env-kwargs", '{"max_episode_steps": 30}']  # short episodes: the one-hot policy takes ms a step
    for run in ("local", "ray"):
        assert main([*args, *(["--ray"] if run == "ray" else []), "--csv", str(tmp_path / f"{run}.csv"),
                     "--json", str(tmp_path / f"{run}.json"), "--record", str(tmp_path / f"{run}-games")]) == 0
    out = capsys.readouterr().out
    assert out.count("wrote") == 4
    tables = [part.split("wrote")[0] for part in out.split("Rainbow (")[1:]]
    assert _without_seconds(tables[0]) == _without_seconds(tables[1])
    assert len(re.findall(r"^\| \S+ .*\| +[0-9.]+ \|$", tables[1], flags=re.M)) == 3  # every agent timed on Ray
    assert (tmp_path / "ray.csv").read_text() == (tmp_path / "local.csv").read_text()
    assert (tmp_path / "ray.json").read_text() == (tmp_path / "local.json").read_text()
    games = sorted(p.name for p in (tmp_path / "local-games").iterdir())
    assert len(games) == 30 and games == sorted(p.name for p in (tmp_path / "ray-games").iterdir())
    for name in games:  # the recordings too, move for move
        assert (tmp_path / "ray-games" / name).read_text() == (tmp_path / "local-games" / name).read_text()


def test_evaluate_with_failed_episodes_finishes_and_resumes(tmp_path, monkeypatch, capsys):
    """Episode tasks 3 (random on deal 3: a dead worker, every try) and 7 (heuristic on deal 1: an exception)
    fail: the run plays the rest, exits 1 and names them; --resume plays only those two, and the files equal an
    uninterrupted run's."""
    env_id, agents = "Rainbow-v0", ["--agent", "random", "--agent", "heuristic"]
    base = ["evaluate", "--env", env_id, *agents, "--episodes", "6", "--no-progress"]
    assert main([*base, "--csv", str(tmp_path / "whole.csv")]) == 0
    capsys.readouterr()
    out = tmp_path / "parts.csv"
    play_task = evaluation._play_task
    monkeypatch.setattr(evaluation, "_play_task", Faults(play_task, tmp_path, exit=[("random", 3)],
                                                         fail=[("heuristic", 1)]))
    assert main([*base, "--ray", "--csv", str(out)]) == 1
    err = capsys.readouterr().err
    assert "agent random on deal 3: WorkerCrashedError" in err and "agent heuristic on deal 1: RuntimeError" in err
    assert "--resume" in err
    assert len(_rows(out)) == 10
    monkeypatch.setattr(evaluation, "_play_task", play_task)
    played = []

    def spy(fn, tasks, context=None, backend=None):
        played.extend(tasks)
        return run_tasks(fn, tasks, context, backend)

    monkeypatch.setattr("solitaire_env.tools.evaluation.run_tasks", spy)
    assert main([*base, "--ray", "--csv", str(out), "--resume"]) == 0
    assert played == [("random", 3), ("heuristic", 1)]
    assert out.read_text() == (tmp_path / "whole.csv").read_text()
