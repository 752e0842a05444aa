"""Fixtures of the grammar tests: the embedded model's vocabulary (opened
vocab-only, once) and the default dataset, whole (602 schemas, slow tests)
or its first schemas (the same draws: the generator is seeded)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformbench.backends.llamacpp.vocabulary import LlamaVocabulary
from conformbench.engines.grammars.matcher import ModelVocabulary, grammar_matcher, model_vocabulary
from conformbench.schemas.build import BuildOptions, build_dataset
from conformbench.schemas.case import SchemaCase

#: schemas of the fast acceptance sample (the first of the default dataset)
SAMPLE_SIZE = 40


@pytest.fixture(scope="session")
def vocab() -> ModelVocabulary:
    return model_vocabulary(LlamaVocabulary.from_gguf())


def _build(out: Path, n: int | None) -> list[SchemaCase]:
    return build_dataset(BuildOptions(out=out, n=n)).cases


@pytest.fixture(scope="session")
def sample_cases(tmp_path_factory: pytest.TempPathFactory) -> list[SchemaCase]:
    return _build(tmp_path_factory.mktemp("dataset-sample"), SAMPLE_SIZE)


@pytest.fixture(scope="session")
def all_cases(tmp_path_factory: pytest.TempPathFactory) -> list[SchemaCase]:
    """The default dataset: 602 schemas, seed 0."""
    return _build(tmp_path_factory.mktemp("dataset-602"), None)


Accepts = Callable[[Any, str, str], bool]


@pytest.fixture(scope="session")
def accepts(vocab: ModelVocabulary) -> Accepts:
    """accepts(schema, format, text): whether the format's grammar for the
    schema takes the model's tokens of ``text`` as a whole document."""

    def check(schema: Any, output_format: str, text: str) -> bool:
        matcher = grammar_matcher(schema, output_format, vocab)
        return bool(matcher.consume_tokens(vocab.encode(text)) and matcher.is_accepting())

    return check
