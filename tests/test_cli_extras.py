"""The command line on the base install (``pip install -e .``, no extras), and the help a new user reads."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from solitaire_env.tools.cli import build_parser, main
from solitaire_env.tools.extras import stop_for_extra

REPO = Path(__file__).resolve().parent.parent
TRAIN_EXTRA = ("tqdm", "yaml", "rich", "torch", "sb3_contrib", "stable_baselines3", "matplotlib", "tensorboard")

# Runs CLI commands in a process where the train extra's modules cannot be imported (as after a plain
# `pip install -e .`), and prints each command's exit status, stdout and stderr as JSON.
_WITHOUT_EXTRAS = """
import contextlib, io, json, sys
for name in {blocked!r}:
    sys.modules[name] = None
from solitaire_env.tools.cli import main
results = []
for argv in {commands!r}:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
    results.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(results))
"""


def _run_without_extras(commands: list[list[str]]) -> list[tuple[int, str, str]]:
    script = _WITHOUT_EXTRAS.format(blocked=TRAIN_EXTRA, commands=commands)
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [tuple(r) for r in json.loads(proc.stdout.splitlines()[-1])]


def test_without_the_train_extra_what_needs_nothing_more_runs_and_the_rest_says_which_extra(tmp_path):
    needs = 'needs the train extra: pip install "solitaire-env[train]" (no module named '
    commands = [
        ["evaluate", "--env", "Rainbow-v0", "--agent", "heuristic", "--agent", "random", "--episodes", "2",
         "--json", str(tmp_path / "e.json")],  # a progress bar asked for: played without one
        ["evaluate", "--env", "Rainbow-v0", "--agent", "pretrained", "--episodes", "1"],
        ["train", "configs/quick.yaml", "--output", str(tmp_path / "run")],
        ["plot", str(tmp_path)],
    ]
    (code, out, err), *stops = _run_without_extras(commands)
    assert code == 0 and "heuristic" in out and "Wilson" in out, err
    assert set(json.loads((tmp_path / "e.json").read_text())["summaries"]) == {"heuristic", "random"}
    for (code, out, err), what in zip(stops, ("evaluate --agent pretrained", "train", "plot"), strict=True):
        assert code == 1 and out == ""
        assert err.count("\n") == 1 and err.startswith(f"solitaire-env {what} {needs}'yaml')"), err
    assert not (tmp_path / "run").exists()


def test_the_command_line_imports_no_extra_until_a_command_needs_it():
    # (yaml is left out: numba's own config imports it when it is there; the test above blocks it.)
    heavy = tuple(m for m in TRAIN_EXTRA if m != "yaml")
    script = ("import sys; from solitaire_env.tools.cli import build_parser; build_parser(); "
              f"print([m for m in {heavy!r} if m in sys.modules])")
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"


def test_a_missing_module_of_no_extra_is_not_hidden(capsys):
    other = ModuleNotFoundError("No module named 'gymnasium_robotics'", name="gymnasium_robotics")
    with pytest.raises(ModuleNotFoundError, match="gymnasium_robotics"):
        stop_for_extra("solitaire-env evaluate", other)
    with pytest.raises(SystemExit) as e:
        stop_for_extra("solitaire-env evaluate", ModuleNotFoundError("No module named 'ray'", name="ray"))
    assert e.value.code == 1
    assert capsys.readouterr().err == ('solitaire-env evaluate needs the ray extra: pip install "solitaire-env[ray]" '
                                       "(no module named 'ray')\n")


def _help(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as e:
        main(argv + ["--help"])
    assert e.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse's line breaks undone


def test_evaluate_help_lists_every_kind_of_agent(capsys):
    text = _help(["evaluate"], capsys)
    for kind in ("'random'", "'heuristic'", "'search'", "'search:WxN'", "'plan'", "'plan:WxN'", "'plan:WxNxK'",
                 "'pretrained'", "PATH", "'sample:PATH'"):
        assert kind in text, kind


def test_replay_help_says_what_each_output_is(capsys):
    text = _help(["replay"], capsys)
    assert "--gif OUT.gif write an animated GIF" in text
    assert "--html OUT.html write one self-contained HTML page" in text
    assert "--ansi step through it in the terminal" in text


def test_every_option_of_every_command_has_help():
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    missing = [f"{name} {' / '.join(action.option_strings)}" for name, command in commands.choices.items()
               for action in command._actions if action.option_strings and not action.help]
    assert missing == []

