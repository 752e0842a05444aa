"""reproduce trail: how far one parameter travels through the code, and how
often the reader is sent back to a room already read (issue #61's last
"done when": following ``api.reproduce``'s replay argument climbs back up
at most 14 times).

The workload is a real replay, reproduced without a model: the shipped
``concodeeval-beam-greedy`` replay (60 generations, one model) is copied
into a fresh folder and ``api.reproduce`` reruns it into that folder, so
the ledger finds every generation already recorded and nothing is
generated.

Definitions (what is counted, under ``sys.setprofile``):

- **room**: a module of the replay's state, under ``conformbench.api``,
  ``conformbench.runner``, ``conformbench.records`` or
  ``conformbench.backends`` (``STATE_ROOMS``). The trail does not follow a
  call into any other ``conformbench`` module: tasks, arms, formats,
  schemas, engines and the validator are what a generation is made of
  (generation begins there), ``scoring`` is where scoring begins; the
  small shared modules (``files``, ``registry``, ``errors``) are not rooms
  either. A backend's ``generate`` stops the trail too.
- **taint**: the replay argument (the file's path) is tainted; so is every
  value a trail call returns, and ``self`` of a trail ``__init__``;
  tainting a value taints its parts two levels down (tuple, list and set
  elements, dict values, an object's attributes), so ``spec.models[0]``
  is tainted when the spec is. Taint is by identity, so strings, bytes and
  numbers are never tainted: CPython shares interned and small ones, and
  an unrelated ``"llamacpp"`` or ``""`` would join the trail.
- **trail call**: a call of a Python function of a room one of whose
  arguments (``self`` included) is tainted, or is a tuple, list, set or
  dict holding a tainted value.
- **edge**: caller room -> callee room of a trail call, the caller being
  the nearest trail call below it on the stack, when the two rooms differ.
- **climb**: an edge into a room the trail had already entered from
  another room (each distinct edge counted once): having left that room,
  the reader is sent back up to it by a call from elsewhere, rather than
  returning to it. A room entered from k rooms counts k - 1 climbs.
- **return**: a trail call that hands a value (not None) back to another
  room; distinct (callee room, function, caller room) triples.

The narrower reading, "an edge B -> A where the trail had earlier
descended A -> B" (a pair of rooms calling each other), finds no such pair
in the replay's state, neither on main nor just before the ledger: imports
run down the layers, so a room can call up only through a callback.
Followed into tasks, formats and schemas (strings tainted too) it found 12
pairs, the same 12 before and after the ledger, none in the replay's
state: it cannot measure #61.

Measured with this script (``PYTHONPATH=src python benchmarks/reproduce_trail.py``;
the issue's 25 rooms, 29 climbs and 68 returns, and a later 31 climbs,
came from methods never committed, so every figure here is this script's,
each commit measured again):

- just before the ledger (93699d2~1): rooms 18, climbs 16, returns 44;
- main at 3dbeec8 (the ledger in ``runner/ledger/``, its door not yet the
  only way in): rooms 20, climbs 17, returns 43;
- the ledger's one door (``run_folder``: ``open_run``, ``reproduction``;
  ``runner.run.reproduce`` the runner's one call for it; the replay held
  open by the ledger; the build facts taken from the new header): rooms
  20, climbs 13, returns 45;
- the item comparison in the ledger (``ledger.content.same_item``, no
  longer ``Item.same_as`` in ``records.items``; ``score A B``,
  ``--against`` and ``reproduce`` ask the ledger through
  ``reports.rescore``): rooms 20, climbs 12, returns 44.

The climbs left (``--edges``), 12: ``records.spec`` entered again from the
runner (``build_plans``: ``task_options``) and ``backends.runinfo``
(``ModelSpec.base_urls``); ``records.items`` from the spec and the units
(``TaskOptions``, ``Condition.key``); ``records.base`` from the header and
the key (their records' validators and serializers); ``records.replay``
from the header and the runner's turns (``ReplayHeader``'s validator,
``GenerationRecord.answer``); ``records.generation`` from the spec and the
turns (its dataclasses built); and ``runner.units`` from the session and
the turns (``WorkUnit.key``, ``UnitContext``). Each is a room calling a
record type's own method, validator or constructor: one owner each, so
none goes without copying a record's logic into its callers.

``--edges`` prints every edge, its climbs marked.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

#: the function names where the trail stops: generation begins there
_STOP_FUNCTIONS = frozenset({"generate", "generate_many", "generate_batch"})
#: the rooms: the modules that hold the replay's state and its decisions
STATE_ROOMS = ("conformbench.api", "conformbench.runner", "conformbench.records", "conformbench.backends")
_DEPTH = 2
_WIDE = 64


@dataclass
class Trail:
    """What following the replay argument saw."""

    rooms: list[str] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)
    climbs: list[tuple[str, str]] = field(default_factory=list)
    returns: set[tuple[str, str, str]] = field(default_factory=set)


class _Tracer:
    """The profile hook: taints, trail calls, rooms, edges."""

    def __init__(self, replay: object) -> None:
        self.kept: dict[int, object] = {}  # keeps tainted values alive: an id is never reused
        self.on_trail: dict[int, tuple[FrameType, str]] = {}
        self.stop: FrameType | None = None
        self.trail = Trail()
        self.taint(replay, _DEPTH)

    def taint(self, value: object, depth: int) -> None:
        if value is None or isinstance(value, bool | int | float | str | bytes) or id(value) in self.kept:
            return
        self.kept[id(value)] = value
        if depth == 0:
            return
        for part in _parts(value):
            self.taint(part, depth - 1)

    def tainted(self, value: object) -> bool:
        if id(value) in self.kept:
            return True
        if isinstance(value, tuple | list | set | frozenset):
            return any(id(v) in self.kept for v in list(value)[:_WIDE])
        if isinstance(value, dict):
            return any(id(v) in self.kept for v in list(value.values())[:_WIDE])
        return False

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            self.call(frame)
        elif event == "return":
            self.leave(frame, arg)

    def call(self, frame: FrameType) -> None:
        if self.stop is not None:
            return
        room = frame.f_globals.get("__name__", "")
        if not isinstance(room, str) or not room.startswith("conformbench."):
            return
        if not room.startswith(STATE_ROOMS) or frame.f_code.co_name in _STOP_FUNCTIONS:
            self.stop = frame
            return
        code = frame.f_code
        count = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4) + bool(code.co_flags & 8)
        names = code.co_varnames[:count]
        if not any(self.tainted(frame.f_locals.get(name)) for name in names):
            return
        self.on_trail[id(frame)] = (frame, room)
        if room not in self.trail.rooms:
            self.trail.rooms.append(room)
        caller = self.caller(frame)
        if caller is not None and caller != room:
            self.edge(caller, room)

    def caller(self, frame: FrameType) -> str | None:
        back = frame.f_back
        while back is not None:
            found = self.on_trail.get(id(back))
            if found is not None and found[0] is back:
                return found[1]
            back = back.f_back
        return None

    def edge(self, caller: str, room: str) -> None:
        if (caller, room) in self.trail.edges:
            return
        if any(callee == room for _, callee in self.trail.edges):
            self.trail.climbs.append((caller, room))
        self.trail.edges.append((caller, room))

    def leave(self, frame: FrameType, value: object) -> None:
        if self.stop is frame:
            self.stop = None
            return
        found = self.on_trail.pop(id(frame), None)
        if found is None or found[0] is not frame:
            return
        if frame.f_code.co_name == "__init__":
            self.taint(frame.f_locals.get("self"), _DEPTH)
        if value is None:
            return
        self.taint(value, _DEPTH)
        caller = self.caller(frame)
        if caller is not None and caller != found[1]:
            self.trail.returns.add((found[1], frame.f_code.co_qualname, caller))


def _parts(value: object) -> list[object]:
    if isinstance(value, tuple | list | set | frozenset):
        return list(value)[:_WIDE]
    if isinstance(value, dict):
        return list(value.values())[:_WIDE]
    try:
        attributes = vars(value)
    except TypeError:
        return []
    return list(attributes.values())[:_WIDE]


def follow(replay: str = "concodeeval-beam-greedy") -> Trail:
    """The trail of ``api.reproduce``'s replay argument over the shipped
    replay ``replay``, rerun into a folder that already holds it."""
    from conformbench import api
    from conformbench.reports.rescore import compare_rerun  # noqa: F401
    from conformbench.runner.run import execute  # noqa: F401  (imported before the trace: imports are not calls)
    from conformbench.runner.shipped import shipped_replays

    shipped = shipped_replays()[replay]
    with tempfile.TemporaryDirectory(prefix="reproduce-trail-") as folder:
        out = Path(folder)
        shutil.copyfile(shipped, out / "replay.jsonl")
        argument = Path(shipped)  # the replay argument: the file's path, as a user gives it
        tracer, previous = _Tracer(argument), sys.getprofile()
        sys.setprofile(tracer)
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                api.reproduce(argument, out=out, quiet=True)
        finally:
            sys.setprofile(previous)  # a profiler or coverage tool that was running goes on
    return tracer.trail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--replay", default="concodeeval-beam-greedy", help="a shipped replay's name")
    parser.add_argument("--edges", action="store_true", help="print every edge and climb")
    args = parser.parse_args(argv)
    trail = follow(args.replay)
    if args.edges:
        for caller, room in trail.edges:
            mark = "  CLIMB" if (caller, room) in trail.climbs else ""
            print(f"{caller} -> {room}{mark}")
    print(f"rooms {len(trail.rooms)}, climbs {len(trail.climbs)}, returns {len(trail.returns)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
