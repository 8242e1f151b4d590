"""Char-level language modelling: token samples, vocabularies, refusals, the shipped text."""

import numpy as np
import pytest

from app.datasets import BUILTIN, CLASSIFICATION, Dataset, DatasetError, load_text, make_text
from app.datasets.loading import DatasetLoader, DatasetRefused, read_dataset
from app.datasets.text import char_windows, pinned, read_text, shown_char
from app.resources_path import resource_path

# ---- token samples in a Dataset -----------------------------------------------------------


def test_a_dataset_with_a_vocabulary_keeps_int64_token_ids():
    data = Dataset(np.array([[0, 1], [2, 1]], dtype=np.int32), [1, 0], vocabulary=("a", "b", "c"))
    assert data.x.dtype == np.int64 and data.is_tokens
    assert data.feature_names == ("t1", "t2")
    assert "2 tokens (3 in the vocabulary)" in data.describe()
    taken = data.take([1])
    assert taken.x.dtype == np.int64 and taken.vocabulary == ("a", "b", "c")
    plain = Dataset(np.array([[0, 1], [2, 1]]), [1, 0])  # no vocabulary: float32 as ever
    assert plain.x.dtype == np.float32 and not plain.is_tokens


@pytest.mark.parametrize(
    "x, vocabulary, words",
    [
        ([[0, 3]], ("a", "b", "c"), "Token id 3 is out of range for a vocabulary of 3"),
        ([[0, -1]], ("a", "b"), "Token id -1 is out of range"),
        ([[0.5, 1.0]], ("a", "b"), "Token ids must be whole numbers"),
        ([[[0, 1]]], ("a", "b"), r"Token samples must have shape \(N, T\)"),
        ([[0, 1]], ("a", "a"), "holds 'a' twice"),
        ([[0, 1]], ("a", ""), "Vocabulary entry 1 must be a non-empty text"),
    ],
)
def test_bad_token_samples_are_refused(x, vocabulary, words):
    with pytest.raises(DatasetError, match=words):
        Dataset(np.array(x), [0] * len(x), vocabulary=vocabulary)


def test_a_chronological_split_holds_back_the_last_samples():
    data = Dataset(np.arange(20).reshape(10, 2), np.arange(10) % 2, chronological=True)
    train, val = data.split(0.3, seed=4)
    assert np.array_equal(val.x[:, 0], [14, 16, 18]) and len(train) == 7


# ---- text to samples ---------------------------------------------------------------------


def test_windows_of_a_text_predict_the_next_character():
    data = char_windows("abcabd", context=3, stride=1)
    assert data.vocabulary == ("a", "b", "c", "d")
    assert data.x.dtype == np.int64 and data.x.shape == (3, 3)
    assert data.task == CLASSIFICATION and data.num_classes == 4
    decoded = ["".join(data.vocabulary[i] for i in row) for row in data.x]
    assert decoded == ["abc", "bca", "cab"]
    assert "".join(data.vocabulary[i] for i in data.y) == "abd"
    strided = char_windows("abcdefgh", context=2, stride=3)
    assert ["".join(strided.vocabulary[i] for i in row) for row in strided.x] == ["ab", "de"]
    assert data.chronological


def test_class_names_show_blanks_visibly():
    data = char_windows("a b\na", context=2)
    assert data.class_names == ("⏎", "␣", "a", "b")
    assert shown_char("\x07") == "U+0007"


def test_a_text_file_reads_with_its_own_vocabulary(tmp_path):
    path = tmp_path / "poem.txt"
    path.write_bytes("\ufeffsing, O muse\r\nof wrath\r\n".encode())
    data = load_text(path, context=4)
    assert data.name == "poem.txt"
    assert "\r" not in data.vocabulary and "\ufeff" not in data.vocabulary
    assert data.vocabulary == tuple(sorted(set("sing, O muse\nof wrath\n")))
    assert len(data) == len("sing, O muse\nof wrath\n") - 4


@pytest.mark.parametrize(
    "content, words",
    [
        (b"", "is empty: there is no text to learn"),
        (b"\xef\xbb\xbf", "is empty"),
        (b"caf\xe9 au lait", r"not a UTF-8 text file \(byte 3 is 0xe9"),
        (b"ab\x00cd", "holds NUL characters"),
        (b"abcd", "The text has 4 characters; a context of 8 needs at least 9"),
    ],
)
def test_bad_text_files_are_refused_with_the_reason(tmp_path, content, words):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(DatasetError, match=words):
        load_text(path, context=8)


def test_bad_text_options_are_refused(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("hello world")
    with pytest.raises(DatasetError, match="Context must be from 1"):
        load_text(path, context=0)
    with pytest.raises(DatasetError, match="Stride must be a whole number"):
        load_text(path, stride="2")
    with pytest.raises(DatasetRefused, match="no file"):
        read_dataset({"text": "missing.txt"}, tmp_path)


# ---- a saved vocabulary -----------------------------------------------------------------


def test_a_saved_vocabulary_keeps_ids_when_the_file_changes(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("the cat sat on the mat")
    first = read_dataset({"text": "t.txt", "context": 3}, tmp_path)
    spec = pinned({"text": "t.txt", "context": 3}, first)
    assert spec["vocabulary"] == list(first.vocabulary)
    assert pinned(spec, first) is None  # already saved
    path.write_text("the tea")  # c, m, n, o, s gone; ids of the rest must not move
    again = read_dataset(spec, tmp_path)
    assert again.vocabulary == first.vocabulary
    assert "".join(again.vocabulary[i] for i in again.x[0]) == "the"
    assert "5 of its 10 characters no longer appear" in again.note
    fresh = read_dataset({"text": "t.txt", "context": 3}, tmp_path)
    assert fresh.vocabulary != first.vocabulary and fresh.note == ""
    path.write_text("the dog sat")  # d, g are new: the network was not made for them
    lacking = r"2 characters the saved vocabulary lacks \('d', 'g'\)"
    with pytest.raises(DatasetRefused, match=lacking):
        read_dataset(spec, tmp_path)


def test_a_damaged_saved_vocabulary_is_refused(tmp_path):
    (tmp_path / "t.txt").write_text("abcabc")
    for vocabulary, words in (([], "must be a list of characters"), (["ab", "c"], "one character"),
                              (["a", "a", "b", "c"], "a character twice")):  # fmt: skip
        with pytest.raises(DatasetRefused, match=words):
            read_dataset({"text": "t.txt", "context": 2, "vocabulary": vocabulary}, tmp_path)


def test_the_loader_reads_a_changed_text_file_again(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("abcdef")
    loader = DatasetLoader()
    assert len(loader.load({"text": "t.txt", "context": 2}, tmp_path)) == 4
    path.write_text("abcdefgh!")
    assert len(loader.load({"text": "t.txt", "context": 2}, tmp_path)) == 7


# ---- the shipped text ---------------------------------------------------------------------


def test_the_shipped_text_is_small_public_domain_and_built_in():
    path = resource_path("texts", "genesis.txt")
    assert path.is_file() and path.stat().st_size < 400_000
    assert "public domain" in (path.parent / "README.md").read_text().lower()
    text = read_text(path)
    assert text.startswith("THE FIRST BOOK OF MOSES") and len(set(text)) < 100
    data = make_text(n_samples=500, seed=1, context=16)
    assert data.x.shape == (500, 16) and data.x.dtype == np.int64
    assert data.vocabulary == tuple(sorted(set(text))) and data.num_classes == len(set(text))
    assert np.array_equal(data.x, make_text(n_samples=500, seed=1, context=16).x)
    assert not np.array_equal(data.x, make_text(n_samples=500, seed=2, context=16).x)
    assert BUILTIN["text"].options == {"n_samples": None, "seed": 0, "context": 32, "stride": 1}
    with pytest.raises(DatasetError, match="were asked for"):
        make_text(n_samples=10**6, context=16, stride=100)
