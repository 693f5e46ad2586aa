"""One cell in a process of its own: `python -m harness.run.isolation.cell_worker WORKDIR` (isolation mode `process`, a brand-new
interpreter), or `main([WORKDIR])` in a child forked from the run's zygote (`forked`, harness.run.isolation)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.run.cell import CellRequest
from harness.run.isolation.modes import child_main


def main(argv: list[str]) -> int:
    workdir = Path(argv[0])
    request = CellRequest(**json.loads((workdir / "request.json").read_text()))
    return child_main(request, workdir)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
