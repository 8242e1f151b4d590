"""A smaller ICU data library for the bundle (used by packaging/cellwright.spec at build time).

Qt links ICU; PySide6 ships ICU's full data (libicudata.so.73, 32 MB): every converter,
collation, locale display name, unit, currency and time zone name. Cellwright's interface
is English, so the bundle keeps the data Qt needs to work in any locale (Unicode
properties, normalization, case mapping, break rules, root and English locale data, the
time zone rules) and drops the rest; ICU falls back to the root locale for what is
missing (the technique ICU documents as data filtering, applied to the built package).

The data is an ICU common-data package (`icudt73l.dat`) in the library's .rodata under
the symbol `icudt73_dat`; `trimmed_library` reads it, writes a package holding only the
kept items and links it into a new library with the same soname and symbol (needs a C
compiler, `cc`). Run as a script it prints what the filter keeps and drops:

    python packaging/icu_data.py path/to/libicudata.so.73
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

# Converters (*.cnv): UTF-8/16/32, Latin-1 and ASCII are built into ICU's code.
DROPPED_SUFFIXES = (".cnv",)
# Locale data (in every folder: locale, coll, brkitr, curr, lang, region, unit, zone,
# rbnf...): only root and English stay; other locales fall back to root.
LOCALE_RES = re.compile(r"^[a-z]{2,3}(_[A-Za-z0-9]+)*\.res$")
KEPT_LOCALES = re.compile(r"^(root|en|en_US|en_GB|en_001|en_150)\.res$")
NOT_LOCALES = ("pool.res", "res_index.res")
# Dictionaries for Chinese/Japanese, Thai, Lao, Khmer and Burmese word breaks.
DROPPED_DICTIONARIES = re.compile(r"^(cjdict|thaidict|laodict|khmerdict|burmesedict)\.dict$")
# Transliterators: ICU's own transforms; Qt does not use them.
DROPPED_FOLDERS = {"translit"}


def keep(name: str) -> bool:
    """Whether the bundle keeps the item `name` (e.g. "icudt73l/coll/de.res")."""
    parts = name.split("/")[1:] if "/" in name else [name]
    folder, leaf = (parts[0], parts[-1]) if len(parts) > 1 else ("", parts[0])
    if folder in DROPPED_FOLDERS or leaf.endswith(DROPPED_SUFFIXES):
        return False
    if DROPPED_DICTIONARIES.match(leaf):
        return False
    if LOCALE_RES.match(leaf) and leaf not in NOT_LOCALES:
        return bool(KEPT_LOCALES.match(leaf))
    return True


def read_package(data: bytes) -> tuple[bytes, list[tuple[str, bytes]]]:
    """(header, [(name, item bytes)]) of an ICU common-data package."""
    header_size = struct.unpack_from("<H", data, 0)[0]
    count = struct.unpack_from("<I", data, header_size)[0]
    entries = []
    for i in range(count):
        name_at, data_at = struct.unpack_from("<II", data, header_size + 4 + 8 * i)
        start = header_size + name_at
        entries.append((data[start:data.index(b"\0", start)].decode("ascii"),
                        header_size + data_at))  # fmt: skip
    ends = [at for _name, at in entries[1:]] + [len(data)]
    items = [(name, data[at:end]) for (name, at), end in zip(entries, ends, strict=True)]
    return data[:header_size], items


def write_package(header: bytes, items: list[tuple[str, bytes]]) -> bytes:
    """The package holding `items` (sorted by name, as ICU's binary search expects)."""
    items = sorted(items)
    names = b"".join(name.encode("ascii") + b"\0" for name, _ in items)
    table_size = 4 + 8 * len(items)
    names_at = table_size
    data_at = _align(names_at + len(names), 16)
    table, body = [], bytearray()
    name_offset = names_at
    for name, item in items:
        table.append((name_offset, data_at + len(body)))
        name_offset += len(name) + 1
        body += item
        body += b"\xaa" * (_align(len(body), 16) - len(body))
    toc = struct.pack("<I", len(items)) + b"".join(struct.pack("<II", *e) for e in table)
    toc += names
    toc += b"\xaa" * (data_at - len(toc))  # ICU's own padding byte
    return header + toc + bytes(body)


def _align(value: int, to: int) -> int:
    return (value + to - 1) // to * to


def package_of(library: Path) -> tuple[str, bytes]:
    """(symbol, package bytes) read from libicudata.so.NN's .rodata."""
    data = library.read_bytes()
    match = re.search(rb"icudt(\d+)_dat", data)
    if match is None:
        raise ValueError(f"{library} holds no ICU data symbol")
    symbol = match.group(0).decode()
    start, size = _rodata(data)
    return symbol, data[start : start + size]


def _rodata(data: bytes) -> tuple[int, int]:
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]  # fmt: skip
    names_at = sections[shstrndx][4]
    for name, _kind, _flags, _addr, offset, size, *_ in sections:
        start = names_at + name
        if data[start : data.index(b"\0", start)] == b".rodata":
            return offset, size
    raise ValueError("no .rodata section")


def trimmed_library(library: Path, folder: Path) -> Path:
    """Write folder/<library name>: the same library holding only the kept items."""
    symbol, package = package_of(library)
    header, items = read_package(package)
    kept = [(name, item) for name, item in items if keep(name)]
    folder.mkdir(parents=True, exist_ok=True)
    dat = folder / f"{symbol[:-4]}l.dat"
    dat.write_bytes(write_package(header, kept))
    source = folder / "icudata.S"
    source.write_text(
        "\t.section .rodata\n\t.balign 16\n"
        f"\t.globl {symbol}\n\t.type {symbol}, @object\n{symbol}:\n"
        f'\t.incbin "{dat.name}"\n\t.size {symbol}, . - {symbol}\n'
        '\t.section .note.GNU-stack,"",@progbits\n'
    )
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise RuntimeError("a C compiler (cc) is needed to rebuild the ICU data library")
    target = folder / library.name
    subprocess.run(
        [compiler, "-shared", "-nostdlib", f"-Wl,-soname,{library.name}", "-o", str(target),
         source.name],
        cwd=folder, check=True,
    )  # fmt: skip
    return target


def main(argv: list[str]) -> int:
    _symbol, package = package_of(Path(argv[0]))
    _header, items = read_package(package)
    kept = sum(len(item) for name, item in items if keep(name))
    total = sum(len(item) for _name, item in items)
    dropped = sorted({name.split("/")[1] if name.count("/") > 1 else "(top)"
                      for name, _item in items if not keep(name)})  # fmt: skip
    print(f"keeps {kept / 1e6:.1f} of {total / 1e6:.1f} MB; drops items in: {dropped}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
