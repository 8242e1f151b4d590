"""Image folder import speed and memory (issue 30): 10,000 PNGs of 32×32 in 10 class folders.

    python benchmarks/image_import.py [--images 10000] [--size 32] [--keep DIR]

Writes the folder in a temporary directory (coloured shapes on a noisy background, so the
PNGs are not trivially small), then imports it with `load_images` (32×32 RGB, "resize"),
each run in a fresh Python process so its memory is its own:

- **cold**: nothing cached; every file decoded (thread pool) and the cache written;
- **warm**: the same folder again; read from the cache, nothing decoded;
- **memory**: a cold import again (a new cache folder) under tracemalloc: its peak of
  traced allocations (NumPy's arrays are traced), and the process's peak RSS over its RSS
  before the import.

"Decoded size" is the data set's float32 samples (N × 3 × 32 × 32 × 4 bytes); the uint8
cache holds a quarter of that. Targets: cold < 20 s on 2 cores, peak < 3× the decoded size.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_folder(root: Path, images: int, size: int) -> None:
    import numpy as np
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(0)
    classes = 10
    for c in range(classes):
        (root / f"class{c}").mkdir(parents=True)
    for i in range(images):
        c = i % classes
        noise = rng.integers(0, 40, (size, size, 3), dtype=np.uint8) + 200
        image = Image.fromarray(noise.astype(np.uint8))
        draw = ImageDraw.Draw(image)
        colour = tuple(int(v) for v in rng.integers(0, 200, 3))
        a, b = sorted(rng.integers(2, size - 2, 2))
        (draw.ellipse if c % 2 else draw.rectangle)((a, a, b + 1, b + 1), fill=colour)
        image.save(root / f"class{c}" / f"{i:05d}.png")


def measure(folder: Path, cache: Path, size: int, traced: bool) -> dict:
    """One import in this process: seconds, peak RSS over the start, tracemalloc peak."""
    sys.path.insert(0, str(ROOT))
    import tracemalloc

    from app.datasets.images import load_images

    before = _rss_kb()
    if traced:
        tracemalloc.start()
    start = time.perf_counter()
    data = load_images(folder, size=[size, size], cache=cache)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] if traced else 0
    over = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
    return {"seconds": seconds, "samples": len(data), "skipped": len(data.skipped),
            "bytes": int(data.x.nbytes), "traced_peak": peak, "rss_over": over}


def _rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run(folder: Path, cache: Path, size: int, traced: bool = False) -> dict:
    command = [sys.executable, __file__, "--measure", str(folder), "--cache", str(cache),
               "--size", str(size)] + (["--traced"] if traced else [])  # fmt: skip
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--keep", help="write the folder here (kept) instead of a temp dir")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure), Path(args.cache), args.size, args.traced)))
        return
    with tempfile.TemporaryDirectory(prefix="cw-images-") as temp:
        base = Path(args.keep) if args.keep else Path(temp)
        folder = base / "images"
        start = time.perf_counter()
        write_folder(folder, args.images, args.size)
        print(f"wrote {args.images:,} PNGs of {args.size}×{args.size} in "
              f"{time.perf_counter() - start:.1f} s ({os.cpu_count()} cores)")  # fmt: skip
        cold = run(folder, Path(temp) / "cache1", args.size)
        warm = run(folder, Path(temp) / "cache1", args.size)
        traced = run(folder, Path(temp) / "cache2", args.size, traced=True)
    mb = 1 / 2**20
    size = cold["bytes"]
    print(f"samples {cold['samples']:,}, skipped {cold['skipped']}, decoded size (float32) "
          f"{size * mb:.1f} MB, uint8 {size / 4 * mb:.1f} MB")  # fmt: skip
    print(f"cold import (decode + cache write): {cold['seconds']:.2f} s "
          f"(peak RSS +{cold['rss_over'] * mb:.0f} MB = {cold['rss_over'] / size:.2f}×)")
    print(f"warm import (from the cache):       {warm['seconds']:.2f} s "
          f"(peak RSS +{warm['rss_over'] * mb:.0f} MB = {warm['rss_over'] / size:.2f}×)")
    print(f"cold import under tracemalloc:      {traced['seconds']:.2f} s, traced peak "
          f"{traced['traced_peak'] * mb:.0f} MB = {traced['traced_peak'] / size:.2f}× "
          f"(peak RSS +{traced['rss_over'] * mb:.0f} MB = {traced['rss_over'] / size:.2f}×)")


if __name__ == "__main__":
    main()
