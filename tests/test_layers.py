"""The engine never imports the agents: the agents build on the engine, never the reverse.

Checked in a fresh interpreter: importing every module of :mod:`solitaire_env` (the tooling ones, the
CLI, ``play``, ``training``, ``winnability``, load the agents only inside the functions that use them),
and running the solver with its agent guidance on (agent-ordered restarts and rollouts; the playouts'
player is passed in by the caller), leaves no ``agents`` module loaded; nor ``ray`` (optional, imported
only for ``--ray``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import importlib, json, pkgutil, sys

import solitaire_env

modules = sorted(m.name for m in pkgutil.walk_packages(solitaire_env.__path__, "solitaire_env."))
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
