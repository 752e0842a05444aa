"""The library's two entry points, what the ``run`` and ``score`` commands do:

    import conformbench
    done = conformbench.run(tasks=["gsm8k"], n=4, arms=["constrained[answer]"])
    done.run.results[0].arms          # scored records (report.json's content)
    done.files.markdown               # conformbench-out/report.md
    again = conformbench.score(done.files.json.parent / "replay.jsonl")

``run`` takes a spec file (or nothing: the default run) and the overrides
the command line takes, as keyword arguments named like ``SpecOverrides``'
fields; an unknown keyword is refused with a did-you-mean, never ignored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from conformbench.errors import UsageError
from conformbench.registry import did_you_mean
from conformbench.reports.publish import Published, publish
from conformbench.runner.defaults import SpecOverrides, build_spec
from conformbench.runner.run import execute
from conformbench.runner.shipped import shipped_replays
from conformbench.scoring.compare import DEFAULT_DETECT
from conformbench.scoring.gate import parse_gate
from conformbench.scoring.gate_plan import check_gates_for_spec
from conformbench.scoring.reproduce import Reproduction, compare_reproduction

__all__ = ["reproduce", "run", "score"]

_TUPLE_FIELDS = {f.name for f in dataclasses.fields(SpecOverrides) if str(f.type).startswith("tuple")}


def _overrides(values: dict[str, Any]) -> SpecOverrides:
    known = [f.name for f in dataclasses.fields(SpecOverrides)]
    for key in values:
        if key not in known:
            raise UsageError(f"unknown run option {key!r}{did_you_mean(key, known)}; known: {', '.join(known)}")
    fixed: dict[str, Any] = {
        k: (tuple([v] if isinstance(v, str | int) else v) if k in _TUPLE_FIELDS else v)
        for k, v in values.items()
    }
    for key in ("out", "shots_from"):
        if isinstance(fixed.get(key), str):
            fixed[key] = Path(fixed[key])
    return SpecOverrides(**fixed)


def detect_share(points: float | None) -> float:
    """``--detect`` in points (10 = a 10-point difference) as a share."""
    if points is None:
        return DEFAULT_DETECT
    if not 0 < points <= 100:
        raise UsageError(f"--detect {points:g}: expected a difference in points, above 0 and at most 100")
    return points / 100


def run(spec: Path | str | Mapping[str, Any] | None = None, *, fail_if: Iterable[str] = (),
        force: bool = False, detect: float | None = None, **overrides: Any) -> Published:
    """Generate live (resuming OUT/replay.jsonl where it exists), score and
    write the reports; ``fail_if`` gates are checked (``exit_code`` says
    whether one tripped). ``spec``: a TOML spec file, the same tables as a
    mapping, or None for the default run. ``detect``: the difference, in
    points, each comparison states the items needed for (default 10).
    Progress goes to stderr unless ``quiet=True``."""
    gates = [parse_gate(text) for text in fail_if]
    share = detect_share(detect)
    source = Path(spec) if isinstance(spec, str | Path) else spec
    run_spec = build_spec(source, _overrides(overrides))
    check_gates_for_spec(gates, run_spec)  # an unknown metric is refused before the model loads
    summary = execute(run_spec, force=force)
    done = publish([summary.replay], run_spec.out, gates, run_spec.format_assertion, share)
    return dataclasses.replace(done, generation=summary, spec=run_spec)


def score(replays: Path | str | Sequence[Path | str], *, out: Path | str | None = None,
          fail_if: Iterable[str] = (), format_assertion: bool | None = None,
          detect: float | None = None, against: Sequence[Path | str] = ()) -> Published:
    """Rescore replay files alone (no model) and write every report into
    ``out`` (default: the first replay's folder). ``against``: replays of
    another decoding of the same items (e.g. the greedy ones beside a beam
    search run), paired with these by item and condition in the report."""
    paths = [Path(replays)] if isinstance(replays, str | Path) else [Path(p) for p in replays]
    if not paths:
        raise UsageError("score needs at least one replay file")
    gates = [parse_gate(text) for text in fail_if]
    return publish(paths, Path(out) if out is not None else paths[0].parent, gates, format_assertion,
                   detect_share(detect), [Path(p) for p in against] or None)


def _replay_path(replay: Path | str) -> Path:
    """A replay file, or the name of a shipped one (``conformbench demo --list``)."""
    path = Path(replay)
    if path.is_file() or path.suffix:
        return path
    return shipped_replays().get(str(replay), path)


def reproduce(replay: Path | str, *, out: Path | str = "conformbench-out/reproduce", n: int | None = None,
              detect: float | None = None, quiet: bool = False) -> Reproduction:
    """Rerun ``replay``'s spec on this machine (all items, or the first ``n``
    of each task) into ``out``/replay.jsonl, resuming there, and compare the
    two: identical texts, flipped verdicts, each headline metric's shift
    (``scoring.reproduce``); the comparison is also written to
    ``out``/reproduce.json. ``replay``: a file or a shipped replay's name."""
    from conformbench.records.replay_file import read_replay
    from conformbench.records.spec import RunSpec

    path = _replay_path(replay)
    header = read_replay(path).header
    spec = RunSpec.model_validate({**header.spec, "out": str(out), "quiet": quiet})
    if n is not None:
        if n < 1:
            raise UsageError(f"--n {n}: expected at least 1")
        spec = spec.model_copy(update={"tasks": [t.model_copy(update={"n": n if t.n is None else min(n, t.n)}) for t in spec.tasks]})
    summary = execute(spec)
    done = compare_reproduction(path, summary.replay, detect_share(detect))
    (Path(out) / "reproduce.json").write_text(done.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return done
