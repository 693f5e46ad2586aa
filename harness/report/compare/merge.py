"""Join the shards of one run into one results file, refusing anything that is not one run.

With `rerun`, the files are a run and later runs of some of its cells in the same environment (a cell
re-measured after a harness fix, a suspected flake asked again): a later file's cell replaces the earlier
record, and the header lists every replacement that changed the outcome or the error line, with both
outcomes, so the joined file says what it is made of.

Environment keys that name the machine or process rather than the software
(VOLATILE_ENVIRONMENT_KEYS) may differ between shards; every other key, and the
harness version, must match, or the merged chart would mix two environments.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.atomic import write_text_atomic
from harness.jsonl import json_line
from harness.report.markdown.aggregate import cell_order, final_cells
from harness.results import CellResult, ResultsFile, read_results

# The machine and process, not the software: shards of one run may land on different hosts.
# What may differ between the shards of one run: the host, and the GPUs and cores each shard was given (the
# nightly's shards run on different runners; a two-GPU host can run two shards, each pinned to one GPU).
VOLATILE_ENVIRONMENT_KEYS = frozenset({"hostname", "host", "node", "pid", "cwd", "worker", "shard", "cpu_count",
                                       "omp_num_threads", "cuda_visible_devices", "gpu_count"})


class MergeError(Exception):
    """Shards that are not one run; the message is one line naming the files and the difference."""


def _stable(environment: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in environment.items() if k not in VOLATILE_ENVIRONMENT_KEYS}


def _check_same_run(first: tuple[str, ResultsFile], other: tuple[str, ResultsFile]) -> None:
    (first_name, first_results), (name, results) = first, other
    a, b = _stable(first_results.environment), _stable(results.environment)
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            raise MergeError(
                f"{name}: environment differs from {first_name} in {key} ({b.get(key)!r} vs {a.get(key)!r})"
            )
    if results.header.get("harness_version") != first_results.header.get("harness_version"):
        raise MergeError(f"{name}: harness version differs from {first_name}")


def merge_results(shards: Sequence[tuple[str, ResultsFile]], rerun: bool = False) -> ResultsFile:
    """One results file; identical outcomes for a cell are kept once, differing ones are refused, unless
    `rerun`: then the later file's record wins and the replacement is recorded in the header."""
    if not shards:
        raise MergeError("nothing to merge")
    merged: dict[str, tuple[str, CellResult]] = {}
    replaced: list[dict[str, str]] = []
    for name, results in shards:
        _check_same_run(shards[0], (name, results))
        for cell_id, cell in final_cells(results).items():
            seen = merged.get(cell_id)
            if seen is None:
                merged[cell_id] = (name, cell)
            elif rerun:
                merged[cell_id] = (name, cell)
                if (seen[1].outcome, seen[1].error) != (cell.outcome, cell.error):
                    replaced.append({"id": cell_id, "was": seen[1].outcome, "now": cell.outcome,
                                     "from": seen[0], "by": name})
            elif seen[1].outcome != cell.outcome:
                raise MergeError(
                    f"{cell_id}: {seen[0]} says {seen[1].outcome}, {name} says {cell.outcome}"
                    " (a later run of these cells? pass --rerun to let the later file's record replace it)"
                )
    first = shards[0][1].header
    starts = [str(results.header["started"]) for _, results in shards if results.header.get("started")]
    kernels: dict[str, object] = {}
    for _, results in shards:  # shards split by kernel each record their own kernels' tags
        kernels.update(results.header.get("kernels") or {})
    header = {
        **first,
        "started": min(starts) if starts else first.get("started"),
        **({"kernels": kernels} if kernels else {}),
        "merged_from": [part for name, results in shards for part in _sources(name, results)],
        **({"replaced": [*(shards[0][1].header.get("replaced") or []), *replaced]} if rerun else {}),
    }
    cells = sorted((cell for _, cell in merged.values()), key=cell_order)
    return ResultsFile(header=header, cells=cells)


def _sources(name: str, results: ResultsFile) -> list[dict[str, Any]]:
    """The runs a shard is made of: itself, or, for a file that was joined before, the runs it names."""
    earlier = results.header.get("merged_from")
    if isinstance(earlier, list) and earlier:
        return list(earlier)
    return [{"source": name, "started": results.header.get("started"), "command": results.header.get("command")}]


def results_text(results: ResultsFile) -> str:
    """The JSON Lines a ResultsWriter would have written for these records."""
    records = [results.header] + [cell.to_record() for cell in results.cells]
    return "".join(json_line(record) for record in records)


def merge_files(inputs: Sequence[str | Path], output: str | Path, without_tracebacks: bool = False,
                rerun: bool = False) -> Path:
    """Read, merge and write atomically; the output may never be one of the inputs.

    `without_tracebacks` drops each cell's full traceback and keeps everything else (outcome, stage, error
    type and line, detail): how a run is published in the repository, where the tracebacks of a whole GPU run
    would weigh megabytes; the run's own file (a CI artifact) keeps them."""
    output = Path(output)
    for source in inputs:
        if output.resolve() == Path(source).resolve():
            raise MergeError(f"{output}: the output would overwrite an input shard")
    shards = [(str(source), read_results(source)) for source in inputs]
    merged = merge_results(shards, rerun=rerun)
    if without_tracebacks:
        for cell in merged.cells:
            cell.traceback = None
    return write_text_atomic(output, results_text(merged))


def settle_flaky(new: ResultsFile, reference: ResultsFile) -> tuple[ResultsFile, list[str]]:
    """`new` with each flaky cell's record replaced by the reference's: what a nightly publishes, so that a cell
    whose change was not confirmed (harness.run.confirm) keeps its published outcome. Returns the settled results
    and the ids it kept from the reference; a flaky cell the reference lacks stays flaky."""
    published = final_cells(reference)
    kept: list[str] = []
    cells = []
    for cell_id, cell in final_cells(new).items():
        if cell.outcome == "flaky" and cell_id in published:
            cells.append(published[cell_id])
            kept.append(cell_id)
        else:
            cells.append(cell)
    header = {**new.header, **({"settled_from": [{"id": cell_id, "kept": published[cell_id].outcome} for cell_id in kept]}
                               if kept else {})}
    return ResultsFile(header=header, cells=sorted(cells, key=cell_order)), kept

