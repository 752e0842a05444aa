"""YAML restricted to the JSON data model, read with YAML 1.2 core-schema
rules, and written so that both YAML 1.1 and 1.2 readers get the same data.

Reading (``load_json_yaml``), built on PyYAML's SafeLoader:

* plain scalars resolve by the YAML 1.2 core schema only: ``true``/``false``
  (three spellings each), ``null``/``~``/empty, base-10/``0o``/``0x``
  integers, decimal floats. So ``yes``, ``on``, ``2024-01-01`` and
  ``1_000`` stay strings; ``.inf`` and ``.nan`` are rejected (not JSON);
* mapping keys are always strings: a plain key is taken as written
  (``200: x`` gives the key ``"200"``); complex keys are rejected;
* duplicate keys, anchors, aliases and any tag outside the core set
  (``!!str !!int !!float !!bool !!null !!seq !!map``) are rejected, so there
  are no alias bombs and no object construction;
* exactly one document; nesting is capped while composing, so deep input
  never reaches Python's recursion limit.

Writing (``dump_json_yaml``): block style, source key order, and any string
that a YAML 1.1 *or* 1.2 reader would resolve to another type is quoted.
"""

from __future__ import annotations

import math
import re
from typing import Any, ClassVar, cast

import yaml
from yaml.events import AliasEvent, CollectionStartEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from conformbench.formats.limits import DEFAULT_LIMITS, Limits
from conformbench.jsontypes import JSONValue

__all__ = ["YamlDataError", "dump_json_yaml", "load_json_yaml"]

_T = "tag:yaml.org,2002:"
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_CORE = {"null": _NULL, "bool": _BOOL, "int": _INT, "float": _FLOAT}
_FIRST = {
    "null": ["~", "n", "N", ""],
    "bool": list("tTfF"),
    "int": list("-+0123456789"),
    "float": list("-+0123456789."),
}
_SCALAR_TAGS = {_T + name for name in ("str", "null", "bool", "int", "float")}


class YamlDataError(ValueError):
    """The text is not a single YAML document within the JSON data model."""


def _where(node_or_event: Any) -> str:
    mark = getattr(node_or_event, "start_mark", node_or_event if hasattr(node_or_event, "line") else None)
    return f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""


def _int(text: str) -> int:
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


class JsonYamlLoader(yaml.SafeLoader):
    """SafeLoader narrowed to JSON data and YAML 1.2 core-schema scalars."""

    yaml_implicit_resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}  # noqa: RUF012 - PyYAML reads it per class
    yaml_constructors: ClassVar[dict[str | None, Any]] = {}
    yaml_multi_constructors: ClassVar[dict[str | None, Any]] = {}

    def __init__(self, stream: str, limits: Limits = DEFAULT_LIMITS) -> None:
        super().__init__(stream)
        self._max_depth = limits.max_depth
        self._depth = 0

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        # The scanner looks ahead over every open '[' / '{' (possible simple
        # keys), quadratic in flow depth: stop it before the composer would.
        if self.flow_level >= self._max_depth:
            raise YamlDataError(f"nesting deeper than {self._max_depth}{_where(self.get_mark())}")
        super().fetch_flow_collection_start(TokenClass)

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, AliasEvent):
            raise YamlDataError(f"aliases are not allowed (*{event.anchor}){_where(event)}")
        if getattr(event, "anchor", None) is not None:
            raise YamlDataError(f"anchors are not allowed (&{event.anchor}){_where(event)}")
        if not isinstance(event, CollectionStartEvent):
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > self._max_depth:
            raise YamlDataError(f"nesting deeper than {self._max_depth}{_where(event)}")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def _scalar(self, node: Node, kind: str) -> str:
        text = str(node.value)
        if not _CORE[kind].match(text):
            raise YamlDataError(f"{text!r} is not a valid {kind}{_where(node)}")
        return text

    def construct_json_null(self, node: Node) -> None:
        self._scalar(node, "null")

    def construct_json_bool(self, node: Node) -> bool:
        return self._scalar(node, "bool").lower() == "true"

    def construct_json_int(self, node: Node) -> int:
        return _int(self._scalar(node, "int"))

    def construct_json_float(self, node: Node) -> float | int:
        text = str(node.value)
        if not _FLOAT.match(text):
            return float(_int(self._scalar(node, "int")))
        value = float(text) if text.lstrip("+-")[:2] not in (".i", ".I", ".n", ".N") else math.inf
        if not math.isfinite(value):
            raise YamlDataError(f"{text!r} is not a JSON number{_where(node)}")
        return value

    def construct_json_str(self, node: Node) -> str:
        if not isinstance(node, ScalarNode):
            raise YamlDataError(f"!!str on a collection{_where(node)}")
        return str(node.value)

    def construct_json_seq(self, node: Node) -> list[Any]:
        if not isinstance(node, SequenceNode):
            raise YamlDataError(f"!!seq on a non-sequence{_where(node)}")
        return [self.construct_object(child, deep=True) for child in node.value]

    def construct_json_map(self, node: Node) -> dict[str, Any]:
        if not isinstance(node, MappingNode):
            raise YamlDataError(f"!!map on a non-mapping{_where(node)}")
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                raise YamlDataError(f"mapping keys must be scalars{_where(key_node)}")
            if key_node.tag not in _SCALAR_TAGS:
                raise YamlDataError(f"tag {key_node.tag!r} is not allowed{_where(key_node)}")
            key = str(key_node.value)
            if key in out:
                raise YamlDataError(f"duplicate key {key!r}{_where(key_node)}")
            out[key] = self.construct_object(value_node, deep=True)
        return out

    def construct_json_undefined(self, node: Node) -> None:
        raise YamlDataError(f"tag {node.tag!r} is not allowed{_where(node)}")


for _kind, _pattern in _CORE.items():
    JsonYamlLoader.add_implicit_resolver(_T + _kind, _pattern, _FIRST[_kind])
for _name in ("null", "bool", "int", "float", "str", "seq", "map"):
    JsonYamlLoader.add_constructor(_T + _name, getattr(JsonYamlLoader, f"construct_json_{_name}"))
JsonYamlLoader.add_constructor(None, JsonYamlLoader.construct_json_undefined)


def load_json_yaml(text: str, limits: Limits = DEFAULT_LIMITS) -> JSONValue:
    """Read one YAML document as JSON data; YamlDataError says why not."""
    try:
        # the reader checks every character already in the constructor
        loader = JsonYamlLoader(text, limits)
    except yaml.reader.ReaderError as exc:
        raise YamlDataError(
            f"not valid YAML: character U+{exc.character:04X} at position {exc.position} is not allowed"
        ) from None
    try:
        node = loader.get_single_node()
        if node is None:
            raise YamlDataError("no YAML document (only comments or directives)")
        # PyYAML types this Any; our construct_json_* constructors build only JSON data
        return cast(JSONValue, loader.construct_document(node))
    except YamlDataError:
        raise
    except yaml.MarkedYAMLError as exc:
        problem = ", ".join(str(p) for p in (exc.context, exc.problem) if p) or "invalid YAML"
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise YamlDataError(f"not valid YAML: {problem}{where}") from None
    except yaml.YAMLError as exc:
        raise YamlDataError(f"not valid YAML: {str(exc).splitlines()[0].strip()}") from None
    except RecursionError:
        raise YamlDataError("nesting too deep") from None
    except ValueError as exc:  # e.g. integers over Python's digit limit
        raise YamlDataError(f"not valid YAML data: {exc}") from None
    finally:
        loader.dispose()


class JsonYamlDumper(yaml.SafeDumper):
    """SafeDumper that also quotes strings YAML 1.2 would read as non-strings
    (``1e3``, ``0o17``), on top of the YAML 1.1 ones PyYAML already quotes."""

    def ignore_aliases(self, data: Any) -> bool:
        # a value shared by two places is written twice: readers reject aliases
        return True

    def represent_float(self, data: float) -> yaml.ScalarNode:
        if not math.isfinite(data):
            raise YamlDataError(f"{data!r} is not a JSON number")
        node: yaml.ScalarNode = super().represent_float(data)
        return node

    def represent_str(self, data: str) -> yaml.ScalarNode:
        # PyYAML writes NEL/LS/PS raw inside single quotes, where a reader
        # folds them as line breaks, and (6.0.4) may write a lone no-break
        # space plain, where a reader strips it: double quotes escape both.
        if any(ch in data for ch in "\x85\u2028\u2029") or any(
                ch.isspace() and ch not in " \t\n" for ch in data):
            return self.represent_scalar(_T + "str", data, style='"')
        node: yaml.ScalarNode = super().represent_str(data)
        return node


for _kind, _pattern in _CORE.items():
    JsonYamlDumper.add_implicit_resolver(_T + _kind, _pattern, _FIRST[_kind])
JsonYamlDumper.add_representer(float, JsonYamlDumper.represent_float)
JsonYamlDumper.add_representer(str, JsonYamlDumper.represent_str)


def dump_json_yaml(value: JSONValue) -> str:
    """Block-style YAML of JSON data that ``load_json_yaml`` reads back exactly."""
    text: str = yaml.dump(
        value,
        Dumper=JsonYamlDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100_000,
    )
    return text
