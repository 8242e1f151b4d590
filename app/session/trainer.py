"""The step/epoch loop over one network, loss, optimizer and data set, in the calling thread.

`Trainer.run` trains until the planned epoch, a step budget, a stop request or an
error, and returns the event that ended it. Before every step it copies every
Parameter (BatchNorm's moving statistics included) into buffers allocated once, so a
step that fails — a NaN or infinite loss, gradient or weight, or any exception, also
one raised in a hook — is undone and the weights stay those of the last good step.
What else a step changes (BatchNorm's moving statistics) is checked to be finite too.

The learning rate of each step is the base rate (`learning_rate`, which the Run dock
sets, also while a run goes on) times the schedule's factor for that step, from an array
made once per run; the schedule counts the steps of the run of `epochs` epochs it spans
(app.session.settings.run_start_epoch), so a run that goes on after a pause or stop goes
on along it and a new one starts it again. Gradients are clipped, if asked, after they
are found finite and before the update. The rate a step used goes into the metrics and
its Progress event.

With an `augmentation` setting (app.datasets.augment) the training batches are augmented
as the loop takes them (a few together), from generators fixed by the setting's seed,
the epoch and the batches' indices; validation (`evaluate`) and prediction always see
the samples as they are.

Each step replays a compiled plan (engine.plan) when one fits the network in its state
and the batch (app.session.compiled_step picks it, or the eager path), with the same
checks, messages, clipping and results as the eager step; `compiled=False` (or
CELLWRIGHT_EAGER=1) keeps every step eager.

Ctrl+C (KeyboardInterrupt), `sys.exit()` in a hook or custom Cell (SystemExit) and any
other BaseException end the run the same way — step undone, `on_end` called, ending
event emitted — and are then raised again to `run`'s caller.
"""

from __future__ import annotations

import contextlib
import math
import traceback
from collections.abc import Callable, Mapping
from itertools import islice
from typing import Any

import numpy as np

import engine
from app.compiler.cells import GraphCell
from app.datasets import CLASSIFICATION, Dataset
from app.datasets.augment import AugmentationRefused, augmenter_for
from app.session.compiled_step import CompiledStep, all_finite, first_not_finite, wanted
from app.session.events import (
    COMPLETED,
    STEP_LIMIT,
    STOPPED,
    EpochEnded,
    EpochMetrics,
    Progress,
    TrainingFailed,
    TrainingFinished,
    TrainingPaused,
    TrainingResumed,
    TrainingStarted,
)
from app.session.handover import Handover
from app.session.hook_captures import HookCaptures
from app.session.metrics import Metrics
from app.session.progress import EpochTally, TrainingState
from app.session.run_control import RunControl
from app.session.settings import RateSchedule, TrainingError, run_start_epoch
from app.session.snapshot import ParameterSnapshot
from app.session.targets import Targets
from engine import _random

EVALUATION_BATCH = 512


def _node_cells(network: engine.nn.Cell) -> list[tuple[str, engine.nn.Cell]]:
    """(dotted node name, Cell) of every node's Cell but composites: the graph's layers."""
    found = []
    for name, cell in network.cells_and_names():
        if isinstance(cell, GraphCell):
            prefix = f"{name}." if name else ""
            found += [(prefix + child_name, child)
                      for child_name, child in cell.name_cells().items()
                      if not isinstance(child, GraphCell)]  # fmt: skip
    return found


def _describe(exc: BaseException) -> str:
    """'ValueError: the hook is broken'; 'SystemExit: 3'; 'KeyboardInterrupt' (no text)."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class NotFinite(ArithmeticError):
    """A step produced NaN or infinity; the message says where."""


class Trainer:
    """Trains `network` with `loss_fn` and `optimizer` on `train_set`, validating on `val_set`."""

    def __init__(self, network: engine.nn.Cell, loss_fn: engine.nn.Cell, optimizer,
                 train_set: Dataset, val_set: Dataset, *, batch_size: int, seed: int,
                 state: TrainingState, metrics: Metrics, emit: Callable[[object], None],
                 captures: HookCaptures | None = None, input_dtype: str = "float32",
                 snapshot: ParameterSnapshot | None = None,
                 handover: Handover | None = None,
                 hand_over: Callable[[], None] | None = None,
                 schedule: RateSchedule | None = None,
                 grad_clip: tuple[str, float] = ("none", 1.0),
                 augmentation: Mapping[str, Any] | None = None,
                 compiled: bool | None = None) -> None:
        self.network = network
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.train_set = train_set
        self.val_set = val_set
        self.batch_size = batch_size
        self.seed = seed
        self.state = state
        self.metrics = metrics
        self.captures = captures
        self.snapshot = snapshot
        # `hand_over()` puts a RunResult into `handover` (the session's); called here,
        # between two steps or in a pause, when the project's owner asked for one.
        self.handover = handover if hand_over is not None else None
        self._hand_over = hand_over
        self.input_dtype = np.dtype(input_dtype)
        self._emit = emit
        self.targets = Targets(type(loss_fn).__name__, train_set.task)
        # The exact number set, not the optimizer's float32 copy: AdamW's decay uses it as is.
        # With a schedule, this is its base rate; `rate` is what the last step used.
        self.learning_rate = float(np.asarray(optimizer.state_dict()["learning_rate"]))
        self.rate = self.learning_rate
        self.schedule = schedule if schedule is not None and not schedule.constant else None
        self._factors: np.ndarray | None = None  # per step of the run, made as it starts
        self._schedule_start = 0  # the epoch the schedule's first step is in
        self._per_epoch = 1
        self._clip_mode, self._clip_value = grad_clip
        try:  # None when it changes nothing: the loop takes the batches as they are
            self._augment = augmenter_for(augmentation, train_set, batch_size)
        except AugmentationRefused as exc:
            raise TrainingError(str(exc)) from None
        self._in_step = False
        self._interruption: BaseException | None = None  # to raise again once reported
        self._failed_batch: np.ndarray | None = None  # the input of a step that went non-finite
        self._last: tuple[float, float | None] = (math.nan, None)
        self._params = list(network.get_parameters())
        self._backup = [np.empty_like(p.asnumpy()) for p in self._params]
        # What a step changes beside the optimizer's Parameters: BatchNorm's moving
        # statistics (and any Parameter a custom Cell updates in its forward). The
        # optimizer's are checked as it updates them; these once per step, with their
        # backups to tell "became" from "was already" non-finite.
        held = {id(p) for p in optimizer.parameters}
        self._untrainable = [(p, saved) for p, saved in zip(self._params, self._backup,
                                                            strict=True)
                             if id(p) not in held]  # fmt: skip
        self._grad_fn = engine.value_and_grad(self._forward, None, optimizer.parameters,
                                              has_aux=True)  # fmt: skip
        # None: every step eager (`compiled`, else app.session.compiled_step's switches)
        self.compiled_step = CompiledStep(
            network, loss_fn, optimizer,
            lambda y, shape: self.targets.for_loss(y, shape).asnumpy(), self._captures_off,
            clip_by_norm=self._clip_mode == "norm",
        ) if wanted(compiled) else None  # fmt: skip

    @property
    def batches_per_epoch(self) -> int:
        return self.train_set.batch_count(self.batch_size)

    def _forward(self, x, y):
        logits = self.network(x)
        return self.loss_fn(logits, self.targets.for_loss(y, logits.shape)), logits

    # ---- the loop ------------------------------------------------------------------

    def run(self, target_epoch: int, control: RunControl, max_steps: int | None = None,
            on_end: Callable[[object], None] | None = None) -> TrainingFinished | TrainingFailed:
        """Train up to `target_epoch` epochs in all; returns (and emits) how it ended.

        `on_end(event)` runs after the last step and before the ending event is emitted.
        A KeyboardInterrupt ends the run as a stop (TrainingFinished, STOPPED), any other
        BaseException that is not an Exception (SystemExit) as a failure; either is raised
        again after `on_end` and the event, so Ctrl+C still stops the caller.
        """
        self._interruption = None
        try:
            event = self._train(target_epoch, control, max_steps)
        except BaseException as exc:  # Ctrl+C again while the failure's message was made
            self._in_step = False
            event = self._interrupted(exc)
        if on_end is not None:
            for _ in range(2):  # once more if Ctrl+C cut it short: the run must be kept
                try:
                    on_end(event)
                except Exception as exc:
                    event = self._fail(exc)
                except BaseException as exc:
                    self._interruption = self._interruption or exc
                    continue
                break
        interruption, self._interruption = self._interruption, None
        try:
            self._emit(event)
        finally:
            if interruption is not None:
                raise interruption
        return event

    def _train(self, target_epoch: int, control: RunControl,
               max_steps: int | None) -> TrainingFinished | TrainingFailed:  # fmt: skip
        state = self.state
        state.target_epoch = target_epoch
        per_epoch = self.batches_per_epoch
        planned = max((target_epoch - state.epoch) * per_epoch - state.batch, 0)
        if max_steps is not None:
            planned = min(planned, max_steps)
        run_step = 0
        was_training = self.network.training
        try:
            if self.schedule is not None:  # once per run: a step only looks its factor up
                self._per_epoch = per_epoch
                start = self._schedule_start = run_start_epoch(state.epoch, target_epoch,
                                                               self.schedule.epochs)
                self._factors = self.schedule.factors(per_epoch,
                                                      (target_epoch - start) * per_epoch)
            self._emit(TrainingStarted(state.step, state.epoch, target_epoch, planned,
                                       per_epoch, self.train_set.describe()))  # fmt: skip
            self.network.set_train(True)
            while state.epoch < target_epoch:
                order = self.train_set.batches(self.batch_size, True, self.seed, state.epoch)
                if self._augment is None:
                    order = islice(order, state.batch, None)
                else:  # a few batches at a time, as they come
                    order = self._augment.batches(order, state.epoch, state.batch)
                for x, y in order:
                    reason = self._between_steps(control)
                    if reason is None and max_steps is not None and run_step >= max_steps:
                        reason = STEP_LIMIT
                    if reason:
                        return self._finish(reason)
                    self._train_step(x, y)
                    run_step += 1
                    self._after_step(run_step, planned, per_epoch)
                self._end_epoch()
            return self._finish(COMPLETED)
        except Exception as exc:  # every failure ends the run with a readable message
            return self._fail(exc)
        except BaseException as exc:  # Ctrl+C, sys.exit(): end the run, raise it after
            return self._interrupted(exc)
        finally:
            self.network.set_train(was_training)

    def _between_steps(self, control: RunControl) -> str | None:
        if control.stop_requested:
            return STOPPED
        if self.snapshot is not None:
            self.snapshot.serve(self.state.step)
        handover = self.handover
        if handover is not None and handover.requested:
            self._serve_handover()
        control.wait_while_paused(
            self._on_pause, lambda: self._emit(TrainingResumed(self.state.step)),
            self._serve_handover, handover and (lambda: handover.requested),
        )  # fmt: skip
        if control.stop_requested:
            return STOPPED
        learning_rate = control.take_learning_rate()
        if learning_rate is not None:
            self.set_learning_rate(learning_rate)
        return None

    def _on_pause(self) -> None:
        if self.snapshot is not None:  # views read the paused weights from here
            self.snapshot.serve(self.state.step, force=True)
        self._emit(TrainingPaused(self.state.step))

    def _serve_handover(self) -> None:
        if self.handover is not None and self.handover.take_request():
            self._hand_over()

    def set_learning_rate(self, value: float) -> None:
        """Use `value` (the schedule's base rate) from the next step on (call between steps,
        on the training thread)."""
        self.learning_rate = float(value)
        if self.schedule is None:
            self.optimizer.learning_rate = value
            self.rate = self.learning_rate

    def _scheduled_rate(self) -> float:
        """The rate for the next step: the base rate times its factor."""
        factors, state = self._factors, self.state
        if factors is None or not len(factors):
            return self.learning_rate
        index = (state.epoch - self._schedule_start) * self._per_epoch + state.batch
        return self.learning_rate * float(factors[min(max(index, 0), len(factors) - 1)])

    def _train_step(self, x: np.ndarray, y: np.ndarray) -> None:
        state = self.state
        step = state.step + 1
        if self.captures is not None:
            self.captures.step = step
        for param, saved in zip(self._params, self._backup, strict=True):
            np.copyto(saved, param.asnumpy())
        if self.schedule is not None:
            rate = self._scheduled_rate()
            if rate != self.rate:
                self.optimizer.learning_rate = rate
                self.rate = rate
        self._in_step = True
        try:  # until the step is counted: else weights and count would disagree
            value, logits = self._checked_step(x, y)
            correct = self.targets.correct(logits, y)
        except BaseException as exc:
            self._restore()
            if isinstance(exc, NotFinite):
                self._failed_batch = x
            raise
        self._in_step = False
        state.step = step
        state.batch += 1
        state.tally.add(value, len(x), correct)
        accuracy = None if correct is None else correct / len(x)
        self.metrics.add_step(step, state.epoch + 1, value, accuracy, self.rate)
        self._last = (value, accuracy)

    def _checked_step(self, x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        """Forward, backward and update; NotFinite as soon as a number is NaN or infinite.
        Returns the loss and the network's output."""
        with np.errstate(all="ignore"):  # caught here with a message, not warned about
            x = x.astype(self.input_dtype, copy=False)
            compiled = self.compiled_step
            picked = None if compiled is None else compiled.pick(x, y)
            if picked is not None:
                return self._replayed_step(*picked, x)
            (loss, logits), grads = self._grad_fn(engine.Tensor(x), engine.Tensor(y))
            if compiled is not None:
                compiled.ran_eagerly(x, logits.shape)
            value = float(loss.asnumpy())
            if not math.isfinite(value):
                raise NotFinite(f"the loss became {value}")
            for param, saved in self._untrainable:
                if not np.isfinite(param.asnumpy()).all():
                    raise NotFinite(self._untrainable_message(param, saved))
            for param, grad in zip(self.optimizer.parameters, grads, strict=True):
                if not np.isfinite(grad.asnumpy()).all():
                    raise NotFinite(f"the gradient of {param.name} became infinite or NaN")
            if self._clip_mode == "norm":
                grads = engine.ops.clip_by_global_norm(grads, self._clip_value)
            elif self._clip_mode == "value":
                grads = engine.ops.clip_by_value(tuple(grads), -self._clip_value,
                                                 self._clip_value)  # fmt: skip
            self.optimizer(grads)
            for param in self.optimizer.parameters:
                if not np.isfinite(param.asnumpy()).all():
                    raise NotFinite(f"the update made {param.name} infinite or NaN")
        return value, logits.asnumpy()

    def _replayed_step(self, plan, labels: np.ndarray, x: np.ndarray) -> tuple[float, np.ndarray]:
        """`_checked_step` by a compiled plan: the same checks and clipping in the same order
        (under its np.errstate). A plan makes no gradient for a frozen Parameter (the eager
        step does, and counts it in a global norm: CompiledStep leaves that case eager)."""
        value = plan.forward(x, labels)
        plan.backward()
        if not math.isfinite(value):
            raise NotFinite(f"the loss became {value}")
        for param, saved in self._untrainable:
            if not all_finite(param.asnumpy()):
                raise NotFinite(self._untrainable_message(param, saved))
        params = self.optimizer.parameters
        bad = first_not_finite(plan.grads)
        if bad is not None:
            raise NotFinite(f"the gradient of {params[bad].name} became infinite or NaN")
        if self._clip_mode in ("norm", "value"):  # the eager ops, written back in place
            grads = [g for g in plan.grads if g is not None]
            tensors = tuple(engine.Tensor(g) for g in grads)
            if self._clip_mode == "norm":
                clipped = engine.ops.clip_by_global_norm(tensors, self._clip_value)
            else:
                clipped = engine.ops.clip_by_value(tensors, -self._clip_value, self._clip_value)
            for grad, tensor in zip(grads, clipped, strict=True):
                np.copyto(grad, tensor.asnumpy())
        plan.update()
        bad = first_not_finite([param.asnumpy() for param in params])
        if bad is not None:
            raise NotFinite(f"the update made {params[bad].name} infinite or NaN")
        return value, plan.logits

    @contextlib.contextmanager
    def _captures_off(self):
        """No capture records meanwhile (a plan's trace runs the forward once more)."""
        captures = self.captures
        was = captures is not None and captures.enabled
        if captures is not None:
            captures.enabled = False
        try:
            yield
        finally:
            if captures is not None:
                captures.enabled = was

    @staticmethod
    def _untrainable_message(param, saved: np.ndarray) -> str:
        if np.isfinite(saved).all():
            return f"the step made {param.name} infinite or NaN"
        return f"{param.name} is infinite or NaN (it was so before this step too)"

    def _after_step(self, run_step: int, planned: int, per_epoch: int) -> None:
        state = self.state
        loss, accuracy = self._last
        tally = state.tally
        mean_accuracy = None if accuracy is None else tally.accuracy()
        self._emit(Progress(state.step, run_step, planned, state.epoch + 1, state.batch,
                            per_epoch, loss, accuracy, self.rate, tally.loss,
                            mean_accuracy))  # fmt: skip

    def _restore(self) -> None:
        for param, saved in zip(self._params, self._backup, strict=True):
            np.copyto(param.asnumpy(), saved)

    def _end_epoch(self) -> None:
        state = self.state
        tally, state.tally = state.tally, EpochTally()
        state.epoch += 1
        state.batch = 0
        classification = self.train_set.task == CLASSIFICATION
        val_loss = val_accuracy = None
        if len(self.val_set):
            val_loss, val_accuracy = self.evaluate(self.val_set)
        metrics = EpochMetrics(state.epoch, state.step, tally.loss,
                               tally.accuracy() if classification else None,
                               val_loss, val_accuracy)  # fmt: skip
        self.metrics.add_epoch(metrics)
        self._emit(EpochEnded(metrics))

    def evaluate(self, data: Dataset) -> tuple[float | None, float | None]:
        """(mean loss, accuracy or None) over `data` in predict mode (no Dropout, BN frozen)."""
        if not len(data):
            return None, None
        was_training = self.network.training
        captures = self.captures
        self.network.set_train(False)
        if captures is not None:
            captures.enabled = False
        tally = EpochTally()
        try:
            with engine.no_grad(), np.errstate(all="ignore"):
                for x, y in data.batches(EVALUATION_BATCH, shuffle=False):
                    inputs = engine.Tensor(x.astype(self.input_dtype, copy=False))
                    logits = self.network(inputs)
                    loss = self.loss_fn(logits, self.targets.for_loss(y, logits.shape))
                    correct = self.targets.correct(logits.asnumpy(), y)
                    tally.add(float(loss.asnumpy()), len(x), correct)
        finally:
            self.network.set_train(was_training)
            if captures is not None:
                captures.enabled = True
        accuracy = tally.accuracy() if data.task == CLASSIFICATION else None
        return tally.loss, accuracy

    def _first_non_finite(self) -> str:
        """', first in the output of dense2' when the failing batch's forward shows where.

        Runs the failing step's forward again, as it ran (train mode), on the weights that
        were kept, watching every layer's output; then puts back what that forward moved
        (BatchNorm's moving statistics, the random generator). '' if no output was bad
        (the gradient or the update went non-finite, which the message already names).
        """
        x, self._failed_batch = self._failed_batch, None
        if x is None:
            return ""
        found: list[str] = []

        def watch(name: str):
            def hook(cell, inputs, output):
                outputs = output if isinstance(output, tuple) else (output,)
                if not found and any(isinstance(o, engine.Tensor)
                                     and not np.isfinite(o.asnumpy()).all() for o in outputs):
                    found.append(name)
            return hook

        handles = [cell.register_forward_hook(watch(name))
                   for name, cell in _node_cells(self.network)]
        if self.captures is not None:
            self.captures.enabled = False
        try:  # on a copy of the generator: the run's own is not moved
            with _random.fork_rng(), engine.no_grad(), np.errstate(all="ignore"):
                self.network(engine.Tensor(x.astype(self.input_dtype, copy=False)))
        except Exception:  # only a better message was at stake
            pass
        finally:
            for handle in handles:
                handle.remove()
            self._restore()
            if self.captures is not None:
                self.captures.enabled = True
        if not found:
            return ""
        return f"; the first layer whose output became infinite or NaN is {found[0]}"

    # ---- endings -------------------------------------------------------------------

    def _finish(self, reason: str, interrupted: bool = False) -> TrainingFinished:
        state = self.state
        if reason == COMPLETED:
            state.target_epoch = None
        last = self.metrics.last_epoch()
        if reason == COMPLETED:
            message = f"Training finished after epoch {state.epoch} (step {state.step})."
        elif reason == STOPPED:
            how = " on an interrupt (Ctrl+C)" if interrupted else ""
            message = f"Training stopped{how} at step {state.step} (epoch {state.epoch + 1})."
        else:
            message = f"Training paused for later at step {state.step} (epoch {state.epoch + 1})."
        if last is not None and reason == COMPLETED:
            described = last.describe()
            message += f" {described[0].upper()}{described[1:]}."
        state.message = message
        return TrainingFinished(reason, state.step, state.epoch, last, message)

    def _interrupted(self, exc: BaseException) -> TrainingFinished | TrainingFailed:
        """A KeyboardInterrupt stops the run, another BaseException fails it; `run` raises
        the first one again once the run is stored and reported."""
        self._interruption = self._interruption or exc
        if isinstance(exc, KeyboardInterrupt):
            self._in_step = False
            return self._finish(STOPPED, interrupted=True)
        return self._fail(exc)

    def _fail(self, exc: BaseException) -> TrainingFailed:
        state = self.state
        step, epoch = state.step + 1, state.epoch + 1
        if not self._in_step:  # between steps: in an event callback or validating
            step = state.step
            message = f"Training failed after step {step} (epoch {epoch}): {_describe(exc)}."
        elif isinstance(exc, NotFinite):
            where = self._first_non_finite()
            message = (
                f"Training stopped at step {step} (epoch {epoch}): {exc}{where}. The weights "
                f"from before step {step} were kept. Try a smaller learning rate "
                f"(it is {self.learning_rate:g})."
            )
        else:
            message = (
                f"Training failed at step {step} (epoch {epoch}): {_describe(exc)}. "
                f"The weights from before step {step} were kept."
            )
        self._in_step = False
        state.message = message
        details = "".join(traceback.format_exception(exc))
        return TrainingFailed(message, step, epoch, exc, details)
