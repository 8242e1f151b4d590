"""Random text typed into every field of the Inspector and into the Parameter editor's cells
never raises past the form: it is taken (and the document says so) or refused with a reason."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QComboBox, QLineEdit

from app.catalogue import CATALOGUE
from app.document import Graph
from app.document.data import graph_to_data
from app.session.param_values import parse_value
from widgets.inspector import Inspector
from widgets.tensor_editor import TensorEditor

TYPES = ("Input", "Dense", "Conv2d", "Dropout", "Reshape", "MaxPool2d", "BatchNorm1d", "Output")
TYPED = st.one_of(
    st.text(max_size=40),
    st.text(alphabet="0123456789-+.,eExX×()[] _", max_size=20),
    st.sampled_from(["nan", "inf", "-inf", "1e309", "9" * 400, "\ud800", "(5, x)", "", " "]),
)
FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip


@pytest.fixture
def inspector(qtbot):
    graph = Graph()
    nodes = [graph.add_node(CATALOGUE.new_node(t, position=(0, 0))) for t in TYPES]
    stack = QUndoStack()
    view = Inspector()
    qtbot.addWidget(view)
    view.set_document(graph, stack)
    view.show()
    return view, graph, stack, nodes


@FAST
@given(index=st.integers(0, len(TYPES) - 1), text=TYPED, data=st.data())
def test_random_text_in_any_inspector_field_is_taken_or_refused(inspector, index, text, data):
    view, graph, stack, nodes = inspector
    node = nodes[index]
    view.show_node((), node.id)
    lines = {k: f for k, f in view.fields.items() if isinstance(f, QLineEdit)}
    key = data.draw(st.sampled_from(sorted(lines)))
    field = lines[key]
    before, depth = graph_to_data(graph), stack.index()
    messages = []
    view.message.connect(messages.append)
    field.setText(text)
    field.editingFinished.emit()  # what Enter or leaving the field sends
    view.message.disconnect(messages.append)
    changed = graph_to_data(graph) != before
    assert changed == (stack.index() > depth)  # a change is always an undo step
    if not changed and messages:
        assert messages[-1]  # a refusal says why
    if changed:
        stack.undo()
        assert graph_to_data(graph) == before


@pytest.fixture
def editor(qtbot):
    array = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    applied = []

    def apply(regions, text):
        for index, values in regions:
            array[index] = values
        applied.append(text)

    view = TensorEditor()
    qtbot.addWidget(view)
    view.apply_edit = apply
    view.set_tensor(array, "dense1.weight")
    view.show()
    return view, array, applied


@FAST
@given(text=TYPED, row=st.integers(0, 2), column=st.integers(0, 3))
def test_random_text_in_a_parameter_cell_is_written_only_if_a_finite_number(
        editor, text, row, column):  # fmt: skip
    view, array, applied = editor
    before = array.copy()
    messages = []
    view.message.connect(messages.append)
    taken = view.model.setData(view.model.index(row, column), text, Qt.ItemDataRole.EditRole)
    view.message.disconnect(messages.append)
    try:
        expected = np.float32(parse_value(text, np.float32))
    except ValueError:
        expected = None
    if expected is None:
        assert not taken and np.array_equal(array, before) and messages
    else:
        assert math.isfinite(float(array[row, column]))
        assert array[row, column] == expected
    array[...] = before


def test_the_inspector_combo_boxes_only_offer_valid_values(inspector):
    view, graph, stack, nodes = inspector
    view.show_node((), nodes[1].id)  # Dense
    combos = [f for f in view.fields.values() if isinstance(f, QComboBox)]
    assert combos
    for combo in combos:
        for i in range(combo.count()):
            combo.setCurrentIndex(i)
            combo.activated.emit(i)
    assert graph.nodes[nodes[1].id].params is not None
