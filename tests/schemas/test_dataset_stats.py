"""Keyword mix and token statistics."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.backends.llamacpp.vocabulary import gguf_tokenizer
from conformbench.formats.positions import regex_tokens
from conformbench.schemas.build import BuildResult
from conformbench.schemas.case import InvalidInstance, SchemaCase
from conformbench.schemas.dataset_stats import dataset_stats, token_stats, token_table_markdown
from conformbench.schemas.walk import depth_of, keywords_of, root_type_of

NESTED = {
    "type": "object",
    "properties": {"minimum": {"type": "array", "items": {"type": "integer", "minimum": 1}}},
    "required": ["minimum"],
}


def test_walk_tells_keywords_from_property_names() -> None:
    assert keywords_of(NESTED) == {"type", "properties", "items", "minimum", "required"}
    assert keywords_of({"properties": {"maxLength": {}}}) == {"properties"}
    assert depth_of(NESTED) == 3 and depth_of({}) == 1
    assert [root_type_of(s) for s in (NESTED, {"enum": [1]}, {}, {"type": ["a", "b"]}, True)] == [
        "object", "enum", "any", "several", "any"]


def _case(ident: str, schema: dict[str, object], root: str, depth: int) -> SchemaCase:
    return SchemaCase(id=ident, schema=schema, renderings={"json": "{ \"a\": 1 }", "yaml": "a: 1"},
                      valid_instance=None, root_type=root, depth=depth,
                      invalid_instances=[InvalidInstance(keyword="type", schema_path="/type", instance=1)])


def test_dataset_stats_counts() -> None:
    cases = [_case("a", NESTED, "object", 3), _case("b", {"type": "string", "minLength": 2}, "string", 1)]
    stats = dataset_stats(cases, excluded=4)
    assert stats.n == 2 and stats.excluded == 4
    assert stats.keywords["type"] == 2 and stats.keywords["minimum"] == 1 and stats.keywords["minLength"] == 1
    assert stats.root_types == {"object": 1, "string": 1}
    assert list(stats.depths) == ["1", "3"]
    assert stats.invalid_instances == {"type": 2}


def test_token_stats_with_a_callable() -> None:
    cases = [_case("a", NESTED, "object", 3), _case("b", {}, "any", 1)]
    rows = {r.schema_format: r for r in token_stats(cases, regex_tokens)}
    assert rows["json"].max_tokens == 7 and rows["json"].mean_tokens == 7.0  # { " a " : 1 }
    assert rows["yaml"].max_tokens == 3


@pytest.mark.slow
def test_gguf_tokenizer_counts_model_tokens() -> None:
    tokenize = gguf_tokenizer()
    tokens = tokenize('{"type": "object"}')
    assert 3 <= len(tokens) <= 12
    assert all(isinstance(t, int) for t in tokens)


@pytest.mark.long
@pytest.mark.slow
def test_docs_token_table_is_what_the_code_measures(full_build: BuildResult) -> None:
    """Issue #44: docs/dataset.md said python 2683/560 while `dataset stats
    --tokens` printed 1313/194.22 (the Pydantic renderer had changed since).
    The table in the docs is token_table_markdown of the default build,
    counted with the embedded SmolLM2's tokenizer, as the command counts."""
    table = token_table_markdown(token_stats(full_build.cases, gguf_tokenizer()))
    docs = (Path(__file__).resolve().parents[2] / "docs" / "dataset.md").read_text(encoding="utf-8")
    assert table in docs, f"docs/dataset.md's token table is not what the code measures; it is now:\n{table}"
