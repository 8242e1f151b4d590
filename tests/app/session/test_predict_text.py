"""Text prediction: next-character probabilities for a prompt and sampled continuations,
on a copy of the network, refusing what it can't read."""

import re
import threading
import time

import numpy as np
import pytest

import engine
from app.datasets import Dataset
from app.document import Project
from app.session import TrainingSession
from app.session.predict import PredictError, Predictor
from app.session.predict_text import (
    MAX_LENGTH,
    Continuation,
    TextModel,
    TextPredictor,
    check_sampling,
    readable,
    readable_text,
    softmax_at,
)
from app.session.progress import rng_state
from engine import nn, ops
from tests.app.session.session_samples import chain, weights

TEXT = "the cat sat on the mat.\nthe dog sat on the log.\n" * 12
CONTEXT = 8


class OneHotDense(nn.Cell):
    """A stand-in character model from plain engine layers: ids (N, T) → one-hot → logits."""

    def __init__(self, vocab: int, context: int) -> None:
        super().__init__()
        self.vocab = vocab
        self.dense = nn.Dense(vocab * context, vocab)

    def construct(self, x):
        hot = ops.one_hot(x, self.vocab, 1.0, 0.0)
        return self.dense(ops.reshape(hot, (hot.shape[0], -1)))


def text_dataset(text: str = TEXT, context: int = CONTEXT, **extra) -> Dataset:
    """A char-level set as the contract has it: x (N, T) int64 ids, y (N,) the next id."""
    vocabulary = tuple(sorted(set(text)))
    ids = np.array([vocabulary.index(c) for c in text], dtype=np.int64)
    x = np.stack([ids[i:i + context] for i in range(len(ids) - context)])
    return Dataset(x, ids[context:], "classification", len(vocabulary), name="Cats",
                   vocabulary=vocabulary, **extra)  # fmt: skip


def text_project(vocab: int, context: int = CONTEXT, outputs: int | None = None) -> Project:
    """Input (T,) int64 → Embedding → Flatten → Dense → Tanh → Dense → logits (N, V)."""
    graph = chain(
        ("Input", {"shape": (context,), "dtype": "int64"}),
        ("Embedding", {"vocab_size": vocab, "embedding_size": 8}),
        ("Flatten", {}),
        ("Dense", {"in_channels": context * 8, "out_channels": 32}),
        ("Tanh", {}),
        ("Dense", {"in_channels": 32, "out_channels": outputs or vocab}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    settings = {"dataset": {"builtin": "text"}, "learning_rate": 0.05, "batch_size": 32,
                "epochs": 4, "seed": 0, "optimizer": "Adam"}  # fmt: skip
    return Project(graph=graph, name="chars", training=settings)


def text_session(trained: bool = True) -> TrainingSession:
    data = text_dataset()
    session = TrainingSession(text_project(len(data.vocabulary)), dataset=data)
    if trained:
        session.run()
    return session


@pytest.fixture(scope="module")
def trained():
    return text_session()


@pytest.fixture
def model():
    data = text_dataset()
    engine.set_seed(3)
    return TextModel(OneHotDense(len(data.vocabulary), CONTEXT), data.vocabulary, CONTEXT)


# ---- the model's answer ----------------------------------------------------------------------


def test_next_character_probabilities_sum_to_one_and_follow_the_logits(model):
    answer = model.next_characters("the cat ")
    assert answer.probabilities.shape == (len(model.vocabulary),)
    assert answer.probabilities.sum() == pytest.approx(1.0)
    logits = model.logits(model.encode("the cat "))
    assert answer.predicted == int(np.argmax(logits))
    top = answer.top(4)
    assert [p for _, _, p in top] == sorted((p for _, _, p in top), reverse=True)
    assert top[0][0] == answer.predicted and top[0][1] == model.vocabulary[answer.predicted]


def test_a_trained_model_predicts_what_the_text_says(trained):
    text = TextPredictor(Predictor(trained))
    answer = text.next_characters("the cat sat on the m")
    assert answer.top(1)[0][1] == "a" and answer.probabilities.max() > 0.5
    assert text.next_characters("log.").top(1)[0][1] == "\n"
    # The same answer as the network itself gives for that window.
    window = text.model.encode("at on the m")[-CONTEXT:]
    logits = trained.predict(window[None])[0]
    np.testing.assert_allclose(answer.probabilities, softmax_at(logits), rtol=1e-6)


def test_a_row_through_the_predictor_names_the_same_likeliest_character(trained):
    predictor = Predictor(trained)
    text = TextPredictor(predictor)
    x, label = predictor.row("validation", 5)
    assert x.dtype == np.int64 and predictor.sequence and predictor.image(x) is None
    row = predictor.predict(x)
    typed = text.next_characters(text.decode(x))
    np.testing.assert_allclose(typed.probabilities, row.probabilities, rtol=1e-6)
    assert typed.window == text.decode(x) and typed.padded == 0


def test_temperature_towards_zero_approaches_the_argmax():
    logits = np.array([0.3, 2.0, 1.9, -4.0])
    spread = [softmax_at(logits, t)[1] for t in (2.0, 1.0, 0.5, 0.1, 0.02)]
    assert all(b > a for a, b in zip(spread, spread[1:], strict=False))
    assert spread[-1] > 0.99
    np.testing.assert_array_equal(softmax_at(logits, 0.0), [0, 1, 0, 0])
    assert softmax_at(logits, 1.0) == pytest.approx(np.exp(logits) / np.exp(logits).sum())
    hot = softmax_at(np.array([1000.0, 0.0]), 1e-3)
    assert np.isfinite(hot).all() and hot == pytest.approx([1.0, 0.0])


def test_a_short_prompt_is_padded_on_the_left_with_spaces(model):
    answer = model.next_characters("cat")
    assert answer.window == " " * (CONTEXT - 3) + "cat" and answer.padded == CONTEXT - 3
    np.testing.assert_array_equal(model.window(model.encode(""))[0],
                                  np.full(CONTEXT, model.ids[" "]))  # fmt: skip
    long = model.next_characters("the dog sat on the log")
    assert long.window == "the dog sat on the log"[-CONTEXT:] and long.padded == 0


def test_without_space_or_newline_a_short_prompt_is_refused_with_the_length():
    vocabulary = ("a", "b", "c")
    model = TextModel(OneHotDense(3, 4), vocabulary, 4)
    with pytest.raises(PredictError, match="Type at least 4 characters"):
        model.next_characters("ab")
    assert model.next_characters("abca").window == "abca"


@pytest.mark.parametrize(("prompt", "named"), [("the cät", "'ä' (position 6)"),
                                               ("The", "'T' (position 1)"),
                                               ("a\tb", "'⇥' (position 2)")])  # fmt: skip
def test_a_character_not_in_the_vocabulary_is_refused_and_named(model, prompt, named):
    with pytest.raises(PredictError, match=re.escape(f"The character {named} is not in the "
                                                     "vocabulary")):  # fmt: skip
        model.next_characters(prompt)
    with pytest.raises(PredictError, match="not in the vocabulary"):
        Continuation(model, prompt, 5, 1.0, 0)


def test_characters_are_shown_readably():
    assert [readable(c) for c in (" ", "\n", "\t", "a", "\x07")] == ["␣", "⏎", "⇥", "a", "U+0007"]
    assert readable_text("a b\n") == "a␣b⏎"


# ---- refusals ----------------------------------------------------------------------------------


def test_an_output_that_is_not_one_score_per_character_is_refused(model):
    data = text_dataset()
    wrong = TextModel(OneHotDense(len(data.vocabulary) + 3, CONTEXT), data.vocabulary, CONTEXT)
    size = len(data.vocabulary)
    with pytest.raises(PredictError, match=rf"shape \(N, {size}\).*gives \(N, {size + 3}\)"):
        wrong.next_characters("the")

    class PerStep(nn.Cell):  # (N, T, V): a logit per position, not one per sample
        def construct(self, x):
            return ops.one_hot(x, size, 1.0, 0.0)

    per_step = TextModel(PerStep(), data.vocabulary, CONTEXT)
    with pytest.raises(PredictError, match=rf"gives \(N, {CONTEXT}, {size}\)"):
        per_step.next_characters("the")


def test_a_data_set_without_a_vocabulary_is_refused_with_the_reason():
    with pytest.raises(PredictError, match="no vocabulary"):
        TextModel(OneHotDense(3, 4), (), 4)
    session = TrainingSession(text_project(5, context=4), dataset=Dataset(
        np.random.default_rng(0).integers(0, 5, (40, 4)), np.arange(40) % 5))  # fmt: skip
    with pytest.raises(PredictError, match="no vocabulary"):
        TextPredictor(Predictor(session))


@pytest.mark.parametrize(("length", "temperature", "seed", "reason"), [
    (0, 1.0, 0, "length must be a whole number from 1"),
    (MAX_LENGTH + 1, 1.0, 0, "length"),
    (2.5, 1.0, 0, "length"),
    (10, -0.1, 0, "temperature must be a number from 0"),
    (10, float("nan"), 0, "temperature"),
    (10, 11.0, 0, "temperature"),
    (10, 1.0, -1, "seed must be a whole number"),
])  # fmt: skip
def test_sampling_settings_out_of_range_are_refused(length, temperature, seed, reason):
    with pytest.raises(ValueError, match=reason):
        check_sampling(length, temperature, seed)


# ---- sampling ----------------------------------------------------------------------------------


def test_seeded_sampling_gives_the_same_text_however_it_is_drawn(model):
    first = Continuation(model, "the ", 40, 1.0, seed=7)
    first.advance(40)
    second = Continuation(model, "the ", 40, 1.0, seed=7)
    while not second.done:
        second.advance(3)
    assert first.text == second.text and len(first.text) == 40
    other = Continuation(model, "the ", 40, 1.0, seed=8)
    other.advance(40)
    assert other.text != first.text
    assert set(first.text) <= set(model.vocabulary)


def test_temperature_zero_always_takes_the_likeliest(model):
    greedy = Continuation(model, "the ", 12, 0.0, seed=1)
    greedy.advance(12)
    assert greedy.text == Continuation(model, "the ", 12, 0.0, seed=99).advance(12)
    prompt = "the "
    for char in greedy.text:  # each character the argmax after what came before
        assert model.vocabulary[model.next_characters(prompt).predicted] == char
        prompt += char


def test_a_trained_model_continues_the_text_it_learnt(trained):
    text = TextPredictor(Predictor(trained))
    continuation = text.continuation("the cat sat on the m", 20, 0.0, seed=0)
    continuation.advance(20)
    assert continuation.text.startswith("at.\nthe ")


def test_sampling_runs_on_a_copy_off_the_callers_thread_and_leaves_the_session_alone(trained):
    before = weights(trained)
    predictor = Predictor(trained)
    text = TextPredictor(predictor)
    threads = []
    ended = threading.Event()
    job = text.start_sampling("the ", 60, 1.0, seed=3,
                              on_end=lambda j: (threads.append(threading.get_ident()),
                                                ended.set()))  # fmt: skip
    assert ended.wait(30) and job.finished and job.error is None
    assert threads[0] != threading.get_ident()
    assert len(job.text) == 60 and job.progress == (60, 60)
    # Neither the training network nor the Predict panel's copy drew it.
    sampler = text._sampler
    assert sampler is not predictor and sampler.network is not trained.network
    assert sampler.network is not predictor.network
    mine = {id(p) for p in sampler.network.get_parameters()}
    assert not mine & {id(p) for p in trained.network.get_parameters()}
    assert not mine & {id(p) for p in predictor.network.get_parameters()}
    for name, value in weights(trained).items():
        np.testing.assert_array_equal(value, before[name])
    again = text.continuation("the ", 60, 1.0, seed=3)
    again.advance(60)
    assert again.text == job.text  # seeded: the same text


def test_a_job_stops_when_cancelled(trained, monkeypatch):
    # Each step a little slower than the model: the 2,000 characters take a second, so the
    # stop below always comes first (in a loaded suite the sampler once finished before it).
    advance = Continuation.advance
    monkeypatch.setattr(Continuation, "advance",
                        lambda self, count=1: (time.sleep(0.002), advance(self, count))[1])
    text = TextPredictor(Predictor(trained))
    job = text.start_sampling("the ", MAX_LENGTH, 1.0, seed=0)
    text.stop()
    assert job.error is None, job.error
    assert job.finished and job.cancelled and len(job.text) < MAX_LENGTH


def test_sampling_follows_the_session_weights(trained):
    session = text_session(trained=False)
    text = TextPredictor(Predictor(session))
    untrained = text.continuation("the cat sat on the m", 12, 0.0, seed=0)
    untrained.advance(12)
    session.run()
    learnt = text.continuation("the cat sat on the m", 12, 0.0, seed=0)
    learnt.advance(12)
    assert learnt.text != untrained.text and learnt.text.startswith("at.\nthe ")


def transformer_project(vocab: int, context: int = CONTEXT) -> Project:
    """The real pieces: Embedding → positions → causal Transformer (with Dropout) → last step."""
    graph = chain(
        ("Input", {"shape": (context,), "dtype": "int64"}),
        ("Embedding", {"vocab_size": vocab, "embedding_size": 16}),
        ("PositionalEncoding", {}),
        ("TransformerEncoder", {"d_model": 16, "nhead": 2, "num_layers": 2,
                                "dim_feedforward": 32, "dropout": 0.1, "causal": True}),
        ("Select", {"axis": 1, "index": -1}),
        ("Dense", {"in_channels": 16, "out_channels": vocab}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    settings = {"dataset": {"builtin": "text"}, "learning_rate": 0.01, "batch_size": 32,
                "epochs": 3, "seed": 0, "optimizer": "Adam"}  # fmt: skip
    return Project(graph=graph, name="transformer chars", training=settings)


def test_a_transformer_with_dropout_predicts_and_samples_without_touching_the_run():
    data = text_dataset()
    session = TrainingSession(transformer_project(len(data.vocabulary)), dataset=data)
    session.run()
    before, generator = weights(session), rng_state()
    text = TextPredictor(Predictor(session))
    answer = text.next_characters("the cat sat on the m")
    assert answer.probabilities.sum() == pytest.approx(1.0)
    assert answer.probabilities.max() > 0.3  # it learnt something of the text
    first = text.continuation("the ", 30, 0.8, seed=5)
    first.advance(30)
    second = text.continuation("the ", 30, 0.8, seed=5)
    second.advance(30)
    assert first.text == second.text  # Dropout is off in predict mode: nothing random but us
    assert rng_state() == generator and not session.network.training
    for name, value in weights(session).items():
        np.testing.assert_array_equal(value, before[name])


def test_while_a_run_trains_sampling_draws_from_the_runs_snapshot():
    session = text_session(trained=False)
    session.project.training["epochs"] = 10_000
    session = TrainingSession(session.project, dataset=session.dataset)
    text = TextPredictor(Predictor(session))
    session.start()
    try:
        for _ in range(500):  # the first snapshot is served at a step boundary
            try:
                job = text.start_sampling("the ", 30, 1.0, seed=2)
                break
            except PredictError as exc:
                assert "first weights" in str(exc)
                threading.Event().wait(0.01)
        else:
            pytest.fail("no snapshot was served")
        assert job.wait(30) and job.error is None and len(job.text) == 30
        assert session.running  # it drew while the run went on, from a snapshot of its weights
    finally:
        session.stop()
        session.wait(30)
