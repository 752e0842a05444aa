"""Rescoring speed: `validbutwrong run` (rescoring its two committed replays,
BFCL simple and GSM8K, N=200 each) against `conformbench score` on the same
generations.

The same work: validbutwrong's committed replays are converted once (not
timed) into one conformbench replay holding both tasks, the same 200 items
each, the same arms (prompt_json[S] -> prompt_only[S]; constrained arms
recorded under engine `outlines`, the engine that made them), the same texts
and token counts. Both tools then parse, validate and score every generation,
bootstrap confidence intervals and write their reports (validbutwrong:
report.json, report.md, quadrants.svg, ledger.csv per task; conformbench:
report.json, report.md, report.html, ledger.csv, quadrants.svg).

Timed two ways, sides alternating every round:
  in process   validbutwrong.cli.main(["run", ...])  vs  conformbench's
               publish([replay], out)  (the body of `conformbench score`)
  end to end   the two commands, interpreter start and imports included
Printed: conformbench/validbutwrong time ratios (target <= 0.1).

validbutwrong is found in $VALIDBUTWRONG_VENV (default /tmp/vbw-venv); see
benchmarks/vs_validbutwrong.py for the install line.

Run: python benchmarks/rescoring.py [--quick] [--json out.json]
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Ratio, Report, cannot_measure, interleave, median, parser, run_command
from vs_validbutwrong import INSTALL

TASKS = ("bfcl-simple", "gsm8k")  # validbutwrong's order for `run` (task all)
LABEL = "qwen2.5-0.5b-instruct-q4_k_m"
ENGINE = "outlines"  # the engine validbutwrong's committed replays were made with


def vbw_venv() -> Path:
    venv = Path(os.environ.get("VALIDBUTWRONG_VENV", "/tmp/vbw-venv"))
    if not (venv / "bin" / "validbutwrong").exists():
        cannot_measure(f"validbutwrong not found in {venv} (set VALIDBUTWRONG_VENV); install: {INSTALL}")
    return venv


def vbw_package(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python*/site-packages/validbutwrong"))
    if not found:
        cannot_measure(f"no validbutwrong package under {venv}/lib")
    return found[0]


# -- conversion of validbutwrong's replays (untimed) ------------------------------


def _arm_key(vbw_arm: str) -> str:
    """validbutwrong's arm key as conformbench's Condition.arm_key."""
    if vbw_arm.startswith("prompt_json["):
        return "prompt_only[" + vbw_arm[len("prompt_json["):]
    if vbw_arm.startswith(("constrained[", "reason_then_constrain[")):
        return f"{vbw_arm}@{ENGINE}"
    return vbw_arm


def _read_vbw(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0])["meta"], [json.loads(x) for x in lines[1:] if x.strip()]


def convert(pkg: Path, out: Path) -> int:
    """Write one conformbench replay with both tasks; number of generations."""
    from conformbench import __version__
    from conformbench.records.replay import GenerationRecord, ItemRecord, ModelRecord, ReplayHeader
    from conformbench.runner.spec import parse_spec
    from conformbench.tasks.base import tasks

    metas = {t: _read_vbw(pkg / "replays" / f"{t}.jsonl") for t in TASKS}
    spec = parse_spec({
        "models": [{"label": LABEL, "backend": "llamacpp", "model": LABEL + ".gguf", "threads": 4}],
        "tasks": [{"name": t, "n": len(metas[t][1]), "engines": [ENGINE], "max_tokens": 384} for t in TASKS],
        "decoding": {"max_tokens": 384},
    }, "converted spec")
    header = ReplayHeader(run_id=uuid.uuid4().hex, created=datetime.now(UTC).isoformat(),
                          conformbench_version=__version__, spec=spec.replay_dict(),
                          hardware=metas["gsm8k"][0].get("hardware", {}))
    lines = [header, ModelRecord(label=LABEL, backend="llamacpp", metadata=metas["gsm8k"][0])]
    n_gen = 0
    for task_spec in spec.tasks:
        task = tasks.get(task_spec.name)(task_spec.options())
        meta, records = metas[task_spec.name]
        items = {item.id: item for item in task.items()}
        conds = {c.arm_key: c for c in task.conditions()}
        for rec in records:
            item = items[rec["id"]]
            lines.append(ItemRecord(task=task.name, item=item))
            free = rec["arms"]["unconstrained"]["text"]
            for vbw_arm, gen in rec["arms"].items():
                cond = conds[_arm_key(vbw_arm)]
                two_turn = cond.arm == "reason_then_constrain"
                prompt = task.packaging_prompt(item, cond, free) if two_turn else task.prompt(item, cond)
                cap = meta["max_tokens"]["package" if two_turn else "json"]
                excluded = gen.get("unsupported_schema")
                lines.append(GenerationRecord(
                    task=task.name, model=LABEL, item_id=item.id, condition=cond, prompt=prompt,
                    text=gen.get("text", ""),
                    finish_reason="excluded" if excluded else
                    ("length" if gen.get("n_tokens", 0) >= cap else "stop"),
                    completion_tokens=int(gen.get("n_tokens", 0)), seconds=float(gen.get("seconds", 0.0)),
                    compile_seconds=float(gen.get("compile_seconds", 0.0)),
                    free_text=free if two_turn else None, excluded=excluded,
                ))
                n_gen += 1
    with out.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line.model_dump_json() + "\n")
    return n_gen


# -- the two sides --------------------------------------------------------------------


def vbw_in_process(pkg: Path, work: Path) -> Callable[[], Any]:
    sys.path.insert(0, str(pkg.parent))  # pure Python: import it from its venv
    from validbutwrong.cli import main as vbw_main

    def run() -> None:
        out = work / "vbw-inproc"
        shutil.rmtree(out, ignore_errors=True)
        with contextlib.redirect_stdout(io.StringIO()):
            rc = vbw_main(["run", "--out", str(out)])
        if rc != 0:
            cannot_measure(f"validbutwrong run exited {rc} in process")

    return run


def cb_in_process(replay: Path, work: Path) -> Callable[[], Any]:
    from conformbench.reports.publish import publish

    def run() -> None:
        out = work / "cb-inproc"
        shutil.rmtree(out, ignore_errors=True)
        publish([replay], out, [])

    return run


def end_to_end(venv: Path, replay: Path, work: Path) -> dict[str, Callable[[], Any]]:
    cb_exe = shutil.which("conformbench")
    cb = [cb_exe] if cb_exe else [sys.executable, "-m", "conformbench.cli.main"]
    return {
        "validbutwrong run": lambda: run_command(
            [str(venv / "bin" / "validbutwrong"), "run", "--out", str(work / "vbw-cmd")]),
        "conformbench score": lambda: run_command(
            [*cb, "score", str(replay), "--out", str(work / "cb-cmd"), "--quiet"]),
    }


def check_same_n(replay: Path, report: Report) -> None:
    from conformbench.reports.rescore import score_replays

    run = score_replays([replay])
    got = {r.task: r.n for r in run.results}
    report.notes.append(f"converted replay scores N per task: {got} (validbutwrong: 200 each)")
    if any(n != 200 for n in got.values()) or set(got) != set(TASKS):
        cannot_measure(f"the converted replay does not score the same items: {got}")


def main() -> int:
    ap = parser(__doc__)
    a = ap.parse_args()
    venv = vbw_venv()
    pkg = vbw_package(venv)
    report = Report("rescoring", "quick" if a.quick else "full")
    work = Path(tempfile.mkdtemp(prefix="cb-rescore-"))
    try:
        replay = work / "replay.jsonl"
        n_gen = convert(pkg, replay)
        report.notes.append(f"{n_gen} generations (bfcl-simple 200x4 + gsm8k 200x6) from validbutwrong's replays")
        check_same_n(replay, report)
        rounds = 3 if a.quick else 7
        sides = {"validbutwrong": vbw_in_process(pkg, work), "conformbench": cb_in_process(replay, work)}
        times = interleave(sides, rounds)
        e2e = interleave(end_to_end(venv, replay, work), 2 if a.quick else 5)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, ts in {**times, **e2e}.items():
        print(f"  {name:22s} median {median(ts):.3f} s over {len(ts)} runs")
    report.measurements = {"in_process_seconds": times, "end_to_end_seconds": e2e, "generations": n_gen}
    report.add(Ratio("rescoring in-process conformbench/validbutwrong",
                     median(times["conformbench"]) / median(times["validbutwrong"]), 0.1, "<="))
    report.add(Ratio("rescoring end-to-end conformbench score/validbutwrong run",
                     median(e2e["conformbench score"]) / median(e2e["validbutwrong run"]), 0.1, "<="))
    return report.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
