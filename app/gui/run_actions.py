"""The Run menu and toolbar: training actions with their keys, and the network-mode pair."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QToolBar

from app.gui.shell import Shell

ACTIONS = (
    ("start", "&Start", "F5", "Train from where the project stands"),
    ("pause", "&Pause", "F6", "Pause after the current step"),
    ("resume", "&Resume", "F7", "Go on training after a pause"),
    ("step", "S&tep", "F10", "Train exactly one batch"),
    ("stop", "St&op", "Shift+F5", "End the run after the current step"),
    ("restart", "Restart from &Initial Weights…", "Ctrl+Shift+F5",
     "Forget the trained weights and progress, and train again"),
)  # fmt: skip
MODES = (
    ("train", "Train", "Train mode: Dropout drops, BatchNorm uses batch statistics"),
    ("predict", "Predict", "Predict mode: Dropout passes all, BatchNorm uses its "
                           "moving statistics"),
)  # fmt: skip


def build_run_actions(shell: Shell, slots: Mapping[str, Callable[[], None]]
                      ) -> tuple[dict[str, QAction], QActionGroup, QToolBar]:
    """Make the Run actions (each triggering `slots[name]`), put them in the Run menu and a
    toolbar; returns the actions by name (modes as `train_mode`/`predict_mode`), the
    exclusive mode group (Predict checked) and the toolbar."""
    window = shell.window
    actions: dict[str, QAction] = {}
    for name, text, key, tip in ACTIONS:
        action = QAction(text, window)
        action.setObjectName(f"{name}_action")
        action.setShortcut(QKeySequence(key))
        action.setToolTip(f"{tip} ({key})")
        action.setStatusTip(tip)
        action.triggered.connect(lambda _=False, slot=slots[name]: slot())
        actions[name] = action
    mode_group = QActionGroup(window)
    mode_group.setExclusive(True)
    for name, text, tip in MODES:
        action = QAction(text, window)
        action.setObjectName(f"{name}_mode_action")
        action.setCheckable(True)
        action.setToolTip(tip)
        mode_group.addAction(action)
        actions[f"{name}_mode"] = action
    actions["predict_mode"].setChecked(True)

    menu = shell.menu("run_menu")
    for name in ("start", "pause", "resume", "step", "stop"):
        menu.addAction(actions[name])
    menu.addSeparator()
    menu.addAction(actions["restart"])
    menu.addSeparator()
    mode_menu = menu.addMenu("Network &Mode")
    mode_menu.setObjectName("mode_menu")
    mode_menu.addActions(mode_group.actions())
    toolbar = QToolBar("Run", window)
    toolbar.setObjectName("run_toolbar")
    for name in ("start", "pause", "resume", "step", "stop", "restart"):
        toolbar.addAction(actions[name])
    toolbar.addSeparator()
    toolbar.addActions(mode_group.actions())
    shell.add_toolbar(toolbar)
    return actions, mode_group, toolbar
