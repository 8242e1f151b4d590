"""Each loss the Output node gained trains a small project end to end, on the labels it wants;
where a data set can't mean what the loss needs, training is refused with the reason."""

import numpy as np
import pytest

from app.compiler import CompileError
from app.document import Project
from app.session import COMPLETED, EPOCH_COLUMNS, TrainingError, TrainingSession
from tests.app.session.session_samples import chain, mlp_project


def project_with(last: tuple[str, dict] | None, loss: str, outputs: int = 2, inputs: int = 2,
                 dataset: str = "moons", **output) -> Project:  # fmt: skip
    """Input → Dense → Tanh → Dense → [last] → Output(loss), a few epochs."""
    layers = [("Input", {"shape": (inputs,)}),
              ("Dense", {"in_channels": inputs, "out_channels": 16}), ("Tanh", {}),
              ("Dense", {"in_channels": 16, "out_channels": outputs})]  # fmt: skip
    if last is not None:
        layers.append(last)
    layers.append(("Output", {"loss": loss, **output}))
    settings = {"dataset": {"builtin": dataset, "options": {"n_samples": 160}},
                "learning_rate": 0.02, "batch_size": 16, "epochs": 6, "seed": 0}  # fmt: skip
    return Project(graph=chain(*layers), name="losses", training=settings)


LOG_SOFTMAX = ("LogSoftmax", {})
SIGMOID = ("Sigmoid", {})

TRAINED = {
    "NLLLoss": dict(last=LOG_SOFTMAX),
    "NLLLoss-sum": dict(last=LOG_SOFTMAX, loss="NLLLoss", reduction="sum"),
    "KLDivLoss": dict(last=LOG_SOFTMAX),
    "KLDivLoss-batchmean": dict(last=LOG_SOFTMAX, loss="KLDivLoss", reduction="batchmean"),
    "BCELoss": dict(last=SIGMOID),
    "BCELoss-one-column": dict(last=SIGMOID, loss="BCELoss", outputs=1),
    "SmoothL1Loss": dict(last=None),
    "SmoothL1Loss-beta": dict(last=None, loss="SmoothL1Loss", beta=0.25),
    "HuberLoss": dict(last=None),
    "HuberLoss-delta": dict(last=None, loss="HuberLoss", delta=0.3),
    "SmoothL1Loss-regression": dict(last=None, loss="SmoothL1Loss", outputs=1, inputs=1,
                                    dataset="sine"),
    "HuberLoss-regression": dict(last=None, loss="HuberLoss", outputs=1, inputs=1,
                                 dataset="sine"),
}


@pytest.mark.parametrize("key", TRAINED)
def test_each_new_loss_trains_and_its_loss_falls(key):
    options = dict(TRAINED[key])
    loss = options.pop("loss", key)
    session = TrainingSession(project_with(options.pop("last"), loss, **options))
    assert type(session.loss_fn).__name__ == loss
    for name, value in options.items():
        if name in ("reduction", "beta", "delta"):
            assert getattr(session.loss_fn, name) == value  # the Output node's value is used
    result = session.run()
    assert result.reason == COMPLETED
    losses = session.metrics.epochs.snapshot()[:, EPOCH_COLUMNS.index("loss")]
    assert len(losses) == 6 and np.isfinite(losses).all()
    assert losses[-1] < 0.8 * losses[0], losses
    if options.get("dataset") == "sine":
        assert result.metrics.accuracy is None
    else:
        assert result.metrics.accuracy > 0.75


def test_smooth_l1_trains_on_the_mean_though_mindspore_defaults_to_none():
    session = TrainingSession(mlp_project(loss="SmoothL1Loss", epochs=1))
    assert session.loss_fn.reduction == "mean"
    assert session.run().reason == COMPLETED


@pytest.mark.parametrize("loss", ["NLLLoss", "KLDivLoss", "BCELoss"])
def test_losses_of_classes_refuse_a_regression(loss):
    project = project_with(None, loss, outputs=1, inputs=1, dataset="sine")
    with pytest.raises(TrainingError, match=rf"{loss} needs class labels, but the data set is a "
                                            r"regression; use MSELoss, L1Loss, SmoothL1Loss"):
        TrainingSession(project)


@pytest.mark.parametrize("loss", ["NLLLoss", "KLDivLoss"])
def test_log_probability_losses_need_one_value_per_class(loss):
    with pytest.raises(TrainingError, match=r"shape \(1,\) per sample.*exactly 2 values"):
        TrainingSession(project_with(LOG_SOFTMAX, loss, outputs=1))
    with pytest.raises(TrainingError, match=r"shape \(3,\) per sample.*exactly 2 values"):
        TrainingSession(project_with(LOG_SOFTMAX, loss, outputs=3))


def test_bce_without_a_sigmoid_is_refused_with_the_reason():
    with pytest.raises(TrainingError, match=r"probabilities in \[0, 1\] \(e\.g\. after a "
                                            r"Sigmoid\)"):
        TrainingSession(project_with(None, "BCELoss"))


def test_kl_div_compares_with_the_one_hot_distribution_of_the_labels():
    session = TrainingSession(project_with(LOG_SOFTMAX, "KLDivLoss", outputs=2))
    y = np.array([1, 0, 1])
    labels = session.targets.for_loss(y, (3, 2)).asnumpy()
    np.testing.assert_array_equal(labels, [[0, 1], [1, 0], [0, 1]])
    nll = TrainingSession(project_with(LOG_SOFTMAX, "NLLLoss"))
    np.testing.assert_array_equal(nll.targets.for_loss(y, (3, 2)).asnumpy(), y)


def test_smooth_l1_chosen_in_the_run_dock_trains_on_a_mean_not_mindspores_none():
    project = project_with(None, "none", outputs=1, inputs=1, dataset="sine")
    project.training["loss"] = "SmoothL1Loss"  # the Run dock's choice, over the Output's none
    session = TrainingSession(project)
    assert type(session.loss_fn).__name__ == "SmoothL1Loss"
    assert session.loss_fn.reduction == "mean"
    assert session.run().reason == COMPLETED
    losses = session.metrics.epochs.snapshot()[:, EPOCH_COLUMNS.index("loss")]
    assert np.isfinite(losses).all() and losses[-1] < losses[0]


def test_batchmean_is_kl_divergence_s_alone_and_refused_elsewhere_with_the_reason():
    project = project_with(None, "MSELoss", reduction="batchmean")
    with pytest.raises(CompileError, match="output1: MSELoss can't reduce by 'batchmean' "
                                           r"\(KLDivLoss only\)"):
        TrainingSession(project)
