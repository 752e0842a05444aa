"""A llama.cpp model's vocabulary as the engines' ``Vocabulary``: from the
backend's loaded model, or from a GGUF file without its weights."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from conformbench.backends.llamacpp.template_free import llama_class
from conformbench.backends.locate import check_gguf, embedded_model_path
from conformbench.errors import UsageError

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["LlamaVocabulary", "detokenize", "gguf_tokenizer"]

T = TypeVar("T")


def detokenize(llm: Llama, tokens: list[int], special: bool = False) -> bytes:
    """The bytes of ``tokens``, every piece in full. llama-cpp-python's
    ``Llama.detokenize`` (0.3.x) reads each piece into a 32-byte buffer and
    silently drops a longer one: SmolLM2 has 47 such tokens (whitespace runs,
    "\\n" and 35 spaces is token 13617), so an answer holding one lost it,
    and a stop string spanning it went unseen (issue #54, seed 7
    cc_gen-0012: the same 160 tokens as transformers, 793 characters against
    1,169). Like llama-cpp-python, a leading space after a first BOS token
    is dropped."""
    import llama_cpp

    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    size = 256
    buf = ctypes.create_string_buffer(size)
    out = bytearray()
    for tok in tokens:
        n = llama_cpp.llama_token_to_piece(vocab, llama_cpp.llama_token(tok), buf, size, 0, special)
        if n < 0:  # longer than the buffer: again with the size asked for
            big = ctypes.create_string_buffer(-n)
            n = llama_cpp.llama_token_to_piece(vocab, llama_cpp.llama_token(tok), big, -n, 0, special)
            out += big.raw[:max(n, 0)]
        else:
            out += buf.raw[:n]
    if tokens and tokens[0] == llm.token_bos() and out[:1] == b" ":
        return bytes(out[1:])
    return bytes(out)


@dataclass
class LlamaVocabulary:
    """The ``Vocabulary`` of one llama.cpp model, loaded in full by the
    backend or vocabulary-only (``from_gguf``) for model-free checks.
    Expensive derived objects (the vocabulary as bytes, an engine's
    tokenizer) are built once per model and kept here."""

    llm: Llama
    #: identity of the model for caches and messages (its file path)
    key: str
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @cached_property
    def llama_vocab(self) -> Any:
        import llama_cpp

        return llama_cpp.llama_model_get_vocab(self.llm.model)

    @cached_property
    def n_vocab(self) -> int:
        import llama_cpp

        return int(llama_cpp.llama_vocab_n_tokens(self.llama_vocab))

    @cached_property
    def eos(self) -> int:
        return int(self.llm.token_eos())

    @cached_property
    def eog_ids(self) -> frozenset[int]:
        """Every end-of-generation token (EOS, end-of-turn...)."""
        import llama_cpp

        return frozenset(
            i for i in range(self.n_vocab) if llama_cpp.llama_vocab_is_eog(self.llama_vocab, i)
        )

    @cached_property
    def token_pieces(self) -> list[bytes | None]:
        """The raw bytes each token id decodes to; None for control tokens
        (BOS, chat markers...), which never belong inside JSON."""
        import llama_cpp

        size = 256
        buf = ctypes.create_string_buffer(size)
        out: list[bytes | None] = []
        for tok in range(self.n_vocab):
            attr = llama_cpp.llama_vocab_get_attr(self.llama_vocab, tok)
            if attr & llama_cpp.LLAMA_TOKEN_ATTR_CONTROL:
                out.append(None)
                continue
            n = llama_cpp.llama_token_to_piece(self.llama_vocab, tok, buf, size, 0, False)
            if n < 0:  # longer than the buffer: retry with the size asked for
                big = ctypes.create_string_buffer(-n)
                n = llama_cpp.llama_token_to_piece(self.llama_vocab, tok, big, -n, 0, False)
                out.append(big.raw[:n])
            else:
                out.append(buf.raw[:n])
        return out

    def tokenize(self, text: str) -> list[int]:
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    @classmethod
    def from_gguf(cls, path: Path | None = None) -> LlamaVocabulary:
        """The vocabulary of a GGUF file (the embedded model when None),
        loaded without weights: a fraction of a second, no model memory."""
        model_path = check_gguf(path) if path is not None else embedded_model_path()
        try:
            Llama = llama_class()  # compiles none of the file's chat templates (template_free.py)
            from llama_cpp._utils import suppress_stdout_stderr

            # verbose=False still lets llama.cpp's context setup write to stderr
            with suppress_stdout_stderr(disable=False):
                llm = Llama(model_path=str(model_path), vocab_only=True, verbose=False)
        except (ImportError, ValueError, RuntimeError) as exc:
            raise UsageError(f"cannot load a tokenizer from {model_path}: {exc}") from None
        return cls(llm, str(model_path))

    def memo(self, key: str, factory: Callable[[], T]) -> T:
        """Build ``factory()`` once per runtime under ``key``; a value with a
        ``close()`` method is closed with the runtime."""
        if key not in self._memo:
            self._memo[key] = factory()
        value: T = self._memo[key]
        return value

    def close(self) -> None:
        """Release what engines keep for this model (worker processes...)."""
        for value in self._memo.values():
            close = getattr(value, "close", None)
            if callable(close):
                close()
        self._memo.clear()


def gguf_tokenizer(path: Path | None = None) -> Callable[[str], list[int]]:
    """A model's own tokenizer, loaded vocabulary-only from a GGUF file."""
    return LlamaVocabulary.from_gguf(path).tokenize
