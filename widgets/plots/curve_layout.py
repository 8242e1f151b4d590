"""Where the three training curves go in the space they have: a pure choice, tested without Qt.

Loss, accuracy and learning rate either sit in a row or, when the row would make them
too narrow, the loss takes the left and the other two stack beside it. The choice is the
arrangement whose smallest plot comes closest to a readable size.
"""

from __future__ import annotations

READABLE = (300.0, 180.0)  # px: a plot this large reads at a glance
ROW, STACKED = "row", "stacked"  # three plots side by side; loss left, the others stacked
# Each arrangement: the share of the curves' (width, height) each plot gets (the grid's
# stretch factors: 4:3:3 in a row; 5:3 columns, the right one split in two, stacked).
SHARES = {
    ROW: {"loss": (0.4, 1.0), "accuracy": (0.3, 1.0), "learning_rate": (0.3, 1.0)},
    STACKED: {"loss": (0.625, 1.0), "accuracy": (0.375, 0.5), "learning_rate": (0.375, 0.5)},
}


def arrangement_for(width: float, height: float, current: str | None = None) -> str:
    """The arrangement (ROW or STACKED) whose smallest plot is the most readable in a
    `width` x `height` area; `current` on a tie, so a resize at the edge does not flip it."""

    def readable(arrangement: str) -> float:
        return min(min(width * w / READABLE[0], height * h / READABLE[1])
                   for w, h in SHARES[arrangement].values())  # fmt: skip

    row, stacked = readable(ROW), readable(STACKED)
    if abs(row - stacked) < 0.02 and current in SHARES:
        return current
    return ROW if row > stacked else STACKED
