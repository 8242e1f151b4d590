"""The colour theme (Preferences): the system's look, or Light or Dark, applied at once.

Light and Dark are Qt's Fusion style with a palette of their own, so they look the same
on every platform and whatever the system's own colour scheme is; System puts back the
style and palette the application started with. Views that draw with their own colours
(the plots) follow the application palette, so switching needs no restart.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

THEME_KEY = "appearance/theme"
THEMES = {"system": "System", "light": "Light", "dark": "Dark"}  # stored value: shown name
DEFAULT_THEME = "system"

_system_style: str | None = None  # the style the application started with


def theme_setting(settings: QSettings) -> str:
    """The theme the Preferences chose ('system', 'light' or 'dark')."""
    value = str(settings.value(THEME_KEY, DEFAULT_THEME) or DEFAULT_THEME).lower()
    return value if value in THEMES else DEFAULT_THEME


def apply_theme(theme: str) -> None:
    """Make `theme` the look of the whole running application (no-op without one)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return
    global _system_style
    if _system_style is None:
        _system_style = app.style().name()
    _hint_colour_scheme(theme)
    if theme in ("light", "dark"):
        if app.style().name().lower() != "fusion":
            app.setStyle("Fusion")
        app.setPalette(dark_palette() if theme == "dark" else light_palette())
    else:
        if app.style().name().lower() != _system_style.lower():
            app.setStyle(_system_style)
        app.setPalette(QPalette())  # an empty palette: back to the style's and platform's
    _refresh_style_sheets(app)


def is_dark(palette: QPalette | None = None) -> bool:
    """Whether `palette` (default: the application's) has a dark window colour."""
    palette = palette if palette is not None else QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def dark_palette() -> QPalette:
    return _palette(window="#353535", base="#262626", alternate="#2f2f2f", text="#e8e8e8",
                    button="#3c3c3c", light="#4a4a4a", mid="#5a5a5a", dark="#202020",
                    shadow="#141414", highlight="#3d7fd1", highlighted_text="#ffffff",
                    link="#6cb6ff", visited="#c39bff", placeholder="#9a9a9a",
                    disabled="#7c7c7c", tooltip="#45494f")  # fmt: skip


def light_palette() -> QPalette:
    return _palette(window="#efefef", base="#ffffff", alternate="#f5f5f5", text="#1e1e1e",
                    button="#efefef", light="#ffffff", mid="#b8b8b8", dark="#9f9f9f",
                    shadow="#767676", highlight="#3072c4", highlighted_text="#ffffff",
                    link="#0b5cad", visited="#6a3fa0", placeholder="#7a7a7a",
                    disabled="#9a9a9a", tooltip="#ffffdc")  # fmt: skip


def _palette(*, window: str, base: str, alternate: str, text: str, button: str, light: str,
             mid: str, dark: str, shadow: str, highlight: str, highlighted_text: str,
             link: str, visited: str, placeholder: str, disabled: str,
             tooltip: str) -> QPalette:  # fmt: skip
    role, group = QPalette.ColorRole, QPalette.ColorGroup
    palette = QPalette()
    tooltip_text = "#1e1e1e" if QColor(tooltip).lightness() >= 128 else text
    for name, colour in (
        (role.Window, window), (role.WindowText, text), (role.Base, base),
        (role.AlternateBase, alternate), (role.Text, text), (role.Button, button),
        (role.ButtonText, text), (role.BrightText, "#ff5252"), (role.Light, light),
        (role.Midlight, light), (role.Mid, mid), (role.Dark, dark), (role.Shadow, shadow),
        (role.Highlight, highlight), (role.HighlightedText, highlighted_text),
        (role.Link, link), (role.LinkVisited, visited), (role.PlaceholderText, placeholder),
        (role.ToolTipBase, tooltip), (role.ToolTipText, tooltip_text),
    ):  # fmt: skip
        palette.setColor(name, QColor(colour))
    for name in (role.WindowText, role.Text, role.ButtonText, role.HighlightedText):
        palette.setColor(group.Disabled, name, QColor(disabled))
    palette.setColor(group.Disabled, role.Highlight, QColor(mid))
    return palette


def _refresh_style_sheets(app: QApplication) -> None:
    """Style sheets resolve `palette(...)` once; set them again to take the new colours."""
    for widget in app.allWidgets():
        sheet = widget.styleSheet()
        if "palette(" in sheet:
            widget.setStyleSheet(sheet)


def _hint_colour_scheme(theme: str) -> None:
    """Tell the platform too, where it listens (title bars, native dialogs; Qt 6.8+)."""
    hints = QGuiApplication.styleHints()
    if theme == "dark":
        hints.setColorScheme(Qt.ColorScheme.Dark)
    elif theme == "light":
        hints.setColorScheme(Qt.ColorScheme.Light)
    else:
        hints.unsetColorScheme()
