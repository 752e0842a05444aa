"""``dataset build`` (issue #28): a ``--schemas`` build says in a log what
it is doing from its first second (reading and bundling every schema counts
nothing yet) and ends on a counted line; a full disk while it writes leaves
the dataset that was there, all three files, and no temporary file."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conformbench.cli.main import main


def _schemas(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"s{k}", "schema": {"type": "object", "properties": {
        "a": {"type": "integer", "minimum": k}}, "required": ["a"]}}) + "\n" for k in range(n)))
    return path


def test_a_schemas_build_logs_its_reading_step_then_counts(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    source = _schemas(tmp_path / "mine.jsonl", 12)
    assert main(["dataset", "build", "--schemas", str(source), "--out", str(tmp_path / "ds")]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert "reading mine.jsonl" in lines, lines  # at once: a log is never silent while nothing is counted
    final = next(i for i, line in enumerate(lines) if line.startswith("mine.jsonl: 12/12 schemas (100.0%)"))
    assert lines.index("reading mine.jsonl") < final
    assert "/s, eta 0s" in lines[final]


def _full_disk() -> None:
    """In the child: files stop growing past 64 KiB (EFBIG, as on a full disk)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))


def test_a_full_disk_leaves_the_old_dataset_whole(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    assert main(["dataset", "build", "--n", "3", "--out", str(out), "--schema-format", "json"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(before) == {"dataset.jsonl", "stats.json", "excluded.json"}
    done = subprocess.run([sys.executable, "-m", "conformbench.cli.main", "dataset", "build", "--n", "40",
                           "--out", str(out)], capture_output=True, text=True, timeout=300,
                          preexec_fn=_full_disk)
    assert done.returncode == 2, done.stderr
    assert "cannot write" in done.stderr and done.stderr.count("conformbench: error:") == 1
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no mix, no torn file, no temporary
