"""A residual block built by hand in the window: nodes dragged from the palette, wired by
dragging ports, sized in the Inspector, trained, and looked inside through a hook pane on
a Conv2dTranspose's output (issue 27)."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QMessageBox

from app.session import READY
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.test_hook_window import capture_of, choose, hook_on, pane_of, right_click_menu
from tests.app.gui.window_support import (
    TIMEOUT,
    drop_from_palette,
    select_node,
    shown_window,
    type_into_inspector,
    wire,
)

# (palette type, where it lands on the canvas, Inspector values typed after wiring)
LAYOUT = [
    ("Input", (60, 120), {"shape": "1, 8, 8"}),
    ("Conv2d", (260, 120), {"out_channels": "8", "stride": "2", "has_bias": "true"}),
    ("ReLU", (460, 120), {}),
    ("Conv2d", (260, 330), {"out_channels": "8"}),
    ("BatchNorm2d", (460, 330), {}),
    ("Add", (660, 330), {}),
    ("Conv2dTranspose", (260, 540), {"out_channels": "1", "kernel_size": "4", "stride": "2"}),
    ("Flatten", (520, 540), {}),
    ("Output", (720, 540), {"loss": "MSELoss"}),
]
# (from node, to node, input port): relu1 feeds the block and skips it into add1's y.
WIRES = [("input1", "conv2d1", "in"), ("conv2d1", "relu1", "in"), ("relu1", "conv2d2", "in"),
         ("conv2d2", "batchnorm2d1", "in"), ("batchnorm2d1", "add1", "x"),
         ("relu1", "add1", "y"), ("add1", "conv2dtranspose1", "in"),
         ("conv2dtranspose1", "flatten1", "in"), ("flatten1", "output1", "in")]


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot, (1500, 950))


def test_a_residual_block_built_by_drag_and_drop_trains_and_shows_its_upsampled_output(
        window, qtbot, monkeypatch):
    editor = window.workbench.editor
    editor.view.resetTransform()
    for type_name, (x, y), _ in LAYOUT:
        drop_from_palette(window, monkeypatch, type_name,
                          editor.view.mapFromScene(QPointF(x, y)))
    graph = window.project.graph
    assert sorted(n.type for n in graph.nodes.values()) == sorted(t for t, _, _ in LAYOUT)
    select_node(window, qtbot, "input1")  # the Input's shape first: widths follow it
    type_into_inspector(window, qtbot, "shape", LAYOUT[0][2]["shape"])
    for src, dst, port in WIRES:
        wire(window, qtbot, src, dst, port)
    names = {"Conv2d": ["conv2d1", "conv2d2"]}
    for type_name, _, values in LAYOUT[1:]:
        name = names[type_name].pop(0) if type_name in names else f"{type_name.lower()}1"
        select_node(window, qtbot, name)
        for key, text in values.items():
            type_into_inspector(window, qtbot, key, text)

    # The widths follow from the Input: in_channels and num_features filled on connecting.
    assert graph.node_named("conv2d2").params["in_channels"] == 8
    assert graph.node_named("batchnorm2d1").params["num_features"] == 8
    assert graph.node_named("conv2dtranspose1").params["in_channels"] == 8

    # Data: the digit images, each its own target, picked in the Run dock; 3 short epochs.
    combo = window.run.panel.data.fields["dataset"]
    index = combo.findData("digit_images")
    assert index >= 0
    combo.setCurrentIndex(index)
    combo.activated.emit(index)
    window.run.panel.setting_changed.emit("epochs", 3)
    qtbot.waitUntil(lambda: window.project.training.get("dataset", {}).get("builtin")
                    == "digit_images" and window.project.training.get("epochs") == 3,
                    timeout=TIMEOUT)

    # A forward hook on the Conv2dTranspose, shown as images.
    up = graph.node_named("conv2dtranspose1").id
    choose(right_click_menu(window, qtbot, "node", up), "add_forward_hook_action")
    hook = hook_on(window, up, "forward")
    _, pane = pane_of(window, hook)
    pane.view_combo.setCurrentIndex(pane.VIEWS.index("heatmap"))

    run = window.run
    run.actions["start"].trigger()
    qtbot.waitUntil(lambda: run.session is not None and run.session.state.step > 0,
                    timeout=TIMEOUT)
    qtbot.waitUntil(lambda: run.status == READY and run.actions["start"].isEnabled(),
                    timeout=6 * TIMEOUT)
    assert run.session.state.step == 3 * 45  # 1437 training images in batches of 32
    _, losses = run.curves.curves["loss"].getData()
    assert np.isfinite(losses).all() and losses[-5:].mean() < 0.6 * losses[:5].mean()

    capture = capture_of(window, hook)
    qtbot.waitUntil(lambda: capture.latest.snapshot() is not None, timeout=TIMEOUT)
    latest = capture.latest.snapshot()
    assert latest.ndim == 4 and latest.shape[1:] == (1, 8, 8)  # upsampled back to 8×8
    qtbot.waitUntil(lambda: pane.sample_spin.maximum() >= 1, timeout=TIMEOUT)  # drawn
    pane.sample_spin.setValue(1)
    pane.poll()
    np.testing.assert_array_equal(pane.heatmap_view.image.image, latest[1, 0])
