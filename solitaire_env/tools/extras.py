"""Which pip extra installs each optional module, and the one-line stop when a command needs a missing one.

``pip install -e .`` installs the envs alone (gymnasium, numpy, numba, pillow); training, checkpoint
agents, plots and progress bars come with ``solitaire-env[train]`` (pyproject.toml's extras).
"""

from __future__ import annotations

import importlib
import sys
from typing import NoReturn

EXTRA_OF = {
    **dict.fromkeys(("tqdm", "yaml", "rich", "torch", "sb3_contrib", "stable_baselines3", "matplotlib",
                     "tensorboard"), "train"),
    "moviepy": "video",
    "ray": "ray",
}


def importable(module: str) -> bool:
    """Whether ``module`` imports (an optional one, e.g. ``tqdm`` for a progress bar)."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def missing_extra(error: ModuleNotFoundError) -> str | None:
    """The extra that installs the module ``error`` did not find; ``None`` for any other module."""
    return EXTRA_OF.get((error.name or "").partition(".")[0])


def stop_for_extra(what: str, error: ModuleNotFoundError) -> NoReturn:
    """Exit with status 1 and one line saying which extra ``what`` needs; re-raise if no extra is missing."""
    extra = missing_extra(error)
    if extra is None:
        raise error
    print(f'{what} needs the {extra} extra: pip install "solitaire-env[{extra}]" (no module named '
          f'{error.name!r})', file=sys.stderr)
    sys.exit(1)
