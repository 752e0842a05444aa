"""Where a constraint sits in a rendered schema: the paper's begin / middle /
end buckets (first 30% of the tokens, next 40%, last 30%).

A constraint is located by differential rendering: the schema is rendered
once as is and once with that one keyword removed, and the span where the
two texts differ (common prefix and suffix stripped) is the text that states
the constraint, in any format: a JSON member, a YAML line, an XML element, a
Field(...) argument, an English sentence. Nothing depends on a renderer's
internals, and a renderer that omits a keyword yields None, not a guess.
The bucket is taken at the middle of that span, as a fraction of tokens.
(Where removal changes several line blocks, the last block is the
statement: see ``_changed_span``.)
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from conformbench.jsontypes import Schema

__all__ = ["Bucket", "Tokenizer", "bucket_of", "constraint_span", "position_bucket", "regex_tokens"]

Bucket = Literal["begin", "middle", "end"]
#: text -> tokens (only their number is used)
Tokenizer = Callable[[str], Sequence[object]]

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def regex_tokens(text: str) -> list[str]:
    """Words and single punctuation marks: a tokenizer-free approximation."""
    return _TOKEN.findall(text)


def bucket_of(fraction: float) -> Bucket:
    if fraction < 0.3:
        return "begin"
    return "middle" if fraction < 0.7 else "end"


def _unescape(segment: str) -> str:
    return segment.replace("~1", "/").replace("~0", "~")


def _document_path(schema: Any, schema_path: str) -> list[str | int] | None:
    """Where the keyword of a validator schema path lives in the document.
    python-jsonschema leaves ``$ref`` out of schema paths, so a segment
    missing at a node that has a local ``$ref`` continues at its target."""
    if not schema_path.startswith("/"):
        return None
    node: Any = schema
    out: list[str | int] = []
    for seg in (_unescape(s) for s in schema_path[1:].split("/")):
        while isinstance(node, dict) and seg not in node and isinstance(node.get("$ref"), str):
            target = _local_target(schema, node["$ref"])
            if target is None:
                return None
            out, node = target, _at(schema, target)
        if isinstance(node, dict) and seg in node:
            out.append(seg)
            node = node[seg]
        elif isinstance(node, list) and seg.isdigit() and int(seg) < len(node):
            out.append(int(seg))
            node = node[int(seg)]
        else:
            return None
    return out


def _local_target(schema: Any, ref: str) -> list[str | int] | None:
    if not ref.startswith("#"):
        return None
    out: list[str | int] = []
    node = schema
    for raw in [s for s in ref[1:].split("/") if s]:
        seg = _unescape(raw)
        if isinstance(node, list) and seg.isdigit():
            out.append(int(seg))
            node = node[int(seg)]
        elif isinstance(node, dict) and seg in node:
            out.append(seg)
            node = node[seg]
        else:
            return None
    return out


def _at(schema: Any, path: list[str | int]) -> Any:
    for seg in path:
        schema = schema[seg]
    return schema


def _without(schema: Any, path: list[str | int]) -> Any:
    """A copy of ``schema`` with the member at ``path`` removed (the last
    segment names a keyword of a subschema); key order kept."""
    if not path:
        return schema
    head, rest = path[0], path[1:]
    if isinstance(schema, dict):
        if not rest:
            return {k: v for k, v in schema.items() if k != head}
        return {k: (_without(v, rest) if k == head else v) for k, v in schema.items()}
    if isinstance(schema, list) and isinstance(head, int):
        return [(_without(v, rest) if i == head else v) for i, v in enumerate(schema)]
    return schema


def _trim(a: str, b: str) -> tuple[int, int]:
    """[start, end) of ``a`` left after stripping what it shares with ``b``
    at both ends."""
    start, limit = 0, min(len(a), len(b))
    while start < limit and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    return start, end_a


#: renderings that are code: imports and helper definitions come before the
#: line that uses them, so the last changed block is the statement
_CODE_FORMATS = frozenset({"python"})


def _changed_span(text: str, other: str, code: bool) -> tuple[int, int] | None:
    """The span of ``text`` that ``other`` (the rendering without the
    keyword) lacks. When several line blocks change, one is the statement
    and the others are consequences: in text and data renderings the
    statement comes first (later lines rephrase around it: 'If it is an
    object, ...'), in code it comes last (after the imports and helpers it
    needs)."""
    lines_a = text.splitlines(keepends=True)
    lines_b = other.splitlines(keepends=True)
    offsets = [0]
    for line in lines_a:
        offsets.append(offsets[-1] + len(line))
    matcher = difflib.SequenceMatcher(None, lines_a, lines_b, autojunk=False)
    hunks = [op for op in matcher.get_opcodes() if op[0] in ("replace", "delete")]
    if not hunks:
        return None
    _, i1, i2, j1, j2 = hunks[-1] if code else hunks[0]
    start, end = _trim("".join(lines_a[i1:i2]), "".join(lines_b[j1:j2]))
    if end <= start:  # the other text only inserts inside these lines
        return offsets[i1], offsets[i2]
    return offsets[i1] + start, offsets[i1] + end


@dataclass
class _Layout:
    """One rendering of one schema, with its located constraints."""

    schema: Schema
    schema_format: str
    render: Callable[[Schema], str]
    tokenize: Tokenizer
    text: str = ""
    total: int = 0
    found: dict[str, Bucket | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.text = self.render(self.schema)
        self.total = len(self.tokenize(self.text))

    def span(self, schema_path: str) -> tuple[int, int] | None:
        path = _document_path(self.schema, schema_path)
        if not path or isinstance(path[-1], int):
            return None
        other = self.render(_without(self.schema, path))
        return _changed_span(self.text, other, self.schema_format in _CODE_FORMATS)

    def bucket(self, schema_path: str) -> Bucket | None:
        if schema_path not in self.found:
            where = self.span(schema_path)
            if where is None or self.total == 0:
                self.found[schema_path] = None
            else:
                middle = (where[0] + where[1]) // 2
                self.found[schema_path] = bucket_of(len(self.tokenize(self.text[:middle])) / self.total)
        return self.found[schema_path]


@lru_cache(maxsize=16)
def _renderer(schema_format: str) -> Callable[[Schema], str]:
    from conformbench.formats.base import schema_formats

    return schema_formats.get(schema_format)().render


@lru_cache(maxsize=2048)
def _layout(canonical: str, schema_format: str, tokenize: Tokenizer) -> _Layout:
    return _Layout(json.loads(canonical), schema_format, _renderer(schema_format), tokenize)


def constraint_span(schema: Schema, schema_path: str, schema_format: str) -> tuple[int, int] | None:
    """Character span [start, end) of the constraint in the rendering."""
    return _layout(json.dumps(schema, ensure_ascii=False), schema_format, regex_tokens).span(schema_path)


def position_bucket(
    schema: Schema,
    schema_path: str,
    schema_format: str,
    tokenize: Tokenizer | None = None,
) -> Bucket | None:
    """The bucket of the constraint at ``schema_path`` (a violation's schema
    path) in the ``schema_format`` rendering; None when the rendering does
    not state it or the path does not name a keyword of the document.
    Cached per (schema, format, tokenizer)."""
    canonical = json.dumps(schema, ensure_ascii=False)
    return _layout(canonical, schema_format, tokenize or regex_tokens).bucket(schema_path)
