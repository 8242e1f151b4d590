"""Test setup shared by every folder: headless Qt, isolated settings, leaked-widget check."""

import atexit
import gc
import os
import shutil
import tempfile

import pytest

# Before anything imports Qt: draw offscreen, and keep the user's config out of reach of
# every Qt process the tests start (subprocesses inherit XDG_CONFIG_HOME).
os.environ["QT_QPA_PLATFORM"] = "offscreen"
_CONFIG_HOME = tempfile.mkdtemp(prefix="cellwright-test-config-")
os.environ["XDG_CONFIG_HOME"] = _CONFIG_HOME
atexit.register(shutil.rmtree, _CONFIG_HOME, ignore_errors=True)
# Decoded image folders are cached; tests keep theirs out of the user's ~/.cache.
_CACHE_HOME = tempfile.mkdtemp(prefix="cellwright-test-cache-")
os.environ["CELLWRIGHT_CACHE"] = _CACHE_HOME
atexit.register(shutil.rmtree, _CACHE_HOME, ignore_errors=True)



def pytest_collection_modifyitems(config, items):
    """The long runs (the 10,000-case fuzz, building the bundle) are slow tests too, so
    `-m "not slow"` leaves every long test out when iterating; CI runs them all."""
    for item in items:
        if item.get_closest_marker("fuzz") or item.get_closest_marker("packaging"):
            item.add_marker(pytest.mark.slow)


# Top-level widgets Qt makes for itself and keeps for the whole process.
_QT_OWNED_WINDOWS = {"QTipLabel", "QComboBoxPrivateContainer"}


@pytest.fixture(autouse=True)
def _qt_test_guard(request, tmp_path_factory):
    """For tests that use qtbot: own QSettings folder, and fail on leaked top-level widgets.

    Widgets the test registered with qtbot, or closed itself, are deleted first;
    any other new top-level widget still alive afterwards (open, or made and never
    shown) is a leak (napari's `_testsupport` idea). Leaks are cleaned up so later
    tests are not blamed.
    """
    if "qtbot" not in request.fixturenames:
        yield
        return
    from PySide6.QtCore import QSettings

    app = request.getfixturevalue("qapp")
    settings_dir = tmp_path_factory.mktemp("settings")
    for fmt in (QSettings.Format.IniFormat, QSettings.Format.NativeFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, str(settings_dir))
    before = {_address(w) for w in app.topLevelWidgets()}
    # What is alive now is older than the test: the collections below need not walk it
    # again (late in a run that was ~450,000 objects, 0.3 s a collection, twice a test).
    gc.freeze()
    try:
        yield
        _check_for_leaks(app, before)
    finally:
        gc.unfreeze()  # the older objects go back to the oldest generation, collectable


def _check_for_leaks(app, before):
    # pytest-qt has closed and deleteLater()-ed the widgets registered with qtbot by now.
    for widget in _new_top_level_widgets(app, before):
        if _was_closed(widget):  # closed by the test: it only waits for deletion
            widget.deleteLater()
    _flush_deletions(app)
    leaked = [w for w in _new_top_level_widgets(app, before) if _is_ours(w)]
    if leaked:
        names = [f"{type(w).__name__}({w.objectName()!r})" for w in leaked]
        for widget in leaked:
            widget.close()
            widget.deleteLater()
        _flush_deletions(app)
        pytest.fail(f"test leaked {len(names)} top-level widget(s): {', '.join(names)}")


def _address(widget):
    import shiboken6

    return shiboken6.getCppPointer(widget)[0]


def _new_top_level_widgets(app, before):
    return [w for w in app.topLevelWidgets() if _address(w) not in before]


def _is_ours(widget):
    return widget.metaObject().className() not in _QT_OWNED_WINDOWS


def _was_closed(widget):
    """Hidden after an explicit show()/hide()/close() — not merely never shown."""
    from PySide6.QtCore import Qt

    return widget.isHidden() and widget.testAttribute(Qt.WidgetAttribute.WA_WState_ExplicitShowHide)


def _flush_deletions(app):
    from PySide6.QtCore import QCoreApplication, QEvent

    gc.collect()
    for _ in range(2):  # a deleted widget's children may post their own deletions
        app.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    # Python objects of deleted items (pyqtgraph's plots) go in a collection after their
    # Qt side: only then are the parentless menus they own released.
    gc.collect()
    app.processEvents()
