"""The probe's journal: each keyword result appended to DIR/engines.partial.jsonl
and flushed as it is made, so that an interrupted ``engines probe`` rerun
with the same command skips what is done (issue #48). The first line holds
the settings and the model; a journal of other settings is refused, never
mixed. ``write_probe`` removes it once engines.json is written."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from conformbench.errors import UsageError
from conformbench.files import jsonl_lines, read_text_file, write_files
from conformbench.nofollow import open_text_out

__all__ = ["JOURNAL_NAME", "ProbeJournal"]

JOURNAL_NAME = "engines.partial.jsonl"
_FORMAT = "conformbench.engines-probe-journal/1"


class ProbeJournal:
    """Results by (engine, output_format, keyword) read back, and new ones appended."""

    def __init__(self, out_dir: Path, header: dict[str, Any]) -> None:
        self.path = out_dir / JOURNAL_NAME
        self.done: dict[tuple[str, str, str], dict[str, Any]] = {}
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot write the probe to {out_dir}: {exc.strerror or exc}") from None
        wanted = {"format": _FORMAT, **header}
        if self.path.exists() or self.path.is_symlink():  # a link is refused by the read
            self._read(wanted)
        else:
            self._append(wanted)

    def _read(self, wanted: dict[str, Any]) -> None:
        lines = jsonl_lines(read_text_file(self.path, "probe journal", links=False))
        try:
            rows = [json.loads(line) for line in lines if line.strip()]
        except ValueError:
            rows = rows_before_torn_line(lines)
            # the torn tail goes, so the rows this rerun appends start on a line of their own
            write_files({self.path: "".join(json.dumps(row) + "\n" for row in rows)})
        if not rows or rows[0] != json.loads(json.dumps(wanted)):
            raise UsageError(f"{self.path} is a probe of other settings or another model: rerun that command, "
                             "or delete the file to start over")
        for row in rows[1:]:
            self.done[(row["engine"], row["output_format"], row["keyword"])] = row["result"]

    def _append(self, row: dict[str, Any]) -> None:
        with open_text_out(self.path) as fh:  # a link there is refused, never followed
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def record(self, engine: str, output_format: str, keyword: str, result: dict[str, Any]) -> None:
        self.done[(engine, output_format, keyword)] = result
        self._append({"engine": engine, "output_format": output_format, "keyword": keyword, "result": result})


def rows_before_torn_line(lines: list[str]) -> list[dict[str, Any]]:
    """The rows before a line cut by a kill mid-write (the rest is redone)."""
    rows: list[dict[str, Any]] = []
    for line in lines:
        try:
            rows.append(json.loads(line))
        except ValueError:
            break
    return rows
