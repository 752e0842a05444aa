"""The generated module's layout: imports, classes (children first), the
root class (a model, a subclass of the root's definition, or a RootModel;
named from the schema's ``title``, else ``Schema``), and ``model_rebuild()``
calls for forward references. The root's *hint* stays ``Schema`` whatever its
name, so nested classes are named as they are without a title."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from conformbench.formats.python.kinds import is_model, split_conditions
from conformbench.formats.python.models import bare_annotation, config_line, docstring, quoted, validator_lines
from conformbench.formats.python.refs import ANNOTATIONS, expand
from conformbench.formats.python.source import ROOT_FALLBACK, Imports, needs_strict
from conformbench.formats.python.typed import Typed

if TYPE_CHECKING:
    from conformbench.formats.python.type_builder import Builder

__all__ = ["assemble"]


def _root_rules(typed: Typed) -> list[str]:
    return validator_lines("root", typed)[:-1] + ["        return v"] if typed.rules else []


def _root_model(b: Builder, schema: Any) -> None:
    root = b.names.root
    b.class_keys["#"] = root
    b.current.append(root)
    b.patterns.append(False)
    try:
        typed = b.typed(schema, (), ROOT_FALLBACK)
    finally:
        b.current.pop()
        pattern = b.patterns.pop()
    if typed.forward and root not in b.rebuilds:
        b.rebuilds.append(root)
    inner = bare_annotation(typed)
    param = quoted(inner) if typed.forward else inner
    doc = docstring(schema) if isinstance(schema, dict) else None
    lines = [f"class {root}(RootModel[{param}]):", doc, config_line(None, pattern, needs_strict(inner))]
    if typed.args:
        lines.append(f"    root: {param} = Field({', '.join(typed.args)})")
    kept = [line for line in lines if line]
    rules = _root_rules(typed)
    if len(kept) == 1:
        kept += rules or ["    pass"]
    elif rules:
        kept += ["", *rules]
    b.classes.append("\n".join(kept))


def _root_ref(b: Builder, schema: Any) -> bool:
    """A root that only points at an object definition: the root class subclasses it."""
    if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)
            and not set(schema) - ANNOTATIONS - {"$ref"}):
        return False
    target = b.resolver.resolve(schema["$ref"])
    if target is None or not target[1] or not isinstance(target[0], dict):
        return False
    if not is_model(expand(target[0], b.resolver)[0]):
        return False
    typed = b.ref(schema["$ref"], (), ROOT_FALLBACK)
    b.classes.append(f"class {b.names.root}({typed.base}):\n    pass")
    return True


def assemble(b: Builder, schema: Any) -> str:
    """The whole module: imports, classes (children first), rebuilds."""
    b.names.classes["#"] = b.names.root
    expanded = schema
    if isinstance(schema, dict):
        expanded = split_conditions(expand(b.dialect.clean(schema), b.resolver)[0])[0]
    if is_model(expanded) and "anyOf" not in expanded and "oneOf" not in expanded:
        b.typed(schema, (), ROOT_FALLBACK)
    elif not _root_ref(b, schema):
        _root_model(b, schema)
    rebuilds = [f"{name}.model_rebuild()" for name in b.rebuilds]
    body = "\n\n\n".join(b.classes) + ("\n\n\n" + "\n".join(rebuilds) if rebuilds else "")
    return "\n".join(Imports.lines(body)) + "\n\n\n" + body + "\n"

