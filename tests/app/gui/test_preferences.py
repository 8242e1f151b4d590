"""Edit → Preferences…: autosave interval, recent-files length, theme and data folder are
stored in QSettings, take effect on OK at once, survive a new window; Cancel changes nothing."""

from pathlib import Path

import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QDialogButtonBox, QFileDialog, QLabel, QMessageBox

from app.gui.autosave import INTERVAL_KEY
from app.gui.main_window import MainWindow
from app.gui.settings import DATA_FOLDER_KEY, RecentFiles, app_settings
from app.gui.theme import THEME_KEY, apply_theme
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import shown_window
from widgets.preferences_dialog import Preferences, PreferencesDialog

OK, CANCEL = QDialogButtonBox.StandardButton.Ok, QDialogButtonBox.StandardButton.Cancel


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)


@pytest.fixture(autouse=True)
def system_theme_after():
    """A dark palette must not outlive the test that chose it."""
    yield
    apply_theme("system")


@pytest.fixture
def recent(qtbot, tmp_path) -> list[str]:
    """Five projects in File → Open Recent before the window opens (newest first)."""
    files = RecentFiles(app_settings())
    paths = []
    for index in range(5):
        path = tmp_path / f"project{index}.cwproj"
        path.write_text("{}")
        files.add(path)
        paths.insert(0, str(path))
    return paths


@pytest.fixture
def window(qtbot, recent):
    yield from shown_window(qtbot)


def use_preferences(monkeypatch, qtbot, button=OK, **chosen):
    """The next Preferences dialog: the user sets `chosen` fields, then clicks `button`.

    Returns a list that gets the dialog's values as it opened, and any refusal it showed.
    """
    seen = []

    def exec_(dialog: PreferencesDialog) -> int:
        seen.append(dialog.preferences())
        dialog.show()
        if "autosave_seconds" in chosen:
            dialog.autosave.setValue(chosen["autosave_seconds"])
        if "recent_files" in chosen:
            dialog.recent.setValue(chosen["recent_files"])
        if "theme" in chosen:
            dialog.theme.setCurrentIndex(dialog.theme.findData(chosen["theme"]))
        if "data_folder" in chosen:
            dialog.data_folder.clear()
            qtbot.keyClicks(dialog.data_folder, str(chosen["data_folder"]))
        qtbot.mouseClick(dialog.buttons.button(button), Qt.MouseButton.LeftButton)
        if dialog.isVisible():  # refused: say why, then give up
            seen.append(dialog.error.text() if dialog.error.isVisibleTo(dialog) else "")
            qtbot.mouseClick(dialog.buttons.button(CANCEL), Qt.MouseButton.LeftButton)
        return dialog.result()

    monkeypatch.setattr(PreferencesDialog, "exec", exec_)
    return seen


def recent_in_menu(window: MainWindow) -> list[str]:
    return [a.data() for a in window.recent_menu.actions() if a.data()]


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def plot_background(window: MainWindow):
    view = window.run.curves.findChildren(pg.PlotWidget)[0]
    return view.backgroundBrush().color()


def test_each_preference_is_stored_and_survives_a_new_window(window, qtbot, tmp_path,
                                                             monkeypatch):  # fmt: skip
    folder = tmp_path / "data"
    folder.mkdir()
    seen = use_preferences(monkeypatch, qtbot, autosave_seconds=120, recent_files=3,
                           theme="dark", data_folder=folder)  # fmt: skip
    window.preferences_action.trigger()
    assert seen == [Preferences(60, 10, "system", "")]  # the defaults, as the dialog opened
    settings = app_settings()
    assert int(settings.value(INTERVAL_KEY)) == 120
    assert int(settings.value(RecentFiles.LIMIT_KEY)) == 3
    assert settings.value(THEME_KEY) == "dark"
    assert Path(settings.value(DATA_FOLDER_KEY)) == folder

    apply_theme("system")  # as a new process starts
    again = MainWindow(remember_layout=False)
    qtbot.addWidget(again)
    assert again.autosave._timer.interval() == 120_000 and again.autosave._timer.isActive()
    assert len(recent_in_menu(again)) == 3
    assert is_dark(QGuiApplication.palette())
    assert again.run.panel.data.default_folder == folder
    assert again.parameters.tensor_editor.default_folder == folder
    seen = use_preferences(monkeypatch, qtbot, button=CANCEL)
    again.preferences_action.trigger()
    assert seen == [Preferences(120, 3, "dark", str(folder))]
    again.run._stop_and_wait()


def test_cancel_changes_nothing(window, qtbot, tmp_path, recent, monkeypatch):
    before = {key: app_settings().value(key) for key in app_settings().allKeys()}
    use_preferences(monkeypatch, qtbot, button=CANCEL, autosave_seconds=5, recent_files=1,
                    theme="dark", data_folder=tmp_path)  # fmt: skip
    window.preferences_action.trigger()
    assert {key: app_settings().value(key) for key in app_settings().allKeys()} == before
    assert recent_in_menu(window) == recent
    assert not is_dark(QGuiApplication.palette())
    assert window.autosave._timer.interval() == 60_000
    assert window.run.panel.data.default_folder is None


def test_a_shorter_recent_list_trims_the_menu_and_the_stored_list_at_once(
        window, qtbot, recent, monkeypatch):  # fmt: skip
    assert recent_in_menu(window) == recent
    use_preferences(monkeypatch, qtbot, recent_files=2)
    window.preferences_action.trigger()
    assert recent_in_menu(window) == recent[:2]
    assert RecentFiles(app_settings())._stored() == recent[:2]  # the others are gone for good
    use_preferences(monkeypatch, qtbot, recent_files=4)
    window.preferences_action.trigger()
    assert recent_in_menu(window) == recent[:2]
    use_preferences(monkeypatch, qtbot, recent_files=0)
    window.preferences_action.trigger()
    assert recent_in_menu(window) == []
    clear = next(a for a in window.recent_menu.actions() if a.objectName() == "clear_recent_action")
    assert not clear.isEnabled()


def test_a_new_recent_file_keeps_the_list_at_its_length(qtbot, tmp_path):
    settings = app_settings()
    files = RecentFiles(settings)
    files.set_limit(2)
    for name in "abc":
        files.add(tmp_path / name)
    assert files.paths() == [str(tmp_path / "c"), str(tmp_path / "b")]
    assert RecentFiles(app_settings()).limit == 2


def test_the_theme_changes_the_palette_at_once_and_after_a_restart(window, qtbot,
                                                                   monkeypatch):  # fmt: skip
    assert not is_dark(QGuiApplication.palette())
    light_plot = plot_background(window)
    use_preferences(monkeypatch, qtbot, theme="dark")
    window.preferences_action.trigger()
    assert is_dark(QGuiApplication.palette())
    qtbot.waitUntil(lambda: is_dark(window.palette()))
    assert plot_background(window).lightness() < 128 < light_plot.lightness()  # plots follow
    notes = [label for label in window.findChildren(QLabel)
             if label.styleSheet() == "color: palette(placeholder-text);"]  # fmt: skip
    assert notes and all(note.palette().color(QPalette.ColorRole.WindowText).lightness() > 128
                         for note in notes)  # style sheets take the new palette too

    apply_theme("system")  # as a new process starts
    again = MainWindow(remember_layout=False)
    qtbot.addWidget(again)
    assert is_dark(QGuiApplication.palette())
    assert plot_background(again).lightness() < 128
    use_preferences(monkeypatch, qtbot, theme="light")
    again.preferences_action.trigger()
    assert not is_dark(QGuiApplication.palette())
    qtbot.waitUntil(lambda: not is_dark(again.palette()))
    assert plot_background(again).lightness() > 128
    again.run._stop_and_wait()


def test_the_data_folder_is_where_importing_a_data_set_starts(window, qtbot, tmp_path,
                                                              monkeypatch):  # fmt: skip
    asked = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(
        lambda parent, title, directory, *args: (asked.append(directory), ("", ""))[1]))
    folder = tmp_path / "data"
    folder.mkdir()
    use_preferences(monkeypatch, qtbot, data_folder=folder)
    window.preferences_action.trigger()
    form = window.run.panel.data
    qtbot.mouseClick(form.import_button, Qt.MouseButton.LeftButton)
    assert asked == [str(folder)]
    assert window.parameters.tensor_editor._ask_open_path() is None  # importing values too
    assert asked[-1] == str(folder)

    # A data set already imported from a file: beside that file is the better start.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "points.csv").write_text("x,y,label\n0,1,a\n1,0,b\n")
    form.show_spec({"csv": str(elsewhere / "points.csv")}, None)
    qtbot.mouseClick(form.import_button, Qt.MouseButton.LeftButton)
    assert asked[-1] == str(elsewhere)


def test_a_data_folder_that_does_not_exist_is_refused_in_the_dialog(window, qtbot, tmp_path,
                                                                    monkeypatch):  # fmt: skip
    missing = tmp_path / "missing"
    seen = use_preferences(monkeypatch, qtbot, data_folder=missing, recent_files=1)
    window.preferences_action.trigger()
    refusal = seen[-1]
    assert str(missing) in refusal and "does not exist" in refusal
    assert app_settings().value(DATA_FOLDER_KEY) is None  # nothing saved
    assert app_settings().value(RecentFiles.LIMIT_KEY) is None
    assert window.run.panel.data.default_folder is None


def test_the_dialog_stays_open_on_a_refusal_and_browse_fills_the_folder(qtbot, tmp_path,
                                                                        monkeypatch):  # fmt: skip
    dialog = PreferencesDialog(Preferences())
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.keyClicks(dialog.data_folder, str(tmp_path / "nope"))
    qtbot.mouseClick(dialog.buttons.button(OK), Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and dialog.error.isVisible()
    assert dialog.result() != PreferencesDialog.DialogCode.Accepted
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        staticmethod(lambda parent, title, start: str(tmp_path)))
    qtbot.mouseClick(dialog.browse, Qt.MouseButton.LeftButton)
    assert dialog.data_folder.text() == str(tmp_path) and not dialog.error.isVisible()
    qtbot.mouseClick(dialog.buttons.button(OK), Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()
    assert dialog.result() == PreferencesDialog.DialogCode.Accepted
    assert dialog.preferences().data_folder == str(tmp_path)
