"""The Run panel: the project's training settings as a form; each user change is one signal.

The panel never writes the project. `set_settings` fills it from `project.training`
without emitting anything; a change the user commits (Enter or leaving a typed field,
an arrow step of a spin box, a combo choice, a click) emits `setting_changed(key, value)`
once, with `value` as the settings schema (app.session.settings) stores it. A typed
value the schema or the engine refuses turns the field red, says why through `message`
and emits nothing. The panel remembers what it emitted, so committing the same value
again (Enter, then leaving the field) sends nothing; if the app refuses an edit it calls
`set_settings` again to put the form back.

Changing the optimizer first emits "optimizer_options" with the options the new
optimizer also takes (others dropped, as are values equal to its defaults), if that
differs from the current options, and then "optimizer": both come from one choice,
and each step leaves settings the engine accepts. The schedule and clipping fields are
a group of their own (widgets.run_schedule); each of their edits emits the whole new
"lr_schedule" or "grad_clip" setting.

The Augmentation group (widgets.augment_panel) emits the whole new "augmentation"
setting (None: none) for each edit, and is locked with the other settings.

Whenever the settings it shows change, the panel works out the run's planned learning
rate per step (epochs × steps per epoch of the data set it loaded) and emits
`schedule_planned` with it (None for a constant rate), for the Plots area to draw.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.datasets import Dataset
from app.session import DEFAULTS, LOSSES, OPTIMIZERS, TrainingError, TrainingSettings
from app.session.settings import (
    HISTORY_STEPS_RANGE,
    SchedulePlan,
    check_learning_rate,
    plan_for,
)
from widgets.augment_panel import AugmentPanel
from widgets.dataset_form import DatasetForm
from widgets.form_fields import (
    Combo,
    IntBox,
    NumberBox,
    TypedCheck,
    clear_refusal,
    format_number,
    parse_number,
    scroll_in,
    set_tip,
    show_refusal,
)
from widgets.run_options import (
    OPTION_LOOKS,
    SHOWN_OPTIONS,
    optimizer_defaults,
    optimizer_problem,
)
from widgets.run_schedule import ScheduleForm

MAX_INT = 2**31 - 1
LOCKED_STYLE = (
    "QLabel { background: #fff4d6; color: #5c4400; border: 1px solid #e0c060;"
    " border-radius: 3px; padding: 6px; }"
)
class RunPanel(QWidget):
    setting_changed = Signal(str, object)  # (key, value); loss None: the Output node's loss
    message = Signal(str)  # why a typed value was refused, for the status bar
    schedule_planned = Signal(object)  # SchedulePlan of the shown settings, or None

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("run_panel")
        self._training: dict[str, Any] = {}
        self._filling = False
        self._locked: str | None = None
        self._output_loss: str | None = None
        self._refused_rate: str | None = None
        self._plan: SchedulePlan | None = None
        self.fields: dict[str, QWidget] = {}
        self._build()
        self.set_settings({})

    # ---- public ------------------------------------------------------------------------------

    def set_settings(self, training: Mapping, folder: Path | None = None) -> None:
        """Show `training` (project.training); `folder` is where relative data files are."""
        self._training = copy.deepcopy(dict(training))
        self.data.show_spec(self._training.get("dataset"), folder)
        self._filling = True
        try:
            self._fill_choices()
            self._fill_option_fields()
            self._fill_numbers()
            self.schedule.show_settings(self._training.get("lr_schedule"),
                                        self._training.get("grad_clip"))  # fmt: skip
            self.augment.show_setting(self._training.get("augmentation"))
        finally:
            self._filling = False
        self._apply_lock()
        self._update_plan()

    def set_output_loss(self, name: str | None) -> None:
        self._output_loss = name
        self.fields["loss"].setItemText(0, self._output_loss_text())

    def set_locked(self, reason: str | None) -> None:
        """None: editable; else only the learning rate stays editable and `reason` shows."""
        self._locked = reason
        self.locked_label.setText(reason or "")
        self.locked_label.setVisible(bool(reason))
        self._apply_lock()

    @property
    def plan(self) -> SchedulePlan | None:
        """The planned learning rate per step of the shown settings (None: constant)."""
        return self._plan

    @property
    def dataset(self) -> Dataset | None:
        """The data set the shown settings load, or None."""
        return self.data.dataset

    def already_read(self, spec: Any, folder: Path | None) -> Dataset | None:
        """The data set `spec` names if the data form has read it (see DatasetForm)."""
        return self.data.already_read(spec, folder)

    # ---- building ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.locked_label = QLabel()
        self.locked_label.setObjectName("lock_reason")
        self.locked_label.setWordWrap(True)
        self.locked_label.setStyleSheet(LOCKED_STYLE)
        self.locked_label.hide()
        self.data = DatasetForm()
        self.data.chosen.connect(self._on_data_chosen)
        self.data.message.connect(self.message)
        self.fields.update(self.data.fields)
        self.import_button = self.data.import_button
        self.dataset_preview, self.dataset_summary = self.data.preview, self.data.summary
        data_group = QGroupBox("Data")
        QVBoxLayout(data_group).addWidget(self.data)
        content = QWidget()
        column = QVBoxLayout(content)
        column.setContentsMargins(6, 6, 6, 6)
        # In the scroll, above the fields it is about: a short dock scrolls it, never
        # squeezes it over the progress lines.
        column.addWidget(self.locked_label)
        column.addWidget(data_group)
        column.addWidget(self._optimizer_group())
        column.addWidget(self._schedule_group())
        self.schedule = ScheduleForm()
        self.schedule.changed.connect(self._emit)
        self.schedule.message.connect(self.message)
        self.fields.update(self.schedule.fields)
        column.addWidget(self.schedule)
        self.augment = AugmentPanel(lambda: self.data.dataset)
        self.augment.changed.connect(lambda value: self._emit("augmentation", value))
        self.augment.message.connect(self.message)
        self.fields.update(self.augment.fields)
        column.addWidget(self.augment)
        column.addStretch(1)
        scroll_in(self, content)  # a short dock scrolls the settings, never the Inspector

    def _optimizer_group(self) -> QGroupBox:
        group, self.optimizer_form = _group("Loss and optimizer")
        loss = self._add_field("loss", Combo(), "Loss")
        loss.addItem(self._output_loss_text(), None)
        for name in LOSSES:
            loss.addItem(name, name)
        set_tip(loss, "What training minimises; the first entry is the Output node's own.")
        loss.activated.connect(self._on_loss_activated)
        optimizer = self._add_field("optimizer", Combo(), "Optimizer")
        for name in OPTIMIZERS:
            optimizer.addItem(name, name)
        optimizer.activated.connect(self._on_optimizer_activated)
        rate = self._add_field("learning_rate", QLineEdit(), "Learning rate")
        set_tip(rate, "Step size, e.g. 0.01 or 1e-3; a schedule's base rate. It can be changed "
                      "while training runs.")
        rate.editingFinished.connect(self._on_learning_rate_editing_finished)
        # The loss gets a whole row: "Output node's (CrossEntropyLoss)" is long for a dock.
        self.optimizer_form.addRow(QLabel("Loss"))
        self.optimizer_form.addRow(loss)
        self.optimizer_form.addRow("Optimizer", optimizer)
        self.optimizer_form.addRow("Learning rate", rate)
        return group

    def _schedule_group(self) -> QGroupBox:
        group, form = _group("Training")
        looks = (
            ("batch_size", "Batch size", IntBox(1, MAX_INT), "Samples per step."),
            ("epochs", "Epochs", IntBox(1, MAX_INT), "Passes over the training samples."),
            ("validation_fraction", "Validation", NumberBox(0.0, 0.99, 0.05),
             "Fraction of the samples held out to check the network (0 for none)."),
            ("seed", "Seed", IntBox(0, MAX_INT), "Fixes the split, the shuffling and the start."),
            ("history_steps", "History", IntBox(*HISTORY_STEPS_RANGE),
             "Steps kept exactly at the start and at the end of a run; the middle is a uniform "
             "sample"),
        )  # fmt: skip
        for key, label, box, tip in looks:
            set_tip(self._add_field(key, box, label), tip)
            box.valueChanged.connect(lambda value, k=key: self._on_number_changed(k, value))
            form.addRow(label, box)
        return group

    def _add_field(self, key: str, widget: QWidget, label: str) -> Any:
        widget.setObjectName(f"field_{key}")
        widget.setProperty("label", label)
        if isinstance(widget, TypedCheck):
            widget.on_refused = lambda text: self._on_box_refused(key, text)
        self.fields[key] = widget
        return widget

    # ---- filling (never emits) ---------------------------------------------------------------

    def _value(self, key: str) -> Any:
        return self._training.get(key, DEFAULTS.get(key))

    def _fill_choices(self) -> None:
        loss, optimizer = self.fields["loss"], self.fields["optimizer"]
        _select(loss, self._training.get("loss"), 1 + len(LOSSES))
        _select(optimizer, self._value("optimizer"), len(OPTIMIZERS))
        clear_refusal(loss)

    def _fill_option_fields(self) -> None:
        """The chosen optimizer's options; fields are made anew only for another optimizer."""
        name = self._value("optimizer")
        shown = [k.split(".", 1)[1] for k in self.fields if k.startswith("optimizer_options.")]
        if shown != list(SHOWN_OPTIONS.get(name, ())):
            self._make_option_fields(name)
        options = self._options()
        defaults = optimizer_defaults(name) if name in SHOWN_OPTIONS else {}
        for option in SHOWN_OPTIONS.get(name, ()):
            field, value = self.fields[f"optimizer_options.{option}"], options.get(option)
            if isinstance(field, QCheckBox):
                field.setChecked(bool(defaults[option] if value is None else value))
            else:
                field.show_value(value, defaults[option])
            clear_refusal(field)

    def _make_option_fields(self, name: str) -> None:
        for key in [k for k in self.fields if k.startswith("optimizer_options.")]:
            self.optimizer_form.removeRow(self.fields.pop(key))
        defaults = optimizer_defaults(name) if name in SHOWN_OPTIONS else {}
        for option in SHOWN_OPTIONS.get(name, ()):
            look = OPTION_LOOKS[option]
            if isinstance(defaults[option], bool):
                field = QCheckBox()
                field.clicked.connect(lambda on, o=option: self._on_option_changed(o, bool(on)))
            else:
                field = NumberBox(*look[1:4])
                field.valueChanged.connect(lambda v, o=option: self._on_option_changed(o, v))
            set_tip(self._add_field(f"optimizer_options.{option}", field, look[0]), look[-1])
            self.optimizer_form.addRow(look[0], field)

    def _fill_numbers(self) -> None:
        rate, value = self.fields["learning_rate"], self._value("learning_rate")
        number = isinstance(value, int | float) and not isinstance(value, bool)
        text = format_number(value) if number else str(value)
        if rate.text() != text:
            rate.setText(text)
        clear_refusal(rate)
        self._refused_rate = None
        for key in ("batch_size", "epochs", "validation_fraction", "seed", "history_steps"):
            self.fields[key].show_value(self._value(key), DEFAULTS[key])

    def _apply_lock(self) -> None:
        editable = self._locked is None
        for key, field in self.fields.items():
            if key != "learning_rate":
                field.setEnabled(editable)
        self.import_button.setEnabled(editable)
        self.data.image_button.setEnabled(editable)

    def _output_loss_text(self) -> str:
        return f"Output node's ({self._output_loss})" if self._output_loss else "Output node's loss"

    def _options(self) -> dict[str, Any]:
        options = self._training.get("optimizer_options")
        return dict(options) if isinstance(options, Mapping) else {}

    # ---- user edits --------------------------------------------------------------------------

    def _emit(self, key: str, value: Any) -> None:
        # Kept at once, so a second commit of the same value is seen as no change.
        self._training[key] = copy.deepcopy(value)
        self.setting_changed.emit(key, value)
        self._update_plan()  # e.g. a rate typed while training runs: no refill follows

    def _update_plan(self) -> None:
        dataset = self.data.dataset
        plan = None
        if dataset is not None and len(dataset):
            try:
                plan = plan_for(self._training, len(dataset))
            except TrainingError:  # the form already says what is wrong
                plan = None
        if plan is None and self._plan is None or plan is not None and plan.same_as(self._plan):
            return
        self._plan = plan
        self.schedule_planned.emit(plan)

    def _on_data_chosen(self, spec: Any) -> None:
        self._emit("dataset", spec)

    def _on_loss_activated(self, index: int) -> None:
        value = self.fields["loss"].itemData(index)
        if value == self._training.get("loss"):
            return
        self._emit("loss", value)
        if value is None:
            del self._training["loss"]

    def _on_optimizer_activated(self, index: int) -> None:
        name = self.fields["optimizer"].itemData(index)
        if name == self._value("optimizer"):
            return
        options, takes = self._options(), optimizer_defaults(name)
        kept = {k: v for k, v in options.items() if k in takes and v != takes[k]}
        self._training["optimizer"] = name
        self._training["optimizer_options"] = kept
        self._filling = True
        try:
            self._fill_option_fields()
        finally:
            self._filling = False
        self._apply_lock()
        if kept != options:
            self.setting_changed.emit("optimizer_options", dict(kept))
        self.setting_changed.emit("optimizer", name)

    def _on_option_changed(self, option: str, value: Any) -> None:
        if self._filling:
            return
        name, field = self._value("optimizer"), self.fields[f"optimizer_options.{option}"]
        current = self._options()
        options = {**current, option: value}
        if value == optimizer_defaults(name)[option]:
            del options[option]
        problem = optimizer_problem(name, options)
        if problem:
            self._refuse(field, problem)
            return
        clear_refusal(field)
        if options != current:
            self._emit("optimizer_options", options)

    def _on_learning_rate_editing_finished(self) -> None:
        field = self.fields["learning_rate"]
        text = field.text().strip()
        try:
            value = check_learning_rate(parse_number(text))
        except TrainingError as exc:
            if text != self._refused_rate:  # Enter, then leaving the field: say it once
                self._refused_rate = text
                self._refuse(field, str(exc))
            return
        self._refused_rate = None
        clear_refusal(field)
        if value != self._value("learning_rate"):
            self._emit("learning_rate", value)

    def _on_number_changed(self, key: str, value: float) -> None:
        if self._filling:
            return
        value = float(value) if key == "validation_fraction" else int(value)
        if value != self._value(key):
            self._emit(key, value)

    def _on_box_refused(self, key: str, text: str) -> None:
        """Typed text a spin box can't take (it shows its old value again): say why."""
        typed, problem = parse_number(text), None
        if key in DEFAULTS:  # the schema's own words
            try:
                TrainingSettings.from_project({"dataset": "-", key: typed})
            except TrainingError as exc:
                problem = str(exc)
        elif key.startswith("optimizer_options."):
            options = {**self._options(), key.split(".", 1)[1]: typed}
            problem = optimizer_problem(self._value("optimizer"), options)
        if problem is None:
            box = self.fields[key]
            low, high = format_number(box.minimum()), format_number(box.maximum())
            problem = f"{box.property('label')}: use a number from {low} to {high}, not {text!r}."
        self.message.emit(problem)

    def _refuse(self, field: QWidget, reason: str) -> None:
        show_refusal(field, reason)
        self.message.emit(reason)


def _group(title: str) -> tuple[QGroupBox, QFormLayout]:
    group = QGroupBox(title)
    form = QFormLayout(group)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    return group, form


def _select(combo: QComboBox, value: Any, known: int) -> None:
    """Choose the entry holding `value`; a value not among the `known` first gets its own."""
    while combo.count() > known:
        combo.removeItem(combo.count() - 1)
    index = combo.findData(value)
    if index < 0:
        combo.addItem(f"{value} (unknown)", value)
        index = combo.count() - 1
    combo.setCurrentIndex(index)
