"""Where a hook pane's axes and colour bar sit: ranges in round numbers, moved in jumps (no Qt).

An axis whose range stays put keeps its tick labels cached, so a redraw repaints the data,
not the labels (most of a pane's frame), and pyqtgraph has no bounds to work out again at
each paint. These functions decide when a range moves and to what; the views set what
they return. While training streams in, a step axis leaves room for as many steps again
(it widens about once per doubling of the steps); once the stream stops, it closes in on
the data.
"""

from __future__ import annotations

import math

QUIET_SECONDS = 0.3  # a capture whose count of copies held this long has stopped streaming
STREAMING_HEADROOM = 2.0  # a step axis leaves room for this many times its steps, streaming
SETTLED_HEADROOM = 1.1  # … and this much once the stream stopped, kept while the steps
SETTLED_FILL = 0.55  # fill this share of it (a fresh frame fills at least 1 / (1.1 × 1.5))
STEP_SLACK = 0.02  # of a step axis's span: the padding its first step may move left within
MIN_STEPS = 10.0  # the narrowest step span an axis frames
VALUE_FILL = 0.25  # a value axis is kept while the values fill this share of it
LEVEL_FILL = 0.5  # … and a heatmap's colour levels while they fill this share of them

Range = tuple[float, float]


def nice_span(span: float) -> float:
    """The smallest of 1, 1.5, 2, 3, 4, 5, 7.5 × 10^k at least `span` (> 0): a finished run
    then fills most of the axis, and the axis still widens only a few times per decade."""
    power = 10.0 ** math.floor(math.log10(span))
    return next(m * power for m in (1, 1.5, 2, 3, 4, 5, 7.5, 10) if m * power >= span)


def round_range(shown: Range | None, low: float, high: float, *, fill: float) -> Range | None:
    """A range in round numbers around [low, high], or None to keep `shown`: it holds them
    and they fill at least `fill` of it. Non-finite bounds keep `shown` too."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    if shown is not None and shown[0] <= low and high <= shown[1] \
            and high - low >= fill * (shown[1] - shown[0]):  # fmt: skip
        return None
    span = high - low
    if span <= 0:  # a single value: room around it
        span = max(abs(high), 1.0) * 0.1
    unit = nice_span(span * 1.25) / 10
    bottom, top = math.floor(low / unit) * unit, math.ceil(high / unit) * unit
    if top - bottom < unit:
        bottom, top = bottom - unit, top + unit
    return bottom, top


def step_range(shown: Range | None, first: float, last: float, *,
               streaming: bool) -> Range | None:  # fmt: skip
    """The step axis for steps `first` … `last`, or None to keep `shown`.

    `shown` is kept while it holds the steps (its first step may sit within the padding:
    the distribution image's first column, half a column left of the first step, moves
    left a little as its columns widen) and, once the stream stopped, while they fill more
    than SETTLED_FILL of it. A new range starts at `first` and leaves room ahead: as many
    steps again while streaming, a tenth once settled, in round numbers.
    """
    if shown is not None:
        span = shown[1] - shown[0]
        holds = shown[0] - STEP_SLACK * span <= first and last <= shown[1]
        if holds and (streaming or last - first >= SETTLED_FILL * span):
            return None
    headroom = STREAMING_HEADROOM if streaming else SETTLED_HEADROOM
    return first, first + nice_span(max(last - first, MIN_STEPS) * headroom)


def value_range(shown: Range | None, low: float, high: float) -> Range | None:
    """The value axis for values `low` … `high`, or None to keep `shown`: round numbers,
    moved only when the values leave it or fill less than VALUE_FILL of it."""
    return round_range(shown, low, high, fill=VALUE_FILL)


def heatmap_levels(kept: Range | None, low: float, high: float, *,
                   symmetric: bool) -> Range | None:  # fmt: skip
    """A heatmap's colour levels for values `low` … `high` (from `colour_levels`), kept while
    they still fit: the colour bar's labels stay cached, and the colours don't flicker from
    frame to frame. Symmetric (gradients): ±M about 0, M round, while high is M/2 … M."""
    if symmetric:
        fits = kept is not None and kept[0] == -kept[1] and kept[1] / 2 <= high <= kept[1]
        return kept if fits else (-nice_span(high), nice_span(high))
    return round_range(kept, low, high, fill=LEVEL_FILL) or kept


def log_bounds(low: float, high: float) -> Range:
    """Positive values `low` … `high` on a log axis, in its own coordinates (powers of 10)."""
    return math.floor(math.log10(low)), math.ceil(math.log10(high))


class AxisFraming:
    """One plot's step (x) and value (y) ranges: what is shown, and what a draw moved."""

    def __init__(self) -> None:
        self.x: Range | None = None
        self.y: Range | None = None
        self._moved: dict[str, Range] = {}

    def frame_steps(self, first: float, last: float, *, streaming: bool) -> None:
        framed = step_range(self.x, first, last, streaming=streaming)
        if framed is not None:
            self.x = self._moved["xRange"] = framed

    def frame_values(self, low: float, high: float) -> None:
        framed = value_range(self.y, low, high)
        if framed is not None:
            self.y = self._moved["yRange"] = framed

    def take_moved(self) -> dict[str, Range]:
        """{"xRange": …, "yRange": …} moved since the last call (pyqtgraph's setRange keywords:
        both axes in one call, as moved one after the other they cost two full repaints)."""
        moved, self._moved = self._moved, {}
        return moved

    def clear(self) -> None:
        """Nothing shown: the next data is framed afresh."""
        self.x = self.y = None
        self._moved.clear()


class StreamWatch:
    """Whether training is still copying a capture: its count of copies moved within the
    last QUIET_SECONDS (the summaries that a pane draws come a few times a second)."""

    def __init__(self) -> None:
        self.count: int | None = None  # copies counted at the last look
        self.changed_at = 0.0  # when that count was first seen (time.monotonic)

    def streaming(self, count: int, now: float) -> bool:
        if count != self.count:
            self.count, self.changed_at = count, now
        return now - self.changed_at < QUIET_SECONDS

    def forget(self) -> None:
        """The next count is new (the capture was replaced or cleared)."""
        self.count = None
