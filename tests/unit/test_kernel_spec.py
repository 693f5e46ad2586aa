"""KernelSpec and the registry: broken specs and sources fail with everything missing named."""

import dataclasses
import textwrap

import pytest
import torch

from harness.domain import registry
from harness.domain.registry import KernelSourceError, load_specs, load_specs_once
from harness.domain.spec import KernelSpec, kernel_name
from kernels import add


def test_a_broken_spec_names_every_problem():
    with pytest.raises(ValueError) as error:
        KernelSpec(name="bad name", kernels=(), arguments=(("x", list),), launch=None, reference=torch.sin,
                   make_inputs=lambda *a: (), mutates_args=("y",), sizes=(4, 4))
    message = str(error.value)
    for part in ("identifier", "kernels is empty", "launch must be callable", "type <class 'list'>",
                 "mutates_args names 'y'", "two different sizes"):
        assert part in message


def test_backward_needs_save_for_backward():
    with pytest.raises(ValueError, match="backward and save_for_backward come together"):
        dataclasses.replace(add.SPEC, backward=lambda *a: ())


def test_kernel_name_sees_through_wrappers():
    class Wrapper:
        fn = add.add_kernel

    assert kernel_name(add.add_kernel) == kernel_name(Wrapper()) == "add_kernel"


def test_builtin_catalogue_loads():
    specs = load_specs()
    assert {"add", "sin", "silu"} <= set(specs)
    assert specs["add"].source == "kernels.add"


def test_kernels_from_a_path(tmp_path):
    source = tmp_path / "mine.py"
    source.write_text(textwrap.dedent("""
        import dataclasses
        from kernels import add
        MY = dataclasses.replace(add.SPEC, name="my_add")
    """))
    assert load_specs([str(source)])["my_add"].source == str(source)


@pytest.mark.parametrize(
    "body, message",
    [
        ("X = 1\n", "defines no KernelSpec"),
        ("raise ImportError('no triton here')\n", "raised on import: ImportError: no triton here"),
        ("import dataclasses\nfrom kernels import add\nA = dataclasses.replace(add.SPEC, name='add')\n",
         "kernel name 'add' is already defined by kernels.add"),
        ("SPECS = [1]\n", "SPECS holds int, not KernelSpec"),
    ],
)
def test_bad_kernel_sources_get_one_line(tmp_path, body, message):
    source = tmp_path / "bad.py"
    source.write_text(body)
    with pytest.raises(KernelSourceError) as error:
        load_specs([str(source)])
    assert message in str(error.value) and "\n" not in str(error.value)


def test_missing_module_or_file():
    with pytest.raises(KernelSourceError, match="no such module or file"):
        load_specs(["no_such_module_tcm"])
    with pytest.raises(KernelSourceError, match="no such kernel file"):
        load_specs(["/no/such/file.py"])


def test_a_worker_loads_its_sources_once_and_a_bad_source_fails_every_time(tmp_path, monkeypatch):
    source = tmp_path / "mine_once.py"
    source.write_text("import dataclasses\nfrom kernels import add\nMY = dataclasses.replace(add.SPEC, name='my_once')\n")
    loads = []
    monkeypatch.setattr(registry, "load_specs", lambda sources: loads.append(sources) or load_specs(sources))
    first = load_specs_once([str(source)])
    first.pop("add")  # a caller's change stays in its own copy
    second = load_specs_once([str(source)])
    assert loads == [[str(source)]] and second["my_once"] is first["my_once"] and "add" in second
    assert second == load_specs([str(source)])
    bad = tmp_path / "bad_once.py"
    bad.write_text("X = 1\n")
    for _ in range(2):
        with pytest.raises(KernelSourceError, match="defines no KernelSpec"):
            load_specs_once([str(bad)])
    assert loads == [[str(source)], [str(bad)], [str(bad)]]
