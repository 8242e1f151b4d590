"""The command lines of `lr-find`, `sweep` and `runs` (parsers only: nothing heavy imported)."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def add_run_commands(commands: argparse._SubParsersAction, run: Callable[[str], object],
                     positive_int: Callable[[str], int],
                     positive_float: Callable[[str], float]) -> None:  # fmt: skip
    lr_find = commands.add_parser(
        "lr-find",
        help="find a learning rate: train a copy with a growing rate and suggest one",
        description="Train a copy of the project's network for up to --steps steps with the "
        "learning rate growing exponentially from --start to --end, stop when the loss blows "
        "up, and print the suggested rate (the steepest fall of the smoothed loss, and a "
        "tenth of its minimum). The project is not changed unless --apply is given.",
    )
    lr_find.add_argument("project", metavar="PROJECT", help="a .cwproj file")
    lr_find.add_argument("--start", type=positive_float, metavar="X",
                         help="the first rate (default 1e-7)")  # fmt: skip
    lr_find.add_argument("--end", type=positive_float, metavar="X",
                         help="the last rate (default 10)")  # fmt: skip
    lr_find.add_argument("--steps", type=positive_int, metavar="N",
                         help="the most steps (default 100)")  # fmt: skip
    lr_find.add_argument("--apply", action="store_true",
                         help="set the suggested rate in the project and save it")
    lr_find.add_argument("--json", action="store_true", help="print JSON instead of text")
    lr_find.add_argument("--trust", action="store_true",
                         help="run the project's custom Cell code (otherwise it is not run)")
    lr_find.set_defaults(run=run("app.cli.lr_find"))

    sweep = commands.add_parser(
        "sweep",
        help="train one run per combination of settings and print a results table",
        description="Sweep settings: train a fresh copy of the network for each combination "
        "(--grid) or for --trials random draws (--range), record each as a run in the project "
        "and save it, then print a table of the runs and their metrics. A setting is "
        "learning_rate (lr), batch_size, optimizer, weight_decay, epochs, or NODE.PARAM for "
        "a node's numeric hyper-parameter.",
    )
    sweep.add_argument("project", metavar="PROJECT", help="a .cwproj file")
    sweep.add_argument("--grid", action="append", default=[], metavar="NAME=V1,V2,…",
                       help="values of one setting (repeat per setting)")  # fmt: skip
    sweep.add_argument("--range", action="append", default=[], metavar="NAME=LOW..HIGH[:log]",
                       help="a range of one setting, drawn at random (repeat per setting)")
    sweep.add_argument("--trials", type=positive_int, metavar="N",
                       help="random draws from the ranges (default 8)")  # fmt: skip
    sweep.add_argument("--seed", type=int, default=0, metavar="S",
                       help="the seed of the random draws (default 0)")  # fmt: skip
    sweep.add_argument("--epochs", type=positive_int, metavar="N",
                       help="epochs of each run (default: the project's)")  # fmt: skip
    sweep.add_argument("--metric", metavar="NAME",
                       help="what ranks the runs (default best_val_loss, else best_loss)")
    sweep.add_argument("--resume", action="store_true",
                       help="go on with the project's interrupted sweep")  # fmt: skip
    sweep.add_argument("--out", metavar="FILE", help="save to FILE instead of PROJECT")
    sweep.add_argument("--json", action="store_true", help="print JSON instead of a table")
    sweep.add_argument("--quiet", action="store_true", help="no progress lines")
    sweep.add_argument("--trust", action="store_true",
                       help="run the project's custom Cell code (otherwise it is not run)")
    sweep.set_defaults(run=run("app.cli.sweep"))

    runs = commands.add_parser(
        "runs",
        help="list a project's runs with their settings, diffs and metrics",
        description="List the project's recorded runs: name, when, steps, duration, steps/s, "
        "the final and best metrics, what changed against the run before, and the settings.",
    )
    runs.add_argument("project", metavar="PROJECT", help="a .cwproj file")
    runs.add_argument("--json", action="store_true", help="print JSON instead of text")
    runs.set_defaults(run=run("app.cli.runs"))
