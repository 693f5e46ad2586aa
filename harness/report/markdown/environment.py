"""Where a results file was measured: no chart without its environment (docs/architecture.md)."""

from __future__ import annotations

import shlex
from typing import Any

from harness.report.markdown.escape import escape_cell
from harness.report.markdown.tables import markdown_table

UNKNOWN = "unknown"

CPU_TIER_NOTICE = (
    "> **CPU interpreter tier.** These results come from Triton's interpreter"
    " (`TRITON_INTERPRET=1`) on CPU tensors, not from a GPU. They are not the GPU tier's"
    " chart; pipelines that mean nothing on CPU are skipped."
)


# Header fields some runs record (how cells were isolated, their time limit): shown when present.
OPTIONAL_FIELDS = (("isolation", "isolation"), ("fresh-process loader", "fresh_loader"),
                   ("xdist workers started by", "worker_start"), ("cell timeout (s)", "cell_timeout_s"))


def tier_of(environment: dict[str, Any]) -> str:
    """"gpu" or "cpu"; an old header without a tier is cpu when it ran the interpreter."""
    tier = environment.get("tier")
    if tier:
        return str(tier)
    if environment.get("interpreter") is True:
        return "cpu"
    return UNKNOWN


def _value(environment: dict[str, Any], key: str) -> str:
    """A missing key is unknown; a recorded null (no CUDA on the CPU tier) is none."""
    if key not in environment:
        return UNKNOWN
    value = environment[key]
    return "(none)" if value is None or value == "" else str(value)


def _command(header: dict[str, Any]) -> str:
    command = header.get("command")
    if isinstance(command, list):
        return shlex.join(str(part) for part in command)
    return UNKNOWN if command is None else str(command)


def environment_table(header: dict[str, Any]) -> str:
    """Every recorded field of the header, missing ones shown as unknown."""
    environment = header.get("environment") or {}
    interpreter = environment.get("interpreter")
    tier = tier_of(environment)
    fields = [
        ("tier", {"gpu": "gpu (CUDA)", "cpu": "cpu (Triton interpreter)"}.get(tier, tier)),
        ("interpreter mode", UNKNOWN if interpreter is None else ("yes, TRITON_INTERPRET=1" if interpreter else "no")),
        ("torch", _value(environment, "torch")),
        ("triton", _value(environment, "triton")),
        ("CUDA", _value(environment, "cuda")),
        ("GPU", _value(environment, "gpu")),
        ("driver", _value(environment, "driver")),
        ("python", _value(environment, "python")),
        ("OS", _value(environment, "os")),
        ("LD_PRELOAD", environment.get("ld_preload") or "(none)"),
        ("started", _value(header, "started")),
        ("harness version", _value(header, "harness_version")),
        ("command", _command(header)),
    ]
    fields += [(name, str(header[key])) for name, key in OPTIONAL_FIELDS if header.get(key) is not None]
    if environment.get("fresh_process_cuda_connections"):  # harness.run.environment.fresh_process_environment
        fields.append(("fresh processes' CUDA_DEVICE_MAX_CONNECTIONS", str(environment["fresh_process_cuda_connections"])))
    # harness.domain.poison: without it, an output a kernel never wrote could hold the right answer
    fields.append(("unwritten memory", environment.get("poison") or "not poisoned (a harness older than the poison recorded it)"))
    if isinstance(environment.get("graph_caches"), dict):  # harness.run.compile_caches
        fields.append(("graph caches", ", ".join(f"{k}: {v}" for k, v in environment["graph_caches"].items())))
    if header.get("merged_from"):
        fields.append(("joined from", "; ".join(f"{part.get('source')} (started {part.get('started')})"
                                                for part in header["merged_from"])))
    if header.get("replaced"):
        fields.append(("cells re-run later", "; ".join(f"{change['id']}: {change['was']} -> {change['now']}"
                                                       for change in header["replaced"])))
    rows = [(name, escape_cell(value, limit=300)) for name, value in fields]
    return markdown_table(["field", "value"], rows)


def environment_line(header: dict[str, Any]) -> str:
    """One sentence naming the environment, for places too small for the table (docs regions)."""
    environment = header.get("environment") or {}
    tier = tier_of(environment)
    parts = [f"torch {_value(environment, 'torch')}", f"triton {_value(environment, 'triton')}"]
    if tier == "cpu":
        where = "the CPU interpreter tier (TRITON_INTERPRET=1 on CPU tensors, not a GPU)"
    else:
        parts.append(f"CUDA {_value(environment, 'cuda')}")
        gpu = _value(environment, "gpu")
        where = f"the {tier} tier on {gpu} (driver {_value(environment, 'driver')})"
    started, version = _value(header, "started"), _value(header, "harness_version")
    preload = environment.get("ld_preload")
    if preload:
        where += f" with LD_PRELOAD={preload}"
    rerun = len(header.get("replaced") or [])
    later = f", {rerun} cell{'s' if rerun != 1 else ''} re-run later (the report's environment table names them)" if rerun else ""
    text = f"Measured with {', '.join(parts)} in {where}; run started {started}{later}, harness {version}."
    return escape_cell(text, limit=400)
