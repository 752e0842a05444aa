"""Plain-English rendering of a JSON Schema.

Rule-based and deterministic. Every constraint is stated with its value,
and each sentence names the keyword it comes from in parentheses, so a
reader (or a test) can check that nothing was left out. Nested schemas are
indented bullets. Keywords of JSON Schema outside the usual vocabulary are
still stated (``keyword: value``); keys JSON Schema does not define at all
are annotations that constrain nothing, left out and named in one closing
note (see ``formats.nl.stated_keys``). Drafts 4 to 7 forms (``items`` as a list with
``additionalItems``, ``dependencies``, boolean exclusive bounds) read as
their 2020-12 counterparts do.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, ClassVar

from conformbench.formats.base import schema_formats
from conformbench.formats.nl.phrases import (
    ARRAY_HEAD,
    NUMBER_HEAD,
    OBJECT_HEAD,
    STRING_HEAD,
    Lines,
    head_phrases,
    lit,
    other_lines,
    type_phrase,
)
from conformbench.formats.nl.stated_keys import annotation_note, stated_unknowns
from conformbench.formats.source_map import Block, DocPath, SourceMap, blocks_by_identity
from conformbench.jsontypes import Schema

__all__ = ["NaturalLanguageSchemaFormat", "describe"]

#: while a source map is drawn: bullet line text -> (subschema, label, lines below it)
_BULLETS: ContextVar[dict[int, tuple[str, Any, str, int]] | None] = ContextVar("nl_bullets", default=None)

_CATEGORIES = (
    ("number", NUMBER_HEAD, {"integer", "number"}, "a number"),
    ("string", STRING_HEAD, {"string"}, "a string"),
    ("array", ARRAY_HEAD, {"array"}, "an array"),
    ("object", OBJECT_HEAD, {"object"}, "an object"),
)


def _declared(schema: dict[str, Any]) -> set[str] | None:
    value = schema.get("type")
    if isinstance(value, str):
        return {value}
    if isinstance(value, list):
        return {str(v) for v in value}
    return None


def _only(schema: dict[str, Any], kinds: set[str]) -> bool:
    """Whether the schema's declared types all belong to one category, so
    that category's keywords need no 'if it is ...' qualifier."""
    declared = _declared(schema)
    return declared is not None and declared <= kinds


def _lead(lead: str, text: str) -> str:
    """Prefix a sentence with a condition, lower-casing its first letter."""
    return lead + text[0].lower() + text[1:] if lead else text


def _head(schema: dict[str, Any]) -> str:
    parts = [p for p in [type_phrase(schema)] if p]
    conditions = []
    if "const" in schema:
        parts.append(f"exactly {lit(schema['const'])} (const)")
    if "enum" in schema:
        options = ", ".join(lit(v) for v in schema["enum"]) if isinstance(schema["enum"], list) else lit(schema["enum"])
        parts.append(f"one of {options} (enum)")
    for _category, keywords, kinds, article in _CATEGORIES:
        phrases = head_phrases(schema, keywords)
        if not phrases:
            continue
        if _only(schema, kinds):
            parts.extend(phrases)
        else:
            conditions.append(f"if it is {article}: " + ", ".join(phrases))
    return "; ".join([", ".join(parts)] + conditions) if parts else "; ".join(conditions)


def _nested(label: str, schema: Any, indent: int) -> Lines:
    head, lines = describe(schema)
    bullet = f"- {label}: {head}."
    recording = _BULLETS.get()
    if recording is not None and isinstance(schema, dict):
        recording[id(bullet)] = (bullet, schema, label, len(lines))
    return [(indent, bullet)] + [(indent + 1 + rel, text) for rel, text in lines]


def _array_lines(schema: dict[str, Any], indent: int) -> Lines:
    out: Lines = []
    lead = "" if _only(schema, {"array"}) else "If it is an array, "
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list):
        first = "item" if len(prefix) == 1 else f"{len(prefix)} items, in order"
        out.append((indent, "- " + _lead(lead, f"Its first {first} (prefixItems):")))
        for i, sub in enumerate(prefix):
            out += _nested(f"Item {i + 1}", sub, indent + 1)
    items = schema.get("items")
    if isinstance(items, list):  # drafts before 2020-12: a tuple, then additionalItems
        first = "item" if len(items) == 1 else f"{len(items)} items, in order"
        out.append((indent, "- " + _lead(lead, f"Its first {first} (items):")))
        for i, sub in enumerate(items):
            out += _nested(f"Item {i + 1}", sub, indent + 1)
    elif "items" in schema:
        which = "Every item after those" if isinstance(prefix, list) else "Every item"
        out += _nested(_lead(lead, f"{which} (items)"), items, indent)
    if "additionalItems" in schema:
        out += _additional_items(schema, indent, lead)
    if "contains" in schema:
        low, high = schema.get("minContains"), schema.get("maxContains")
        count = f"At least {lit(low) if low is not None else 1}"
        tags = "contains" + (", minContains" if low is not None else "")
        if high is not None:
            count += f" and at most {lit(high)}"
            tags += ", maxContains"
        out += _nested(_lead(lead, f"{count} of its items ({tags}) must be"), schema["contains"], indent)
    for key in ("minContains", "maxContains"):
        if key in schema and "contains" not in schema:
            out.append((indent, f"- {key}: {lit(schema[key])} ({key}; no effect without contains)."))
    return out


def _additional_items(schema: dict[str, Any], indent: int, lead: str) -> Lines:
    extra = schema["additionalItems"]
    if not isinstance(schema.get("items"), list):
        return [(indent, f"- additionalItems: {lit(extra)} (additionalItems; no effect unless items is a list).")]
    if extra is False:
        return [(indent, "- " + _lead(lead, "No items are allowed after those (additionalItems)."))]
    return _nested(_lead(lead, "Every item after those (additionalItems)"), extra, indent)


def _object_lines(schema: dict[str, Any], indent: int) -> Lines:
    out: Lines = []
    lead = "" if _only(schema, {"object"}) else "If it is an object, "
    props = schema.get("properties")
    required = schema.get("required", [])
    required = required if isinstance(required, list) else []
    if isinstance(props, dict):
        text = "Its properties (properties):" if props else "It names no properties (properties)."
        out.append((indent, "- " + _lead(lead, text)))
        for key, sub in props.items():
            status = "required" if key in required else "optional"
            out += _nested(f"{lit(key)} ({status})", sub, indent + 1)
    extra = [k for k in required if not isinstance(props, dict) or k not in props]
    if "required" in schema:
        if extra:
            names = ", ".join(lit(k) for k in extra)
            text = f"These properties must be present, with any value (required): {names}."
            out.append((indent, "- " + _lead(lead, text)))
        elif not required:
            out.append((indent, "- " + _lead(lead, "No property is required (required).")))
    out += _pattern_lines(schema, indent, lead)
    out += _dependent_lines(schema, indent, lead)
    return out


def _pattern_lines(schema: dict[str, Any], indent: int, lead: str) -> Lines:
    out: Lines = []
    patterns = schema.get("patternProperties")
    if isinstance(patterns, dict):
        for pattern, sub in patterns.items():
            label = f"Every property whose name matches {lit(pattern, regex=True)} (patternProperties) must be"
            out += _nested(_lead(lead, label), sub, indent)
    if "additionalProperties" in schema:
        extra = schema["additionalProperties"]
        others = "Properties not listed above" if ("properties" in schema or patterns) else "Properties"
        if extra is False:
            out.append((indent, "- " + _lead(lead, f"{others} are not allowed (additionalProperties).")))
        elif extra is True:
            out.append((indent, "- " + _lead(lead, f"{others} are allowed, with any value (additionalProperties).")))
        else:
            label = f"{others} are allowed, and each must be (additionalProperties)"
            out += _nested(_lead(lead, label), extra, indent)
    return out


def _dependent_lines(schema: dict[str, Any], indent: int, lead: str) -> Lines:
    rules = schema.get("dependentRequired")
    if not isinstance(rules, dict):
        return []
    if not rules:
        return [(indent, "- " + _lead(lead, "No property depends on another (dependentRequired)."))]
    out: Lines = []
    for key, needed in rules.items():
        names = ", ".join(lit(n) for n in needed) if needed else "nothing else"
        text = f"If {lit(key)} is present, these must also be present (dependentRequired): {names}."
        out.append((indent, "- " + _lead(lead, text)))
    return out


def describe(schema: Any) -> tuple[str, Lines]:
    """A phrase for the value (no final period) and indented detail lines
    (indent is relative to the phrase's own bullet)."""
    if schema is True:
        return "any value (the schema is true)", []
    if schema is False:
        return "no value at all is allowed (the schema is false)", []
    if not isinstance(schema, dict):
        return f"the schema {lit(schema)}", []
    lines = other_lines(schema, 0, _nested, annotations=True)
    lines += _array_lines(schema, 0) + _object_lines(schema, 0)
    lines += other_lines(schema, 0, _nested, annotations=False)
    return _head(schema), lines


@schema_formats.register("nl")
class NaturalLanguageSchemaFormat:
    """English description of every constraint (see module docstring)."""

    name: ClassVar[str]
    display_name: ClassVar[str] = "natural language"
    order: ClassVar[int] = 4

    def render(self, schema: Schema | bool) -> str:
        with stated_unknowns(schema):
            head, lines = describe(schema)
        return _join(head, lines, annotation_note(schema))

    def source_map(self, schema: Schema | bool) -> SourceMap:
        """Every subschema is a bullet and the lines below it, written by
        ``_nested`` from the subschema, its label and its indent alone."""
        bullets: dict[int, tuple[str, Any, str, int]] = {}
        token = _BULLETS.set(bullets)
        try:
            with stated_unknowns(schema):
                head, lines = describe(schema)
        finally:
            _BULLETS.reset(token)
        text = _join(head, lines, annotation_note(schema))
        offset = len(_first_line(head)) + 1
        starts = []
        for indent, line in lines:
            starts.append(offset)
            offset += 2 * indent + len(line) + 1
        starts.append(offset)
        found: dict[int, tuple[int, int, str, int]] = {}
        for i, (indent, line) in enumerate(lines):
            if id(line) in bullets and bullets[id(line)][0] is line:
                _, sub, label, below = bullets[id(line)]
                found[id(sub)] = (starts[i], starts[i + 1 + below] - 1, label, indent)
        by_path = blocks_by_identity(schema, found)

        def find(path: DocPath) -> Block | None:
            if not path:
                return Block(0, len(text), self.render, exact=True)
            if path not in by_path:
                return None
            start, end, label, indent = by_path[path]

            def redraw(value: Any) -> str:
                with stated_unknowns(schema):
                    return "\n".join("  " * ind + line for ind, line in _nested(label, value, indent))

            return Block(start, end, redraw)

        return SourceMap(text, find)


def _first_line(head: str) -> str:
    verb = "can be" if head.startswith("any value") else "must be"
    return f"The value {verb} {head}."


def _join(head: str, lines: Lines, note: str | None = None) -> str:
    text = [_first_line(head)] + ["  " * indent + line for indent, line in lines]
    return "\n".join(text if note is None else [*text, note])

