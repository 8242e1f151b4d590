"""`cellwright evaluate PROJECT`: the confusion matrix, the per-class figures and the worst
samples of the saved weights on the validation (or training) set, as text or JSON."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from app.cli import EXIT_OK, fail, say, warn
from app.cli.opening import open_project
from app.compiler import CompileError
from app.io.project_file import ProjectFileError
from app.session import PREDICT_MODE, TrainingError, TrainingSession
from app.session.evaluation import Evaluation, EvaluationError, evaluate, split_name

WORST = 10  # samples listed unless --worst says


def run(args: argparse.Namespace) -> int:
    path = Path(args.project)
    try:
        split = split_name(args.set)
    except EvaluationError as exc:
        return fail(str(exc))
    try:
        project = open_project(path, args)
    except ProjectFileError as exc:
        return fail(str(exc))
    try:
        session = TrainingSession(project, folder=path.parent)
    except (TrainingError, CompileError) as exc:
        return fail(f"{path.name}: {exc}")
    if session.dataset.note:
        warn(session.dataset.note)
    if session.edits_note:  # data edits that could not be applied
        warn(session.edits_note)
    try:
        evaluation = evaluate(session, split)
    except EvaluationError as exc:
        return fail(f"{path.name}: {exc}")
    worst = WORST if args.worst is None else args.worst
    if args.json:
        say(json.dumps(as_json(evaluation, path.name, worst), indent=1, allow_nan=False))
    else:
        say("\n".join(text_lines(evaluation, path.name, worst)))
    return EXIT_OK


# ---- JSON --------------------------------------------------------------------------------


def as_json(evaluation: Evaluation, name: str, worst: int) -> dict[str, Any]:
    """Everything the text shows, as plain JSON values (NaN as null)."""
    data: dict[str, Any] = {
        "project": name, "set": evaluation.split, "samples": len(evaluation),
        "step": evaluation.step, "task": evaluation.task, "loss_function": evaluation.loss_name,
        "loss": _number(evaluation.loss),
    }  # fmt: skip
    found = evaluation.classification
    if found is not None:
        scores = found.scores
        data["classification"] = {
            "classes": list(evaluation.names),
            "confusion": found.confusion.tolist(),
            "per_class": [
                {"class": evaluation.names[i], "precision": _number(scores.precision[i]),
                 "recall": _number(scores.recall[i]), "f1": _number(scores.f1[i]),
                 "support": int(scores.support[i])}
                for i in range(len(scores.support))
            ],  # fmt: skip
            "macro": {"precision": _number(scores.macro_precision),
                      "recall": _number(scores.macro_recall), "f1": _number(scores.macro_f1)},
            "accuracy": _number(scores.accuracy),
            "roc_auc": _number(found.roc.area) if found.roc else None,
            "pr_auc": _number(found.precision_recall.area) if found.precision_recall else None,
        }
    reg = evaluation.regression
    if reg is not None:
        data["regression"] = {
            "targets": list(evaluation.names), "r2": _number(reg.r2),
            "r2_per_target": [_number(v) for v in reg.scores.r2_per_target],
            "mae": _number(reg.mae), "rmse": _number(reg.rmse),
        }  # fmt: skip
    data["worst"] = [_sample_json(evaluation, int(i)) for i in evaluation.worst(worst)]
    return data


def _sample_json(evaluation: Evaluation, index: int) -> dict[str, Any]:
    row: dict[str, Any] = {"index": index}
    found = evaluation.classification
    if found is not None:
        label, predicted = int(found.true[index]), int(found.predicted[index])
        row.update(label=label, label_name=_class_name(evaluation, label), prediction=predicted,
                   prediction_name=_class_name(evaluation, predicted),
                   probabilities=[_number(p) for p in found.probabilities[index]])  # fmt: skip
    else:
        reg = evaluation.regression
        row.update(label=[_number(v) for v in reg.true[index]],
                   prediction=[_number(v) for v in reg.predicted[index]])  # fmt: skip
    row["loss"] = _number(evaluation.losses[index])
    return row


def _number(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


# ---- text --------------------------------------------------------------------------------


def text_lines(evaluation: Evaluation, name: str, worst: int) -> list[str]:
    count = len(evaluation)
    lines = [f"{name}: {evaluation.split} set, {count} sample{'s' if count != 1 else ''}, "
             f"weights after step {evaluation.step} ({PREDICT_MODE})"]  # fmt: skip
    headline = [f"loss {evaluation.loss:.4g} ({evaluation.loss_name})"]
    found = evaluation.classification
    if found is not None:
        headline.append(f"accuracy {found.accuracy:.1%}")
        if found.roc is not None:
            headline.append(f"ROC AUC {found.roc.area:.4f}")
        if found.precision_recall is not None:
            headline.append(f"precision–recall AUC {found.precision_recall.area:.4f}")
    reg = evaluation.regression
    if reg is not None:
        headline += [f"R² {reg.r2:.4g}", f"MAE {reg.mae:.4g}", f"RMSE {reg.rmse:.4g}"]
    lines += [", ".join(headline), ""]
    if found is not None:
        lines += confusion_lines(evaluation) + [""] + class_lines(evaluation) + [""]
    lines += worst_lines(evaluation, worst)
    return lines


def confusion_lines(evaluation: Evaluation) -> list[str]:
    """Rows: the true class (index and name); columns: the predicted class's index."""
    matrix = evaluation.classification.confusion
    names = [_class_name(evaluation, i) for i in range(len(matrix))]
    labels = [name if name == str(i) else f"{i} {name}" for i, name in enumerate(names)]
    label_width = max(len(label) for label in labels)
    width = max(len(str(int(matrix.max(initial=0)))), len(str(len(matrix) - 1)))
    head = " " * label_width + "  " + " ".join(f"{j:>{width}}" for j in range(len(matrix)))
    lines = ["Confusion matrix (rows: true class; columns: predicted class):", "  " + head]
    for label, row in zip(labels, matrix, strict=True):
        cells = " ".join(f"{int(v):>{width}}" for v in row)
        lines.append(f"  {label:<{label_width}}  {cells}")
    return lines


def class_lines(evaluation: Evaluation) -> list[str]:
    scores = evaluation.classification.scores
    names = [_class_name(evaluation, i) for i in range(len(scores.support))]
    width = max([len("macro average"), *(len(n) for n in names)])
    lines = [f"  {'class':<{width}}  precision  recall      f1  support"]
    for i, label in enumerate(names):
        lines.append(f"  {label:<{width}}  {scores.precision[i]:9.3f}  {scores.recall[i]:6.3f}  "
                     f"{scores.f1[i]:6.3f}  {int(scores.support[i]):7d}")  # fmt: skip
    lines.append(f"  {'macro average':<{width}}  {scores.macro_precision:9.3f}  "
                 f"{scores.macro_recall:6.3f}  {scores.macro_f1:6.3f}  "
                 f"{int(scores.support.sum()):7d}")  # fmt: skip
    return ["Per class:", *lines]


def worst_lines(evaluation: Evaluation, worst: int) -> list[str]:
    picked = evaluation.worst(worst)
    rows = [("index", "label", "prediction", "loss")]
    for i in picked:
        label, prediction = _sample_text(evaluation, int(i))
        rows.append((str(int(i)), label, prediction, f"{evaluation.losses[i]:.4g}"))
    widths = [max(len(r[c]) for r in rows) for c in range(4)]
    lines = [f"The {len(picked)} worst sample{'s' if len(picked) != 1 else ''} (highest loss "
             f"first; index = row of the {evaluation.split} set):"]  # fmt: skip
    for r in rows:
        lines.append("  " + "  ".join(
            f"{v:>{w}}" if c in (0, 3) else f"{v:<{w}}" for c, (v, w) in
            enumerate(zip(r, widths, strict=True))).rstrip())  # fmt: skip
    return lines


def _sample_text(evaluation: Evaluation, index: int) -> tuple[str, str]:
    found = evaluation.classification
    if found is not None:
        predicted = int(found.predicted[index])
        p = found.probabilities[index][predicted] if predicted < found.probabilities.shape[1] \
            else math.nan  # fmt: skip
        return (_class_name(evaluation, int(found.true[index])),
                f"{_class_name(evaluation, predicted)} ({p:.0%})")  # fmt: skip
    reg = evaluation.regression
    return _values(reg.true[index]), _values(reg.predicted[index])


def _values(values: np.ndarray, shown: int = 4) -> str:
    flat = np.asarray(values).reshape(-1)
    text = ", ".join(f"{v:.4g}" for v in flat[:shown])
    return text + (f", … ({flat.size} values)" if flat.size > shown else "")


def _class_name(evaluation: Evaluation, index: int) -> str:
    names = evaluation.data.class_names
    name = names[index] if index < len(names) else str(index)
    return name if name.isprintable() and name.strip() == name and name else repr(name)
