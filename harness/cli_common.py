"""What every command of the CLI shares: the one-line error for bad input, and loading the tier and the kernels."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.run.environment import enter_tier, resolve_tier


class CliError(Exception):
    """Bad input: printed as one line, exit 2."""


def load_tier_and_specs(args: argparse.Namespace) -> dict[str, Any]:
    from harness.domain.registry import KernelSourceError, load_specs  # deferred: imports torch; `report` stays light

    tier = resolve_tier(getattr(args, "tier", "auto"))
    enter_tier(tier)  # before any kernel module is imported: decoration reads TRITON_INTERPRET
    try:
        specs = load_specs(args.kernels_from)
    except KernelSourceError as exc:
        raise CliError(str(exc)) from None
    check_calls(specs, tier)
    return {"tier": tier, "specs": specs}


def check_calls(specs: dict[str, Any], tier: str) -> None:
    """Each spec's make_inputs and reference, called once before any cell runs (harness.domain.spec_check)."""
    import sys

    from harness.domain.spec_check import SpecCallError, check_spec_calls  # deferred: imports torch; `report` stays light

    for spec in specs.values():
        path = Path(spec.source)
        source_file = str(path.resolve()) if path.is_file() else getattr(sys.modules.get(spec.source), "__file__", None)
        try:
            check_spec_calls(spec, tier, source_file)
        except SpecCallError as exc:
            raise CliError(f"{spec.source}: {exc}") from None
