"""The run options, declared once: `harness run`'s argparse flags, the pytest plugin's options and bench's pass-through
are all built from `RUN_OPTIONS`, so a default or a help text cannot drift between them.

Each option has a CLI spelling (`-k/--kernel`) and, when the pytest plugin takes it, a pytest spelling
(`--matrix-kernel`); `harness run` turns the parsed CLI values into the pytest arguments by the same table.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.vocab import STYLES

EXPECTED_DIR = Path(__file__).resolve().parents[2] / "matrix" / "expected"  # the reviewed baselines, by default
DEFAULT_TIMEOUT_S = {"gpu": 300.0, "cpu": 600.0}  # a cell's time limit per tier, unless --timeout says
ISOLATION_MODES: tuple[str, ...] = ("worker", "process")
DEFAULT_ISOLATION = "worker"
# Not a choice of `--isolation`: a worker run's cell that needs a process of its own (a control the worker cannot run
# after a failed cell) gets one forked from the run's zygote, as a new worker is (harness.run.isolation).
FORKED_ISOLATION = "forked"
TIER_CHOICES: tuple[str, ...] = ("auto", "gpu", "cpu")


@dataclass(frozen=True)
class RunOption:
    """One option: how the CLI spells it, whether pytest takes it (and how it spells it there), argparse's keywords."""

    dest: str
    flags: tuple[str, ...]
    help: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    pytest_flag: str | None = None  # None: the CLI only (it is turned into other pytest arguments, or none)
    in_bench: bool = False  # bench passes it to each of its runs

    @property
    def pytest_dest(self) -> str | None:
        return self.pytest_flag.lstrip("-").replace("-", "_") if self.pytest_flag else None


def _matrix(name: str) -> str:
    return f"--matrix-{name}"


RUN_OPTIONS: tuple[RunOption, ...] = (
    RunOption("kernel", ("-k", "--kernel"), "kernel name (repeatable, or comma-separated); default: every kernel",
              {"action": "append", "default": [], "metavar": "NAME"}, _matrix("kernel"), in_bench=True),
    RunOption("style", ("-s", "--style"), f"style (repeatable, or comma-separated): {', '.join(STYLES)}; "
              "a call site as style@site (docs/call-sites.md)",
              {"action": "append", "default": [], "metavar": "NAME"}, _matrix("style"), in_bench=True),
    RunOption("pipeline", ("-p", "--pipeline"), "pipeline (repeatable, or comma-separated; `list` names them); "
              "default: the tier's default selection (see --all)",
              {"action": "append", "default": [], "metavar": "NAME"}, _matrix("pipeline"), in_bench=True),
    RunOption("all", ("--all",), "every pipeline and call site, not the tier's default selection",
              {"action": "store_true"}, _matrix("all"), in_bench=True),
    RunOption("kernels_from", ("--kernels-from",), "a module or .py file with more KernelSpecs (repeatable)",
              {"action": "append", "default": [], "metavar": "MODULE_OR_PATH"}, "--kernels-from", in_bench=True),
    RunOption("with_catalogue", ("--with-catalogue",), "with --kernels-from: run the built-in catalogue's kernels too "
              "(without it, --kernels-from alone runs only that source's kernels; -k names any kernel)",
              {"action": "store_true"}, _matrix("with-catalogue"), in_bench=True),
    RunOption("tier", ("--tier",), "gpu, or cpu = the Triton interpreter on CPU tensors (auto: gpu when one is visible)",
              {"choices": TIER_CHOICES, "default": "auto"}, _matrix("tier"), in_bench=True),
    RunOption("workers", ("-n", "--workers"), "parallel workers; auto: sized from the cores, the memory and the GPUs' memory",
              {"default": "auto", "metavar": "N"}),
    RunOption("isolation", ("--isolation",), "worker (default): cells run in long-lived workers, each replaced after a "
              "crash, a timeout, a CUDA error or a change of global state; process: a new Python per cell (the slow "
              "reference the default is checked against)",
              {"choices": ISOLATION_MODES, "default": DEFAULT_ISOLATION}, _matrix("isolation")),
    RunOption("output", ("-o", "--output"), "results file (default reports/results-<env>.jsonl)",
              {"default": None, "metavar": "RESULTS.jsonl"}, _matrix("results")),
    RunOption("summary", ("--summary",), "Markdown summary file (default: the results path with .md)",
              {"default": None, "metavar": "PATH"}),
    RunOption("overwrite", ("--overwrite",), "replace an existing results file", {"action": "store_true"},
              _matrix("overwrite")),
    RunOption("timeout", ("--timeout",), "per-cell time limit in seconds (default 300 on the GPU, 600 on the CPU)",
              {"type": float, "default": None, "metavar": "SECONDS"}, _matrix("timeout"), in_bench=True),
    RunOption("cold_cache", ("--cold-cache",), "every cell gets empty Inductor and Triton caches",
              {"action": "store_true"}, _matrix("cold-cache"), in_bench=True),
    RunOption("no_shared_artifacts", ("--no-shared-artifacts",), "every cell builds its own AOTInductor package and "
              "saved program (by default a worker builds one per exported program and the aoti and round-trip cells "
              "that export the same program load it)", {"action": "store_true"}, _matrix("no-shared-artifacts"),
              in_bench=True),
    RunOption("shard", ("--shard",), "run only shard I of N (a kernel's pipeline group stays in one shard)",
              {"default": None, "metavar": "I/N"}, _matrix("shard"), in_bench=True),
    RunOption("durations_from", ("--durations-from",), "balance --shard, and start the longest cell groups first, by "
              "the cell durations of this earlier run", {"default": None, "metavar": "RESULTS.jsonl"},
              _matrix("durations-from"), in_bench=True),
    RunOption("resume", ("--resume",), "run only the selected cells not yet in this results file, appending to it",
              {"default": None, "metavar": "RESULTS.jsonl"}, _matrix("resume")),
    RunOption("reuse", ("--reuse",), "copy, not run, each selected cell whose content key (its kernel's code and "
              "spec, the harness, torch, triton, the GPU, the tier, the options) equals the key its record carries in "
              "this earlier results file (docs/kernel-library-ci.md, \"Reuse\")",
              {"default": None, "metavar": "RESULTS.jsonl"}, _matrix("reuse")),
    RunOption("repeat", ("--repeat",), "run each cell N times; differing outcomes make it flaky",
              {"default": "1", "metavar": "N"}, _matrix("repeat")),
    RunOption("confirm", ("--confirm",), "run each cell whose outcome differs from the baseline again, alone, in a new "
              "Python with cold caches, up to N times; tries that disagree make it flaky, and only confirmed changes "
              "count as regressions (0: believe the first run)", {"type": int, "default": 3, "metavar": "N"}),
    RunOption("confirm_threshold", ("--confirm-threshold",), "confirm every changed cell when at most T changed (as "
              "many at once as the run has workers); when more changed (a new torch), only --confirm-sample's sample",
              {"type": int, "default": 4, "metavar": "T"}),
    RunOption("confirm_sample", ("--confirm-sample",), "above --confirm-threshold, confirm N changed cells spread "
              "across pipelines, changes, kernels and styles; the rest are recorded and listed as unconfirmed (auto, "
              "the default: one per worker; 0: confirm every one)", {"default": "auto", "metavar": "N"}),
    RunOption("order", ("--order",), "the order cells start in: longest-first (default: the longest groups first, by "
              "--durations-from or the published results), reversed (that order backwards), or a number (shuffled with "
              "that seed); with -n 1 it is the order within the one worker (`harness order-check` compares two)",
              {"default": "longest-first", "metavar": "ORDER"}, _matrix("order")),
    RunOption("baseline_results", ("--baseline-results",), "take the expected outcomes from this earlier results file "
              "instead of the baselines folder (a kernel library's committed results): its changed cells are confirmed "
              "and only confirmed regressions fail the run", {"default": None, "metavar": "RESULTS.jsonl"}),
    RunOption("baseline_dir", ("--baseline-dir",), "where baselines (<torch>-<triton>-<tier>.json) live; 'none' to "
              "ignore them", {"default": None, "metavar": "DIR"}, _matrix("baseline-dir")),
)

OPTIONS_BY_DEST: dict[str, RunOption] = {option.dest: option for option in RUN_OPTIONS}


def add_cli_options(parser: argparse.ArgumentParser, options: Iterable[RunOption] = RUN_OPTIONS) -> None:
    for option in options:
        parser.add_argument(*option.flags, dest=option.dest, help=option.help, **option.kwargs)


def add_pytest_options(group: Any) -> None:
    """The same options on pytest's command line (harness.plugin.pytest_plugin)."""
    for option in RUN_OPTIONS:
        if option.pytest_flag is not None:
            group.addoption(option.pytest_flag, dest=option.pytest_dest, help=option.help, **option.kwargs)


def _spelled(options: Iterable[RunOption], values: dict[str, Any], flag_of: Any) -> list[str]:
    """The arguments that ask for `values` (dest -> value), each option spelled by `flag_of`; defaults left out."""
    arguments: list[str] = []
    for option in options:
        flag, value, default = flag_of(option), values.get(option.dest), option.kwargs.get("default")
        action = option.kwargs.get("action")
        if flag is None or value is None or value == default or (action == "store_true" and not value):
            continue
        if action == "store_true":
            arguments.append(flag)
        else:
            for item in (value if action == "append" else [value]):
                arguments += [flag, str(item)]
    return arguments


def pytest_arguments(values: dict[str, Any]) -> list[str]:
    """The pytest arguments for `harness run`'s parsed values."""
    return _spelled(RUN_OPTIONS, values, lambda option: option.pytest_flag)


def cli_arguments(values: dict[str, Any], options: Iterable[RunOption]) -> list[str]:
    """`harness run` arguments for these values: how bench passes its options on to each run."""
    return _spelled(options, values, lambda option: option.flags[-1])
