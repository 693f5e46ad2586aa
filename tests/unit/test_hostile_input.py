"""Hostile and broken input, through the real CLI: one `error:` line naming the file, exit 2, nothing on disk touched.

Each case writes its files into a fresh folder, runs `python -m harness ...` in a subprocess,
and checks the exit status, that stderr is exactly one line starting `error:` and naming the
culprit, that stdout is empty, and that every file that existed before is byte for byte the
same afterwards (no temp file left behind either). Tolerated input (a torn last line, names
the vocabulary does not know) gets a `warning:` line and exit 0 instead.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.results import SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[2]
HEADER = {"record": "header", "schema": SCHEMA_VERSION, "started": "2025-01-02T03:04:05+00:00", "harness_version": "0.0.test",
          "command": ["python", "-m", "harness", "run"],
          "environment": {"torch": "2.13.0+cpu", "triton": "3.7.1", "tier": "cpu", "interpreter": True, "python": "3.11.7"}}
KEEP = "keep me: this output existed before the command\n"
SPEC_HEAD = "import torch\nfrom harness.domain.spec import KernelSpec\n"
# A valid spec (the catalogue's add) with one field replaced: what a plug-in with one bug looks like.
ADD_WITH = ("import dataclasses\nfrom kernels import add\n\n{code}\n"
            "SPEC = dataclasses.replace(add.SPEC, name='mine', {field}={field})\n")


def cell(kernel: str = "add", style: str = "raw", pipeline: str = "eager", outcome: str = "pass", **fields: object) -> dict:
    return {"record": "cell", "id": f"{kernel}/{style}/{pipeline}", "kernel": kernel, "style": style, "pipeline": pipeline,
            "outcome": outcome, **fields}


def jsonl(*records: dict) -> str:
    return "".join(json.dumps(record, sort_keys=True) + "\n" for record in records)


GOOD = jsonl(HEADER, cell(), cell(style="native"))
OTHER_TRITON = {**HEADER, "environment": {**HEADER["environment"], "triton": "3.6.0"}}


@dataclass
class Case:
    argv: list[str]  # {name} is replaced by the path of file `name` in the case's folder
    files: dict[str, str | bytes | None] = field(default_factory=dict)  # None: a folder
    names: str = ""  # what the error line must contain, besides `error: `
    names_file: str = ""  # the file (from `files`) the error line must name; "" when the problem is a name
    code: int = 2


CASES: dict[str, Case] = {
    # results files, read by `report` (the same reader serves diff, docs, merge, history, baseline)
    "empty results file": Case(["report", "{r}", "-o", "{out.md}"], {"r": ""}, "empty results file", "r"),
    "torn middle line": Case(["report", "{r}", "-o", "{out.md}"], {"r": jsonl(HEADER) + '{"record": "cell", "id": "ad\n'
                                                                 + jsonl(cell())}, "only as the last line", "r"),
    "unknown schema version": Case(["report", "{r}", "-o", "{out.md}"], {"r": jsonl({**HEADER, "schema": 99}, cell())},
                                   "schema version 99 is unknown", "r"),
    "not JSON at all": Case(["report", "{r}", "-o", "{out.md}"], {"r": "# a Markdown report, not results\n"},
                            "not a results file", "r"),
    "binary garbage": Case(["report", "{r}", "-o", "{out.md}"], {"r": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff"},
                           "binary data", "r"),
    "not UTF-8": Case(["report", "{r}", "-o", "{out.md}"], {"r": b"\xff\xfe\xfd results?\n"}, "not UTF-8", "r"),
    "a folder, not a file": Case(["report", "{r}", "-o", "{out.md}"], {"r": None}, "is a folder", "r"),
    "missing file": Case(["report", "{r}", "-o", "{out.md}"], {}, "no such results file", "r"),
    "header is a cell": Case(["report", "{r}", "-o", "{out.md}"], {"r": jsonl(cell())}, "not a results header", "r"),
    "header environment not an object": Case(["report", "{r}", "-o", "{out.md}"],
                                             {"r": jsonl({**HEADER, "environment": "gpu"}, cell())},
                                             "header field 'environment' must be an object", "r"),
    "duplicate cell, two verdicts": Case(["report", "{r}", "-o", "{out.md}"],
                                         {"r": jsonl(HEADER, cell(), cell(outcome="fail", stage="run"))},
                                         "add/raw/eager is recorded twice with different results", "r"),
    "outcome of the wrong type": Case(["report", "{r}", "-o", "{out.md}"], {"r": jsonl(HEADER, cell(outcome=3))},
                                      "field 'outcome' must be a non-empty string", "r"),
    "error of the wrong type": Case(["diff", "{r}", "{r}", "-o", "{out.md}"],
                                    {"r": jsonl(HEADER, cell(outcome="fail", error={"html": "<b>"}))},
                                    "field 'error' must be a string or null", "r"),
    "id that is not its cell": Case(["report", "{r}", "-o", "{out.md}"], {"r": jsonl(HEADER, {**cell(), "id": "sin/raw/eager"})},
                                    "does not match its kernel/style/pipeline", "r"),
    "output would overwrite the input": Case(["report", "{r}", "-o", "{r}"], {"r": GOOD}, "would overwrite an input", "r"),
    "diff output would overwrite an input": Case(["diff", "{a}", "{b}", "-o", "{b}"], {"a": GOOD, "b": GOOD},
                                                 "would overwrite an input", "b"),
    # several files
    "merge of mixed environments": Case(["merge", "{a}", "{b}", "-o", "{out.jsonl}"],
                                        {"a": GOOD, "b": jsonl(OTHER_TRITON, cell(pipeline="compile"))},
                                        "in triton ('3.6.0' vs '3.7.1')", "b"),
    "history with a broken file": Case(["history", "{a}", "{b}", "-o", "{out.md}"], {"a": GOOD, "b": "garbage\n"},
                                       "not a results file", "b"),
    # documents
    "docs without markers": Case(["docs", "{doc.md}", "--results", "{r}"], {"r": GOOD, "doc.md": "# My doc\n\nno markers\n"},
                                 "found 0 begin, 0 end", "doc.md"),
    "docs with unbalanced markers": Case(["docs", "{doc.md}", "--results", "{r}"],
                                         {"r": GOOD, "doc.md": "<!-- api-choice:begin -->\nx\n<!-- api-choice:begin -->\n"},
                                         "found 2 begin, 0 end", "doc.md"),
    "docs markers in the wrong order": Case(["docs", "{doc.md}", "--results", "{r}"],
                                            {"r": GOOD, "doc.md": "<!-- api-choice:end -->\nx\n<!-- api-choice:begin -->\n"},
                                            "followed by one", "doc.md"),
    "docs file is binary": Case(["docs", "{doc.md}", "--results", "{r}"], {"r": GOOD, "doc.md": b"\xff\xfe\x00binary"},
                                "not UTF-8 text", "doc.md"),
    "docs file is a folder": Case(["docs", "{doc.md}", "--results", "{r}"], {"r": GOOD, "doc.md": None}, "cannot be read",
                                  "doc.md"),
    # outputs that cannot be written
    "output under a file": Case(["report", "{r}", "-o", "{a_file}/out.md"], {"r": GOOD, "a_file": KEEP}, "cannot write",
                                "a_file"),
    "output is a folder": Case(["report", "{r}", "-o", "{out}"], {"r": GOOD, "out": None}, "cannot write", "out"),
    "output in /proc": Case(["report", "{r}", "-o", "/proc/tcm-report.md"], {"r": GOOD}, "cannot write /proc/tcm-report.md"),
    "baseline into a file": Case(["baseline", "{r}", "--dir", "{a_file}"], {"r": GOOD, "a_file": KEEP}, "cannot write",
                                 "a_file"),
    # `run` and `list`: names, kernel sources, outputs (an existing output with --overwrite must survive bad input)
    "unknown kernel": Case(["run", "-k", "nope", "-o", "{out.jsonl}", "--overwrite"], {},
                           "unknown kernel 'nope'; valid kernels: add, sin, silu"),
    "unknown style": Case(["run", "-k", "add", "-s", "rawish", "-o", "{out.jsonl}", "--overwrite"], {},
                          "unknown style 'rawish'; valid styles: native, raw, autograd_function"),
    "unknown pipeline": Case(["run", "-k", "add", "-p", "eagre", "-o", "{out.jsonl}", "--overwrite"], {},
                             "unknown pipeline 'eagre'; valid pipelines: eager,"),
    "kernels that raise on import": Case(["run", "--kernels-from", "{bad.py}", "-o", "{out.jsonl}", "--overwrite"],
                                         {"bad.py": "raise RuntimeError('no GPU here')\n"},
                                         "raised on import: RuntimeError: no GPU here", "bad.py"),
    "kernels that exit on import": Case(["list", "--kernels-from", "{bad.py}"], {"bad.py": "import sys\nsys.exit(3)\n"},
                                        "raised on import: SystemExit", "bad.py"),
    "kernels with a syntax error": Case(["list", "--kernels-from", "{bad.py}"], {"bad.py": "def broken(:\n"},
                                        "raised on import: SyntaxError", "bad.py"),
    "a malformed spec": Case(["run", "--kernels-from", "{bad.py}", "-o", "{out.jsonl}", "--overwrite"],
                             {"bad.py": SPEC_HEAD + "SPEC = KernelSpec(name='bad', kernels=(), arguments=(), launch=None,"
                                                    " reference=None, make_inputs=None)\n"},
                             "KernelSpec 'bad'", "bad.py"),
    "an invalid spec names the line that made it": Case(
        ["list", "--kernels-from", "{bad.py}"],
        {"bad.py": SPEC_HEAD + "\nSPEC = KernelSpec(name='bad', kernels=(1,), arguments=(('x', str),), launch=len,"
                               " reference=len, make_inputs=len)\n"},
        "invalid KernelSpec 'bad': argument 'x' has type <class 'str'>", "bad.py"),
    "a reference that raises, found before any cell runs": Case(
        ["run", "--kernels-from", "{bad.py}", "-k", "mine", "-p", "eager", "-o", "{out.jsonl}", "--overwrite"],
        {"bad.py": ADD_WITH.format(code="def reference(x, y):\n    return x + y.no_such_thing\n", field="reference")},
        "KernelSpec 'mine': field 'reference' raised on the inputs of make_inputs(1000) on cpu (line 5): "
        "AttributeError: 'Tensor' object has no attribute 'no_such_thing'", "bad.py"),
    "make_inputs that raises": Case(
        ["run", "--kernels-from", "{bad.py}", "-k", "mine", "-p", "eager", "-o", "{out.jsonl}", "--overwrite"],
        {"bad.py": ADD_WITH.format(code="def make_inputs(size, device, generator):\n    raise ValueError('sizes must be"
                                        " even')\n", field="make_inputs")},
        "field 'make_inputs' raised on make_inputs(1000, 'cpu', generator) (line 5): ValueError: sizes must be even",
        "bad.py"),
    "make_inputs with the wrong number of inputs": Case(
        ["list", "--kernels-from", "{bad.py}"],
        {"bad.py": ADD_WITH.format(code="def make_inputs(size, device, generator):\n    return (torch.zeros(size),)\n"
                                        "import torch\n", field="make_inputs")},
        "field 'make_inputs' returned 1 values; expected a tuple of 2", "bad.py"),
    "a plug-in whose library is not installed": Case(
        ["run", "--kernels-from", "{bad.py}", "-o", "{out.jsonl}", "--overwrite"],
        {"bad.py": "import liger_kernel_not_installed_here\n"},
        "raised on import: ModuleNotFoundError: No module named 'liger_kernel_not_installed_here'", "bad.py"),
    "no spec": Case(["list", "--kernels-from", "{bad.py}"], {"bad.py": "X = 1\n"}, "defines no KernelSpec", "bad.py"),
    "SPECS not a list": Case(["list", "--kernels-from", "{bad.py}"], {"bad.py": "SPECS = 5\n"}, "SPECS must be a list",
                             "bad.py"),
    "kernels from a missing file": Case(["run", "--kernels-from", "/no/such.py", "-o", "{out.jsonl}", "--overwrite"], {},
                                        "/no/such.py: no such kernel file"),
    "kernels from a folder": Case(["list", "--kernels-from", "{kdir}"], {"kdir": None}, "is a folder", "kdir"),
    "run output exists": Case(["run", "-k", "add", "-p", "eager", "-o", "{out.jsonl}"], {}, "exists; pass --overwrite",
                              "out.jsonl"),
    "run output is a folder": Case(["run", "-k", "add", "-p", "eager", "-o", "{rdir}", "--overwrite"], {"rdir": None},
                                   "is a folder", "rdir"),
    "run output under a file": Case(["run", "-k", "add", "-p", "eager", "-o", "{a_file}/r.jsonl", "--overwrite"],
                                    {"a_file": KEEP}, "cannot create its folder", "a_file"),
}


def materialize(folder: Path, case: Case) -> dict[str, Path]:
    """Write the case's files, plus every output path it names as a file holding KEEP."""
    paths: dict[str, Path] = {}
    for name, content in case.files.items():
        path = paths[name] = folder / name
        if content is None:
            path.mkdir()
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    for name in ("out.md", "out.jsonl"):  # outputs that exist before the command
        if name not in paths:
            paths[name] = folder / name
            paths[name].write_text(KEEP)
    for name in ("r", "a", "b"):  # inputs a case may leave missing
        paths.setdefault(name, folder / name)
    return paths


def snapshot(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


def harness(argv: list[str], cwd: Path = REPO) -> subprocess.CompletedProcess:
    return harness_command(argv, cwd=cwd, timeout=300, env={**os.environ, "PYTHONWARNINGS": "ignore"})


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_one_line_exit_2_and_nothing_touched(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    paths = materialize(tmp_path, case)
    argv = [re.sub(r"\{([^{}]+)\}", lambda m: str(paths[m.group(1)]), part) for part in case.argv]
    before = snapshot(tmp_path)
    done = harness(argv)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == case.code, done.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    assert case.names in lines[0]
    if case.names_file:
        assert str(paths[case.names_file]) in lines[0]
    assert done.stdout == ""
    assert snapshot(tmp_path) == before  # nothing truncated, overwritten, or left behind


EARLY_REFUSALS: dict[str, list[str]] = {  # the message -> the options; `{exists}` is a file that exists
    "unknown pipeline 'eagre'": ["-p", "eagre", "-o", "{out}", "--overwrite"],
    "unknown style 'rawish'": ["-s", "rawish", "-o", "{out}", "--overwrite"],
    "--shard '3/2'": ["--shard", "3/2", "-o", "{out}", "--overwrite"],
    "exists; pass --overwrite": ["-o", "{exists}"],
}


def test_a_bad_option_is_refused_before_the_kernels_load(tmp_path: Path) -> None:
    """What needs no kernel to judge is refused before `--kernels-from` is imported (and torch, and the catalogue):
    about 0.5 CPU seconds instead of 3. The last command shows the plug-in does load when the options are good."""
    marker = tmp_path / "imported"
    plugin = tmp_path / "marking_kernels.py"
    plugin.write_text(f"import dataclasses\nfrom pathlib import Path\nfrom kernels import add\n"
                      f"Path({str(marker)!r}).write_text('imported')\nSPEC = dataclasses.replace(add.SPEC, name='marked')\n")
    (tmp_path / "exists").write_text(KEEP)
    paths = {"{out}": str(tmp_path / "out.jsonl"), "{exists}": str(tmp_path / "exists")}
    for message, options in EARLY_REFUSALS.items():
        argv = ["run", "--tier", "cpu", "--kernels-from", str(plugin), "-k", "add", *[paths.get(o, o) for o in options]]
        done = harness(argv)
        assert done.returncode == 2 and message in done.stderr, done.stderr[-2000:]
        assert not marker.exists(), f"{options}: the kernels were loaded before the refusal"
    done = harness(["run", "--tier", "cpu", "--kernels-from", str(plugin), "-k", "nope", "-o", paths["{out}"]])
    assert done.returncode == 2 and "unknown kernel 'nope'" in done.stderr, done.stderr[-2000:]
    assert marker.exists()


def test_a_read_only_folder_is_refused(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders; the /proc case covers an unwritable folder")
    results = tmp_path / "r.jsonl"
    results.write_text(GOOD)
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "out.md").write_text(KEEP)
    locked.chmod(0o555)
    try:
        done = harness(["report", str(results), "-o", str(locked / "out.md")])
    finally:
        locked.chmod(0o755)
    assert done.returncode == 2 and done.stderr.startswith(f"error: cannot write {locked / 'out.md'}")
    assert (locked / "out.md").read_text() == KEEP


TOLERATED: dict[str, tuple[str, str, str]] = {
    # name: (results file, warning fragment, what the report says)
    "torn last line": (GOOD + '{"record": "cell", "id": "add/custom_op/ea', "the last line is torn (a run killed mid-write)",
                       "ended in a torn line (a killed run)"),
    "unknown names": (jsonl(HEADER, cell(style="pallas", outcome="mystery"), cell(pipeline="eager_future")),
                      "names this harness does not know (style 'pallas'; pipeline 'eager_future'; outcome 'mystery')",
                      "Names this harness does not know"),
}


@pytest.mark.parametrize("name", list(TOLERATED))
def test_tolerated_input_warns_once_and_is_flagged_in_the_report(name: str, tmp_path: Path) -> None:
    content, warning, flagged = TOLERATED[name]
    results = tmp_path / "r.jsonl"
    results.write_text(content)
    done = harness(["report", str(results)])
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"warning: {results}: ") and warning in lines[0], done.stderr
    assert flagged in done.stdout


def test_an_identical_duplicate_is_kept_once(tmp_path: Path) -> None:
    """A cell recorded twice with the same verdict (times may differ) is one measurement; two verdicts are refused above."""
    results = tmp_path / "r.jsonl"
    results.write_text(jsonl(HEADER, cell(duration_s=1.0), cell(style="native"), cell(duration_s=2.0, worker="gw1")))
    done = harness(["report", str(results)])
    assert done.returncode == 0 and done.stderr == ""
    assert "2 cells" in done.stdout
