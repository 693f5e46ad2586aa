"""Artifacts a cell builds from an exported program and another cell of the same worker may load: AOTInductor's
package (`aoti`, `aoti_strict`, `aoti_fresh_process`) and export's saved file (the two round trips).

Building a package is most of an AOTInductor cell's time (a C++ compile of the wrapper, about 6 s on the H100),
and three pipelines build one from the same kernel and style. A cell still exports its own program (the trace
is part of its question); it reuses an artifact only when that program is the same as the one the artifact was
built from, by a fingerprint of everything the build reads (`program_fingerprint`), never by the cell's name.
So no outcome depends on which cell built first: a cell that finds nothing builds, as it would alone, and a
build that failed is not kept, so the next cell fails or passes on its own build. This is a content-addressed
cache like Inductor's own code caches, kept in memory for the worker's life and never shared across
processes; `--no-shared-artifacts` and `--cold-cache` turn it off (docs/maintainers.md, "Shared artifacts").
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch

from harness.domain.artifact_store import ArtifactStore, Fetched

ArtifactFetcher = Callable[[str, Any, Iterable[Any], Callable[[], Path]], Path]


def artifact_fetcher(store: ArtifactStore, cell: str, reused: dict[str, str]) -> ArtifactFetcher:
    """What the run gives a cell as `CellContext.fetch_artifact`: the worker's artifact for the fingerprint of
    (kind, program, arguments), else `build()`'s, kept; a reused one is named in `reused` (the cell's
    `detail.reused`, whatever its outcome). A cell without one (a process per cell, a repro,
    --no-shared-artifacts, --cold-cache) builds every artifact itself."""

    def fetch(kind: str, program: Any, args: Iterable[Any], build: Callable[[], Path]) -> Path:
        fetched: Fetched = store.fetch(program_fingerprint(kind, program, args), cell, build)
        if fetched.reused_from:
            reused[kind] = fetched.reused_from
        return fetched.path

    return fetch


KERNEL_INDEX = re.compile(r"\b(kernel_idx|constant_args_idx) = (\d+)")


def program_fingerprint(kind: str, program: Any, args: Iterable[Any]) -> str:
    """A digest of what building `kind` from this exported program reads: every graph's code (a user kernel named
    by its identity and constant arguments, not by its index in torch's side table, which grows through the
    worker's life), every node's value metadata, the signature, the calling convention, the range constraints,
    the constants and parameters, and the example arguments with their layout and bytes; with torch's and
    triton's versions."""
    import triton

    parts: list[str] = [kind, torch.__version__, triton.__version__]
    for name, module in program.graph_module.named_modules():
        if isinstance(module, torch.fx.GraphModule):
            parts.append(f"graph {name}:\n{KERNEL_INDEX.sub(_side_table_entry, module.code)}")
            parts += [f"{node.name}: {_describe(node.meta.get('val'))}" for node in module.graph.nodes]
    parts.append(str(program.graph_signature))
    parts.append(repr(getattr(program, "call_spec", None)))
    parts.append(repr(sorted((str(key), str(value)) for key, value in program.range_constraints.items())))
    for table in (program.state_dict, program.constants):
        parts += [f"{name}: {_describe(value, with_bytes=True)}" for name, value in sorted(table.items())]
    parts += [f"arg {index}: {_describe(arg, with_bytes=True)}" for index, arg in enumerate(args)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _side_table_entry(match: re.Match[str]) -> str:
    from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table

    field_name, index = match.group(1), int(match.group(2))
    if field_name == "kernel_idx":
        kernel = kernel_side_table.get_kernel(index)
        function = getattr(kernel, "fn", kernel)  # an Autotuner or Heuristics wraps the JITFunction
        source = getattr(function, "src", "")
        return (f"kernel = {getattr(function, '__module__', '?')}.{getattr(function, '__name__', '?')}#{id(kernel)}"
                f"#{hashlib.sha256(str(source).encode()).hexdigest()[:16]}")
    return f"constant_args = {kernel_side_table.get_constant_args(index)!r}"


def _describe(value: Any, with_bytes: bool = False) -> str:
    """A value's metadata (a tensor's shape, strides, offset, dtype, device), and a real tensor's bytes when asked."""
    if isinstance(value, torch.Tensor):
        text = (f"tensor{tuple(value.shape)} stride{tuple(value.stride())} offset {value.storage_offset()} "
                f"{value.dtype} {value.device} grad {value.requires_grad}")
        if with_bytes and not isinstance(value, torch._subclasses.FakeTensor) and value.device.type != "meta":
            data = value.detach().cpu().contiguous().reshape(-1).view(torch.uint8)
            text += f" bytes {hashlib.sha256(data.numpy().tobytes()).hexdigest()[:24]}"
        return text
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[{', '.join(_describe(item, with_bytes) for item in value)}]"
    return f"{type(value).__name__} {value!r}"
