from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Iterator

import pytest

from conformbench.audits.canary import canary_constant, canary_schema, check_canary
from conformbench.backends.base import backends
from conformbench.engines.base import DecodeHooks, Engine, engines
from conformbench.errors import CanaryFailedError
from conformbench.records.generation import BackendConfig


class IgnoresSchemaEngine(Engine):
    """Compiles anything and constrains nothing: what a silently broken
    engine looks like from outside."""

    name = "test-ignores-schema"
    distribution = "llama-cpp-python"
    module = "llama_cpp"

    def _build(self, schema, text, vocab) -> tuple[str, Callable[[int], DecodeHooks]]:
        return text, lambda _prompt_tokens: DecodeHooks()


@pytest.fixture(scope="module", autouse=True)
def _ignoring_engine_registered() -> Iterator[None]:
    """Registered for this module only, so no other test sees it among the
    real engines (the registry has no public way to unregister)."""
    engines.register(IgnoresSchemaEngine.name)(IgnoresSchemaEngine)
    yield
    engines._items.pop(IgnoresSchemaEngine.name, None)


def test_constant_is_random_per_seed_and_reproducible():
    assert canary_constant(1) == canary_constant(1)
    assert canary_constant(1) != canary_constant(2)
    assert canary_constant(1).startswith("cb-") and len(canary_constant(1)) == 15


def test_schema_forces_exactly_the_constant():
    schema = canary_schema("cb-x")
    assert schema["properties"] == {"canary": {"const": "cb-x"}}
    assert schema["required"] == ["canary"] and schema["additionalProperties"] is False


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.parametrize("engine", ["gbnf", "llguidance", "outlines"])
def test_canary_passes_on_real_engines(llama_backend, engine):
    result = check_canary(llama_backend, engine, rng_seed=7)
    assert json.loads(result.text) == {"canary": canary_constant(7)}
    assert result.engine == engine and result.as_record()["passed"] is True


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("xgrammar") is None, reason="xgrammar extra not installed")
def test_canary_passes_on_xgrammar(llama_backend):
    check_canary(llama_backend, "xgrammar", rng_seed=7)


@pytest.mark.slow
def test_canary_fails_on_an_engine_that_ignores_the_schema(llama_backend):
    with pytest.raises(CanaryFailedError, match="engine 'test-ignores-schema'"):
        check_canary(llama_backend, "test-ignores-schema", rng_seed=7)


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.server
def test_canary_over_http_depends_on_the_dialect(llama_server):
    def backend(dialect: str):
        extra = {"response_format_dialect": dialect}
        return backends.get("openai")(BackendConfig(base_url=llama_server, max_retries=0, extra=extra))

    check_canary(backend("json_object_schema"), "server", rng_seed=3)
    # llama-cpp-python's server refuses the OpenAI dialect (as an HTTP 500
    # naming the json_object type it wants): the canary says so
    with pytest.raises(CanaryFailedError, match=r"engine 'server'.*HTTP 500.*json_object"):
        check_canary(backend("json_schema"), "server", rng_seed=3)


class _Scripted:
    """Answers every request with one text, and keeps the requests."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.requests: list = []

    def generate(self, request):
        from conformbench.records.generation import GenerationResult

        self.requests.append(request)
        return GenerationResult(text=self.text, finish_reason="stop")


@pytest.mark.parametrize(("form", "text"), [
    ("yaml", "canary: {c}\n"),
    ("yaml", '"canary": "{c}"'),
    ("xml", '<?xml version="1.0" encoding="UTF-8"?>\n<root>\n  <canary>{c}</canary>\n</root>\n'),
])
def test_the_canary_reads_each_form_with_its_strict_parser(form, text):
    backend = _Scripted(text.format(c=canary_constant(3)))
    result = check_canary(backend, "llguidance", 3, form)
    (request,) = backend.requests
    assert request.constraint.output_format == form and request.constraint.engine == "llguidance"
    assert result.label == f"llguidance/{form}"
    assert result.as_record()["output_format"] == form
    assert "output_format" not in check_canary(_Scripted(json.dumps({"canary": canary_constant(3)})),
                                               "llguidance", 3).as_record()  # JSON verdicts as before


@pytest.mark.parametrize(("form", "text"), [
    ("yaml", '{{"canary": "{c}x"}}'),  # another value
    ("yaml", "canary: [{c}\n"),  # not YAML
    ("xml", '{{"canary": "{c}"}}'),  # JSON where XML was forced: the grammar was not applied
])
def test_the_canary_fails_unless_the_form_reads_back_to_the_constant(form, text):
    backend = _Scripted(text.format(c=canary_constant(3)))
    with pytest.raises(CanaryFailedError, match=rf"engine 'llguidance' \({form} answers\)"):
        check_canary(backend, "llguidance", 3, form)
