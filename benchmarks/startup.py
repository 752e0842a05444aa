"""start-up: how long a short ``conformbench`` command takes from the shell
to its exit, beside check-jsonschema, the validator users know (issue #58:
each under 0.5 s on an idle machine).

Sides, each a fresh process, interleaved round by round (the order reversed
every other round, so drift in the machine's load hits every side alike):

  conformbench --help               the top-level help (piped: 160 columns)
  conformbench validate S I         one small schema, one valid instance
  conformbench usage error          ``validate --bogus S I``: one line, exit 2
  conformbench mistyped command     ``lsit tasks``: did-you-mean, exit 2
  conformbench list tasks           the task registry's names
  check-jsonschema --help
  check-jsonschema --schemafile S I  the same schema and instance
  python -c pass                    the interpreter's own start (the floor)

conformbench runs this checkout's code (``PYTHONPATH=src``; ``--src DIR``
another checkout's, for a before/after) as its console script does (``from conformbench.cli.main import main; sys.exit(main())``).
check-jsonschema must be installed (``pip install check-jsonschema``; it is
not a dependency of conformbench); without it the script exits 2 and says so.

Bytecode is cached as in a user's install: each side's modules are
compiled once, by an untimed first run, into a folder of this run's own
(``PYTHONPYCACHEPREFIX``); ``PYTHONDONTWRITEBYTECODE`` is dropped.

Printed per side: the median, min and max of the wall seconds (90th
percentile in the JSON) and the median CPU seconds (user + system, of the
process and its children): on a busy machine the wall time counts waiting
for a core, the CPU time much less so; ratios conformbench / check-jsonschema for help and
for one validation (target <= 1), and each conformbench command's median
against the 0.5 s target. Measure on an idle machine: the load is printed
beside the numbers.

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


def _check_jsonschema() -> list[str]:
    """check-jsonschema's own script beside this interpreter first: a
    version manager's shim on PATH (pyenv's is a shell script) would add its
    own start to that side only."""
    here = Path(sys.executable).parent / "check-jsonschema"
    if here.is_file():
        return [str(here)]
    found = shutil.which("check-jsonschema")
    if found is not None:
        return [found]
    cannot_measure("check-jsonschema is not installed: pip install check-jsonschema")


def _sides(folder: Path) -> dict[str, tuple[list[str], int]]:
    """name -> (argv, the exit code it must give)."""
    schema, instance = folder / "s.json", folder / "i.json"
    schema.write_text(json.dumps(SCHEMA), encoding="utf-8")
    instance.write_text(json.dumps(INSTANCE), encoding="utf-8")
    cb = [sys.executable, "-c", _MAIN]
    cj = _check_jsonschema()
    return {
        "conformbench --help": ([*cb, "--help"], 0),
        "conformbench validate S I": ([*cb, "validate", str(schema), str(instance)], 0),
        "conformbench usage error": ([*cb, "validate", "--bogus", str(schema), str(instance)], 2),
        "conformbench mistyped command": ([*cb, "lsit", "tasks"], 2),
        "conformbench list tasks": ([*cb, "list", "tasks"], 0),
        "check-jsonschema --help": ([*cj, "--help"], 0),
        "check-jsonschema --schemafile S I": ([*cj, "--schemafile", str(schema), str(instance)], 0),
        "python -c pass": ([sys.executable, "-c", "pass"], 0),
    }


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
    print(f"load average before: {os.getloadavg()}", flush=True)
    times, cpu = measure(rounds, env)
    print(f"load average after:  {os.getloadavg()}")
    print(f"\n{'side':<36} {'median s':>9} {'min s':>7} {'max s':>7} {'cpu s':>7}   (wall; cpu: median user+sys; "
          f"n={rounds} each)")
    for name, values in times.items():
        print(f"{name:<36} {median(values):9.3f} {min(values):7.3f} {max(values):7.3f} {median(cpu[name]):7.3f}")
        report.measurements[name] = {"median_s": median(values), "min_s": min(values), "max_s": max(values),
                                     "p90_s": percentile(values, 90), "all_s": values,
                                     "cpu_median_s": median(cpu[name]), "cpu_all_s": cpu[name]}
    report.measurements["load_after"] = os.getloadavg()[0]
    med = {name: median(values) for name, values in times.items()}
    print()
    report.add(Ratio("conformbench --help / check-jsonschema --help", med["conformbench --help"]
                     / med["check-jsonschema --help"], 1.0, "<="))
    report.add(Ratio("conformbench validate / check-jsonschema, one file", med["conformbench validate S I"]
                     / med["check-jsonschema --schemafile S I"], 1.0, "<="))
    mcpu = {name: median(values) for name, values in cpu.items()}
    report.add(Ratio("cpu: conformbench --help / check-jsonschema --help", mcpu["conformbench --help"]
                     / mcpu["check-jsonschema --help"], 1.0, "<="))
    report.add(Ratio("cpu: conformbench validate / check-jsonschema, one file", mcpu["conformbench validate S I"]
                     / mcpu["check-jsonschema --schemafile S I"], 1.0, "<="))
    for name in (n for n in med if n.startswith("conformbench ")):
        report.add(Ratio(f"seconds: {name} (median)", med[name], TARGET_SECONDS, "<="))
    return report.finish(args.json)


if __name__ == "__main__":
    sys.exit(main())
