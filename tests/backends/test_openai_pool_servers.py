"""Real llama-cpp-python servers on 127.0.0.1 (one thread each), run
through ``conformbench run``. A pool (``--base-url`` twice): one killed
mid-run, the run finishes with every generation exactly once and the replay
names each one's server; both killed, one line, exit 2, and the rerun
resumes. One server (one ``--base-url``) killed mid-run: the same, one
line, exit 2, and the rerun resumes. Servers of different weights (the
embedded model and a copy with one weight tensor changed, served under one
name) refused in one line; and a bad URL beside a good one refused in one
line."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_server import LlamaServer, free_port, kill_once_written, replay_generations

from conformbench.cli.main import main

pytestmark = [pytest.mark.server, pytest.mark.long, pytest.mark.timeout(600)]

ALIAS = "smollm2"


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[[Path], LlamaServer]]:
    started: list[LlamaServer] = []

    def start(model: Path) -> LlamaServer:
        server = LlamaServer(model, tmp_path / f"server{len(started)}.log",
                             ("--model_alias", ALIAS, "--n_threads", "1", "--n_threads_batch", "1"))
        started.append(server)
        server.start()
        return server

    yield start
    for server in started:
        server.kill()


def _args(out: Path, urls: list[str], n: int) -> list[str]:
    return ["run", "--backend", "openai", *[a for u in urls for a in ("--base-url", u)], "--model", ALIAS,
            "--task", "gsm8k", "-n", str(n), "--arm", "unconstrained", "--max-tokens", "6",
            "--concurrency", "1", "--timeout", "60", "--out", str(out), "--quiet"]


def _restarted_rerun_makes_the_rest(servers: list[LlamaServer], args: list[str], n: int,
                                    before: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> None:
    """``servers`` started again at the same addresses (the rerun is the
    same run): the rerun of ``args`` makes exactly the items ``before``
    lacks, and the first run's answers stand as written."""
    for server in servers:
        server.start()
    assert main(args) == 0, capsys.readouterr().err
    after = replay_generations(Path(args[args.index("--out") + 1]) / "replay.jsonl")
    assert len(after) == n and len({g["item_id"] for g in after}) == n  # nothing generated twice
    assert after[:len(before)] == before  # nothing lost


def test_a_server_killed_mid_run_leaves_every_generation_made_once(
        smollm_path: Path, start_server: Callable[[Path], LlamaServer], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    first, second = start_server(smollm_path), start_server(smollm_path)
    out, n = tmp_path / "run", 12
    watcher = kill_once_written(out / "replay.jsonl", 3, [first])
    assert main(_args(out, [first.url, second.url], n)) == 0, capsys.readouterr().err
    watcher.join(timeout=5)
    assert first.proc is not None and first.proc.poll() is not None, "the first server was not killed mid-run"
    gens = replay_generations(out / "replay.jsonl")
    # every generation exactly once, none failed, each naming the server that made it
    assert sorted(g["item_id"] for g in gens) == sorted({g["item_id"] for g in gens}) and len(gens) == n
    assert all(g["finish_reason"] in ("stop", "length") and g["error"] is None for g in gens)
    made = {url: sum(g["server"] == url for g in gens) for url in (first.url, second.url)}
    assert sum(made.values()) == n and all(made.values()), made
    final = [json.loads(line) for line in (out / "replay.jsonl").read_text().splitlines()]
    servers = [r for r in final if r["kind"] == "model" and r.get("final")][-1]["metadata"]["servers"]
    # the model record counts each server's answers, the check before the run (one each) included
    assert {s["base_url"]: s["model_calls"] - 1 for s in servers} == made
    assert servers[0]["down"] and servers[1]["down"] is None and servers[0]["models"] == [ALIAS]
    report = (out / "report.md").read_text(encoding="utf-8")
    for url, count in made.items():
        assert f"answers made by {ALIAS} @ {url}: {count}" in report.replace("\\", "")


def test_no_server_left_exits_2_and_the_rerun_resumes(
        smollm_path: Path, start_server: Callable[[Path], LlamaServer], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    servers = [start_server(smollm_path), start_server(smollm_path)]
    out, n = tmp_path / "run", 10
    args = _args(out, [s.url for s in servers], n)
    watcher = kill_once_written(out / "replay.jsonl", 3, servers)
    assert main(args) == 2
    watcher.join(timeout=5)
    err = capsys.readouterr().err
    assert "every server of the pool is down" in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("conformbench: error")]) == 1
    before = replay_generations(out / "replay.jsonl")
    assert 3 <= len(before) < n and all(g["finish_reason"] != "error" for g in before)
    _restarted_rerun_makes_the_rest(servers, args, n, before, capsys)


def test_one_server_killed_mid_run_exits_2_and_the_rerun_resumes(
        smollm_path: Path, start_server: Callable[[Path], LlamaServer], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """One ``--base-url`` (a pool of one), its server killed after three
    answers: the run stops with one line naming it, exit 2, the answers made
    stay and no error record is written; restarted at the same address, the
    rerun makes exactly the rest."""
    server = start_server(smollm_path)
    out, n = tmp_path / "run", 8
    args = _args(out, [server.url], n)
    watcher = kill_once_written(out / "replay.jsonl", 3, [server])
    assert main(args) == 2
    watcher.join(timeout=5)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("conformbench: error")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert f"the server is down: {server.url}" in lines[0] and "a rerun resumes" in lines[0]
    before = replay_generations(out / "replay.jsonl")
    assert 3 <= len(before) < n and all(g["finish_reason"] != "error" and g.get("server") is None for g in before)
    _restarted_rerun_makes_the_rest([server], args, n, before, capsys)


def test_servers_of_different_weights_are_refused_in_one_line(
        smollm_path: Path, start_server: Callable[[Path], LlamaServer], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    changed = tmp_path / "changed.gguf"
    _change_one_tensor(smollm_path, changed)
    first, second = start_server(smollm_path), start_server(changed)  # one name, two weights
    out = tmp_path / "run"
    assert main(_args(out, [first.url, second.url], 2)) == 2
    err = capsys.readouterr().err.strip()
    assert "answer one greedy prompt differently" in err and first.url in err and second.url in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (out / "replay.jsonl").exists() or not replay_generations(out / "replay.jsonl")


def test_a_bad_url_beside_a_good_one_is_refused_in_one_line(
        smollm_path: Path, start_server: Callable[[Path], LlamaServer], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = start_server(smollm_path), f"http://127.0.0.1:{free_port()}/v1"
    out = tmp_path / "run"
    started = time.monotonic()
    assert main(_args(out, [good.url, bad], 2)) == 2
    err = capsys.readouterr().err.strip()
    assert f"server {bad} of the pool does not answer" in err and len(err.splitlines()) == 1
    assert time.monotonic() - started < 60  # refused at once, not after a run of retries
    assert not (out / "replay.jsonl").exists() or not replay_generations(out / "replay.jsonl")


def _change_one_tensor(source: Path, target: Path) -> None:
    """A copy of ``source`` with its output norm's weights reversed: another
    model under the same name, whose greedy answers differ."""
    gguf = pytest.importorskip("gguf")
    shutil.copyfile(source, target)
    reader = gguf.GGUFReader(str(target), "r+")
    tensor = next(t for t in reader.tensors if t.name == "output_norm.weight")
    tensor.data[:] = tensor.data[::-1].copy()
    reader.data.flush()
    del reader
