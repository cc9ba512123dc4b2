"""Golden playthroughs: one recorded episode per case, every step written out, diffed by tests/test_golden.py.

Each case plays ``gym.make(env_id, max_episode_steps=cap, **kwargs)`` from ``reset(seed=deal)`` with a
masked random policy (``numpy.random.default_rng(policy_seed)``, one ``integers`` draw per step over the
legal ids) until the episode ends. Per step the file holds the action id and its move, the reward,
``terminated``/``truncated``, the info dict, the legal ids and the observation. Card codes are written as
cards (``As``, ``Td``), ``##`` a face-down card and ``--`` an empty slot; trailing empty slots are left out;
an array with rows is written row by row, all-zero rows left out.

After a change in behaviour, regenerate and read the diff before committing it::

    python tests/golden/playthroughs.py --write
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import solitaire_env  # noqa: F401  (registers the envs)
from solitaire_env.engine.cards import card_to_str
from solitaire_env.engine.variant import HIDDEN, observation_fields

HERE = Path(__file__).resolve().parent
COMMAND = "python tests/golden/playthroughs.py --write"
CARD_FIELDS = ("tableau", "waste", "foundations", "stock", "reserve")


@dataclass(frozen=True)
class Case:
    name: str  # the file is tests/golden/<name>.txt
    env_id: str
    cap: int  # max_episode_steps: the episode is truncated there if it has not ended
    kwargs: dict = field(default_factory=dict)
    deal: int = 0
    policy_seed: int = 0


CASES = (
    Case("rank_and_file", "RankAndFile-v0", cap=100),
    Case("number_ten", "NumberTen-v0", cap=100),
    Case("rainbow", "Rainbow-v0", cap=150),
    Case("rainbow_no_revisit", "Rainbow-v0", cap=1000, kwargs={"no_revisit": True}, deal=1),
    Case("rank_and_file_piles", "RankAndFile-v0", cap=12, kwargs={"obs_mode": "piles", "action_features": True}),
    Case("freecell", "FreeCell-v0", cap=100, deal=1),  # Microsoft deal 1
    Case("freecell_piles", "FreeCell-v0", cap=12, kwargs={"obs_mode": "piles", "action_features": True}, deal=1),
    Case("klondike", "Klondike-v0", cap=120),
    Case("klondike_draw3", "Klondike-v0", cap=120, kwargs={"draw": 3, "redeals": 2}, deal=1),
    Case("klondike_piles", "Klondike-v0", cap=16, kwargs={"obs_mode": "piles", "action_features": True, "draw": 3}),
    Case("klondike_no_revisit", "Klondike-v0", cap=1000, kwargs={"no_revisit": True}, deal=2),
)


def _card(code: int) -> str:
    return "--" if code == 0 else "##" if code == HIDDEN else card_to_str(int(code) - 1)


def _trimmed(values: np.ndarray) -> np.ndarray:
    nonzero = np.flatnonzero(values)
    return values[: nonzero[-1] + 1] if len(nonzero) else values[:0]


def _cards(values: np.ndarray) -> str:
    return " ".join(_card(c) for c in _trimmed(values)) or "-"


def _codes(codes: np.ndarray, variant: Any) -> list[str]:
    """The flat ``codes`` observation, field by field; the tableau pile by pile."""
    lines = []
    for name, (where, _) in observation_fields(variant).items():
        values = codes[where]
        if name == "tableau":
            for p, pile in enumerate(values.reshape(variant.piles, -1)):
                lines.append(f"tableau {p}: {_cards(pile)}")
        elif name in CARD_FIELDS:
            lines.append(f"{name}: {_cards(values)}")
        else:
            lines.append(f"{name}: {' '.join(str(int(v)) for v in values)}")
    return lines


def _ids(mask: np.ndarray) -> str:
    return " ".join(map(str, np.flatnonzero(mask))) or "none"


def _array(name: str, values: np.ndarray) -> list[str]:
    values = np.asarray(values)
    if values.ndim < 2:
        return [f"{name}: {' '.join(str(v) for v in values.tolist())}"]
    rows = [f"  {i}: {' '.join(str(v) for v in row.tolist())}" for i, row in enumerate(values) if row.any()]
    return [f"{name} {values.shape} (rows not all zero):"] + rows


def _observation(obs: Any, variant: Any) -> list[str]:
    if isinstance(obs, dict):  # obs_mode "dict" or "piles": the arrays as they are
        lines = []
        for key in sorted(obs):
            if key == "action_mask":
                lines.append(f"action_mask (legal ids): {_ids(obs[key])}")
            else:
                lines.extend(_array(key, obs[key]))
        return lines
    return _codes(np.asarray(obs), variant)


def _info(info: dict) -> list[str]:
    lines, plain = [], []
    for key in sorted(info):
        value = info[key]
        if key == "action_mask":
            lines.append(f"legal: {_ids(value)}")
        elif isinstance(value, np.ndarray):
            lines.extend(_array(f"info {key}", value))
        else:
            plain.append(f"{key}={value!r}")
    return [f"info: {' '.join(plain)}"] + lines


def playthrough(case: Case) -> str:
    """The text of one case's episode."""
    env = gym.make(case.env_id, max_episode_steps=case.cap, **case.kwargs)
    variant = env.unwrapped.variant
    rng = np.random.default_rng(case.policy_seed)
    out = [
        f"# Golden playthrough {case.name}: gym.make({case.env_id!r}, max_episode_steps={case.cap}"
        + "".join(f", {k}={v!r}" for k, v in case.kwargs.items()) + f"), reset(seed={case.deal}),",
        f"# masked random policy numpy.random.default_rng({case.policy_seed}).integers over the legal ids.",
        f"# Regenerate after a change in behaviour (and read the diff): {COMMAND}",
        "",
        f"reset(seed={case.deal})",
    ]
    obs, info = env.reset(seed=case.deal)
    out += ["  " + line for line in _info(info) + _observation(obs, variant)]
    step, done = 0, False
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        action = int(legal[rng.integers(len(legal))])
        step += 1
        out += ["", f"step {step}: action {action} = {env.unwrapped.decode_action(action)}"]
        obs, reward, terminated, truncated, info = env.step(action)
        out.append(f"  reward={reward!r} terminated={terminated} truncated={truncated}")
        out += ["  " + line for line in _info(info) + _observation(obs, variant)]
        done = terminated or truncated
    out += ["", f"end after {step} steps: {info['foundation_cards']} cards on the foundations", ""]
    env.close()
    return "\n".join(out)


def path_of(case: Case) -> Path:
    return HERE / f"{case.name}.txt"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write (or check) the golden playthroughs in tests/golden/.")
    parser.add_argument("--write", action="store_true", help="rewrite the files (default: only check them)")
    args = parser.parse_args(argv)
    stale = 0
    for case in CASES:
        text, path = playthrough(case), path_of(case)
        if args.write:
            path.write_text(text)
            print(f"wrote {path} ({len(text) // 1024} KiB)")
        elif not path.is_file() or path.read_text() != text:
            print(f"{path} differs from a fresh playthrough")
            stale += 1
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
