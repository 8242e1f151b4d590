"""How the canvas looks: colours, fonts and sizes shared by its items (one place to restyle)."""

from __future__ import annotations

from functools import cache, lru_cache

from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPen

GRID = 20.0  # snap and background grid step, in scene units
NODE_MIN_WIDTH = 170.0
HEADER = 28.0  # title bar height
ROW = 22.0  # one port row
FOOTER = 24.0  # the summary line
PORT_RADIUS = 5.5
PORT_HIT = 11.0  # how close to a port a press must be to start a connection
PROBE_WIDTH, PROBE_HEIGHT = 64.0, 18.0  # a hook's probe pill
PROBE_GLYPH = 24.0  # the kind's glyph at the pill's left; the sparkline fills the rest
PROBE_GAP = 4.0  # between probes side by side, and between a probe and its node
CHIP_HEIGHT, CHIP_PAD, CHIP_GAP = 15.0, 5.0, 3.0  # health indicator chips under a node

# Level of detail (view scale at which things disappear when zooming out).
DETAIL_LABELS = 0.55  # port labels, summaries, edge shape labels
DETAIL_TEXT = 0.3  # node titles

BACKGROUND = QColor("#22252b")
GRID_MINOR = QColor("#2a2e35")
GRID_MAJOR = QColor("#323740")
NODE_BODY = QColor("#353a43")
NODE_BORDER = QColor("#4b525e")
NODE_SELECTED = QColor("#ffb84d")
NODE_ERROR = QColor("#ef5350")
TEXT = QColor("#eceff4")
MODE_TRAIN = QColor("#c2410c")  # badge on Dropout/BatchNorm nodes: the mode they compute in
MODE_PREDICT = QColor("#2563eb")
FROZEN = QColor("#bfe3ff")  # badge on nodes with frozen Parameters
TEXT_DIM = QColor("#aab2bf")
PORT = QColor("#c7cdd6")
PORT_OK = QColor("#66d17a")
PORT_NO = QColor("#5a606b")
EDGE = QColor("#8f9bb0")
EDGE_SELECTED = QColor("#ffb84d")
EDGE_RUBBER = QColor("#66d17a")
LABEL_BG = QColor("#1b1e23")
LABEL_TEXT = QColor("#d8dee9")
PROBE_BG = QColor("#1b1e23")
PROBE_COLOURS = {  # glyph, sparkline and border of a probe, by hook kind
    "forward_pre": QColor("#6cb6ff"),
    "forward": QColor("#5fd3a8"),
    "backward": QColor("#c39bff"),
    "hook_backward": QColor("#c39bff"),
}
HEALTH_COLOURS = {  # (chip, text) by status: 'ok' stays quiet, the others stand out
    "ok": (QColor("#313b36"), QColor("#9fb8a8")),
    "warn": (QColor("#e0a030"), QColor("#1b1e23")),
    "bad": (QColor("#e5484d"), QColor("#ffffff")),
}

CATEGORY_COLOURS = {
    "Inputs & outputs": QColor("#3f7fbf"),
    "Layers": QColor("#8a5cc2"),
    "Activations": QColor("#c27a2c"),
    "Normalization": QColor("#2f9a8a"),
    "Pooling & resampling": QColor("#4f8f3a"),
    "Reshaping": QColor("#6f8f2a"),
    "Math": QColor("#9a4f6a"),
    "Debugging": QColor("#7a7a7a"),
    "Composites": QColor("#b5475a"),
    "User Cells": QColor("#b5475a"),
}
DEFAULT_CATEGORY_COLOUR = QColor("#5d6675")


def category_colour(category: str) -> QColor:
    return CATEGORY_COLOURS.get(category, DEFAULT_CATEGORY_COLOUR)


@cache
def font(role: str) -> QFont:
    """Fonts by role: 'title', 'type', 'port', 'summary', 'label', 'probe', 'chip'."""
    f = QFont()
    size, bold = {
        "title": (10.5, True),
        "type": (8.5, False),
        "port": (8.5, False),
        "summary": (9.0, False),
        "label": (8.0, False),
        "probe": (8.0, True),
        "chip": (7.5, True),
    }[role]
    f.setPointSizeF(size)
    f.setBold(bold)
    return f


@cache
def metrics(role: str) -> QFontMetricsF:
    return QFontMetricsF(font(role))


@lru_cache(maxsize=8192)
def advance(role: str, text: str) -> float:
    """The width of `text` in a role's font (kinds, summaries and port names repeat: a
    10,000-node graph asks for a few hundred different widths, not 60,000)."""
    return metrics(role).horizontalAdvance(text)


@cache
def pen(colour: str, width: float = 1.0) -> QPen:
    p = QPen(QColor(colour), width)
    p.setCosmetic(False)
    return p
