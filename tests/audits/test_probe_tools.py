"""The verdicts of the tool-argument probe (``engines probe --tools``) on
its samples; the probe itself runs against real servers in
tests/backends/test_tools_servers.py."""

from __future__ import annotations

from conformbench.audits.probe.records import ProbeSample
from conformbench.audits.probe_tools import _verdict


def _sample(violations: list[str], *, error: str | None = None, parsed: bool = True,
            finish: str = "stop") -> ProbeSample:
    return ProbeSample(prompt="p", text="{}", finish_reason=finish, parsed=parsed, violations=violations,
                       error=error, carried=True)


def test_a_call_breaking_the_keyword_is_not_enforced_and_valid_calls_are_enforced():
    assert _verdict([_sample(["enum"]), _sample([])], "enum")[0] == "not enforced"
    assert _verdict([_sample([]), _sample([])], "enum") == ("enforced", "0/2 calls' arguments violate enum")


def test_no_call_and_a_failed_request_are_inconclusive_and_say_which():
    status, detail = _verdict([_sample([], error="no call", parsed=False), _sample([])], "enum")
    assert status == "inconclusive" and "1/2 answers made no call" in detail
    status, detail = _verdict([_sample([], error="HTTP 500: boom", parsed=False, finish="error")], "enum")
    assert status == "inconclusive" and "requests failed: HTTP 500: boom" in detail
    assert _verdict([_sample([], parsed=False)], "enum")[0] == "inconclusive"  # arguments not JSON
