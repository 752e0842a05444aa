"""Named registries: the one extension mechanism of conformbench.

Adding a backend, engine, schema format, output format, task or arm is one new
module in the matching package plus one ``@registry.register("name")``
decorator. A registry imports every module of its package the first time it
is asked for a name, so nothing in core code lists the plugins, and it also
loads third-party plugins from the entry-point group ``conformbench.<kind>``.

A plugin module must import without its optional dependencies (import them
where they are used) and report them missing when asked to work. A module that
fails to import is a broken install: the error names the module and is raised
again on every lookup, never turned into a misleading "unknown name".
"""

from __future__ import annotations

import difflib
import functools
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
        """Register ``obj`` under ``name``. A registered class gets ``name``
        as its ``name`` attribute, so a plugin writes its name once."""

        def decorator(obj: T) -> T:
            old = self._items.get(name)
            if old is not None and old is not obj and _origin(old) != _origin(obj):
                raise ValueError(f"{self.kind} {name!r} is registered twice "
                                 f"({_origin(old)} and {_origin(obj)})")
            if isinstance(obj, type):
                obj.name = name  # type: ignore[attr-defined]
            self._items[name] = obj
            return obj

        return decorator

    def _load(self) -> None:
        if self._loaded:
            return
        pkg = importlib.import_module(self.package)
        # every module of the package, subpackages (one per feature) included
        for mod in pkgutil.walk_packages(getattr(pkg, "__path__", []), prefix=f"{self.package}."):
            if not mod.name.rpartition(".")[2].startswith("_"):
                self._import(mod.name, functools.partial(importlib.import_module, mod.name))
        group = "conformbench." + self.kind.replace(" ", "_") + "s"
        for ep in entry_points(group=group):
            self._import(f"{ep.value} (entry point {ep.name!r} of {group})", ep.load)
        # only now: after a failed import the next lookup tries (and fails) again
        self._loaded = True

    def _import(self, what: str, load: Callable[[], object]) -> None:
        try:
            load()
        except ImportError as exc:
            raise ImportError(f"cannot load {self.kind} plugin {what}: {exc}") from exc

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


def _origin(obj: object) -> str:
    """Where a plugin was defined: a module imported again (after its first
    import failed half-way) registers new objects of the same origin."""
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"
