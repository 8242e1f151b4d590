"""Headless command line: `cellwright <command> ...` (train, info, export, import, predict,
import-weights, evaluate, lr-find, sweep, runs), no Qt.

`app.main` hands argv over to `main()` here when its first word names a command
registered on the parser. Each command is a subparser that sets
``run=<callable(args) -> int>`` via ``set_defaults``; `main` calls it. Commands import
the engine and the app's modules only when they run, so `--version` stays quick.

Exit codes: 0 success, 1 a problem with the project, its file or its training (one
line on stderr says which), 2 a bad command line, 130 interrupted with Ctrl+C. Whatever
a file holds, a command ends with one of these and a message, never a traceback: an
unexpected exception is reported as one line that says it is a bug.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from app import __version__
from app.cli.run_parsers import add_run_commands

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def build_parser() -> argparse.ArgumentParser:
    """The `cellwright` command parser; commands are added as subparsers."""
    parser = argparse.ArgumentParser(
        prog="cellwright",
        description="Cellwright command line (headless).",
    )
    parser.add_argument("--version", action="version", version=f"cellwright {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    train = commands.add_parser(
        "train",
        help="train a project's network and save the result",
        description="Train the project's network with its training settings, showing progress "
        "on stderr, and save the trained project (in place unless --out is given). Training "
        "continues where the project's last run stopped.",
    )
    train.add_argument("project", metavar="PROJECT", help="a .cwproj file")
    train.add_argument("--epochs", type=_positive_int, metavar="N",
                       help="train N epochs from where the project stands")  # fmt: skip
    train.add_argument("--lr", type=_positive_float, metavar="X",
                       help="learning rate (kept in the saved project)")  # fmt: skip
    train.add_argument("--out", metavar="FILE", help="save to FILE instead of PROJECT")
    train.add_argument("--restart", action="store_true",
                       help="ignore saved progress (steps, optimizer state, curves); "
                       "the weights are kept")  # fmt: skip
    train.add_argument("--quiet", action="store_true", help="no progress bar")
    train.add_argument("--trust", action="store_true",
                       help="run the project's custom Cell code (otherwise it is not run)")
    train.set_defaults(run=_run("app.cli.train"))

    info = commands.add_parser(
        "info",
        help="show a project's network, parameters and training settings",
        description="Print the network (nodes in order with their types and key "
        "hyper-parameters), parameter counts and shapes, and the training settings.",
    )
    info.add_argument("project", metavar="PROJECT", help="a .cwproj file")
    info.add_argument("--trust", action="store_true",
                      help="run the project's custom Cell code to infer its shapes")
    info.set_defaults(run=_run("app.cli.info"))

    export = commands.add_parser(
        "export",
        help="export a project's network as a Python or PyTorch script, or as ONNX",
        description="Write a Python script that rebuilds the network on the Cellwright "
        "engine (--python) or with torch.nn modules (--torch), with its trained weights as "
        "an .npz file next to it; or an ONNX model (--onnx).",
    )
    export.add_argument("project", metavar="PROJECT", help="a .cwproj file")
    formats = export.add_mutually_exclusive_group(required=True)
    formats.add_argument("--python", metavar="FILE",
                         help="the script to write (FILE.npz gets the weights)")  # fmt: skip
    formats.add_argument("--torch", metavar="FILE",
                         help="a PyTorch script to write (FILE.npz gets the weights)")  # fmt: skip
    formats.add_argument("--onnx", metavar="FILE", help="the ONNX model to write")
    export.set_defaults(run=_run("app.cli.export"))

    imported = commands.add_parser(
        "import",
        help="import an ONNX model as a new project",
        description="Build a project from an ONNX model: its inputs become Input nodes (the "
        "first axis is the batch), its outputs Output nodes with no loss, its weights the "
        "Parameters of the nodes using them. Repeated blocks are grouped into composites. "
        "A model with ops Cellwright can't express is refused whole, and nothing is written.",
    )
    imported.add_argument("model", metavar="MODEL.onnx", help="the ONNX model to import")
    imported.add_argument("--out", required=True, metavar="PROJECT.cwproj",
                          help="the project file to write")  # fmt: skip
    imported.add_argument("--shape", action="append", metavar="NAME=D1,D2,…",
                          help="the sample shape of an input whose axes the model leaves "
                          "open (batch axis left out; repeat per input)")  # fmt: skip
    imported.add_argument("--flat", action="store_true",
                          help="don't group repeated blocks into composites")  # fmt: skip
    imported.add_argument("--force", action="store_true", help="replace --out if it exists")
    imported.set_defaults(run=_run("app.cli.import_model"))

    predict = commands.add_parser(
        "predict",
        help="run the network on arrays from .npy files and save its outputs",
        description="Run the project's network in predict mode (Dropout off, BatchNorm "
        "moving statistics) on one .npy file per Input node, in the order `cellwright info` "
        "lists them, and save one .npy file per Output node, or all outputs in one .npz "
        "under the Output nodes' names. Big batches run in chunks.",
    )
    predict.add_argument("project", metavar="PROJECT", help="a .cwproj file")
    predict.add_argument("--input", action="append", required=True, metavar="X.npy",
                         help="a batch for the next Input node (repeat, in order)")  # fmt: skip
    predict.add_argument("--output", action="append", required=True, metavar="Y.npy",
                         help="the file for the next Output node (repeat, in order), or one "
                         ".npz for all outputs")  # fmt: skip
    predict.add_argument("--batch-size", type=_positive_int, metavar="B",
                         help="samples run at a time (default 256)")  # fmt: skip
    predict.add_argument("--trust", action="store_true",
                         help="run the project's custom Cell code (otherwise it is not run)")
    predict.set_defaults(run=_run("app.cli.predict"))

    weights = commands.add_parser(
        "import-weights",
        help="put weights trained elsewhere (.npz or a PyTorch state_dict) into a project",
        description="Read an .npz, or a PyTorch state_dict file (torch.save, read with "
        "weights_only=True), whose names are those the PyTorch export writes, and save the "
        "project with those weights to --out. Every Parameter must be there with its shape; "
        "otherwise the problems are listed and nothing is written.",
    )
    weights.add_argument("project", metavar="PROJECT", help="a .cwproj file")
    weights.add_argument("weights", metavar="WEIGHTS", help="an .npz, .pt or .pth file")
    weights.add_argument("--out", required=True, metavar="FILE",
                         help="the project file to write (may be PROJECT itself)")  # fmt: skip
    weights.add_argument("--trust", action="store_true",
                         help="run the project's custom Cell code (otherwise it is not run)")
    weights.set_defaults(run=_run("app.cli.import_weights"))

    evaluate = commands.add_parser(
        "evaluate",
        help="show the confusion matrix, per-class figures and worst samples",
        description="Run the project's saved weights in predict mode on the whole validation "
        "set (or the training set) of its data set, split as training splits it, and print "
        "the confusion matrix, precision, recall, F1 and support per class, and the samples "
        "of highest loss; for a regression R², MAE and RMSE. --json prints the same as JSON.",
    )
    evaluate.add_argument("project", metavar="PROJECT", help="a .cwproj file")
    evaluate.add_argument("--set", default="validation", choices=("validation", "training"),
                          help="the samples to evaluate (default: validation)")  # fmt: skip
    evaluate.add_argument("--worst", type=_positive_int, metavar="N",
                          help="list the N samples of highest loss (default 10)")  # fmt: skip
    evaluate.add_argument("--json", action="store_true", help="print JSON instead of text")
    evaluate.add_argument("--trust", action="store_true",
                          help="run the project's custom Cell code (otherwise it is not run)")
    evaluate.set_defaults(run=_run("app.cli.evaluate"))
    add_run_commands(commands, _run, _positive_int, _positive_float)  # lr-find, sweep, runs
    return parser


def _run(module: str):
    def run(args: argparse.Namespace) -> int:
        import importlib

        return importlib.import_module(module).run(args)

    return run


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not 1 or more")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a number above 0")
    return value


def command_names() -> frozenset[str]:
    """Names of the registered commands, so `app.main` knows what to dispatch here."""
    parser = build_parser()
    for action in parser._actions:  # argparse offers no public accessor for subparsers
        if isinstance(action, argparse._SubParsersAction):
            return frozenset(action.choices)
    return frozenset()


def fail(message: str) -> int:
    """Print `message` as one line on stderr; returns EXIT_PROBLEM."""
    one_line = " ".join(part.strip() for part in str(message).splitlines() if part.strip())
    say(f"cellwright: error: {one_line}", sys.stderr)
    return EXIT_PROBLEM


def warn(message: str) -> None:
    """Print `message` as one `cellwright: warning: …` line on stderr (the command goes on)."""
    one_line = " ".join(part.strip() for part in str(message).splitlines() if part.strip())
    say(f"cellwright: warning: {one_line}", sys.stderr)


def say(text: str, stream: TextIO | None = None) -> None:
    """Print `text` on `stream` (stdout), whatever it holds: characters the stream can't
    encode (a lone surrogate from an odd file name, '→' on a cp1252 pipe) become escapes
    instead of an exception."""
    stream = sys.stdout if stream is None else stream
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        text = text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:  # an encoding Python does not know: plain ASCII is always safe
        text = text.encode("ascii", "backslashreplace").decode("ascii")
    print(text, file=stream, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    run = getattr(args, "run", None)
    if run is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(run(args) or 0)
    except BrokenPipeError:  # `cellwright info x | head`: the reader left, not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the exit flush does not raise again
        return EXIT_OK
    except KeyboardInterrupt:
        say("cellwright: interrupted", sys.stderr)
        return EXIT_INTERRUPTED
    except MemoryError:
        return fail("Out of memory: the project needs more memory than this computer has.")
    except Exception as exc:  # a bug, not the user's doing: one line that says so
        return fail(f"{INTERNAL_ERROR} ({type(exc).__name__}: {exc}); please report it.")


INTERNAL_ERROR = "Cellwright failed unexpectedly"
