"""Engines driven without a model: each engine's Acceptor walks token ids of
the embedded model's tokenizer through its real matcher (llama.cpp's grammar
sampler, llguidance, outlines-core; xgrammar where installed)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

import pytest

from conformbench.engines.base import DecodeHooks, Engine, Walk, engines
from conformbench.errors import UnsupportedSchemaError, UsageError

ENGINES = ["gbnf", "llguidance", "outlines"]
if importlib.util.find_spec("xgrammar") is not None:
    ENGINES.append("xgrammar")

OBJECT = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}


@pytest.fixture(params=ENGINES)
def acceptor(request, smollm_vocab):
    made = engines.get(request.param)().acceptor(OBJECT, smollm_vocab)
    yield made
    made.close()


def test_a_valid_document_is_accepted_in_compact_and_spaced_form(acceptor, smollm_vocab):
    for text in ('{"n":7}', '{"n": 7}', '{"n":-120}'):
        tokens = smollm_vocab.tokenize(text)
        assert acceptor.walk(tokens) == Walk(accepted=True, consumed=len(tokens)), text


def test_a_wrong_token_stops_the_walk_where_it_is(acceptor, smollm_vocab):
    tokens = smollm_vocab.tokenize('{"n":"x"}')
    pieces = [smollm_vocab.token_pieces[t] for t in tokens]
    assert pieces[:3] == [b'{"', b"n", b'":"']
    # '{"' and 'n' are fine; '":"' opens a string where an integer must come
    assert acceptor.walk(tokens) == Walk(accepted=False, consumed=2)


def test_an_unfinished_document_is_allowed_but_cannot_end(acceptor, smollm_vocab):
    tokens = smollm_vocab.tokenize('{"n":7')
    assert acceptor.walk(tokens) == Walk(accepted=False, consumed=len(tokens))
    # nothing at all cannot end either (and EOS first must not abort llama.cpp)
    assert acceptor.walk([]) == Walk(accepted=False, consumed=0)


def test_walks_are_independent(acceptor, smollm_vocab):
    bad, good = smollm_vocab.tokenize('{"x":1}'), smollm_vocab.tokenize('{"n":1}')
    assert not acceptor.walk(bad).accepted
    assert acceptor.walk(good).accepted
    assert acceptor.walk(good).accepted


def test_mask_times_one_per_position_until_a_refused_token(acceptor, smollm_vocab):
    tokens = smollm_vocab.tokenize('{"n":12}')
    seconds = acceptor.mask_seconds(tokens, [0, len(tokens)])
    assert len(seconds) == 2 and all(s > 0 for s in seconds)
    bad = smollm_vocab.tokenize('{"x":12}')
    assert len(acceptor.mask_seconds(bad, [0, len(bad)])) == 1


def test_refusals_come_as_unsupported_schema_errors(smollm_vocab):
    with pytest.raises(UnsupportedSchemaError) as info:
        # lenient llguidance compiles uniqueItems; a look-behind it cannot compile at all
        engines.get("llguidance")().acceptor({"type": "string", "pattern": "(?<=a)b"}, smollm_vocab)
    assert info.value.engine == "llguidance"
    with pytest.raises(UnsupportedSchemaError):
        engines.get("gbnf")().acceptor({"not": {"type": "string"}}, smollm_vocab)


def test_outlines_index_builds_stop_at_the_time_limit(smollm_vocab):
    # any JSON value under additionalProperties: an index build of minutes
    slow = {"properties": {"foo": {}, "bar": {}}, "patternProperties": {"^v": {}}, "additionalProperties": False}
    with pytest.raises(UnsupportedSchemaError, match="ran past"):
        engines.get("outlines")().acceptor(slow, smollm_vocab, timeout_s=0.5)
    # the builder restarts for the next schema
    engines.get("outlines")().acceptor(OBJECT, smollm_vocab).close()


class _NoAcceptor(Engine):
    name = "no-acceptor"
    distribution = "numpy"
    module = "numpy"

    def _build(self, schema, text, vocab) -> tuple[str, Callable[[int], DecodeHooks]]:
        raise AssertionError("not compiled here")


def test_an_engine_without_an_acceptor_says_so(smollm_vocab):
    with pytest.raises(UsageError, match="'no-acceptor' cannot be driven without a model"):
        _NoAcceptor().acceptor(OBJECT, smollm_vocab)
