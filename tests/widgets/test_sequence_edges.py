"""The canvas shows sequences' time axes on their edges: '(N, T 6, F 4)', '(T 6, N, F 4)'."""

from __future__ import annotations

from app.document import Project
from tests.widgets.canvas_support import add, chain, make_editor
from widgets.node_editor.edge_item import tooltip


def test_sequence_edges_show_time_and_features(qtbot, tmp_path):
    project = Project()
    tokens = add(project, "Input", 0, 0, "tokens", shape=(6,), dtype="int64")
    embed = add(project, "Embedding", 280, 0, "embed", vocab_size=9, embedding_size=4)
    swap = add(project, "Transpose", 560, 0, "swap", perm=(1, 0, 2))
    dense = add(project, "Dense", 840, 0, "dense", in_channels=4, out_channels=2)
    chain(project, tokens, embed, swap, dense)
    editor = make_editor(qtbot, project)
    editor.view.centerOn(450, 40)
    edges = {project.graph.node(e.src_node).name: editor.scene.edges[e.id]
             for e in project.graph.edges.values()}
    qtbot.waitUntil(lambda: edges["swap"]._shape_text != "", timeout=2000)
    assert {name: item._shape_text for name, item in edges.items()} == {
        "tokens": "(N, T 6)", "embed": "(N, T 6, F 4)", "swap": "(T 6, N, F 4)"}
    assert edges["embed"].label.isVisible() and edges["embed"].label.text.text() == \
        "(N, T 6, F 4)"
    assert "time axis (steps, first)" in edges["swap"].toolTip()
    editor.grab().save(str(tmp_path / "sequence_edges.png"))


def test_the_tooltip_explains_a_sequence_and_leaves_other_shapes_plain():
    assert tooltip("(N, 256)") == "Shape (N, 256)"
    assert tooltip("") == ""
    assert tooltip("(N, T 20, F 8)").startswith("Shape (N, T 20, F 8): a sequence. T is its "
                                                "time axis (steps, after the batch N)")
