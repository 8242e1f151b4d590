"""Character-level language modelling: a UTF-8 text cut into (context → next character).

Sample i is the `context` characters starting at i × `stride`, as int64 token ids (N, T);
its label is the id of the character after them, (N,) int64: a classification over the
vocabulary's characters. The vocabulary is the text's distinct characters, sorted, unless
one is given: a project keeps the vocabulary its network was made for (the setting's
"vocabulary" entry), so token ids mean the same characters when the file has changed
since. A text with characters that vocabulary lacks is refused, saying which; one that
no longer uses some of them is read, with a `note` saying so. The samples are
`chronological`: validation holds back the end of the text.

A text file is read as a data file is (app.datasets.csv_stream: a regular file, at most
MAX_FILE_BYTES, progress and cancel), decoded as strict UTF-8 (a byte order mark is
skipped, line breaks become "\\n"). An empty file, one that is not UTF-8 or holds NUL
characters, and one shorter than context + 1 characters are refused with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from app.datasets.csv_stream import Cancelled, Progress, open_data_file, shown, size_text
from app.datasets.dataset import CLASSIFICATION, Dataset, DatasetError
from app.datasets.options import check_whole
from app.resources_path import resource_path

SHIPPED_TEXT = ("texts", "genesis.txt")  # under resources/: see resources/texts/README.md
MAX_VOCABULARY = 10_000  # distinct characters; more is not a text a char model can learn
MAX_TOKEN_BYTES = 1 << 30  # the samples' int64 ids, all windows together
TEXT_DEFAULTS = {"context": 32, "stride": 1}  # a text file's options, as the form offers them
SHOWN = {"\n": "⏎", " ": "␣", "\t": "⇥", "\r": "␍"}  # how a class name shows a blank


def make_text(
    n_samples: int | None = None, seed: int = 0, context: int = 32, stride: int = 1,
    path: str | Path | None = None,
) -> Dataset:  # fmt: skip
    """The shipped public-domain text (Genesis, KJV; about 197,000 characters) as a
    char-level language-modelling set. `n_samples=None` keeps every window; a number keeps
    a seeded random choice of them (in text order)."""
    text = read_text(Path(path) if path is not None else resource_path(*SHIPPED_TEXT))
    data = char_windows(text, context, stride, name="Text: Genesis")
    if n_samples is None:
        return data
    n = check_whole(n_samples, "n_samples")
    if n > len(data):
        raise DatasetError(f"The text has {len(data):,} samples of context {context}; "
                           f"{n:,} were asked for.")  # fmt: skip
    rng = np.random.default_rng(check_whole(seed, "seed"))
    return data.take(np.sort(rng.permutation(len(data))[:n]))


def load_text(
    path: str | Path,
    context: int = 32,
    stride: int = 1,
    vocabulary: Sequence[str] | str | None = None,
    name: str | None = None,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> Dataset:
    """A UTF-8 text file as a char-level language-modelling set (see the module's text)."""
    path = Path(path)
    text = read_text(path, progress, cancelled)
    return char_windows(text, context, stride, vocabulary, name or path.name)


def read_text(path: Path, progress: Progress | None = None,
              cancelled: Cancelled | None = None) -> str:  # fmt: skip
    """The file's text; DatasetError saying why if it is empty or not UTF-8 text."""
    with open_data_file(path, progress, cancelled) as file:
        data = file.read()
    if not data:
        raise DatasetError(f"The file {path.name} is empty: there is no text to learn.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(
            f"{path.name} is not a UTF-8 text file (byte {exc.start:,} is {data[exc.start]:#04x}, "
            "which UTF-8 does not allow there). Save it as UTF-8 text and choose it again."
        ) from None
    if "\x00" in text:
        raise DatasetError(f"{path.name} holds NUL characters: it is not a text file.")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        raise DatasetError(f"The file {path.name} is empty: there is no text to learn.")
    return text


def build_vocabulary(text: str) -> tuple[str, ...]:
    """The text's distinct characters, sorted by code point."""
    return tuple(sorted(set(text)))


def char_windows(
    text: str,
    context: int = 32,
    stride: int = 1,
    vocabulary: Sequence[str] | str | None = None,
    name: str = "Text",
) -> Dataset:
    """(context characters → the next one) samples of `text`, ids from `vocabulary`
    (default: the text's own). DatasetError if the text is too short or has characters
    the vocabulary lacks."""
    context, stride = check_whole(context, "context"), check_whole(stride, "stride")
    if len(text) < context + 1:
        raise DatasetError(
            f"The text has {len(text):,} character{'s' if len(text) != 1 else ''}; a context "
            f"of {context:,} needs at least {context + 1:,} (the context and the character "
            "after it). Use a shorter context or a longer text."
        )
    own = build_vocabulary(text)
    note = ""
    if vocabulary is None:
        chars = own
    else:
        chars = _given_vocabulary(vocabulary)
        lacking = sorted(set(own) - set(chars))
        if lacking:
            raise DatasetError(
                f"The text has {len(lacking)} character{'s' if len(lacking) != 1 else ''} the "
                f"saved vocabulary lacks ({_listed(lacking)}): the file changed since the "
                "vocabulary was saved with the project. Choose the file again to build a "
                "new vocabulary (the network's Embedding and output sizes follow it)."
            )
        unused = len(chars) - len(own)
        if unused:
            note = (
                f"The text changed since its vocabulary was saved: {unused} of its "
                f"{len(chars)} characters no longer appear. Token ids keep the saved meaning."
            )
    if len(chars) > MAX_VOCABULARY:
        raise DatasetError(
            f"The text has {len(chars):,} different characters; the most is "
            f"{MAX_VOCABULARY:,}. Is it a text file?"
        )
    ids = _ids(text, chars)
    count = (len(text) - context - 1) // stride + 1
    if count * context * 8 > MAX_TOKEN_BYTES:
        raise DatasetError(
            f"{count:,} samples of {context:,} characters would take "
            f"{size_text(count * context * 8)}; the most is {size_text(MAX_TOKEN_BYTES)}. "
            "Use a larger stride or a shorter context."
        )
    starts = np.arange(count, dtype=np.int64) * stride
    x = ids[starts[:, None] + np.arange(context)]
    y = ids[starts + context]
    names = tuple(shown_char(c) for c in chars)
    return Dataset(x, y, CLASSIFICATION, len(chars), name=name, class_names=names,
                   vocabulary=chars, chronological=True, note=note)  # fmt: skip


def shown_char(char: str) -> str:
    """How a character is written as a class name: blanks as visible signs ('␣', '⏎')."""
    if char in SHOWN:
        return SHOWN[char]
    return char if char.isprintable() else f"U+{ord(char):04X}"


def pinned(spec: Mapping[str, Any], dataset: Dataset) -> dict[str, Any] | None:
    """A text file's `dataset` setting with the vocabulary `dataset` was read with, to save
    with the project; None when the setting is no text file's or already holds it."""
    if not isinstance(spec, Mapping) or "text" not in spec or not dataset.vocabulary:
        return None
    if spec.get("vocabulary") is not None:
        return None
    return {**spec, "vocabulary": list(dataset.vocabulary)}


def _given_vocabulary(vocabulary: Sequence[str] | str) -> tuple[str, ...]:
    if isinstance(vocabulary, str):
        vocabulary = list(vocabulary)
    if not isinstance(vocabulary, list | tuple) or not vocabulary:
        raise DatasetError(
            f"The saved vocabulary must be a list of characters, not {shown(vocabulary)}."
        )
    for i, char in enumerate(vocabulary):
        if not isinstance(char, str) or len(char) != 1:
            raise DatasetError(
                f"Entry {i} of the saved vocabulary must be one character, not {shown(char)}."
            )
    if len(set(vocabulary)) != len(vocabulary):
        raise DatasetError("The saved vocabulary holds a character twice.")
    return tuple(vocabulary)


def _ids(text: str, chars: tuple[str, ...]) -> np.ndarray:
    """The text as int64 ids into `chars` (every character of it is in `chars`)."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    points = np.array([ord(c) for c in chars], dtype=np.uint32)
    order = np.argsort(points)
    where = np.searchsorted(points[order], codes)
    return order[where].astype(np.int64)


def _listed(chars: list[str], most: int = 10) -> str:
    shown_ = ", ".join(repr(c) for c in chars[:most])
    return shown_ + (f", … ({len(chars)} in all)" if len(chars) > most else "")
