"""Command-line input the CLI must answer clearly (issue #15, point 12): agent forms in --help, negative
--seeds, plot of a missing directory, run directories and damaged files as agents, replay file
suffixes, --version."""

from __future__ import annotations

import zipfile
from importlib import metadata

import pytest

import solitaire_env
from solitaire_env.tools import cli
from solitaire_env.tools.cli import main


def _one_line_error(argv: list[str], capsys) -> str:
    """Run the CLI on ``argv``, expecting a usage error; the error line (checked to be one line)."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"solitaire-env {argv[0]}: error:"), err
    assert "Traceback" not in err and captured.out == ""
    return err


def test_evaluate_help_lists_every_agent_form(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["evaluate", "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # undo argparse's line wrapping
    for form in ("'random'", "'heuristic'", "'search'", "'search:WxN'", "'plan'", "'plan:WxN'", "'sample:PATH'", ".zip",
                 "run directory", "best_model.zip", "final_model.zip"):
        assert form in text, form


@pytest.mark.parametrize("command", [["solve", "rainbow"], ["solvitaire", "--out", "unused"]])
@pytest.mark.parametrize("seeds", [["--seeds", "-3:2"], ["--seeds=-3:2"], ["--seeds", "2:-3"], ["--seeds", "-3"]])
def test_negative_seeds_are_named_in_both_option_forms(command, seeds, capsys):
    err = _one_line_error([*command, *seeds], capsys)
    assert "deal numbers cannot be negative" in err and "expected one argument" not in err


def test_plot_says_whether_the_directory_is_missing_or_has_no_evaluations(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    pytest.importorskip("yaml")
    missing = tmp_path / "nonexistent"
    err = _one_line_error(["plot", str(missing)], capsys)
    assert f"run directory {missing} does not exist" in err and "too short" not in err
    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    assert "is not a directory" in _one_line_error(["plot", str(a_file)], capsys)
    assert "no evaluations.npz in" in _one_line_error(["plot", str(tmp_path)], capsys)
    err = _one_line_error(["plot", str(tmp_path), "--out", str(tmp_path / "no" / "curve.png")], capsys)
    assert "no such directory" in err


@pytest.mark.parametrize("argv, message", [
    (["--gif", "x.png"], "--gif x.png: the file name must end in .gif"),
    (["--html", "x.txt"], "--html x.txt: the file name must end in .html or .htm"),
    (["--gif", "ok.gif", "--html", "page.png"], "--html page.png: the file name must end in .html or .htm"),
])
def test_replay_refuses_an_output_name_of_another_format(tmp_path, argv, message, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    # The recording does not exist: the suffix is checked first, before anything is read or written.
    err = _one_line_error(["replay", "missing.json", *argv], capsys)
    assert message in err
    assert list(tmp_path.iterdir()) == []


def test_replay_of_a_missing_recording_says_so(tmp_path, capsys):
    err = _one_line_error(["replay", str(tmp_path / "missing.json"), "--gif", str(tmp_path / "x.gif")], capsys)
    assert f"cannot read {tmp_path / 'missing.json'}: No such file or directory" in err


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    try:
        expected = metadata.version("solitaire-env")
    except metadata.PackageNotFoundError:
        expected = solitaire_env.__version__
    assert capsys.readouterr().out.strip() == f"solitaire-env {expected}"


def test_version_falls_back_to_the_package_when_not_installed(monkeypatch):
    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    assert cli._version() == solitaire_env.__version__


# --- checkpoints: run directories and damaged files -------------------------------------------


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """An untrained MaskablePPO save for Rainbow-v0: loading it is all these tests need."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import gymnasium as gym

    model = sb3_contrib.MaskablePPO("MlpPolicy", gym.make("Rainbow-v0"), n_steps=64, batch_size=64,
                                    policy_kwargs=dict(net_arch=[16]), seed=0, device="cpu")
    path = tmp_path_factory.mktemp("ckpt") / "model.zip"
    model.save(path)
    return path


def test_a_run_directory_plays_its_best_model_else_its_final_model(checkpoint, tmp_path, capsys):
    from solitaire_env.agents import make_agent

    run = tmp_path / "run"
    run.mkdir()
    (run / "final_model.zip").write_bytes(checkpoint.read_bytes())
    assert make_agent(str(run), "Rainbow-v0").checkpoint == str(run / "final_model.zip")
    (run / "best_model.zip").write_bytes(checkpoint.read_bytes())
    agent = make_agent(str(run), "Rainbow-v0")
    assert agent.checkpoint == str(run / "best_model.zip") and agent.deterministic
    sampled = make_agent(f"sample:{run}", "Rainbow-v0")
    assert sampled.checkpoint == str(run / "best_model.zip") and not sampled.deterministic

    assert main(["evaluate", "--env", "Rainbow-v0", "--agent", str(run), "--episodes", "1", "--no-progress"]) == 0
    assert f"agent {run}: playing {run / 'best_model.zip'}" in capsys.readouterr().out


def test_a_directory_without_a_model_says_what_it_holds(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    run = tmp_path / "quick"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text("env_id: Rainbow-v0\n")
    err = _one_line_error(["evaluate", "--env", "Rainbow-v0", "--agent", str(run), "--episodes", "1"], capsys)
    assert f"{run} holds no best_model.zip or final_model.zip (it holds checkpoints/, config.yaml)" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    err = _one_line_error(["evaluate", "--env", "Rainbow-v0", "--agent", str(empty), "--episodes", "1"], capsys)
    assert "(it holds nothing)" in err


def _damaged(checkpoint, tmp_path, kind: str):
    path = tmp_path / f"{kind}.zip"
    data = checkpoint.read_bytes()
    if kind == "truncated":
        path.write_bytes(data[: len(data) // 2])
        return path
    with zipfile.ZipFile(checkpoint) as src, zipfile.ZipFile(path, "w") as out:
        for name in src.namelist():
            if kind == "garbage" or name.endswith(".pth"):  # every member, or only torch's tensors
                out.writestr(name, b"\x00garbage, not what was saved" * 8)
            else:
                out.writestr(name, src.read(name))
    return path


@pytest.mark.parametrize("kind", ["garbage", "garbage-tensors", "truncated"])
def test_a_damaged_checkpoint_is_one_clear_line(checkpoint, tmp_path, kind, capsys):
    path = _damaged(checkpoint, tmp_path, kind)
    err = _one_line_error(["evaluate", "--env", "Rainbow-v0", "--agent", str(path), "--episodes", "1"], capsys)
    assert f"cannot read {path} as a MaskablePPO checkpoint: the file is damaged or not an SB3 save (" in err
    # torch's advice (re-run torch.load with weights_only=False) does not belong here.
    assert "weights_only" not in err and "torch.load" not in err and len(err) < 300


def test_a_damaged_checkpoint_through_the_python_api(checkpoint, tmp_path):
    from solitaire_env.agents import make_agent

    with pytest.raises(ValueError, match="the file is damaged or not an SB3 save") as exc:
        make_agent(str(_damaged(checkpoint, tmp_path, "garbage-tensors")), "Rainbow-v0")
    assert "weights_only" not in str(exc.value) and "\n" not in str(exc.value)


def test_evaluate_takes_env_arguments_and_keeps_them(tmp_path, capsys):
    out = tmp_path / "ev.json"
    argv = ["evaluate", "--env", "NumberTen-v0", "--agent", "random", "--episodes", "2", "--no-progress",
            "--env-kwargs", '{"no_revisit": true, "max_episode_steps": 300}', "--json", str(out)]
    assert main(argv) == 0
    assert '"no_revisit": true' in capsys.readouterr().out
    import json

    result = json.loads(out.read_text())
    assert result["env_kwargs"] == {"no_revisit": True, "max_episode_steps": 300}
    assert result["max_episode_steps"] == 300
    assert all(r["length"] <= 300 for r in result["records"])


@pytest.mark.parametrize("kwargs, message", [
    ("[1]", "must be a JSON object"), ("{no", "not JSON"), ('{"no_revisit": 3}', "no_revisit must be True or False"),
    ('{"bogus": 1}', "unexpected keyword argument 'bogus'"), ('{"deals": "test"}', "cannot set 'deals'"),
])
def test_bad_env_arguments_are_one_clear_line(kwargs, message, capsys):
    err = _one_line_error(["evaluate", "--env", "Rainbow-v0", "--agent", "random", "--episodes", "1",
                           "--env-kwargs", kwargs], capsys)
    assert message in err
