"""RunProgress: every line is shown whole at any width; the numbers repaint, and lay the dock
out again only when they need another line."""

import pytest
from PySide6.QtWidgets import QScrollArea, QVBoxLayout, QWidget

from app.session import EpochMetrics, Progress
from widgets.run_progress import Readout, RunProgress

pytestmark = pytest.mark.gui

LONG = ("The network can't be built:\n- dense4: Input 'in' is not connected.\n- dense5: Input "
        "'in' is not connected.\n- dense6: Input 'in' is not connected.")  # fmt: skip


def progress_event(step=120):
    return Progress(step=step, run_step=step, steps_planned=1000, epoch=12, batch=3,
                    batches_per_epoch=10, loss=0.3, accuracy=0.9, learning_rate=0.02,
                    mean_loss=0.31234, mean_accuracy=0.912)  # fmt: skip


@pytest.fixture
def host(qtbot):
    """A dock-like column: the progress over a scroll area that gives way to it."""
    widget = QWidget()
    qtbot.addWidget(widget)
    column = QVBoxLayout(widget)
    progress = RunProgress()
    column.addWidget(progress)
    column.addWidget(QScrollArea(), 1)
    widget.progress = progress
    widget.resize(330, 300)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def shown_whole(readout: Readout) -> bool:
    lines = readout.height() // readout.fontMetrics().lineSpacing()
    return readout.isVisible() and lines >= readout.lines_needed()


def fill(progress: RunProgress) -> None:
    progress.show_progress(progress_event(), 100, 250.0)
    progress.show_epoch(EpochMetrics(12, 120, 0.3, 0.9, 0.35, 0.88))
    progress.show_status("Paused after step 120. Edits to the network are allowed; Resume "
                         "compiles them.")  # fmt: skip


def test_empty_lines_take_no_room(host):
    progress = host.progress
    assert not progress.speed.isVisible() and not progress.train_numbers.isVisible()
    assert not progress.status.isVisible()
    assert progress.height() < 3 * progress.bar.height()


@pytest.mark.parametrize("width", [150, 330, 700])
def test_every_line_is_whole_at_any_width(host, qtbot, width):
    progress = host.progress
    fill(progress)
    host.resize(width, 400)
    qtbot.wait(20)
    for readout in (progress.speed, progress.train_numbers, progress.val_numbers):
        assert shown_whole(readout), readout.objectName()
    status = progress.status
    assert status.height() >= status.heightForWidth(status.width())
    lines = [progress.bar, progress.speed, progress.status, progress.train_numbers,
             progress.val_numbers]  # fmt: skip
    for upper, lower in zip(lines, lines[1:], strict=False):
        assert upper.geometry().bottom() < lower.geometry().top()


def test_a_long_message_makes_room_for_itself_and_the_scroll_gives_way(host, qtbot):
    host.resize(200, 300)
    qtbot.wait(20)
    progress = host.progress
    progress.show_status(LONG)
    qtbot.wait(20)
    status = progress.status
    assert status.text() == LONG
    assert status.height() >= status.heightForWidth(status.width())
    assert progress.minimumSizeHint().height() >= status.heightForWidth(status.width())


def test_new_numbers_repaint_and_relayout_only_for_another_line(host, qtbot):
    readout = host.progress.train_numbers
    host.progress.show_progress(progress_event(), 100, 250.0)
    qtbot.wait(20)
    height = readout.height()
    for step in range(121, 140):  # the same number of lines: the height stays put
        host.progress.show_progress(progress_event(step), 100, 250.0)
        assert readout.minimumHeight() == readout.maximumHeight() == height
    readout.setText(readout.text() + " and a good deal more text, which needs another line")
    assert readout.minimumHeight() > height
    readout.setText("")
    assert not readout.isVisible()
