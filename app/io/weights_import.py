"""Read weights trained elsewhere: an `.npz` of named arrays, or a PyTorch `state_dict` file.

    arrays = read_weights("trained.pt")   # {name: np.ndarray}; WeightsFileError says why not

An `.npz` is read with NumPy alone (`allow_pickle=False`). A PyTorch file (`torch.save`,
the zip format; the legacy format too, as torch reads it) is read with
`torch.load(weights_only=True)`, which builds tensors and plain containers only and never
runs code from the file; without torch installed it is refused with that reason. torch is
imported only then, never when this module is imported. A checkpoint holding the
state_dict under "state_dict" or "model_state_dict" is read from there. Which names go
where is the PyTorch export's business (`app.export.torch_weights`).
"""

from __future__ import annotations

import importlib
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

TORCH_MISSING = "reading a PyTorch file needs torch: pip install torch; an .npz needs nothing"
ZIP_MAGIC, PICKLE_MAGIC = b"PK\x03\x04", b"\x80"
CHECKPOINT_KEYS = ("state_dict", "model_state_dict")  # where checkpoints keep the weights
SUFFIXES = (".npz", ".pt", ".pth")


class WeightsFileError(Exception):
    """A weights file can't be read; the message says why, in the user's words."""


def read_weights(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """The named arrays a weights file holds (PyTorch tensors as NumPy arrays, bfloat16 and
    float16 widened to float32). Raises WeightsFileError, and nothing else, for a file
    that is missing, damaged, of another kind, or a PyTorch file without torch installed."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except FileNotFoundError:
        raise WeightsFileError(f"{path}: no such file.") from None
    except IsADirectoryError:
        raise WeightsFileError(f"{path} is a folder, not a weights file.") from None
    except OSError as exc:
        raise WeightsFileError(f"{path}: {exc.strerror or exc}.") from None
    kind = _kind(path, head)
    if kind == "npz":
        return _read_npz(path)
    if kind == "torch":
        return _read_torch(path)
    raise WeightsFileError(f"{path.name} is neither an .npz nor a PyTorch state_dict file "
                           "(torch.save); those are the weights files read.")  # fmt: skip


def _kind(path: Path, head: bytes) -> str | None:
    if head.startswith(ZIP_MAGIC):
        try:
            with zipfile.ZipFile(path) as archive:
                names = archive.namelist()
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise WeightsFileError(f"{path.name} is a damaged zip file ({exc}).") from None
        if any(name == "data.pkl" or name.endswith("/data.pkl") for name in names):
            return "torch"
        if names and all(name.endswith(".npy") for name in names):
            return "npz"
        return None
    if head.startswith(PICKLE_MAGIC) and path.suffix.lower() in (".pt", ".pth"):
        return "torch"  # torch's legacy format: torch.load still reads it safely
    return None


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except ValueError as exc:
        raise WeightsFileError(f"{path.name}: an array holds Python objects, which are never "
                               f"loaded ({exc}).") from None  # fmt: skip
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise WeightsFileError(f"{path.name} is damaged ({exc}).") from None


def _read_torch(path: Path) -> dict[str, np.ndarray]:
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        raise WeightsFileError(f"{path.name}: {TORCH_MISSING}.") from None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # UnpicklingError for a forbidden object, RuntimeError, …
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise WeightsFileError(f"{path.name} can't be read safely as a state_dict "
                               f"({first}).") from None  # fmt: skip
    if isinstance(state, Mapping):
        for key in CHECKPOINT_KEYS:
            if isinstance(state.get(key), Mapping):
                state = state[key]
                break
    if not isinstance(state, Mapping):
        raise WeightsFileError(f"{path.name} holds a {type(state).__name__}, not a state_dict "
                               "(names → tensors): save model.state_dict().")  # fmt: skip
    arrays, odd = {}, []
    for name, value in state.items():
        if not isinstance(value, torch.Tensor):
            odd.append(f"'{name}' ({type(value).__name__})")
            continue
        tensor = value.detach().cpu()
        if tensor.dtype in (torch.bfloat16, torch.float16):
            tensor = tensor.float()
        arrays[str(name)] = tensor.numpy().copy()
    if odd:
        raise WeightsFileError(f"{path.name}: a state_dict holds tensors only; these are not: "
                               f"{', '.join(odd)}.")  # fmt: skip
    return arrays
