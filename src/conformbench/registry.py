"""Named registries: the one extension mechanism of conformbench.

Adding a backend, engine, schema format, output format, task or arm is one new
module in the matching package plus one ``@registry.register("name")``
decorator. A registry imports every module of its package the first time it
is asked for a name, so nothing in core code lists the plugins, and it also
loads third-party plugins from the entry-point group ``conformbench.<kind>``.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from conformbench.errors import UnknownNameError

__all__ = ["Registry", "did_you_mean"]

T = TypeVar("T")


def did_you_mean(name: str, choices: list[str]) -> str:
    """A ' (did you mean X?)' suffix, or '' when nothing is close."""
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


class Registry(Generic[T]):
    """Maps names to plugin objects (classes or factories) of one kind."""

    def __init__(self, kind: str, package: str) -> None:
        self.kind = kind
        self.package = package
        self._items: dict[str, T] = {}
        self._loaded = False

    def register(self, name: str) -> Callable[[T], T]:
        def decorator(obj: T) -> T:
            if name in self._items and self._items[name] is not obj:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._items[name] = obj
            return obj

        return decorator

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        pkg = importlib.import_module(self.package)
        for mod in pkgutil.iter_modules(getattr(pkg, "__path__", [])):
            if not mod.name.startswith("_"):
                importlib.import_module(f"{self.package}.{mod.name}")
        group = "conformbench." + self.kind.replace(" ", "_") + "s"
        for ep in entry_points(group=group):
            ep.load()

    def get(self, name: str) -> T:
        self._load()
        try:
            return self._items[name]
        except KeyError:
            hint = did_you_mean(name, self.names())
            known = ", ".join(self.names())
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}{hint}; known: {known}"
            ) from None

    def names(self) -> list[str]:
        self._load()
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
