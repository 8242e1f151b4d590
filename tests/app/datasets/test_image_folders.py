"""Image folders as data sets: classes, options, broken files, the decode cache, a changed or
gone folder, progress and Cancel, and `cellwright train` reading through the same cache."""

import io
import os

import numpy as np
import pytest
from PIL import Image, ImageDraw

from app import cli
from app.datasets import image_decode
from app.datasets.dataset import DatasetError
from app.datasets.images import folder_status, image_setting, load_images, recorded
from app.datasets.loading import DatasetLoader, DatasetRefused, ReadingCancelled, read_dataset
from app.document import Project
from app.io.project_file import load_project, save_project
from tests.app.session.session_samples import chain

COLOURS = {"red": (230, 20, 20), "green": (20, 200, 40), "blue": (30, 30, 220)}


def shapes(root, classes=("red", "green"), count=6, size=(24, 24)):
    """A class folder per colour, each holding `count` PNGs of a shape in that colour on white
    (sizes vary a little: mixed sizes are resized)."""
    for c, name in enumerate(classes):
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(count):
            w, h = size[0] + i % 3, size[1] + (i % 2) * 5
            image = Image.new("RGB", (w, h), "white")
            draw = ImageDraw.Draw(image)
            box = (2 + i % 4, 2, w - 3, h - 3 - i % 3)
            (draw.ellipse if (i + c) % 2 else draw.rectangle)(box, fill=COLOURS[name])
            image.save(folder / f"{name}{i}.png")
    return root


def broken_files(folder):
    """The files a reader must survive, in one class folder."""
    good = io.BytesIO()
    Image.new("RGB", (40, 40), "red").save(good, "JPEG")
    (folder / "truncated.jpg").write_bytes(good.getvalue()[:200])
    (folder / "text.png").write_text("this is not an image\n")
    (folder / "empty.png").write_bytes(b"")
    os.symlink("loop.png", folder / "loop.png")
    (folder / "folder.png").mkdir()
    return {"truncated.jpg", "text.png", "empty.png", "loop.png", "folder.png"}


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """Every test has its own cache folder, the default one (as the CLI uses)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("CELLWRIGHT_CACHE", str(folder))
    return folder


@pytest.fixture
def decodes(monkeypatch):
    """Counts the files Pillow is asked to decode."""
    calls = []
    real = image_decode.decode_file

    def counting(path, *args):
        calls.append(path)
        return real(path, *args)

    monkeypatch.setattr(image_decode, "decode_file", counting)
    return calls


def test_a_class_per_subfolder_gives_float_images_in_0_1_with_named_classes(tmp_path):
    shapes(tmp_path / "photos", ("red", "green", "blue"), count=4)
    data = load_images(tmp_path / "photos", size=[16, 12])
    assert data.x.shape == (12, 3, 16, 12) and data.x.dtype == np.float32
    assert data.x.min() >= 0.0 and data.x.max() <= 1.0 and data.x.max() == 1.0  # white
    assert data.y.dtype == np.int64 and data.class_names == ("blue", "green", "red")
    assert list(data.class_counts()) == [4, 4, 4]
    assert data.sources[0] == "blue/blue0.png" and data.note == "" and data.skipped == ()
    centre = data.x[data.y == 2][:, :, 8, 6].mean(axis=0)  # the red class's shapes' middle
    assert centre[0] > 0.8 and centre[1] < 0.2 and centre[2] < 0.2


def test_gray_crop_and_mixed_modes(tmp_path):
    photos = shapes(tmp_path / "photos", count=2)
    wide = np.zeros((10, 30, 3), np.uint8)  # blue | red | blue, thirds
    wide[:, :10, 2] = wide[:, 20:, 2] = 255
    wide[:, 10:20, 0] = 255
    Image.fromarray(wide).save(photos / "red" / "wide.png")
    Image.new("L", (8, 8), 128).save(photos / "red" / "grey.png")
    Image.new("P", (8, 8), 3).save(photos / "red" / "palette.gif")
    Image.new("RGBA", (8, 8), (0, 0, 0, 0)).save(photos / "green" / "clear.png")
    deep = np.full((8, 8), 65535, np.uint16)
    Image.fromarray(deep).save(photos / "green" / "deep.png")
    cropped = load_images(photos, size=10, fit="crop")
    resized = load_images(photos, size=10, fit="resize")
    wide_at = cropped.sources.index("red/wide.png")
    assert cropped.x[wide_at, 0].min() == 1.0 and cropped.x[wide_at, 2].max() == 0.0  # all red
    assert resized.x[wide_at, 2, :, 0].min() == 1.0  # the blue edge is kept when resized
    assert cropped.x[cropped.sources.index("green/clear.png")].min() == 1.0  # clear on white
    assert cropped.x[cropped.sources.index("green/deep.png")].min() == 1.0  # 16 bit scaled
    grey = load_images(photos, size=[6, 6], color="gray")
    assert grey.x.shape == (len(cropped), 1, 6, 6) and grey.skipped == ()
    assert grey.x[grey.sources.index("red/grey.png")].max() == pytest.approx(128 / 255)


def test_unreadable_files_are_skipped_counted_and_listed(tmp_path):
    photos = shapes(tmp_path / "photos", count=3)
    broken = broken_files(photos / "red")
    (photos / "README.txt").write_text("about the photos")
    data = load_images(photos, size=8)
    assert len(data) == 6 and list(data.class_counts()) == [3, 3]
    assert {name.split("/")[1] for name, _ in data.skipped} == broken
    reasons = dict(data.skipped)
    assert reasons["red/loop.png"] == "a link that leads back to itself (a link loop)"
    assert reasons["red/empty.png"] == "an empty file (0 bytes)"
    assert reasons["red/text.png"] == "not an image Pillow can read"
    assert "truncated" in reasons["red/truncated.jpg"]
    assert "5 files could not be used and were skipped" in data.note
    assert "1 other file (not named as images) was left out" in data.note


def test_no_usable_image_or_a_single_class_is_refused_with_the_reason(tmp_path):
    broken_files((tmp_path / "bad" / "cats").mkdir(parents=True) or tmp_path / "bad" / "cats")
    with pytest.raises(DatasetError, match=r"holds no image that can be read \(5 skipped: "):
        load_images(tmp_path / "bad")
    shapes(tmp_path / "one", ("red",))
    (tmp_path / "one" / "empty").mkdir()
    with pytest.raises(DatasetError, match=r"one class only \('red'\).*at least two classes"):
        load_images(tmp_path / "one")
    with pytest.raises(DatasetError, match="size must be"):
        load_images(tmp_path / "one", size=[0, 8])


def test_a_csv_of_path_and_label_reads_paths_from_its_own_folder(tmp_path):
    shapes(tmp_path / "data" / "pics", ("red", "blue"), count=2)
    lines = ["path,label", "pics/red/red0.png,warm", "pics/red/red1.png,warm",
             "pics/blue/blue0.png,cold", "pics/blue/blue1.png,cold", "pics/nothing.png,cold",
             "just-a-path.png"]  # fmt: skip
    (tmp_path / "data" / "labels.csv").write_text("\n".join(lines) + "\n")
    spec = {"images": "data/labels.csv", "size": [8, 8]}
    data = read_dataset(spec, tmp_path)
    assert data.class_names == ("cold", "warm") and list(data.y) == [1, 1, 0, 0]
    assert dict(data.skipped) == {
        "pics/nothing.png": "not found",
        "labels.csv line 7": "needs a path and a label, found ['just-a-path.png']",
    }


def test_a_separate_validation_folder_is_the_validation_set(tmp_path):
    shapes(tmp_path / "train", count=5)
    shapes(tmp_path / "val", ("red", "green", "blue"), count=2)
    spec = {"images": "train", "size": 8, "validation": "val"}
    data = read_dataset(spec, tmp_path)
    train, val = data.split(0.5, seed=3)  # the fraction is not used
    assert len(train) == 10 and len(val) == 4
    assert all(s.startswith("val/") for s in val.sources)
    assert ("val/blue/blue0.png", "its class 'blue' has no training image") in data.skipped
    with pytest.raises(DatasetRefused, match="validation_fraction"):
        read_dataset({**spec, "validation": 0.2}, tmp_path)
    os.rename(tmp_path / "val", tmp_path / "old")
    with pytest.raises(DatasetRefused, match="The validation folder val is gone"):
        read_dataset(spec, tmp_path)


def test_a_second_read_decodes_nothing_and_a_corrupt_cache_is_rewritten(tmp_path, cache,
                                                                        decodes):  # fmt: skip
    shapes(tmp_path / "photos", count=4)
    first = load_images(tmp_path / "photos", size=8)
    assert len(decodes) == 8
    again = load_images(tmp_path / "photos", size=8)
    assert len(decodes) == 8 and np.array_equal(first.x, again.x)
    assert list(again.y) == list(first.y) and again.sources == first.sources
    [saved] = (cache / "images").glob("*.npz")
    saved.write_bytes(b"PK\x03\x04 not a zip at all")
    fixed = load_images(tmp_path / "photos", size=8)
    assert len(decodes) == 16 and np.array_equal(fixed.x, first.x)
    load_images(tmp_path / "photos", size=8)
    assert len(decodes) == 16  # rewritten: read from the cache again
    load_images(tmp_path / "photos", size=8, color="gray")  # other options: decoded again
    assert len(decodes) == 24


def test_progress_and_cancel(tmp_path):
    shapes(tmp_path / "photos", count=80)
    seen = []
    load_images(tmp_path / "photos", size=8, cache=None, progress=lambda d, t: seen.append((d, t)))
    assert seen[0] == (0, 160) and seen[-1] == (160, 160)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    with pytest.raises(DatasetError, match="Reading photos was cancelled"):
        load_images(tmp_path / "photos", size=8, cache=None, cancelled=lambda: True)


def test_the_loader_reads_an_image_folder_on_a_worker_that_can_be_cancelled(tmp_path):
    shapes(tmp_path / "photos", count=3)
    spec = {"images": "photos", "size": 8}
    readings = []

    def cancel(reading):
        readings.append(reading)
        reading.cancel()
        reading.finished.wait()

    with pytest.raises(ReadingCancelled, match="Reading photos was cancelled"):
        DatasetLoader(wait=cancel).load(spec, tmp_path, retry=True)
    waited = []

    def wait(reading):
        reading.finished.wait()
        waited.append(reading.permille())

    loader = DatasetLoader(wait=wait)
    data = loader.load(spec, tmp_path)
    assert len(data) == 6 and len(readings) == 1 and waited == [1000]
    assert loader.already_read(spec, tmp_path) is data
    (tmp_path / "photos" / "red" / "red0.png").unlink()  # the folder changed: not kept
    assert loader.already_read(spec, tmp_path) is None


def test_a_gone_folder_is_refused_and_a_changed_one_is_read_again_and_said(tmp_path):
    photos = shapes(tmp_path / "photos", count=3)
    first = load_images(photos, size=8)
    spec = image_setting(photos, first, folder=tmp_path, size=8)
    assert spec == {"images": "photos", "size": [8, 8], "fit": "resize", "color": "rgb",
                    "digest": first.digest}  # fmt: skip
    assert folder_status(spec, tmp_path) == ""
    assert read_dataset(spec, tmp_path).note == "" and recorded(spec, first) is None
    shapes(photos, ("blue",), count=2)  # a new class folder
    assert "has changed since the project recorded it" in folder_status(spec, tmp_path)
    changed = read_dataset(spec, tmp_path)
    assert changed.class_names == ("blue", "green", "red") and changed.digest != first.digest
    assert changed.note.startswith("The image folder photos has changed since the project "
                                   "recorded it, so it was read again as it is now (8 images")
    assert recorded(spec, changed) == {**spec, "digest": changed.digest}
    os.rename(photos, tmp_path / "elsewhere")
    gone = f"The image folder photos is gone (looked for {photos})"
    assert folder_status(spec, tmp_path).startswith(gone)
    with pytest.raises(DatasetRefused, match=r"can't be used: The image folder photos is gone"):
        read_dataset(spec, tmp_path)


def cnn_project(dataset) -> Project:
    graph = chain(
        ("Input", {"shape": (3, 8, 8)}),
        ("Conv2d", {"in_channels": 3, "out_channels": 4, "kernel_size": 3, "pad_mode": "same"}),
        ("ReLU", {}),
        ("MaxPool2d", {"kernel_size": 2, "stride": 2}),
        ("Flatten", {}),
        ("Dense", {"in_channels": 64, "out_channels": 2}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    training = {"dataset": dataset, "learning_rate": 0.01, "batch_size": 8, "epochs": 1}
    return Project(graph=graph, name="shapes", training=training)


def test_cellwright_train_reads_through_the_same_cache(tmp_path, decodes, capsys):
    shapes(tmp_path / "photos", count=10)
    path = tmp_path / "shapes.cwproj"
    save_project(cnn_project({"images": "photos", "size": [8, 8]}), path)
    assert cli.main(["train", str(path), "--quiet"]) == 0
    assert len(decodes) == 20
    assert cli.main(["train", str(path), "--quiet"]) == 0
    assert len(decodes) == 20  # the second run decoded nothing
    assert load_project(path).training["state"]["epoch"] == 2
    capsys.readouterr()
