"""Containers: `SequentialCell` (runs its cells in order) and `CellList` (holds cells).

Children are named '0', '1', ... (or by the keys of an OrderedDict), so a
child's Parameters are '0.weight', '1.bias', ...
"""

from collections import OrderedDict

from engine.nn.cell import Cell


def _rename_moved(cell: Cell, old: str, new: str) -> None:
    """A child moved from key `old` to `new`: its Parameter names follow (outer prefix kept)."""
    cell.__dict__["_scope_name"] = new
    for path, p in cell.parameters_and_names():
        tail = f"{old}.{path}"
        if p.name.endswith(tail):
            p.name = p.name[: -len(tail)] + f"{new}.{path}"


class _CellSequence(Cell):
    """Ordered children kept as attributes named by their keys; list-style editing."""

    def __init__(self):
        super().__init__()
        self._keyed = False  # True when built from a dict: keys are kept, not renumbered
        self._seq = ()

    def _check(self, cell):
        if not isinstance(cell, Cell):
            raise TypeError(f"{type(self).__name__} holds Cells, got {type(cell).__name__}")
        return cell

    def _set_children(self, items) -> None:
        items = [(str(k), self._check(c)) for k, c in items]
        old_keys = {id(c): k for k, c in self._cells.items() if c is not None}
        for key in list(self._cells):
            delattr(self, key)
        for key, cell in items:
            setattr(self, key, cell)
            old = old_keys.get(id(cell))
            if old is not None and old != key:
                _rename_moved(cell, old, key)
        self._seq = tuple(c for _, c in items)

    def _items(self) -> list:
        return list(self._cells.items())

    def _renumber(self, cells) -> None:
        if self._keyed:
            raise TypeError(
                f"{type(self).__name__} built from a dict keeps its keys; "
                "rebuild it to insert or delete"
            )
        self._set_children(enumerate(cells))

    def _index(self, index: int) -> int:
        n = len(self._seq)
        if not isinstance(index, int) or not -n <= index < n:
            raise IndexError(f"index {index!r} out of range for a {type(self).__name__} of {n}")
        return index % n

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(OrderedDict(self._items()[index]))
        return self._seq[self._index(index)]

    def __setitem__(self, index, cell) -> None:
        items = self._items()
        key = items[self._index(index)][0]
        setattr(self, key, self._check(cell))
        self._seq = tuple(self._cells.values())

    def __delitem__(self, index) -> None:
        cells = list(self._seq)
        if isinstance(index, slice):
            del cells[index]
        else:
            del cells[self._index(index)]
        if self._keyed:
            keep = {id(c) for c in cells}
            self._set_children((k, c) for k, c in self._items() if id(c) in keep)
        else:
            self._renumber(cells)

    def __len__(self) -> int:
        return len(self._seq)

    def __iter__(self):
        return iter(self._seq)

    def append(self, cell):
        key = str(len(self._seq))
        if key in self._cells:
            raise ValueError(f"{type(self).__name__} already has a child named {key!r}")
        setattr(self, key, self._check(cell))
        self._seq = (*self._seq, cell)
        return self

    def extend(self, cells):
        for cell in cells:
            self.append(cell)
        return self

    def insert(self, index: int, cell) -> None:
        cells = list(self._seq)
        cells.insert(index, self._check(cell))
        self._renumber(cells)


class SequentialCell(_CellSequence):
    """Calls its cells in order, each on the previous one's output.

    Build it from cells (`SequentialCell(a, b)`), a list (`SequentialCell([a, b])`)
    or an OrderedDict of named cells.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], dict):
            self._keyed = True
            self._set_children(args[0].items())
        elif len(args) == 1 and isinstance(args[0], (list, tuple)):
            self._set_children(enumerate(args[0]))
        else:
            self._set_children(enumerate(args))

    def construct(self, x):
        for cell in self._seq:
            x = cell(x)
        return x


class CellList(_CellSequence):
    """A list of Cells registered as children (their Parameters belong to the network)."""

    def __init__(self, args=None):
        super().__init__()
        if isinstance(args, dict):
            self._keyed = True
            self._set_children(args.items())
        elif args is not None:
            self._set_children(enumerate(args))

    def construct(self, *inputs):
        raise NotImplementedError("CellList is a container; call its cells instead")
