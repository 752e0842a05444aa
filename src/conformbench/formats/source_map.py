"""Source maps of schema renderings: where each subschema (an object of the
document) is written in the text, and how that stretch of text would read
were the subschema different.

A schema format may offer ``source_map(schema) -> SourceMap | None`` (it
then is a ``MapsSource``). For a
subschema at document path ``p`` the map gives a Block: the character span
of whole lines that state it, and ``redraw(value)``, the text those lines
would have if the subschema were ``value`` instead (the rest of the
rendering unchanged). ``positions`` uses it to find a keyword without
rendering the whole schema again per keyword. Renderings whose text of a
subschema depends on more than the subschema (the Pydantic code: classes,
imports and helpers are shared) have no map.

Built here: the JSON map (an emitter that writes exactly what ``json.dumps``
writes, keeping spans) and the YAML map (libyaml's composer gives the span
of every node of the rendered text; a subschema is redrawn by dumping it
inside a skeleton of its ancestors). The XML and English renderers record
their own spans (``xml.codec.encode`` and ``nl.format.render_with_blocks``)
and use ``blocks_by_identity`` to key them by path.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from conformbench.jsontypes import JSONValue

__all__ = [
    "Block",
    "DocPath",
    "MapsSource",
    "SourceMap",
    "blocks_by_identity",
    "json_source_map",
    "line_bounds",
    "yaml_source_map",
]

DocPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Block:
    #: [start, end): from the start of the first line that states the
    #: subschema to the end of its last line (line terminator excluded)
    start: int
    end: int
    #: the text of these lines for another value of the subschema
    redraw: Callable[[Any], str]
    #: redraw is the renderer itself (nothing to check it against)
    exact: bool = False


@dataclass(frozen=True)
class SourceMap:
    text: str
    #: the block of the subschema at a document path (None: not mapped)
    find: Callable[[DocPath], Block | None]


@runtime_checkable
class MapsSource(Protocol):
    """A schema format that declares where each subschema is written in its
    rendering (json, yaml, xml, nl; not the Pydantic code, whose text of a
    subschema depends on more than the subschema). ``positions`` reads a
    format's map through this declaration, and redraws the whole rendering
    per keyword for a format without one."""

    def source_map(self, schema: Any) -> SourceMap | None:
        """The rendering of ``schema`` with its map (None: this schema has none)."""
        ...


def line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Widen [start, end) to whole lines (terminators excluded). The
    renderings escape carriage returns, so a newline ends every line."""
    stop = text.find("\n", end)
    return text.rfind("\n", 0, start) + 1, stop if stop >= 0 else len(text)


def _paths(value: Any, path: DocPath, out: dict[int, DocPath | None]) -> None:
    if isinstance(value, dict):
        out[id(value)] = None if id(value) in out else path
        for key, item in value.items():
            _paths(item, (*path, key), out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _paths(item, (*path, i), out)


def blocks_by_identity(schema: Any, found: dict[int, Any]) -> dict[DocPath, Any]:
    """Key what a renderer recorded per object (by identity, while walking
    the schema) by document path; an object found twice in the document is
    ambiguous and left out."""
    paths: dict[int, DocPath | None] = {}
    _paths(schema, (), paths)
    return {path: found[key] for key, path in paths.items() if path is not None and key in found}


# ---------------------------------------------------------------- JSON


def _json_scalar(value: Any) -> str:
    """A scalar as ``json.dumps(..., ensure_ascii=False)`` writes it."""
    if isinstance(value, str):
        return _encode_string(value)
    if value is None or isinstance(value, bool):
        return "null" if value is None else ("true" if value else "false")
    return json.dumps(value, ensure_ascii=False)


_encode_string: Callable[[str], str] = json.encoder.encode_basestring


def _json_emit(value: Any, depth: int, path: DocPath, out: list[str], pos: list[int],
               spans: dict[DocPath, tuple[int, int]]) -> None:
    """Append what ``json.dumps(value, indent=2, ensure_ascii=False)``
    writes at nesting ``depth``, recording the span of every object."""
    start = pos[0]
    if isinstance(value, (dict, list)) and value:
        opener, closer = ("{", "}") if isinstance(value, dict) else ("[", "]")
        pad = "\n" + "  " * (depth + 1)
        _put(out, pos, opener)
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for n, (key, item) in enumerate(items):
            _put(out, pos, ("," if n else "") + pad)
            if isinstance(value, dict):
                _put(out, pos, _encode_string(key) + ": ")
            _json_emit(item, depth + 1, (*path, key), out, pos, spans)
        _put(out, pos, "\n" + "  " * depth + closer)
    else:
        _put(out, pos, _json_scalar(value))
    if isinstance(value, dict):
        spans[path] = (start, pos[0])


def _put(out: list[str], pos: list[int], piece: str) -> None:
    out.append(piece)
    pos[0] += len(piece)


def json_source_map(schema: JSONValue, text: str) -> SourceMap | None:
    """The map of ``text``, the indented JSON of ``schema`` (None if the
    emitter here does not write exactly that text)."""
    out: list[str] = []
    spans: dict[DocPath, tuple[int, int]] = {}
    _json_emit(schema, 0, (), out, [0], spans)
    if "".join(out) != text:
        return None

    def find(path: DocPath) -> Block | None:
        if path not in spans:
            return None
        start, end = spans[path]
        first, last = line_bounds(text, start, end)
        head, tail, pad = text[first:start], text[end:last], "\n" + "  " * len(path)

        def redraw(value: Any) -> str:
            return head + json.dumps(value, indent=2, ensure_ascii=False).replace("\n", pad) + tail

        return Block(first, last, redraw, exact=not path)

    return SourceMap(text, find)


# ---------------------------------------------------------------- YAML

#: a member's whole lines (start, end) and the column its key starts at
_Member = tuple[int, int, int]


def _yaml_spans(node: Any, value: Any, path: DocPath, text: str,
                members: dict[DocPath, dict[str, _Member]]) -> None:
    """Whole-line spans of every member of every object of the document,
    from its key to the end of its value, and of every object in an array
    (keyed by its index as a string)."""
    import yaml  # imported where a YAML map is drawn: the JSON format's parser imports this module

    if isinstance(value, dict) and isinstance(node, yaml.MappingNode) and len(node.value) == len(value):
        own = members.setdefault(path, {})
        for (knode, vnode), (key, item) in zip(node.value, value.items(), strict=True):
            own[key] = _whole_lines(text, knode.start_mark, vnode.end_mark.index)
            _yaml_spans(vnode, item, (*path, key), text, members)
    elif isinstance(value, list) and isinstance(node, yaml.SequenceNode) and len(node.value) == len(value):
        for i, (vnode, item) in enumerate(zip(node.value, value, strict=True)):
            if isinstance(item, dict):
                members.setdefault(path, {})[str(i)] = _whole_lines(text, vnode.start_mark, vnode.end_mark.index)
            _yaml_spans(vnode, item, (*path, i), text, members)


def _whole_lines(text: str, mark: Any, end: int) -> _Member:
    start = mark.index
    while end > start and text[end - 1] in " \n":  # a block ends where the next token starts
        end -= 1
    first, last = line_bounds(text, start, end)
    return first, last, mark.column


def _skeleton(schema: Any, path: DocPath, value: Any) -> Any:
    """The ancestors of ``path`` alone, with ``value`` in its place: it is
    written on the same columns, with the same first-member status (which
    decides whether its first line starts with its parent's ``- ``)."""
    if not path:
        return value
    parent = schema
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if isinstance(parent, dict):
        first = next(iter(parent)) == last
        inner: Any = {last: value} if first else {f"{last}_": 0, last: value}
    else:
        inner = [value] if last == 0 else [0, value]
    return _skeleton(schema, path[:-1], inner)


def yaml_source_map(schema: JSONValue, text: str, dump: Callable[[Any], str]) -> SourceMap | None:
    """The map of ``text``, ``dump(schema)`` (block YAML). An object less one
    member is redrawn by deleting that member's lines (block mappings have
    no commas; see ``_YamlRedraw.less``); any other value by dumping it
    inside a skeleton of its ancestors (``_skeleton``)."""
    import yaml

    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None
    members: dict[DocPath, dict[str, _Member]] = {}
    _yaml_spans(root, schema, (), text, members)

    def find(path: DocPath) -> Block | None:
        if not path:
            where: _Member | None = (0, len(text), 0)
        else:
            where = members.get(path[:-1], {}).get(str(path[-1]))
        if where is None or path not in members:
            return None
        return Block(where[0], where[1], _YamlRedraw(schema, path, text, where, members[path], dump), exact=True)

    return SourceMap(text, find)


def _walk(schema: Any, path: DocPath) -> Any:
    for key in path:
        schema = schema[key]
    return schema


@dataclass(frozen=True)
class _YamlRedraw:
    schema: Any
    path: DocPath
    text: str
    where: _Member
    own: dict[str, _Member]
    dump: Callable[[Any], str]

    def __call__(self, value: Any) -> str:
        node = _walk(self.schema, self.path)
        if isinstance(value, dict) and len(value) == len(node) - 1:
            gone = [k for k in node if k not in value]
            if len(gone) == 1 and list(value) == [k for k in node if k != gone[0]]:
                redrawn = self.less(gone[0], len(node) == 1)
                if redrawn is not None:
                    return redrawn
        if not self.path:
            return self.dump(value)
        # the skeleton ends with the object's block; the lines above it are its ancestors'
        start, end, _ = self.where
        above = len(self.dump(_skeleton(self.schema, self.path, node)).splitlines()) \
            - len(self.text[start:end].splitlines())
        lines = self.dump(_skeleton(self.schema, self.path, value)).splitlines(keepends=True)
        return "".join(lines[above:]).rstrip("\n")

    def less(self, key: str, emptied: bool) -> str | None:
        """The block without member ``key``, by editing its lines: the
        member's lines go; an emptied object becomes ``{}``; a member that
        shares its first line with what opens the object (``- `` in an
        array, ``: `` after a long ``? key``) hands that opening on to the
        next member."""
        start, end, _ = self.where
        first, last, column = self.own[key]
        text = self.text
        if not self.path:
            return "{}\n" if emptied else text[:first] + text[last + 1:]
        opening = text[first:first + column]
        shared = opening.strip() != ""
        if "?" in opening or text[last + 1:last + 2 + column].strip().startswith("?"):
            return None  # long keys (``? key``): the skeleton dump decides
        if emptied:
            if shared:
                return text[start:first] + opening + "{}"
            head = text[start:first - 1] if first > start else ""
            return head + " {}" if head.endswith(":") and "\n" not in head else None
        if shared:
            return text[start:first] + opening + text[last + 1 + column:end]
        if last == end:
            return text[start:first - 1]
        return text[start:first] + text[last + 1:end]
