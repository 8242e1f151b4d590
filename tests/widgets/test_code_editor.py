"""The custom Cell code pane: typing, colours, the error mark and the Check button."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from widgets.code_editor import ERROR_BACKGROUND, CodePane

CODE = '''from engine import nn

class Threshold(nn.Cell):
    """Zero out
    what lies below."""

    def construct(self, x):  # one input
        return x * (x > 0.1)
'''


def make(qtbot):
    pane = CodePane()
    qtbot.addWidget(pane)
    pane.resize(500, 300)
    pane.show()
    qtbot.waitExposed(pane)
    pane.set_code(CODE, "threshold1")
    return pane


def colour_at(pane, line: int, column: int) -> QColor:
    block = pane.editor.document().findBlockByNumber(line - 1)
    for fmt_range in block.layout().formats():
        if fmt_range.start <= column < fmt_range.start + fmt_range.length:
            return fmt_range.format.foreground().color()
    return QColor()


def test_check_sends_the_code_as_typed(qtbot):
    pane = make(qtbot)
    pane.editor.moveCursor(pane.editor.textCursor().MoveOperation.End)
    qtbot.keyClicks(pane.editor, "# more")
    with qtbot.waitSignal(pane.check_requested) as sent:
        qtbot.mouseClick(pane.check_button, Qt.MouseButton.LeftButton)
    assert sent.args == [CODE + "# more"]


def test_an_error_marks_its_line_and_says_where(qtbot):
    pane = make(qtbot)
    pane.show_error("NameError: name 'y' is not defined", 8)
    assert pane.result.text() == "Line 8: NameError: name 'y' is not defined"
    (selection,) = pane.editor.extraSelections()
    assert selection.format.background().color() == ERROR_BACKGROUND
    assert selection.cursor.blockNumber() == 7
    assert pane.editor.textCursor().blockNumber() == 7  # the cursor goes there
    pane.show_ok("Output (N, 2)")
    assert pane.editor.extraSelections() == [] and pane.result.text() == "Output (N, 2)"


def test_keywords_strings_across_lines_and_comments_have_their_colours(qtbot):
    pane = make(qtbot)
    keyword, docstring = colour_at(pane, 3, 0), colour_at(pane, 5, 4)  # 'class', 2nd line
    comment = colour_at(pane, 7, CODE.splitlines()[6].index("#"))
    plain = colour_at(pane, 8, CODE.splitlines()[7].index("x"))
    assert len({keyword.name(), docstring.name(), comment.name()}) == 3
    assert docstring == colour_at(pane, 4, 4)  # the string spans both lines
    assert plain != keyword


def test_line_numbers_make_room_for_every_digit(qtbot):
    pane = make(qtbot)
    narrow = pane.editor.number_width()
    pane.set_code("\n".join(["x = 1"] * 1200))
    assert pane.editor.number_width() > narrow
