"""Documents as token streams, prepared once and fed to every engine: each
instance serialised (compact JSON, and any other serialisation asked for)
and tokenized with the model's own tokenizer, plus the stream and positions
where the per-token mask is timed."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from conformbench.audits.engine_check.sources import CheckSchema, CheckSource, Instance
from conformbench.engines.base import Vocabulary
from conformbench.errors import UsageError
from conformbench.jsontypes import JSONValue
from conformbench.registry import did_you_mean

__all__ = ["SERIALISATIONS", "Document", "PreparedSchema", "mask_positions", "prepare", "serialise"]


def _dumps(value: JSONValue, separators: tuple[str, str]) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=separators)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only a \u escape can carry it
        return json.dumps(value, ensure_ascii=True, separators=separators)
    return text


#: how a document is written before tokenizing; every engine here admits
#: compact JSON, which is therefore the default
SERIALISATIONS: dict[str, Callable[[JSONValue], str]] = {
    "compact": lambda value: _dumps(value, (",", ":")),
    "spaced": lambda value: _dumps(value, (", ", ": ")),
}


def serialise(value: JSONValue, name: str) -> str:
    try:
        return SERIALISATIONS[name](value)
    except KeyError:
        hint = did_you_mean(name, list(SERIALISATIONS))
        raise UsageError(f"unknown serialisation {name!r}{hint}; known: {', '.join(SERIALISATIONS)}") from None


@dataclass(frozen=True)
class Document:
    instance: Instance
    serialisation: str
    text: str
    tokens: tuple[int, ...]


@dataclass(frozen=True)
class PreparedSchema:
    schema: CheckSchema
    #: per instance, its documents (one per serialisation)
    documents: tuple[tuple[Document, ...], ...]
    #: the token stream whose masks are timed, and where
    mask_stream: tuple[int, ...]
    mask_at: tuple[int, ...]


def mask_positions(n_tokens: int, k: int) -> tuple[int, ...]:
    """Up to ``k`` positions spread evenly over 0..n_tokens (the initial
    state, the state before the end, and between)."""
    if k <= 0:
        return ()
    if k == 1 or n_tokens == 0:
        return (0,)
    if k > n_tokens:
        return tuple(range(n_tokens + 1))
    return tuple(sorted({round(i * n_tokens / (k - 1)) for i in range(k)}))


def _prepare_schema(
    schema: CheckSchema, vocab: Vocabulary, serialisations: tuple[str, ...], k: int
) -> PreparedSchema:
    documents = []
    for instance in schema.instances:
        texts = [(name, serialise(instance.value, name)) for name in serialisations]
        documents.append(tuple(Document(instance, name, text, tuple(vocab.tokenize(text))) for name, text in texts))
    timed = next((docs for docs in documents if docs[0].instance.valid), documents[0] if documents else ())
    stream = timed[0].tokens if timed else ()
    return PreparedSchema(schema, tuple(documents), stream, mask_positions(len(stream), k))


def prepare(
    source: CheckSource, vocab: Vocabulary, serialisations: tuple[str, ...], k: int
) -> list[PreparedSchema]:
    """Every schema of ``source`` with its documents tokenized."""
    for name in serialisations:
        serialise(None, name)  # unknown names fail before any work
    return [_prepare_schema(schema, vocab, serialisations, k) for schema in source.schemas]
