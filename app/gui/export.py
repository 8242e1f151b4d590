"""File → Export: the network as a Python script on `engine`, as ONNX, as a PyTorch script,
the canvas as a PNG or SVG picture, and the run history's curves as CSV. Each says where
it wrote and what it left out; a network an exporter can't express is refused with the
reason, and nothing is written. The save dialog opens where the last export of that
kind went (QSettings, across runs).
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QMarginsF, QObject, QRectF, QSettings, QSize, Qt
from PySide6.QtGui import QAction, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QFileDialog, QGraphicsItem, QMenu, QMessageBox

from app.compiler import CompileError
from app.export.python_script import ExportedScript, ExportError
from app.export.report import ExportReport

if TYPE_CHECKING:
    from app.gui.project_holder import ProjectHolder
    from app.gui.shell import Shell
    from widgets.node_editor import NodeEditor

log = logging.getLogger(__name__)

PICTURE_MARGIN = 24.0  # scene units around the nodes
PNG_SCALE = 2.0  # pixels per scene unit: sharp on a high-DPI screen
MAX_PNG_SIDE = 16_000
FOLDER_KEY = "export/{}/folder"  # QSettings: the folder the last export of that kind went to

# name, menu text, file filter, suffix, module and function of the exporter (None: a picture)
FORMATS = (
    ("python", "&Python Script (engine)…", "Python scripts (*.py)", ".py",
     "app.export.python_script", "export_python"),
    ("onnx", "&ONNX Model…", "ONNX models (*.onnx)", ".onnx",
     "app.export.onnx_model", "export_onnx"),
    ("torch", "Py&Torch Script…", "Python scripts (*.py)", ".py",
     "app.export.torch_script", "export_torch"),
    ("png", "Canvas as P&NG…", "PNG images (*.png)", ".png", None, None),
    ("svg", "Canvas as &SVG…", "SVG images (*.svg)", ".svg", None, None),
    ("runs", "&Runs (CSV)…", "CSV files (*.csv)", ".csv",
     "app.export.runs_csv", "write_runs_csv"),
)  # fmt: skip
NO_RUNS = "There are no runs to export: each run trained is recorded in the project."


class ExportController(QObject):
    """The File → Export menu of one main window."""

    def __init__(self, shell: Shell, projects: ProjectHolder, editor: NodeEditor,
                 settings: QSettings) -> None:  # fmt: skip
        super().__init__(shell)
        self.shell, self.projects, self.editor, self.settings = shell, projects, editor, settings
        self.menu = QMenu("&Export", shell.window)
        self.menu.setObjectName("export_menu")
        self.actions: dict[str, QAction] = {}
        for name, text, _filter, _suffix, _module, _function in FORMATS:
            action = self.menu.addAction(text)
            action.setObjectName(f"export_{name}_action")
            action.triggered.connect(lambda _=False, n=name: self._on_export_triggered(n))
            self.actions[name] = action
        self.menu.insertSeparator(self.actions["png"])
        self.menu.insertSeparator(self.actions["runs"])
        file_menu, quit_action = shell.menu("file_menu"), shell.action("quit_action")
        file_menu.insertMenu(quit_action, self.menu)
        file_menu.insertSeparator(quit_action)

    def export(self, name: str, path: str | Path) -> str:
        """Export in format `name` to `path`; the report shown to the user (ExportError-like
        exceptions propagate with the reason)."""
        spec = next(f for f in FORMATS if f[0] == name)
        path = Path(path)
        if path.suffix.lower() != spec[3]:
            path = path.with_name(path.name + spec[3])
        if spec[4] is None:
            self._picture(path, svg=name == "svg")
            return f"Wrote {path}."
        project = self.projects.project
        if name == "runs" and not len(getattr(project, "runs", ())):
            raise ValueError(NO_RUNS)
        try:
            module = importlib.import_module(spec[4])
        except ImportError:
            return f"{spec[1].replace('&', '').rstrip('…')} export is not available here."
        result = getattr(module, spec[5])(project, path)
        if name == "runs":  # every run's curve points, one a line (run, step, metric, value)
            count = len(project.runs)
            points = f"{result:,} points, " if isinstance(result, int) else ""
            return f"Wrote {path}: {points}the curves of {count} run{'s' if count != 1 else ''}."
        return _report(result)

    def _picture(self, path: Path, *, svg: bool) -> None:
        scene = self.editor.scene
        selected = scene.selectedItems()
        for item in selected:  # the picture shows the network, not the selection
            item.setSelected(False)
        # Items cached as pixmaps would go into an SVG as pictures: draw them afresh.
        cached = [(item, item.cacheMode()) for item in scene.items()
                  if item.cacheMode() != QGraphicsItem.CacheMode.NoCache]  # fmt: skip
        for item, _mode in cached:
            item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
        try:
            source = scene.itemsBoundingRect() if scene.nodes else QRectF()
            if source.isEmpty():
                raise ValueError("There is nothing on the canvas to draw.")
            source = source.marginsAdded(QMarginsF(*(PICTURE_MARGIN,) * 4))
            if svg:
                generator = QSvgGenerator()
                generator.setFileName(str(path))
                generator.setSize(source.size().toSize())
                generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
                generator.setTitle(self.projects.name)
                painter = QPainter(generator)
            else:
                scale = min(PNG_SCALE, MAX_PNG_SIDE / max(source.width(), source.height()))
                size = QSize(int(source.width() * scale), int(source.height() * scale))
                image = QImage(size, QImage.Format.Format_ARGB32)
                image.fill(scene.backgroundBrush().color())
                painter = QPainter(image)
            try:
                painter.setRenderHint(QPainter.RenderHint.Antialiasing)
                target = QRectF(0, 0, painter.device().width(), painter.device().height())
                scene.render(painter, target, source, Qt.AspectRatioMode.KeepAspectRatio)
            finally:
                painter.end()
            if not svg and not image.save(str(path)):
                raise OSError(f"Could not write {path}.")
        finally:
            for item, mode in cached:
                item.setCacheMode(mode)
            for item in selected:
                item.setSelected(True)

    def folder(self, name: str) -> Path:
        """Where the save dialog for format `name` opens: where the last export of that kind
        went if that folder is still there, else the project's folder, else home."""
        last = str(self.settings.value(FOLDER_KEY.format(name), "") or "")
        if last and Path(last).is_dir():
            return Path(last)
        path = self.projects.path
        return path.parent if path is not None else Path.home()

    def _ask_path(self, name: str) -> str | None:
        """Where to export (a dialog; tests replace this)."""
        spec = next(f for f in FORMATS if f[0] == name)
        stem = f"{self.projects.name} runs" if name == "runs" else self.projects.name
        suggested = self.folder(name) / f"{stem}{spec[3]}"
        title = f"Export {spec[1].replace('&', '').rstrip('…')}"
        path, _ = QFileDialog.getSaveFileName(self.shell.window, title, str(suggested), spec[2])
        if path:
            self.settings.setValue(FOLDER_KEY.format(name), str(Path(path).parent))
        return path or None

    def _on_export_triggered(self, name: str) -> None:
        path = self._ask_path(name)
        if not path:
            return
        try:
            message = self.export(name, path)
        except Exception as exc:  # the exporter's reason (or a bug): said, nothing crashes
            if not _expected(exc):
                log.exception("export failed")
            text = str(exc) if _expected(exc) else f"{type(exc).__name__}: {exc}"
            self.shell.show_message(f"Export failed: {text.splitlines()[0]}", 10000)
            QMessageBox.warning(self.shell.window, "Export failed", text)
            return
        self.shell.show_message(message, 10000)


def _expected(exc: Exception) -> bool:
    """A refusal the exporter explains (not a bug)."""
    return isinstance(exc, ExportError | CompileError | ValueError | OSError)


def _report(result: ExportReport | ExportedScript) -> str:
    """'Wrote A and B.' plus what was left out."""
    text = "Wrote " + " and ".join(str(p) for p in result.written) + "."
    if result.left_out:
        text += " Left out: " + "; ".join(result.left_out) + "."
    return text
