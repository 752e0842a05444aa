"""validate speed: `conformbench validate`'s work, as library calls, against
plain python-jsonschema on real ~230 KB schemas from SchemaStore (see
benchmarks/data/SOURCES.md) with about 190 violations per instance.

The instance: a seeded choice of typed leaf options of the schema (reached
through ``properties`` only), each given a value of the wrong type, so every
one is one ``type`` violation; both sides must report the same number.

Sides, interleaved round by round, each in this process:

  conformbench warm     judge_value(schema, instance, validator=...) with
                        the schema's validator already built (as `validate`
                        runs every instance after the first, and scoring)
  conformbench cold     the body of `conformbench validate SCHEMA INSTANCE`
                        from nothing: caches cleared, schema checked against
                        its metaschema, references and patterns checked, the
                        satisfiability check, the verdict
  conformbench cold+positions   the same with --positions (every schema
                        format rendered once, every violation located)
  jsonschema plain      list(Draft202012Validator(schema).iter_errors(instance))
                        (no metaschema check: what the issue compared with)
  jsonschema checked    what `jsonschema.validate` does: the class of the
                        schema's own draft, check_schema(schema), then
                        list(cls(schema).iter_errors(instance))

Every run is timed twice, wall clock and CPU time of this process
(time.process_time: the whole work is single-threaded, so on an idle machine
the two agree; on a loaded shared machine wall time also counts waiting for
a core). Targets are judged on CPU time; wall times are printed beside.

Ratios: warm / plain and cold / checked, target <= 2 (the same work on both
sides); cold / plain is shown for information (it includes the metaschema
check that plain skips). Positions: seconds for all violations in all five
schema formats, target <= 1 s for about 200 violations on a 200 KB schema,
and the share of it the YAML rendering alone takes (PyYAML's pure-Python
emitter; each format is rendered once).

Run: python benchmarks/validate_speed.py [--quick] [--json out.json]
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Ratio, Report, cannot_measure, median, parser

DATA = Path(__file__).resolve().parent / "data" / "schemastore"
SCHEMAS = ("pantsbuild-2.30.0.json", "claude-code-settings.json")
VIOLATIONS = 190
_WRONG: dict[str, Any] = {"string": 12, "boolean": "yes", "array": "x", "integer": "1", "number": "1",
                          "object": [1], "null": 0}


def _leaves(schema: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """(property path, declared type) of every typed leaf option reached
    through ``properties`` (an object without properties counts as a leaf)."""
    for key, sub in (schema.get("properties") or {}).items():
        if not isinstance(sub, dict):
            continue
        if isinstance(sub.get("properties"), dict) and sub["properties"]:
            yield from _leaves(sub, (*path, key))
        elif isinstance(sub.get("type"), str) and set(sub) <= {"type", "description", "default", "title",
                                                                 "markdownDescription", "examples"}:
            yield (*path, key), sub["type"]


def bad_instance(schema: Any, n: int, seed: int = 0) -> tuple[dict[str, Any], int]:
    """An instance with up to ``n`` wrong-typed leaves; (instance, leaves)."""
    leaves = sorted(_leaves(schema))
    random.Random(seed).shuffle(leaves)
    chosen = leaves[:n]
    out: dict[str, Any] = {}
    for path, kind in chosen:
        node = out
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = _WRONG[kind]
    return out, len(chosen)


def _sides(schema: Any, instance: Any) -> dict[str, Callable[[], int]]:
    import jsonschema

    from conformbench.formats import positions as pos
    from conformbench.schemas.judge import judge_value
    from conformbench.schemas.oracle import require_satisfiable
    from conformbench.validator import validator as cb

    def cold(with_positions: bool) -> Callable[[], int]:
        def run() -> int:
            cb._cached.cache_clear()
            pos._layout.cache_clear()
            validator = cb.validator_for(schema)
            require_satisfiable(schema)
            return len(judge_value(schema, "instance", instance, with_positions, validator).violations)
        return run

    built = cb.validator_for(schema)

    def warm() -> int:
        return len(judge_value(schema, "instance", instance, validator=built).violations)

    def plain() -> int:
        return len(list(jsonschema.Draft202012Validator(schema).iter_errors(instance)))

    def checked() -> int:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        return len(list(cls(schema).iter_errors(instance)))

    return {"conformbench warm": warm, "conformbench cold": cold(False),
            "conformbench cold+positions": cold(True), "jsonschema plain": plain,
            "jsonschema checked": checked}


def _interleave(sides: dict[str, Callable[[], int]], rounds: int) -> dict[str, dict[str, list[float]]]:
    """Each side once per round, order alternating; wall and CPU seconds."""
    names = list(sides)
    out: dict[str, dict[str, list[float]]] = {n: {"wall": [], "cpu": []} for n in names}
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            wall, cpu = time.perf_counter(), time.process_time()
            sides[name]()
            out[name]["cpu"].append(time.process_time() - cpu)
            out[name]["wall"].append(time.perf_counter() - wall)
    return out


def _yaml_render_cpu(schema: Any) -> float:
    from conformbench.formats.base import schema_formats

    start = time.process_time()
    schema_formats.get("yaml")().render(schema)
    return time.process_time() - start


def bench(report: Report, name: str, rounds: int) -> None:
    path = DATA / name
    if not path.is_file():
        cannot_measure(f"{path} is missing")
    schema = json.loads(path.read_text(encoding="utf-8"))
    instance, planted = bad_instance(schema, VIOLATIONS)
    sides = _sides(schema, instance)
    counts = {side: run() for side, run in sides.items()}  # also warms imports and the warm validator
    if len(set(counts.values())) != 1:
        cannot_measure(f"{name}: the sides found different numbers of violations: {counts}")
    times = _interleave(sides, rounds)
    cpu = {side: median(t["cpu"]) for side, t in times.items()}
    wall = {side: median(t["wall"]) for side, t in times.items()}
    positions = cpu["conformbench cold+positions"] - cpu["conformbench cold"]
    positions_wall = wall["conformbench cold+positions"] - wall["conformbench cold"]
    share = _yaml_render_cpu(schema) / positions
    size = path.stat().st_size
    print(f"\n{name}: {size} bytes, {counts['jsonschema plain']} violations ({planted} planted), "
          f"{rounds} rounds (median seconds)")
    for side in sides:
        print(f"  {side:30s} cpu {cpu[side]:8.4f} s   wall {wall[side]:8.4f} s")
    print(f"  {'positions alone':30s} cpu {positions:8.4f} s   wall {positions_wall:8.4f} s"
          f"   (YAML rendering ~{share:.0%} of it)")
    report.measurements[name] = {"bytes": size, "violations": counts["jsonschema plain"], "rounds": rounds,
                                 "median_cpu_s": cpu, "median_wall_s": wall, "seconds": times,
                                 "positions_cpu_s": positions, "positions_wall_s": positions_wall,
                                 "yaml_render_share": share}

    def ratio(a: str, b: str) -> tuple[float, str]:
        return cpu[a] / cpu[b], f"CPU time; wall {wall[a] / wall[b]:.3f}"

    value, detail = ratio("conformbench warm", "jsonschema plain")
    report.add(Ratio(f"{name} warm conformbench/jsonschema plain", value, 2.0, "<=", f"{detail}; validator reused"))
    value, detail = ratio("conformbench cold", "jsonschema checked")
    report.add(Ratio(f"{name} cold conformbench/jsonschema checked", value, 2.0, "<=",
                     f"{detail}; both check the schema, ours also proves it satisfiable"))
    value, detail = ratio("conformbench cold", "jsonschema plain")
    report.add(Ratio(f"{name} cold conformbench/jsonschema plain (info)", value, 2.0, "<=",
                     f"{detail}; plain skips the metaschema check"))
    report.add(Ratio(f"{name} positions seconds ({counts['jsonschema plain']} violations x 5 formats)",
                     positions, 1.0, "<=", f"CPU seconds; wall {positions_wall:.3f} s"))


def main() -> int:
    args = parser(__doc__).parse_args()
    report = Report("validate_speed", "quick" if args.quick else "full")
    rounds = 3 if args.quick else 9
    for name in SCHEMAS[:1] if args.quick else SCHEMAS:
        bench(report, name, rounds)
    from conformbench.validator.patterns import pattern_stats

    stats = pattern_stats()
    report.notes.append(f"pattern matches: {stats.re2_matches} on RE2, {stats.fallback_matches} on the "
                        f"backtracking fallback, {stats.timeouts} timed out; fallback patterns: "
                        f"{len(stats.fallbacks)}")
    return report.finish(args.json)


if __name__ == "__main__":
    raise SystemExit(main())
