"""`--resume RESULTS.jsonl`: finish a run that stopped, appending the missing cells to its file.

A results file describes one environment, so only the same torch, triton and tier may
continue it. A killed run keeps every finished cell (each line is flushed) but may leave a
torn last line; that tail is cut before appending, so the file stays one JSON object per
line. Reads results files only; no torch.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from harness.results import ResultsFile, ResultsFileError, read_results

# What must be equal between the file's header and this run (the rest may differ: host, cpu count...).
MATCHING_KEYS = ("torch", "triton", "tier")


class ResumeError(ValueError):
    """A file that this run may not continue; the message is one line naming it."""


def read_earlier(path: str | Path, error: type[ValueError], missing: str, verb: str) -> ResultsFile:
    """An earlier run's results for --resume or --reuse; a missing or unreadable file is `error`, one line."""
    path = Path(path)
    if not path.is_file():
        raise error(f"{path}: {missing}")
    try:
        return read_results(path)
    except ResultsFileError as exc:
        raise error(f"cannot {verb}: {exc}") from None


def check_resumable(path: str | Path, environment: dict[str, Any]) -> ResultsFile:
    """The file's results, if it exists, parses, and was recorded in this environment."""
    results = read_earlier(path, ResumeError, "no such results file to resume (start the run without --resume)",
                           "resume")
    for key in MATCHING_KEYS:
        recorded, current = results.environment.get(key), environment.get(key)
        if recorded != current:
            raise ResumeError(
                f"{path}: recorded with {key} {recorded!r}, this run has {current!r}; "
                "resume it in the same environment, or start a new results file"
            )
    return results


def repair_torn_tail(path: str | Path) -> int:
    """Cut an unterminated last line that is not JSON (a write the kill interrupted); returns the bytes cut.

    An unterminated last line that does parse is kept and terminated, so no finished cell is lost.
    """
    path = Path(path)
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return 0
    start = data.rfind(b"\n") + 1
    try:
        complete = isinstance(json.loads(data[start:]), dict)
    except ValueError:
        complete = False
    if complete:
        with open(path, "ab") as handle:
            handle.write(b"\n")
        return 0
    with open(path, "r+b") as handle:
        handle.truncate(start)
    return len(data) - start


# Options that name or replace the output: the resume command drops them and adds --resume PATH.
_OUTPUT_OPTIONS = ("--output", "--resume")
_OUTPUT_FLAGS = ("--overwrite",)


def _long_option(token: str, names: tuple[str, ...]) -> bool:
    """argparse accepts unambiguous prefixes of long options (`--over`), so match those too."""
    name = token.split("=", 1)[0]
    return len(name) > 3 and any(full.startswith(name) for full in names)


def resume_command(command: list[str], path: str | Path) -> str:
    """The command that was run, with `--resume PATH` in place of its -o/--output, --overwrite and --resume."""
    kept: list[str] = []
    skip_next = passthrough = False
    for token in command:
        if skip_next:
            skip_next = False
        elif passthrough or token == "--":  # after `--`, pytest's own options, kept as given
            passthrough = True
            kept.append(token)
        elif token == "-o" or (token.startswith("--") and "=" not in token and _long_option(token, _OUTPUT_OPTIONS)):
            skip_next = True
        elif token.startswith("-o") and not token.startswith("--"):
            continue  # -oPATH
        elif token.startswith("--") and _long_option(token, _OUTPUT_OPTIONS + _OUTPUT_FLAGS):
            continue  # --output=PATH, --resume=PATH, --overwrite
        else:
            kept.append(token)
    at = kept.index("--") if "--" in kept else len(kept)
    return shlex.join(kept[:at] + ["--resume", str(path)] + kept[at:])
