"""The layers hold: engine <- envs, solver <- agents <- tools (an arrow: "may be imported by").

Every import of every module in ``solitaire_env/`` and ``agents/``, at module level and inside
functions, is checked against :data:`MAY_IMPORT` from the syntax tree. And the engine never imports the
agents: the agents build on the engine, never the reverse.

Checked in a fresh interpreter: importing every module of :mod:`solitaire_env` (the tooling ones, the
CLI, ``play``, ``training``, ``winnability``, load the agents only inside the functions that use them),
and running the solver with its agent guidance on (agent-ordered restarts and rollouts; the playouts'
player is passed in by the caller), leaves no ``agents`` module loaded; nor ``ray`` (optional, imported
only for ``--ray``).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# What each layer may import of the project. "package" is solitaire_env/__init__.py (it registers the envs);
# "parallel" (solitaire_env/parallel.py, the task runner) imports nothing of the project, and every layer may use it.
MAY_IMPORT = {
    "engine": {"engine", "parallel"},
    "envs": {"engine", "envs", "parallel", "package"},  # "import solitaire_env" registers the ids
    "solver": {"engine", "solver", "parallel"},
    "agents": {"engine", "envs", "solver", "agents", "parallel", "package"},
    "tools": {"engine", "envs", "solver", "agents", "tools", "parallel", "package", "jax"},
    "package": {"engine", "envs"},
    "parallel": set(),
    # The JAX backend (solitaire_env/jax/): the rules again on the engine's layout, beside the envs: it takes
    # the env ids and the reward from them. Only the tools' JAX training (solitaire_env/tools/jax_*.py, loaded
    # by a backend: jax config) imports it, besides tests and benchmarks, so `import solitaire_env` never loads JAX.
    "jax": {"engine", "envs", "jax", "parallel", "package"},
}


def _layer_of_file(path: Path) -> tuple[str, list[str]]:
    """The layer of a source file, and the dotted package it lies in (for relative imports)."""
    rel = path.relative_to(ROOT)
    if rel.parts[0] == "agents":  # installed as solitaire_env.agents
        return "agents", ["solitaire_env", "agents", *rel.parts[1:-1]]
    package = list(rel.parts[:-1])
    if len(rel.parts) == 2:
        return ("package" if rel.name == "__init__.py" else rel.stem), package
    return rel.parts[1], package


def _layer_of_module(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] != "solitaire_env":
        return None  # not the project's
    if len(parts) == 1:
        return "package"
    return parts[1]


def _imports(tree: ast.AST, package: list[str]):
    """(line, module) for every import in the tree, relative ones resolved; ``from solitaire_env import x``
    names the submodule when x is one."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            if module == "solitaire_env":
                for alias in node.names:
                    sub = (ROOT / "solitaire_env" / alias.name)
                    yield node.lineno, f"{module}.{alias.name}" if sub.is_dir() or sub.with_suffix(".py").is_file() \
                        else module
            else:
                yield node.lineno, module


SOURCES = sorted([*(ROOT / "solitaire_env").rglob("*.py"), *(ROOT / "agents").rglob("*.py")])


def test_the_layer_check_sees_every_module_and_knows_a_wrong_import():
    assert len(SOURCES) > 50
    bad = ast.parse("def f():\n    from solitaire_env.tools import cli\n")
    found = [(line, m) for line, m in _imports(bad, ["solitaire_env", "engine"])]
    assert found == [(2, "solitaire_env.tools")]
    assert _layer_of_module(found[0][1]) not in MAY_IMPORT["engine"]
    relative = ast.parse("from ..envs import render\nfrom . import core\n")
    assert [m for _, m in _imports(relative, ["solitaire_env", "engine"])] == ["solitaire_env.envs",
                                                                            "solitaire_env.engine"]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_import_keeps_to_the_layers(path):
    layer, package = _layer_of_file(path)
    assert layer in MAY_IMPORT, f"{path}: no layer for it; add it to MAY_IMPORT"
    tree = ast.parse(path.read_text(), filename=str(path))
    wrong = [f"line {line}: {layer} imports {module}" for line, module in _imports(tree, package)
             if (target := _layer_of_module(module)) is not None and target != layer
             and target not in MAY_IMPORT[layer]]
    assert not wrong, f"{path.relative_to(ROOT)} runs up the layers:\n" + "\n".join(wrong)

PROBE = """
import importlib, importlib.util, json, pkgutil, sys

import solitaire_env

modules = sorted(m.name for m in pkgutil.walk_packages(solitaire_env.__path__, "solitaire_env."))
if importlib.util.find_spec("jax") is None:  # the JAX backend is an extra
    modules = [m for m in modules if not m.startswith(("solitaire_env.jax", "solitaire_env.tools.jax_"))]
for name in modules:
    importlib.import_module(name)
after_import = sorted(m for m in sys.modules if m == "solitaire_env.agents" or m.startswith("solitaire_env.agents."))
ray_loaded = "ray" in sys.modules  # Ray is optional: imported only when --ray asks for it

from solitaire_env.solver import api, solve

api.RESTART_NODES, api.ROLLOUT_UNITS = 20, 1  # many short restarts: agent order and rollouts both run
rollouts = []
real = api.rollout
api.rollout = lambda *a, **k: rollouts.append(1) or real(*a, **k)
result = solve("rank_and_file", seed=14, agent_guidance=True, time_limit=None, max_nodes=3000)
after_solve = sorted(m for m in sys.modules if m == "solitaire_env.agents" or m.startswith("solitaire_env.agents."))
print(json.dumps({"modules": modules, "after_import": after_import, "after_solve": after_solve, "ray": ray_loaded,
                  "rollouts": len(rollouts), "nodes": result.nodes}))
"""


def test_no_engine_module_or_solve_imports_the_agents():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=900,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {"solitaire_env.solver.api", "solitaire_env.solver.search", "solitaire_env.tools.cli",
            "solitaire_env.solver.winnability"} <= set(out["modules"])
    assert out["after_import"] == []
    assert out["ray"] is False
    assert out["rollouts"] > 0 and out["nodes"] >= 3000  # the guided search ran, rollouts and all
    assert out["after_solve"] == []


JAX_PROBE = """
import sys

import gymnasium as gym
import numpy as np

import solitaire_env
from solitaire_env.tools import cli  # noqa: F401  (the widest layer)

env = gym.make("RankAndFile-v0")
env.reset(seed=0)
env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
vec = gym.make_vec("Rainbow-v0", num_envs=2)
vec.reset(seed=0)
print(sorted(m for m in sys.modules if m == "jax" or m.startswith(("jax.", "solitaire_env.jax"))))
"""


def test_importing_solitaire_env_and_playing_never_loads_jax():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", JAX_PROBE], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def _module_of(path: Path) -> str:
    """The dotted module a source file is imported as (``agents/x.py`` installs as ``solitaire_env.agents.x``)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] == "agents":
        parts.insert(0, "solitaire_env")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    """Each module's imports of other project modules, at module level and inside functions alike; ``from
    package import name`` counts as an import of ``package.name`` where that is a module."""
    modules = {_module_of(p): p for p in SOURCES}
    graph = {}
    for name, path in modules.items():
        package = _layer_of_file(path)[1]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = ".".join([*(package[: len(package) - node.level + 1] if node.level else []),
                                 *([node.module] if node.module else [])])
                subs = {f"{base}.{alias.name}" for alias in node.names} & modules.keys()
                found |= subs or {base}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: the graph's strongly connected parts of more than one module (Tarjan)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        order[v] = low[v] = len(order)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in order:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], order[w])
        if low[v] == order[v]:
            part = []
            while not part or part[-1] != v:
                part.append(stack.pop())
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in order:
            visit(v)
    return found


def test_the_circle_check_finds_a_circle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_two_modules_import_each_other():
    # Function-level imports count: a circle there still ties the two modules into one.
    graph = _import_graph()
    assert graph["solitaire_env.tools.training"] >= {"solitaire_env.tools.sb3_training",
                                                      "solitaire_env.tools.jax_training"}
    assert _cycles(graph) == []
