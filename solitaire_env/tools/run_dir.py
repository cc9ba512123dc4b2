"""A training run's directory, shared by both backends (:mod:`~solitaire_env.tools.sb3_training` and
:mod:`~solitaire_env.tools.jax_training`): what a run writes there, how ``--resume`` and ``--overwrite``
treat a directory that already holds a run, the latest checkpoint, and the learning-curve plot."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from solitaire_env.tools.config import TrainConfig, parse_config

# What a run writes into its directory: what --overwrite deletes, and what marks a directory as holding a run.
RUN_FILES = ("config.yaml", "summary.json", "pretrain.json", "pretrained_model.zip", "initial_model.zip",
             "best_model.zip", "selected_model.zip", "final_model.zip", "best_model.msgpack", "final_model.msgpack",
             "evaluations.npz", "learning_curve.png", "evaluation.json", "evaluation.csv")
RUN_DIRS = ("checkpoints", "tb", "pretrain")
CHECKPOINT_SUFFIX = {"sb3": ".zip", "jax": ".msgpack"}  # the files in checkpoints/, by backend


class RunDirError(ValueError):
    """A run directory that cannot be used as asked (it holds a run, or has nothing to resume)."""


def prepare_run_dir(out: Path, config: TrainConfig, resume: bool = False, overwrite: bool = False) -> Path | None:
    """Make ``out`` ready for ``config``'s run; return the checkpoint to resume from (``None``: start anew).

    ``RunDirError`` (nothing changed) when ``out`` holds a run and neither flag is given, or when
    ``resume`` finds a run of another config.
    """
    if resume and overwrite:
        raise RunDirError("resume and overwrite exclude each other: say which is meant")
    holds_run = out.is_dir() and any((out / name).exists() for name in RUN_FILES + RUN_DIRS)
    if holds_run and not (resume or overwrite):
        raise RunDirError(f"{out} already holds a training run: pass --resume to go on from its last checkpoint, "
                          f"--overwrite to replace it, or --output DIR for a new directory")
    if holds_run and resume:
        saved = out / "config.yaml"
        if not saved.is_file():
            raise RunDirError(f"cannot resume {out}: it has no config.yaml (use --overwrite to start anew)")
        earlier = parse_config(yaml.safe_load(saved.read_text()), where=str(saved)).to_dict()
        now = config.to_dict()
        differ = sorted(k for k in now if k not in ("total_timesteps", "output_dir") and now[k] != earlier.get(k))
        if differ:
            raise RunDirError(f"cannot resume {out}: its run used another config ({', '.join(differ)} differ); "
                              f"use --overwrite or another --output")
        checkpoint = latest_checkpoint(out, CHECKPOINT_SUFFIX[config.backend])
        if checkpoint is not None:
            return checkpoint
        kept: tuple[str, ...] = ()
        if (out / "pretrain.json").is_file() and (out / "pretrain").is_dir():
            kept = ("pretrain.json", "pretrain")  # pretrain_policy goes on after its last finished round
            print(f"{out}: no PPO checkpoint saved yet, going on with the pretraining rounds it finished")
        else:
            print(f"{out}: no checkpoint saved yet, starting the run anew")
    else:
        kept = ()
    if holds_run:  # overwrite, or a resume with nothing to resume from
        for name in RUN_FILES:
            if name not in kept:
                (out / name).unlink(missing_ok=True)
        for name in RUN_DIRS:
            if name not in kept:
                shutil.rmtree(out / name, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    return None


def latest_checkpoint(out: Path, suffix: str = ".zip") -> Path | None:
    """The checkpoint with the most timesteps in ``out/checkpoints`` (``ppo_<steps>_steps.zip``, or
    ``.msgpack`` for the JAX backend's), if any."""
    found = []
    for path in (out / "checkpoints").glob(f"ppo_*_steps{suffix}"):
        steps = path.name.removeprefix("ppo_").removesuffix(f"_steps{suffix}")
        if steps.isdigit():
            found.append((int(steps), path))
    return max(found)[1] if found else None


def plot_learning_curve(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Plot the mean evaluation return (and the win rate) against timesteps from ``evaluations.npz``.

    Raises ``FileNotFoundError`` / ``NotADirectoryError`` when ``run_dir`` is missing or not a directory,
    ``ValueError`` when it holds no ``evaluations.npz``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        if run_dir.exists():
            raise NotADirectoryError(f"run directory {run_dir} is not a directory")
        raise FileNotFoundError(f"run directory {run_dir} does not exist")
    log = run_dir / "evaluations.npz"
    if not log.is_file():
        raise ValueError(f"no evaluations.npz in {run_dir}: the run logged no evaluation (too short a run?)")
    data = np.load(log)
    steps, results = data["timesteps"], data["results"]
    mean, std = results.mean(axis=1), results.std(axis=1)
    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=120)
    ax.plot(steps, mean, marker="o", ms=3, label="mean evaluation return")
    ax.fill_between(steps, mean - std, mean + std, alpha=0.2, label="±1 s.d. over evaluation episodes")
    ax.set_xlabel("timesteps")
    ax.set_ylabel("evaluation return (config reward)")
    config_path = run_dir / "config.yaml"
    title = yaml.safe_load(config_path.read_text()).get("env_id", "") if config_path.is_file() else ""
    backend = yaml.safe_load(config_path.read_text()).get("backend") if config_path.is_file() else None
    name = "PPO (JAX)" if backend == "jax" else "MaskablePPO"
    ax.set_title(f"{name} on {title}" if title else name)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    path = Path(out) if out else run_dir / "learning_curve.png"
    fig.savefig(path)
    plt.close(fig)
    return path
