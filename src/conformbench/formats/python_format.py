"""Python: the schema as Pydantic v2 source (rules in ``python_codegen``).

``load_model`` executes source text. It exists only to check *our own*
generated source (tests, equivalence checks against the reference
validator); never call it on model output or any other untrusted text.
"""

from __future__ import annotations

from typing import Any

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

    name = "python"

    def render(self, schema: Schema | bool) -> str:
        return render_pydantic(schema)


def load_model(source: str) -> type[BaseModel]:
    """Execute generated source in a fresh namespace and return its
    ``Schema`` class. Executes code: for our own generated source only."""
    namespace: dict[str, Any] = {"__name__": "conformbench_generated_model"}
    # dont_inherit: this module's `from __future__ import annotations` must not
    # turn the generated annotations into strings nothing could resolve later
    code = compile(source, "<generated pydantic model>", "exec", dont_inherit=True)
    exec(code, namespace)  # noqa: S102 - our own generated source only
    model = namespace.get("Schema")
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise ValueError("the source defines no pydantic class named Schema")
    return model
