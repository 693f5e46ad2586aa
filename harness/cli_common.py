"""What every command of the CLI shares: the one-line error for bad input, and the opening steps of a command that
runs cells (`run`, `bench`, `perf`): load the tier and the kernels, validate the selection, refuse to overwrite."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from harness.run.environment import enter_tier, resolve_tier
from harness.run.selection import SelectionError, validate


class CliError(Exception):
    """Bad input: printed as one line, exit 2."""


@contextlib.contextmanager
def cli_errors(*kinds: type[Exception]) -> Iterator[None]:
    """Inside: an exception of `kinds` (input the user can fix, with a message that says how) becomes a CliError."""
    try:
        yield
    except kinds as exc:
        raise CliError(str(exc)) from None


def load_tier_and_specs(args: argparse.Namespace) -> dict[str, Any]:
    from harness.domain.registry import KernelSourceError, load_specs  # deferred: imports torch; `report` stays light

    tier = resolve_tier(getattr(args, "tier", "auto"))
    enter_tier(tier)  # before any kernel module is imported: decoration reads TRITON_INTERPRET
    with cli_errors(KernelSourceError):
        specs = load_specs(args.kernels_from)
    check_calls(specs, tier)
    return {"tier": tier, "specs": specs}


def check_calls(specs: dict[str, Any], tier: str) -> None:
    """Each spec's make_inputs and reference, called once before any cell runs (harness.domain.spec_check)."""
    from harness.domain.spec_check import SpecCallError, check_spec_calls  # deferred: imports torch; `report` stays light

    for spec in specs.values():
        path = Path(spec.source)
        source_file = str(path.resolve()) if path.is_file() else getattr(sys.modules.get(spec.source), "__file__", None)
        try:
            check_spec_calls(spec, tier, source_file)
        except SpecCallError as exc:
            raise CliError(f"{spec.source}: {exc}") from None


def selected(kind: str, asked: Iterable[str], known: Iterable[str]) -> list[str]:
    """The asked names of one kind (kernel, style, pipeline, mode), each known; CliError naming the first that is not."""
    with cli_errors(SelectionError):
        return validate(kind, asked, known)


def refuse_existing(paths: Iterable[Path], overwrite: bool, elsewhere: str) -> None:
    """CliError for the first path that exists, unless --overwrite; `elsewhere` names the options that choose another."""
    if overwrite:
        return
    for path in paths:
        if path.exists():
            raise CliError(f"{path}: exists; pass --overwrite to replace it, or {elsewhere} for another path")


def check_writable(path: Path) -> None:
    """CliError, before anything runs, when `path` could not be written: a folder, an unwritable parent."""
    if path.is_dir():
        raise CliError(f"{path}: is a folder, not a file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"{path}: cannot create its folder ({exc.strerror})") from None
    if path.parent.exists() and not path.parent.is_dir():
        raise CliError(f"{path}: its parent is not a folder")
    if not os.access(path.parent, os.W_OK):
        raise CliError(f"{path}: its folder is not writable")
