"""Dataset statistics: the keyword mix (schemas per keyword, per root type,
per depth) and schema lengths in tokens per format (the paper's Table 5)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from conformbench.errors import UsageError
from conformbench.schemas.case import SchemaCase
from conformbench.schemas.walk import keywords_of
from conformbench.formats.positions import Tokenizer

__all__ = ["DatasetStats", "TokenStats", "dataset_stats", "gguf_tokenizer", "token_stats"]


class DatasetStats(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int
    #: schemas in which each keyword occurs (anywhere)
    keywords: dict[str, int]
    root_types: dict[str, int]
    depths: dict[str, int]
    #: single-keyword invalid instances per keyword
    invalid_instances: dict[str, int]
    unisolated: int = 0
    excluded: int = 0


class TokenStats(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_format: str
    max_tokens: int
    mean_tokens: float


def _sorted(counter: Counter[str]) -> dict[str, int]:
    """Most frequent first, ties by name: stable output."""
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def dataset_stats(cases: Sequence[SchemaCase], excluded: int = 0) -> DatasetStats:
    keywords: Counter[str] = Counter()
    roots: Counter[str] = Counter()
    depths: Counter[str] = Counter()
    invalid: Counter[str] = Counter()
    for case in cases:
        keywords.update(keywords_of(case.schema))
        roots[case.root_type or "any"] += 1
        depths[str(case.depth)] += 1
        invalid.update(i.keyword for i in case.invalid_instances)
    return DatasetStats(
        n=len(cases),
        keywords=_sorted(keywords),
        root_types=_sorted(roots),
        depths=dict(sorted(depths.items(), key=lambda kv: int(kv[0]))),
        invalid_instances=_sorted(invalid),
        unisolated=sum(len(c.unisolated) for c in cases),
        excluded=excluded,
    )


def token_stats(cases: Sequence[SchemaCase], tokenize: Tokenizer) -> list[TokenStats]:
    """Max and mean rendering length per schema format."""
    lengths: dict[str, list[int]] = {}
    for case in cases:
        for fmt, text in case.renderings.items():
            lengths.setdefault(fmt, []).append(len(tokenize(text)))
    return [
        TokenStats(schema_format=fmt, max_tokens=max(v), mean_tokens=round(sum(v) / len(v), 2))
        for fmt, v in lengths.items()
        if v
    ]


def gguf_tokenizer(path: Path | None = None) -> Tokenizer:
    """A model's own tokenizer, loaded vocabulary-only from a GGUF file."""
    from conformbench.models.locate import check_gguf, embedded_model_path

    model_path = check_gguf(path) if path is not None else embedded_model_path()
    try:
        from llama_cpp import Llama
        from llama_cpp._utils import suppress_stdout_stderr

        # verbose=False still lets llama.cpp's context setup write to stderr
        with suppress_stdout_stderr(disable=False):
            llm = Llama(model_path=str(model_path), vocab_only=True, verbose=False)
    except (ImportError, ValueError, RuntimeError) as exc:
        raise UsageError(f"cannot load a tokenizer from {model_path}: {exc}") from None

    def tokenize(text: str) -> list[int]:
        return list(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    return tokenize
