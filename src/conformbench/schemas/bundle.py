"""Bundling: a schema that references other files of its own suite becomes
one self-contained document, so the oracle, the renderers and the validator
(which fetch nothing) can read it.

Real suites split schemas across files (SchemaStore: ``"$ref":
"partial-setuptools.json"``, ``"https://json.schemastore.org/jsconfig.json"``).
Each referenced document found among the suite's own files, by file name
relative to the referring file or by its ``$id``, is copied into the root's
``$defs`` under its file name, and every reference into it is rewritten to a
JSON pointer into that copy (``#/$defs/jsconfig.json/definitions/x``), as
JSON Schema 2020-12's bundling does; references inside the copy are
rewritten the same way. A reference to anything outside the suite (another
site, a file that is not there) is left as it is: the build then excludes the
schema with the reason, as before. Nothing is fetched.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, urldefrag, urljoin

from conformbench.jsontypes import JSONValue

__all__ = ["SuiteIndex", "bundle", "file_uri", "id_of"]

_BUNDLE_KEY = "$defs"
#: keywords whose values are instances, not schemas
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
#: keywords that would change how references inside a copy resolve
_RESOURCE_KEYWORDS = ("$id", "id", "$schema", "$anchor", "$dynamicAnchor")


@dataclass
class SuiteIndex:
    """The documents of one suite by absolute URI: each file under
    ``file:///suite/<name>`` and, when it has one, under its ``$id``."""

    documents: dict[str, JSONValue] = field(default_factory=dict)
    #: URI -> the key a bundled copy gets (the file name)
    names: dict[str, str] = field(default_factory=dict)

    def add(self, file_name: str, document: JSONValue) -> str:
        uri = file_uri(file_name)
        self.documents[uri] = document
        self.names[uri] = file_name
        ident = id_of(document)
        if ident:
            base = urldefrag(ident)[0]
            self.documents.setdefault(base, document)
            self.names.setdefault(base, file_name)
        return uri

    def find(self, uri: str) -> tuple[JSONValue, str] | None:
        """The document at ``uri`` and its file name; None when the suite
        does not have it (a lazy index parses it here: ``schema_folder``)."""
        document = self.documents.get(uri)
        return None if document is None else (document, self.names[uri])


def file_uri(file_name: str) -> str:
    return "file:///suite/" + quote(file_name)


def id_of(document: JSONValue) -> str | None:
    """The document's own URI (``$id``, draft 4's ``id``), if it states one."""
    ident = document.get("$id") or document.get("id") if isinstance(document, dict) else None
    return ident if isinstance(ident, str) and ident and not ident.startswith("#") else None


def _base_of(document: JSONValue, uri: str) -> str:
    ident = id_of(document)
    return urljoin(uri, ident) if ident else uri


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _pointer(key: str, fragment: str = "") -> str:
    """``#/$defs/<key><fragment>``: the key escaped for a JSON pointer and
    for a URI fragment; the fragment (already a URI fragment) as it is."""
    return f"#/{_BUNDLE_KEY}/" + quote(_escape(key), safe="~.-_!$&'()*+,;=:@") + fragment


class _Bundler:
    def __init__(self, index: SuiteIndex, root: Mapping[str, JSONValue], root_uri: str) -> None:
        self.index = index
        self.root_uris = {root_uri, urldefrag(_base_of(dict(root), root_uri))[0]}
        existing = root.get(_BUNDLE_KEY)
        #: keys taken: the root's own $defs, and the bundled copies
        self.taken: set[str] = set(existing) if isinstance(existing, dict) else set()
        #: URI of a bundled document -> its key under $defs
        self.keys: dict[str, str] = {}
        self.copies: dict[str, JSONValue] = {}

    def key_for(self, uri: str) -> str | None:
        """The $defs key of the document at ``uri`` (bundling it on first
        use); None when the suite does not have it."""
        if uri in self.keys:
            return self.keys[uri]
        found = self.index.find(uri)
        if found is None:
            return None
        document, key = found
        while key in self.taken:
            key = f"_{key}"
        self.taken.add(key)
        self.keys[uri] = key
        stripped = copy.deepcopy(document)
        if isinstance(stripped, dict):
            for keyword in _RESOURCE_KEYWORDS:
                stripped.pop(keyword, None)
        self.copies[key] = stripped  # placeholder, so a cycle finds the key
        self.copies[key] = self.rewrite(stripped, (_base_of(document, uri), uri), _pointer(key))
        return key

    def rewrite(self, node: JSONValue, bases: tuple[str, str], prefix: str) -> JSONValue:
        """``node`` with every reference made local to the bundle; ``prefix``
        is the pointer of this document's root in the bundle ("#" for the
        root document); ``bases``: the document's base URI (its ``$id``) and
        its file's URI."""
        if isinstance(node, list):
            return [self.rewrite(item, bases, prefix) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, JSONValue] = {}
        for name, value in node.items():
            if name == "$ref" and isinstance(value, str):
                out[name] = self.reference(value, bases, prefix)
            elif name in _DATA_KEYWORDS:
                out[name] = value  # instances, not schemas: a "$ref" key there is data
            else:
                out[name] = self.rewrite(value, bases, prefix)
        return out

    def reference(self, ref: str, bases: tuple[str, str], prefix: str) -> str:
        if ref.startswith("#"):
            if prefix == "#" or (len(ref) > 1 and not ref.startswith("#/")):
                return ref  # the root's own, or a named anchor (not moved: the validator refuses it)
            return prefix + ref[1:]
        # against the document's $id first (the standard's base), then beside its file
        for base in bases:
            uri, fragment = urldefrag(urljoin(base, ref))
            if uri in self.root_uris:
                return "#" + fragment
            if fragment and not fragment.startswith("/"):
                return ref  # a named anchor in another file: left for the validator to refuse
            key = self.key_for(uri)
            if key is not None:
                return _pointer(key, fragment)
        return ref


def bundle(document: JSONValue, uri: str, index: SuiteIndex) -> tuple[JSONValue, list[str]]:
    """The document with every reference into the suite made local, and the
    file names it took in (empty: returned as it was)."""
    if not isinstance(document, Mapping):
        return document, []
    bundler = _Bundler(index, document, uri)
    rewritten = bundler.rewrite(document, (_base_of(document, uri), uri), "#")
    if not bundler.copies or not isinstance(rewritten, dict):
        return document, []
    existing = rewritten.get(_BUNDLE_KEY)
    if existing is not None and not isinstance(existing, dict):
        return document, []  # a malformed $defs: leave it to the metaschema check
    rewritten[_BUNDLE_KEY] = {**(existing or {}), **bundler.copies}
    return rewritten, sorted(bundler.copies)
