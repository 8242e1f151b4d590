"""The run history in a project file: project.json's "runs" object and the `runs.npz` member.

project.json keeps, under "runs", the size cap, the sweep queue's state and every
record without its arrays; `runs.npz` keeps the arrays, one per
`<run id>/steps.npy` and `<run id>/epochs.npy` (its curves, float32) and
`<run id>/<node id>/<parameter>.npy` (its kept weights). Loading checks all of it like
the rest of the file (project_schema's rules; arrays unpacked with allow_pickle off,
each declared shape checked before its data is read), but a damaged run history never
costs the project: a damaged run is left out, a damaged history all of it, and
`load_runs` says what it left out in words for the user.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from typing import Any

import numpy as np

from app.document.node import DocumentError
from app.document.runs import (
    CAP_MB_RANGE,
    CURVE_ROWS,
    DEFAULT_CAP_MB,
    EPOCH_COLUMNS,
    METRICS,
    ORIGINS,
    STATUSES,
    STEP_COLUMNS,
    RunHistory,
    RunRecord,
)
from app.io.archive import ArchiveError, Limits, read_arrays
from app.io.project_schema import (
    SchemaError,
    ident,
    json_value,
    list_of,
    map_of,
    number,
    one_of,
    record,
    text,
)
from app.io.state_schema import count

RUNS_MEMBER = "runs.npz"
MAX_RUNS = 10_000
MAX_RUNS_BYTES = 2 << 30  # runs.npz unpacked: curves within the cap, plus kept weights
MAX_RUN_ARRAYS = 200_000
MAX_CURVE_ROWS = 4 * CURVE_ROWS  # a file may have been thinned less; more is damage
_MEMBER = re.compile(r"([0-9A-Za-z_-]{1,64})/(?:(steps|epochs)|([0-9A-Za-z_-]{1,64})/"
                     r"([A-Za-z_][A-Za-z0-9_.]{0,127}))\.npy")  # fmt: skip
_CURVES = {"steps": len(STEP_COLUMNS), "epochs": len(EPOCH_COLUMNS)}


def _maybe(check):
    def optional(value: Any, where: str) -> None:
        if value is not None:
            check(value, where)

    return optional


def _colour(value: Any, where: str) -> None:
    if not (isinstance(value, str) and re.fullmatch(r"#[0-9a-fA-F]{6}", value)):
        raise SchemaError(f"{where} must be a colour written #rrggbb")


def _flag(value: Any, where: str) -> None:
    if not isinstance(value, bool):
        raise SchemaError(f"{where} must be true or false")


def _seconds(value: Any, where: str) -> None:
    number(value, where)
    if value < 0:
        raise SchemaError(f"{where} must not be below 0")


def _metrics(value: Any, where: str) -> None:
    map_of(_maybe(number), len(METRICS))(value, where)
    for key in value:
        if key not in METRICS:
            raise SchemaError(f"{where} names no metric {key[:40]!r}")


_NETWORK = record({
    "nodes": map_of(record({"path": text(10_000, 1), "type": text(100, 1),
                            "params": map_of(json_value, 1000)}), 100_000),
    "edges": list_of(list_of(text(64, 1), exact=4), 1_000_000),
})  # fmt: skip
_CHANGE = record({"kind": one_of("added", "removed", "renamed", "param", "connection",
                                 "setting"),
                  "what": text(10_000), "old": json_value, "new": json_value},
                 {"unset": one_of("old", "new")})  # fmt: skip
RECORD = record(
    {"id": ident, "name": text(120, 1), "colour": _colour, "origin": one_of(*ORIGINS),
     "status": one_of(*STATUSES), "started": text(64), "duration": _seconds,
     "first_step": count, "steps": count, "settings": map_of(json_value),
     "network": _NETWORK, "metrics": _metrics, "weights": _flag},
    {"message": text(100_000), "named": _flag, "keep": _maybe(_flag),
     "diff": list_of(_CHANGE, 100_000), "sweep": _maybe(map_of(json_value))},
)  # fmt: skip
RUNS = record({"records": list_of(lambda v, w: None, MAX_RUNS)},
              {"cap_mb": number, "sweep": _maybe(map_of(json_value))})  # fmt: skip


# ---- save --------------------------------------------------------------------------------


def runs_to_json(history: RunHistory) -> dict[str, Any] | None:
    """project.json's "runs" object; None for a project that never ran (left out)."""
    if not history.records and history.sweep is None and history.cap_mb == DEFAULT_CAP_MB:
        return None
    data: dict[str, Any] = {"cap_mb": history.cap_mb,
                            "records": [_record_to_json(r) for r in history.records]}
    if history.sweep is not None:
        data["sweep"] = history.sweep
    return data


def _record_to_json(r: RunRecord) -> dict[str, Any]:
    data = {"id": r.id, "name": r.name, "colour": r.colour, "origin": r.origin,
            "status": r.status, "message": r.message, "started": r.started,
            "duration": float(r.duration), "first_step": int(r.first_step),
            "steps": int(r.steps), "settings": r.settings, "network": r.network,
            "diff": r.diff, "metrics": r.metrics, "named": r.named, "keep": r.keep,
            "weights": r.weights is not None}  # fmt: skip
    if r.sweep is not None:
        data["sweep"] = r.sweep
    return data


def check_runs_json(data: Any) -> None:
    """SchemaError where `data` (project.json's "runs") breaks its layout."""
    RUNS(data, "runs")
    for i, item in enumerate(data["records"]):
        RECORD(item, f"runs.records[{i}]")


def runs_arrays(history: RunHistory) -> dict[str, np.ndarray]:
    """The arrays for runs.npz: each run's curves and kept weights."""
    arrays: dict[str, np.ndarray] = {}
    for r in history.records:
        arrays[f"{r.id}/steps"] = np.ascontiguousarray(r.steps_curve, np.float32)
        arrays[f"{r.id}/epochs"] = np.ascontiguousarray(r.epochs_curve, np.float32)
        for node_id, values in (r.weights or {}).items():
            for name, value in values.items():
                key = f"{r.id}/{node_id}/{name}"
                if not _MEMBER.fullmatch(f"{key}.npy"):
                    raise ValueError(f"{name!r} can't name a kept weight of {r.name}")
                arrays[key] = np.asarray(value)
    return arrays


def write_runs_member(zf: zipfile.ZipFile, arrays: dict[str, np.ndarray],
                      entry: Callable[[str, int], zipfile.ZipInfo]) -> None:  # fmt: skip
    """runs.npz into `zf` (stored, as params.npz: curves and weights hardly compress)."""
    if arrays:
        with zf.open(entry(RUNS_MEMBER, zipfile.ZIP_STORED), "w", force_zip64=True) as m:
            np.savez(m, **arrays)


# ---- load --------------------------------------------------------------------------------


def load_runs(data: Any, raw: bytes | None) -> tuple[RunHistory, list[str]]:
    """The run history from project.json's "runs" (`data`, None if absent) and runs.npz's
    bytes (`raw`); what was left out, and why, as lines for the user."""
    if data is None:
        return RunHistory(), ([] if raw is None else [
            f"Its {RUNS_MEMBER} belongs to no run in project.json, so it was left out."])
    try:
        RUNS(data, "runs")
        cap = data.get("cap_mb", DEFAULT_CAP_MB)
        if not CAP_MB_RANGE[0] <= cap <= CAP_MB_RANGE[1]:
            raise SchemaError(f"runs.cap_mb must be {CAP_MB_RANGE[0]:g} to "
                              f"{CAP_MB_RANGE[1]:g} MB")  # fmt: skip
        arrays = _read_arrays(raw, {item.get("id") for item in data["records"]
                                    if isinstance(item, dict)})  # fmt: skip
    except (SchemaError, ArchiveError) as exc:
        return RunHistory(), [f"Its run history is damaged ({exc}), so it was left out; the "
                              "network, its weights and the training progress are as saved."]
    records, notes, seen = [], [], set()
    for i, item in enumerate(data["records"]):
        try:
            RECORD(item, f"runs.records[{i}]")
            if item["id"] in seen:
                raise SchemaError(f"runs.records[{i}] reuses the id {item['id']}")
            seen.add(item["id"])
            records.append(_record_from_json(item, arrays.get(item["id"], {})))
        except (SchemaError, DocumentError) as exc:
            notes.append(f"Run {i + 1} of its run history is damaged ({exc}), so it was "
                         "left out.")  # fmt: skip
    history = RunHistory(records, cap_mb=float(data.get("cap_mb", DEFAULT_CAP_MB)),
                         sweep=data.get("sweep"))  # fmt: skip
    return history, notes


def _read_arrays(raw: bytes | None, run_ids: set[Any]) -> dict[str, dict[str, Any]]:
    """run id -> {"steps", "epochs": array, "weights": {node id: {name: array}}}."""
    if raw is None:
        return {}

    def cap(member: str) -> int | None:
        return MAX_RUNS_BYTES if _MEMBER.fullmatch(member) else None

    def before(member: str, shape: tuple[int, ...]) -> None:
        run_id, curve, _, _ = _MEMBER.fullmatch(member).groups()
        if run_id not in run_ids:
            raise ArchiveError(f"it holds arrays of a run ({run_id}) not in the history")
        if curve and (len(shape) != 2 or shape[1] != _CURVES[curve]
                      or shape[0] > MAX_CURVE_ROWS):  # fmt: skip
            raise ArchiveError(f"the {curve} curve of run {run_id} has shape {shape}, not "
                               f"at most {MAX_CURVE_ROWS:,} rows of {_CURVES[curve]}")

    found: dict[str, dict[str, Any]] = {}
    arrays = read_arrays(raw, cap, Limits(MAX_RUNS_BYTES, MAX_RUN_ARRAYS), before)
    for member, array in arrays.items():
        run_id, curve, node_id, name = _MEMBER.fullmatch(member).groups()
        held = found.setdefault(run_id, {"weights": {}})
        if curve:
            held[curve] = array
        else:
            held["weights"].setdefault(node_id, {})[name] = array
    return found


def _record_from_json(item: dict[str, Any], arrays: dict[str, Any]) -> RunRecord:
    for curve in _CURVES:
        if curve not in arrays:
            raise SchemaError(f"its {curve} curve is missing from {RUNS_MEMBER}")
        if arrays[curve].dtype != np.float32:
            raise SchemaError(f"its {curve} curve holds {arrays[curve].dtype}, not float32")
    weights = arrays.get("weights") or {}
    strangers = set(weights) - set(item["network"]["nodes"])
    if strangers:
        raise SchemaError("it keeps weights of a node not in its network")
    if item["weights"] and not weights:
        raise SchemaError(f"its kept weights are missing from {RUNS_MEMBER}")
    if weights and not item["weights"]:
        raise SchemaError(f"{RUNS_MEMBER} holds weights it does not keep")
    return RunRecord(
        settings=item["settings"], network=item["network"], started=item["started"],
        duration=float(item["duration"]), first_step=item["first_step"], steps=item["steps"],
        status=item["status"], message=item.get("message", ""),
        metrics={k: (None if v is None else float(v)) for k, v in item["metrics"].items()},
        steps_curve=arrays["steps"], epochs_curve=arrays["epochs"],
        weights=weights or None, origin=item["origin"], sweep=item.get("sweep"),
        diff=item.get("diff", []), name=item["name"], colour=item["colour"].lower(),
        named=item.get("named", False), keep=item.get("keep"), id=item["id"],
    )  # fmt: skip
