"""The offline path at scale (issue #62, item 4; docs/scale-out.md), two
ratios, each from interleaved rounds on this machine:

  vllm   throughput of ``--backend vllm`` (vLLM's ``LLM`` in process, one
         ``generate_many`` of N requests) against the same vLLM served over
         HTTP (``conformbench.testing.VllmServer``, the openai backend at
         concurrency 16): the same Hugging Face folder, dtype, length, N gsm8k
         questions, greedy, ``--max-tokens M``. Runs in vLLM's own venv (a
         child process of $CONFORMBENCH_VLLM_PYTHON or /opt/vllm-venv/bin/python
         with this checkout first on PYTHONPATH). Both engines are loaded for the
         whole measurement: an idle vLLM busy-polls part of a core, so each side
         is timed beside the other's idle engine, alike.
  ray    ``conformbench run --ray local --parts 2`` against ``--parts 1`` on the
         embedded model (llamacpp, one thread per part), start-up of the local
         Ray cluster included: what a user waits for.

Headlines: generations per second in process / over HTTP (target >= 1: no
HTTP and no JSON per request); 2-part / 1-part wall time (on 2 shared cores
expect about 1 at best: the parts compete for the same cores).

Run alone: python benchmarks/vllm_ray.py [--quick] [--part vllm|ray|both] [--hf-folder DIR] [--rounds R] [--json out.json]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, Ratio, Report, cannot_measure, hf_model_folder, parser

GSM8K = REPO / "src" / "conformbench" / "data" / "gsm8k" / "test.jsonl"


def _questions(n: int) -> list[str]:
    lines = GSM8K.read_text(encoding="utf-8").split("\n")
    return [json.loads(line)["question"] for line in lines[:n] if line.strip()]


def _inner_vllm(folder: Path, n: int, max_tokens: int, rounds: int) -> dict[str, Any]:
    """In vLLM's venv: both sides loaded once, then timed in alternating order."""
    from conformbench.backends.base import backends
    from conformbench.records.generation import BackendConfig, DecodingSettings, GenerationRequest
    from conformbench.records.prompt import Message, Prompt
    from conformbench.testing.vllm_server import VllmServer

    requests = [GenerationRequest(Prompt((Message("user", q),)), DecodingSettings(max_tokens=max_tokens))
                for q in _questions(n)]
    inproc = backends.get("vllm")(BackendConfig(model=str(folder), n_ctx=2048, extra={"max_model_len": 2048}))
    times: dict[str, list[float]] = {"in process": [], "http c16": []}
    tokens: dict[str, int] = {}
    texts: dict[str, list[str]] = {}
    with VllmServer(folder, name="smol", kv_cache_gib=1) as server:
        http = backends.get("openai")(BackendConfig(model="smol", base_url=server.base_url, concurrency=16,
                                                    extra={"response_format_dialect": "json_schema"}))
        sides = {"in process": inproc, "http c16": http}
        for backend in sides.values():  # warm: the first batch pays for compiling and caches
            backend.generate_many(requests[:2])
        for r in range(rounds):
            for name in list(sides) if r % 2 == 0 else list(sides)[::-1]:
                start = time.perf_counter()
                results = sides[name].generate_many(requests)
                times[name].append(time.perf_counter() - start)
                tokens[name] = sum(x.completion_tokens for x in results)
                texts[name] = [x.text for x in results]
                if any(x.finish_reason == "error" for x in results):
                    raise SystemExit(f"{name}: an error: {[x.error for x in results if x.error][:1]}")
        http.close()
    version = inproc.metadata()["vllm_version"]
    inproc.close()
    same = sum(a == b for a, b in zip(texts["in process"], texts["http c16"], strict=True))
    return {"times": times, "tokens": tokens, "same_texts": same, "n": len(requests), "vllm": version}


def _vllm_part(report: Report, folder: Path | None, n: int, max_tokens: int, rounds: int) -> None:
    from conformbench.testing.vllm_server import vllm_missing, vllm_python

    missing = vllm_missing()
    if missing:
        cannot_measure(missing)
    folder = hf_model_folder(folder, Path(tempfile.mkdtemp(prefix="vllm-ray-bench-")))
    out = Path(tempfile.mkdtemp(prefix="vllm-ray-bench-")) / "inner.json"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "VLLM_CPU_KVCACHE_SPACE": "1"}
    done = subprocess.run([vllm_python(), __file__, "--inner-vllm", str(folder), "--n", str(n), "--max-tokens",
                           str(max_tokens), "--rounds", str(rounds), "--inner-out", str(out)],
                          env=env, capture_output=True, text=True, timeout=5400, check=False)
    if done.returncode != 0:
        cannot_measure(f"the vLLM side failed: {(done.stderr.strip().split(chr(10)) or [''])[-1][:300]}")
    data = json.loads(out.read_text(encoding="utf-8"))
    rates = {side: [data["n"] / t for t in ts] for side, ts in data["times"].items()}
    mid = {side: statistics.median(r) for side, r in rates.items()}
    report.measurements["vllm"] = {**data, "generations_per_s": rates}
    spread = ", ".join(f"{side}: {min(r):.2f}-{max(r):.2f}/s" for side, r in rates.items())
    report.add(Ratio("vllm in process / over HTTP at concurrency 16 (generations/s, median)",
                     mid["in process"] / mid["http c16"], 1.0, ">=",
                     f"{mid['in process']:.2f} vs {mid['http c16']:.2f}/s; {spread}; N={data['n']}, "
                     f"{rounds} rounds; greedy texts equal on {data['same_texts']} of {data['n']}; vLLM {data['vllm']}"))


SPEC = """
[[models]]
label = "smol"
backend = "llamacpp"
threads = 1
n_ctx = 1024

[decoding]
max_tokens = {max_tokens}
temperature = 0.0

[[tasks]]
name = "gsm8k"
n = {n}
arms = ["unconstrained"]
"""


def _ray_part(report: Report, n: int, max_tokens: int, rounds: int) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        cannot_measure("ray is not installed: pip install 'conformbench[ray]'")
    work = Path(tempfile.mkdtemp(prefix="vllm-ray-bench-"))
    spec = work / "spec.toml"
    spec.write_text(SPEC.format(n=n, max_tokens=max_tokens), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    times: dict[int, list[float]] = {1: [], 2: []}
    for r in range(rounds):
        for parts in (1, 2) if r % 2 == 0 else (2, 1):
            out = work / f"r{r}-p{parts}"
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "conformbench.cli.main", "run", "--spec", str(spec),
                                   "--out", str(out), "--ray", "local", "--parts", str(parts), "--quiet"],
                                  env=env, capture_output=True, text=True, timeout=3600, check=False)
            times[parts].append(time.perf_counter() - start)
            if done.returncode != 0:
                cannot_measure(f"--parts {parts} failed: {done.stderr.strip()[-300:]}")
    mid = {p: statistics.median(t) for p, t in times.items()}
    report.measurements["ray"] = {"seconds": times, "n": n, "max_tokens": max_tokens}
    report.add(Ratio("ray 2 parts / 1 part (wall seconds, median; lower is faster)", mid[2] / mid[1], 1.0, "<=",
                     f"{mid[2]:.0f} s vs {mid[1]:.0f} s; 2 parts {min(times[2]):.0f}-{max(times[2]):.0f} s, "
                     f"1 part {min(times[1]):.0f}-{max(times[1]):.0f} s; N={n}, {rounds} rounds"))


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--part", choices=("vllm", "ray", "both"), default="both")
    ap.add_argument("--hf-folder", type=Path, default=None, help="the embedded model as a Hugging Face folder")
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--inner-vllm", type=Path, default=None, help=argparse_hidden())
    ap.add_argument("--inner-out", type=Path, default=None, help=argparse_hidden())
    args = ap.parse_args()
    n = args.n or (16 if args.quick else 48)
    rounds = args.rounds or (2 if args.quick else 3)
    if args.inner_vllm is not None:
        data = _inner_vllm(args.inner_vllm, n, args.max_tokens, rounds)
        args.inner_out.write_text(json.dumps(data), encoding="utf-8")
        return 0
    report = Report("vllm_ray.py", "quick" if args.quick else "full")
    report.notes.append(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared)")
    if args.part in ("vllm", "both"):
        _vllm_part(report, args.hf_folder, n, args.max_tokens, rounds)
    if args.part in ("ray", "both"):
        _ray_part(report, max(8, n // 4), args.max_tokens, rounds)
    report.notes.append(f"load average at end {os.getloadavg()[0]:.1f}")
    return report.finish(args.json)


def argparse_hidden() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    raise SystemExit(main())
