"""`cellwright lr-find` (see app.cli.run_parsers for its command line)."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    raise NotImplementedError
