"""Settings given as plain data (a spec mapping through the API, a TOML
file's tables) checked in one walk before anything recurses into them:
``copy.deepcopy``, pydantic's ``Any`` fields and the finite-number check
all recurse once per level, so a 1,200-deep dotted table or a mapping that
contains itself ended in a ``RecursionError``; an integer like 10**5000
raised ``OverflowError`` in ``float()`` or ``ValueError`` wherever it was
shown. The walk is iterative: it never recurses itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformbench.records.base import INT_BOUND
from conformbench.records.markdown_escape import plain_text

__all__ = ["MAX_SETTINGS_DEPTH", "settings_data_refusal"]

#: how deep settings may nest: a custom task's schema (at most 100 levels,
#: formats/limits) under ``tasks[].params.schema`` is the deepest legitimate one
MAX_SETTINGS_DEPTH = 128


def _child(where: str, key: object) -> str:
    """The path of ``key`` under ``where``, shown to its first four keys."""
    if where.endswith("..."):
        return where
    if where.count(".") >= 3:
        return f"{where}..."
    name = plain_text(str(key))[:40]
    return f"{where}.{name}" if where else name


def settings_data_refusal(value: Any, max_depth: int = MAX_SETTINGS_DEPTH) -> str | None:
    """Why ``value`` is refused as settings (nested past ``max_depth``, a
    table that contains itself, an integer past ±2**63), naming where; None
    when it is plain data within those bounds. A table reached twice
    without a cycle (shared) is walked once."""
    stack: list[tuple[Any, int, str, bool]] = [(value, 1, "", False)]
    on_path: set[int] = set()
    done: set[int] = set()
    while stack:
        node, depth, where, leaving = stack.pop()
        if leaving:
            on_path.discard(id(node))
            done.add(id(node))
            continue
        if isinstance(node, int) and not isinstance(node, bool):
            if not -INT_BOUND <= node <= INT_BOUND:
                return f"{where or 'the value'}: an integer past ±2**63"
            continue
        if not isinstance(node, Mapping | list | tuple) or id(node) in done:
            continue
        if id(node) in on_path:
            return f"{where or 'the value'}: a table that contains itself"
        if depth > max_depth:
            return f"{where}: nested deeper than {max_depth} levels"
        on_path.add(id(node))
        stack.append((node, depth, where, True))
        items = node.items() if isinstance(node, Mapping) else enumerate(node)
        stack.extend((item, depth + 1, _child(where, key), False) for key, item in items)
    return None
