"""Everything the matrix takes from pytest-xdist's private API, in one module, checked by `private_api_problems`.

xdist's loadgroup scheduler is not safe for workers that die mid-group (docs/maintainers.md, "xdist's
scheduler and dead workers" lists what goes wrong); worker isolation replaces a worker after every crash, so the
controller uses the subclass below, with xdist's option `loadscopereorder` off: groups go out in collection
order, except that round-trip groups are metered, CONTEXT_BOUND_AT_ONCE at a time from the run's start. It
overrides `remove_node`, `_reschedule` and `_assign_work_unit`, calls `_pending_of`, reads
`assigned_work`, `registered_collections`, `workqueue` and `node.shutting_down`, and reads a dead worker's exit
status from execnet's `gateway._io.popen`. pyproject.toml bounds pytest-xdist to the
versions this was tested with; tests/unit/test_xdist_private_api.py fails with one clear line when an xdist
release changes any of it.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

from harness.run.selection import context_bound

# name -> what it must be on xdist.scheduler.LoadGroupScheduling (an attribute set in __init__ is checked on an instance)
SCHEDULER_METHODS = ("remove_node", "_reschedule", "_assign_work_unit", "_pending_of")
SCHEDULER_ATTRIBUTES = ("assigned_work", "registered_collections", "workqueue")
TESTED_XDIST = ("3.8.0", "3.8.0")  # the oldest and newest pytest-xdist this module was tested with (pyproject.toml's bound)
CONTEXT_BOUND_AT_ONCE = 4  # round-trip groups kept running from the run's start (docs/maintainers.md, "Ordering")


def private_api_problems() -> list[str]:
    """What the installed pytest-xdist lacks of the private API used here; empty when all is there."""
    import xdist
    from xdist.scheduler import LoadGroupScheduling

    problems = [f"LoadGroupScheduling.{name} is gone" for name in SCHEDULER_METHODS if not hasattr(LoadGroupScheduling, name)]
    base = LoadGroupScheduling.__mro__[1]  # LoadScopeScheduling sets the attributes in its __init__
    source = inspect.getsource(base.__init__)
    problems += [f"{base.__name__} no longer sets self.{name}" for name in SCHEDULER_ATTRIBUTES if f"self.{name}" not in source]
    if "popitem(last=False)" not in inspect.getsource(base._assign_work_unit):
        problems.append(f"{base.__name__}._assign_work_unit no longer hands out the work queue's first group")
    if "loadscopereorder" not in inspect.getsource(base.schedule):
        problems.append(f"{base.__name__}.schedule no longer reads the option loadscopereorder (--no-loadscope-reorder)")
    from xdist import newhooks
    from xdist.workermanage import WorkerController

    problems += [f"the hook {name} is gone" for name in ("pytest_handlecrashitem", "pytest_xdist_make_scheduler")
                 if not hasattr(newhooks, name)]
    if not hasattr(WorkerController, "shutting_down"):
        problems.append("WorkerController.shutting_down is gone")
    from execnet import gateway_io

    if "self.popen" not in inspect.getsource(gateway_io):
        problems.append("execnet's gateway IO no longer keeps its Popen as .popen (the dead worker's exit status)")
    if hasattr(LoadGroupScheduling, "_pending_of"):
        parameters = list(inspect.signature(LoadGroupScheduling._pending_of).parameters)
        if parameters != ["self", "workload"]:
            problems.append(f"LoadGroupScheduling._pending_of takes {parameters}, not (self, workload)")
    return [f"pytest-xdist {xdist.__version__}: {problem} (harness/plugin/xdist_scheduler.py relies on it; "
            f"tested with {TESTED_XDIST[0]} to {TESTED_XDIST[1]})" for problem in problems]


def group_to_hand_out(queued: Iterable[str], running: Iterable[str], at_once: int = CONTEXT_BOUND_AT_ONCE) -> str | None:
    """The queued group to hand out next; None when the queue is empty.

    Context-bound groups (round trips) are metered: while fewer than `at_once` of them run, the first queued one
    goes out, wherever it stands, so that they run side by side with the rest from the run's start instead of
    all together at its end; while `at_once` run, the first other group goes out. Otherwise the queue's order
    (longest first) holds, and context-bound groups left alone go out as they come."""
    queue = list(queued)
    if not queue:
        return None
    metered_in = sum(map(context_bound, running)) < at_once
    return next((group for group in queue if context_bound(group) == metered_in), queue[0])


def restart_safe_loadgroup(config: Any, log: Any) -> Any:
    """xdist's loadgroup scheduler, fixed for workers that die: the crashed item counts as run once (its record
    comes from pytest_handlecrashitem), finished units leave the queue, the rest goes back at its front (the next
    worker to ask takes it, a live one as a rule), only workers that have collected are given work, and always at
    least two items (a worker runs an item only once it knows the next one)."""
    from xdist.scheduler import LoadGroupScheduling

    # xdist hands groups out largest (most items) first unless told not to; the plugin already put them longest
    # (by duration) first, and the largest groups of a matrix run are not its longest (docs/maintainers.md, "Ordering").
    config.option.loadscopereorder = False

    class RestartSafeLoadGroupScheduling(LoadGroupScheduling):
        def remove_node(self, node: Any) -> str | None:
            workload = self.assigned_work.pop(node)
            undone = [(unit, nodeid) for unit in workload.values() for nodeid, done in unit.items() if not done]
            if not undone:  # a worker that finished its work
                return None
            unit, crashitem = undone[0]  # a worker runs its items in order: the first undone one was running
            unit[crashitem] = True  # before any other worker is given this unit again
            self.registered_collections.pop(node, None)
            requeued = [scope for scope, work_unit in workload.items() if not all(work_unit.values())]
            for scope in reversed(requeued):  # at the front, in the order they were handed out
                self.workqueue[scope] = workload[scope]
                self.workqueue.move_to_end(scope, last=False)
            for other in self.assigned_work:
                self._reschedule(other)
            return crashitem

        def _assign_work_unit(self, node: Any) -> None:
            """xdist's, given the group `group_to_hand_out` picks: it takes the queue's first."""
            # a unit counts while it has items undone; the asking node's last item is ending (it asks for the next)
            running = [scope for other, work in self.assigned_work.items() for scope, unit in work.items()
                       if list(unit.values()).count(False) > (1 if other is node else 0)]
            chosen = group_to_hand_out(self.workqueue, running)
            if chosen is not None:
                self.workqueue.move_to_end(chosen, last=False)
            super()._assign_work_unit(node)

        def _reschedule(self, node: Any) -> None:
            if node not in self.registered_collections:
                return
            try:
                super()._reschedule(node)
                # One pending item alone, from a requeued unit, would wait forever while the queue still has work.
                while self.workqueue and not node.shutting_down and self._pending_of(self.assigned_work[node]) < 2:
                    self._assign_work_unit(node)
            except OSError:  # it died too and xdist has not said so yet: its remove_node requeues what it was given
                pass

    return RestartSafeLoadGroupScheduling(config, log)


def dead_worker_exit_code(node: Any) -> int | None:
    """The dead worker's exit status (negative: the signal), read from execnet's Popen when it exposes it."""
    popen = getattr(getattr(getattr(node, "gateway", None), "_io", None), "popen", None)
    try:
        return popen.wait(timeout=10) if popen is not None else None
    except Exception:  # the status is evidence, not a requirement: faulthandler's log still names the signal
        return None
