"""A data set held in memory: samples, labels or targets, a seeded split and seeded batches."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

CLASSIFICATION = "classification"
REGRESSION = "regression"
TASKS = (CLASSIFICATION, REGRESSION)
MAX_DATA_FILE_BYTES = 1 << 30  # the largest CSV or NPZ file a data set is read from


class DatasetError(ValueError):
    """A data set that cannot be made or read; the message is meant for the user."""


@dataclass(frozen=True, eq=False)
class Dataset:
    """N samples `x` (float32, shape (N, ...)) with their answers `y`.

    Token samples: with a `vocabulary` (the text each token id stands for, index = id),
    `x` holds int64 token ids of shape (N, T), each in [0, len(vocabulary)); without one
    the samples are always float32. `chronological` marks samples cut from one series in
    order (sliding windows): `split` then holds back the last ones instead of a random
    choice, so validation windows never overlap training ones. `note` is something the
    user should know about how the set was made (e.g. a text file changed since its
    vocabulary was saved); empty when there is nothing to say. `index` says which sample
    of the set it was taken from each row is (`take` and `split` fill it in; None: the
    rows are the set itself), read through `rows`: a split's rows name their samples of
    the whole set, as data edits (app.datasets.edits) do.

    Classification: `y` holds int64 class indices, shape (N,), each in [0, num_classes);
    `class_names[i]` is what class i is called. Regression: `y` holds float32 targets,
    shape (N, k) (a 1-D `y` becomes (N, 1)); `num_classes` is None and `target_names`
    names the k targets. `feature_names` names the columns of flat (N, d) samples and is
    empty for image-shaped ones. Arrays are converted and checked on construction, so a
    Dataset that exists is always consistent and finite; a violation is a DatasetError.
    """

    x: np.ndarray
    y: np.ndarray
    task: str = CLASSIFICATION
    num_classes: int | None = None
    feature_names: tuple[str, ...] = ()
    name: str = "Data set"
    class_names: tuple[str, ...] = ()
    target_names: tuple[str, ...] = ()
    vocabulary: tuple[str, ...] = ()
    chronological: bool = False
    note: str = ""
    index: np.ndarray | None = None

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "take" in cls.__dict__:  # a subclass's own take (extra per-sample fields) keeps rows
            cls.take = _remembering_rows(cls.__dict__["take"])

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise DatasetError(f"Unknown task {self.task!r}: use 'classification' or 'regression'.")
        x = _numeric(self.x, "The samples")
        if x.ndim < 2:
            raise DatasetError(f"The samples must have shape (N, ...), not {x.shape}.")
        vocabulary = _vocabulary(self.vocabulary)
        x = _tokens(x, len(vocabulary)) if vocabulary else x.astype(np.float32, copy=False)
        if self.task == CLASSIFICATION:
            y, extra = self._check_labels()
        else:
            y, extra = self._check_targets()
        if len(y) != len(x):
            raise DatasetError(f"There are {len(x)} samples but {len(y)} labels.")
        if not np.isfinite(x).all():
            raise DatasetError("The samples contain NaN or infinite values.")
        features = tuple(self.feature_names)
        if x.ndim == 2 and not features:
            prefix = "t" if vocabulary else "x"  # a token sample's columns are positions
            features = tuple(f"{prefix}{i + 1}" for i in range(x.shape[1]))
        if x.ndim == 2 and len(features) != x.shape[1]:
            raise DatasetError(f"{len(features)} feature names for {x.shape[1]} features.")
        index = self.index
        if index is not None:
            index = np.asarray(index, dtype=np.int64).reshape(-1)
            if len(index) != len(x):
                raise DatasetError(f"{len(index)} sample numbers for {len(x)} samples.")
        fields = {"x": x, "y": y, "feature_names": features, "vocabulary": vocabulary,
                  "chronological": bool(self.chronological), "note": str(self.note),
                  "index": index, **extra}
        for field, value in fields.items():
            object.__setattr__(self, field, value)

    def _check_labels(self) -> tuple[np.ndarray, dict]:
        y = _numeric(self.y, "The labels")
        if y.ndim != 1:
            raise DatasetError(f"Class labels must be one number per sample, not shape {y.shape}.")
        if not (np.issubdtype(y.dtype, np.integer) or y.dtype == np.bool_):
            raise DatasetError("Class labels must be whole numbers (0, 1, 2, ...).")
        y = y.astype(np.int64, copy=False)
        if len(y) and y.min() < 0:
            raise DatasetError(f"Class labels cannot be negative (found {y.min()}).")
        num = self.num_classes
        if num is None:
            num = max(int(y.max()) + 1 if len(y) else 0, len(self.class_names), 1)
        if not isinstance(num, int | np.integer) or num < 1:
            raise DatasetError(f"The number of classes must be at least 1, not {num!r}.")
        if len(y) and y.max() >= num:
            raise DatasetError(f"Label {y.max()} is out of range for {num} classes.")
        names = tuple(self.class_names) or tuple(str(i) for i in range(num))
        if len(names) != num:
            raise DatasetError(f"{len(names)} class names for {num} classes.")
        return y, {"num_classes": int(num), "class_names": names, "target_names": ()}

    def _check_targets(self) -> tuple[np.ndarray, dict]:
        if self.num_classes is not None:
            raise DatasetError("A regression data set has no classes (num_classes must be None).")
        y = _numeric(self.y, "The targets")
        y = y.reshape(-1, 1) if y.ndim == 1 else y
        if y.ndim != 2:
            raise DatasetError(f"Targets must have shape (N, k), not {y.shape}.")
        y = y.astype(np.float32, copy=False)
        if not np.isfinite(y).all():
            raise DatasetError("The targets contain NaN or infinite values.")
        names = tuple(self.target_names)
        if not names:
            names = ("y",) if y.shape[1] == 1 else tuple(f"y{i + 1}" for i in range(y.shape[1]))
        if len(names) != y.shape[1]:
            raise DatasetError(f"{len(names)} target names for {y.shape[1]} targets.")
        return y, {"class_names": (), "target_names": names}

    # --- what it is -------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.x)

    @property
    def sample_shape(self) -> tuple[int, ...]:
        """Shape of one sample, e.g. (2,) for 2-D points or (1, 8, 8) for digit images."""
        return tuple(self.x.shape[1:])

    @property
    def rows(self) -> np.ndarray:
        """For each row, the number of its sample in the whole set it was taken from."""
        return np.arange(len(self.x), dtype=np.int64) if self.index is None else self.index

    @property
    def is_tokens(self) -> bool:
        """Whether the samples are int64 token ids (with a vocabulary), not float32 values."""
        return bool(self.vocabulary)

    @property
    def output_size(self) -> int:
        """How many outputs the network's last layer needs: classes or targets."""
        return self.num_classes if self.task == CLASSIFICATION else int(self.y.shape[1])

    def class_counts(self) -> np.ndarray:
        """Samples per class (classification only), length num_classes."""
        if self.task != CLASSIFICATION:
            raise DatasetError("A regression data set has no classes to count.")
        return np.bincount(self.y, minlength=self.num_classes)

    def describe(self) -> str:
        """One line for a status bar, e.g. 'Spirals: 400 samples of 2 features, 2 classes'."""
        shape = self.sample_shape
        if self.is_tokens:
            what = f"{shape[0]} tokens ({len(self.vocabulary)} in the vocabulary)"
        elif len(shape) == 1:
            what = f"{shape[0]} feature{'s' if shape[0] != 1 else ''}"
        else:
            what = "shape " + "×".join(str(s) for s in shape)
        count = len(self)
        head = f"{self.name}: {count} sample{'s' if count != 1 else ''} of {what}"
        if self.task == CLASSIFICATION:
            return f"{head}, {self.num_classes} class{'es' if self.num_classes != 1 else ''}"
        k = self.output_size
        return f"{head}, regression to {k} target{'s' if k != 1 else ''}"

    # --- splitting and batching -----------------------------------------------------

    def take(self, indices: Sequence[int] | np.ndarray, name: str | None = None) -> Dataset:
        """A new data set of the chosen samples (copies), same classes and names; its `rows`
        are the chosen samples' numbers in the whole set."""
        idx = np.asarray(indices, dtype=np.int64)
        return replace(self, x=self.x[idx], y=self.y[idx], name=name or self.name,
                       index=self.rows[idx])  # fmt: skip

    def split(self, validation_fraction: float, seed: int = 0) -> tuple[Dataset, Dataset]:
        """(train, validation): a seeded random split, stratified by class for classification.

        About `validation_fraction` of the samples (rounded to whole samples) go to the
        validation side; both sides keep the original sample order. A fraction of 0 means
        "no validation" and returns every sample as train and an empty validation set.
        ValueError (DatasetError) for a fraction outside [0, 1) or a split that would
        leave either side empty. A `chronological` set holds back its last samples (no
        randomness): its samples overlap their neighbours, so a random choice would
        validate on what was trained on.
        """
        fraction = float(validation_fraction)
        if not 0.0 <= fraction < 1.0:
            raise DatasetError(
                f"The validation fraction must be at least 0 and below 1, not {fraction:g}."
            )
        n = len(self)
        if fraction == 0.0:
            return self.take(np.arange(n)), self.take([], name=f"{self.name} (validation)")
        rng = np.random.default_rng(_seed(seed))
        if self.chronological:
            val = np.arange(n - round(n * fraction), n)
        elif self.task == CLASSIFICATION:
            val = _stratified_pick(self.y, self.num_classes, fraction, rng)
        else:
            val = rng.permutation(n)[: round(n * fraction)]
        if len(val) == 0 or len(val) == n:
            side = "validation" if len(val) == 0 else "training"
            raise DatasetError(
                f"Holding out {fraction:.0%} of {n} samples leaves the {side} set empty; "
                "use a different fraction or more samples."
            )
        is_val = np.zeros(n, dtype=bool)
        is_val[val] = True
        return (
            self.take(np.flatnonzero(~is_val)),
            self.take(np.flatnonzero(is_val), name=f"{self.name} (validation)"),
        )

    def batch_count(self, batch_size: int) -> int:
        """Batches per epoch, counting the last partial one."""
        return -(-len(self) // _batch_size(batch_size))

    def batches(
        self, batch_size: int, shuffle: bool = True, seed: int = 0, epoch: int = 0
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """One epoch of (x, y) batches covering every sample exactly once.

        With `shuffle` the order is a permutation fixed by (seed, epoch): the same pair
        always gives the same batches, each epoch a different order. The last batch is
        smaller when the batch size does not divide the sample count. Batches are copies.
        """
        size = _batch_size(batch_size)  # checked now, not at the first next()
        n = len(self)
        if shuffle:
            order = np.random.default_rng([_seed(seed), _seed(epoch, "epoch")]).permutation(n)
        else:
            order = np.arange(n)
        parts = np.array_split(order, range(size, n, size)) if n else []
        return ((self.x[idx], self.y[idx]) for idx in parts)


def _remembering_rows(take: Callable[..., Dataset]) -> Callable[..., Dataset]:
    """A subclass's `take` made to fill in `index` as Dataset.take does."""

    @functools.wraps(take)
    def wrapper(self: Dataset, indices, name: str | None = None) -> Dataset:
        idx = np.asarray(indices, dtype=np.int64)
        plain = self
        if self.index is not None:  # its own take copies fields it doesn't know: no stale index
            plain = copy.copy(self)
            object.__setattr__(plain, "index", None)
        taken = take(plain, idx, name)
        object.__setattr__(taken, "index", self.rows[idx])  # a new object, made just now
        return taken

    return wrapper


def _stratified_pick(
    y: np.ndarray, num_classes: int, fraction: float, rng: np.random.Generator
) -> np.ndarray:
    """Indices for the validation side: round(n * fraction) of them, shared fairly by class."""
    counts = np.bincount(y, minlength=num_classes)
    wanted = round(len(y) * fraction)
    ideal = counts * fraction
    share = np.floor(ideal).astype(np.int64)
    # Largest remainders get the samples rounding left over (ties: lower class first).
    leftover = wanted - int(share.sum())
    by_remainder = np.argsort(-(ideal - share), kind="stable")
    share[by_remainder[:leftover]] += 1
    picked = [rng.permutation(np.flatnonzero(y == c))[: share[c]] for c in range(num_classes)]
    return np.concatenate(picked) if picked else np.zeros(0, dtype=np.int64)


def _vocabulary(vocabulary) -> tuple[str, ...]:
    """The vocabulary as a tuple of distinct, non-empty texts; DatasetError if it is not."""
    if isinstance(vocabulary, str):
        vocabulary = tuple(vocabulary)  # a text: one token per character
    try:
        tokens = tuple(vocabulary)
    except TypeError:
        raise DatasetError(f"The vocabulary must be a list of texts, not {vocabulary!r}.") from None
    for i, token in enumerate(tokens):
        if not isinstance(token, str) or not token:
            raise DatasetError(f"Vocabulary entry {i} must be a non-empty text, not {token!r}.")
    if len(set(tokens)) != len(tokens):
        twice = next(t for t in tokens if tokens.count(t) > 1)
        raise DatasetError(f"The vocabulary holds {twice!r} twice; each token must be distinct.")
    return tokens


def _tokens(x: np.ndarray, size: int) -> np.ndarray:
    """Token ids as int64 (N, T), each in [0, size); DatasetError saying what is wrong."""
    if x.ndim != 2:
        raise DatasetError(f"Token samples must have shape (N, T), not {x.shape}.")
    if not (np.issubdtype(x.dtype, np.integer) or x.dtype == np.bool_):
        raise DatasetError(f"Token ids must be whole numbers, not {x.dtype} values.")
    x = x.astype(np.int64, copy=False)
    if x.size and (x.min() < 0 or x.max() >= size):
        bad = int(x.min()) if x.min() < 0 else int(x.max())
        raise DatasetError(
            f"Token id {bad} is out of range for a vocabulary of {size}: ids go from 0 "
            f"to {size - 1}."
        )
    return x


def _numeric(values, what: str) -> np.ndarray:
    array = np.asarray(values)
    if array.dtype == object or not (
        np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_
    ):
        raise DatasetError(f"{what} must be numbers, not {array.dtype} values.")
    if np.issubdtype(array.dtype, np.complexfloating):
        raise DatasetError(f"{what} must be real numbers, not complex ones.")
    return array


def _seed(seed: int, what: str = "seed") -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise DatasetError(f"The {what} must be a whole number of 0 or more, not {seed!r}.")
    return int(seed)


def _batch_size(batch_size: int) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer):
        raise DatasetError(f"The batch size must be a whole number, not {batch_size!r}.")
    if batch_size < 1:
        raise DatasetError(f"The batch size must be at least 1, not {batch_size}.")
    return int(batch_size)
