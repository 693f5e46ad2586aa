"""The worker's guard between cells: torch's configs set back after a cell, and which torch.library entries it
watches (harness.run.isolation.global_state, harness.domain.operator_overrides)."""

from __future__ import annotations

import sys
from types import ModuleType, SimpleNamespace

import torch._dynamo.config
import torch._inductor.config
from hypothesis import given
from hypothesis import strategies as st

from harness.domain.operator_overrides import OWN_NAMESPACES, namespace, registrations
from harness.run.isolation.global_state import restore_configs, save_configs


def _record_loads(monkeypatch) -> list[tuple[str, object]]:
    """Every load_config call from now on, as (module, what it was given); config modules refuse new attributes,
    so their classes are patched."""
    loaded: list[tuple[str, object]] = []
    for cls in {type(sys.modules[name]) for name in save_configs()}:
        def load_config(self, values, original=cls.load_config):
            loaded.append((self.__name__, values))
            return original(self, values)

        monkeypatch.setattr(cls, "load_config", load_config)
    return loaded


def test_a_cell_s_config_changes_are_set_back_key_by_key(monkeypatch):
    saved = save_configs()
    loaded = _record_loads(monkeypatch)
    fx_graph_cache, suppress_errors = torch._inductor.config.fx_graph_cache, torch._dynamo.config.suppress_errors
    try:
        torch._inductor.config.fx_graph_cache = not fx_graph_cache
        torch._dynamo.config.suppress_errors = not suppress_errors
        restore_configs(saved)
    finally:
        torch._inductor.config.fx_graph_cache, torch._dynamo.config.suppress_errors = fx_graph_cache, suppress_errors
    assert torch._inductor.config.fx_graph_cache == fx_graph_cache
    assert torch._dynamo.config.suppress_errors == suppress_errors
    assert sorted((name, sorted(values)) for name, values in loaded) == [  # type: ignore[call-overload]
        ("torch._dynamo.config", ["suppress_errors"]), ("torch._inductor.config", ["fx_graph_cache"])]
    assert save_configs() == saved


def test_a_config_no_cell_changed_is_not_loaded_again(monkeypatch):
    saved = save_configs()
    loaded = _record_loads(monkeypatch)
    restore_configs(saved)
    assert loaded == []


def test_a_config_whose_values_cannot_be_compared_is_loaded_whole(monkeypatch):
    class Incomparable:
        def __eq__(self, other: object) -> bool:
            raise TypeError("no comparison")

        __hash__ = object.__hash__

    import pickle

    from harness.run.isolation import global_state

    saved = pickle.dumps({"key": 1})
    assert global_state._changed_keys(saved, pickle.dumps({"key": 2})) == {"key": 1}
    assert global_state._changed_keys(saved, pickle.dumps({})) == {"key": 1}  # a key gone since is set back too
    monkeypatch.setattr(pickle, "loads", lambda data: {"key": Incomparable()})
    assert global_state._changed_keys(saved, b"now") == saved


ENTRY = st.builds(
    lambda ns, separator, rest: f"{ns}{separator}{rest}",
    st.sampled_from([*OWN_NAMESPACES, "aten", "prims", "tcm_raw_x", "xtcm_raw", "tcm_raw:", "mylib", ""]),
    st.sampled_from(["::", "/", ":", ":::", "", "::/", "/::"]),
    st.text(alphabet="ab:/._", max_size=8),
)


@given(st.sets(ENTRY, max_size=12), st.sets(ENTRY, max_size=6))
def test_the_harness_s_own_namespaces_are_the_only_entries_left_out(impls, defs):
    library = SimpleNamespace(_impls=impls, _defs=defs)
    assert registrations(library) == frozenset(e for e in impls | defs if namespace(e) not in OWN_NAMESPACES)


def test_the_guard_sees_a_harness_container_change_and_not_the_harness_s_own_memos(monkeypatch):
    """A worker retires after a cell that changed global state; were the harness's own memos (the specs loaded once,
    the list of its modules) seen as changes, every cell would pay for a new worker and no outcome would show it."""
    from harness.domain.registry import load_specs_once
    from harness.run.isolation import global_state

    probe = ModuleType("harness._guard_probe")
    probe.TABLE = {"a": 1}
    before = global_state.snapshot()
    monkeypatch.setitem(sys.modules, probe.__name__, probe)  # a module that appears since is no change
    load_specs_once([])
    assert global_state.changes(before, global_state.snapshot()) == []
    before = global_state.snapshot()
    probe.TABLE["b"] = 2
    assert global_state.changes(before, global_state.snapshot()) == ["harness._guard_probe: TABLE replaced"]
