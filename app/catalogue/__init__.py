"""Node catalogue: every node type the editor offers, described from declared schemas (headless)."""

from app.catalogue.builtin import CATALOGUE, LOSSES, NO_LOSS, build_catalogue
from app.catalogue.registry import CATEGORIES, Catalogue
from app.catalogue.spec import DTYPES, KINDS, CatalogueError, NodeType, ParamSpec, PortSpec

__all__ = [
    "CATALOGUE",
    "CATEGORIES",
    "DTYPES",
    "KINDS",
    "LOSSES",
    "NO_LOSS",
    "Catalogue",
    "CatalogueError",
    "NodeType",
    "ParamSpec",
    "PortSpec",
    "build_catalogue",
]
