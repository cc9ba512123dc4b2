"""``benchmarks/bench.py --quick`` runs and reports every section: the report's structure is checked (sections,
keys, types, units, repetitions), and the figures only to be positive, never against a speed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "benchmarks" / "bench.py"


def _positive(d: dict, *keys: str) -> None:
    for key in keys:
        value = d[key]["median"] if isinstance(d[key], dict) else d[key]
        assert isinstance(value, (int, float)) and value > 0, (key, value)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "quick.json"
    proc = subprocess.run([sys.executable, str(BENCH), "--quick", "--json", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.stdout


@pytest.fixture(scope="module")
def results(run):
    return run[0]


SECTIONS = ("machine", "settings", "engine", "single_env", "vector_env", "openspiel", "memory", "solver",
            "options", "first_use", "targets")
# A figure's key names its unit (suffix), or it is a ratio, or a count; what the walk below skips holds
# descriptions, settings or per-item breakdowns whose parent names the unit.
UNIT_SUFFIXES = ("_per_s", "_s", "_ns_per_env_step", "_us_per_sub_env", "_bytes_per_game", "_cores", "_fraction")
COUNTS = {"move_cap", "moves_per_game", "games_won", "games_per_rep", "episodes_ended", "steps", "num_envs",
          "max_episode_steps", "illegal_actions_picked", "parallel_min_batch", "nodes_per_solve"}
NOT_FIGURES = {"machine", "settings", "targets", "per_env_arrays", "tracemalloc_top", "options.options"}


def _figures(d: dict, path: str = ""):
    """(path, key, value) of every figure: a number, or a summary of repetitions."""
    for key, value in d.items():
        here = f"{path}.{key}" if path else key
        if key in NOT_FIGURES or here in NOT_FIGURES:
            continue
        if isinstance(value, dict) and "median" in value:
            yield here, key, value
        elif isinstance(value, dict):
            yield from _figures(value, here)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            yield here, key, value


def test_sections_present(results):
    assert list(results) == list(SECTIONS)  # also the order bench.py writes them in
    s = results["settings"]
    assert s["quick"] is True and s["env_id"] == "RankAndFile-v0" and s["vector_num_envs"] == [1, 64]
    assert isinstance(s["reps"], int) and s["reps"] == 3 and s["duration_s"] > 0 and s["total_s"] > 0
    assert results["first_use"] == {"skipped": "quick mode"}
    m = results["machine"]
    assert isinstance(m["cores"], int) and m["cores"] >= m["usable_cores"] >= 1 and m["numba_threads"] >= 1
    assert all(isinstance(m[k], str) and m[k] for k in ("cpu", "platform", "python", "numpy", "numba", "gymnasium"))
    for section in SECTIONS[2:-2]:  # each measured section says how busy the rest of the machine was
        busy = results[section]["other_processes_cores"]
        assert busy is None or 0 <= busy <= m["cores"], section


def test_every_repeated_figure_keeps_its_repetitions(results):
    # (>= 0: an autoreset cost is a difference of two timings, 0 when noise hides it; the sections
    # below check the figures that must be positive.)
    reps = results["settings"]["reps"]
    summaries = [(path, v) for path, _, v in _figures(results) if isinstance(v, dict)]
    assert len(summaries) > 40
    for path, v in summaries:
        assert set(v) == {"median", "min", "max", "samples"}, path
        samples = v["samples"]
        assert len(samples) == reps and all(isinstance(x, float) and x >= 0 for x in samples), path
        assert v["min"] == min(samples) <= v["median"] <= max(samples) == v["max"], path


def test_every_figure_names_its_unit(results):
    for path, key, value in _figures(results):
        if key in COUNTS:
            assert isinstance(value, (int, float)) and value >= 0, path
        else:
            assert key.endswith(UNIT_SUFFIXES) or "ratio" in key, f"{path}: no unit in the key"
            number = value["median"] if isinstance(value, dict) else value
            assert number >= 0, path


def test_the_printed_table_has_every_section_and_a_unit_on_every_figure(run):
    results, text = run
    lines = text.splitlines()
    assert lines[0] == "solitaire-env benchmark (quick run): RankAndFile-v0"
    heads = [line for line in lines if re.match(r"\d\. ", line)]
    assert [h.split(" ")[0] for h in heads] == [f"{i}." for i in range(1, 9)]
    assert [h.split(" ")[1].rstrip(":,") for h in heads] == ["engine", "one", "batched", "OpenSpiel", "memory",
                                                            "first", "solver", "env"]
    body = lines[lines.index(heads[0]):lines.index("targets (measured, not asserted)")]
    figures = [line for line in body if line.startswith("  ")]
    assert len(figures) > 30
    for line in figures:
        assert re.search(r"\S  +[-\d.,e+]+  \S", line), f"no figure with a unit: {line!r}"
    assert lines[-1].startswith("total run time ") and lines[-1].endswith(" s")


def test_targets_say_what_they_measure(results):
    t = results["targets"]
    assert "state_bytes_per_game" in t
    for name, target in t.items():
        assert set(target) >= {"what", "target", "measured", "met"}, name
        assert isinstance(target["what"], str) and isinstance(target["target"], str), name
        assert isinstance(target["met"], bool) and target["measured"] > 0, name
    assert t["state_bytes_per_game"]["measured"] == results["memory"]["state_bytes_per_game"]


def test_solver_figures(results):
    so = results["solver"]
    assert so["nodes_per_solve"] == 20_000
    for game in ("rank_and_file", "rainbow"):
        _positive(so[game], "nodes_per_s")
        assert so[game]["seeds"] and all(isinstance(s, int) for s in so[game]["seeds"])


def test_engine_figures(results):
    e = results["engine"]
    assert e["move_cap"] > 0
    for kind in ("numba", "numba_with_observe"):
        _positive(e[kind], "moves_per_s", "games_per_s", "moves_per_game")
    _positive(e, "deals_per_s")
    _positive(e["python_game"], "moves_per_s", "games_per_s")


def test_env_figures(results):
    s = results["single_env"]
    for kind in ("gym_make", "unwrapped"):
        _positive(s[kind], "steps_per_s", "step_only_steps_per_s")
    _positive(s, "action_space_sample_per_s")
    by_n = results["vector_env"]["by_num_envs"]
    assert {"1", "64"} <= set(by_n)
    for r in by_n.values():
        _positive(r, "env_steps_per_s", "step_only_env_steps_per_s", "action_select_ns_per_env_step",
                  "kernel_only_env_steps_per_s")
        assert r["illegal_actions_picked"] >= 0 and r["autoreset_us_per_sub_env"]["median"] >= 0


def test_options_figures(results):
    op = results["options"]
    assert op["num_envs"] == 64
    for kind in ("vector_env", "single_env"):
        assert {"no_revisit", "track_revisits"} <= set(op[kind])
        for r in op[kind].values():
            _positive(r, "steps_per_s", "default_steps_per_s", "ratio_to_default")
    assert set(op["same_games"]) == set(op["vector_env"])  # (the run checks the two envs' positions agree)
    for r in op["same_games"].values():
        _positive(r, "ratio_to_default")


def test_openspiel_section(results):
    spiel = results["openspiel"]
    if not spiel["available"]:
        assert "not importable" in spiel["reason"]  # the report says why the section is empty
        pytest.skip(f"OpenSpiel comparison not measured: {spiel['reason']}")
    _positive(spiel, "steps_per_s", "step_only_steps_per_s", "ratio_single_env")
    assert set(spiel["ratio_vector_env"]) == set(results["vector_env"]["by_num_envs"])


def test_memory_figures(results):
    mem = results["memory"]
    _positive(mem, "state_bytes_per_game", "per_env_arrays_bytes_per_game", "tracemalloc_bytes_per_game")
    assert mem["per_env_arrays_bytes_per_game"] >= mem["state_bytes_per_game"]
    assert "states" in mem["per_env_arrays"]
