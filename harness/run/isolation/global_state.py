"""The process-wide state a cell can leave behind in a long-lived worker, taken before and after each cell.

A cell that changes any of it (a kernel module that sets the default dtype, turns grad mode off, replaces a
function of torch or of the harness, registers a kernel on an existing operator, changes directory) would
change the answer of every later cell in that worker. Worker isolation compares the two snapshots and retires
the worker when they differ, so the next cell starts in a fresh one (harness.run.isolation.worker_mode). Reading these
values never initialises CUDA.

torch's own config modules are saved before each cell and restored after it instead, and left out of the
snapshot: torch itself writes into them (on torch 2.13 every AOTInductor build fills
`torch._inductor.config.aot_inductor.metadata` in place; on the H100 some key of Dynamo's config that
`save_config` leaves out changed in every cell of a run), and retiring a worker each time made every cell pay
for a new worker (303 cells, 303 retirements, in 9 minutes).
"""

from __future__ import annotations

import functools
import os
import pickle
import sys
import warnings
from typing import Any

from harness.domain.operator_overrides import overrides, registrations

CONFIG_MODULES = ("torch._dynamo.config", "torch._inductor.config", "torch._functorch.config")


def save_configs() -> dict[str, bytes]:
    """torch's config modules as they are now (those already imported), to restore after a cell."""
    saved = {}
    for name in CONFIG_MODULES:
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "save_config"):
            saved[name] = module.save_config()
    return saved


def restore_configs(saved: dict[str, bytes]) -> None:
    """Each config module as `save_configs` found it. Only the keys the cell changed are set back: loading the whole
    saved config sets every key, where most cells change one or two (the harness's own cache switches,
    harness.run.compile_caches)."""
    with warnings.catch_warnings():  # setting a deprecated key back to its own value warns
        warnings.simplefilter("ignore", FutureWarning)
        for name, values in saved.items():
            module = sys.modules[name]
            now = module.save_config()
            if now != values:
                module.load_config(_changed_keys(values, now))


def _changed_keys(saved: bytes, now: bytes) -> dict[str, Any] | bytes:
    """The saved values of the keys whose value differs now (both as save_config pickles them); the whole saved
    config where they cannot be compared."""
    try:
        before, after = pickle.loads(saved), pickle.loads(now)
        return {key: value for key, value in before.items() if key not in after or bool(after[key] != value)}
    except Exception:  # a value whose comparison fails: load every key, as save_config's own restore does
        return saved


WATCHED_MODULES = ("torch", "torch.library", "torch.nn.functional", "torch.testing")
CONTAINER_REPR_LIMIT = 20_000


def _attribute_tokens(module: Any, with_values: bool) -> dict[str, Any]:
    """name -> the object's identity (and, for the harness's own containers, their contents) of a module's globals."""
    items = tuple(vars(module).items())  # a copy: another thread may import into the module meanwhile
    tokens: dict[str, Any] = {name: id(value) for name, value in items if not name.startswith("__")}
    if with_values:
        for name, value in items:
            if isinstance(value, (dict, list, set, tuple)) and not name.startswith("__"):
                text = repr(value)
                if len(text) <= CONTAINER_REPR_LIMIT:
                    tokens[name] = text
    return tokens


def _harness_module_names() -> tuple[str, ...]:
    """The harness's imported modules, sorted. Found again only when the number of imported modules changed: a scan of
    the thousands of names in a worker's `sys.modules` was a quarter of a snapshot's time. A list that misses a module
    imported since misses no change, for a module that appears is no change (`changes`), and the snapshot after a cell
    that imported one finds it again, as the count grew."""
    return _harness_modules_among(len(sys.modules))


@functools.lru_cache(maxsize=1)
def _harness_modules_among(count: int) -> tuple[str, ...]:
    """Kept by `lru_cache`, keyed by `count`, not in a module-level container: the snapshot compares those."""
    return tuple(sorted(name for name in tuple(sys.modules) if name.startswith("harness.")))


def snapshot() -> dict[str, Any]:
    """What this process's global state is now; only what is already imported is read."""
    state: dict[str, Any] = {"working directory": os.getcwd(), "sys.path": tuple(sys.path)}
    torch = sys.modules.get("torch")
    if torch is None:
        return state
    state |= {
        "default dtype": str(torch.get_default_dtype()),
        "grad mode": torch.is_grad_enabled(),
        "inference mode": torch.is_inference_mode_enabled(),
        "anomaly detection": torch.is_anomaly_enabled(),
        "deterministic algorithms": torch.are_deterministic_algorithms_enabled(),
        "float32 matmul precision": torch.get_float32_matmul_precision(),
        "intra-op threads": torch.get_num_threads(),
    }
    if hasattr(torch, "get_default_device"):
        state["default device"] = str(torch.get_default_device())
    state["torch.library registrations"] = registrations(torch.library)
    for name in WATCHED_MODULES + _harness_module_names():
        module = sys.modules.get(name)
        if module is not None:
            state[f"module {name}"] = _attribute_tokens(module, with_values=name.startswith("harness."))
    return state


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """One line per value both snapshots hold that differs (a module or attribute that appeared since is no change)."""
    found = []
    for name in before:
        old, new = before[name], after.get(name)
        if new is None or old == new:
            continue
        if isinstance(old, frozenset):
            overridden = overrides(old, new)
            if overridden:
                found.append(f"{name}: {', '.join(overridden[:3])}{' ...' if len(overridden) > 3 else ''}")
        elif isinstance(old, dict):
            replaced = sorted(key for key in old if key in new and old[key] != new[key])
            if replaced:
                found.append(f"{name.removeprefix('module ')}: {', '.join(replaced[:5])} replaced")
        else:
            found.append(f"{name}: {old} -> {new}")
    return found
