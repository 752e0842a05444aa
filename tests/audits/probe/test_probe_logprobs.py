"""The logprobs technique's reading of an answer (pure functions); against a
real server it is covered by test_probe_server.py."""

from __future__ import annotations

from conformbench.audits.probe.logprobs import Choice, calibrate, value_overrides
from conformbench.audits.probe.run import ProbeSample, _classify
from conformbench.backends.base import backends
from conformbench.records.generation import BackendConfig
from conformbench.records.spec import SERVER_ENGINE


def _choices(*pairs: tuple[str, str]) -> list[Choice]:
    return [Choice(token, top) for token, top in pairs]


def test_only_content_overrides_inside_the_value_count():
    text = '{ "color": "red"}'
    choices = _choices(("{", "```"), (' "', "\n "), ("color", "name"), ('":', '":'), (' "', ' "'),
                       ("red", "purple"), ('"}', '" }'))
    # "{" and "color" are overridden before the value; the whitespace-only
    # override and '"}' against '" }' are spacing, not content
    assert value_overrides(choices, text, "color") == 1
    assert value_overrides(choices, text, None) == 3
    assert value_overrides(choices, text, "absent") == 0


def _sample(violations: list[str], overrides: int | None) -> ProbeSample:
    return ProbeSample(prompt="p", text="t", finish_reason="stop", parsed=True, violations=violations,
                       overrides=overrides)


def test_a_valid_value_the_constraint_never_touched_is_no_evidence():
    status, detail = _classify([_sample([], 0), _sample([], 0)], "uniqueItems")
    assert status == "inconclusive" and "the model did not try" in detail
    status, detail = _classify([_sample([], 2), _sample([], 0)], "enum")
    assert status == "enforced" and "in the value of 1/2 (logprobs)" in detail
    # a violation is a violation, whatever the logprobs say
    assert _classify([_sample(["minimum"], 0)], "minimum")[0] == "ignored"
    # no logprobs read: the nudged verdict stands
    assert _classify([_sample([], None)], "enum")[0] == "enforced"


def test_calibrate_is_only_for_a_server_engine_over_the_chat_endpoint(unused_port):
    # no request is sent in any of these cases (nothing listens on the port)
    url = f"http://127.0.0.1:{unused_port}/v1"
    chat = backends.get("openai")(BackendConfig(base_url=url))
    completions = backends.get("openai")(BackendConfig(base_url=url, extra={"endpoint": "completions"}))
    assert calibrate(chat, "gbnf", 0) is False
    assert calibrate(completions, SERVER_ENGINE, 0) is False
    assert chat.counters.requests == completions.counters.requests == 0
    # a server that does not answer has no logprobs to read
    assert calibrate(chat, SERVER_ENGINE, 0) is False
