"""Bad user input: every mistake a user can make on the command line is one
clear line on stderr and exit 2, never a traceback; user-supplied Python is
never executed.

Guards: the CLI's ConformbenchError handler (one line, exit 2) and every
place that turns an OS/parse/library error into a UsageError (model files,
schema files, spec files, output folders), the registries' did-you-mean,
and the rule that no command runs a user's Pydantic file.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformbench.cli.main import main

SRC = Path(__file__).resolve().parents[2] / "src" / "conformbench"

SCHEMA = '{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}'


def _fails_cleanly(capsys: pytest.CaptureFixture[str], args: list[str], *needles: str) -> str:
    """Run the CLI in-process; it must exit 2 with one line naming the problem."""
    code = main(args)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, f"exit {code} for {args}:\n{err}"
    assert "Traceback" not in err
    assert len(lines) == 1, f"expected one line, got:\n{err}"
    assert lines[0].startswith("conformbench: error: ")
    for needle in needles:
        assert needle.lower() in lines[0].lower(), f"{needle!r} not in {lines[0]!r}"
    return lines[0]


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    (tmp_path / "schema.json").write_text(SCHEMA, encoding="utf-8")
    (tmp_path / "instance.json").write_text('{"a": 1}', encoding="utf-8")
    (tmp_path / "a_file").write_text("not a directory", encoding="utf-8")
    return tmp_path


def _run_args(tmp: Path, *extra: str) -> list[str]:
    return ["run", "--task", "gsm8k", "--n", "1", "--arm", "unconstrained", "--max-tokens", "4",
            "--out", str(tmp / "out"), "--quiet", *extra]


# -- model files ------------------------------------------------------------


def test_missing_model_file(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    missing = files / "nowhere" / "model.gguf"
    _fails_cleanly(capsys, _run_args(files, "--model", str(missing)), "does not exist")


@pytest.mark.parametrize("head", [b"", b"GGUF"], ids=["random-bytes", "gguf-magic-then-garbage"])
def test_corrupt_model_file(capsys: pytest.CaptureFixture[str], files: Path, head: bytes) -> None:
    corrupt = files / "corrupt.gguf"
    corrupt.write_bytes(head + os.urandom(64 * 1024))
    _fails_cleanly(capsys, _run_args(files, "--model", str(corrupt)), "corrupt.gguf")


def test_truncated_real_model_file(capsys: pytest.CaptureFixture[str], files: Path, smollm_path: Path) -> None:
    """The first megabyte of the real model: a valid header, then nothing."""
    truncated = files / "truncated.gguf"
    with smollm_path.open("rb") as fh:
        truncated.write_bytes(fh.read(1 << 20))
    _fails_cleanly(capsys, _run_args(files, "--model", str(truncated)), "truncated.gguf")


# -- schema files -------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "not valid JSON"),
        ('{"type": 12}', "schema"),
        ('{"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}', "nowhere"),
        ('"just a string"', "schema"),
        ("\udcff", "not UTF-8"),
        ("[" * 100_000 + "]" * 100_000, "bad.json"),
    ],
    ids=["not-json", "invalid-type", "dangling-ref", "not-an-object", "not-utf8", "deeply-nested"],
)
@pytest.mark.parametrize("command", ["render", "validate"])
def test_invalid_schema_file(
    capsys: pytest.CaptureFixture[str], files: Path, command: str, content: str, needle: str
) -> None:
    bad = files / "bad.json"
    bad.write_bytes(content.encode("utf-8", "surrogateescape"))
    args = ["render", str(bad), "--format", "yaml"] if command == "render" else [
        "validate", str(bad), str(files / "instance.json")]
    _fails_cleanly(capsys, args, needle)


def test_missing_schema_file(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    _fails_cleanly(capsys, ["render", str(files / "absent.json"), "--format", "json"], "absent.json")


# -- names ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        (["--task", "gsm8kk"], "gsm8k"),
        (["--engine", "llguidanse", "--arm", "constrained[answer]"], "llguidance"),
        (["--arm", "unconstrainedd"], "unconstrained"),
        (["--backend", "opena"], "openai"),
    ],
    ids=["task", "engine", "arm", "backend"],
)
def test_unknown_run_names_suggest(
    capsys: pytest.CaptureFixture[str], files: Path, args: list[str], suggestion: str
) -> None:
    argv = ["run", "--n", "1", "--out", str(files / "out"), "--quiet"]
    if "--task" not in args:
        argv += ["--task", "gsm8k"]
    if "--arm" not in args:
        argv += ["--arm", "unconstrained"]
    line = _fails_cleanly(capsys, argv + args, "did you mean")
    assert suggestion in line


@pytest.mark.parametrize("option", ["--schema-format", "--output-format"])
def test_unknown_format_names_suggest(capsys: pytest.CaptureFixture[str], files: Path, option: str) -> None:
    argv = ["run", "--task", "generation", "--n", "1", "--out", str(files / "out"), "--quiet",
            option, "yamll"]
    line = _fails_cleanly(capsys, argv, "did you mean")
    assert "yaml" in line


def test_unknown_render_format_suggests(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    line = _fails_cleanly(capsys, ["render", str(files / "schema.json"), "--format", "pyhton"], "did you mean")
    assert "python" in line


# -- spec files -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("[[models]\nlabel = 'x'", "TOML"),
        ("[[tasks]]\nname = 'gsm8k'\nnn = 3\n", "did you mean"),
        ("[[tasks]]\nname = 'gsm8k'\nn = 'three'\n", "n"),
        ("tasks = 5\n", "tasks"),
        ("[decoding]\nmax_tokens = -1\n[[tasks]]\nname = 'gsm8k'\n", "max_tokens"),
        ("a = " + "[" * 100_000 + "]" * 100_000 + "\n", "spec.toml"),
    ],
    ids=["malformed", "unknown-key", "wrong-type", "not-a-list", "out-of-range", "deeply-nested"],
)
def test_bad_spec_file(capsys: pytest.CaptureFixture[str], files: Path, content: str, needle: str) -> None:
    spec = files / "spec.toml"
    spec.write_text(content, encoding="utf-8")
    _fails_cleanly(capsys, ["run", "--spec", str(spec), "--out", str(files / "out")], needle)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("max_depth = 99\n", "max_depth"),
        ("keywords = { multipleof = 0.5 }\n", "multipleof"),
        ("[broken\n", "TOML"),
        ("a = " + "[" * 100_000 + "]" * 100_000 + "\n", "config.toml"),
    ],
    ids=["out-of-range", "misspelt-keyword", "malformed", "deeply-nested"],
)
def test_bad_generator_config(capsys: pytest.CaptureFixture[str], files: Path, content: str, needle: str) -> None:
    config = files / "config.toml"
    config.write_text(content, encoding="utf-8")
    args = ["dataset", "build", "--n", "1", "--config", str(config), "--out", str(files / "ds")]
    _fails_cleanly(capsys, args, needle)


def test_missing_spec_file(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    _fails_cleanly(capsys, ["run", "--spec", str(files / "absent.toml")], "absent.toml")


# -- output folders -------------------------------------------------------------


def test_unwritable_run_output(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    # tests run as root, so chmod cannot make a folder unwritable: use a path
    # below a regular file, which nobody can create
    out = files / "a_file" / "sub"
    args = ["run", "--task", "gsm8k", "--n", "1", "--arm", "unconstrained", "--out", str(out), "--quiet"]
    _fails_cleanly(capsys, args, "a_file")


def test_unwritable_dataset_output(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    _fails_cleanly(capsys, ["dataset", "build", "--n", "2", "--out", str(files / "a_file" / "sub")], "a_file")


_HEADER = (
    '{"kind": "header", "format": "conformbench.replay/1", "run_id": "x", "created": "2025-01-01", '
    '"conformbench_version": "0", "spec": {"models": [{"label": "m"}], "tasks": [{"name": "t"}]}}\n'
)


@pytest.mark.parametrize(
    "content",
    [
        b"this is not a replay\n",
        b"\xff\xfe{\"kind\": \"header\"}\n",
        _HEADER.encode() + b"[" * 100_000 + b"]" * 100_000 + b"\n",
        _HEADER.encode() + b'{"kind": "generation", "task": 5}\n',
        _HEADER.encode() * 2,
        _HEADER.encode()[:40],
    ],
    ids=["text", "binary", "deeply-nested-line", "bad-record", "two-headers", "torn-header"],
)
def test_damaged_replay_for_score(capsys: pytest.CaptureFixture[str], files: Path, content: bytes) -> None:
    bad = files / "replay.jsonl"
    bad.write_bytes(content)
    _fails_cleanly(capsys, ["score", str(bad), "--out", str(files / "reports")], "replay.jsonl")


# -- one real process -------------------------------------------------------------


@pytest.mark.long
def test_subprocess_stderr_has_no_traceback(files: Path) -> None:
    cmd = [sys.executable, "-m", "conformbench.cli.main", "run", "--task", "gsm8kk", "--n", "1",
           "--out", str(files / "out")]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "did you mean" in lines[0], proc.stderr


# -- user Python is never executed --------------------------------------------------


PYDANTIC_FILE = """
import pathlib
pathlib.Path({marker!r}).write_text("executed")
from pydantic import BaseModel
class Schema(BaseModel):
    a: int
"""


def test_no_command_runs_a_user_pydantic_file(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    marker = files / "EXECUTED"
    source = PYDANTIC_FILE.format(marker=str(marker))
    py = files / "model.py"
    py.write_text(source, encoding="utf-8")
    folder = files / "schemas"
    folder.mkdir()
    (folder / "model.py").write_text(source, encoding="utf-8")
    (folder / "model.json").write_text(source, encoding="utf-8")
    attempts = [
        ["render", str(py), "--format", "json"],
        ["validate", str(py), str(files / "instance.json")],
        ["validate", str(files / "schema.json"), str(py)],
        ["dataset", "build", "--schemas", str(folder), "--out", str(files / "ds")],
    ]
    for args in attempts:
        code = main(args)
        capsys.readouterr()
        # 1: validate judged the "instance" (Python text) invalid, as it should
        assert code in (0, 1, 2), args
        assert not marker.exists(), f"{args} executed a user Python file"


_EXEC_CALLS = {"exec", "eval", "__import__", "run_path", "run_module", "spec_from_file_location",
               "exec_module", "load_model", "unsafe_load", "full_load"}
#: the only places allowed to execute code, and why
_ALLOWED = {
    # generated Pydantic source (ours, never user or model text) is checked
    # against the reference validator; no command calls it
    ("formats/python/format.py", "exec"),
    # llama_cpp.Llama.eval: feeds token ids through the model, executes no code
    ("backends/llamacpp/fast_forward.py", "eval"),
    # score --task-module FILE: the user's own task module, imported only when
    # named on the command line (never because a replay names a task)
    ("cli/score.py", "spec_from_file_location"),
    ("cli/score.py", "exec_module"),
}


def test_source_executes_no_user_code() -> None:
    """A grep with an AST: no module calls exec/eval/imports-by-path, and
    nothing calls ``load_model`` (which executes Pydantic source)."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if name in _EXEC_CALLS and (rel, name) not in _ALLOWED:
                    found.append(f"{rel}:{node.lineno} calls {name}()")
    assert not found, "code execution outside the allowlist (needs an explicit flag):\n" + "\n".join(found)


@pytest.mark.long
def test_hostile_external_schemas_are_excluded_with_reasons(
    capsys: pytest.CaptureFixture[str], files: Path
) -> None:
    """A folder of user schemas with bad ones among them: the good one is
    used, each bad one is an explained exclusion, nothing crashes."""
    folder = files / "external"
    folder.mkdir()
    (folder / "good.json").write_text(SCHEMA, encoding="utf-8")
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (folder / "binary.json").write_bytes(b"\xff\xfe\x00garbage")
    (folder / "invalid.json").write_text('{"type": 12}', encoding="utf-8")
    (folder / "huge.json").write_text('{"enum": [' + ",".join(["1"] * 3_000_000) + "]}", encoding="utf-8")
    out = files / "ds"
    assert main(["dataset", "build", "--schemas", str(folder), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    excluded = (out / "excluded.json").read_text(encoding="utf-8")
    for name in ("deep", "binary", "invalid"):
        assert name in excluded, f"{name}.json was not listed as excluded"
    assert (out / "dataset.jsonl").read_text(encoding="utf-8").count("\n") >= 1
