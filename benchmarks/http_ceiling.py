"""The runner's own ceiling on the cluster path: ``conformbench run --backend
openai`` against a local OpenAI-compatible endpoint that answers at once
(benchmarks/_instant_server.py, its own process), so that everything timed is
conformbench: building prompts, the HTTP client, parsing answers, writing the
replay, then scoring it (parsing, validation, reports).

Work: bfcl-simple, K items x its arms (unconstrained, prompt_only[arguments],
constrained[arguments] with engine "server"), chat endpoint, concurrency 64,
the constraint canary and dialect detection included.

  conformbench  ``build_spec`` + ``execute`` (what ``conformbench run`` calls),
                then ``publish`` (scoring and reports), timed apart
  raw httpx     the same request bodies POSTed with a bare
                ``httpx.AsyncClient`` (the client the backend had before) at
                the same concurrency, answers read as JSON, nothing else
  raw aiohttp   the same with a bare ``aiohttp.ClientSession`` (the client
                the backend has now): the HTTP library's floor

On a 2-core machine shared with other work, wall time says how busy the
machine was; CPU seconds of this process (all threads) say what the runner
costs. So the headline is generations per CPU-second of the runner (its
ceiling on one core; target >= 500), with the wall rate and load beside it,
and the server's CPU per generation (to show the fixture is not the limit).
Also printed: the same with scoring and reports, the CPU of each bare client
over the runner's, and the check that the replay is complete (one record per
unit, no error, nothing superseded) and ordered (the runner's unit order).
Sides alternate every round.

Run alone: python benchmarks/http_ceiling.py [--quick] [--k K] [--concurrency C] [--json out.json]
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Ratio, Report, cannot_measure, median, parser, require

TASK = "bfcl-simple"
HERE = Path(__file__).resolve().parent


class InstantServer:
    """The fixture server in its own process (its CPU is not the client's GIL)."""

    def cpu_seconds(self) -> float:
        """User + system CPU seconds the server process has used so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(HERE / "_instant_server.py")],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            self.close()
            cannot_measure(f"the instant server did not start: {line!r}")
        self.base_url = f"http://127.0.0.1:{int(line.split()[1])}/v1"

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def overrides(base_url: str, k: int, concurrency: int, out: Path) -> Any:
    from conformbench.runner.defaults import SpecOverrides

    return SpecOverrides(tasks=(TASK,), n=k, backend="openai", base_url=base_url, model="instant",
                         concurrency=concurrency, out=out, quiet=True)


@dataclass
class Sample:
    """One timed round of one side: wall seconds, this process's CPU seconds
    (all its threads) and the server's CPU seconds."""

    wall: float
    cpu: float
    server_cpu: float


def timed_side(server: InstantServer, fn: Callable[[], None]) -> Sample:
    wall, cpu, server_cpu = time.perf_counter(), time.process_time(), server.cpu_seconds()
    fn()
    return Sample(time.perf_counter() - wall, time.process_time() - cpu, server.cpu_seconds() - server_cpu)


def run_side(server: InstantServer, k: int, concurrency: int, work: Path, stats: dict[str, list[Any]]) -> None:
    """One ``conformbench run``: the run (timed into ``stats["run"]``), then
    scoring and reports (``stats["score"]``), then the replay check."""
    from conformbench.reports.publish import publish
    from conformbench.runner.defaults import build_spec
    from conformbench.runner.run import execute

    out = work / f"run{len(stats['run'])}"
    spec = build_spec(None, overrides(server.base_url, k, concurrency, out))
    summaries: list[Any] = []
    stats["run"].append(timed_side(server, lambda: summaries.append(execute(spec))))
    stats["score"].append(timed_side(server, lambda: publish([summaries[0].replay], spec.out, [])))
    stats["generated"].append(summaries[0].generated)
    stats["check"].append(check_replay(spec, summaries[0].replay))
    shutil.rmtree(out)


def check_replay(spec: Any, replay: Path) -> str | None:
    """None when the replay holds one non-error record per unit in the
    runner's unit order, else what is wrong."""
    from conformbench.records.replay_file import read_replay
    from conformbench.runner.run import build_plans

    contents = read_replay(replay)
    expected = [u.key for p in build_plans(spec) for m in spec.models for u in p.units(m.label)]
    got = [g.key for g in contents.generations]
    if contents.superseded:
        return f"{len(contents.superseded)} superseded record(s)"
    if len(got) != len(expected):
        return f"{len(got)} generations for {len(expected)} units"
    if got != expected:
        at = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
        return f"out of order at record {at}: {got[at]} where {expected[at]} was due"
    errors = [g for g in contents.generations if g.finish_reason == "error"]
    if errors:
        return f"{len(errors)} error record(s), first: {errors[0].error}"
    return None


def request_bodies(base_url: str, k: int, concurrency: int, work: Path) -> list[dict[str, Any]]:
    """The bodies the run sends for its units (the same prompts and schemas)."""
    from conformbench.backends.openai.backend import OpenAICompatBackend
    from conformbench.runner.defaults import build_spec
    from conformbench.runner.run import build_plans
    from conformbench.runner.units import final_request

    spec = build_spec(None, overrides(base_url, k, concurrency, work / "bodies"))
    model = spec.models[0]
    backend = OpenAICompatBackend(model.backend_config())
    backend.dialect = "json_schema"
    return [backend.request_body(final_request(plan, unit, None))
            for plan in build_plans(spec) for unit in plan.units(model.label)]


def raw_side(client: str, base_url: str, bodies: list[dict[str, Any]], concurrency: int) -> None:
    """The bodies POSTed with a bare ``client`` (httpx or aiohttp) at the
    same concurrency, each answer read as JSON; nothing else."""
    url = f"{base_url}/chat/completions"

    async def with_httpx() -> None:
        import httpx

        limit = asyncio.Semaphore(concurrency)
        async with httpx.AsyncClient(timeout=60.0) as client:
            async def one(body: dict[str, Any]) -> None:
                async with limit:
                    response = await client.post(url, json=body)
                    response.raise_for_status()
                    response.json()["choices"][0]["message"]["content"]

            await asyncio.gather(*(one(b) for b in bodies))

    async def with_aiohttp() -> None:
        import aiohttp

        limit = asyncio.Semaphore(concurrency)
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:
            async def one(body: dict[str, Any]) -> None:
                async with limit, session.post(url, json=body) as response:
                    response.raise_for_status()
                    (await response.json())["choices"][0]["message"]["content"]

            await asyncio.gather(*(one(b) for b in bodies))

    asyncio.run(with_httpx() if client == "httpx" else with_aiohttp())


RAW_CLIENTS = ("httpx", "aiohttp")


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--k", type=int, default=None, help="bfcl-simple items (quick 100, full 400)")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=None, help="quick 2, full 5")
    a = ap.parse_args()
    k, rounds = a.k or (100 if a.quick else 400), a.rounds or (2 if a.quick else 5)
    require("aiohttp", "httpx")
    report = Report("http_ceiling", "quick" if a.quick else "full")
    server = InstantServer()
    work = Path(tempfile.mkdtemp(prefix="http-ceiling-"))
    stats: dict[str, list[Any]] = {"run": [], "score": [], "generated": [], "check": [],
                                   **{f"raw {c}": [] for c in RAW_CLIENTS}}
    try:
        bodies = request_bodies(server.base_url, k, a.concurrency, work)
        run_side(server, min(k, 8), a.concurrency, work, {key: [] for key in stats})  # warm-up
        for r in range(rounds):  # sides alternate: drift in load hits both alike
            order = ["conformbench", *RAW_CLIENTS]
            for side in order if r % 2 == 0 else order[::-1]:
                if side in RAW_CLIENTS:
                    stats[f"raw {side}"].append(timed_side(server, partial(
                        raw_side, side, server.base_url, bodies, a.concurrency)))
                else:
                    run_side(server, k, a.concurrency, work, stats)
    finally:
        server.close()
        shutil.rmtree(work, ignore_errors=True)
    return summarise(report, a, k, len(bodies), stats)


def _med(samples: list[Sample], what: str) -> float:
    return median([getattr(s, what) for s in samples])


def summarise(report: Report, a: Any, k: int, n: int, stats: dict[str, list[Any]]) -> int:
    bad = [c for c in stats["check"] if c is not None]
    if bad:
        cannot_measure(f"the replay is not complete and ordered: {bad[0]}")
    if any(g != n for g in stats["generated"]):
        cannot_measure(f"the run generated {stats['generated']} for {n} units")
    run, score, raw, floor = stats["run"], stats["score"], stats["raw httpx"], stats["raw aiohttp"]
    load = os.getloadavg()[0]
    report.notes.append(f"{TASK}: {k} items x 3 arms = {n} generations per round, concurrency "
                        f"{a.concurrency}, chat endpoint, canary and dialect detection included; "
                        f"{len(run)} rounds per side; 1-min load at the end {load:.1f}")
    report.notes.append("CPU rates are generations per CPU-second of this process (the runner's "
                        "ceiling on one core, little moved by other load); wall rates depend on "
                        "what else runs")
    report.measurements = {"generations": n, "replay_complete_and_ordered": True,
                           **{side: [vars(s) for s in stats[side]] for side in ("run", "score", "raw httpx", "raw aiohttp")}}
    for label, side in (("run", run), ("scoring + reports", score), ("raw httpx", raw),
                        ("raw aiohttp", floor)):
        print(f"  {label:18s} wall {_med(side, 'wall'):7.2f} s ({n / _med(side, 'wall'):6.0f}/s)  "
              f"client CPU {_med(side, 'cpu'):6.2f} s ({n / _med(side, 'cpu'):6.0f}/CPU-s)  "
              f"server CPU {_med(side, 'server_cpu') * 1000 / n:.2f} ms/generation")
    print("  replay complete and ordered in every round")
    report.add(Ratio("generations per CPU-second of the runner, conformbench run --backend openai",
                     n / _med(run, "cpu"), 500, ">=", f"concurrency {a.concurrency}"))
    report.add(Ratio("generations per wall second of the run (load-dependent)", n / _med(run, "wall"), 500,
                     ">=", f"1-min load {load:.1f}"))
    report.add(Ratio("generations per CPU-second, run + scoring and reports (info)",
                     n / (_med(run, "cpu") + _med(score, "cpu")), 500, ">="))
    report.add(Ratio("CPU per generation, bare httpx client (the old client) / runner (info)",
                     _med(raw, "cpu") / _med(run, "cpu"), 1.0, ">="))
    report.add(Ratio("CPU per generation, bare aiohttp client (the floor) / runner (info)",
                     _med(floor, "cpu") / _med(run, "cpu"), 0.5, ">="))
    return report.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
