"""`cellwright predict PROJECT --input X.npy … --output Y.npy …`: the network's outputs for arrays.

The network runs in predict mode (Dropout passes everything, BatchNorm uses its moving
statistics) on the project's saved weights, `--batch-size` rows at a time.

- Inputs: one `.npy` file per Input node, in the order `cellwright info` lists them (the
  order the compiled network takes them, `app.compiler.network_io`). Each holds a batch:
  the first axis counts samples, the rest must be the Input node's shape; every input has
  the same number of samples. Input files are memory-mapped, so a batch larger than memory
  can be predicted.
- Number types: a float32 (or float64) input takes any float or integer array; the values
  are converted to the input's type, and refused if they fall outside its range (a float64
  1e300 is no float32). An int32/int64 input (token ids) takes integer arrays whose values
  fit; floats and booleans are refused rather than guessed at.
- Outputs: one `.npy` per Output node, in that order, or a single `FILE.npz` holding every
  output under its Output node's name. Each `.npy` is written straight to disk chunk by
  chunk (memory does not grow with the batch); files appear only when the whole batch has
  been predicted.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

import engine
from app.cli import EXIT_OK, fail, say
from app.cli.opening import open_project
from app.compiler import CompileError, compile_project
from app.compiler.network_io import output_nodes
from app.compiler.rules import text as shape_text
from app.io.project_file import ProjectFileError

DEFAULT_BATCH = 256
NPY_MAGIC = b"\x93NUMPY"


class PredictFailed(Exception):
    """Predicting can't go on; the message says why, in the user's words."""


def run(args: argparse.Namespace) -> int:
    path = Path(args.project)
    try:
        project = open_project(path, args)
    except ProjectFileError as exc:
        return fail(str(exc))
    try:
        compiled = compile_project(project)
    except CompileError as exc:
        return fail(f"{path.name}: {exc}")
    names = [node.name for node in output_nodes(project.graph)]
    try:
        targets = output_targets(args.output, names)
        arrays = [read_input(Path(file)) for file in args.input]
        inputs = check_inputs(arrays, args.input, compiled.input_names, compiled.input_shapes,
                              compiled.input_dtypes)  # fmt: skip
        rows = len(inputs[0])
        written = write_outputs(compiled.network, inputs, compiled.input_names,
                                compiled.input_dtypes, names, targets,
                                args.batch_size or DEFAULT_BATCH)  # fmt: skip
    except PredictFailed as exc:
        return fail(str(exc))
    chunks = math.ceil(rows / (args.batch_size or DEFAULT_BATCH)) if rows else 0
    for file, shapes in written:
        say(f"Wrote {file}: {shapes} ({rows} sample{'s' if rows != 1 else ''}, "
            f"{chunks} chunk{'s' if chunks != 1 else ''}, predict mode)")  # fmt: skip
    return EXIT_OK


# ---- reading ---------------------------------------------------------------------------------


def read_input(path: Path) -> np.ndarray:
    """The array of a `.npy` file, memory-mapped (read as it is used); PredictFailed says why
    it can't be read."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(NPY_MAGIC))
        if head.startswith(b"PK"):
            raise PredictFailed(f"{path.name} is an .npz (several arrays); each --input is one "
                                ".npy file (np.save).")  # fmt: skip
        if head != NPY_MAGIC:
            raise PredictFailed(f"{path.name} is not a .npy file (np.save writes them).")
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError:
        raise PredictFailed(f"{path}: no such file.") from None
    except IsADirectoryError:
        raise PredictFailed(f"{path} is a folder, not a .npy file.") from None
    except PermissionError:
        raise PredictFailed(f"{path}: permission denied.") from None
    except (ValueError, OSError, EOFError) as exc:
        raise PredictFailed(f"{path.name} is damaged or holds Python objects, which are never "
                            f"loaded ({exc}).") from None  # fmt: skip


def describe(shape: Sequence, dtype) -> str:
    return f"{shape_text(tuple(shape)) if len(shape) != 1 else f'({shape[0]},)'} {dtype}"


def check_inputs(arrays: Sequence[np.ndarray], files: Sequence[str], names: Sequence[str],
                 shapes: Sequence[tuple], dtypes: Sequence[str]) -> list[np.ndarray]:
    """The arrays, checked against the network's inputs (same order); PredictFailed names
    the input, the shape and type it expects and what the file holds."""
    if len(arrays) != len(names):
        listed = ", ".join(f"'{n}'" for n in names)
        raise PredictFailed(f"The network takes {len(names)} input{'s' if len(names) != 1 else ''}"
                            f" ({listed}, in this order); {len(arrays)} --input given.")
    rows = None
    for array, file, name, shape, dtype in zip(arrays, files, names, shapes, dtypes,
                                               strict=True):  # fmt: skip
        held = f"{Path(file).name} holds {describe(array.shape, array.dtype)}"
        expects = f"input '{name}' expects {describe(shape, dtype)}"
        if array.ndim != len(shape) or tuple(array.shape[1:]) != tuple(shape[1:]):
            raise PredictFailed(f"{expects}; {held}.")
        why = refused_dtype(array.dtype, np.dtype(dtype))
        if why:
            raise PredictFailed(f"{expects}; {held}: {why}.")
        if rows is not None and len(array) != rows:
            raise PredictFailed(f"All inputs need the same number of samples: "
                                f"'{names[0]}' has {rows}, '{name}' has {len(array)}.")
        rows = len(array)
    if not rows:
        raise PredictFailed("The input files hold no samples (their first axis is 0).")
    return list(arrays)


def refused_dtype(held: np.dtype, wanted: np.dtype) -> str | None:
    """Why an array of type `held` can't feed an input of type `wanted` (None: it can)."""
    if held.kind not in "iuf":
        return f"{held} values are no numbers for the network"
    if wanted.kind == "f" or held.kind in "iu":
        return None
    return f"{wanted} takes whole numbers (token ids); floats are not rounded for you"


def converted(chunk: np.ndarray, wanted: np.dtype, name: str, start: int) -> np.ndarray:
    """`chunk` (samples from `start` on) in the input's type; PredictFailed if a value does
    not fit it."""
    where = f"input '{name}', samples {start} to {start + len(chunk) - 1}"
    if chunk.dtype == wanted:
        return np.ascontiguousarray(chunk)
    if wanted.kind in "iu":
        info = np.iinfo(wanted)
        if chunk.size and (chunk.min() < info.min or chunk.max() > info.max):
            raise PredictFailed(f"{where}: values outside {wanted}'s range ({info.min} to "
                                f"{info.max}).")  # fmt: skip
        return chunk.astype(wanted)
    with np.errstate(over="ignore"):
        out = chunk.astype(wanted)
    if chunk.dtype.kind == "f" and np.isinf(out).sum() != np.isinf(chunk).sum():
        raise PredictFailed(f"{where}: values too large for {wanted} (largest "
                            f"{np.finfo(wanted).max:.3g}).")  # fmt: skip
    return out


# ---- running ---------------------------------------------------------------------------------


def predict_chunks(network, inputs: Sequence[np.ndarray], dtypes: Sequence[str],
                   names: Sequence[str], batch_size: int
                   ) -> Iterator[tuple[int, list[np.ndarray]]]:  # fmt: skip
    """(first row, outputs) per chunk of `batch_size` rows, in predict mode, no gradients."""
    network.set_train(False)
    network.pick = None  # every Output node's result, not only the trained one's
    rows = len(inputs[0])
    for start in range(0, rows, batch_size):
        stop = min(start + batch_size, rows)
        batch = [engine.Tensor(converted(np.asarray(x[start:stop]), np.dtype(d), n, start))
                 for x, d, n in zip(inputs, dtypes, names, strict=True)]  # fmt: skip
        try:
            with engine.no_grad(), np.errstate(all="ignore"):  # huge weights show in the output
                result = network(*batch)
        except Exception as exc:  # the layers' own checks (a token id beyond the vocabulary…)
            raise PredictFailed(f"The network can't run on samples {start} to {stop - 1}: "
                                f"{exc}") from None  # fmt: skip
        outs = list(result) if isinstance(result, tuple) else [result]
        yield start, [np.asarray(o.asnumpy()) for o in outs]


def output_targets(files: Sequence[str], names: Sequence[str]) -> list[Path]:
    """The --output files checked against the Output nodes: one .npy per output, or a single
    .npz for all of them."""
    paths = [Path(f) for f in files]
    if len(paths) == 1 and paths[0].suffix.lower() == ".npz":
        return paths
    wrong = [p.name for p in paths if p.suffix.lower() != ".npy"]
    listed = ", ".join(f"'{n}'" for n in names)
    if wrong:
        raise PredictFailed(f"{wrong[0]}: an --output is a .npy file per output ({listed}), or "
                            "a single .npz file for all of them.")  # fmt: skip
    if len(paths) != len(names):
        raise PredictFailed(f"The network gives {len(names)} output{'s' if len(names) != 1 else ''}"
                            f" ({listed}, in this order); {len(paths)} --output given (or give "
                            "one .npz file for all).")  # fmt: skip
    if len(set(map(os.path.abspath, paths))) != len(paths):
        raise PredictFailed("Each --output needs a file of its own.")
    return paths


def write_outputs(network, inputs: Sequence[np.ndarray], input_names: Sequence[str],
                  input_dtypes: Sequence[str], names: Sequence[str], targets: Sequence[Path],
                  batch_size: int) -> list[tuple[Path, str]]:  # fmt: skip
    """Predict every row, `batch_size` at a time, and write the outputs named `names` to
    `targets` (a .npy each, or one .npz); [(file, what it now holds)]. Nothing is written
    unless every chunk ran."""
    rows = len(inputs[0])
    npz = len(targets) == 1 and targets[0].suffix.lower() == ".npz"
    temps = [_temporary(t) for t in targets]
    sinks: list[np.ndarray] = []
    try:
        chunks = predict_chunks(network, inputs, input_dtypes, input_names, batch_size)
        for start, outs in chunks:
            if len(outs) != len(names):
                raise PredictFailed(f"The network gave {len(outs)} outputs, not {len(names)}.")
            if not sinks:
                places = [None] * len(outs) if npz else temps
                sinks = [_sink(place, out, rows, name)
                         for place, out, name in zip(places, outs, names, strict=True)]
            count = min(batch_size, rows - start)
            for sink, out, name in zip(sinks, outs, names, strict=True):
                if out.ndim == 0 or len(out) != count or out.shape[1:] != sink.shape[1:]:
                    raise PredictFailed(f"Output '{name}' has shape {shape_text(out.shape)} for "
                                        f"{count} samples: without one row per sample the "
                                        "chunks can't be joined.")  # fmt: skip
                sink[start:start + count] = out
        held = [describe(sink.shape, sink.dtype) for sink in sinks]
        if npz:
            with open(temps[0], "wb") as fh:
                np.savez(fh, **dict(zip(names, sinks, strict=True)))
        else:
            for sink in sinks:
                sink.flush()
        sinks.clear()  # the memory maps are closed before their files are renamed
        for tmp, target in zip(temps, targets, strict=True):
            os.replace(tmp, target)
    except OSError as exc:
        named = {str(tmp): target for tmp, target in zip(temps, targets, strict=True)}
        where = named.get(str(exc.filename), exc.filename or targets[0])
        raise PredictFailed(f"Could not write {where}: {exc.strerror or exc}.") from None
    finally:
        sinks.clear()
        for tmp in temps:
            with contextlib.suppress(OSError):
                tmp.unlink()
    if npz:
        return [(targets[0], ", ".join(f"'{n}' {h}" for n, h in zip(names, held, strict=True)))]
    return list(zip(targets, held, strict=True))


def _temporary(target: Path) -> Path:
    return target.with_name(f".{target.name}.writing{target.suffix}")


def _sink(tmp: Path | None, first: np.ndarray, rows: int, name: str) -> np.ndarray:
    """Where one output's rows go: a .npy on disk (memory-mapped), or memory for an .npz."""
    if first.ndim == 0:
        raise PredictFailed(f"Output '{name}' is a single number, not one row per sample.")
    shape = (rows, *first.shape[1:])
    if tmp is None:
        return np.empty(shape, dtype=first.dtype)
    return np.lib.format.open_memmap(tmp, mode="w+", dtype=first.dtype, shape=shape)
