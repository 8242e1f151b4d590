"""The data set setting as a form: a built-in set with its options, or an imported file.

Built-in sets show a field for each option their maker takes (app.datasets.options). A
CSV file is used one sample per row, or as a time series cut into sliding windows
(window, horizon, stride, which columns are targets); a text file (.txt) is a char-level
language-modelling set (context, stride) whose vocabulary is written into the setting
when it is chosen, so the project saves it. A CSV or NPZ file has the choice of refusing
rows with missing values or dropping them; a built-in set that takes `standardise` gets
its box. "Import Image Folder…" opens widgets.image_folder_dialog; its OK commits the
image setting with the dialog's reading. An image setting whose folder is gone or has
changed since the project recorded it says so above the data (images.folder_status).

`show_spec` fills the form from a `dataset` setting without a signal; a choice of the
user that loads is emitted once as `chosen(spec)`, with `spec` as the settings schema
stores it (app.session.settings). A choice that does not load shows the loader's
reason in the form (the `dataset_error` label) and emits nothing.

The form loads nothing itself: app.datasets.loading reads, keeps and words every answer.
A data file of loading.PROGRESS_BYTES or more is read there on a worker thread while the
form shows a progress dialog with Cancel (widgets.reading_progress; any image folder is
read so too); the GUI thread polls the reading (no Qt call
crosses the thread) and keeps handling events. A cancelled import leaves the shown data
set as it was and says so through `message`.
"""

from __future__ import annotations

import copy
import inspect
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QPushButton,
    QWidget,
)

from app.datasets import BUILTIN, CLASSIFICATION, REGRESSION, Dataset
from app.datasets.images import IMAGES, folder_status
from app.datasets.loading import (
    WINDOWS,
    DatasetLoader,
    DatasetRefused,
    Reading,
    ReadingCancelled,
    builtin_of,
    cache_key,
    column_names,
    file_kind,
    guess_delimiter,
    resolve,
)
from app.datasets.missing import DROP, REFUSE
from app.datasets.text import pinned
from widgets.dataset_preview import PreviewTable, summarize
from widgets.dataset_series_fields import OPTION_NAMES, ROWS, SeriesFields
from widgets.form_fields import (
    Combo,
    IntBox,
    NumberBox,
    clear_refusal,
    format_number,
    set_tip,
    show_refusal,
)
from widgets.image_folder_dialog import ImageFolderDialog
from widgets.reading_progress import show_reading

FILE, UNKNOWN = ":file", ":unknown"  # combo entries that are not built-in keys
MAX_SAMPLES = 1_000_000
FILE_TYPES = ("Data files (*.csv *.npz *.txt);;CSV files (*.csv);;NumPy archives (*.npz);;"
              "Text files (*.txt);;All files (*)")


class DatasetForm(SeriesFields, QWidget):
    chosen = Signal(object)  # a new `dataset` setting the user chose; it loads
    message = Signal(str)  # why typed text was refused

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._spec: Any = None
        self._folder: Path | None = None
        # Where importing starts when the data set shown is no file (the Preferences' data
        # folder); None: the project's folder.
        self.default_folder: Path | None = None
        self._filling = False
        self._file_spec: dict[str, Any] | None = None  # the last imported file, kept on offer
        self.loader = DatasetLoader(wait=self._wait_for)  # reads and keeps the data set
        self._label_choice: Any = None  # the label column entry the form shows
        self._status: tuple[str, str] = ("", "")  # (folders' stamp, what is wrong with them)
        self.fields: dict[str, QWidget] = {}
        self._build()

    def show_spec(self, spec: Any, folder: Path | None) -> None:
        """Show the `dataset` setting `spec`; relative file paths are read from `folder`."""
        self._spec = copy.deepcopy(spec)
        self._folder = Path(folder) if folder is not None else None
        if file_kind(spec):
            self._file_spec = copy.deepcopy(dict(spec))
        self._fill()

    @property
    def dataset(self) -> Dataset | None:
        """The data set the shown setting loads, or None."""
        if self._spec is None:
            return None
        try:
            return self.loader.load(self._spec, self._folder)
        except DatasetRefused:
            return None

    def already_read(self, spec: Any, folder: Path | None) -> Dataset | None:
        """The data set `spec` names (relative paths from `folder`) if this form has read it
        and the file is unchanged on disk since, else None. Never reads anything."""
        return self.loader.already_read(spec, Path(folder) if folder is not None else None)

    # ---- building ----------------------------------------------------------------------------

    def _build(self) -> None:
        combo = self._add("dataset", Combo())
        combo.activated.connect(self._on_dataset_activated)
        self.import_button = QPushButton("Import CSV/NPZ/text…")
        self.import_button.setObjectName("import_dataset")
        self.import_button.setToolTip(
            "Train on your own data: a CSV or NumPy .npz file, or a UTF-8 text file (.txt) "
            "to predict its characters."
        )
        self.import_button.clicked.connect(self._on_import_button_clicked)
        self.image_button = QPushButton("Import Image Folder…")
        self.image_button.setObjectName("import_images")
        self.image_button.setToolTip("Train on photos: a folder with a subfolder per class, or "
                                     "a CSV of path,label.")
        self.image_button.clicked.connect(self._on_image_button_clicked)
        self.image_dialog: ImageFolderDialog | None = None
        self.description = _note("dataset_description", "color: palette(placeholder-text);")
        samples = set_tip(self._add("samples", IntBox(0, MAX_SAMPLES)), "How many points to make.")
        samples.on_refused = lambda text: self._on_box_refused(samples, text)
        samples.valueChanged.connect(self._on_samples_value_changed)
        noise = self._add("noise", NumberBox(0.0, 10.0, 0.01))
        set_tip(noise, "How far points stray from the clean shape.")
        noise.on_refused = lambda text: self._on_box_refused(noise, text)
        noise.valueChanged.connect(self._on_noise_value_changed)
        use, options, targets = self._build_series_fields()
        label_column = self._add("label_column", Combo())
        set_tip(label_column, "The column that holds the answers; the others are features.")
        label_column.activated.connect(self._on_label_column_activated)
        task = self._add("task", Combo())
        task.addItem("Classes", CLASSIFICATION)
        task.addItem("Numbers (regression)", REGRESSION)
        set_tip(task, "Class labels (names or whole numbers), or numbers to predict.")
        task.activated.connect(self._on_task_activated)
        missing = self._add("missing", Combo())
        missing.addItem("Refuse the file", REFUSE)
        missing.addItem("Drop those rows", DROP)
        set_tip(missing, "Rows with an empty, NaN or infinite value: refuse the file (saying "
                         "where), or leave those rows out (the summary counts them).")
        missing.activated.connect(self._on_missing_activated)
        standardise = self._add("standardise", QCheckBox("Standardise the features"))
        set_tip(standardise, "Scale each feature to mean 0 and standard deviation 1.")
        standardise.clicked.connect(self._on_standardise_clicked)
        self.error = _note("dataset_error", "color: #b00020;")
        self.status = _note("dataset_status", "color: #8a5a00;")
        self.summary = _note("dataset_summary", "")
        self.preview = PreviewTable()
        self.form = form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for row in (combo, self.import_button, self.image_button, self.description):
            form.addRow(row)
        rows = [("Samples", samples), ("Noise", noise), ("Use the rows as", use),
                ("Label column", label_column), ("Labels are", task),
                ("Missing values", missing), ("", standardise)]  # fmt: skip
        rows += [(box.property("label"), box) for box in options] + [("Targets", targets)]
        for label, field in rows:
            field.setProperty("label", label)
            form.addRow(label, field)
        for row in (self.status, self.error, self.summary, self.preview):
            form.addRow(row)

    def _add(self, key: str, widget: QWidget) -> Any:
        widget.setObjectName(f"field_{key}")
        self.fields[key] = widget
        return widget

    # ---- filling (never emits) ---------------------------------------------------------------

    def _fill(self) -> None:
        self._filling = True
        try:
            self._fill_choice()
            builtin = builtin_of(self._spec)
            self._fill_builtin_options(builtin if builtin and builtin[0] in BUILTIN else None)
            self._fill_csv_options(self._spec if file_kind(self._spec) == "csv" else None)
            self._fill_extras()
            self._fill_option_fields()
            for field in self.fields.values():
                clear_refusal(field)
            self._show_data()
        finally:
            self._filling = False

    def _fill_choice(self) -> None:
        spec, combo = self._spec, self.fields["dataset"]
        combo.clear()
        if spec is None:
            combo.addItem("Choose a data set…", None)
        for key, entry in BUILTIN.items():
            combo.addItem(entry.title, key)
            combo.setItemData(combo.count() - 1, entry.description, Qt.ItemDataRole.ToolTipRole)
        if self._file_spec is not None:
            combo.addItem(f"{_file_name(self._file_spec)} (imported)", FILE)
        builtin, kind = builtin_of(spec), file_kind(spec)
        if builtin is not None and builtin[0] in BUILTIN:
            combo.setCurrentIndex(combo.findData(builtin[0]))
            self.description.setText(BUILTIN[builtin[0]].description)
        elif kind is not None:
            combo.setCurrentIndex(combo.findData(FILE))
            self.description.setText(str(self._resolve(spec[kind])))
        elif spec is not None:
            combo.addItem(f"{_describe(spec)} (unknown)", UNKNOWN)
            combo.setCurrentIndex(combo.count() - 1)
            self.description.setText("")
        else:
            self.description.setText("Choose a built-in set or import a CSV or NPZ file.")

    def _fill_builtin_options(self, builtin: tuple[str, dict] | None) -> None:
        samples, noise = self.fields["samples"], self.fields["noise"]
        takes = inspect.signature(BUILTIN[builtin[0]].make).parameters if builtin else {}
        self.form.setRowVisible(samples, "n_samples" in takes)
        self.form.setRowVisible(noise, "noise" in takes)
        if builtin is None:
            return
        entry, options = BUILTIN[builtin[0]], builtin[1]
        if "n_samples" in takes:
            if entry.default_samples is None:  # digits: all of them unless a number is given
                samples.setRange(0, MAX_SAMPLES)
                samples.setSpecialValueText("All")
                samples.show_value(options.get("n_samples") or 0, 0)
            else:
                samples.setRange(1, MAX_SAMPLES)
                samples.setSpecialValueText("")
                samples.show_value(options.get("n_samples"), entry.default_samples)
        if "noise" in takes:
            noise.show_value(options.get("noise"), entry.default_noise)

    def _fill_csv_options(self, spec: Mapping | None) -> None:
        label_column, task = self.fields["label_column"], self.fields["task"]
        use, targets = self.fields["csv_use"], self.fields["targets"]
        windows = spec is not None and WINDOWS in spec
        self.form.setRowVisible(use, spec is not None)
        self.form.setRowVisible(label_column, spec is not None and not windows)
        self.form.setRowVisible(task, spec is not None and not windows)
        self.form.setRowVisible(targets, windows)
        label_column.clear()
        targets.clear()
        self._label_choice = None
        if spec is None:
            return
        use.setCurrentIndex(use.findData(WINDOWS if windows else ROWS))
        names = column_names(self._resolve(spec["csv"]), spec)
        if windows:
            self._fill_targets(names, spec[WINDOWS])
            return
        counts = Counter(names)
        for i, name in enumerate(names):
            label_column.addItem(name, name if counts[name] == 1 else i)
        chosen = spec.get("label_column", -1)
        index = -1
        if isinstance(chosen, str) and chosen in names:
            index = names.index(chosen)
        elif isinstance(chosen, int) and not isinstance(chosen, bool):
            index = chosen % len(names) if -len(names) <= chosen < len(names) else -1
        if index < 0 and "label_column" in spec:
            # As the project says, even if the file disagrees (the error says why).
            text = ", ".join(map(str, chosen)) if isinstance(chosen, list) else str(chosen)
            label_column.addItem(text, chosen)
            index = label_column.count() - 1
        label_column.setCurrentIndex(index)
        self._label_choice = label_column.itemData(index) if index >= 0 else None
        task.setCurrentIndex(max(0, task.findData(spec.get("task", CLASSIFICATION))))

    def _fill_extras(self) -> None:
        """The missing-values choice of a CSV or NPZ file; a built-in's standardise box."""
        spec, missing = self._spec, self.fields["missing"]
        kind = file_kind(spec)
        kind = None if kind == "csv" and WINDOWS in spec else kind  # windows: no such option
        self.form.setRowVisible(missing, kind in ("csv", "npz"))
        if kind in ("csv", "npz"):
            missing.setCurrentIndex(max(0, missing.findData(spec.get("missing", REFUSE))))
        builtin = builtin_of(spec)
        takes = builtin is not None and builtin[0] in BUILTIN and (
            "standardise" in BUILTIN[builtin[0]].options)
        box = self.fields["standardise"]
        self.form.setRowVisible(box, takes)
        if takes:
            box.setChecked(builtin[1].get("standardise", BUILTIN[builtin[0]].options[
                "standardise"]) is not False)

    def _show_status(self) -> None:
        """What is wrong with an image setting's folder (gone, changed), listed once per
        state of the folders on disk, not on every refill."""
        text = ""
        if file_kind(self._spec) == IMAGES:
            key = cache_key(self._spec, self._folder)
            if self._status[0] != key:
                self._status = (key, folder_status(self._spec, self._folder))
            text = self._status[1]
        self.status.setText(text)
        self.status.setVisible(bool(text))

    def _show_data(self) -> None:
        self.error.hide()
        self._show_status()
        dataset = None
        if self._spec is not None:
            try:
                dataset = self.loader.load(self._spec, self._folder)
            except DatasetRefused as exc:
                self._show_error(str(exc))
        text = summarize(dataset) if dataset is not None else ""
        if dataset is not None and dataset.note:
            text += f"\n{dataset.note}"
        self.summary.setText(text)
        self.summary.setVisible(dataset is not None)
        self.preview.show_dataset(dataset)

    def _show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()

    # ---- loading -----------------------------------------------------------------------------

    def _resolve(self, path: str) -> Path:
        return resolve(path, self._folder)

    def _wait_for(self, reading: Reading) -> None:
        show_reading(self, reading)

    def _stored_path(self, path: Path) -> str:
        """Relative to the project's folder when inside it (so the two move together)."""
        path = path.absolute()
        if self._folder is not None:
            try:
                return path.resolve().relative_to(self._folder.resolve()).as_posix()
            except ValueError:
                pass
        return str(path)

    def _commit(self, spec: dict[str, Any], field: QWidget | None, name: str = "") -> None:
        """Emit `spec` if it loads and differs from the shown one; else say why in the form."""
        try:
            dataset = self.loader.load(spec, self._folder, retry=True)
        except ReadingCancelled as exc:
            self._fill()  # the choice the user made goes back to the one that holds
            self.message.emit(f"{exc} The data set is unchanged.")
            return
        except DatasetRefused as exc:
            if field is not None:
                show_refusal(field, str(exc))
            self._show_error(f"{name}: {exc}" if name else str(exc))
            return
        with_vocabulary = pinned(spec, dataset)
        if with_vocabulary is not None:  # saved with the project: ids keep their characters
            spec = with_vocabulary
            self.loader.keep_as(spec, self._folder)
        changed = spec != self._spec
        self._spec = spec
        if file_kind(spec):
            self._file_spec = copy.deepcopy(spec)
        self._fill()
        if changed:
            self.chosen.emit(copy.deepcopy(spec))

    # ---- user edits --------------------------------------------------------------------------

    def _on_dataset_activated(self, index: int) -> None:
        combo = self.fields["dataset"]
        choice = combo.itemData(index)
        if choice == FILE:
            if self._file_spec is not None and not file_kind(self._spec):
                self._commit(copy.deepcopy(self._file_spec), combo)
            return
        builtin = builtin_of(self._spec)
        if choice not in BUILTIN or (builtin is not None and builtin[0] == choice):
            return
        entry = BUILTIN[choice]
        takes = inspect.signature(entry.make).parameters
        options: dict[str, Any] = {}
        if "n_samples" in takes and entry.default_samples is not None:
            options["n_samples"] = entry.default_samples
        if "noise" in takes:
            options["noise"] = entry.default_noise
        for name, default in entry.options.items():  # a sequence set's lengths, shown as set
            if name in OPTION_NAMES and name != "seed":
                options[name] = default
        self._commit({"builtin": choice, "options": options}, combo)

    def _on_samples_value_changed(self, value: int) -> None:
        builtin = builtin_of(self._spec)
        if self._filling or builtin is None or builtin[0] not in BUILTIN:
            return
        key, options = builtin
        if value == 0 and BUILTIN[key].default_samples is None:
            options.pop("n_samples", None)  # digits: all of them
        else:
            options["n_samples"] = int(value)
        self._commit_builtin(key, options, self.fields["samples"])

    def _on_noise_value_changed(self, value: float) -> None:
        builtin = builtin_of(self._spec)
        if self._filling or builtin is None or builtin[0] not in BUILTIN:
            return
        key, options = builtin
        options["noise"] = float(value)
        self._commit_builtin(key, options, self.fields["noise"])

    def _commit_builtin(self, key: str, options: dict[str, Any], field: QWidget) -> None:
        if builtin_of(self._spec) == (key, options):  # the same, written another way
            clear_refusal(field)
            return
        self._commit({"builtin": key, "options": options}, field)

    def _on_box_refused(self, box: IntBox | NumberBox, text: str) -> None:
        low, high = format_number(box.minimum()), format_number(box.maximum())
        self.message.emit(f"{box.property('label')}: use a number from {low} to {high}, "
                          f"not {text!r}.")  # fmt: skip

    def _import_start(self) -> str:
        """Beside the data file shown, else the default data folder, else the project's."""
        kind = file_kind(self._spec)
        if kind:
            folder = self._resolve(str(self._spec[kind])).parent
            if folder.is_dir():
                return str(folder)
        for folder in (self.default_folder, self._folder):
            if folder is not None:
                return str(folder)
        return ""

    def _on_import_button_clicked(self) -> None:
        start = self._import_start()
        path, _ = QFileDialog.getOpenFileName(self, "Import a data set", start, FILE_TYPES)
        if not path:
            return
        path = Path(path)
        kind = {".npz": "npz", ".txt": "text"}.get(path.suffix.lower(), "csv")
        spec: dict[str, Any] = {kind: self._stored_path(path)}
        if kind == "csv":
            delimiter = guess_delimiter(path)
            if delimiter != ",":
                spec["delimiter"] = delimiter
        self._commit(spec, None, path.name)

    def _on_image_button_clicked(self) -> None:
        """The image folder dialog, window-modal; OK commits its setting (one undo step)."""
        dialog = ImageFolderDialog(self._folder, self._import_start(), show_reading, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self._on_image_dialog_accepted(dialog))
        self.image_dialog = dialog
        dialog.open()

    def _on_image_dialog_accepted(self, dialog: ImageFolderDialog) -> None:
        self.image_dialog = None
        if dialog.spec is None:
            return
        spec = dialog.spec
        self.loader = dialog.loader  # it holds the data set read for `spec`: no second read
        self.loader.wait = self._wait_for
        self._commit(spec, None, _file_name(spec))

    def _on_missing_activated(self, index: int) -> None:
        choice, spec = self.fields["missing"].itemData(index), self._spec
        if file_kind(spec) not in ("csv", "npz") or choice == spec.get("missing", REFUSE):
            return
        new = {k: v for k, v in spec.items() if k != "missing"}
        if choice != REFUSE:
            new["missing"] = choice
        self._commit(new, self.fields["missing"])

    def _on_standardise_clicked(self, on: bool) -> None:
        builtin = builtin_of(self._spec)
        if builtin is None or builtin[0] not in BUILTIN:
            return
        key, options = builtin
        options.pop("standardise", None)
        if not on:
            options["standardise"] = False
        self._commit_builtin(key, options, self.fields["standardise"])

    def _on_label_column_activated(self, index: int) -> None:
        field = self.fields["label_column"]
        choice = field.itemData(index)
        if file_kind(self._spec) != "csv" or choice == self._label_choice:
            return
        self._commit({**self._spec, "label_column": choice}, field)

    def _on_task_activated(self, index: int) -> None:
        task = self.fields["task"].itemData(index)
        spec = self._spec
        if file_kind(spec) != "csv" or task == spec.get("task", CLASSIFICATION):
            return
        new = {k: v for k, v in spec.items() if k != "task"}
        if task != CLASSIFICATION:
            new["task"] = task
        self._commit(new, self.fields["task"])


def _note(name: str, style: str) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setStyleSheet(style)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _file_name(spec: Mapping) -> str:
    return Path(str(spec[file_kind(spec)])).name


def _describe(spec: Any) -> str:
    return str(spec.get("builtin", "data set")) if isinstance(spec, Mapping) else str(spec)
