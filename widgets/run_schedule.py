"""The Run panel's learning-rate schedule and gradient clipping: one group of fields.

Like the rest of the panel it never writes the project: `show_settings` fills it without
a signal, and a change the user commits emits `changed(key, value)` once, with the whole
new `lr_schedule` or `grad_clip` setting as the schema (app.session.settings) stores it,
so each edit is one undo step. Only the chosen kind's parameters are shown, and the clip
value only while clipping is on. A value the schema refuses turns its field red, says why
through `message` and emits nothing; a damaged stored setting is shown as far as it can be
and left as it is until the user picks something.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QFormLayout, QGroupBox, QWidget

from app.session import DEFAULTS, TrainingError
from app.session.settings import (
    CLIP_MODES,
    SCHEDULE_KINDS,
    SCHEDULE_OPTIONS,
    check_grad_clip,
    check_lr_schedule,
)
from widgets.form_fields import (
    Combo,
    IntBox,
    NumberBox,
    TypedCheck,
    clear_refusal,
    format_number,
    parse_number,
    set_tip,
    show_refusal,
)

MAX_INT = 2**31 - 1
KIND_NAMES = {"constant": "Constant", "step": "Step", "exponential": "Exponential",
              "cosine": "Cosine"}  # fmt: skip
CLIP_NAMES = {"none": "None", "norm": "Global norm", "value": "Value"}
# schedule parameter -> (label, box or None for a check box, tooltip)
PARAMETERS: dict[str, tuple[str, Any, str]] = {
    "step_epochs": ("Every (epochs)", lambda: IntBox(1, MAX_INT), "Epochs between two drops."),
    "factor": ("Factor", lambda: NumberBox(0.0, 1.0, 0.05),
               "Each drop multiplies the rate by this (above 0, at most 1)."),
    "decay_rate": ("Decay rate", lambda: NumberBox(0.0, 1.0, 0.01),
                   "The rate is multiplied by this every 'Decay epochs' epochs: a little "
                   "every step, or at once with Stairs."),
    "decay_epochs": ("Decay epochs", lambda: IntBox(1, MAX_INT),
                     "Epochs over which the rate is multiplied by the decay rate once."),
    "stair": ("Stairs", None, "Drop at once every 'Decay epochs' epochs, not a little every step."),
    "min_factor": ("Minimum (× rate)", lambda: NumberBox(0.0, 1.0, 0.05),
                   "The rate at the end of the run, as a fraction of the learning rate "
                   "(at least 0, below 1)."),
}  # fmt: skip
SCHEDULE_TIP = ("How the learning rate moves over the run; the learning rate above is its base. "
                "A rate typed while training runs rescales the whole schedule.")
WARMUP_TIP = ("Steps over which the rate rises from 0 to the scheduled rate before the schedule "
              "starts (MindSpore's WarmUpLR); 0 for none.")
CLIP_TIP = ("Limit the gradients before each update: their global L2 norm "
            "(ops.clip_by_global_norm) or each element (ops.clip_by_value).")
CLIP_VALUE_TIP = "The largest global norm, or the largest size of one element."


class ScheduleForm(QGroupBox):
    changed = Signal(str, object)  # ("lr_schedule" | "grad_clip", the whole new setting)
    message = Signal(str)  # why a typed value was refused

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Schedule and clipping", parent)
        self.setObjectName("schedule_form")
        self._schedule: Any = dict(DEFAULTS["lr_schedule"])
        self._clip: Any = dict(DEFAULTS["grad_clip"])
        self._filling = False
        self.fields: dict[str, QWidget] = {}
        self.form = QFormLayout(self)
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self._build()

    # ---- building ----------------------------------------------------------------------------

    def _build(self) -> None:
        kind = self._add("lr_schedule.kind", Combo(), "Schedule", SCHEDULE_TIP)
        for key in SCHEDULE_KINDS:
            kind.addItem(KIND_NAMES[key], key)
        kind.activated.connect(self._on_kind_activated)
        for name, (label, make, tip) in PARAMETERS.items():
            if make is None:
                box = QCheckBox()
                box.clicked.connect(lambda on, n=name: self._on_parameter_changed(n, bool(on)))
            else:
                box = make()
                box.valueChanged.connect(lambda v, n=name: self._on_parameter_changed(n, v))
            self._add(f"lr_schedule.{name}", box, label, tip)
        warmup = self._add("lr_schedule.warmup_steps", IntBox(0, MAX_INT), "Warmup steps",
                           WARMUP_TIP)  # fmt: skip
        warmup.valueChanged.connect(lambda v: self._on_parameter_changed("warmup_steps", v))
        mode = self._add("grad_clip.mode", Combo(), "Clip gradients", CLIP_TIP)
        for key in CLIP_MODES:
            mode.addItem(CLIP_NAMES[key], key)
        mode.activated.connect(self._on_mode_activated)
        value = self._add("grad_clip.value", NumberBox(0.0, 1e9, 0.1), "Clip at", CLIP_VALUE_TIP)
        value.valueChanged.connect(self._on_clip_value_changed)

    def _add(self, key: str, widget: QWidget, label: str, tip: str) -> Any:
        widget.setObjectName(f"field_{key}")
        widget.setProperty("label", label)
        set_tip(widget, tip)
        if isinstance(widget, TypedCheck):
            widget.on_refused = lambda text: self._on_box_refused(key, text)
        self.fields[key] = widget
        self.form.addRow(label, widget)
        return widget

    # ---- filling (never emits) ---------------------------------------------------------------

    def show_settings(self, schedule: Any, clip: Any) -> None:
        """Show the `lr_schedule` and `grad_clip` settings (None: the defaults)."""
        self._schedule = copy.deepcopy(schedule if schedule is not None
                                       else DEFAULTS["lr_schedule"])  # fmt: skip
        self._clip = copy.deepcopy(clip if clip is not None else DEFAULTS["grad_clip"])
        self._filling = True
        try:
            self._fill_schedule()
            self._fill_clip()
        finally:
            self._filling = False

    def _fill_schedule(self) -> None:
        stored = self._schedule
        kind = stored.get("kind", "constant") if isinstance(stored, Mapping) else stored
        _choose(self.fields["lr_schedule.kind"], kind, KIND_NAMES)
        shown = SCHEDULE_OPTIONS.get(kind, {}) if isinstance(kind, str) else {}
        try:
            spec = check_lr_schedule(stored)
        except TrainingError:  # damaged: show what can be shown, keep it as it is
            spec = {**shown, "warmup_steps": 0}
            if isinstance(stored, Mapping):
                spec.update({k: v for k, v in stored.items() if k in spec})
        for name in (*PARAMETERS, "warmup_steps"):
            field = self.fields[f"lr_schedule.{name}"]
            self.form.setRowVisible(field, name in shown or name == "warmup_steps")
            default = shown.get(name, _any_default(name))
            if isinstance(field, QCheckBox):
                field.setChecked(bool(spec.get(name, default)))
            else:
                field.show_value(spec.get(name, default), default)
            clear_refusal(field)

    def _fill_clip(self) -> None:
        stored = self._clip
        mode = stored.get("mode", "none") if isinstance(stored, Mapping) else stored
        _choose(self.fields["grad_clip.mode"], mode, CLIP_NAMES)
        value = self.fields["grad_clip.value"]
        given = stored.get("value") if isinstance(stored, Mapping) else None
        value.show_value(given, DEFAULTS["grad_clip"]["value"])
        self.form.setRowVisible(value, mode in ("norm", "value"))
        clear_refusal(value)
        clear_refusal(self.fields["grad_clip.mode"])

    # ---- user edits --------------------------------------------------------------------------

    def _spec(self) -> dict[str, Any]:
        """The shown schedule as the schema fills it (the defaults if it is damaged)."""
        try:
            return check_lr_schedule(self._schedule)
        except TrainingError:
            return dict(DEFAULTS["lr_schedule"])

    def _emit(self, key: str, value: Any) -> None:
        if key == "lr_schedule":
            self._schedule = copy.deepcopy(value)
        else:
            self._clip = copy.deepcopy(value)
        self.changed.emit(key, value)

    def _on_kind_activated(self, index: int) -> None:
        kind = self.fields["lr_schedule.kind"].itemData(index)
        stored = self._schedule
        if not isinstance(kind, str) or kind not in KIND_NAMES:
            return  # the entry of a damaged setting: nothing new chosen
        if isinstance(stored, Mapping) and stored.get("kind", "constant") == kind:
            return
        value = {"kind": kind, **SCHEDULE_OPTIONS[kind], "warmup_steps": _warmup(stored)}
        self._emit("lr_schedule", value)
        self._filling = True
        try:
            self._fill_schedule()
        finally:
            self._filling = False

    def _on_parameter_changed(self, name: str, value: Any) -> None:
        if self._filling:
            return
        field = self.fields[f"lr_schedule.{name}"]
        current = self._spec()
        if isinstance(value, float) and name in ("step_epochs", "decay_epochs", "warmup_steps"):
            value = int(value)
        proposed = {**current, name: value}
        try:
            check_lr_schedule(proposed)
        except TrainingError as exc:
            show_refusal(field, str(exc))
            self.message.emit(str(exc))
            return
        clear_refusal(field)
        if proposed != self._schedule:
            self._emit("lr_schedule", proposed)

    def _on_mode_activated(self, index: int) -> None:
        mode = self.fields["grad_clip.mode"].itemData(index)
        stored = self._clip
        if not isinstance(mode, str) or mode not in CLIP_NAMES:
            return
        if isinstance(stored, Mapping) and stored.get("mode", "none") == mode:
            return
        value = self.fields["grad_clip.value"].value()
        self._emit("grad_clip", {"mode": mode, "value": value if value > 0 else 1.0})
        self._filling = True
        try:
            self._fill_clip()
        finally:
            self._filling = False

    def _on_clip_value_changed(self, value: float) -> None:
        if self._filling:
            return
        field = self.fields["grad_clip.value"]
        stored = self._clip if isinstance(self._clip, Mapping) else {}
        proposed = {"mode": stored.get("mode", "none"), "value": float(value)}
        try:
            check_grad_clip(proposed)
        except TrainingError as exc:
            show_refusal(field, str(exc))
            self.message.emit(str(exc))
            return
        clear_refusal(field)
        if proposed != self._clip:
            self._emit("grad_clip", proposed)

    def _on_box_refused(self, key: str, text: str) -> None:
        """Typed text a box can't take (it shows its old value again): say why."""
        group, name = key.split(".", 1)
        typed = parse_number(text)
        problem = None
        try:
            if group == "lr_schedule":
                check_lr_schedule({**self._spec(), name: typed})
            else:
                check_grad_clip({"mode": "norm", "value": typed})
        except TrainingError as exc:
            problem = str(exc)
        if problem is None:
            box = self.fields[key]
            low, high = format_number(box.minimum()), format_number(box.maximum())
            problem = f"{box.property('label')}: use a number from {low} to {high}, not {text!r}."
        self.message.emit(problem)


def _warmup(stored: Any) -> int:
    """The warmup of a stored schedule, kept across a change of kind if it is good."""
    warmup = stored.get("warmup_steps", 0) if isinstance(stored, Mapping) else 0
    try:
        return check_lr_schedule({"warmup_steps": warmup})["warmup_steps"]
    except TrainingError:
        return 0


def _any_default(name: str) -> Any:
    for options in SCHEDULE_OPTIONS.values():
        if name in options:
            return options[name]
    return 0


def _choose(combo: Combo, value: Any, known: Mapping[str, str]) -> None:
    """Choose the entry holding `value`; a value not known gets an entry of its own."""
    while combo.count() > len(known):
        combo.removeItem(combo.count() - 1)
    index = combo.findData(value) if isinstance(value, str) else -1
    if index < 0:
        combo.addItem(f"{value!r} (unknown)"[:40], value)
        index = combo.count() - 1
    combo.setCurrentIndex(index)
