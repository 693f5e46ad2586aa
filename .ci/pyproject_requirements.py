"""`python .ci/pyproject_requirements.py [--install] GROUP...`: the requirements pyproject.toml declares, for the
workflows' steps that need part of them without installing the harness (and so without torch).

GROUP is `core` (the project's dependencies less torch and triton, which the steps that need them install apart)
or the name of an extra (`plot`, `dev`, `workflows`, ...). Prints one requirement a line; with --install, installs
them with this interpreter's pip instead. pyproject.toml stays the one place a dependency is declared.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: pip carries the same parser
    from pip._vendor import tomli as tomllib  # type: ignore[no-redef]

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def requirements(groups: list[str]) -> list[str]:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    chosen: list[str] = []
    for group in groups:
        if group == "core":
            found = [r for r in project["dependencies"] if not r.startswith(("torch", "triton"))]
        elif group in extras:
            found = extras[group]
        else:
            raise SystemExit(f"no group {group!r} in {PYPROJECT.name}: core, {', '.join(extras)}")
        chosen += [r for r in found if r not in chosen]
    return chosen


def main(argv: list[str]) -> int:
    install = "--install" in argv
    groups = [arg for arg in argv if arg != "--install"]
    if not groups:
        raise SystemExit(__doc__)
    chosen = requirements(groups)
    if install:
        return subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *chosen]).returncode
    print("\n".join(chosen))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
