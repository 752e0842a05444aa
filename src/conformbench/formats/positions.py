"""Where a constraint sits in a rendered schema: the paper's begin / middle /
end buckets (first 30% of the tokens, next 40%, last 30%).

A constraint is located by differential rendering: the text that states it
is the span where the rendering differs from the rendering of the schema
with that one keyword removed (common prefix and suffix stripped), in any
format: a JSON member, a YAML line, an XML element, a Field(...) argument,
an English sentence. A renderer that omits a keyword yields None, not a
guess. The bucket is taken at the middle of that span, as a fraction of
tokens. (Where removal changes several line blocks, the first block is the
statement in text and data renderings, the last in code: see
``_changed_span``.)

The rendering without the keyword is not drawn whole: where the format has a
source map (``formats.source_map``) only the subschema that holds the
keyword is redrawn, and checked first by redrawing it as it is. The line
diff runs on a window around the change chosen so that difflib decides as
it would on the whole texts (``_window``). Each schema is rendered once per
format, so locating all the violations of one instance costs about one
rendering per format.
"""

from __future__ import annotations

import bisect
import difflib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from conformbench.errors import ConformbenchError
from conformbench.formats.source_map import Block, MapsSource, SourceMap
from conformbench.jsontypes import Schema

__all__ = [
    "Bucket",
    "Tokenizer",
    "bucket_of",
    "constraint_span",
    "position_bucket",
    "positions_of",
    "regex_tokens",
]

Bucket = Literal["begin", "middle", "end"]
#: text -> tokens (only their number is used)
Tokenizer = Callable[[str], Sequence[object]]

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_WORD = re.compile(r"\w", re.UNICODE)


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


def _at(schema: Any, path: Sequence[str | int]) -> Any:
    for seg in path:
        schema = schema[seg]
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


def _changed_span(lines_a: list[str], lines_b: list[str], code: bool) -> tuple[int, int] | None:
    """The span of ``lines_a`` (offsets into their concatenation) that
    ``lines_b`` (the rendering without the keyword) lacks. When several line
    blocks change, one is the statement and the others are consequences: in
    text and data renderings the statement comes first (later lines
    rephrase around it: 'If it is an object, ...'), in code it comes last
    (after the imports and helpers it needs)."""
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


#: least context kept on each side of a change (see _window)
_CONTEXT = 8


@dataclass(frozen=True)
class _Edit:
    """The rendering without the keyword, as lines ``a`` with ``a[first:end]``
    replaced by ``new``."""

    first: int
    end: int
    new: list[str]

    def size(self, a: list[str]) -> int:
        return len(a) - (self.end - self.first) + len(self.new)

    def at(self, a: list[str], j: int) -> str:
        if j < self.first:
            return a[j]
        if j < self.first + len(self.new):
            return self.new[j - self.first]
        return a[j - len(self.new) + self.end - self.first]


def _window(a: list[str], edit: _Edit) -> tuple[int, int, list[str], list[str]]:
    """(lo, la_cut, a_window, b_window): lines ``a`` and ``b`` (the edited
    lines) less a common head and a common tail, cut so that difflib makes
    the choices it makes on the whole lists. It takes the longest matching
    block first (ties: the earliest); on lists that differ only in one
    stretch, that is the common prefix or suffix, or a block inside the
    stretch. Keeping min(prefix, C) lines of prefix and min(suffix, C or
    C + 1) of suffix, with C longer than the stretch, keeps every one of
    those comparisons as it was."""
    la, lb = len(a), edit.size(a)
    head = edit.first
    while head < min(la, lb) and a[head] == edit.at(a, head):
        head += 1
    tail = la - edit.end
    while tail < min(la, lb) and a[la - 1 - tail] == edit.at(a, lb - 1 - tail):
        tail += 1
    stretch = max(la, lb) - min(head + tail, la, lb)  # the differing lines, longer side
    keep = max(_CONTEXT, stretch + 1)
    lo = max(0, head - keep)
    cut = max(0, tail - (keep if head >= tail else keep + 1))
    b_window = [edit.at(a, j) for j in range(lo, lb - cut)]
    return lo, la - cut, a[lo:la - cut], b_window


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


@dataclass
class _Layout:
    """One rendering of one schema, with its located constraints."""

    schema: Schema
    schema_format: str
    tokenize: Tokenizer
    text: str = ""
    total: int = 0
    found: dict[str, Bucket | None] = field(default_factory=dict)
    spans: dict[str, tuple[int, int] | None] = field(default_factory=dict)
    _format: Any = None
    _map: SourceMap | None = None
    _lines: list[str] = field(default_factory=list)
    _offsets: list[int] = field(default_factory=list)
    _checked: dict[tuple[str | int, ...], bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._format = _format(self.schema_format)
        self._map = self._format.source_map(self.schema) if isinstance(self._format, MapsSource) else None
        self.text = self._map.text if self._map is not None else self._format.render(self.schema)
        self._lines = _lines(self.text)
        self._offsets = [0]
        for line in self._lines:
            self._offsets.append(self._offsets[-1] + len(line))
        self.total = len(self.tokenize(self.text))

    def _line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._offsets, offset) - 1

    def _block(self, node_path: tuple[str | int, ...], node: Any) -> Block | None:
        """The source map's block of the subschema, if its redraw checks out."""
        block = self._map.find(node_path) if self._map is not None else None
        if block is None or block.exact:
            return block
        if node_path not in self._checked:
            try:
                self._checked[node_path] = block.redraw(node) == self.text[block.start:block.end]
            except ConformbenchError:
                self._checked[node_path] = False
        return block if self._checked[node_path] else None

    def _edit(self, path: list[str | int]) -> _Edit:
        node_path = tuple(path[:-1])
        node = _at(self.schema, node_path)
        less = {k: v for k, v in node.items() if k != path[-1]}
        block = self._block(node_path, node)
        if block is None:
            return _Edit(0, len(self._lines), _lines(self._format.render(_without(self.schema, path))))
        if not node_path:  # the root: its redraw is the whole rendering
            return _Edit(0, len(self._lines), _lines(block.redraw(less)))
        first, last = self._line_of(block.start), self._line_of(block.end - 1)
        ending = self.text[block.end:self._offsets[last + 1]]
        return _Edit(first, last + 1, _lines(block.redraw(less) + ending))

    def span(self, schema_path: str) -> tuple[int, int] | None:
        if schema_path not in self.spans:
            self.spans[schema_path] = self._span(schema_path)
        return self.spans[schema_path]

    def _span(self, schema_path: str) -> tuple[int, int] | None:
        path = _document_path(self.schema, schema_path)
        if not path or isinstance(path[-1], int) or not isinstance(_at(self.schema, path[:-1]), dict):
            return None
        lo, _, a_window, b_window = _window(self._lines, self._edit(path))
        where = _changed_span(a_window, b_window, self.schema_format in _CODE_FORMATS)
        if where is None:
            return None
        base = self._offsets[lo]
        return base + where[0], base + where[1]

    def bucket(self, schema_path: str) -> Bucket | None:
        return self.buckets([schema_path])[schema_path]

    def buckets(self, schema_paths: Sequence[str]) -> dict[str, Bucket | None]:
        """Buckets of many constraints; the tokens before their middles are
        counted in one pass over the text."""
        todo = [p for p in dict.fromkeys(schema_paths) if p not in self.found]
        middles: dict[str, int] = {}
        for path in todo:
            where = self.span(path)
            if where is None or self.total == 0:
                self.found[path] = None
            else:
                middles[path] = (where[0] + where[1]) // 2
        counts = self._tokens_before(sorted(set(middles.values())))
        for path, middle in middles.items():
            self.found[path] = bucket_of(counts[middle] / self.total)
        return {p: self.found[p] for p in schema_paths}

    def _tokens_before(self, offsets: list[int]) -> dict[int, int]:
        """Tokens of ``text[:offset]`` for sorted offsets. With the regex
        tokenizer, one pass: the tokens between consecutive offsets are
        added up, less one where a word runs across an offset (the prefix
        counts its cut-off start as one token, so does the next stretch)."""
        if self.tokenize is not regex_tokens:
            return {offset: len(self.tokenize(self.text[:offset])) for offset in offsets}
        out: dict[int, int] = {}
        count, last = 0, 0
        for offset in offsets:
            count += len(_TOKEN.findall(self.text, last, offset))
            if 0 < last < len(self.text) and _WORD.match(self.text, last - 1) and _WORD.match(self.text, last):
                count -= 1
            out[offset] = count
            last = offset
        return out


#: renderings that are code: imports and helper definitions come before the
#: line that uses them, so the last changed block is the statement
_CODE_FORMATS = frozenset({"python"})


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


@lru_cache(maxsize=16)
def _format(schema_format: str) -> Any:
    from conformbench.formats.base import schema_formats

    return schema_formats.get(schema_format)()


@lru_cache(maxsize=2048)
def _layout(canonical: str, schema_format: str, tokenize: Tokenizer) -> _Layout:
    return _Layout(json.loads(canonical), schema_format, tokenize)


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


def positions_of(
    schema: Schema, schema_paths: Sequence[str], schema_formats: Sequence[str],
    tokenize: Tokenizer | None = None,
) -> dict[str, dict[str, Bucket | None]]:
    """Buckets of many constraints in several renderings: schema path ->
    format -> bucket (None also where a format cannot render the schema)."""
    canonical = json.dumps(schema, ensure_ascii=False)
    out: dict[str, dict[str, Bucket | None]] = {path: {} for path in schema_paths}
    for fmt in schema_formats:
        try:
            layout = _layout(canonical, fmt, tokenize or regex_tokens)
        except ConformbenchError:  # a format that cannot render this schema
            layout = None
        found = _safe_buckets(layout, schema_paths)
        for path in schema_paths:
            out[path][fmt] = found.get(path)
    return out


def _safe_buckets(layout: _Layout | None, schema_paths: Sequence[str]) -> dict[str, Bucket | None]:
    if layout is None:
        return {}
    try:
        return layout.buckets(schema_paths)
    except ConformbenchError:  # e.g. the schema without a keyword cannot be rendered
        out: dict[str, Bucket | None] = {}
        for path in schema_paths:
            try:
                out[path] = layout.bucket(path)
            except ConformbenchError:
                out[path] = None
        return out
