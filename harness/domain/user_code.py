"""Locations in the evidence name the user's code, never the harness's wrappers.

Inductor's reasons quote the stack of the FX node they are about (`Found from : File ..., line ..., in ...`), and
that stack starts in the function the harness made for the style (`harness/domain/styles.py`'s lambda, or the
`<string>` of a generated signature) before it reaches the spec's `launch`. Measured on the H100: every
`cudagraphs` skip of a mutating kernel named `harness/domain/styles.py` first. A kernel library's author must
see their own line, so the harness's frames are dropped from such a stack; a stack made of the harness's frames
alone (an operator called from the style's wrapper) becomes one frame: the spec's `launch`. The full traceback
of a failed cell is left whole.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

HARNESS_PACKAGE = Path(__file__).resolve().parents[1]
FRAME_HEADER = re.compile(r'^(?P<indent>[ \t]*)File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>.+)$')


def is_harness_file(filename: str) -> bool:
    """The harness's own package, or code it generated at run time (`named_function`'s `<string>`)."""
    if filename.startswith("<") and filename.endswith(">"):
        return filename == "<string>"
    try:
        return Path(filename).resolve().is_relative_to(HARNESS_PACKAGE)
    except (OSError, ValueError):
        return False


def launch_location(spec: Any, indent: str = "  ") -> str:
    """The spec's `launch` as one stack frame, as Python prints one: file, line, name, then its first source line."""
    launch: Callable[..., Any] = spec.launch
    try:
        filename = inspect.getsourcefile(launch) or "<unknown>"
        source, line = inspect.getsourcelines(launch)
    except (OSError, TypeError):
        return f'{indent}File "{getattr(spec, "source", "<unknown>")}", in {getattr(launch, "__name__", "launch")}\n'
    first = source[0].strip() if source else ""
    return f'{indent}File "{filename}", line {line}, in {launch.__name__}\n{indent}  {first}\n'


def _frames(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first line, end line, file) of each frame: its header and the source and caret lines indented under it."""
    found = []
    index = 0
    while index < len(lines):
        header = FRAME_HEADER.match(lines[index].rstrip("\n"))
        if not header:
            index += 1
            continue
        indent = len(header.group("indent"))
        end = index + 1
        while end < len(lines) and not FRAME_HEADER.match(lines[end].rstrip("\n")) and lines[end].strip() \
                and len(lines[end]) - len(lines[end].lstrip()) > indent:
            end += 1
        found.append((index, end, header.group("file")))
        index = end
    return found


def in_user_code(text: str, spec: Any) -> str:
    """`text` with the harness's frames left out of every stack it quotes; a stack of harness frames alone
    becomes the spec's `launch`. Text without a stack comes back unchanged."""
    if not text or 'File "' not in text:
        return text
    lines = text.splitlines(keepends=True)
    frames = _frames(lines)
    if not any(is_harness_file(file) for _, _, file in frames):
        return text
    kept: list[str] = []
    position = 0
    stacks: list[list[tuple[int, int, str]]] = []
    for frame in frames:  # frames that follow each other without other text between them form one stack
        if stacks and stacks[-1][-1][1] == frame[0]:
            stacks[-1].append(frame)
        else:
            stacks.append([frame])
    for stack in stacks:
        kept += lines[position:stack[0][0]]
        user = [frame for frame in stack if not is_harness_file(frame[2])]
        if user:
            for start, end, _ in user:
                kept += lines[start:end]
        else:
            first = lines[stack[0][0]]
            kept.append(launch_location(spec, first[:len(first) - len(first.lstrip())]))
        position = stack[-1][1]
    kept += lines[position:]
    return "".join(kept)
