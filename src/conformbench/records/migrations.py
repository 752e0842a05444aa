"""The replay header's layouts, oldest first, and the steps from each to
the current one (``ReplayHeader``'s ``mode="before"`` validator runs them).

A header names its layout with ``format`` (``conformbench.replay``) and an
integer ``version``:

- **1** (``"format": "conformbench.replay/1"``, no ``version`` key): the
  spec a plain JSON object, written with some defaults left out (beams 1,
  attention and mask_trace off, samples 1, no max_rounds, no shots_from,
  format_assertion false) and without the keys that did not exist yet. The
  earliest such headers (2026-11-29) have no ``grown``, no ``build`` and no
  ``decoding.loop_stop``: those runs had no loop stop.
- **2**: ``"format": "conformbench.replay", "version": 2``; the spec typed
  (``records.spec.ReplaySpec``) and written whole, defaults included. A
  condition (a generation's, and a report's) stores the ConCodeEval tasks'
  axes in fields of their own, ``schema_format``, ``output_format`` and
  ``shots`` (``null``, ``null``, ``0`` for every other task), and any other
  task's axes as pairs in ``axes``.
- **3**: every axis is a pair in the condition's ``axes``, the ConCodeEval
  tasks' too (``schema_format``, ``output_format``, ``shots``, in that
  order, their declared one); a condition without axes is
  ``{"arm", "contract", "engine"}``. The header is as in 2.

A condition is read in either layout whatever the header says
(``condition_from_v2``, run by ``Condition``'s validation), so a version 2
replay that a resumed run appended version 3 lines to reads as one file.
Its header is not rewritten (a replay is append-only): it keeps saying 2,
the layout its first lines were written in.

A record's new optional field that reads as its default when missing,
and is left out of the dump at it (``SparseRecord``: a generation's
``mask_toll``, ``think_cut``, ``step``...), is no new layout: files
without it read as they always did, and the version stays.

A new layout adds its number to ``REPLAY_VERSION`` and a step from the one
before to ``_STEPS``; every older replay then reads through the chain. A
header from a newer conformbench is refused in one line (upgrade).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from conformbench.errors import UsageError

__all__ = ["REPLAY_FAMILY", "REPLAY_VERSION", "V2_CELL", "ReplayFormatError", "condition_as_v2",
           "condition_from_v2", "migrate_header"]

#: the ``format`` of every replay header
REPLAY_FAMILY: Final = "conformbench.replay"
#: the layout this conformbench writes (and the newest it reads)
REPLAY_VERSION = 3

#: version 2's own condition fields (the ConCodeEval tasks' axes), in order
V2_CELL: Final = ("schema_format", "output_format", "shots")

#: version 1's ``format``: the family and a major (and optional minor) version
_V1_FORMAT = re.compile(r"conformbench\.replay/(\d{1,9})(?:\.\d{1,9})?")


class ReplayFormatError(UsageError):
    """A header of a layout this conformbench cannot read (another family,
    or a newer version); the reader prefixes the file's path."""


def _from_1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 to 2: the integer version; a spec without
    ``decoding.loop_stop`` was written before the loop stop existed, so its
    run had none. The keys left out at their defaults read as the defaults
    (the typed spec's own), so they need no step."""
    spec = data.get("spec")
    decoding = spec.get("decoding") if isinstance(spec, dict) else None
    if isinstance(spec, dict) and isinstance(decoding, dict) and "loop_stop" not in decoding:
        spec = {**spec, "decoding": {**decoding, "loop_stop": False}}
    return {**data, "format": REPLAY_FAMILY, "version": 2, "spec": spec}


def _from_2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 to 3: the header is unchanged (its conditions, in the
    generation lines, are read by ``condition_from_v2``)."""
    return {**data, "version": 3}


#: version N -> the step that turns a header of version N into N + 1
_STEPS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _from_1, 2: _from_2}


def condition_from_v2(data: Any) -> Any:
    """A condition's object in layout 3: version 2's ``schema_format``,
    ``output_format`` and ``shots`` fields become the first pairs of
    ``axes`` (where a format is set; ``shots`` 0 without one is no axis).
    Anything else is returned as it is, for the field checks."""
    if not isinstance(data, dict) or not any(name in data for name in V2_CELL):
        return data
    rest = {k: v for k, v in data.items() if k not in V2_CELL}
    cell = data.get("schema_format") is not None or data.get("output_format") is not None
    pairs = [[name, data[name]] for name in V2_CELL[:2] if data.get(name) is not None]
    shots = data.get("shots", 0)
    if cell or shots != 0:
        pairs.append(["shots", shots])
    own = rest.get("axes") or []
    return {**rest, "axes": [*pairs, *own]} if pairs else rest


def condition_as_v2(axes: tuple[tuple[str, object], ...]) -> dict[str, object]:
    """Version 2's condition fields for these ``axes`` pairs, then the other
    pairs (left out when none): the layout reports keep
    (``conformbench.report/1``)."""
    values = dict(axes)
    own = [[name, value] for name, value in axes if name not in V2_CELL]
    return {"schema_format": values.get("schema_format"), "output_format": values.get("output_format"),
            "shots": values.get("shots", 0), **({"axes": own} if own else {})}


def _version(data: dict[str, Any]) -> int:
    """The header's layout version; refuses another family's header and a
    newer version's."""
    form = data.get("format", REPLAY_FAMILY)
    if "version" not in data and isinstance(form, str) and (old := _V1_FORMAT.fullmatch(form)):
        version = int(old.group(1))
    elif form == REPLAY_FAMILY:
        version = data.get("version", REPLAY_VERSION)
    else:
        raise ReplayFormatError(f"replay format {str(form)[:80]!r} is not supported "
                                f"(this conformbench reads {REPLAY_FAMILY!r} versions 1 to {REPLAY_VERSION})")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ReplayFormatError(f"replay format version {str(version)[:40]!r} is not a version "
                                "(a whole number from 1)")
    if version > REPLAY_VERSION:
        raise ReplayFormatError(f"replay format {version} is newer than this conformbench reads "
                                f"({REPLAY_VERSION}); upgrade conformbench to read it")
    return version


def migrate_header(data: Any) -> Any:
    """A header line's object in the current layout (anything that is not a
    header object is returned as it is, for the field checks to refuse)."""
    if not isinstance(data, dict) or data.get("kind", "header") != "header":
        return data
    version = _version(data)
    if version == REPLAY_VERSION and "version" in data:
        return data
    data = {**data, "format": REPLAY_FAMILY, "version": version}
    while version < REPLAY_VERSION:
        data = _STEPS[version](data)
        version += 1
    return data
