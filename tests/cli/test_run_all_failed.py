"""A run in which no request succeeded exits 2 with one line (not 0, which CI
reads as a pass, nor 1, which means a gate tripped); its error records stay
in the replay and its model record's counters are written at the end. The
server answers (it lists its models) but fails every completion; one that
cannot be reached at all is refused before anything runs
(tests/backends/test_openai_reach.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conformbench.cli.main import main
from conformbench.records.replay_file import read_replay


class _FailingCompletions(BaseHTTPRequestHandler):
    """Lists one model; answers every completion with HTTP 400 (not retried)."""

    def _send(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": "m", "object": "model"}]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._send(400, {"error": {"message": "this server fails every completion"}})

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def failing_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FailingCompletions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_every_request_failing_exits_2(tmp_path: Path, failing_server: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code = main(["run", "--backend", "openai", "--base-url", failing_server,
                 "--model", "m", "--task", "gsm8k", "-n", "1", "--arm", "unconstrained",
                 "--timeout", "1", "--out", str(out)])
    assert code == 2
    err = capsys.readouterr().err
    assert "conformbench: error: every one of the 1 generations of this run failed" in err
    assert "Traceback" not in err
    contents = read_replay(out / "replay.jsonl")
    assert [g.finish_reason for g in contents.generations] == ["error"]
    assert contents.models and contents.models[-1].final
