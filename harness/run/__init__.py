"""The run: selection, planning, isolation and workers, the environment; turns cells into CellResults."""
