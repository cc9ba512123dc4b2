"""A Ray Tune sweep over a training config's hyperparameters, scored by the win rate on validation deals.

Each trial trains MaskablePPO as the config says, with its own learning rate, entropy coefficient
and reveal bonus drawn from the search space below, then plays its ``best_model.zip`` (else its
final model) greedily on validation deals and reports the win rate (with its 95% Wilson interval)
and the mean foundation cards. The scoring deals are validation deals the run's own checkpoint choice
did not see (they start after the config's ``eval`` deals), and never test deals: test figures are
for ``solitaire-env evaluate`` once the sweep has chosen.

On one machine, a tiny budget (a minute or two on 2 cores; needs ``pip install -e '.[train,ray]'``)::

    python examples/tune_sweep.py configs/quick.yaml --samples 2 --timesteps 2048 --eval-episodes 4

A real sweep, on a Ray cluster (``ray start --head`` on one machine, ``ray start --address HEAD:6379``
on the others, the project installed on each; then, on the head)::

    python examples/tune_sweep.py configs/ablations/rainbow_ppo.yaml --address auto --samples 32 \\
        --eval-episodes 500 \\
        --storage /shared/tune          # a folder every machine sees, or s3://bucket/tune

Each trial takes one CPU (one torch thread, the batched env in the same process), so a cluster of N
CPUs runs N trials at a time. Tune keeps each trial's run directory (config, checkpoints, TensorBoard
logs) under ``STORAGE/NAME/``; the script prints every trial's figures and the best trial's
hyperparameters, and writes them to ``STORAGE/NAME/sweep.json``.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
from pathlib import Path
from typing import Any

import yaml


def search_space(tune: Any) -> dict[str, Any]:
    """What a trial draws: PPO's learning rate and entropy coefficient, and the env's reveal bonus."""
    return {
        "learning_rate": tune.loguniform(1e-4, 1e-3),
        "ent_coef": tune.loguniform(1e-3, 5e-2),
        "reveal_bonus": tune.choice([0.0, 0.005, 0.01, 0.02]),
    }


def trial_config(base: dict, params: dict, timesteps: int | None, output_dir: str) -> dict:
    """The base config (as read from YAML) with one trial's hyperparameters."""
    raw = copy.deepcopy(base)
    raw.setdefault("hyperparams", {}).update(learning_rate=params["learning_rate"], ent_coef=params["ent_coef"])
    raw.setdefault("env_kwargs", {})["reveal_bonus"] = params["reveal_bonus"]
    if timesteps is not None:
        raw["total_timesteps"] = timesteps
    raw["output_dir"] = output_dir
    return raw


def run_trial(params: dict, base: dict, timesteps: int | None, eval_episodes: int) -> None:
    """One trial, inside a Ray worker: train, then play the run's model on validation deals and report."""
    from ray import tune

    from solitaire_env.agents import make_agent
    from solitaire_env.engine.deals import VALIDATION
    from solitaire_env.tools.evaluation import evaluate
    from solitaire_env.tools.training import parse_config, train

    run_dir = Path(tune.get_context().get_trial_dir()) / "run"
    config = parse_config(trial_config(base, params, timesteps, str(run_dir)), where="sweep")
    # Validation deals after the ones that chose best_model.zip: a fair score for the checkpoint.
    first = config.eval.seed + config.eval.episodes
    if first + eval_episodes > VALIDATION.stop:
        raise ValueError(f"{eval_episodes} scoring deals from {first} leave the validation split")
    train(config, output_dir=run_dir, progress=False)
    agent = make_agent(str(run_dir), config.env_id)  # best_model.zip, else final_model.zip
    result = evaluate(config.env_id, {"ppo": agent}, eval_episodes, seed=first, env_kwargs=config.env_kwargs)
    s = result.summaries["ppo"]
    tune.report({"win_rate": s.win_rate, "win_rate_ci95_low": s.win_rate_ci95[0],
                 "win_rate_ci95_high": s.win_rate_ci95[1], "mean_foundation_cards": s.mean_foundation_cards,
                 "validation_deals": f"{first}-{first + eval_episodes - 1}", "model": agent.checkpoint})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", help="training config, e.g. configs/quick.yaml")
    parser.add_argument("--samples", type=int, default=8, help="trials (default 8)")
    parser.add_argument("--timesteps", type=int, help="each trial's training steps (default: the config's)")
    parser.add_argument("--eval-episodes", type=int, default=200, help="validation deals per trial (default 200)")
    parser.add_argument("--address", help="Ray cluster to run on ('auto': the running one; default: start one here)")
    parser.add_argument("--storage", default="runs/tune", help="where Tune keeps the trials (default runs/tune)")
    parser.add_argument("--name", default="sweep", help="the sweep's folder under --storage (default sweep)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the draw of hyperparameters (default 0)")
    args = parser.parse_args(argv)

    try:
        import ray
        from ray import tune
        from ray.tune.search.basic_variant import BasicVariantGenerator
    except ImportError:
        parser.exit(2, "needs Ray Tune: pip install 'solitaire-env[ray]'\n")
    from solitaire_env.tools.training import ConfigError, load_config

    try:
        load_config(args.config)  # a bad config is one line here, not an error in every trial
    except ConfigError as e:
        parser.exit(2, f"{e}\n")
    base = yaml.safe_load(Path(args.config).read_text())
    # Tune wants an absolute path or a URI (s3://...) for its storage.
    storage = args.storage if "://" in args.storage else os.path.abspath(args.storage)
    ray.init(address=args.address, include_dashboard=False)
    trainable = tune.with_resources(
        tune.with_parameters(run_trial, base=base, timesteps=args.timesteps, eval_episodes=args.eval_episodes),
        {"cpu": 1})
    tuner = tune.Tuner(
        trainable,
        param_space=search_space(tune),
        tune_config=tune.TuneConfig(metric="win_rate", mode="max", num_samples=args.samples,
                                    search_alg=BasicVariantGenerator(random_state=args.seed)),
        run_config=tune.RunConfig(name=args.name, storage_path=storage, verbose=0),
    )
    results = tuner.fit()

    rows = []
    for r in results:
        if r.error is not None:
            rows.append({"params": r.config, "error": str(r.error).strip().splitlines()[0]})
        else:
            rows.append({"params": r.config, **{k: r.metrics[k] for k in (
                "win_rate", "win_rate_ci95_low", "win_rate_ci95_high", "mean_foundation_cards", "validation_deals",
                "model")}})
    rows.sort(key=lambda row: -row.get("win_rate", -1.0))
    print("| learning_rate | ent_coef | reveal_bonus | win rate (validation) | 95% CI | foundation cards |")
    print("|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        p = row["params"]
        head = f"| {p['learning_rate']:.2e} | {p['ent_coef']:.2e} | {p['reveal_bonus']:g} |"
        if "error" in row:
            print(f"{head} failed: {row['error']} | | |")
        else:
            print(f"{head} {100 * row['win_rate']:.1f}% | {100 * row['win_rate_ci95_low']:.1f}% - "
                  f"{100 * row['win_rate_ci95_high']:.1f}% | {row['mean_foundation_cards']:.2f} |")
    ok = [row for row in rows if "error" not in row]
    if ok:
        print(f"best: {json.dumps(ok[0]['params'])} on validation deals {ok[0]['validation_deals']}")
    out = Path(storage) / args.name / "sweep.json" if "://" not in storage else None
    if out is not None:
        out.write_text(json.dumps({"config": args.config, "trials": rows}, indent=1) + "\n")
        print(f"wrote {out}")
    return 0 if ok and len(ok) == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
