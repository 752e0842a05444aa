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

Dataset build work: conformbench.schemas.build.build_dataset (the body of
`conformbench dataset build`; 602 schemas, 60 with --quick) against plain
python-jsonschema checking the same built schemas (check_schema) and
validating their oracle instances: how far building is from the cost of
merely checking its output.

Run: python benchmarks/data_path.py [--quick] [--json out.json]
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED, Ratio, Report, cannot_measure, interleave, median, parser

SUITE = SHARED / "data" / "json-schema-test-suite" / "tests" / "draft2020-12"


@dataclass(frozen=True)
class Case:
    schema: Any
    instances: tuple[Any, ...]


def suite_cases() -> list[Case]:
    """Test-suite groups whose schema both conformbench (offline: remote
    refs are refused) and python-jsonschema (whose Python-re `regex` format
    refuses ECMA's \\p{...}) accept; the same list goes to every side."""
    import jsonschema

    from conformbench.errors import ConformbenchError
    from conformbench.validator.schema_validator import SchemaValidator

    if not SUITE.is_dir():
        cannot_measure(f"{SUITE} is missing (the shared JSON-Schema-Test-Suite copy)")
    cases = []
    for path in sorted(SUITE.glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            try:
                SchemaValidator(group["schema"])
                plain_validator(group["schema"])
            except (ConformbenchError, jsonschema.SchemaError):
                continue
            cases.append(Case(group["schema"], tuple(t["data"] for t in group["tests"])))
    return cases


def side_conformbench(cases: list[Case]) -> Callable[[], int]:
    from conformbench.validator import validator as cb

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


def plain_validator(schema: Any) -> Any:
    """A python-jsonschema validator built the plain way (metaschema check,
    format checker on): the reference both comparison sides use."""
    import jsonschema
    from jsonschema.validators import Draft202012Validator, validator_for

    cls = validator_for(schema, default=Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema, format_checker=getattr(cls, "FORMAT_CHECKER", jsonschema.FormatChecker()))


def side_reused(cases: list[Case]) -> Callable[[], int]:
    def run() -> int:
        n = 0
        for case in cases:
            v = plain_validator(case.schema)
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


def bench_build(report: Report, n: int, rounds: int) -> list[Case]:
    """Time conformbench's dataset build (generate, render in 5 formats, make
    oracle instances and check them, write files) against plain
    python-jsonschema checking the same output (check_schema plus validating
    every oracle instance); return the built cases for the validation part."""
    from conformbench.schemas.build import BuildOptions, build_dataset

    work = Path(tempfile.mkdtemp(prefix="cb-bench-ds-"))
    built: list[Any] = []

    def build() -> None:
        shutil.rmtree(work / "ds", ignore_errors=True)
        built[:] = build_dataset(BuildOptions(out=work / "ds", n=n)).cases

    try:
        build()  # the cases the check side checks; also warms imports
        cases = [Case(c.schema_, (c.valid_instance, *(i.instance for i in c.invalid_instances)))
                 for c in built]
        times = interleave({"conformbench build": build, "jsonschema check": _check_side(cases)}, rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    b, c = median(times["conformbench build"]), median(times["jsonschema check"])
    n_inst = sum(len(x.instances) for x in cases)
    print(f"\ndataset build: {len(cases)} schemas in {b:.2f} s = {len(cases) / b:.1f} schemas/s; "
          f"python-jsonschema check of the same output ({n_inst} instances): {c:.3f} s")
    report.measurements["dataset_build"] = {
        "schemas": len(cases), "instances": n_inst, "rounds": rounds, "seconds": times,
        "schemas_per_s": len(cases) / b,
    }
    report.add(Ratio("dataset build / jsonschema check of its output (time)", b / c, 20.0, "<=",
                     f"{len(cases) / b:.1f} schemas/s; proposed target"))
    return cases


def _check_side(cases: list[Case]) -> Callable[[], int]:
    def run() -> int:
        n = 0
        for case in cases:
            v = plain_validator(case.schema)
            for inst in case.instances:
                n += int(v.is_valid(inst))
        return n

    return run


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--no-build", action="store_true", help="skip the dataset-build part")
    a = ap.parse_args()
    report = Report("data_path", "quick" if a.quick else "full")
    rounds = 3 if a.quick else 7
    cases = suite_cases()
    bench_validation(report, cases, rounds, "test-suite 2020-12")
    if a.no_build:
        report.notes.append("dataset build skipped (--no-build)")
    elif importlib.util.find_spec("conformbench.schemas.build") is None:
        cannot_measure("conformbench.schemas.build (the dataset builder) is missing; rerun with --no-build")
    else:
        n = 60 if a.quick else 602
        report.notes.append(f"dataset: {n} generated schemas (seed 0, default config)")
        built = bench_build(report, n, 2 if a.quick else 3)
        bench_validation(report, built, rounds, f"built dataset n={n}")
    return report.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
