"""How fast can a NumPy-only engine be at all, against PyTorch CPU? (issue 27's speed points)

For the workloads whose targets the engine misses, this times the least work any NumPy
implementation must do, with every allocation, Tensor, tape and Python dispatch removed,
and compares it with PyTorch doing the whole job:

- **conv**: a 3×3 'same' convolution of the residual CNN example, (64, 16, 8, 8) → 16
  channels. NumPy has no convolution, so it must run the three matrix products of one
  (forward, weight gradient, input gradient) through BLAS, whatever it does to lay out
  the data. Only those three GEMMs are timed, on ready-made columns; PyTorch is timed
  doing the convolution's forward and backward in full.
- **conv-copies**: the same convolution done whole, in the cheapest layout found (see
  `conv_numpy_with_copies`): what the GEMMs alone leave out is the moving of data.
- **layernorm**: LayerNorm over the last axis of (64, 128, 256). Forward and backward need
  at least 13 elementwise or reduction passes over the input in NumPy (no fused kernels):
  row mean, centre, row mean square, scale, gamma, beta; gradient sums for beta and gamma,
  g·gamma, two row dots, the combination and the scale. They are timed in cache-sized
  chunks on every core, with preallocated outputs; PyTorch is timed for the layer's
  forward and backward.

A ratio under the target means the target can't be reached by NumPy code on this
machine, however the engine is written.

    python benchmarks/numpy_floor.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def _best(fn, repeat: int, calls: int) -> float:
    """The best, over `repeat` runs, of the mean seconds per call of `calls` calls."""
    for _ in range(10):
        fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


# ----------------------------------------------------------------------------- conv


def conv_numpy_floor():
    rs = np.random.RandomState(0)
    n, c, h, w, o, k = 64, 16, 8, 8, 16, 3
    cols = rs.standard_normal((n * h * w, c * k * k)).astype(np.float32)
    weights = rs.standard_normal((c * k * k, o)).astype(np.float32)
    grad = rs.standard_normal((n * h * w, o)).astype(np.float32)
    out = np.empty((n * h * w, o), np.float32)
    dw = np.empty((c * k * k, o), np.float32)
    dcols = np.empty_like(cols)

    def step():
        np.matmul(cols, weights, out=out)
        np.matmul(cols.T, grad, out=dw)
        np.matmul(grad, weights.T, out=dcols)

    return step


def conv_numpy_with_copies():
    """The cheapest whole convolution found: padded channels-last rows, so each kernel tap
    is one contiguous row offset; per tap, one GEMM forward and two backward (no column
    copies), each added into place. Outputs on the padded grid's junk columns are kept."""
    rs = np.random.RandomState(0)
    n, c, h, w, o = 64, 16, 8, 8, 16
    hp, wp = h + 2, w + 2
    rows = n * hp * wp
    taps = [i * wp + j for i in range(3) for j in range(3)]
    flat = np.zeros((rows + 2 * wp + 2, c), np.float32)
    flat[:rows].reshape(n, hp, wp, c)[:, 1:-1, 1:-1] = rs.standard_normal((n, h, w, c))
    weights = rs.standard_normal((9, c, o)).astype(np.float32)
    grad = rs.standard_normal((rows, o)).astype(np.float32)
    result, tmp = np.empty((rows, o), np.float32), np.empty((rows, o), np.float32)
    dflat, dtmp = np.empty_like(flat), np.empty((rows, c), np.float32)
    dw = np.empty((9, c, o), np.float32)

    def step():
        out = result
        np.matmul(flat[:rows], weights[0], out=out)
        dflat.fill(0)
        for k, off in enumerate(taps):
            window = flat[off:off + rows]
            if k:
                np.matmul(window, weights[k], out=tmp)
                out += tmp
            np.matmul(window.T, grad, out=dw[k])
            np.matmul(grad, weights[k].T, out=dtmp)
            dflat[off:off + rows] += dtmp

    return step


def conv_torch():
    import torch

    x = torch.randn(64, 16, 8, 8, requires_grad=True)
    weight = torch.randn(16, 16, 3, 3, requires_grad=True)
    cot = torch.randn(64, 16, 8, 8)

    def step():
        x.grad = weight.grad = None
        torch.nn.functional.conv2d(x, weight, padding=1).backward(cot)

    return step


# ----------------------------------------------------------------------------- layernorm

SHAPE = (64 * 128, 256)
CHUNK_ROWS = 512  # 512 rows × 256 floats = 512 KiB per array: the chunk stays in L2


def layernorm_numpy_floor():
    from engine.ops._threads import run, workers

    rs = np.random.RandomState(0)
    x = rs.standard_normal(SHAPE).astype(np.float32)
    g = rs.standard_normal(SHAPE).astype(np.float32)
    gamma = rs.uniform(0.5, 1.5, SHAPE[1]).astype(np.float32)
    beta = rs.standard_normal(SHAPE[1]).astype(np.float32)
    out, dx = np.empty_like(x), np.empty_like(x)
    parts = workers()
    bounds = [SHAPE[0] * i // parts for i in range(parts + 1)]
    blocks = list(zip(bounds, bounds[1:], strict=False))
    scratch = [np.empty((CHUNK_ROWS, SHAPE[1]), np.float32) for _ in blocks]
    dgamma = np.zeros((parts, SHAPE[1]), np.float32)
    dbeta = np.zeros((parts, SHAPE[1]), np.float32)
    width = np.float32(SHAPE[1])

    def block(index: int) -> None:
        lo, hi = blocks[index]
        tmp = scratch[index]
        for start in range(lo, hi, CHUNK_ROWS):
            rows = slice(start, min(start + CHUNK_ROWS, hi))
            xs, gs, os_, ds = x[rows], g[rows], out[rows], dx[rows]
            t = tmp[: xs.shape[0]]
            mean = np.add.reduce(xs, axis=1) / width                      # 1
            np.subtract(xs, mean[:, None], out=os_)                       # 2
            rstd = 1 / np.sqrt(np.einsum("ij,ij->i", os_, os_) / width + 1e-5)  # 3
            np.multiply(os_, rstd[:, None], out=os_)                      # 4 xhat
            np.multiply(os_, gamma, out=t)                                # 5
            np.add(t, beta, out=t)                                        # 6 output
            dbeta[index] += np.add.reduce(gs, axis=0)                     # 7
            dgamma[index] += np.einsum("ij,ij->j", gs, os_)               # 8
            np.multiply(gs, gamma, out=ds)                                # 9 g·gamma
            a = np.add.reduce(ds, axis=1) / width                         # 10
            b = np.einsum("ij,ij->i", ds, os_) / width                    # 11
            np.multiply(os_, b[:, None], out=t)                           # 12
            np.subtract(ds, t, out=ds)
            np.subtract(ds, a[:, None], out=ds)
            np.multiply(ds, rstd[:, None], out=ds)                        # 13

    def step():
        run(block, range(len(blocks)))

    return step


def layernorm_torch():
    import torch

    rs = np.random.RandomState(0)
    x = torch.from_numpy(rs.standard_normal((64, 128, 256)).astype(np.float32)).requires_grad_()
    cot = torch.from_numpy(rs.standard_normal((64, 128, 256)).astype(np.float32))
    module = torch.nn.LayerNorm(256)

    def step():
        x.grad = None
        module.zero_grad(set_to_none=True)
        module(x).backward(cot)

    return step


FLOORS = {
    "conv": ("3×3 conv of the residual CNN, (64,16,8,8)→16", 0.8, conv_numpy_floor,
             conv_torch, 300),
    "conv-copies": ("the same conv done whole, cheapest layout found", 0.8,
                    conv_numpy_with_copies, conv_torch, 200),
    "layernorm": ("LayerNorm 256 on (64,128,256)", 1.0, layernorm_numpy_floor,
                  layernorm_torch, 60),
}


def main() -> None:
    if any(os.environ.get(name) for name in BLAS_VARS):
        env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    import torch

    print(f"NumPy {np.__version__}, PyTorch {torch.__version__} ({torch.get_num_threads()} "
          f"threads), {os.cpu_count()} cores")
    print("| workload | NumPy floor ms | PyTorch ms | best possible ratio | target |")
    print("|---|---:|---:|---:|---:|")
    for title, target, floor, oracle, calls in FLOORS.values():
        numpy_s = _best(floor(), args.repeat, calls)
        torch_s = _best(oracle(), args.repeat, calls)
        print(f"| {title} | {numpy_s * 1e3:.3f} | {torch_s * 1e3:.3f} | "
              f"{torch_s / numpy_s:.2f} | ≥ {target} |")


if __name__ == "__main__":
    main()
