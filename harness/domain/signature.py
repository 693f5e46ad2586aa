"""Functions with real named parameters, made at run time from a spec's argument names.

Derived wrappers must look like what a user writes: `def forward(ctx, x, y)`, not
`def forward(ctx, *args)`. Dynamo treats the two differently (measured: a varargs
autograd.Function forward fails to inline where the named one gets further), so a
varargs wrapper would report the harness's shape, not the style's.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any


def named_function(name: str, parameters: list[str], body: Callable[..., Any],
                   annotations: dict[str, Any] | None = None) -> Callable[..., Any]:
    """`def name(p1, p2, ...): return body(p1, p2, ...)`, with the given annotations."""
    for parameter in [name, *parameters]:
        if not parameter.isidentifier() or keyword.iskeyword(parameter):
            raise ValueError(f"{parameter!r} is not a usable Python name")
    joined = ", ".join(parameters)
    namespace: dict[str, Any] = {"_body": body}
    exec(f"def {name}({joined}):\n    return _body({joined})\n", namespace)  # noqa: S102 - names checked above
    function = namespace[name]
    if annotations:
        function.__annotations__ = dict(annotations)
    return function
