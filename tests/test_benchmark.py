"""``benchmarks/bench.py --quick`` runs and reports every section (figures only checked to be positive)."""

from __future__ import annotations

import json
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
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "quick.json"
    proc = subprocess.run([sys.executable, str(BENCH), "--quick", "--json", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "engine alone" in proc.stdout and "batched vector env" in proc.stdout
    return json.loads(out.read_text())


def test_sections_present(results):
    for section in ("machine", "settings", "engine", "single_env", "vector_env", "openspiel", "memory",
                    "first_use", "options", "targets"):
        assert section in results, section
    assert results["settings"]["quick"] is True
    assert results["first_use"] == {"skipped": "quick mode"}
    m = results["machine"]
    assert m["cores"] >= 1 and m["python"] and m["numpy"] and m["numba"]


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
