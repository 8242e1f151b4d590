"""The data set setting as a form: a built-in set with its options, or an imported file.

`show_spec` fills the form from a `dataset` setting without a signal; a choice of the
user that loads is emitted once as `chosen(spec)`, with `spec` as the settings schema
stores it (app.session.settings). A choice that does not load shows the loader's
reason in the form (the `dataset_error` label) and emits nothing.

A data file of PROGRESS_BYTES or more is read on a worker thread behind a progress
dialog with Cancel; the GUI thread polls the reading (no Qt call crosses the thread) and
keeps handling events. A cancelled import leaves the shown data set as it was and says so
through `message`.
"""

from __future__ import annotations

import copy
import inspect
import json
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEventLoop, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QLabel,
    QProgressDialog,
    QPushButton,
    QWidget,
)

from app.datasets import BUILTIN, CLASSIFICATION, REGRESSION, Dataset, DatasetError
from app.datasets.csv_stream import cancelled_message
from app.datasets.file_import import csv_columns, load_csv, load_npz
from app.session import TrainingError, load_dataset
from widgets.dataset_preview import PreviewTable, summarize
from widgets.form_fields import (
    Combo,
    IntBox,
    NumberBox,
    clear_refusal,
    format_number,
    set_tip,
    show_refusal,
)

FILE, UNKNOWN = ":file", ":unknown"  # combo entries that are not built-in keys
MAX_SAMPLES = 1_000_000
FILE_TYPES = "Data files (*.csv *.npz);;CSV files (*.csv);;NumPy archives (*.npz);;All files (*)"
PROGRESS_BYTES = 4 << 20  # a data file this large is read behind a progress dialog
POLL_MS = 50  # how often the GUI thread looks at a reading's progress
CANT_USE = "The data set can't be used: "  # as app.session.load_dataset words a loader's refusal


class ImportCancelled(TrainingError):
    """The user cancelled reading a data file; the form is left as it was."""


class DatasetForm(QWidget):
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
        # (cache key, the data set or why not, whether the reading was cancelled)
        self._loaded: tuple[str, Dataset | str, bool] | None = None
        self._reading: _Reading | None = None  # a data file being read on a worker thread
        self._label_choice: Any = None  # the label column entry the form shows
        self.fields: dict[str, QWidget] = {}
        self._build()

    def show_spec(self, spec: Any, folder: Path | None) -> None:
        """Show the `dataset` setting `spec`; relative file paths are read from `folder`."""
        self._spec = copy.deepcopy(spec)
        self._folder = Path(folder) if folder is not None else None
        if _file_kind(spec):
            self._file_spec = copy.deepcopy(dict(spec))
        self._fill()

    @property
    def dataset(self) -> Dataset | None:
        """The data set the shown setting loads, or None."""
        if self._spec is None:
            return None
        try:
            return self._load(self._spec)
        except TrainingError:
            return None

    def already_read(self, spec: Any, folder: Path | None) -> Dataset | None:
        """The data set `spec` names (relative paths from `folder`) if this form has read it
        and the file is unchanged on disk since, else None. Never reads anything."""
        folder = Path(folder) if folder is not None else None
        kept = self._loaded
        if kept is None or folder != self._folder or isinstance(kept[1], str):
            return None
        return kept[1] if kept[0] == self._cache_key(spec) else None

    # ---- building ----------------------------------------------------------------------------

    def _build(self) -> None:
        combo = self._add("dataset", Combo())
        combo.activated.connect(self._on_dataset_activated)
        self.import_button = QPushButton("Import CSV/NPZ…")
        self.import_button.setObjectName("import_dataset")
        self.import_button.setToolTip("Train on your own data: a CSV or NumPy .npz file.")
        self.import_button.clicked.connect(self._on_import_button_clicked)
        self.description = _note("dataset_description", "color: palette(placeholder-text);")
        samples = set_tip(self._add("samples", IntBox(0, MAX_SAMPLES)), "How many points to make.")
        samples.on_refused = lambda text: self._on_box_refused(samples, text)
        samples.valueChanged.connect(self._on_samples_value_changed)
        noise = self._add("noise", NumberBox(0.0, 10.0, 0.01))
        set_tip(noise, "How far points stray from the clean shape.")
        noise.on_refused = lambda text: self._on_box_refused(noise, text)
        noise.valueChanged.connect(self._on_noise_value_changed)
        label_column = self._add("label_column", Combo())
        set_tip(label_column, "The column that holds the answers; the others are features.")
        label_column.activated.connect(self._on_label_column_activated)
        task = self._add("task", Combo())
        task.addItem("Classes", CLASSIFICATION)
        task.addItem("Numbers (regression)", REGRESSION)
        set_tip(task, "Class labels (names or whole numbers), or numbers to predict.")
        task.activated.connect(self._on_task_activated)
        self.error = _note("dataset_error", "color: #b00020;")
        self.summary = _note("dataset_summary", "")
        self.preview = PreviewTable()
        self.form = form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for row in (combo, self.import_button, self.description):
            form.addRow(row)
        for label, field in (("Samples", samples), ("Noise", noise),
                             ("Label column", label_column), ("Labels are", task)):  # fmt: skip
            field.setProperty("label", label)
            form.addRow(label, field)
        for row in (self.error, self.summary, self.preview):
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
            builtin = _builtin_of(self._spec)
            self._fill_builtin_options(builtin if builtin and builtin[0] in BUILTIN else None)
            self._fill_csv_options(self._spec if _file_kind(self._spec) == "csv" else None)
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
        builtin, kind = _builtin_of(spec), _file_kind(spec)
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
        self.form.setRowVisible(label_column, spec is not None)
        self.form.setRowVisible(task, spec is not None)
        label_column.clear()
        self._label_choice = None
        if spec is None:
            return
        names = _csv_columns(self._resolve(spec["csv"]), spec)
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

    def _show_data(self) -> None:
        self.error.hide()
        dataset = None
        if self._spec is not None:
            try:
                dataset = self._load(self._spec)
            except TrainingError as exc:
                self._show_error(str(exc))
        self.summary.setText(summarize(dataset) if dataset is not None else "")
        self.summary.setVisible(dataset is not None)
        self.preview.show_dataset(dataset)

    def _show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()

    # ---- loading -----------------------------------------------------------------------------

    def _resolve(self, path: str) -> Path:
        path = Path(path).expanduser()
        return self._folder / path if not path.is_absolute() and self._folder else path

    def _load(self, spec: Any, retry: bool = False) -> Dataset:
        """The data set `spec` names, or TrainingError; the last answer is kept.

        `retry` reads again a file whose last reading was cancelled; a reading the user
        cancels now raises ImportCancelled and keeps the answer kept before.
        """
        key = self._cache_key(spec)
        kept = self._loaded
        if kept is None or kept[0] != key or (retry and kept[2]):
            if self._reading is not None:  # asked again while a file is being read
                raise TrainingError("A data file is still being read.")
            found, cancelled = self._read(spec)
            if cancelled and retry:
                raise ImportCancelled(found)
            if cancelled:
                found = f"{found} Import it again to use it."
            self._loaded = (key, found, cancelled)
        if isinstance(self._loaded[1], str):
            raise TrainingError(self._loaded[1])
        return self._loaded[1]

    def _read(self, spec: Any) -> tuple[Dataset | str, bool]:
        """(the data set or why not, whether the user cancelled reading it)."""
        kind = _file_kind(spec)
        if kind is not None and "csv" in spec and "npz" in spec:
            kind = None  # load_dataset says why that can't be
        if kind is not None and _size(self._resolve(str(spec[kind]))) >= PROGRESS_BYTES:
            return self._read_with_progress(spec, kind)
        try:
            return load_dataset(spec, self._folder), False
        except TrainingError as exc:
            return str(exc), False
        except Exception as exc:  # a loader bug must not take the form down
            return f"{CANT_USE}{type(exc).__name__}: {exc}", False

    def _read_with_progress(self, spec: Mapping, kind: str) -> tuple[Dataset | str, bool]:
        """Read a large data file on a worker thread while a progress dialog offers Cancel."""
        path = self._resolve(str(spec[kind]))
        options = {k: v for k, v in spec.items() if k != kind}
        reading = _Reading(load_csv if kind == "csv" else load_npz, path, options)
        dialog = QProgressDialog(f"Reading {path.name}…", "Cancel", 0, 1000, self)
        dialog.setObjectName("dataset_progress")
        dialog.setWindowTitle("Import data")
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        dialog.setMinimumDuration(0)
        dialog.canceled.connect(reading.cancel)
        loop = QEventLoop(self)
        timer = QTimer(self)
        timer.setInterval(POLL_MS)

        def on_timer_timeout() -> None:
            dialog.setValue(reading.permille())
            if reading.finished.is_set():
                loop.quit()

        timer.timeout.connect(on_timer_timeout)
        self._reading = reading
        try:
            reading.start()
            dialog.show()
            timer.start()
            if not reading.finished.is_set():
                loop.exec()
        finally:
            if not reading.finished.is_set():  # the loop was left some other way
                reading.cancel()
            reading.finished.wait()  # quick: a cancelled reading stops at its next chunk
            self._reading = None
            timer.stop()
            timer.deleteLater()
            loop.deleteLater()
            dialog.blockSignals(True)  # closing emits canceled(); the reading has ended
            dialog.close()
            dialog.deleteLater()
        return reading.answer()

    def _cache_key(self, spec: Any) -> str:
        stamp: Any = None  # a file edited on disk is read again
        kind = _file_kind(spec)
        if kind is not None:
            try:
                info = self._resolve(str(spec[kind])).stat()
                stamp = (info.st_mtime_ns, info.st_size)
            except OSError:
                stamp = "missing"
        return json.dumps([spec, str(self._folder), stamp], sort_keys=True, default=str)

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
            self._load(spec, retry=True)
        except ImportCancelled as exc:
            self._fill()  # the choice the user made goes back to the one that holds
            self.message.emit(f"{exc} The data set is unchanged.")
            return
        except TrainingError as exc:
            if field is not None:
                show_refusal(field, str(exc))
            self._show_error(f"{name}: {exc}" if name else str(exc))
            return
        changed = spec != self._spec
        self._spec = spec
        if _file_kind(spec):
            self._file_spec = copy.deepcopy(spec)
        self._fill()
        if changed:
            self.chosen.emit(copy.deepcopy(spec))

    # ---- user edits --------------------------------------------------------------------------

    def _on_dataset_activated(self, index: int) -> None:
        combo = self.fields["dataset"]
        choice = combo.itemData(index)
        if choice == FILE:
            if self._file_spec is not None and not _file_kind(self._spec):
                self._commit(copy.deepcopy(self._file_spec), combo)
            return
        builtin = _builtin_of(self._spec)
        if choice not in BUILTIN or (builtin is not None and builtin[0] == choice):
            return
        entry = BUILTIN[choice]
        takes = inspect.signature(entry.make).parameters
        options: dict[str, Any] = {}
        if "n_samples" in takes and entry.default_samples is not None:
            options["n_samples"] = entry.default_samples
        if "noise" in takes:
            options["noise"] = entry.default_noise
        self._commit({"builtin": choice, "options": options}, combo)

    def _on_samples_value_changed(self, value: int) -> None:
        builtin = _builtin_of(self._spec)
        if self._filling or builtin is None or builtin[0] not in BUILTIN:
            return
        key, options = builtin
        if value == 0 and BUILTIN[key].default_samples is None:
            options.pop("n_samples", None)  # digits: all of them
        else:
            options["n_samples"] = int(value)
        self._commit_builtin(key, options, self.fields["samples"])

    def _on_noise_value_changed(self, value: float) -> None:
        builtin = _builtin_of(self._spec)
        if self._filling or builtin is None or builtin[0] not in BUILTIN:
            return
        key, options = builtin
        options["noise"] = float(value)
        self._commit_builtin(key, options, self.fields["noise"])

    def _commit_builtin(self, key: str, options: dict[str, Any], field: QWidget) -> None:
        if _builtin_of(self._spec) == (key, options):  # the same, written another way
            clear_refusal(field)
            return
        self._commit({"builtin": key, "options": options}, field)

    def _on_box_refused(self, box: IntBox | NumberBox, text: str) -> None:
        low, high = format_number(box.minimum()), format_number(box.maximum())
        self.message.emit(f"{box.property('label')}: use a number from {low} to {high}, "
                          f"not {text!r}.")  # fmt: skip

    def _import_start(self) -> str:
        """Beside the data file shown, else the default data folder, else the project's."""
        kind = _file_kind(self._spec)
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
        kind = "npz" if path.suffix.lower() == ".npz" else "csv"
        spec: dict[str, Any] = {kind: self._stored_path(path)}
        if kind == "csv":
            delimiter = _guess_delimiter(path)
            if delimiter != ",":
                spec["delimiter"] = delimiter
        self._commit(spec, None, path.name)

    def _on_label_column_activated(self, index: int) -> None:
        field = self.fields["label_column"]
        choice = field.itemData(index)
        if _file_kind(self._spec) != "csv" or choice == self._label_choice:
            return
        self._commit({**self._spec, "label_column": choice}, field)

    def _on_task_activated(self, index: int) -> None:
        task = self.fields["task"].itemData(index)
        spec = self._spec
        if _file_kind(spec) != "csv" or task == spec.get("task", CLASSIFICATION):
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


def _builtin_of(spec: Any) -> tuple[str, dict[str, Any]] | None:
    """(key, options) of a built-in set's setting ("moons" or {"builtin": ...}), else None."""
    if isinstance(spec, str):
        return spec, {}
    if isinstance(spec, Mapping) and "builtin" in spec:
        options = spec.get("options")
        return spec["builtin"], dict(options) if isinstance(options, Mapping) else {}
    return None


def _file_kind(spec: Any) -> str | None:
    if isinstance(spec, Mapping) and "builtin" not in spec:
        for kind in ("csv", "npz"):
            if kind in spec:
                return kind
    return None


def _file_name(spec: Mapping) -> str:
    return Path(str(spec[_file_kind(spec)])).name


def _describe(spec: Any) -> str:
    return str(spec.get("builtin", "data set")) if isinstance(spec, Mapping) else str(spec)


def _csv_columns(path: Path, spec: Mapping) -> list[str]:
    """The column names load_csv would use, from the file's first row ([] if unreadable)."""
    try:
        return csv_columns(path, spec.get("delimiter", ","), spec.get("has_header", True))
    except DatasetError:
        return []


def _guess_delimiter(path: Path) -> str:
    """',' unless the first row is one column with ',' but several with ';', a tab or '|'."""
    for delimiter in ",;\t|":
        try:
            if len(csv_columns(path, delimiter)) > 1:
                return delimiter
        except DatasetError:
            break
    return ","


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class _Reading:
    """A data file read by a loader on a worker thread.

    The worker only writes plain attributes and sets events; the GUI thread polls them.
    """

    def __init__(self, loader: Callable[..., Dataset], path: Path, options: dict) -> None:
        self.path = path
        self.finished = threading.Event()
        self._cancel = threading.Event()
        self._done, self._total = 0, 0
        self._answer: Dataset | str = ""
        self._thread = threading.Thread(
            target=self._run, args=(loader, path, options), name="data-import", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    def permille(self) -> int:
        """How much of the file was read, 0 to 1000."""
        return min(1000, 1000 * self._done // self._total) if self._total else 0

    def answer(self) -> tuple[Dataset | str, bool]:
        """(the data set or why not, whether it was cancelled), once finished."""
        if self._cancel.is_set():  # even if it ended first: the user said no
            return cancelled_message(self.path.name), True
        return self._answer, False

    def _on_progress(self, done: int, total: int) -> None:
        self._done, self._total = done, total

    def _run(self, loader: Callable[..., Dataset], path: Path, options: dict) -> None:
        try:
            self._answer = loader(
                path, **options, progress=self._on_progress, cancelled=self._cancel.is_set
            )
        except DatasetError as exc:
            self._answer = f"{CANT_USE}{exc}"
        except TypeError as exc:  # an option the loader does not take, as load_dataset says
            self._answer = f"The data set setting has a bad option: {exc}."
        except Exception as exc:  # a loader bug must not take the form down
            self._answer = f"{CANT_USE}{type(exc).__name__}: {exc}"
        finally:
            self.finished.set()
