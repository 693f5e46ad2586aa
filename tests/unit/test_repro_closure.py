"""repro's harness part: the source of the functions a cell runs and of what they reach, standalone."""

from __future__ import annotations

import ast
import re

import pytest

from harness.domain.pipelines import aoti_loader, export_loader
from harness.domain.pipelines.compile import run_compile_fullgraph
from harness.domain.repro_closure import ReproClosureError, SourceClosure
from harness.domain.styles import build_raw


def _defined(text: str) -> list[str]:
    return [node.name for node in ast.parse(text).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]


def test_a_runner_brings_what_it_reaches_dependencies_first_and_no_harness_import():
    closure = SourceClosure()
    assert closure.add(run_compile_fullgraph) == "run_compile_fullgraph"
    text = closure.text()
    defined = _defined(text)
    assert {"compiled_for", "check_result", "staged", "CellContext", "assert_close"} <= set(defined)
    assert defined.index("StageFailure") < defined.index("staged")  # a class before the code that raises it
    assert not re.search(r"^\s*(from|import) harness\b", text, re.MULTILINE)
    assert "import torch" in closure.imports()
    assert "run_eager" not in defined  # only what the runner reaches


def test_a_harness_import_inside_a_function_becomes_pass_and_its_name_is_defined():
    closure = SourceClosure()
    closure.add(run_compile_fullgraph)
    text = closure.text()
    assert "from harness" not in text and "def unwrap(" in text  # compile_stage imports unwrap inside


def test_docstrings_are_left_out_and_a_docstring_only_body_becomes_pass():
    closure = SourceClosure()
    closure.add(run_compile_fullgraph)
    text = closure.text()
    assert "Dynamo, Inductor and the first run happen inside one call" not in text  # compiled_call's docstring
    assert "class NotTracedInto" not in text  # not reached
    exec(compile("\n".join(closure.imports()) + "\n" + text, "<closure>", "exec"), {})


def test_two_harness_objects_of_one_name_get_apart_and_references_follow():
    closure = SourceClosure()
    first, second = closure.add(aoti_loader.main), closure.add(export_loader.main)
    assert (first, second) == ("main", "main_export_loader")
    text = closure.text()
    assert "def main_export_loader(argv: list[str]) -> int:" in text
    assert text.count("def _write(") == 1 and "_write_export_loader(report_path, report)" in text
    namespace: dict = {}
    exec(compile("\n".join(closure.imports()) + "\n" + text, "<closure>", "exec"), namespace)
    assert callable(namespace["main_export_loader"]) and callable(namespace["main"])


def test_an_override_is_copied_under_the_name_it_replaces():
    closure = SourceClosure(overrides={("harness.domain.pipelines.export_loader", "import_kernel_op"):
                                       ("harness.domain.repro_main", "import_kernel_op_from_script")})
    closure.add(export_loader.main)
    text = closure.text()
    assert "def import_kernel_op(consumer_import" in text and "runpy.run_path" in text
    assert "specs_from_source" not in text  # the registry's loader is not reached any more


def test_a_non_harness_object_is_refused():
    with pytest.raises(ReproClosureError, match="is not a harness function or class"):
        SourceClosure().add(ast.parse)


def test_a_builder_carries_the_names_it_builds_with():
    closure = SourceClosure()
    closure.add(build_raw)
    assert {"named_function", "visible_output", "identity_wrap", "BuiltOp"} <= set(_defined(closure.text()))


def test_every_style_call_site_and_pipeline_of_a_catalogue_kernel_makes_a_script_without_the_harness():
    from harness.domain.registry import load_specs
    from harness.domain.repro import write_repro
    from harness.vocab import CALL_SITE_STYLES, PIPELINES, STYLES

    spec = load_specs()["rms_norm"]  # saved intermediates, a scalar for the backward, a backward
    asked = [(style, "compile_fullgraph", "cpu") for style in (*STYLES, *CALL_SITE_STYLES)]
    asked += [("triton_op", pipeline, "cpu") for pipeline in PIPELINES] + [("raw", "aoti_fresh_process", "gpu")]
    for style, pipeline, tier in asked:
        text = write_repro(spec, style, pipeline, tier, name_machine=False)
        compile(text, f"{style}/{pipeline}", "exec")
        assert not re.search(r"^\s*(from|import) (harness|kernels)\b", text, re.MULTILINE), (style, pipeline)
        assert ('TRITON_INTERPRET"] = "1"' in text) == (tier == "cpu")


def test_a_name_the_harness_package_makes_on_demand_is_followed_to_its_definition():
    """`from harness import KernelSpec` (the README's plug-in API) is a lazy attribute of the package."""
    closure = SourceClosure()
    closure.add_names("harness", {"KernelSpec"})
    assert "class KernelSpec:" in closure.text()
