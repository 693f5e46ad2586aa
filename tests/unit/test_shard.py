"""--shard I/N: every selected cell in exactly one shard, a kernel's pipeline group never split, balanced and deterministic."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.plugin.state import DURATIONS, run_durations
from harness.results import RETIREMENT_S, read_results
from harness.run.selection import select_cells
from harness.run.shard import (
    Shard,
    ShardError,
    assign_groups,
    groups_in_order,
    load_durations,
    longest_groups_first,
    parse_shard,
    shard_cells,
)
from harness.vocab import CONTROL_STYLE, PIPELINES, STYLES

REPO = Path(__file__).resolve().parents[2]
CPU_FIXTURE = REPO / "tests" / "fixtures" / "cpu-torch2.13.0+cpu-triton3.7.1.jsonl"
FIXTURE_PIPELINES = sorted({cell.pipeline for cell in read_results(CPU_FIXTURE).cells}, key=PIPELINES.index)
FIXTURE_STYLES = sorted({cell.style for cell in read_results(CPU_FIXTURE).cells}, key=STYLES.index)
SELECTION = select_cells(["add", "sin", "silu"], FIXTURE_STYLES, FIXTURE_PIPELINES)  # every cell has a measured duration


@pytest.mark.parametrize("text, shard", [("1/1", Shard(1, 1)), ("3/4", Shard(3, 4)), (" 2/2 ", Shard(2, 2))])
def test_parse_shard(text, shard):
    assert parse_shard(text) == shard
    assert str(shard) == text.strip()


@pytest.mark.parametrize("text", ["0/4", "5/4", "1/0", "0/0", "a/b", "1", "1/2/3", "-1/2", "1/-2", "", "/"])
def test_a_bad_shard_is_one_line_naming_it(text):
    with pytest.raises(ShardError) as raised:
        parse_shard(text)
    assert repr(text) in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7, 57, 60])
@pytest.mark.parametrize("balanced", [False, True])
def test_the_shards_partition_the_selection(count, balanced):
    durations = load_durations(CPU_FIXTURE) if balanced else None
    shards = [shard_cells(SELECTION, Shard(index, count), durations) for index in range(1, count + 1)]
    ids = [cell.id for shard in shards for cell in shard]
    assert len(ids) == len(set(ids)) == len(SELECTION)
    assert set(ids) == {cell.id for cell in SELECTION}


@pytest.mark.parametrize("balanced", [False, True])
def test_a_group_stays_together_with_its_control_first(balanced):
    durations = load_durations(CPU_FIXTURE) if balanced else None
    for index in (1, 2, 3):
        cells = shard_cells(SELECTION, Shard(index, 3), durations)
        for group, members in groups_in_order(cells).items():
            pipelines = sorted({cell.pipeline for cell in members})
            assert len(members) == len(FIXTURE_STYLES) * len(pipelines), group  # the whole group, not part of it
            for pipeline in pipelines:  # a group of pipelines that share an artifact: each one's control first
                assert [cell for cell in members if cell.pipeline == pipeline][0].style == CONTROL_STYLE
        assert cells == [cell for cell in SELECTION if cell in cells]  # selection order kept


def test_without_durations_groups_go_round_robin_so_counts_differ_by_at_most_one_group():
    sizes = [len(shard_cells(SELECTION, Shard(index, 4))) for index in range(1, 5)]
    assert max(sizes) - min(sizes) <= max(len(members) for members in groups_in_order(SELECTION).values())
    first = groups_in_order(shard_cells(SELECTION, Shard(1, 4)))
    assert list(first) == list(groups_in_order(SELECTION))[0::4]  # groups 0, 4, 8, ... of the selection
    assert list(first)[:2] == ["add/eager", "add/compile_fullgraph_backward"]


def _loads(durations, count):
    assignment = assign_groups(SELECTION, count, durations)
    loads = [0.0] * count
    for cell in SELECTION:
        loads[assignment[cell.group]] += durations.get(cell.id, 0.0)
    return loads


def test_durations_balance_the_shards_better_than_counting():
    durations = load_durations(CPU_FIXTURE)
    for count in (2, 4, 8):
        balanced = _loads(durations, count)
        by_count = [sum(durations[c.id] for c in shard_cells(SELECTION, Shard(i, count))) for i in range(1, count + 1)]
        assert max(balanced) < max(by_count), count
        # greedy longest-first: the heaviest shard is at most the lightest plus the heaviest single group
        heaviest_group = max(sum(durations[c.id] for c in cells) for cells in groups_in_order(SELECTION).values())
        assert max(balanced) - min(balanced) <= heaviest_group


def test_the_split_is_deterministic_whatever_the_order_durations_arrive_in():
    durations = load_durations(CPU_FIXTURE)
    shuffled = list(durations.items())
    random.Random(1).shuffle(shuffled)
    assert assign_groups(SELECTION, 5, durations) == assign_groups(SELECTION, 5, dict(shuffled))


def test_the_longest_group_goes_first_and_ties_go_by_cell_id():
    cells = select_cells(["add", "sin"], ["native", "raw"], ["eager", "vmap"])
    durations = {cell.id: 1.0 for cell in cells} | {"sin/raw/vmap": 10.0}
    assert assign_groups(cells, 2, durations) == {"sin/vmap": 0, "add/eager": 1, "add/vmap": 1, "sin/eager": 1}
    equal = {cell.id: 1.0 for cell in cells}  # all tied: by first cell id, alternating onto the lightest
    assert assign_groups(cells, 2, equal) == {"add/eager": 0, "add/vmap": 1, "sin/eager": 0, "sin/vmap": 1}


def test_a_cell_missing_from_the_durations_weighs_their_mean():
    cells = select_cells(["add", "sin"], ["native"], ["eager", "vmap"])
    durations = {"add/native/eager": 9.0, "add/native/vmap": 1.0, "sin/native/eager": 1.0}  # sin/vmap missing: mean 11/3
    assert assign_groups(cells, 2, durations) == {"add/eager": 0, "sin/vmap": 1, "add/vmap": 1, "sin/eager": 1}


def test_longest_groups_first_orders_groups_by_weight_and_keeps_each_group_whole():
    durations = load_durations(CPU_FIXTURE)
    ordered = longest_groups_first(SELECTION, durations)
    assert sorted(cell.id for cell in ordered) == sorted(cell.id for cell in SELECTION)
    weights = {group: sum(durations[cell.id] for cell in cells) for group, cells in groups_in_order(SELECTION).items()}
    runs = list(groups_in_order(ordered))  # the groups, in the order they now appear
    assert [weights[g] for g in runs] == sorted(weights.values(), reverse=True)
    for group in runs:  # contiguous, in the group's own order: the control first
        members = [cell for cell in ordered if cell.group == group]
        start = ordered.index(members[0])
        assert ordered[start:start + len(members)] == groups_in_order(SELECTION)[group]
        assert members[0].style == CONTROL_STYLE


def test_a_cell_that_retired_its_worker_also_weighs_its_replacements_start(tmp_path):
    lines = CPU_FIXTURE.read_text().splitlines()
    retired = next(index for index, line in enumerate(lines) if json.loads(line).get("record") == "cell")
    record = json.loads(lines[retired])
    record["detail"]["worker_retired"] = "CUDA error in " + record["id"]
    lines[retired] = json.dumps(record)
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    plain, with_retirement = load_durations(CPU_FIXTURE), load_durations(tmp_path / "results.jsonl")
    assert with_retirement[record["id"]] == pytest.approx(plain[record["id"]] + RETIREMENT_S)
    assert {k: v for k, v in with_retirement.items() if k != record["id"]} == \
        {k: v for k, v in plain.items() if k != record["id"]}


def test_a_worker_orders_by_the_durations_its_controller_read(tmp_path):
    """A worker given the controller's durations reads no results file: one that did would fail on the missing one."""
    missing, given = str(tmp_path / "gone.jsonl"), {"add/native/eager": 1.5}
    assert run_durations(missing, {DURATIONS: given}, "cpu") == (given, given)
    assert run_durations(None, {DURATIONS: given}, "cpu") == (None, given)
    assert run_durations(None, {DURATIONS: None}, "gpu") == (None, None), "no published results: the count orders"
    read = load_durations(CPU_FIXTURE)
    assert run_durations(str(CPU_FIXTURE), None, "cpu") == (read, read)
    with pytest.raises(ShardError, match="gone.jsonl"):
        run_durations(missing, None, "cpu")


def test_plain_pytest_collects_the_longest_group_first_with_durations(tmp_path):
    """The plugin reorders the collected matrix (what pytest-xdist hands out in order); without durations it does not."""
    args = [sys.executable, "-m", "pytest", "matrix", "-q", "--collect-only", "-p", "no:cacheprovider", "--matrix-tier", "cpu",
            "--matrix-kernel", "add,sin,silu", "--matrix-pipeline", ",".join(FIXTURE_PIPELINES),
            "--matrix-style", ",".join(FIXTURE_STYLES)]
    plain = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=300)
    ordered = subprocess.run(args + ["--matrix-durations-from", str(CPU_FIXTURE)], cwd=REPO, capture_output=True, text=True,
                             timeout=300)
    assert plain.returncode == 0 and ordered.returncode == 0, plain.stdout[-2000:] + ordered.stdout[-2000:]

    def cell_ids(text):
        return [line.split("[", 1)[1].rstrip("]") for line in text.splitlines() if "::test_cell[" in line]

    expected = [cell.id for cell in longest_groups_first(SELECTION, load_durations(CPU_FIXTURE))]
    assert cell_ids(ordered.stdout) == expected
    assert sorted(cell_ids(plain.stdout)) == sorted(expected) and cell_ids(plain.stdout) != expected


def harness(*args):
    return harness_command(args, timeout=300)


@pytest.mark.parametrize("args, message", [
    (["--shard", "3/2"], "error: --shard '3/2': I must be between 1 and N"),
    (["--shard", "x"], "error: --shard 'x': expected I/N with whole numbers"),
    (["--durations-from", "/no/such.jsonl"], "error: --durations-from: /no/such.jsonl: no such results file"),
    (["--shard", "1/2", "--durations-from", "/no/such.jsonl"], "error: --durations-from: /no/such.jsonl: no such results file"),
])
def test_bad_shard_options_are_one_line_and_exit_2(tmp_path, args, message):
    output = tmp_path / "r.jsonl"
    completed = harness("run", "--tier", "cpu", "-k", "add", "-p", "eager", "-o", str(output), *args)
    assert completed.returncode == 2
    assert completed.stderr.strip().startswith(message) and len(completed.stderr.strip().splitlines()) == 1
    assert not output.exists()


@pytest.mark.slow
def test_shards_from_the_cli_and_the_plugin_merge_into_the_whole_selection(tmp_path):
    """Shard 1/2 through `harness run`, 2/2 through plain pytest with --matrix-shard; merged, they are the selection."""
    pipelines = "eager,eager_backward,cpu_fallback,cudagraphs"  # 4 groups of add; eager runs, the rest skip in the parent
    first, second, merged = tmp_path / "1.jsonl", tmp_path / "2.jsonl", tmp_path / "all.jsonl"
    completed = harness("run", "--tier", "cpu", "-k", "add", "-p", pipelines, "--shard", "1/2", "-n", "1", "-o", str(first))
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "matrix", "-q", "-p", "no:cacheprovider", "--matrix-tier", "cpu",
         "--matrix-kernel", "add", "--matrix-pipeline", pipelines, "--matrix-shard", "2/2", "--matrix-results", str(second)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    shard_ids = [{cell.id for cell in read_results(path).cells} for path in (first, second)]
    selection = {cell.id for cell in select_cells(["add"], list(STYLES), pipelines.split(","))}
    assert shard_ids[0] and shard_ids[1] and not shard_ids[0] & shard_ids[1]
    assert shard_ids[0] | shard_ids[1] == selection
    assert read_results(first).header["shard"] == "1/2" and read_results(second).header["shard"] == "2/2"
    completed = harness("merge", str(first), str(second), "-o", str(merged))
    assert completed.returncode == 0, completed.stderr
    cells = read_results(merged).cells
    assert sorted(cell.id for cell in cells) == sorted(selection)
    assert {cell.outcome for cell in cells if cell.pipeline == "eager"} == {"pass"}
