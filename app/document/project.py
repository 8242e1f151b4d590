"""A project: the graph with its trained Parameter values, hooks, training settings and view."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from app.document.events import (
    Events,
    FreezeChanged,
    HookAdded,
    HookChanged,
    HookRemoved,
    ParamValuesChanged,
    TrainingChanged,
)
from app.document.graph import Graph
from app.document.node import ABSENT, DocumentError, check_id, new_id, same_value
from app.document.runs import RunHistory

# A probe kind is a pane looking inside a layer through its `probe` (app.session.probes).
PROBE_HOOK_KINDS = ("attention", "recurrent")
NODE_HOOK_KINDS = ("forward_pre", "forward", "backward", *PROBE_HOOK_KINDS)  # on a node's Cell
EDGE_HOOK_KINDS = ("hook_backward",)  # a HookBackward on an edge, or a HookBackward node's
HOOK_KINDS = NODE_HOOK_KINDS + EDGE_HOOK_KINDS


@dataclass(frozen=True)
class Hook:
    """A hook the user attached, and the plot pane showing what it captures.

    `target` is a node id for node kinds; for `hook_backward` an edge id, or the id of
    a HookBackward node (whose gradient it sees), at any level of the graph. `pane` is
    the pane's kind of view; `settings` holds its other JSON-able options.
    """

    kind: str
    target: str
    pane: str = "histogram"
    settings: Mapping[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_id)

    def __post_init__(self) -> None:
        if self.kind not in HOOK_KINDS:
            raise DocumentError(
                f"Unknown hook kind {self.kind!r} (known: {', '.join(HOOK_KINDS)})."
            )
        check_id(self.id, "A hook id")
        check_id(self.target, "A hook target")
        if not isinstance(self.pane, str) or not self.pane:
            raise DocumentError("A hook's pane must be named.")
        object.__setattr__(self, "settings", MappingProxyType(dict(self.settings)))

    @property
    def on_edge(self) -> bool:
        """A gradient hook placed on an edge or on a HookBackward node (not a Cell hook)."""
        return self.kind in EDGE_HOOK_KINDS

    @property
    def gradient(self) -> bool:
        """It captures gradients (backward kinds), not activations."""
        return self.kind in ("backward", "hook_backward")

    def with_view(self, pane: str, settings: Mapping[str, Any]) -> Hook:
        """This hook with another pane view and settings (same id and target)."""
        return replace(self, pane=pane, settings=dict(settings))


@dataclass(eq=False)
class Project:
    """Everything a project file holds.

    `param_values[node_id][param_name]` keeps Parameter values with the document, so a
    recompile after an edit keeps the trained weights of unchanged nodes. Values of
    nodes no longer in the graph are kept in memory (an undo may bring the node back)
    but are not saved. `hook_history[hook_id]` is what a hook captured during training
    (its capture history's state, arrays by name, written by the training session);
    likewise saved only for hooks still attached. `frozen[node_id]` names the node's
    Parameters the user froze (training leaves them unchanged); saved for nodes still
    in the graph.
    """

    graph: Graph = field(default_factory=Graph)
    name: str = "Untitled"
    training: dict[str, Any] = field(default_factory=dict)
    hooks: list[Hook] = field(default_factory=list)
    view: dict[str, Any] = field(default_factory=dict)
    param_values: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    hook_history: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    frozen: dict[str, set[str]] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    runs: RunHistory = field(default_factory=RunHistory)  # the run history (app.document.runs)
    # TrainingChanged after each `set_training` (the graph has its own `graph.events`).
    events: Events = field(default_factory=Events, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.runs.emit = self.events.emit  # RunsChanged reaches the project's listeners

    def set_training(self, key: str, value: Any) -> None:
        """Set one training setting (ABSENT removes it) and tell the project's listeners."""
        if not isinstance(key, str) or not key or key == "state":
            raise DocumentError(f"{key!r} is not a training setting one can set.")
        old = self.training.get(key, ABSENT)
        if same_value(old, value):
            return
        if value is ABSENT:
            del self.training[key]
        else:
            self.training[key] = value
        self.events.emit(TrainingChanged(key, old, value))

    # ---- hooks (the undo commands call these; each tells the project's listeners) --------

    def hook(self, hook_id: str) -> Hook | None:
        return next((h for h in self.hooks if h.id == hook_id), None)

    def add_hook(self, hook: Hook, index: int | None = None) -> None:
        """Attach `hook` (at `index` in `hooks`, default last); its target must exist."""
        if not isinstance(hook, Hook):
            raise DocumentError(f"A hook must be a Hook, not {type(hook).__name__}.")
        if self.hook(hook.id) is not None:
            raise DocumentError(f"There is already a hook with the id {hook.id}.")
        if hook.target not in self.hook_targets(hook.kind):
            where = "an edge or a HookBackward node" if hook.on_edge else "a node"
            raise DocumentError(f"A {hook.kind} hook goes on {where} of the network; "
                                f"{hook.target} is not one.")  # fmt: skip
        index = len(self.hooks) if index is None else max(0, min(index, len(self.hooks)))
        self.hooks.insert(index, hook)
        self.events.emit(HookAdded(hook, index))

    def remove_hook(self, hook_id: str) -> tuple[Hook, int]:
        """Take the hook away; returns it and where it was (for an undo)."""
        for index, hook in enumerate(self.hooks):
            if hook.id == hook_id:
                del self.hooks[index]
                self.events.emit(HookRemoved(hook, index))
                return hook, index
        raise DocumentError("That hook is no longer attached.")

    def change_hook(self, hook: Hook) -> Hook:
        """Replace the hook with the same id (its pane or settings changed); returns the old."""
        for index, old in enumerate(self.hooks):
            if old.id == hook.id:
                if (old.kind, old.target) != (hook.kind, hook.target):
                    raise DocumentError("A hook keeps its kind and target; add a new one.")
                self.hooks[index] = hook
                self.events.emit(HookChanged(old, hook))
                return old
        raise DocumentError("That hook is no longer attached.")

    def hook_targets(self, kind: str) -> set[str]:
        """What a hook of `kind` can be attached to: node ids, or edge and HookBackward ids."""
        if kind in EDGE_HOOK_KINDS:
            hook_nodes = {n.id for _, n in self.graph.walk() if n.type == "HookBackward"}
            return self.edge_ids() | hook_nodes
        return self.node_ids()

    def node_ids(self) -> set[str]:
        """Ids of the nodes at every level of the graph."""
        return {node.id for _, node in self.graph.walk()}

    def edge_ids(self) -> set[str]:
        """Ids of the edges at every level of the graph."""
        ids = set(self.graph.edges)
        for _, node in self.graph.walk():
            if node.subgraph is not None:
                ids |= set(node.subgraph.edges)
        return ids

    # ---- Parameter values and freezing (the undo commands call these) ----------------------

    def set_values(self, node_id: str, name: str, index: tuple, values: np.ndarray) -> np.ndarray:
        """Write `values` into `param_values[node_id][name][index]` in place; returns the old
        entries there (a copy, for an undo). Finite numbers of the right shape only."""
        array = self.param_values.get(node_id, {}).get(name)
        if array is None:
            raise DocumentError(f"There is no value for the Parameter {name} to change.")
        index = tuple(index)
        try:
            old = np.array(array[index], copy=True)
            new = np.asarray(values)
            if new.shape != old.shape:
                raise DocumentError(f"{name}{list(index)} has shape {old.shape}; the new values "
                                    f"have shape {new.shape}.")  # fmt: skip
            with np.errstate(all="ignore"):
                converted = new.astype(array.dtype)
        except (IndexError, TypeError, ValueError) as exc:
            raise DocumentError(f"Can't change {name}: {exc}") from None
        if converted.dtype.kind == "f" and not np.isfinite(converted).all():
            raise DocumentError(f"A Parameter must hold finite numbers; the new values for "
                                f"{name} are not all finite.")  # fmt: skip
        array[index] = converted
        self.events.emit(ParamValuesChanged(node_id, name, index))
        return old

    def is_frozen(self, node_id: str, name: str) -> bool:
        return name in self.frozen.get(node_id, ())

    def set_frozen(self, node_id: str, names: tuple[str, ...] | list[str], frozen: bool) -> None:
        """Freeze (or unfreeze) the node's Parameters `names`; tells the listeners."""
        if node_id not in self.node_ids():
            raise DocumentError("That node is no longer in the network.")
        names = tuple(dict.fromkeys(names))
        now = self.frozen.setdefault(node_id, set())
        if frozen:
            now.update(names)
        else:
            now.difference_update(names)
        if not now:
            del self.frozen[node_id]
        self.events.emit(FreezeChanged(node_id, names, bool(frozen)))

    def live_frozen(self) -> dict[str, list[str]]:
        """Frozen Parameter names of nodes still in the graph (what a save writes)."""
        present = self.node_ids()
        return {nid: sorted(names) for nid, names in self.frozen.items()
                if nid in present and names}  # fmt: skip

    def live_param_values(self) -> dict[str, dict[str, np.ndarray]]:
        """Parameter values of nodes still in the graph (what a save writes)."""
        present = self.node_ids()
        return {nid: dict(v) for nid, v in self.param_values.items() if nid in present and v}

    def live_hook_history(self) -> dict[str, dict[str, np.ndarray]]:
        """Capture histories of hooks still attached to the graph (what a save writes)."""
        live = {h.id for h in self.live_hooks()}
        return {hid: dict(v) for hid, v in self.hook_history.items() if hid in live and v}

    def live_hooks(self) -> list[Hook]:
        """Hooks whose target is still in the graph (what a save writes)."""
        targets = {kind: self.hook_targets(kind) for kind in ("forward", "hook_backward")}
        return [h for h in self.hooks if h.target in targets["hook_backward" if h.on_edge
                                                             else "forward"]]  # fmt: skip
