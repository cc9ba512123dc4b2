"""Argument types and options the ``solitaire-env`` subcommands share (:mod:`solitaire_env.tools.cli`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from solitaire_env.parallel import Backend


def int_at_least(text: str, low: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
    return value


def positive_int(text: str) -> int:
    return int_at_least(text, 1, "positive")


def non_negative_int(text: str) -> int:
    return int_at_least(text, 0, "non-negative")


def seed_range(text: str) -> str:
    """``--seeds A:B``, checked for a sign here so a negative deal number gets its own message."""
    if any(part.strip().startswith("-") for part in text.split(":")):
        raise argparse.ArgumentTypeError(f"bad seed range {text!r}: deal numbers cannot be negative")
    return text


def json_object(text: str) -> dict:
    import json

    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"not JSON ({e.msg}): {text!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object like '{{\"no_revisit\": true}}', got {text!r}")
    return value


def add_ray_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                         help="run the deals as Ray tasks: on the cluster at ADDRESS ('auto': the running cluster "
                              "this machine belongs to; 'ray://HOST:10001': a remote one), or without ADDRESS on a "
                              "Ray instance started here; needs pip install 'solitaire-env[ray]'")


def make_backend(args: argparse.Namespace, parser: argparse.ArgumentParser, jobs: int | None = None) -> Backend:
    """Where the deals run, from --ray and --jobs; Ray imported only when asked for."""
    from solitaire_env.parallel import Backend, import_ray

    if args.ray is None:
        return Backend(jobs=jobs or 1)
    if jobs is not None and getattr(args, "jobs", None) is not None:
        parser.error("--jobs sets local processes; with --ray the cluster's CPUs run the deals: give one of them")
    try:
        import_ray()
    except ImportError as e:
        parser.error(str(e))
    return Backend(ray=args.ray)


def check_resume(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    if args.resume and not args.csv:
        parser.error("--resume goes on from the rows of --csv FILE: give --csv")
