"""MaskablePPO training on the numba envs through the SB3 adapter: the ``sb3`` backend of
:func:`solitaire_env.tools.training.train` (the default; a config's ``backend: jax`` trains on the JAX
backend instead, :mod:`solitaire_env.tools.jax_training`). The run directory, the config and the deals
are as :mod:`solitaire_env.tools.training` describes. Needs the ``train`` extra."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from solitaire_env.tools.config import ConfigError, TrainConfig, describe_deals, save_config
from solitaire_env.tools.pretraining import pretrain_policy, select_model
from solitaire_env.tools.run_dir import plot_learning_curve, prepare_run_dir


def train_sb3(config: TrainConfig, output_dir: str | Path | None = None, progress: bool = True, verbose: int = 0,
              resume: bool = False, overwrite: bool = False) -> Path:
    """Train MaskablePPO as the config says; return the run directory.

    A directory that holds a run is refused (``RunDirError``) unless ``resume`` (go on from its last
    checkpoint) or ``overwrite`` (delete the run's files first) says which is meant.
    """
    import torch
    from stable_baselines3.common.callbacks import CheckpointCallback

    from solitaire_env.agents.policies import UpdateThreads
    from solitaire_env.agents.ppo import legacy_class_paths, load_model
    from solitaire_env.envs.sb3 import make_sb3_vec_env

    out = Path(output_dir or config.output_dir)
    if config.init_model is not None:
        check_init_model(config)  # before the run directory is touched
    checkpoint = prepare_run_dir(out, config, resume=resume, overwrite=overwrite)
    torch.set_num_threads(config.torch_threads)
    save_config(config, out / "config.yaml")
    deals = describe_deals(config)
    for phase, words in deals.items():
        print(f"{phase} deals: {words}")
    env_kwargs = dict(config.env_kwargs)
    venv = make_sb3_vec_env(config.env_id, n_envs=config.n_envs, seed=config.seed, deals=config.deals, **env_kwargs)
    evals = range(config.eval.seed, config.eval.seed + config.eval.episodes)
    eval_env = make_sb3_vec_env(config.env_id, n_envs=1, deals=evals, **env_kwargs)
    pretrain_stats = None
    if checkpoint is not None:
        model = load_model(checkpoint, env=venv, device="cpu", tensorboard_log=str(out / "tb"))
        # Fresh training deals after the resume, not a replay of the run's first ones.
        venv.seed(config.seed + model.num_timesteps)
        print(f"resuming {out} from {checkpoint.name} ({model.num_timesteps} timesteps)")
    else:
        model = build_model(config, venv, verbose=verbose, tensorboard_log=str(out / "tb"))
        if config.init_model is not None:
            with legacy_class_paths():
                model.set_parameters(config.init_model, exact_match=True, device="cpu")
            model.save(out / "initial_model.zip")
            print(f"starting from the policy of {config.init_model}")
        if config.pretrain is not None:
            # The PPO phase starts from the random state a freshly built model has, so a one-file recipe
            # (pretrain, then PPO) trains exactly as its two halves do (a cloning-only run, then a run
            # with init_model = its selected_model.zip).
            random_state = _random_state()
            pretrain_stats = pretrain_policy(model, config, out=out, verbose=verbose, progress=progress)
            (out / "pretrain.json").write_text(json.dumps(pretrain_stats, indent=2))
            model.save(out / "pretrained_model.zip")
            _set_random_state(random_state)
    evaluation = fixed_deals_eval_callback(
        eval_env, n_eval_episodes=config.eval.episodes, eval_freq=max(config.eval.freq // config.n_envs, 1),
        best_model_save_path=str(out), log_path=str(out), deterministic=config.eval.deterministic,
        verbose=verbose,
    )
    if checkpoint is not None:
        evaluation.restore(out, model.num_timesteps)
    callbacks = [
        UpdateThreads(config.update_threads or config.torch_threads, config.torch_threads),
        evaluation,
        CheckpointCallback(save_freq=max(config.checkpoint_freq // config.n_envs, 1),
                           save_path=str(out / "checkpoints"), name_prefix="ppo"),
    ]
    start, first_step = time.perf_counter(), model.num_timesteps
    if config.total_timesteps > 0:  # 0: the pretraining alone (an ablation); the final model is the pretrained one
        model.learn(total_timesteps=max(config.total_timesteps - model.num_timesteps, 0), callback=callbacks,
                    progress_bar=progress, reset_num_timesteps=checkpoint is None)
    wall = time.perf_counter() - start
    model.save(out / "final_model.zip")
    steps = model.num_timesteps - first_step
    print(f"ppo: {steps} steps in {wall:.0f} s ({steps / max(wall, 1e-9):.0f} env steps/s)", flush=True)
    summary = {"env_id": config.env_id, "timesteps": int(model.num_timesteps), "wall_time_s": round(wall, 1),
               "steps_per_s": round(steps / wall, 1) if wall > 0 else None,
               "torch_threads": torch.get_num_threads(),
               "update_threads": config.update_threads or config.torch_threads, "deals": deals}
    if checkpoint is not None:
        summary["resumed_from_timesteps"] = int(first_step)  # wall time and steps/s are this piece's
    if pretrain_stats is not None:
        summary["pretrain"] = pretrain_stats
    elif checkpoint is not None and (out / "pretrain.json").is_file():
        summary["pretrain"] = json.loads((out / "pretrain.json").read_text())
    if config.pretrain is not None and config.pretrain.eval_episodes or config.init_model is not None:
        summary["selection"] = select_model(config, out, summary.get("pretrain"))
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    venv.close()
    eval_env.close()
    try:
        plot_learning_curve(out)
    except ValueError:
        pass  # too short a run for an evaluation point
    return out


def _random_state() -> tuple[Any, Any, Any]:
    """The global random generators' states (Python's, numpy's, torch's): what SB3 draws from."""
    import random

    import numpy as np
    import torch

    return random.getstate(), np.random.get_state(), torch.get_rng_state()


def _set_random_state(state: tuple[Any, Any, Any]) -> None:
    import random

    import numpy as np
    import torch

    random.setstate(state[0])
    np.random.set_state(state[1])
    torch.set_rng_state(state[2])


def build_model(config: TrainConfig, venv: Any, **kwargs: Any) -> Any:
    """A fresh MaskablePPO model of ``config``'s policy and hyperparameters on ``venv`` (``kwargs``: more
    arguments to ``MaskablePPO``)."""
    import torch
    from sb3_contrib import MaskablePPO

    from solitaire_env.agents.move_scorer import MoveScorerPolicy
    from solitaire_env.agents.policies import CardCodesPolicy

    policy_kwargs = dict(config.policy_kwargs)
    if "features_dim" in policy_kwargs:
        policy_kwargs["features_extractor_kwargs"] = {"features_dim": policy_kwargs.pop("features_dim")}
    if "activation_fn" in policy_kwargs:
        activations = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}
        policy_kwargs["activation_fn"] = activations[policy_kwargs["activation_fn"]]
    policy = {"CardCodesPolicy": CardCodesPolicy, "MoveScorerPolicy": MoveScorerPolicy}.get(config.policy,
                                                                                          config.policy)
    kwargs = {"device": "cpu", **kwargs}  # the CPU unless the caller says (benchmarks/jax_speed.py: cuda)
    return MaskablePPO(policy, venv, seed=config.seed, policy_kwargs=policy_kwargs, **config.hyperparams, **kwargs)


def check_init_model(config: TrainConfig) -> None:
    """``ConfigError`` unless ``config.init_model`` holds a policy of the config's class with the same
    parameter shapes (so its weights can start the run)."""
    from stable_baselines3.common.save_util import load_from_zip_file

    from solitaire_env.agents.ppo import legacy_class_paths
    from solitaire_env.envs.sb3 import make_sb3_vec_env

    where = f"init_model {config.init_model}"
    try:
        with legacy_class_paths():
            data, params, _ = load_from_zip_file(config.init_model, device="cpu")
    except Exception as e:  # not a zip, or not a saved SB3 model
        raise ConfigError(f"{where}: not a saved model ({type(e).__name__}: {e})") from None
    saved_class = getattr((data or {}).get("policy_class"), "__name__", None)
    if saved_class != config.policy:
        raise ConfigError(f"{where}: holds a {saved_class} policy, the config trains {config.policy}")
    venv = make_sb3_vec_env(config.env_id, n_envs=1, monitor=False, **config.env_kwargs)
    try:
        fresh = build_model(config, venv).policy.state_dict()
    finally:
        venv.close()
    saved = params.get("policy", {})
    differ = sorted(k for k in set(fresh) | set(saved)
                    if k not in saved or k not in fresh or tuple(saved[k].shape) != tuple(fresh[k].shape))
    if differ:
        raise ConfigError(f"{where}: its policy's parameters do not fit the config's policy_kwargs and env "
                          f"({len(differ)} differ, e.g. {differ[0]})")


def fixed_deals_eval_callback(eval_env: Any, **kwargs: Any) -> Any:
    """sb3-contrib's ``MaskableEvalCallback`` that plays the same deals every round.

    ``eval_env`` has an ordered deal set (its one sub-env walks through it); before each round the
    env is seeded with 0, which rewinds it to the set's first deal, so every round plays deals 0 ..
    ``n_eval_episodes - 1`` of the set and ``best_model.zip`` compares checkpoints on the same deals.
    """
    import numpy as np
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback

    class FixedDealsEvalCallback(MaskableEvalCallback):
        def _on_step(self) -> bool:
            if self.eval_freq > 0 and self.n_calls % self.eval_freq == 0:
                self.eval_env.seed(0)  # used by the reset that starts the round
            return super()._on_step()

        def restore(self, out: Path, timesteps: int) -> None:
            """Take up the log of a run resumed at ``timesteps``: the rounds up to there, and their best."""
            log = out / "evaluations.npz"
            if not log.is_file():
                return
            data = np.load(log)
            keep = data["timesteps"] <= timesteps
            self.evaluations_timesteps = data["timesteps"][keep].tolist()
            self.evaluations_results = data["results"][keep].tolist()
            self.evaluations_length = data["ep_lengths"][keep].tolist()
            means = data["results"].mean(axis=1)
            if keep.any() and keep[int(np.argmax(means))]:
                self.best_mean_reward = float(means[keep].max())
            else:  # best_model.zip came from a round that is replayed now: choose again
                (out / "best_model.zip").unlink(missing_ok=True)

    return FixedDealsEvalCallback(eval_env, **kwargs)


__all__ = ["build_model", "check_init_model", "fixed_deals_eval_callback", "train_sb3"]
