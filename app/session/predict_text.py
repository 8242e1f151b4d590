"""Text prediction for a character-level model: the next character's probabilities after
a typed prompt, and continuations sampled at a temperature, each on a copy of the network.

The model reads a fixed number of characters (`context`, the Input's sample length): a
longer prompt is cut to its last `context` characters, a shorter one is padded on the
left with spaces (or newlines, when the vocabulary has no space) — the text sets the
model learnt from are full of both. A character outside the vocabulary is refused,
named. The network's output must be one score (logit) per character, (N, V).

A continuation runs on a thread of its own (`SamplingJob`) on a network of its own (a
second compiled copy, weights loaded on the caller's thread before it starts): neither
the training network nor the copy the Predict panel reads is touched while it runs.
Draws come from a NumPy generator seeded by the user, never from the engine's.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

import engine
from app.session.predict import PredictError, Predictor
from app.session.predict_sequence import vocabulary_of

PAD_CHARACTERS = (" ", "\n")  # what pads a short prompt, the first the vocabulary has
MAX_LENGTH = 2000  # characters in one continuation
MAX_TEMPERATURE = 10.0
MAX_SEED = 2**31 - 1
TOP_K = 10
READABLE = {" ": "␣", "\n": "⏎", "\t": "⇥", "\r": "␍"}  # as the class names show them


def readable(char: str) -> str:
    """A character as it can be seen: space ␣, newline ⏎, tab ⇥, other invisibles U+XXXX."""
    if char in READABLE:
        return READABLE[char]
    if len(char) != 1 or not char.isprintable():
        return "".join(f"U+{ord(c):04X}" for c in char) or "∅"
    return char


def readable_text(text: str) -> str:
    """Text on one line, its spaces and newlines visible."""
    return "".join(readable(c) for c in text)


def softmax_at(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Probabilities from logits at `temperature`; 0 puts everything on the largest (the
    first of equals): the limit of ever lower temperatures."""
    flat = np.asarray(logits, dtype=np.float64).reshape(-1)
    if temperature <= 0.0:
        out = np.zeros_like(flat)
        out[int(np.argmax(flat))] = 1.0
        return out
    with np.errstate(all="ignore"):
        scaled = flat / temperature
        shifted = np.exp(scaled - scaled.max())
        return shifted / shifted.sum()


@dataclass(frozen=True, eq=False)
class NextCharacters:
    """What the model says comes after a context: one probability per character."""

    probabilities: np.ndarray  # (V,) float64, sums to 1
    vocabulary: tuple[str, ...]
    window: str  # the characters fed, padding included
    padded: int  # how many of them are padding
    step: int = 0  # the weights are those after this many training steps

    @property
    def predicted(self) -> int:
        return int(np.argmax(self.probabilities))

    def top(self, k: int = TOP_K) -> list[tuple[int, str, float]]:
        """The `k` likeliest characters: (id, character, probability), likeliest first."""
        order = np.argsort(-self.probabilities, kind="stable")[: max(0, int(k))]
        return [(int(i), self.vocabulary[i], float(self.probabilities[i])) for i in order]


class TextModel:
    """A network reading `context` token ids and giving one logit per character."""

    def __init__(self, network: engine.nn.Cell, vocabulary: Sequence[str], context: int,
                 input_dtype: str = "int64") -> None:  # fmt: skip
        self.vocabulary = tuple(vocabulary)
        if not self.vocabulary:
            raise PredictError("This data set has no vocabulary: typing text needs a text "
                               "data set, whose characters are the model's tokens.")  # fmt: skip
        if not isinstance(context, int | np.integer) or context < 1:
            raise PredictError(f"The model's context must be at least 1 character, not "
                               f"{context!r}.")  # fmt: skip
        self.network = network
        self.context = int(context)
        self.input_dtype = input_dtype
        self.ids = {char: i for i, char in enumerate(self.vocabulary)}
        self.pad = next((c for c in PAD_CHARACTERS if c in self.ids), None)

    def encode(self, text: str) -> np.ndarray:
        """The token ids of `text`; PredictError names the first character not in the
        vocabulary."""
        ids = self.ids
        for position, char in enumerate(str(text), start=1):
            if char not in ids:
                raise PredictError(
                    f"The character {readable(char)!r} (position {position}) is not in the "
                    f"vocabulary of {len(ids)} characters: the model has never seen it."
                )
        return np.array([ids[c] for c in str(text)], dtype=np.int64)

    def window(self, ids: Sequence[int]) -> tuple[np.ndarray, int]:
        """The last `context` ids, padded on the left when fewer; and the padding's length."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)[-self.context:]
        missing = self.context - len(ids)
        if missing and self.pad is None:
            raise PredictError(f"Type at least {self.context} characters: the model reads "
                               f"{self.context} at a time, and its vocabulary has no space "
                               "or newline to pad a shorter prompt with.")  # fmt: skip
        if missing:
            ids = np.concatenate((np.full(missing, self.ids[self.pad], np.int64), ids))
        return ids, missing

    def logits(self, window: np.ndarray) -> np.ndarray:
        """The network's scores for what follows `window` (context ids), as float64 (V,)."""
        batch = np.asarray(window, dtype=self.input_dtype).reshape(1, self.context)
        self.network.set_train(False)
        with engine.no_grad(), np.errstate(all="ignore"):
            out = self.network(engine.Tensor(batch))
        out = out.asnumpy() if isinstance(out, engine.Tensor) else np.asarray(out)
        size = len(self.vocabulary)
        if out.shape != (1, size):
            shape = "(N, " + ", ".join(str(s) for s in out.shape[1:]) + ")"
            raise PredictError(f"Text prediction needs one score per character, an output of "
                               f"shape (N, {size}) for this vocabulary of {size}; this "
                               f"network gives {shape}.")  # fmt: skip
        return out[0].astype(np.float64)

    def next_characters(self, text: str, step: int = 0) -> NextCharacters:
        """The probabilities of each character following `text`."""
        window, padded = self.window(self.encode(text))
        probabilities = softmax_at(self.logits(window))
        shown = "".join(self.vocabulary[i] for i in window)
        return NextCharacters(probabilities, self.vocabulary, shown, padded, step)


def check_sampling(length: int, temperature: float, seed: int) -> None:
    """ValueError with the reason for a length, temperature or seed out of range."""
    if isinstance(length, bool) or not isinstance(length, int | np.integer) \
            or not 1 <= length <= MAX_LENGTH:  # fmt: skip
        raise ValueError(f"The length must be a whole number from 1 to {MAX_LENGTH}, "
                         f"not {length!r}.")  # fmt: skip
    if isinstance(temperature, bool) or not isinstance(temperature, int | float) \
            or not math.isfinite(temperature) or not 0.0 <= temperature <= MAX_TEMPERATURE:
        raise ValueError(f"The temperature must be a number from 0 (always the likeliest) to "
                         f"{MAX_TEMPERATURE:g}, not {temperature!r}.")  # fmt: skip
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) \
            or not 0 <= seed <= MAX_SEED:  # fmt: skip
        raise ValueError(f"The seed must be a whole number from 0 to {MAX_SEED}, not {seed!r}.")


class Continuation:
    """`length` characters drawn after `prompt`, one at a time (`advance`): each from the
    model's probabilities at `temperature`, fed back as the next input. The same seed
    gives the same text, however the drawing is split up."""

    def __init__(self, model: TextModel, prompt: str, length: int, temperature: float,
                 seed: int) -> None:  # fmt: skip
        check_sampling(length, temperature, seed)
        self.model = model
        self.prompt = str(prompt)
        self.length = int(length)
        self.temperature = float(temperature)
        self.seed = int(seed)
        self._ids = list(model.encode(self.prompt))
        model.window(self._ids)  # a refusal now, not on the worker thread
        self._rng = np.random.default_rng(self.seed)
        self.generated: list[int] = []

    @property
    def done(self) -> bool:
        return len(self.generated) >= self.length

    @property
    def text(self) -> str:
        """The characters drawn so far."""
        return "".join(self.model.vocabulary[i] for i in self.generated)

    def advance(self, count: int = 1) -> str:
        """Draw up to `count` more characters; returns them."""
        model, new = self.model, []
        for _ in range(min(int(count), self.length - len(self.generated))):
            window, _ = model.window(self._ids)
            probabilities = softmax_at(model.logits(window), self.temperature)
            cumulative = np.cumsum(probabilities)
            draw = self._rng.random() * cumulative[-1]  # drawn at every temperature
            index = int(np.searchsorted(cumulative, draw, side="right"))
            index = min(index, len(probabilities) - 1)
            if probabilities[index] == 0.0:  # rounding past the end: the likeliest instead
                index = int(np.argmax(probabilities))
            self._ids.append(index)
            self.generated.append(index)
            new.append(model.vocabulary[index])
        return "".join(new)


class SamplingJob:
    """A continuation drawn on a thread of its own. The thread is the only writer of
    `text`, `error` and `finished`; the GUI reads them on a timer and may `cancel`."""

    CHUNK = 4  # characters between two updates of `text`

    def __init__(self, continuation: Continuation,
                 on_end: Callable[[SamplingJob], None] | None = None) -> None:  # fmt: skip
        self.continuation = continuation
        self.text = ""
        self.error: str | None = None
        self.finished = False
        self.cancelled = False
        self._on_end = on_end
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="text sampling", daemon=True)

    def start(self) -> SamplingJob:
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Stop after the character being drawn."""
        self.cancelled = True
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        """True once the thread has ended."""
        if self._thread.ident is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def progress(self) -> tuple[int, int]:
        return len(self.text), self.continuation.length

    def _work(self) -> None:
        continuation = self.continuation
        try:
            while not continuation.done and not self._stop.is_set():
                continuation.advance(self.CHUNK)
                self.text = continuation.text
        except Exception as exc:  # noqa: BLE001 (shown to the user, never raised into Qt)
            self.error = str(exc) if isinstance(exc, PredictError) else \
                f"Sampling failed: {type(exc).__name__}: {exc}"  # fmt: skip
        finally:
            self.finished = True
            if self._on_end is not None:
                self._on_end(self)


class TextPredictor:
    """The Predict panel's text side for one session: the `Predictor`'s copy answers what
    comes next; a second copy, made on the first continuation, draws continuations."""

    def __init__(self, predictor: Predictor) -> None:
        self.predictor = predictor
        vocabulary = vocabulary_of(predictor.dataset)
        shape = predictor.sample_shape
        if not vocabulary:
            raise PredictError("This data set has no vocabulary: typing text needs a text "
                               "data set, whose characters are the model's tokens.")  # fmt: skip
        if len(shape) != 1:
            raise PredictError(f"A text model reads a row of token ids, samples of shape (T,); "
                               f"these samples have shape {shape}.")  # fmt: skip
        self.model = TextModel(predictor.network, vocabulary, shape[0], predictor.input_dtype)
        self._sampler: Predictor | None = None
        self.job: SamplingJob | None = None

    @property
    def vocabulary(self) -> tuple[str, ...]:
        return self.model.vocabulary

    @property
    def context(self) -> int:
        return self.model.context

    def decode(self, ids: Sequence[int]) -> str:
        vocabulary = self.vocabulary
        return "".join(vocabulary[int(i)] if 0 <= int(i) < len(vocabulary) else "\ufffd"
                       for i in np.asarray(ids).reshape(-1))  # fmt: skip

    def next_characters(self, text: str) -> NextCharacters:
        """What follows `text`, with the session's current weights."""
        step = self.predictor.load_weights()
        return self.model.next_characters(text, step)

    def continuation(self, prompt: str, length: int, temperature: float,
                     seed: int) -> Continuation:  # fmt: skip
        """A continuation to draw on the sampling copy, its weights the session's now."""
        self.stop()
        if self._sampler is None:
            self._sampler = Predictor(self.predictor.session)
        self._sampler.load_weights()
        model = TextModel(self._sampler.network, self.vocabulary, self.context,
                          self.predictor.input_dtype)  # fmt: skip
        return Continuation(model, prompt, length, temperature, seed)

    def start_sampling(self, prompt: str, length: int, temperature: float, seed: int,
                       on_end: Callable[[SamplingJob], None] | None = None) -> SamplingJob:
        """Draw a continuation on a thread of its own; the job says how far it got."""
        self.job = SamplingJob(self.continuation(prompt, length, temperature, seed), on_end)
        return self.job.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop a continuation being drawn (it ends after its current character)."""
        job = self.job
        if job is not None and job.running:
            job.cancel()
            if not job.wait(timeout):
                self._sampler = None  # still drawing: the next continuation gets a new copy
