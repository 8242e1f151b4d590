"""Message boxes recorded instead of shown, for tests of the main window."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

KINDS = ("about", "critical", "warning", "information", "question")


class Dialogs:
    """Records message boxes instead of showing them; `answer` is what the user clicks."""

    def __init__(self, answer: QMessageBox.StandardButton) -> None:
        self.shown: list[tuple[str, str, str]] = []
        self.answer = answer

    def recorder(self, kind: str):
        def show(parent, title, text, *args, **kwargs):
            self.shown.append((kind, title, text))
            return self.answer

        return show


def record_dialogs(monkeypatch, answer: QMessageBox.StandardButton) -> Dialogs:
    """Replace QMessageBox's static dialogs for this test; what they were asked is kept."""
    recorded = Dialogs(answer)
    for kind in KINDS:
        monkeypatch.setattr(QMessageBox, kind, staticmethod(recorded.recorder(kind)))
    return recorded
