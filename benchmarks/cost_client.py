"""Is ``engines cost``'s client ever the bottleneck? Its load generator
(``serving.loadgen.run_batch``: the openai backend's session, every request
streamed and its events timed by ``backends/openai/stream.py``) against the
instant server (benchmarks/_instant_server.py, its own process, answering
each streamed request at once), side by side with a bare aiohttp loop that
POSTs the same bodies at the same concurrency and reads the same events
(split on blank lines, each JSON-decoded, nothing timed, no bounds).

Work: K streamed chat requests (the BFCL v3 simple bodies of the grammar-on
arm, warm cache), concurrency C, each answer about 20 events, each row
journalled as ``engines cost`` does; sides
alternate every round. Headline: conformbench's requests per CPU-second of
this process over the bare loop's (target >= 0.8: the client costs at most
a quarter more than the HTTP library's floor; CPU, since on a shared
machine the wall rate says how busy it was), the wall rates beside it.

Run alone: python benchmarks/cost_client.py [--quick] [--k K] [--concurrency C] [--rounds R] [--json out.json]
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Ratio, Report, median, parser, require
from http_ceiling import InstantServer


async def _bare(url: str, bodies: list[bytes], concurrency: int) -> int:
    import aiohttp

    limit = asyncio.Semaphore(concurrency)
    events = 0

    async def one(session: aiohttp.ClientSession, body: bytes) -> None:
        nonlocal events
        async with limit, session.post(url, data=body, headers={"Content-Type": "application/json"}) as resp:
            raw = await resp.read()
        for block in raw.split(b"\n\n"):
            if block.startswith(b"data: ") and block[6:] != b"[DONE]":
                json.loads(block[6:])
                events += 1

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        await asyncio.gather(*(one(session, b) for b in bodies))
    return events


def _ours(url: str, picked: list[Any], shots: list[Any], concurrency: int, out: Path) -> float:
    """``engines cost``'s batch: streamed, timed, each row journalled as it ends."""
    from conformbench.serving.journal import CostJournal
    from conformbench.serving.loadgen import run_batch
    from conformbench.serving.measure import request_row

    journal = CostJournal(out, {"benchmark": "cost_client"})
    key = (0, concurrency, "warm")
    wall = run_batch(url, {}, shots, concurrency, 60.0,
                     lambda s, t, ans: journal.request(key, request_row(picked, s, t, ans)))
    journal.close()
    errors = [row["error"] for row in journal.requests[key] if row["error"]]
    if errors:
        raise SystemExit(f"conformbench's client failed {len(errors)} requests: {errors[0]}")
    return wall


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--k", type=int, default=None, help="requests per side and round (default 2000; quick 800)")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=None, help="rounds (default 5; quick 3)")
    a = ap.parse_args()
    require("aiohttp")
    from conformbench.backends.openai.backend import OpenAICompatBackend
    from conformbench.records.generation import BackendConfig
    from conformbench.serving.loadgen import Shot
    from conformbench.serving.measure import CostConfig, stream_body
    from conformbench.serving.workload import bfcl_prompts

    k = a.k or (800 if a.quick else 2000)
    rounds = a.rounds or (3 if a.quick else 5)
    server = InstantServer()
    tmp = tempfile.mkdtemp(prefix="cost-client-")
    try:
        backend = OpenAICompatBackend(BackendConfig(base_url=server.base_url, concurrency=a.concurrency,
                                                    extra={"response_format_dialect": "json_schema"}))
        config = CostConfig(levels=(a.concurrency,), n=k, max_tokens=256)
        prompts = bfcl_prompts(400)
        picked = [prompts[i % len(prompts)] for i in range(k)]
        bodies = [stream_body(backend, p, config, p.schema) for p in picked]
        shots = [Shot(i, body, 0.0) for i, body in enumerate(bodies)]
        url = backend.endpoint(backend.completion_path)
        rates: dict[str, list[float]] = {"conformbench": [], "bare aiohttp": []}
        cpu_rates: dict[str, list[float]] = {"conformbench": [], "bare aiohttp": []}
        for r in range(rounds):
            for side in (("conformbench", "bare aiohttp") if r % 2 == 0 else ("bare aiohttp", "conformbench")):
                cpu0 = time.process_time()
                if side == "conformbench":
                    wall = _ours(url, picked, shots, a.concurrency, Path(tmp) / f"round{r}")
                else:
                    t0 = time.perf_counter()
                    asyncio.run(_bare(url, bodies, a.concurrency))
                    wall = time.perf_counter() - t0
                rates[side].append(k / wall)
                cpu_rates[side].append(k / (time.process_time() - cpu0))
                print(f"round {r}: {side} {k / wall:,.0f} req/s, {cpu_rates[side][-1]:,.0f} req per CPU-s", flush=True)
    finally:
        server.close()
        shutil.rmtree(tmp, ignore_errors=True)
    ours, bare = median(cpu_rates["conformbench"]), median(cpu_rates["bare aiohttp"])
    wall_ours, wall_bare = median(rates["conformbench"]), median(rates["bare aiohttp"])
    report = Report(script="cost_client.py", mode="quick" if a.quick else "full")
    report.measurements.update({"k": k, "concurrency": a.concurrency, "rounds": rounds,
                                "requests_per_s": rates, "requests_per_cpu_s": cpu_rates})
    report.add(Ratio("engines cost client requests per CPU-second over a bare aiohttp loop's (medians)", ours / bare,
                     0.8, ">=", f"{ours:,.0f} vs {bare:,.0f} per CPU-s, concurrency {a.concurrency}, "
                     f"{k} requests x {rounds} rounds"))
    report.add(Ratio("the same per wall second (info: the load of a shared machine moves it)", wall_ours / wall_bare,
                     0.8, ">=", f"{wall_ours:,.0f} vs {wall_bare:,.0f} req/s"))
    return report.finish(a.json)


if __name__ == "__main__":
    sys.exit(main())
