"""Named registries: the one extension mechanism of conformbench.

A registry maps each name to the module that defines it, so a lookup
imports that one module only (as inspect_ai's providers do): asking for the
``json`` output format never imports the Pydantic renderer. Built-in plugins
are listed in the registry's table of names (``builtins``, beside the
registry's definition; tests/test_registry_tables.py keeps each table equal
to the decorators in its package). Third-party plugins are entry points in
the group ``conformbench.<kind>s`` (``conformbench.engines``, …), loaded
when their name is asked for. Either way the defining module decorates its
class with ``@registry.register("name")``.

``get(name)`` returns what was registered (for most registries a class);
``create(name, ...)`` calls it, for the instance a user usually wants
(``output_formats.create("json").parse(text)``).

A plugin module must import without its optional dependencies (import them
where they are used) and report them missing when asked to work. A module that
fails to import is a broken install: the error names the module and is raised
again on every lookup, never turned into a misleading "unknown name".
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import importlib.util
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache
from importlib.metadata import EntryPoint, EntryPoints, entry_points
from typing import Any, Generic, TypeVar

if sys.version_info >= (3, 12):
    from importlib.metadata import EntryPoints as _AllEntryPoints
else:  # every group at once: a dict by group until 3.12, whose select() gives one group's EntryPoints
    from importlib.metadata import SelectableGroups as _AllEntryPoints

from conformbench.errors import UnknownNameError, UsageError

__all__ = ["Registry", "check_choice", "did_you_mean", "distribution_version", "installed_entry_points", "join_names",
           "module_installed"]

T = TypeVar("T")
U = TypeVar("U")


def join_names(names: Iterable[str]) -> str:
    """'a, b or c' (for messages and help texts)."""
    listed = list(names)
    if len(listed) < 2:
        return "".join(listed) or "none"
    return f"{', '.join(listed[:-1])} or {listed[-1]}"


def did_you_mean(name: str, choices: list[str]) -> str:
    """A ' (did you mean X?)' suffix, or '' when nothing is close."""
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_choice(flag: str, value: str | None, choices: Iterable[str]) -> None:
    """UsageError (one line, with a did-you-mean) unless ``value`` is one of
    ``choices`` or None."""
    known = list(choices)
    if value is not None and value not in known:
        raise UsageError(f"{flag}: unknown value {value!r}{did_you_mean(value, known)}; "
                         f"known: {', '.join(known)}")


@lru_cache(maxsize=1)
def _all_entry_points() -> _AllEntryPoints:
    return entry_points()


def distribution_version(distributions: Iterable[str]) -> str | None:
    """The version of the first of ``distributions`` installed (None: none is)."""
    for name in distributions:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def module_installed(module: str, distributions: Iterable[str]) -> bool:
    """Whether an optional dependency is installed: its module importable and
    one of its distributions recorded. The module alone is not enough: a
    folder of that name on the path (this project's ``tests/backends/vllm``
    under pytest) is importable and is not the package."""
    return importlib.util.find_spec(module) is not None and distribution_version(distributions) is not None


def installed_entry_points(group: str) -> EntryPoints:
    """The entry points of ``group``: every installed distribution's are read
    once per process (a read took 10 ms; ``run -h`` asked for six groups)."""
    return _all_entry_points().select(group=group)


class Registry(Generic[T]):
    """Maps names to plugin objects (classes or factories) of one kind,
    importing each plugin's module on its first lookup."""

    def __init__(self, kind: str, builtins: Mapping[str, str] | None = None,
                 also_called: Mapping[str, str] | None = None,
                 manifests: Mapping[str, str] | None = None,
                 check: Callable[[T], None] | None = None) -> None:
        self.kind = kind
        #: run on each plugin as it registers (a backend without its manifest
        #: fails there, at import, in one line)
        self._check = check
        #: name -> module that registers it (the built-in plugins)
        self.builtins: dict[str, str] = dict(builtins or {})
        #: name -> a light module whose ``MANIFEST`` is the plugin's declared
        #: facts (its class's ``manifest``), read without importing the plugin
        self.manifests: dict[str, str] = dict(manifests or {})
        #: other words users say for a name, e.g. "pydantic" for the python
        #: format: the did-you-mean suggests the name (spelling alone cannot)
        self.also_called: dict[str, str] = dict(also_called or {})
        self._items: dict[str, T] = {}
        self._entry_points: dict[str, EntryPoint] | None = None

    @property
    def group(self) -> str:
        """The entry-point group of third-party plugins of this kind."""
        return "conformbench." + self.kind.replace(" ", "_") + "s"

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
            if self._check is not None:
                self._check(obj)
            self._items[name] = obj
            return obj

        return decorator

    def _plugins(self) -> dict[str, EntryPoint]:
        if self._entry_points is None:
            found = {ep.name: ep for ep in installed_entry_points(self.group)}
            self._entry_points = {n: ep for n, ep in found.items() if n not in self.builtins}
        return self._entry_points

    def _load(self, name: str) -> None:
        """Import the module that registers ``name`` (nothing when none does)."""
        module = self.builtins.get(name)
        if module is not None:
            self._import(module, lambda: importlib.import_module(module))
        elif (ep := self._plugins().get(name)) is not None:
            self._import(f"{ep.value} (entry point {ep.name!r} of {self.group})", ep.load)

    def _import(self, what: str, load: Callable[[], object]) -> None:
        before = set(self._items)
        try:
            load()
        except ImportError as exc:
            # what the module registered before it failed is dropped, so the
            # next lookup tries (and reports) the import again
            for name in set(self._items) - before:
                del self._items[name]
            raise ImportError(f"cannot load {self.kind} plugin {what}: {exc}") from exc

    def get(self, name: str) -> T:
        """The registered object (a class for backends, engines, formats,
        tasks and sections; an ``Arm`` for arms)."""
        if name not in self._items:
            self._load(name)
        try:
            return self._items[name]
        except KeyError:
            other = self.also_called.get(name.lower())
            hint = f" (did you mean {other!r}?)" if other else did_you_mean(name, self.names())
            known = ", ".join(self.names())
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}{hint}; known: {known}"
            ) from None

    def create(self: Registry[Callable[..., U]], name: str, *args: Any, **kwargs: Any) -> U:
        """An instance: ``get(name)(*args, **kwargs)``."""
        return self.get(name)(*args, **kwargs)

    def declared(self, name: str) -> object | None:
        """The ``MANIFEST`` of ``name``'s light module (None when the
        ``manifests`` table names none: read the plugin's own ``manifest``)."""
        module = self.manifests.get(name)
        if module is None:
            return None
        found: object = importlib.import_module(module).MANIFEST
        return found

    def names(self) -> list[str]:
        """Every known name, without importing any plugin."""
        return sorted({*self.builtins, *self._items, *self._plugins()})

    def distributions(self) -> dict[str, str]:
        """Name -> the distribution that ships each third-party plugin."""
        return {name: ep.dist.name for name, ep in self._plugins().items() if ep.dist is not None}

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._items or name in self.builtins
                                          or name in self._plugins())

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


def _origin(obj: object) -> str:
    """Where a plugin was defined: a module imported again (after its first
    import failed half-way) registers new objects of the same origin."""
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"
