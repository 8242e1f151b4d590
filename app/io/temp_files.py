"""The temporary file a project save writes beside its target, and the ones killed saves left.

A save writes `.<name>.<pid>-<8 hex>.saving` in the target's folder (so the rename that
ends it stays on one file system), then renames it over the target. A save killed
before the rename (SIGKILL, power loss) leaves that file behind; the next save or load
of the same target removes it (`remove_stale_saves`), and only it: a file is stale when
the process whose pid its name carries is gone. The pid rule, not an age alone, because
a live save of a big project can run for minutes, and another process (a second window,
`cellwright train`) may be saving the same file right now: its temporary file is kept.
A pid reused by an unrelated process is covered by an age: nothing a live save writes
stays untouched for an hour. Older versions wrote `.<name>.<8 hex>.saving`, without a
pid: those are stale once untouched for a minute.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import time
from pathlib import Path

_SAVING_SUFFIX = ".saving"
_SAVING_MIDDLE = re.compile(r"(?:([0-9]{1,10})-)?[0-9a-f]{8}")
STALE_AFTER = 60.0  # seconds untouched after which a temporary file without a pid is stale
ABANDONED_AFTER = 3600.0  # ... and after which any is (a live save writes all the time)


def create_beside(target: Path) -> tuple[int, str]:
    """A new empty file in the target's folder (so the rename stays on one file system).

    Made with mode 0o666 like any new file, so the user's umask applies; unlike mkstemp,
    which would leave a new project readable by its owner only.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = target.parent / f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.saving"
        try:
            return os.open(tmp, flags, 0o666), str(tmp)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "No free name for a temporary file", str(target.parent))


def remove_stale_saves(path: str | os.PathLike[str], now: float | None = None) -> list[str]:
    """Remove the temporary files killed saves of `path` left beside it; their names.

    A temporary file is stale when the process whose pid its name carries is gone, when
    it carries no pid (an older version's) and nothing touched it for STALE_AFTER
    seconds, or when nothing touched it for ABANDONED_AFTER seconds (a pid reused by an
    unrelated process). A save in progress in a live process — this one included — is
    never touched. Problems (a read-only folder) are ignored: this only tidies up.
    """
    target = Path(path)
    prefix = f".{target.name}."
    now = time.time() if now is None else now
    removed = []
    try:
        names = os.listdir(target.parent)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(prefix) and name.endswith(_SAVING_SUFFIX)):
            continue
        match = _SAVING_MIDDLE.fullmatch(name[len(prefix) : -len(_SAVING_SUFFIX)])
        if match is None:  # another file's (".a.cwproj.b.cwproj.…") or not ours at all
            continue
        tmp = target.parent / name
        try:
            status = os.lstat(tmp)
        except OSError:
            continue
        if not stat.S_ISREG(status.st_mode):
            continue
        age = now - status.st_mtime
        pid = match.group(1)
        if pid is None:
            stale = age > STALE_AFTER
        else:
            stale = age > ABANDONED_AFTER or not _process_alive(int(pid))
        if stale:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
                removed.append(name)
    return removed


def _process_alive(pid: int) -> bool:
    """Whether process `pid` runs (on this machine); unsure counts as alive."""
    if pid == os.getpid():
        return True
    if os.name == "nt" or pid <= 0:  # os.kill would end a Windows process, not probe it
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, under another user
        return True
    try:  # a killed process its parent has not reaped yet is a zombie: not saving anything
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[-1].split()[:1] != [b"Z"]
    except OSError:
        return True
