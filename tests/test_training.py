"""Training configs (validation, round trip) and a tiny end-to-end MaskablePPO run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("sb3_contrib")
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

from solitaire_env.tools.training import (  # noqa: E402
    ConfigError,
    RunDirError,
    load_config,
    parse_config,
    plot_learning_curve,
    save_config,
    train,
)

CONFIGS = sorted(Path(__file__).resolve().parent.parent.joinpath("configs").glob("**/*.yaml"))  # ablations too


def test_there_is_a_config_per_game():
    env_ids = {load_config(p).env_id for p in CONFIGS}
    assert {"RankAndFile-v0", "NumberTen-v0", "Rainbow-v0", "FreeCell-v0", "Klondike-v0"} <= env_ids


# Every shipped file resolving, validating and saving resolved: tests/test_config.py.


BASE = {"env_id": "Rainbow-v0", "total_timesteps": 1000}
# A small MoveScorerPolicy run with no PPO phase, for the pretraining tests to add their pretrain section to.
SMALL_SCORER_RUN = {
    "env_id": "Rainbow-v0", "total_timesteps": 0, "n_envs": 4, "seed": 0, "policy": "MoveScorerPolicy",
    "policy_kwargs": {"dim": 16, "hidden": 32},
    "env_kwargs": {"obs_mode": "piles", "action_features": True, "no_revisit": True},
    "eval": {"episodes": 4},
}


@pytest.mark.parametrize("change, match", [
    ({"learning_rat": 0.1}, "unknown key.*learning_rat"),
    ({"hyperparams": {"learning_rat": 0.1}}, "unknown hyperparameter 'learning_rat'"),
    ({"hyperparams": {"n_steps": "many"}}, "hyperparams.n_steps must be a number"),
    ({"hyperparams": {"batch_size": 0}}, "batch_size must be a positive integer"),
    ({"n_envs": "16"}, "'n_envs' must be int"),
    ({"n_envs": True}, "'n_envs' must be int"),
    ({"total_timesteps": -5}, "must be positive"),
    ({"total_timesteps": 0}, "0 only with a pretrain section"),
    ({"env_id": "Spider-v0"}, "env_id 'Spider-v0' is not one of"),
    ({"policy": "CnnPolicy"}, "policy must be one of"),
    ({"env_kwargs": {"reveal_bonnus": 1.0}}, "unknown env_kwargs reveal_bonnus"),
    ({"policy_kwargs": {"net_arch": [64, -1]}}, "net_arch must be a list of positive"),
    ({"eval": {"episodes": 0}}, "eval.episodes' must be positive"),
    ({"eval": {"every": 10}}, "unknown eval key"),
    ({"eval": {"deterministic": "no"}}, "'eval.deterministic' must be bool"),
    ({"pretrain": {"epoch": 3}}, "unknown pretrain key.*epoch"),
    ({"pretrain": {"episodes": 2.5}}, "'pretrain.episodes' must be int"),
    ({"pretrain": {"value": 1}}, "'pretrain.value' must be bool"),
    ({"pretrain": {"learning_rate": 0}}, "'pretrain.learning_rate' must be positive"),
    ({"pretrain": {"agent": "random"}}, "pretrain.agent must be one of heuristic, search, plan"),
    ({"pretrain": {"agent": "search:8by1000"}}, "pretrain.agent: bad search agent 'search:8by1000'"),
    ({"pretrain": {"agent": "plan:8x1000x"}}, "pretrain.agent: bad plan agent 'plan:8x1000x'"),
    ({"pretrain": {"agent": "search:4x300", "accept_student": True}}, "pretrain.accept_student needs a teacher that "
     "judges the student's move .FreeCell's planner, plan:1xN.; 'search:4x300' in Rainbow-v0 does not"),
    ({"pretrain": {"accept_student": True}}, "pretrain.accept_student needs a teacher"),
    ({"pretrain": {"seed": 500}}, "pretrain deals 500-1499 .* must be train deals"),
    ({"pretrain": {"seed": 19_990, "episodes": 20}}, "must be train deals"),
    ({"env_kwargs": {"reveal_bonus": "abc"}}, "env_kwargs: reveal_bonus must be a finite number"),
    ({"env_kwargs": {"obs_mode": "foo"}}, "env_kwargs: obs_mode must be one of"),
    ({"env_kwargs": {"max_episode_steps": 0}}, "env_kwargs: max_episode_steps must be a positive integer"),
    ({"env_kwargs": {"deals": "train"}}, "top-level key 'deals'"),
    ({"policy": "CardCodesPolicy", "env_kwargs": {"obs_mode": "onehot"}},
     "policy CardCodesPolicy reads obs_mode codes.*use MlpPolicy"),
    ({"policy": "MultiInputPolicy"}, "policy MultiInputPolicy reads obs_mode dict"),
    ({"env_kwargs": {"obs_mode": "dict"}}, "policy MlpPolicy reads obs_mode codes or onehot.*MultiInputPolicy"),
    ({"deals": "test"}, "'deals' must be 'train' or a range A:B inside the train split"),
    ({"deals": "5:10"}, "inside the train split"),
    ({"deals": "all"}, "'deals': deals must be"),
    ({"eval": {"seed": 0}}, "evaluation deals 0-49 .* must be validation deals"),
    ({"eval": {"seed": 19_990, "episodes": 20}}, "must be validation deals"),
    ({"pretrain": [1, 2]}, "'pretrain' must be dict"),
    ({"pretrain": {"rounds": 0}}, "'pretrain.rounds' must be positive"),
    ({"pretrain": {"beta": 1.5}}, "'pretrain.beta' must be between 0 and 1"),
    ({"pretrain": {"eval_episodes": 60}}, "'pretrain.eval_episodes' .60. must be at most eval.episodes .50."),
    ({"pretrain": {"seed": 2**62 - 1500, "episodes": 1000, "rounds": 2}}, "must be train deals"),
    ({"policy": "MoveScorerPolicy", "env_kwargs": {"obs_mode": "piles"}}, "set env_kwargs.action_features: true"),
    ({"policy": "MoveScorerPolicy", "env_kwargs": {"action_features": True}}, "reads obs_mode piles"),
    ({"policy_kwargs": {"dim": 32}}, "policy_kwargs.dim belongs to MoveScorerPolicy only"),
    ({"policy": "MoveScorerPolicy", "env_kwargs": {"obs_mode": "piles", "action_features": True},
      "policy_kwargs": {"hidden": 0}}, "policy_kwargs.hidden must be a positive integer"),
    ({"policy_kwargs": {"draw_card": True}}, "policy_kwargs.draw_card belongs to MoveScorerPolicy only"),
    ({"policy": "MoveScorerPolicy", "env_kwargs": {"obs_mode": "piles", "action_features": True},
      "policy_kwargs": {"draw_card": 1}}, "policy_kwargs.draw_card must be true or false, got 1"),
    ({"update_threads": 0}, "'update_threads' must be positive, got 0"),
    ({"update_threads": "2"}, "'update_threads' must be int, got str"),
])
def test_bad_configs_fail_clearly(change, match):
    with pytest.raises(ConfigError, match=match):
        parse_config({**BASE, **change})


@pytest.mark.parametrize("change", [{"policy": "MultiInputPolicy", "env_kwargs": {"obs_mode": "dict"}},
                                    {"env_kwargs": {"obs_mode": "onehot"}}, {"deals": "30000:40000"},
                                    {"eval": {"seed": 19_950, "episodes": 50}},
                                    {"pretrain": {"agent": "search:4x300"}}, {"update_threads": 2},
                                    {"update_threads": None}])
def test_good_configs_pass(change):
    parse_config({**BASE, **change})


def test_missing_required_key():
    with pytest.raises(ConfigError, match="missing required key 'total_timesteps'"):
        parse_config({"env_id": "Rainbow-v0"})


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("env_id: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    bad.write_text("- just\n- a list\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(bad)


@pytest.mark.parametrize("policy", ["CardCodesPolicy", "MlpPolicy"])
def test_tiny_training_run_end_to_end(tmp_path, policy):
    config = parse_config({
        "env_id": "Rainbow-v0", "total_timesteps": 512, "n_envs": 4, "seed": 3, "policy": policy,
        "policy_kwargs": {"net_arch": [16]}, "hyperparams": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
        "env_kwargs": {"max_episode_steps": 200}, "eval": {"freq": 256, "episodes": 2}, "checkpoint_freq": 256,
    })
    out = train(config, output_dir=tmp_path / "run", progress=False)
    for name in ("final_model.zip", "best_model.zip", "config.yaml", "summary.json", "evaluations.npz",
                 "learning_curve.png"):
        assert (out / name).is_file(), name
    assert list((out / "checkpoints").glob("*.zip"))
    assert list((out / "tb").rglob("events.out.tfevents*"))
    assert yaml.safe_load((out / "config.yaml").read_text())["policy"] == policy
    model = MaskablePPO.load(out / "final_model.zip", device="cpu")
    assert model.num_timesteps >= 512
    # The training updated the policy: the first checkpoint (after 256 steps) differs from the final model.
    checkpoints = sorted((out / "checkpoints").glob("*.zip"), key=lambda p: int(p.stem.split("_")[1]))  # ppo_N_steps
    first = MaskablePPO.load(checkpoints[0], device="cpu")
    assert first.num_timesteps < model.num_timesteps
    final_weights = model.policy.state_dict()
    assert any(not torch.equal(w, final_weights[k]) for k, w in first.policy.state_dict().items())
    plot_learning_curve(out, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").stat().st_size > 1000


def test_pretrain_config_round_trips(tmp_path):
    config = parse_config({**BASE, "pretrain": {"episodes": 10, "learning_rate": 0.002},
                           "eval": {"deterministic": False}})
    assert config.pretrain.episodes == 10 and config.pretrain.agent == "heuristic" and config.pretrain.value
    assert config.eval.deterministic is False
    save_config(config, tmp_path / "c.yaml")
    assert load_config(tmp_path / "c.yaml") == config
    assert parse_config(BASE).pretrain is None
    save_config(parse_config(BASE), tmp_path / "plain.yaml")
    assert "pretrain" not in yaml.safe_load((tmp_path / "plain.yaml").read_text())


def test_warm_start_from_the_heuristic(tmp_path):
    """A few heuristic games are enough for the policy to pick the heuristic's move far above chance."""
    config = parse_config({
        "env_id": "NumberTen-v0", "total_timesteps": 256, "n_envs": 4, "seed": 1, "policy": "CardCodesPolicy",
        "policy_kwargs": {"net_arch": [64], "features_dim": 64},
        "hyperparams": {"n_steps": 64, "batch_size": 64, "n_epochs": 1, "learning_rate": 1e-5},
        "env_kwargs": {"max_episode_steps": 150}, "eval": {"freq": 10_000, "episodes": 1, "deterministic": False},
        "pretrain": {"episodes": 4, "seed": 2_000_000, "epochs": 10, "batch_size": 128},
    })
    out = train(config, output_dir=tmp_path / "run", progress=False)
    stats = json.loads((out / "summary.json").read_text())["pretrain"]
    assert stats == json.loads((out / "pretrain.json").read_text())
    assert stats["episodes"] == 4 and stats["examples"] > 300
    assert stats["agreement"] > max(0.5, 3 * stats["chance_agreement"], stats["agreement_before"] + 0.2), stats
    assert stats["value_mse"] < 0.05
    assert (out / "pretrained_model.zip").is_file() and (out / "final_model.zip").is_file()

    # the saved warm start plays like the heuristic on a teacher deal: its greedy move agrees far above chance
    import gymnasium as gym

    from solitaire_env.agents import make_agent

    model = MaskablePPO.load(out / "pretrained_model.zip", device="cpu")
    heuristic = make_agent("heuristic", "NumberTen-v0")
    env = gym.make("NumberTen-v0", max_episode_steps=150)
    obs, info = env.reset(seed=2_000_000)
    agree = choices = 0
    done = False
    while not done and not heuristic.stuck:
        action = heuristic.act(obs, info)
        mask = np.asarray(info["action_mask"], dtype=bool)
        if mask.sum() > 1:
            choices += 1
            agree += int(model.predict(obs, action_masks=mask, deterministic=True)[0]) == action
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    assert choices > 50 and agree / choices > 0.5



def test_card_codes_policy_matches_one_hot_linear():
    """CardEmbedding is the first linear layer over the one-hot observation; with skip_empty (the
    default) empty entries add nothing, and any one-hot layer is matched by moving each entry's code-0
    row into the bias (the same function class); a model saved before skip_empty loads with it off."""
    import gymnasium as gym
    import torch

    from solitaire_env.agents.policies import CardEmbedding

    env = gym.make("NumberTen-v0")
    obs = np.stack([env.reset(seed=seed)[0] for seed in range(3)])
    nvec = env.observation_space.nvec
    starts = np.concatenate(([0], np.cumsum(nvec)[:-1]))
    onehot = np.zeros((len(obs), int(nvec.sum())), dtype=np.float32)
    for i, row in enumerate(obs):
        onehot[i, starts + row] = 1
    space = gym.spaces.Box(0, 1, shape=obs.shape[1:])
    full = CardEmbedding(space, nvec.tolist(), features_dim=8, skip_empty=False)
    skip = CardEmbedding(space, nvec.tolist(), features_dim=8)
    assert bool(skip.skip_empty) and (obs == 0).mean() > 0.5  # most entries are empty slots
    x = torch.as_tensor(obs, dtype=torch.float32)
    with torch.no_grad():
        torch.nn.init.normal_(full.bias)
        weight = full.embed.weight
        torch.testing.assert_close(full(x), torch.relu(torch.as_tensor(onehot) @ weight + full.bias))
        # the reparametrization: each entry's code-0 row moves into the bias
        sizes = torch.as_tensor(nvec, dtype=torch.long)
        skip.embed.weight.copy_(weight - torch.repeat_interleave(weight[starts], sizes, dim=0))
        skip.bias.copy_(full.bias + weight[starts].sum(dim=0))
        torch.testing.assert_close(skip(x), full(x))
        assert not torch.allclose(skip(x), CardEmbedding(space, nvec.tolist(), features_dim=8)(x))
    old = {k: v for k, v in full.state_dict().items() if k != "skip_empty"}  # as saved before the option
    loaded = CardEmbedding(space, nvec.tolist(), features_dim=8)
    loaded.load_state_dict(old)
    assert not bool(loaded.skip_empty)
    with torch.no_grad():
        torch.testing.assert_close(loaded(x), full(x))


TINY = {
    "env_id": "Rainbow-v0", "total_timesteps": 512, "n_envs": 4, "seed": 3, "policy": "CardCodesPolicy",
    "policy_kwargs": {"net_arch": [16], "features_dim": 16},
    "hyperparams": {"n_steps": 32, "batch_size": 64, "n_epochs": 1},
    "env_kwargs": {"max_episode_steps": 100}, "eval": {"freq": 128, "episodes": 3}, "checkpoint_freq": 256,
}


def test_every_evaluation_round_plays_the_same_validation_deals(tmp_path, monkeypatch):
    from solitaire_env.envs.vector import SolitaireVectorEnv

    dealt: dict[str, list[int]] = {"eval": [], "train": []}
    deal = SolitaireVectorEnv._deal

    def spy(self, i, seed):
        deal(self, i, seed)
        dealt["eval" if self.num_envs == 1 else "train"].append(int(self.deal_seeds[i]))

    monkeypatch.setattr(SolitaireVectorEnv, "_deal", spy)
    out = train(parse_config(TINY), output_dir=tmp_path / "run", progress=False)
    rounds = len(np.load(out / "evaluations.npz")["timesteps"])
    assert rounds >= 3
    # Each round: the reset deals 10000, each episode's end the next; after the third the set wraps
    # around to 10000, which is dealt but never played.
    assert dealt["eval"] == [10_000, 10_001, 10_002, 10_000] * rounds
    assert dealt["train"] and all(d >= 20_000 for d in dealt["train"])  # train split only
    summary = json.loads((out / "summary.json").read_text())
    assert summary["deals"]["validation"] == "validation deals 10000-10002, every round"
    assert summary["deals"]["train"].startswith("train split")


def test_a_directory_holding_a_run_is_refused_then_resumed_or_overwritten(tmp_path):
    config = parse_config(TINY)
    out = train(config, output_dir=tmp_path / "run", progress=False)
    final = (out / "final_model.zip").read_bytes()
    with pytest.raises(RunDirError, match="already holds a training run.*--resume.*--overwrite"):
        train(config, output_dir=out, progress=False)
    assert (out / "final_model.zip").read_bytes() == final  # nothing touched
    other = parse_config({**TINY, "seed": 4})
    with pytest.raises(RunDirError, match="another config \\(seed differ"):
        train(other, output_dir=out, progress=False, resume=True)

    # As if interrupted after the checkpoint at 256 steps: later evaluations are dropped and replayed.
    (out / "checkpoints" / "ppo_512_steps.zip").unlink()
    config.total_timesteps = 768
    train(config, output_dir=out, progress=False, resume=True)
    log = np.load(out / "evaluations.npz")
    steps = log["timesteps"].tolist()
    assert steps == sorted(set(steps)) and steps[-1] == 768 and 256 in steps
    summary = json.loads((out / "summary.json").read_text())
    assert summary["resumed_from_timesteps"] == 256 and summary["timesteps"] == 768
    assert MaskablePPO.load(out / "final_model.zip", device="cpu").num_timesteps == 768

    train(config, output_dir=out, progress=False, overwrite=True)
    assert "resumed_from_timesteps" not in json.loads((out / "summary.json").read_text())
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["ppo_256_steps.zip", "ppo_512_steps.zip",
                                                                      "ppo_768_steps.zip"]


def test_train_cli_checks_everything_before_making_the_run_directory(tmp_path, capsys):
    from solitaire_env.tools.cli import main

    config = tmp_path / "c.yaml"
    for env_kwargs, message in (({"reveal_bonus": "abc"}, "reveal_bonus must be a finite number"),
                                ({"obs_mode": "onehot"}, "CardCodesPolicy reads obs_mode codes")):
        config.write_text(yaml.safe_dump({**TINY, "env_kwargs": env_kwargs, "output_dir": str(tmp_path / "run")}))
        with pytest.raises(SystemExit) as stop:
            main(["train", str(config), "--no-progress"])
        assert stop.value.code == 2 and message in capsys.readouterr().err
        assert not (tmp_path / "run").exists()
    run = tmp_path / "run"
    run.mkdir()
    (run / "final_model.zip").write_bytes(b"an earlier run")
    config.write_text(yaml.safe_dump({**TINY, "output_dir": str(run)}))
    with pytest.raises(SystemExit) as stop:
        main(["train", str(config), "--no-progress"])
    assert stop.value.code == 2 and "already holds a training run" in capsys.readouterr().err
    assert (run / "final_model.zip").read_bytes() == b"an earlier run"
    with pytest.raises(SystemExit):
        main(["train", str(config), "--resume", "--overwrite"])


def test_dagger_rounds_are_saved_and_a_cut_run_goes_on_after_the_last(tmp_path, capsys):
    """A MoveScorerPolicy recipe: cloning, one DAgger round, each scored on validation deals; cut after
    round 0, --resume plays round 1 only, and the run selects its policy by validation win rate."""
    raw = {**SMALL_SCORER_RUN, "pretrain": {"episodes": 6, "seed": 2_000_000, "epochs": 1, "batch_size": 128,
                                            "rounds": 2, "eval_episodes": 4}}
    config = parse_config(raw)
    out = train(config, output_dir=tmp_path / "run", progress=False)
    stats = json.loads((out / "summary.json").read_text())
    rounds = stats["pretrain"]["rounds"]
    assert [r["round"] for r in rounds] == [0, 1] and rounds[1]["player"].startswith("student")
    assert rounds[1]["examples_total"] == rounds[0]["examples"] + rounds[1]["examples"]
    assert all(r["validation"]["deals"] == "validation deals 10000-10003" for r in rounds)
    assert stats["deals"]["pretrain"] == "train deals 2000000-2000011"
    assert stats["selection"]["selected"] in stats["selection"]["win_rates"]
    assert (out / "selected_model.zip").is_file()
    first = (out / "pretrain" / "round_0.zip").read_bytes()
    for name in ("round_1.zip", "round_1.npz"):  # as if cut short during round 1
        (out / "pretrain" / name).unlink()
    capsys.readouterr()
    train(config, output_dir=out, progress=False, resume=True)
    assert "resuming after round 1 of 2" in capsys.readouterr().out
    assert (out / "pretrain" / "round_0.zip").read_bytes() == first  # round 0 was not played again
    again = json.loads((out / "summary.json").read_text())["pretrain"]["rounds"]
    assert again[0] == rounds[0] and again[1]["examples"] == rounds[1]["examples"]  # the same games


@pytest.mark.parametrize("lr_decay", [False, True])
def test_select_epoch_scores_every_epoch_and_keeps_the_best(tmp_path, monkeypatch, lr_decay):
    """select_epoch: each epoch is scored on the validation deals and the best one's weights are kept, at a
    constant rate (a fresh Adam an epoch) and with lr_decay (one Adam, the rate falling to zero)."""
    from solitaire_env.tools import pretraining

    real, scripted, scored = pretraining.validation_games, [0.25, 0.75, 0.5], []

    def fake(config, policy, episodes):  # the epochs' scores are scripted; the weights scored are noted
        games = real(config, policy, episodes)
        if len(scored) < len(scripted):
            scored.append(torch.nn.utils.parameters_to_vector(policy.parameters()).detach().clone())
            games.stats["win_rate"] = scripted[len(scored) - 1]
        return games

    monkeypatch.setattr(pretraining, "validation_games", fake)
    raw = {**SMALL_SCORER_RUN, "pretrain": {"episodes": 6, "seed": 2_000_000, "epochs": 3, "batch_size": 64,
                                            "eval_episodes": 4, "select_epoch": True, "lr_decay": lr_decay}}
    out = train(parse_config(raw), output_dir=tmp_path / "run", progress=False)
    (only,) = json.loads((out / "pretrain.json").read_text())["rounds"]
    assert only["epoch_validation_win_rates"] == scripted and only["validation"]["win_rate"] == 0.75
    kept = torch.nn.utils.parameters_to_vector(
        MaskablePPO.load(out / "pretrained_model.zip", device="cpu").policy.parameters()).detach()
    assert torch.equal(kept, scored[1]) and not torch.equal(kept, scored[2])  # the second epoch's weights


def test_a_run_starts_from_init_model_and_selects_against_it(tmp_path, monkeypatch):
    """init_model: the run's first weights are the saved policy's; a policy of another class or size is
    refused before the run directory exists; the selection scores the starting policy too."""
    from solitaire_env.envs.sb3 import make_sb3_vec_env
    from solitaire_env.tools.training import build_model

    raw = {
        "env_id": "Rainbow-v0", "total_timesteps": 128, "n_envs": 4, "seed": 0, "policy": "MoveScorerPolicy",
        "policy_kwargs": {"dim": 16, "hidden": 32},
        "hyperparams": {"n_steps": 32, "batch_size": 64, "n_epochs": 1},
        "env_kwargs": {"obs_mode": "piles", "action_features": True, "no_revisit": True},
        "eval": {"episodes": 2, "freq": 10_000},
    }
    start = parse_config({**raw, "seed": 5})
    venv = make_sb3_vec_env("Rainbow-v0", n_envs=1, monitor=False, **raw["env_kwargs"])
    build_model(start, venv).save(tmp_path / "start.zip")
    config = parse_config({**raw, "init_model": str(tmp_path / "start.zip")})
    out = train(config, output_dir=tmp_path / "run", progress=False)
    saved = MaskablePPO.load(tmp_path / "start.zip", device="cpu").policy.state_dict()
    initial = MaskablePPO.load(out / "initial_model.zip", device="cpu").policy.state_dict()
    fresh = build_model(parse_config(raw), venv).policy.state_dict()  # seed 0, not the saved seed 5
    assert all(torch.equal(saved[k], initial[k]) for k in saved)
    assert not all(torch.equal(saved[k], fresh[k]) for k in saved)
    selection = json.loads((out / "summary.json").read_text())["selection"]
    assert set(selection["win_rates"]) >= {"initial_model.zip", "final_model.zip"}
    assert selection["deals"] == "validation deals 10000-10001"
    save_config(config, tmp_path / "again.yaml")
    assert load_config(tmp_path / "again.yaml") == config

    with pytest.raises(ConfigError, match="init_model .*no such file"):
        parse_config({**raw, "init_model": str(tmp_path / "missing.zip")})
    bigger = parse_config({**raw, "policy_kwargs": {"dim": 32, "hidden": 32},
                           "init_model": str(tmp_path / "start.zip")})
    with pytest.raises(ConfigError, match="do not fit the config's policy_kwargs"):
        train(bigger, output_dir=tmp_path / "bigger", progress=False)
    assert not (tmp_path / "bigger").exists()
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    with pytest.raises(ConfigError, match="not a saved model"):
        train(parse_config({**raw, "init_model": str(tmp_path / "junk.zip")}), output_dir=tmp_path / "junk",
              progress=False)
    codes = parse_config({"env_id": "Rainbow-v0", "total_timesteps": 128, "policy": "CardCodesPolicy",
                          "init_model": str(tmp_path / "start.zip")})
    with pytest.raises(ConfigError, match="holds a MoveScorerPolicy policy, the config trains CardCodesPolicy"):
        train(codes, output_dir=tmp_path / "codes", progress=False)
    venv.close()


@pytest.mark.parametrize("env_id, policy_name, env_kwargs, legal_min", [
    ("Rainbow-v0", "CardCodesPolicy", {}, None),
    ("NumberTen-v0", "MoveScorerPolicy", {"obs_mode": "piles", "action_features": True}, None),
    ("NumberTen-v0", "MoveScorerPolicy", {"obs_mode": "piles", "action_features": True}, 0),
])
def test_fast_forward_and_evaluate_actions_are_the_parents_bit_for_bit(env_id, policy_name, env_kwargs, legal_min,
                                                                        monkeypatch):
    """FastMaskablePolicy's forward and evaluate_actions give sb3-contrib's actions, values,
    log-probabilities, entropies and gradients exactly, masked or not, sampled or greedy, whichever
    way the masked normalization goes (``legal_min``: 0 puts these small batches on the
    ``_LegalLogSumExp`` path of large ones)."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy as Parent

    from solitaire_env.agents import policies
    from solitaire_env.agents.policies import FastMaskablePolicy
    from solitaire_env.envs.sb3 import make_sb3_vec_env
    from solitaire_env.tools.training import build_model, parse_config

    if legal_min is not None:
        monkeypatch.setattr(policies, "LEGAL_LOGSUMEXP_MIN", legal_min)

    config = parse_config({"env_id": env_id, "total_timesteps": 64, "n_envs": 16, "policy": policy_name,
                           "env_kwargs": env_kwargs, "hyperparams": {"n_steps": 8, "batch_size": 32}})
    venv = make_sb3_vec_env(env_id, n_envs=16, seed=0, **env_kwargs)
    policy = build_model(config, venv).policy
    assert isinstance(policy, FastMaskablePolicy)
    rng = np.random.default_rng(0)
    obs = venv.reset()
    for _ in range(rng.integers(5, 20)):  # positions a few moves into the games
        masks = np.stack(venv.env_method("action_masks"))
        obs = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))[0]
    masks = np.stack(venv.env_method("action_masks"))
    assert (masks.sum(1) < masks.shape[1]).all()  # the masks do remove moves
    x = policy.obs_to_tensor(obs)[0]
    for action_masks in (masks, None):
        for deterministic in (False, True):
            torch.manual_seed(7)
            want = Parent.forward(policy, x, deterministic, action_masks)
            torch.manual_seed(7)
            got = policy.forward(x, deterministic, action_masks)
            for a, b in zip(want, got, strict=True):
                assert torch.equal(a, b)
        actions = torch.as_tensor(rng.integers(0, masks.shape[1], len(masks)))
        if action_masks is not None:
            actions = torch.as_tensor([rng.choice(np.flatnonzero(m)) for m in masks])
        grads = []
        for method in (Parent.evaluate_actions, type(policy).evaluate_actions):
            policy.zero_grad()
            values, log_prob, entropy = out = method(policy, x, actions, action_masks)
            (log_prob.sum() + values.sum() + 0.01 * entropy.sum()).backward()
            grads.append(([t.detach().clone() for t in out],
                          [p.grad.clone() for p in policy.parameters() if p.grad is not None]))
        (want_out, want_grad), (got_out, got_grad) = grads
        assert len(want_grad) == len(got_grad) > 0
        for a, b in zip(want_out + want_grad, got_out + got_grad, strict=True):
            assert torch.equal(a, b)
    venv.close()


def test_legal_logsumexp_is_torchs_bit_for_bit_and_skips_nothing_it_needs():
    """The masked normalization's log-sum-exp equals torch's, value and gradient, on rows with few,
    many, all and no legal entries, and logits of any spread."""
    from solitaire_env.agents.policies import _LegalLogSumExp

    gen = torch.Generator().manual_seed(0)
    for rows, cols, scale, share in ((32, 243, 1.0, 0.05), (64, 29, 30.0, 0.5), (8, 7, 0.01, 1.0)):
        raw = torch.randn(rows, cols, generator=gen) * scale
        legal = torch.rand(rows, cols, generator=gen) < share
        legal[0] = False  # no legal entry: all count, as in torch's (every entry is -1e8)
        x = torch.where(legal, raw, torch.tensor(-1e8)).requires_grad_()
        weights = torch.randn(rows, 1, generator=gen)
        want = x.logsumexp(dim=-1, keepdim=True)
        (want * weights).sum().backward()
        want_grad, x.grad = x.grad.clone(), None
        got = _LegalLogSumExp.apply(x, legal | ~legal.any(dim=-1, keepdim=True))
        (got * weights).sum().backward()
        assert torch.equal(want, got) and torch.equal(want_grad, x.grad)
        assert torch.isfinite(got).all()


def test_update_threads_switches_torch_threads_around_the_update(monkeypatch):
    """The update runs on update_threads, the rollouts (and what follows training) on torch_threads."""
    from solitaire_env.agents.policies import UpdateThreads
    from solitaire_env.envs.sb3 import make_sb3_vec_env
    from solitaire_env.tools.training import build_model, parse_config

    config = parse_config({**TINY, "total_timesteps": 256, "update_threads": 2})
    venv = make_sb3_vec_env(config.env_id, n_envs=4, seed=0, max_episode_steps=100)
    model = build_model(config, venv)
    seen = {"train": set(), "rollout": set()}
    policy = model.policy  # forward: the rollouts' passes; evaluate_actions: the update's
    forward, evaluate = policy.forward, policy.evaluate_actions
    monkeypatch.setattr(policy, "forward",
                        lambda *a, **k: (seen["rollout"].add(torch.get_num_threads()), forward(*a, **k))[1])
    monkeypatch.setattr(policy, "evaluate_actions",
                        lambda *a, **k: (seen["train"].add(torch.get_num_threads()), evaluate(*a, **k))[1])
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        model.learn(256, callback=UpdateThreads(2, 1))
        assert seen == {"train": {2}, "rollout": {1}}
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ValueError, match="positive"):
        UpdateThreads(0)


def test_a_one_file_recipe_trains_exactly_as_its_two_halves(tmp_path):
    """pretrain + PPO in one config gives the same PPO phase, bit for bit, as a cloning-only run followed
    by a run from its selected_model.zip: the shipped policies made in two halves are the one-file recipe's."""
    raw = {
        "env_id": "Rainbow-v0", "total_timesteps": 256, "n_envs": 4, "seed": 0, "policy": "MoveScorerPolicy",
        "policy_kwargs": {"dim": 16, "hidden": 32},
        "hyperparams": {"n_steps": 32, "batch_size": 64, "n_epochs": 2, "learning_rate": 1e-3},
        "env_kwargs": {"obs_mode": "piles", "action_features": True, "no_revisit": True},
        "eval": {"episodes": 2, "freq": 10_000},
        "pretrain": {"episodes": 4, "seed": 2_000_000, "epochs": 1, "batch_size": 128, "eval_episodes": 2},
    }
    whole = train(parse_config(raw), output_dir=tmp_path / "whole", progress=False)
    clone = train(parse_config({**raw, "total_timesteps": 0}), output_dir=tmp_path / "clone", progress=False)
    second = {k: v for k, v in raw.items() if k != "pretrain"}
    tuned = train(parse_config({**second, "init_model": str(clone / "selected_model.zip")}),
                  output_dir=tmp_path / "tuned", progress=False)
    start = MaskablePPO.load(whole / "pretrained_model.zip", device="cpu").policy.state_dict()
    final = MaskablePPO.load(whole / "final_model.zip", device="cpu").policy.state_dict()
    halves = MaskablePPO.load(tuned / "final_model.zip", device="cpu").policy.state_dict()
    assert any(not torch.equal(start[k], final[k]) for k in start)  # PPO changed the policy
    assert all(torch.equal(final[k], halves[k]) for k in final)
