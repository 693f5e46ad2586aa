"""The poison: what CPU allocations hold once the flag is set, what each dtype reads, and what counts as unwritten."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from harness.domain.poison import POISON_64, fill_with_poison, poison_like, tensor_bytes, unwritten_elements, unwritten_note

FLOATS = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
INTEGERS = (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)


def poisoned(dtype: torch.dtype, numel: int = 8) -> torch.Tensor:
    raw = torch.empty(numel * torch.empty(0, dtype=dtype).element_size(), dtype=torch.uint8)
    fill_with_poison(raw)
    return raw.view(dtype)


def test_no_float_reads_a_value_a_reference_could_give():
    for dtype in FLOATS:
        values = poisoned(dtype).double()
        # NaN or beyond 1e38 in every element of the 4-byte and 8-byte types; every other 2-byte element is NaN
        if dtype.itemsize >= 4:
            assert (values.isnan() | (values.abs() > 1e38)).all(), dtype
        else:
            assert values[1::2].isnan().all(), dtype
    assert poisoned(torch.float32).isnan().all()


def test_integers_read_a_large_sentinel():
    assert poisoned(torch.int32).eq(0x7FEDBEEF).all()
    assert poisoned(torch.int64).eq(POISON_64).all()


@pytest.mark.parametrize("dtype", (*FLOATS, *INTEGERS, torch.bool))
def test_a_poisoned_tensor_counts_as_unwritten_and_a_written_one_does_not(dtype):
    untouched = poisoned(dtype, 16)
    assert unwritten_elements(untouched) == 16
    assert unwritten_note(untouched) == "the output was never written (it still holds the poison value)"
    half = poisoned(dtype, 16)
    half[:8] = 0
    assert unwritten_elements(half) == 8
    assert unwritten_note(half) == "8 of 16 elements were never written (they still hold the poison value)"
    assert unwritten_elements(torch.zeros(16, dtype=dtype)) == 0
    assert unwritten_note(torch.zeros(16, dtype=dtype)) is None


def test_views_are_read_at_their_place_in_the_storage():
    base = poisoned(torch.float16, 32)
    base[::3] = 1.0
    view = base[1:].view(31)[::2]  # an odd storage offset and a stride: each element against the pattern at its place
    expected = sum(1 for index in range(1, 32, 2) if index % 3 != 0)
    assert unwritten_elements(view) == expected
    assert poison_like(view).shape == view.shape


def test_what_the_reserve_holds_room_for():
    assert tensor_bytes(torch.empty(10), (torch.empty(3, dtype=torch.int64), [torch.empty(0)]), 4.0, None) == [40, 24, 0]


def test_a_new_python_poisons_every_cpu_allocation_once_asked():
    """In a process of its own: the flag stays set for the rest of the process."""
    code = ("import torch; from harness.domain.poison import poison_cpu_allocations, unwritten_elements; "
            "before = torch.empty(4096); assert poison_cpu_allocations(); "
            "a = torch.randn(100000); b = a * 2; del b; c = torch.empty_like(a); "
            "print(unwritten_elements(c), c.isnan().all().item(), unwritten_elements(torch.zeros(3)))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert completed.stdout.split() == ["100000", "True", "0"]
