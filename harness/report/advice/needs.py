"""What a user needs, as pipelines: the one table `advise` reads (docs/advise-and-repro.md prints it).

A need is met for a kernel when every one of its pipelines passes. Where the chart
has a capability with the same meaning, the need takes the capability's pipelines,
so the advice and the chart cannot disagree about what "training" means.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.report.markdown.capabilities import CAPABILITIES


@dataclass(frozen=True)
class Need:
    name: str
    pipelines: tuple[str, ...]
    meaning: str


def _capability_pipelines(name: str) -> tuple[str, ...]:
    for capability in CAPABILITIES:
        if capability.name == name:
            return capability.pipelines
    raise KeyError(name)


NEEDS: tuple[Need, ...] = (
    Need("inference", ("eager",), "a forward call in eager mode"),
    Need("inputs", ("eager_inputs",), "eager over every declared dtype, several sizes and strided views"),
    Need("training", _capability_pipelines("Supports training"),
         "backward in eager and under torch.compile(fullgraph=True) (the chart's training row)"),
    Need("compile", ("compile",), "torch.compile, graph breaks allowed"),
    Need("fullgraph", ("compile_fullgraph",), "torch.compile(fullgraph=True): no graph break"),
    Need("dynamic", _capability_pipelines("Supports dynamic shapes"),
         "torch.compile(dynamic=True) and torch.export with dynamic dims"),
    Need("traced", ("compile_visible",), "Inductor sees the Triton kernel itself (it appears in the generated code)"),
    Need("cudagraphs", ("cudagraphs",), "torch.compile(mode='reduce-overhead') runs under CUDA graphs"),
    Need("export", ("export_nonstrict",), "torch.export.export with its default strict=False"),
    Need("export_strict", ("export_strict",), "torch.export.export(strict=True)"),
    Need("ship_export", ("export_roundtrip",),
         "torch.export.save, then load and run in a fresh process that imports the kernel's module"),
    Need("ship_export_bare", ("export_roundtrip_bare",),
         "the saved ExportedProgram loads and runs in a process that imports only torch"),
    Need("aoti", ("aoti",), "AOTInductor: export (non-strict), `aoti_compile_and_package`, load, run"),
    Need("aoti_strict", ("aoti_strict",), "AOTInductor from a strict export"),
    Need("aoti_deploy", ("aoti_fresh_process",),
         "the AOTInductor package runs in a process that never imported the kernel's module"),
    Need("vmap", ("vmap",), "torch.vmap"),
    Need("opcheck", ("opcheck",), "torch.library.opcheck passes"),
    Need("flop_counter", ("flop_counter",), "FlopCounterMode counts the kernel's flops"),
    Need("cpu_fallback", ("cpu_fallback",), "CPU tensors reach a CPU implementation"),
    Need("tensor_subclass", ("tensor_subclass",), "a tensor subclass's `__torch_dispatch__` sees the op"),
    Need("subsystems",
         _capability_pipelines("Supports PyTorch subsystems like FlopCounterMode, CPU Fallback, Tensor Subclasses"),
         "FlopCounterMode, CPU fallback and a tensor subclass (the chart's subsystems row)"),
)

NEEDS_BY_NAME: dict[str, Need] = {need.name: need for need in NEEDS}


class UnknownNeed(ValueError):
    """A --needs name this table does not hold; the message lists the known ones."""


def parse_needs(text: str) -> list[Need]:
    """`training,fullgraph` -> the Need records, in the order given, each once."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise UnknownNeed(f"--needs is empty; known needs: {', '.join(NEEDS_BY_NAME)}")
    unknown = [name for name in names if name not in NEEDS_BY_NAME]
    if unknown:
        raise UnknownNeed(f"--needs: unknown need {', '.join(repr(n) for n in unknown)}; "
                          f"known needs: {', '.join(NEEDS_BY_NAME)}")
    return [NEEDS_BY_NAME[name] for name in dict.fromkeys(names)]
