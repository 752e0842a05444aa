"""Checking a run's options is light, as the registry promises: the
backends' options and capabilities are read from their manifests
(backends/manifest.py), not by importing every backend, and the API's
runner, scoring and reports are imported only when a run or a scoring
starts. Measured in a fresh interpreter (1,332 modules at issue #50's
filing, aiohttp and jinja2 among them; 266 after).

The short commands start light too (issue #58: ``--help`` took 5.8 s at
load 4, ``validate`` 1.5 s, ``list tasks`` 2 s idle): each command line
below imports none of the modules it does not use (an import set, not a
timing: benchmarks/startup.py times them)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HEAVY = ("aiohttp", "jinja2", "torch", "llama_cpp", "numpy", "transformers")


def _loaded_after(code: str) -> dict[str, object]:
    report = f"print(json.dumps({{'count': len(sys.modules), 'heavy': [m for m in {HEAVY!r} if m in sys.modules]}}))"
    probe = "\n".join(["import json, sys", textwrap.dedent(code), report])
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return found


def test_checking_run_options_loads_no_backend_and_few_modules() -> None:
    found = _loaded_after("from conformbench.api import run_options; run_options({'n': 2, 'batched': 2})")
    assert found["heavy"] == [], found
    assert isinstance(found["count"], int) and found["count"] <= 400, found


def test_every_backends_manifest_reads_without_its_heavy_modules() -> None:
    found = _loaded_after(textwrap.dedent("""
        from conformbench.backends.base import backends, manifest_of
        from conformbench.backends.backend_options import declared_options
        assert {"batched", "dialect", "dtype"} <= set(declared_options())
        assert all(manifest_of(name) is not None for name in backends.names())
        assert manifest_of("llamacpp").beams and manifest_of("openai").constraint_side == "server"
    """))
    assert found["heavy"] == [], found


def test_the_light_manifest_is_the_one_on_the_class() -> None:
    from conformbench.backends.base import backends, manifest_of

    for name in backends.manifests:
        assert backends.get(name).manifest is manifest_of(name), name


#: imported by no short command: numbers, plots, models, servers, templates
NEVER = ("numpy", "scipy", "matplotlib", "llama_cpp", "aiohttp", "jinja2", "torch", "transformers", "httpx",
         "conformbench.runner", "conformbench.scoring", "conformbench.reports", "conformbench.api",
         "conformbench.backends.base", "conformbench.engines.base")
#: what --help, --version and a mistyped command need none of: no command module, no record model,
#: no validator, and no rich beyond typer's help
NOTHING_BUT_HELP = (*NEVER, "pydantic", "jsonschema", "jsonschema_rs", "yaml", "conformbench.records.base",
                    "conformbench.arms", "conformbench.tasks", "conformbench.validator", "conformbench.formats",
                    "conformbench.schemas", "conformbench.cli.validate", "conformbench.cli.run",
                    "conformbench.cli.list", "conformbench.cli.common")


def _cli_modules(argv: list[str], tmp_path: Path) -> tuple[int, set[str]]:
    """The exit code of ``conformbench ARGV`` in a fresh interpreter, and
    the modules it had imported by its end."""
    out = tmp_path / "modules.json"
    code = "\n".join(["import json, sys", "from conformbench.cli.main import main", f"code = main({argv!r})",
                       f"open({str(out)!r}, 'w').write(json.dumps(sorted(sys.modules)))", "sys.exit(code)"])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    return done.returncode, set(json.loads(out.read_text()))


def _heavy(modules: set[str], banned: tuple[str, ...]) -> list[str]:
    return sorted(b for b in banned if any(m == b or m.startswith(b + ".") for m in modules))


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["--version"], ["lsit", "tasks"], []],
                         ids=["help", "h", "version", "mistyped", "bare"])
def test_help_version_and_a_mistyped_command_import_no_command(argv: list[str], tmp_path: Path) -> None:
    code, modules = _cli_modules(argv, tmp_path)
    assert code == (2 if argv in (["lsit", "tasks"], []) else 0)
    assert _heavy(modules, NOTHING_BUT_HELP) == []
    if argv in (["--version"], ["lsit", "tasks"]):  # no help written: no rich at all
        assert _heavy(modules, ("rich", "typer.rich_utils")) == []


def _files(tmp_path: Path) -> tuple[str, str]:
    schema, instance = tmp_path / "s.json", tmp_path / "i.json"
    schema.write_text('{"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "integer"}, '
                      '"b": {"type": "string"}}}')  # a string: the oracle writes one to show the schema satisfiable
    instance.write_text('{"a": 1, "b": "x"}')
    return str(schema), str(instance)


@pytest.mark.parametrize("bad", [False, True], ids=["valid", "usage-error"])
def test_validate_imports_the_validator_and_nothing_of_a_run(bad: bool, tmp_path: Path) -> None:
    schema, instance = _files(tmp_path)
    code, modules = _cli_modules(["validate", *(["--bogus"] if bad else []), schema, instance], tmp_path)
    assert code == (2 if bad else 0)
    # wonderwords: the generator's property names (a tenth of a second to filter), not the oracle's lorem text
    unused = (*NEVER, "rich", "conformbench.arms", "conformbench.tasks", "conformbench.records.generation",
              "conformbench.records.items", "conformbench.records.spec", "conformbench.cli.run",
              "conformbench.cli.list", "conformbench.cli.score", "wonderwords")
    assert _heavy(modules, unused) == []
    if bad:  # refused by the parser: the validator, the formats' parsers and the records are not needed
        assert _heavy(modules, ("pydantic", "jsonschema", "jsonschema_rs", "yaml", "conformbench.schemas",
                                "conformbench.validator", "conformbench.records.base")) == []
    else:
        assert "conformbench.validator.schema_validator" in modules  # it did validate


@pytest.mark.parametrize("kind", ["tasks", "backends", "engines"])
def test_list_reads_the_catalogue_not_the_plugins(kind: str, tmp_path: Path) -> None:
    """The built-ins' rows come from cli/_list/catalogue.py (tests/cli/test_list_catalogue.py
    keeps it equal to the registries): no plugin module, no record model, no validator."""
    code, modules = _cli_modules(["list", kind], tmp_path)
    assert code == 0
    # runner.progress is the wide console every list table is printed on
    unused = (*(m for m in NEVER if m != "conformbench.runner"), "conformbench.runner.run", "conformbench.tasks", "conformbench.backends", "conformbench.engines", "conformbench.audits",
              "conformbench.records.base", "conformbench.validator", "conformbench.schemas", "conformbench.cli.run",
              "conformbench.cli.score", "conformbench.cli.engines")
    assert _heavy(modules, unused) == []


@pytest.mark.parametrize("kind", ["arms", "formats", "sections", "models"])
def test_list_imports_no_statistics_or_server(kind: str, tmp_path: Path) -> None:
    """scipy.stats alone took a second to import: scoring imports it when it
    computes an interval, not when a section's title is listed."""
    code, modules = _cli_modules(["list", kind], tmp_path)
    assert code == 0
    assert _heavy(modules, ("scipy", "matplotlib", "llama_cpp", "aiohttp", "torch", "transformers",
                            "conformbench.runner.run", "conformbench.cli.run")) == []
