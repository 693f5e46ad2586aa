"""What every command of the CLI shares: the one-line error for bad input, and loading the tier and the kernels."""

from __future__ import annotations

import argparse
from typing import Any


class CliError(Exception):
    """Bad input: printed as one line, exit 2."""


def load_tier_and_specs(args: argparse.Namespace) -> dict[str, Any]:
    from harness.domain.registry import KernelSourceError, load_specs
    from harness.run.environment import enter_tier, resolve_tier

    tier = resolve_tier(getattr(args, "tier", "auto"))
    enter_tier(tier)  # before any kernel module is imported: decoration reads TRITON_INTERPRET
    try:
        return {"tier": tier, "specs": load_specs(args.kernels_from)}
    except KernelSourceError as exc:
        raise CliError(str(exc)) from None
