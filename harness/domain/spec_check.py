"""A spec's own code, called once at load: a `make_inputs` or `reference` that raises is found before any cell runs.

Without this a raising reference surfaces as every cell of the kernel failing (and the control as
`env` everywhere), which reads like a matrix result, not like a bug in the user's spec.

Where it runs, decided for cost and safety: in the process that loaded the plug-in, without a
subprocess, on the spec's first size (what every cell uses).
- CPU tier: on CPU tensors, where the cells will call the reference too; any exception is the spec's.
- GPU tier: on meta tensors, so that the loading process never initialises CUDA (it may fork, and a
  plug-in's verdicts must not depend on it). Meta tensors carry shapes and dtypes, not data: an
  exception is reported only when it is not meta's own limit (NotImplementedError, or a message
  naming meta tensors, as `.item()` and ops without a meta kernel raise); such a reference is left to
  the cells, whose native control will show it.
"""

from __future__ import annotations

import traceback
from pathlib import Path

import torch

from harness.domain.spec import KernelSpec


class SpecCallError(Exception):
    """The spec's make_inputs or reference raised; the message names the spec, the field and the error."""


def _where(error: BaseException, source_file: str | None) -> str:
    """` (line 12)`: the innermost line of the user's file the exception came through."""
    if not source_file:
        return ""
    wanted = Path(source_file).resolve()
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if Path(frame.filename).resolve() == wanted]
    return f" (line {frames[-1].lineno})" if frames else ""


def _message(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def _meta_limit(error: BaseException) -> bool:
    return isinstance(error, NotImplementedError) or "meta" in str(error).lower()


def check_spec_calls(spec: KernelSpec, tier: str, source_file: str | None = None) -> None:
    """Call `make_inputs` then `reference` once; SpecCallError naming the field when one of them raises."""
    device = torch.device("cpu" if tier == "cpu" else "meta")
    size = spec.sizes[0]
    try:
        inputs = spec.make_inputs(size, device, torch.Generator().manual_seed(0))
    except Exception as error:
        if device.type == "meta" and _meta_limit(error):
            return
        raise SpecCallError(f"KernelSpec {spec.name!r}: field 'make_inputs' raised on make_inputs({size}, "
                            f"{device.type!r}, generator){_where(error, source_file)}: {_message(error)}") from error
    if not isinstance(inputs, tuple) or len(inputs) != len(spec.arguments):
        raise SpecCallError(f"KernelSpec {spec.name!r}: field 'make_inputs' returned "
                            f"{type(inputs).__name__ if not isinstance(inputs, tuple) else f'{len(inputs)} values'}; "
                            f"expected a tuple of {len(spec.arguments)} (one per argument)")
    try:
        with torch.no_grad():
            spec.reference(*inputs)
    except Exception as error:
        if device.type == "meta" and _meta_limit(error):
            return
        raise SpecCallError(f"KernelSpec {spec.name!r}: field 'reference' raised on the inputs of make_inputs({size})"
                            f" on {device.type}{_where(error, source_file)}: {_message(error)}") from error
