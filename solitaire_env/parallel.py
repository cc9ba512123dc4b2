"""Run one function over many independent tasks, here or on a Ray cluster: :func:`run_tasks`.

``solitaire-env solve`` and ``solitaire-env evaluate`` both hand their deals to :func:`run_tasks`,
which calls ``fn(context, task)`` once per task and yields ``(index, result)`` as each task
finishes, in whatever order they finish. The caller writes its rows as they come, so one
result-writing path serves every backend (:class:`Backend`):

* ``Backend()``: every task in this process, one after another;
* ``Backend(jobs=J)``: ``J`` local worker processes (forks of this one; started fresh from a fork
  server, the context pickled, once JAX is loaded here, since a fork of JAX's threads can deadlock);
* ``Backend(ray=ADDRESS)``: one Ray task per item (``ADDRESS`` as ``ray.init`` takes it: ``"auto"``
  for a running cluster, ``"ray://host:10001"`` for a remote one, ``""`` to start a local one; a
  process that has already called ``ray.init`` keeps its cluster).

``context`` is what every task shares (solver options, the agents): it travels to each worker once,
not once per task. A task that raises becomes a :class:`TaskError` carrying the error, and the
other tasks go on. Under Ray, a task whose worker process dies (killed, out of memory, a crash in
compiled code) is run again, up to ``Backend.retries`` times; a task that raises is not, since the
code is deterministic and would raise again. Ray is imported only when a backend asks for it, so
the package and its default commands work without it (``pip install 'solitaire-env[ray]'``).

This module imports nothing else from the package: the solver layer and the tools layer both use it.
"""

from __future__ import annotations

import pickle
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

RAY_HINT = "pip install 'solitaire-env[ray]'"


@dataclass(frozen=True)
class Backend:
    """Where :func:`run_tasks` runs its tasks.

    ``jobs``: local worker processes (1: in this process); not used with Ray. ``ray``: ``None`` for
    no Ray, else the address for ``ray.init`` (``""``: start a local cluster of this machine's
    cores). ``retries``: how many more times Ray runs a task whose worker died.
    """

    jobs: int = 1
    ray: str | None = None
    retries: int = 3

    def __post_init__(self) -> None:
        if self.jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {self.jobs}")
        if self.retries < 0:
            raise ValueError(f"retries must be non-negative, got {self.retries}")

    def describe(self) -> str:
        if self.ray is None:
            return "this process" if self.jobs == 1 else f"{self.jobs} local processes"
        return f"Ray ({self.ray or 'local cluster'})"


@dataclass(frozen=True)
class TaskError:
    """A task that did not give a result: what it raised, or how its worker died (after the retries)."""

    error: str


def import_ray() -> Any:
    """``ray``, or an ``ImportError`` that says how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError(f"Ray is not installed: {RAY_HINT}") from None
    return ray


def run_tasks(fn: Callable[[Any, T], R], tasks: Sequence[T], context: Any = None,
              backend: Backend | None = None) -> Iterator[tuple[int, R | TaskError]]:
    """Yield ``(i, fn(context, tasks[i]))`` for every task as it finishes; a failed task gives a :class:`TaskError`.

    ``fn`` must be a module-level function (workers import it by name). Closing the iterator early
    (an exception in the caller, Ctrl-C) cancels the tasks not yet finished.
    """
    backend = backend or Backend()
    if backend.ray is not None:
        return _run_ray(fn, tasks, context, backend)
    if backend.jobs == 1:
        return _run_here(fn, tasks, context)
    return _run_processes(fn, tasks, context, backend.jobs)


def _error_text(e: BaseException) -> str:
    """One line: the exception's type and the first line of its message (Ray's run to pages)."""
    cause = getattr(e, "cause", None)  # a RayTaskError wraps what the task raised
    if isinstance(cause, BaseException):
        e = cause
    lines = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).strip().splitlines()
    return f"{type(e).__name__}: {lines[0] if lines else ''}"[:300]


def _call(fn: Callable[[Any, T], R], context: Any, task: T) -> R | TaskError:
    try:
        return fn(context, task)
    except Exception as e:  # noqa: BLE001 (any failure of one task is reported, the others go on)
        return TaskError(_error_text(e))


def _run_here(fn: Callable[[Any, T], R], tasks: Sequence[T], context: Any) -> Iterator[tuple[int, R | TaskError]]:
    for i, task in enumerate(tasks):
        yield i, _call(fn, context, task)


# --- local processes ----------------------------------------------------------------------------------

_PROCESS_CONTEXT: Any = None


def _set_process_context(context: Any) -> None:
    global _PROCESS_CONTEXT
    _PROCESS_CONTEXT = context


def _process_task(fn: Callable[[Any, T], R], task: T) -> R | TaskError:
    return _call(fn, _PROCESS_CONTEXT, task)


def _run_processes(fn: Callable[[Any, T], R], tasks: Sequence[T], context: Any,
                   jobs: int) -> Iterator[tuple[int, R | TaskError]]:
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    # A fork of a process that runs JAX's threads (a JAX policy loaded) can deadlock in the child, as JAX
    # warns: then the workers start fresh from a fork server, and the context travels pickled.
    start = multiprocessing.get_context("forkserver") if "jax" in sys.modules else None
    # The context goes to each worker once, through the initializer, rather than with every task.
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=start, initializer=_set_process_context,
                               initargs=(context,))
    # A few tasks per worker in flight, not all of them: wait() looks at every pending future, so with
    # 32,000 submitted at once this process took half a core (a FreeCell sweep of 32,000 deals).
    in_flight = 4 * jobs
    try:
        pending: dict = {}
        queued = iter(enumerate(tasks))
        while True:
            for i, task in queued:
                pending[pool.submit(_process_task, fn, task)] = i
                if len(pending) >= in_flight:
                    break
            if not pending:
                break
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                i = pending.pop(future)
                try:
                    yield i, future.result()
                except Exception as e:  # noqa: BLE001 (a dead worker breaks the pool: every task left fails)
                    yield i, TaskError(_error_text(e))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


# --- Ray ----------------------------------------------------------------------------------------------

# One worker process runs many tasks of one run: it unpickles the shared context once and keeps it.
_WORKER_CONTEXT: tuple[str, Any] | None = None
_REMOTE: Any = None


def _worker_context(ref: Any) -> Any:
    global _WORKER_CONTEXT
    key = ref.hex()
    if _WORKER_CONTEXT is None or _WORKER_CONTEXT[0] != key:
        import ray

        # Pickled bytes rather than the object itself: Ray would hand numpy arrays back read-only
        # (zero-copy), and agents write into their own arrays.
        _WORKER_CONTEXT = (key, pickle.loads(ray.get(ref)))
    return _WORKER_CONTEXT[1]


def _ray_task(fn: Callable[[Any, T], R], boxed_context: list, task: T) -> R | TaskError:
    # The context's reference comes in a list so that Ray passes the reference, not the object.
    return _call(fn, _worker_context(boxed_context[0]), task)


def _ray_init(ray: Any, address: str) -> None:
    if ray.is_initialized():
        return
    # No dashboard: on a small machine its processes take cores the tasks need.
    ray.init(address=address or None, include_dashboard=False, log_to_driver=False)


def _run_ray(fn: Callable[[Any, T], R], tasks: Sequence[T], context: Any,
             backend: Backend) -> Iterator[tuple[int, R | TaskError]]:
    global _REMOTE
    ray = import_ray()
    _ray_init(ray, backend.ray or "")
    if _REMOTE is None:
        _REMOTE = ray.remote(_ray_task)
    remote = _REMOTE.options(num_cpus=1, max_retries=backend.retries, retry_exceptions=False)
    boxed = [ray.put(ray.cloudpickle.dumps(context))]
    # A bounded window of tasks in flight keeps the driver's memory flat over 100,000 deals while
    # leaving enough queued for every CPU (and for an autoscaler to see the demand).
    window = max(256, 4 * int(ray.cluster_resources().get("CPU", 1)))
    pending: dict[Any, int] = {}
    next_task = 0
    try:
        while next_task < len(tasks) or pending:
            while next_task < len(tasks) and len(pending) < window:
                pending[remote.remote(fn, boxed, tasks[next_task])] = next_task
                next_task += 1
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                i = pending.pop(ref)
                try:
                    yield i, ray.get(ref)
                except Exception as e:  # noqa: BLE001 (the worker died on every try, or Ray lost the task)
                    yield i, TaskError(_error_text(e))
    finally:
        for ref in pending:  # closed early: do not leave the cluster working for nobody
            ray.cancel(ref)


__all__ = ["RAY_HINT", "Backend", "TaskError", "import_ray", "run_tasks"]
