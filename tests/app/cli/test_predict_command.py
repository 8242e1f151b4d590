"""`cellwright predict`: inputs paired with Input nodes in order, predict mode, chunks, refusals."""

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import engine
from app import cli
from app.catalogue import CATALOGUE
from app.cli.predict import write_outputs
from app.compiler import compile_project
from app.document import Graph, Project
from app.io.project_file import load_project, save_project
from engine import nn
from tests.app.session.session_samples import mlp_project

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "resources" / "examples"


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("cellwright: error: ")
    return lines[0]


def two_input_project() -> Project:
    """Inputs 'zeta' (N, 3) then 'alpha' (N, 2), concatenated in that order, → Dense →
    BatchNorm1d → Dropout → Output; the BatchNorm has moving statistics of its own."""
    graph = Graph()
    add = graph.add_node
    zeta = add(CATALOGUE.new_node("Input", name="zeta", params={"shape": (3,)}))
    alpha = add(CATALOGUE.new_node("Input", name="alpha", params={"shape": (2,)}))
    concat = add(CATALOGUE.new_node("Concat", name="cat", params={"axis": 1}))
    dense = add(CATALOGUE.new_node("Dense", name="dense",
                                   params={"in_channels": 5, "out_channels": 4}))  # fmt: skip
    norm = add(CATALOGUE.new_node("BatchNorm1d", name="bn", params={"num_features": 4}))
    drop = add(CATALOGUE.new_node("Dropout", name="drop", params={"p": 0.5}))
    out = add(CATALOGUE.new_node("Output", name="out", params={"loss": "MSELoss"}))
    graph.connect(zeta.id, "out", concat.id, "x")
    graph.connect(alpha.id, "out", concat.id, "y")
    for a, b in ((concat, dense), (dense, norm), (norm, drop), (drop, out)):
        graph.connect(a.id, "out", b.id, "in")
    project = Project(graph=graph, name="two")
    rng = np.random.default_rng(0)
    project.param_values[norm.id] = {
        "moving_mean": rng.normal(size=4).astype(np.float32),
        "moving_variance": rng.uniform(0.5, 2, size=4).astype(np.float32),
        "gamma": rng.normal(size=4).astype(np.float32),
        "beta": rng.normal(size=4).astype(np.float32)}
    compile_project(project).store_values(project)
    return project


def by_hand(project: Project, zeta: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """The two-input network in predict mode, in NumPy."""
    values = {project.graph.nodes[nid].name: v for nid, v in project.param_values.items()}
    x = np.concatenate([zeta, alpha], axis=1).astype(np.float64)
    x = x @ values["dense"]["weight"].T + values["dense"]["bias"]
    bn = values["bn"]
    x = (x - bn["moving_mean"]) / np.sqrt(bn["moving_variance"] + 1e-5)
    return x * bn["gamma"] + bn["beta"]


@pytest.fixture
def two_inputs(tmp_path):
    path = tmp_path / "two.cwproj"
    save_project(two_input_project(), path)
    rng = np.random.default_rng(1)
    zeta, alpha = rng.normal(size=(7, 3)), rng.normal(size=(7, 2)).astype(np.float32)
    np.save(tmp_path / "zeta.npy", zeta)  # float64: converted to float32
    np.save(tmp_path / "alpha.npy", alpha)
    return path, zeta, alpha


def test_inputs_follow_the_order_info_lists_and_the_network_runs_in_predict_mode(
        two_inputs, tmp_path, capsys):  # fmt: skip
    path, zeta, alpha = two_inputs
    assert cli.main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    listed = out[out.index("Inputs and outputs"):].splitlines()[1:4]
    assert [line.split()[:2] for line in listed] == [["input", "zeta"], ["input", "alpha"],
                                                     ["output", "out"]]  # fmt: skip
    result = tmp_path / "y.npy"
    assert cli.main(["predict", str(path), "--input", str(tmp_path / "zeta.npy"),
                     "--input", str(tmp_path / "alpha.npy"), "--output", str(result),
                     "--batch-size", "3"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "(7, 4) float32" in out and "3 chunks" in out
    y = np.load(result)
    assert y.shape == (7, 4) and y.dtype == np.float32
    # Dropout passes everything and BatchNorm uses its moving statistics: the same as by hand.
    np.testing.assert_allclose(y, by_hand(load_project(path), zeta, alpha), rtol=1e-5,
                               atol=1e-6)  # fmt: skip
    # Swapped inputs no longer fit zeta's shape: refused, naming both.
    assert cli.main(["predict", str(path), "--input", str(tmp_path / "alpha.npy"),
                     "--input", str(tmp_path / "zeta.npy"), "--output", str(result)]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "input 'zeta' expects (N, 3) float32; alpha.npy holds (7, 2) float32" in line


def test_an_example_predicts_as_its_network_does_chunked_or_not(tmp_path, capsys):
    example = EXAMPLES / "moons_bn_dropout.cwproj"  # BatchNorm and Dropout inside
    x = np.random.default_rng(2).normal(size=(600, 2)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    compiled = compile_project(load_project(example))
    compiled.network.set_train(False)
    with engine.no_grad():
        expected = compiled.network(engine.Tensor(x)).asnumpy()
    for batch in ("256", "600"):
        target = tmp_path / f"y{batch}.npz"
        assert cli.main(["predict", str(example), "--input", str(tmp_path / "x.npy"),
                         "--output", str(target), "--batch-size", batch]) == 0  # fmt: skip
        with np.load(target) as saved:
            assert saved.files == ["output1"]  # keyed by the Output node's name
            np.testing.assert_allclose(saved["output1"], expected, rtol=1e-6, atol=1e-7)
    assert "3 chunks" in capsys.readouterr().out


def test_token_ids_feed_an_int64_input_and_floats_are_refused(tmp_path, capsys):
    example = EXAMPLES / "char_transformer.cwproj"
    ids = np.random.default_rng(3).integers(0, 20, size=(2, 32)).astype(np.int32)
    np.save(tmp_path / "ids.npy", ids)
    target = tmp_path / "y.npy"
    assert cli.main(["predict", str(example), "--input", str(tmp_path / "ids.npy"),
                     "--output", str(target)]) == 0  # fmt: skip
    assert np.load(target).shape == (2, 70)
    np.save(tmp_path / "floats.npy", ids.astype(np.float64))
    assert cli.main(["predict", str(example), "--input", str(tmp_path / "floats.npy"),
                     "--output", str(target)]) == 1  # fmt: skip
    line = one_error_line(capsys.readouterr().err)
    assert "input 'input1' expects (N, 32) int64; floats.npy holds (2, 32) float64" in line
    assert "whole numbers" in line
    np.save(tmp_path / "beyond.npy", np.full((3, 32), 500))
    assert cli.main(["predict", str(example), "--input", str(tmp_path / "beyond.npy"),
                     "--output", str(target), "--batch-size", "2"]) == 1  # fmt: skip
    line = one_error_line(capsys.readouterr().err)
    assert "can't run on samples 0 to 1" in line and "outside the vocabulary" in line


def test_integer_pixels_feed_a_float_input_but_values_too_big_for_float32_do_not(
        tmp_path, capsys):  # fmt: skip
    example = EXAMPLES / "digits_cnn.cwproj"
    pixels = np.random.default_rng(4).integers(0, 16, size=(3, 1, 8, 8)).astype(np.uint8)
    np.save(tmp_path / "pixels.npy", pixels)
    target = tmp_path / "y.npy"
    assert cli.main(["predict", str(example), "--input", str(tmp_path / "pixels.npy"),
                     "--output", str(target)]) == 0  # fmt: skip
    compiled = compile_project(load_project(example))
    with engine.no_grad():
        expected = compiled.network(engine.Tensor(pixels.astype(np.float32))).asnumpy()
    np.testing.assert_allclose(np.load(target), expected, rtol=1e-6)
    np.save(tmp_path / "huge.npy", np.full((2, 1, 8, 8), 1e300))
    target.unlink()
    assert cli.main(["predict", str(example), "--input", str(tmp_path / "huge.npy"),
                     "--output", str(target)]) == 1  # fmt: skip
    assert "too large for float32" in one_error_line(capsys.readouterr().err)
    assert not target.exists()  # nothing half-written


@pytest.mark.parametrize("content, says", [
    (b"not an array", "is not a .npy file"),
    (None, "no such file"),
    ("truncated", "is damaged"),
    ("npz", "is an .npz"),
])  # fmt: skip
def test_missing_or_damaged_input_files_say_so(tmp_path, capsys, content, says):
    project = tmp_path / "mlp.cwproj"
    save_project(mlp_project(), project)
    bad = tmp_path / "x.npy"
    if content == "truncated":
        np.save(bad, np.zeros((100, 2)))
        bad.write_bytes(bad.read_bytes()[:300])
    elif content == "npz":
        with open(bad, "wb") as fh:
            np.savez(fh, x=np.zeros((3, 2)))
    elif content is not None:
        bad.write_bytes(content)
    assert cli.main(["predict", str(project), "--input", str(bad),
                     "--output", str(tmp_path / "y.npy")]) == 1  # fmt: skip
    assert says in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "y.npy").exists()


def test_counts_and_batch_sizes_must_agree(two_inputs, tmp_path, capsys):
    path, zeta, alpha = two_inputs
    np.save(tmp_path / "short.npy", alpha[:5])
    y = str(tmp_path / "y.npy")
    z, a = str(tmp_path / "zeta.npy"), str(tmp_path / "alpha.npy")
    cases = [
        (["--input", z, "--output", y], "takes 2 inputs ('zeta', 'alpha', in this order)"),
        (["--input", z, "--input", a, "--output", y, "--output", str(tmp_path / "w.npy")],
         "gives 1 output ('out', in this order); 2 --output given"),
        (["--input", z, "--input", str(tmp_path / "short.npy"), "--output", y],
         "same number of samples: 'zeta' has 7, 'alpha' has 5"),
        (["--input", z, "--input", a, "--output", str(tmp_path / "y.csv")], "y.csv"),
    ]
    for args, says in cases:
        assert cli.main(["predict", str(path), *args]) == 1
        assert says in one_error_line(capsys.readouterr().err)
    with pytest.raises(SystemExit) as stop:
        cli.main(["predict", str(path), "--input", z, "--input", a, "--output", y,
                  "--batch-size", "0"])  # fmt: skip
    assert stop.value.code == 2


class _TwoOutputs(nn.Cell):
    def construct(self, x):
        return x * 2.0, x.sum(axis=1, keepdims=True)


def test_several_outputs_are_joined_chunk_by_chunk_each_to_its_file(tmp_path):
    x = np.arange(35, dtype=np.float32).reshape(7, 5)
    files = [tmp_path / "double.npy", tmp_path / "total.npy"]
    written = write_outputs(_TwoOutputs(), [x], ["x"], ["float32"], ["double", "total"], files,
                            batch_size=3)  # fmt: skip
    assert [f for f, _ in written] == files
    np.testing.assert_array_equal(np.load(files[0]), x * 2)
    np.testing.assert_array_equal(np.load(files[1]), x.sum(axis=1, keepdims=True))
    both = tmp_path / "both.npz"
    write_outputs(_TwoOutputs(), [x], ["x"], ["float32"], ["double", "total"], [both], 4)
    with np.load(both) as saved:
        assert saved.files == ["double", "total"]
        np.testing.assert_array_equal(saved["total"], x.sum(axis=1, keepdims=True))


def test_memory_does_not_grow_with_the_number_of_chunks(tmp_path):
    graph_project = mlp_project(inputs=64, hidden=32, outputs=10)
    path = tmp_path / "wide.cwproj"
    save_project(graph_project, path)
    rows = 20_000
    np.save(tmp_path / "x.npy", np.random.default_rng(5).normal(size=(rows, 64)))  # 10 MB
    tracemalloc.start()
    try:
        assert cli.main(["predict", str(path), "--input", str(tmp_path / "x.npy"),
                         "--output", str(tmp_path / "y.npy")]) == 0  # fmt: skip
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3_000_000, peak  # the input is mapped, the output written as it comes
    assert np.load(tmp_path / "y.npy").shape == (rows, 10)
