"""Every ``conformbench`` command of README.md, read from README.md and run
exactly as written (issue #58): the first block's ``conformbench run``, the
tour, "Use it in CI" and the spans of the prose ("Your own task"). Each
runs in a folder of its own, holding the inputs the README assumes
(schema.json, answer.yaml, mine.jsonl, an lm-eval samples file,
maskbench-copy/, ./my-checkpoint, replay.jsonl, a server on the README's
URL), shrunk by the size knob alone (``CONFORMBENCH_TEST_SIZE=1``:
tests/readme_commands.py). Each must exit as the README says and leave the
output it promises (the first block's run: every task and arm of the main
job reported, then run again to show it resumes with nothing generated
twice). A README command without a case here fails
``test_every_readme_command_has_a_case``; an edited one is run as edited.

The server the README's openai lines name (http://127.0.0.1:8000/v1) is
llama-cpp-python's, on the embedded model, started on that port; where
the port is taken those tests are skipped, naming it."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from llama_server import SERVER_START_S, serve
from readme_commands import (
    DocCommand,
    bin_folder,
    doc_commands,
    kill_job,
    link_examples,
    run_as_written,
    running_as_written,
    shown,
)

from conformbench.backends.locate import EMBEDDED_LABEL, embedded_model_path
from conformbench.runner.defaults import default_spec
from conformbench.runner.shipped import shipped_replays

ROOT = Path(__file__).resolve().parents[1]
Proc = subprocess.CompletedProcess[str]


def _report(folder: Path) -> dict[str, Any]:
    report = folder / "report.json"
    assert report.is_file(), f"no {report}"
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return data


def _tasks(folder: Path) -> dict[str, int]:
    """Each task of a report, with its N."""
    return {r["task"]: r["n"] for r in _report(folder)["results"]}


# -- inputs the README assumes --------------------------------------------

SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "minLength": 1},
                                           "age": {"type": "integer", "minimum": 0}},
          "required": ["name", "age"], "additionalProperties": False}


def _schema_files(ws: Path) -> None:
    (ws / "schema.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    (ws / "answer.yaml").write_text("name: Ada\nage: 36\n", encoding="utf-8")


def _dataset(ws: Path) -> None:
    from conformbench.schemas.build import BuildOptions, build_dataset

    build_dataset(BuildOptions(out=ws / "ds", n=2))


def _gsm8k_run(ws: Path) -> None:
    """runs/gsm8k/replay.jsonl: the shipped GSM8K replay stands for the tour's run."""
    (ws / "runs/gsm8k").mkdir(parents=True)
    shutil.copyfile(shipped_replays()["gsm8k"], ws / "runs/gsm8k/replay.jsonl")


def _mine(ws: Path) -> None:
    rows = [{"item_id": "gsm8k_test_0", "text": '{"answer": 18}'}, {"item_id": "gsm8k_test_1", "text": "3"}]
    (ws / "mine.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _lm_eval(ws: Path) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    rows = [{"doc_id": i, "doc": {"json_schema": json.dumps(schema), "unique_id": f"u{i}"},
             "target": json.dumps(schema), "arguments": {"gen_args_0": {"arg_0": "JSON object: ", "arg_1": {}}},
             "resps": [[text]], "filtered_resps": [text], "filter": "none",
             "metrics": ["json_validity", "schema_compliance"], "json_validity": 1.0, "schema_compliance": ok}
            for i, (text, ok) in enumerate([('{"a": 1}', 1.0), ('{"a": "x"}', 0.0)])]
    path = ws / "samples_jsonschema_bench_easy_2026-01-01T00-00-00.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _maskbench(ws: Path) -> None:
    root = ws / "maskbench-copy"
    root.mkdir()
    doc = {"schema": {"type": "integer", "minimum": 5}, "meta": {"note": "written by the test"},
           "tests": [{"description": "five", "data": 5, "valid": True}, {"description": "three", "data": 3,
                                                                           "valid": False}]}
    (root / "minimum.json").write_text(json.dumps(doc), encoding="utf-8")


def _custom_replay(ws: Path) -> None:
    """replay.jsonl of the custom task (outputs imported: no model)."""
    from conformbench.importers.outputs import import_outputs

    rows = [{"item": {"question": "Capital of France?", "answer": "Par+is", "id": "q1"}, "text": "Answer: Parrris"}]
    source = ws / "outputs.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = import_outputs(source, "custom", ws / "imported", model="m")
    shutil.copyfile(done.replay, ws / "replay.jsonl")


def _checkpoint(ws: Path) -> None:
    from conformbench.backends.transformers.hf_folder import export_hf_folder
    from conformbench.backends.transformers.loading import missing_extra

    missing = missing_extra()
    if missing is not None:
        pytest.skip(f"the [hf] extra is not installed: {missing}")
    export_hf_folder(ws / "my-checkpoint")


def _needs(module: str, extra: str) -> Callable[[Path], None]:
    def check(_ws: Path) -> None:
        pytest.importorskip(module, reason=f"the [{extra}] extra is not installed")
    return check


# -- what each command must leave -----------------------------------------


def _run_report(folder: str, *tasks: str) -> Callable[[Path, Proc], None]:
    def check(ws: Path, proc: Proc) -> None:
        found = _tasks(ws / folder)
        assert set(found) == set(tasks), found
        # the knob caps each task's n at 1; validation's n counts schemas, each giving a valid and an invalid item
        assert all(n == (2 if task == "validation" else 1) for task, n in found.items()), found
        assert (ws / folder / "report.md").is_file() and "N=1 items" in proc.stdout + proc.stderr
    return check


def _base_arm(key: str) -> str:
    """'json->json/0shot/constrained[schema]@llguidance' -> 'constrained'."""
    return key.split("/")[-1].split("@")[0].split("[")[0]


def _main_job(ws: Path, proc: Proc) -> None:
    """README command 1's run: every task of ``default_spec()`` reported under
    every arm it names (read from the spec, so this follows the main job when
    it changes), each arm over all the task's items, every canary passed."""
    _run_report("conformbench-out", *(t.name for t in default_spec().tasks))(ws, proc)
    out = ws / "conformbench-out"
    for name in ("report.html", "report.json", "ledger.csv", "quadrants.svg"):
        assert (out / name).is_file(), name
    results = {r["task"]: r for r in json.loads((out / "report.json").read_text(encoding="utf-8"))["results"]}
    for task in default_spec().tasks:
        keys = [a["key"] for a in results[task.name]["arms"]]
        assert all(any(_base_arm(k) == _base_arm(arm) for k in keys) for arm in task.arms), (task.name, keys)
        assert all(a["n"] == results[task.name]["n"] for a in results[task.name]["arms"]), task.name
    models = [r for r in map(json.loads, _lines(out)) if r.get("kind") == "model"]
    assert models and all(c["passed"] for m in models for c in m["canary"].values())


def _lines(out: Path) -> list[str]:
    return (out / "replay.jsonl").read_text(encoding="utf-8").splitlines()


def _resumes(ws: Path, bin_dir: Path) -> None:
    """README command 1's run again, as written: it resumes, nothing generated or written twice."""
    before = _lines(ws / "conformbench-out")
    again = run_as_written("conformbench run", ws, bin_dir)
    assert again.returncode == 0 and "Traceback" not in again.stderr, shown(again)
    generated = [line for line in _lines(ws / "conformbench-out") if '"kind":"generation"' in line.replace(" ", "")]
    assert generated and all(line in before for line in generated)
    assert len(generated) == len(set(generated)) and "recorded already" in again.stderr + again.stdout


def _gate_said(ws: Path, proc: Proc) -> None:
    """Exit 0, or 1 with the tripped gate and its value said (the README's exit codes)."""
    assert proc.returncode in (0, 1), shown(proc)
    if proc.returncode == 1:
        assert re.search(r"gate .*tripped|tripped", proc.stdout + proc.stderr), shown(proc)


@dataclass(frozen=True)
class Case:
    #: matches the README command (re.match) it runs
    pattern: str
    check: Callable[[Path, Proc], None]
    prepare: tuple[Callable[[Path], None], ...] = ()
    #: the exit codes the README gives it
    codes: tuple[int, ...] = (0,)
    long: bool = False
    server: bool = False
    marks: tuple[Any, ...] = field(default=())
    #: a command the README starts in the background (its line ends in ``&``): a server. It is
    #: started, this runs once it answers the README's server URL (given that URL), then
    #: ``kill %1`` stops it (as the README says) and ``check`` reads what it said
    while_up: Callable[[str], None] | None = None


def _files(*names: str) -> Callable[[Path, Proc], None]:
    def check(ws: Path, _proc: Proc) -> None:
        for name in names:
            assert list(ws.glob(name)), f"no {name} in {sorted(p.name for p in ws.iterdir())}"
    return check


def _stats(ws: Path, proc: Proc) -> None:
    assert "tokens" in proc.stdout.lower() and "json" in proc.stdout, proc.stdout


def _rendered(_ws: Path, proc: Proc) -> None:
    assert "class " in proc.stdout and "age" in proc.stdout, proc.stdout


def _validated(_ws: Path, proc: Proc) -> None:
    (result,) = json.loads(proc.stdout)
    assert result["valid"] is True and result["violations"] == [], proc.stdout


def _engines_listed(_ws: Path, proc: Proc) -> None:
    assert "llguidance" in proc.stdout and "gbnf" in proc.stdout, proc.stdout


def _probe(ws: Path, _proc: Proc) -> None:
    data = json.loads((ws / "probe/engines.json").read_text(encoding="utf-8"))
    assert data["settings"]["n_per_keyword"] == 1 and len(data["settings"]["keywords"]) == 1
    assert all(e["canary"] in ("passed", "skipped") for e in data["engines"]), data["engines"]


def _server_probe(ws: Path, proc: Proc) -> None:
    _probe(ws, proc)
    data = json.loads((ws / "probe/engines.json").read_text(encoding="utf-8"))
    assert [e["engine"] for e in data["engines"]] == ["server"] and data["server"]["base_url"].endswith(":8000/v1")


def _check(folder: str, judged: bool) -> Callable[[Path, Proc], None]:
    def check(ws: Path, _proc: Proc) -> None:
        data = json.loads((ws / folder / "engines-check.json").read_text(encoding="utf-8"))
        assert data["engines"], data.keys()
        assert ("maskbench" in json.dumps(data).lower()) == judged
    return check


def _cost(ws: Path, _proc: Proc) -> None:
    data = _report(ws / "cost")
    assert data, "empty cost report"
    assert (ws / "cost/requests.jsonl").is_file() or list((ws / "cost").glob("*.jsonl"))


def _spec_run(ws: Path, proc: Proc) -> None:
    """The spec's own out folder holds its report, GSM8K at the knob's 1 item."""
    (report,) = [p for p in ws.rglob("report.json") if "examples" not in p.relative_to(ws).parts]
    _run_report(str(report.parent.relative_to(ws)), "gsm8k")(ws, proc)


def _demo(ws: Path, _proc: Proc) -> None:
    """Every shipped replay rescored into its own full report."""
    made = {p.parent.name for p in (ws / "conformbench-out/demo").glob("*/report.json")}
    assert made == set(shipped_replays()), made


def _rescored(ws: Path, _proc: Proc) -> None:
    assert _tasks(ws / "runs/gsm8k-rescored") == {"gsm8k": 200}


def _imported(folder: str, task: str, answers: int) -> Callable[[Path, Proc], None]:
    """The import's replay holds every answer of the input, under its task."""
    def check(ws: Path, _proc: Proc) -> None:
        records = [json.loads(line) for line in (ws / folder / "replay.jsonl").read_text().split("\n") if line]
        made = [r for r in records if r["kind"] == "generation"]
        assert len(made) == answers and {r["task"] for r in made} == {task}, made
    return check


def _regex_rescored(ws: Path, proc: Proc) -> None:
    (result,) = _report(ws)["results"]
    (arm,) = result["arms"]
    assert arm["accuracy"]["k"] == 1, arm  # "Par+is" matches "Parrris" as a regex, not exactly


def _openai_run(ws: Path, proc: Proc) -> None:
    _run_report("conformbench-out", "bfcl-simple")(ws, proc)
    models = [json.loads(line) for line in (ws / "conformbench-out/replay.jsonl").read_text().split("\n")
              if '"kind": "model"' in line or '"kind":"model"' in line]
    assert models and models[-1]["metadata"]["base_url"].endswith(":8000/v1")


def _answers_as_documented(url: str) -> None:
    """What the README's server lines need of the served model: its name at
    /v1/models, and a chat completion from it."""
    listed = httpx.get(f"{url}/models", timeout=10).json()
    assert [m["id"] for m in listed["data"]] == [EMBEDDED_LABEL], listed
    answer = httpx.post(f"{url}/chat/completions", timeout=120, json={
        "model": "m", "max_tokens": 4, "messages": [{"role": "user", "content": "Say hi."}]}).json()
    assert answer["choices"][0]["message"]["content"] is not None, answer


def _stopped_cleanly(ws: Path, proc: Proc) -> None:
    """``kill %1`` stopped the server: it said so, and nothing answers its URL any more."""
    assert "serving " in proc.stderr and proc.stderr.rstrip().endswith("server stopped"), shown(proc)
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{_readme_server_url()}/models", timeout=5)


CASES: tuple[Case, ...] = (
    Case(r"conformbench dataset build --out ds\b", _files("ds/dataset.jsonl", "ds/stats.json")),
    Case(r"conformbench dataset stats ds\b", _stats, (_dataset,)),
    Case(r"conformbench render schema\.json", _rendered, (_schema_files,)),
    Case(r"conformbench validate schema\.json answer\.yaml", _validated, (_schema_files,)),
    Case(r"conformbench engines list\b", _engines_listed),
    Case(r"conformbench engines probe --out probe$", _probe, long=True),
    Case(r"conformbench serve$", _stopped_cleanly, long=True, marks=(pytest.mark.server,),
         while_up=_answers_as_documented),
    Case(r"conformbench engines probe .*--backend openai", _server_probe, long=True, server=True),
    Case(r"conformbench engines check --out check$", _check("check", False), long=True),
    Case(r"conformbench engines check .*--schemas maskbench-copy", _check("check", True), (_maskbench,), long=True),
    Case(r"conformbench engines cost ", _cost, long=True, server=True),
    Case(r"conformbench run$", _main_job, long=True),
    Case(r"conformbench run --task gsm8k -n 20 ", _run_report("runs/gsm8k", "gsm8k"), long=True),
    Case(r"conformbench run --spec examples/specs/arms-gsm8k-200\.toml", _spec_run, (link_examples,), long=True),
    Case(r"conformbench score runs/gsm8k/replay\.jsonl", _rescored, (_gsm8k_run,), long=True),
    Case(r"conformbench import outputs mine\.jsonl", _imported("runs/mine", "gsm8k", 2), (_mine,)),
    Case(r"conformbench import lm-eval ", _imported("runs/lm-eval", "generation", 2), (_lm_eval,)),
    Case(r"conformbench export inspect ", _files("logs/*.eval"), (_needs("inspect_ai", "inspect"), _gsm8k_run),
         long=True),
    Case(r"conformbench dataset export ds --to hf", _files("ds-hub/*"), (_needs("datasets", "hf-datasets"), _dataset)),
    Case(r"conformbench run --backend openai ", _openai_run, long=True, server=True),
    Case(r"conformbench run --backend transformers ", _run_report("conformbench-out", "gsm8k"), (_checkpoint,),
         long=True),
    Case(r"conformbench run --task gsm8k -n 50 --fail-if", _gate_said, codes=(0, 1), long=True),
    Case(r"conformbench score replay\.jsonl --fail-if", _gate_said, codes=(0, 1), long=True),
    Case(r"conformbench run --task custom --dataset examples/questions\.jsonl --match contains",
         _run_report("conformbench-out", "custom"), (link_examples,), long=True),
    Case(r"conformbench score replay\.jsonl --match regex", _regex_rescored, (_custom_replay,)),
    Case(r"conformbench run --task custom --dataset examples/questions\.jsonl --schema ",
         _run_report("conformbench-out", "custom"), (link_examples,), long=True),
    Case(r"conformbench demo$", _demo, long=True),
)


def _readme() -> list[DocCommand]:
    return doc_commands(ROOT / "README.md", runnable_only=False)


def _case(command: str) -> Case | None:
    found = [c for c in CASES if re.match(c.pattern, command)]
    assert len(found) <= 1, f"{command!r} matches {len(found)} cases"
    return found[0] if found else None


def test_every_readme_command_has_a_case() -> None:
    commands = _readme()
    assert len(commands) >= 20, [str(c) for c in commands]
    missing = [str(c) for c in commands if _case(c.text) is None]
    assert not missing, f"README commands no test runs (add a Case): {missing}"
    unused = [c.pattern for c in CASES if not any(re.match(c.pattern, d.text) for d in commands)]
    assert not unused, f"cases of no README command (a line was removed or reworded): {unused}"


def _params() -> Iterator[Any]:
    for command in _readme():
        case = _case(command.text)
        if case is None:
            continue  # test_every_readme_command_has_a_case says which
        marks = [*case.marks, *([pytest.mark.long, pytest.mark.slow] if case.long else []),
                 *([pytest.mark.server] if case.server else [])]
        ident = re.sub(r"[^\w.-]+", "-", command.text.removeprefix("conformbench "))[:60].strip("-")
        yield pytest.param(command, case, marks=marks, id=f"L{command.line}-{ident}")


def _readme_server_url() -> str:
    """The one server URL the README's openai lines name."""
    urls = {m.group(1) for c in _readme() for m in [re.search(r"--base-url (\S+)", c.text)] if m}
    assert len(urls) == 1, f"the README's openai lines name one server: {urls}"
    return urls.pop()


def _free_or_skip(url: str) -> tuple[str, int]:
    """The host and port of ``url``; the test is skipped where something listens there."""
    where = urlsplit(url)
    host, port = where.hostname or "127.0.0.1", where.port or 80
    with socket.socket() as probe:
        if probe.connect_ex((host, port)) == 0:
            pytest.skip(f"{host}:{port}, the README's server address, is taken by another process here")
    return host, port


@pytest.fixture(scope="module")
def readme_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's server on the embedded model at the README's URL."""
    url = _readme_server_url()
    host, port = _free_or_skip(url)
    log = tmp_path_factory.mktemp("readme-server") / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(embedded_model_path()), "--host", host,
               "--port", str(port), "--n_ctx", "2048", "--n_threads", "1", "--interrupt_requests", "False"]
    yield from serve(command, log, url)


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bin_folder(tmp_path_factory.mktemp("readme-bin"))


#: the folder the README's ``conformbench run`` ran in (its replay is the CI lines' replay.jsonl)
_MAIN_JOB: dict[str, Path] = {}


def _main_job_replay(ws: Path, bin_dir: Path) -> None:
    """replay.jsonl of "Use it in CI": the README's main job's, run here if
    its own test has not run yet."""
    if "ws" not in _MAIN_JOB:
        main = ws.parent / "main-job"
        main.mkdir()
        proc = run_as_written("conformbench run", main, bin_dir)
        assert proc.returncode == 0, shown(proc)
        _MAIN_JOB["ws"] = main
    shutil.copyfile(_MAIN_JOB["ws"] / "conformbench-out/replay.jsonl", ws / "replay.jsonl")


@pytest.mark.timeout(1800)
@pytest.mark.parametrize(("command", "case"), list(_params()))  # pytest 9.2 refuses a generator
def test_readme_command_runs_as_written(command: DocCommand, case: Case, tmp_path: Path, bin_dir: Path,
                                        request: pytest.FixtureRequest) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    if case.server:
        request.getfixturevalue("readme_server")
    for prepare in case.prepare:
        prepare(ws)
    if re.match(r"conformbench score replay\.jsonl --fail-if", command.text):
        _main_job_replay(ws, bin_dir)
    proc = _served(command, case, ws, bin_dir) if case.while_up else run_as_written(command.text, ws, bin_dir)
    assert proc.returncode in case.codes, f"{command}\n{shown(proc)}"
    assert "Traceback" not in proc.stderr, f"{command}\n{shown(proc)}"
    case.check(ws, proc)
    if command.text == "conformbench run":
        _resumes(ws, bin_dir)
        _MAIN_JOB["ws"] = ws


def _served(command: DocCommand, case: Case, ws: Path, bin_dir: Path) -> Proc:
    """A server line: started in the background, ``case.while_up`` run once
    it answers the README's server URL, then stopped as the README says (``kill %1``)."""
    assert case.while_up is not None
    url = _readme_server_url()
    _free_or_skip(url)
    with running_as_written(command.text, ws, bin_dir) as proc:
        deadline = time.monotonic() + SERVER_START_S
        while not _lists_models(url):
            assert proc.poll() is None, f"{command} exited\n{kill_job(proc, ws)}"
            assert time.monotonic() < deadline, f"{command}: {url} did not answer in {SERVER_START_S:g} s"
            time.sleep(0.25)
        case.while_up(url)
        return kill_job(proc, ws)


def _lists_models(url: str) -> bool:
    try:
        return httpx.get(f"{url}/models", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


# -- docs/*.md: the fences marked runnable ---------------------------------


def _docs_params() -> Iterator[Any]:
    for path in sorted((ROOT / "docs").glob("*.md")):
        for command in doc_commands(path, runnable_only=True):
            fast = command.text.startswith(("conformbench render ", "conformbench validate "))
            marks = [] if fast else [pytest.mark.long, pytest.mark.slow]
            yield pytest.param(command, marks=marks, id=f"{path.stem}-L{command.line}")


def test_docs_mark_some_blocks_runnable() -> None:
    marked = list(_docs_params())
    assert len(marked) >= 3, "docs/*.md: mark the fences a test should run with <!-- runnable -->"


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("command", list(_docs_params()))
def test_a_runnable_docs_block_runs_as_written(command: DocCommand, tmp_path: Path, bin_dir: Path) -> None:
    """A command of a fence marked ``<!-- runnable -->`` runs in a clone's
    layout (examples/ beside it, nothing else), shrunk by the size knob
    alone; it exits 0 and writes what it says (a report where it names an
    output folder, else text on stdout)."""
    link_examples(tmp_path)
    proc = run_as_written(command.text, tmp_path, bin_dir)
    assert proc.returncode == 0, f"{command}\n{shown(proc)}"
    assert "Traceback" not in proc.stderr, f"{command}\n{shown(proc)}"
    made = [p for p in tmp_path.rglob("report.json") if "examples" not in p.parts]
    assert made or proc.stdout.strip(), f"{command}: no report and nothing on stdout"
