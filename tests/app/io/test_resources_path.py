"""resource_path finds shipped files installed or in a checkout."""

import importlib.resources
import zipfile

import app.resources_path as resources
from app.resources_path import CHECKOUT_RESOURCES, resource_path


def test_an_installed_package_is_preferred(monkeypatch, tmp_path):
    monkeypatch.setattr(importlib.resources, "files", lambda name: tmp_path)
    assert resource_path("data", "digits.npz") == tmp_path / "data" / "digits.npz"


def test_a_checkout_is_used_when_nothing_is_installed(monkeypatch):
    def missing(name):
        raise ModuleNotFoundError(name)

    monkeypatch.setattr(importlib.resources, "files", missing)
    assert resource_path("data") == CHECKOUT_RESOURCES / "data"
    assert (CHECKOUT_RESOURCES / "README.md").is_file()


def test_a_zipped_install_falls_back_to_the_checkout(monkeypatch, tmp_path):
    archive = tmp_path / "r.zip"
    zipfile.ZipFile(archive, "w").close()
    monkeypatch.setattr(importlib.resources, "files", lambda name: zipfile.Path(archive))
    assert resources.resources_root() == CHECKOUT_RESOURCES
