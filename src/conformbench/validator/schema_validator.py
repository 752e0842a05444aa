"""Ground-truth validation with python-jsonschema: draft taken from
``$schema`` (drafts 3 to 2020-12, default 2020-12), that draft's own format
vocabulary checked (``format_checks``; or formats as annotations, a factory
parameter), patterns matched in bounded time as ECMA-262 (``patterns``,
``keywords``), one compiled validator per schema, reused.

References resolve within the schema document (and the bundled metaschemas)
only: nothing is fetched over the network, and a ``$ref`` that cannot be
resolved makes the schema invalid (SchemaError) when the validator is built.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema_rs
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema import exceptions as js_exceptions
from jsonschema.protocols import Validator as _JSValidator
from jsonschema.validators import Draft202012Validator
from jsonschema.validators import validator_for as _js_validator_for
from jsonschema_specifications import REGISTRY as SPECIFICATIONS

from conformbench.errors import SchemaError
from conformbench.jsontypes import JSONValue, Schema
from conformbench.validator.format_checks import FormatMode, format_checker, schema_format_checker
from conformbench.validator.patterns import Fallback, PatternError, compile_pattern, fallbacks_of
from conformbench.validator.re2_keywords import bounded_class

__all__ = [
    "FormatMode",
    "Remotes",
    "SchemaValidator",
    "Violation",
    "check_schema",
    "json_pointer",
    "schema_patterns",
    "validator_for",
]


def json_pointer(parts: Any) -> str:
    """RFC 6901 pointer of a path deque/list ('' for the root)."""
    out = []
    for part in parts:
        out.append(str(part).replace("~", "~0").replace("/", "~1"))
    return "".join("/" + p for p in out)


@dataclass(frozen=True)
class Violation:
    keyword: str
    instance_path: str
    schema_path: str
    message: str
    #: the root value has the wrong data type (the paper's RTV)
    root_type: bool = False


def _no_retrieval(uri: str) -> referencing.Resource[Any]:
    raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]


#: resources beyond the bundled metaschemas are never retrieved
_OFFLINE = referencing.Registry(retrieve=_no_retrieval)  # type: ignore[call-arg]


@dataclass(frozen=True)
class Remotes:
    """Extra documents that a ``$ref`` may name by URI (never fetched: given).
    Hashable, so validators built with them are cached too."""

    #: (uri, document as JSON text), in a fixed order
    documents: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_directory(cls, root: Path, base_uri: str) -> Remotes:
        """Every ``*.json`` below ``root``, named ``base_uri`` + its relative
        path (the JSON-Schema-Test-Suite serves ``remotes/`` this way)."""
        docs = []
        for path in sorted(root.rglob("*.json")):
            rel = path.relative_to(root).as_posix()
            docs.append((base_uri.rstrip("/") + "/" + rel, path.read_text(encoding="utf-8")))
        return cls(tuple(docs))

    def registry(self) -> referencing.Registry[Any]:
        pairs = [
            (uri, referencing.Resource.from_contents(
                json.loads(text), default_specification=referencing.jsonschema.DRAFT202012
            ))
            for uri, text in self.documents
        ]
        return _OFFLINE.with_resources(pairs)


def _walk_refs(resolver: Any, spec: Any, contents: Any) -> Iterator[str]:
    """Every ``$ref`` of the document that cannot be resolved from its scope."""
    if not isinstance(contents, dict):
        return
    resource = spec.create_resource(contents)
    resolver = resolver.in_subresource(resource)
    ref = contents.get("$ref")
    if isinstance(ref, str):
        try:
            resolver.lookup(ref)
        except referencing.exceptions.Unresolvable:
            yield ref
    for sub in resource.subresources():
        yield from _walk_refs(resolver, spec, sub.contents)


def _contains_path(keyword: str, path: str) -> str:
    """jsonschema reports minContains/maxContains under the sibling
    ``contains``; point at the keyword that was actually violated."""
    if keyword in ("minContains", "maxContains") and path.endswith("/contains"):
        return path[: -len("contains")] + keyword
    return path


#: metaschema keywords whose values python-jsonschema format-checks (uri,
#: uri-reference); jsonschema-rs' metaschema check skips formats
_FORMAT_CHECKED = frozenset({"$id", "$ref", "$dynamicRef", "$schema", "$vocabulary"})


def _patterns_of(value: Any, out: list[str]) -> bool:
    """Collect every pattern (and patternProperties key); False if the
    document holds a keyword that only python-jsonschema checks."""
    if isinstance(value, dict):
        if _FORMAT_CHECKED.intersection(value):
            return False
        pattern = value.get("pattern")
        if isinstance(pattern, str):
            out.append(pattern)
        props = value.get("patternProperties")
        if isinstance(props, dict):
            out.extend(props)
        return all(_patterns_of(v, out) for v in value.values())
    if isinstance(value, list):
        return all(_patterns_of(v, out) for v in value)
    return True


def _fast_valid(schema: Any, cls: type[_JSValidator]) -> bool:
    """jsonschema-rs' metaschema check where it provably agrees with
    python-jsonschema: draft 2020-12, none of the format-checked keywords,
    and every regex compiled by our engines (the 'regex' format check of
    ``format_checks``). Anything else takes the slow, authoritative path."""
    if cls is not Draft202012Validator or not isinstance(schema, dict):
        return False
    body = {k: v for k, v in schema.items() if k != "$schema"}
    if schema.get("$schema", _DRAFT_2020_12) != _DRAFT_2020_12:
        return False
    patterns: list[str] = []
    if not _patterns_of(body, patterns):
        return False
    try:
        for pattern in patterns:
            compile_pattern(pattern)
    except PatternError:
        return False
    return bool(jsonschema_rs.meta.is_valid(body))


_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
_TOO_DEEP = "the schema is nested too deeply to check"


def _specification(cls: type[_JSValidator]) -> Any:
    # drafts 3 and 4 name their metaschema with "id", later ones with "$id";
    # reading only "$id" took draft 4 documents for 2020-12 ones, so a draft-4
    # schema's "$id" (no keyword there) moved the base URI of its "$ref"s
    meta = cls.META_SCHEMA
    uri = meta.get("$id") or meta.get("id") or ""
    return referencing.jsonschema.specification_with(uri, default=referencing.jsonschema.DRAFT202012)


def _registry(remotes: Remotes | None) -> referencing.Registry[Any]:
    return remotes.registry() if remotes else _OFFLINE


def check_schema(schema: Schema, remotes: Remotes | None = None) -> type[_JSValidator]:
    """The validator class for the schema's draft; SchemaError if the schema
    fails its metaschema or has a ``$ref`` that resolves nowhere (within the
    document, the bundled metaschemas and ``remotes``)."""
    if not isinstance(schema, (dict, bool)):
        raise SchemaError(f"a schema must be a JSON object or boolean, not {type(schema).__name__}")
    cls: type[_JSValidator] = _js_validator_for(schema, default=Draft202012Validator)
    try:
        if not _fast_valid(schema, cls):
            cls.check_schema(schema, format_checker=schema_format_checker(cls))
        _check_patterns(schema)
        if isinstance(schema, dict):
            spec = _specification(cls)
            root = SPECIFICATIONS.combine(_registry(remotes)).resolver_with_root(spec.create_resource(schema))
            for ref in _walk_refs(root, spec, schema):
                raise SchemaError(f"cannot resolve $ref {ref!r} (references must point inside the schema)")
    except RecursionError:
        raise SchemaError(_TOO_DEEP) from None
    except js_exceptions.SchemaError as exc:
        where = json_pointer(exc.path) or "/"
        # a format checker's exception (a pattern refused for its size) says why
        why = f" ({exc.cause})" if isinstance(exc.cause, ValueError) and str(exc.cause) else ""
        raise SchemaError(f"invalid schema at {where}: {exc.message}{why}") from None
    return cls


_SUB_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
_SUB_ONE = ("items", "additionalItems", "additionalProperties", "contains", "not", "if", "then", "else",
            "propertyNames", "unevaluatedItems", "unevaluatedProperties", "extends", "contentSchema")
_SUB_LISTS = ("prefixItems", "allOf", "anyOf", "oneOf", "items", "extends", "type", "disallow")


def schema_patterns(schema: Any) -> Iterator[str]:
    """Every ``pattern`` and ``patternProperties`` name of a schema and its
    subschemas (any draft; data such as ``enum`` values is not walked)."""
    if not isinstance(schema, dict):
        return
    if isinstance(schema.get("pattern"), str):
        yield schema["pattern"]
    if isinstance(schema.get("patternProperties"), dict):
        yield from schema["patternProperties"]
    for key, value in schema.items():
        if key in _SUB_MAPS and isinstance(value, dict):
            for sub in value.values():
                yield from schema_patterns(sub)
        if key in _SUB_ONE:
            yield from schema_patterns(value)
        if key in _SUB_LISTS and isinstance(value, list):
            for sub in value:
                yield from schema_patterns(sub)


def _check_patterns(schema: Any) -> None:
    for pattern in schema_patterns(schema):
        try:
            compile_pattern(pattern)
        except PatternError as exc:
            raise SchemaError(f"invalid schema: {exc}") from None


class SchemaValidator:
    """A compiled validator for one schema. ``formats``: "assert" checks the
    draft's format vocabulary, "annotate" treats ``format`` as an annotation."""

    def __init__(self, schema: Schema, remotes: Remotes | None = None, formats: FormatMode = "assert") -> None:
        cls = check_schema(schema, remotes)
        self.schema = schema
        self.formats: FormatMode = formats
        self._validator = bounded_class(cls)(
            schema, format_checker=format_checker(cls, formats), registry=_registry(remotes))

    @property
    def pattern_fallbacks(self) -> list[Fallback]:
        """The schema's patterns that run on the backtracking engine (with a
        time limit per match), and why RE2 cannot run them."""
        return fallbacks_of(schema_patterns(self.schema))

    @property
    def specification(self) -> Any:
        """The ``referencing`` specification (draft) of the document."""
        return _specification(type(self._validator))

    @property
    def root_resolver(self) -> Any:
        """The ``referencing`` resolver of the document root."""
        return self._validator._resolver

    def subschema_checker(self, subschema: Any, resolver: Any) -> Callable[[JSONValue], bool]:
        """``is_valid`` for a subschema of this document, resolving its
        references from ``resolver`` (its scope in the document)."""
        sub = self._validator.evolve(schema=subschema, _resolver=resolver)

        def check(instance: JSONValue) -> bool:
            try:
                return bool(sub.is_valid(instance))
            except (RecursionError, referencing.exceptions.Unresolvable):
                return False

        return check

    def is_valid(self, instance: JSONValue) -> bool:
        try:
            return bool(self._validator.is_valid(instance))
        except (RecursionError, referencing.exceptions.Unresolvable):
            return False

    def violations(self, instance: JSONValue) -> list[Violation]:
        try:
            errors = list(self._validator.iter_errors(instance))
        except RecursionError:
            return [Violation("depth", "", "", "instance nested too deeply to validate")]
        except referencing.exceptions.Unresolvable as exc:
            raise SchemaError(f"cannot resolve a reference of the schema: {exc}") from None
        out: list[Violation] = []
        for err in sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), str(e.validator))):
            keyword = str(err.validator)
            ipath = json_pointer(err.absolute_path)
            spath = _contains_path(keyword, json_pointer(err.absolute_schema_path))
            root = keyword == "type" and ipath == ""
            out.append(Violation(keyword, ipath, spath, err.message[:500], root))
        return out


@lru_cache(maxsize=4096)
def _cached(canonical: str, remotes: Remotes | None, formats: FormatMode) -> SchemaValidator:
    return SchemaValidator(json.loads(canonical), remotes, formats)


def validator_for(
    schema: Schema, remotes: Remotes | None = None, formats: FormatMode = "assert"
) -> SchemaValidator:
    """A cached SchemaValidator (keyed by the schema's exact JSON text, key
    order included, so equal schemas share one compiled validator)."""
    try:
        canonical = json.dumps(schema, ensure_ascii=False)
    except RecursionError:
        raise SchemaError(_TOO_DEEP) from None
    return _cached(canonical, remotes, formats)
