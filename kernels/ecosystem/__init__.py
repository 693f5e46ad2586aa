"""Spec modules for real Triton libraries as published: examples of `--kernels-from`, never the built-in catalogue.

`python -m harness run --kernels-from kernels.ecosystem.liger` (or `.flag_gems`, `.fla`) asks one library's
kernels, launched the way the library itself launches them. Each module needs its library installed (the extras
`liger`, `flaggems`, `fla` of pyproject.toml); the harness's own tests and CI never import them
(docs/ecosystem.md). `kernels/__init__.py`'s BUILTIN_MODULES names the catalogue, and this package is not in it.
"""
