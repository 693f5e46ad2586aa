"""`python -m harness.run.cell_worker WORKDIR`: one cell in a brand-new interpreter (isolation mode `process`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.run.cell import CellRequest
from harness.run.isolation import child_main

if __name__ == "__main__":
    workdir = Path(sys.argv[1])
    request = CellRequest(**json.loads((workdir / "request.json").read_text()))
    sys.exit(child_main(request, workdir))
