"""The llama.cpp vocabulary engines compile against: from the backend's
loaded model and from a vocabulary-only load of the GGUF file, identical."""

from __future__ import annotations

import pytest

from conformbench.backends.llamacpp.vocabulary import LlamaVocabulary
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
def test_backend_vocabulary_equals_the_vocab_only_load(llama_backend, vocab_only) -> None:
    loaded: LlamaVocabulary = llama_backend.vocabulary
    assert loaded.n_vocab == vocab_only.n_vocab
    assert loaded.eog_ids == vocab_only.eog_ids
    assert loaded.token_pieces == vocab_only.token_pieces
