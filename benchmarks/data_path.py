"""Data path: dataset build (schemas/s) and validation throughput (instances/s)
of conformbench against plain python-jsonschema doing the same work.

Validation work: every (schema, instance) pair of the JSON-Schema-Test-Suite
draft 2020-12 files (plus, when the dataset builder is installed, the built
dataset's schemas with their valid and invalid instances). Each side starts
each pass cold (no compiled validator kept from a previous pass) and must
produce every error of every instance:

  conformbench        validator_for(schema).violations(instance)
  jsonschema per call jsonschema.validate(instance, schema)   (re-checks the
                      schema on every call: what naive code does)
  jsonschema reused   one cls(schema, format_checker=...) per schema, then
                      list(iter_errors(instance))             (the floor for
                      python-jsonschema)

Dataset build work: `conformbench dataset build` (in process) against plain
python-jsonschema checking the same built schemas (check_schema) and
validating their instances: how far building is from the cost of merely
checking its output.

Run: python benchmarks/data_path.py [--quick] [--json out.json]
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED, Ratio, Report, cannot_measure, interleave, median, parser  # noqa: E402

SUITE = SHARED / "data" / "json-schema-test-suite" / "tests" / "draft2020-12"


@dataclass(frozen=True)
class Case:
    schema: Any
    instances: tuple[Any, ...]


def suite_cases() -> list[Case]:
    """Test-suite groups whose schema conformbench accepts offline (remote
    refs and \\p{} regexes are refused); the same list goes to every side."""
    from conformbench.errors import ConformbenchError
    from conformbench.validation.validator import SchemaValidator

    if not SUITE.is_dir():
        cannot_measure(f"{SUITE} is missing (the shared JSON-Schema-Test-Suite copy)")
    cases = []
    for path in sorted(SUITE.glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            try:
                SchemaValidator(group["schema"])
            except ConformbenchError:
                continue
            cases.append(Case(group["schema"], tuple(t["data"] for t in group["tests"])))
    return cases


def side_conformbench(cases: list[Case]) -> Callable[[], int]:
    from conformbench.validation import validator as cb

    def run() -> int:
        cb._cached.cache_clear()  # cold, like the other sides
        n = 0
        for case in cases:
            for inst in case.instances:
                n += len(cb.validator_for(case.schema).violations(inst))
        return n

    return run


def side_validate_per_call(cases: list[Case]) -> Callable[[], int]:
    import jsonschema

    def run() -> int:
        n = 0
        for case in cases:
            for inst in case.instances:
                try:
                    jsonschema.validate(inst, case.schema)
                except jsonschema.ValidationError:
                    n += 1
        return n

    return run


def side_reused(cases: list[Case]) -> Callable[[], int]:
    import jsonschema
    from jsonschema.validators import Draft202012Validator, validator_for

    def run() -> int:
        n = 0
        for case in cases:
            cls = validator_for(case.schema, default=Draft202012Validator)
            cls.check_schema(case.schema)
            v = cls(case.schema, format_checker=getattr(cls, "FORMAT_CHECKER", jsonschema.FormatChecker()))
            for inst in case.instances:
                n += len(list(v.iter_errors(inst)))
        return n

    return run


def side_rs(cases: list[Case]) -> Callable[[], int] | None:
    try:
        import jsonschema_rs
    except ImportError:
        return None
    usable = []
    for case in cases:
        try:
            jsonschema_rs.validator_for(case.schema, validate_formats=True)
            usable.append(case)
        except Exception:  # noqa: BLE001 - whatever it refuses is left out of its side only
            continue
    if len(usable) != len(cases):
        return None  # not the same work: leave it out rather than compare unlike things

    def run() -> int:
        n = 0
        for case in usable:
            v = jsonschema_rs.validator_for(case.schema, validate_formats=True)
            for inst in case.instances:
                n += len(list(v.iter_errors(inst)))
        return n

    return run


def bench_validation(report: Report, cases: list[Case], rounds: int, label: str) -> None:
    n_inst = sum(len(c.instances) for c in cases)
    sides: dict[str, Callable[[], int]] = {
        "conformbench": side_conformbench(cases),
        "jsonschema.validate per call": side_validate_per_call(cases),
        "jsonschema reused validator": side_reused(cases),
    }
    rs = side_rs(cases)
    if rs is not None:
        sides["jsonschema-rs (info)"] = rs
    times = interleave(sides, rounds)
    rates = {name: n_inst / median(t) for name, t in times.items()}
    print(f"\nvalidation [{label}]: {len(cases)} schemas, {n_inst} instances, {rounds} rounds (median)")
    for name, rate in rates.items():
        print(f"  {name:32s} {rate:10.0f} instances/s")
    report.measurements[f"validation[{label}]"] = {
        "schemas": len(cases), "instances": n_inst, "rounds": rounds,
        "instances_per_s": rates, "seconds": times,
    }
    cb = rates["conformbench"]
    report.add(Ratio(f"validation[{label}] conformbench/jsonschema.validate", cb / rates["jsonschema.validate per call"],
                     1.0, ">=", "instances/s; proposed target: never slower than naive per-call validation"))
    report.add(Ratio(f"validation[{label}] conformbench/reused-validator", cb / rates["jsonschema reused validator"],
                     0.8, ">=", "instances/s; proposed target: wrapper overhead under 25%"))


# -- dataset build ---------------------------------------------------------------


def find_builder() -> Callable[..., Any] | None:
    """The dataset builder's library entry point, if it exists yet."""
    for mod_name, attr in (("conformbench.schemas.dataset", "build_dataset"),
                           ("conformbench.schemas.build", "build_dataset"),
                           ("conformbench.schemas.builder", "build_dataset")):
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        fn = getattr(mod, attr, None)
        if callable(fn):
            return fn  # type: ignore[no-any-return]
    return None


def bench_build(report: Report, quick: bool) -> list[Case]:
    """Time `conformbench dataset build` via its CLI in process; return the
    built schemas with their instances for the validation benchmark."""
    from conformbench.cli.main import main as cli_main

    from _common import timed

    out_dir = Path(tempfile.mkdtemp(prefix="cb-bench-ds-"))
    out = out_dir / "dataset.jsonl"
    args = ["dataset", "build", "--out", str(out)]
    seconds, rc = timed(lambda: cli_main(args))
    if rc != 0:
        cannot_measure(f"conformbench {' '.join(args)} exited {rc}")
    cases = _read_dataset(out)
    if not cases:
        cannot_measure(f"conformbench dataset build wrote no readable schemas to {out}")
    n_schemas = len(cases)
    check = _check_side(cases)
    times = interleave({"check": check}, 3 if quick else 5)
    floor = median(times["check"])
    print(f"\ndataset build: {n_schemas} schemas in {seconds:.2f} s = {n_schemas / seconds:.1f} schemas/s; "
          f"python-jsonschema check of the same output: {floor:.3f} s")
    report.measurements["dataset_build"] = {
        "schemas": n_schemas, "build_seconds": seconds, "schemas_per_s": n_schemas / seconds,
        "jsonschema_check_seconds": floor, "command": "conformbench " + " ".join(args),
    }
    report.add(Ratio("dataset build time / jsonschema check of its output", seconds / floor, 20.0, "<=",
                     f"{n_schemas / seconds:.1f} schemas/s; proposed target"))
    return cases


def _check_side(cases: list[Case]) -> Callable[[], int]:
    import jsonschema
    from jsonschema.validators import Draft202012Validator, validator_for

    def run() -> int:
        n = 0
        for case in cases:
            cls = validator_for(case.schema, default=Draft202012Validator)
            cls.check_schema(case.schema)
            v = cls(case.schema, format_checker=getattr(cls, "FORMAT_CHECKER", jsonschema.FormatChecker()))
            for inst in case.instances:
                n += int(v.is_valid(inst))
        return n

    return run


def _read_dataset(path: Path) -> list[Case]:
    """Schemas and their instances from a built dataset (JSON Lines), read
    loosely: any 'schema' plus instance lists found in each row."""
    cases = []
    if not path.exists():
        return cases
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        schema = row.get("schema")
        if schema is None:
            continue
        insts: list[Any] = []
        for key, value in row.items():
            if key != "schema" and "instance" in key and isinstance(value, list):
                insts += [v.get("instance", v) if isinstance(v, dict) else v for v in value]
            elif key in ("valid", "invalid", "sample", "instance"):
                insts.append(value)
        cases.append(Case(schema, tuple(insts)))
    return cases


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--no-build", action="store_true", help="skip the dataset-build part")
    a = ap.parse_args()
    report = Report("data_path", "quick" if a.quick else "full")
    rounds = 3 if a.quick else 7
    cases = suite_cases()
    bench_validation(report, cases, rounds, "test-suite 2020-12")
    has_cli = importlib.util.find_spec("conformbench.cli.dataset") is not None
    if a.no_build:
        report.notes.append("dataset build skipped (--no-build)")
    elif not has_cli:
        report.notes.append("dataset build not measured: `conformbench dataset build` does not exist yet")
        print("\n" + report.notes[-1], file=sys.stderr)
    else:
        built = bench_build(report, a.quick)
        with_inst = [c for c in built if c.instances]
        if with_inst:
            bench_validation(report, with_inst, rounds, "built dataset")
    return report.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
