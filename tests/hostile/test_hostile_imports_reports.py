"""Hostile inputs, continued (issue #40, items 6, 7, 9 and 10): Markdown
reports show every field as literal text, importers check every field and
never write a replay that cannot be read back, the Python API checks its
arguments at the boundary, a sharded run's ledger is in item order and a
key in ``--base-url``'s query is never stored."""

from __future__ import annotations

import io
import json
import math
import shutil
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from test_hostile_surfaces import _cli, _one_line, _replay

from conformbench.errors import UsageError

_RUNNER_TESTS = Path(__file__).resolve().parents[1] / "runner"
_GOLDEN = Path(__file__).resolve().parents[1] / "reports" / "golden"
HOSTILE = '<img src=x onerror=alert(1)>|x\n# injected\u2028<script>alert(2)</script>'


def _literal(markdown: str) -> None:
    """No raw tag opens, no injected line or heading starts."""
    assert "<img" not in markdown and "<script" not in markdown
    assert not any(line.startswith("# injected") for line in markdown.split("\n"))
    assert "\u2028" not in markdown


# -- 6. every field of every Markdown report is literal text ---------------------------------------


def test_engines_md_escapes_labels_and_server_metadata() -> None:
    from conformbench.audits.probe import EngineProbe, KeywordResult, ProbeReport
    from conformbench.audits.probe.markdown import probe_markdown as _markdown

    keyword = KeywordResult(keyword="minimum", status="enforced", detail="", probe_schema="", samples=[])
    engine = EngineProbe(engine="gbnf", version=HOSTILE, available=True, reason=HOSTILE, canary="passed",
                         canary_detail=None, keywords=[keyword])
    report = ProbeReport(created="2026-12-03T00:00:00+00:00", model={"model_file": HOSTILE},
                         settings={"keywords": ["minimum"], "n_per_keyword": 1, "max_tokens": 8},
                         engines=[engine],
                         server={"base_url": HOSTILE, "server_header": HOSTILE, "models": [HOSTILE],
                                 "dialect": HOSTILE, "dialect_choice": HOSTILE})
    markdown = _markdown(report)
    _literal(markdown)
    table = [line for line in markdown.split("\n") if line.startswith("| gbnf |")]
    assert len(table) == 1 and table[0].count(" | ") == 3  # the hostile note stays in its cell


def test_engines_check_md_escapes_ids_descriptions_and_documents(smollm_vocab) -> None:  # type: ignore[no-untyped-def]
    from conformbench.audits.engine_check import CheckConfig, run_engine_check
    from conformbench.audits.engine_check.sources import CheckSchema, CheckSource, Instance
    from conformbench.reports.engine_check import render_engine_check_markdown

    schema = CheckSchema(HOSTILE, HOSTILE, HOSTILE, {"type": "integer", "minimum": 5},
                         (Instance(HOSTILE, 3, False, "minimum"), Instance(HOSTILE, HOSTILE, False, "type")))
    report = run_engine_check(smollm_vocab, [CheckSource(HOSTILE, "", (schema,))],
                              CheckConfig(engines=("gbnf",), mask_positions=1))
    _literal(render_engine_check_markdown(report))


def test_report_md_metadata_lines_escape_every_field(tmp_path: Path) -> None:
    sys.path.insert(0, str(_RUNNER_TESTS))
    import runfakes  # noqa: F401 - registers the fake task of the golden replay

    from conformbench.reports.markdown import render_markdown
    from conformbench.reports.rescore import score_replays

    lines = (_GOLDEN / "replay.jsonl").read_text(encoding="utf-8").split("\n")
    for n, raw in enumerate(lines):
        record = json.loads(raw) if raw else None
        if isinstance(record, dict) and record.get("kind") == "model":
            record["metadata"] = {**record.get("metadata", {}), HOSTILE: HOSTILE}
            record["backend"] = HOSTILE
            record["canary"] = {HOSTILE: {"passed": True, "detail": HOSTILE}}
        elif isinstance(record, dict) and record.get("kind") == "header":
            record["hardware"] = {HOSTILE: HOSTILE}
            record["run_id"] = HOSTILE
        lines[n] = json.dumps(record) if record is not None else raw
    replay = tmp_path / "replay.jsonl"
    replay.write_text("\n".join(lines), encoding="utf-8")
    markdown = render_markdown(score_replays([replay]))
    metadata = markdown[markdown.index("## Run metadata"):]
    assert HOSTILE.split("|")[0].replace("<", "&lt;") in metadata  # shown, as text
    _literal(metadata)


# -- 7. importers check every field ----------------------------------------------------------------


def test_no_importer_writes_a_replay_that_cannot_be_read_back(tmp_path: Path) -> None:
    from conformbench.importers.writing import write_replay
    from conformbench.records.items import Condition
    from conformbench.records.prompt import Message, Prompt
    from conformbench.records.replay import GenerationRecord, ReplayHeader

    header = ReplayHeader(run_id="r", created="2026-12-03T00:00:00+00:00", conformbench_version="0", spec={"models": [{"label": "m"}], "tasks": [{"name": "t"}]})
    bad = GenerationRecord.model_construct(
        task="t", model="m", item_id="i", condition=Condition("unconstrained"), prompt=Prompt((Message("user", "q"),)),
        text="a", finish_reason="stop", error=None, prompt_tokens=0, completion_tokens=0, seconds=math.nan,
        compile_seconds=0.0, engine_input=None, sample=0)
    with pytest.raises(UsageError, match="no command can read back"):
        write_replay(tmp_path / "out", header, [bad])
    assert list((tmp_path / "out").iterdir()) == []  # no replay, no temporary file


def _conformbench_log(tmp: Path) -> tuple[Path, object]:
    """A log shaped as conformbench's Inspect tasks write it (made from an
    exported log, with the task metadata the tasks add)."""
    from inspect_ai.log import read_eval_log

    from conformbench.importers.inspect_log import CONDITION_KEY, ITEM_KEY, TASK_KEY

    replay = _replay(tmp)
    assert _cli("export", "inspect", str(replay), "--out", str(tmp / "logs"), "--format", "json").returncode == 0
    (path,) = (tmp / "logs").iterdir()
    log = read_eval_log(str(path))
    log.eval.metadata = {TASK_KEY: {"task": "gsm8k", "arm": "unconstrained", "n": 2, "temperature": 0.0,
                                    "dialect": "json_schema", "options": {}}}
    for n, sample in enumerate(log.samples or []):
        sample.metadata = {ITEM_KEY: {"id": f"gsm8k_test_{n}", "input": {"question": "q"}, "target": 1, "meta": {}},
                           CONDITION_KEY: {"arm": "unconstrained"}}
    return path, log


def _import(tmp: Path, log: object, name: str = "tampered.json", copies: int = 1) -> subprocess.CompletedProcess[str]:
    from inspect_ai.log import write_eval_log

    paths = []
    for copy in range(copies):
        path = tmp / f"{copy}-{name}"
        write_eval_log(log, str(path), format="json")  # type: ignore[arg-type]
        paths.append(str(path))
    shutil.rmtree(tmp / "imported", ignore_errors=True)
    return _cli("import", "inspect", *paths, "--out", str(tmp / "imported"))


@pytest.mark.long
def test_inspect_import_checks_every_field_and_refuses_duplicates(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai.log")
    _path, log = _conformbench_log(tmp_path)
    done = _import(tmp_path, log)
    assert done.returncode == 0, done.stderr  # the log as the tasks write it imports
    samples = log.samples  # type: ignore[attr-defined]
    samples[0].total_time = math.nan
    _one_line(_import(tmp_path, log), "total_time")
    assert not (tmp_path / "imported" / "replay.jsonl").exists()
    samples[0].total_time = 1.0
    log.eval.metadata["conformbench_task"]["temperature"] = "hot"  # type: ignore[attr-defined]
    _one_line(_import(tmp_path, log), "temperature")
    log.eval.metadata["conformbench_task"]["temperature"] = 0.0  # type: ignore[attr-defined]
    samples[1].metadata["conformbench_item"]["input"] = "not a table"
    _one_line(_import(tmp_path, log), "conformbench_item", "input")
    samples[1].metadata["conformbench_item"]["input"] = {"question": "q"}
    _one_line(_import(tmp_path, log, copies=2), "appears twice")


@pytest.mark.long
def test_lm_eval_import_refuses_a_deep_schema_and_non_finite_metrics(tmp_path: Path) -> None:
    deep = '{"properties": {"a": ' * 150 + "{}" + "}}" * 150

    def samples(name: str, **row: object) -> Path:
        path = tmp_path / f"samples_{name}_2024.jsonl"
        line = {"doc_id": 0, "doc": {"json_schema": '{"type": "object"}'}, "resps": [["{}"]], **row}
        path.write_text(json.dumps(line) + "\n", encoding="utf-8")
        return path

    deep_file = samples("deep", doc={"json_schema": deep})
    _one_line(_cli("import", "lm-eval", str(deep_file), "--out", str(tmp_path / "a")), "nested deeper than 100")
    nan_file = samples("nan")
    nan_file.write_text(nan_file.read_text().replace('"resps"', '"schema_compliance": NaN, "resps"'))
    _one_line(_cli("import", "lm-eval", str(nan_file), "--out", str(tmp_path / "b")), "schema_compliance")


def test_json_summaries_are_standard_json() -> None:
    from conformbench.cli.common import print_json

    out = io.StringIO()
    with redirect_stdout(out):
        print_json({"theirs": math.nan, "rates": [math.inf, 0.5]})
    assert json.loads(out.getvalue(), parse_constant=lambda c: pytest.fail(f"non-standard {c}")) == {
        "theirs": None, "rates": [None, 0.5]}


# -- 9. the Python API checks its arguments at the boundary ----------------------------------------


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"tasks": None}, "run option tasks: expected a str or a list of them, not None"),
    ({"out": 5}, "run option out: expected a path"),
    ({"n": "four"}, "run option n: expected int"),
    ({"arms": [1]}, "run option arms"),
    ({"quiet": "yes"}, "run option quiet: expected bool"),
    ({"spec": 5}, "spec: expected a TOML spec file"),
    ({"detect": "ten"}, "--detect 'ten'"),
    ({"fail_if": [5]}, "fail_if: expected gate expressions"),
])
def test_the_api_refuses_nonsense_before_doing_anything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        kwargs: dict[str, object], needle: str) -> None:
    import conformbench

    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as caught:
        conformbench.run(**kwargs)  # type: ignore[arg-type]
    assert needle in str(caught.value)
    assert list(tmp_path.iterdir()) == []  # no folder named 5, no conformbench-out


def test_score_refuses_nonsense_paths(tmp_path: Path) -> None:
    import conformbench

    with pytest.raises(UsageError, match="replays: expected replay file paths"):
        conformbench.score([5])  # type: ignore[list-item]
    with pytest.raises(UsageError, match="out: expected a folder path"):
        conformbench.score(tmp_path / "replay.jsonl", out=5)  # type: ignore[arg-type]


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"out": 5}, "out: expected a folder path"),
    ({"n": "1"}, "n: expected an int"),
    ({"n": True}, "n: expected an int"),
    ({"n": 1.5}, "n: expected an int"),
    ({"n": 0}, "--n 0: expected at least 1"),
    ({"n": 10**5000}, "n: expected at most 2**63"),
    ({"quiet": "no"}, "quiet: expected a bool"),
    ({"detect": "ten"}, "--detect 'ten'"),
    ({"base_url": 5}, "base_url: expected a non-empty str"),
    ({"dataset": 5}, "dataset: expected a path"),
])
def test_api_reproduce_checks_its_arguments_like_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     kwargs: dict[str, object], needle: str) -> None:
    """Issue #49 defect 10: out=5 wrote 5/replay.jsonl then raised TypeError;
    n="1" raised TypeError; n=True was taken as 1."""
    from conformbench import api

    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as caught:
        api.reproduce("gsm8k", **kwargs)  # type: ignore[arg-type]
    assert needle in str(caught.value)
    assert list(tmp_path.iterdir()) == []  # nothing created, no model loaded


@pytest.mark.parametrize(("spec", "needle"), [
    ({"tasks": [{"name": "custom", "params": {"match": "number", "tolerance": 10**5000}}]},
     "tasks.0.params.tolerance: an integer past ±2**63"),
    ({"tasks": [{"name": "gsm8k"}], "decoding": {"seed": 10**5000}}, "decoding.seed"),
    ({"tasks": [{"name": "gsm8k", "seed": -(10**5000)}]}, "tasks.0.seed"),
    ({"tasks": [{"name": "gsm8k", "n": 10**5000}]}, "tasks.0.n"),
    ({"tasks": [{"name": "gsm8k", "n": 1 << 64}]}, "tasks.0.n"),
    ({"tasks": [{"name": "gsm8k"}], "decoding": {"seed": 1 << 40}}, "decoding.seed"),
    ({"models": [{"label": "m", "extra": {"batched": 10**5000}}], "tasks": [{"name": "gsm8k"}]},
     "models.0.extra.batched: an integer past"),
])
def test_a_huge_integer_in_a_spec_mapping_is_one_usage_error(tmp_path: Path, spec: dict[str, object],
                                                             needle: str) -> None:
    """Issue #49 defect 10: 10**5000 as tolerance raised OverflowError from
    float(); as decoding.seed it ran, and its header could not be written."""
    import conformbench

    with pytest.raises(UsageError) as caught:
        conformbench.run({**spec, "out": str(tmp_path / "out")}, quiet=True)
    assert needle in str(caught.value) and len(str(caught.value)) < 400
    assert not (tmp_path / "out").exists()


# -- 10. small lies ---------------------------------------------------------------------------------


def test_a_sharded_runs_ledger_is_in_item_order_as_an_unsharded_one(tmp_path: Path) -> None:
    sys.path.insert(0, str(_RUNNER_TESTS))
    import runfakes

    from conformbench.records.replay_file import read_replay
    from conformbench.reports.rescore import score_replays
    from conformbench.runner.ledger import Shard
    from conformbench.runner.run import execute
    from conformbench.runner.spec import parse_spec

    def spec(out: Path):  # type: ignore[no-untyped-def]
        return parse_spec(runfakes.fake_spec(out, n=8))

    whole = execute(spec(tmp_path / "whole")).replay
    for part in (Shard(2, 2), Shard(1, 2)):
        execute(spec(tmp_path / "parts"), shard=part)
    merged = execute(spec(tmp_path / "parts")).replay
    order = [r.item.id for r in read_replay(whole).items]
    assert [r.item.id for r in read_replay(merged).items] == order
    ledgers = [[row.item_id for row in score_replays([p]).results[0].ledger] for p in (whole, merged)]
    assert ledgers[0] == ledgers[1] == order


@pytest.mark.long
def test_a_key_in_the_base_urls_query_is_sent_never_stored(tmp_path: Path) -> None:
    from conformbench.backends.openai.backend import OpenAICompatBackend
    from conformbench.records.generation import BackendConfig
    from conformbench.records.spec import ModelSpec, RunSpec, TaskSpec

    url = "http://127.0.0.1:9/v1?api-version=2024-01&api_key=SECRET1&Token=SECRET2"
    backend = OpenAICompatBackend(BackendConfig(model="m", base_url=url))
    assert "SECRET1" in backend.endpoint("chat/completions") and "/v1/chat/completions?" in backend.endpoint(
        "chat/completions")
    assert "SECRET" not in backend.base_url and backend.base_url == "http://127.0.0.1:9/v1"
    spec = RunSpec(models=[ModelSpec(label="m", backend="openai", base_url=url)], tasks=[TaskSpec(name="gsm8k")])
    assert "SECRET" not in json.dumps(spec.replay_dict())
    toml = tmp_path / "spec.toml"
    toml.write_text(f"[[models]]\nlabel = 'm'\nbackend = 'openai'\nmodel = 'm'\nbase_url = '{url}'\n"
                    "max_retries = 0\ntimeout_s = 5\n[[tasks]]\nname = 'gsm8k'\nn = 1\narms = ['unconstrained']\n"
                    "[decoding]\nmax_tokens = 4\n")
    done = _cli("run", "--quiet", "--spec", str(toml), "--out", str(tmp_path / "out"), "--no-canary")
    assert "SECRET" not in done.stderr + done.stdout
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert any(p.name == "replay.jsonl" for p in written)
    for path in written:
        assert b"SECRET" not in path.read_bytes(), path
