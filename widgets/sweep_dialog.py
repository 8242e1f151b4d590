"""Run → Sweep…: the settings a sweep tries and the values each takes, a grid or a random
search, each run's epochs and the metric that ranks the runs.

Each setting's values are typed as a list "a,b,c" or a range "low..high" (":log" spaces it
by decade, ":N" takes N grid values from it). A node's numeric hyper-parameter is added
with "Add a node's hyper-parameter": a node (by its path name) and one of its numeric
hyper-parameters, from the choices the window gives. Everything is checked as it is typed
(app.runs.sweep_spec): a value that can't be used shows why right under its field, and
Start stays disabled with the reason beside it; a good sweep shows how many runs it makes.

On Start, `spec` is the SweepSpec to run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.document.runs import METRICS
from app.runs.sweep_spec import MAX_RUNS, Axis, SweepSpec, SweepSpecError, show
from widgets.form_fields import Combo, IntBox, set_tip

ERROR_STYLE = "color: #b00020;"
# key -> (shown as, an example of what to type)
SETTINGS: dict[str, tuple[str, str]] = {
    "learning_rate": ("Learning rate", "e.g. 0.001,0.01,0.1 or 1e-4..1e-1:log"),
    "batch_size": ("Batch size", "e.g. 16,32,64"),
    "optimizer": ("Optimizer", "e.g. Adam,SGD,Momentum"),
    "weight_decay": ("Weight decay", "e.g. 0,1e-4,1e-3"),
    "epochs": ("Epochs", "e.g. 5,10,20 (instead of the epochs per run)"),
}
MAX_EPOCHS = 100_000


@dataclass(frozen=True)
class SweepChoices:
    """What the window offers: the project's current values (for the hints), each node's
    numeric hyper-parameters with their values, and how many runs a spec makes for the
    project (`count`, raising SweepSpecError when the project can't take it)."""

    current: Mapping[str, Any] = field(default_factory=dict)  # setting key -> value now
    nodes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # path -> {param: v}
    epochs: Any = 10  # the project's epochs (each run's unless changed); not a number: 10
    count: Callable[[SweepSpec], int] | None = None
    note: str = ""  # e.g. that starting replaces an unfinished sweep


class NodeRow(QWidget):
    """One node hyper-parameter to sweep: the node, the parameter, its values, remove."""

    def __init__(self, nodes: Mapping[str, Mapping[str, Any]], number: int) -> None:
        super().__init__()
        self.setObjectName(f"sweep_node_row_{number}")
        self.nodes = nodes
        self.node = Combo()
        self.node.setObjectName("sweep_node")
        for path in nodes:
            self.node.addItem(path, path)
        set_tip(self.node, "The node, by its name (inside a composite: block/name).")
        self.param = Combo()
        self.param.setObjectName("sweep_node_param")
        set_tip(self.param, "The node's numeric hyper-parameter to sweep.")
        self.values = QLineEdit()
        self.values.setObjectName("sweep_node_values")
        self.remove = QToolButton()
        self.remove.setObjectName("sweep_node_remove")
        self.remove.setText("✕")
        self.remove.setToolTip("Don't sweep this hyper-parameter")
        self.error = _error_label("sweep_node_error")
        line = QHBoxLayout()
        line.setContentsMargins(0, 0, 0, 0)
        line.addWidget(self.node, 2)
        line.addWidget(self.param, 2)
        line.addWidget(self.values, 3)
        line.addWidget(self.remove)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addLayout(line)
        column.addWidget(self.error)
        self.node.currentIndexChanged.connect(self._on_node_changed)
        self.param.currentIndexChanged.connect(self._on_param_changed)
        self._on_node_changed()

    @property
    def name(self) -> str:
        return f"{self.node.currentData()}.{self.param.currentData()}"

    def _on_node_changed(self, *_: Any) -> None:
        self.param.blockSignals(True)
        self.param.clear()
        for param in self.nodes.get(self.node.currentData(), {}):
            self.param.addItem(param, param)
        self.param.blockSignals(False)
        self._on_param_changed()

    def _on_param_changed(self, *_: Any) -> None:
        now = self.nodes.get(self.node.currentData(), {}).get(self.param.currentData())
        shown = "" if now is None else f"now {show(now)} — "
        self.values.setPlaceholderText(f"{shown}e.g. 16,32,64 or 8..128:log:4")


class SweepDialog(QDialog):
    """See the module's text."""

    def __init__(self, choices: SweepChoices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sweep_dialog")
        self.setWindowTitle("Sweep")
        self.choices = choices
        self.spec: SweepSpec | None = None
        self.problem = ""  # why Start is disabled ("" when it is enabled)
        self.fields: dict[str, QLineEdit] = {}
        self.errors: dict[str, QLabel] = {}
        self.node_rows: list[NodeRow] = []
        self._rows_made = 0
        self._build()
        self.check()
        self.resize(620, 560)

    # ---- building ----------------------------------------------------------------------------

    def _build(self) -> None:
        note = QLabel(self.choices.note)
        note.setObjectName("sweep_note")
        note.setWordWrap(True)
        note.setStyleSheet("color: #8a5a00;")
        note.setVisible(bool(self.choices.note))
        settings = QGroupBox("Settings to sweep (leave empty to keep the project's)")
        grid = QGridLayout(settings)
        grid.setColumnStretch(1, 1)
        grid.setVerticalSpacing(2)
        for row, (key, (title, example)) in enumerate(SETTINGS.items()):
            edit = QLineEdit()
            edit.setObjectName(f"sweep_{key}")
            now = self.choices.current.get(key)
            edit.setPlaceholderText(f"now {show(now)} — {example}" if now is not None
                                    else example)  # fmt: skip
            edit.textChanged.connect(self.check)
            error = _error_label(f"sweep_{key}_error")
            label = QLabel(title)
            label.setBuddy(edit)
            grid.addWidget(label, 2 * row, 0)
            grid.addWidget(edit, 2 * row, 1)
            grid.addWidget(error, 2 * row + 1, 1)
            self.fields[key], self.errors[key] = edit, error
        nodes = QGroupBox("A node's hyper-parameters")
        self.node_column = QVBoxLayout(nodes)
        self.node_column.setSpacing(4)
        self.add_node = QPushButton("Add a node's hyper-parameter")
        self.add_node.setObjectName("sweep_add_node")
        self.add_node.setEnabled(bool(self.choices.nodes))
        self.add_node.setToolTip("Sweep a numeric hyper-parameter of one of the network's nodes"
                                 if self.choices.nodes else "No node has a numeric "
                                 "hyper-parameter to sweep.")  # fmt: skip
        self.add_node.clicked.connect(self._on_add_node_clicked)
        self.node_column.addWidget(self.add_node, 0, Qt.AlignmentFlag.AlignLeft)

        self.mode = Combo()
        self.mode.setObjectName("sweep_mode")
        self.mode.addItem("Grid: every combination", "grid")
        self.mode.addItem("Random: draw the values", "random")
        self.trials = IntBox(1, MAX_RUNS)
        self.trials.setObjectName("sweep_trials")
        self.trials.setValue(8)
        set_tip(self.trials, "How many runs a random search trains.")
        self.seed = IntBox(0, 2**31 - 1)
        self.seed.setObjectName("sweep_seed")
        set_tip(self.seed, "The same seed draws the same runs.")
        self.epochs = IntBox(1, MAX_EPOCHS)
        self.epochs.setObjectName("sweep_epochs_per_run")
        self.epochs.show_value(self.choices.epochs, 10)
        set_tip(self.epochs, "How long each run trains (a swept Epochs takes its place).")
        self.metric_box = Combo()
        self.metric_box.setObjectName("sweep_metric")
        self.metric_box.addItem("Default: best validation loss (else best loss)", "")
        for name, (title, higher) in METRICS.items():
            self.metric_box.addItem(f"{title} ({'higher' if higher else 'lower'} is better)", name)
        set_tip(self.metric_box, "What ranks the runs and colours them in the results.")
        for combo in (self.mode, self.metric_box):
            combo.currentIndexChanged.connect(self.check)
        for box in (self.trials, self.seed, self.epochs):
            box.setKeyboardTracking(True)  # the run count follows each digit typed
            box.valueChanged.connect(self.check)
        search = QGroupBox("Search")
        form = QFormLayout(search)
        form.addRow("Kind", self.mode)
        form.addRow("Runs (random)", _row(self.trials, QLabel("Seed"), self.seed))
        form.addRow("Epochs per run", self.epochs)
        form.addRow("Rank runs by", self.metric_box)

        self.summary = QLabel()
        self.summary.setObjectName("sweep_summary")
        self.summary.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.start = self.buttons.addButton("Start", QDialogButtonBox.ButtonRole.AcceptRole)
        self.start.setObjectName("sweep_start")
        self.buttons.accepted.connect(self._on_start_clicked)
        self.buttons.rejected.connect(self.reject)
        column = QVBoxLayout(self)
        for widget in (note, settings, nodes, search):
            column.addWidget(widget)
        column.addStretch(1)
        column.addWidget(_row(self.summary, self.buttons))
        for button in self.findChildren(QPushButton):
            button.setAutoDefault(False)

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()  # Enter in a field never starts a sweep; only Start does
            return
        super().keyPressEvent(event)

    def add_node_row(self) -> NodeRow:
        self._rows_made += 1
        row = NodeRow(self.choices.nodes, self._rows_made)
        row.values.textChanged.connect(self.check)
        row.node.currentIndexChanged.connect(self.check)
        row.param.currentIndexChanged.connect(self.check)
        row.remove.clicked.connect(lambda: self._remove_row(row))
        self.node_column.insertWidget(len(self.node_rows), row)
        self.node_rows.append(row)
        row.show()  # (a layout shows a widget added to a shown dialog only later)
        row.values.setFocus()
        self.check()
        return row

    def _remove_row(self, row: NodeRow) -> None:
        self.node_rows.remove(row)
        row.hide()
        row.deleteLater()
        self.check()

    # ---- checking ----------------------------------------------------------------------------

    def check(self, *_: Any) -> SweepSpec | None:
        """Check everything typed; show each field's problem, the run count or why not, and
        enable Start only for a sweep that can run. Returns the spec (None if none)."""
        random = self.mode.currentData() == "random"
        self.trials.setEnabled(random)
        self.seed.setEnabled(random)
        axes: list[Axis] = []
        bad: list[str] = []
        typed = [(key, key, self.fields[key], self.errors[key]) for key in SETTINGS]
        typed += [(row.name, f"{row.node.currentData()}.{row.param.currentData()}",
                   row.values, row.error) for row in self.node_rows]  # fmt: skip
        for name, shown, edit, error in typed:
            text = edit.text().strip()
            problem = ""
            if text:
                try:
                    axis = Axis.parse(name, text)
                    if "." in axis.name:  # a node's: checked against the network too
                        self._count(SweepSpec((axis,)))
                    axes.append(axis)
                except SweepSpecError as exc:
                    problem = str(exc)
            elif edit in (r.values for r in self.node_rows):
                problem = f"{shown}: type the values to try, or remove it."
            _show_problem(edit, error, problem)
            if problem:
                bad.append(problem)
        spec, problem = None, ""
        if bad:
            problem = bad[0]
        elif not axes:
            problem = "Type the values of at least one setting to sweep."
        else:
            try:
                spec = SweepSpec(tuple(axes), mode=self.mode.currentData(),
                                 trials_wanted=self.trials.value() if random else 0,
                                 seed=self.seed.value(), metric=self.metric_box.currentData(),
                                 epochs=self.epochs.value())  # fmt: skip
                runs = self._count(spec)
            except SweepSpecError as exc:
                spec, problem = None, str(exc)
        self.problem = problem
        self.start.setEnabled(spec is not None)
        self.start.setToolTip(problem or "Train the runs one after another in the background.")
        if spec is None:
            self.summary.setStyleSheet(ERROR_STYLE)
            self.summary.setText(problem)
        else:
            self.summary.setStyleSheet("")
            self.summary.setText(_summary(spec, runs))
        self.spec = spec
        return spec

    def _count(self, spec: SweepSpec) -> int:
        return self.choices.count(spec) if self.choices.count is not None else spec.count

    # ---- slots -------------------------------------------------------------------------------

    def _on_add_node_clicked(self) -> None:
        self.add_node_row()

    def _on_start_clicked(self) -> None:
        if self.check() is not None:
            self.accept()


def _summary(spec: SweepSpec, runs: int) -> str:
    each = "" if any(a.name == "epochs" for a in spec.axes) else (
        f", {spec.epochs} epoch{'s' if spec.epochs != 1 else ''} each")
    if spec.mode == "grid":
        sizes = [len(a.grid_values()) for a in spec.axes]
        product = " × ".join(str(s) for s in sizes)
        made = f"A grid of {product} = {runs} run{'s' if runs != 1 else ''}" if len(sizes) > 1 \
            else f"A grid of {runs} run{'s' if runs != 1 else ''}"
        return made + each + "."
    return f"A random search of {runs} run{'s' if runs != 1 else ''} (seed {spec.seed}){each}."


def _show_problem(edit: QLineEdit, error: QLabel, problem: str) -> None:
    error.setText(problem)
    error.setVisible(bool(problem))
    edit.setStyleSheet("QLineEdit { border: 1px solid #ef5350; }" if problem else "")
    edit.setToolTip(problem)


def _error_label(name: str) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setStyleSheet(ERROR_STYLE)
    label.hide()
    return label


def _row(*widgets: QWidget) -> QWidget:
    row = QWidget()
    line = QHBoxLayout(row)
    line.setContentsMargins(0, 0, 0, 0)
    stretch = isinstance(widgets[0], QLabel)  # a message takes the room left, else none does
    for i, widget in enumerate(widgets):
        line.addWidget(widget, 1 if i == 0 and stretch else 0)
    if not stretch:
        line.addStretch(1)
    return row


