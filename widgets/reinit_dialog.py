"""Re-initialize Parameters: choose an initializer of `engine.common.initializer`, its options
and a seed. Options are read strictly; a refused one says why and the dialog stays open."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.session.param_values import INITIALIZERS, parse_value
from widgets.form_fields import Combo, IntBox, clear_refusal, format_number, show_refusal

DEFAULT_INITIALIZER = "HeNormal"


class ReinitDialog(QDialog):
    """`choice()` after `exec()`: (initializer name, options, seed)."""

    def __init__(self, what: str, seed: int = 0, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reinit_dialog")
        self.setWindowTitle("Re-initialize Parameters")
        self.kind = Combo()  # as every field here: the wheel changes it only once clicked
        self.kind.setObjectName("reinit_kind")
        self.kind.addItems(list(INITIALIZERS))
        self.kind.setCurrentText(DEFAULT_INITIALIZER)
        self.seed = IntBox(0, 2**31 - 1)
        self.seed.setObjectName("reinit_seed")
        self.seed.setValue(seed)
        self.seed.setToolTip("The same seed gives the same values")
        self.fields: dict[str, QWidget] = {}
        self._options_host = QWidget()
        self._options = QFormLayout(self._options_host)
        self._options.setContentsMargins(0, 0, 0, 0)
        self.problem = QLabel("")
        self.problem.setObjectName("reinit_problem")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #b91c1c;")
        form = QFormLayout()
        form.addRow("Initializer", self.kind)
        form.addRow("Seed", self.seed)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)  # fmt: skip
        buttons.accepted.connect(self._on_buttons_accepted)
        buttons.rejected.connect(self.reject)
        intro = QLabel(f"New values for {what}. Undo puts the old ones back.")
        intro.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self._options_host)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.kind.currentTextChanged.connect(self._on_kind_current_text_changed)
        self._on_kind_current_text_changed(self.kind.currentText())
        self._choice: tuple[str, dict[str, Any], int] | None = None

    def _on_kind_current_text_changed(self, name: str) -> None:
        while self._options.rowCount():
            self._options.removeRow(0)
        self.fields = {}
        for option in INITIALIZERS[name][1]:
            if option.choices:
                field = Combo()
                field.addItems(list(option.choices))
                field.setCurrentText(option.default)
            else:
                field = QLineEdit(format_number(option.default))
            field.setObjectName(f"reinit_{option.name}")
            self._options.addRow(option.name, field)
            self.fields[option.name] = field

    def read(self) -> tuple[str, dict[str, Any], int]:
        """The choice as typed; ValueError naming the option that is not a number."""
        name = self.kind.currentText()
        options: dict[str, Any] = {}
        for option in INITIALIZERS[name][1]:
            field = self.fields[option.name]
            if isinstance(field, Combo):
                options[option.name] = field.currentText()
                continue
            try:
                options[option.name] = float(parse_value(field.text(), "float64"))
            except ValueError as exc:
                show_refusal(field, str(exc))
                raise ValueError(f"{option.name}: {exc}") from None
            clear_refusal(field)
        return name, options, self.seed.value()

    def choice(self) -> tuple[str, dict[str, Any], int] | None:
        return self._choice

    def _on_buttons_accepted(self) -> None:
        try:
            self._choice = self.read()
        except ValueError as exc:
            self.problem.setText(str(exc))
            return
        self.accept()
