"""The llama.cpp vocabulary engines compile against: from the backend's
loaded model and from a vocabulary-only load of the GGUF file, identical."""

from __future__ import annotations

import pytest

from conformbench.backends.llamacpp.vocabulary import LlamaVocabulary, detokenize
from conformbench.engines.base import Vocabulary


@pytest.fixture(scope="module")
def vocab_only() -> LlamaVocabulary:
    return LlamaVocabulary.from_gguf()


def test_vocab_only_pieces_and_stop_tokens(vocab_only: LlamaVocabulary) -> None:
    vocab: Vocabulary = vocab_only
    assert vocab.eos in vocab.eog_ids
    assert vocab.token_pieces[vocab.eos] is None  # a control token
    text_pieces = [p for p in vocab.token_pieces if p]
    assert b"{" in text_pieces and len(vocab.token_pieces) == vocab.n_vocab
    assert vocab.memo("k", lambda: object()) is vocab.memo("k", lambda: object())


def test_vocab_only_tokenizes_like_its_pieces(vocab_only: LlamaVocabulary) -> None:
    ids = vocab_only.tokenize('{"name": "Ada"}')
    assert b"".join(vocab_only.token_pieces[i] or b"" for i in ids) == b'{"name": "Ada"}'


@pytest.mark.slow
def test_detokenize_keeps_pieces_over_32_bytes(vocab_only: LlamaVocabulary) -> None:
    """Issue #54: llama-cpp-python's detokenize drops a piece longer than its
    32-byte buffer (SmolLM2's long whitespace runs); ours keeps every byte."""
    long = [i for i, p in enumerate(vocab_only.token_pieces) if p is not None and len(p) > 32]
    assert long, "the embedded vocabulary has no piece over 32 bytes to check"
    ids = [*vocab_only.tokenize('{"a": ['), *long[:5], *vocab_only.tokenize("1]}")]
    want = b"".join(vocab_only.token_pieces[i] or b"" for i in ids)
    assert detokenize(vocab_only.llm, ids) == want
    assert len(want) > len(vocab_only.llm.detokenize(ids))  # what the library's own call loses


def test_backend_text_keeps_a_long_whitespace_token(llama_backend) -> None:
    pieces = llama_backend.vocabulary.token_pieces
    tok = next(i for i, p in enumerate(pieces) if p is not None and len(p) > 32)
    out = [*llama_backend.vocabulary.tokenize("["), tok, *llama_backend.vocabulary.tokenize("1]")]
    assert llama_backend.detok(out, []) == "[" + (pieces[tok] or b"").decode() + "1]"


def test_backend_vocabulary_equals_the_vocab_only_load(llama_backend, vocab_only) -> None:
    loaded: LlamaVocabulary = llama_backend.vocabulary
    assert loaded.n_vocab == vocab_only.n_vocab
    assert loaded.eog_ids == vocab_only.eog_ids
    assert loaded.token_pieces == vocab_only.token_pieces
