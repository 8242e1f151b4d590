"""Which Parameters a node has, and where the Parameter editor reads and writes their values.

The values a user sees and edits are the project's (`project.param_values`): the
undo commands write there, and the run controller copies each change into the
session's network. The project's arrays are brought up to date from the network
(`sync`) before they are shown or edited; while a run trains, from the weight
snapshot taken between two steps. The arrays keep their identity across syncs, so a
view can hold one and read it directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from app.compiler import CompiledNetwork
from app.document import Project


@dataclass(frozen=True)
class ParamInfo:
    """One Parameter of the compiled network, as the Parameter editor lists it."""

    name: str  # the dotted name the compiled network uses: 'block1.dense1.weight'
    node_id: str  # the (innermost) node that owns it
    local: str  # its name on that node's Cell: 'weight'
    node_path: str  # that node's dotted path: 'block1.dense1'
    shape: tuple[int, ...]
    dtype: str
    trainable: bool  # by nature (BatchNorm's moving statistics are not)
    frozen: bool  # the user froze it (trainable ones only)

    @property
    def status(self) -> str:
        if not self.trainable:
            return "not trainable"
        return "frozen" if self.frozen else "trainable"


def node_params(compiled: CompiledNetwork, project: Project,
                node_ids: Iterable[str]) -> list[ParamInfo]:  # fmt: skip
    """The Parameters owned by `node_ids` (give a composite's inner nodes too), network order."""
    wanted = set(node_ids)
    trainable = set(compiled.trainable)
    infos = []
    for name, param in compiled.parameters().items():
        node_id, local = compiled.parameter_owner[name]
        if node_id not in wanted:
            continue
        infos.append(ParamInfo(
            name=name, node_id=node_id, local=local,
            node_path=name[: -len(local) - 1] if name.endswith("." + local) else name,
            shape=tuple(param.shape), dtype=np.dtype(param.asnumpy().dtype).name,
            trainable=name in trainable,
            frozen=name in trainable and project.is_frozen(node_id, local),
        ))  # fmt: skip
    return infos


def inner_node_ids(project: Project, node_id: str) -> list[str]:
    """`node_id` and, for a composite, every node inside it (at any depth)."""
    for _, node in project.graph.walk():
        if node.id == node_id:
            ids = [node_id]
            if node.subgraph is not None:
                ids += [inner.id for _, inner in node.subgraph.walk()]
            return ids
    return []


def sync(project: Project, infos: Iterable[ParamInfo],
         values: Mapping[str, np.ndarray]) -> list[ParamInfo]:  # fmt: skip
    """Copy `values` (by network name) into the project's arrays for `infos`, in place where
    the array is there with the same shape and dtype; returns those whose array was new."""
    replaced = []
    for info in infos:
        value = values.get(info.name)
        if value is None:
            continue
        arrays = project.param_values.setdefault(info.node_id, {})
        array = arrays.get(info.local)
        if (isinstance(array, np.ndarray) and array.shape == value.shape
                and array.dtype == value.dtype and array.flags.writeable):  # fmt: skip
            np.copyto(array, value)
        else:
            arrays[info.local] = np.array(value, copy=True)
            replaced.append(info)
    return replaced


def frozen_marks(project: Project, compiled: CompiledNetwork) -> dict[str, str]:
    """Node id -> badge for nodes (and composites around them) holding frozen Parameters:
    '❄' when all of the node's trainable Parameters are frozen, else '❄ k/n'."""
    counts: dict[str, list[int]] = {}  # node id -> [frozen, trainable]
    owners = _composite_owners(project)
    for name in compiled.trainable:
        node_id, local = compiled.parameter_owner[name]
        frozen = project.is_frozen(node_id, local)
        for holder in (node_id, *owners.get(node_id, ())):
            count = counts.setdefault(holder, [0, 0])
            count[0] += frozen
            count[1] += 1
    return {node_id: "❄" if frozen == total else f"❄ {frozen}/{total}"
            for node_id, (frozen, total) in counts.items() if frozen}  # fmt: skip


def _composite_owners(project: Project) -> dict[str, list[str]]:
    """Node id -> the ids of the composites it sits in, outermost first."""
    owners: dict[str, list[str]] = {}

    def visit(graph, around: list[str]) -> None:
        for node in graph.nodes.values():
            owners[node.id] = around
            if node.subgraph is not None:
                visit(node.subgraph, [*around, node.id])

    visit(project.graph, [])
    return owners
