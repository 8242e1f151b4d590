"""`TrainingSession`: trains a project's network on a worker thread, and keeps its progress.

    session = TrainingSession(project)          # compiles; TrainingError / CompileError
    session.events.subscribe(on_event)          # TrainingStarted, Progress, EpochEnded, …
    session.start()                             # worker thread; or session.run() right here
    session.pause(); session.resume(); session.set_learning_rate(0.001); session.stop()
    session.wait()                              # the TrainingFinished / TrainingFailed event

When a run ends — finished, stopped, or failed — the session writes the weights, the
optimizer state, the shuffle and RNG position, the metric history and each hook's
capture history into the project (`store()`), before it tells its listeners; saving the
project then keeps all of it, and a new session on the reopened project continues where
this one ended.

Ctrl+C during `run()` (KeyboardInterrupt) ends the run as a stop, and `sys.exit()` in a
hook or custom Cell (SystemExit) as a failure: either way the interrupted step is undone,
the run is stored and its TrainingFinished ('stopped') or TrainingFailed event emitted;
then `run()` raises it again, so Ctrl+C still stops a script (`session.result` holds the
event). On the worker thread (`start()`) there is nobody to raise it to: the event is
how the run ended.
"""

from __future__ import annotations

import threading
import traceback
from pathlib import Path

import numpy as np

import engine
from app.compiler import CompiledNetwork, compile_project
from app.datasets import Dataset
from app.document import Project
from app.document.events import Events
from app.session.events import TrainingFailed, TrainingFinished
from app.session.hook_captures import HookCaptures
from app.session.metrics import Metrics
from app.session.progress import (
    TrainingState,
    clear_optimizer,
    restore_optimizer,
    rng_state,
    set_rng_state,
    store_optimizer,
)
from app.session.settings import (
    TrainingError,
    TrainingSettings,
    check_learning_rate,
    load_dataset,
    make_loss,
    make_optimizer,
)
from app.session.snapshot import ParameterSnapshot
from app.session.targets import INDEX_LOSSES, Targets
from app.session.trainer import RunControl, Trainer

READY, RUNNING, PAUSED, STOPPING = "ready", "running", "paused", "stopping"


class TrainingSession:
    """One project's network, data and optimizer, ready to train.

    `folder` is where relative data-set paths are read from (the project file's folder).
    Settings are read once, here; a changed setting needs a new session, except the
    learning rate (`set_learning_rate`, also while running).
    """

    def __init__(self, project: Project, *, folder: str | Path | None = None,
                 restart: bool = False, dataset: Dataset | None = None) -> None:  # fmt: skip
        self.project = project
        self.settings = TrainingSettings.from_project(project.training)
        saved = {} if restart else (project.training.get("state") or {})
        try:
            self.state = TrainingState.from_json(saved)
        except ValueError as exc:
            raise TrainingError(
                f"The saved training progress is damaged ({exc}); train from the start "
                "(restart) to replace it."
            ) from None
        self.state.use_batch_size(self.settings.batch_size)
        # `dataset`: the one the `dataset` setting names, already read (the window's Run
        # panel read it, on a worker thread if big): not read a second time, on this thread.
        self.dataset = dataset if dataset is not None else load_dataset(
            self.settings.dataset, Path(folder) if folder else None)
        try:
            self.train_set, self.val_set = self.dataset.split(
                self.settings.validation_fraction, self.settings.seed
            )
        except ValueError as exc:
            raise TrainingError(f"The data set can't be split: {exc}") from None
        engine.set_seed(self.settings.seed)  # weights new to this project start the same way
        self.compiled: CompiledNetwork = compile_project(project)
        if self.state.rng is None:
            self.state.rng = rng_state()
        self.network = self.compiled.network
        self.loss_fn = self._loss()
        self._check_fit()
        # Frozen Parameters are held too (requires_grad=False: the optimizer leaves them).
        self.optimizer = make_optimizer(self.settings, self.compiled.trainable_params())
        owner = self.compiled.parameter_owner
        if restart:
            clear_optimizer(project.param_values)
            project.hook_history.clear()
        elif self.state.optimizer and not restore_optimizer(
            self.optimizer, self.state.optimizer, owner, project.param_values
        ):
            self.state.optimizer = None  # another optimizer type: its state starts over
        self.events = Events()
        self.metrics = Metrics(self.settings.history_steps)
        try:
            self.metrics.load_json(saved.get("history"))
        except ValueError:
            self.metrics.clear()  # curves are nice to have; a damaged history starts afresh
        self.captures = HookCaptures(
            project.live_hooks(), self.compiled.cells.get, self.compiled.edge_hooks.set,
            history=self.settings.history_steps, saved=None if restart else project.hook_history,
        )  # fmt: skip
        self.snapshot = ParameterSnapshot(self.compiled.parameters().items())
        self._trainer = Trainer(
            self.network, self.loss_fn, self.optimizer, self.train_set, self.val_set,
            batch_size=self.settings.batch_size, seed=self.settings.seed, state=self.state,
            metrics=self.metrics, emit=self._emit, captures=self.captures,
            input_dtype=self.compiled.input_dtypes[0], snapshot=self.snapshot,
        )  # fmt: skip
        self._control = RunControl()
        self._thread: threading.Thread | None = None
        self._idle = threading.Event()  # set while no run is going on
        self._idle.set()
        self._status = READY
        self._lock = threading.Lock()
        self.result: TrainingFinished | TrainingFailed | None = None

    # ---- setup checks --------------------------------------------------------------

    def _loss(self) -> engine.nn.Cell:
        if self.settings.loss is not None:
            return make_loss(self.settings.loss)
        if self.compiled.loss_fn is None:
            raise TrainingError("The Output node has no loss: choose one to train the network.")
        return self.compiled.loss_fn

    def _check_fit(self) -> None:
        """Refuse, with the reason, a network that doesn't fit the data set."""
        compiled, data = self.compiled, self.dataset
        if len(compiled.input_names) != 1:
            raise TrainingError(
                f"Training feeds one data set into one Input node; this network has "
                f"{len(compiled.input_names)} ({', '.join(compiled.input_names)})."
            )
        wanted = tuple(compiled.input_shapes[0][1:]) if compiled.input_shapes[0] else None
        if wanted is not None and wanted != data.sample_shape:
            raise TrainingError(
                f"The Input node {compiled.input_names[0]} takes samples of shape {wanted}, but "
                f"the data set's samples have shape {data.sample_shape}."
            )
        try:
            targets = Targets(type(self.loss_fn).__name__, data.task)
        except ValueError as exc:
            raise TrainingError(str(exc)) from None
        self._check_output_width(targets)
        x, y = next(self.train_set.batches(2, shuffle=False))
        try:  # one small batch through network and loss, predicting: nothing changes
            inputs = engine.Tensor(x.astype(compiled.input_dtypes[0], copy=False))
            with engine.no_grad(), np.errstate(all="ignore"):
                out = self.network.set_train(False)(inputs)
                self.loss_fn(out, targets.for_loss(y, out.shape))
        except Exception as exc:
            raise TrainingError(
                f"The network doesn't fit the data set {data.name}: {exc}"
            ) from None

    def _check_output_width(self, targets: Targets) -> None:
        """The Output's width must match the classes (or targets) the data set has."""
        shape, data = self.compiled.output_shape, self.dataset
        if not shape or len(shape) != 2 or not isinstance(shape[-1], int):
            return  # not (batch, values), or not known: the trial batch below will tell
        width, wanted = shape[-1], data.output_size
        if targets.classification and targets.loss_name in INDEX_LOSSES:
            fits, what = width >= wanted, f"at least {wanted} values (one per class)"
        elif targets.classification:
            fits = width == wanted or (width == 1 and wanted == 2)
            what = f"{wanted} values (one per class)" + (" or 1" if wanted == 2 else "")
        else:
            fits, what = width == wanted, f"{wanted} value{'s' if wanted != 1 else ''}"
        if not fits:
            kind = (f"{data.num_classes} classes" if targets.classification
                    else f"{wanted} regression target{'s' if wanted != 1 else ''}")  # fmt: skip
            raise TrainingError(
                f"The network's output has shape {tuple(shape[1:])} per sample, but the data "
                f"set {data.name} has {kind}: the last layer needs {what}."
            )

    # ---- running -------------------------------------------------------------------

    @property
    def status(self) -> str:
        """'ready', 'running', 'paused' or 'stopping'."""
        return self._status

    @property
    def running(self) -> bool:
        return self._status != READY

    @property
    def learning_rate(self) -> float:
        return self._trainer.learning_rate

    @property
    def targets(self) -> Targets:
        """How the data set's labels meet the loss, and how outputs become classes."""
        return self._trainer.targets

    def start(self, epochs: int | None = None, steps: int | None = None) -> None:
        """Train on a worker thread; returns at once. See `run` for `epochs` and `steps`."""
        target = self._claim(epochs, steps)
        self._thread = threading.Thread(
            target=self._work_in_thread, args=(target, steps), name="cellwright-training",
            daemon=True,
        )
        self._thread.start()

    def run(self, epochs: int | None = None,
            steps: int | None = None) -> TrainingFinished | TrainingFailed:  # fmt: skip
        """Train in the calling thread until done; returns the event that ended the run.

        `epochs`: train that many epochs from here (a partly done epoch counts as one).
        Without it, an interrupted run is continued to its planned end, else the
        settings' number of epochs is trained. `steps` caps this run's steps.
        A KeyboardInterrupt or SystemExit raised meanwhile is raised again once the run
        is stored and its ending event emitted.
        """
        target = self._claim(epochs, steps)
        try:
            return self._work(target, steps)
        finally:
            self._idle.set()

    def _claim(self, epochs: int | None, steps: int | None) -> int:
        for value, what in ((epochs, "number of epochs"), (steps, "number of steps")):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):  # fmt: skip
                raise TrainingError(f"The {what} must be a whole number of 1 or more.")
        with self._lock:
            if self._status != READY:
                raise TrainingError("Training is already running.")
            self._status = RUNNING
            self._idle.clear()
            late = self._control.take_learning_rate()  # set as the last run ended
            if late is not None:
                self._trainer.set_learning_rate(late)
            self._control = RunControl()
        state = self.state
        if epochs is not None:
            return state.epoch + epochs
        if state.unfinished:
            return state.target_epoch
        return state.epoch + self.settings.epochs

    def _work(self, target: int, steps: int | None) -> TrainingFinished | TrainingFailed:
        try:
            set_rng_state(self.state.rng)  # checked when the state was read
            return self._trainer.run(target, self._control, steps, on_end=self._end_run)
        finally:
            with self._lock:
                self._status = READY

    def _emit(self, event: object) -> None:
        if isinstance(event, TrainingFinished | TrainingFailed):
            self.result = event  # what ended the run, also if storing it failed
        self.events.emit(event)

    def _work_in_thread(self, target: int, steps: int | None) -> None:
        before = self.result
        try:
            self._work(target, steps)
        except BaseException as exc:  # the trainer reports its own errors; this is a last resort
            if self.result is not before and not isinstance(exc, Exception):
                return  # sys.exit() or an interrupt from a hook: the run ended, stored
            state = self.state
            message = f"Training failed after step {state.step}: {type(exc).__name__}: {exc}."
            details = "".join(traceback.format_exception(exc))
            self.result = TrainingFailed(message, state.step, state.epoch + 1, exc, details)
            self.events.emit(self.result)
        finally:
            self._idle.set()

    def _end_run(self, event: TrainingFinished | TrainingFailed) -> None:
        """After the last step, before listeners hear how the run ended."""
        self.state.rng = rng_state()
        self.result = event
        self.store()
        with self._lock:
            self._status = READY

    def pause(self) -> None:
        """Pause before the next step (the current one finishes)."""
        with self._lock:
            if self._status == RUNNING:
                self._status = PAUSED
                self._control.pause()

    def resume(self) -> None:
        with self._lock:
            if self._status == PAUSED:
                self._status = RUNNING
                self._control.resume()

    def step(self) -> None:
        """Train exactly one more batch: while paused, the run stays paused after it; with no
        run going on, a run of one step starts on the worker thread (and ends after it)."""
        with self._lock:
            if self._status == PAUSED:
                self._control.step_once()
                return
        self.start(steps=1)

    def stop(self) -> None:
        """End the run after the current step (also when paused); progress is kept."""
        with self._lock:
            if self._status in (RUNNING, PAUSED):
                self._status = STOPPING
                self._control.stop()

    def wait(self, timeout: float | None = None) -> TrainingFinished | TrainingFailed | None:
        """Block until the run ends (or `timeout` passes); the ending event, or None if it runs.

        Safe to call again after Ctrl+C interrupted it (unlike `Thread.join`).
        """
        if not self._idle.wait(timeout):
            return None
        return self.result

    def set_learning_rate(self, value: float) -> None:
        """Use this learning rate from the next step on (also while running)."""
        value = check_learning_rate(value)
        self._control.set_learning_rate(value)
        if self._status == READY:
            self._trainer.set_learning_rate(value)

    # ---- results -------------------------------------------------------------------

    def evaluate(self, data=None) -> tuple[float | None, float | None]:
        """(loss, accuracy) over `data` (default: the validation set) in predict mode."""
        self._require_idle("evaluate")
        return self._trainer.evaluate(self.val_set if data is None else data)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The network's output for samples `x` in predict mode."""
        self._require_idle("predict")
        x = np.asarray(x, dtype=self.compiled.input_dtypes[0])
        was_training = self.network.training
        self.network.set_train(False)
        try:
            with engine.no_grad():
                return self.network(engine.Tensor(x)).asnumpy().copy()
        finally:
            self.network.set_train(was_training)

    def _require_idle(self, what: str) -> None:
        if self._status not in (READY, PAUSED):
            raise TrainingError(f"Can't {what} while training runs; pause or stop it first.")

    def store(self, project: Project | None = None) -> None:
        """Write weights, optimizer state, progress and histories into `project` (default: ours).

        Runs on its own at the end of every run; call it yourself only while paused or idle.
        """
        project = self.project if project is None else project
        if self._status == PAUSED:  # the run's generator, as the next step will find it
            self.state.rng = rng_state()
        self.compiled.store_values(project)
        owner = self.compiled.parameter_owner
        self.state.optimizer = store_optimizer(self.optimizer, owner, project.param_values)
        state = self.state.to_json()
        state["history"] = self.metrics.to_json()
        project.training["state"] = state
        # Each project hook's capture history; a hook this session does not capture
        # (yet) keeps what the project had. The health overlay's hidden hooks are no
        # project hooks and are not saved.
        histories = {hook_id: saved for hook_id, saved in project.hook_history.items()
                     if project.hook(hook_id) is not None}  # fmt: skip
        for hook_id, capture in list(self.captures.captures.items()):
            if project.hook(hook_id) is not None:
                capture.summarise()  # what was copied and not yet looked at goes in too
                histories[hook_id] = capture.saved_state()
        project.hook_history = histories
        project.training["learning_rate"] = self._trainer.learning_rate

