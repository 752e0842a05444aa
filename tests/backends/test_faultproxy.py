"""The fault proxy itself, against a real (stdlib) HTTP server on 127.0.0.1.

These test the generic machinery; tests/backends/test_server_faults.py puts it
in front of the real llama-cpp-python server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from faultproxy import Fault, FaultPlan, FaultProxy


class _Echo(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        out = json.dumps({"echo": json.loads(body), "path": self.path, "pad": "x" * 4000}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def upstream() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _post(client: httpx.Client, url: str, n: int) -> httpx.Response:
    return client.post(url + "/chat", json={"n": n})


def test_pass_through_reaches_upstream_with_path(upstream: str) -> None:
    with FaultProxy(upstream) as proxy, httpx.Client(timeout=5) as client:
        assert proxy.base_url.endswith("/v1")
        for n in range(3):  # keep-alive clients must still see one request per connection
            resp = _post(client, proxy.base_url, n)
            assert resp.status_code == 200
            assert resp.json()["echo"] == {"n": n}
            assert resp.json()["path"] == "/v1/chat"
        assert [e.index for e in proxy.wait_for_events(3)] == [0, 1, 2]


def test_scripted_faults_then_default(upstream: str) -> None:
    plan = FaultPlan(
        script=(Fault("status", status=503), Fault("drop"), Fault("truncate", keep_bytes=100)),
        then=Fault("delay", seconds=0.05),
    )
    with FaultProxy(upstream, plan) as proxy, httpx.Client(timeout=5) as client:
        assert _post(client, proxy.base_url, 0).status_code == 503
        with pytest.raises(httpx.TransportError):
            _post(client, proxy.base_url, 1)
        with pytest.raises(httpx.TransportError):
            _post(client, proxy.base_url, 2)
        assert _post(client, proxy.base_url, 3).json()["echo"] == {"n": 3}
        kinds = [(e.fault, e.status) for e in proxy.wait_for_events(4)]
        assert kinds == [("status", 503), ("drop", None), ("truncate", None), ("delay", 200)]


def test_hang_trips_the_client_timeout(upstream: str) -> None:
    plan = FaultPlan(script=(Fault("hang", seconds=3),))
    with FaultProxy(upstream, plan) as proxy, httpx.Client(timeout=0.3) as client:
        with pytest.raises(httpx.TimeoutException):
            _post(client, proxy.base_url, 0)
        assert _post(client, proxy.base_url, 1).status_code == 200


def test_kill_after_n_refuses_then_revives(upstream: str) -> None:
    killed = threading.Event()
    plan = FaultPlan(kill_after=2)
    with FaultProxy(upstream, plan, on_kill=killed.set) as proxy, httpx.Client(timeout=2) as client:
        assert _post(client, proxy.base_url, 0).status_code == 200
        assert _post(client, proxy.base_url, 1).status_code == 200
        assert killed.wait(5) and proxy.killed
        with pytest.raises(httpx.ConnectError):
            _post(client, proxy.base_url, 2)
        proxy.revive()
        assert _post(client, proxy.base_url, 3).json()["echo"] == {"n": 3}


def test_dead_upstream_is_a_502() -> None:
    with FaultProxy("http://127.0.0.1:9/v1") as proxy, httpx.Client(timeout=2) as client:
        assert _post(client, proxy.base_url, 0).status_code == 502


def test_refuses_non_loopback_upstreams() -> None:
    for url in ("http://10.0.0.1:80", "http://example.com:80", "https://127.0.0.1:1"):
        with pytest.raises(ValueError):
            FaultProxy(url)
