"""The saved training progress (project.json's `training.state`), checked like the rest of the file.

The progress is what lets training go on where it stopped: counters, the epoch in
progress, the engine's random generator, the optimizer's step and the curves' rows
(app.session.progress and app.session.metrics write it). A file may hold anything
there, so every field is checked on load, with the layout's own rules (project_schema):
the right kind of value, whole numbers where counts go, sizes in range.

What is damaged is not a reason to refuse the network and its weights: `tidy_state`
leaves the damaged part out (the curves alone, if only they are damaged; else all the
progress, so training starts again from step 0 with the saved weights) and returns
what it left out, in words for the user.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from app.io.project_schema import (
    SchemaError,
    integer,
    list_of,
    number,
    record,
    text,
)

STATE_VERSION = 1  # app.session.progress.STATE_VERSION: the layout checked here
MAX_COUNT = 2**53  # steps, epochs, batches: whole numbers a float64 curve row holds exactly
MAX_COLUMNS = 64
MAX_ROWS = 100_000  # rows of one curve (a save writes at most 30,000)
OPTIMIZER_PREFIX = "_optimizer."  # app.session.progress: Parameter-value names of its arrays


def count(value: Any, where: str) -> None:
    whole = isinstance(value, int) and not isinstance(value, bool)
    if not whole or not 0 <= value <= MAX_COUNT:
        shown = f"{value!r}" if whole or isinstance(value, float) else _kind(value)
        raise SchemaError(f"{where} must be a whole number from 0 to {MAX_COUNT:,}, not "
                          f"{shown[:40]}")  # fmt: skip


def _optional(check):
    def optional(value: Any, where: str) -> None:
        if value is not None:
            check(value, where)

    return optional


def _big(bits: int):
    """A whole number saved as {"int": "<decimal digits>"} (JSON readers round big numbers)."""

    def check(value: Any, where: str) -> None:
        record({"int": text(60, 1)})(value, where)
        digits = value["int"]
        if not (digits.isascii() and digits.isdigit()) or int(digits) >= 1 << bits:
            raise SchemaError(f"{where} must be a whole number from 0 to 2**{bits} - 1")

    return check


_RNG_FIELDS = record(
    {"bit_generator": text(64, 1), "state": record({"state": _big(128), "inc": _big(128)})},
    {"has_uint32": _big(1), "uinteger": _big(32)},
)


def _rng(value: Any, where: str) -> None:
    _RNG_FIELDS(value, where)
    if value["bit_generator"] != "PCG64":
        raise SchemaError(f"{where} is for a {value['bit_generator']!r} generator, not PCG64")
    state = {"bit_generator": "PCG64",
             "state": {k: int(v["int"]) for k, v in value["state"].items()},
             "has_uint32": int(value.get("has_uint32", {"int": "0"})["int"]),
             "uinteger": int(value.get("uinteger", {"int": "0"})["int"])}  # fmt: skip
    try:  # what NumPy itself refuses (e.g. an increment it can't take) is refused here too
        np.random.PCG64().state = state
    except (TypeError, ValueError, OverflowError) as exc:
        raise SchemaError(f"{where} is not a state the generator can take ({exc})") from None


_OPTIMIZER = record(
    {"type": text(100, 1), "step": count},
    {"slots": list_of(text(200, 1), 100), "parameters": list_of(text(10_000, 1))},
)
_TALLY = record({}, {"loss_sum": number, "correct": count, "count": count})


def _cell(value: Any, where: str) -> None:
    if value is not None:  # null: a number that was missing (NaN) when saved
        number(value, where)


_KEPT = record(
    {"total": count},
    {"arrival": list_of(count, MAX_ROWS), "reservoir": list_of(count, MAX_ROWS),
     "random": text(10_000)},
)  # fmt: skip
_HISTORY_FIELDS = record(
    {},
    {"steps": list_of(list_of(_cell, MAX_COLUMNS), MAX_ROWS),
     "epochs": list_of(list_of(_cell, MAX_COLUMNS), MAX_ROWS),
     "step_columns": list_of(text(64, 1), MAX_COLUMNS),
     "epoch_columns": list_of(text(64, 1), MAX_COLUMNS),
     "step_history": _KEPT, "epoch_history": _KEPT},
)  # fmt: skip


def _history(value: Any, where: str) -> None:
    """Rows as wide as their columns, with a whole step and epoch in every row."""
    _HISTORY_FIELDS(value, where)
    for table, default in (("steps", ["step", "epoch"]), ("epochs", ["epoch", "step"])):
        columns = value.get(f"{table[:-1]}_columns", default)
        counted = [i for i, name in enumerate(columns) if name in ("step", "epoch")]
        for i, row in enumerate(value.get(table, ())):
            here = f"{where}.{table}[{i}]"
            if f"{table[:-1]}_columns" in value and len(row) != len(columns):
                raise SchemaError(f"{here} holds {len(row)} numbers for {len(columns)} columns")
            for k in counted:
                if k < len(row):
                    count(row[k], f"{here}[{k}] ({columns[k]})")


STATE_CORE = record(
    {},
    {"version": integer, "step": count, "epoch": count, "batch": count,
     "target_epoch": _optional(count), "tally": _optional(_TALLY), "rng": _optional(_rng),
     "optimizer": _optional(_OPTIMIZER), "message": text(100_000), "batch_size": count},
)  # fmt: skip


def tidy_state(training: dict[str, Any], param_values: dict[str, dict[str, Any]]) -> str | None:
    """Leave out what is damaged in `training["state"]` (in place); what was left out and
    why, for the user, or None if all of it is sound.

    Damaged curves alone: the curves go. Anything else damaged: all the progress goes
    (and the optimizer's saved arrays with it). Either way the state's message (how the
    last run ended, which the Run panel shows) then says so.
    """
    state = training.get("state")
    if state is None or state == {}:
        return None
    try:
        if not isinstance(state, dict):
            raise SchemaError(f"training.state must be an object, not {_kind(state)}")
        history = state.get("history")
        core = {k: v for k, v in state.items() if k != "history"}
        STATE_CORE(core, "training.state")
        if core.get("version", STATE_VERSION) != STATE_VERSION:
            raise SchemaError(f"training.state has version {core['version']}, "
                              f"not {STATE_VERSION}")  # fmt: skip
    except SchemaError as exc:
        note = (f"The saved training progress is damaged ({exc}), so it was left out: "
                "the network and its weights are as saved, and training starts again from "
                "step 0.")  # fmt: skip
        training["state"] = {"version": STATE_VERSION, "message": note}
        for values in param_values.values():
            for key in [k for k in values if k.startswith(OPTIMIZER_PREFIX)]:
                del values[key]
        return note
    if history is None:
        return None
    try:
        _history(history, "training.state.history")
    except SchemaError as exc:
        del state["history"]
        state["message"] = (f"The saved training curves are damaged ({exc}), so they were "
                            "left out; the rest of the progress is kept.")  # fmt: skip
        return state["message"]
    return None


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "true/false",
             type(None): "null"}
    return names.get(type(value), "a number" if isinstance(value, int | float) else "a value")
