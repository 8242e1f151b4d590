"""Where the files Cellwright ships with (`cellwright_resources`) are on disk (headless)."""

from __future__ import annotations

import importlib.resources
import sys
from pathlib import Path

# A source checkout that was never pip-installed has the folder beside the packages.
CHECKOUT_RESOURCES = Path(__file__).resolve().parent.parent / "resources"


def resources_root() -> Path:
    """The installed `cellwright_resources` folder, else the checkout's `resources/` folder."""
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        # A PyInstaller bundle (packaging/cellwright.spec) unpacks the folder here.
        return Path(bundle) / "cellwright_resources"
    try:
        root = importlib.resources.files("cellwright_resources")
    except ModuleNotFoundError:
        return CHECKOUT_RESOURCES
    # Installed as plain files (wheel, editable, PyInstaller) it is a real folder; anything
    # else (a zip import) cannot be handed out as a path, so use the checkout instead.
    return root if isinstance(root, Path) else CHECKOUT_RESOURCES


def resource_path(*parts: str) -> Path:
    """Path to a shipped file, e.g. `resource_path("data", "digits.npz")`; may not exist."""
    return resources_root().joinpath(*parts)
