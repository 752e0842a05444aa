"""conformbench against validbutwrong 0.1.1: the same live GSM8K run, end to end.

Both tools generate the same first N GSM8K test problems through the same
six arms (unconstrained, prompt_only/prompt_json[answer], constrained[answer],
prompt_only/prompt_json[reasoning], constrained[reasoning],
reason_then_constrain[answer]; the two-turn arm reuses the free text in both)
with the same embedded SmolLM2 GGUF, greedy decoding, the same constraint
engine (validbutwrong's `llamacpp` = llama.cpp GBNF from llama-cpp-python's
converter = conformbench's `gbnf`; `outlines` = outlines-core in both), the
same token caps (384 for every turn, validbutwrong's MAX_TOKENS), the same
prompts (conformbench's `prompt_style = "validbutwrong"`: validbutwrong's
prompt texts and schema display), the same thread count (all cores;
validbutwrong's default of 4 would oversubscribe a small machine) and a
canary before generating, then score and write reports.

Timed: wall time of the complete commands, one after the other (order
alternating between rounds), each into a fresh output directory:
  validbutwrong run --task gsm8k --live --n N --model GGUF --engine E --threads T
  conformbench run --spec SPEC.toml --out DIR   (generates, scores, writes reports)
Printed: the wall-time ratio conformbench/validbutwrong (target <= 0.5), plus
the generation-only ratio, the ratio of seconds per generated token, and how
many of the outputs are the same text on both sides (same prompts, same
greedy decoding: they should be, up to the chat-template rendering and the
engines' tokenization of forced text).

validbutwrong is found in $VALIDBUTWRONG_VENV (default /tmp/vbw-venv):
  python -m venv --system-site-packages /tmp/vbw-venv
  /tmp/vbw-venv/bin/pip install 'validbutwrong[live]==0.1.1'

Run: python benchmarks/vs_validbutwrong.py [--quick] [--n N] [--engine gbnf|outlines|both] [--batched S]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    Ratio,
    Report,
    cannot_measure,
    embedded_model,
    parser,
    run_command,
    threads_default,
)

VBW_VERSION = "0.1.1"
#: conformbench engine -> validbutwrong engine
ENGINES = {"gbnf": "llamacpp", "outlines": "outlines"}
MAX_TOKENS = 384  # validbutwrong.arms.MAX_TOKENS: free, json and package turns
INSTALL = ("python -m venv --system-site-packages /tmp/vbw-venv && "
           "/tmp/vbw-venv/bin/pip install 'validbutwrong[live]==0.1.1'")


@dataclass(frozen=True)
class Setup:
    """What both sides of one comparison share (and conformbench's batching)."""

    exe: Path
    model: Path
    n: int
    threads: int
    rounds: int
    #: conformbench's continuous batching (extra batched = S; 0: off)
    batched: int = 0


@dataclass
class Side:
    wall: float
    generation_seconds: float
    tokens: int
    generations: int
    #: arm key (conformbench's names) -> [generation seconds, tokens], summed over items
    per_arm: dict[str, list[float]]
    #: (item id, arm key) -> generated text
    texts: dict[tuple[str, str], str]


def vbw_bin() -> Path:
    venv = Path(os.environ.get("VALIDBUTWRONG_VENV", "/tmp/vbw-venv"))
    exe = venv / "bin" / "validbutwrong"
    if not exe.exists():
        cannot_measure(f"validbutwrong not found in {venv} (set VALIDBUTWRONG_VENV); install: {INSTALL}")
    probe = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import importlib.metadata as m, llama_cpp, outlines; print(m.version('validbutwrong'))"],
        capture_output=True, text=True,
    )
    version = probe.stdout.strip()
    if probe.returncode != 0:
        cannot_measure(f"validbutwrong's venv lacks its [live] extra; install: {INSTALL}")
    if version != VBW_VERSION:
        cannot_measure(f"validbutwrong {version} found, {VBW_VERSION} expected; install: {INSTALL}")
    return exe


def run_vbw(setup: Setup, engine: str, out: Path) -> Side:
    argv = [str(setup.exe), "run", "--task", "gsm8k", "--live", "--n", str(setup.n), "--model", str(setup.model),
            "--engine", ENGINES[engine], "--threads", str(setup.threads), "--out", str(out)]
    wall, _ = run_command(argv)
    lines = (out / "gsm8k-live.jsonl").read_text(encoding="utf-8").splitlines()
    meta = json.loads(lines[0])["meta"]
    records = [json.loads(line) for line in lines[1:] if line.strip()]
    arms = [a for r in records for a in r["arms"].values()]
    per_arm: dict[str, list[float]] = {}
    texts: dict[tuple[str, str], str] = {}
    for rec in records:
        for key, a in rec["arms"].items():
            arm = key.replace("prompt_json[", "prompt_only[")
            acc = per_arm.setdefault(arm, [0.0, 0.0])
            acc[0] += float(a.get("seconds", 0.0))
            acc[1] += int(a.get("n_tokens", 0))
            texts[str(rec["id"]), arm] = str(a.get("text", ""))
    return Side(wall=wall, generation_seconds=float(meta["wall_seconds"]),
                tokens=sum(int(a.get("n_tokens", 0)) for a in arms), generations=len(arms), per_arm=per_arm,
                texts=texts)


def spec_toml(setup: Setup, engine: str, out: Path) -> str:
    extra = f"extra = {{batched = {setup.batched}}}\n" if setup.batched else ""
    return f"""out = {json.dumps(str(out))}
quiet = true

[[models]]
label = "smollm2"
backend = "llamacpp"
model = {json.dumps(str(setup.model))}
threads = {setup.threads}
n_ctx = 4096
{extra}
[[tasks]]
name = "gsm8k"
n = {setup.n}
engines = [{json.dumps(engine)}]
max_tokens = {MAX_TOKENS}
params = {{prompt_style = "validbutwrong"}}

[decoding]
max_tokens = {MAX_TOKENS}
temperature = 0.0
"""


def run_cb(setup: Setup, engine: str, work: Path) -> Side:
    from conformbench.records.replay_file import read_replay

    out = work / "out"
    spec = work / "spec.toml"
    spec.write_text(spec_toml(setup, engine, out), encoding="utf-8")
    cli = [sys.executable, "-m", "conformbench.cli.main"]
    # `run` generates, then scores and writes the reports, like validbutwrong's `run --live`
    wall, _ = run_command([*cli, "run", "--spec", str(spec), "--out", str(out)])
    replay = out / "replay.jsonl"
    if not replay.exists():
        cannot_measure(f"conformbench run wrote no {replay}")
    contents = read_replay(replay)
    gens = [g for g in contents.generations if g.finish_reason != "excluded"]
    per_arm: dict[str, list[float]] = {}
    texts: dict[tuple[str, str], str] = {}
    for g in gens:
        arm = g.condition.arm_key.split("@")[0]
        acc = per_arm.setdefault(arm, [0.0, 0.0])
        acc[0] += g.seconds
        acc[1] += g.completion_tokens
        texts[g.item_id, arm] = g.text
    return Side(wall=wall, generation_seconds=sum(g.seconds for g in gens),
                tokens=sum(g.completion_tokens for g in gens), generations=len(gens), per_arm=per_arm,
                texts=texts)


def compare(report: Report, engine: str, setup: Setup) -> None:
    work = Path(tempfile.mkdtemp(prefix="cb-vs-vbw-"))
    sides: dict[str, list[Side]] = {"validbutwrong": [], "conformbench": []}
    try:
        for r in range(setup.rounds):
            order = ["validbutwrong", "conformbench"] if r % 2 == 0 else ["conformbench", "validbutwrong"]
            for name in order:
                where = work / f"{name}-{r}"
                where.mkdir()
                print(f"[{engine}] round {r + 1}/{setup.rounds}: {name} ...", flush=True)
                side = (run_vbw(setup, engine, where) if name == "validbutwrong"
                        else run_cb(setup, engine, where))
                print(f"    wall {side.wall:.1f} s, generation {side.generation_seconds:.1f} s, "
                      f"{side.generations} generations, {side.tokens} tokens", flush=True)
                for arm, (secs, toks) in side.per_arm.items():
                    print(f"      {arm:32s} {secs:7.1f} s {int(toks):6d} tokens", flush=True)
                sides[name].append(side)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    record(report, engine, setup, sides)


def record(report: Report, engine: str, setup: Setup, sides: dict[str, list[Side]]) -> None:
    def total(name: str, attr: str) -> float:
        return float(sum(getattr(s, attr) for s in sides[name]))

    cb, vbw = "conformbench", "validbutwrong"
    wall = total(cb, "wall") / total(vbw, "wall")
    gen = total(cb, "generation_seconds") / total(vbw, "generation_seconds")
    per_tok = (total(cb, "wall") / max(total(cb, "tokens"), 1)) / (total(vbw, "wall") / max(total(vbw, "tokens"), 1))
    n, batched = setup.n, f", batched {setup.batched}" if setup.batched else ""
    report.measurements[f"gsm8k n={n} engine={engine}{batched}"] = {
        name: [s.__dict__ for s in runs] for name, runs in sides.items()
    }
    report.add(Ratio(f"wall conformbench/validbutwrong [gsm8k n={n}, {engine}{batched}]", wall, 0.5, "<="))
    # batched: a generation's seconds overlap those decoded beside it, so this sum overcounts
    report.add(Ratio(f"generation-only conformbench/validbutwrong [{engine}] (info)", gen, 0.5, "<="))
    report.add(Ratio(f"seconds-per-token conformbench/validbutwrong [{engine}] (info)", per_tok, 0.5, "<="))
    cb_texts, vbw_texts = sides[cb][0].texts, sides[vbw][0].texts
    shared = sorted(set(cb_texts) & set(vbw_texts))
    same = [k for k in shared if cb_texts[k].strip() == vbw_texts[k].strip()]
    differing = sorted({arm for k in shared if k not in same for arm in [k[1]]})
    report.add(Ratio(f"identical outputs conformbench/validbutwrong [{engine}] (info)",
                     len(same) / max(len(shared), 1), 1.0, ">=",
                     f"{len(same)} of {len(shared)} (item, arm) pairs; arms with differences: {differing}"))


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--n", type=int, default=None, help="GSM8K items (quick 2, full 20)")
    ap.add_argument("--engine", choices=[*ENGINES, "both"], default=None,
                    help="constraint engine (quick: gbnf, full: both)")
    ap.add_argument("--rounds", type=int, default=1, help="runs per side and engine")
    ap.add_argument("--threads", type=int, default=threads_default())
    ap.add_argument("--batched", type=int, default=0,
                    help="conformbench's continuous batching, sequences per step (default 0: off)")
    a = ap.parse_args()
    n = a.n or (2 if a.quick else 20)
    engine = a.engine or ("gbnf" if a.quick else "both")
    setup = Setup(vbw_bin(), embedded_model(), n, a.threads, a.rounds, a.batched)
    report = Report("vs_validbutwrong", "quick" if a.quick else "full")
    report.notes.append(f"validbutwrong {VBW_VERSION} via {setup.exe}; model {setup.model.name}; "
                        f"threads {a.threads}; max_tokens {MAX_TOKENS} every turn; N={n} first GSM8K test "
                        f"items; 6 arms; conformbench batched {a.batched or 'off'}")
    for eng in (list(ENGINES) if engine == "both" else [engine]):
        compare(report, eng, setup)
    return report.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
