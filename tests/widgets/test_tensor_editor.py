"""TensorEditor: a Parameter's live array as a table and a heatmap, every change through
the owner's apply_edit (typed cells, fill/scale/noise of a selection, .npy import)."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QAbstractItemView, QApplication, QLineEdit

from widgets.tensor_editor import TensorEditor, kernel_grid, value_levels
from widgets.tensor_editor.model import TensorTableModel

pytestmark = pytest.mark.gui

READING = "Training is running: pause or stop it to edit weights."


class Owner:
    """A fake Parameter owner: writes each region into its array and records the calls."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.calls: list[tuple[list, str]] = []
        self.refusal: str | None = None
        self.editor: TensorEditor | None = None

    def apply_edit(self, regions, text):
        self.calls.append((regions, text))
        if self.refusal:
            return self.refusal
        for index, values in regions:
            assert values.dtype == self.array.dtype
            assert values.shape == self.array[index].shape
            self.array[index] = values
        self.editor.refresh()
        return None


@pytest.fixture
def make_editor(qtbot):
    def make(array, title="dense1.weight", *, kernels=False, size=(900, 600)):
        editor = TensorEditor()
        qtbot.addWidget(editor)
        owner = Owner(array)
        owner.editor = editor
        editor.apply_edit = owner.apply_edit
        editor.set_tensor(array, title, kernels=kernels)
        editor.resize(*size)
        editor.show()
        qtbot.waitExposed(editor)
        return editor, owner

    return make


def weights(shape, seed=0):
    return np.random.default_rng(seed).normal(0, 0.1, shape).astype(np.float32)


def shown(editor, row, column, role=Qt.ItemDataRole.DisplayRole):
    return editor.model.data(editor.model.index(row, column), role)


def type_into_cell(qtbot, editor, row, column, text):
    """Select the cell, type `text` over it as a user does and press Enter."""
    table = editor.table
    table.setFocus()
    table.setCurrentIndex(editor.model.index(row, column))
    qtbot.keyClick(table, text[0])  # any key starts editing, the key typed in
    line = next(w for w in table.viewport().findChildren(QLineEdit) if w.isVisible())
    assert line.text() == text[0]
    qtbot.keyClicks(line, text[1:])
    qtbot.keyClick(line, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: table.state() != QAbstractItemView.State.EditingState)


def cell_centre(editor, row, column):
    return editor.table.visualRect(editor.model.index(row, column)).center()


def click_cell(qtbot, editor, row, column, modifier=Qt.KeyboardModifier.NoModifier):
    qtbot.mouseClick(editor.table.viewport(), Qt.MouseButton.LeftButton, modifier,
                     cell_centre(editor, row, column))  # fmt: skip


def select_two_rectangles(qtbot, editor):
    """Rows 1-2 × columns 1-3 (click, shift-click), then row 5, column 0 (ctrl-click)."""
    click_cell(qtbot, editor, 1, 1)
    click_cell(qtbot, editor, 2, 3, Qt.KeyboardModifier.ShiftModifier)
    click_cell(qtbot, editor, 5, 0, Qt.KeyboardModifier.ControlModifier)
    return [(slice(1, 3), slice(1, 4)), (slice(5, 6), slice(0, 1))]


# ---- typing into cells --------------------------------------------------------------------------


def test_typing_a_value_and_enter_sets_it_through_apply_edit(make_editor, qtbot):
    array = weights((6, 8))
    editor, owner = make_editor(array)
    before = array.copy()
    with qtbot.waitSignal(editor.message) as blocker:
        type_into_cell(qtbot, editor, 3, 4, "0.5")
    assert len(owner.calls) == 1
    regions, text = owner.calls[0]
    assert [index for index, _ in regions] == [(3, 4)]
    assert regions[0][1].shape == () and regions[0][1].dtype == np.float32
    assert text == "Set dense1.weight[3, 4] to 0.5"
    assert blocker.args == [text]
    assert array[3, 4] == np.float32(0.5)
    changed = before != array
    assert changed.sum() == 1 and changed[3, 4]
    assert shown(editor, 3, 4) == "0.5"
    assert editor.table.currentIndex().row() == 4  # Enter moves down, as in a spreadsheet


def test_the_edit_text_is_the_value_in_the_parameters_dtype(make_editor, qtbot):
    array = np.full((2, 2), 0.1, dtype=np.float32)
    editor, _ = make_editor(array)
    assert shown(editor, 0, 0, Qt.ItemDataRole.EditRole) == "0.1"  # not 0.10000000149011612
    type_into_cell(qtbot, editor, 0, 1, "-2.5e-3")
    assert array[0, 1] == np.float32(-0.0025)
    assert shown(editor, 0, 1, Qt.ItemDataRole.EditRole) == "-0.0025"


@pytest.mark.parametrize("typed", ["abc", "nan", "inf", "-inf", "1e39"])
def test_values_that_are_not_finite_numbers_are_refused(make_editor, qtbot, typed):
    array = weights((4, 4))
    before = array.copy()
    editor, owner = make_editor(array)
    with qtbot.waitSignal(editor.message) as blocker:
        type_into_cell(qtbot, editor, 1, 2, typed)
    reason = blocker.args[0]
    assert any(word in reason for word in ("not a number", "NaN", "Infinity", "too large"))
    assert editor.message_label.text() == reason
    assert owner.calls == []
    np.testing.assert_array_equal(array, before)


def test_typing_the_value_already_there_is_no_edit(make_editor, qtbot):
    array = np.full((3, 3), 0.25, dtype=np.float32)
    editor, owner = make_editor(array)
    type_into_cell(qtbot, editor, 1, 1, "0.250")
    assert owner.calls == []


def test_a_refusal_from_the_owner_is_shown_and_nothing_changes(make_editor, qtbot):
    array = weights((4, 4))
    before = array.copy()
    editor, owner = make_editor(array)
    owner.refusal = "The Parameter is frozen."
    with qtbot.waitSignal(editor.message) as blocker:
        type_into_cell(qtbot, editor, 0, 0, "3")
    assert blocker.args == ["The Parameter is frozen."]
    assert editor.message_label.text() == "The Parameter is frozen."
    assert len(owner.calls) == 1
    np.testing.assert_array_equal(array, before)


# ---- slices, ranks and the heatmap --------------------------------------------------------------


def test_the_spin_boxes_choose_the_slice_of_a_4d_kernel(make_editor, qtbot):
    array = weights((8, 3, 5, 5))
    editor, owner = make_editor(array, "conv1.weight")
    assert [label.text() for label in editor.axis_labels[:2]] == ["axis 0", "axis 1"]
    out_spin, in_spin = editor.axis_spins
    assert (out_spin.maximum(), in_spin.maximum()) == (7, 2)
    for spin, value in ((out_spin, "2"), (in_spin, "1")):
        spin.lineEdit().selectAll()
        qtbot.keyClicks(spin, value)
        qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert editor.model.lead == (2, 1)
    assert (editor.model.rowCount(), editor.model.columnCount()) == (5, 5)
    for r in range(5):
        for c in range(5):
            assert shown(editor, r, c) == f"{array[2, 1, r, c]:.6g}"
    qtbot.mouseClick(editor.heatmap_button, Qt.MouseButton.LeftButton)
    assert editor.view == "heatmap" and editor.heatmap.isVisible()
    np.testing.assert_array_equal(editor.heatmap.image.image, array[2, 1])
    qtbot.mouseClick(editor.table_button, Qt.MouseButton.LeftButton)
    type_into_cell(qtbot, editor, 4, 0, "1")
    assert [index for index, _ in owner.calls[0][0]] == [(2, 1, 4, 0)]
    assert owner.calls[0][1] == "Set conv1.weight[2, 1, 4, 0] to 1"
    assert array[2, 1, 4, 0] == 1


def test_a_kernel_grid_shows_every_kernel_in_channels_down_out_channels_across(make_editor, qtbot):
    array = weights((8, 3, 5, 5))
    editor, _ = make_editor(array, "conv1.weight", kernels=True)
    assert [label.text() for label in editor.axis_labels[:2]] == ["out channel", "in channel"]
    editor.set_view("heatmap")
    image = editor.heatmap.image.image
    assert image.shape == (3 * 5 + 2, 8 * 5 + 7)  # (in·kh + gaps, out·kw + gaps)
    for o in range(8):
        for i in range(3):
            np.testing.assert_array_equal(image[i * 6:i * 6 + 5, o * 6:o * 6 + 5], array[o, i])
    assert np.isnan(image[5, :]).all() and np.isnan(image[:, 5]).all()  # gaps
    assert np.isfinite(image).sum() == array.size
    np.testing.assert_array_equal(kernel_grid(array), image)

    editor.axis_spins[0].setValue(6)  # the table's kernel is outlined in the grid
    editor.axis_spins[1].setValue(2)
    assert editor.heatmap.outline.isVisible()
    assert editor.heatmap.outline.rect().center() == QPointF(6 * 6 + 2.5, 2 * 6 + 2.5)
    shape = image.shape
    assert editor.heatmap.image.image.shape == shape  # the grid stays; only the outline moved


def test_clicking_a_kernel_in_the_grid_shows_it_in_the_table(make_editor, qtbot):
    array = weights((4, 2, 3, 3))
    editor, _ = make_editor(array, "conv1.weight", kernels=True)
    editor.set_view("heatmap")
    qtbot.wait(50)  # laid out and framed
    heatmap = editor.heatmap
    target = heatmap.image.mapToScene(QPointF(3 * 4 + 1.5, 1 * 4 + 1.5))  # kernel [3, 1]
    point = heatmap.view.mapFromScene(target)
    qtbot.mouseMove(heatmap.view.viewport(), point)
    qtbot.waitUntil(lambda: heatmap.hover_label.text() != "")
    assert heatmap.hover_label.text() == f"conv1.weight[3, 1, 1, 1] = {array[3, 1, 1, 1]!s}"
    qtbot.mouseClick(heatmap.view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert editor.model.lead == (3, 1)
    assert (editor.axis_spins[0].value(), editor.axis_spins[1].value()) == (3, 1)
    assert editor._describe_pixel(3, 0) == ""  # a gap row


def test_rank_0_1_and_3_arrays_display(make_editor, qtbot):
    scalar = np.array(1.5, dtype=np.float32)
    editor, owner = make_editor(scalar, "scale")
    assert (editor.model.rowCount(), editor.model.columnCount()) == (1, 1)
    assert shown(editor, 0, 0) == "1.5" and editor.axis_spins == []
    type_into_cell(qtbot, editor, 0, 0, "2")
    assert owner.calls[0][0][0][0] == () and owner.calls[0][1] == "Set scale to 2"
    assert scalar[()] == 2
    editor.set_view("heatmap")
    assert editor.heatmap.image.image.shape == (1, 1)

    line = np.arange(7, dtype=np.float32)
    editor.set_tensor(line, "dense1.bias")
    assert (editor.model.rowCount(), editor.model.columnCount()) == (7, 1)
    assert [shown(editor, r, 0) for r in range(7)] == [str(v) for v in range(7)]
    assert editor.model.headerData(0, Qt.Orientation.Horizontal) == "value"
    np.testing.assert_array_equal(editor.heatmap.image.image, line.reshape(1, 7))  # one row
    editor.set_view("table")
    owner.array = line
    type_into_cell(qtbot, editor, 5, 0, "-1")
    assert [index for index, _ in owner.calls[-1][0]] == [(5,)]
    assert line[5] == -1

    cube = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    editor.set_tensor(cube, "cube")
    assert len(editor.axis_spins) == 1 and editor.axis_labels[0].text() == "axis 0"
    editor.axis_spins[0].setValue(1)
    assert (editor.model.rowCount(), editor.model.columnCount()) == (3, 4)
    assert [shown(editor, 2, c) for c in range(4)] == [f"{v:g}" for v in cube[1, 2]]
    editor.set_view("heatmap")
    np.testing.assert_array_equal(editor.heatmap.image.image, cube[1])


def test_no_tensor_shows_a_placeholder_and_disables_everything(make_editor):
    editor, _ = make_editor(weights((3, 3)))
    editor.set_tensor(None, "")
    assert editor.placeholder.isVisible()
    assert "Select a Parameter" in editor.title_label.text()
    assert editor.model.rowCount() == 0
    for button in (*editor.edit_controls, editor.export_button, editor.heatmap_button):
        assert not button.isEnabled()


def test_the_symmetric_range_centres_the_colours_on_zero(make_editor, qtbot):
    array = np.array([[-0.2, 0.1], [0.5, 0.3]], dtype=np.float32)
    editor, _ = make_editor(array)
    editor.set_view("heatmap")
    heatmap = editor.heatmap
    assert heatmap.symmetric_check.isChecked()
    assert heatmap.image.getLevels() == pytest.approx((-0.5, 0.5))
    assert heatmap.color_bar.levels() == pytest.approx((-0.5, 0.5))
    qtbot.mouseClick(heatmap.symmetric_check, Qt.MouseButton.LeftButton)
    assert heatmap.image.getLevels() == pytest.approx((-0.2, 0.5))
    assert heatmap.color_bar.levels() == pytest.approx((-0.2, 0.5))
    colours = heatmap.color_bar.colorMap().getLookupTable(nPts=3, mode="byte")
    assert colours[1].min() > 240  # white in the middle: a diverging map
    assert colours[0][2] > colours[0][0] and colours[2][0] > colours[2][2]  # blue … red


def test_value_levels_leave_the_gaps_out():
    grid = np.array([[1.0, np.nan], [-3.0, 2.0]])
    assert value_levels(grid, symmetric=True) == (-3.0, 3.0)
    assert value_levels(grid, symmetric=False) == (-3.0, 2.0)
    assert value_levels(np.zeros((2, 2)), symmetric=True) == (-1.0, 1.0)
    assert value_levels(np.full((1, 1), np.nan), symmetric=False) == (-1.0, 1.0)


# ---- selection operations -----------------------------------------------------------------------


def test_fill_of_a_selection_is_one_edit_with_one_region_per_rectangle(make_editor, qtbot):
    array = weights((8, 6))
    editor, owner = make_editor(array)
    expected = select_two_rectangles(qtbot, editor)
    asked = []
    editor._ask_number = lambda *args: asked.append(args) or "0.5"
    qtbot.mouseClick(editor.fill_button, Qt.MouseButton.LeftButton)
    assert len(asked) == 1 and len(owner.calls) == 1
    regions, text = owner.calls[0]
    assert [index for index, _ in regions] == expected
    assert text == "Fill 7 values of dense1.weight with 0.5"
    assert all((values == np.float32(0.5)).all() and values.dtype == np.float32
               for _, values in regions)  # fmt: skip
    assert (array[1:3, 1:4] == 0.5).all() and array[5, 0] == 0.5
    assert (array != 0.5).sum() == array.size - 7


def test_scale_of_a_selection_multiplies_its_values(make_editor, qtbot):
    array = weights((8, 6))
    before = array.copy()
    editor, owner = make_editor(array)
    expected = select_two_rectangles(qtbot, editor)
    editor._ask_number = lambda *args: "2"
    qtbot.mouseClick(editor.scale_button, Qt.MouseButton.LeftButton)
    regions, text = owner.calls[0]
    assert [index for index, _ in regions] == expected
    assert text == "Scale 7 values of dense1.weight by 2"
    for index, values in regions:
        np.testing.assert_array_equal(values, before[index] * np.float32(2))
    np.testing.assert_array_equal(array[1:3, 1:4], before[1:3, 1:4] * 2)
    assert array[0, 0] == before[0, 0]


def test_noise_is_repeatable_by_its_seed(make_editor, qtbot):
    array = weights((8, 6))
    before = array.copy()
    editor, owner = make_editor(array)
    expected = select_two_rectangles(qtbot, editor)
    editor._ask_number = lambda *args: "0.1"
    editor.seed_spin.setValue(7)
    qtbot.mouseClick(editor.noise_button, Qt.MouseButton.LeftButton)
    regions, text = owner.calls[0]
    assert text == "Add noise (σ 0.1, seed 7) to 7 values of dense1.weight"
    assert [index for index, _ in regions] == expected
    rng = np.random.default_rng(7)
    for index, values in regions:
        wanted = (before[index].astype(np.float64) + rng.normal(0, 0.1, before[index].shape))
        np.testing.assert_array_equal(values, wanted.astype(np.float32))
    assert editor.seed_spin.value() == 8  # the next noise differs
    first = array.copy()
    array[:] = before
    editor.refresh()
    editor.seed_spin.setValue(7)
    qtbot.mouseClick(editor.noise_button, Qt.MouseButton.LeftButton)
    np.testing.assert_array_equal(array, first)  # the same seed: the same noise
    assert len(owner.calls) == 2


@pytest.mark.parametrize(("button", "typed", "reason"), [
    ("fill_button", "abc", "not a number"),
    ("fill_button", "nan", "NaN"),
    ("scale_button", "inf", "Infinity"),
    ("scale_button", "1e300", "infinite"),  # finite as a factor, not in float32
    ("noise_button", "-1", "negative"),
])  # fmt: skip
def test_operations_refuse_bad_numbers_and_unrepresentable_results(make_editor, qtbot, button,
                                                                   typed, reason):  # fmt: skip
    array = weights((8, 6))
    before = array.copy()
    editor, owner = make_editor(array)
    select_two_rectangles(qtbot, editor)
    editor._ask_number = lambda *args: typed
    with qtbot.waitSignal(editor.message) as blocker:
        qtbot.mouseClick(getattr(editor, button), Qt.MouseButton.LeftButton)
    assert reason in blocker.args[0]
    assert owner.calls == []
    np.testing.assert_array_equal(array, before)


def test_an_operation_without_a_selection_says_so_and_asks_nothing(make_editor, qtbot):
    editor, owner = make_editor(weights((4, 4)))
    editor.table.clearSelection()
    editor._ask_number = lambda *args: pytest.fail("asked for a number")
    with qtbot.waitSignal(editor.message) as blocker:
        qtbot.mouseClick(editor.scale_button, Qt.MouseButton.LeftButton)
    assert "Select the values" in blocker.args[0]
    assert owner.calls == []


def test_a_selection_made_with_the_keyboard_is_one_rectangle(make_editor, qtbot):
    array = np.zeros((5, 5), dtype=np.float32)
    editor, owner = make_editor(array)
    click_cell(qtbot, editor, 1, 1)
    for key in (Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Right):
        qtbot.keyClick(editor.table, key, Qt.KeyboardModifier.ShiftModifier)
    editor._ask_number = lambda *args: "1"
    qtbot.mouseClick(editor.fill_button, Qt.MouseButton.LeftButton)
    assert [index for index, _ in owner.calls[0][0]] == [(slice(1, 4), slice(1, 3))]
    assert array.sum() == 6


# ---- import and export --------------------------------------------------------------------------


def test_import_refuses_a_wrong_shape_naming_both(make_editor, qtbot, tmp_path):
    array = weights((4, 3))
    before = array.copy()
    editor, owner = make_editor(array)
    path = tmp_path / "wrong.npy"
    np.save(path, np.ones((3, 4), dtype=np.float32))
    editor._ask_open_path = lambda: str(path)
    with qtbot.waitSignal(editor.message) as blocker:
        qtbot.mouseClick(editor.import_button, Qt.MouseButton.LeftButton)
    assert "(3, 4)" in blocker.args[0] and "(4, 3)" in blocker.args[0]
    assert "dense1.weight" in blocker.args[0]
    assert owner.calls == []
    np.testing.assert_array_equal(array, before)


def test_import_of_a_fitting_file_is_one_edit_of_everything(make_editor, qtbot, tmp_path):
    array = weights((4, 3))
    editor, owner = make_editor(array)
    path = tmp_path / "good.npy"
    new = np.arange(12, dtype=np.float64).reshape(4, 3)  # converted to the Parameter's dtype
    np.save(path, new)
    editor._ask_open_path = lambda: str(path)
    qtbot.mouseClick(editor.import_button, Qt.MouseButton.LeftButton)
    (regions, text), = owner.calls
    assert [index for index, _ in regions] == [(Ellipsis,)]
    assert regions[0][1].dtype == np.float32
    assert text == "Load dense1.weight from good.npy"
    np.testing.assert_array_equal(array, new)
    assert shown(editor, 3, 2) == "11"


def test_export_writes_a_file_that_reads_back_equal(make_editor, qtbot, tmp_path):
    array = weights((5, 7))
    editor, owner = make_editor(array)
    editor.set_editable(False, READING)  # export stays possible
    editor._ask_save_path = lambda: str(tmp_path / "weights")
    with qtbot.waitSignal(editor.message) as blocker:
        qtbot.mouseClick(editor.export_button, Qt.MouseButton.LeftButton)
    written = tmp_path / "weights.npy"
    assert str(written) in blocker.args[0]
    loaded = np.load(written)
    assert loaded.dtype == np.float32
    np.testing.assert_array_equal(loaded, array)
    assert owner.calls == []


# ---- read-only, refresh, no copies --------------------------------------------------------------


def test_read_only_disables_every_edit_and_shows_why(make_editor, qtbot):
    array = weights((4, 4))
    before = array.copy()
    editor, owner = make_editor(array)
    editor.set_editable(False, READING)
    assert editor.reason_label.isVisible() and editor.reason_label.text() == READING
    flags = editor.model.flags(editor.model.index(0, 0))
    assert not flags & Qt.ItemFlag.ItemIsEditable
    for control in editor.edit_controls:
        assert not control.isEnabled()
    assert editor.export_button.isEnabled()
    editor.table.setFocus()
    editor.table.setCurrentIndex(editor.model.index(1, 1))
    qtbot.keyClick(editor.table, "7")
    qtbot.keyClick(editor.table, Qt.Key.Key_Return)
    assert not [w for w in editor.table.viewport().findChildren(QLineEdit) if w.isVisible()]
    assert editor.model.setData(editor.model.index(1, 1), "7") is False
    assert owner.calls == []
    np.testing.assert_array_equal(array, before)

    editor.set_editable(True)
    assert not editor.reason_label.isVisible()
    assert editor.model.flags(editor.model.index(0, 0)) & Qt.ItemFlag.ItemIsEditable
    assert all(control.isEnabled() for control in editor.edit_controls)
    editor.apply_edit = None  # no owner to apply edits: read-only too
    assert not editor.model.flags(editor.model.index(0, 0)) & Qt.ItemFlag.ItemIsEditable
    assert not editor.fill_button.isEnabled()


def test_refresh_after_an_in_place_change_updates_table_heatmap_and_stats(make_editor, qtbot):
    array = np.zeros((4, 4), dtype=np.float32)
    editor, _ = make_editor(array)
    qtbot.waitUntil(lambda: "mean 0" in editor.stats_label.text())
    array[2, 3] = 4.0
    array[0, 0] = -4.0
    changed = []
    editor.model.dataChanged.connect(lambda *args: changed.append(args))
    editor.refresh()
    assert changed  # the view repaints the visible cells
    assert shown(editor, 2, 3) == "4"
    editor.set_view("heatmap")
    assert editor.heatmap.image.image[2, 3] == 4.0
    assert editor.heatmap.image.getLevels() == pytest.approx((-4, 4))
    qtbot.waitUntil(lambda: "max 4" in editor.stats_label.text())
    assert "min -4" in editor.stats_label.text() and "norm 5.657" in editor.stats_label.text()
    array[1, 1] = 2.0
    editor.refresh()
    assert editor.heatmap.image.image[1, 1] == 2.0
    qtbot.waitUntil(lambda: "norm 6" in editor.stats_label.text())


def test_the_model_reads_the_live_array_and_never_copies_it(qtbot):
    array = np.zeros((1024, 1024), dtype=np.float32)
    model = TensorTableModel()
    model.set_array(array, "big")
    assert np.shares_memory(model.view, array)
    index = model.index(1000, 999)
    assert model.data(index) == "0"
    array[1000, 999] = 0.125  # in place, no refresh
    assert model.data(index) == "0.125"
    assert model.data(index, Qt.ItemDataRole.ToolTipRole) == "big[1000, 999] = 0.125"
    cube = np.zeros((3, 4, 5), dtype=np.float32)
    model.set_array(cube, "cube")
    model.set_lead((2,))
    assert np.shares_memory(model.view, cube)
    cube[2, 3, 4] = 9
    assert model.data(model.index(3, 4)) == "9"


def test_the_table_has_uniform_rows_and_no_measured_columns(make_editor):
    editor, _ = make_editor(np.zeros((1024, 1024), dtype=np.float32))
    header = editor.table.verticalHeader()
    assert header.sectionResizeMode(0) == header.ResizeMode.Fixed
    widths = {editor.table.columnWidth(c) for c in (0, 500, 1023)}
    assert len(widths) == 1
    QApplication.processEvents()


def test_a_new_tensor_while_the_heatmap_shows_is_drawn_and_labelled_at_once(make_editor):
    editor, _ = make_editor(weights((4, 2, 3, 3)), "conv1.weight", kernels=True)
    editor.set_view("heatmap")
    bottom = editor.heatmap.plot.getAxis("bottom")
    assert bottom.labelText == "out channel"
    matrix = weights((6, 9))
    editor.set_tensor(matrix, "dense1.weight")
    np.testing.assert_array_equal(editor.heatmap.image.image, matrix)
    assert bottom.labelText == "column"
    assert not editor.heatmap.outline.isVisible()
    assert editor.view == "heatmap" and editor.heatmap.isVisible()


def test_plain_and_selected_cells_paint(make_editor, qtbot):
    editor, _ = make_editor(weights((50, 40)))
    select_two_rectangles(qtbot, editor)
    image = editor.table.grab().toImage()
    assert not image.isNull() and image.width() > 0
