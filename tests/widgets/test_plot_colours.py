"""The network's mode and the classes never share a colour: the Predict panel's bars (mode)
and the decision boundary (classes) are read side by side."""

import numpy as np
import pytest
from PySide6.QtGui import QColor

from widgets.plots.decision_boundary import PALETTE as CLASS_COLOURS  # what the boundary draws
from widgets.plots.decision_boundary import field_colours
from widgets.predict_panel import MODE_COLOURS  # what the bars are drawn in

APART = 20.0  # CIE76 distance: clearly another colour, not a shade of the same one


def lab(colour: str) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour."""
    rgb = np.array(QColor(colour).getRgbF()[:3])
    rgb = np.where(rgb > 0.04045, ((rgb + 0.055) / 1.055) ** 2.4, rgb / 12.92)
    to_xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                       [0.0193, 0.1192, 0.9505]])  # fmt: skip
    xyz = to_xyz @ rgb / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def class_shades() -> list[str]:
    """Every colour a class is drawn in: its points and its light field."""
    tints = field_colours(len(CLASS_COLOURS))
    return [*CLASS_COLOURS, *(QColor(*(int(v) for v in rgba)).name() for rgba in tints)]


def test_the_lab_distance_tells_a_colour_from_another():
    assert np.linalg.norm(lab("#4e79a7") - lab("#4e79a7")) == 0
    assert np.linalg.norm(lab("#000000") - lab("#ffffff")) == pytest.approx(100, abs=0.5)


@pytest.mark.parametrize("mode", sorted(MODE_COLOURS))
def test_mode_colours_are_no_class_colour(mode):
    for colour in MODE_COLOURS[mode]:
        nearest = min(class_shades(), key=lambda c: np.linalg.norm(lab(c) - lab(colour)))
        distance = np.linalg.norm(lab(nearest) - lab(colour))
        assert distance >= APART, f"{mode} {colour} looks like the class colour {nearest}"


def test_the_two_modes_look_different():
    (predict, _), (train, _) = MODE_COLOURS["predict"], MODE_COLOURS["train"]
    assert np.linalg.norm(lab(predict) - lab(train)) >= APART
