"""File → Export from the window: each format writes where asked and says so; a network an
exporter can't express is refused with the reason; the canvas as a picture."""

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import SPIRAL, open_example, shown_window


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Ok)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


def export(window, name, path):
    window.exports._ask_path = lambda _name: str(path)
    window.exports.actions[name].trigger()
    return window.statusBar().currentMessage()


def test_the_file_menu_holds_every_export(window):
    menu = window.findChild(QMenu, "export_menu")
    names = [a.objectName() for a in menu.actions() if not a.isSeparator()]
    kinds = ("python", "onnx", "torch", "png", "svg", "runs")
    assert names == [f"export_{n}_action" for n in kinds]
    file_menu = window.findChild(QMenu, "file_menu")
    assert menu.menuAction() in file_menu.actions()


def test_python_export_writes_the_script_and_weights_and_says_where(window, qtbot, tmp_path):
    open_example(window, qtbot, SPIRAL)
    message = export(window, "python", tmp_path / "net")
    assert (tmp_path / "net.py").is_file() and (tmp_path / "net.npz").is_file()
    assert str(tmp_path / "net.py") in message and str(tmp_path / "net.npz") in message


def test_the_canvas_as_png_and_svg(window, qtbot, tmp_path):
    open_example(window, qtbot, SPIRAL)
    export(window, "png", tmp_path / "canvas.png")
    image = QImage(str(tmp_path / "canvas.png"))
    assert not image.isNull() and image.width() > 300 and image.height() > 100
    pixels = np.frombuffer(image.constBits(), np.uint8)
    assert len(np.unique(pixels)) > 10  # nodes drawn, not a blank sheet
    message = export(window, "svg", tmp_path / "canvas")
    text = (tmp_path / "canvas.svg").read_text()
    assert text.startswith("<?xml") and "<svg" in text and "dense1" in text
    assert str(tmp_path / "canvas.svg") in message


def test_a_refused_export_says_why_and_writes_nothing(window, qtbot, tmp_path, dialogs):
    window.open_example(SPIRAL)
    graph = window.project.graph
    graph.remove_node(graph.node_named("output1").id)  # no Output: nothing to export
    message = export(window, "python", tmp_path / "broken.py")
    assert message.startswith("Export failed:")
    assert not (tmp_path / "broken.py").exists()
    assert [kind for kind, _, _ in dialogs.shown] == ["warning"]


def test_onnx_export_from_the_menu_writes_a_model_and_says_what_it_left_out(
        window, qtbot, tmp_path):  # fmt: skip
    import onnx

    open_example(window, qtbot, SPIRAL)
    message = export(window, "onnx", tmp_path / "spiral")
    onnx.checker.check_model(onnx.load(str(tmp_path / "spiral.onnx")))
    assert message.startswith(f"Wrote {tmp_path / 'spiral.onnx'}.")
    assert "Left out:" in message and "loss" in message


def test_the_export_dialog_opens_where_the_last_export_of_that_kind_went(
    qtbot, tmp_path, monkeypatch
):
    asked = []
    target = {"path": tmp_path / "first" / "net.onnx"}

    def save_dialog(parent, title, start, filters):
        asked.append(Path(start).parent)
        return str(target["path"]), filters

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_dialog))
    (tmp_path / "first").mkdir()
    (tmp_path / "pictures").mkdir()
    windows = shown_window(qtbot)
    window = next(windows)
    open_example(window, qtbot, SPIRAL)
    window.exports.actions["onnx"].trigger()  # a copy of an example: it starts at home
    assert asked == [Path.home()]
    window.exports.actions["onnx"].trigger()
    assert asked[-1] == tmp_path / "first"
    target["path"] = tmp_path / "pictures" / "net.png"
    window.exports.actions["png"].trigger()  # another kind has its own folder
    assert asked[-1] == Path.home() and (tmp_path / "pictures" / "net.png").is_file()
    next(windows, None)

    again = shown_window(qtbot)  # a new window, as after a restart: still remembered
    window = next(again)
    open_example(window, qtbot, SPIRAL)
    window.exports.actions["onnx"].trigger()
    assert asked[-1] == tmp_path / "first"
    window.exports.actions["png"].trigger()
    assert asked[-1] == tmp_path / "pictures"
    next(again, None)
