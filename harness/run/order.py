"""`--order`: the order cells start in, so that a run can be repeated in another order and compared."""

from __future__ import annotations

ORDERS = ("longest-first", "reversed")


class OrderError(ValueError):
    """An --order that is none of the orders; the message is one line."""


def parse_order(text: str, option: str = "--order") -> str | int:
    """`longest-first`, `reversed`, or a shuffle's seed (a whole number)."""
    if text in ORDERS:
        return text
    try:
        return int(text)
    except ValueError:
        raise OrderError(f"{option} {text!r}: expected {', '.join(ORDERS)}, or a whole number (the seed of a shuffle)") from None
