"""The data set form's fields for options of sets with a time axis (a mixin of DatasetForm).

A field for each option of a generated set (app.datasets.options: data seed, window,
horizon, length, context, stride), also used for a CSV time series' windows and a text
file's context; the choice of using a CSV's rows one sample each or as sliding windows;
and the list of a time series' target columns, ticked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidget, QListWidgetItem

from app.datasets import BUILTIN
from app.datasets.csv_windows import WINDOW_DEFAULTS
from app.datasets.loading import WINDOWS, builtin_of, file_kind
from app.datasets.options import OPTIONS
from app.datasets.text import TEXT_DEFAULTS
from widgets.form_fields import Combo, IntBox, set_tip

OPTION_NAMES = ("seed", "window", "horizon", "length", "context", "stride")  # as fields
ROWS = "rows"  # a CSV file used one sample per row (else WINDOWS)
ROW_OPTIONS = ("label_column", "task", "feature_columns")  # a CSV's options for rows only
ROW_LINE = 20  # pixels of a line in the targets list


class SeriesFields:
    """DatasetForm's option, "use the rows as" and targets fields (needs its `fields`,
    `form`, `_spec`, `_filling`, `_add`, `_commit`, `_commit_builtin`, `_on_box_refused`)."""

    def _build_series_fields(self) -> tuple[Combo, list[IntBox], QListWidget]:
        """The "use the rows as" choice, a box per option and the targets list."""
        use = self._add("csv_use", Combo())
        use.addItem("One sample per row", ROWS)
        use.addItem("Time series: sliding windows", WINDOWS)
        set_tip(use, "Each row a sample, or the rows a series over time cut into windows.")
        use.activated.connect(self._on_csv_use_activated)
        options = [self._option_box(name) for name in OPTION_NAMES]
        targets = self._add("targets", QListWidget())
        targets.setMaximumHeight(6 * ROW_LINE)
        set_tip(targets, "The columns to predict over the horizon (tick one or more).")
        targets.itemChanged.connect(self._on_targets_item_changed)
        return use, options, targets

    def _option_box(self, name: str) -> IntBox:
        option = OPTIONS[name]
        box = self._add(f"option.{name}", IntBox(int(option.low), int(option.high)))
        set_tip(box, option.tip)
        box.setProperty("label", "Data seed" if name == "seed" else option.label)
        box.on_refused = lambda text: self._on_box_refused(box, text)
        box.valueChanged.connect(lambda value: self._on_option_value_changed(name, value))
        return box

    def _fill_targets(self, names: list[str], windows: Any) -> None:
        """The file's columns, the target ones ticked (the last one unless chosen)."""
        chosen = windows.get("targets", -1) if isinstance(windows, Mapping) else -1
        chosen = chosen if isinstance(chosen, list | tuple) else [chosen]
        ticked = set()
        for entry in chosen:
            if isinstance(entry, str) and entry in names:
                ticked.add(names.index(entry))
            elif (isinstance(entry, int) and not isinstance(entry, bool)
                  and -len(names) <= entry < len(names)):  # fmt: skip
                ticked.add(entry % len(names))
        counts = Counter(names)
        for i, name in enumerate(names):
            item = QListWidgetItem(name)
            item.setData(Qt.ItemDataRole.UserRole, name if counts[name] == 1 else i)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            checked = Qt.CheckState.Checked if i in ticked else Qt.CheckState.Unchecked
            item.setCheckState(checked)
            self.fields["targets"].addItem(item)

    def _option_values(self) -> dict[str, tuple[Any, int]]:
        """(value in the setting, default) of each option field the shown setting has."""
        spec = self._spec
        builtin = builtin_of(spec)
        if builtin is not None and builtin[0] in BUILTIN:
            defaults = BUILTIN[builtin[0]].options
            return {n: (builtin[1].get(n), defaults[n]) for n in OPTION_NAMES if n in defaults}
        kind = file_kind(spec)
        if kind == "csv" and isinstance(spec.get(WINDOWS), Mapping):
            return {n: (spec[WINDOWS].get(n), d) for n, d in WINDOW_DEFAULTS.items()}
        if kind == "text":
            return {n: (spec.get(n), d) for n, d in TEXT_DEFAULTS.items()}
        return {}

    def _fill_option_fields(self) -> None:
        values = self._option_values()
        for name in OPTION_NAMES:
            box = self.fields[f"option.{name}"]
            self.form.setRowVisible(box, name in values)
            if name in values:
                box.show_value(*values[name])

    def _on_option_value_changed(self, name: str, value: int) -> None:
        if self._filling:
            return
        spec, field = self._spec, self.fields[f"option.{name}"]
        builtin = builtin_of(spec)
        if builtin is not None and builtin[0] in BUILTIN:
            key, options = builtin
            options[name] = int(value)
            self._commit_builtin(key, options, field)
        elif file_kind(spec) == "csv" and isinstance(spec.get(WINDOWS), Mapping):
            self._commit({**spec, WINDOWS: {**spec[WINDOWS], name: int(value)}}, field)
        elif file_kind(spec) == "text":
            self._commit({**spec, name: int(value)}, field)

    def _on_csv_use_activated(self, index: int) -> None:
        use, spec = self.fields["csv_use"], self._spec
        mode = use.itemData(index)
        if file_kind(spec) != "csv" or (mode == WINDOWS) == (WINDOWS in spec):
            return
        if mode == WINDOWS:
            rows_only = {k: v for k, v in spec.items() if k not in ROW_OPTIONS}
            self._commit({**rows_only, WINDOWS: dict(WINDOW_DEFAULTS)}, use)
        else:
            self._commit({k: v for k, v in spec.items() if k != WINDOWS}, use)

    def _on_targets_item_changed(self, item: QListWidgetItem) -> None:
        spec, targets = self._spec, self.fields["targets"]
        if self._filling or file_kind(spec) != "csv" or not isinstance(spec.get(WINDOWS), Mapping):
            return
        ticked = [targets.item(i).data(Qt.ItemDataRole.UserRole) for i in range(targets.count())
                  if targets.item(i).checkState() == Qt.CheckState.Checked]  # fmt: skip
        self._commit({**spec, WINDOWS: {**spec[WINDOWS], "targets": ticked}}, targets)
