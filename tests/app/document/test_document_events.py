"""Event subscriptions: bound methods held weakly, explicit unsubscribe, a broken view isolated."""

from __future__ import annotations

import gc
import logging
import weakref

import pytest

from app.document import Events, Graph, NodeAdded
from tests.app.document.document_samples import dense


class View:
    def __init__(self) -> None:
        self.seen: list = []

    def _on_graph_event(self, event) -> None:
        self.seen.append(event)


def test_a_bound_method_is_dropped_when_its_view_is_collected():
    graph = Graph()
    view = View()
    subscription = graph.events.subscribe(view._on_graph_event)
    graph.add_node(dense())
    assert len(view.seen) == 1 and len(graph.events) == 1 and subscription.active
    del view
    gc.collect()
    assert len(graph.events) == 0 and not subscription.active
    graph.add_node(dense())  # nobody left to call; no error


def test_subscribing_does_not_keep_a_view_alive():
    graph = Graph()
    view = View()
    graph.events.subscribe(view._on_graph_event)
    view_ref = weakref.ref(view)
    del view
    gc.collect()
    assert view_ref() is None


def test_functions_are_held_until_unsubscribed():
    graph = Graph()
    seen: list = []
    subscription = graph.events.subscribe(lambda e: seen.append(e))
    gc.collect()
    node = graph.add_node(dense())
    assert seen == [NodeAdded(node.id)]
    subscription.unsubscribe()
    subscription.unsubscribe()  # twice is fine
    graph.add_node(dense())
    assert len(seen) == 1 and not subscription.active


def test_subscription_as_a_context_manager():
    graph = Graph()
    seen: list = []
    with graph.events.subscribe(seen.append):
        graph.add_node(dense())
    graph.add_node(dense())
    assert len(seen) == 1


def test_unsubscribing_during_an_event_is_safe():
    events = Events()
    seen: list = []
    subscriptions = []

    def first(event):
        seen.append(("first", event))
        subscriptions[1].unsubscribe()

    subscriptions.append(events.subscribe(first))
    subscriptions.append(events.subscribe(lambda e: seen.append(("second", e))))
    events.emit(1)  # the copy taken before the loop still reaches the second subscriber
    events.emit(2)
    assert seen == [("first", 1), ("second", 1), ("first", 2)]


def test_a_failing_subscriber_is_logged_and_the_others_still_hear(caplog):
    events = Events()
    seen: list = []

    def broken(event):
        raise RuntimeError("view bug")

    events.subscribe(broken)
    events.subscribe(seen.append)
    with caplog.at_level(logging.ERROR, logger="app.document.events"):
        events.emit("x")
    assert seen == ["x"]
    assert "view bug" in caplog.text


def test_subscribing_something_not_callable_is_a_type_error():
    with pytest.raises(TypeError):
        Events().subscribe(42)  # type: ignore[arg-type]
