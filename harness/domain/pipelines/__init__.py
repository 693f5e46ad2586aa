"""Pipeline name -> the function that runs a built op through it and checks it against the reference.

A pipeline never knows which style it runs: it sees a `BuiltOp` and a `KernelSpec`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.domain.pipelines import aoti, compile, eager, export, export_roundtrip, subsystems
from harness.domain.pipelines.artifacts import artifact_fetcher
from harness.domain.pipelines.common import CellContext
from harness.vocab import PIPELINES

__all__ = ["RUNNERS", "PipelineRunner", "artifact_fetcher"]

PipelineRunner = Callable[[CellContext], dict[str, Any]]

RUNNERS: dict[str, PipelineRunner] = {
    "eager": eager.run_eager,
    "eager_backward": eager.run_eager_backward,
    "eager_inputs": eager.run_eager_inputs,
    "compile": compile.run_compile,
    "compile_fullgraph": compile.run_compile_fullgraph,
    "compile_fullgraph_backward": compile.run_compile_fullgraph_backward,
    "compile_dynamic": compile.run_compile_dynamic,
    "cudagraphs": compile.run_cudagraphs,
    "compile_visible": compile.run_compile_visible,
    "export_strict": export.run_export_strict,
    "export_nonstrict": export.run_export_nonstrict,
    "export_dynamic": export.run_export_dynamic,
    "export_roundtrip": export_roundtrip.run_export_roundtrip,
    "export_roundtrip_bare": export_roundtrip.run_export_roundtrip_bare,
    "aoti": aoti.run_aoti,
    "aoti_strict": aoti.run_aoti_strict,
    "aoti_fresh_process": aoti.run_aoti_fresh_process,
    "flop_counter": subsystems.run_flop_counter,
    "cpu_fallback": subsystems.run_cpu_fallback,
    "tensor_subclass": subsystems.run_tensor_subclass,
    "vmap": subsystems.run_vmap,
    "opcheck": subsystems.run_opcheck,
}

assert tuple(RUNNERS) == PIPELINES, "every pipeline of the vocabulary has exactly one runner"
