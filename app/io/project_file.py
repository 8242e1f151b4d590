"""Project files (*.cwproj): atomic save, validating load of untrusted files, format migrations.

A project file is a zip holding `project.json` (the layout in project_schema),
`params.npz` (one array per `<node id>/<parameter name>`), once hooks captured
something during training `captures.npz` (each hook's capture history: one array per
`<hook id>/<part>`, e.g. `<hook id>/history.npy` and `<hook id>/total.npy`), and once
it has runs `runs.npz` (the run history's curves and kept weights, runs_file). Loading
executes nothing. It reads project.json first, so the network it describes bounds what
the arrays may unpack to, and each array's declared shape must fit its node before its
data is read (param_check); damaged training progress is left out, not the project
(state_schema), and so is a damaged run history (runs_file).
"""

from __future__ import annotations

import contextlib
import errno
import gc
import io
import json
import os
import re
import stat
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from app import __version__
from app.document import DocumentError, Project
from app.io.archive import NUMERIC_KINDS, ArchiveError, Limits, ZipReader, read_arrays
from app.io.param_check import ParamLayout, fitting_values
from app.io.project_schema import (
    FORMAT_VERSION,
    PROJECT,
    SchemaError,
    check_references,
    project_from_json,
    project_to_json,
)
from app.io.runs_file import (
    MAX_RUNS_BYTES,
    RUNS_MEMBER,
    check_runs_json,
    load_runs,
    runs_arrays,
    runs_to_json,
    write_runs_member,
)
from app.io.state_schema import tidy_state
from app.io.temp_files import create_beside, remove_stale_saves

__all__ = [
    "FORMAT_VERSION",
    "MIGRATIONS",
    "ProjectFileError",
    "check_can_save",
    "load_project",
    "paused_gc",
    "remove_stale_saves",
    "save_project",
]

PROJECT_MEMBER = "project.json"
PARAMS_MEMBER = "params.npz"
CAPTURES_MEMBER = "captures.npz"
MAX_FILE_BYTES = 4 << 30
MAX_JSON_BYTES = 64 << 20
MAX_PARAMS_BYTES = 2 << 30
MAX_PARAM_ARRAYS = 100_000
MAX_CAPTURES_BYTES = 1 << 30
MAX_CAPTURE_ARRAYS = 10_000
_PARAM_MEMBER = re.compile(r"([0-9A-Za-z_-]{1,64})/([A-Za-z_][A-Za-z0-9_.]{0,127})\.npy")
_CAPTURE_MEMBER = re.compile(r"([0-9A-Za-z_-]{1,64})/([a-z_]{1,32})\.npy")


class ProjectFileError(Exception):
    """A project file can't be read or written; the message says why, in the user's words."""


def _from_v0(data: dict[str, Any]) -> dict[str, Any]:
    """Version 0, the draft layout, kept as the worked example of a migration.

    It had positions as separate `x`/`y`, edges as `from`/`to` pairs of [node, port],
    `settings` instead of `training`, and no hooks, view or metadata. Whatever is not
    as expected is left alone for the version-1 checker to report.
    """
    graph = data.get("graph")
    if isinstance(graph, dict):
        for node in graph.get("nodes", []):
            if isinstance(node, dict) and "x" in node and "y" in node:
                node["position"] = [node.pop("x"), node.pop("y")]
        edges = []
        for edge in graph.get("edges", []):
            if isinstance(edge, dict) and "from" in edge and "to" in edge:
                (src, src_port), (dst, dst_port) = edge["from"], edge["to"]
                edge = {
                    "id": edge.get("id"),
                    "src": src,
                    "src_port": src_port,
                    "dst": dst,
                    "dst_port": dst_port,
                }
            edges.append(edge)
        graph["edges"] = edges
    data["training"] = data.pop("settings", {})
    data.setdefault("hooks", [])
    data.setdefault("view", {})
    data.setdefault("metadata", {})
    return data


# MIGRATIONS[v] turns the content of a version-v project.json into version v+1.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {0: _from_v0}


# ---- save --------------------------------------------------------------------------------


def save_project(project: Project, path: str | os.PathLike[str]) -> None:
    """Write `project` to `path` atomically: a crash or error mid-save keeps the old file.

    Temporary files that earlier saves of the same file left behind when they were killed
    are removed first (see `remove_stale_saves`).
    """
    target = Path(os.path.realpath(path))  # through a symlink: replace the file it names
    text = _encode(project, target.name)
    arrays = _arrays(project, target.name)
    captures = _capture_arrays(project, target.name)
    runs = _run_arrays(project, target.name)
    remove_stale_saves(target)
    tmp = None
    try:
        fd, tmp = create_beside(target)
        with os.fdopen(fd, "wb") as f:
            with zipfile.ZipFile(f, "w") as zf:
                zf.writestr(_entry(PROJECT_MEMBER, zipfile.ZIP_DEFLATED), text)
                # Stored, not deflated: weights hardly compress, and a ratio check stays tight.
                with zf.open(_entry(PARAMS_MEMBER, zipfile.ZIP_STORED), "w", force_zip64=True) as m:
                    np.savez(m, **arrays)
                if captures:  # stored too: a steady history would look like a zip bomb
                    entry = _entry(CAPTURES_MEMBER, zipfile.ZIP_STORED)
                    with zf.open(entry, "w", force_zip64=True) as m:
                        np.savez(m, **captures)
                write_runs_member(zf, runs, _entry)
            f.flush()
            os.fsync(f.fileno())
        _copy_mode(target, tmp)
        os.replace(tmp, target)
    except BaseException as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(exc, OSError):
            reason = exc.strerror or str(exc)
            raise ProjectFileError(f"Could not save '{target.name}': {reason}.") from exc
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable where the OS allows
        folder = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def check_can_save(project: Project, path: str | os.PathLike[str]) -> None:
    """ProjectFileError now if `save_project(project, path)` would refuse the project's
    values or could not create a file beside `path`; checked before a long run, so the
    run is not lost to a save that was bound to fail. Writes nothing that stays."""
    target = Path(os.path.realpath(path))
    _encode(project, target.name)
    _arrays(project, target.name)
    _capture_arrays(project, target.name)
    _run_arrays(project, target.name)
    try:
        fd, tmp = create_beside(target)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ProjectFileError(f"Could not save '{target.name}': {reason}.") from exc
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def _encode(project: Project, name: str) -> bytes:
    try:
        data = project_to_json(project, saved_by=f"Cellwright {__version__}")
        runs = runs_to_json(project.runs)
        if runs is not None:
            data["runs"] = runs
        text = json.dumps(data, allow_nan=False, ensure_ascii=False, indent=1)
        # Never write a file that load_project would refuse (or leave its runs out of).
        again = json.loads(text)
        PROJECT(again, "project")
        check_references(again)
        if runs is not None:
            check_runs_json(again["runs"])
        return text.encode("utf-8")  # a lone surrogate fails here, as a ValueError
    except (TypeError, ValueError, RecursionError, SchemaError) as exc:
        raise ProjectFileError(
            f"Can't save '{name}': the project holds a value that can't be stored ({exc})."
        ) from exc


def _arrays(project: Project, name: str) -> dict[str, np.ndarray]:
    """The Parameter values (and optimizer state) to write: those that fit their node.
    One left from before its node was resized is of no use, and loading would refuse it."""
    arrays = _member_arrays(project.live_param_values(), _PARAM_MEMBER, name, "Parameter")
    by_node: dict[str, dict[str, np.ndarray]] = {}
    for key, array in arrays.items():
        owner, part = key.split("/", 1)
        by_node.setdefault(owner, {})[part] = array
    fitting = fitting_values(by_node, ParamLayout(project.graph), np.shape)
    return {f"{owner}/{part}": a for owner, parts in fitting.items() for part, a in parts.items()}


def _capture_arrays(project: Project, name: str) -> dict[str, np.ndarray]:
    arrays = _member_arrays(project.live_hook_history(), _CAPTURE_MEMBER, name, "capture part")
    size = sum(a.nbytes + 512 for a in arrays.values())  # 512: a member's headers, at most
    if size > MAX_CAPTURES_BYTES:  # never write a file that load_project would refuse
        raise ProjectFileError(
            f"Can't save '{name}': its hooks' capture histories need {size:,} bytes (at most "
            f"{MAX_CAPTURES_BYTES:,}); remove some hooks or lower the History setting."
        )
    return arrays


def _run_arrays(project: Project, name: str) -> dict[str, np.ndarray]:
    try:
        arrays = runs_arrays(project.runs)
    except ValueError as exc:
        raise ProjectFileError(f"Can't save '{name}': {exc}.") from None
    size = sum(a.nbytes + 512 for a in arrays.values())
    if size > MAX_RUNS_BYTES:  # never write a file that load_project would leave runs out of
        raise ProjectFileError(
            f"Can't save '{name}': its run history's curves and kept weights need {size:,} "
            f"bytes (at most {MAX_RUNS_BYTES:,}); untick the weights of some runs or delete "
            "some runs."
        )
    return arrays


def _member_arrays(groups: dict[str, dict[str, object]], pattern: re.Pattern[str], name: str,
                   what: str) -> dict[str, np.ndarray]:  # fmt: skip
    """One array per `<owner>/<part>` of `groups` (owner -> part -> value), checked as
    loading checks them."""
    arrays = {}
    for owner, values in groups.items():
        for part, value in values.items():
            key = f"{owner}/{part}"
            array = np.asarray(value)
            if not pattern.fullmatch(f"{key}.npy"):
                raise ProjectFileError(f"Can't save '{name}': {part!r} can't name a {what}.")
            if array.dtype.kind not in NUMERIC_KINDS or array.dtype.fields is not None:
                raise ProjectFileError(
                    f"Can't save '{name}': {what} {part!r} holds {array.dtype}, not numbers."
                )
            arrays[key] = array
    return arrays


def _entry(name: str, compression: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)  # fixed 1980 timestamp: equal projects give equal entries
    info.compress_type = compression
    return info


def _copy_mode(target: Path, tmp: str) -> None:
    """Overwriting keeps the old file's permissions."""
    with contextlib.suppress(FileNotFoundError):
        os.chmod(tmp, target.stat().st_mode & 0o7777)


# ---- load --------------------------------------------------------------------------------


def load_project(path: str | os.PathLike[str], notes: list[str] | None = None) -> Project:
    """Read and check a project file; any problem raises ProjectFileError and nothing else.

    Only a regular file is read (a pipe or a device is refused before it is opened).
    Nothing is written — temporary files that killed saves left beside it are removed —
    and no half-built project is ever returned. Damaged training progress does not cost
    the network: it is left out (state_schema.tidy_state), the saved state's message
    says so (the Run panel shows it) and so does a line appended to `notes`, if given.
    """
    path = Path(path)
    with _reading(path), paused_gc():
        _check_status(path, os.stat(path))  # through symlinks: what would be read
        caps = {PROJECT_MEMBER: MAX_JSON_BYTES, PARAMS_MEMBER: MAX_PARAMS_BYTES,
                CAPTURES_MEMBER: MAX_CAPTURES_BYTES, RUNS_MEMBER: MAX_RUNS_BYTES}  # fmt: skip
        limits = Limits(total_bytes=sum(caps.values()), members=len(caps))
        with _open_regular(path) as f, ZipReader(f, caps.get, limits) as archive:
            project = _load(archive, path.name, notes)
    remove_stale_saves(Path(os.path.realpath(path)))
    return project


def _load(archive: ZipReader, name: str, notes: list[str] | None) -> Project:
    """The project in `archive`: project.json first, then only as much of the arrays as
    its network can hold (checked from the zip's directory and each array's header)."""
    for member in (PROJECT_MEMBER, PARAMS_MEMBER):
        if member not in archive.infos:
            raise ProjectFileError(f"'{name}' is not a Cellwright project: it has no {member}.")
    data = _upgrade(_parse_json(archive.read(PROJECT_MEMBER), name), name)
    try:
        PROJECT(data, "project")
        node_ids, _ = check_references(data)
        project = project_from_json(data)
    except SchemaError as exc:
        raise ProjectFileError(f"'{name}' is damaged: {exc}.") from None
    except DocumentError as exc:
        raise ProjectFileError(f"'{name}' holds a graph that is not valid: {exc}") from None
    layout = ParamLayout(project.graph)
    size = archive.size(PARAMS_MEMBER)
    if size > layout.most_bytes:  # before a byte of it is unpacked
        raise ProjectFileError(
            f"'{name}' has damaged Parameter values: its {PARAMS_MEMBER} would unpack to "
            f"{size:,} bytes, but its network's Parameters and their optimizer state need "
            f"at most {layout.most_bytes:,}."
        )
    project.param_values = _parse_params(archive.read(PARAMS_MEMBER), node_ids, layout, name)
    note = tidy_state(project.training, project.param_values)
    if note is not None and notes is not None:
        notes.append(f"'{name}': {note}")
    if CAPTURES_MEMBER in archive.infos:
        hook_ids = {hook.id for hook in project.hooks}
        project.hook_history = _parse_captures(archive.read(CAPTURES_MEMBER), hook_ids, name)
    raw = archive.read(RUNS_MEMBER) if RUNS_MEMBER in archive.infos else None
    history, left_out = load_runs(data.get("runs"), raw)
    history.emit = project.runs.emit  # the project's listeners hear of its runs
    project.runs = history
    if notes is not None:
        notes.extend(f"'{name}': {note}" for note in left_out)
    return project


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Python's cycle collector paused meanwhile: building a big document makes hundreds of
    thousands of objects, none of them garbage, and each full collection would walk them
    all again (100,000 nodes loaded in 4.2 s with it, 2.6 s without)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextlib.contextmanager
def _reading(path: Path):
    """What reading `path` raises, as ProjectFileError in the user's words."""
    try:
        yield
    except FileNotFoundError:
        raise ProjectFileError(f"There is no file '{path}'.") from None
    except IsADirectoryError:
        raise ProjectFileError(f"'{path}' is a folder, not a project file.") from None
    except PermissionError:
        raise ProjectFileError(f"You are not allowed to read '{path}'.") from None
    except OSError as exc:
        raise ProjectFileError(f"Could not read '{path}': {exc.strerror or exc}.") from None
    except ArchiveError as exc:
        raise ProjectFileError(f"'{path.name}' can't be opened: {exc}.") from None


def _check_status(path: Path, status: os.stat_result) -> None:
    if stat.S_ISDIR(status.st_mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
    if not stat.S_ISREG(status.st_mode):
        raise ProjectFileError(
            f"'{path}' is not a regular file (it is a device, a pipe or a socket), so it "
            "can't be a project file."
        )
    if status.st_size > MAX_FILE_BYTES:
        raise ProjectFileError(f"'{path.name}' is too large to be a project file.")


def _open_regular(path: Path) -> io.BufferedReader:
    """`path` opened for reading, checked again once open: a pipe swapped in after the
    first check neither blocks the open (O_NONBLOCK) nor gets read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        _check_status(path, os.fstat(fd))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _parse_json(raw: bytes, name: str) -> dict[str, Any]:
    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result = dict(pairs)
        if len(result) != len(pairs):
            raise ValueError("a key appears twice in one object")
        return result

    def no_constant(word: str) -> Any:
        raise ValueError(f"{word} is not a number a project can hold")

    try:
        data = json.loads(
            raw.decode("utf-8"), object_pairs_hook=no_duplicates, parse_constant=no_constant
        )
    except (ValueError, RecursionError) as exc:  # ValueError covers bad UTF-8 and bad JSON
        raise ProjectFileError(
            f"'{name}' is damaged: its {PROJECT_MEMBER} is unreadable ({exc})."
        ) from None
    if not isinstance(data, dict):
        raise ProjectFileError(f"'{name}' is damaged: its {PROJECT_MEMBER} is not an object.")
    return data


def _upgrade(data: dict[str, Any], name: str) -> dict[str, Any]:
    """Apply MIGRATIONS in order until the content is in the current FORMAT_VERSION."""
    version = data.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise ProjectFileError(f"'{name}' is damaged: it has no valid format_version.")
    if version > FORMAT_VERSION:
        raise ProjectFileError(
            f"'{name}' was saved by a newer Cellwright (file format {version}); this version "
            f"opens format {FORMAT_VERSION} and older. Please update Cellwright to open it."
        )
    while version < FORMAT_VERSION:
        migrate = MIGRATIONS.get(version)
        if migrate is None:
            raise ProjectFileError(
                f"'{name}' uses file format {version}, which is too old to open."
            )
        try:
            data = migrate(data)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise ProjectFileError(
                f"'{name}' is damaged: it could not be upgraded from file format {version} ({exc})."
            ) from None
        if not isinstance(data, dict):
            raise ProjectFileError(f"'{name}' could not be upgraded from file format {version}.")
        version += 1
        data["format_version"] = version
    return data


def _parse_params(raw: bytes, node_ids: set[str], layout: ParamLayout,
                  name: str) -> dict[str, dict[str, np.ndarray]]:  # fmt: skip
    """Each node's arrays; an array whose header does not fit its node is refused, naming
    it, before its data is read."""

    def fits(owner: str, part: str, shape: tuple[int, ...]) -> None:
        problem = layout.problem(owner, part, shape)
        if problem:
            raise ArchiveError(problem)

    try:
        return _parse_members(raw, _PARAM_MEMBER, node_ids, layout.most_bytes,
                              MAX_PARAM_ARRAYS, "it holds values for a node ({}) not in the graph",
                              fits)  # fmt: skip
    except ArchiveError as exc:
        raise ProjectFileError(f"'{name}' has damaged Parameter values: {exc}.") from None


def _parse_captures(raw: bytes, hook_ids: set[str], name: str) -> dict[str, dict[str, np.ndarray]]:
    """Each hook's capture history as arrays by part; whether the parts fit together is
    the session's to check (a capture whose history does not fit starts afresh)."""
    try:
        return _parse_members(raw, _CAPTURE_MEMBER, hook_ids, MAX_CAPTURES_BYTES,
                              MAX_CAPTURE_ARRAYS,
                              "it holds a history for a hook ({}) the project has not")  # fmt: skip
    except ArchiveError as exc:
        raise ProjectFileError(
            f"'{name}' has damaged hook captures ({CAPTURES_MEMBER}): {exc}."
        ) from None


def _parse_members(raw: bytes, pattern: re.Pattern[str], owners: set[str], max_bytes: int,
                   max_arrays: int, stranger: str,
                   fits: Callable[[str, str, tuple[int, ...]], None] | None = None,
                   ) -> dict[str, dict[str, np.ndarray]]:  # fmt: skip
    """The arrays of an .npz member named `<owner>/<part>.npy`, by owner and part;
    ArchiveError if damaged or naming an owner not in `owners` (`stranger` says so), or
    if `fits(owner, part, declared shape)` refuses one (asked before its data is read)."""

    def cap(member: str) -> int | None:
        return max_bytes if pattern.fullmatch(member) else None

    def before(member: str, shape: tuple[int, ...]) -> None:
        owner, part = pattern.fullmatch(member).groups()
        if owner not in owners:
            raise ArchiveError(stranger.format(owner))
        if fits is not None:
            fits(owner, part, shape)

    found: dict[str, dict[str, np.ndarray]] = {}
    arrays = read_arrays(raw, cap, Limits(max_bytes, max_arrays), before)
    for member, array in arrays.items():
        owner, part = pattern.fullmatch(member).groups()
        found.setdefault(owner, {})[part] = array
    return found
