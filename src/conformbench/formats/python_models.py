"""Object schemas as ``BaseModel`` classes, and the generated module's
layout (imports, helpers, classes, the ``Schema`` class)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from conformbench.formats.python_helpers import HELPERS, IMPORTS, ordered
from conformbench.formats.python_source import literal, regex_literal

if TYPE_CHECKING:
    from conformbench.formats.python_codegen import TypeBuilder

__all__ = ["assemble", "build_model"]

_ROOT_ANNOTATIONS = (
    "$schema", "$id", "$comment", "title", "description", "default", "examples",
    "deprecated", "readOnly", "writeOnly",
)
_HEADER = '''"""Pydantic v2 models of a JSON Schema: Schema.model_validate(data) accepts
exactly the values the JSON Schema accepts."""'''


def _field_line(b: TypeBuilder, key: str, type_expr: str, required: bool, taken: set[str]) -> str:
    name = b.names.field_name(key, taken)
    args = [] if required else ["MISSING"]
    if name != key:
        args.append(f"alias={literal(key)}")
    annotation = type_expr if required else f"{type_expr} | MISSING"
    if not args:
        return f"    {name}: {annotation}"
    if args == ["MISSING"]:
        return f"    {name}: {annotation} = MISSING"
    return f"    {name}: {annotation} = Field({', '.join(args)})"


def _object_checks(b: TypeBuilder, schema: dict[str, Any], hint: str) -> list[str]:
    """Statements of the before-validator, one per object rule Field can't state."""
    checks = []
    patterns: dict[str, Any] = schema.get("patternProperties", {})
    if patterns:
        for pattern in patterns:
            b.check_regex(pattern)
        pairs = ", ".join(
            f"{regex_literal(p)}: {b.type_expr(s, hint + 'Pattern')}" for p, s in patterns.items()
        )
        checks.append(f"{b.use('check_pattern_properties')}(data, {{{pairs}}})")
    extra = schema.get("additionalProperties", True)
    if extra is not True and (patterns or extra is not False):
        known = tuple(schema.get("properties", {}))
        allowed = "False" if extra is False else b.type_expr(extra, hint + "Extra")
        pats = "(" + "".join(regex_literal(p) + ", " for p in patterns) + ")"
        checks.append(
            f"{b.use('check_additional_properties')}(data, known={literal(known)}, "
            f"patterns={pats}, allowed={allowed})"
        )
    if "minProperties" in schema or "maxProperties" in schema:
        bounds = [f"min_count={int(schema['minProperties'])}"] if "minProperties" in schema else []
        bounds += [f"max_count={int(schema['maxProperties'])}"] if "maxProperties" in schema else []
        checks.append(f"{b.use('check_property_count')}(data, {', '.join(bounds)})")
    if schema.get("dependentRequired"):
        checks.append(f"{b.use('check_dependent_required')}(data, {literal(schema['dependentRequired'])})")
    return checks


def _config(schema: dict[str, Any], body: str) -> str | None:
    items = []
    if schema.get("additionalProperties") is False and not schema.get("patternProperties"):
        items.append('extra="forbid"')
    if "pattern=" in body:
        items.append('regex_engine="python-re"')
    return f"    model_config = ConfigDict({', '.join(items)})" if items else None


def build_model(b: TypeBuilder, schema: dict[str, Any], hint: str, name: str | None = None) -> str:
    """Add a BaseModel class for the object schema; returns the class name."""
    fields: list[str] = []
    taken: set[str] = set()
    required = list(dict.fromkeys(schema.get("required", [])))
    properties: dict[str, Any] = schema.get("properties", {})
    for key, sub in properties.items():
        fields.append(_field_line(b, key, b.type_expr(sub, key), key in required, taken))
    for key in required:
        if key not in properties:
            fields.append(_field_line(b, key, "Any", True, taken))
    checks = _object_checks(b, schema, hint)
    name = name or b.names.class_name(hint)
    preamble = [_docstring(schema) if name == "Schema" else None, _config(schema, "\n".join(fields))]
    sections = [
        [line for line in preamble if line],
        fields,
        _validator(checks) if checks else [],
    ]
    body = "\n\n".join("\n".join(section) for section in sections if section) or "    pass"
    b.classes.append(f"class {name}(BaseModel):\n{body}")
    return name


def _validator(checks: list[str]) -> list[str]:
    return [
        '    @model_validator(mode="before")',
        "    @classmethod",
        "    def check_object(cls, data: Any) -> Any:",
        "        if isinstance(data, dict):",
        *(f"            {check}" for check in checks),
        "        return data",
    ]


def _docstring(schema: dict[str, Any]) -> str | None:
    text = "\n\n".join(str(schema[k]) for k in ("title", "description") if k in schema)
    if not text:
        return None
    return "    " + (json.dumps(text, ensure_ascii=False) if '"""' in text or "\\" in text else f'"""{text}"""')


def _root_comments(schema: Any) -> list[str]:
    if not isinstance(schema, dict):
        return []
    skip = ("title", "description") if _is_model_root(schema) else ()
    keys = [k for k in _ROOT_ANNOTATIONS if k in schema and k not in skip]
    return [f"# {k}: {json.dumps(schema[k], ensure_ascii=False)}" for k in keys]


def _is_model_root(schema: Any) -> bool:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return False
    if "enum" in schema or "const" in schema:
        return False
    return any(k in schema for k in ("properties", "required", "patternProperties", "dependentRequired"))


def _root(b: TypeBuilder, schema: Any) -> None:
    if _is_model_root(schema):
        b.check_keywords(schema)
        build_model(b, schema, "Schema", name="Schema")
        return
    bare = {k: v for k, v in schema.items() if k not in _ROOT_ANNOTATIONS} \
        if isinstance(schema, dict) else schema
    expr = b.type_expr(bare, "Schema")
    lines = [f"class Schema(RootModel[{expr}]):"]
    if "pattern=" in expr:
        lines.append('    model_config = ConfigDict(regex_engine="python-re")')
    else:
        lines.append("    pass")
    b.classes.append("\n".join(lines))


def _imports(body: str) -> list[str]:
    out = []
    if re.search(r"\bre\.", body):
        out.append("import re")
    for module, names in IMPORTS.items():
        used = [n for n in names if re.search(rf"\b{n}\b", body)]
        if used:
            out.append(f"from {module} import {', '.join(used)}")
    return out


def assemble(b: TypeBuilder, schema: Any) -> str:
    """The whole module: header, imports, helpers, classes (children first)."""
    _root(b, schema)
    helpers = [HELPERS[name].source.strip() for name in ordered(b.helpers)]
    blocks = helpers + b.classes
    body = "\n\n\n".join(blocks)
    head = "\n".join([_HEADER, *_root_comments(schema)])
    return f"{head}\n\n{chr(10).join(_imports(body))}\n\n\n{body}\n"
