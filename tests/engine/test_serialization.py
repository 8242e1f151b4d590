"""Checkpoints: .npz round trip, atomic writes, refused pickles and corrupt files, safe loading."""

from __future__ import annotations

import os
import pickle
import zipfile

import numpy as np
import pytest

import engine
from engine import Parameter, Tensor, nn, ops
from engine.serialization import CheckpointError


class Block(nn.Cell):
    def __init__(self, n_in=2, n_out=3):
        super().__init__()
        rs = np.random.RandomState(n_in * 10 + n_out)
        self.weight = Parameter(rs.randn(n_out, n_in).astype(np.float32), name="weight")
        self.bias = Parameter(rs.randn(n_out).astype(np.float32), name="bias")
        self.count = Parameter(np.array([0, 0], dtype=np.int64), name="count",
                               requires_grad=False)

    def construct(self, x):
        return ops.matmul(x, self.weight.T) + self.bias


class Net(nn.Cell):
    def __init__(self, hidden=3):
        super().__init__()
        self.layer1 = Block(2, hidden)
        self.layer2 = Block(hidden, 1)

    def construct(self, x):
        return self.layer2(ops.relu(self.layer1(x)))


NAMES = ["layer1.weight", "layer1.bias", "layer1.count", "layer2.weight", "layer2.bias",
         "layer2.count"]


def _values(net):
    return {p.name: p.asnumpy().copy() for p in net.get_parameters()}


def _scramble(net):
    for p in net.get_parameters():
        p.set_data(Tensor(np.full(p.shape, 7, dtype=p.asnumpy().dtype)))


def test_round_trip_writes_exactly_the_given_file(tmp_path):
    net = Net()
    path = tmp_path / "model.ckpt"  # no .npz suffix is added
    engine.save_checkpoint(net, str(path))
    assert sorted(os.listdir(tmp_path)) == ["model.ckpt"]
    with np.load(path, allow_pickle=False) as f:
        assert sorted(f.files) == sorted(NAMES)
        assert f["layer1.weight"].dtype == np.float32 and f["layer1.count"].dtype == np.int64
    params = engine.load_checkpoint(path)
    assert list(params) == NAMES
    assert all(isinstance(p, Parameter) and p.name == n for n, p in params.items())
    expected = _values(net)
    other = Net()
    _scramble(other)
    assert engine.load_param_into_net(other, params) == ([], [])
    for name, value in _values(other).items():
        assert value.dtype == expected[name].dtype
        np.testing.assert_array_equal(value, expected[name])


def test_load_checkpoint_with_net_loads_it(tmp_path):
    net, other = Net(), Net()
    _scramble(other)
    engine.save_checkpoint(net, tmp_path / "a.npz")
    engine.load_checkpoint(tmp_path / "a.npz", net=other)
    np.testing.assert_array_equal(other.layer2.weight.asnumpy(), net.layer2.weight.asnumpy())


def test_save_lists_of_parameters_or_dicts_and_append_dict(tmp_path):
    net = Net()
    engine.save_checkpoint(net.trainable_params(), tmp_path / "p.npz")
    assert sorted(engine.load_checkpoint(tmp_path / "p.npz")) == sorted(
        ["layer1.weight", "layer1.bias", "layer2.weight", "layer2.bias"])
    entries = [{"name": "w", "data": Tensor(np.ones((2, 2), np.float32))},
               {"name": "step", "data": np.array(3)}]
    engine.save_checkpoint(entries, tmp_path / "d.npz", append_dict={"epoch": 5, "lr": 0.01})
    loaded = engine.load_checkpoint(tmp_path / "d.npz")
    assert loaded["w"].asnumpy().tolist() == [[1, 1], [1, 1]]
    assert int(loaded["epoch"].asnumpy()) == 5 and float(loaded["lr"].asnumpy()) == 0.01


def test_prefix_filters(tmp_path):
    engine.save_checkpoint(Net(), tmp_path / "n.npz")
    only1 = engine.load_checkpoint(tmp_path / "n.npz", specify_prefix="layer1.")
    assert sorted(only1) == ["layer1.bias", "layer1.count", "layer1.weight"]
    no_count = engine.load_checkpoint(tmp_path / "n.npz", filter_prefix=("layer1.c", "layer2.c"))
    assert "layer1.count" not in no_count and "layer2.weight" in no_count


def test_save_replaces_atomically_and_cleans_up_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "model.npz"
    engine.save_checkpoint(Net(), path)
    before = path.read_bytes()
    calls = []
    real = np.lib.format.write_array

    def failing(fh, arr, **kw):
        calls.append(1)
        if len(calls) == 3:
            raise OSError("disk full")
        return real(fh, arr, **kw)

    monkeypatch.setattr(np.lib.format, "write_array", failing)
    with pytest.raises(OSError, match="disk full"):
        engine.save_checkpoint(Net(hidden=5), path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.npz"]  # no temporary file left behind


def test_saving_refuses_duplicate_names_and_non_numbers(tmp_path):
    with pytest.raises(ValueError, match="two parameters are named 'w'"):
        engine.save_checkpoint([Parameter(np.zeros(2), name="w"), Parameter(np.ones(2), name="w")],
                               tmp_path / "x.npz")
    with pytest.raises(TypeError, match="only numeric"):
        engine.save_checkpoint([{"name": "s", "data": np.array(["text"])}], tmp_path / "x.npz")
    assert not (tmp_path / "x.npz").exists()


# ----------------------------------------------------------------------------- loading safely


def test_missing_parameter_is_reported_and_nothing_changes(tmp_path):
    small = Net()
    engine.save_checkpoint([p for p in small.get_parameters() if p.name != "layer2.bias"],
                           tmp_path / "m.npz")
    params = engine.load_checkpoint(tmp_path / "m.npz")
    target = Net()
    _scramble(target)
    before = _values(target)
    with pytest.raises(CheckpointError, match=r"missing from the checkpoint: 'layer2.bias' \(1,\)"):
        engine.load_param_into_net(target, params)
    for name, value in _values(target).items():
        np.testing.assert_array_equal(value, before[name])
    # Fine-tuning: load what is there, report the rest.
    not_loaded, unused = engine.load_param_into_net(target, params, allow_missing=True)
    assert not_loaded == ["layer2.bias"] and unused == []
    np.testing.assert_array_equal(target.layer2.weight.asnumpy(), small.layer2.weight.asnumpy())


def test_misshaped_parameter_is_reported_with_both_shapes_and_nothing_changes(tmp_path):
    engine.save_checkpoint(Net(hidden=4), tmp_path / "wide.npz")
    params = engine.load_checkpoint(tmp_path / "wide.npz")
    target = Net(hidden=3)
    before = _values(target)
    with pytest.raises(CheckpointError) as info:
        engine.load_param_into_net(target, params)
    message = str(info.value)
    assert "nothing was loaded" in message
    assert "'layer1.weight': expected shape (3, 2), found (4, 2)" in message
    assert "'layer2.weight': expected shape (1, 3), found (1, 4)" in message
    for name, value in _values(target).items():  # layer1.count fit, but was not written either
        np.testing.assert_array_equal(value, before[name])


def test_unused_checkpoint_entries_and_incompatible_dtypes(tmp_path):
    net = Net()
    engine.save_checkpoint(net, tmp_path / "n.npz", append_dict={"epoch": 3})
    params = engine.load_checkpoint(tmp_path / "n.npz")
    assert engine.load_param_into_net(Net(), params) == ([], ["epoch"])
    params["layer1.count"] = Parameter(np.array([0.5, 1.5]), name="layer1.count")
    with pytest.raises(CheckpointError, match="float64 value cannot go into a int64"):
        engine.load_param_into_net(Net(), params)


def test_float64_values_load_into_float32_parameters():
    net = Net()
    value = np.arange(6, dtype=np.float64).reshape(3, 2) / 3
    params = {p.name: p for p in net.get_parameters()}
    params["layer1.weight"] = Parameter(value, name="layer1.weight")
    engine.load_param_into_net(net, params)
    assert net.layer1.weight.dtype == engine.float32
    np.testing.assert_allclose(net.layer1.weight.asnumpy(), value, rtol=1e-7)


def test_non_strict_load_matches_a_unique_dotted_suffix():
    net = Net()
    params = {"backbone." + p.name: p for p in Net().get_parameters()}
    assert engine.load_param_into_net(net, params) == ([], [])
    with pytest.raises(CheckpointError, match="missing"):
        engine.load_param_into_net(net, params, strict_load=True)


def test_loading_keeps_optimizer_training_the_same_parameters(tmp_path):
    net = Net()
    opt = nn.SGD(net.trainable_params(), 0.5)
    grads = tuple(Tensor(np.ones(p.shape, np.float32)) for p in opt.parameters)
    opt(grads)
    source = Net(hidden=3)
    engine.save_checkpoint(source, tmp_path / "s.npz")
    engine.load_checkpoint(tmp_path / "s.npz", net=net)
    opt(grads)
    np.testing.assert_allclose(net.layer1.weight.asnumpy(), source.layer1.weight.asnumpy() - 0.5)


# ----------------------------------------------------------------------------- hostile files


def test_pickled_object_arrays_are_refused(tmp_path):
    path = tmp_path / "evil.npz"
    np.savez(path, weight=np.array([{"a": 1}, None], dtype=object))
    with pytest.raises(CheckpointError, match="pickled or object data, which is never loaded"):
        engine.load_checkpoint(path)


def test_a_pickle_file_is_refused(tmp_path):
    path = tmp_path / "evil.npz"
    path.write_bytes(pickle.dumps({"weight": np.zeros(3)}))
    with pytest.raises(CheckpointError):
        engine.load_checkpoint(path)


@pytest.mark.parametrize("kind", ["garbage", "truncated", "npy", "strings", "empty"])
def test_corrupt_or_foreign_files_are_refused(tmp_path, kind):
    path = tmp_path / "bad.npz"
    if kind == "garbage":
        path.write_bytes(os.urandom(200))
    elif kind == "truncated":
        engine.save_checkpoint(Net(), path)
        path.write_bytes(path.read_bytes()[:150])
    elif kind == "npy":
        with open(path, "wb") as fh:
            np.save(fh, np.zeros(3))
    elif kind == "strings":
        np.savez(path, names=np.array(["a", "b"]))
    else:
        path.write_bytes(b"")
    with pytest.raises(CheckpointError):
        engine.load_checkpoint(path)


def test_a_member_that_is_not_an_array_is_refused(tmp_path):
    path = tmp_path / "odd.npz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("weight.npy", b"not an npy header")
    with pytest.raises(CheckpointError):
        engine.load_checkpoint(path)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.npz"):
        engine.load_checkpoint(tmp_path / "nope.npz")
