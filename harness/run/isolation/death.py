"""What a process that died without a result said last: the evidence of a `crash` cell.

Shared by both isolation mechanisms (a cell's own process in harness.run.isolation, an xdist worker in
harness.run.isolation.worker_mode); it imports nothing of the harness, so neither mechanism imports the other for it.
"""

from __future__ import annotations


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
