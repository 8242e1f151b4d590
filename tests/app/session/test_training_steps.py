"""Single steps, weight snapshots at step boundaries, and what a run tells about its numbers."""

import threading

import numpy as np
import pytest

from app.session import (
    Progress,
    TrainingError,
    TrainingFailed,
    TrainingFinished,
    TrainingPaused,
    TrainingSession,
)
from tests.app.session.session_samples import mlp_project, weights

TIMEOUT = 30


def paused_session(at: int = 3) -> tuple[TrainingSession, list]:
    """A session running on its thread, paused after step `at`; and every event it sent."""
    session = TrainingSession(mlp_project(epochs=50))
    events, reached, paused = [], threading.Event(), threading.Event()
    go = threading.Event()

    def listen(event):
        events.append(event)
        if isinstance(event, Progress) and event.step == at:
            reached.set()
            assert go.wait(TIMEOUT)
        if isinstance(event, TrainingPaused):
            paused.set()

    session.events.subscribe(listen)
    session.start()
    assert reached.wait(TIMEOUT)
    session.pause()
    go.set()
    assert paused.wait(TIMEOUT)
    return session, events


def wait_for(predicate) -> None:
    done = threading.Event()
    for _ in range(TIMEOUT * 100):
        if predicate():
            return
        done.wait(0.01)
    raise AssertionError("timed out")


def test_step_from_a_pause_trains_exactly_one_batch_and_stays_paused():
    session, events = paused_session(at=3)
    before = weights(session)
    session.step()
    wait_for(lambda: sum(isinstance(e, TrainingPaused) for e in events) == 2)
    assert session.state.step == 4 and session.status == "paused"
    assert any(not np.array_equal(before[k], v) for k, v in weights(session).items())
    assert [e.step for e in events if isinstance(e, Progress)] == [1, 2, 3, 4]
    session.step()
    session.step()  # two presses: two more steps
    wait_for(lambda: session.state.step == 6)
    assert session.wait(0.2) is None and session.state.step == 6
    session.stop()
    assert isinstance(session.wait(TIMEOUT), TrainingFinished)


def test_step_with_no_run_trains_one_batch_and_ends():
    session = TrainingSession(mlp_project())
    session.step()
    result = session.wait(TIMEOUT)
    assert isinstance(result, TrainingFinished) and result.step == 1
    assert session.status == "ready" and session.state.unfinished
    session.step()
    assert session.wait(TIMEOUT).step == 2


def test_a_snapshot_is_taken_between_steps_only_when_asked():
    session = TrainingSession(mlp_project(epochs=2))
    snapshot = session.snapshot
    session.run(steps=3)
    assert snapshot.version == 0  # nobody asked: the steps paid nothing
    snapshot.request()
    seen = {}
    session.events.subscribe(
        lambda e: isinstance(e, Progress) and seen.setdefault(e.step, weights(session))
    )
    session.run(steps=2)
    assert snapshot.version == 1 and not snapshot.requested
    assert snapshot.step == 3  # taken before step 4, after step 3
    copied = snapshot.values()
    assert set(copied) == set(seen[4])
    assert not np.array_equal(copied["dense1.weight"], seen[4]["dense1.weight"])


def test_a_paused_run_offers_its_weights_and_copy_into_fills_another_network():
    session, _ = paused_session(at=2)
    try:
        snapshot = session.snapshot
        assert snapshot.version >= 1 and snapshot.step == 2  # served as the run paused
        other = TrainingSession(mlp_project(epochs=50), restart=True)
        assert snapshot.copy_into(other.compiled.parameters()) == 2
        for name, value in weights(other).items():
            np.testing.assert_array_equal(value, weights(session)[name])
    finally:
        session.stop()
        session.wait(TIMEOUT)


def test_a_nan_run_names_the_first_layer_whose_output_went_bad():
    session = TrainingSession(mlp_project())
    session.network.dense2.weight.asnumpy()[0, 0] = np.inf  # dense1 and tanh stay finite
    start = weights(session)
    result = session.run()
    assert isinstance(result, TrainingFailed) and result.step == 1
    assert "first layer whose output became infinite or NaN is dense2" in result.message
    for name, value in weights(session).items():  # the search moved nothing
        np.testing.assert_array_equal(value, start[name])


def test_progress_carries_the_running_mean_of_the_epoch_and_the_batch_values():
    session = TrainingSession(mlp_project(epochs=1))
    progress = []
    session.events.subscribe(lambda e: isinstance(e, Progress) and progress.append(e))
    session.run()
    losses = [p.loss for p in progress]
    assert progress[0].mean_loss == pytest.approx(losses[0])
    assert progress[2].mean_loss != pytest.approx(progress[2].loss)
    last = session.metrics.last_epoch()
    assert progress[-1].mean_loss == pytest.approx(last.loss)  # the epoch's train loss
    assert progress[-1].mean_accuracy == pytest.approx(last.accuracy)


MOONS = {"builtin": "moons", "options": {"n_samples": 100}}


@pytest.mark.parametrize(("outputs", "loss", "dataset", "refused"), [
    (8, "CrossEntropyLoss", MOONS, "exactly 2 values"),  # 6 scores for classes never seen
    (8, "SoftmaxCrossEntropyWithLogits", MOONS, "exactly 2 values"),
    (3, "CrossEntropyLoss", MOONS, "exactly 2 values"),
    (8, "MSELoss", MOONS, "2 values (one per class) or 1"),
    (8, "BCEWithLogitsLoss", MOONS, "2 values (one per class) or 1"),
    (2, "MSELoss", "sine", "1 value"),
    (2, "CrossEntropyLoss", MOONS, None),
    (2, "MSELoss", MOONS, None),  # one-hot targets
    (1, "MSELoss", MOONS, None),  # a 0/1 target
    (1, "BCEWithLogitsLoss", MOONS, None),  # one logit for two classes
    (2, "L1Loss", MOONS, None),
    (1, "L1Loss", "sine", None),  # regression onto one target
])  # fmt: skip
def test_the_output_width_must_mean_something_to_the_loss(outputs, loss, dataset, refused):
    inputs = 1 if dataset == "sine" else 2
    project = mlp_project(inputs=inputs, outputs=outputs, loss=loss, dataset=dataset)
    if refused is None:
        TrainingSession(project).run(steps=2)
        return
    with pytest.raises(TrainingError) as error:
        TrainingSession(project)
    message = str(error.value)
    assert f"({outputs},)" in message and refused in message and loss in message


def test_an_output_narrower_than_the_classes_is_refused_naming_both():
    project = mlp_project(outputs=1)  # one score for two spiral arms
    with pytest.raises(TrainingError) as error:
        TrainingSession(project)
    message = str(error.value)
    assert "(1,)" in message and "2 classes" in message and "exactly 2" in message
    TrainingSession(mlp_project(outputs=1, loss="BCEWithLogitsLoss"))  # one logit is fine
    regression = mlp_project(inputs=1, outputs=2, dataset="sine", loss="MSELoss")
    with pytest.raises(TrainingError, match=r"\(2,\).*1 regression target"):
        TrainingSession(regression)
