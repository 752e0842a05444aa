"""A server that cannot be reached is one line, ``cannot reach URL: ...``,
before the canary, from every command that takes --base-url (issue #58:
``run`` read a dead URL as a canary failure, with a hint pointing the wrong
way). ``engines cost`` says it too (tests/serving); ``engines probe``:
tests/cli/test_engines.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.backends.base import ReachesServer, backends
from conformbench.cli.main import main
from conformbench.errors import BackendError
from conformbench.records.generation import BackendConfig
from conformbench.testing import SchemaServer


def _said(capsys: pytest.CaptureFixture[str], url: str) -> str:
    err = capsys.readouterr().err
    last = err.rstrip("\n").split("\n")[-1]
    assert last.startswith(f"conformbench: error: cannot reach {url}: "), err
    assert "canary" not in err and "--dialect" not in err and "Traceback" not in err
    return last


def test_the_backend_says_it_cannot_reach_a_dead_url(unused_port: int) -> None:
    url = f"http://127.0.0.1:{unused_port}/v1"
    backend = backends.get("openai")(BackendConfig(model="m", base_url=url))
    assert isinstance(backend, ReachesServer)
    with pytest.raises(BackendError, match=rf"^cannot reach {url}: .*(Connect|connect)"):
        backend.check_reachable()


def test_a_pool_runs_while_one_server_answers(unused_port: int) -> None:
    with SchemaServer("obey") as server:
        pool = backends.get("openai")(BackendConfig(model="m", base_url=(f"http://127.0.0.1:{unused_port}/v1",
                                                                          server.base_url)))
        pool.check_reachable()  # the live one answers: no error


def test_run_against_a_dead_url_says_cannot_reach(tmp_path: Path, unused_port: int,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{unused_port}/v1"
    code = main(["run", "--backend", "openai", "--base-url", url, "--model", "m", "--task", "gsm8k", "-n", "1",
                 "--out", str(tmp_path / "run")])
    assert code == 2
    _said(capsys, url)


def test_reproduce_against_a_dead_url_says_cannot_reach(tmp_path: Path, unused_port: int,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    with SchemaServer("obey") as server:
        assert main(["run", "--backend", "openai", "--base-url", server.base_url, "--model", "m", "--task",
                     "gsm8k", "-n", "1", "--arm", "unconstrained", "--quiet", "--out", str(tmp_path / "run")]) == 0
    capsys.readouterr()
    url = f"http://127.0.0.1:{unused_port}/v1"
    assert main(["reproduce", str(tmp_path / "run/replay.jsonl"), "--base-url", url, "--quiet",
                 "--out", str(tmp_path / "again")]) == 2
    _said(capsys, url)
