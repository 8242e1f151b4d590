"""Headless command line: `cellwright <command> ...` (train, info, export), no Qt.

`app.main` hands argv over to `main()` here when its first word names a command
registered on the parser. Each command is a subparser that sets
``run=<callable(args) -> int>`` via ``set_defaults``; `main` calls it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from app import __version__


def build_parser() -> argparse.ArgumentParser:
    """The `cellwright` command parser; commands are added as subparsers."""
    parser = argparse.ArgumentParser(
        prog="cellwright",
        description="Cellwright command line (headless).",
    )
    parser.add_argument("--version", action="version", version=f"cellwright {__version__}")
    parser.add_subparsers(dest="command", metavar="COMMAND")
    # Commands (train, info, export) are registered here, e.g.:
    #   train = commands.add_parser("train", help="...")
    #   train.set_defaults(run=_run_train)
    return parser


def command_names() -> frozenset[str]:
    """Names of the registered commands, so `app.main` knows what to dispatch here."""
    parser = build_parser()
    for action in parser._actions:  # argparse offers no public accessor for subparsers
        if isinstance(action, argparse._SubParsersAction):
            return frozenset(action.choices)
    return frozenset()


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    run = getattr(args, "run", None)
    if run is None:
        parser.print_help(sys.stderr)
        return 2
    return int(run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
