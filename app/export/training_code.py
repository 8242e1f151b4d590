"""The training part of the exported scripts: optimizer, learning-rate schedule, clipping.

Both scripts get the project's training settings as code a reader can follow: the
engine script builds MindSpore-style `nn` optimizers with a per-step list of rates made
by `nn.WarmUpLR` / `nn.CosineDecayLR` / `nn.ExponentialDecayLR` and clips with `ops`;
the PyTorch script builds the matching `torch.optim` optimizer, a `LambdaLR` whose factor
is the same formula in plain Python (step it after every optimizer step), and clips with
`torch.nn.utils`. Both follow app.session.settings.RateSchedule step for step. Where
torch's optimizer computes differently, the script says so in a comment (and the export
report names what could not be carried over).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.catalogue.training import (
    DEFAULTS,
    OPTIMIZERS,
    RateSchedule,
    SettingRefused,
    check_grad_clip,
    check_lr_schedule,
    optimizer_keywords,
)
from engine import nn
from engine.nn.optimizer import _no_decay_for

# Keyword options the Run dock may hold that are no part of the update (a lock, a scale).
_NOT_UPDATE = ("use_locking", "loss_scale")


@dataclass(frozen=True)
class _Training:
    """What the scripts need of `project.training`, read and checked."""

    optimizer: str
    optimizer_options: Mapping[str, Any]
    learning_rate: float
    epochs: int
    lr_schedule: Mapping[str, Any]
    grad_clip: Mapping[str, Any]

    def schedule(self) -> RateSchedule:
        spec = self.lr_schedule
        options = {k: v for k, v in spec.items() if k not in ("kind", "warmup_steps")}
        return RateSchedule(spec["kind"], options, spec["warmup_steps"], self.epochs)

    def clipping(self) -> tuple[str, float]:
        return self.grad_clip["mode"], self.grad_clip["value"]


def _settings(training: Mapping[str, Any]) -> _Training:
    """The settings the training code is made from; SettingRefused saying what is wrong
    (the Run dock and Start say it in the same words where the session checks it)."""
    value = {**DEFAULTS, **training}
    name, options = value["optimizer"], value.get("optimizer_options") or {}
    if name not in OPTIMIZERS:
        raise SettingRefused(f"Unknown optimizer {name!r}; choose one of "
                             f"{', '.join(OPTIMIZERS)}.")  # fmt: skip
    if not isinstance(options, Mapping):
        raise SettingRefused("The optimizer options must be a mapping of name to value.")
    rate, epochs = value["learning_rate"], value["epochs"]
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not rate > 0 \
            or not math.isfinite(rate):  # fmt: skip
        raise SettingRefused(f"The learning rate must be a number above 0, not {rate!r}.")
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise SettingRefused(f"The number of epochs must be a whole number of 1 or more, "
                             f"not {epochs!r}.")  # fmt: skip
    return _Training(name, options, float(rate), epochs, check_lr_schedule(value["lr_schedule"]),
                     check_grad_clip(value["grad_clip"]))  # fmt: skip


def _options(settings: _Training) -> dict[str, Any]:
    return optimizer_keywords(settings.optimizer, settings.optimizer_options)


def _kwargs(options: Mapping[str, Any]) -> list[str]:
    return [f"{k}={v!r}" for k, v in options.items()]


def _call(head: str, args: list[str], indent: str = "    ") -> list[str]:
    """`head(arg, arg, ...)` as lines of at most ~96 columns, arguments aligned."""
    lines, line = [], f"{indent}{head}("
    pad = " " * len(line)
    for i, arg in enumerate(args):
        piece = arg + (")" if i == len(args) - 1 else ",")
        if len(line) + len(piece) > 96 and not line.endswith("("):
            lines.append(line.rstrip())
            line = pad
        line += piece + " "
    return [*lines, line.rstrip() if args else line + ")"]


def _comment(text: str, indent: str = "    ") -> list[str]:
    return textwrap.wrap(text, 96, initial_indent=f"{indent}# ", subsequent_indent=f"{indent}# ")


def _docstring(text: str, indent: str = "    ") -> list[str]:
    body = textwrap.wrap(f'"""{text}', 96, initial_indent=indent, subsequent_indent=indent)
    if len(body[-1]) + 3 > 96:
        return [*body, f'{indent}"""']
    return [*body[:-1], body[-1] + '"""']


# ----------------------------------------------------------------------------- engine script


def engine_training_code(training: Mapping[str, Any]) -> str:
    """`learning_rates`, `make_optimizer` and `clip_gradients` for the engine script."""
    try:
        settings = _settings(training)
    except SettingRefused as exc:
        return f"# The training settings were not exported: {exc}\n\n\n"
    schedule = settings.schedule()
    cls = getattr(nn, settings.optimizer)
    lines = [f"LEARNING_RATE = {settings.learning_rate!r}", f"EPOCHS = {settings.epochs}",
             f"WARMUP_STEPS = {schedule.warmup_steps}", "", ""]  # fmt: skip
    lines += _engine_rates(schedule)
    if schedule.constant:
        rate, doc = "LEARNING_RATE", "(a constant rate: steps_per_epoch is not needed)"
    else:
        rate, doc = "learning_rates(steps_per_epoch)", "(steps_per_epoch: batches per epoch)"
    lines += ["def make_optimizer(net, steps_per_epoch=None):",
              *_docstring(f"The project's {cls.__name__} over the trainable Parameters {doc}."),
              *_call(f"return nn.{cls.__name__}",
                     ["net.trainable_params()", f"learning_rate={rate}",
                      *_kwargs(_options(settings))]),
              "", ""]  # fmt: skip
    mode, value = settings.clipping()
    clip = {"none": "grads  # the project does not clip",
            "norm": f"ops.clip_by_global_norm(grads, {value!r})",
            "value": f"ops.clip_by_value(grads, {-value!r}, {value!r})"}[mode]  # fmt: skip
    lines += ["def clip_gradients(grads):",
              '    """The gradients as the update uses them (after backward, before the '
              'optimizer)."""',
              f"    return {clip}", "", "", ""]  # fmt: skip
    return "\n".join(lines)


def _engine_rates(schedule) -> list[str]:
    if schedule.constant:
        return []
    o = schedule.options
    decay = {
        "constant": None,
        "step": f"nn.ExponentialDecayLR(LEARNING_RATE, {o.get('factor')!r}, "
                f"{o.get('step_epochs')} * steps_per_epoch, is_stair=True)",
        "exponential": f"nn.ExponentialDecayLR(LEARNING_RATE, {o.get('decay_rate')!r}, "
                       f"{o.get('decay_epochs')} * steps_per_epoch, is_stair={o.get('stair')!r})",
        "cosine": f"nn.CosineDecayLR({float(o.get('min_factor', 0.0))!r} * LEARNING_RATE, "
                  "LEARNING_RATE, max(total - WARMUP_STEPS, 1))",
    }[schedule.kind]  # fmt: skip
    lines = ["def learning_rates(steps_per_epoch):",
             *_docstring(f"The rate of every step of the run, one per step: "
                         f"{schedule.describe()}."),
             "    total = EPOCHS * steps_per_epoch",
             "    steps = np.arange(total)"]  # fmt: skip
    if decay is None:
        lines.append("    rates = np.full(total, LEARNING_RATE, dtype=np.float32)")
    else:
        lines += [f"    decay = {decay}",
                  "    rates = decay(engine.Tensor(np.maximum(steps - WARMUP_STEPS, 0))).asnumpy()"]
    if schedule.warmup_steps:
        lines += ["    warm = steps < WARMUP_STEPS",
                  "    rates[warm] = nn.WarmUpLR(LEARNING_RATE, WARMUP_STEPS)("
                  "engine.Tensor(steps[warm])).asnumpy()"]  # fmt: skip
    lines += ["    return rates.astype(float).tolist()", "", ""]
    return lines


# ----------------------------------------------------------------------------- torch script


def torch_training_code(training: Mapping[str, Any],
                        names: Mapping[str, str]) -> tuple[str, list[str]]:  # fmt: skip
    """`learning_rate_factor`, `make_optimizer`, `make_scheduler` and `clip_gradients` for
    the PyTorch script, and what it could not carry over. `names` maps the engine's
    trainable Parameter names to torch's."""
    try:
        settings = _settings(training)
    except SettingRefused as exc:
        return f"# The training settings were not exported: {exc}\n\n\n", [
            f"the optimizer (its settings are refused: {exc})"]
    schedule = settings.schedule()
    optimizer, notes, left_out, filtered = _torch_optimizer(settings)
    no_decay = sorted(torch for engine, torch in names.items() if _no_decay_for(engine))
    lines = [f"LEARNING_RATE = {settings.learning_rate!r}", f"EPOCHS = {settings.epochs}",
             f"WARMUP_STEPS = {schedule.warmup_steps}"]  # fmt: skip
    if filtered:
        lines += ["# Not decayed, as MindSpore decays no Parameter named beta or gamma "
                  "(BatchNorm's).", f"NO_DECAY = {no_decay!r}"]  # fmt: skip
    lines += ["", ""]
    lines += _torch_factor(schedule)
    lines += ["def make_optimizer(net):",
              f'    """torch\'s counterpart of the project\'s {settings.optimizer}."""']
    for note in notes:
        lines += _comment(note)
    if filtered:
        lines += ["    named = list(net.named_parameters())",
                  '    groups = [{"params": [p for n, p in named if n not in NO_DECAY]},',
                  '              {"params": [p for n, p in named if n in NO_DECAY], '
                  '"weight_decay": 0.0}]']  # fmt: skip
    head, args = optimizer
    lines += [*_call(f"return {head}", ["groups" if filtered else "net.parameters()", *args]),
              "", "",
              "def make_scheduler(optimizer, steps_per_epoch):",
              '    """The learning rate per step: call scheduler.step() after every '
              'optimizer.step()."""',
              "    return torch.optim.lr_scheduler.LambdaLR(",
              "        optimizer, lambda step: learning_rate_factor(step, steps_per_epoch))",
              "", ""]  # fmt: skip
    mode, value = settings.clipping()
    clip = {"none": "pass  # the project does not clip",
            "norm": f"torch.nn.utils.clip_grad_norm_(net.parameters(), {value!r})",
            "value": f"torch.nn.utils.clip_grad_value_(net.parameters(), {value!r})"}[mode]
    lines += ["def clip_gradients(net):",
              '    """Clip the gradients as the project does (after backward, before '
              'optimizer.step())."""',
              f"    {clip}", "", "", ""]  # fmt: skip
    return "\n".join(lines), left_out


def _torch_optimizer(settings: _Training) -> tuple[tuple[str, list[str]], list[str],
                                                             list[str], bool]:
    """((torch constructor, its arguments after the parameters), comments for the script,
    what is left out, whether NO_DECAY applies)."""
    o = {k: v for k, v in _options(settings).items() if k not in _NOT_UPDATE}
    notes: list[str] = []
    left: list[str] = []

    def leave(what: str) -> None:
        notes.append(f"Not carried over: {what}.")
        left.append(f"the {settings.optimizer} optimizer's {what}")

    if _options(settings).get("loss_scale", 1.0) != 1.0:
        leave("loss_scale (torch scales losses with torch.amp)")
    args = ["lr=LEARNING_RATE"]
    wd = o.get("weight_decay", 0.0)
    decay = [f"weight_decay={wd!r}"] if wd else []
    name = settings.optimizer
    if name == "SGD":  # MindSpore's SGD decays every Parameter, as torch's
        args += [f"{k}={o[k]!r}" for k in ("momentum", "dampening", "nesterov") if k in o]
        return ("torch.optim.SGD", args + decay), notes, left, False
    if name == "Momentum":
        args += [f"momentum={o['momentum']!r}", *(["nesterov=True"] if o.get("use_nesterov")
                                                   else [])]  # fmt: skip
        return ("torch.optim.SGD", args + decay), notes, left, bool(wd)
    if name in ("Adam", "AdamW"):
        args += [f"betas={(o.get('beta1', 0.9), o.get('beta2', 0.999))!r}",
                 f"eps={o.get('eps', 1e-8)!r}"]  # fmt: skip
        if name == "AdamW":  # decoupled decay of every Parameter: torch's AdamW exactly
            return ("torch.optim.AdamW", [*args, f"weight_decay={wd!r}"]), notes, left, False
        notes.append("MindSpore's Adam adds eps to sqrt(v) before the bias correction: a "
                     "hair's difference.")  # fmt: skip
        if o.get("use_nesterov"):
            leave("use_nesterov (torch's Adam has no Nesterov form: plain Adam here)")
        return ("torch.optim.Adam", args + decay), notes, left, bool(wd)
    if name == "RMSProp":
        notes.append("MindSpore's RMSProp puts epsilon inside the square root, starts the "
                     "mean square at 1 and folds the rate into the momentum: close, not equal.")
        args += [f"alpha={o.get('decay', 0.9)!r}", f"eps={o.get('epsilon', 1e-10)!r}",
                 f"momentum={o.get('momentum', 0.0)!r}", f"centered={bool(o.get('centered'))!r}"]
        return ("torch.optim.RMSprop", args + decay), notes, left, bool(wd)
    # Adagrad: torch's with MindSpore's starting accumulator and no epsilon is the same.
    if not o.get("update_slots", True):
        leave("update_slots=False (torch's Adagrad always accumulates)")
    args += [f"initial_accumulator_value={o.get('accum', 0.1)!r}", "eps=0.0"]
    return ("torch.optim.Adagrad", args + decay), notes, left, bool(wd)


def _torch_factor(schedule) -> list[str]:
    """`learning_rate_factor(step, steps_per_epoch)`: RateSchedule's factor in plain Python."""
    o = schedule.options
    lines = ["def learning_rate_factor(step, steps_per_epoch):",
             *_docstring(f"The rate of step `step` (0: the first) as a multiple of "
                         f"LEARNING_RATE: {schedule.describe()}.")]  # fmt: skip
    if schedule.warmup_steps:
        lines += ["    if step < WARMUP_STEPS:  # MindSpore's WarmUpLR: 0 at the first step",
                  "        return step / WARMUP_STEPS",
                  "    step -= WARMUP_STEPS"]  # fmt: skip
    if schedule.kind == "constant":
        lines.append("    return 1.0")
    elif schedule.kind == "step":
        lines.append(f"    return {o['factor']!r} ** (step // ({o['step_epochs']} * "
                     "steps_per_epoch))")
    elif schedule.kind == "exponential":
        ratio = f"step / ({o['decay_epochs']} * steps_per_epoch)"
        lines.append(f"    return {o['decay_rate']!r} ** "
                     + (f"np.floor({ratio})" if o["stair"] else f"({ratio})"))
    else:
        low = float(o["min_factor"])
        lines += ["    span = max(EPOCHS * steps_per_epoch - WARMUP_STEPS, 1)",
                  f"    return {low!r} + {(1.0 - low) * 0.5!r} * (1 + np.cos(np.pi * "
                  "min(step, span) / span))"]  # fmt: skip
    return [*lines, "", ""]
