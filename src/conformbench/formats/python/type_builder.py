"""The type builder as the modules it drives see it.

``codegen.TypeBuilder`` walks a schema and hands object schemas to
models.py, JSON types to types.py and the root to module.py; they call back
into it for subschemas, references and reports. Typing them against this
Protocol keeps the imports one way: codegen.py imports them, they import
only this module."""

from __future__ import annotations

from typing import Any, Protocol

from conformbench.formats.python.expr import Expr
from conformbench.formats.python.refs import Dialect, Resolver
from conformbench.formats.python.source import Names
from conformbench.formats.python.typed import Typed

__all__ = ["Builder"]


class Builder(Protocol):
    """What models.py, types.py and module.py use of ``TypeBuilder``."""

    resolver: Resolver
    names: Names
    dialect: Dialect
    classes: list[str]
    rebuilds: list[str]
    #: class key (schema path) -> name, for classes finished or in progress
    class_keys: dict[str, str]
    #: names of the classes being built, innermost last
    current: list[str]
    #: whether the class being built uses a regex ``pattern``
    patterns: list[bool]

    def report(self, path: tuple[str, ...], keyword: str, reason: str, tail: tuple[str, ...] = ()) -> None:
        """Record ``keyword`` at ``path`` as not stated exactly."""

    def test(self, schema: Any, var: str, known: frozenset[str] | None = None, *,
             path: tuple[str, ...] | None = None) -> Expr | None:
        """The expression test of ``schema`` on ``var`` (None if none exists)."""

    def retest(self, schema: Any, var: str, known: frozenset[str] | None, depth: int) -> Expr:
        """The test of a schema already found testable, for a rule."""

    def typed(self, schema: Any, path: tuple[str, ...], hint: str) -> Typed:
        """The type of the subschema at ``path``."""

    def model_type(self, name: str, forward: bool = False) -> Typed:
        """The type of the model class ``name``."""

    def ref(self, ref: str, path: tuple[str, ...], hint: str) -> Typed:
        """The type of what ``ref`` points to."""
