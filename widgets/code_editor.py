"""A Python code editor for custom Cells: line numbers, syntax colours, an error marker, and
a Check button. It knows nothing of Cells: the owner checks the code and says how it went.
"""

from __future__ import annotations

import keyword
import re

from PySide6.QtCore import QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QPainter,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

ERROR_BACKGROUND = QColor("#ffd7d7")
OK_COLOUR = "#166534"
ERROR_COLOUR = "#b91c1c"


def _format(colour: str, *, bold: bool = False, italic: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(colour))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    fmt.setFontItalic(italic)
    return fmt


class PythonHighlighter(QSyntaxHighlighter):
    """Keywords, builtins, def/class names, numbers, strings and comments (one line at a time,
    with triple-quoted strings carried across lines)."""

    RULES = (  # pattern, format, the group it colours
        (re.compile(r"\b(" + "|".join(keyword.kwlist) + r")\b"), _format("#7c3aed", bold=True),
         0),
        (re.compile(r"\b(self|super|print|len|range|int|float|tuple|list|dict)\b"),
         _format("#0e7490"), 0),
        (re.compile(r"\b(?:def|class)\s+(\w+)"), _format("#1d4ed8", bold=True), 1),
        (re.compile(r"\b\d+(\.\d*)?([eE][-+]?\d+)?\b"), _format("#b45309"), 0),
        (re.compile(r"@\w+(\.\w+)*"), _format("#0e7490", italic=True), 0),
    )  # fmt: skip
    STRING = _format("#15803d")
    COMMENT = _format("#6b7280", italic=True)
    _STRINGS = re.compile(r"'[^'\\\n]*(\\.[^'\\\n]*)*'|\"[^\"\\\n]*(\\.[^\"\\\n]*)*\"")
    _TRIPLE = re.compile(r'"""|\'\'\'')

    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt override)
        for pattern, fmt, group in self.RULES:
            for match in pattern.finditer(text):
                start, end = match.span(group)
                self.setFormat(start, end - start, fmt)
        for match in self._STRINGS.finditer(text):
            self.setFormat(match.start(), match.end() - match.start(), self.STRING)
        self._triple_quotes(text)
        hash_at = _comment_start(text)
        if hash_at >= 0:
            self.setFormat(hash_at, len(text) - hash_at, self.COMMENT)

    def _triple_quotes(self, text: str) -> None:
        """State 1: inside a triple-quoted string that began on an earlier line."""
        start = 0 if self.previousBlockState() == 1 else -1
        position = 0
        self.setCurrentBlockState(0)
        while True:
            if start < 0:
                found = self._TRIPLE.search(text, position)
                if found is None:
                    return
                start, position = found.start(), found.end()
            closing = self._TRIPLE.search(text, position)
            if closing is None:
                self.setFormat(start, len(text) - start, self.STRING)
                self.setCurrentBlockState(1)
                return
            self.setFormat(start, closing.end() - start, self.STRING)
            start, position = -1, closing.end()


def _comment_start(text: str) -> int:
    """Where a '#' comment begins on this line (outside strings), or -1."""
    quote = ""
    for i, char in enumerate(text):
        if quote:
            if char == quote and text[i - 1] != "\\":
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#":
            return i
    return -1


class _LineNumbers(QWidget):
    def __init__(self, editor: CodeEditor) -> None:
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(self.editor.number_width(), 0)

    def paintEvent(self, event) -> None:  # noqa: N802
        self.editor.paint_numbers(self, event)


class CodeEditor(QPlainTextEdit):
    """Plain-text Python with line numbers, colours and one marked error line."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("code_editor")
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.setFont(font)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(4 * self.fontMetrics().horizontalAdvance(" "))
        self.highlighter = PythonHighlighter(self.document())
        self.numbers = _LineNumbers(self)
        self.error_line = 0  # 1-based; 0: none
        self.blockCountChanged.connect(self._on_block_count_changed)
        self.updateRequest.connect(self._on_update_request)
        self._on_block_count_changed(0)

    def number_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 10 + self.fontMetrics().horizontalAdvance("9") * max(2, digits)

    def mark_error(self, line: int) -> None:
        """Colour line `line` (1-based) as the one in error; 0 clears the mark."""
        self.error_line = max(0, int(line))
        selections = []
        if self.error_line and self.error_line <= self.blockCount():
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(ERROR_BACKGROUND)
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            cursor = self.textCursor()
            cursor.setPosition(self.document().findBlockByNumber(self.error_line - 1).position())
            selection.cursor = cursor
            selections.append(selection)
        self.setExtraSelections(selections)
        self.numbers.update()

    def paint_numbers(self, area: QWidget, event) -> None:
        painter = QPainter(area)
        painter.fillRect(event.rect(), self.palette().alternateBase())
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            number = block.blockNumber() + 1
            if block.isVisible():
                colour = QColor(ERROR_COLOUR) if number == self.error_line else QColor("#6b7280")
                painter.setPen(colour)
                painter.drawText(0, top, area.width() - 5, height, Qt.AlignmentFlag.AlignRight,
                                 str(number))  # fmt: skip
            top += round(self.blockBoundingRect(block).height())
            block = block.next()
        painter.end()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        rect = self.contentsRect()
        self.numbers.setGeometry(QRect(rect.left(), rect.top(), self.number_width(),
                                       rect.height()))  # fmt: skip

    def _on_block_count_changed(self, count: int) -> None:
        self.setViewportMargins(self.number_width(), 0, 0, 0)

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self.numbers.scroll(0, dy)
        else:
            self.numbers.update(0, rect.y(), self.numbers.width(), rect.height())


class CodePane(QWidget):
    """The code of one custom Cell, a Check button and what the last check said."""

    check_requested = Signal(str)  # the code as it is now

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("code_pane")
        self.title = QLabel("")
        self.editor = CodeEditor()
        self.check_button = QPushButton("Check")
        self.check_button.setObjectName("code_check_button")
        self.check_button.setToolTip("Run the Cell once on zeros of the incoming shape and "
                                     "apply the code to the node (Ctrl+Return)")  # fmt: skip
        self.check_button.setShortcut("Ctrl+Return")
        self.check_button.clicked.connect(self._on_check_button_clicked)
        self.result = QLabel("")
        self.result.setObjectName("code_result")
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row = QHBoxLayout()
        row.addWidget(self.title, 1)
        row.addWidget(self.check_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(row)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.result)

    def set_code(self, code: str, title: str = "") -> None:
        self.title.setText(title)
        if code != self.editor.toPlainText():
            self.editor.setPlainText(code)
        self.show_ok("")

    def code(self) -> str:
        return self.editor.toPlainText()

    def show_error(self, message: str, line: int = 0) -> None:
        """What went wrong, and where (1-based line; 0 if no line is known)."""
        self.editor.mark_error(line)
        where = f"Line {line}: " if line and not message.lower().startswith("line") else ""
        self.result.setStyleSheet(f"color: {ERROR_COLOUR};")
        self.result.setText(where + message)
        if line:
            cursor = self.editor.textCursor()
            block = self.editor.document().findBlockByNumber(line - 1)
            cursor.setPosition(block.position())
            self.editor.setTextCursor(cursor)
            self.editor.centerCursor()

    def show_ok(self, message: str) -> None:
        self.editor.mark_error(0)
        self.result.setStyleSheet(f"color: {OK_COLOUR};")
        self.result.setText(message)

    def _on_check_button_clicked(self) -> None:
        self.check_requested.emit(self.code())
