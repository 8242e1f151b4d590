"""DecisionBoundaryView: the field lands on the data coordinates it was computed for."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF

from widgets.plots import DecisionBoundaryView, extent_for, grid_points
from widgets.plots.decision_boundary import class_colour, field_colours

pytestmark = pytest.mark.gui

EXTENT = (-2.0, 4.0, 1.0, 4.0)  # xmin, xmax, ymin, ymax: not square, not at the origin


@pytest.fixture
def view(qtbot):
    widget = DecisionBoundaryView()
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    return widget


def shown(widget, qtbot):
    widget.show()
    qtbot.waitExposed(widget)
    widget.plot_view.repaint()
    return widget


def rendered_colour(view, x, y):
    """The colour on screen at data point (x, y)."""
    scene_pos = view.plot.getViewBox().mapViewToScene(QPointF(x, y))
    pixel = view.plot_view.mapFromScene(scene_pos)
    image = view.plot_view.grab().toImage()
    ratio = image.devicePixelRatio()
    colour = image.pixelColor(int(pixel.x() * ratio), int(pixel.y() * ratio))
    return np.array([colour.red(), colour.green(), colour.blue()])


def image_colour(view, x, y):
    """The RGBA the image item holds at the pixel covering data point (x, y)."""
    local = view.image.mapFromView(QPointF(x, y))  # image coordinates: (column, row)
    return view.image.image[int(local.y()), int(local.x())]


# ---- where to evaluate ----------------------------------------------------------------------


def test_grid_points_are_pixel_centres_covering_the_extent():
    points = grid_points(EXTENT, (6, 3))
    assert points.shape == (18, 2) and points.dtype == np.float32
    np.testing.assert_allclose(np.unique(points[:, 0]), [-1.5, -0.5, 0.5, 1.5, 2.5, 3.5])
    np.testing.assert_allclose(np.unique(points[:, 1]), [1.5, 2.5, 3.5])
    # Row-major, row 0 at ymin: reshaping predictions to (H, W) gives set_field's layout.
    grid = points.reshape(3, 6, 2)
    np.testing.assert_allclose(grid[0, 0], [-1.5, 1.5])
    np.testing.assert_allclose(grid[0, 5], [3.5, 1.5])
    np.testing.assert_allclose(grid[2, 0], [-1.5, 3.5])
    assert grid_points(EXTENT, 10).shape == (100, 2)


def test_extent_for_pads_the_data():
    x = np.array([[0.0, 0.0], [10.0, 20.0], [5.0, 5.0]])
    assert extent_for(x) == pytest.approx((-1.0, 11.0, -2.0, 22.0))
    assert extent_for(x, margin=0.0) == pytest.approx((0.0, 10.0, 0.0, 20.0))
    xmin, xmax, ymin, ymax = extent_for(np.array([[3.0, 3.0]]))  # one point still has room
    assert xmin < 3 < xmax and ymin < 3 < ymax
    with pytest.raises(ValueError):
        extent_for(np.empty((0, 2)))


# ---- the field ------------------------------------------------------------------------------


def test_the_image_covers_exactly_the_extent(view):
    view.set_field(EXTENT, np.zeros((3, 6)), 2)
    rect = view.image.mapRectToView(view.image.boundingRect())
    # top() is the smaller y in view coordinates
    edges = (rect.left(), rect.right(), rect.top(), rect.bottom())
    assert edges == pytest.approx((-2.0, 4.0, 1.0, 4.0))
    assert (view.image.width(), view.image.height()) == (6, 3)  # W columns, H rows
    assert view.image.zValue() < view.train_scatter.zValue()
    assert view.image.zValue() < view.val_scatter.zValue()


def test_left_class_0_right_class_1_lands_on_the_right_side(view, qtbot):
    values = np.zeros((3, 6))
    values[:, 3:] = 1  # right half: class 1
    view.set_field(EXTENT, values, 2)
    light = field_colours(2)
    np.testing.assert_array_equal(image_colour(view, -1.3, 2.2), light[0])
    np.testing.assert_array_equal(image_colour(view, 3.3, 2.2), light[1])
    shown(view, qtbot)
    np.testing.assert_allclose(rendered_colour(view, -1.3, 2.2), light[0][:3], atol=12)
    np.testing.assert_allclose(rendered_colour(view, 3.3, 2.2), light[1][:3], atol=12)


def test_the_first_pixel_is_drawn_at_the_bottom_left_corner(view, qtbot):
    values = np.zeros((3, 6))
    values[0, 0] = 2  # row 0, column 0: the sample at (xmin, ymin)
    view.set_field(EXTENT, values, 3)
    light = field_colours(3)
    corner = grid_points(EXTENT, (6, 3))[0]
    np.testing.assert_array_equal(image_colour(view, *corner), light[2])
    shown(view, qtbot)
    np.testing.assert_allclose(rendered_colour(view, -1.6, 1.3), light[2][:3], atol=12)
    for x, y in ((-1.6, 3.7), (3.6, 1.3), (3.6, 3.7)):  # the other corners
        np.testing.assert_allclose(rendered_colour(view, x, y), light[0][:3], atol=12)


def test_regression_values_use_the_points_colour_scale_with_a_colour_bar(view, qtbot):
    view.set_points(np.array([[0.0, 2.0], [3.0, 3.0]]), np.array([0.0, 10.0]), None, None, None)
    values = np.full((3, 6), 10.0)
    values[:, :3] = 0.0
    view.set_field(EXTENT, values, None)
    table = view._colour_map.getLookupTable(nPts=256, mode="byte", alpha=True)
    np.testing.assert_array_equal(image_colour(view, -1.0, 2.0), table[0])
    np.testing.assert_array_equal(image_colour(view, 3.0, 2.0), table[-1])
    shown(view, qtbot)
    assert view.color_bar.isVisible()
    assert view.color_bar.levels() == pytest.approx((0.0, 10.0))
    view.set_points(np.zeros((1, 2)), np.zeros(1), None, None, ["a", "b"])
    view.set_field(EXTENT, np.zeros((3, 6)), 2)
    assert not view.color_bar.isVisible()


def test_field_version_counts_every_field(view):
    assert view.field_version == 0
    view.set_field(EXTENT, np.zeros((3, 6)), 2)
    view.set_field(EXTENT, np.ones((3, 6)), 2)
    assert view.field_version == 2
    with pytest.raises(ValueError):
        view.set_field(EXTENT, np.zeros(6), 2)
    assert view.field_version == 2


def test_a_new_field_over_the_same_extent_keeps_the_users_zoom(view, qtbot):
    shown(view, qtbot)
    view.set_field(EXTENT, np.zeros((3, 6)), 2)
    view.plot.setXRange(0.0, 1.0, padding=0)  # the user zoomed in
    zoomed = np.array(view.plot.viewRange())
    view.set_field(EXTENT, np.ones((3, 6)), 2)  # the next update while training
    np.testing.assert_allclose(view.plot.viewRange(), zoomed)
    view.set_field((-3.0, 5.0, 0.0, 5.0), np.ones((3, 6)), 2)  # new data: framed anew
    (x0, x1), (y0, y1) = view.plot.viewRange()
    assert x0 <= -3.0 + 1e-6 and x1 >= 5.0 - 1e-6 and y0 <= 1e-6 and y1 >= 5.0 - 1e-6


# ---- points, legend, message -----------------------------------------------------------------


def test_points_are_drawn_where_given_in_their_class_colour(view):
    rng = np.random.default_rng(1)
    train_x, train_y = rng.normal(size=(30, 2)), rng.integers(0, 3, 30)
    val_x, val_y = rng.normal(size=(8, 2)), rng.integers(0, 3, 8)
    view.set_points(train_x, train_y, val_x, val_y, ["cat", "dog", "bird"])
    x, y = view.train_scatter.getData()
    np.testing.assert_allclose(np.column_stack((x, y)), train_x)
    x, y = view.val_scatter.getData()
    np.testing.assert_allclose(np.column_stack((x, y)), val_x)
    for point, label in zip(view.train_scatter.points(), train_y, strict=True):
        assert point.brush().color() == class_colour(int(label))
    for point, label in zip(view.val_scatter.points(), val_y, strict=True):
        assert point.pen().color() == class_colour(int(label))  # a ring in the class colour
    legend = view.legend_label.text()
    for name in ("cat", "dog", "bird", "train", "validation"):
        assert name in legend


def test_a_message_stands_in_for_the_plot(view, qtbot):
    shown(view, qtbot)
    assert view.plot_view.isVisible()
    text = "The decision boundary needs data with 2 input features (this data set has 64)."
    view.set_message(text)
    assert view.message_shown
    assert view.message_label.isVisible() and view.message_label.text() == text
    assert not view.plot_view.isVisible()
    view.set_points(np.zeros((2, 2)), np.array([0, 1]), None, None, ["a", "b"])
    assert not view.message_shown and view.plot_view.isVisible()
    view.set_message("again")
    view.set_message("")
    assert view.plot_view.isVisible()
