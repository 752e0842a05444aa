"""``engines cost --backend llamacpp``: the grammar off/on measurement on
the in-process backend (the embedded model), one request at a time; and
one line, exit 2, for what it does not take."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformbench.cli.main import main
from conformbench.serving.journal import JOURNAL_NAME

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "cost-corpus"


@pytest.mark.parametrize(("extra", "said"), [
    (["--backend", "llamacpp", "--concurrency", "1,4"], "decodes one request at a time in this process"),
    (["--backend", "llamacpp", "--rate", "2"], "--rate is for a server"),
    (["--backend", "llamacpp", "--base-url", "http://127.0.0.1:1/v1"], "--base-url and --dialect are for a server"),
    (["--backend", "transformers"], "transformers has no per-token clock here"),
    (["--backend", "llamcpp"], "did you mean 'llamacpp'"),
    (["--backend", "llamacpp", "--engine", "server"], "server"),
    ([], "engines cost needs --base-url URL"),
    (["--base-url", "http://127.0.0.1:1/v1", "--engine", "gbnf"], "--engine and --threads are for --backend llamacpp"),
    (["--base-url", "http://127.0.0.1:1/v1", "--threads", "2"], "--engine and --threads are for --backend llamacpp"),
    (["--backend", "llamacpp"], "--backend llamacpp needs --model"),
    (["--backend", "llamacpp", "--model", "/nonexistent/m.gguf"], "m.gguf"),
])
def test_what_the_local_measurement_does_not_take_is_one_line(
        extra: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    level = [] if "--concurrency" in extra else ["--concurrency", "1"]
    assert main(["engines", "cost", *level, "--out", str(tmp_path / "o"), *extra]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.long
@pytest.mark.slow
def test_cost_on_the_local_llamacpp_backend(smollm_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "local"
    assert main(["engines", "cost", "--backend", "llamacpp", "--model", str(smollm_path), "--threads", "1",
                 "--schemas", str(CORPUS), "-n", "3", "--concurrency", "1", "--repeats", "1",
                 "--max-tokens", "32", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["complete"] and report["server"]["engine"] == "llguidance"
    assert {a["arm"] for a in report["arms"]} == {"off", "warm", "cold"}
    assert all(a["errors"] == 0 and a["tokens_from"] == "usage" and a["ttft"]["p50_ms"] > 0
               and a["tpot"]["p50_ms"] > 0 for a in report["arms"])
    assert len(report["comparisons"]) == 2 and {d["arm"] for d in report["dropped"]} == {"warm", "cold"}
    rows = [json.loads(line) for line in (out / JOURNAL_NAME).read_text().splitlines()[1:]]
    requests = [r for r in rows if r["kind"] == "request"]
    assert len(requests) == 9
    # the token clock counts the tokens the backend generated, and the first comes before the last
    assert all(r["chunks"] == r["usage"]["completion_tokens"] and 0 < r["first_s"] <= r["last_s"] <= r["total_s"]
               for r in requests)
    # the clock changes nothing: the same request through run's backend writes the same text
    from conformbench.backends.llamacpp.backend import LlamaCppBackend
    from conformbench.records.generation import BackendConfig, Constraint, DecodingSettings, GenerationRequest
    from conformbench.serving.workload import corpus_prompts

    prompt = corpus_prompts(CORPUS, 3)[0][0]
    warm = next(r for r in requests if r["arm"] == "warm" and r["index"] == 0)
    backend = LlamaCppBackend(BackendConfig(model=str(smollm_path), threads=1, n_ctx=4096))
    result = backend.generate(GenerationRequest(prompt=prompt.prompt, settings=DecodingSettings(
        max_tokens=32, temperature=0.0, seed=0), constraint=Constraint(prompt.schema, "llguidance")))
    assert result.text == warm["text"]
    assert "Backend llamacpp in this process" in (out / "report.md").read_text()
