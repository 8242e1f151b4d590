"""Keyword spellings: ops declare MindSpore 2.x names; `renamed` maps older aliases onto them."""

from __future__ import annotations

import functools


def renamed(**aliases: str):
    """`@renamed(x="input", axis="dim")`: accept `x=`/`axis=` as spellings of `input`/`dim`.

    Only the declared names and their aliases are accepted; an unknown keyword
    still raises Python's `TypeError`, and so does giving two spellings of one
    argument (`sum(t, dim=1, axis=1)`).
    """

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if kwargs:
                for old, new in aliases.items():
                    if old in kwargs:
                        if new in kwargs:
                            raise TypeError(
                                f"{fn.__name__}() got both '{new}' and its alias '{old}'"
                            )
                        kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        wrapper.keyword_aliases = dict(aliases)
        return wrapper

    return deco


def unsupported(who: str, **given) -> None:
    """Raise for accepted-but-unimplemented arguments that are not at their default (None/False)."""
    for name, value in given.items():
        if value is not None and value is not False:
            raise NotImplementedError(f"{who}: argument '{name}' is not supported by this engine")
