"""Parameter editor frame times: the table and heatmap of a 1024×1024 float32 weight (issue 12).

    python benchmarks/gui_params.py [--size 1024] [--frames 120]

Shows a TensorEditor (offscreen, 1200×800) on a size×size float32 array and times, per
frame, in milliseconds:

- table scroll: the table scrolled by one page (down, and every fourth frame right),
  then a synchronous repaint of its viewport;
- table refresh: an in-place change of the array (not timed), refresh(), repaint;
- heatmap redraw: an in-place change (not timed), refresh() (new levels, setImage),
  then a synchronous repaint of the plot (pyqtgraph renders the image there);
- kernel grid redraw: the same for a Conv2d weight (64, 32, 3, 3) drawn as a grid;
- stats line: statistics() of the whole array, which the editor runs at most once per
  150 ms burst of refreshes, after the frame.

Prints median and 95th percentile against the target "< 16 ms median".
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_MS = 16.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(frames: int, before, frame) -> list[float]:
    """Milliseconds of `frames` calls of `frame()`, each after an untimed `before(i)`."""
    from PySide6.QtWidgets import QApplication

    times = []
    for i in range(frames):
        before(i)
        start = time.perf_counter()
        frame()
        times.append((time.perf_counter() - start) * 1000.0)
        QApplication.processEvents()
    return times


def measure(size: int, frames: int) -> dict[str, list[float]]:
    import numpy as np
    from PySide6.QtWidgets import QApplication

    from app.session.param_values import statistics as tensor_statistics
    from widgets.tensor_editor import TensorEditor

    app = QApplication.instance() or QApplication([])
    array = np.random.default_rng(0).normal(0, 0.05, (size, size)).astype(np.float32)

    def apply_edit(regions, text):
        for index, values in regions:
            array[index] = values
        editor.refresh()

    editor = TensorEditor()
    editor.apply_edit = apply_edit
    editor.set_tensor(array, "dense1.weight")
    editor.resize(1200, 800)
    editor.show()
    for _ in range(5):
        app.processEvents()
    table = editor.table
    rows, columns = table.verticalScrollBar(), table.horizontalScrollBar()

    def page(i: int) -> None:
        if i % 4 == 3:
            columns.setValue((columns.value() + columns.pageStep()) % (columns.maximum() + 1))
        else:
            rows.setValue((rows.value() + rows.pageStep()) % (rows.maximum() + 1))

    def change(i: int) -> None:
        array[i % size] += np.float32(0.01)  # one row, in place, as an edit does

    results = {}
    timed(10, lambda i: None, lambda: table.viewport().repaint())  # warm-up
    results["table scroll (page)"] = timed(frames, page, lambda: table.viewport().repaint())
    results["table refresh"] = timed(frames, change,
                                     lambda: (editor.refresh(), table.viewport().repaint()))
    editor.set_view("heatmap")
    plot = editor.heatmap.view.viewport()
    timed(10, change, lambda: (editor.refresh(), plot.repaint()))  # warm-up
    results["heatmap redraw"] = timed(frames, change, lambda: (editor.refresh(), plot.repaint()))
    kernels = np.random.default_rng(1).normal(0, 0.1, (64, 32, 3, 3)).astype(np.float32)
    editor.set_tensor(kernels, "conv2.weight", kernels=True)
    app.processEvents()

    def change_kernel(i: int) -> None:
        kernels[i % 64] *= np.float32(-1)

    timed(5, change_kernel, lambda: (editor.refresh(), plot.repaint()))
    results["kernel grid (64×32 of 3×3) redraw"] = timed(
        frames, change_kernel, lambda: (editor.refresh(), plot.repaint()))
    results["stats line (once per burst, deferred)"] = timed(
        max(frames // 4, 5), lambda i: None, lambda: tensor_statistics(array))
    editor.grab().save(str(Path(os.environ.get("TMPDIR", "/tmp")) / "gui_params_editor.png"))
    editor.close()
    app.processEvents()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024, help="rows and columns of the array")
    parser.add_argument("--frames", type=int, default=120)
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    results = measure(args.size, args.frames)
    print(f"Qt platform: {os.environ['QT_QPA_PLATFORM']}, editor 1200x800, "
          f"{args.size}x{args.size} float32, {args.frames} frames")  # fmt: skip
    print(f"{'frame':40s}{'median ms':>11s}{'p95 ms':>9s}   target < {TARGET_MS:g} ms median")
    for name, times in results.items():
        median = statistics.median(times)
        verdict = "ok" if median < TARGET_MS else "OVER"
        if name.startswith("stats"):
            verdict = "(not in a frame)"
        print(f"{name:40s}{median:11.2f}{percentile(times, 0.95):9.2f}   {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
