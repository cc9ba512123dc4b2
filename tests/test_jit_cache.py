"""numba's disk caches of the compiled rules follow edits to the sources they were built from
(:mod:`solitaire_env.engine.jit_cache`), checked on a copy of the package in a temporary folder."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from solitaire_env.engine import jit_cache

PACKAGE = jit_cache.PACKAGE  # solitaire_env/

# Small compiled functions from compiled modules of the package: the core's observation (which writes
# variant.HIDDEN for a face-down card), the solver's progress measure (which calls the core's
# hidden_cards) and its layout key (dominance.py, built on hashing.py's mix and PRIME). Deal 0 of Rank and
# File: pile 0 starts with a face-down card; 30 are face down.
PROBE = """
import json
import numpy as np
from solitaire_env.engine import core
from solitaire_env.solver import dominance, rollouts
from solitaire_env.engine.games import RANK_AND_FILE as v
from solitaire_env.engine.state import deal

s = deal(v, 0)
obs = np.zeros(v.obs_size, dtype=np.int16)
core.observe(s, v.spec, obs)
progress = rollouts.progress(s, v.spec)
layout = dominance.layout_key(s, v.spec)
print(json.dumps({"hidden_code": int(obs[0]), "progress": int(progress), "layout": int(layout),
                  "observe_hits": sum(core.observe.stats.cache_hits.values()),
                  "progress_hits": sum(rollouts.progress.stats.cache_hits.values()),
                  "layout_hits": sum(dominance.layout_key.stats.cache_hits.values())}))
"""


def _stamps_expected(root: Path) -> set[str]:
    """The stamp files a probe leaves: one for each compiled module it imports (the engine's and the solver's)."""
    package = root / "solitaire_env"
    compiled = [p for p in sorted([*(package / "engine").glob("*.py"), *(package / "solver").glob("*.py")])
                if "from numba import njit" in p.read_text()]
    assert len(compiled) > 2
    return {f"{p.stem}.rules-stamp" for p in compiled}


def _probe(root: Path, cache_dir: Path | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = str(root)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} not found once in {path.name}"
    path.write_text(text.replace(old, new))


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(PACKAGE, root / "solitaire_env", ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.mark.slow  # five cold compiles of the probe; its default-run twin is the NUMBA_CACHE_DIR test below
def test_an_edited_constant_or_core_function_takes_effect_despite_the_cache(tmp_path):
    root, cache_dir = _copy(tmp_path), None

    first = _probe(root, cache_dir)
    assert first["hidden_code"] == 53 and first["progress"] == -30 * 100 - 64
    again = _probe(root, cache_dir)  # unchanged sources: everything loads from the cache
    hits = ("observe_hits", "progress_hits", "layout_hits")
    assert again == {**first, **{k: again[k] for k in hits}}
    assert all(again[k] > 0 for k in hits)

    # variant.py's HIDDEN is a constant inside core.observe's machine code, and numba keys core's cache
    # on core.py alone: the old value would stay.
    _edit(root / "solitaire_env" / "engine" / "variant.py", "HIDDEN = 53", "HIDDEN = 60")
    edited = _probe(root, cache_dir)
    assert edited["hidden_code"] == 60 and edited["observe_hits"] == 0
    assert edited["progress"] == first["progress"]

    # position.py's hidden_cards is compiled into the solver's code, whose cache numba keys on rollouts.py alone.
    _edit(root / "solitaire_env" / "engine" / "position.py", "total = s[sp[O_RESDOWN]]\n",
          "total = s[sp[O_RESDOWN]] + 7\n")
    edited = _probe(root, cache_dir)
    assert edited["progress"] == first["progress"] - 7 * 100 and edited["progress_hits"] == 0
    assert edited["hidden_code"] == 60

    # One solver module's constant and code inside another's: hashing.py's PRIME and key_parts are compiled
    # into dominance.layout_key, whose cache numba keys on dominance.py alone.
    _edit(root / "solitaire_env" / "solver" / "hashing.py", "PRIME = np.uint64(0x100000001B3)",
          "PRIME = np.uint64(0x100000001B5)")
    edited = _probe(root, cache_dir)
    assert edited["layout"] != first["layout"] and edited["layout_hits"] == 0
    assert edited["progress"] == first["progress"] - 7 * 100
    assert {p.name for p in root.rglob("*.rules-stamp")} == _stamps_expected(root)


def test_a_cache_under_numba_cache_dir_is_refreshed_too(tmp_path):
    """The default run's check of the stamps (the test above, under ``-m slow``, edits three modules): a
    constant of variant.py compiled into core's code, whose cache numba keys on core.py alone, is refreshed."""
    root, cache_dir = _copy(tmp_path), tmp_path / "numba-cache"
    first = _probe(root, cache_dir)
    assert first["hidden_code"] == 53
    _edit(root / "solitaire_env" / "engine" / "variant.py", "HIDDEN = 53", "HIDDEN = 60")
    edited = _probe(root, cache_dir)
    assert edited["hidden_code"] == 60 and edited["observe_hits"] == 0
    assert edited["progress"] == first["progress"] and edited["layout"] == first["layout"]
    assert {p.name for p in cache_dir.rglob("*.rules-stamp")} == _stamps_expected(root)
    assert not list(root.rglob("*.nbi"))  # everything went to NUMBA_CACHE_DIR


def _package_imports(path: Path) -> set[str]:
    """The solitaire_env modules a source file imports, as file paths relative to the package."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("solitaire_env"):
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith("solitaire_env")]
        for name in names:
            parts = name.split(".")[1:]
            if not parts:
                continue  # the package itself
            rel = Path(*parts)
            for candidate in (rel.with_suffix(".py"), rel / "__init__.py"):
                if (PACKAGE / candidate).is_file():
                    found.add(candidate.as_posix())
    return found


def test_the_stamp_covers_every_module_compiled_code_is_built_from():
    stamped = {p.relative_to(PACKAGE).as_posix() for p in jit_cache.rules_files()}
    compiled = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")
                if "from numba import njit" in p.read_text()}
    assert {"engine/core.py", "solver/search.py", "solver/rollouts.py"} <= compiled
    needed, todo = set(), list(compiled)
    while todo:
        rel = todo.pop()
        if rel not in needed:
            needed.add(rel)
            todo += _package_imports(PACKAGE / rel)
    needed -= {"engine/jit_cache.py", "engine/__init__.py"}  # plain Python, and a docstring
    assert needed <= stamped, sorted(needed - stamped)


def test_stamp_changes_with_any_rules_source(tmp_path):
    copy = tmp_path / "solitaire_env"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = jit_cache.rules_stamp(copy)
    (copy / "tools" / "cli.py").write_text((copy / "tools" / "cli.py").read_text() + "\n# not a rules source\n")
    jit_cache.rules_stamp.cache_clear()
    assert jit_cache.rules_stamp(copy) == before
    games = copy / "engine" / "games" / "rainbow.py"
    games.write_text(games.read_text().replace("max_episode_steps=1000", "max_episode_steps=999"))
    jit_cache.rules_stamp.cache_clear()
    assert jit_cache.rules_stamp(copy) != before
