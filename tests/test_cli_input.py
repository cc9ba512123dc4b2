"""Command-line input the CLI must answer clearly (issue #15, point 12): run directories and damaged
files as agents."""

from __future__ import annotations

import zipfile

import pytest

from solitaire_env.cli import main


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
    from agents import make_agent

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
    from agents import make_agent

    with pytest.raises(ValueError, match="the file is damaged or not an SB3 save") as exc:
        make_agent(str(_damaged(checkpoint, tmp_path, "garbage-tensors")), "Rainbow-v0")
    assert "weights_only" not in str(exc.value) and "\n" not in str(exc.value)
