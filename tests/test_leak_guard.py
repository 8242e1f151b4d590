"""The conftest guard fails a GUI test that leaks a top-level widget, and only such a test."""

import shutil
import subprocess
import sys
from pathlib import Path

LEAKY_TESTS = """
from PySide6.QtWidgets import QWidget

kept = []


def test_left_open(qtbot):
    widget = QWidget()
    widget.show()
    kept.append(widget)


def test_made_and_never_shown(qtbot):
    kept.append(QWidget())


def test_closed_by_the_test(qtbot):
    widget = QWidget()
    widget.show()
    widget.close()
    kept.append(widget)


def test_registered_with_qtbot(qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    widget.show()


def test_without_qt():
    assert True
"""


def test_guard_flags_leaked_widgets_only(tmp_path):
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_leaky.py").write_text(LEAKY_TESTS)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # Each test reports its call (PASSED/FAILED) and, if the guard fired, an ERROR at teardown.
    reports = [line.split(" ", 1) for line in result.stdout.splitlines() if "::" in line]
    errors = {
        rest.split("::")[1].split()[0]: rest for outcome, rest in reports if outcome == "ERROR"
    }
    assert set(errors) == {"test_left_open", "test_made_and_never_shown"}, result.stdout
    assert "leaked 1 top-level widget" in errors["test_left_open"]
    assert not [r for r in reports if r[0] == "FAILED"], result.stdout
    assert "5 passed, 2 errors" in result.stdout
