"""``engines cost`` against a real llama-cpp-python server serving the
embedded model (one thread): the files it writes, and its token counts
against the server's own ``usage`` of the same requests."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from llama_server import free_port, serve

from conformbench.cli.main import main
from conformbench.serving.journal import JOURNAL_NAME

pytestmark = [pytest.mark.long, pytest.mark.server, pytest.mark.slow]


@pytest.fixture(scope="module")
def one_thread_server(smollm_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's server, one thread; with ``interrupt_requests``
    off, a request that arrives while another streams waits for it instead
    of cutting it (the server's default cuts it: every concurrent stream but
    the last ends empty)."""
    port = free_port()
    log = tmp_path_factory.mktemp("cost-llama") / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm_path), "--host", "127.0.0.1",
               "--port", str(port), "--n_ctx", "2048", "--n_threads", "1", "--interrupt_requests", "False"]
    yield from serve(command, log, f"http://127.0.0.1:{port}/v1")


def test_cost_against_llama_cpp_python(one_thread_server: str, tmp_path: Path) -> None:
    out = tmp_path / "cost"
    assert main(["engines", "cost", "--base-url", one_thread_server, "--concurrency", "1,2", "-n", "4",
                 "--repeats", "1", "--max-tokens", "24", "--timeout", "300", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["complete"] and len(report["arms"]) == 6 and len(report["comparisons"]) == 4
    assert all(a["errors"] == 0 and a["ttft"]["p50_ms"] > 0 and a["tpot"]["p50_ms"] > 0 for a in report["arms"])
    assert (out / "latency.svg").read_text().startswith("<svg") and (out / "report.md").exists()
    rows = [json.loads(line) for line in (out / JOURNAL_NAME).read_text().splitlines()[1:]]
    requests = [r for r in rows if r["kind"] == "request"]
    assert len(requests) == 2 * 3 * 4
    # the tokens counted in the stream are the server's own count of the same request, not streamed
    # (llama-cpp-python sends no usage in a stream: the report says it counted events)
    off = next(a for a in report["arms"] if a["concurrency"] == 1 and a["arm"] == "off")
    assert off["tokens_from"] == "chunks"
    for row in [r for r in requests if r["concurrency"] == 1 and r["arm"] == "off"][:2]:
        body = _unstreamed(row["index"])
        answer = httpx.post(f"{one_thread_server}/chat/completions", json=body, timeout=300).json()
        assert answer["choices"][0]["message"]["content"] == row["text"]
        assert answer["usage"]["completion_tokens"] == row["chunks"]


def _unstreamed(index: int) -> dict[str, object]:
    """The grammar-off body engines cost streamed for prompt ``index``, without streaming."""
    from conformbench.backends.openai.backend import OpenAICompatBackend
    from conformbench.records.generation import BackendConfig
    from conformbench.serving.measure import CostConfig, stream_body
    from conformbench.serving.workload import bfcl_prompts

    backend = OpenAICompatBackend(BackendConfig(base_url="http://127.0.0.1:1/v1"))
    body = json.loads(stream_body(backend, bfcl_prompts(4)[index], CostConfig(levels=(1,), n=4, max_tokens=24),
                                  None))
    del body["stream"], body["stream_options"]
    return dict(body)


def test_a_corpus_counts_the_keywords_the_servers_grammar_dropped(one_thread_server: str, tmp_path: Path) -> None:
    from conformbench.serving.workload import corpus_prompts
    from conformbench.tasks.extract import parse_json_output
    from conformbench.validator.schema_validator import validator_for

    corpus = Path(__file__).resolve().parents[2] / "examples" / "cost-corpus"
    out = tmp_path / "corpus"
    assert main(["engines", "cost", "--base-url", one_thread_server, "--schemas", str(corpus), "-n", "5",
                 "--concurrency", "1", "--repeats", "1", "--max-tokens", "48", "--timeout", "300",
                 "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["complete"] and report["excluded"] == [] and {d["arm"] for d in report["dropped"]} == {"warm", "cold"}
    # recounted here from the journal: per arm, each keyword once per parsed answer that breaks it
    schemas = {p.id: p.schema for p in corpus_prompts(corpus, 5)[0]}
    rows = [json.loads(line) for line in (out / JOURNAL_NAME).read_text().splitlines()[1:]]
    for arm in report["dropped"]:
        counts: dict[str, int] = {}
        parsed = 0
        for row in (r for r in rows if r["kind"] == "request" and r["arm"] == arm["arm"] and not r["error"]):
            answer = parse_json_output(row["text"], schemas[row["id"]])
            if answer.ok:
                parsed += 1
                for keyword in {v.keyword for v in validator_for(schemas[row["id"]], formats="annotate")
                                .violations(answer.value)}:
                    counts[keyword] = counts.get(keyword, 0) + 1
        assert (arm["answered"], arm["parsed"]) == (5, parsed)
        assert {k["keyword"]: k["broken"] for k in arm["keywords"]} == counts
    assert "## Keywords the grammar dropped" in (out / "report.md").read_text()
