"""Node catalogue: every node type the editor offers, described from declared schemas (headless)."""

from app.catalogue.builtin import CATALOGUE, LOSSES, NO_LOSS, build_catalogue
from app.catalogue.registry import CATEGORIES, Catalogue
from app.catalogue.spec import (
    BATCH,
    DTYPES,
    KINDS,
    CatalogueError,
    NodeType,
    ParamSpec,
    PortSpec,
    ShapeError,
)
from app.catalogue.user_cells import USER_CATEGORY, cell_node_type

__all__ = [
    "BATCH",
    "CATALOGUE",
    "CATEGORIES",
    "DTYPES",
    "KINDS",
    "LOSSES",
    "NO_LOSS",
    "USER_CATEGORY",
    "Catalogue",
    "CatalogueError",
    "NodeType",
    "ParamSpec",
    "PortSpec",
    "ShapeError",
    "build_catalogue",
    "cell_node_type",
]
