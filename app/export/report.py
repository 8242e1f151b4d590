"""What an export wrote and what it left out, and the file mode exported files get."""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

_UMASK_LOCK = threading.Lock()


class ExportError(Exception):
    """The project can't be exported; the message says why."""


@dataclass
class ExportReport:
    """`written`: the files an export made, main file first; `left_out`: one line per thing
    it dropped (e.g. 'hook1: HookBackward, an identity in the forward pass')."""

    written: list[Path] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """'wrote a.py, a.npz; left out …' for a status line or message box."""
        text = "wrote " + (", ".join(str(p) for p in self.written) or "nothing")
        if self.left_out:
            text += "; left out " + "; ".join(self.left_out)
        return text


def user_umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux)."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    with _UMASK_LOCK:  # os.umask can only be read by setting it: keep the window short
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def give_user_mode(path: str | os.PathLike[str]) -> None:
    """Give a file made through a private temporary file (mode 0600) the mode a plain
    `open(path, 'w')` would have: 0666 less the umask."""
    os.chmod(path, 0o666 & ~user_umask())
