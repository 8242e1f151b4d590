"""Checkpoints as `.npz` files: one array per parameter name, written atomically, never pickled.

`save_checkpoint` writes a zip of `.npy` arrays (the format `np.load` reads)
to a temporary file beside the target and renames it over the target, so a
crash never leaves a half-written checkpoint. `load_checkpoint` reads with
`allow_pickle=False`. `load_param_into_net` checks every name, shape and dtype
before it writes any, so a checkpoint that does not fit changes nothing.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import zipfile

import numpy as np

from engine.parameter import Parameter
from engine.tensor import Tensor

__all__ = ["CheckpointError", "save_checkpoint", "load_checkpoint", "load_param_into_net"]


class CheckpointError(ValueError):
    """A checkpoint file cannot be read, or does not fit the network."""


def _as_array(value, name: str) -> np.ndarray:
    if isinstance(value, Tensor):
        arr = value._data
    elif isinstance(value, (np.ndarray, np.generic, int, float, bool, list, tuple)):
        arr = np.asarray(value)
    else:
        raise TypeError(f"checkpoint entry '{name}' must be a Tensor or an array, got "
                        f"{type(value).__name__}")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"checkpoint entry '{name}' has dtype {arr.dtype}; only numeric arrays "
                        "can be saved")
    return arr


def _entries(save_obj) -> list[tuple[str, np.ndarray]]:
    """(name, array) pairs from a Cell, a list of Parameters or a list of {'name', 'data'} dicts."""
    from engine.nn.cell import Cell

    if isinstance(save_obj, Cell):
        items = [(p.name, p._data) for _, p in save_obj.parameters_and_names()]
    elif isinstance(save_obj, dict):
        items = [(str(k), _as_array(v, str(k))) for k, v in save_obj.items()]
    elif isinstance(save_obj, (list, tuple)):
        items = []
        for entry in save_obj:
            if isinstance(entry, Parameter):
                items.append((entry.name, entry._data))
            elif isinstance(entry, dict) and "name" in entry and "data" in entry:
                items.append((str(entry["name"]), _as_array(entry["data"], str(entry["name"]))))
            else:
                raise TypeError(
                    "save_checkpoint takes a Cell, a list of Parameters or a list of "
                    f"{{'name': ..., 'data': ...}} dicts; got a {type(entry).__name__} entry"
                )
    else:
        raise TypeError(f"save_checkpoint cannot save a {type(save_obj).__name__}; pass a Cell, "
                        "a list of Parameters or a list of {'name': ..., 'data': ...} dicts")
    seen = set()
    for name, _ in items:
        if not name:
            raise ValueError("checkpoint entries need a non-empty name")
        if name in seen:
            raise ValueError(f"two parameters are named '{name}'; checkpoint names must be unique")
        seen.add(name)
    return items


def save_checkpoint(save_obj, ckpt_file_name, integrated_save=True, async_save=False,
                    append_dict=None, **kwargs) -> None:
    """Write `save_obj`'s parameters to exactly `ckpt_file_name` as an `.npz` archive.

    `save_obj` is a Cell (all its parameters, trainable or not), a list of
    Parameters, or a list of `{'name': str, 'data': Tensor}` dicts;
    `append_dict` adds further named numbers or arrays. Written to a temporary
    file first and renamed over the target, so the old file survives a failure.
    """
    items = _entries(save_obj)
    if append_dict:
        if not isinstance(append_dict, dict):
            raise TypeError("append_dict must be a dict of name -> number or array")
        names = {n for n, _ in items}
        for key, value in append_dict.items():
            if key in names:
                raise ValueError(f"append_dict entry '{key}' has the name of a parameter")
            items.append((str(key), _as_array(value, str(key))))
    path = os.fspath(ckpt_file_name)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".ckpt-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
                for name, arr in items:
                    with zf.open(name + ".npy", "w", force_zip64=True) as member:
                        np.lib.format.write_array(member, np.asarray(arr), allow_pickle=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _read(path) -> dict[str, np.ndarray]:
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"checkpoint file not found: {path}")
    try:
        archive = np.load(path, allow_pickle=False)
    except ValueError as exc:  # neither zip nor .npy: np.load took it for a pickle and refused
        raise CheckpointError(
            f"{path} is not an .npz checkpoint: it is neither a zip archive nor a NumPy array "
            "(it may be a pickle, which is never loaded)"
        ) from exc
    except Exception as exc:  # any other failure to parse: a bad file
        raise CheckpointError(f"{path} is not a readable .npz checkpoint: {exc}") from exc
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise CheckpointError(f"{path} is a single .npy array, not an .npz checkpoint")
    arrays = {}
    with archive:
        for name in archive.files:
            try:
                arr = archive[name]
            except ValueError as exc:  # object arrays need pickle, refused by allow_pickle=False
                raise CheckpointError(
                    f"{path}: entry '{name}' holds pickled or object data, which is never loaded"
                ) from exc
            except Exception as exc:  # truncated or corrupt member
                raise CheckpointError(f"{path}: entry '{name}' cannot be read: {exc}") from exc
            if not isinstance(arr, np.ndarray):
                raise CheckpointError(f"{path}: entry '{name}' is not a NumPy array")
            if arr.dtype.kind not in "biuf":
                raise CheckpointError(
                    f"{path}: entry '{name}' has dtype {arr.dtype}; a checkpoint holds numeric "
                    "arrays only"
                )
            arrays[name] = arr
    return arrays


def load_checkpoint(ckpt_file_name, net=None, strict_load=False, filter_prefix=None,
                    specify_prefix=None, **kwargs) -> dict[str, Parameter]:
    """Read an `.npz` checkpoint into a dict of name -> Parameter (loaded into `net` if given).

    `filter_prefix` drops entries whose names start with it (a string or a
    tuple of strings); `specify_prefix` keeps only those that do.
    """
    arrays = _read(ckpt_file_name)
    filt = _prefixes(filter_prefix, "filter_prefix")
    spec = _prefixes(specify_prefix, "specify_prefix")
    params = {}
    for name, arr in arrays.items():
        if filt and name.startswith(filt):
            continue
        if spec and not name.startswith(spec):
            continue
        params[name] = Parameter(arr, name=name)
    if net is not None:
        load_param_into_net(net, params, strict_load=strict_load)
    return params


def _prefixes(value, what: str) -> tuple:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    items = tuple(value)
    if not all(isinstance(v, str) for v in items):
        raise TypeError(f"{what} must be a string or a sequence of strings")
    return items


def _find(name: str, available: dict, strict: bool):
    """A parameter's checkpoint key: exact, else (not strict) a unique dotted suffix."""
    if name in available:
        return name
    if strict:
        return None
    matches = [k for k in available if k.endswith("." + name) or name.endswith("." + k)]
    return matches[0] if len(matches) == 1 else None


def load_param_into_net(net, parameter_dict, strict_load=False, *, allow_missing=False):
    """Copy checkpoint values into `net`'s Parameters, matched by parameter name.

    Every parameter is checked before any is written: a parameter the
    checkpoint lacks, or whose saved shape differs, raises `CheckpointError`
    naming it (with the expected and found shapes) and leaves the network
    unchanged. Pass `allow_missing=True` to load what is there and skip the
    rest (fine-tuning). Returns `(param_not_load, ckpt_not_load)`: the
    network's parameters that were not loaded, and the checkpoint's entries
    that no parameter took.
    """
    from engine.nn.cell import Cell

    if not isinstance(net, Cell):
        raise TypeError(f"load_param_into_net needs a Cell, got {type(net).__name__}")
    if not isinstance(parameter_dict, dict):
        raise TypeError("load_param_into_net needs a dict of name -> Parameter, as "
                        f"load_checkpoint returns; got {type(parameter_dict).__name__}")
    available = {}
    for key, value in parameter_dict.items():
        available[str(key)] = _as_array(value, str(key))
    plan = []
    missing = []
    problems = []
    used = set()
    for _, param in net.parameters_and_names():
        key = _find(param.name, available, strict_load)
        if key is None:
            missing.append(param.name)
            continue
        arr = available[key]
        want = param._data
        if arr.shape != want.shape:
            problems.append(f"'{param.name}': expected shape {want.shape}, found {arr.shape}")
        elif not np.can_cast(arr.dtype, want.dtype, casting="same_kind"):
            problems.append(f"'{param.name}': a {arr.dtype} value cannot go into a "
                            f"{want.dtype} parameter")
        else:
            plan.append((param, arr))
            used.add(key)
    if missing and not allow_missing:
        shapes = ", ".join(
            f"'{p.name}' {p._data.shape}" for _, p in net.parameters_and_names()
            if p.name in missing
        )
        problems.insert(0, f"missing from the checkpoint: {shapes}")
    if problems:
        raise CheckpointError(
            "checkpoint does not fit the network, nothing was loaded: " + "; ".join(problems)
        )
    for param, arr in plan:
        np.copyto(param._data, arr, casting="same_kind")
    ckpt_not_load = [k for k in available if k not in used]
    return missing, ckpt_not_load
