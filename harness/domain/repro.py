"""One cell as a standalone Python script: kernel source, the style's wrapping, the pipeline, inputs and check.

The script needs torch and triton (and the user's own library, if the spec imports
it), never the harness: good enough to paste into an upstream issue. It mirrors
harness.domain.styles and harness.domain.pipelines for the styles and pipelines in
SUPPORTED_STYLES / SUPPORTED_PIPELINES, uses the same seed and size, and checks with the
harness's own checking module (inlined), so it raises the cell's error or mismatch and
exits 0 where the cell passes.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

import torch

from harness.domain import checking, interpreter, tolerance
from harness.domain.repro_source import kernel_spec_stand_in, standalone_module_source
from harness.domain.spec import KernelSpec, launched_count, no_launch_wrap
from harness.vocab import cell_id

SUPPORTED_STYLES: tuple[str, ...] = ("native", "raw", "autograd_function", "custom_op", "triton_op")
SUPPORTED_PIPELINES: tuple[str, ...] = (
    "eager", "eager_backward", "compile", "compile_fullgraph", "compile_fullgraph_backward", "compile_dynamic",
    "export_strict", "export_nonstrict", "aoti", "aoti_strict",
)


class ReproUnsupported(Exception):
    """A cell this generator cannot write yet; the message says which part."""


# ---- the script's fixed parts: wraps, inputs, reference check (mirrors of harness.domain.pipelines.common) ----

WRAPS = '''
def identity_wrap(kernel):
    """The `wrap` for raw launches: the kernel itself."""
    return kernel


class _SkippedLaunch:
    def __getitem__(self, grid):
        return lambda *args, **kwargs: None


def no_launch_wrap(kernel):
    """Allocates outputs, launches nothing: the launch under it is a fake (meta) implementation."""
    return _SkippedLaunch()


def _as_tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def visible_output(launched):
    """What the user sees of a launch: the outputs, without the intermediates saved for the backward."""
    if not SPEC.saved_intermediates:
        return launched
    values = tuple(launched)
    if SPEC.num_outputs == 1:
        return values[0]
    return values[:SPEC.num_outputs] if SPEC.num_outputs > 1 else None


def _grads_for_all_arguments(grads):
    """Autograd wants one gradient per argument; the spec's backward gives one per differentiable argument."""
    by_name = dict(zip(SPEC.differentiable_names, grads))
    return tuple(by_name.get(name) for name in SPEC.argument_names)
'''

HELPERS = '''
def inputs(size=None):
    """The cell's inputs: the same seed gives the same values for every style."""
    generator = torch.Generator().manual_seed(SEED)
    return SPEC.make_inputs(size or SPEC.sizes[0], DEVICE, generator)


def clone_args(args):
    return tuple(a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args)


def mutated_args(args):
    names = SPEC.argument_names
    return tuple(args[names.index(name)] for name in SPEC.mutates_args)


def expected_result(args):
    copies = clone_args(args)
    with torch.no_grad():
        output = SPEC.reference(*copies)
    return output, mutated_args(copies)


def synchronize():
    if DEVICE.type == "cuda":
        torch.cuda.synchronize(DEVICE)


def check_result(output, args, expected_output, expected_mutations):
    if SPEC.num_outputs > 0:
        assert_matches(output, expected_output)
    if SPEC.mutates_args:
        assert_matches(mutated_args(args), expected_mutations, what="mutated arguments")


def check_call(call, args):
    """Run call(*args), then check its output and mutations against the reference."""
    expected_output, expected_mutations = expected_result(args)
    output = call(*args)
    synchronize()
    check_result(output, args, expected_output, expected_mutations)


def _with_grad(args):
    names = SPEC.differentiable_names
    return tuple(a.detach().clone().requires_grad_(True) if name in names and isinstance(a, torch.Tensor) else a
                 for name, a in zip(SPEC.argument_names, args))


def _differentiable(args):
    return [a for name, a in zip(SPEC.argument_names, args) if name in SPEC.differentiable_names]


def check_backward(call):
    """Forward and backward through call, gradients checked against the reference's autograd."""
    args = inputs()
    reference_args = _with_grad(clone_args(args))
    reference_output = SPEC.reference(*reference_args)
    outputs = list(reference_output) if isinstance(reference_output, (tuple, list)) else [reference_output]
    generator = torch.Generator().manual_seed(SEED + 1)
    grad_outputs = [torch.randn(o.shape, generator=generator).to(device=o.device, dtype=o.dtype) for o in outputs]
    reference_grads = torch.autograd.grad(reference_output, _differentiable(reference_args), grad_outputs)
    test_args = _with_grad(args)
    output = call(*test_args)
    synchronize()
    assert_matches(output, reference_output.detach() if isinstance(reference_output, torch.Tensor) else reference_output)
    got = list(output) if isinstance(output, (tuple, list)) else [output]
    grads = torch.autograd.grad(got, _differentiable(test_args), grad_outputs)
    synchronize()
    assert_matches(list(grads), list(reference_grads), what="gradients")

'''


def _signature(names: tuple[str, ...], kinds: tuple[type, ...] | None = None) -> str:
    if kinds is None:
        return ", ".join(names)
    return ", ".join(f"{name}: {_annotation(kind)}" for name, kind in zip(names, kinds))


def _annotation(kind: type) -> str:
    return "torch.Tensor" if kind is torch.Tensor else kind.__name__


def _returns(count: int) -> str:
    if count == 0:
        return "None"
    if count == 1:
        return "torch.Tensor"
    return "tuple[" + ", ".join(["torch.Tensor"] * count) + "]"


def _saved_count(spec: KernelSpec) -> int:
    """How many tensors the spec saves for backward, found as the harness finds it: a launch on meta tensors."""
    assert spec.save_for_backward is not None
    probe = spec.make_inputs(spec.sizes[0], torch.device("meta"), torch.Generator())
    with torch.device("meta"):
        probe_output = spec.launch(no_launch_wrap, *probe)
    return len(spec.save_for_backward(probe, probe_output))


def style_source(spec: KernelSpec, style: str) -> str:
    """Code that defines `op`, the callable the style makes (mirrors harness.domain.styles)."""
    names = spec.argument_names
    args = _signature(names)
    grads = ", ".join(f"grad{i}" for i in range(max(spec.num_outputs, 1)))
    if style == "native":
        return "op = SPEC.reference  # the control: the reference itself, no Triton\n"
    if style == "raw":
        return (f"def {spec.name}({args}):\n    return visible_output(SPEC.launch(identity_wrap, {args}))\n\n\n"
                f"op = {spec.name}\n")
    if style == "autograd_function":
        return (f"class {spec.name}_function(torch.autograd.Function):\n"
                f"    @staticmethod\n    def forward(ctx, {args}):\n"
                f"        launched = SPEC.launch(identity_wrap, {args})\n"
                f"        if SPEC.save_for_backward is not None:\n"
                f"            ctx.save_for_backward(*SPEC.save_for_backward(({args},), launched))\n"
                + "".join(f"            ctx.scalar_{name} = {name}\n" for name in spec.backward_scalars)
                + "        return visible_output(launched)\n\n"
                f"    @staticmethod\n    def backward(ctx, {grads}):\n"
                f"        if SPEC.backward is None:\n"
                f"            raise RuntimeError(\"kernel {spec.name} declares no backward\")\n"
                f"        grads = _as_tuple(SPEC.backward(identity_wrap, *ctx.saved_tensors, {grads}{_scalar_keywords(spec)}))\n"
                f"        return _grads_for_all_arguments(grads)\n\n\n"
                f"op = {spec.name}_function.apply\n")
    if style in ("custom_op", "triton_op"):
        return _library_op_source(spec, style)
    raise ReproUnsupported(f"repro does not support the style {style!r} yet (supported: {', '.join(SUPPORTED_STYLES)})")


def _scalar_keywords(spec: KernelSpec) -> str:
    """`, offset=ctx.scalar_offset`: the scalars the backward asked for (KernelSpec.backward_scalars)."""
    return "".join(f", {name}=ctx.scalar_{name}" for name in spec.backward_scalars)


def _library_op_source(spec: KernelSpec, style: str) -> str:
    namespace, triton_op = f"tcm_{style}", style == "triton_op"
    decorator = "torch.library.triton_op" if triton_op else "torch.library.custom_op"
    wrap = "torch.library.wrap_triton" if triton_op else "identity_wrap"
    names, kinds = spec.argument_names, tuple(kind for _, kind in spec.arguments)
    args = _signature(names)
    lines = [f"@{decorator}(\"{namespace}::{spec.name}\", mutates_args={spec.mutates_args!r})",
             f"def {spec.name}_op({_signature(names, kinds)}) -> {_returns(launched_count(spec))}:",
             f"    return SPEC.launch({wrap}, {args})", ""]
    if not triton_op:
        lines += [f"@{spec.name}_op.register_fake", f"def _({args}):",
                  f"    return SPEC.launch(no_launch_wrap, {args})", ""]
    if spec.backward is not None and spec.save_for_backward is not None:
        saved = tuple(f"saved{i}" for i in range(_saved_count(spec)))
        grads = tuple(f"grad{i}" for i in range(max(spec.num_outputs, 1)))
        tensors, scalars = saved + grads, spec.backward_scalars
        kinds_by_name = dict(spec.arguments)
        parameters = _signature(tensors + scalars, (torch.Tensor,) * len(tensors) + tuple(kinds_by_name[n] for n in scalars))
        keywords = "".join(f", {name}={name}" for name in scalars)
        grad_count = len(spec.differentiable_names)
        lines += ["", f"@{decorator}(\"{namespace}::{spec.name}_backward\", mutates_args={spec.backward_mutates!r})",
                  f"def {spec.name}_backward_op({parameters}) -> {_returns(grad_count)}:",
                  f"    grads = tuple(SPEC.backward({wrap}, {', '.join(tensors)}{keywords}))",
                  f"    return grads if {grad_count} > 1 else grads[0]", ""]
        if not triton_op:
            lines += [f"@{spec.name}_backward_op.register_fake", f"def _({', '.join(tensors + scalars)}):",
                      f"    grads = tuple(SPEC.backward(no_launch_wrap, {', '.join(tensors)}{keywords}))",
                      f"    return grads if {grad_count} > 1 else grads[0]", ""]
        lines += ["", "def _setup_context(ctx, inputs, output):",
                  "    ctx.save_for_backward(*SPEC.save_for_backward(inputs, output))"]
        if spec.saved_intermediates:
            lines += [f"    ctx.mark_non_differentiable(*tuple(output)[{spec.num_outputs}:])  # the hidden outputs"]
        lines += [f"    ctx.scalar_{name} = inputs[{spec.argument_names.index(name)}]" for name in scalars]
        passed = "".join(f", ctx.scalar_{name}" for name in scalars)
        lines += ["", "", "def _backward(ctx, *grad_outputs):",
                  f"    grads = {spec.name}_backward_op(*ctx.saved_tensors, *grad_outputs[:{max(spec.num_outputs, 1)}]"
                  f"{passed})",
                  "    return _grads_for_all_arguments(_as_tuple(grads))", "", "",
                  f"{spec.name}_op.register_autograd(_backward, setup_context=_setup_context)", ""]
    if spec.saved_intermediates:  # the operator's intermediates are hidden outputs: the user sees the outputs alone
        lines += ["", f"def {spec.name}({args}):", f"    return visible_output({spec.name}_op({args}))", "",
                  "", f"op = {spec.name}"]
    else:
        lines += ["", f"op = {spec.name}_op"]
    return "\n".join(lines) + "\n"


PIPELINE_SOURCES: dict[str, str] = {
    "eager": "check_call(op, inputs())",
    "eager_backward": "check_backward(op)",
    "compile": "check_call(torch.compile(op), inputs())",
    "compile_fullgraph": "check_call(torch.compile(op, fullgraph=True), inputs())",
    "compile_fullgraph_backward": "check_backward(torch.compile(op, fullgraph=True))",
    "compile_dynamic": ("compiled = torch.compile(op, fullgraph=True, dynamic=True)\n"
                        "for size in SPEC.sizes:\n    check_call(compiled, inputs(size))"),
    "export_strict": ("args = inputs()\nprogram = torch.export.export(call_module(op), args, strict=True)\n"
                      "check_call(program.module(), args)"),
    "export_nonstrict": ("args = inputs()\nprogram = torch.export.export(call_module(op), args, strict=False)\n"
                         "check_call(program.module(), args)"),
}
for _strict in (False, True):
    PIPELINE_SOURCES["aoti_strict" if _strict else "aoti"] = (
        "import tempfile\n\nargs = inputs()\n"
        f"program = torch.export.export(call_module(op), args, strict={_strict})\n"
        "with tempfile.TemporaryDirectory() as workdir:\n"
        "    path = torch._inductor.aoti_compile_and_package(program, package_path=f\"{workdir}/cell.pt2\")\n"
        "    runner = torch._inductor.aoti_load_package(path)\n"
        "    check_call(runner, args)")


def pipeline_source(spec: KernelSpec, pipeline: str) -> str:
    """The pipeline's code; compile_dynamic marks the spec's dynamic dims within its dynamic_bounds, as the harness."""
    if pipeline != "compile_dynamic" or spec.dynamic_bounds is None:
        return PIPELINE_SOURCES[pipeline]
    dims = spec.dynamic_dims
    low, high = spec.dynamic_bounds
    marks = [f"    torch._dynamo.mark_dynamic(args[{index}], {dim}, min={low}, max={high})"
             for index, (name, kind) in enumerate(spec.arguments) if kind is torch.Tensor
             for dim in (dims.get(name, ()) if dims is not None else (0,))]
    return ("compiled = torch.compile(op, fullgraph=True, dynamic=True)\n"
            "for size in SPEC.sizes:\n    args = inputs(size)\n" + "\n".join(marks) + "\n    check_call(compiled, args)")


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line.strip() else line for line in text.splitlines())


def _module_of(spec: KernelSpec) -> Any:
    """The module that defines the spec (its `source`: a module name, or a path the registry imported)."""
    if spec.source and Path(spec.source).is_file():
        wanted = Path(spec.source).resolve()
        for module in list(sys.modules.values()):
            file = getattr(module, "__file__", None)
            if file and Path(file).resolve() == wanted:
                return module
    if spec.source in sys.modules:
        return sys.modules[spec.source]
    return sys.modules.get(spec.launch.__module__)


def _header(spec: KernelSpec, style: str, pipeline: str, tier: str, expected: dict[str, Any] | None) -> str:
    import platform

    import triton

    where = torch.cuda.get_device_name() if tier == "gpu" and torch.cuda.is_available() else \
        "CPU, Triton interpreter (TRITON_INTERPRET=1)"
    if expected is None:
        should = "not given (pass --results FILE to copy the recorded outcome here)"
    elif expected["outcome"] == "pass":
        should = "pass: the script exits 0 and prints PASS"
    else:
        should = (f"{expected['outcome']} at stage {expected.get('stage')}: "
                  f"{expected.get('error_type')}: {expected.get('error')}")
    lines = [
        f"Reproducer for the triton-compat-matrix cell {cell_id(spec.name, style, pipeline)}",
        f"  kernel {spec.name} ({spec.description or 'no description'}), style {style}, pipeline {pipeline}",
        f"Generated with: python {platform.python_version()}, torch {torch.__version__}, triton {triton.__version__},"
        f" {where}",
        f"Recorded outcome: {should}",
        "Run: python repro.py   (needs torch and triton, not the harness)",
    ]
    return "\n".join("# " + line for line in lines) + "\n"


def write_repro(spec: KernelSpec, style: str, pipeline: str, tier: str, seed: int = 0,
                expected: dict[str, Any] | None = None) -> str:
    """The reproducer's text for one cell; ReproUnsupported for a style or pipeline it cannot write yet."""
    if pipeline not in SUPPORTED_PIPELINES:
        raise ReproUnsupported(f"repro does not support the pipeline {pipeline!r} yet "
                               f"(supported: {', '.join(SUPPORTED_PIPELINES)})")
    wrapping = style_source(spec, style)
    module = _module_of(spec)
    if module is None:
        raise ReproUnsupported(f"kernel {spec.name}: cannot find the module that defines its launch")
    device = "cuda" if tier == "gpu" else "cpu"
    interpret = ("import os\n\nos.environ[\"TRITON_INTERPRET\"] = \"1\"  # CPU tier: Triton's interpreter, on CPU"
                 " tensors; set before triton is imported\n" if tier == "cpu" else "import os\n")
    parts = [
        "#!/usr/bin/env python3\n" + _header(spec, style, pipeline, tier, expected),
        "from __future__ import annotations\n",
        interpret,
        "import torch\n",
        "# ---- stand-in for the harness's KernelSpec (a plain record) ----\n" + kernel_spec_stand_in(),
        standalone_module_source(module),
        f"SPEC = next(v for v in list(globals().values()) if isinstance(v, KernelSpec) and v.name == {spec.name!r})",
        f"SEED = {seed}\nDEVICE = torch.device({device!r})\n",
        "# ---- the check against the reference (the harness's checking module) ----\n" + _checking_source(),
        WRAPS, HELPERS,
        f"# ---- the style: {style} ----\n" + wrapping,
        _call_module_source(spec),
        f"# ---- the pipeline: {pipeline} ----\n",
        "def main():\n"
        + (_indent(_interpreter_setup()) + "\n" if tier == "cpu" else "")
        + "    torch.manual_seed(SEED)\n    torch._dynamo.reset()\n"
        + (_ALLOCATOR_SETUP if "triton-allocator" in spec.requires and tier == "gpu" else "")
        + _indent(pipeline_source(spec, pipeline)) + "\n"
        + f"    print(\"PASS: {cell_id(spec.name, style, pipeline)} matches the reference\")\n",
        "\nif __name__ == \"__main__\":\n    main()\n",
    ]
    return "\n\n".join(part.strip("\n") + "\n" for part in parts)


# What the harness sets around such a cell (harness.domain.machine.provided), as the script's own program start.
_ALLOCATOR_SETUP = ("    import triton\n\n    # the kernel makes TMA descriptors on the device: global scratch from torch\n"
                    "    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, "
                    "device=\"cuda\"))\n")


def _call_module_source(spec: KernelSpec) -> str:
    """export takes modules: one whose `forward(self, x, ...)` only calls the op (harness.domain.pipelines.export)."""
    args = _signature(spec.argument_names)
    return (f"def call_module(call):\n    class {spec.name}_module(torch.nn.Module):\n"
            f"        def forward(self, {args}):\n            return call({args})\n\n    return {spec.name}_module()\n")


def _checking_source() -> str:
    """The tolerance model and the checker, as the harness has them, less their imports of each other."""
    source = inspect.getsource(tolerance) + "\n\n" + inspect.getsource(checking)
    return "\n".join(line for line in source.splitlines()
                     if line.strip() != "from __future__ import annotations" and not line.startswith("from harness."))


def _interpreter_setup() -> str:
    """What the CPU tier adds to Triton's interpreter (harness.domain.interpreter): a benchmark for autotune."""
    body = inspect.getsource(interpreter.wall_clock_bench) + "\n" + inspect.getsource(
        interpreter.enable_autotune_on_interpreter)
    return "import time\n\n" + body + "\nenable_autotune_on_interpreter()"
