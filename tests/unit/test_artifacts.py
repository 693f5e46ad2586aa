"""Shared artifacts: a cell loads another cell's package only when the program it exported is the same, and a
failed build is never kept (harness.domain.pipelines.artifacts)."""

from pathlib import Path

import pytest
import torch

from harness.domain.artifact_store import ArtifactStore
from harness.domain.pipelines.artifacts import artifact_fetcher, program_fingerprint
from harness.domain.pipelines.common import built_artifact


class Scaled(torch.nn.Module):
    def __init__(self, factor: float) -> None:
        super().__init__()
        self.factor = factor

    def forward(self, x):
        return x * self.factor + 1


def exported(factor: float, x: torch.Tensor, strict: bool = False):
    return torch.export.export(Scaled(factor), (x,), strict=strict)


def test_strict_and_non_strict_export_of_one_function_give_one_fingerprint():
    x = torch.arange(8.0)
    assert program_fingerprint("aoti-package", exported(2.0, x), (x,)) == \
        program_fingerprint("aoti-package", exported(2.0, x, strict=True), (x,))


@pytest.mark.parametrize("change", ["constant", "values", "storage offset", "dtype", "kind"])
def test_what_a_build_reads_changes_the_fingerprint(change):
    x = torch.arange(8.0)
    base = program_fingerprint("aoti-package", exported(2.0, x), (x,))
    if change == "constant":
        other = program_fingerprint("aoti-package", exported(3.0, x), (x,))
    elif change == "values":
        y = x + 1
        other = program_fingerprint("aoti-package", exported(2.0, y), (y,))
    elif change == "storage offset":  # what made a graph cache hand aligned code to misaligned views (#33)
        view = torch.arange(9.0)[1:]
        other = program_fingerprint("aoti-package", exported(2.0, view), (view,))
    elif change == "dtype":
        y = x.double()
        other = program_fingerprint("aoti-package", exported(2.0, y), (y,))
    else:
        other = program_fingerprint("saved-program", exported(2.0, x), (x,))
    assert other != base


class Context:
    """What built_artifact reads of a CellContext; the run gives the fetcher where cells share a worker."""

    def __init__(self, store, cell):
        self.reused = {}
        self.fetch_artifact = artifact_fetcher(store, cell, self.reused) if store is not None else None


def fetch_or_build(context, kind, program, args, build):
    return built_artifact(context, kind, program, args, build)


def builder(folder: Path, log: list[str], fail: bool = False):
    def build() -> Path:
        log.append("built")
        if fail:
            raise RuntimeError("the compiler failed")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "cell.pt2"
        path.write_bytes(b"package")
        return path

    return build


def test_a_second_cell_with_the_same_program_loads_the_first_ones_build_and_says_so(tmp_path):
    x = torch.arange(4.0)
    store, log = ArtifactStore(tmp_path / "store"), []
    first, second = Context(store, "k/custom_op/aoti"), Context(store, "k/custom_op/aoti_fresh_process")
    built = fetch_or_build(first, "aoti-package", exported(2.0, x), (x,), builder(tmp_path / "a", log))
    loaded = fetch_or_build(second, "aoti-package", exported(2.0, x, strict=True), (x,), builder(tmp_path / "b", log))
    assert log == ["built"]
    assert loaded.read_bytes() == built.read_bytes() and loaded.parent == tmp_path / "store"
    assert first.reused == {} and second.reused == {"aoti-package": "k/custom_op/aoti"}


def test_a_failed_build_is_not_kept_so_the_next_cell_builds_and_fails_on_its_own(tmp_path):
    x = torch.arange(4.0)
    store, log = ArtifactStore(tmp_path / "store"), []
    for cell in ("k/s/aoti", "k/s/aoti_strict"):
        with pytest.raises(RuntimeError, match="the compiler failed"):
            fetch_or_build(Context(store, cell), "aoti-package", exported(2.0, x), (x,),
                           builder(tmp_path / cell.replace("/", "-"), log, fail=True))
    assert log == ["built", "built"]


def test_without_a_store_every_cell_builds(tmp_path):
    x = torch.arange(4.0)
    log: list[str] = []
    for _ in range(2):
        fetch_or_build(Context(None, "k/s/aoti"), "aoti-package", exported(2.0, x), (x,), builder(tmp_path, log))
    assert log == ["built", "built"]


def test_the_store_keeps_a_bounded_number_of_files(tmp_path):
    store = ArtifactStore(tmp_path / "store", keep=2)
    for index in range(4):
        source = tmp_path / f"build{index}.pt2"
        source.write_bytes(bytes([index]))
        store.fetch(f"fingerprint{index}", f"cell{index}", lambda source=source: source)
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == ["fingerprint2.pt2", "fingerprint3.pt2"]
    assert store.fetch("fingerprint0", "again", lambda: tmp_path / "build0.pt2").reused_from is None
