"""Runs spread by Ray: ``conformbench run --ray ADDRESS|local --parts N``.

Each part K of N is one Ray task running exactly what ``--shard K/N`` runs
(``runner.run.execute`` with a ``Shard``), so it writes its replay part with
the sharding code (runner/ledger/shards.py) and the driver then folds the parts,
generates whatever is left and writes the reports as an unsharded run does.

- **Resources.** A part asks Ray for its models' ``threads`` CPUs (at least
  one) and the GPUs their backends declare (``BackendManifest.gpus``: the
  transformers backend one unless ``device`` is ``cpu``, vllm its
  ``tensor_parallel_size``); on a cluster with no GPU at all a part asks for
  none and the driver says so, rather than waiting for ever.
- **Where a part writes.** On the driver's node, straight into
  ``OUT/replay.shard-K-of-N.jsonl``; on another node, into a folder of that
  node's temporary directory named after OUT (a retry there resumes it),
  whose part file comes back to the driver as the task's value.
- **Failures.** A part whose worker dies (killed, out of memory, a lost
  node) is run again by Ray, at most ``RETRIES`` times; the retry resumes
  the part file the dead worker wrote (nothing it wrote is lost or written
  twice). A part that raises (a user error: a spec, a model that will not
  load) is not retried: the run stops with its one line, and what every
  part wrote is kept for the next run.
- **Progress.** Each part counts the items×conditions written to its file
  and tells a small actor; the driver shows the sum as one bar.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformbench.backends.base import manifest_of
from conformbench.errors import UsageError
from conformbench.records.spec import ModelSpec, RunSpec
from conformbench.runner.ledger import Shard
from conformbench.runner.progress import RunProgress

__all__ = ["LOCAL", "RETRIES", "PartNeeds", "PartOutcome", "RaySummary", "part_needs", "run_parts", "spread"]

#: the ``--ray`` value that starts a Ray cluster of this machine for the run
LOCAL = "local"
#: times Ray runs a part again after its worker died
RETRIES = 3
#: seconds between two counts of a part's file
_TALLY_S = 1.0
#: tries to start a local Ray cluster
_START_TRIES = 3


@dataclass(frozen=True)
class PartNeeds:
    """What one part asks Ray for."""

    cpus: float
    gpus: float


@dataclass
class PartOutcome:
    """What a part hands back to the driver."""

    index: int
    node: str
    #: the part file's bytes when it was written on another node than the driver's
    content: bytes | None = None
    generated: int = 0
    failed: int = 0


@dataclass
class RaySummary:
    """What the driver saw: per part, its attempts (a retry after a dead worker is a second)."""

    parts: int
    needs: PartNeeds
    attempts: dict[int, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def part_needs(models: Sequence[ModelSpec]) -> PartNeeds:
    """The most any of the run's models asks for (a part runs every model)."""
    cpus = max((float(m.threads or 1) for m in models), default=1.0)
    gpus = 0.0
    for model in models:
        declared = manifest_of(model.backend).gpus
        if declared is not None:
            gpus = max(gpus, float(declared(model.extra)))
    return PartNeeds(cpus=max(cpus, 1.0), gpus=gpus)


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError("--ray needs Ray: pip install 'conformbench[ray]' (docs/scale-out.md)") from None
    return ray


class _Tally:
    """A Ray actor: each part's count of items×conditions written, and its attempts."""

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.starts: dict[int, int] = {}

    def start(self, index: int) -> None:
        self.starts[index] = self.starts.get(index, 0) + 1

    def count(self, index: int, units: int) -> None:
        self.counts[index] = units

    def read(self) -> tuple[dict[int, int], dict[int, int]]:
        return dict(self.counts), dict(self.starts)


def _units_in(path: Path, offset: int, seen: set[tuple[Any, ...]]) -> int:
    """Add the units of the generation lines from ``offset`` on to ``seen``;
    returns the offset after the last whole line."""
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except OSError:
        return offset
    end = data.rfind(b"\n") + 1
    for line in data[:end].split(b"\n"):
        if line.startswith(b'{"kind":"generation"'):
            try:
                gen = json.loads(line)
                seen.add((gen["task"], gen["model"], gen["item_id"], json.dumps(gen["condition"]),
                          gen.get("sample", 0)))
            except (ValueError, KeyError):
                continue
    return offset + end


def _watch(path: Path, report: Callable[[int], object], stop: threading.Event) -> None:
    seen: set[tuple[Any, ...]] = set()
    offset = 0
    while not stop.wait(_TALLY_S):
        offset = _units_in(path, offset, seen)
        report(len(seen))


def _run_part(spec: RunSpec, shard: Shard, driver_node: str, tally: Any) -> PartOutcome:
    """One part, in a Ray worker (module-level: Ray imports it by name)."""
    import ray

    from conformbench.runner.run import execute

    node = str(ray.get_runtime_context().get_node_id())
    here = spec
    if node != driver_node:  # OUT is the driver's: write below this node's temporary folder
        tag = hashlib.sha256(str(spec.out).encode()).hexdigest()[:16]
        here = spec.model_copy(update={"out": Path(tempfile.gettempdir()) / "conformbench-ray" / tag})
    ray.get(tally.start.remote(shard.index))
    stop = threading.Event()
    watcher = threading.Thread(target=_watch, args=(shard.path(here.out),
                                                    lambda n: tally.count.remote(shard.index, n), stop), daemon=True)
    watcher.start()
    try:
        summary = execute(here, shard=shard)
    finally:
        stop.set()
        watcher.join()
    path = shard.path(here.out)
    content = path.read_bytes() if here is not spec and path.exists() else None
    return PartOutcome(shard.index, node, content, summary.generated, summary.failed)


def _init(ray: Any, address: str, parts: int, needs: PartNeeds) -> bool:
    """Connect to (or, for ``local``, start) a cluster; True when this run started it."""
    import logging

    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
    if address == LOCAL:
        # Ray gives its raylet a fixed 30 s to register: a loaded machine can miss it, so try again
        for attempt in range(1, _START_TRIES + 1):
            try:
                ray.init(num_cpus=max(1, round(parts * needs.cpus)), **quiet)
                return True
            except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception when its node does not start
                ray.shutdown()
                if attempt == _START_TRIES:
                    first = " ".join(str(exc).split())[:300]
                    raise UsageError(f"--ray local: Ray did not start a cluster here ({_START_TRIES} tries): "
                                     f"{first}") from None
    try:
        ray.init(address=address, **quiet)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise UsageError(f"--ray {address}: cannot connect to a Ray cluster there: {exc}") from None
    return False


def _fit_gpus(ray: Any, needs: PartNeeds, summary: RaySummary) -> PartNeeds:
    if needs.gpus and not ray.cluster_resources().get("GPU", 0):
        summary.notes.append(f"the Ray cluster has no GPU: each part runs on {needs.cpus:g} CPU(s) instead of "
                             f"{needs.gpus:g} GPU(s)")
        return PartNeeds(needs.cpus, 0.0)
    return needs


def run_parts(spec: RunSpec, address: str, parts: int, total: int) -> RaySummary:
    """Run the spec's ``parts`` parts as Ray tasks and bring every part file
    into ``spec.out`` (the caller folds them: an unsharded run does). ``total``:
    the run's items×conditions, for the progress bar."""
    if parts < 1:
        raise UsageError(f"--parts must be at least 1, not {parts}")
    ray = _import_ray()
    out = spec.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    part_spec = spec.model_copy(update={"out": out, "quiet": True, "json_summary": False})
    started = _init(ray, address, parts, part_needs(spec.models))
    try:
        summary = RaySummary(parts, part_needs(spec.models))
        summary.needs = _fit_gpus(ray, summary.needs, summary)
        _run_all(ray, part_spec, summary, total, quiet=spec.quiet)
    finally:
        if started:
            ray.shutdown()
    return summary


def _run_all(ray: Any, spec: RunSpec, summary: RaySummary, total: int, quiet: bool) -> None:
    tally = ray.remote(num_cpus=0)(_Tally).remote()
    task = ray.remote(_run_part).options(num_cpus=summary.needs.cpus, num_gpus=summary.needs.gpus,
                                         max_retries=RETRIES, retry_exceptions=False)
    driver_node = str(ray.get_runtime_context().get_node_id())
    pending = {task.remote(spec, Shard(k, summary.parts), driver_node, tally): k
               for k in range(1, summary.parts + 1)}
    errors: list[str] = []
    with RunProgress(total, 0, quiet) as progress:
        progress.stage(f"ray: {summary.parts} parts of {total} items×conditions, each on {summary.needs.cpus:g} "
                       f"CPU(s)" + (f" and {summary.needs.gpus:g} GPU(s)" if summary.needs.gpus else ""))
        for note in summary.notes:
            progress.log(note)
        shown = 0
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=_TALLY_S)
            for ref in ready:
                errors += _collect(ray, ref, pending.pop(ref), spec.out, summary.parts)
            counts, starts = ray.get(tally.read.remote())
            summary.attempts = starts
            now = sum(counts.values())
            if now > shown:
                progress.step("ray", now - shown)
                shown = now
        for index, attempts in sorted(summary.attempts.items()):
            if attempts > 1:
                progress.log(f"ray: part {index}/{summary.parts} was run again after its worker died "
                             f"({attempts} attempts); each attempt resumed what the one before wrote")
    if errors:
        raise UsageError("; ".join(errors) + f"; what the parts wrote is kept in {spec.out}: run the same "
                         "command again to finish")


def _collect(ray: Any, ref: Any, index: int, out: Path, parts: int) -> list[str]:
    """The part's file into OUT (from another node), or why it failed."""
    try:
        outcome: PartOutcome = ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause if isinstance(getattr(exc, "cause", None), BaseException) else exc
        if isinstance(cause, UsageError):
            return [f"part {index}/{parts}: {cause}"]
        last = (str(cause).strip().split("\n") or [""])[-1]
        return [f"part {index}/{parts} failed: {type(cause).__name__}: {last}"]
    except ray.exceptions.RayError as exc:  # the worker died more than RETRIES times, a node was lost
        return [f"part {index}/{parts} failed after {RETRIES + 1} attempts: {type(exc).__name__}"]
    if outcome.content is not None:
        path = Shard(index, parts).path(out)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_bytes(outcome.content)
        temporary.replace(path)
    return []


def spread(spec: RunSpec, address: str, parts: int) -> RaySummary:
    """``run_parts`` for a built spec: its items×conditions counted first."""
    from conformbench.runner.run import build_plans

    plans = build_plans(spec)
    total = sum(len(plan.units(model.label)) for model in spec.models for plan in plans)
    return run_parts(spec, address, parts, total)
