"""Answer forms: which output formats an engine can force, and llguidance's
YAML and XML grammars compiled as engine constraints (on the embedded
model's vocabulary, no weights)."""

from __future__ import annotations

import json

import pytest

from conformbench.engines.base import engines, form_refusal
from conformbench.engines.grammars.matcher import lark_grammar
from conformbench.errors import UnknownNameError, UnsupportedSchemaError

SCHEMA = {
    "type": "object",
    "properties": {"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                   "n": {"type": "integer", "maximum": 9}},
    "required": ["n"],
    "additionalProperties": False,
}


def test_llguidance_constrains_json_yaml_and_xml_and_json_engines_only_json() -> None:
    assert engines.get("llguidance").output_forms == ("json", "yaml", "xml")
    for form in ("json", "yaml", "xml"):
        assert form_refusal("llguidance", form) is None
    for engine in ("gbnf", "outlines", "xgrammar"):
        assert form_refusal(engine, "json") is None
        reason = form_refusal(engine, "yaml")
        assert reason is not None and f"engine {engine!r} constrains only json output, not yaml" in reason
    assert form_refusal("server", "json") is None
    assert form_refusal("server", "xml") == "server-side decoding constrains only json output, not xml"
    with pytest.raises(UnknownNameError, match="llguidance"):
        form_refusal("llguidanse", "yaml")


def test_a_json_engine_refuses_another_form_before_building(smollm_vocab) -> None:
    with pytest.raises(UnsupportedSchemaError, match="constrains only json output, not xml") as caught:
        engines.get("gbnf")().compile(SCHEMA, smollm_vocab, "xml")
    assert caught.value.engine == "gbnf"


@pytest.mark.parametrize("form", ["yaml", "xml"])
def test_llguidance_records_the_forms_lark_grammar_and_what_it_leaves_unstated(smollm_vocab, form: str) -> None:
    compiled = engines.get("llguidance")().compile(SCHEMA, smollm_vocab, form)
    assert compiled.engine_input == lark_grammar(SCHEMA, form)
    assert compiled.unenforced == (f"not in the {form} grammar: uniqueItems",)
    assert compiled.start(5).processor is not None


def test_llguidance_json_input_is_still_its_json_schema_grammar(smollm_vocab) -> None:
    compiled = engines.get("llguidance")().compile(SCHEMA, smollm_vocab)
    sent = json.loads(compiled.engine_input)["grammars"][0]["json_schema"]
    assert sent.pop("x-guidance") == {"lenient": True}
    assert sent == SCHEMA


@pytest.mark.parametrize("form", ["yaml", "xml"])
def test_a_schema_the_forms_grammar_cannot_state_is_refused_with_the_reason(smollm_vocab, form: str) -> None:
    schema = {"enum": [1, 2], "type": "string"}  # no enum value is valid: no document to allow
    with pytest.raises(UnsupportedSchemaError) as caught:
        engines.get("llguidance")().compile(schema, smollm_vocab, form)
    assert caught.value.engine == "llguidance"
    assert caught.value.reason == f"{form} grammar: no enum/const value at / is valid"
