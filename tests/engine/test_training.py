"""End to end: small networks learn real tasks with the engine's layers, losses and optimizers.

Each run is seeded with `engine.set_seed`, takes a second or two, and is
deterministic: the same seed gives bit-identical weights.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import engine
from engine import Tensor, nn

DIGITS = Path(__file__).resolve().parents[2] / "resources" / "data" / "digits.npz"


def two_spirals(n_per_class: int = 200, turns: float = 1.5, noise: float = 0.03, seed: int = 0):
    """Two interleaved spiral arms in [-1, 1]^2, labels 0 and 1."""
    rs = np.random.RandomState(seed)
    xs, ys = [], []
    for label in (0, 1):
        t = np.sqrt(rs.rand(n_per_class)) * turns * 2 * np.pi
        r = t / (turns * 2 * np.pi)
        angle = t + label * np.pi
        pts = np.stack([r * np.cos(angle), r * np.sin(angle)], axis=1)
        xs.append(pts + noise * rs.randn(n_per_class, 2))
        ys.append(np.full(n_per_class, label))
    order = rs.permutation(2 * n_per_class)
    return (np.concatenate(xs)[order].astype(np.float32),
            np.concatenate(ys)[order].astype(np.int64))


def _accuracy(net, x, y) -> float:
    net.set_train(False)
    pred = net(Tensor(x)).asnumpy().argmax(axis=1)
    return float((pred == y).mean())


def train_spiral(seed: int = 0):
    engine.set_seed(seed)
    x, y = two_spirals()
    net = nn.SequentialCell(nn.Dense(2, 16), nn.Tanh(), nn.Dense(16, 16), nn.Tanh(),
                            nn.Dense(16, 2))
    loss_fn = nn.CrossEntropyLoss()
    opt = nn.Adam(net.trainable_params(), learning_rate=0.02)

    def forward(data, label):
        return loss_fn(net(data), label)

    grad_fn = engine.value_and_grad(forward, None, opt.parameters)
    net.set_train()
    rng = engine._random.rng()
    for epoch in range(150):
        if epoch == 100:
            opt.learning_rate = 0.005  # anneal: the lr can change between steps
        order = rng.permutation(len(x))
        for start in range(0, len(x), 32):
            batch = order[start:start + 32]
            loss, grads = grad_fn(Tensor(x[batch]), Tensor(y[batch]))
            opt(grads)
    return net, x, y, float(loss.asnumpy())


def test_mlp_learns_two_spirals():
    net, x, y, last_loss = train_spiral()
    assert _accuracy(net, x, y) > 0.95
    hx, hy = two_spirals(seed=1)  # fresh points from the same spirals
    assert _accuracy(net, hx, hy) > 0.9
    assert np.isfinite(last_loss)


def test_training_is_deterministic_under_a_seed():
    a, *_ = train_spiral(seed=3)
    b, *_ = train_spiral(seed=3)
    for pa, pb in zip(a.get_parameters(), b.get_parameters(), strict=True):
        assert np.array_equal(pa.asnumpy(), pb.asnumpy())


def load_digits():
    with np.load(DIGITS, allow_pickle=False) as f:
        images, labels = f["images"], f["labels"]
    x = (images.astype(np.float32) / 16.0)[:, None, :, :]
    order = np.random.RandomState(0).permutation(len(labels))
    test, train = order[:360], order[360:]
    return x[train], labels[train], x[test], labels[test]


def test_digits_data_set_is_shipped_intact():
    with np.load(DIGITS, allow_pickle=False) as f:
        images, labels = f["images"], f["labels"]
    assert images.shape == (1797, 8, 8) and images.dtype == np.uint8
    assert labels.shape == (1797,) and labels.dtype == np.int64
    assert images.max() == 16 and set(np.unique(labels)) == set(range(10))
    assert (DIGITS.parent / "README.md").read_text().count("CC BY 4.0") >= 1


def train_digits_cnn(seed: int = 0, epochs: int = 8):
    engine.set_seed(seed)
    x_train, y_train, x_test, y_test = load_digits()
    net = nn.SequentialCell(
        nn.Conv2d(1, 8, 3, pad_mode="same", has_bias=True), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(8, 16, 3, pad_mode="same", has_bias=True), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(), nn.Dense(16 * 2 * 2, 10),
    )
    train_step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()),
                                     nn.Adam(net.trainable_params(), learning_rate=0.01))
    net.set_train()
    rng = engine._random.rng()
    losses = []
    for _ in range(epochs):
        order = rng.permutation(len(y_train))
        for start in range(0, len(order), 64):
            batch = order[start:start + 64]
            losses.append(float(train_step(Tensor(x_train[batch]),
                                           Tensor(y_train[batch])).asnumpy()))
    return net, losses, _accuracy(net, x_test, y_test)


def test_small_cnn_learns_digits():
    net, losses, test_accuracy = train_digits_cnn()
    assert test_accuracy > 0.9, test_accuracy
    assert np.mean(losses[-10:]) < 0.25 * np.mean(losses[:10])
    _, again, again_accuracy = train_digits_cnn(epochs=1)
    assert again == losses[:len(again)]  # same seed, same losses, bit for bit
