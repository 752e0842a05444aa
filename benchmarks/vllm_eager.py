"""What vLLM's ``--enforce-eager`` (the vllm backend's ``enforce_eager``) buys
and costs on this machine, two ratios from interleaved rounds:

  start   seconds from launching ``conformbench.testing.VllmServer`` on the
          embedded model's Hugging Face folder to its ``/v1/models`` answering,
          eager / compiled (vLLM's default: torch.compile). Each compiled start
          after the first reads vLLM's compile cache, as every start but a
          machine's first does (the first round's compiled start is reported
          apart: it fills the cache, as CI's first start does).
  decode  seconds of one greedy request of ``--max-tokens`` tokens against the
          started server (after one warm-up request), eager / compiled.

The test servers run eager (tests/testing/test_vllm_server.py,
tests/backends/test_tools_vllm.py, tests/backends/vllm): their start-ups were
the largest waits of the long suite; this measures what that trades.

Run alone: python benchmarks/vllm_eager.py [--quick] [--rounds R] [--hf-folder DIR] [--json out.json]
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Ratio, Report, alternated, cannot_measure, hf_model_folder, parser

QUESTION = "Write three sentences about the sea."


def _ask(base_url: str, max_tokens: int) -> tuple[float, int]:
    """Seconds of one greedy chat request, and its completion tokens."""
    body = json.dumps({"model": "smol", "messages": [{"role": "user", "content": QUESTION}],
                       "max_tokens": max_tokens, "temperature": 0, "ignore_eos": True}).encode()
    request = urllib.request.Request(f"{base_url}/chat/completions", body, {"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as answer:
        usage = json.loads(answer.read())["usage"]
    return time.perf_counter() - started, int(usage["completion_tokens"])


def _one(folder: Path, eager: bool, max_tokens: int, log: Path) -> dict[str, float]:
    from conformbench.testing.vllm_server import VllmServer

    server = VllmServer(folder, name="smol", log=log, extra_args=("--enforce-eager",) if eager else ())
    started = time.perf_counter()
    with server:
        start = time.perf_counter() - started
        _ask(server.base_url, 8)  # warm-up
        decode, tokens = _ask(server.base_url, max_tokens)
    if tokens != max_tokens:
        cannot_measure(f"the request gave {tokens} tokens, not {max_tokens}")
    return {"start": start, "decode": decode}


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--rounds", type=int, default=None, help="rounds per side (default 3; --quick 2)")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--hf-folder", type=Path, default=None, help="the embedded model converted before (saves ~30 s)")
    args = ap.parse_args()
    from conformbench.testing.vllm_server import vllm_missing

    missing = vllm_missing()
    if missing:
        cannot_measure(missing)
    rounds = args.rounds or (2 if args.quick else 3)
    report = Report("vllm_eager", "quick" if args.quick else "full")
    runs: dict[str, list[dict[str, float]]] = {"compiled": [], "eager": []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = hf_model_folder(args.hf_folder, Path(tmp))
        for r, side in alternated(("compiled", "eager"), rounds):
            runs[side].append(_one(folder, side == "eager", args.max_tokens, Path(tmp) / f"{side}-{r}.log"))
            print(f"round {r + 1} {side}: {runs[side][-1]}", flush=True)
    report.measurements = {"runs": runs, "rounds": rounds, "max_tokens": args.max_tokens}
    compiled_starts = [m["start"] for m in runs["compiled"][1:]] or [runs["compiled"][0]["start"]]
    report.notes.append(f"first compiled start (cache filled): {runs['compiled'][0]['start']:.1f} s")
    for what, compiled in (("start", compiled_starts), ("decode", [m["decode"] for m in runs["compiled"]])):
        eager = [m[what] for m in runs["eager"]]
        spread = (f"eager {min(eager):.1f}-{max(eager):.1f} s, compiled {min(compiled):.1f}-{max(compiled):.1f} s, "
                  f"{len(eager)}/{len(compiled)} runs")
        report.add(Ratio(f"{what} eager/compiled", statistics.median(eager) / statistics.median(compiled),
                         1.0, "<=", spread))
    return report.finish(args.json)


if __name__ == "__main__":
    raise SystemExit(main())
