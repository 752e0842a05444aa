"""A pool of OpenAI-compatible servers (``--base-url`` given more than once),
against real HTTP servers on 127.0.0.1: requests spread over the servers with
at most ``concurrency`` in flight on each, each result names its server, a
server that dies hands its requests to the others, a pool with none left
stops (one server too, once it has answered), each server's dialect is its own, and servers of different models
are refused."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from chat_reply import send_chat_reply

from conformbench.audits.canary import check_canary
from conformbench.backends.base import backends
from conformbench.backends.openai.pool import PoolDown, Server, base_urls, weights_refusal
from conformbench.errors import UsageError
from conformbench.records.generation import BackendConfig, Constraint, DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt
from conformbench.records.spec import ModelSpec, RunSpec, TaskSpec

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


class Replica(ThreadingHTTPServer):
    """A chat server: a canary-shaped schema gets its constant, any other
    request ``answer``; it counts what it was sent and the most requests it
    had in flight at once, and once ``dead`` it cuts every connection."""

    daemon_threads = True
    request_queue_size = 64

    def __init__(self, model_id: str = "smol", answer: str = "hello", dialects: tuple[str, ...] = ("json_schema",),
                 pause_s: float = 0.02) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.model_id, self.answer, self.dialects, self.pause_s = model_id, answer, dialects, pause_s
        self.bodies: list[dict[str, Any]] = []
        self.in_flight = self.most_in_flight = self.answered = 0
        self.dead = False
        #: die after answering this many chat requests (None: never)
        self.die_after: int | None = None
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def die(self) -> None:
        """Stop listening (new connections are refused); those open are cut."""
        self.dead = True
        threading.Thread(target=self._close, daemon=True).start()

    def _close(self) -> None:
        self.shutdown()
        self.server_close()


def _dialect(body: dict[str, Any]) -> str | None:
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        return "json_schema"
    if rf.get("type") == "json_object":
        return "json_object_schema"
    return next((k for k in ("structured_outputs", "guided_json") if k in body), None)


def _schema(body: dict[str, Any]) -> dict[str, Any]:
    rf = body.get("response_format") or {}
    return (rf.get("json_schema") or {}).get("schema") or rf.get("schema") or body.get("guided_json") or {}


class _Handler(BaseHTTPRequestHandler):
    server: Replica

    def _cut(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def do_POST(self) -> None:
        srv = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if srv.dead:
            return self._cut()
        with srv.lock:
            srv.bodies.append(body)
            srv.in_flight += 1
            srv.most_in_flight = max(srv.most_in_flight, srv.in_flight)
            count = len(srv.bodies)
        time.sleep(srv.pause_s)
        with srv.lock:
            srv.in_flight -= 1
        dialect = _dialect(body)
        if dialect is not None and dialect not in srv.dialects:
            reply = b'{"error": {"message": "unknown field"}}'
            self.send_response(400)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
            return None
        canary = (_schema(body).get("properties") or {}).get("canary") or {}
        send_chat_reply(self, json.dumps({"canary": canary["const"]}) if "const" in canary else srv.answer)
        with srv.lock:
            srv.answered += 1
        if srv.die_after is not None and count >= srv.die_after:
            srv.die()
        return None

    def do_GET(self) -> None:
        reply = json.dumps({"data": [{"id": self.server.model_id}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def replicas() -> Iterator[list[Replica]]:
    made: list[Replica] = []
    yield made
    for server in made:
        if not server.dead:
            server.shutdown()
            server.server_close()


def _pool(servers: list[Replica], **kw: Any) -> Any:
    config = BackendConfig(base_url=tuple(s.url for s in servers), concurrency=kw.pop("concurrency", 2),
                           timeout_s=10.0, max_retries=kw.pop("max_retries", 1),
                           extra={"backoff_s": 0.01, **kw.pop("extra", {})}, **kw)
    return backends.get("openai")(config)


def _requests(n: int) -> list[GenerationRequest]:
    return [GenerationRequest(Prompt(messages=(Message("user", f"q{i}"),)), DecodingSettings(max_tokens=4))
            for i in range(n)]


def test_requests_spread_over_the_pool_within_each_servers_slots(replicas: list[Replica]) -> None:
    replicas += [Replica(), Replica()]
    pool = _pool(replicas, concurrency=3)
    results = pool.generate_many(_requests(24))
    assert [r.finish_reason for r in results] == ["stop"] * 24
    made = {s.url.rstrip("/"): len(s.bodies) for s in replicas}
    assert sum(made.values()) == 24 and all(n > 0 for n in made.values()), made
    assert all(s.most_in_flight <= 3 for s in replicas)
    assert max(s.most_in_flight for s in replicas) > 1  # the slots were used, not one at a time
    # each result names the server that made it, and each server's count is what it was sent
    assert {r.server for r in results} == set(made)
    assert {u: sum(r.server == u for r in results) for u in made} == made
    servers = pool.metadata()["servers"]
    assert [s["model_calls"] for s in servers] == [made[s["base_url"]] for s in servers]
    assert [s["models"] for s in servers] == [["smol"], ["smol"]]


def test_a_dead_server_hands_its_requests_to_the_others(replicas: list[Replica]) -> None:
    replicas += [Replica(), Replica()]
    replicas[0].die_after = 3
    pool = _pool(replicas, max_retries=0)  # moving to another server spends no retry
    results = pool.generate_many(_requests(20))
    assert [r.finish_reason for r in results] == ["stop"] * 20, [r.error for r in results]
    meta = pool.metadata()
    first, second = meta["servers"]
    assert first["down"] and "connection failures in a row" in first["down"] and second["down"] is None
    # every generation exactly once: what each server answered is what it is credited with
    assert first["model_calls"] == replicas[0].answered >= 3
    assert second["model_calls"] == replicas[1].answered == 20 - replicas[0].answered
    assert meta["moved"] == first["moved_away"] >= 1
    assert sum(r.server == replicas[1].url for r in results) == replicas[1].answered


def test_a_pool_with_no_server_left_stops(replicas: list[Replica]) -> None:
    replicas += [Replica(), Replica()]
    replicas[0].die_after = replicas[1].die_after = 2
    pool = _pool(replicas)
    got = []
    with pytest.raises(PoolDown, match="every server of the pool is down") as caught:
        for result in pool.generate_stream(_requests(12)):
            got.append(result)
    assert 0 < len(got) <= replicas[0].answered + replicas[1].answered < 12
    assert all(r.finish_reason == "stop" for r in got)
    assert "a rerun resumes" in str(caught.value)


def test_one_server_that_never_answered_is_not_taken_out(unused_port: int) -> None:
    """A pool of one retries as before pools existed; a server that has not
    answered yet (a wrong URL, a server not up) is not taken out: its
    requests end as error records, and results name no server."""
    one = backends.get("openai")(BackendConfig(base_url=f"http://127.0.0.1:{unused_port}/v1", max_retries=2,
                                               timeout_s=2.0, extra={"backoff_s": 0.01}))
    result = one.generate(_requests(1)[0])
    assert result.finish_reason == "error" and "gave up after 3 attempt(s)" in (result.error or "")
    assert result.server is None and one.servers[0].down is None and "servers" not in one.metadata()


def test_one_server_dying_mid_stream_keeps_the_answers_before(replicas: list[Replica]) -> None:
    """One server that answered, then refuses every try of a request: it is
    gone, the results before the first that found it gone are given, then
    PoolDown, in one message naming it and the attempts."""
    replicas.append(Replica())
    replicas[0].die_after = 3
    one = backends.get("openai")(BackendConfig(base_url=replicas[0].url, max_retries=1, timeout_s=5.0,
                                               concurrency=1, extra={"backoff_s": 0.01}))
    got = []
    with pytest.raises(PoolDown, match="the server is down") as caught:
        got.extend(one.generate_stream(_requests(8)))
    assert len(got) == replicas[0].answered == 3 and all(r.finish_reason == "stop" for r in got)
    assert all(r.server is None for r in got)  # one server: results name none
    message = str(caught.value)
    assert replicas[0].url in message and "the last of 2 attempt(s)" in message and "a rerun resumes" in message
    assert one.servers[0].down is not None and "the last of 2 attempt(s)" in one.servers[0].down


def test_each_server_finds_its_own_dialect(replicas: list[Replica]) -> None:
    replicas += [Replica(dialects=("json_schema",)), Replica(dialects=("json_object_schema",))]
    pool = _pool(replicas)
    verdict = check_canary(pool, "server", 7)
    assert [s.dialect for s in pool.servers] == ["json_schema", "json_object_schema"]
    assert verdict.dialect is not None and replicas[1].url in verdict.dialect
    constrained = GenerationRequest(_requests(1)[0].prompt, DecodingSettings(max_tokens=4),
                                    Constraint(SCHEMA, "server"))
    for server in replicas:
        server.bodies.clear()
    results = pool.generate_many([constrained] * 8)
    for server in replicas:  # each was sent the schema in its own dialect, and the record says which
        assert server.bodies and {_dialect(b) for b in server.bodies} == set(server.dialects)
    for result in results:
        assert result.engine_input is not None and _dialect(json.loads(result.engine_input)) == (
            "json_schema" if result.server == replicas[0].url else "json_object_schema")


def test_a_given_dialect_is_still_checked_on_every_server(replicas: list[Replica]) -> None:
    replicas += [Replica(dialects=("json_schema",)), Replica(dialects=("json_object_schema",))]
    pool = _pool(replicas, extra={"response_format_dialect": "json_schema"})
    assert pool.dialect_pending  # a pool's canary is sent to each server
    from conformbench.errors import CanaryFailedError

    with pytest.raises(CanaryFailedError, match=f"server {replicas[1].url}"):
        check_canary(pool, "server", 7)


def test_servers_of_different_models_are_refused(replicas: list[Replica]) -> None:
    replicas += [Replica(model_id="smol"), Replica(model_id="other")]
    with pytest.raises(UsageError, match="serve different models") as caught:
        _pool(replicas).check_replicas(0)
    assert "\n" not in str(caught.value)
    same_name = [Replica(answer="one"), Replica(answer="two")]
    replicas += same_name
    with pytest.raises(UsageError, match="answer one greedy prompt differently"):
        _pool(same_name).check_replicas(0)
    _pool(replicas[:1] + [Replica()]).check_replicas(0)  # replicas of one model pass


def test_weights_refusal_reads_ids_then_answers() -> None:
    a, b = Server("http://a:1/v1", None, ""), Server("http://b:1/v1?key=s", None, "")
    assert weights_refusal([a, b], ["x", "x"]) is None  # ids unknown: the answers decide
    a.models, b.models = ["m"], ["m"]
    assert weights_refusal([a, b], ["x", "x"]) is None
    refusal = weights_refusal([a, b], ["x", "y"])
    assert refusal and "http://b:1/v1 answered 'y'" in refusal and "key" not in refusal
    b.models = ["n"]
    assert "serve different models" in (weights_refusal([a, b], ["x", "x"]) or "")


@pytest.mark.parametrize(("given", "error"), [
    ([], "needs base_url"),
    (["http://a/v1", "http://a/v1/"], "given twice"),
    (["http://a/v1", "http://u:p@b/v1"], "user name or password"),
    (["http://a/v1", " "], "must be a URL"),
])
def test_bad_url_lists_are_refused(given: list[str], error: str) -> None:
    with pytest.raises(UsageError, match=error):
        base_urls(given)


def test_a_spec_takes_a_list_of_urls_and_a_list_of_one_is_one_url() -> None:
    pool = ModelSpec(label="m", backend="openai", base_url=["http://a:1/v1?key=s", "http://b:2/v1"])
    assert pool.base_urls == ("http://a:1/v1?key=s", "http://b:2/v1")
    assert pool.backend_config().base_url == ("http://a:1/v1?key=s", "http://b:2/v1")
    one = ModelSpec(label="n", backend="openai", base_url=["http://a:1/v1"])
    assert one.base_url == "http://a:1/v1"
    spec = RunSpec(models=[pool, one], tasks=[TaskSpec(name="gsm8k")])
    stored = [m["base_url"] for m in spec.replay_dict()["models"]]
    assert stored == [["http://a:1/v1", "http://b:2/v1"], "http://a:1/v1"]
    with pytest.raises((UsageError, ValueError), match="empty list"):
        ModelSpec(label="m", backend="openai", base_url=[])


def test_base_url_flags_and_keywords_make_a_pool_and_one_stays_a_string(tmp_path: Path) -> None:
    from conformbench.api import run_options
    from conformbench.cli.run import _options
    from conformbench.runner.defaults import build_spec

    urls = ("http://a:1/v1?tags=x,y", "http://b:2/v1")
    assert _options({"base_url": list(urls)}).base_url == urls  # a comma in a URL splits nothing
    pool = build_spec(None, run_options({"backend": "openai", "base_url": list(urls), "out": tmp_path}))
    assert pool.models[0].base_url == list(urls)
    one = build_spec(None, run_options({"backend": "openai", "base_url": urls[1], "out": tmp_path}))
    assert one.models[0].base_url == urls[1]
    assert one.replay_dict()["models"][0]["base_url"] == urls[1]  # a one-server header as before pools


def test_a_pooled_run_records_each_generations_server_and_the_report_counts_them(
        replicas: list[Replica], tmp_path: Path) -> None:
    from conformbench.api import run_options
    from conformbench.records.replay_file import read_replay
    from conformbench.reports.rescore import loaded_replays
    from conformbench.runner.defaults import build_spec
    from conformbench.runner.run import execute

    replicas += [Replica(answer='{"name": "f", "arguments": {}}'), Replica(answer='{"name": "f", "arguments": {}}')]
    spec = build_spec(None, run_options({"tasks": "bfcl-simple", "n": 6, "backend": "openai", "concurrency": 2,
                                         "base_url": [s.url for s in replicas], "out": tmp_path, "quiet": True}))
    execute(spec)
    replay = read_replay(tmp_path / "replay.jsonl")
    made = {s.url: sum(g.server == s.url for g in replay.generations) for s in replicas}
    assert sum(made.values()) == len(replay.generations) == 18 and all(made.values())
    header = replay.header.build["models"][spec.models[0].label]
    assert header["servers"] == [s.url for s in replicas]
    source = loaded_replays([tmp_path / "replay.jsonl"]).sources[0]
    assert source.servers == {f"{spec.models[0].label} @ {url}": n for url, n in made.items()}


def test_a_usage_error_comes_before_any_request(replicas: list[Replica]) -> None:
    replicas += [Replica(), Replica()]
    local = GenerationRequest(_requests(1)[0].prompt, constraint=Constraint(SCHEMA, "llguidance"))
    with pytest.raises(UsageError, match="engine 'server'"):
        _pool(replicas).generate_stream([local])  # refused as the stream is made, not at its first answer
    assert not any(s.bodies for s in replicas)
