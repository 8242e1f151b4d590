"""The node editor: a canvas over the graph document, editing it only through undo commands."""

from widgets.node_editor.editor import NodeEditor
from widgets.node_editor.node_types import NodeTypes
from widgets.node_editor.view import NODE_MIME

__all__ = ["NODE_MIME", "NodeEditor", "NodeTypes"]
