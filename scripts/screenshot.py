"""Regenerate the README screenshots: the main window while an example trains.

    python scripts/screenshot.py [--example spiral_mlp] [--steps 450] [--out FILE]
    python scripts/screenshot.py --hooks     (digits CNN, three hook panes, health overlay)
    python scripts/screenshot.py --params    (digits CNN: Parameters, a frozen layer, the
                                              Parameter window on a kernel grid and a table)
    python scripts/screenshot.py --predict   (moons BatchNorm/Dropout: the Predict panel with
                                              a validation row in both modes)
    python scripts/screenshot.py --residual  (the residual CNN example in the editor)
    python scripts/screenshot.py --autoencoder  (the denoising autoencoder, its input and
                                              its reconstruction in two heatmap panes)
    python scripts/screenshot.py --attention --text-predict  (the character-level
                                              Transformer: its attention pane, and the
                                              Predict panel's text view on a typed prompt)

Opens the shipped example as a copy (File → Open Example), selects a layer so the
Inspector has something in it, presses Start, pauses after about `--steps` steps so
the curves, the decision boundary and the Run panel show a run in progress, and grabs
the window offscreen. With `--hooks` it attaches three hooks from the canvas (a forward
hook on the first convolution shown as a heatmap of one channel, a forward hook on the
second ReLU shown as its distribution over steps, a backward hook on the last layer
shown as the gradient norm), tiles their panes and turns the health overlay on. With
`--params` it freezes the last layer, selects the second convolution and opens its
weight in the Parameter window (written beside the window's picture as
`parameter_kernels.png`, and the first layer's weight as a table, `parameter_table.png`).
With `--attention` (the char_transformer example, trained to its end unless `--steps`
says fewer) it opens "Look Inside: Attention Weights" on the TransformerEncoder and
saves the window with the pane enlarged on the last layer and `--head`; with
`--text-predict` it types `--prompt` into the Predict panel's text view, samples a
continuation and saves the panel (given together, one run makes both, the second
picture as `text_predict.png` beside the first). Uses a throw-away settings folder, so
the picture shows the default layout and the user's own settings are neither read nor
written.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import shots

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = "resources/screenshots/main_window.png"
HOOKS_OUT = "resources/screenshots/hook_panes.png"
PARAMS_OUT = "resources/screenshots/parameters.png"
PREDICT_OUT = "resources/screenshots/predict_both_modes.png"
RESIDUAL_OUT = "resources/screenshots/residual_cnn.png"
AUTOENCODER_OUT = "resources/screenshots/autoencoder.png"
ATTENTION_OUT = "resources/screenshots/attention.png"
TEXT_OUT = "resources/screenshots/text_predict.png"
TEXT_STEPS = 10**9  # the Transformer trains its whole run before the pictures
ATTENTION_SIZE = (860, 640)  # the attention pane's dock in the window's picture
# Layer 2's head 2 of the trained example: a column for a character many later ones look
# back at, and after a line break a sharp diagonal (each looks at the one before it).
HEAD = 2
TEXT_WIDTH = 600  # the Predict dock's, for the text view's picture
PROMPT = "And God said, Let there be light: and there was l"
HOOKS = (("conv2d1", "forward", "heatmap"), ("relu2", "forward", "histogram"),
         ("dense1", "backward", "norm"))
# The autoencoder's noisy input (the first convolution's forward-pre hook) and its
# reconstruction (the last Sigmoid's output), both as images.
AUTOENCODER_HOOKS = (("conv2d1", "forward_pre", "heatmap"), ("sigmoid1", "forward", "heatmap"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--example", default="")
    parser.add_argument("--steps", type=int, help="steps trained (default 450; text: all)")
    parser.add_argument("--out", default="")
    parser.add_argument("--size", default="", help="window size, WIDTHxHEIGHT")
    parser.add_argument("--hooks", action="store_true", help="hook panes and health overlay")
    parser.add_argument("--params", action="store_true", help="the Parameter editor")
    parser.add_argument("--predict", action="store_true", help="the Predict panel")
    parser.add_argument("--residual", action="store_true", help="the residual CNN example")
    parser.add_argument("--autoencoder", action="store_true", help="reconstructions")
    parser.add_argument("--attention", action="store_true", help="a Transformer's attention")
    parser.add_argument("--text-predict", action="store_true",
                        help="the Predict panel on text")  # fmt: skip
    parser.add_argument("--head", type=int, default=HEAD,
                        help="the attention head shown (from 1; 0: their average)")  # fmt: skip
    parser.add_argument("--prompt", default=PROMPT, help="what --text-predict types")
    args = parser.parse_args(argv)
    digits = args.hooks or args.params
    text = args.attention or args.text_predict
    args.example = args.example or ("digits_cnn" if digits else "moons_bn_dropout"
                                    if args.predict else "residual_cnn" if args.residual
                                    else "conv_autoencoder" if args.autoencoder
                                    else "char_transformer" if text
                                    else "spiral_mlp")  # fmt: skip
    args.out = args.out or (HOOKS_OUT if args.hooks else PARAMS_OUT if args.params
                            else PREDICT_OUT if args.predict else RESIDUAL_OUT if args.residual
                            else AUTOENCODER_OUT if args.autoencoder
                            else ATTENTION_OUT if args.attention
                            else TEXT_OUT if args.text_predict
                            else DEFAULT_OUT)  # fmt: skip
    if args.steps is None:
        args.steps = TEXT_STEPS if text else 450
    if args.residual or args.autoencoder:
        args.steps = min(args.steps, 60 if args.residual else 300)
    wide = args.hooks or args.residual or args.autoencoder or args.attention
    args.size = args.size or ("1800x1150" if args.attention else "1800x1000" if wide
                              else "1400x900")  # fmt: skip
    width, height = (int(v) for v in args.size.split("x"))

    shots.prepare()
    from PySide6.QtCore import Qt

    from app.gui.main_window import MainWindow
    from app.resources_path import resource_path

    with shots.application() as app:
        pump = functools.partial(shots.pump, app)

        def wait(condition, seconds: float = 60.0) -> bool:
            return shots.pump(app, seconds, until=condition)
        window = MainWindow(remember_layout=False)
        window._confirm_discard_changes = lambda: True  # nothing to keep from a picture
        window.resize(width, height)
        window.show()
        window.open_example(resource_path("examples", f"{args.example}.cwproj"))
        pump(0.5)
        editor, run = window.workbench.editor, window.run
        editor.view.fit_all()
        layer = editor.graph.node_named("conv2dtranspose1" if args.autoencoder
                                        else "dense1" if text else "dense2")  # fmt: skip
        if layer is not None:  # show the Inspector with something in it
            editor.scene.select([layer.id])
        if args.hooks or args.autoencoder:
            run.panel.setting_changed.emit("epochs", 100)  # still running at --steps
            pump(0.5)
            attach_hooks(window, AUTOENCODER_HOOKS if args.autoencoder else HOOKS,
                         health=args.hooks)
        if args.attention:
            node = editor.graph.node_named("transformerencoder1")
            attention = window.hooks.docks[editor.add_hook("attention", node.id).id]
        run.actions["start"].trigger()
        while run.session.state.step < args.steps and run.status != "ready":
            app.processEvents()
            time.sleep(0.005)  # the GUI's ticks run as in the app, not as a busy loop
        run.actions["pause"].trigger()
        pump(1.5)  # the curves and the boundary catch up with the pause
        if args.params:
            show_parameters(window, Path(args.out), pump)
        if args.predict:  # the panel alone is the picture
            panel = window.predict.panel
            window.predict.dock.raise_()
            # Tall enough for both modes' bars whole (by default the Inspector has the room).
            editor.scene.select([])
            pump(0.3)
            window.resizeDocks([window.inspector_dock, window.predict.dock], [280, 520],
                               Qt.Orientation.Vertical)  # fmt: skip
            panel.set_source("validation")
            panel.row_box.setValue(3)
            panel.both_box.setChecked(True)
            pump(1.0)
            panel.grab().save(args.out)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        if args.attention:
            show_attention(window, attention, pump, args.head)
        alone = args.predict or (args.text_predict and not args.attention)  # a panel alone
        if not alone and not window.grab().save(args.out):
            print(f"could not write {args.out}", file=sys.stderr)
            return 1
        if args.text_predict:  # after the window's picture: it raises the Predict dock
            out = Path(args.out).with_name("text_predict.png") if args.attention else args.out
            show_text_prediction(window, args.prompt, pump).grab().save(str(out))
            if args.attention:
                print(f"wrote {out}")
        step = run.session.state.step
        run.actions["stop"].trigger()
        run._stop_and_wait()
        window.close()
    print(f"wrote {args.out} ({width}x{height}) at step {step}")
    return 0


def attach_hooks(window, hooks=HOOKS, health: bool = True) -> None:
    """The `hooks`, added as the canvas's context menu adds them, panes tiled."""
    editor, controller = window.workbench.editor, window.hooks
    for name, kind, view in hooks:
        node = editor.graph.node_named(name)
        hook = editor.add_hook(kind, node.id)
        controller.docks[hook.id].widget().set_view(view)
    controller.arrange(tiled=True)
    controller.actions["health"].setChecked(health)


def show_attention(window, dock, pump, head: int = 0) -> None:
    """The attention pane beside the canvas, given room, on the last layer (where a
    character model's attention has the clearest shape) and `head` (as the pane numbers
    them from 1; 0: the average of the heads)."""
    from PySide6.QtCore import Qt

    pane = dock.widget()
    window.resizeDocks([dock], [ATTENTION_SIZE[0]], Qt.Orientation.Horizontal)
    window.resizeDocks([dock], [ATTENTION_SIZE[1]], Qt.Orientation.Vertical)
    pump(0.5)
    last = pane.layer_combo.count() - 1
    if last > 0:
        pane.layer_combo.setCurrentIndex(last)
    if 0 <= head < pane.head_combo.count():
        pane.head_combo.setCurrentIndex(head)
    pump(0.8)


def show_text_prediction(window, prompt: str, pump):
    """The Predict panel's text view: `prompt` typed, its next characters, a continuation
    of 300 characters sampled at temperature 0.6. Returns the panel (for its picture)."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from widgets.predict_panel import TEXT

    predict = window.predict
    panel = predict.panel
    predict.dock.raise_()
    window.workbench.editor.scene.select([])
    pump(0.3)
    window.resizeDocks([window.inspector_dock, predict.dock], [200, 700],
                       Qt.Orientation.Vertical)  # fmt: skip
    window.resizeDocks([predict.dock], [TEXT_WIDTH], Qt.Orientation.Horizontal)
    panel.set_source(TEXT)
    panel.prompt_edit.setFocus()
    panel.prompt_edit.selectAll()
    QTest.keyClick(panel.prompt_edit, Qt.Key.Key_Delete)
    QTest.keyClicks(panel.prompt_edit, prompt)
    view = panel.text_view
    view.length_box.setValue(300)
    view.temperature_box.setValue(0.6)
    view.sample_button.click()
    end = time.monotonic() + 60
    while view.sampling and time.monotonic() < end:
        pump(0.1)
    pump(1.0)
    return panel


def show_parameters(window, out: Path, pump) -> None:
    """Freeze dense1, list conv2d2's Parameters, open its weight (kernel grid) and conv2d1's
    (a table); the Parameter window's pictures go beside `out`."""
    editor, controller = window.workbench.editor, window.parameters
    dense = editor.graph.node_named("dense1")
    editor.scene.select([dense.id])
    pump(0.3)
    controller.freeze([i.name for i in controller._infos if i.local == "weight"], True)
    conv = editor.graph.node_named("conv2d1")
    editor.scene.select([conv.id])
    pump(0.3)
    controller.open_parameter("conv2d1.weight")
    controller.tensor_editor.set_view("table")
    pump(0.5)
    controller.dock.grab().save(str(out.with_name("parameter_table.png")))
    conv = editor.graph.node_named("conv2d2")
    editor.scene.select([conv.id])
    pump(0.3)
    controller.open_parameter("conv2d2.weight")
    pump(0.8)
    controller.dock.grab().save(str(out.with_name("parameter_kernels.png")))


if __name__ == "__main__":
    sys.exit(main())
