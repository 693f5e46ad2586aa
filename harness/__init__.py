"""triton-compat-matrix: which way of wrapping a Triton kernel survives which PyTorch pipeline.

Kept import-light on purpose: the report side reads results files on machines
without torch, and the AOTInductor fresh-process loader must not pull in kernels.
"""

__version__ = "0.1.0"
