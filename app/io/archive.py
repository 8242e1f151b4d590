"""Reading zip members and .npy arrays from untrusted bytes: sizes capped first, never pickle."""

from __future__ import annotations

import io
import math
import struct
import tokenize
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

import numpy as np

NUMERIC_KINDS = "biuf"  # bool, signed, unsigned, float: what a Parameter can hold
MAX_NDIM = 32
MAX_NPY_HEADER = 10_000
RATIO_FLOOR = 1 << 20  # members smaller than this can't be bombs worth the name

# Everything malformed input can make zipfile, zlib or NumPy's header parser raise.
DAMAGE = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    EOFError,
    ValueError,  # includes UnicodeDecodeError
    TypeError,
    KeyError,
    IndexError,
    OverflowError,
    struct.error,
    NotImplementedError,
    SyntaxError,  # NumPy reads .npy headers with ast.literal_eval...
    tokenize.TokenError,  # ...after a pass through tokenize
    RecursionError,
    MemoryError,
)


class ArchiveError(Exception):
    """What is wrong with an archive, in words fit for the user."""


@dataclass(frozen=True)
class Limits:
    total_bytes: int  # all members together, uncompressed
    members: int  # how many members
    ratio: float = 200.0  # largest uncompressed/compressed ratio (past RATIO_FLOOR)


# The largest size an entry of this name may unpack to; None if no such entry is expected.
MemberCap = Callable[[str], int | None]


class ZipReader:
    """A zip whose directory was checked against `cap` and `limits`; members are unpacked
    one at a time, when asked for (so what is read first can decide what comes next)."""

    def __init__(self, source: IO[bytes], cap: MemberCap, limits: Limits) -> None:
        try:
            self._zf = zipfile.ZipFile(source)
        except DAMAGE as exc:
            raise ArchiveError(f"it is damaged or not a zip archive ({_describe(exc)})") from None
        try:
            infos = self._zf.infolist()
            check_directory(infos, cap, limits)
        except BaseException:
            self._zf.close()
            raise
        self.infos = {info.filename: info for info in infos}

    def __enter__(self) -> ZipReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self._zf.close()

    def size(self, name: str) -> int:
        """What member `name` unpacks to, as its directory entry says."""
        return self.infos[name].file_size

    def read(self, name: str) -> bytes:
        try:
            return _read_member(self._zf, self.infos[name])
        except ArchiveError:
            raise
        except DAMAGE as exc:
            raise ArchiveError(f"it is damaged or not a zip archive ({_describe(exc)})") from None


def read_zip(source: IO[bytes], cap: MemberCap, limits: Limits) -> dict[str, bytes]:
    """All members of a zip by name, after checking the directory against `cap` and `limits`.

    The directory is checked before any member is decompressed, and each read is also
    capped by its declared size, so a lying directory can't make us inflate more.
    """
    try:
        with zipfile.ZipFile(source) as zf:
            infos = zf.infolist()
            check_directory(infos, cap, limits)
            return {info.filename: _read_member(zf, info) for info in infos}
    except ArchiveError:
        raise
    except DAMAGE as exc:
        raise ArchiveError(f"it is damaged or not a zip archive ({_describe(exc)})") from None


def check_directory(infos: list[zipfile.ZipInfo], cap: MemberCap, limits: Limits) -> None:
    seen: set[str] = set()
    total = 0
    for info in infos:
        name = info.filename
        if not safe_member_name(name):
            raise ArchiveError(f"it holds an entry with an unsafe name {name!r}")
        most = cap(name)
        if most is None:
            raise ArchiveError(f"it holds an unexpected entry {name!r}")
        if name in seen:
            raise ArchiveError(f"it holds the entry {name!r} twice")
        seen.add(name)
        if info.flag_bits & 0x1:
            raise ArchiveError(f"its entry {name!r} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ArchiveError(f"its entry {name!r} uses an unsupported compression")
        if info.file_size > most:
            raise ArchiveError(
                f"its entry {name!r} would unpack to {info.file_size:,} bytes "
                f"(at most {most:,} allowed)"
            )
        total += info.file_size
        if total > limits.total_bytes:
            raise ArchiveError(f"it would unpack to more than {limits.total_bytes:,} bytes")
        if info.file_size > RATIO_FLOOR and info.file_size > limits.ratio * max(
            info.compress_size, 1
        ):
            raise ArchiveError(f"its entry {name!r} is compressed suspiciously well (a zip bomb?)")
    if len(infos) > limits.members:  # after the names: a wrong name is the clearer message
        raise ArchiveError(f"it holds {len(infos)} entries (at most {limits.members} expected)")


def safe_member_name(name: str) -> bool:
    """No absolute paths, drive letters, backslashes, parent references or control characters."""
    if not name or name.startswith("/") or "\\" in name or ":" in name:
        return False
    if any(ord(c) < 32 for c in name):
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    with zf.open(info) as member:
        data = member.read(info.file_size + 1)
    if len(data) != info.file_size:
        raise ArchiveError(f"its entry {info.filename!r} is truncated")
    return data


# Called with an array's name and declared shape before its data is read; raises ArchiveError.
ShapeCheck = Callable[[str, tuple[int, ...]], None]


def read_arrays(raw: bytes, cap: MemberCap, limits: Limits,
                before: ShapeCheck | None = None) -> dict[str, np.ndarray]:  # fmt: skip
    """The .npy arrays of a zip (an .npz) by member name. The directory is checked first;
    then each member's header, and `before(name, shape)`, before its data is unpacked."""
    found = {}
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as zf:
            infos = zf.infolist()
            check_directory(infos, cap, limits)
            for info in infos:
                with zf.open(info) as member:
                    found[info.filename] = read_npy_stream(member, info.file_size, (
                        None if before is None else lambda shape, n=info.filename: before(n, shape)
                    ))  # fmt: skip
    except ArchiveError:
        raise
    except DAMAGE as exc:
        raise ArchiveError(f"it is damaged or not a zip archive ({_describe(exc)})") from None
    return found


def read_npy(data: bytes) -> np.ndarray:
    """One array from .npy bytes: numeric dtypes only, size checked against the header first."""
    return read_npy_stream(io.BytesIO(data), len(data))


def read_npy_stream(f: IO[bytes], size: int,
                    before: Callable[[tuple[int, ...]], None] | None = None,
                    ) -> np.ndarray:  # fmt: skip
    """One array from a stream of `size` .npy bytes: numeric dtypes only; the header's
    shape is checked (by `before` too) and its size against `size` before any data is read."""
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            header = np.lib.format.read_array_header_1_0(f, max_header_size=MAX_NPY_HEADER)
        elif version == (2, 0):
            header = np.lib.format.read_array_header_2_0(f, max_header_size=MAX_NPY_HEADER)
        else:
            raise ArchiveError(f"array format version {version} is not supported")
        shape, fortran_order, dtype = header
    except ArchiveError:
        raise
    except DAMAGE as exc:
        raise ArchiveError(f"an array is damaged ({_describe(exc)})") from None
    if dtype.kind not in NUMERIC_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise ArchiveError(f"an array has type {dtype}, not plain numbers")
    if len(shape) > MAX_NDIM or any(not isinstance(d, int) or d < 0 for d in shape):
        raise ArchiveError(f"an array has an impossible shape {shape}")
    if before is not None:
        before(tuple(shape))
    count = math.prod(shape)
    offset = f.tell()
    if size - offset != count * dtype.itemsize:
        raise ArchiveError(f"an array's data does not match its shape {shape}")
    if count == 0:
        return np.empty(shape, dtype=dtype)
    flat = np.empty(count, dtype=dtype)  # read straight into it: no second copy in memory
    into, got = memoryview(flat.view(np.uint8)), 0
    try:
        while got < len(into):
            n = f.readinto(into[got:])
            if not n:
                raise ArchiveError(f"an array's data is truncated (shape {shape})")
            got += n
    except ArchiveError:
        raise
    except DAMAGE as exc:
        raise ArchiveError(f"an array is damaged ({_describe(exc)})") from None
    return flat.reshape(shape[::-1]).T if fortran_order else flat.reshape(shape)


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
