"""The built-in kernel catalogue: one module per kernel, each defining `SPEC`."""

BUILTIN_MODULES: tuple[str, ...] = (
    "kernels.add",
    "kernels.sin",
    "kernels.silu",
    "kernels.add_autotuned",
    "kernels.heuristics_autotune",
    "kernels.autotune_heuristics",
    "kernels.autotune_prune_configs",
    "kernels.autotune_reset_to_zero",
    "kernels.autotune_restore_value",
    "kernels.add_inplace",
    "kernels.two_outputs",
    "kernels.softmax",
    "kernels.layer_norm",
    "kernels.rms_norm",
    "kernels.matmul",
    "kernels.scaled_add",
)
