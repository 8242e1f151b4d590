"""Screenshot of runs compared: the Runs dock with three runs of the spiral example (hidden
layers 16, 32 and 64 wide) and the runs chosen there overlaid in the Plots area.

    python scripts/screenshot_runs.py [--out resources/screenshots/runs_overlay.png]

Trains the three runs in the window as a user would (the widths set as Inspector edits,
one undo step each; Restart from Initial Weights), names them, selects the
two narrower runs in the Runs table (the live curves are the widest run's) and grabs the
window. Uses a throw-away settings folder.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

import shots

REPO = Path(__file__).resolve().parents[1]
OUT = "resources/screenshots/runs_overlay.png"
WIDTHS = (16, 32, 64)
SHOWN = (0, 1)  # the runs overlaid; the live curves show the last (the widest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=OUT)
    parser.add_argument("--size", default="1600x900", help="window size, WIDTHxHEIGHT")
    parser.add_argument("--epochs", type=int, default=40)
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    shots.prepare()
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    from app.gui.main_window import MainWindow
    from app.resources_path import resource_path
    from app.session import READY
    from app.undo.commands import perform
    from app.undo.runs import RenameRunCommand
    from app.undo.size_edit import SizeEditCommand

    with shots.application() as app:
        pump = functools.partial(shots.pump, app)

        def wait(condition, seconds: float = 60.0) -> bool:
            return shots.pump(app, seconds, until=condition)
        # "Restart from initial weights?": yes, each time.
        QMessageBox.question = staticmethod(lambda *a, **k: QMessageBox.StandardButton.Yes)
        window = MainWindow(remember_layout=False)
        window.resize(width, height)
        window.show()
        pump(0.5)
        if not window.open_example(resource_path("examples", "spiral_mlp.cwproj")):
            return 1
        run = window.run
        run.panel.setting_changed.emit("epochs", args.epochs)
        window.runs.dock.toggleViewAction().trigger()  # View → Runs
        pump(0.3)
        project, stack = window.project, window.undo_stack
        for hidden in WIDTHS:
            for name in ("dense1", "dense2"):
                node = project.graph.node_named(name)
                problem = perform(stack, SizeEditCommand(project.graph, (), node.id,
                                                         {"out_channels": hidden}))  # fmt: skip
                if problem:
                    print(problem, file=sys.stderr)
                    return 1
            count = len(project.runs)
            if not wait(lambda: run.session is not None
                        and run.fingerprint() == run._fingerprint):  # fmt: skip
                print("no session was made", file=sys.stderr)
                return 1
            run.restart()  # each from fresh weights at step 0, for a fair comparison
            if not wait(lambda c=count: run.status == READY and len(project.runs) == c + 1):
                print("the run was not recorded", file=sys.stderr)
                return 1
            record = project.runs.last
            perform(stack, RenameRunCommand(project, record.id, f"{hidden} wide"))
        table = window.runs.view
        table.select([project.runs.records[i].id for i in SHOWN])
        table.view.resizeColumnsToContents()
        # The curves are what is looked at: the Plots get most of the bottom row.
        window.resizeDocks([window.shell.dock("plots_dock"), window.runs.dock],
                           [int(width * 0.42), int(width * 0.3)], Qt.Orientation.Horizontal)
        pump(1.0)
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(out))
        print(f"wrote {out}")
        window.run._stop_and_wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
