"""`cellwright import-weights`: weights changed in PyTorch come back by name, or nothing does."""

import importlib
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

import engine
from app import cli
from app.catalogue import CATALOGUE
from app.compiler import compile_project
from app.document import Graph, Project
from app.document.editing import group
from app.io import weights_import
from app.io.project_file import load_project, save_project
from tests.app.session.session_samples import chain

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "resources" / "examples"


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("cellwright: error: ")
    return lines[0]


def exported(project_file: Path, tmp_path: Path) -> torch.nn.Module:
    """The project's PyTorch export, loaded with its weights."""
    script = tmp_path / f"{project_file.stem}_torch.py"
    assert cli.main(["export", str(project_file), "--torch", str(script)]) == 0
    spec = importlib.util.spec_from_file_location(script.stem, script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load_network()


def trained_a_step(net: torch.nn.Module, x: torch.Tensor) -> None:
    """One SGD step on a made-up target, in train mode: the weights and BatchNorm's running
    statistics all change."""
    net.train()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
    out = net(x)
    out = out[0] if isinstance(out, tuple) else out
    ((out.float() - 1.0) ** 2).mean().backward()
    optimizer.step()
    net.eval()


def sample(compiled, rows: int = 4, seed: int = 0) -> np.ndarray:
    shape, dtype = compiled.input_shapes[0], compiled.input_dtypes[0]
    rng = np.random.default_rng(seed)
    if dtype.startswith("int"):
        return rng.integers(0, 20, size=(rows, *shape[1:])).astype(dtype)
    return rng.normal(size=(rows, *shape[1:])).astype(dtype)


def assert_predicts_as_torch(project_file: Path, net: torch.nn.Module) -> None:
    compiled = compile_project(load_project(project_file))
    compiled.network.set_train(False)
    x = sample(compiled)
    with engine.no_grad():
        ours = compiled.network(engine.Tensor(x)).asnumpy()
    with torch.no_grad():
        theirs = net.eval()(torch.from_numpy(x))
    theirs = theirs[0] if isinstance(theirs, tuple) else theirs
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-5, atol=1e-6)


def round_trip(project_file: Path, tmp_path: Path) -> tuple[Path, torch.nn.Module]:
    """Export, train a step in torch, torch.save the state_dict, import it: the new file."""
    net = exported(project_file, tmp_path)
    compiled = compile_project(load_project(project_file))
    trained_a_step(net, torch.from_numpy(sample(compiled, rows=8, seed=1)))
    weights = tmp_path / "trained.pt"
    torch.save(net.state_dict(), weights, _use_new_zipfile_serialization=True)
    out = tmp_path / "trained.cwproj"
    assert cli.main(["import-weights", str(project_file), str(weights), "--out", str(out)]) == 0
    return out, net


def lstm_project() -> Project:
    """A two-layer bidirectional LSTM over (N, 6, 3) sequences, then Dense."""
    graph = Graph()
    x = graph.add_node(CATALOGUE.new_node("Input", params={"shape": (6, 3)}))
    lstm = graph.add_node(CATALOGUE.new_node("LSTM", params={
        "input_size": 3, "hidden_size": 5, "num_layers": 2, "bidirectional": True}))
    flat = graph.add_node(CATALOGUE.new_node("Flatten"))
    dense = graph.add_node(CATALOGUE.new_node("Dense", params={"in_channels": 60,
                                                               "out_channels": 2}))
    out = graph.add_node(CATALOGUE.new_node("Output", params={"loss": "MSELoss"}))
    graph.connect(x.id, "out", lstm.id, "in")
    graph.connect(lstm.id, "output", flat.id, "in")
    graph.connect(flat.id, "out", dense.id, "in")
    graph.connect(dense.id, "out", out.id, "in")
    return Project(graph=graph, name="lstm")


def composite_project() -> Project:
    """Conv1d (its weight re-laid for torch) and BatchNorm1d grouped into a composite
    'block1', so the names are dotted: 'block1.conv1d1.weight'."""
    graph = chain(
        ("Input", {"shape": (4, 10)}),
        ("Conv1d", {"in_channels": 4, "out_channels": 6, "kernel_size": 3, "has_bias": True}),
        ("BatchNorm1d", {"num_features": 6}),
        ("ReLU", {}),
        ("Flatten", {}),
        ("Dense", {"in_channels": 60, "out_channels": 3}),
        ("Output", {"loss": "MSELoss"}),
    )
    inside = [n.id for n in graph.nodes.values() if n.type in ("Conv1d", "BatchNorm1d", "ReLU")]
    group(graph, inside, definition="Block")
    return Project(graph=graph, name="blocks")


def test_a_conv_batchnorm_example_predicts_as_torch_after_a_torch_training_step(
        tmp_path, capsys):  # fmt: skip
    example = EXAMPLES / "residual_cnn.cwproj"
    out, net = round_trip(example, tmp_path)
    assert "Imported 37 Parameters" in capsys.readouterr().out
    assert_predicts_as_torch(out, net)
    before = compile_project(load_project(example)).parameters()
    after = compile_project(load_project(out)).parameters()
    mean = "batchnorm2d1.moving_mean"  # running_mean, trained in torch
    assert not np.allclose(before[mean].asnumpy(), after[mean].asnumpy())
    np.testing.assert_allclose(after[mean].asnumpy(),
                               net.state_dict()["batchnorm2d1.running_mean"].numpy())


@pytest.mark.parametrize("make", [lstm_project, composite_project])
def test_recurrent_and_composite_networks_come_back(tmp_path, make):
    project_file = tmp_path / "net.cwproj"
    save_project(make(), project_file)
    out, net = round_trip(project_file, tmp_path)
    assert_predicts_as_torch(out, net)
    names = set(net.state_dict())
    if make is composite_project:  # dotted names; torch's Conv1d weight is (out, in, k)
        assert {"block1.conv1d1.weight", "block1.batchnorm1d1.running_var"} <= names
        assert net.state_dict()["block1.conv1d1.weight"].shape == (6, 4, 3)
    else:
        assert "lstm1.weight_hh_l1_reverse" in names


def test_a_gru_example_comes_back(tmp_path):
    out, net = round_trip(EXAMPLES / "gru_sequence.cwproj", tmp_path)
    assert_predicts_as_torch(out, net)


def test_the_npz_the_export_writes_comes_back_into_a_fresh_project(tmp_path):
    example = EXAMPLES / "separable_cnn.cwproj"
    net = exported(example, tmp_path)  # its .npz holds the example's trained weights
    fresh = load_project(example)
    fresh.param_values.clear()  # new initial values
    fresh_file = tmp_path / "fresh.cwproj"
    save_project(fresh, fresh_file)
    out = tmp_path / "back.cwproj"
    weights = tmp_path / "separable_cnn_torch.npz"
    assert cli.main(["import-weights", str(fresh_file), str(weights), "--out", str(out)]) == 0
    assert_predicts_as_torch(out, net)
    original = compile_project(load_project(example)).parameters()
    for name, param in compile_project(load_project(out)).parameters().items():
        np.testing.assert_array_equal(param.asnumpy(), original[name].asnumpy())


def test_misfits_are_all_listed_and_nothing_is_written(tmp_path, capsys):
    project_file = tmp_path / "net.cwproj"
    save_project(composite_project(), project_file)
    state = exported(project_file, tmp_path).state_dict()
    state["dense1.weight"] = torch.zeros(3, 59)
    del state["block1.batchnorm1d1.bias"]
    state["head.weight"] = torch.zeros(2)
    weights = tmp_path / "bad.pt"
    torch.save(state, weights)
    out = tmp_path / "out.cwproj"
    assert cli.main(["import-weights", str(project_file), str(weights), "--out", str(out)]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "bad.pt does not fit net.cwproj: 3 problems" in line
    assert "'dense1.weight': the project has (3, 60), the file holds (3, 59)" in line
    assert "missing from the file: 'block1.batchnorm1d1.bias'" in line
    assert "in the file but not in the project: 'head.weight'" in line
    assert "Nothing was changed" in line
    assert not out.exists()


def test_batch_counters_and_a_ddp_prefix_are_no_misfits(tmp_path):
    project_file = tmp_path / "net.cwproj"
    save_project(composite_project(), project_file)
    net = exported(project_file, tmp_path)
    state = {f"module.{name}": value + 1 for name, value in net.state_dict().items()}
    assert "module.block1.batchnorm1d1.num_batches_tracked" in state
    torch.save(state, tmp_path / "ddp.pt")
    out = tmp_path / "out.cwproj"
    assert cli.main(["import-weights", str(project_file), str(tmp_path / "ddp.pt"),
                     "--out", str(out)]) == 0  # fmt: skip
    net.load_state_dict({name[len("module."):]: value for name, value in state.items()})
    assert_predicts_as_torch(out, net)


def test_without_torch_a_pytorch_file_is_refused_with_the_reason(tmp_path, capsys,
                                                                 monkeypatch):  # fmt: skip
    project_file = tmp_path / "net.cwproj"
    save_project(composite_project(), project_file)
    torch.save(exported(project_file, tmp_path).state_dict(), tmp_path / "w.pt")
    real = importlib.import_module

    def no_torch(name, *args):
        if name == "torch":
            raise ImportError("No module named 'torch'")
        return real(name, *args)

    monkeypatch.setattr(weights_import.importlib, "import_module", no_torch)
    assert cli.main(["import-weights", str(project_file), str(tmp_path / "w.pt"),
                     "--out", str(tmp_path / "o.cwproj")]) == 1  # fmt: skip
    line = one_error_line(capsys.readouterr().err)
    assert "needs torch: pip install torch; an .npz needs nothing" in line


@pytest.mark.parametrize("content, says", [
    (None, "no such file"),
    (b"hello", "neither an .npz nor a PyTorch state_dict"),
    ("pickle", "can't be read safely"),
])  # fmt: skip
def test_unreadable_or_unsafe_weight_files_are_refused(tmp_path, capsys, content, says):
    project_file = tmp_path / "net.cwproj"
    save_project(composite_project(), project_file)
    weights = tmp_path / "w.pt"
    if content == "pickle":  # a pickled object, not tensors: weights_only refuses it
        torch.save({"x": Path("/")}, weights)
    elif content is not None:
        weights.write_bytes(content)
    assert cli.main(["import-weights", str(project_file), str(weights),
                     "--out", str(tmp_path / "o.cwproj")]) == 1  # fmt: skip
    assert says in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "o.cwproj").exists()


def test_the_result_opens_ready_to_inspect_with_the_weights_in_place(tmp_path):
    """What the user looks at next: the Parameters, a hook on a predict pass and the Predict
    panel's answer all show the weights trained in torch."""
    from app.session import TrainingSession
    from app.session.predict import Predictor

    out, net = round_trip(EXAMPLES / "residual_cnn.cwproj", tmp_path)
    project = load_project(out)
    session = TrainingSession(project, folder=tmp_path)
    state = {k: v.numpy() for k, v in net.state_dict().items()}
    params = session.compiled.parameters()
    np.testing.assert_allclose(params["conv2d1.weight"].asnumpy(), state["conv2d1.weight"])
    x, _ = Predictor(session).row("validation", 0)
    with torch.no_grad():
        want = net.eval()(torch.from_numpy(x[None])).numpy()[0]
        first = net.conv2d1(torch.from_numpy(x[None])).numpy()
    np.testing.assert_allclose(Predictor(session).predict(x).output, want, rtol=1e-5, atol=1e-6)
    seen = []
    cell = session.compiled.cells[project.graph.node_named("conv2d1").id]
    handle = cell.register_forward_hook(lambda _cell, _inputs, output: seen.append(
        output.asnumpy().copy()))
    session.compiled.network.set_train(False)
    with engine.no_grad():
        session.compiled.network(engine.Tensor(x[None]))
    handle.remove()
    np.testing.assert_allclose(seen[0], first, rtol=1e-5, atol=1e-6)
