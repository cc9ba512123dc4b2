"""Configs that compose (solitaire_env/tools/config.py): the shipped files, ``base:`` files, ``--set``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

pytest.importorskip("sb3_contrib")  # the hyperparameters are checked against MaskablePPO's signature

from solitaire_env.tools.config import (  # noqa: E402
    ConfigError,
    EvalConfig,
    load_config,
    parse_config,
    resolve,
    save_config,
)

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted(ROOT.joinpath("configs").glob("**/*.yaml"))
RECIPES = {"rank_and_file.yaml": "RankAndFile-v0", "number_ten.yaml": "NumberTen-v0", "rainbow.yaml": "Rainbow-v0",
           "freecell.yaml": "FreeCell-v0", "klondike.yaml": "Klondike-v0", "klondike_draw3.yaml": "Klondike-v0"}


def test_configs_holds_one_quick_config_one_recipe_per_game_and_ablations():
    top = sorted(p.name for p in ROOT.joinpath("configs").glob("*.yaml"))
    assert top == sorted(["quick.yaml", *RECIPES])
    assert {p.parent.name for p in CONFIGS} == {"configs", "ablations"}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: str(p.relative_to(ROOT / "configs")))
def test_every_shipped_config_resolves_validates_and_saves_resolved(path, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # init_model paths are the repository's
    raw, _ = resolve(path)
    own = yaml.safe_load(path.read_text())
    if path.parent.name == "ablations":
        assert isinstance(own.get("base"), str), f"{path.name}: an ablation is an override of a base file"
    else:
        assert "base" not in own
    assert "base" not in raw
    config = load_config(path)
    if path.name in RECIPES and path.parent.name == "configs":
        assert config.env_id == RECIPES[path.name] and config.output_dir == f"runs/{path.stem}"
        assert config.pretrain is not None and config.policy == "MoveScorerPolicy"
    if path.stem.endswith("_ppo"):
        assert config.policy == "CardCodesPolicy" and config.pretrain is None
        assert config.output_dir == f"runs/{path.stem}"
    save_config(config, tmp_path / "again.yaml")  # what a run keeps: the resolved config, standing alone
    saved = yaml.safe_load((tmp_path / "again.yaml").read_text())
    assert "base" not in saved
    assert load_config(tmp_path / "again.yaml") == config


def _write(folder: Path, name: str, data: dict) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data))
    return path


BASE = {"env_id": "Rainbow-v0", "total_timesteps": 1000, "n_envs": 8,
        "hyperparams": {"learning_rate": 3e-4, "n_steps": 64, "gamma": 0.99},
        "env_kwargs": {"obs_mode": "piles", "no_revisit": True}, "policy": "MultiInputPolicy",
        "eval": {"freq": 500, "episodes": 10},
        "pretrain": {"episodes": 20, "epochs": 2}}


def test_an_override_merges_sections_key_by_key_and_null_removes(tmp_path):
    _write(tmp_path, "base.yaml", BASE)
    path = _write(tmp_path / "sub", "over.yaml", {
        "base": "../base.yaml", "n_envs": 4, "hyperparams": {"learning_rate": 1e-4, "gamma": None},
        "env_kwargs": {"no_revisit": None}, "eval": {"episodes": 20}, "pretrain": {"epochs": 3}})
    config = load_config(path)
    assert config.n_envs == 4 and config.total_timesteps == 1000
    assert config.hyperparams == {"learning_rate": 1e-4, "n_steps": 64}  # gamma removed: MaskablePPO's default
    assert config.env_kwargs == {"obs_mode": "piles"}
    assert (config.eval.freq, config.eval.episodes) == (500, 20)
    assert (config.pretrain.episodes, config.pretrain.epochs) == (20, 3)
    off = _write(tmp_path, "off.yaml", {"base": "base.yaml", "pretrain": None, "eval": {"freq": None}})
    config = load_config(off)
    assert config.pretrain is None and config.eval.freq == EvalConfig().freq


def test_bases_chain_relative_to_the_file_that_names_them(tmp_path):
    _write(tmp_path, "a/base.yaml", BASE)
    _write(tmp_path, "b/middle.yaml", {"base": "../a/base.yaml", "seed": 7, "hyperparams": {"n_steps": 32}})
    top = _write(tmp_path, "c/d/top.yaml", {"base": "../../b/middle.yaml", "hyperparams": {"gamma": 0.9}})
    config = load_config(top)
    assert config.seed == 7 and config.hyperparams == {"learning_rate": 3e-4, "n_steps": 32, "gamma": 0.9}
    _, origins = resolve(top)
    assert origins["seed"].endswith("middle.yaml") and origins["hyperparams.gamma"].endswith("top.yaml")
    assert origins["hyperparams.learning_rate"].endswith("base.yaml")


def test_a_cycle_of_bases_and_a_missing_base_are_errors(tmp_path):
    _write(tmp_path, "a.yaml", {**BASE, "base": "b.yaml"})
    _write(tmp_path, "b.yaml", {"base": "a.yaml", "seed": 1})
    with pytest.raises(ConfigError, match=r"a cycle of base files: .*a\.yaml -> .*b\.yaml -> .*a\.yaml"):
        load_config(tmp_path / "a.yaml")
    _write(tmp_path, "self.yaml", {**BASE, "base": "self.yaml"})
    with pytest.raises(ConfigError, match="a cycle of base files"):
        load_config(tmp_path / "self.yaml")
    _write(tmp_path, "lost.yaml", {"base": "nowhere.yaml"})
    with pytest.raises(ConfigError, match="config file not found: .*nowhere.yaml"):
        load_config(tmp_path / "lost.yaml")
    _write(tmp_path, "odd.yaml", {"base": 3})
    with pytest.raises(ConfigError, match="'base' must be a file name"):
        load_config(tmp_path / "odd.yaml")


def test_an_error_names_the_file_the_key_came_from(tmp_path):
    _write(tmp_path, "base.yaml", {**BASE, "hyperparams": {"learning_rat": 1e-4}})
    over = _write(tmp_path, "over.yaml", {"base": "base.yaml", "seed": 2})
    with pytest.raises(ConfigError, match=r"base\.yaml: unknown hyperparameter 'learning_rat'"):
        load_config(over)
    _write(tmp_path, "fine.yaml", BASE)
    wrong = _write(tmp_path, "wrong.yaml", {"base": "fine.yaml", "eval": {"episodes": "many"}})
    with pytest.raises(ConfigError, match=r"wrong\.yaml: 'eval.episodes' must be int, got str 'many'"):
        load_config(wrong)


def test_set_overrides_dotted_keys_as_yaml_values(tmp_path):
    path = _write(tmp_path, "c.yaml", BASE)
    config = load_config(path, ["hyperparams.learning_rate=1e-4", "total_timesteps=5000", "env_kwargs.no_revisit=false",
                                "pretrain=null", "eval.deterministic=false", "policy_kwargs.net_arch=[32, 32]"])
    assert config.hyperparams["learning_rate"] == 1e-4 and isinstance(config.hyperparams["learning_rate"], float)
    assert config.total_timesteps == 5000 and config.env_kwargs == {"obs_mode": "piles", "no_revisit": False}
    assert config.pretrain is None and config.eval.deterministic is False
    assert config.policy_kwargs == {"net_arch": [32, 32]}
    assert load_config(path, ["seed=1", "seed=2"]).seed == 2  # the last of repeated keys
    assert load_config(path, ["pretrain.rounds=2"]).pretrain.rounds == 2


@pytest.mark.parametrize("item, match", [
    ("n_envs=abc", r"--set n_envs=abc: 'n_envs' must be int, got str 'abc'"),
    ("nope=3", r"--set nope=3: unknown key 'nope'; known keys: backend, checkpoint_freq"),
    ("hyperparams.learning_rat=1e-4", r"--set hyperparams.learning_rat=1e-4: unknown hyperparameter 'learning_rat'"),
    ("eval.every=3", r"--set eval.every=3: unknown eval key\(s\) every; known: freq, episodes, seed, deterministic"),
    ("pretrain.beta=2", r"--set pretrain.beta=2: 'pretrain.beta' must be between 0 and 1"),
    ("seed.x=1", r"--set seed.x=1: 'seed.x': a dotted key is SECTION.KEY"),
    ("hyperparams.a.b=1", r"a dotted key is SECTION.KEY"),
    ("seed", r"--set seed: expected KEY=VALUE"),
    ("=3", r"expected KEY=VALUE"),
    ("seed=[1", r"--set seed=\[1: the value is not valid YAML"),
    ("env_id=null", r"missing required key 'env_id'"),
])
def test_set_rejects_bad_keys_and_types_in_one_line(tmp_path, item, match):
    path = _write(tmp_path, "c.yaml", BASE)
    with pytest.raises(ConfigError, match=match) as err:
        load_config(path, [item])
    assert "\n" not in str(err.value)


def test_train_cli_takes_set(tmp_path, capsys):
    from solitaire_env.tools.cli import main

    path = _write(tmp_path, "c.yaml", {**BASE, "output_dir": str(tmp_path / "run")})
    with pytest.raises(SystemExit) as stop:
        main(["train", str(path), "--set", "hyperparams.n_steps=0", "--no-progress"])
    assert stop.value.code == 2
    assert "--set hyperparams.n_steps=0: hyperparams.n_steps must be a positive integer" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_floats_in_exponent_form_are_numbers_in_files_too(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(BASE) + "seed: 3\n")
    path.write_text(path.read_text().replace("learning_rate: 0.0003", "learning_rate: 3e-4"))
    assert load_config(path).hyperparams["learning_rate"] == 3e-4
    assert parse_config(BASE).hyperparams["learning_rate"] == 3e-4
