"""MaskablePPO training from a YAML config, in the RL Zoo's spirit.

A config names the env, the number of parallel games, the budget, the policy and PPO's
hyperparameters, the env's keyword arguments and the seed (see ``configs/*.yaml``; a config may build on
a ``base`` file, and ``--set`` overrides its keys: :mod:`solitaire_env.tools.config`). Loading checks it
completely first: an unknown key, a wrong type, a bad value or a missing file is a
:class:`ConfigError` naming the key, never a traceback from inside SB3.

A run directory holds ``config.yaml`` (as used, fully resolved: no ``base``), TensorBoard logs (``tb/``), checkpoints
(``checkpoints/``), ``MaskableEvalCallback``'s ``evaluations.npz`` and ``best_model.zip``,
``final_model.zip``, ``summary.json`` (steps, wall time, the deals of each phase) and
``learning_curve.png``. Needs the ``train`` extra.

Deals (:mod:`solitaire_env.engine.deals`): the training envs play the ``train`` split (``deals``, drawn at
random, never a validation or test deal); every evaluation round plays the same validation deals
``eval.seed .. eval.seed + eval.episodes - 1`` (10,000 .. by default), so ``best_model.zip`` is
chosen by comparing checkpoints on one fixed set; the test deals (0 .. 9,999; docs/baselines.md
reports 0-999) are left to ``solitaire-env evaluate``.

A directory that already holds a run is refused unless ``resume=True`` (go on from its last
checkpoint in ``checkpoints/``, with the same config; evaluations logged after that checkpoint are
dropped, as the training that led to them is replayed) or ``overwrite=True`` (delete the run's files
first).

Warm start and fine-tuning (optional ``pretrain`` section, ``init_model``): see
:mod:`solitaire_env.tools.pretraining`.

One file or two: a config with a ``pretrain`` section and PPO steps (the whole recipe in one file)
trains exactly as its two halves do, the same config with ``total_timesteps: 0`` and then with
``init_model`` set to that run's ``selected_model.zip`` and no ``pretrain`` section: the PPO phase
starts from the random state of a freshly built model either way (tested bit for bit).
"""

from __future__ import annotations

from pathlib import Path

# The config's, the run directory's and the SB3 backend's names stay importable from here (tests, examples,
# benchmarks use them): this module is the one entry point, the backends sit beside each other below it.
from solitaire_env.tools.config import (  # noqa: F401
    POLICIES,
    POLICY_OBS_MODES,
    PRETRAIN_AGENTS,
    ConfigError,
    EvalConfig,
    PretrainConfig,
    TrainConfig,
    apply_overrides,
    describe_deals,
    load_config,
    parse_config,
    resolve,
    save_config,
)
from solitaire_env.tools.pretraining import pretrain_deals, pretrain_policy, select_model  # noqa: F401
from solitaire_env.tools.run_dir import (  # noqa: F401
    CHECKPOINT_SUFFIX,
    RUN_DIRS,
    RUN_FILES,
    RunDirError,
    latest_checkpoint,
    plot_learning_curve,
    prepare_run_dir,
)
from solitaire_env.tools.sb3_training import build_model, check_init_model, fixed_deals_eval_callback  # noqa: F401


def train(config: TrainConfig, output_dir: str | Path | None = None, progress: bool = True, verbose: int = 0,
          resume: bool = False, overwrite: bool = False) -> Path:
    """Train as the config says, on the config's ``backend``; return the run directory.

    ``sb3`` (the default): MaskablePPO on the numba envs (:func:`~solitaire_env.tools.sb3_training.train_sb3`);
    ``jax``: PPO on the JAX backend (:func:`~solitaire_env.tools.jax_training.train_jax`, the ``jax`` extra,
    imported only here). Both write a run directory of the same shape (:mod:`solitaire_env.tools.run_dir`). A
    directory that holds a run is refused (``RunDirError``) unless ``resume`` (go on from its last checkpoint)
    or ``overwrite`` (delete the run's files first) says which is meant.
    """
    if config.backend == "jax":
        from solitaire_env.tools.jax_training import train_jax

        return train_jax(config, output_dir=output_dir, progress=progress, resume=resume, overwrite=overwrite)
    from solitaire_env.tools.sb3_training import train_sb3

    return train_sb3(config, output_dir=output_dir, progress=progress, verbose=verbose, resume=resume,
                     overwrite=overwrite)
