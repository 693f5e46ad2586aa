"""The evidence line of a failure: the most specific line, a graph break's registry id, the full traceback.

The fixtures are real exception messages from CPU-tier cells (torch 2.13, triton 3.7 interpreter), as the
cell's traceback recorded them (machine paths shortened, the user-code stack left out).
"""

from pathlib import Path

import pytest
from torch._dynamo import exc as dynamo_exc

from harness.domain.evidence import full_traceback, graph_break, graph_break_id, graph_break_reasons, most_specific_line

FIXTURES = Path(__file__).parent / "fixtures" / "exceptions"


def real_exception(name: str) -> BaseException:
    kind, message = (FIXTURES / f"{name}.txt").read_text().split("\n", 1)
    cls = getattr(dynamo_exc, kind, None) or {"RuntimeError": RuntimeError}[kind]
    return cls(message.rstrip())


@pytest.mark.parametrize("cell, line", [
    ("add__raw__compile_fullgraph", "[GB0007] Attempted to call function marked as skipped: Dynamo developers have "
                                    "intentionally marked that the function `_patched_getfile`"),
    ("add__raw__export_strict", "[GB0156] Unsupported method call: Dynamo does not know how to trace method "
                                "`data_ptr` of class `UntypedStorage`"),
    ("add__triton_op__export_strict", "[GB4315] RuntimeError when making fake tensor call: RuntimeError(\"Cannot "
                                      "access data pointer of Tensor"),
    ("add__raw__export_nonstrict", "Cannot access data pointer of Tensor (e.g. FakeTensor, FunctionalTensor)."),
])
def test_the_line_names_the_problem_not_the_framing(cell, line):
    assert most_specific_line(real_exception(cell)).startswith(line)


def test_a_graph_break_records_its_type_id_and_explanation():
    evidence = graph_break(real_exception("add__raw__export_strict"))
    assert evidence == {"type": "Unsupported method call", "id": "GB0156",
                        "explanation": "Dynamo does not know how to trace method `data_ptr` of class `UntypedStorage`"}
    assert graph_break(RuntimeError("Cannot access data pointer")) is None


def test_the_registry_gives_the_id_when_the_message_has_no_link():
    error = dynamo_exc.Unsupported("Unsupported method call\n  Explanation: x", gb_type="Unsupported method call")
    assert graph_break_id(error) == "GB0156"


def test_a_chained_error_gives_its_innermost_cause():
    try:
        try:
            raise KeyError("weight")
        except KeyError as inner:
            raise RuntimeError("Backend compiler failed\nsee above") from inner
    except RuntimeError as outer:
        error = outer
    assert most_specific_line(error) == "KeyError: 'weight'"
    text = full_traceback(error)
    assert "KeyError: 'weight'" in text and "The above exception was the direct cause" in text


def test_framing_lines_are_passed_over():
    error = RuntimeError("backend='inductor' raised:\nAssertionError: the grid must be a tuple\n\n"
                         "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace")
    assert most_specific_line(error) == "AssertionError: the grid must be a tuple"


def test_a_very_long_traceback_keeps_both_ends():
    error = RuntimeError("start " + "x" * 50_000 + " end")
    text = full_traceback(error)
    assert len(text) < 21_000 and "start" in text and text.rstrip().endswith("end")


def test_compile_graph_breaks_are_counted_with_their_reasons():
    message = (FIXTURES / "add__raw__export_strict.txt").read_text().split("\n", 1)[1]
    assert graph_break_reasons({message: 2, "Graph break in user code\n  Explanation: x": 1}) == [
        {"reason": "[GB0156] Unsupported method call: Dynamo does not know how to trace method `data_ptr` of class "
                   "`UntypedStorage`", "count": 2},
        {"reason": "Graph break in user code: x", "count": 1},
    ]


def test_an_inductor_error_gives_way_to_the_error_inside():
    from torch._inductor.exc import InductorError

    from harness.domain.evidence import error_type

    error = InductorError(RuntimeError("Cannot access data pointer of Tensor (e.g. FakeTensor)"), None)
    assert error_type(error) == "InductorError(RuntimeError)"
    assert most_specific_line(error) == "Cannot access data pointer of Tensor (e.g. FakeTensor)"


# What Inductor's C++ kernel for random_dropout's reference under compile_dynamic fails with (the CPU tier and the H200
# alike, torch 2.11 and 2.13): one function, so that a real g++ prints it.
BROKEN_CPP = "float mix(float a, float b) {\n    return a ^ b;\n}\n"


@pytest.mark.parametrize("wrapped", [False, True], ids=["CppCompileError", "InductorError"])
def test_a_failed_cpp_build_gives_the_compilers_first_error_not_its_command_line(tmp_path, wrapped):
    """A real build through Inductor's own builder: its CppCompileError is raised from a CalledProcessError whose
    message is the g++ command line, in a folder of the run's own; the line must be what the compiler said."""
    from torch._inductor.cpp_builder import CppBuilder, CppOptions
    from torch._inductor.exc import CppCompileError, InductorError

    source = tmp_path / "broken.cpp"
    source.write_text(BROKEN_CPP)
    with pytest.raises(CppCompileError) as raised:
        CppBuilder("broken", [str(source)], CppOptions(), str(tmp_path)).build()
    error = InductorError(raised.value, None) if wrapped else raised.value
    assert type(raised.value.__cause__).__name__ == "CalledProcessError"
    line = most_specific_line(error)
    assert line.startswith("error: invalid operands of types ") and "to binary " in line and "operator^" in line
    assert line.endswith("(at broken.cpp:2:14)") and str(tmp_path) not in line


def test_a_compiler_killed_for_memory_gives_the_drivers_error():
    from torch._inductor.exc import CppCompileError

    output = "g++: fatal error: Killed signal terminated program cc1plus\ncompilation terminated.\n"
    assert most_specific_line(CppCompileError(["g++", "/tmp/x/k.cpp"], output)) == \
        "error: Killed signal terminated program cc1plus (g++)"


def test_a_failed_link_gives_the_missing_symbol():
    from torch._inductor.exc import CppCompileError

    output = ("/usr/bin/ld: /tmp/x/k.o: in function `run':\nk.cpp:(.text+0x9): undefined reference to `missing(int)'\n"
              "collect2: error: ld returned 1 exit status\n")
    assert most_specific_line(CppCompileError(["g++", "/tmp/x/k.o"], output)) == \
        "error: undefined reference to `missing(int)'"


def test_a_triton_compilation_error_gives_its_message_and_position():
    message = ("at 12:4:\n    x = tl.load(x_ptr + offsets)\n    y = x[0]\n    ^\n"
               "ValueError('unsupported tensor index: constexpr[0]')")
    assert most_specific_line(RuntimeError(message)) == "ValueError('unsupported tensor index: constexpr[0]') (at 12:4)"


def test_the_full_traceback_shows_what_dynamo_hid_with_from_none():
    """Dynamo raises TorchRuntimeError `from None` over the graph break that holds the user's failing line."""
    def user_launch():
        raise RuntimeError("Cannot access data pointer of Tensor (e.g. FakeTensor, FunctionalTensor)")

    try:
        try:
            try:
                user_launch()
            except RuntimeError as cause:
                raise dynamo_exc.Unsupported("RuntimeError when making fake tensor call", "fake call") from cause
        except dynamo_exc.Unsupported:
            raise dynamo_exc.TorchRuntimeError("RuntimeError when making fake tensor call") from None
    except dynamo_exc.TorchRuntimeError as error:
        text = full_traceback(error)
    assert "raised `from None` over this one" in text
    assert "in user_launch" in text and "RuntimeError: Cannot access data pointer" in text


def test_a_hidden_context_outside_torch_stays_hidden():
    try:
        try:
            raise KeyError("an unrelated lookup")
        except KeyError:
            raise ValueError("the grid must be a tuple of ints") from None
    except ValueError as error:
        assert "unrelated lookup" not in full_traceback(error)


def test_an_error_without_a_message_is_named_by_the_line_that_raised_it():
    """A bare `assert` inside torch (cudagraph_trees on the H100 raised one for a data-dependent output) has no
    message: the error line is the failing source line and where it is, never empty."""
    from harness.domain.evidence import most_specific_line

    def check(value):
        if not isinstance(value, int):
            raise AssertionError  # as a bare `assert` does outside pytest's rewriting

    try:
        check("not an int")
    except AssertionError as error:
        line = most_specific_line(error)
    assert line.startswith("raise AssertionError  # as a bare") and "test_evidence.py:" in line
