"""YAML in the JSON data model with YAML 1.2 core-schema scalars."""

from __future__ import annotations

import json

import pytest
import yaml
from formats_cases import GOLDEN
from formats_suite import canon, suite_groups

from conformbench.errors import SchemaError
from conformbench.formats.yaml.format import YamlOutput, YamlSchemaFormat

YAML = YamlOutput()


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("[yes, no, on, off, y, n]", ["yes", "no", "on", "off", "y", "n"]),
        ("d: 2024-01-01", {"d": "2024-01-01"}),
        ("n: 1_000", {"n": "1_000"}),
        ("[017, 0o17, 0x1F, -5, +3]", [17, 15, 31, -5, 3]),
        ("[1e3, .5, -1.5, 1.0e+17, 2.]", [1000.0, 0.5, -1.5, 1e17, 2.0]),
        ("[~, null, Null, NULL, ]", [None, None, None, None]),
        ("[true, True, TRUE, false]", [True, True, True, False]),
        ("[!!str 5, !!float 3, '7']", ["5", 3.0, "7"]),
        ("200: ok\ntrue: 1\n1.5: x", {"200": "ok", "true": 1, "1.5": "x"}),
        ("---\na: 1\n...\n", {"a": 1}),
    ],
)
def test_yaml_12_core_scalars(text: str, value: object) -> None:
    parsed = YAML.parse(text)
    assert parsed.ok, parsed.error
    assert canon(parsed.value) == canon(value)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("a: 1\na: 2", "duplicate key 'a'"),
        ("a: &x [1]\nb: *x", "anchors are not allowed"),
        ("a: *x", "aliases are not allowed"),
        ("!!python/object/apply:os.system ['true']", "is not allowed"),
        ("!!binary aGk=", "tag 'tag:yaml.org,2002:binary' is not allowed"),
        ("d: !!timestamp 2024-01-01", "is not allowed"),
        ("x: !custom 1", "tag '!custom' is not allowed"),
        ("!!int abc", "'abc' is not a valid int"),
        ("[.inf]", "'.inf' is not a JSON number"),
        ("x: .nan", "'.nan' is not a JSON number"),
        ("--- a\n--- b", "expected a single document"),
        ("# only a comment", "no YAML document"),
        ("? [a, b]\n: 1", "mapping keys must be scalars"),
        ("a: [1, 2", "not valid YAML"),
        ("a: \x07", "character U+0007"),
    ],
)
def test_rejected_with_one_clear_reason(text: str, reason: str) -> None:
    parsed = YAML.parse(text)
    assert not parsed.ok and parsed.error is not None
    assert reason in parsed.error and "\n" not in parsed.error


def test_fenced_yaml_is_preferred_over_prose() -> None:
    parsed = YAML.parse("Here:\n```yaml\nanswer: 4\n```\nThe answer is 4.")
    assert parsed.ok and parsed.source == "fenced" and parsed.value == {"answer": 4}


def test_prose_alone_is_a_yaml_string() -> None:
    parsed = YAML.parse("The answer is 4")
    assert parsed.ok and parsed.source == "raw" and parsed.value == "The answer is 4"


TRICKY = ["yes", "no", "on", "Off", "y", "null", "~", "", "1e3", "0o17", "0x1F", "1_000", "2024-01-01",
          "12:30", "1.5", ".inf", "-", "- x", "a: b", "#c", "'", '"', " pad ", "a\nb", "\t", "\x85",
          "\u2028", "=", "<<", "é", "\U0001F600", "!tag", "&a", "*a", "%x", "@x", "`x"]


def test_render_quotes_everything_either_yaml_version_would_misread() -> None:
    schema = {"enum": TRICKY, "properties": {s: {} for s in TRICKY if s}, "default": TRICKY}
    fmt = YamlSchemaFormat()
    text = fmt.render(schema)
    assert canon(fmt.load(text)) == canon(schema)
    assert canon(yaml.safe_load(text)) == canon(schema)  # a YAML 1.1 reader agrees


def test_shared_subschemas_are_written_out_not_aliased() -> None:
    shared = {"type": "boolean"}
    text = YamlSchemaFormat().render({"items": shared, "contains": shared})
    assert "&" not in text and "*" not in text
    assert YamlSchemaFormat().load(text) == {"items": shared, "contains": shared}


def test_renderings_read_the_same_under_yaml_11() -> None:
    """Every suite and golden schema: PyYAML's own YAML 1.1 safe_load gets
    the same data as our 1.2 loader."""
    fmt = YamlSchemaFormat()
    schemas = [g.schema for g in suite_groups()] + [c.schema for c in GOLDEN.values()]
    for schema in schemas:
        text = fmt.render(schema)
        assert canon(yaml.safe_load(text)) == canon(schema), text


def test_load_refuses_non_schemas() -> None:
    with pytest.raises(SchemaError, match="anchors are not allowed"):
        YamlSchemaFormat().load("a: &x 1")
    with pytest.raises(SchemaError, match="mapping or boolean"):
        YamlSchemaFormat().load("- 1")


def test_dump_writes_block_yaml_in_key_order() -> None:
    value = {"b": [1, {"c": None}], "a": "yes"}
    text = YAML.dump(value)
    assert text == "b:\n- 1\n- c: null\na: 'yes'\n"
    assert json.dumps(YAML.parse(text).value) == json.dumps(value)


@pytest.mark.parametrize("value", ["\xa0", {"h": "\xa0"}, " \u3000x", "a\u2009b", "\x0b"])
def test_unusual_whitespace_survives_dump_and_parse(value: object) -> None:
    # PyYAML 6.0.4 writes a lone no-break space plain, which a reader strips
    yaml_output = YamlOutput()
    parsed = yaml_output.parse(yaml_output.dump(value))
    assert parsed.ok and parsed.value == value
