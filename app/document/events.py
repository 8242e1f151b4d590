"""Change events a graph emits after each real edit, and the weak subscriptions that carry them."""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from types import MethodType
from typing import Any

from app.document.node import Edge, Node

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NodeAdded:
    node_id: str


@dataclass(frozen=True)
class NodeRemoved:
    node_id: str
    node: Node  # as it was, so a view or a log needs no lookup


@dataclass(frozen=True)
class NodeRenamed:
    node_id: str
    old: str
    new: str


@dataclass(frozen=True)
class NodeMoved:
    node_id: str
    old: tuple[float, float]
    new: tuple[float, float]


@dataclass(frozen=True)
class ParamChanged:
    """`old` or `new` is ABSENT when the hyper-parameter was or becomes unset."""

    node_id: str
    key: str
    old: Any
    new: Any


@dataclass(frozen=True)
class PortsChanged:
    node_id: str
    old_inputs: tuple[str, ...]
    old_outputs: tuple[str, ...]


@dataclass(frozen=True)
class EdgeAdded:
    edge_id: str


@dataclass(frozen=True)
class EdgeRemoved:
    edge_id: str
    edge: Edge  # as it was


@dataclass(frozen=True)
class TrainingChanged:
    """A training setting of the project (`project.training[key]`) was set or, ABSENT, removed."""

    key: str
    old: Any
    new: Any


@dataclass(frozen=True)
class HookAdded:
    """A hook was attached (`project.hooks[index]` is `hook`)."""

    hook: Any
    index: int


@dataclass(frozen=True)
class HookRemoved:
    """A hook was taken away (it was `project.hooks[index]`)."""

    hook: Any
    index: int


@dataclass(frozen=True)
class HookChanged:
    """A hook's pane or settings changed (same id and target)."""

    old: Any
    new: Any


@dataclass(frozen=True)
class ParamValuesChanged:
    """Entries of a trained Parameter value changed (`project.param_values[node_id][name]`).

    `index` is the NumPy index of the region that changed, `(Ellipsis,)` for all of it.
    """

    node_id: str
    name: str
    index: tuple


@dataclass(frozen=True)
class FreezeChanged:
    """Parameters of a node were frozen (`frozen=True`: training leaves them as they are)
    or unfrozen."""

    node_id: str
    names: tuple[str, ...]
    frozen: bool


GraphEvent = (
    NodeAdded
    | NodeRemoved
    | NodeRenamed
    | NodeMoved
    | ParamChanged
    | PortsChanged
    | EdgeAdded
    | EdgeRemoved
)


class Subscription:
    """One subscriber's link to an event stream; `unsubscribe()` ends it (also as `with`)."""

    def __init__(self, events: Events, callback: Callable[[Any], object]) -> None:
        self._events: weakref.ref[Events] = weakref.ref(events)
        # Bound methods are held weakly so a closed view stops receiving events without
        # having to unsubscribe; plain functions are held strongly, else a lambda would
        # vanish at once.
        if isinstance(callback, MethodType):
            self._ref: Callable[[], Any] = weakref.WeakMethod(callback, self._on_dead)
        else:
            self._ref = lambda: callback

    @property
    def active(self) -> bool:
        events = self._events()
        return events is not None and self in events._subscriptions and self._ref() is not None

    def unsubscribe(self) -> None:
        events = self._events()
        if events is not None and self in events._subscriptions:
            events._subscriptions.remove(self)

    def _on_dead(self, _ref: object) -> None:
        self.unsubscribe()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.unsubscribe()


class Events:
    """A plain observer list: `subscribe(callback)`; `emit(event)` calls each subscriber."""

    def __init__(self) -> None:
        self._subscriptions: list[Subscription] = []

    def subscribe(self, callback: Callable[[Any], object]) -> Subscription:
        if not callable(callback):
            raise TypeError(f"subscriber must be callable, not {type(callback).__name__}")
        subscription = Subscription(self, callback)
        self._subscriptions.append(subscription)
        return subscription

    def __len__(self) -> int:
        return sum(1 for s in self._subscriptions if s._ref() is not None)

    def emit(self, event: object) -> None:
        # A copy: subscribers may subscribe or unsubscribe while being called.
        for subscription in list(self._subscriptions):
            callback = subscription._ref()
            if callback is None:
                continue
            try:
                callback(event)
            except Exception:
                # The edit has already happened; one broken view must not stop the others
                # from hearing of it, nor make the edit look failed to its caller.
                log.exception("subscriber %r failed on %r", callback, event)
