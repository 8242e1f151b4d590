"""Decoding image files with Pillow into one uint8 (N, C, H, W) array, on a thread pool.

Every image becomes the same shape: `fit` "resize" scales it to (H, W) (the aspect ratio
may change), "crop" scales it so it covers (H, W) and cuts the centre out. Modes are
converted: transparency is laid over white, 16-bit grey is scaled to 8 bits, palette,
CMYK and other modes go to RGB or grey ("L", ITU-R 601-2 luma). Animated images give
their first frame. A file Pillow can't read (not an image, truncated, too large) is left
out with the reason.

Pillow releases the GIL while it decodes and resizes, so files are decoded by a few
threads, a chunk at a time; `progress(done, total)` is called and `cancelled()` asked on
the calling thread between chunks. Qt-free.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

import numpy as np

from app.datasets.csv_stream import cancelled_message
from app.datasets.dataset import DatasetError
from app.datasets.image_cache import Decoded

MAX_PIXELS = 64_000_000  # one image; Pillow's own decompression-bomb limit is 89 million
CHUNK = 64  # files decoded per task: progress and cancel are seen this often
MAX_WORKERS = 4

Progress = Callable[[int, int], None]  # (files decoded, files listed)
Cancelled = Callable[[], bool]


def _pil():
    """Pillow's Image and ImageOps, imported when an image is first read (not at start-up)."""
    from PIL import Image, ImageOps

    return Image, ImageOps


class TooLarge(ValueError):
    """An image with more pixels than MAX_PIXELS."""


def decode_file(path: Path, size: tuple[int, int], fit: str, gray: bool) -> np.ndarray:
    """One image file as uint8 (H, W) for grey or (H, W, 3) for RGB; raises if unreadable."""
    height, width = size
    Image, ImageOps = _pil()
    with Image.open(path) as image:
        if image.width * image.height > MAX_PIXELS:
            raise TooLarge(f"{image.width}×{image.height} pixels is more than a sample image "
                           f"can have ({MAX_PIXELS:,})")  # fmt: skip
        if image.format == "JPEG":  # decode big photos at a smaller scale, much faster
            image.draft("L" if gray else "RGB", (width, height))
        image = _eight_bit(image, gray)
        if image.size != (width, height):
            if fit == "crop":
                image = ImageOps.fit(image, (width, height), Image.Resampling.BILINEAR)
            else:
                image = image.resize((width, height), Image.Resampling.BILINEAR)
        return np.asarray(image, dtype=np.uint8)


def _eight_bit(image, gray: bool):
    """The image in mode 'L' or 'RGB', transparency over white, 16-bit scaled down."""
    Image, _ = _pil()
    target = "L" if gray else "RGB"
    if image.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        values = np.asarray(image, dtype=np.float32)
        scale = 257.0 if values.size and values.max() > 255 else 1.0
        image = Image.fromarray(np.clip(values / scale, 0, 255).astype(np.uint8), "L")
    elif image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = Image.alpha_composite(white, rgba)
    return image if image.mode == target else image.convert(target)


def decode_all(paths: list[Path], size: tuple[int, int], fit: str, gray: bool, *,
               name: str, progress: Progress | None = None,
               cancelled: Cancelled | None = None) -> Decoded:  # fmt: skip
    """Decode `paths` into uint8 (M, C, H, W); the files that failed, with reasons.

    DatasetError (cancelled_message(name)) if `cancelled()` says so between chunks.
    """
    total = len(paths)
    channels = 1 if gray else 3
    out = np.empty((total, channels, *size), dtype=np.uint8)
    failed: list[tuple[int, str]] = []

    def work(start: int, stop: int) -> list[tuple[int, str]]:
        bad = []
        for i in range(start, stop):
            try:
                pixels = decode_file(paths[i], size, fit, gray)
                out[i] = pixels[None] if gray else pixels.transpose(2, 0, 1)
            except Exception as exc:  # Pillow raises many kinds; each is a reason
                bad.append((i, _reason(exc)))
        return bad

    chunks = [(s, min(s + CHUNK, total)) for s in range(0, total, CHUNK)]
    workers = max(1, min(MAX_WORKERS, os.cpu_count() or 1, len(chunks)))
    done = 0
    if progress is not None:
        progress(0, total)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="image-decode") as pool:
        pending = set()
        queue = iter(chunks)
        try:
            for chunk in queue:  # keep a few chunks per worker queued, no more
                pending.add(pool.submit(work, *chunk))
                if len(pending) >= 2 * workers:
                    break
            while pending:
                finished, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
                for future in finished:
                    failed.extend(future.result())
                    done += CHUNK
                    chunk = next(queue, None)
                    if chunk is not None:
                        pending.add(pool.submit(work, *chunk))
                if progress is not None and finished:
                    progress(min(done, total), total)
                if cancelled is not None and cancelled():
                    raise DatasetError(cancelled_message(name))
        finally:
            for future in pending:
                future.cancel()
    failed.sort()
    bad = {i for i, _ in failed}
    kept = np.array([i for i in range(total) if i not in bad], dtype=np.int64)
    x = out if not failed else out[kept]
    return Decoded(x, kept, tuple(failed))


def _reason(exc: Exception) -> str:
    Image, _ = _pil()
    if isinstance(exc, Image.UnidentifiedImageError):
        return "not an image Pillow can read"
    if isinstance(exc, TooLarge):
        return str(exc)
    if isinstance(exc, Image.DecompressionBombError):
        return "too many pixels to be a sample image (refused as a decompression bomb)"
    if isinstance(exc, OSError) and exc.strerror:
        return f"can't be read: {exc.strerror}"
    text = str(exc).strip() or type(exc).__name__
    return f"damaged or truncated ({text})"
