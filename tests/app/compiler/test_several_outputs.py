"""A network with several Output nodes (an imported two-headed model): it compiles, gives
every output when asked (export, `cellwright predict`), and trains the one with a loss."""

import numpy as np

import engine
from app.catalogue import CATALOGUE
from app.cli import main as cli_main
from app.compiler import compile_project
from app.compiler.network_io import output_nodes, trained_output
from app.io.project_file import save_project
from app.session import COMPLETED, TrainingSession
from tests.app.session.session_samples import mlp_project, node_named


def two_headed(first_loss="none", second_loss="CrossEntropyLoss"):
    """mlp_project's network (its head 3 wide) plus a second head (Dense 16→2) off the Tanh;
    the original Output gets `first_loss`, the new one `second_loss` (later in graph order)."""
    project = mlp_project(outputs=3)
    graph = project.graph
    graph.set_param(node_named(project, "output1").id, "loss", first_loss)
    head = graph.add_node(CATALOGUE.new_node("Dense", name="side",
                                             params={"in_channels": 16, "out_channels": 2}))
    out = graph.add_node(CATALOGUE.new_node("Output", name="side_out",
                                            params={"loss": second_loss}))
    graph.connect(node_named(project, "tanh1").id, "out", head.id, "in")
    graph.connect(head.id, "out", out.id, "in")
    return project


def test_training_fits_the_output_with_a_loss_and_the_network_can_give_both():
    project = two_headed(first_loss="none", second_loss="CrossEntropyLoss")
    assert trained_output(project.graph).name == "side_out"
    assert [n.name for n in output_nodes(project.graph)] == ["output1", "side_out"]
    compiled = compile_project(project)
    assert compiled.output_shape == ("N", 2)
    x = engine.Tensor(np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32))
    assert compiled.network(x).shape == (4, 2)  # the trained output
    compiled.network.pick = None
    first, second = compiled.network(x)
    assert first.shape == (4, 3) and second.shape == (4, 2)


def test_with_no_loss_anywhere_the_first_output_is_the_trained_one():
    project = two_headed(first_loss="none", second_loss="none")
    assert trained_output(project.graph).name == "output1"
    assert compile_project(project).output_shape == ("N", 3)


def test_a_two_headed_network_trains_its_loss_head_and_leaves_the_other_unchanged(tmp_path):
    project = two_headed(first_loss="none", second_loss="CrossEntropyLoss")
    session = TrainingSession(project, folder=tmp_path)
    params = session.compiled.parameters()
    side, other = params["side.weight"].asnumpy().copy(), params["dense2.weight"].asnumpy().copy()
    result = session.run()
    assert result.reason == COMPLETED, result.message
    params = session.compiled.parameters()
    assert not np.array_equal(params["side.weight"].asnumpy(), side)
    assert np.array_equal(params["dense2.weight"].asnumpy(), other)  # no loss reaches it


def test_predict_writes_every_output_to_its_file(tmp_path):
    project = two_headed()
    compile_project(project).store_values(project)  # the weights the file keeps
    save_project(project, tmp_path / "two.cwproj")
    x = np.random.default_rng(1).standard_normal((5, 2)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    assert cli_main(["predict", str(tmp_path / "two.cwproj"), "--input", str(tmp_path / "x.npy"),
                     "--output", str(tmp_path / "a.npy"), "--output",
                     str(tmp_path / "b.npy"), "--batch-size", "2"]) == 0
    compiled = compile_project(project)
    compiled.network.set_train(False)
    compiled.network.pick = None
    want = [o.asnumpy() for o in compiled.network(engine.Tensor(x))]
    np.testing.assert_allclose(np.load(tmp_path / "a.npy"), want[0], rtol=1e-6)
    np.testing.assert_allclose(np.load(tmp_path / "b.npy"), want[1], rtol=1e-6)
