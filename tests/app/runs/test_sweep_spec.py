"""Sweep specs: typed values and ranges read and checked with messages naming the axis and
the value, grid and random trials, node hyper-parameters checked against the network, and
the JSON round trip."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from app.io.project_file import load_project
from app.runs.sweep_spec import Axis, SweepSpec, SweepSpecError, sweepable
from app.runs.sweep_values import apply_trial, run_name

EXAMPLES = Path(__file__).resolve().parents[3] / "resources" / "examples"


@pytest.fixture(scope="module")
def spiral():
    return load_project(EXAMPLES / "spiral_mlp.cwproj")


def refused(items, project=None, **options) -> str:
    with pytest.raises(SweepSpecError) as caught:
        spec = SweepSpec.parse(items, **options)
        if project is not None:
            spec.trials(project)
    return str(caught.value)


def test_a_grid_is_every_combination_in_order(spiral):
    spec = SweepSpec.parse(["lr=0.001,0.01,0.1", "batch_size=32,64"])
    assert spec.count == 6
    assert spec.trials(spiral) == [
        {"learning_rate": lr, "batch_size": bs} for lr in (0.001, 0.01, 0.1) for bs in (32, 64)
    ]


def test_values_take_their_settings_kind():
    spec = SweepSpec.parse(["optimizer=adam, SGD", "epochs=2,3", "weight_decay=0,1e-4"])
    optimizer, epochs, decay = spec.axes
    assert optimizer.values == ("Adam", "SGD")
    assert epochs.values == (2, 3) and all(type(v) is int for v in epochs.values)
    assert decay.values == (0.0, 1e-4) and all(type(v) is float for v in decay.values)


def test_a_grid_range_takes_points_log_spaced_with_log(spiral):
    axis = Axis.parse("lr", "0.0001..0.1:log:4")
    assert axis.grid_values() == [0.0001, 0.001, 0.01, 0.1]
    linear = Axis.parse("batch_size", "16..64")  # 3 points by default, whole numbers
    assert linear.grid_values() == [16, 40, 64]
    spec = SweepSpec.parse(["lr=0.0001..0.1:log:4", "batch_size=16..64"])
    assert spec.count == 12 and len(spec.trials(spiral)) == 12


def test_random_trials_are_drawn_in_range_with_own_generator(spiral):
    np.random.seed(123)
    global_before = np.random.get_state()[1].copy()
    spec = SweepSpec.parse(["lr=1e-4..1e-1:log", "batch_size=8..128", "optimizer=Adam,SGD"],
                           mode="random", trials=20, seed=5)  # fmt: skip
    trials = spec.trials(spiral)
    assert len(trials) == 20
    assert np.array_equal(np.random.get_state()[1], global_before)  # global RNG untouched
    assert trials == spec.trials(spiral)  # same seed, same draws
    assert trials != SweepSpec.parse(["lr=1e-4..1e-1:log", "batch_size=8..128",
                                      "optimizer=Adam,SGD"], mode="random", trials=20,
                                     seed=6).trials(spiral)  # fmt: skip
    rates = [t["learning_rate"] for t in trials]
    assert all(1e-4 <= r <= 1e-1 for r in rates)
    # log-uniform: the draws spread over the decades, not bunched near the top
    assert sum(r < 1e-2 for r in rates) >= 8
    assert all(isinstance(t["batch_size"], int) and 8 <= t["batch_size"] <= 128 for t in trials)
    assert {t["optimizer"] for t in trials} == {"Adam", "SGD"}


def test_random_without_a_count_draws_eight(spiral):
    assert len(SweepSpec.parse(["lr=0.001..0.1"], mode="random").trials(spiral)) == 8


@pytest.mark.parametrize(("items", "message"), [
    (["batch_size=32,3.5"], "batch_size: '3.5' is not a whole number of 1 or more"),
    (["lr=0,0.1"], "lr: '0' is not a number above 0"),
    (["learning_rate=-1"], "learning_rate: '-1' is not a number above 0"),
    (["epochs=0"], "epochs: '0' is not a whole number of 1 or more"),
    (["weight_decay=-0.1"], "weight_decay: '-0.1' is not a number of 0 or more"),
    (["optimizer=Adam,Adamax"], "optimizer: 'Adamax' is not an optimizer: choose SGD,"),
    (["optimizer=1..3"], "optimizer: '1..3' is a range"),
    (["lr=abc"], "lr: 'abc' is not a number"),
    (["lr=nan"], "lr: 'nan' is not a finite number"),
    (["lr="], "lr: no values given"),
    (["lr=0.1..0.01"], "lr: the range 0.1..0.01 must go from low to high"),
    (["dense1.out_channels=-2..8:log"], "a log range must start above 0"),
    (["lr=0.001..0.1:cubic"], "':cubic' after a range is neither :log nor"),
    (["lr=0.01,0.01"], "lr: '0.01' is given twice"),
    (["lr0.01"], "'lr0.01' must be written NAME=VALUES"),
    (["speed=1,2"], "'speed' is not a setting a sweep can change"),
    (["lr=0.1", "learning_rate=0.2"], "learning_rate is given twice"),
])  # fmt: skip
def test_bad_values_are_refused_naming_axis_and_value(items, message):
    assert message in refused(items)


def test_a_grid_over_a_thousand_runs_is_refused():
    many = ",".join(str(n) for n in range(1, 102))
    message = refused(["lr=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0", f"batch_size={many}"])
    assert "A grid of 1,010 runs is too many: at most 1,000" in message
    assert SweepSpec.parse(["lr=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0",
                            f"batch_size={many[:many.rindex(',')]}"]).count == 1000  # fmt: skip


def test_the_metric_must_be_one_of_the_run_metrics():
    assert "'accuracy' is not a metric" in refused(["lr=0.1"], metric="accuracy")
    assert SweepSpec.parse(["lr=0.1"], metric="best_val_accuracy").metric == "best_val_accuracy"


def test_node_axes_are_checked_against_the_network(spiral):
    spec = SweepSpec.parse(["dense2.out_channels=16,64"])
    assert spec.trials(spiral) == [{"dense2.out_channels": 16}, {"dense2.out_channels": 64}]
    assert "the network has no node 'dense9'" in refused(["dense9.out_channels=8"], spiral)
    assert "dense2 (Dense) has no hyper-parameter 'width'; its numeric ones: in_channels, " \
        "out_channels" in refused(["dense2.width=8"], spiral)
    assert "activation of dense2 is a choice setting, not a number" in refused(
        ["dense2.activation=1,2"], spiral)
    assert "dense2.out_channels: '5.5' is not a whole number" in refused(
        ["dense2.out_channels=4,5.5"], spiral)
    # the catalogue's limits: out_channels is at least 1
    assert "dense2.out_channels: '0' can't be used: out_channels must be a whole number ≥ 1" \
        in refused(["dense2.out_channels=0,4"], spiral)
    # a float parameter takes float values
    label = SweepSpec.parse(["output1.label_smoothing=0,0.1"]).trials(spiral)
    assert [t["output1.label_smoothing"] for t in label] == [0.0, 0.1]
    assert all(type(t["output1.label_smoothing"]) is float for t in label)


def test_sweepable_lists_settings_and_numeric_node_parameters(spiral):
    names = sweepable(spiral)
    assert names[:5] == ["learning_rate", "batch_size", "optimizer", "weight_decay", "epochs"]
    assert "dense2.out_channels" in names and "output1.label_smoothing" in names
    assert "dense2.activation" not in names and "dense2.has_bias" not in names


def test_a_trial_applied_to_a_copy_sets_settings_and_lets_sizes_follow(spiral):
    from app.runs.copying import copy_project

    copy = copy_project(spiral, fresh=True)
    copy.training["optimizer"], copy.training["optimizer_options"] = "Momentum", {"momentum": 0.8}
    apply_trial(copy, {"optimizer": "Adam", "weight_decay": 1e-4, "learning_rate": 0.003,
                       "dense2.out_channels": 48}, epochs=2)  # fmt: skip
    assert copy.training["optimizer"] == "Adam"
    assert copy.training["optimizer_options"] == {"weight_decay": 1e-4}  # Adam has no momentum
    assert copy.training["learning_rate"] == 0.003 and copy.training["epochs"] == 2
    nodes = {n.name: n for n in copy.graph}
    assert nodes["dense2"].params["out_channels"] == 48
    assert nodes["dense3"].params["in_channels"] == 48  # followed the wider layer
    assert {n.name: n.params.get("out_channels") for n in spiral.graph}["dense2"] == 32
    assert run_name(1, {"learning_rate": 0.01, "batch_size": 64}) == \
        "sweep 2 · lr=0.01 batch_size=64"


def test_json_round_trip_gives_the_same_spec_and_trials(spiral):
    spec = SweepSpec.parse(["lr=1e-4..1e-1:log:4", "dense2.out_channels=16,32",
                            "optimizer=Adam,Momentum"], mode="random", trials=5, seed=3,
                           metric="best_val_accuracy", epochs=2)  # fmt: skip
    data = json.loads(json.dumps(spec.to_json()))  # what a project file keeps
    again = SweepSpec.from_json(data)
    assert again == spec
    assert again.trials(spiral) == spec.trials(spiral)


def test_damaged_json_is_refused_with_a_reason():
    with pytest.raises(SweepSpecError, match="The saved sweep can't be read"):
        SweepSpec.from_json({"mode": "grid"})
    with pytest.raises(SweepSpecError, match="batch_size: '0' is not a whole number"):
        SweepSpec.from_json({"axes": [{"name": "batch_size", "values": [0]}]})
    with pytest.raises(SweepSpecError, match="a grid or random"):
        SweepSpec.from_json({"axes": [{"name": "lr", "values": [0.1]}], "mode": "bayes"})


def test_axes_built_directly_are_checked_too():
    spec = SweepSpec((Axis("lr", values=(0.1, 0.01)), Axis("batch_size", low=8, high=32,
                                                           points=2)))  # fmt: skip
    assert spec.axes[0].name == "learning_rate" and spec.count == 4
    with pytest.raises(SweepSpecError, match="batch_size: '8.5' is not a whole number"):
        SweepSpec((Axis("batch_size", low=8.5, high=32),))
    assert math.isclose(Axis.parse("lr", "1e-3..1e-1:log").grid_values()[1], 0.01)


def test_weight_decay_is_refused_for_an_optimizer_without_one(spiral, monkeypatch):
    from app.runs import sweep_values

    real = sweep_values._keywords
    monkeypatch.setattr(sweep_values, "_keywords",  # as if SGD took no weight decay
                        lambda name: set() if name == "SGD" else real(name))
    message = refused(["optimizer=Adam,SGD", "weight_decay=0,0.01"], spiral)
    assert message.startswith("weight_decay: the SGD optimizer has no weight decay; sweep it "
                              "with Momentum, Adam")  # fmt: skip
    spiral_sgd = type(spiral)(graph=spiral.graph, training={**spiral.training,
                                                            "optimizer": "SGD"})  # fmt: skip
    assert "the SGD optimizer has no weight decay" in refused(["weight_decay=0.01"], spiral_sgd)
    assert len(SweepSpec.parse(["optimizer=Adam,Momentum", "weight_decay=0,0.01"])
               .trials(spiral)) == 4  # fmt: skip
