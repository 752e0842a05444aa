"""Crash safety of ``conformbench run``: SIGKILL a live run on the real
embedded model at several points, resume it, and get what an uninterrupted
run gets.

Guards: records are flushed one by one as they are generated (a kill loses at
most the generation in flight); resume skips exactly the completed records
(nothing lost, nothing generated twice); an unterminated last line is cut off
and redone rather than breaking the replay; the resumed replay scores to the
same report.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.long, pytest.mark.timeout(600)]

N_ITEMS = 3
SPEC = f"""
[[models]]
label = "smol"
backend = "llamacpp"
concurrency = 1
threads = 1
n_ctx = 1024

[decoding]
max_tokens = 12
temperature = 0.0
seed = 0

[[tasks]]
name = "gsm8k"
n = {N_ITEMS}
arms = ["unconstrained"]
"""
GARBAGE = b'{"kind": "generation", "task": "gsm8k", "model": "smo'
_VOLATILE = re.compile(r"second|time|created|duration|per_s|sha256|run_id|path", re.IGNORECASE)


def _command(spec: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "conformbench.cli.main", "run", "--spec", str(spec),
            "--out", str(out), "--quiet"]


def _run(spec: Path, out: Path, hash_seed: str = "0") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    proc = subprocess.run(_command(spec, out), check=False, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    return proc


def _generations(replay: Path) -> list[dict[str, Any]]:
    """Complete generation lines (an unterminated last line is skipped)."""
    if not replay.exists():
        return []
    data = replay.read_bytes()
    lines = data[: data.rfind(b"\n") + 1].splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    return [r for r in records if r["kind"] == "generation"]


def _kill_after(spec: Path, out: Path, k: int) -> int:
    """Start a run and SIGKILL it once the replay holds ``k`` generations;
    returns how many it held when the process was dead."""
    replay = out / "replay.jsonl"
    proc = subprocess.Popen(_command(spec, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            started = replay.exists() and replay.stat().st_size > 0
            if started and len(_generations(replay)) >= k:
                break
            time.sleep(0.02)
        assert proc.poll() is None, f"the run ended before it could be killed at k={k}"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    held = len(_generations(replay))
    assert held < N_ITEMS, "the kill came too late to test anything"
    return held


def _texts(replay: Path) -> dict[tuple[str, ...], str]:
    gens = _generations(replay)
    keys = [(g["task"], g["model"], g["item_id"], json.dumps(g["condition"], sort_keys=True)) for g in gens]
    assert len(keys) == len(set(keys)), "a generation was recorded twice"
    return {key: g["text"] for key, g in zip(keys, gens)}


def _stable(value: Any) -> Any:
    """The report without timings, timestamps, hashes and paths."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if not _VOLATILE.search(k)}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _report(out: Path) -> dict[str, Any]:
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    replays = [{"spec": r["spec"], "generations": r["generations"]} for r in report["replays"]]
    return _stable({"results": report["results"], "replays": replays})


def _check_same_as_reference(out: Path, reference: Path) -> None:
    raw = (out / "replay.jsonl").read_bytes()
    assert raw.endswith(b"\n") and GARBAGE not in raw, "the damaged tail was not cut off"
    assert _texts(out / "replay.jsonl") == _texts(reference / "replay.jsonl")
    got, want = _report(out), _report(reference)
    assert got == want, "reports differ at: " + "; ".join(_diff(got, want, ""))


def _diff(got: Any, want: Any, path: str) -> list[str]:
    if isinstance(got, dict) and isinstance(want, dict):
        return [d for k in {**want, **got} for d in _diff(got.get(k), want.get(k), f"{path}/{k}")]
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        return [d for i, (g, w) in enumerate(zip(got, want)) for d in _diff(g, w, f"{path}[{i}]")]
    return [] if got == want else [f"{path}: {got!r} != {want!r}"]


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("crash") / "spec.toml"
    path.write_text(SPEC, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def reference(spec_file: Path) -> Path:
    """One uninterrupted run."""
    out = spec_file.parent / "reference"
    _run(spec_file, out)
    assert len(_texts(out / "replay.jsonl")) == N_ITEMS
    return out


def test_killed_three_times_with_torn_lines_then_resumed(spec_file: Path, reference: Path) -> None:
    """Kill while the model loads (no generation yet), after 1 and after 2
    generations; tear the last line after each kill past the first; then
    let the run finish."""
    out = spec_file.parent / "killed"
    held = 0
    for k in (0, 1, 2):
        now = _kill_after(spec_file, out, k)
        assert now >= max(k, held), f"the run lost records it had ({held} -> {now})"
        held = now
        if k:
            with (out / "replay.jsonl").open("ab") as fh:  # a record torn mid-write
                fh.write(GARBAGE)
    _run(spec_file, out)
    _check_same_as_reference(out, reference)
    assert len(_generations(out / "replay.jsonl")) == N_ITEMS


def test_same_seed_greedy_runs_give_identical_texts(spec_file: Path, reference: Path) -> None:
    """Determinism of a live run: a second fresh process (another hash seed)
    with the same spec, seed and greedy decoding writes the same texts."""
    out = spec_file.parent / "again"
    _run(spec_file, out, hash_seed="7")
    assert _texts(out / "replay.jsonl") == _texts(reference / "replay.jsonl")
    assert _report(out) == _report(reference)
