"""What a run hands over to the project: made on the training thread, applied by the project's
owner.

The training thread never writes the project document. Where a run stands — the
weights, the optimizer's state, the shuffle and RNG position, the metric history and
each hook's capture history — is copied into a `RunResult` (arrays of its own, nothing
shared with the network) at the end of every run, and between two steps or in a pause
when the owner asks (`Handover.request`, e.g. for a save). The result waits in the
session's `Handover` until the thread that owns the project — the GUI thread, or the
script that made the session — takes it and calls `apply(project)`.

    result = collect(compiled, optimizer, state, metrics, captures)   # training thread
    handover.put(result)
    for result in handover.take(): result.apply(project)              # owner thread
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from app.document import Project
from app.document.runs import RunRecord
from app.session.health import PREFIX as HEALTH_PREFIX
from app.session.progress import clear_optimizer, store_optimizer
from app.session.run_record import RunEnd, record_run


@dataclass(frozen=True)
class RunResult:
    """Where a run stood at one step boundary, in arrays and JSON of its own.

    `values`: node id -> {Parameter or optimizer entry name -> array}, as
    `project.param_values` keeps them; `state`: `project.training["state"]`;
    `hook_history`: hook id -> its capture history (`HookCapture.saved_state()`);
    `run`: on a recorded run's final result, how it ended (app.session.run_record), else
    None (a hand-over in the middle of a run, e.g. for a save).
    """

    step: int
    values: Mapping[str, Mapping[str, np.ndarray]]
    state: Mapping[str, Any]
    hook_history: Mapping[str, Mapping[str, np.ndarray]]
    run: RunEnd | None = None

    def apply(self, project: Project) -> RunRecord | None:
        """Write the result into `project` (on the thread that owns it); the run's record
        if this result ends a recorded run (added to `project.runs`, see run_record).

        An array the project already has (same shape and dtype) is written in place, so
        a view holding it sees the new values. Optimizer entries are replaced as a whole;
        a hook's history is kept only while the project still has the hook, and a hook
        the run did not capture keeps what the project had.
        """
        param_values = project.param_values
        clear_optimizer(param_values)
        for node_id, arrays in self.values.items():
            held = param_values.setdefault(node_id, {})
            for name, value in arrays.items():
                old = held.get(name)
                if (isinstance(old, np.ndarray) and old.shape == value.shape
                        and old.dtype == value.dtype and old.flags.writeable):  # fmt: skip
                    np.copyto(old, value)
                else:
                    held[name] = value.copy()  # the result may be applied again elsewhere
        project.training["state"] = copy.deepcopy(dict(self.state))
        histories = {hook_id: saved for hook_id, saved in project.hook_history.items()
                     if project.hook(hook_id) is not None}  # fmt: skip
        for hook_id, saved in self.hook_history.items():
            if project.hook(hook_id) is not None:
                histories[hook_id] = dict(saved)
        project.hook_history = histories
        return None if self.run is None else record_run(project, self.run, self.values)


def collect(compiled: Any, optimizer: Any, state: Any, metrics: Any, captures: Any,
            run: RunEnd | None = None) -> RunResult:  # fmt: skip
    """A `RunResult` of the session's parts as they are now (call between two steps, on
    the thread that trains, or with no run going on), carrying `run` if it ends one. Also
    records the optimizer's JSON state in `state` (the session's own)."""
    values: dict[str, dict[str, np.ndarray]] = {}
    owner = compiled.parameter_owner
    for name, param in compiled.parameters().items():
        node_id, local = owner[name]
        values.setdefault(node_id, {})[local] = np.array(param.asnumpy(), copy=True)
    state.optimizer = store_optimizer(optimizer, owner, values)  # its arrays beside those
    saved = copy.deepcopy(state.to_json())
    saved["history"] = metrics.to_json()
    histories = {}
    for hook_id, capture in list(captures.captures.items()):
        if hook_id.startswith(HEALTH_PREFIX):
            continue  # the health overlay's hidden hooks are no project hooks
        capture.summarise()  # what was copied and not yet looked at goes in too
        histories[hook_id] = MappingProxyType(capture.saved_state())
    return RunResult(
        step=state.step,
        values=MappingProxyType({k: MappingProxyType(v) for k, v in values.items()}),
        state=MappingProxyType(saved),
        hook_history=MappingProxyType(histories),
        run=run,
    )


class Handover:
    """Results waiting for the project's owner, and the owner's requests for one.

    The training thread `put`s; the owner `take`s (all waiting, oldest first) and may
    `wait` for one. `request()` asks the training thread for a result at its next step
    boundary or while it waits in a pause; `take_request()` is how it finds out.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._waiting: list[RunResult] = []
        self._requested = False

    def put(self, result: RunResult) -> None:
        with self._changed:
            self._waiting.append(result)
            self._changed.notify_all()

    def take(self) -> list[RunResult]:
        with self._changed:
            waiting, self._waiting = self._waiting, []
            return waiting

    def request(self) -> None:
        with self._changed:
            self._requested = True
            self._changed.notify_all()

    @property
    def requested(self) -> bool:
        return self._requested

    def take_request(self) -> bool:
        with self._changed:
            asked, self._requested = self._requested, False
            return asked

    def withdraw(self) -> None:
        """The owner no longer wants the result it asked for (it gave up waiting)."""
        with self._changed:
            self._requested = False

    def wait(self, until, timeout: float | None) -> bool:
        """Block until a result waits or `until()` is true (or `timeout` passes); True then.
        `notify()` makes it look at `until` again."""
        with self._changed:
            return self._changed.wait_for(lambda: bool(self._waiting) or until(), timeout)

    def notify(self) -> None:
        with self._changed:
            self._changed.notify_all()
