"""Form fields for narrow docks: exact number boxes, wheel-safe combos, the refused look.

Every drop-down and spin box of a form is one of these (`Combo`, `IntBox`, `NumberBox`):
a mouse wheel over one the user has not clicked into scrolls the panel around it and
never changes its value (an unseen edit, and in the Inspector an undo step). A refused
value turns its field red with the reason as tooltip (as the Inspector does);
`clear_refusal` puts the field's own tooltip back.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFrame,
    QScrollArea,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

BAD = (
    "QLineEdit, QComboBox, QSpinBox, QDoubleSpinBox, QCheckBox "
    "{ background: #ffe3e3; color: #7a1010; border: 1px solid #ef5350; }"
)
_PARTIAL_NUMBER = re.compile(r"[-+]?(\d*\.?\d*)?([eE][-+]?\d*)?")


def format_number(value: float) -> str:
    """Shortest text that reads back as the same float: 0.02, 1e-8, 0.125, 3."""
    text = repr(float(value))
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa.removesuffix('.0')}e{int(exponent)}"
    return text.removesuffix(".0")


def parse_number(text: str) -> Any:
    """Typed text as an int or a float, or the text itself when it is neither."""
    for kind in (int, float):
        try:
            return kind(text.strip())
        except ValueError:
            pass
    return text


def tool_button(name: str, text: str, tip: str, *, checkable: bool = False,
                flat: bool = False) -> QToolButton:
    """A named text button for a pane's tool row; `flat` draws it only under the mouse."""
    button = QToolButton()
    button.setObjectName(name)
    button.setText(text)
    button.setToolTip(tip)
    button.setCheckable(checkable)
    button.setAutoRaise(flat)
    return button


def set_tip(widget: QWidget, text: str) -> QWidget:
    """The field's own tooltip; a refusal replaces it until the field is good again."""
    widget.setProperty("tip", text)
    widget.setToolTip(text)
    return widget


def show_refusal(field: QWidget, reason: str) -> None:
    field.setStyleSheet(BAD)
    field.setToolTip(reason)


def clear_refusal(field: QWidget) -> None:
    if field.styleSheet():
        field.setStyleSheet("")
        field.setToolTip(field.property("tip") or "")


class WheelWhenFocused:
    """The wheel changes the field only once it has the focus (a click or Tab gives it).

    Over an unfocused field the wheel event is ignored, so Qt passes it on to the
    parents: the scroll area the form sits in scrolls. The wheel alone never focuses it.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # not WheelFocus

    def wheelEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        if self.hasFocus():
            super().wheelEvent(event)
        else:
            event.ignore()


class Combo(WheelWhenFocused, QComboBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Long entries must not widen a narrow dock.
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(8)


class TypedCheck(WheelWhenFocused):
    """Spin boxes: report typed text the box can't take, which Qt silently puts back."""

    on_refused: Callable[[str], None] | None = None

    def keyPressEvent(self, event) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._check_typed()
        super().keyPressEvent(event)

    def focusOutEvent(self, event) -> None:  # noqa: N802
        self._check_typed()
        super().focusOutEvent(event)

    def _check_typed(self) -> None:
        state = self.validate(self.text(), 0)
        state = state[0] if isinstance(state, tuple) else state
        if state != QValidator.State.Acceptable and self.on_refused is not None:
            self.on_refused(self.cleanText())


class IntBox(TypedCheck, QSpinBox):
    def __init__(self, minimum: int, maximum: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setKeyboardTracking(False)  # valueChanged on Enter / leaving, not per keystroke
        self.setRange(minimum, maximum)

    def show_value(self, value: Any, default: int) -> None:
        """Show `value` (`default` if it is not a whole number), widening the range for it."""
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            value = default
        value = int(value)
        self.setRange(min(self.minimum(), value), max(self.maximum(), value))
        self.setValue(value)


class NumberBox(TypedCheck, QDoubleSpinBox):
    """A spin box for floats that shows and keeps any value exactly ("1e-8", "0.125")."""

    def __init__(self, minimum: float, maximum: float, step: float, parent=None) -> None:
        super().__init__(parent)
        self.setKeyboardTracking(False)
        self.setDecimals(30)  # Qt rounds values to this many decimals: keep them all
        self.setRange(minimum, maximum)
        self.setSingleStep(step)

    def show_value(self, value: Any, default: float) -> None:
        """Show `value` (`default` if it is not a finite number), widening the range for it."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            value = default
        value = float(value)
        if not math.isfinite(value):
            value = default
        self.setRange(min(self.minimum(), value), max(self.maximum(), value))
        self.setValue(value)

    def textFromValue(self, value: float) -> str:  # noqa: N802
        return format_number(value)

    def valueFromText(self, text: str) -> float:  # noqa: N802
        try:
            return float(text)
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int):
        try:
            value = float(text.strip())
        except ValueError:
            partial = _PARTIAL_NUMBER.fullmatch(text.strip())
            state = QValidator.State.Intermediate if partial else QValidator.State.Invalid
            return state, text, pos
        inside = math.isfinite(value) and self.minimum() <= value <= self.maximum()
        return (QValidator.State.Acceptable if inside else QValidator.State.Intermediate), text, pos

    def stepBy(self, steps: int) -> None:  # noqa: N802
        self.interpretText()
        # 0.1 + 0.05 is 0.15000000000000002: round to a few digits below the step.
        digits = max(0, -math.floor(math.log10(self.singleStep()))) + 6
        self.setValue(round(self.value() + steps * self.singleStep(), digits))


def scroll_in(panel: QWidget, content: QWidget) -> QScrollArea:
    """Fill `panel` with a frameless scroll area holding `content`: a short dock scrolls the
    panel, never squeezing it (or the dock above it) below about three lines."""
    scroll = QScrollArea()
    scroll.setWidget(content)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setMinimumHeight(scroll.fontMetrics().lineSpacing() * 3)
    layout = QVBoxLayout(panel)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(scroll)
    return scroll
