"""The `cellwright` console entry: start the GUI, `--version`, `--selftest`, or a CLI command.

Qt is imported only on the GUI paths, so `cellwright --version` and the headless
commands (dispatched to `app.cli`) start fast and work without a display.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from collections.abc import Sequence
from typing import Any

from app import __version__, cli

SELFTEST_SECONDS = 1.0
# The desktop entry (packaging/linux/) and the icon PNGs in resources/icons.
DESKTOP_FILE_NAME = "io.github.cellwright.Cellwright"
ICON_SIZES = (16, 32, 48, 64, 128, 256, 512)
# Set to the launch time (seconds since the epoch, e.g. `date +%s.%N`) to have the GUI
# and --selftest print how long the main window took to show (packaging/README.md).
LAUNCH_TIME_VARIABLE = "CELLWRIGHT_LAUNCH_TIME"


def main(argv: Sequence[str] | None = None) -> int:
    """Run Cellwright with the given arguments (default: sys.argv[1:]); returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in cli.command_names():
        return cli.main(args)
    options = _parser().parse_args(args)
    if options.selftest:
        return run_selftest()
    return run_gui(options.project)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cellwright",
        description="Build, train and look inside neural networks.",
        epilog="Headless commands: " + (", ".join(sorted(cli.command_names())) or "none yet"),
    )
    parser.add_argument("project", nargs="?", metavar="PROJECT", help="a .cwproj file to open")
    parser.add_argument("--version", action="version", version=f"cellwright {__version__}")
    parser.add_argument(
        "--selftest",
        action="store_true",
        help="show the main window, process events for a second, print SELFTEST OK",
    )
    return parser


def run_gui(project: str | None = None) -> int:
    """Show the main window (opening `project` if given) and run the event loop."""
    if not _display_available():
        print(
            "cellwright: no display found (DISPLAY/WAYLAND_DISPLAY unset); "
            "set QT_QPA_PLATFORM=offscreen to run without one.",
            file=sys.stderr,
        )
        return 1
    from app.gui.main_window import MainWindow

    app = _application()
    window = MainWindow()
    window.show()
    _report_time_to_window(app)
    from app.gui.autosave import offer_recovery

    if offer_recovery(window, window.settings) is None and project:
        # A missing or bad file is reported in the status bar; the app still starts.
        window.open_project(project, interactive=False)
    _close_on_interrupt(window)
    return app.exec()


def _close_on_interrupt(window: Any) -> None:
    """Ctrl+C in the terminal closes the window (asking about unsaved work, saving the layout).

    Python runs signal handlers only between bytecodes, so a timer lets the
    interpreter run briefly while Qt's event loop waits.
    """
    import signal

    from PySide6.QtCore import QTimer

    signal.signal(signal.SIGINT, lambda *_: window.close())
    timer = QTimer(window)
    timer.timeout.connect(lambda: None)
    timer.start(250)


def run_selftest() -> int:
    """Show the main window for about a second; 0 and `SELFTEST OK` if all went well."""
    if not _display_available():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    problems: list[str] = []
    previous_hook = sys.excepthook

    def collect(kind: type[BaseException], exc: BaseException, tb: Any) -> None:
        # Qt reports exceptions raised inside slots here; each one fails the selftest.
        problems.append("".join(traceback.format_exception(kind, exc, tb)))

    sys.excepthook = collect
    try:
        import numpy  # noqa: F401  (the packaged app must carry these)
        import pyqtgraph  # noqa: F401

        import engine  # noqa: F401
        from app.gui.main_window import MainWindow

        app = _application()
        window = MainWindow(remember_layout=False)
        window.show()
        _report_time_to_window(app)
        _process_events_for(app, SELFTEST_SECONDS)
        problems.extend(_check_window(window))
        window.close()
        app.processEvents()
    except Exception:
        problems.append(traceback.format_exc())
    finally:
        sys.excepthook = previous_hook
    if problems:
        print("SELFTEST FAILED", file=sys.stderr)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1
    print("SELFTEST OK", flush=True)
    return 0


def _check_window(window: Any) -> list[str]:
    from PySide6.QtWidgets import QDockWidget, QLabel

    problems = []
    if not window.isVisible():
        problems.append("the main window is not visible")
    for name in ("palette_dock", "inspector_dock", "run_dock", "plots_dock"):
        if window.findChild(QDockWidget, name) is None:
            problems.append(f"dock {name} is missing")
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    if titles != ["File", "Edit", "View", "Run", "Help"]:
        problems.append(f"unexpected menus {titles}")
    if window.windowIcon().isNull():
        problems.append("the window has no icon (resources/icons not found)")
    mode = window.findChild(QLabel, "mode_label")
    if mode is None or mode.text().split(" ")[0] not in ("Predict", "Train"):
        problems.append("the status bar does not show the network mode")
    return problems


def _application() -> Any:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "cellwright"])
    app.setApplicationName("Cellwright")
    app.setOrganizationName("Cellwright")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(DESKTOP_FILE_NAME)
    app.setWindowIcon(_window_icon())
    return app


def _window_icon() -> Any:
    """The application icon from the shipped PNGs (an empty icon if they are missing)."""
    from PySide6.QtCore import QSize
    from PySide6.QtGui import QIcon

    from app.resources_path import resource_path

    icon = QIcon()
    for size in ICON_SIZES:
        path = resource_path("icons", f"cellwright-{size}.png")
        if path.is_file():
            icon.addFile(str(path), QSize(size, size))
    return icon


def _report_time_to_window(app: Any) -> None:
    """With CELLWRIGHT_LAUNCH_TIME set, print the seconds from launch to the shown window.

    Called right after `show()`: one round of events delivers the expose and first paint.
    """
    launched = os.environ.get(LAUNCH_TIME_VARIABLE)
    if not launched:
        return
    app.processEvents()
    try:
        seconds = time.time() - float(launched)
    except ValueError:
        return
    print(f"window shown after {seconds:.3f} s", flush=True)


def _process_events_for(app: Any, seconds: float) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()


def _display_available() -> bool:
    """False on a Linux box with no display server and no QT_QPA_PLATFORM chosen."""
    if os.environ.get("QT_QPA_PLATFORM") or not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


if __name__ == "__main__":
    sys.exit(main())
