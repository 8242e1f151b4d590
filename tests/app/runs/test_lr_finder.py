"""The learning-rate finder: a suggestion near the shipped rate, the project left bit-identical,
an early stop when the loss blows up, exponential rates, and refusals with reasons."""

import copy
from pathlib import Path

import numpy as np
import pytest

import engine
from app.io.project_file import load_project
from app.runs import lr_finder
from app.runs.lr_finder import (
    STOPPED_BY_USER,
    LRFinderError,
    find_learning_rate,
    smooth,
    suggest,
)
from app.session.progress import rng_state
from engine import _random

EXAMPLES = Path(__file__).resolve().parents[3] / "resources" / "examples"


def example(name: str):
    return load_project(EXAMPLES / f"{name}.cwproj")


def weights(project) -> dict:
    return {(node, name): array.copy()
            for node, arrays in project.param_values.items()
            for name, array in arrays.items()}  # fmt: skip


def assert_untouched(project, before_weights, before_training) -> None:
    after = weights(project)
    assert after.keys() == before_weights.keys()
    for key, array in before_weights.items():
        assert after[key].dtype == array.dtype
        assert np.array_equal(after[key], array), key
    assert project.training == before_training


def test_spiral_suggestion_is_near_the_shipped_rate_and_the_project_is_untouched():
    project = example("spiral_mlp")
    shipped = project.training["learning_rate"]
    before, training = weights(project), copy.deepcopy(project.training)
    engine.set_seed(123)
    _random.rng().random(3)  # somewhere along the generator, not at a fresh seed
    position, numpy_state = rng_state(), np.random.get_state()

    finding = find_learning_rate(project, folder=EXAMPLES)

    assert finding.suggestion is not None
    assert shipped / 10 <= finding.suggestion <= shipped * 10, finding.suggestion
    assert_untouched(project, before, training)
    assert rng_state() == position and engine.get_seed() == 123
    after_numpy = np.random.get_state()
    assert after_numpy[0] == numpy_state[0] and np.array_equal(after_numpy[1], numpy_state[1])
    assert after_numpy[2:] == numpy_state[2:]
    # the same search again finds the same: the copy starts from the project's seed
    again = find_learning_rate(project, folder=EXAMPLES)
    assert np.array_equal(again.losses, finding.losses)


def test_dropout_and_batch_norm_project_keeps_weights_statistics_and_generator():
    project = example("moons_bn_dropout")  # Dropout draws; BatchNorm's moving statistics move
    project.training["lr_schedule"] = {"kind": "cosine", "warmup_steps": 3}
    before, training = weights(project), copy.deepcopy(project.training)
    position = rng_state()
    finding = find_learning_rate(project, folder=EXAMPLES, start=1e-4, end=1.0, steps=20)
    assert finding.steps == 20 and finding.stopped_early == ""
    assert_untouched(project, before, training)
    assert rng_state() == position


def test_rates_grow_exponentially_from_start_to_end_ignoring_the_schedule():
    project = example("spiral_mlp")
    project.training["lr_schedule"] = {"kind": "step", "step_size": 1, "gamma": 0.1}
    seen = []
    finding = find_learning_rate(project, folder=EXAMPLES, start=1e-5, end=1e-2, steps=12,
                                 progress=lambda step, rate, loss: seen.append((step, rate)))
    assert finding.steps == 12 and finding.stopped_early == ""
    assert finding.rates[0] == pytest.approx(1e-5) and finding.rates[-1] == pytest.approx(1e-2)
    ratios = finding.rates[1:] / finding.rates[:-1]
    assert np.allclose(ratios, ratios[0]) and ratios[0] > 1
    assert [step for step, _ in seen] == list(range(1, 13))
    assert np.allclose([rate for _, rate in seen], finding.rates)
    assert np.all(np.isfinite(finding.losses)) and len(finding.smoothed) == 12


def test_the_rate_each_step_used_is_the_one_the_optimizer_got(monkeypatch):
    """The trainer's own record of each step's rate matches the finder's schedule."""
    from app.session import Progress, TrainingSession

    used = []
    subscribe = TrainingSession.__init__

    def spy(self, *args, **kwargs):
        subscribe(self, *args, **kwargs)
        self.events.subscribe(lambda e: used.append(e.learning_rate)
                              if isinstance(e, Progress) else None)  # fmt: skip

    monkeypatch.setattr(TrainingSession, "__init__", spy)
    finding = find_learning_rate(example("spiral_mlp"), folder=EXAMPLES, start=1e-4,
                                 end=1e-1, steps=15)  # fmt: skip
    assert np.allclose(used, finding.rates, rtol=1e-6)


def test_it_stops_early_when_the_loss_blows_up_and_says_why():
    project = example("spiral_mlp")
    project.training["optimizer"] = "SGD"
    finding = find_learning_rate(project, folder=EXAMPLES, start=1e-3, end=1e6, steps=60)
    assert finding.steps < 60
    assert "smoothed loss passed 4× its lowest" in finding.stopped_early
    assert finding.smoothed[-1] > lr_finder.DIVERGE * finding.smoothed.min()
    assert f"{finding.rates[-1]:.3g}" in finding.stopped_early


def test_a_nan_or_infinite_loss_ends_the_search_with_the_reason(monkeypatch):
    monkeypatch.setattr(lr_finder, "DIVERGE", float("inf"))  # only a non-finite step stops it
    project = example("spiral_mlp")
    project.training.update(optimizer="SGD", loss="MSELoss")
    before = weights(project)
    finding = find_learning_rate(project, folder=EXAMPLES, start=1e-3, end=1e6, steps=30)
    assert 0 < finding.steps < 30
    assert "infinite or NaN" in finding.stopped_early
    assert np.all(np.isfinite(finding.losses))  # the failed step is not a point
    assert_untouched(project, before, project.training)


def test_should_stop_ends_the_search_with_what_it_has():
    calls = []
    finding = find_learning_rate(example("spiral_mlp"), folder=EXAMPLES, steps=50,
                                 progress=lambda *a: calls.append(a),
                                 should_stop=lambda: len(calls) >= 7)  # fmt: skip
    assert finding.steps == 7 and finding.stopped_early == STOPPED_BY_USER


def test_suggestions_steepest_descent_and_a_tenth_of_the_minimum():
    rates = np.logspace(-5, 0, 50)
    x = np.log10(rates)
    # falls fastest at 1e-3, lowest at 1e-1.5, then rises
    curve = 1.0 - 0.5 * np.tanh(3 * (x + 3)) + np.where(x > -1.5, (x + 1.5) ** 2, 0)
    steepest, min_tenth, suggestion = suggest(rates, curve)
    assert steepest == pytest.approx(1e-3, rel=0.3)
    assert min_tenth == pytest.approx(rates[np.argmin(curve)] / 10)
    assert suggestion == steepest
    # a curve that only rises has no descent: a tenth of the (first) minimum
    rising = np.linspace(1, 2, 50)
    assert suggest(rates, rising) == (None, rates[0] / 10, rates[0] / 10)
    # the steepest fall past the minimum is not suggested
    late = np.where(x < -1, 1 + (x + 5) * 0.01, 5 - 4 * np.tanh(3 * (x + 0.5)))
    late[10] = 0.5  # the minimum, early
    steepest, min_tenth, suggestion = suggest(rates, late)
    assert steepest > rates[10] and suggestion == min_tenth == rates[10] / 10
    assert suggest(np.array([]), np.array([])) == (None, None, None)


def test_smoothing_is_a_bias_corrected_moving_average():
    assert smooth([2.0, 2.0, 2.0]) == pytest.approx([2.0, 2.0, 2.0])
    smoothed = smooth([1.0, 3.0])
    assert smoothed[0] == pytest.approx(1.0)
    assert smoothed[1] == pytest.approx((0.98 * 0.02 * 1 + 0.02 * 3) / (1 - 0.98**2))


@pytest.mark.parametrize(("start", "end", "steps", "said"), [
    (1e-2, 1e-3, 20, r"start rate \(0.01\) must be below the end rate \(0.001\)"),
    (1e-2, 1e-2, 20, "must be below the end rate"),
    (0.0, 1.0, 20, "start rate must be a number from 1e-12 to 1e\\+06, not 0.0"),
    (1e-5, float("inf"), 20, "end rate must be a number from 1e-12 to 1e\\+06, not inf"),
    (1e-5, 1e7, 20, "end rate must be a number from"),
    (1e-5, 1.0, 10.0, "whole number from 5 to 10,000, not 10.0"),
    (1e-5, 1.0, 4, "whole number from 5 to 10,000, not 4"),
])  # fmt: skip
def test_bad_bounds_are_refused_with_what_is_allowed(start, end, steps, said):
    with pytest.raises(LRFinderError, match=said):
        find_learning_rate(example("spiral_mlp"), folder=EXAMPLES, start=start, end=end,
                           steps=steps)  # fmt: skip


def test_no_data_set_is_refused():
    project = example("spiral_mlp")
    del project.training["dataset"]
    with pytest.raises(LRFinderError, match="Choose a data set"):
        find_learning_rate(project, folder=EXAMPLES, steps=10)


def test_a_network_that_does_not_fit_the_data_is_refused(tmp_path):
    np.savez(tmp_path / "five.npz", x=np.zeros((40, 5), np.float32), y=np.arange(40) % 2)
    project = example("spiral_mlp")
    project.training["dataset"] = {"npz": "five.npz"}
    before = weights(project)
    with pytest.raises(LRFinderError, match=r"shape \(5,\)"):
        find_learning_rate(project, folder=tmp_path, steps=10)
    assert_untouched(project, before, project.training)


def test_a_given_data_set_is_used_and_not_read_again(monkeypatch):
    from app.session import settings
    from app.session.settings import load_dataset

    project = example("spiral_mlp")
    data = load_dataset(project.training["dataset"], EXAMPLES)
    monkeypatch.setattr(settings, "read_dataset", lambda *a: pytest.fail("read again"))
    finding = find_learning_rate(project, dataset=data, steps=10)
    assert finding.steps == 10
