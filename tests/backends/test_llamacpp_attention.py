"""Attention at the answer position (attention.py): the span and split
arithmetic, and the live model's softmax rows and masses."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conformbench.backends.llamacpp.attention import mass_split, token_span
from conformbench.records.generation import DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt


def test_token_span_covers_the_last_occurrence():
    pieces = [b"ab", b"{\"", b"x", b"\"}", b" and ", b"{\"", b"x", b"\"}", b"!"]
    assert token_span(pieces, '{"x"}') == (5, 8)
    assert token_span(pieces, "x\"} a") == (2, 5)  # partial tokens at both ends are included
    assert token_span(pieces, "missing") is None


def test_mass_split_is_30_40_30_of_the_schema_tokens():
    row = np.zeros(20)
    row[5:15] = np.arange(1, 11)  # schema = tokens 5..14
    (begin, middle, end), profile = mass_split(row, (5, 15))
    assert (begin, middle, end) == (1 + 2 + 3, 4 + 5 + 6 + 7, 8 + 9 + 10)
    assert profile == [float(i) for i in range(1, 11)]


SCHEMA = {"type": "object", "properties": {"id": {"type": "integer", "minimum": 3},
                                           "tags": {"type": "array", "items": {"type": "string"}}}}


@pytest.mark.slow
def test_attention_rows_sum_to_one_and_masses_add_up(llama_backend):
    text = json.dumps(SCHEMA, indent=2)
    prompt = Prompt((Message("user", f"Is this valid?\n{text}\nAnswer yes or no."),))
    result = llama_backend.generate(GenerationRequest(
        prompt, DecodingSettings(max_tokens=2, attention=True), attend=text))
    record = result.attention
    assert record is not None
    tokens = llama_backend.tokenize_prompt(prompt)
    assert record.keys == len(tokens)
    layers = llama_backend.instruments.probe.layers
    assert record.layers == layers == 30 and len(record.profile) == layers
    rows = llama_backend.instruments.probe.rows
    assert sorted(rows) == list(range(layers))
    first, end = record.schema_tokens
    for layer, row in rows.items():
        assert len(row) > len(tokens)  # the keys are padded
        assert abs(row[: len(tokens)].sum() - 1.0) < 1e-4 and np.abs(row[len(tokens):]).max() == 0.0
        share = float(row[first:end].sum())
        assert abs(sum(record.bme[layer]) - share) < 1e-4
        assert abs(record.schema_share[layer] - share) < 1e-4
        assert abs(sum(record.profile[layer]) - share) < 1e-4
    # the span is the schema's text
    detok = b"".join(bytes(llama_backend.llama.detokenize([t], special=True)) for t in tokens[first:end])
    assert text.encode() in detok and len(detok) - len(text.encode()) < 8
