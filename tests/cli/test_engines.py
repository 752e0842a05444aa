from __future__ import annotations

import json

import pytest

from conformbench.cli.main import main


def test_engines_list_shows_installed_and_unavailable(capsys):
    assert main(["engines", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("gbnf", "llguidance", "outlines", "xgrammar"):
        assert name in out
    assert "installed" in out


def test_probe_rejects_unknown_names_in_one_line(capsys, tmp_path):
    assert main(["engines", "probe", "--keyword", "maximm", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("conformbench: error: no probe for keyword 'maximm' (did you mean 'maximum'?)")
    assert "\n" not in err
    assert main(["engines", "probe", "--engine", "gbfn", "--out", str(tmp_path)]) == 2
    assert "unknown engine 'gbfn'" in capsys.readouterr().err


@pytest.mark.long
@pytest.mark.slow
def test_probe_command_writes_both_files(capsys, tmp_path):
    out = tmp_path / "probe"
    argv = ["engines", "probe", "--engine", "llguidance", "--keyword", "uniqueItems", "--keyword", "enum",
            "--n-per-keyword", "1", "--threads", "1", "--out", str(out)]
    assert main(argv) == 0
    data = json.loads((out / "engines.json").read_text())
    assert data["format"] == "conformbench.engines-probe/1"
    assert [k["keyword"] for k in data["engines"][0]["keywords"]] == ["uniqueItems", "enum"]
    # llguidance leaves uniqueItems to the validator, but greedy SmolLM2 lists distinct
    # items until the budget: nothing to judge, so inconclusive (never enforced); enum holds
    assert [k["status"] for k in data["engines"][0]["keywords"]] == ["inconclusive", "enforced"]
    assert "| uniqueItems | " in (out / "engines.md").read_text()
    captured = capsys.readouterr()
    assert "wrote" in captured.err
    # a row per keyword: the summary fits a log's 80 columns with its names whole
    rows = [line for line in captured.out.splitlines() if "uniqueItems" in line or "enum" in line]
    assert len(rows) == 2 and all(len(line) <= 80 for line in captured.out.splitlines())


def test_check_rejects_unknown_names_in_one_line(capsys, tmp_path):
    assert main(["engines", "check", "--suite", "json-schema-test-suit", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("conformbench: error: unknown suite 'json-schema-test-suit' "
                          "(did you mean 'json-schema-test-suite'?)")
    assert "\n" not in err
    assert main(["engines", "check", "--engine", "gbfn", "--out", str(tmp_path)]) == 2
    assert "unknown engine 'gbfn'" in capsys.readouterr().err
    assert main(["engines", "check", "--draft", "6", "--out", str(tmp_path)]) == 2
    assert "the test suite has no draft '6'" in capsys.readouterr().err
    assert main(["engines", "check", "--backend", "llamcpp", "--out", str(tmp_path)]) == 2
    assert "unknown backend 'llamcpp' (did you mean 'llamacpp'?)" in capsys.readouterr().err


def test_check_reads_the_tokenizer_as_the_backends_manifest_declares(capsys, tmp_path):
    """The vocabulary comes through the backend's manifest: one that declares
    none is refused in one line naming those that do, before any schema is
    walked."""
    from conformbench.backends.base import backends, manifest_of

    assert manifest_of("openai").vocabulary is None and manifest_of("llamacpp").vocabulary is not None
    assert main(["engines", "check", "--backend", "openai", "--suite", "generated", "-n", "2",
                 "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    takers = [f"--backend {b}" for b in backends.names() if manifest_of(b).vocabulary is not None]
    assert err[-1] == ("conformbench: error: the openai backend cannot read a tokenizer without its model: use "
                       + " or ".join(takers))
    assert not (tmp_path / "engines-check.json").exists()
    with manifest_of("llamacpp").vocabulary(None) as vocab:  # type: ignore[misc]
        assert vocab.n_vocab > 0 and vocab.tokenize("{") != []


def test_probes_model_flags_are_runs_own(capsys, monkeypatch, tmp_path):
    """engines probe takes --model, --backend, --threads and --timeout as
    run declares them (one help text), and --dialect as the server backend
    declares it; their values are checked by the same declared ranges."""
    import re

    from conformbench.runner.run_options import flags

    monkeypatch.setenv("COLUMNS", "400")
    assert main(["engines", "probe", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    for f, flag in flags():
        if f.name in ("model", "threads", "timeout_s"):
            assert " ".join(flag.help.split())[:60] in re.sub(r"[│]", "", shown), flag.flag
    assert main(["engines", "probe", "--out", str(tmp_path), "--keyword", "enum", "--engine", "llguidance",
                 "--threads", "0"]) == 2
    assert "threads must be between 1 and 512, not 0" in capsys.readouterr().err


def test_check_command_writes_json_markdown_and_html(capsys, tmp_path):
    out = tmp_path / "check"
    argv = ["engines", "check", "--engine", "llguidance", "--suite", "json-schema-test-suite",
            "--limit", "3", "--mask-positions", "1", "--out", str(out)]
    assert main(argv) == 0
    data = json.loads((out / "engines-check.json").read_text())
    assert data["format"] == "conformbench.engines-check/1"
    (engine,) = data["engines"]
    (source,) = engine["sources"]
    assert (engine["engine"], source["source"], source["schemas"]) == (
        "llguidance", "json-schema-test-suite/draft2020-12", 3)
    assert "| llguidance |" in (out / "engines-check.md").read_text()
    assert (out / "engines-check.html").read_text().startswith("<!DOCTYPE html>")
    captured = capsys.readouterr()
    assert "llguidance" in captured.out and "wrote" in captured.err


def test_check_command_resumes_from_its_directory_and_logs_plain_progress(capsys, tmp_path):
    argv = ["engines", "check", "--engine", "gbnf", "--suite", "json-schema-test-suite",
            "--limit", "2", "--mask-positions", "1", "--out", str(tmp_path)]
    assert main(argv) == 0
    first = capsys.readouterr().err
    # the count is of schemas times engines, and says so (#58: "408/1970 schemas" was 985 x 2)
    assert "gbnf json-schema-test-suite/draft2020-12: 2/2 schemas × engines (100.0%)" in first and "/s, eta" in first
    assert main(argv) == 0
    assert "resuming: 2 schema outcomes kept" in capsys.readouterr().err
    assert json.loads((tmp_path / "engines-check.json").read_text())["engines"][0]["resumed"] == 2
    assert main([*argv, "--fresh"]) == 0
    assert json.loads((tmp_path / "engines-check.json").read_text())["engines"][0]["resumed"] == 0


def test_check_command_judges_a_maskbench_suite_and_reports_jsonschemabench_terms(capsys, tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    cases = {"minimum": ({"type": "integer", "minimum": 5}, [(5, True), (3, False)]),
             "enum": ({"enum": ["red", "green"]}, [("red", True), ("purple", False)])}
    for stem, (schema, tests) in cases.items():
        doc = {"schema": schema, "meta": {}, "tests": [{"description": "t", "data": d, "valid": v} for d, v in tests]}
        (suite / f"{stem}.json").write_text(json.dumps(doc))
    out = tmp_path / "check"
    argv = ["engines", "check", "--engine", "gbnf", "--schemas", str(suite), "--mask-positions", "0", "--out", str(out)]
    assert main(argv) == 0
    (source,) = json.loads((out / "engines-check.json").read_text())["engines"][0]["sources"]
    assert (source["source"], source["valid"], source["invalid"], source["under"], source["right"]) == (
        "maskbench:suite", 2, 2, 1, 1)
    md = (out / "engines-check.md").read_text()
    assert "## In JSONSchemaBench's terms" in md
    assert "| gbnf | maskbench:suite | 2/2 (100.0%) | 1/2 (50.0%) | 50.0% | 0 | 1 |" in md
    capsys.readouterr()


def test_probe_on_a_server_needs_its_url_and_its_own_engine(capsys, tmp_path):
    base = ["engines", "probe", "--out", str(tmp_path), "--keyword", "enum"]
    assert main([*base, "--backend", "openai"]) == 2
    assert "--backend openai needs --base-url" in capsys.readouterr().err
    url = ["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1"]
    assert main([*base, *url, "--engine", "gbnf"]) == 2
    assert "decodes constraints server-side: use engine 'server', not 'gbnf'" in capsys.readouterr().err
    assert main([*base, *url, "--dialect", "json_shema"]) == 2
    assert "did you mean 'json_schema'" in capsys.readouterr().err
    assert main([*base, "--engine", "server"]) == 2
    assert "engine 'server' is for HTTP backends" in capsys.readouterr().err
    assert main([*base, "--base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "--base-url is for a server (--backend openai), not llamacpp" in capsys.readouterr().err
    # a backend's own options are the ones it declares: --dialect is openai's
    assert main([*base, "--dialect", "json_schema"]) == 2
    assert "--dialect applies to the openai backend (--backend openai), not 'llamacpp'" in capsys.readouterr().err


def test_probe_of_a_server_that_cannot_be_reached_says_so_in_one_line(capsys, tmp_path, unused_port):
    """A dead URL is said as such before the canary (issue #58), not read as
    a constraint the server did not apply."""
    out = tmp_path / "probe"
    url = f"http://127.0.0.1:{unused_port}/v1"
    argv = ["engines", "probe", "--backend", "openai", "--base-url", url, "--keyword", "enum", "--timeout", "5",
            "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"conformbench: error: cannot reach {url}: ") and err.count("\n") == 1, err
    assert "canary" not in err and "Traceback" not in err
    assert not (out / "engines.json").exists()


@pytest.mark.long
def test_check_on_the_transformers_backends_tokenizer_agrees_with_llamacpps(capsys, tmp_path):
    """The transformers backend's manifest declares its vocabulary (the
    Hugging Face tokenizer, read without the weights): the check runs on it,
    refuses an engine the backend refuses, and on the embedded SmolLM2 (the
    same tokenizer as llama.cpp's) judges as the llamacpp check does."""
    assert main(["engines", "check", "--backend", "transformers", "--engine", "gbnf", "--out",
                 str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("--engine gbnf cannot run with --backend transformers: its grammar runs inside "
                        "llama.cpp's sampler, which transformers does not use (use llguidance, xgrammar or outlines)")
    verdicts = {}
    for backend in ("llamacpp", "transformers"):
        out = tmp_path / backend
        assert main(["engines", "check", "--backend", backend, "--engine", "llguidance", "--suite",
                     "json-schema-test-suite", "--limit", "4", "--mask-positions", "1", "--out", str(out)]) == 0
        data = json.loads((out / "engines-check.json").read_text())
        (source,) = data["engines"][0]["sources"]
        verdicts[backend] = {k: v for k, v in source.items() if k not in ("compile", "mask") and "seconds" not in k}
        assert source["schemas"] == 4
    assert verdicts["llamacpp"] == verdicts["transformers"]


def test_checks_default_engines_leave_out_those_the_backend_refuses():
    """No --engine: the default check's engines, less those the backend's
    manifest refuses (transformers: gbnf); a backend refusing none keeps the
    default (every engine but the slow ones)."""
    from conformbench.api.audits import _engines_for
    from conformbench.audits.engine_check import CheckConfig, left_out
    from conformbench.backends.base import manifest_of
    from conformbench.engines.base import engines

    refused = manifest_of("transformers").refused_engines
    assert "gbnf" in refused and "gbnf" in engines.names()
    assert _engines_for("llamacpp", ()) == ()
    assert _engines_for("transformers", ()) == tuple(
        n for n in engines.names() if n not in refused and n not in left_out(CheckConfig()))
    assert _engines_for("transformers", ("llguidance",)) == ("llguidance",)
