"""The built-in kernel catalogue: one module per kernel, each defining `SPEC`."""

BUILTIN_MODULES: tuple[str, ...] = ("kernels.add", "kernels.sin", "kernels.silu")
