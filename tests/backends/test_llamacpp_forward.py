"""Grammar fast-forward in the llamacpp backend (``extra = {fast_forward =
true}``) on the real embedded model and llguidance: forced tokens are
appended without sampling steps, the canary still sees the constraint, the
output is valid and ends like the plain decoder's (end of generation after
the grammar's end, stop strings, budget), and the counters are recorded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from conformbench.audits.canary import canary_schema, grammar_request
from conformbench.backends.base import backends
from conformbench.errors import UsageError
from conformbench.records.generation import BackendConfig, Constraint, DecodingSettings, GenerationRequest
from conformbench.records.prompt import CANARY_PROMPT, Message, Prompt

#: long enum values and keys: forced runs of several tokens
SCHEMA = {
    "type": "object",
    "properties": {
        "classification_of_the_request": {"enum": ["international_shipping_inquiry"]},
        "answer": {"type": "integer"},
    },
    "required": ["classification_of_the_request", "answer"],
    "additionalProperties": False,
}


def test_the_option_is_checked() -> None:
    with pytest.raises(UsageError, match="fast_forward must be true or false"):
        backends.get("llamacpp")(BackendConfig(extra={"fast_forward": "yes"}))


@pytest.fixture(scope="module")
def forward_backend() -> Iterator[Any]:
    backend = backends.get("llamacpp")(BackendConfig(n_ctx=2048, threads=1, extra={"fast_forward": True}))
    yield backend
    backend.close()


def _request(max_tokens: int, stop: tuple[str, ...] = ()) -> GenerationRequest:
    prompt = Prompt((Message("user", "Where does my parcel to Canada go? What is 2+2? Reply in JSON."),))
    return GenerationRequest(prompt, DecodingSettings(max_tokens=max_tokens, stop=stop),
                             Constraint(SCHEMA, "llguidance"))


@pytest.mark.slow
def test_forced_tokens_are_appended_and_the_output_is_valid(forward_backend: Any) -> None:
    result = forward_backend.generate(_request(64))
    assert (result.finish_reason, result.error) == ("stop", None)
    answer = json.loads(result.text)
    assert answer["classification_of_the_request"] == "international_shipping_inquiry"
    counters = forward_backend.forward
    # the enum value alone is several tokens, all forced once its first is chosen
    assert counters.generations == 1 and counters.forced_tokens >= 5
    assert counters.steps + counters.forced_tokens == result.completion_tokens + 1  # +1: the end token
    assert forward_backend.metadata()["speedups"]["fast_forward"]["forced_tokens"] == counters.forced_tokens


@pytest.mark.slow
def test_the_canary_passes_and_ends_at_the_grammar_end(forward_backend: Any) -> None:
    request = grammar_request(CANARY_PROMPT, Constraint(canary_schema("cb-x1"), "llguidance"), 48, 0)
    result = forward_backend.generate(request)
    assert result.error is None and result.finish_reason == "stop"
    assert json.loads(result.text) == {"canary": "cb-x1"}


@pytest.mark.slow
def test_budget_and_stop_strings_cut_inside_a_forced_run(forward_backend: Any, llama_backend: Any) -> None:
    for request in (_request(6), _request(64, stop=("shipping",))):
        forward, plain = forward_backend.generate(request), llama_backend.generate(request)
        assert forward.finish_reason == plain.finish_reason
        if request.settings.stop:
            assert forward.text == plain.text and "shipping" not in forward.text
        else:
            assert forward.completion_tokens == plain.completion_tokens == 6
