"""start-up: how long a short ``conformbench`` command takes from the shell
to its exit, beside check-jsonschema, the validator users know (issue #58:
each under 0.5 s on an idle machine).

Sides, each a fresh process, interleaved round by round (the order reversed
every other round, so drift in the machine's load hits every side alike):

  conformbench --help               the top-level help (piped: 160 columns)
  conformbench validate S I         one small schema, one valid instance
  conformbench usage error          ``validate --bogus S I``: one line, exit 2
  conformbench mistyped command     ``lsit tasks``: did-you-mean, exit 2
  conformbench list KIND            each kind: tasks, arms, backends, engines,
                                    formats, sections, models
  check-jsonschema --help
  check-jsonschema --schemafile S I  the same schema and instance
  python -c pass                    the interpreter's own start (the floor)

conformbench runs this checkout's code (``PYTHONPATH=src``; ``--src DIR``
another checkout's, for a before/after) as its console script does (``from conformbench.cli.main import main; sys.exit(main())``).
check-jsonschema is measured where it is installed (``pip install
check-jsonschema``; it is neither a dependency nor an extra of
conformbench); without it the conformbench sides are measured alone, and
the script says that the ratios against it are missing.

Bytecode is cached as in a user's install: each side's modules are
compiled once, by an untimed first run, into a folder of this run's own
(``PYTHONPYCACHEPREFIX``); ``PYTHONDONTWRITEBYTECODE`` is dropped.

Printed per side: the median, min and max of the wall seconds (90th
percentile in the JSON) and of the CPU seconds (user + system of the child
and its children, ``resource.getrusage(RUSAGE_CHILDREN)``); ratios
conformbench / check-jsonschema for help and for one validation, wall and
CPU side by side (target <= 1), and each conformbench command's median
against the 0.5 s target, wall and CPU. The target is for wall time on an
idle machine; on a busy one the wall time counts waiting for a core, so the
CPU time stands in for it (a start is one thread: idle, its wall time is its
CPU time and a few milliseconds of I/O). The CPU model and the load average
before and after are printed beside the numbers.

Run: python benchmarks/startup.py [--quick] [--rounds R] [--src DIR] [--json out.json]
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, Ratio, Report, cannot_measure, median, parser, percentile

#: the target of issue #58: each short command under half a second, idle
TARGET_SECONDS = 0.5
_MAIN = "import sys; from conformbench.cli.main import main; sys.exit(main())"
SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
          "properties": {"name": {"type": "string", "minLength": 1}, "age": {"type": "integer", "minimum": 0},
                         "tags": {"type": "array", "items": {"type": "string"}}},
          "required": ["name", "age"], "additionalProperties": False}
INSTANCE = {"name": "Ada", "age": 36, "tags": ["math"]}


#: each ``list`` kind (cli/list.py's KINDS)
LIST_KINDS = ("tasks", "arms", "backends", "engines", "formats", "sections", "models")
CJ_MISSING = ("check-jsonschema is not installed (pip install check-jsonschema; not a dependency or extra of "
              "conformbench): conformbench measured alone, no ratios against it")


def _check_jsonschema() -> list[str] | None:
    """check-jsonschema's own script beside this interpreter first: a
    version manager's shim on PATH (pyenv's is a shell script) would add its
    own start to that side only. None: not installed."""
    here = Path(sys.executable).parent / "check-jsonschema"
    if here.is_file():
        return [str(here)]
    found = shutil.which("check-jsonschema")
    return None if found is None else [found]


def _sides(folder: Path) -> dict[str, tuple[list[str], int]]:
    """name -> (argv, the exit code it must give)."""
    schema, instance = folder / "s.json", folder / "i.json"
    schema.write_text(json.dumps(SCHEMA), encoding="utf-8")
    instance.write_text(json.dumps(INSTANCE), encoding="utf-8")
    cb = [sys.executable, "-c", _MAIN]
    cj = _check_jsonschema()
    sides = {
        "conformbench --help": ([*cb, "--help"], 0),
        "conformbench validate S I": ([*cb, "validate", str(schema), str(instance)], 0),
        "conformbench usage error": ([*cb, "validate", "--bogus", str(schema), str(instance)], 2),
        "conformbench mistyped command": ([*cb, "lsit", "tasks"], 2),
        **{f"conformbench list {kind}": ([*cb, "list", kind], 0) for kind in LIST_KINDS},
    }
    if cj is not None:
        sides["check-jsonschema --help"] = ([*cj, "--help"], 0)
        sides["check-jsonschema --schemafile S I"] = ([*cj, "--schemafile", str(schema), str(instance)], 0)
    sides["python -c pass"] = ([sys.executable, "-c", "pass"], 0)
    return sides


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _once(argv: list[str], code: int, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run of ``argv``."""
    cpu, start = _cpu(), time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode != code:
        last = (proc.stdout + proc.stderr).strip().splitlines() or ["(no output)"]
        cannot_measure(f"{' '.join(argv[-3:])} exited {proc.returncode}, not {code}: {last[-1][:300]}")
    return seconds, _cpu() - cpu


def measure(rounds: int, env: dict[str, str]) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall and CPU seconds of each side, ``rounds`` runs each, interleaved."""
    with tempfile.TemporaryDirectory(prefix="startup-") as tmp:
        # bytecode cached, as a user's install has it: every side's modules are compiled once, by the
        # untimed run, into a folder of this run's own (PYTHONDONTWRITEBYTECODE, set in some shells and
        # CI, made every start compile each conformbench module from source)
        env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        sides = _sides(Path(tmp))
        names = list(sides)
        for name in names:  # one untimed run each: the files in the page cache, .pyc written
            _once(*sides[name], env)
        wall: dict[str, list[float]] = {n: [] for n in names}
        cpu: dict[str, list[float]] = {n: [] for n in names}
        for r in range(rounds):
            for name in names if r % 2 == 0 else names[::-1]:
                w, c = _once(*sides[name], env)
                wall[name].append(w)
                cpu[name].append(c)
    return wall, cpu


def _table(times: dict[str, list[float]], cpu: dict[str, list[float]], rounds: int, report: Report) -> None:
    print(f"\n{'side':<36} {'wall s: median':>14} {'min':>6} {'max':>6}   {'cpu s: median':>13} {'min':>6} "
          f"{'max':>6}   (n={rounds} each)")
    for name, values in times.items():
        used = cpu[name]
        print(f"{name:<36} {median(values):14.3f} {min(values):6.3f} {max(values):6.3f}   {median(used):13.3f} "
              f"{min(used):6.3f} {max(used):6.3f}")
        report.measurements[name] = {"median_s": median(values), "min_s": min(values), "max_s": max(values),
                                     "p90_s": percentile(values, 90), "all_s": values,
                                     "cpu_median_s": median(used), "cpu_min_s": min(used), "cpu_max_s": max(used),
                                     "cpu_all_s": used}
    print()


def _ratios(times: dict[str, list[float]], cpu: dict[str, list[float]], report: Report) -> None:
    """conformbench / check-jsonschema (where installed) and each command
    against the target, wall and CPU side by side."""
    for what, values in (("wall", times), ("cpu", cpu)):
        med = {name: median(v) for name, v in values.items()}
        if "check-jsonschema --help" in med:
            report.add(Ratio(f"{what}: conformbench --help / check-jsonschema --help",
                             med["conformbench --help"] / med["check-jsonschema --help"], 1.0, "<="))
            report.add(Ratio(f"{what}: conformbench validate / check-jsonschema, one file",
                             med["conformbench validate S I"] / med["check-jsonschema --schemafile S I"], 1.0, "<="))
    for name in (n for n in times if n.startswith("conformbench ")):
        for what, values in (("wall", times), ("cpu", cpu)):
            report.add(Ratio(f"{what} seconds: {name} (median)", median(values[name]), TARGET_SECONDS, "<="))


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--rounds", type=int, default=None, help="timed runs of each side (default 15; --quick 5)")
    ap.add_argument("--src", type=Path, default=REPO / "src",
                    help="the conformbench source folder to time (default: this checkout's src; another checkout's "
                         "src gives a before/after)")
    args = ap.parse_args()
    rounds = args.rounds or (5 if args.quick else 15)
    report = Report("startup", "quick" if args.quick else "full")
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERMINAL_WIDTH")}
    if not (args.src / "conformbench" / "cli" / "main.py").is_file():
        cannot_measure(f"{args.src} holds no conformbench/cli/main.py")
    env["PYTHONPATH"] = os.pathsep.join([str(args.src.resolve()), *filter(None, [env.get("PYTHONPATH")])])
    report.notes.append(f"conformbench source: {args.src.resolve()}")
    report.notes.append(f"the {TARGET_SECONDS} s target is for wall time on an idle machine; the CPU seconds "
                        "(user + sys) stand in for it on a busy one")
    if _check_jsonschema() is None:
        report.notes.append(CJ_MISSING)
        print(f"note: {CJ_MISSING}", flush=True)
    report.measurements["load_before"] = os.getloadavg()
    print(f"load average before: {os.getloadavg()}", flush=True)
    times, cpu = measure(rounds, env)
    report.measurements["load_after"] = os.getloadavg()
    print(f"load average after:  {os.getloadavg()}")
    _table(times, cpu, rounds, report)
    _ratios(times, cpu, report)
    return report.finish(args.json)


if __name__ == "__main__":
    sys.exit(main())
