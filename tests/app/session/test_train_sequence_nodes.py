"""A token network (Embedding, positional encodings, a reduction over time) trains
on integer token ids fed through an int Input: the loss goes down, the tables learn, and
the padding row of the Embedding never moves."""

import numpy as np
import pytest

from app.document import Project
from app.session import STEP_COLUMNS, TrainingError, TrainingFinished, TrainingSession
from tests.app.session.session_samples import chain, weights

LENGTH, VOCAB = 8, 12


def token_data(tmp_path) -> dict:
    """Sequences of ids 0..11 (0 is padding); class 1 when token 7 appears in them."""
    rng = np.random.default_rng(0)
    x = rng.integers(1, VOCAB, (256, LENGTH))
    x[rng.random(x.shape) < 0.2] = 0
    y = (x == 7).any(axis=1).astype(np.int64)
    np.savez(tmp_path / "tokens.npz", x=x, y=y)
    return {"dataset": {"npz": "tokens.npz", "x_key": "x", "y_key": "y"}, "optimizer": "Adam",
            "learning_rate": 0.02, "batch_size": 32, "epochs": 6, "seed": 0,
            "validation_fraction": 0.0}


EMBED = ("Embedding", {"vocab_size": VOCAB, "embedding_size": 8, "padding_idx": 0})
NETWORKS = {
    "max_over_time": [("Input", {"shape": (LENGTH,), "dtype": "int64"}), EMBED,
                      ("PositionalEncoding", {}), ("Dense", {"in_channels": 8,
                                                             "out_channels": 8}),
                      ("ReLU", {}), ("Max", {"axis": 1}),
                      ("Dense", {"in_channels": 8, "out_channels": 2}),
                      ("Output", {"loss": "CrossEntropyLoss"})],
    # Time first after a Transpose (1, 0, 2): the reduction over time is then axis 0.
    "learned_time_first": [("Input", {"shape": (LENGTH,), "dtype": "int32"}), EMBED,
                           ("LearnedPositionalEncoding", {"max_len": LENGTH,
                                                          "embedding_size": 8}),
                           ("Transpose", {"perm": (1, 0, 2)}),
                           ("Dense", {"in_channels": 8, "out_channels": 8}), ("Tanh", {}),
                           ("Max", {"axis": 0}),
                           ("Dense", {"in_channels": 8, "out_channels": 2}),
                           ("Output", {"loss": "CrossEntropyLoss"})],
}


@pytest.mark.parametrize("name", NETWORKS)
def test_a_token_network_trains(tmp_path, name):
    project = Project(graph=chain(*NETWORKS[name]), name=name, training=token_data(tmp_path))
    session = TrainingSession(project, folder=tmp_path)
    assert session.compiled.input_dtypes == [NETWORKS[name][0][1]["dtype"]]
    before = weights(session)
    result = session.run()
    assert isinstance(result, TrainingFinished), result
    losses = session.metrics.steps.snapshot()[:, STEP_COLUMNS.index("loss")]
    assert len(losses) == 6 * 8 and np.all(np.isfinite(losses))
    assert losses[-5:].mean() < 0.8 * losses[:5].mean()
    after = weights(session)
    table = after["embedding1.embedding_table"]
    assert not np.array_equal(table, before["embedding1.embedding_table"])
    assert not table[0].any()  # the padding row


def test_a_token_id_beyond_the_vocabulary_is_refused_before_training(tmp_path):
    """Ids up to 11 into an Embedding of 6 ids: the session refuses to start, naming the id,
    the node and its vocab_size, instead of failing inside the first step."""
    first, _, *rest = NETWORKS["max_over_time"]
    small = ("Embedding", {"vocab_size": 6, "embedding_size": 8, "padding_idx": 0})
    project = Project(graph=chain(first, small, *rest), name="small",
                      training=token_data(tmp_path))
    with pytest.raises(TrainingError, match=r"token id 11, but the Embedding 'embedding1' has "
                                            r"vocab_size 6 \(ids 0 to 5\); raise its "
                                            r"vocab_size to 12 or more"):
        TrainingSession(project, folder=tmp_path)
