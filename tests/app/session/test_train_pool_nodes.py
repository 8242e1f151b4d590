"""Networks built from every pooling, resampling and padding node train on the 8×8 digits:
they compile, gradients flow through each node, and the loss falls."""

import numpy as np
import pytest

from app.document import Project
from app.session import STEP_COLUMNS, TrainingSession
from tests.app.session.session_samples import chain

IMAGE = [  # (N, 1, 8, 8) through the 2-D nodes
    ("Input", {"shape": (1, 8, 8)}),
    ("ConstantPad2d", {"padding": 1, "value": 0.0}),
    ("Conv2d", {"in_channels": 1, "out_channels": 8, "kernel_size": 3, "pad_mode": "valid"}),
    ("ReLU", {}),
    ("PixelShuffle", {"upscale_factor": 2}),  # (2, 16, 16)
    ("ReflectionPad2d", {"padding": 1}),
    ("Conv2d", {"in_channels": 2, "out_channels": 8, "kernel_size": 3, "pad_mode": "valid"}),
    ("AdaptiveMaxPool2d", {"output_size": 4}),
    ("Upsample", {"scale_factor": 0.5, "mode": "bilinear"}),  # (8, 2, 2)
    ("ZeroPad2d", {"padding": (1, 1, 0, 1)}),
    ("ReplicationPad2d", {"padding": 1}),
    ("Upsample", {"size": (4, 4), "scale_factor": None}),
    ("AdaptiveAvgPool2d", {"output_size": 2}),
    ("Flatten", {}),
    ("Dense", {"in_channels": 32, "out_channels": 10}),
    ("Output", {"loss": "CrossEntropyLoss"}),
]
SEQUENCE = [  # each image as 8 channels of length 8, through the 1-D nodes
    ("Input", {"shape": (1, 8, 8)}),
    ("Reshape", {"shape": (8, 8)}),
    ("MaxPool1d", {"kernel_size": 2, "stride": 1}),  # (8, 7)
    ("AvgPool1d", {"kernel_size": 3, "stride": 1, "pad_mode": "pad", "padding": 1}),
    ("Upsample", {"size": 10, "scale_factor": None, "mode": "linear"}),
    ("AdaptiveMaxPool1d", {"output_size": 5}),
    ("AdaptiveAvgPool1d", {"output_size": 2}),
    ("Flatten", {}),
    ("Dense", {"in_channels": 16, "out_channels": 10}),
    ("Output", {"loss": "CrossEntropyLoss"}),
]
VOLUME = [  # each image as a 4×4×4 volume, through the 3-D nodes
    ("Input", {"shape": (1, 8, 8)}),
    ("Reshape", {"shape": (1, 4, 4, 4)}),
    ("Upsample", {"scale_factor": 1.5, "mode": "trilinear"}),  # (1, 6, 6, 6)
    ("MaxPool3d", {"kernel_size": 2, "stride": 1}),  # (1, 5, 5, 5)
    ("AvgPool3d", {"kernel_size": 3, "stride": 2, "pad_mode": "same"}),  # (1, 3, 3, 3)
    ("Flatten", {}),
    ("Dense", {"in_channels": 27, "out_channels": 10}),
    ("Output", {"loss": "CrossEntropyLoss"}),
]


@pytest.mark.parametrize("layers", [IMAGE, SEQUENCE, VOLUME], ids=["image", "sequence",
                                                                   "volume"])
def test_a_network_of_these_nodes_trains_and_its_loss_falls(layers):
    settings = {"dataset": {"builtin": "digits", "options": {"n_samples": 240}},
                "optimizer": "Adam", "learning_rate": 0.03, "batch_size": 16, "epochs": 8,
                "seed": 0}  # fmt: skip
    project = Project(graph=chain(*layers), name="pools", training=settings)
    session = TrainingSession(project)
    names = {type(c).__name__ for c in session.compiled.cells.values()}
    assert {t for t, _ in layers[1:-1]} - {"Input"} <= names
    session.run()
    losses = session.metrics.steps.snapshot()[:, STEP_COLUMNS.index("loss")]
    assert len(losses) == 8 * session.train_set.batch_count(16) and np.isfinite(losses).all()
    assert losses[-5:].mean() < 0.85 * losses[:5].mean()
