"""Trained weights back in: PyTorch state_dict names and layouts mapped onto the project's
Parameters, the PyTorch export's own mapping read backwards.

    values = match_torch_state(project, arrays)   # {node id: {local name: array}}
    # WeightsMismatch (.problems) lists every misfit; then nothing is to change

The export writes each Parameter under `_torch_name` in the layout its family's
TORCH_STATE function gives (Conv1d drops the engine's height axis, …). Reading back uses
the same two: the torch name comes from `_torch_name`, and a layout is undone by running
the family's function on the Parameter's element *indices*, which tells where each torch
element came from. There is no second table to keep in step. Parameters the export leaves
out of the state_dict (InstanceNorm's statistics, a non-affine BatchNorm's gamma and beta)
are not expected and keep their values; `num_batches_tracked` is ignored. A state_dict
saved from a DistributedDataParallel wrapper ('module.' before every name) is read too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from app.catalogue import CATALOGUE, Catalogue
from app.compiler import compile_project
from app.document import Project
from app.export import kinds
from app.export.python_script import ExportError, _class_name
from app.export.torch_script import _split, _state_dict, _torch_name, _Writer

IGNORED_SUFFIX = "num_batches_tracked"
DDP_PREFIX = "module."


@dataclass(frozen=True, eq=False)
class TorchParameter:
    """Where one state_dict entry goes: the project Parameter `name` (node `node_id`,
    `local` inside it), its engine `shape`, and torch's `torch_shape`. `order[i]` is the
    engine's flat index of torch's flat element i (None: the same layout)."""

    torch_name: str
    name: str
    node_id: str
    local: str
    shape: tuple[int, ...]
    torch_shape: tuple[int, ...]
    dtype: np.dtype
    order: np.ndarray | None

    def engine_value(self, array: np.ndarray) -> np.ndarray:
        """A torch-layout array of `torch_shape` in the engine's layout and type."""
        flat = np.asarray(array).reshape(-1)
        if self.order is not None:
            out = np.empty(flat.size, dtype=flat.dtype)
            out[self.order] = flat
            flat = out
        with np.errstate(all="ignore"):
            return flat.reshape(self.shape).astype(self.dtype)


class WeightsMismatch(ValueError):
    """The file's weights don't fit the project; `problems` lists each misfit."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        count = len(self.problems)
        super().__init__(f"{count} problem{'s' if count != 1 else ''}: "
                         + "; ".join(self.problems) + ". Nothing was changed.")


def torch_parameters(project: Project, *, catalogue: Catalogue = CATALOGUE
                     ) -> dict[str, TorchParameter]:  # fmt: skip
    """The project's Parameters by the state_dict name the PyTorch export gives them.

    CompileError for a network that does not compile, ExportError for one the PyTorch
    export can't write (its names would not be torch's either).
    """
    compiled = compile_project(project, catalogue=catalogue)
    writer = _Writer(compiled)
    writer.graph_class(project.graph, _class_name(project.name), "", "")
    state = _state_dict(compiled, writer.types)
    found = {}
    for name, param in compiled.parameters().items():
        torch_name = _torch_name(name, writer.types, compiled)
        if torch_name not in state:  # the export leaves it out: nothing comes back for it
            continue
        head, local = _split(name, compiled)
        shape = tuple(param.shape)
        order = None
        relayout = kinds.TORCH_STATE.get(writer.types.get(head, ""))
        if relayout is not None:
            indices = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
            moved = relayout(local, indices)
            order = np.asarray(moved[1]).reshape(-1).astype(np.int64)
            if not np.array_equal(np.sort(order), indices.reshape(-1)):
                raise ExportError(f"{name}: its PyTorch layout can't be read back.")
            if np.array_equal(order, indices.reshape(-1)):
                order = None
        found[torch_name] = TorchParameter(
            torch_name, name, compiled.parameter_owner[name][0], compiled.parameter_owner[name][1],
            shape, tuple(np.shape(state[torch_name])), param.asnumpy().dtype, order)
    return found


def match_torch_state(project: Project, arrays: Mapping[str, np.ndarray], *,
                      catalogue: Catalogue = CATALOGUE) -> dict[str, dict[str, np.ndarray]]:
    """The project's new Parameter values from a state_dict's arrays: {node id: {local
    name: array in the engine's layout}}. Raises WeightsMismatch listing every parameter
    whose shape or values don't fit (naming both shapes), every name the file lacks and
    every name the project lacks; CompileError or ExportError as `torch_parameters`."""
    expected = torch_parameters(project, catalogue=catalogue)
    arrays = _without_ddp_prefix(dict(arrays), expected)
    problems: list[str] = []
    values: dict[str, dict[str, np.ndarray]] = {}
    for torch_name, target in expected.items():
        if torch_name not in arrays:
            continue
        array = np.asarray(arrays[torch_name])
        label = (f"'{torch_name}'" if torch_name == target.name
                 else f"'{torch_name}' (Parameter {target.name})")  # fmt: skip
        if tuple(array.shape) != target.torch_shape:
            problems.append(f"{label}: the project has {_shape(target.torch_shape)}, "
                            f"the file holds {_shape(array.shape)}")  # fmt: skip
        elif array.dtype.kind not in "fiu":
            problems.append(f"{label}: the file holds {array.dtype} values, not numbers")
        else:
            value = target.engine_value(array)
            if value.dtype.kind == "f" and not np.isfinite(value).all():
                problems.append(f"{label}: not all values are finite numbers (NaN, inf, or "
                                f"too large for {value.dtype})")  # fmt: skip
            else:
                values.setdefault(target.node_id, {})[target.local] = value
    missing = [name for name in expected if name not in arrays]
    unmatched = [name for name in arrays
                 if name not in expected and not name.endswith(IGNORED_SUFFIX)]  # fmt: skip
    if missing:
        problems.append(f"missing from the file: {_names(missing)}")
    if unmatched:
        problems.append(f"in the file but not in the project: {_names(unmatched)}")
    if problems:
        raise WeightsMismatch(problems)
    return values


def _without_ddp_prefix(arrays: dict[str, np.ndarray], expected: Mapping[str, object]
                        ) -> dict[str, np.ndarray]:  # fmt: skip
    """DistributedDataParallel's state_dict: every name after 'module.'."""
    if arrays and all(n.startswith(DDP_PREFIX) for n in arrays) and not any(
            n.startswith(DDP_PREFIX) for n in expected):  # fmt: skip
        return {n[len(DDP_PREFIX):]: a for n, a in arrays.items()}
    return arrays


def _shape(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _names(names: list[str], limit: int = 12) -> str:
    shown = ", ".join(f"'{n}'" for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
