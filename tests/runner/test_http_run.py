"""A run through the openai backend at high concurrency against a real local
server that answers out of order: the replay is complete and in the runner's
unit order, and the model record says which speed-ups were on."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from chat_reply import send_chat_reply

from conformbench.api import run_options
from conformbench.records.replay_file import read_replay
from conformbench.runner.defaults import build_spec
from conformbench.runner.run import build_plans, execute
from conformbench.runner.run_options import RunOptions

ANSWER = '{"name": "f", "arguments": {}}'


def options(**values: object) -> RunOptions:
    """The run's options as the API takes them (backend options by keyword)."""
    return run_options(values)


class _Jittery(BaseHTTPRequestHandler):
    """Answers after a random pause (so answers arrive out of order); a
    canary-shaped schema gets its constant, anything else a fixed JSON."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
        canary = (schema.get("properties") or {}).get("canary") or {}
        text = json.dumps({"canary": canary["const"]}) if "const" in canary else ANSWER
        time.sleep(random.uniform(0, 0.03))
        send_chat_reply(self, text)

    def do_GET(self) -> None:
        reply = b'{"data": [{"id": "jittery"}]}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def jittery() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Jittery)
    server.daemon_threads = True
    server.request_queue_size = 128
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.mark.long
@pytest.mark.timeout(300)
def test_a_concurrent_http_run_writes_a_complete_ordered_replay(tmp_path: Path, jittery: str) -> None:
    spec = build_spec(None, options(tasks=("bfcl-simple",), n=20, backend="openai",
                                          base_url=jittery, concurrency=64, out=tmp_path, quiet=True))
    summary = execute(spec)
    replay = read_replay(summary.replay)
    expected = [u.key for p in build_plans(spec) for u in p.units(spec.models[0].label)]
    assert summary.generated == len(expected) == 60
    assert [g.key for g in replay.generations] == expected and not replay.superseded
    assert all(g.finish_reason == "stop" and g.text == ANSWER for g in replay.generations)
    meta = replay.models[0].metadata
    assert meta["speedups"] == {"concurrency": 64, "http_client": "aiohttp", "streamed_results": True}
    assert meta["server_models"] == ["jittery"] and meta["response_format_dialect"] == "json_schema"
