"""`TrainingSession`: trains a project's network on a worker thread, and keeps its progress.

    session = TrainingSession(project)          # compiles; TrainingError / CompileError
    session.events.subscribe(on_event)          # TrainingStarted, Progress, EpochEnded, …
    session.start()                             # worker thread; or session.run() right here
    session.pause(); session.resume(); session.set_learning_rate(0.001); session.stop()
    session.wait()                              # the TrainingFinished / TrainingFailed event

When a run ends — finished, stopped, or failed — the training thread hands the weights,
the optimizer state, the shuffle and RNG position, the metric history and each hook's
capture history over as a `RunResult` (app.session.handover), before it tells its
listeners. It never writes the project itself: the thread that made the session (the
project's owner) applies the results — `wait()` and `apply_results()` do, and `run()`
called on that thread does at once. Saving the project then keeps all of it, and a new
session on the reopened project continues where this one ended. For a save while a run
goes on, `fetch(timeout)` asks the training thread for a result at its next step
boundary (or in its pause) and applies it, or says why it could not.

Each run — `start()` or `run()` to its end, pauses included; not a lone Step — is
recorded in the project's run history when its final result is applied (see
app.session.run_record; `origin` says who trained: "window", "cli" or "sweep");
`last_record` is the newest record made.

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
from app.compiler.dtypes import token_problem
from app.datasets import Dataset
from app.datasets.edits import SETTING as DATA_EDITS
from app.datasets.edits import DataEditError, DataEdits
from app.document import Project
from app.document.events import Events
from app.document.runs import ORIGINS, RunRecord
from app.session.events import Progress, TrainingFailed, TrainingFinished
from app.session.handover import Handover, RunResult, collect
from app.session.hook_captures import HookCaptures
from app.session.metrics import Metrics
from app.session.progress import (
    TrainingState,
    clear_optimizer,
    restore_optimizer,
    rng_state,
    set_rng_state,
)
from app.session.run_control import RunControl
from app.session.run_record import RunEnd, RunRecorder
from app.session.settings import (
    TrainingError,
    TrainingSettings,
    check_learning_rate,
    load_dataset,
    make_loss,
    make_optimizer,
)
from app.session.snapshot import ParameterSnapshot
from app.session.targets import Targets, output_width_problem
from app.session.trainer import Trainer
from engine import _random

READY, RUNNING, PAUSED, STOPPING = "ready", "running", "paused", "stopping"


class TrainingSession:
    """One project's network, data and optimizer, ready to train.

    `folder` is where relative data-set paths are read from (the project file's folder).
    `train_set` and `val_set` are the split with the project's data edits applied
    (app.datasets.edits); their `rows` name each sample's place in `dataset`.
    Settings are read once, here; a changed setting needs a new session, except the
    learning rate (`set_learning_rate`, also while running).
    """

    def __init__(self, project: Project, *, folder: str | Path | None = None,
                 restart: bool = False, dataset: Dataset | None = None,
                 origin: str = "window") -> None:  # fmt: skip
        self.project = project
        if origin not in ORIGINS:
            raise TrainingError(f"A run's origin is one of {', '.join(ORIGINS)}, "
                                f"not {origin!r}.")  # fmt: skip
        self._owner = threading.get_ident()  # the thread that may write the project
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
        # Data edits after the split: every other sample keeps its side.
        try:
            edited = DataEdits.from_setting(project.training.get(DATA_EDITS)).apply(
                self.dataset, self.train_set, self.val_set)
        except DataEditError as exc:
            raise TrainingError(str(exc)) from None
        self.train_set, self.val_set = edited.train, edited.val
        self.edits_note = edited.note  # edits naming samples that are gone; "" if none
        # Weights new to this project start the same way for the same seed, from a generator
        # of the session's own: the engine's (another session's, a run going on) is not moved.
        with _random.fork_rng(self.settings.seed):
            self.compiled: CompiledNetwork = compile_project(project)
            if self.state.rng is None:
                self.state.rng = rng_state()
        self._generator = np.random.default_rng()  # the runs draw from it; set from state.rng
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
        self._handover = Handover()
        self._trainer = Trainer(
            self.network, self.loss_fn, self.optimizer, self.train_set, self.val_set,
            batch_size=self.settings.batch_size, seed=self.settings.seed, state=self.state,
            metrics=self.metrics, emit=self._emit, captures=self.captures,
            input_dtype=self.compiled.input_dtypes[0], snapshot=self.snapshot,
            handover=self._handover, hand_over=self._hand_over_from_run,
            schedule=self.settings.schedule(), grad_clip=self.settings.clipping(),
            augmentation=self.settings.augmentation,
        )  # fmt: skip
        self._control = RunControl()
        self._thread: threading.Thread | None = None
        self._idle = threading.Event()  # set while no run is going on
        self._idle.set()
        self._status = READY
        self._lock = threading.Lock()
        self.result: TrainingFinished | TrainingFailed | None = None
        self._recorder = RunRecorder(origin)  # each run into project.runs (run_record)
        self.last_record: RunRecord | None = None  # the newest run recorded
        self._ending: RunEnd | None = None  # how the run ended, while it is handed over

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
        problem = output_width_problem(compiled.output_shape, data, targets)
        if problem:
            raise TrainingError(problem)
        problem = token_problem(self.project.graph, data.x, data.name)
        if problem:
            raise TrainingError(problem)
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

    def start(self, epochs: int | None = None, steps: int | None = None, *,
              record: bool = True) -> None:  # fmt: skip
        """Train on a worker thread; returns at once. See `run` for the arguments."""
        target = self._claim(epochs, steps, record)
        self._thread = threading.Thread(
            target=self._work_in_thread, args=(target, steps), name="cellwright-training",
            daemon=True,
        )
        self._thread.start()

    def run(self, epochs: int | None = None, steps: int | None = None, *,
            record: bool = True) -> TrainingFinished | TrainingFailed:  # fmt: skip
        """Train in the calling thread until done; returns the event that ended the run.

        `epochs`: train that many epochs from here (a partly done epoch counts as one).
        Without it, an interrupted run is continued to its planned end, else the
        settings' number of epochs is trained. `steps` caps this run's steps. The run is
        recorded in the project's run history (`record=False`: not; see run_record).
        A KeyboardInterrupt or SystemExit raised meanwhile is raised again once the run
        is stored and its ending event emitted.
        """
        target = self._claim(epochs, steps, record)
        try:
            return self._work(target, steps)
        finally:
            self._idle.set()

    def _claim(self, epochs: int | None, steps: int | None, record: bool = True) -> int:
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
        self._recorder.begin(self.project, state.step, record)
        if epochs is not None:
            return state.epoch + epochs
        if state.unfinished:
            return state.target_epoch
        return state.epoch + self.settings.epochs

    def _work(self, target: int, steps: int | None) -> TrainingFinished | TrainingFailed:
        try:
            set_rng_state(self.state.rng, self._generator.bit_generator)  # checked when read
            with _random.using_generator(self._generator):  # lent to this thread alone
                return self._trainer.run(target, self._control, steps, on_end=self._end_run)
        finally:
            with self._lock:
                self._status = READY

    def _emit(self, event: object) -> None:
        if not isinstance(event, Progress):  # the one check a step pays, as ever
            if isinstance(event, TrainingFinished | TrainingFailed):
                self.result = event  # what ended the run, also if storing it failed
            self._recorder.on_event(event)  # a pause's time is left out of the run's
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
            self._handover.notify()  # an owner waiting in `fetch` looks again

    def _end_run(self, event: TrainingFinished | TrainingFailed) -> None:
        """After the last step, before listeners hear how the run ended."""
        self.result = event
        self._ending = self._recorder.finish(event, self.state.step, self.metrics)
        try:
            self._hand_over_from_run()  # with how the run ended, to be recorded
        finally:
            self._ending = None
        with self._lock:
            self._status = READY

    def _hand_over_from_run(self) -> None:
        """On the thread that trains, between two steps: hand where the run stands over
        (at a recorded run's end, with how it ended: `_ending`)."""
        self.state.rng = rng_state()  # the run's generator, as the next step will find it
        result = self._collect(self._ending)
        if self._on_owner_thread():  # `run()` on the project's own thread
            self.apply_results()
            self._applied(result.apply(self.project))
        else:
            self._handover.put(result)

    def _collect(self, run: RunEnd | None = None) -> RunResult:
        return collect(self.compiled, self.optimizer, self.state, self.metrics, self.captures,
                       run)  # fmt: skip

    def _applied(self, record: RunRecord | None) -> None:
        if record is not None:
            self.last_record = record

    def _on_owner_thread(self) -> bool:
        return threading.get_ident() == self._owner

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
        self.start(steps=1, record=False)

    def stop(self) -> None:
        """End the run after the current step (also when paused); progress is kept."""
        with self._lock:
            if self._status in (RUNNING, PAUSED):
                self._status = STOPPING
                self._control.stop()

    def wait(self, timeout: float | None = None) -> TrainingFinished | TrainingFailed | None:
        """Block until the run ends (or `timeout` passes); the ending event, or None if it runs.

        Safe to call again after Ctrl+C interrupted it (unlike `Thread.join`). On the
        project's own thread, what the run handed over is applied to the project.
        """
        if not self._idle.wait(timeout):
            return None
        if self._on_owner_thread():
            self.apply_results()
        return self.result

    def set_learning_rate(self, value: float) -> None:
        """Use this learning rate from the next step on (also while running); called on the
        project's own thread, the project keeps it too."""
        value = check_learning_rate(value)
        self._control.set_learning_rate(value)
        if self._status == READY:
            self._trainer.set_learning_rate(value)
        if self._on_owner_thread():
            self.project.training["learning_rate"] = value

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

    # ---- handing results over -----------------------------------------------------

    def apply_results(self, project: Project | None = None) -> RunResult | None:
        """Apply what the training thread handed over (oldest first) to `project` (default:
        ours); the newest result, or None if none waited. On the project's own thread."""
        self._require_owner("apply the training results")
        project = self.project if project is None else project
        results = self._handover.take()
        for result in results:
            self._applied(result.apply(project))
        return results[-1] if results else None

    def fetch(self, timeout: float = 30.0) -> str | None:
        """Bring the project up to where training stands now, e.g. for a save; None when it
        is, else why not (the project then keeps what it had: never older weights passed
        off as current).

        With no run going on, what the last run handed over is applied. During a run, the
        training thread is asked for a result at its next step boundary (or in its pause,
        which goes on) and the caller waits up to `timeout` seconds for it. On the
        project's own thread.
        """
        self._require_owner("fetch the training results")
        self.apply_results()
        if self._status == READY and self._idle.wait(timeout):
            self.apply_results()  # the end of a run that was just handing over
            return None
        if self._status != READY:
            self._handover.request()
            self._control.wake()  # a pause serves it while it waits
            self._handover.wait(self._idle.is_set, timeout)
        if self.apply_results() is not None:
            return None
        self._handover.withdraw()
        if self._idle.is_set():  # it ended with nothing handed over (it failed to)
            return f"The training run ended without handing its state over: {self._ending()}"
        return (f"The training run did not finish its current step within {timeout:g} s, "
                "so where it stands could not be taken.")

    def _ending(self) -> str:
        result = self.result
        return getattr(result, "message", "") or "no reason was given."

    def store(self, project: Project | None = None) -> None:
        """Write weights, optimizer state, progress and histories into `project` (default:
        ours) from the session as it is; with no run going on, on the project's own thread.
        A run hands its own over when it ends (see `apply_results`, `fetch`).
        """
        self._require_owner("store the training results")
        if self._status != READY or not self._idle.is_set():
            raise TrainingError("Can't store while a run is going on; use fetch() to bring "
                                "the project up to where it stands.")  # fmt: skip
        self.apply_results(project)
        self._collect().apply(self.project if project is None else project)

    def _require_owner(self, what: str) -> None:
        if not self._on_owner_thread():
            raise RuntimeError(f"Only the thread that made the session may {what}: the "
                               "project belongs to it.")  # fmt: skip

