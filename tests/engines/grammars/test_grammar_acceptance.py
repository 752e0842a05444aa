"""Acceptance on the default dataset, through the embedded model's tokenizer.

For every schema: the oracle's valid instance, written by our YAML and XML
``dump``, is accepted by the grammar (no over-constraint); its one-keyword
invalid instances are refused wherever the grammar states the keyword; and
documents drawn from the grammar parse with our strict readers and break
no keyword but those the grammar lists as unenforced.

The first schemas run by default; all 602 run with the slow tests.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from conformbench.engines.grammars.matcher import ModelVocabulary, grammar_matcher
from conformbench.engines.grammars.random_documents import random_walk
from conformbench.engines.grammars.read import read_shape
from conformbench.formats.xml.format import XmlOutput
from conformbench.formats.yaml.format import YamlOutput
from conformbench.schemas.case import SchemaCase
from conformbench.validator.schema_validator import validator_for

FORMATS = ("yaml", "xml")


def _dump(value: Any, schema: Any, output_format: str) -> str:
    return YamlOutput().dump(value) if output_format == "yaml" else XmlOutput().dump(value, schema)


def _parse(text: str, schema: Any, output_format: str) -> Any:
    return YamlOutput().parse(text) if output_format == "yaml" else XmlOutput().parse(text, schema)


class _Grammars:
    """Pristine matchers, compiled once per (schema, format) for the session."""

    def __init__(self, vocab: ModelVocabulary) -> None:
        self.vocab = vocab
        self._cache: dict[tuple[str, str], Any] = {}

    def matcher(self, case: SchemaCase, output_format: str) -> Any:
        key = (case.id, output_format)
        if key not in self._cache:
            self._cache[key] = grammar_matcher(case.schema, output_format, self.vocab)
        return self._cache[key].deep_copy()

    def accepts(self, case: SchemaCase, output_format: str, text: str) -> bool:
        matcher = self.matcher(case, output_format)
        return bool(matcher.consume_tokens(self.vocab.encode(text)) and matcher.is_accepting())


@pytest.fixture(scope="session")
def grammars(vocab: ModelVocabulary) -> _Grammars:
    return _Grammars(vocab)


def _check_valid(grammars: _Grammars, cases: list[SchemaCase], output_format: str) -> None:
    # undeclared keys included (gen-0250): the XML dump writes them <entry key="...">, as the grammar does
    refused = [case.id for case in cases
               if not grammars.accepts(case, output_format, _dump(case.valid_instance, case.schema, output_format))]
    assert refused == []


def _check_invalid(grammars: _Grammars, cases: list[SchemaCase], output_format: str) -> int:
    checked = 0
    for case in cases:
        unstated = {u.schema_path for u in read_shape(case.schema).unenforced}
        for invalid in case.invalid_instances:
            if invalid.schema_path in unstated:
                continue
            text = _dump(invalid.instance, case.schema, output_format)
            assert not grammars.accepts(case, output_format, text), (case.id, invalid.keyword, text)
            checked += 1
    return checked


def _check_samples(grammars: _Grammars, cases: list[SchemaCase], output_format: str, seed: int) -> int:
    rng = random.Random(seed)
    finished = 0
    for case in cases:
        walk = random_walk(grammars.matcher(case, output_format), grammars.vocab, rng)
        if not walk.finished:
            continue
        finished += 1
        parsed = _parse(walk.text, case.schema, output_format)
        # two undeclared keys may repeat each other: the one thing the grammar cannot see
        assert parsed.ok or "duplicate key" in (parsed.error or ""), (case.id, walk.text, parsed.error)
        if parsed.ok:
            unstated = {u.schema_path for u in read_shape(case.schema).unenforced}
            broken = [v for v in validator_for(case.schema).violations(parsed.value) if v.schema_path not in unstated]
            assert broken == [], (case.id, walk.text, broken)
    return finished


@pytest.mark.parametrize("output_format", FORMATS)
def test_valid_instances_are_accepted(grammars, sample_cases, output_format):
    _check_valid(grammars, sample_cases, output_format)


@pytest.mark.parametrize("output_format", FORMATS)
def test_invalid_instances_are_refused_where_stated(grammars, sample_cases, output_format):
    assert _check_invalid(grammars, sample_cases, output_format) > 100


@pytest.mark.parametrize("output_format", FORMATS)
def test_drawn_documents_parse_and_validate(grammars, sample_cases, output_format):
    assert _check_samples(grammars, sample_cases[:20], output_format, seed=1) >= 10


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.parametrize("output_format", FORMATS)
def test_all_valid_instances_are_accepted(grammars, all_cases, output_format):
    assert len(all_cases) == 602
    _check_valid(grammars, all_cases, output_format)


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.parametrize("output_format", FORMATS)
def test_all_invalid_instances_are_refused_where_stated(grammars, all_cases, output_format):
    assert _check_invalid(grammars, all_cases, output_format) > 6000


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.parametrize("output_format", FORMATS)
def test_drawn_documents_of_many_schemas_parse_and_validate(grammars, all_cases, output_format):
    assert _check_samples(grammars, all_cases[::4], output_format, seed=2) >= 110
