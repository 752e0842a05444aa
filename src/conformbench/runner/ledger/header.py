"""A replay's header: made for a new run, rewritten in place when the run
grows or resumes on another build.

A run resumed or grown on another build (``ReplayHeader.build``: CPU
features, llama.cpp or torch build, threads) gets a note in ``grown`` with
the new build's facts: greedy texts are bit-identical only on one build, so
a replay made in parts says which generations came from which."""

from __future__ import annotations

import json
import os
import stat
import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from conformbench._version import __version__
from conformbench.backends.runinfo import build_facts, hardware_info
from conformbench.errors import UsageError
from conformbench.nofollow import open_read
from conformbench.records.replay import ReplayHeader
from conformbench.records.replay_file import ReplayContents
from conformbench.records.spec import ReplaySpec, RunSpec
from conformbench.runner.ledger.content import dataset_digest
from conformbench.tasks.base import tasks

__all__ = ["BUILD_NOTE", "current_build", "new_header", "note_build", "recorded_spec", "rerun_spec", "rewrite_header"]

_CHUNK = 1 << 20

#: the words of a ``grown`` note that starts a part of the run on another build
BUILD_NOTE = "generations from here on were made on another build: "


def recorded_spec(spec: RunSpec) -> ReplaySpec:
    """What a header records of ``spec``: its ``replay_spec()``, with each
    dataset's content digest beside its path."""
    recorded = spec.replay_spec()
    tasks = [t.model_copy(update={"dataset_sha256": dataset_digest(t.dataset)}) if t.dataset else t
             for t in recorded.tasks]
    return recorded.model_copy(update={"tasks": tasks})


def rerun_spec(recorded: ReplaySpec, out: Path | str, quiet: bool) -> RunSpec:
    """The run spec a header's ``recorded`` spec reruns as, into ``out``:
    ``recorded_spec``'s way back (``reproduce``)."""
    return recorded.run_spec(out=str(out), quiet=quiet)


def new_header(spec: RunSpec) -> ReplayHeader:
    """The header of a new replay of ``spec``, made on this machine."""
    return ReplayHeader(
        run_id=uuid.uuid4().hex,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        conformbench_version=__version__,
        spec=recorded_spec(spec),
        hardware=hardware_info(),
        build=build_facts(spec.models),
        task_versions={t.name: tasks.get(t.name).version for t in spec.tasks},
    )


def stamped(notes: list[str]) -> list[str]:
    when = datetime.now(UTC).isoformat(timespec="seconds")
    return [f"{when}: {note}" for note in notes]


def rewrite_header(contents: ReplayContents, header: ReplayHeader) -> None:
    """Replace the header line of ``contents``'s file (to a temporary file,
    fsync'd, renamed over the replay) and of ``contents``."""
    path = contents.path
    # a fresh temporary name (mkstemp: O_EXCL, never through a link planted beside the replay)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".growing")
    tmp = type(path)(name)
    with os.fdopen(open_read(path), "rb") as src, os.fdopen(fd, "wb") as dst:
        os.fchmod(fd, stat.S_IMODE(os.fstat(src.fileno()).st_mode))  # the replay's mode, not mkstemp's 0600
        src.readline()  # the old header
        dst.write(header.model_dump_json().encode("utf-8") + b"\n")
        remaining = contents.good_size - src.tell()
        while remaining > 0:  # in chunks: a replay of a long run can be large
            chunk = src.read(min(remaining, _CHUNK))
            if not chunk:
                break
            dst.write(chunk)
            remaining -= len(chunk)
        dst.flush()
        os.fsync(dst.fileno())
        size = dst.tell()
    os.replace(tmp, path)
    contents.good_size, contents.header = size, header


def current_build(header: ReplayHeader, where: object = "the replay") -> dict[str, Any]:
    """The build facts of the latest part of a run: the header's, or the
    last ``BUILD_NOTE`` of ``grown`` (one that is not a JSON object is a
    damaged header, refused in one line naming ``where``)."""
    build = dict(header.build)
    for number, note in enumerate(header.grown, start=1):
        _, sep, facts = note.partition(BUILD_NOTE)
        if not sep:
            continue
        try:
            found = json.loads(facts)
        except (ValueError, RecursionError):
            found = None
        if not isinstance(found, dict):
            raise UsageError(f"{where}: the header's grown note {number} names a build that is not a JSON object; "
                             "the replay is damaged")
        build = found
    return build


def note_build(contents: ReplayContents, build: dict[str, Any]) -> bool:
    """Before a run resumes ``contents`` on a machine whose build facts
    (``build``) differ from its latest part's, add a ``BUILD_NOTE`` with
    them to ``grown`` (header rewritten in place); True when it did."""
    if current_build(contents.header, contents.path) == build:
        return False
    note = stamped([f"{BUILD_NOTE}{json.dumps(build, sort_keys=True)}"])
    rewrite_header(contents, contents.header.model_copy(update={"grown": [*contents.header.grown, *note]}))
    return True
