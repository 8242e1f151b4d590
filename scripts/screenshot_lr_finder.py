"""Screenshot of Run → Find Learning Rate… after a finished search on the spiral example.

    python scripts/screenshot_lr_finder.py [--out resources/screenshots/lr_finder.png]

Opens the shipped spiral example in the window, opens the dialog from the Run menu's
action, clicks Find with the default bounds (1e-7 to 10, 100 steps), waits for the search
to end and grabs the dialog. Uses a throw-away settings folder.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import shots

REPO = Path(__file__).resolve().parents[1]
OUT = "resources/screenshots/lr_finder.png"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=OUT)
    parser.add_argument("--size", default="720x560", help="dialog size, WIDTHxHEIGHT")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    shots.prepare()

    from app.gui.main_window import MainWindow
    from app.resources_path import resource_path

    with shots.application() as app:
        pump = functools.partial(shots.pump, app)
        window = MainWindow()
        window.resize(1400, 900)
        window.show()
        pump(0.3)
        if not window.open_example(resource_path("examples", "spiral_mlp.cwproj")):
            print("the example did not open", file=sys.stderr)
            return 1
        pump(0.5)
        window.shell.action("find_lr_action").trigger()
        view = window.lr_finder.view
        view.resize(width, height)
        pump(0.3)
        view.find_button.click()
        job = window.lr_finder.job
        deadline = time.monotonic() + 60
        while (not job.done.is_set() or window.lr_finder.timer.isActive()) and \
                time.monotonic() < deadline:  # fmt: skip
            pump(0.05)
        if job.finding is None:
            print(f"the search failed: {job.error}", file=sys.stderr)
            return 1
        pump(0.5)
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        view.grab().save(str(out))
        finding = job.finding
        print(f"{finding.steps} steps, stopped: {finding.stopped_early or 'at the end rate'}; "
              f"suggestion {finding.suggestion:.3g}")  # fmt: skip
        view.close()
        window.hide()  # not close(): nothing to ask about, but keep it quiet
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
