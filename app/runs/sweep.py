"""Running a sweep: one training run after another on copies of the network, each recorded in
the project's run history, with a queue whose state the project keeps (`project.runs.sweep`),
so a save and reopen finds an interrupted sweep and can resume it.

    sweep = Sweep.start(project, spec, folder=...)    # writes project.runs.sweep
    sweep = Sweep.resume(project, folder=...)         # the saved queue, from its next run
    for record in sweep.run(should_stop=...):         # headless: on this thread
        ...                                           # each is in project.runs already
    # in the window: `SweepWorker(sweep)` trains on a worker thread; the GUI's timer calls
    # `worker.take()` for finished records and adds them (`sweep.record(r)`) itself.

The queue state (JSON): {"id", "spec": SweepSpec.to_json(), "trials": [values...],
"done": [run ids], "status": "running" | "stopped" | "finished", "metric"}.
Each run trains a fresh copy (`copy_project(project, fresh=True)`) with the trial's
values applied, for the spec's epochs (else the project's), and is recorded with
origin "sweep" and `sweep={"id", "index", "values"}`.
"""

from __future__ import annotations
