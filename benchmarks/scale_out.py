"""Throughput of ``conformbench run --backend openai`` at concurrency 1, 4
and 16 against real servers, each as a ratio to the client's own ceiling
measured in the same run: the instant server (benchmarks/_instant_server.py,
answers at once) at the same concurrency, in a round just before each
server's (issue #51, item 4; docs/scale-out.md).

Servers, one setup at a time (an idle vLLM worker busy-polls a core, so it
never runs beside the others):

  vllm       vLLM on CPU (``conformbench.testing.VllmServer``, the venv at
             $CONFORMBENCH_VLLM_PYTHON or /opt/vllm-venv), serving the
             embedded model as a Hugging Face folder (``--hf-folder``, else
             converted by ``export_hf_folder``)
  llama x1   one llama-cpp-python server (``python -m llama_cpp.server``,
             one thread)
  llama x2   two of them as a pool (``--base-url`` twice); ``--concurrency``
             is per server, so 2 x C requests are in flight

Work per point: gsm8k, N items, the unconstrained arm, ``--max-tokens M``
(the timed part is ``execute``, what ``conformbench run`` calls, scoring
and reports apart; the instant server gets ``--instant-n`` items, enough
for a rate that is not all start-up). Each point's replay must hold N
generations, none an error, or nothing is reported. Headline per point:
generations per wall second of the server / of the instant server.

On a machine of 2 shared cores the servers and the client share those cores:
the ratios show the client's overhead and how far the setups scale there,
not what a GPU server does.

Run alone: python benchmarks/scale_out.py [--quick] [--n N] [--max-tokens M] [--skip-vllm] [--json out.json]
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Ratio, Report, cannot_measure, embedded_model, hf_model_folder, parser, require
from http_ceiling import InstantServer

TASK, ALIAS = "gsm8k", "smollm2"
CONCURRENCY = (1, 4, 16)
LLAMA_START_S = 180.0


def _overrides(urls: tuple[str, ...], n: int, concurrency: int, max_tokens: int, out: Path) -> Any:
    from conformbench.runner.defaults import SpecOverrides

    return SpecOverrides(tasks=(TASK,), n=n, arms=("unconstrained",), backend="openai", base_url=urls,
                         model=ALIAS, concurrency=concurrency, max_tokens=max_tokens, timeout_s=600.0,
                         out=out, quiet=True)


def timed_run(urls: tuple[str, ...], n: int, concurrency: int, max_tokens: int, work: Path) -> float:
    """Wall seconds of one run's ``execute``; cannot_measure unless its
    replay holds ``n`` generations and none failed."""
    from conformbench.records.replay_file import read_replay
    from conformbench.runner.defaults import build_spec
    from conformbench.runner.run import execute

    out = Path(tempfile.mkdtemp(prefix="run-", dir=work))
    spec = build_spec(None, _overrides(urls, n, concurrency, max_tokens, out))
    start = time.perf_counter()
    summary = execute(spec)
    seconds = time.perf_counter() - start
    gens = read_replay(summary.replay).generations
    failed = [g for g in gens if g.finish_reason == "error"]
    if len(gens) != n or failed or summary.generated != n:
        why = failed[0].error if failed else f"{len(gens)} generations"
        cannot_measure(f"a run on {urls} at concurrency {concurrency} did not make {n} answers: {why}")
    shutil.rmtree(out)
    return seconds


@contextmanager
def llama_servers(count: int, work: Path) -> Iterator[tuple[str, ...]]:
    """``count`` llama-cpp-python servers on the embedded model, one thread each."""
    from conformbench.testing import stop_process

    model, procs, urls = embedded_model(), [], []
    try:
        for i in range(count):
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = int(sock.getsockname()[1])
            log = (work / f"llama{i}.log").open("wb")
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                 "--port", str(port), "--n_ctx", "2048", "--model_alias", ALIAS, "--n_threads", "1",
                 "--n_threads_batch", "1"], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
            urls.append(f"http://127.0.0.1:{port}/v1")
        for proc, url in zip(procs, urls, strict=True):
            _wait(proc, url)
        yield tuple(urls)
    finally:
        for proc in procs:
            stop_process(proc, 15)


def _wait(proc: subprocess.Popen[bytes], url: str) -> None:
    deadline = time.monotonic() + LLAMA_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            cannot_measure(f"llama_cpp.server exited with {proc.returncode}")
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    cannot_measure(f"llama_cpp.server did not answer within {LLAMA_START_S:.0f} s")


@contextmanager
def vllm_server(hf_folder: Path | None, work: Path) -> Iterator[tuple[str, ...]]:
    from conformbench.testing.vllm_server import VllmServer, vllm_missing

    missing = vllm_missing()
    if missing:
        cannot_measure(missing)
    with VllmServer(hf_model_folder(hf_folder, work), name=ALIAS, log=work / "vllm.log") as server:
        yield (server.base_url,)


def measure(setup: str, urls: tuple[str, ...], instant: InstantServer, a: Any, work: Path,
            points: dict[str, dict[int, dict[str, float]]]) -> None:
    """Each concurrency: the instant server's round, then the setup's."""
    timed_run(urls, 2, 1, a.max_tokens, work)  # warm-up (first requests, caches)
    points[setup] = {}
    for c in CONCURRENCY:
        ceiling = a.instant_n / timed_run((instant.base_url,), a.instant_n, c, a.max_tokens, work)
        rate = a.n / timed_run(urls, a.n, c, a.max_tokens, work)
        points[setup][c] = {"generations_per_s": rate, "instant_generations_per_s": ceiling,
                            "load1": os.getloadavg()[0]}
        print(f"  {setup:9s} concurrency {c:2d}: {rate:7.2f} generations/s; instant server {ceiling:8.1f}/s; "
              f"ratio {rate / ceiling:.5f}", flush=True)


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--n", type=int, default=None, help="generations per point (default 24; quick 12)")
    ap.add_argument("--instant-n", type=int, default=200, help="generations per instant-server point")
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--hf-folder", type=Path, default=Path("/tmp/smol-hf") if Path("/tmp/smol-hf").is_dir() else None)
    ap.add_argument("--skip-vllm", action="store_true")
    a = ap.parse_args()
    a.n = a.n or (12 if a.quick else 24)
    require("aiohttp", "httpx", "llama_cpp")
    report = Report("scale_out", "quick" if a.quick else "full")
    work = Path(tempfile.mkdtemp(prefix="scale-out-"))
    instant = InstantServer()
    points: dict[str, dict[int, dict[str, float]]] = {}
    setups: list[tuple[str, Callable[[], Any]]] = [
        ("llama x1", lambda: llama_servers(1, work)), ("llama x2", lambda: llama_servers(2, work))]
    if not a.skip_vllm:
        setups.insert(0, ("vllm", lambda: vllm_server(a.hf_folder, work)))
    started = time.perf_counter()
    try:
        for setup, start in setups:
            with start() as urls:
                measure(setup, urls, instant, a, work, points)
    finally:
        instant.close()
        shutil.rmtree(work, ignore_errors=True)
    report.notes.append(f"{TASK}, unconstrained, max tokens {a.max_tokens}; {a.n} generations per server "
                        f"point, {a.instant_n} per instant-server point; llama servers one thread each; "
                        f"{time.perf_counter() - started:.0f} s in all")
    report.measurements = {"points": points, "n": a.n, "instant_n": a.instant_n, "max_tokens": a.max_tokens}
    for setup, by_c in points.items():
        for c, p in by_c.items():
            report.add(Ratio(f"{setup} / instant server, generations per wall second, in %, concurrency {c} (info)",
                             100 * p["generations_per_s"] / p["instant_generations_per_s"], 0.0, ">=",
                             f"{p['generations_per_s']:.2f}/s vs {p['instant_generations_per_s']:.0f}/s"))
        base = by_c[1]["generations_per_s"]
        report.add(Ratio(f"{setup}: concurrency 16 / concurrency 1, generations per second (info)",
                         by_c[16]["generations_per_s"] / base, 0.0, ">="))
    if "llama x1" in points and "llama x2" in points:
        for c in CONCURRENCY:
            report.add(Ratio(f"llama x2 pool / llama x1, generations per second, concurrency {c} (info)",
                             points["llama x2"][c]["generations_per_s"] / points["llama x1"][c]["generations_per_s"],
                             0.0, ">="))
    return report.finish(a.json)


if __name__ == "__main__":
    raise SystemExit(main())
