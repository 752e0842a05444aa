"""Bundling: a schema that references other files of its suite becomes one
self-contained document (references rewritten into its ``$defs``) that the
validator, the oracle and the renderers read without fetching anything."""

from __future__ import annotations

import json
from pathlib import Path

from conformbench.schemas.build import external_case
from conformbench.schemas.bundle import SuiteIndex, bundle, file_uri
from conformbench.schemas.case import ExcludedSchema, SchemaCase
from conformbench.schemas.external import ExternalSchema, read_external
from conformbench.validator.schema_validator import validator_for

ROOT = {
    "$id": "https://example.org/root.json",
    "type": "object",
    "properties": {
        "size": {"$ref": "parts.json#/definitions/size"},  # beside the file (parts.json has no $id)
        "name": {"$ref": "https://example.org/name.json"},  # by the other file's $id
        "own": {"$ref": "#/definitions/own"},
        "remote": {"type": "string"},
    },
    "definitions": {"own": {"const": {"$ref": "parts.json"}}},  # data, not a reference
}
PARTS = {"definitions": {"size": {"$ref": "#/definitions/positive"},
                         "positive": {"type": "integer", "minimum": 1},
                         "back": {"$ref": "root.json"}}}
NAME = {"$id": "https://example.org/name.json", "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "string", "$ref": "#/$defs/short", "$defs": {"short": {"maxLength": 4}}}


def _index() -> SuiteIndex:
    index = SuiteIndex()
    for name, document in (("root.json", ROOT), ("parts.json", PARTS), ("name.json", NAME)):
        index.add(name, document)
    return index


def test_references_into_the_suite_become_pointers_into_defs() -> None:
    bundled, taken = bundle(ROOT, file_uri("root.json"), _index())
    assert taken == ["name.json", "parts.json"]
    assert isinstance(bundled, dict)
    props = bundled["properties"]
    assert props["size"] == {"$ref": "#/$defs/parts.json/definitions/size"}
    assert props["name"] == {"$ref": "#/$defs/name.json"}
    assert props["own"] == {"$ref": "#/definitions/own"}
    copies = bundled["$defs"]
    # references inside a copy follow it; its $id and $schema go (they would move the base URI)
    assert copies["parts.json"]["definitions"]["size"] == {"$ref": "#/$defs/parts.json/definitions/positive"}
    assert copies["parts.json"]["definitions"]["back"] == {"$ref": "#"}
    assert "$id" not in copies["name.json"] and "$schema" not in copies["name.json"]
    assert copies["name.json"]["$ref"] == "#/$defs/name.json/$defs/short"
    assert bundled["definitions"]["own"] == {"const": {"$ref": "parts.json"}}


def test_the_bundle_validates_like_the_files_together() -> None:
    bundled, _ = bundle(ROOT, file_uri("root.json"), _index())
    validator = validator_for(bundled)  # type: ignore[arg-type]
    assert validator.is_valid({"size": 3, "name": "abcd"})
    assert not validator.is_valid({"size": 0})
    assert not validator.is_valid({"name": "abcde"})


def test_a_schema_without_outside_references_is_returned_as_it_was() -> None:
    alone = {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"type": "null"}}}
    assert bundle(alone, file_uri("alone.json"), _index()) == (alone, [])


def test_a_reference_outside_the_suite_still_excludes_the_schema_with_its_reason(tmp_path: Path) -> None:
    for name, document in (("root.json", ROOT), ("parts.json", PARTS), ("name.json", NAME)):
        (tmp_path / name).write_text(json.dumps(document))
    (tmp_path / "web.json").write_text(json.dumps({"$ref": "https://elsewhere.example/x.json"}))
    entries = {e.id: e for e in read_external(tmp_path)}
    root = entries["root"]
    assert isinstance(root, ExternalSchema)
    made = external_case(root, ("json", "yaml"))
    assert isinstance(made, SchemaCase) and made.valid_instance is not None
    web = entries["web"]
    assert isinstance(web, ExternalSchema)
    refused = external_case(web, ("json",))
    assert isinstance(refused, ExcludedSchema)
    assert "cannot resolve $ref 'https://elsewhere.example/x.json'" in refused.reason
