"""What a process that died or was ended without a result said last: the evidence of a `crash` or `timeout` cell.

Shared by both isolation mechanisms (a cell's own process in harness.run.isolation, an xdist worker in
harness.run.isolation.worker_mode); it imports nothing of the harness, so neither mechanism imports the other for it.
"""

from __future__ import annotations

import re

THREAD_HEADER = re.compile(r"^(Current thread|Thread) 0x[0-9a-fA-F]+")
STACKS_CHARS = 4000  # what a record keeps of faulthandler's dump: a few thousand characters, the innermost frames first
FRAMES_PER_THREAD = 12
LINES_BEFORE_STACKS = 5


def death_evidence(who: str, signal_name: str | None, exit_code: int | None, stage: str, log: str) -> tuple[str, str]:
    """(error type, first line) for a process that died without a result: the signal or exit code, then its last words."""
    if signal_name:
        kind, message = signal_name, f"{who} died of {signal_name} in stage {stage}"
    else:
        kind, message = "ProcessExited", f"{who} exited with code {exit_code} in stage {stage} without a result"
    death = death_line(log)
    return kind, f"{message}: {death}" if death else message


def death_line(log: str) -> str:
    """What a dying child said: faulthandler's 'Fatal Python error' and the innermost Python frame, else its last line."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for index, line in enumerate(lines):
        if line.startswith("Fatal Python error"):
            after = lines[index + 1:]
            current = [i for i, text in enumerate(after) if text.startswith("Current thread")]
            frames = [f for f in after[current[0] if current else 0:] if f.startswith("File ")]
            return f"{line} ({frames[0]})" if frames else line
    return lines[-1] if lines else ""


def _thread_blocks(log: str) -> tuple[list[str], list[list[str]]]:
    """faulthandler's dump as (the lines before the first thread, each thread's lines: its header, then its frames)."""
    before: list[str] = []
    blocks: list[list[str]] = []
    for line in log.splitlines():
        if THREAD_HEADER.match(line):
            blocks.append([line])
        elif blocks and line.startswith("  File "):
            blocks[-1].append(line)
        elif not blocks and line.strip():
            before.append(line)
    return before, blocks


def _main_first(blocks: list[list[str]]) -> list[list[str]]:
    """The thread that ran the cell first: faulthandler's "Current thread" where it names one (a fatal error), else the
    last thread it lists: it lists the interpreter's threads newest first, so the main thread comes last."""
    current = [block for block in blocks if block[0].startswith("Current thread")]
    main = current[:1] or blocks[-1:]
    return main + [block for block in blocks if block not in main]


def stuck_frame(log: str) -> str | None:
    """The innermost frame of the thread that ran the cell, from faulthandler's dump at a time limit: where it was."""
    _, blocks = _thread_blocks(log)
    ordered = _main_first(blocks)
    if not ordered or len(ordered[0]) < 2:
        return None
    return ordered[0][1].strip()


def compact_stacks(log: str, limit: int = STACKS_CHARS) -> str:
    """faulthandler's dump with each thread's innermost frames kept, the cell's thread first.

    faulthandler prints the most recent call first, so a plain tail of its log keeps the outermost frames of the last
    thread (execnet's loop, `<module>`), and drops where the process was. Of what came before the first thread (the
    fatal error or the time limit, after whatever else the process wrote), the last lines are kept; a log that holds
    no thread is tailed."""
    before, blocks = _thread_blocks(log)
    if not blocks:
        return log[-limit:]
    lines = before[-LINES_BEFORE_STACKS:]
    for block in _main_first(blocks):
        frames = block[1:]
        lines += [block[0], *frames[:FRAMES_PER_THREAD]]
        if len(frames) > FRAMES_PER_THREAD:
            lines.append(f"  ... {len(frames) - FRAMES_PER_THREAD} outer frames")
    return "\n".join(lines)[:limit]
