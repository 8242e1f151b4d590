"""One version everywhere, a valid desktop entry and metainfo, and the icon in every size."""

import configparser
import shutil
import struct
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path

import app
import app.resources_path as resources
from app import main as entry

REPO = Path(__file__).resolve().parents[2]
LINUX = REPO / "packaging" / "linux"
APP_ID = "io.github.cellwright.Cellwright"
DESKTOP = LINUX / f"{APP_ID}.desktop"
METAINFO = LINUX / f"{APP_ID}.metainfo.xml"
ICONS = REPO / "resources" / "icons"


def pyproject_version():
    with (REPO / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)["project"]["version"]


def desktop_entry():
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive
    parser.read(DESKTOP, encoding="utf-8")
    return parser["Desktop Entry"]


def png_size(path):
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def test_the_app_reports_the_pyproject_version():
    assert app.__version__ == pyproject_version()


def test_the_console_script_and_module_print_it():
    expected = f"cellwright {pyproject_version()}"
    script = Path(sys.executable).with_name("cellwright")
    for command in ([str(script)], [sys.executable, "-m", "app.main"]):
        result = subprocess.run([*command, "--version"], capture_output=True, text=True,
                                timeout=60, cwd=REPO)  # fmt: skip
        assert result.stdout.strip() == expected, (command, result.stderr)


def test_without_installed_metadata_the_version_is_read_from_pyproject(monkeypatch):
    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    assert app._version() == pyproject_version()


def test_the_metainfo_release_is_the_version_and_names_the_desktop_entry():
    root = ET.parse(METAINFO).getroot()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    assert root.find("launchable").text == DESKTOP.name
    releases = root.find("releases").findall("release")
    assert releases and releases[0].get("version") == pyproject_version()
    for key in ("name", "summary", "metadata_license", "project_license"):
        assert (root.findtext(key) or "").strip(), key


def test_the_desktop_entry_has_the_required_keys():
    keys = desktop_entry()
    assert keys["Type"] == "Application"
    assert keys["Name"] == "Cellwright"
    assert keys["Exec"].split()[0] == "cellwright"
    assert keys["Icon"] == APP_ID
    assert keys["Categories"].endswith(";") and "Science" in keys["Categories"].split(";")
    assert "application/x-cellwright-project" in keys["MimeType"].split(";")
    assert DESKTOP.stem == entry.DESKTOP_FILE_NAME  # Qt's link from window to entry


def test_the_desktop_files_validate_where_the_tools_are_installed():
    # desktop-file-utils and appstream are not needed to build; when present, they agree.
    if shutil.which("desktop-file-validate"):
        result = subprocess.run(["desktop-file-validate", str(DESKTOP)],
                                capture_output=True, text=True)  # fmt: skip
        assert result.returncode == 0 and "error" not in result.stdout, result.stdout
    if shutil.which("appstreamcli"):
        result = subprocess.run(["appstreamcli", "validate", "--no-net", str(METAINFO)],
                                capture_output=True, text=True)  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr


def test_the_mime_type_globs_project_files():
    root = ET.parse(LINUX / f"{APP_ID}.xml").getroot()
    namespace = "{http://www.freedesktop.org/standards/shared-mime-info}"
    mime = root.find(f"{namespace}mime-type")
    assert mime.get("type") == "application/x-cellwright-project"
    assert mime.find(f"{namespace}glob").get("pattern") == "*.cwproj"


def test_every_icon_size_exists_at_its_size():
    assert ET.parse(ICONS / "cellwright.svg").getroot().tag.endswith("svg")
    assert entry.ICON_SIZES == (16, 32, 48, 64, 128, 256, 512)
    for size in entry.ICON_SIZES:
        assert png_size(ICONS / f"cellwright-{size}.png") == (size, size)


def test_the_window_icon_is_built_from_the_pngs(qapp):
    icon = entry._window_icon()
    assert not icon.isNull()
    sizes = sorted(s.width() for s in icon.availableSizes())
    assert sizes == list(entry.ICON_SIZES)


def test_a_pyinstaller_bundle_finds_resources_in_its_own_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    expected = tmp_path / "cellwright_resources" / "data" / "digits.npz"
    assert resources.resource_path("data", "digits.npz") == expected
