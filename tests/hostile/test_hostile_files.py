"""Special files, size limits and unwritable folders (issue #28, items 10,
11, 12, 14): regular files only, read with a byte limit; every write whole
or not at all; every "cannot" one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformbench.audits.engine_check.sources import schemas_source
from conformbench.cli.main import main
from conformbench.errors import UsageError
from conformbench.files import MAX_SCHEMA_BYTES, read_text_file, write_files
from conformbench.schemas.external import read_external

#: a folder no process may create files in, root included (sysfs)
_UNWRITABLE = Path("/sys")


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformbench.cli.main", *args], capture_output=True,
                          text=True, timeout=timeout)


def _one_line(done: subprocess.CompletedProcess[str], needle: str) -> None:
    assert done.returncode == 2, done.stderr[-400:]
    assert done.stderr.startswith("conformbench: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert needle in done.stderr


def test_a_fifo_as_render_argument_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "schema.json"
    os.mkfifo(fifo)
    _one_line(_cli("render", str(fifo), timeout=30), "is a FIFO, not a regular file")


def test_a_link_to_dev_zero_is_refused(tmp_path: Path) -> None:
    schema, zero = tmp_path / "s.json", tmp_path / "answer.json"
    schema.write_text('{"type": "string"}')
    zero.symlink_to("/dev/zero")
    _one_line(_cli("validate", str(schema), str(zero), timeout=30), "is a device, not a regular file")
    with pytest.raises(UsageError, match="not a regular file"):
        read_text_file(zero, "dataset")


def test_schemas_folder_skips_fifos_and_links_out_of_it(tmp_path: Path) -> None:
    folder = tmp_path / "schemas"
    (folder / "nested").mkdir(parents=True)
    (folder / "ok.json").write_text('{"type": "integer"}')
    os.mkfifo(folder / "fifo.json")
    (folder / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "secret.json").write_text('{"const": "outside"}')
    (folder / "out.json").symlink_to(tmp_path / "secret.json")
    (folder / "nested" / "in.json").write_text('{"type": "string"}')
    (folder / "in.json").symlink_to(folder / "nested" / "in.json")
    entries = {e.id: e for e in read_external(folder)}
    assert getattr(entries["ok"], "schema", None) == {"type": "integer"}
    assert getattr(entries["in"], "schema", None) == {"type": "string"}  # a link inside is followed
    assert "FIFO" in entries["fifo"].reason  # type: ignore[union-attr]
    for name in ("zero", "out"):
        assert "outside the folder" in entries[name].reason  # type: ignore[union-attr]
    source = schemas_source(folder)
    assert sorted(s.id for s in source.schemas) == ["in", "ok"]


def test_a_schema_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as fh:  # sparse: the limit is checked before a byte is read
        fh.truncate(MAX_SCHEMA_BYTES + 1)
    _one_line(_cli("render", str(big)), "larger than 8 MiB")
    folder = tmp_path / "folder"
    folder.mkdir()
    big.rename(folder / "big.json")
    (excluded,) = schemas_source(folder).excluded
    assert "larger than 8 MiB" in excluded.reason


def test_write_files_is_whole_or_nothing(tmp_path: Path) -> None:
    first = tmp_path / "report.md"
    first.write_text("old scoring")
    with pytest.raises(UsageError, match=r"cannot write /sys/report\.html"):
        write_files({first: "new scoring", _UNWRITABLE / "report.html": "new"})
    assert first.read_text() == "old scoring"  # nothing renamed in: no mixed set
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]  # no temporary left
    write_files({first: "new scoring"})
    assert first.read_text() == "new scoring"


def test_score_into_an_unwritable_folder_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    from conformbench.files import shipped_data

    replay = shipped_data("replays/gsm8k.jsonl")
    code = main(["score", str(replay), "--out", str(_UNWRITABLE), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("conformbench: error: cannot write /sys/") and err.count("\n") == 1


def test_an_os_error_anywhere_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the run's lock file is opened by code with no handler of its own: the CLI's
    # last resort turns the OSError into one line and exit 2 (1 means "gate tripped")
    code = main(["run", "--task", "gsm8k", "--n", "1", "--out", str(_UNWRITABLE)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("conformbench: error: cannot use /sys/") and err.count("\n") == 1, err
    code = main(["dataset", "build", "--n", "2", "--out", str(_UNWRITABLE / "ds")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("conformbench: error: ") and err.count("\n") == 1, err


def test_the_json_reader_keeps_its_messages(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"type": "string"}))
    assert json.loads(read_text_file(path)) == {"type": "string"}
    with pytest.raises(UsageError, match="cannot read"):
        read_text_file(tmp_path / "missing.json")
