"""The kept benchmark scripts besides ``bench.py`` (``tests/test_benchmark.py``) each run in their quick mode: the
output's structure is checked, never a speed. Each writes into a temporary folder, never into the repository."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "benchmarks"
COMMITTED = BENCH / "results" / "klondike_10k"


def _run(args: list[str], env: dict[str, str] | None = None, timeout: int = 600) -> str:
    proc = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env=None if env is None else {**os.environ, **env})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def _committed_files() -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in COMMITTED.iterdir()} if COMMITTED.exists() else {}


def test_bench_imports_neither_numpy_nor_numba_nor_the_package():
    # Sections 5 and 6 time a fresh `bench.py` process importing the package: bench.py and its section modules
    # must not have imported it already (the compiled loops of benchmarks.common load on first use).
    code = ("import sys; sys.argv = ['bench.py']; sys.path.insert(0, 'benchmarks'); import bench; "
            "print(sorted(m for m in ('numpy', 'numba', 'gymnasium', 'solitaire_env') if m in sys.modules))")
    assert _run([sys.executable, "-c", code]).strip() == "[]"


# --- ppo_throughput.py ----------------------------------------------------------------------------

def _last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def test_ppo_throughput_quick_one_variant():
    # The default run's twin of the one below: one variant, the whole path (a config built, trained, timed).
    out = _last_json(_run([sys.executable, str(BENCH / "ppo_throughput.py"), "--quick", "1", "as first built"]))
    assert list(out) == ["CardCodesPolicy, as first built, 4 epochs"]
    assert len(out["CardCodesPolicy, as first built, 4 epochs"]) == 1 and out[next(iter(out))][0] > 0


@pytest.mark.slow
def test_ppo_throughput_quick():
    from benchmarks.ppo_throughput import CARD_CODES, QUICK_PATTERN, SCORER, TWO_DECK

    out = _last_json(_run([sys.executable, str(BENCH / "ppo_throughput.py"), "--quick"]))
    names = [f"CardCodesPolicy, {n}" for n in [*CARD_CODES, *TWO_DECK]] + [f"MoveScorerPolicy, {n}" for n in SCORER]
    assert list(out) == [n for n in names if re.search(QUICK_PATTERN, n)]
    assert {"CardCodesPolicy, as first built, 4 epochs", "MoveScorerPolicy, defaults, 1 thread"} <= set(out)
    assert all(len(rates) == 1 and isinstance(rates[0], int) and rates[0] > 0 for rates in out.values())


def test_ppo_throughput_quick_cleanrl():
    out = _last_json(_run([sys.executable, str(BENCH / "ppo_throughput.py"), "--quick", "--cleanrl"]))
    assert list(out) == ["examples/cleanrl_ppo.py", "sb3-contrib MaskablePPO"]
    assert all(len(rates) == 1 and isinstance(rates[0], int) and rates[0] > 0 for rates in out.values())


# --- jax_speed.py and gpu.sh ----------------------------------------------------------------------

def _check_jax_speed(out: dict, ppo: bool) -> None:
    assert out["env_id"] == "RankAndFile-v0" and out["jax_backend"] and out["machine"]["cpu"]
    assert [r["num_envs"] for r in out["rows"]] == [8]
    for row in out["rows"]:
        assert row["steps"] >= 8 and row["jax_steps_per_s"] > 0 and row["numba_steps_per_s"] > 0
    if not ppo:
        assert out["ppo"] == []
        return
    jax_row, sb3_row = out["ppo"]
    assert (jax_row["learner"], jax_row["n_envs"], jax_row["n_steps"], jax_row["updates"]) == ("jax", 4, 8, 1)
    assert jax_row["steps_per_s"] > 0 and jax_row["first_update_s"] >= 0
    assert (sb3_row["learner"], sb3_row["n_envs"], sb3_row["n_steps"]) == ("sb3 (cpu)", 16, 4)
    assert sb3_row["steps_per_s"] > 0


def test_jax_speed_quick_env_rows(tmp_path):
    # The env rows alone: the JAX PPO rows compile for most of a minute (test_gpu_sh_quick, marked slow, runs them).
    pytest.importorskip("jax")
    text = _run([sys.executable, str(BENCH / "jax_speed.py"), "--quick", "--ppo", "", "--sb3-steps", "0", "--json",
                 str(tmp_path / "out.json")])
    assert "JAX / numba" in text and "PPO" not in text
    _check_jax_speed(json.loads((tmp_path / "out.json").read_text()), ppo=False)


def test_gpu_sh_says_its_usage():
    proc = subprocess.run(["bash", str(BENCH / "gpu.sh")], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "run OUT | quick OUT" in proc.stderr


@pytest.mark.slow
def test_gpu_sh_quick(tmp_path):
    # `run`'s steps on this machine's CPU, with jax_speed.py --quick (every row: the env, the JAX PPO, the SB3 run).
    pytest.importorskip("jax")
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}  # python3: this interpreter
    _run(["bash", str(BENCH / "gpu.sh"), "quick", str(tmp_path)], env)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["check.txt", "gpu.txt", "jax_gpu.json", "jax_speed.txt"]
    assert "Device" in (tmp_path / "gpu.txt").read_text()
    assert re.search(r"\b2 passed\b", (tmp_path / "check.txt").read_text())
    text = (tmp_path / "jax_speed.txt").read_text()
    assert "JAX / numba" in text and "JAX PPO, 4 games x 8 steps" in text and "SB3 MaskablePPO" in text
    _check_jax_speed(json.loads((tmp_path / "jax_gpu.json").read_text()), ppo=True)


# --- klondike_10k.sh and klondike_10k.py ----------------------------------------------------------

def test_klondike_10k_report_on_the_committed_rows():
    out = _run([sys.executable, "-m", "benchmarks.klondike_10k"])
    heads = [line for line in out.splitlines() if not line.startswith(" ")]
    assert heads[0].startswith("klondike_draw3: deals 0-9999 (10000)")
    assert heads[1].startswith("klondike: deals 0-9999 (10000)")
    assert heads[2].startswith("deals won in draw 3 and proved lost in draw 1: 0")
    assert out.count("winnable: ") == 2


def test_klondike_10k_sh_budgets_are_those_of_the_committed_rows():
    # (tests/test_klondike_10k.py holds the committed rows to these budgets)
    budgets = {1: (4_000_000, 600), 2: (30_000_000, 3600), 3: (300_000_000, 7200)}
    script = (BENCH / "klondike_10k.sh").read_text()
    for n, (nodes, seconds) in budgets.items():
        assert f"PASS{n}=(--max-nodes {nodes} --time-limit {seconds} " in script


@pytest.mark.skipif(shutil.which("zcat") is None, reason="needs zcat")
def test_klondike_10k_sh_quick(tmp_path):
    before = _committed_files()
    solve = Path(sys.executable).parent / "solitaire-env"
    out = _run(["bash", str(BENCH / "klondike_10k.sh"), "--quick", str(tmp_path)], {"SOLITAIRE_ENV": str(solve)})
    assert out.rstrip().splitlines()[-1].startswith("== all passes done")
    passes = ["draw3_pass1", "draw3_pass2", "draw1_pass1", "draw3_pass3", "draw1_pass2", "shipped_draw3_pass3"]
    assert [line.split()[1] for line in out.splitlines() if re.match(r"== \w+ \(", line)] == passes
    for name in passes:
        assert (tmp_path / f"{name}.done").exists() and json.loads((tmp_path / f"{name}.json").read_text())
    with open(tmp_path / "draw1_pass2.csv") as f:
        rows = list(csv.DictReader(f))
    assert sorted(int(r["seed"]) for r in rows) == [1038, 1039, 1040]  # a retry's CSV covers every deal
    retried = [r for r in rows if r["attempt"] == "2"]
    assert retried and all(r["max_nodes"] == "2000" for r in retried)
    # Run again: every step is done, nothing is solved; then the report reads the rows.
    again = _run(["bash", str(BENCH / "klondike_10k.sh"), "--quick", str(tmp_path)], {"SOLITAIRE_ENV": str(solve)})
    assert "wrote" not in again and again.rstrip().splitlines()[-1].startswith("== all passes done")
    report = _run([sys.executable, "-m", "benchmarks.klondike_10k", str(tmp_path)])
    assert "klondike_draw3: deals 0-1040 (1003)" in report and "proved lost in draw 1: 0" in report
    assert _committed_files() == before


def test_klondike_10k_sh_quick_never_writes_to_the_committed_rows():
    proc = subprocess.run(["bash", str(BENCH / "klondike_10k.sh"), "--quick", str(COMMITTED)], cwd=REPO,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "never writes" in proc.stderr
