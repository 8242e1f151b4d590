"""`cellwright import-weights PROJECT WEIGHTS --out PROJECT2`: trained weights back in.

WEIGHTS is an `.npz` (as the PyTorch export writes it beside its script) or a PyTorch
state_dict file (`torch.save(net.state_dict(), "w.pt")`, read with weights_only=True),
under the names the PyTorch export gives the Parameters. Every Parameter must be in the
file with its shape and no other name may be; otherwise each problem is listed and no file
is written. --out may name PROJECT itself (the save is atomic); the training settings and
saved progress are kept as they are, as when Parameters are edited in the app.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from app.cli import EXIT_OK, fail, say
from app.cli.opening import open_project
from app.compiler import CompileError
from app.export.python_script import ExportError
from app.export.torch_weights import WeightsMismatch, match_torch_state
from app.io.project_file import ProjectFileError, save_project
from app.io.weights_import import WeightsFileError, read_weights


def run(args: argparse.Namespace) -> int:
    path, source, out = Path(args.project), Path(args.weights), Path(args.out)
    try:
        project = open_project(path, args)
    except ProjectFileError as exc:
        return fail(str(exc))
    try:
        arrays = read_weights(source)
        values = match_torch_state(project, arrays)
    except WeightsFileError as exc:
        return fail(str(exc))
    except WeightsMismatch as exc:
        return fail(f"{source.name} does not fit {path.name}: {exc}")
    except (CompileError, ExportError) as exc:
        return fail(f"{path.name}: {exc}")
    count = 0
    for node_id, arrays_of_node in values.items():
        project.param_values.setdefault(node_id, {}).update(arrays_of_node)
        count += len(arrays_of_node)
    try:
        save_project(project, out)
    except ProjectFileError as exc:
        return fail(f"{exc} Nothing was written.")
    size = sum(a.size for node in values.values() for a in node.values())
    say(f"Imported {count} Parameter{'s' if count != 1 else ''} ({size:,} values) from "
        f"{source.name}; saved {out}")  # fmt: skip
    return EXIT_OK
