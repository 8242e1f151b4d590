"""TrainingSession: the loop, its events and metrics, and continuing a saved project exactly."""

import numpy as np
import pytest

from app.io.project_file import load_project, save_project
from app.session import (
    COMPLETED,
    EPOCH_COLUMNS,
    STEP_COLUMNS,
    STEP_LIMIT,
    EpochEnded,
    Progress,
    TrainingFinished,
    TrainingSession,
    TrainingStarted,
    is_optimizer_entry,
)
from tests.app.session.session_samples import bn_dropout_project, mlp_project, weights


def record(session):
    events = []
    session.events.subscribe(events.append)
    return events


def test_a_run_trains_every_planned_epoch_and_reports_it():
    project = mlp_project(epochs=3, validation_fraction=0.25)
    session = TrainingSession(project)
    events = record(session)
    result = session.run()
    per_epoch = session.train_set.batch_count(16)
    assert isinstance(result, TrainingFinished) and result.reason == COMPLETED
    assert (result.step, result.epoch) == (3 * per_epoch, 3)
    assert isinstance(events[0], TrainingStarted) and events[0].steps_planned == 3 * per_epoch
    assert events[-1] is result
    progress = [e for e in events if isinstance(e, Progress)]
    assert [e.step for e in progress] == list(range(1, 3 * per_epoch + 1))
    epochs = [e.metrics for e in events if isinstance(e, EpochEnded)]
    assert [m.epoch for m in epochs] == [1, 2, 3]
    assert all(m.val_loss is not None and 0 <= m.val_accuracy <= 1 for m in epochs)
    # The buffers hold one row per step and per epoch, in the documented columns.
    steps = session.metrics.steps.snapshot()
    assert steps.shape == (3 * per_epoch, len(STEP_COLUMNS))
    assert steps[-1, STEP_COLUMNS.index("loss")] == pytest.approx(progress[-1].loss)
    assert session.metrics.epochs.snapshot().shape == (3, len(EPOCH_COLUMNS))
    assert session.metrics.last_epoch() == epochs[-1]


def test_training_learns_and_the_weights_reach_the_project():
    project = mlp_project(dataset="moons", epochs=20)
    before = weights(TrainingSession(mlp_project(dataset="moons")))
    session = TrainingSession(project)
    assert weights(session).keys() == before.keys()
    session.run()
    loss, accuracy = session.evaluate()
    assert accuracy > 0.9 and loss < 0.4
    dense = project.graph.node_named("dense1").id
    np.testing.assert_array_equal(project.param_values[dense]["weight"],
                                  weights(session)["dense1.weight"])  # fmt: skip
    assert not np.array_equal(before["dense1.weight"], weights(session)["dense1.weight"])


def test_the_same_settings_give_the_same_weights():
    a, b = TrainingSession(bn_dropout_project()), TrainingSession(bn_dropout_project())
    a.run()
    b.run()
    for name, value in weights(a).items():
        np.testing.assert_array_equal(value, weights(b)[name])


# SGD with momentum and dampening keeps a per-parameter "first step" flag (MindSpore's
# `stat`): a single number, saved beside the Parameter's arrays.
OPTIMIZERS = {"Adam": {}, "AdamW": {}, "SGD": {}, "Momentum": {},
              "SGD-dampened": {"momentum": 0.9, "dampening": 0.5}, "RMSProp": {},
              "Adagrad": {}}  # fmt: skip


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
@pytest.mark.parametrize("first", [5, 9, 10])  # mid-epoch, and on an epoch boundary (9 per epoch)
def test_n_steps_saved_and_reopened_then_m_more_equal_n_plus_m_at_once(tmp_path, optimizer,
                                                                       first):  # fmt: skip
    start = tmp_path / "start.cwproj"
    project = bn_dropout_project(optimizer=optimizer.partition("-")[0], batch_size=12,
                                 epochs=5, optimizer_options=OPTIMIZERS[optimizer])
    save_project(project, start)
    total = 23

    at_once = TrainingSession(load_project(start))
    at_once.run(steps=total)

    part = load_project(start)
    TrainingSession(part).run(steps=first)
    middle = tmp_path / "middle.cwproj"
    save_project(part, middle)
    reopened = load_project(middle)
    assert any(is_optimizer_entry(k) for v in reopened.param_values.values() for k in v)
    resumed = TrainingSession(reopened)
    assert resumed.state.step == first
    result = resumed.run(steps=total - first)
    assert result.reason == STEP_LIMIT and result.step == total

    expected = weights(at_once)
    for name, value in weights(resumed).items():  # BatchNorm's moving statistics included
        np.testing.assert_array_equal(value, expected[name], err_msg=name)
    # The curves continue too: the same per-step losses, whichever way it ran.
    np.testing.assert_array_equal(resumed.metrics.steps.snapshot(),
                                  at_once.metrics.steps.snapshot())  # fmt: skip
    np.testing.assert_array_equal(resumed.metrics.epochs.snapshot(),
                                  at_once.metrics.epochs.snapshot())  # fmt: skip


def test_an_interrupted_run_is_continued_to_its_planned_end(tmp_path):
    project = mlp_project(epochs=3)
    per_epoch = TrainingSession(mlp_project()).train_set.batch_count(16)
    TrainingSession(project).run(steps=per_epoch + 2)
    save_project(project, tmp_path / "p.cwproj")
    session = TrainingSession(load_project(tmp_path / "p.cwproj"))
    assert session.state.unfinished
    result = session.run()
    assert result.reason == COMPLETED and (result.epoch, result.step) == (3, 3 * per_epoch)
    # Finished: training again runs the settings' epochs once more, or as many as asked.
    assert session.run().epoch == 6
    assert session.run(epochs=1).epoch == 7


def test_a_new_batch_size_starts_the_epoch_in_progress_over():
    project = mlp_project(epochs=2, batch_size=16)
    TrainingSession(project).run(steps=3)
    project.training["batch_size"] = 10
    session = TrainingSession(project)
    assert (session.state.step, session.state.batch, session.state.tally.count) == (3, 0, 0)
    result = session.run()
    assert result.step == 3 + 2 * session.train_set.batch_count(10)


def test_progress_survives_save_and_load_as_plain_data(tmp_path):
    project = mlp_project(epochs=2)
    TrainingSession(project).run()
    save_project(project, tmp_path / "p.cwproj")
    again = load_project(tmp_path / "p.cwproj")
    state = again.training["state"]
    assert state["step"] == project.training["state"]["step"] and state["epoch"] == 2
    assert len(state["history"]["epochs"]) == 2
    session = TrainingSession(again)
    assert len(session.metrics.epochs) == 2 and session.metrics.last_epoch().epoch == 2


def test_restart_ignores_saved_progress_but_keeps_the_weights():
    project = mlp_project(epochs=2)
    first = TrainingSession(project)
    first.run()
    trained = weights(first)
    session = TrainingSession(project, restart=True)
    assert session.state.step == 0 and len(session.metrics.steps) == 0
    assert not any(is_optimizer_entry(k) for v in project.param_values.values() for k in v)
    for name, value in weights(session).items():
        np.testing.assert_array_equal(value, trained[name])


def test_another_optimizer_starts_its_state_afresh():
    project = mlp_project(epochs=1, optimizer="Adam")
    TrainingSession(project).run()
    project.training["optimizer"] = "SGD"
    session = TrainingSession(project)
    assert session.optimizer.step_count == 0
    assert session.run().reason == COMPLETED
    assert project.training["state"]["optimizer"]["type"] == "SGD"


def test_evaluate_and_predict_leave_the_network_as_it_was():
    session = TrainingSession(bn_dropout_project())
    session.run(steps=3)
    before = weights(session)
    x = session.val_set.x[:5]
    first = session.predict(x)
    assert first.shape == (5, 2)
    np.testing.assert_array_equal(session.predict(x), first)  # no Dropout when predicting
    session.network.set_train(True)  # as the app's Train/Predict toggle may have left it
    np.testing.assert_array_equal(session.predict(x), first)  # no BatchNorm update either
    session.evaluate()
    assert session.network.training  # the toggle is left as it was
    for name, value in weights(session).items():
        np.testing.assert_array_equal(value, before[name])


@pytest.mark.parametrize("mode", [True, False])
def test_a_run_leaves_the_train_predict_mode_as_it_found_it(mode):
    session = TrainingSession(mlp_project())
    session.network.set_train(mode)
    session.run(steps=2)
    assert session.network.training is mode


def test_regression_has_no_accuracy():
    project = mlp_project(loss="MSELoss", inputs=1, outputs=1, dataset="sine", epochs=2)
    session = TrainingSession(project)
    result = session.run()
    assert result.metrics.accuracy is None and result.metrics.val_accuracy is None
    assert np.isnan(session.metrics.steps.snapshot()[:, STEP_COLUMNS.index("accuracy")]).all()


@pytest.mark.parametrize("loss", ["BCEWithLogitsLoss", "MSELoss", "L1Loss"])
def test_losses_that_want_numbers_get_one_hot_or_single_column_targets(loss):
    for outputs in (1, 2):
        session = TrainingSession(mlp_project(loss=loss, outputs=outputs, epochs=1))
        result = session.run()
        assert result.reason == COMPLETED and 0 <= result.metrics.accuracy <= 1


def test_settings_can_name_the_loss_over_the_output_node():
    project = mlp_project(loss="none")
    project.training["loss"] = "SoftmaxCrossEntropyWithLogits"
    session = TrainingSession(project)
    assert type(session.loss_fn).__name__ == "SoftmaxCrossEntropyWithLogits"
    assert session.run(steps=2).reason == STEP_LIMIT


def test_a_csv_data_set_is_read_beside_the_project(tmp_path):
    rows = ["a,b,label"] + [f"{i % 7},{i % 3},{i % 2}" for i in range(40)]
    (tmp_path / "points.csv").write_text("\n".join(rows))
    project = mlp_project(dataset={"csv": "points.csv", "label_column": "label"}, epochs=1)
    session = TrainingSession(project, folder=tmp_path)
    assert session.dataset.feature_names == ("a", "b")
    assert session.run().reason == COMPLETED
