"""``conformbench dataset export DIR --to hf --out OUT``."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformbench.cli.main import main

pytest.importorskip("pyarrow")


def test_build_then_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dataset", "build", "--out", str(tmp_path / "ds"), "--n", "6"]) == 0
    capsys.readouterr()
    assert main(["dataset", "export", str(tmp_path / "ds"), "--to", "hf", "--out", str(tmp_path / "hub")]) == 0
    said = capsys.readouterr().out
    assert said.startswith("wrote 6 schemas and ") and "validation items" in said
    for path in ("README.md", "schemas/test-00000-of-00001.parquet", "validation/test-00000-of-00001.parquet"):
        assert (tmp_path / "hub" / path).is_file()


@pytest.mark.parametrize(("args", "message"), [
    (["--to", "hff"], "unknown export layout 'hff' (did you mean 'hf'?)"),
    (["--to", "hf"], "cannot read dataset"),
])
def test_errors_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                        message: str) -> None:
    assert main(["dataset", "export", str(tmp_path / "missing"), *args, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("conformbench: error: ") and message in err and "\n" not in err
