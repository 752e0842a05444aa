"""Python: the schema as Pydantic v2 source (rules in ``python_codegen``).

``load_model`` executes source text. It exists only to check *our own*
generated source (tests, equivalence checks against the reference
validator); never call it on model output or any other untrusted text.
"""

from __future__ import annotations

import itertools
import sys
import types
from typing import ClassVar

from pydantic import BaseModel

from conformbench.formats.base import schema_formats
from conformbench.formats.python_codegen import render_pydantic
from conformbench.jsontypes import Schema

__all__ = ["PythonSchemaFormat", "load_model"]


@schema_formats.register("python")
class PythonSchemaFormat:
    """Pydantic v2 models whose top-level class ``Schema`` accepts exactly
    the values the JSON Schema accepts. Schemas with keywords outside the
    supported set raise UnrenderableSchemaError (an excluded item)."""

    name: ClassVar[str]
    display_name: ClassVar[str] = "Python"
    order: ClassVar[int] = 3

    def render(self, schema: Schema | bool) -> str:
        return render_pydantic(schema)


_MODULE_IDS = itertools.count()


def load_model(source: str) -> type[BaseModel]:
    """Execute generated source in a fresh module and return its ``Schema``
    class. Executes code: for our own generated source only."""
    module = types.ModuleType(f"conformbench_generated_model_{next(_MODULE_IDS)}")
    # dont_inherit: this module's `from __future__ import annotations` must not
    # turn the generated annotations into strings nothing could resolve later
    code = compile(source, "<generated pydantic model>", "exec", dont_inherit=True)
    # pydantic (2.14+) looks a module-level generic model's module up in
    # sys.modules while the class is created, so the module is registered
    # for the duration of the execution only
    sys.modules[module.__name__] = module
    try:
        exec(code, module.__dict__)  # noqa: S102 - our own generated source only
    finally:
        del sys.modules[module.__name__]
    model = module.__dict__.get("Schema")
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise ValueError("the source defines no pydantic class named Schema")  # noqa: TRY004 - callers catch ValueError
    return model
