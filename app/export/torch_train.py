"""The PyTorch script's command line: predict, or `--train DATA` in one process or under torchrun.

`python net.py --train DATA [--steps N] [--batch-size B] [--out W.npz] [--seed S]` trains
the exported network with the project's optimizer, schedule, loss, clipping and (global)
batch size on a CSV or NPZ file read as the project reads it (its columns, its arrays).
A project whose data set is built in (spirals, digits, ...) gets its samples written
beside the script as `NAME.data.npz` (arrays x and y), so `--train` has a file to read.
Started by torchrun (WORLD_SIZE > 1) the script joins a gloo process group, wraps the
network in DistributedDataParallel and gives each rank its share of every global batch;
its BatchNorm layers then normalise over the whole global batch, so the trained weights
equal those of one process taking the same batches. The batch order is the app's: epoch
e visits the samples in `default_rng([seed, e]).permutation(n)`, in full batches only.

The project's `augmentation` setting goes into the script with the app's own code for it
(app.datasets.augment.KERNEL, written as is): batches c K to c K + K - 1 of epoch e
(K = augment_chunk(values in a batch)) are augmented together with the generator of (the
setting's seed, e, c), so they are numerically the batches the app makes of the same
samples at the same epoch and indices (the app trains on its training split, so its
batches hold other samples than a whole data file's). Under torchrun every rank augments
the whole global batches and takes its share, as one process would. `--no-augment`
trains on the samples as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from app.datasets import DatasetError, augment, edits, make_builtin
from app.datasets.loading import builtin_of, file_kind
from app.document import Project

# The reading options of a data setting that the script's reader takes, per file kind.
_READ_OPTIONS = {"csv": ("label_column", "feature_columns", "task", "delimiter", "has_header",
                         "missing"),
                 "npz": ("x_key", "y_key", "task", "missing")}  # fmt: skip
_INDEX_LOSSES = frozenset({"CrossEntropyLoss", "SoftmaxCrossEntropyWithLogits", "NLLLoss"})
DATA_FILE_BYTES = 64 << 20  # a built-in set larger than this is not written beside the script
# Top-level names of the training code, which a graph's class must not take.
NAMES = frozenset({"csv", "gc", "os", "dist", "DistributedDataParallel", "SEED", "BATCH_SIZE",
                   "DATA_OPTIONS", "TARGETS", "CANT_TRAIN", "TrainingRefused", "read_data",
                   "RELABEL", "EXCLUDE", "apply_edits",
                   "make_targets", "SyncedBatchNorm", "sync_batch_norms", "train",
                   "TRAINED", "AUGMENTATION", "AUGMENT_SEED", "AUGMENT_OPS", "IMAGE_OPS",
                   "MIN_SIDE", "CHUNK_VALUES", "augment_rng", "augment_chunk",
                   "augment_refusal", "augment_batch", "_normal", "_GRIDS",
                   "_resample"})  # fmt: skip


def built_in_data(project: Project) -> tuple[dict[str, np.ndarray] | None, str | None]:
    """(arrays x and y of the project's built-in data set, None) to write beside the script,
    or (None, why not) when it is built in but can't be written; (None, None) otherwise."""
    spec = project.training.get("dataset")
    builtin = builtin_of(spec) if spec is not None else None
    if builtin is None:
        return None, None
    try:
        data = make_builtin(builtin[0], **builtin[1])
    except (DatasetError, TypeError) as exc:
        return None, f"the training data (built-in set {builtin[0]!r} can't be made: {exc})"
    if data.x.nbytes + data.y.nbytes > DATA_FILE_BYTES:
        size = (data.x.nbytes + data.y.nbytes) >> 20
        return None, (f"the training data ({builtin[0]}: {size} MB; --train takes an .npz "
                      "with arrays x and y that you write)")  # fmt: skip
    return {"x": data.x, "y": data.y}, None


def train_code(project: Project, *, inputs: int, outputs: int, loss: str | None,
               trains: bool, data_name: str | None) -> tuple[str, str, list[str]]:  # fmt: skip
    """(the training constants for the script, the data file its docstring names, what is
    left out). `loss` is the engine loss's class name when the script has make_loss,
    `trains` whether it has make_optimizer, `data_name` a data file written beside it."""
    training = project.training
    spec = training.get("dataset")
    kind = file_kind(spec)
    left_out: list[str] = []
    options: dict[str, Any] = {}
    usage = data_name or "DATA.csv"
    if kind in _READ_OPTIONS and not (kind == "csv" and "windows" in spec):
        options[kind] = {k: _plain(spec[k]) for k in _READ_OPTIONS[kind] if k in spec}
        usage = Path(str(spec[kind])).name
    elif kind is not None:
        left_out.append(f"--train's reading of the {kind} data set (it reads a .csv, or an "
                        ".npz with arrays x and y)")  # fmt: skip
        usage = "DATA.npz"
    refusal = None
    if inputs != 1 or outputs != 1:
        refusal = (f"--train feeds one data set into one input and trains one output; this "
                   f"network has {inputs} input(s) and {outputs} output(s).")  # fmt: skip
    elif loss is None:
        refusal = "--train needs the project's loss, which was not exported (see make_loss)."
    elif not trains:
        refusal = "--train needs the project's optimizer, which was not exported."
    targets = ("index" if loss in _INDEX_LOSSES else
               "distribution" if loss == "KLDivLoss" else "values")  # fmt: skip
    try:
        relabel, exclude = edits.plain_edits(training.get(edits.SETTING))
    except edits.DataEditError as exc:
        relabel, exclude = {}, []
        left_out.append(f"the data edits ({exc})")
    constants = CONSTANTS.format(seed=_whole(training.get("seed"), 0),
                                 batch_size=_whole(training.get("batch_size"), 32),
                                 options=repr(options), targets=repr(targets),
                                 refusal=repr(refusal), relabel=repr(relabel),
                                 exclude=repr(exclude))  # fmt: skip
    return constants + _augmentation_code(training.get("augmentation"), left_out), usage, \
        left_out


def _augmentation_code(setting: Any, left_out: list[str]) -> str:
    """The script's AUGMENTATION (None, or the amounts in use) and AUGMENT_SEED, followed by
    the app's augmentation code when there is something to augment."""
    try:
        spec = augment.check_augmentation(setting)
    except augment.AugmentationRefused as exc:
        left_out.append(f"the augmentation (the project's setting is refused: {exc})")
        spec = None
    if not augment.is_active(spec):
        return "AUGMENTATION = None  # the project trains on its samples as they are\n"
    amounts = {op: spec[op] for op in augment.AUGMENT_OPS if spec[op]}
    return AUGMENTATION.format(amounts=repr(amounts), seed=spec["seed"],
                               text=augment.describe(spec), kernel=augment.KERNEL)


def _whole(value: Any, default: int) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value if ok else default


def _plain(value: Any) -> Any:
    """A setting's value as plain Python literals (lists for tuples)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


CONSTANTS = '''\
# --train: the project's seed and batch size (global: shared by torchrun's processes), how
# it reads its data file (a CSV's columns, an NPZ's arrays), and how its loss takes labels.
SEED = {seed}
BATCH_SIZE = {batch_size}
DATA_OPTIONS = {options}
TARGETS = {targets}
CANT_TRAIN = {refusal}
# The project's data edits, by row of the data file as read: new class labels, and rows
# left out (the file itself is never changed).
RELABEL = {relabel}
EXCLUDE = {exclude}
'''

AUGMENTATION = '''\
# --train augments every batch as the app does (--no-augment: not at all):
# {text}. Batches c K .. c K + K - 1 of epoch e (K = augment_chunk(values in a batch))
# are augmented together, drawing from augment_rng(AUGMENT_SEED, e, c).
AUGMENTATION = {amounts}
AUGMENT_SEED = {seed}


{kernel}'''

# The script's command line and training loop, after load_network (TRAINED, the default
# --out, is set beside WEIGHTS).
MAIN = '''\
class TrainingRefused(Exception):
    """--train can't start; the message says why."""


def read_data(path):
    """(samples, labels, task) of a .csv or .npz file, read as the project reads its data:
    class labels that are all whole numbers are the class indices, other labels are class
    names numbered in sorted order."""
    path = Path(path)
    kind = path.suffix.lower().lstrip(".")
    if kind not in ("csv", "npz"):
        raise TrainingRefused(f"--train reads a .csv or an .npz file, not {path.name}.")
    if not path.is_file():
        raise TrainingRefused(f"There is no data file {path}.")
    try:
        x, y, task = (_read_npz if kind == "npz" else _read_csv)(path, **DATA_OPTIONS.get(kind, {}))
    except TrainingRefused:
        raise
    except Exception as exc:  # a damaged file: say what the reader found
        raise TrainingRefused(f"{path.name} can't be read: {exc}") from None
    if len(x) != len(y) or not len(x):
        raise TrainingRefused(f"{path.name} has {len(x)} samples and {len(y)} labels.")
    return (x.reshape(len(x), 1) if x.ndim == 1 else x), y, task


def apply_edits(x, y):
    """The rows read with the project's data edits applied (RELABEL, EXCLUDE); edits of rows
    the file doesn't have are named on stderr and left out."""
    gone = sorted(r for r in {*RELABEL, *EXCLUDE} if r >= len(x))
    if gone:
        print(f"{len(gone)} data edit(s) name rows the file doesn't have ({gone[:5]}); "
              "they were not applied.")
    y = y.copy()
    for row, label in RELABEL.items():
        if row < len(y):
            y[row] = label
    keep = np.ones(len(x), dtype=bool)
    keep[[r for r in EXCLUDE if r < len(x)]] = False
    return x[keep], y[keep]


def _gaps(path, bad, missing):
    """Rows to keep, given the rows with an empty, NaN or infinite value (`bad`): refused
    unless the project's setting `missing` is "drop", as the app reads the file."""
    count = int(np.count_nonzero(bad))
    if count and missing != "drop":
        first = int(np.flatnonzero(bad)[0]) + 1
        raise TrainingRefused(f"{path.name}: {count} rows have an empty, NaN or infinite value "
                              f"(the first is data row {first}); the project's data set setting "
                              "'missing': 'drop' leaves them out.")
    if count == len(bad):
        raise TrainingRefused(f"{path.name}: every row has an empty, NaN or infinite value.")
    return ~bad


def _read_npz(path, x_key="x", y_key="y", task=None, missing="refuse"):
    with np.load(path, allow_pickle=False) as arrays:
        for key in (x_key, y_key):
            if key not in arrays.files:
                raise TrainingRefused(f"{path.name} has no array {key!r}; it holds "
                                      f"{', '.join(arrays.files) or 'none'}.")
        x, y = arrays[x_key].astype(np.float32), arrays[y_key]
    bad = ~np.isfinite(x.reshape(len(x), -1)).all(axis=1)
    if y.dtype.kind == "f":
        bad |= ~np.isfinite(y.reshape(len(y), -1)).all(axis=1)
    keep = _gaps(path, bad, missing)
    x, y = x[keep], y[keep]
    task = task or ("regression" if y.dtype.kind == "f" else "classification")
    if task == "regression":
        return x, y.reshape(len(y), -1).astype(np.float32), task
    return x, _class_indices(y[:, 0] if y.ndim == 2 and y.shape[1] == 1 else y), task


def _read_csv(path, label_column=-1, feature_columns=None, task="classification",
              delimiter=",", has_header=True, missing="refuse"):
    with open(path, newline="", encoding="utf-8-sig") as file:
        rows = [row for row in csv.reader(file, delimiter=delimiter)
                if any(cell.strip() for cell in row)]
    if len(rows) <= has_header:
        raise TrainingRefused(f"{path.name} has no data rows.")
    names = [f"column {i + 1}" for i in range(len(rows[0]))]
    if has_header:
        names = [cell.strip() or name for cell, name in zip(rows.pop(0), names)]
    bad = next((i for i, row in enumerate(rows) if len(row) != len(names)), None)
    if bad is not None:
        raise TrainingRefused(f"{path.name}: data row {bad + 1} has {len(rows[bad])} cells, "
                              f"not {len(names)}.")

    def column(spec):
        if isinstance(spec, str) and spec not in names:
            raise TrainingRefused(f"{path.name} has no column {spec!r}; it has "
                                  f"{', '.join(names)}.")
        if isinstance(spec, int) and not -len(names) <= spec < len(names):
            raise TrainingRefused(f"{path.name} has no column {spec}: it has {len(names)}.")
        return names.index(spec) if isinstance(spec, str) else spec % len(names)

    labels = [column(c) for c in (label_column if isinstance(label_column, list)
                                  else [label_column])]
    features = ([column(c) for c in feature_columns] if feature_columns is not None
                else [i for i in range(len(names)) if i not in labels])
    gap = {"", "nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}
    bad = np.array([any(row[i].strip().lower() in gap for i in (*features, *labels))
                    for row in rows])  # fmt: skip
    rows = [row for row, keep in zip(rows, _gaps(path, bad, missing)) if keep]
    x = np.array([[float(row[i]) for i in features] for row in rows], dtype=np.float32)
    if task == "regression":
        return x, np.array([[float(row[i]) for i in labels] for row in rows], np.float32), task
    texts = [row[labels[0]].strip() for row in rows]
    try:
        values = np.array([float(text) for text in texts])
    except ValueError:  # class names
        values = np.array(texts)
    return x, _class_indices(values), task


def _class_indices(labels):
    if labels.dtype.kind in "US":  # names: numbered in sorted order
        return np.unique(labels, return_inverse=True)[1].reshape(-1).astype(np.int64)
    values = labels.astype(np.float64)
    if not np.all((values >= 0) & (values == np.floor(values))):
        raise TrainingRefused("Class labels must be whole numbers 0, 1, 2, ... or class names.")
    return values.astype(np.int64)


def make_targets(y, out):
    """The labels `y` as the loss takes them against the output `out`, as the app gives
    them: class indices, or one-hot rows (one output column: 0 or 1), or the targets."""
    if y.is_floating_point():  # a regression's targets
        return y.reshape(out.shape) if y.numel() == out.numel() else y
    if TARGETS == "index":
        return y
    if TARGETS == "values" and (out.dim() == 1 or out.shape[-1] == 1):
        return y.to(out.dtype).reshape(out.shape)
    return F.one_hot(y, out.shape[-1]).to(out.dtype)


class SyncedBatchNorm:
    """A BatchNorm that, while torchrun's ranks train together, normalises over the whole
    global batch (torch's own SyncBatchNorm needs GPUs): each rank's sums go through an
    all_reduce whose backward all-reduces their gradients, so the statistics, the running
    averages and the gradients are those of one process taking the whole batch."""

    def forward(self, x):
        if not (self.training and dist.is_available() and dist.is_initialized()):
            return super().forward(x)
        from torch.distributed.nn.functional import all_reduce

        dims, shape = [0, *range(2, x.dim())], [1, -1] + [1] * (x.dim() - 2)
        count = x.numel() // x.shape[1] * dist.get_world_size()  # every rank's share is equal
        mean = all_reduce(x.sum(dims)) / count
        centred = x - mean.reshape(shape)
        var = all_reduce((centred * centred).sum(dims)) / count
        if self.track_running_stats:
            with torch.no_grad():
                self.num_batches_tracked += 1
                m = self.momentum if self.momentum is not None else 1 / float(
                    self.num_batches_tracked)
                self.running_mean.mul_(1 - m).add_(m * mean)
                self.running_var.mul_(1 - m).add_(m * var * count / max(count - 1, 1))
        y = centred * torch.rsqrt(var + self.eps).reshape(shape)
        return y * self.weight.reshape(shape) + self.bias.reshape(shape) if self.affine else y


def sync_batch_norms(net):
    """`net` with each BatchNorm a SyncedBatchNorm (same Parameters, buffers and names)."""
    for module in net.modules():
        kind = type(module)
        if isinstance(module, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)) and \\
                not isinstance(module, SyncedBatchNorm):
            module.__class__ = type(f"Synced{kind.__name__}", (SyncedBatchNorm, kind), {})
    return net


def train(data, steps=None, batch_size=BATCH_SIZE, out=TRAINED, seed=SEED, weights=WEIGHTS,
          augment=True):
    """Train on the file `data` for `steps` global batches (default: EPOCHS epochs) and
    write the weights to `out`; under torchrun each rank takes its share of every batch.
    With `augment` each batch is augmented as the project's setting says (AUGMENTATION)."""
    world, rank = int(os.environ.get("WORLD_SIZE", "1")), int(os.environ.get("RANK", "0"))
    if CANT_TRAIN:
        raise TrainingRefused(CANT_TRAIN)
    if batch_size < 1:
        raise TrainingRefused(f"The batch size must be 1 or more, not {batch_size}.")
    if batch_size % world:
        raise TrainingRefused(f"The batch size {batch_size} can't be shared by {world} "
                              f"processes (WORLD_SIZE): give a multiple of {world}.")
    if steps is not None and steps < 1:
        raise TrainingRefused(f"--steps must be 1 or more, not {steps}.")
    if seed < 0:
        raise TrainingRefused(f"--seed must be 0 or more, not {seed}.")
    if not str(out).endswith(".npz"):
        raise TrainingRefused(f"The trained weights are written to an .npz file, not {out}.")
    x, y, task = read_data(data)
    x, y = apply_edits(x, y)
    (name, shape), dtype = next(iter(INPUT_SHAPES.items())), next(iter(INPUT_DTYPES.values()))
    if any(isinstance(s, int) and s != t for s, t in zip(shape, x.shape[1:])) \\
            or len(shape) != x.ndim - 1:
        raise TrainingRefused(f"The input {name} takes samples of shape {shape}, but "
                              f"{Path(data).name}'s have shape {x.shape[1:]}.")
    if task == "regression" and TARGETS != "values":
        raise TrainingRefused(f"The loss needs class labels; {Path(data).name} holds numbers "
                              "to regress (give its task as classification).")
    if batch_size > len(x):
        raise TrainingRefused(f"The batch size {batch_size} is more than the {len(x)} "
                              f"samples of {Path(data).name}.")
    augmentation = AUGMENTATION if augment else None
    why = augmentation and augment_refusal(x.shape[1:], augmentation)
    if why:
        raise TrainingRefused(f"The project's augmentation can't take {Path(data).name}: "
                              f"{why} (--no-augment trains without it.)")
    steps = EPOCHS * (len(x) // batch_size) if steps is None else steps
    if world > 1:
        dist.init_process_group("gloo")
    try:
        net = _fit(x.astype(dtype), y, steps, batch_size, seed, weights, world, rank,
                   augmentation)
        gc.collect()  # the DDP wrapper's reference cycles go before the group does
        if rank == 0:
            np.savez(out, **{k: v.detach().numpy() for k, v in net.state_dict().items()})
            print(f"wrote {out}", flush=True)
        if world > 1:
            dist.barrier()  # the ranks leave the group together, not one while another works
    finally:
        if world > 1:
            dist.destroy_process_group()


def _fit(x, y, steps, batch_size, seed, weights, world, rank, augmentation=None):
    """The network trained `steps` steps on this rank's share of each global batch (the
    DistributedDataParallel wrapper is gone when it returns, before the group is); with
    `augmentation` every rank augments the whole global batch and takes its share."""
    torch.manual_seed(seed + rank)  # Dropout: each rank draws its own masks
    net = load_network(weights).train()
    model = DistributedDataParallel(sync_batch_norms(net)) if world > 1 else net
    optimizer, loss_fn = make_optimizer(net), make_loss()
    per_epoch, share = len(x) // batch_size, batch_size // world
    scheduler = make_scheduler(optimizer, per_epoch)
    samples, labels = torch.from_numpy(x), torch.from_numpy(y)
    per_chunk = augmentation and augment_chunk(batch_size * x[0].size)
    every = max(steps // 10, 1)
    for step in range(steps):
        epoch, i = divmod(step, per_epoch)
        if i == 0:  # the app's order: a permutation per (seed, epoch), full batches only
            order = np.random.default_rng([seed, epoch]).permutation(len(x))
        mine = torch.from_numpy(order[i * batch_size + rank * share:][:share])
        if augmentation:  # batches c K to c K + K - 1 of an epoch together, as the app
            chunk, j = divmod(i, per_chunk)
            if j == 0:
                ahead = order[i * batch_size:min(i + per_chunk, per_epoch) * batch_size]
                augmented = augment_batch(x[ahead], augmentation,
                                          augment_rng(AUGMENT_SEED, epoch, chunk))
            batch = augmented[j * batch_size:][:batch_size]
            output = model(torch.from_numpy(batch[rank * share:][:share]))
        else:
            output = model(samples[mine])
        loss = loss_fn(output, make_targets(labels[mine], output))
        loss = loss.mean() if loss.dim() else loss
        if getattr(loss_fn, "reduction", "mean") == "sum":
            loss = loss * world  # DDP averages the ranks' gradients: keep their sum
        optimizer.zero_grad()
        loss.backward()
        clip_gradients(net)
        optimizer.step()
        scheduler.step()
        if (step + 1) % every == 0 or step + 1 == steps:
            shown = loss.detach().clone()
            if world > 1:
                dist.all_reduce(shown)
            if rank == 0:
                print(f"step {step + 1}/{steps}  loss {float(shown) / world:.6g}", flush=True)
    return net


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Run the exported network on inputs, or train it on a data file (--train).")
    parser.add_argument("inputs", nargs="*",
                        help="one .npy file per input: " + ", ".join(INPUT_SHAPES))
    parser.add_argument("-o", "--output", help="save the outputs here (.npy, or .npz for several)")
    parser.add_argument("--weights", default=WEIGHTS, help="the weights to load (default: "
                        "%(default)s)")
    group = parser.add_argument_group("training (also under torchrun)")
    group.add_argument("--train", metavar="DATA", help="train on this .csv or .npz file")
    group.add_argument("--steps", type=int, help="global batches to take (default: EPOCHS epochs)")
    group.add_argument("--batch-size", type=int, default=BATCH_SIZE,
                       help="the global batch (default: %(default)s)")
    group.add_argument("--out", default=TRAINED, help="write the trained weights here "
                       "(default: %(default)s)")
    group.add_argument("--seed", type=int, default=SEED, help="the batch order's seed "
                       "(default: %(default)s)")
    if AUGMENTATION:
        group.add_argument("--no-augment", dest="augment", action="store_false",
                           help="train on the samples as they are, not augmented as the "
                           "project's setting says")
    args = parser.parse_args(argv)
    if args.train is not None:
        if args.inputs or args.output:
            parser.error("--train takes no input files and no -o: the weights go to --out")
        try:
            train(args.train, args.steps, args.batch_size, args.out, args.seed, args.weights,
                  getattr(args, "augment", False))
        except TrainingRefused as exc:
            parser.error(str(exc))
        return
    if args.inputs and len(args.inputs) != len(INPUT_SHAPES):
        parser.error(f"give {len(INPUT_SHAPES)} input file(s), one per input")
    if args.inputs:
        arrays = [np.load(path, allow_pickle=False) for path in args.inputs]
    else:
        rng = np.random.default_rng(0)
        arrays = [rng.standard_normal((4, *shape)) for shape in INPUT_SHAPES.values()]
'''
