"""The command line's conventions: ``--version``, ``list KIND`` from the
registries, help texts (whole paragraphs, no value type after flags, names
from the registries), and click's usage errors as one line, exit 2."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conformbench._version import __version__
from conformbench.arms.base import arms
from conformbench.backends.base import backends
from conformbench.cli.main import app, load_commands, main
from conformbench.engines.base import engines
from conformbench.formats.base import output_formats, schema_formats
from conformbench.scoring.sections import run_sections, sections
from conformbench.tasks.base import tasks


def _command_paths() -> list[list[str]]:
    """Every command and sub-command of the app, as argv (read from typer's
    click group, so a new command is covered without editing this list)."""
    import typer.main

    load_commands([])  # registers every command
    found: list[list[str]] = []

    def walk(command: object, path: list[str]) -> None:
        found.append(path)
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


COMMANDS = _command_paths()


def test_the_command_list_is_complete() -> None:
    assert ["engines", "check"] in COMMANDS and ["import"] in COMMANDS and ["dataset", "build"] in COMMANDS


def _one_error_line(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main(args) == 2, args
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("conformbench: error: "), err
    return lines[0]


def _help(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: list[str]) -> str:
    monkeypatch.setenv("COLUMNS", "250")  # one line per option: names are not split by wrapping
    assert main([*args, "--help"]) == 0
    return capsys.readouterr().out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"conformbench {__version__}\n"


def test_version_through_the_real_entry_point() -> None:
    proc = subprocess.run([sys.executable, "-m", "conformbench.cli.main", "--version"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == f"conformbench {__version__}", proc.stderr


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("tasks", {"tasks": tasks}),
        ("arms", {"arms": arms}),
        ("backends", {"backends": backends}),
        ("formats", {"schema formats": schema_formats, "output formats": output_formats}),
        ("sections", {"report sections (per task)": sections,
                      "run report sections (across tasks and models)": run_sections}),
    ],
)
def test_list_shows_every_registered_name(capsys: pytest.CaptureFixture[str], kind: str, expected: dict) -> None:
    assert main(["list", kind, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert set(listed) == set(expected)
    for title, registry in expected.items():
        assert [row["name"] for row in listed[title]] == registry.names()
        assert all(row["about"] for row in listed[title]), f"{title}: an entry says nothing about itself"
    assert main(["list", kind]) == 0
    table = capsys.readouterr().out
    for registry in expected.values():
        assert all(name in table for name in registry.names())


def test_list_formats_shows_display_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "formats", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {"name": "nl", "about": "natural language"} in listed["schema formats"]


def test_list_engines_shows_install_status_like_engines_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "engines", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["engines"]
    # the in-process engines, then the name of a server's own structured decoding
    assert [r["engine"] for r in rows] == [*engines.names(), "server"]
    assert {r["status"] for r in rows[:-1]} <= {"installed", "unavailable"}
    assert any(r["status"] == "installed" for r in rows)
    assert all(r["note"] for r in rows if r["status"] == "unavailable"), "an unavailable engine says why"
    assert main(["list", "engines"]) == 0
    listed = capsys.readouterr().out
    assert main(["engines", "list"]) == 0
    assert capsys.readouterr().out == listed


def test_list_an_unknown_kind(capsys: pytest.CaptureFixture[str]) -> None:
    line = _one_error_line(capsys, ["list", "engine"])
    assert "did you mean 'engines'?" in line


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a) or "conformbench")
def test_help_shows_no_value_type_after_flags(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    text = _help(capsys, monkeypatch, args)
    assert "<bool>" not in text
    assert re.search(r"--help\s+(-h\s+)?Show this message", text), text


def test_command_help_is_whole_paragraphs() -> None:
    """typer shows a command's docstring with its own line breaks in the
    command list; each paragraph must be one line."""
    load_commands([])
    infos = [*app.registered_commands]
    for group in app.registered_groups:
        assert group.typer_instance is not None
        infos += group.typer_instance.registered_commands
    assert len(infos) >= 10
    for info in infos:
        assert info.help, f"{info.name} has no help"
        for paragraph in info.help.split("\n\n"):
            assert "\n" not in paragraph, f"{info.name}: {paragraph!r}"


def test_run_help_lists_the_registries(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = " ".join(_help(capsys, monkeypatch, ["run"]).split())
    for registry in (tasks, arms, engines, backends, schema_formats, output_formats):
        for name in registry.names():
            assert name in text, f"{registry.kind} {name!r} is missing from run --help"
    for flag in ("--dialect", "--endpoint", "--concurrency", "--timeout", "--api-key-env", "-n,", "--n "):
        assert flag in text or flag.strip(",") in text
    assert "structured_outputs" in text and "json_object_schema" in text


def test_help_of_probe_and_render_and_validate_lists_the_registries(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    probe = " ".join(_help(capsys, monkeypatch, ["engines", "probe"]).split())
    assert all(name in probe for name in engines.names()) and "uniqueItems" in probe
    render = " ".join(_help(capsys, monkeypatch, ["render"]).split())
    assert all(name in render for name in schema_formats.names())
    validate = " ".join(_help(capsys, monkeypatch, ["validate"]).split())
    assert all(name in validate for name in output_formats.names())


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["run", "--engines", "gbnf"], ("No such option: --engines", "--engine", "conformbench run --help")),
        (["engines", "probe", "--out", "x", "--keywords", "enum"], ("--keywords", "--keyword")),
        (["dataset", "build", "--out", "x", "--formats", "json"], ("--formats", "--schema-format")),
        (["run", "-n", "zero"], ("'--n' / '-n'", "integer")),
        (["run", "--n", "0"], ("'--n' / '-n'", "greater than or equal to 1")),
        (["nosuchcommand"], ("nosuchcommand",)),
    ],
    ids=["old-plural-flag", "old-keywords", "old-formats", "not-an-int", "out-of-range", "command"],
)
def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str], args: list[str], needles: tuple[str, ...]) -> None:
    line = _one_error_line(capsys, args)
    for needle in needles:
        assert needle in line, line


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--dialect", "json_schem"], "--dialect: unknown value 'json_schem' (did you mean 'json_schema'?)"),
        (["--endpoint", "chats"], "--endpoint: unknown value 'chats' (did you mean 'chat'?)"),
        (["--engine", "llguidance"], "use engine 'server', not 'llguidance'"),
    ],
)
def test_bad_http_options_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path, args: list[str],
                                       needle: str) -> None:
    base = ["run", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--task", "gsm8k",
            "-n", "1", "--out", str(tmp_path / "out"), "--quiet"]
    assert needle in _one_error_line(capsys, base + args)
    assert not (tmp_path / "out").exists(), "a bad option must fail before anything is written"


@pytest.mark.long
@pytest.mark.parametrize(("signum", "code", "said"), [
    (15, 143, "stopped by SIGTERM"), (2, 130, "interrupted")])  # SIGTERM, SIGINT (Ctrl-C)
def test_sigterm_and_ctrl_c_say_how_to_resume(signum: int, code: int, said: str) -> None:
    """Issue #44: SIGTERM (kill, timeout, a scheduler) stops a command as
    Ctrl-C does, with one line on how to resume and exit 143; typer turned
    both into a bare exit 130 before."""
    import os
    import signal
    import subprocess
    import sys
    import tempfile
    import time

    with tempfile.TemporaryDirectory() as out:
        busy = subprocess.Popen([sys.executable, "-m", "conformbench.cli.main", "demo", "--out", out],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "COLUMNS": "80"})
        time.sleep(4)  # imported and rescoring (the demo's eight replays take half a minute)
        assert busy.poll() is None
        busy.send_signal(signal.Signals(signum))
        _, err = busy.communicate(timeout=120)
    assert busy.returncode == code, err[-2000:]
    assert err.rstrip().endswith(f"conformbench: {said}; rerun the same command to resume (what is written is kept)")
    assert "Traceback" not in err


def test_an_error_line_shows_control_characters_as_escapes(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    """Issue #49, defect 13: an error can quote a file name, a server's or a
    replay's words; an ESC or bidi override in them never reaches the terminal raw."""
    name = str(tmp_path / "\x1b[2J\u202ereplay.jsonl")
    assert main(["score", name, "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\u202e" not in err
    assert "\\x1b[2J\\u202ereplay.jsonl" in err and len(err.strip().splitlines()) == 1
