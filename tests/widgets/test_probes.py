"""Hook probes and health badges on the canvas: placed, drawn, clicked, kept across levels."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QPainter
from PySide6.QtTest import QTest

from app.document import COMPOSITE, Project
from tests.widgets.canvas_support import click, drag, key, make_editor, mlp, scene_point
from widgets.node_editor import style
from widgets.node_editor.probes import HealthBadge, Indicator, ProbeItem, sparkline

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def project():
    return Project()


@pytest.fixture
def editor(qtbot, project):
    return make_editor(qtbot, project)


@pytest.fixture
def hooked(editor, project):
    """The MLP with a forward hook on `hidden` and a HookBackward on the edge into `relu`."""
    a, b, c = mlp(project)
    edge = project.graph.edge_into(c.id, "in")
    editor.scene.set_probes([("fwd", "forward", b.id), ("grad", "hook_backward", edge.id)])
    return a, b, c, edge


def probe_point(editor, hook_id: str):
    return editor.view.mapFromScene(editor.scene.probes[hook_id].sceneBoundingRect().center())


def test_probes_sit_on_their_node_and_on_their_edge(editor, hooked):
    a, b, c, edge = hooked
    scene = editor.scene
    assert set(scene.probes) == {"fwd", "grad"} == scene.shown_probe_ids()
    node, on_node = scene.nodes[b.id], scene.probes["fwd"].sceneBoundingRect()
    corner = node.mapToScene(QPointF(node.width, 0.0))
    assert abs(on_node.right() - corner.x()) < 2 and on_node.bottom() < corner.y()
    assert abs(on_node.width() - style.PROBE_WIDTH) < 3
    middle = scene.edges[edge.id].midpoint()
    on_edge = scene.probes["grad"].sceneBoundingRect()
    assert abs(on_edge.center().x() - middle.x()) < 1 and on_edge.bottom() < middle.y()
    # A second probe on the same node goes beside the first, not on top of it.
    scene.set_probes([("fwd", "forward", b.id), ("bwd", "backward", b.id)])
    assert set(scene.probes) == {"fwd", "bwd"}
    first, second = (scene.probes[i].sceneBoundingRect() for i in ("fwd", "bwd"))
    assert not first.intersects(second) and first.top() == second.top()
    scene.set_probes([("lost", "forward", "no-such-node")])  # not on this level: not drawn
    assert scene.probes == {} and scene.shown_probe_ids() == set()


def test_values_draw_a_sparkline_newest_at_the_right(editor, hooked):
    probe = editor.scene.probes["fwd"]
    assert probe.path.isEmpty()  # nothing yet
    editor.scene.set_probe_values("fwd", np.array([0.0, 1.0, 4.0, 2.0]), "mean 2 at step 4")
    assert not probe.path.isEmpty() and probe.toolTip() == "mean 2 at step 4"
    bounds = probe.path.boundingRect()
    assert probe.boundingRect().contains(bounds) and bounds.height() > 5
    assert probe.last.x() == pytest.approx(probe.SPARK.right())
    highest = probe.path.elementAt(2)  # 4.0 at the top of the pill's sparkline room
    assert highest.y == pytest.approx(probe.SPARK.top())
    version = probe.path
    editor.scene.set_probe_values("fwd", np.array([0.0, 1.0, 4.0, 2.0]), "same values")
    assert probe.path is version  # unchanged values: the cached path is kept
    editor.scene.set_probe_values("unknown", np.ones(3), "not a probe")  # ignored


def test_a_probe_charges_its_painting_to_the_scene_probe_budget(editor, hooked):
    # A sparkline repainted at each new value is part of what the hook views cost; the
    # window gives the scene the budget that spaces the summaries out.
    charged = []

    class Budget:
        def timed(self, work, *args):
            charged.append(work)
            return work(*args)

    painted = []
    probe = editor.scene.probes["fwd"]
    paint = probe._paint
    probe._paint = lambda *args: painted.append(1) or paint(*args)
    editor.scene.probe_budget = Budget()
    editor.scene.set_probe_values("fwd", np.array([0.0, 1.0, 4.0]), "mean")
    editor.view.viewport().repaint()
    assert painted and len(charged) == len(painted)
    editor.scene.probe_budget = None
    editor.scene.set_probe_values("fwd", np.array([4.0, 1.0, 0.0]), "mean")
    editor.view.viewport().repaint()
    assert len(painted) > len(charged)  # painted again, charged to nothing


def test_sparkline_skips_nan_and_inf_and_is_flat_when_constant():
    area = ProbeItem.SPARK
    path, last = sparkline(np.array([1.0, np.nan, 3.0, np.inf, 2.0]), area)
    xs = [path.elementAt(i).x for i in range(path.elementCount())]
    step = area.width() / 4
    assert xs == pytest.approx([area.left(), area.left() + 2 * step, area.right()])
    assert last.x() == pytest.approx(area.right())
    assert sparkline(np.array([np.nan, 2.0, np.nan]), area)[1].x() == pytest.approx(
        area.center().x())  # fmt: skip
    flat, _ = sparkline(np.full(8, 5.0), area)
    ys = {flat.elementAt(i).y for i in range(flat.elementCount())}
    assert ys == {area.center().y()}
    empty, last = sparkline(np.empty(0), area)
    assert empty.isEmpty() and last is None
    assert sparkline(np.array([np.nan, np.nan]), area)[0].isEmpty()
    one, _ = sparkline(np.array([7.0]), area)
    assert one.boundingRect().width() == pytest.approx(area.width())


def test_clicking_a_probe_emits_its_id_and_neither_moves_nor_selects(editor, hooked, qtbot):
    a, b, c, edge = hooked
    editor.scene.select([a.id])
    with qtbot.waitSignal(editor.scene.probe_clicked) as blocker:
        click(editor.view.viewport(), probe_point(editor, "fwd"))
    assert blocker.args == ["fwd"]
    with qtbot.waitSignal(editor.pane_requested) as blocker:
        click(editor.view.viewport(), probe_point(editor, "grad"))
    assert blocker.args == ["grad"]
    # A drag that starts on a probe is not a rubber band and moves nothing.
    start = probe_point(editor, "fwd")
    drag(editor.view.viewport(), start, start + (scene_point(editor, 100, 100) - start))
    assert editor.selected_node_ids() == [a.id] and editor.stack.count() == 0
    assert editor.scene.nodes[b.id].pos() == QPointF(260.0, 0.0)
    # Another button does nothing.
    with qtbot.assertNotEmitted(editor.scene.probe_clicked):
        QTest.mouseClick(editor.view.viewport(), Qt.MouseButton.MiddleButton,
                         Qt.KeyboardModifier.NoModifier, probe_point(editor, "fwd"))  # fmt: skip


def test_probes_survive_set_graph_and_follow_their_node(editor, project, hooked):
    a, b, c, edge = hooked
    scene = editor.scene
    scene.set_probe_values("fwd", np.arange(5.0), "rising")
    scene.set_graph(project.graph)  # a refit, a level switch: all items are new
    assert set(scene.probes) == {"fwd", "grad"}
    assert not scene.probes["fwd"].path.isEmpty()  # and the values are still there
    assert scene.probes["fwd"].toolTip() == "rising"
    before = scene.probes["fwd"].pos()
    project.graph.move_node(b.id, (300.0, 80.0))
    assert scene.probes["fwd"].pos() == before + QPointF(40.0, 80.0)
    # The edge's probe follows its edge's middle as its ends move.
    middle = scene.edges[edge.id].midpoint()
    assert abs(scene.probes["grad"].sceneBoundingRect().center().x() - middle.x()) < 1


def test_a_dragged_node_takes_its_probe_along(editor, hooked):
    a, b, c, edge = hooked
    before = editor.scene.probes["fwd"].pos()
    start = editor.view.mapFromScene(editor.scene.nodes[b.id].mapToScene(QPointF(30.0, 12.0)))
    drag(editor.view.viewport(), start, start + (scene_point(editor, 60, 40)
                                                 - scene_point(editor, 0, 0)))  # fmt: skip
    moved = editor.scene.nodes[b.id].pos() - QPointF(260.0, 0.0)
    assert moved != QPointF(0.0, 0.0)
    assert editor.scene.probes["fwd"].pos() == before + moved


def test_a_removed_node_hides_its_probe_and_undo_brings_it_back(editor, project, hooked):
    a, b, c, edge = hooked
    scene = editor.scene
    scene.select([b.id])
    key(editor, Qt.Key.Key_Delete)
    assert b.id not in project.graph.nodes
    # Its edges went with it: both probes are gone from the canvas and from the summary list.
    assert scene.probes == {} and scene.shown_probe_ids() == set()
    assert not [i for i in scene.items() if isinstance(i, ProbeItem)]
    editor.stack.undo()
    assert set(scene.probes) == {"fwd", "grad"} == scene.shown_probe_ids()
    node = scene.nodes[b.id]
    corner = node.mapToScene(QPointF(node.width, 0.0))
    assert abs(scene.probes["fwd"].sceneBoundingRect().right() - corner.x()) < 2


def test_probes_are_drawn_on_the_level_of_their_node(editor, project, hooked):
    a, b, c, edge = hooked
    editor.scene.select([b.id, c.id])
    key(editor, Qt.Key.Key_G, CTRL)
    composite = next(n for n in project.graph.nodes.values() if n.type == COMPOSITE)
    assert "fwd" not in editor.scene.probes  # `hidden` is inside the group now
    editor.open_composite(composite.id)
    assert set(editor.scene.probes) == {"fwd", "grad"}
    editor.go_up(0)
    assert editor.scene.probes == {}


def test_only_probes_in_sight_and_readable_are_shown(editor, hooked):
    view, scene = editor.view, editor.scene
    assert scene.shown_probe_ids() == {"fwd", "grad"}
    view.centerOn(QPointF(50_000, 50_000))
    assert scene.shown_probe_ids() == set()
    view.centerOn(300, 100)
    view.set_zoom(style.DETAIL_LABELS / 2)  # too far out to read a sparkline
    assert scene.shown_probe_ids() == set()
    view.set_zoom(1.0)
    assert scene.shown_probe_ids() == {"fwd", "grad"}


def test_health_badges_show_colours_and_tooltips_and_none_removes_them(editor, project, hooked):
    a, b, c, edge = hooked
    scene = editor.scene
    assert scene.health is None and scene.badges == {}
    dead = Indicator("dead", "dead 62%", "warn", "Dead ReLU units: 62.0% — normal: under 10%")
    grad = Indicator("grad", "∇ 0e+00", "bad", "Gradient norm at the output: 0 — normal: ...")
    fine = Indicator("grad", "∇ 3e-02", "ok", "Gradient norm at the output: 0.03")
    health = {c.id: [dead, grad], b.id: [fine], a.id: [], "elsewhere": [fine]}
    scene.set_health(health)
    assert scene.health is health
    assert set(scene.badges) == {b.id, c.id}  # nodes without indicators get none
    badge = scene.badges[c.id]
    assert badge.toolTip() == f"{dead.tooltip}\n{grad.tooltip}"
    assert [badge.colour_of(i)[0] for _, i in badge.chips] == [
        style.HEALTH_COLOURS["warn"][0], style.HEALTH_COLOURS["bad"][0]]  # fmt: skip
    node = scene.nodes[c.id]
    assert badge.sceneBoundingRect().top() > node.sceneBoundingRect().bottom() - 1
    assert badge.sceneBoundingRect().left() <= node.scenePos().x() + 1
    first, second = (rect for rect, _ in badge.chips)
    assert first.right() < second.left()
    before = badge.pos()
    project.graph.move_node(c.id, (520.0, 60.0))  # it follows its node
    assert badge.pos() == before + QPointF(0.0, 60.0)
    scene.set_graph(project.graph)  # kept across a level switch
    assert set(scene.badges) == {b.id, c.id}
    scene.set_health({c.id: [grad]})
    assert set(scene.badges) == {c.id} and scene.badges[c.id].toolTip() == grad.tooltip
    scene.set_health(None)
    assert scene.health is None and scene.badges == {}
    assert not [i for i in scene.items() if isinstance(i, HealthBadge)]


def test_probes_and_badges_paint_at_every_zoom(editor, hooked):
    from PySide6.QtGui import QImage

    a, b, c, edge = hooked
    editor.scene.set_probe_values("fwd", np.array([1.0, np.nan, 3.0, 2.0]), "")
    editor.scene.set_health({c.id: [Indicator("dead", "dead 9%", "ok", "fine")]})
    for zoom in (0.2, 1.0, 2.0):
        editor.view.set_zoom(zoom)
        image = QImage(editor.view.viewport().size(), QImage.Format.Format_ARGB32)
        painter = QPainter(image)
        editor.view.render(painter)
        painter.end()


def test_edge_at_finds_an_edge_near_its_middle_and_nothing_far_away(editor, project):
    a, b, c = mlp(project)
    scene = editor.scene
    edge = project.graph.edge_into(c.id, "in")
    line = scene.edges[edge.id]
    quarter = line.path().pointAtPercent(0.25)
    assert scene.edge_at(quarter) is line
    assert scene.edge_at(quarter + QPointF(0.0, 5.0)) is line  # a few units off still counts
    assert scene.edge_at(line.midpoint()) is line  # on its shape label too
    assert scene.edge_at(quarter + QPointF(0.0, 60.0)) is None
    assert scene.edge_at(QPointF(5000.0, 5000.0)) is None
    inside = scene.nodes[b.id].mapToScene(QPointF(40.0, 40.0))
    assert scene.edge_at(inside) is None
