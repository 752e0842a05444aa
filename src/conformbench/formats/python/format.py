"""Python: the schema as Pydantic v2 source, written as people write models
(rules in ``formats.python.codegen``).

``python_rendering`` returns the source and the keywords it does not state
exactly (``InexactKeyword``: keyword, schema path, reason);
``python_inexact_keywords`` lists their schema paths, for dataset records.

``load_model`` executes source text. It exists only to check *our own*
generated source (tests, equivalence checks against the reference
validator); never call it on model output or any other untrusted text.
"""

from __future__ import annotations

import ast
import itertools
import sys
import types
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel

from conformbench.formats.base import UnrenderableSchemaError, schema_formats
from conformbench.formats.python.codegen import TypeBuilder
from conformbench.formats.python.module import assemble
from conformbench.formats.python.refs import Resolver
from conformbench.formats.python.source import Names, root_class_name
from conformbench.formats.python.typed import InexactKeyword
from conformbench.jsontypes import Schema

__all__ = [
    "InexactKeyword",
    "PythonRendering",
    "PythonSchemaFormat",
    "load_model",
    "python_inexact_keywords",
    "python_rendering",
    "render_pydantic",
    "root_class",
]


@dataclass(frozen=True)
class PythonRendering:
    """Generated source (class ``root`` validates JSON text like the
    schema) and the keywords whose rendering is not exact. ``root`` is the
    schema's ``title`` as a class name, ``Schema`` without one."""

    text: str
    inexact: tuple[InexactKeyword, ...]
    root: str = "Schema"


def python_rendering(schema: Schema | bool) -> PythonRendering:
    """Render ``schema``. Field names never shadow a class of the module: a
    clash found after rendering renames the field and renders again."""
    reserved: set[str] = set()
    root = root_class_name(schema)
    while True:
        builder = TypeBuilder(Resolver(schema), Names(reserved=set(reserved), root=root))
        try:
            text = assemble(builder, schema)
        except RecursionError:
            raise UnrenderableSchemaError("python", "the schema is nested too deeply to render") from None
        clashes = builder.names.fields & set(builder.names.classes.values())
        if not clashes or clashes <= reserved:
            return PythonRendering(text, tuple(builder.inexact), root)
        reserved |= clashes


def render_pydantic(schema: Any) -> str:
    """Pydantic v2 module source whose root class (named from the title,
    else ``Schema``) validates like ``schema``."""
    return python_rendering(schema).text


def python_inexact_keywords(schema: Schema | bool) -> list[str]:
    """JSON pointers of the keywords the Pydantic rendering does not state
    exactly (``/properties/price/multipleOf``), in document order of discovery."""
    return [item.schema_path for item in python_rendering(schema).inexact]


@schema_formats.register("python")
class PythonSchemaFormat:
    """Pydantic v2 models; the top-level class is named from the schema's
    ``title`` (``Schema`` without one)."""

    name: ClassVar[str]
    display_name: ClassVar[str] = "Python"
    order: ClassVar[int] = 3

    def render(self, schema: Schema | bool) -> str:
        return render_pydantic(schema)


_MODULE_IDS = itertools.count()


def root_class(source: str) -> str:
    """The name of the module's last top-level class: the root, which the
    renderer writes after every class it uses ("" when there is none)."""
    classes = [node.name for node in ast.parse(source).body if isinstance(node, ast.ClassDef)]
    return classes[-1] if classes else ""


def load_model(source: str, root: str | None = None) -> type[BaseModel]:
    """Execute generated source in a fresh module and return its root class
    (``root``, else the last class defined: ``Schema`` or the title's name).
    Executes code: for our own generated source only."""
    name = root_class(source) if root is None else root
    module = types.ModuleType(f"conformbench_generated_model_{next(_MODULE_IDS)}")
    # dont_inherit: this module's `from __future__ import annotations` must not
    # turn the generated annotations into strings nothing could resolve later
    code = compile(source, "<generated pydantic model>", "exec", dont_inherit=True)
    # pydantic looks a model's module up in sys.modules while the class is
    # created, so the module is registered for the duration of the execution
    sys.modules[module.__name__] = module
    try:
        exec(code, module.__dict__)  # noqa: S102 - our own generated source only
    finally:
        del sys.modules[module.__name__]
    model = module.__dict__.get(name) if name else None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise ValueError(f"the source defines no pydantic class named {name or 'Schema'}")  # noqa: TRY004 - callers catch ValueError
    return model
