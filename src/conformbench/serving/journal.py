"""``engines cost``'s journal, DIR/requests.jsonl: the settings on its first
line, then a row per request as each one ends (its clock, text, tokens and
error) and a row per batch (one repeat, concurrency level and arm) once all
its requests are in, with the batch's wall time. Rerunning the same command
resumes: finished batches are kept, a batch cut short is measured again
whole (a part-batch's timings were made at another load), and a journal of
other settings is refused, never mixed. It stays beside the report: the
report is computed from it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TextIO

from conformbench.errors import UsageError
from conformbench.files import jsonl_lines, read_text_file, write_files
from conformbench.nofollow import open_text_out
from conformbench.serving.journal_rows import check_row

__all__ = ["JOURNAL_NAME", "BatchKey", "CostJournal"]

JOURNAL_NAME = "requests.jsonl"
_FORMAT = "conformbench.engines-cost-journal/1"

#: (repeat, concurrency, arm)
BatchKey = tuple[int, int, str]


def _key(row: dict[str, Any]) -> BatchKey:
    return int(row["repeat"]), int(row["concurrency"]), str(row["arm"])


def _parsed(lines: list[str]) -> list[tuple[int, Any]]:
    """(line number, JSON value) of each line; a last line that is not JSON
    was cut by a kill mid-write and is left out (the rest is redone); one
    before others is damage (ValueError naming its line)."""
    numbered = [(number, line) for number, line in enumerate(lines, start=1) if line.strip()]
    rows: list[tuple[int, Any]] = []
    for position, (number, line) in enumerate(numbered):
        try:
            rows.append((number, json.loads(line)))
        except (ValueError, RecursionError):
            if position == len(numbered) - 1:
                break
            raise _Damaged(number, "not JSON") from None
    return rows


class _Damaged(ValueError):
    def __init__(self, line: int, why: str) -> None:
        super().__init__(why)
        self.line = line


class CostJournal:
    """Finished batches and their requests read back; new rows appended."""

    def __init__(self, out_dir: Path, header: dict[str, Any]) -> None:
        self.path = out_dir / JOURNAL_NAME
        self.batches: dict[BatchKey, dict[str, Any]] = {}
        self.requests: dict[BatchKey, list[dict[str, Any]]] = {}
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot write to {out_dir}: {exc.strerror or exc}") from None
        self.header = {"format": _FORMAT, **header}
        self._file: TextIO | None = None
        if self.path.exists() or self.path.is_symlink():  # a link is refused by the read
            self._read()
        else:
            self._append(self.header, sync=True)

    def _read(self) -> None:
        try:
            lines = jsonl_lines(read_text_file(self.path, "cost journal", links=False))
            parsed = _parsed(lines)
            if not parsed or parsed[0][1] != json.loads(json.dumps(self.header)):
                raise UsageError(f"{self.path} is a measurement of other settings: rerun that command, use "
                                 "another --out, or delete the file to start over")
            rows = [parsed[0][1], *(self._checked(number, row) for number, row in parsed[1:])]
        except _Damaged as exc:
            raise UsageError(f"{self.path} is damaged at line {exc.line} ({exc}): delete it to start over") from None
        done = {_key(r) for r in rows[1:] if r["kind"] == "batch"}
        kept = [r for r in rows[1:] if _key(r) in done]
        seen: set[tuple[BatchKey, int | None]] = set()
        for row in kept:
            mark = (_key(row), row.get("index"))
            if mark in seen:
                what = "batch" if row["kind"] == "batch" else f"request {row['index']} of batch"
                raise UsageError(f"{self.path} is damaged ({what} {mark[0]} twice): delete it to start over")
            seen.add(mark)
        for row in kept:
            if row["kind"] == "batch":
                self.batches[_key(row)] = row
            else:
                self.requests.setdefault(_key(row), []).append(row)
        torn = len(parsed) < sum(1 for line in lines if line.strip())
        if torn or len(kept) != len(rows) - 1:  # a part-batch or a torn line goes: it is measured again
            write_files({self.path: "".join(json.dumps(r) + "\n" for r in [rows[0], *kept])})

    def _checked(self, number: int, row: Any) -> dict[str, Any]:
        try:
            return check_row(row, self.header)
        except (ValueError, TypeError) as exc:
            raise _Damaged(number, str(exc)) from None

    def _append(self, row: dict[str, Any], sync: bool = False) -> None:
        if self._file is None:  # opened once: a request's row is one write and one flush
            self._file = open_text_out(self.path)  # a link there is refused, never followed
        self._file.write(json.dumps(row) + "\n")
        if sync:  # a request's row needs no flush of its own: a batch without its row is measured again
            self._file.flush()
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def request(self, key: BatchKey, row: dict[str, Any]) -> None:
        """A request's row, written as it ends (flushed and synced with its batch's row)."""
        full = {"kind": "request", "repeat": key[0], "concurrency": key[1], "arm": key[2], **row}
        self.requests.setdefault(key, []).append(full)
        self._append(full)

    def batch(self, key: BatchKey, row: dict[str, Any]) -> None:
        """A batch finished: its row, synced to disk."""
        full = {"kind": "batch", "repeat": key[0], "concurrency": key[1], "arm": key[2], **row}
        self.batches[key] = full
        self._append(full, sync=True)

    def drop_unfinished(self, key: BatchKey) -> None:
        """Forget the rows of a batch that will not finish (stopped)."""
        if key not in self.batches:
            self.requests.pop(key, None)
