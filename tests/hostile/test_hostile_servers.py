"""Hostile servers against the openai backend (a real HTTP server on
127.0.0.1 playing each one, misbehaving_endpoint.py): no key on a redirect
to another origin, a total deadline against a drip, a cap on a gzip bomb and
a huge text, and odd answers recorded as what they are."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from misbehaving_endpoint import Endpoint

from conformbench.backends.base import backends
from conformbench.errors import UsageError
from conformbench.formats.limits import DEFAULT_LIMITS
from conformbench.records.generation import BackendConfig, DecodingSettings, GenerationRequest
from conformbench.records.prompt import Message, Prompt
from conformbench.runner.spec import parse_spec

REQUEST = GenerationRequest(Prompt(messages=(Message("user", "hi"),)), DecodingSettings(max_tokens=4))
KEY = "sk-secret-test-key"


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    with Endpoint() as other, Endpoint(redirect_to=f"http://localhost:{0}") as ep:
        ep.redirect_to = f"http://localhost:{other.server.server_address[1]}/ok"
        ep.other = other  # type: ignore[attr-defined]
        yield ep


def _backend(url: str, timeout_s: float = 5.0, retries: int = 0) -> Any:
    return backends.get("openai")(BackendConfig(base_url=url, timeout_s=timeout_s, max_retries=retries,
                                                concurrency=1, extra={"backoff_s": 0.01}))


def test_no_key_follows_a_redirect_to_another_origin(endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    backend = _backend(endpoint.base("redirect"))
    result = backend.generate(REQUEST)
    meta = backend.metadata()
    assert result.finish_reason == "error" and "another origin" in (result.error or "")
    assert "unavailable" in str(meta["server_models"])
    assert endpoint.seen and all(auth == f"Bearer {KEY}" for _, auth in endpoint.seen)
    assert all(auth != f"Bearer {KEY}" for _, auth in endpoint.other.seen)  # type: ignore[attr-defined]


def test_a_dripping_server_ends_within_a_few_timeouts(endpoint: Endpoint) -> None:
    start = time.monotonic()
    result = _backend(endpoint.base("drip"), timeout_s=1.0, retries=1).generate(REQUEST)
    assert result.finish_reason == "error" and "Timeout" in (result.error or "")
    assert time.monotonic() - start < 4 * 1.0 + 1


@pytest.mark.long
def test_a_gzip_bomb_is_capped_under_1_gb(endpoint: Endpoint) -> None:
    code = ("import sys; from conformbench.backends.base import backends;"
            "from conformbench.records.generation import BackendConfig, GenerationRequest as G;"
            "from conformbench.records.prompt import Message, Prompt;"
            "b=backends.get('openai')(BackendConfig(base_url=sys.argv[1], max_retries=0, concurrency=1));"
            "r=b.generate(G(Prompt(messages=(Message('user', 'hi'),)))); print(r.finish_reason, r.error);"
            # VmHWM, not ru_maxrss: Linux carries a vfork parent's peak into
            # the child's ru_maxrss across exec, so that measured pytest itself
            "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))")
    out = subprocess.run([sys.executable, "-c", code, endpoint.base("bomb")], capture_output=True,
                         text=True, timeout=120, check=True).stdout.split("\n")
    assert out[0].startswith("error") and "inflates to over" in out[0]
    assert int(out[1]) * 1024 < 1024**3, f"peak RSS {int(out[1]) // 1024} MB"


def test_a_huge_text_is_stored_cut_past_the_parse_limit(endpoint: Endpoint) -> None:
    result = _backend(endpoint.base("huge")).generate(REQUEST)
    assert len(result.text) == DEFAULT_LIMITS.max_chars + 1
    assert "3000000 characters" in (result.error or "") and result.finish_reason == "stop"


@pytest.mark.parametrize(("mode", "words"), [("null", "content null"), ("filter", '"content_filter"')])
def test_odd_answers_are_recorded_as_what_they_are(endpoint: Endpoint, mode: str, words: str) -> None:
    result = _backend(endpoint.base(mode)).generate(REQUEST)
    assert result.finish_reason == "error" and words in (result.error or "")


def test_an_absurd_token_count_keeps_a_good_answer(endpoint: Endpoint) -> None:
    result = _backend(endpoint.base("usage")).generate(REQUEST)
    assert result.finish_reason == "stop" and result.text == "{}" and result.prompt_tokens == 0
    assert "usage.prompt_tokens" in (result.error or "")


def test_credentials_in_the_base_url_are_refused_without_echoing_them() -> None:
    spec = {"models": [{"label": "m", "backend": "openai", "base_url": "http://user:pw@127.0.0.1:1/v1"}],
            "tasks": [{"name": "gsm8k"}]}
    with pytest.raises(UsageError) as err:
        parse_spec(spec)
    assert "user name or password" in str(err.value) and "pw" not in str(err.value)
    with pytest.raises(UsageError):
        _backend("http://user:pw@127.0.0.1:1/v1")
