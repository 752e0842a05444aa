"""The options a backend takes in its model's ``extra`` table, declared once
in the backend's manifest (``BackendManifest.options``, backends/manifest.py),
read without importing the backend.

``conformbench run``'s flags (a help panel per backend), the API's keywords
(``conformbench.run(batched=4)``) and the checks of a spec file's ``extra``
tables are all built from these declarations: a backend's new option, or a
new backend's options, need no edit in the runner or the CLI. An option
given for a model whose backend does not declare it is refused, naming the
backends that do."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from conformbench.backends.base import backends, manifest_of
from conformbench.backends.manifest import BackendOption
from conformbench.errors import UsageError

__all__ = ["BackendOption", "check_backend_options", "declared_options", "operational_keys", "options_of"]

def options_of(backend: str) -> tuple[BackendOption, ...]:
    """The options ``backend`` declares (none for a backend that declares none)."""
    return manifest_of(backend).options


def operational_keys(backend: str) -> tuple[str, ...]:
    """The ``extra`` keys of ``backend``'s options declared ``operational``
    (none for a backend not installed: a replay's header may name one)."""
    if backend not in backends:
        return ()
    return tuple(option.name for option in options_of(backend) if option.operational)


def declared_options() -> dict[str, list[tuple[str, BackendOption]]]:
    """Every declared option by its keyword, with the backends declaring it
    (a keyword two backends share is one flag; each checks its own values)."""
    found: dict[str, list[tuple[str, BackendOption]]] = {}
    for backend in backends.names():
        for option in options_of(backend):
            found.setdefault(option.keyword, []).append((backend, option))
    return found


def check_backend_options(backend: str, given: dict[str, Any], named: Callable[[BackendOption], str],
                          by: Literal["keyword", "name"] = "keyword") -> dict[str, Any]:
    """``given`` (option keyword, or ``by="name"`` its ``extra`` key -> value)
    checked against ``backend``'s declarations, returned by ``extra`` key; an
    option it does not declare is refused, naming the backends that do.
    ``named`` says what an option is called where it was given (its flag on
    the command line, ``extra.NAME`` in a spec)."""
    own = {option.keyword if by == "keyword" else option.name: option for option in options_of(backend)}
    foreign = [key for key in given if key not in own]
    if foreign:
        declared = declared_options()
        owners = sorted({b for key in foreign for b, _ in declared.get(key, [])})
        names = ", ".join(named(declared[key][0][1]) if key in declared else key for key in foreign)
        verb = "applies" if len(foreign) == 1 else "apply"
        if not owners:
            raise UsageError(f"{names}: no backend takes this option")
        where = " or ".join(f"the {b} backend (--backend {b})" for b in owners)
        raise UsageError(f"{names} {verb} to {where}, not {backend!r}")
    return {own[key].name: own[key].validate(value, named(own[key])) for key, value in given.items()}
