"""A Hugging Face tokenizer as the engines' ``Vocabulary``.

The engines find their tokenizer bridges in the vocabulary's memo: here
they are seeded with the bridges made for Hugging Face tokenizers
(``llguidance.hf.from_tokenizer``; xgrammar's
``TokenizerInfo.from_huggingface``), so the engine registry's llguidance,
xgrammar and outlines engines compile unchanged. outlines-core builds its
vocabulary from ``token_pieces``: the raw bytes of each token, read from the
byte-level alphabet (GPT-2 style BPE) or SentencePiece's ``▁`` and
``<0xNN>`` byte-fallback tokens.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from conformbench.errors import UsageError

__all__ = ["HfVocabulary", "byte_decoder", "read_vocabulary"]

T = TypeVar("T")


def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, inverted: character -> byte."""
    visible = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) \
        + list(range(ord("®"), ord("ÿ") + 1))
    chars = list(visible)
    extra = 0
    for b in range(256):
        if b not in visible:
            visible.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(visible, chars)}


def _is_byte_level(tokenizer: Any) -> bool:
    """Whether the tokenizer's pieces are written in GPT-2's byte alphabet."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return False
    decoder = json.loads(backend.to_str()).get("decoder")
    return "ByteLevel" in json.dumps(decoder)


def _sentencepiece_bytes(token: str) -> bytes:
    if len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
        return bytes([int(token[3:5], 16)])
    return token.replace("▁", " ").encode("utf-8")


@dataclass
class HfVocabulary:
    """The ``Vocabulary`` of a Hugging Face tokenizer for a model whose
    logits are ``n_logits`` wide."""

    tokenizer: Any
    n_logits: int
    #: identity for caches and messages (the checkpoint path)
    key: str
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._memo["llguidance.tokenizer"] = _Lazy(self._llguidance)
        self._memo["xgrammar.compiler"] = _Lazy(self._xgrammar)

    @property
    def n_vocab(self) -> int:
        return self.n_logits

    @cached_property
    def eos(self) -> int:
        eos = self.tokenizer.eos_token_id
        if eos is None:
            raise UsageError(f"the tokenizer of {self.key} names no end-of-sequence token")
        return int(eos)

    @cached_property
    def eog_ids(self) -> frozenset[int]:
        """EOS, plus the end-of-text and end-of-turn tokens chat models use."""
        ids = {self.eos}
        for name in ("<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<end_of_turn>", "<|end|>"):
            tok = self.tokenizer.convert_tokens_to_ids(name)
            if isinstance(tok, int) and tok != self.tokenizer.unk_token_id and 0 <= tok < self.n_logits:
                ids.add(tok)
        return frozenset(ids)

    @cached_property
    def special_ids(self) -> frozenset[int]:
        return frozenset(int(i) for i in self.tokenizer.all_special_ids)

    @cached_property
    def token_pieces(self) -> list[bytes | None]:
        """The raw bytes of each token id; None for special tokens and ids
        past the tokenizer's vocabulary (padding rows of the logits)."""
        tokens = self.tokenizer.convert_ids_to_tokens(list(range(min(len(self.tokenizer), self.n_logits))))
        decoder = byte_decoder()
        byte_level = _is_byte_level(self.tokenizer)
        out: list[bytes | None] = []
        for i, tok in enumerate(tokens):
            if tok is None or i in self.special_ids:
                out.append(None)
            elif byte_level and all(ch in decoder for ch in tok):
                out.append(bytes(decoder[ch] for ch in tok))
            else:
                out.append(_sentencepiece_bytes(tok))
        return out + [None] * (self.n_logits - len(out))

    def piece_text(self, token: int) -> bytes:
        """What ``token`` reads as in a prompt (special tokens by name)."""
        piece = self.token_pieces[token] if token < self.n_logits else None
        if piece is not None:
            return piece
        return str(self.tokenizer.convert_ids_to_tokens(token) or "").encode("utf-8")

    @property
    def llama_vocab(self) -> Any:
        raise UsageError("this engine needs llama.cpp's vocabulary: use it with the llamacpp backend")

    def tokenize(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _llguidance(self) -> Any:
        import llguidance.hf

        return llguidance.hf.from_tokenizer(self.tokenizer, n_vocab=self.n_logits)

    def _xgrammar(self) -> Any:
        import xgrammar

        info = xgrammar.TokenizerInfo.from_huggingface(
            self.tokenizer, vocab_size=self.n_logits, stop_token_ids=[self.eos])
        return xgrammar.GrammarCompiler(info)

    def memo(self, key: str, factory: Callable[[], T]) -> T:
        """Build ``factory()`` once under ``key`` (the Hugging Face bridges
        are seeded and built on first use)."""
        value = self._memo.get(key)
        if value is None:
            value = self._memo[key] = factory()
        elif isinstance(value, _Lazy):
            value = self._memo[key] = value.build()
        built: T = value
        return built

    def close(self) -> None:
        for value in self._memo.values():
            close = getattr(value, "close", None)
            if callable(close) and not isinstance(value, _Lazy):
                close()
        self._memo.clear()


@dataclass(frozen=True)
class _Lazy:
    """A memo entry built on first use."""

    build: Callable[[], Any]


@contextmanager
def read_vocabulary(model: str | None) -> Iterator[HfVocabulary]:
    """``model``'s tokenizer as a ``Vocabulary`` (the embedded GGUF's when
    None), read without its weights (the manifest's ``vocabulary``: what
    ``engines check --backend transformers`` walks documents through), and
    released after."""
    from conformbench.backends.transformers.loading import load_tokenizer, resolve_checkpoint

    checkpoint = resolve_checkpoint(model)
    tokenizer, width = load_tokenizer(checkpoint)
    vocab = HfVocabulary(tokenizer, width, str(checkpoint.path))
    try:
        yield vocab
    finally:
        vocab.close()
