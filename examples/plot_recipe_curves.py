"""The validation curves of the learned-policy recipes (docs/baselines.md): the validation win rate after each
cloning epoch or pretraining round of each game's run, beside the heuristic on the same deals.

    python examples/plot_recipe_curves.py runs/ablations/rainbow_heuristic_teacher runs/rank_and_file runs/number_ten \\
        --out docs/img/recipe_curves.png

(the run directories of configs/ablations/rainbow_heuristic_teacher.yaml, configs/rank_and_file.yaml and
configs/number_ten.yaml). Reads each run's ``pretrain.json`` and ``config.yaml``; plays the heuristic on the
run's validation deals (``eval.seed`` .., ``pretrain.eval_episodes`` of them) for the reference line.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="run directories of solitaire-env train")
    parser.add_argument("--out", default="recipe_curves.png")
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from solitaire_env.tools import imitation

    fig, axes = plt.subplots(1, len(args.runs), figsize=(4.2 * len(args.runs), 3.4), dpi=110, squeeze=False)
    for ax, run in zip(axes[0], args.runs, strict=True):
        run = Path(run)
        config = yaml.safe_load((run / "config.yaml").read_text())
        rounds = json.loads((run / "pretrain.json").read_text())["rounds"]
        pre = config["pretrain"]
        deals = range(config["eval"]["seed"], config["eval"]["seed"] + pre["eval_episodes"])
        xs, ys, labels = [], [], []
        fitted = 0
        for r in rounds:
            per_epoch = r.get("epoch_validation_win_rates")
            if per_epoch:
                for e, rate in enumerate(per_epoch):
                    xs.append(fitted + (e + 1) * r["examples_total"])
                    ys.append(rate)
                fitted += len(per_epoch) * r["examples_total"]
            else:
                fitted += pre["epochs"] * r["examples_total"]
                xs.append(fitted)
                ys.append(r["validation"]["win_rate"])
            labels.append(xs[-1])
        teacher = imitation.play(config["env_id"], deals, config["env_kwargs"], n_envs=32, teacher="heuristic",
                                 record=False)
        ax.plot(xs, ys, marker="o", label="MoveScorerPolicy, greedy")
        ax.axhline(teacher.stats["win_rate"], color="grey", linestyle="--", label="heuristic")
        ax.set_title(f"{config['env_id']}: deals {deals.start}-{deals[-1]}", fontsize=9)
        ax.set_xlabel("examples fitted (epochs x examples)")
        ax.set_ylabel("validation win rate")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
