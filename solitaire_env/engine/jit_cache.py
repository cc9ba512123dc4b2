"""Keeping numba's on-disk caches of the compiled rules in step with the rules' sources.

numba's ``cache=True`` saves each compiled function beside its module and reuses it as long as that
module's own file is unchanged. But compiled code also holds what it took from other files: the
constants of :mod:`solitaire_env.engine.variant` (frozen into the machine code as globals), and the core's
functions compiled into the solver's and into the benchmark's loops. After an edit or an upgrade of
one of those files, a cache keyed on the caller's file alone would go on running the old rules.

So every module with cached compiled functions calls :func:`drop_stale_cache` once it has defined
them (before any of them runs: numba reads a cache on a function's first call). It compares a stamp,
a hash of the rules' sources (:data:`RULES_SOURCES`), with the stamp saved beside that module's cache
when the cache was started, and when they differ deletes the module's cache files, so they are
compiled afresh from the current sources. See ``docs/design.md``, "Compiled core (numba)".
"""

from __future__ import annotations

import hashlib
import inspect
import os
import sys
import warnings
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent  # solitaire_env/

# The package's files that compiled code is built from: the compiled modules and every package module
# they import, directly or not (a test checks the list against their imports). Editing any other
# file costs no recompiling.
RULES_SOURCES = ("engine/areas.py", "engine/batched.py", "engine/cards.py", "engine/core.py", "engine/features.py",
                 "engine/games/*.py",
                 "engine/hashing.py", "engine/history.py", "engine/keys.py", "engine/moves_back.py",
                 "engine/ms_deals.py", "engine/pair_filter.py", "engine/pcg64.py", "engine/position.py",
                 "engine/state.py", "engine/table.py", "engine/variant.py", "solver/*.py")


def rules_files(package: Path = PACKAGE) -> list[Path]:
    """The files of :data:`RULES_SOURCES` in ``package``, in a fixed order."""
    return sorted({p for pattern in RULES_SOURCES for p in package.glob(pattern)})


@cache
def rules_stamp(package: Path = PACKAGE) -> str:
    """A hash of the rules' sources: their names and contents."""
    digest = hashlib.sha256()
    for path in rules_files(package):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:20]


def drop_stale_cache(module_name: str, stamp: str | None = None) -> bool:
    """Delete the numba cache of module ``module_name`` if it was built from other rules sources.

    Call it at the end of a module whose functions are compiled with ``cache=True``, before any of
    them is called. ``stamp`` defaults to :func:`rules_stamp`. Returns whether cache files were
    deleted. Problems with the cache folder are reported as warnings, never raised: numba then
    compiles without a cache or fails on its own terms.
    """
    from numba.extending import is_jitted

    stamp = stamp or rules_stamp()
    compiled = [f for f in vars(sys.modules[module_name]).values()
                if is_jitted(f) and getattr(f.py_func, "__module__", None) == module_name]
    if not compiled:
        return False  # nothing compiled here (e.g. NUMBA_DISABLE_JIT=1)
    stats = getattr(compiled[0], "stats", None)
    if stats is None or not hasattr(stats, "cache_path"):
        warnings.warn(f"{module_name}: this numba does not say where it caches compiled code, so a cache built "
                      "from older rules sources cannot be detected; delete __pycache__ after editing them",
                      RuntimeWarning, stacklevel=2)
        return False
    if stats.cache_path is None:
        return False  # compiled without a cache
    folder = Path(stats.cache_path)
    stem = Path(inspect.getfile(compiled[0].py_func)).stem  # numba names the cache files "<stem>.<function>-..."
    marker = folder / f"{stem}.rules-stamp"
    try:
        if marker.read_text() == stamp:
            return False
    except FileNotFoundError:
        pass
    except OSError as err:
        warnings.warn(f"{module_name}: cannot read {marker} ({err}); the compiled cache is left as it is",
                      RuntimeWarning, stacklevel=2)
        return False
    try:
        stale = [*folder.glob(f"{stem}.*.nbi"), *folder.glob(f"{stem}.*.nbc")]
        for path in stale:
            path.unlink(missing_ok=True)
        # Written whole, then renamed: a process starting meanwhile never reads half a stamp.
        tmp = marker.with_name(f"{marker.name}.{os.getpid()}.tmp")
        tmp.write_text(stamp)
        os.replace(tmp, marker)
    except OSError as err:
        warnings.warn(f"{module_name}: cannot refresh numba's cache in {folder} ({err}); compiled code may come "
                      "from older rules sources", RuntimeWarning, stacklevel=2)
        return False
    return bool(stale)


__all__ = ["RULES_SOURCES", "drop_stale_cache", "rules_files", "rules_stamp"]
