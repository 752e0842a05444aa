"""Runs spread by Ray (``run --ray local --parts N``, runner/ray_parts.py):
the flags' one-line refusals and each backend's declared needs; then, on the
embedded SmolLM2 through llama.cpp on a local Ray cluster of two CPUs, the
same generations and report as one unsharded run, and a run whose part's
worker is killed mid-run: Ray runs the part again, it resumes what the dead
worker wrote, and every generation is there exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from conformbench.cli.main import main
from conformbench.records.replay_file import read_replay
from conformbench.records.spec import ModelSpec
from conformbench.runner.ray_parts import PartNeeds, part_needs

SPEC = """
[[models]]
label = "smol"
backend = "llamacpp"
threads = 1
n_ctx = 1024

[decoding]
max_tokens = 24
temperature = 0.0
seed = 0

[[tasks]]
name = "gsm8k"
n = 8
arms = ["unconstrained", "constrained[answer]"]
"""


def _needs(backend: str, **extra: object) -> PartNeeds:
    return part_needs([ModelSpec(label="m", backend=backend, extra=dict(extra))])


def test_each_part_asks_for_what_its_backend_declares() -> None:
    assert _needs("llamacpp") == PartNeeds(cpus=1.0, gpus=0.0)
    assert _needs("openai") == PartNeeds(cpus=1.0, gpus=0.0)
    assert _needs("transformers") == PartNeeds(cpus=1.0, gpus=1.0)
    assert _needs("transformers", device="cpu") == PartNeeds(cpus=1.0, gpus=0.0)
    assert _needs("vllm", tensor_parallel_size=2) == PartNeeds(cpus=1.0, gpus=2.0)
    two = [ModelSpec(label="a", backend="llamacpp", threads=3), ModelSpec(label="b", backend="transformers")]
    assert part_needs(two) == PartNeeds(cpus=3.0, gpus=1.0)  # a part runs every model: the most of each


@pytest.mark.parametrize(("flags", "said"), [
    (["--parts", "2"], "--parts goes with --ray"),
    (["--ray", "local", "--shard", "1/2"], "give --ray or --shard, not both"),
    (["--ray", "local", "--force"], "--ray does not take --force"),
])
def test_the_flags_are_refused_in_one_line(flags: list[str], said: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--out", str(tmp_path / "out"), "--quiet", *flags])
    err = capsys.readouterr().err
    assert code == 2 and said in err and len(err.strip().split("\n")) == 1 and "Traceback" not in err


def test_a_local_cluster_that_will_not_start_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray gives its raylet 30 s to register: on a loaded machine it may not; tried again, then one line."""
    ray = pytest.importorskip("ray", reason="pip install 'conformbench[ray]'")
    from conformbench.errors import UsageError
    from conformbench.runner import ray_parts

    tries: list[int] = []

    def fail(**_: object) -> None:
        tries.append(1)
        raise Exception("The current node timed out during startup.")  # what Ray raises

    monkeypatch.setattr(ray, "init", fail)
    with pytest.raises(UsageError, match=r"^--ray local: Ray did not start a cluster here \(3 tries\): The current"):
        ray_parts._init(ray, ray_parts.LOCAL, 2, PartNeeds(1.0, 0.0))
    assert len(tries) == 3


def _command(spec: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "conformbench.cli.main", "run", "--spec", str(spec), "--out", str(out), *extra]


def _keys(out: Path) -> list[tuple[str, str, str, str]]:
    return [g.key for g in read_replay(out / "replay.jsonl").generations]


def _texts(out: Path) -> dict[tuple[str, str, str, str], str]:
    return {g.key: g.text for g in read_replay(out / "replay.jsonl").generations}


def _raw_keys(path: Path) -> list[str]:
    """Every generation line's key as written (read_replay would hide a duplicate: the later one wins)."""
    keys = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith('{"kind":"generation"'):
            gen = json.loads(line)
            keys.append(json.dumps([gen["task"], gen["model"], gen["item_id"], gen["condition"],
                                    gen.get("sample", 0), gen.get("round", 0)]))
    return keys


def _results(out: Path) -> object:
    """The report's results (every table's numbers)."""
    return json.loads((out / "report.json").read_text(encoding="utf-8"))["results"]


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The spec, and its unsharded run (one process, no Ray)."""
    pytest.importorskip("ray", reason="pip install 'conformbench[ray]'")
    folder = tmp_path_factory.mktemp("ray")
    spec = folder / "spec.toml"
    spec.write_text(SPEC, encoding="utf-8")
    subprocess.run(_command(spec, folder / "whole", "--quiet"), check=True, timeout=600)
    return spec, folder / "whole"


@pytest.mark.slow
@pytest.mark.long
@pytest.mark.timeout(900)
def test_two_ray_parts_give_the_generations_and_report_of_one_run(whole: tuple[Path, Path],
                                                                  tmp_path: Path) -> None:
    spec, reference = whole
    out = tmp_path / "spread"
    done = subprocess.run(_command(spec, out, "--ray", "local", "--parts", "2", "--json", "--quiet"),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["generated_now"] == 0  # the parts generated everything; the driver folded
    assert not list(out.glob("replay.shard-*"))
    assert _texts(out) == _texts(reference) and len(_texts(reference)) == 16
    assert sorted(_keys(out)) == sorted(_keys(reference))
    assert _results(out) == _results(reference)
    assert len(read_replay(out / "replay.jsonl").models) == 2  # a model record per part: each ran in its worker


def _part_workers(root: int) -> list[int]:
    """Processes whose title is a running part (``ray::_run_part``), below ``root``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if title.startswith("ray::_run_part") and int(entry.name) != root:
            found.append(int(entry.name))
    return found


def _generations_in(path: Path) -> int:
    try:
        return sum(line.startswith(b'{"kind":"generation"') for line in path.read_bytes().split(b"\n"))
    except OSError:
        return 0


@pytest.mark.slow
@pytest.mark.long
@pytest.mark.timeout(900)
def test_a_part_whose_worker_is_killed_is_run_again_and_resumes(whole: tuple[Path, Path], tmp_path: Path) -> None:
    spec, reference = whole
    out = tmp_path / "killed"
    run = subprocess.Popen(_command(spec, out, "--ray", "local", "--parts", "2"), stderr=subprocess.PIPE, text=True)
    killed: tuple[int, int] | None = None
    deadline = time.monotonic() + 500
    while killed is None and run.poll() is None and time.monotonic() < deadline:
        parts = sorted(out.glob("replay.shard-*-of-2.jsonl"))
        written = {p: _generations_in(p) for p in parts}
        workers = _part_workers(run.pid)
        if workers and any(0 < n < 8 for n in written.values()):
            os.kill(workers[0], signal.SIGKILL)
            killed = (workers[0], max(written.values()))
        time.sleep(0.2)
    _, err = run.communicate(timeout=600)
    assert killed is not None, f"no part was seen mid-run: {err[-2000:]}"
    assert run.returncode == 0, err[-3000:]
    assert "run again" in err  # the driver says a part's worker died and Ray ran it again
    counts = Counter(_raw_keys(out / "replay.jsonl"))
    assert set(counts.values()) == {1}, [k for k, n in counts.items() if n > 1]
    assert len(counts) == 16
    assert _texts(out) == _texts(reference)
