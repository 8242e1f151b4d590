"""Node catalogue: every node type the editor offers, described from declared schemas (headless)."""

from app.catalogue.builtin import CATALOGUE, LOSSES, NO_LOSS, build_catalogue
from app.catalogue.custom_cells import (
    CUSTOM_CELL,
    NOT_RUN,
    READY_MADE,
    CustomCellError,
    code_digest,
    custom_ports,
    load_custom_cell,
    trust_code,
    trust_project,
    untrusted_code,
)
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
    "CUSTOM_CELL",
    "DTYPES",
    "KINDS",
    "LOSSES",
    "NOT_RUN",
    "NO_LOSS",
    "READY_MADE",
    "USER_CATEGORY",
    "Catalogue",
    "CatalogueError",
    "CustomCellError",
    "NodeType",
    "ParamSpec",
    "PortSpec",
    "ShapeError",
    "build_catalogue",
    "cell_node_type",
    "code_digest",
    "custom_ports",
    "load_custom_cell",
    "trust_code",
    "trust_project",
    "untrusted_code",
]
